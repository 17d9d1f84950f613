#!/bin/sh
# The one command for a machine with a GPU: build for the card, read the
# machine code, validate and measure every kernel under time limits, and
# leave ONE archive in the output folder.  One budget, NB_BUDGET_S (default
# 360 s), bounds the whole and is printed first: a lent device gives about
# 15 minutes all tries included, its start takes one or two, so a run's
# worst case of 6 minutes leaves a rerun inside the window.  run_all.sh
# derives every limit from it (build 25 %, SASS check 5 %, the runs the
# rest; each nvidia-smi call 5 s at most).
#
#   kernels/device_run.sh [OUTDIR]        OUTDIR defaults to $OUT, else build/device-out
#
# Before copying the tree to such a machine (which may have no .git), write
# the revision: `git rev-parse --short HEAD > REVISION` (or set NB_REVISION).
# The archive is OUTDIR/kernels-set.tar.gz (layout in kernels/README.md),
# re-packed after the build and after every program, so a call killed at any
# point returns every program that finished; the last lines printed are the
# targets, met or not.  Environment: NB_BUILD_DIR (default build-device),
# NB_CUDA_HOME, NB_BUDGET_S and the rest of run_all.sh's.
set -u
budget=${NB_BUDGET_S:-360}
echo "device_run: budget $budget s for the whole run (NB_BUDGET_S), a rerun fits in a 15-minute device window"
repo=$(cd "$(dirname "$0")/.." && pwd) || exit 1
dest=${1:-${OUT:-build/device-out}}
case $dest in /*) ;; *) dest=$(pwd)/$dest ;; esac
mkdir -p "$dest" || exit 1
cd "$repo" || exit 1
work=${TMPDIR:-/tmp}/nb-device-run.$$
rm -rf "$work"
mkdir -p "$work" || exit 1
build=${NB_BUILD_DIR:-build-device}

# The tools the build needs, named when absent: a machine with only a driver
# and the CUDA toolkit must say what it lacks, not fail in make's output.
# nvcc is often installed off the PATH, under NB_CUDA_HOME (default
# /usr/local/cuda); cuobjdump for the SASS check sits beside it.
cuda_home=${NB_CUDA_HOME:-/usr/local/cuda}
if [ -z "${NVCC:-}" ] && ! command -v nvcc >/dev/null 2>&1 && [ -x "$cuda_home/bin/nvcc" ]; then
    PATH=$cuda_home/bin:$PATH
fi
if [ -z "${CUOBJDUMP:-}" ] && ! command -v cuobjdump >/dev/null 2>&1 && [ -x "$cuda_home/bin/cuobjdump" ]; then
    PATH=$PATH:$cuda_home/bin # cuobjdump, and the nvdisasm it calls
fi
export PATH
missing=
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v "${CC:-cc}" >/dev/null 2>&1 || missing="$missing ${CC:-cc}(C compiler)"
command -v "${NVCC:-nvcc}" >/dev/null 2>&1 || missing="$missing ${NVCC:-nvcc}(CUDA compiler)"
command -v nvidia-smi >/dev/null 2>&1 || missing="$missing nvidia-smi(driver)"
missing=${missing# }
if [ -n "$missing" ]; then
    echo "device_run: missing on this machine: $missing"
else
    echo "device_run: make, ${CC:-cc}, $(command -v "${NVCC:-nvcc}") and nvidia-smi found"
fi

# run_all.sh packs into $dest itself after every step; the few seconds
# here after it (copy, listing) are inside its packing reserve.
NB_BUDGET_S=$budget \
    NB_PACK_TO="$dest/kernels-set.tar.gz" NB_SASS_CHECK=1 NB_TOOLS_MISSING="$missing" \
    kernels/run_all.sh "$work/run" "$build" 2>&1 | tee "$work/run.log"
if [ -f "$work/run/kernels-set.tar.gz" ] && [ -f "$dest/kernels-set.tar.gz" ]; then
    rc=$(sed -n 's/^exit: //p' "$work/run/set/provenance.txt" | tail -n 1)
    echo "device_run: $dest/kernels-set.tar.gz ($(wc -c <"$dest/kernels-set.tar.gz") bytes), run_all exit ${rc:-?}"
else
    # run_all.sh stopped before its first pack (no GPU answered, say):
    # return its output and what was missing, never nothing.
    mkdir -p "$work/empty/set"
    cp "$work/run.log" "$work/empty/set/run_all.log"
    { echo "NOT MEASURED: every program: run_all.sh packed no set (see run_all.log)"
      [ -n "$missing" ] && echo "NOT MEASURED: tools missing on this machine: $missing"; } >"$work/empty/set/targets.txt"
    tar -czf "$dest/kernels-set.tar.gz" -C "$work/empty" set
    echo "device_run: run_all.sh packed no set; $dest/kernels-set.tar.gz holds its output"
    rc=1
fi
echo "== targets (also set/targets.txt)"
cat "$work/run/set/targets.txt" 2>/dev/null || cat "$work/empty/set/targets.txt"
rm -rf "$work"
case $rc in '' | *[!0-9]*) rc=1 ;; esac
exit "$rc"
