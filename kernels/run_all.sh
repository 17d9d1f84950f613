#!/bin/sh
# Build every kernel for the local GPU, validate and run every measurement,
# and write the TSV sets (with provenance headers) into OUTDIR.
#
#   kernels/run_all.sh OUTDIR [BUILD_DIR] [--quick]
#
# Sized to finish in a few minutes on an H200 (build included).  Exit 77 when
# no GPU answers; non-zero when any kernel fails validation or errors.
set -u
if [ $# -lt 1 ]; then
    echo "usage: kernels/run_all.sh OUTDIR [BUILD_DIR] [--quick]" >&2
    exit 2
fi
out=$1
build=${2:-build}
quick=
[ "${3:-}" = "--quick" ] && quick=--quick
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$out" || exit 1

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no GPU answers nvidia-smi"
    exit 77
fi
nvidia-smi -L
nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1

# For the local card: native SASS; fall back to the portable flags.
echo "== build ($build)"
# -B: binaries built elsewhere with other flags must not be taken as up to date.
jobs=$(nproc 2>/dev/null || echo 4)
if ! make --no-print-directory -B -j"$jobs" B="$build" kernels NVCC_ARCH=-arch=native >"$out/build.log" 2>&1; then
    echo "native build failed (see $out/build.log); trying the default architectures"
    make --no-print-directory -B -j"$jobs" B="$build" kernels >>"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
fi

status=0
run() {
    name=$1
    shift
    echo "== $name"
    start=$(date +%s)
    timeout 240 "$build/kernels/$name" --out "$out" $quick "$@" >"$out/$name.log" 2>&1
    rc=$?
    cat "$out/$name.log"
    echo "   ($name: exit $rc, $(( $(date +%s) - start )) s)"
    if [ $rc -ne 0 ]; then
        status=1
    fi
}

run bandwidth
bw=
[ -f "$out/bandwidth.tsv" ] && bw="--bandwidth $out/bandwidth.tsv"
run gemm_sweep $bw
run gemv $bw
run decode_attention $bw
run launch
run lora_bgmv $bw

grep -h 'target' "$out"/*.log > "$out/targets.txt" 2>/dev/null
echo "== targets"
cat "$out/targets.txt"
echo "== wrote $(ls "$out" | tr '\n' ' ')"
exit $status
