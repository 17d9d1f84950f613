#!/bin/sh
# The one command for a machine with a GPU: build for the card, read the
# machine code, validate and measure every kernel under time limits, and
# leave ONE archive in the output folder.  Sized for an H200: build about a
# minute (limit 150 s), measurements under four minutes (deadline 270 s,
# counted from the end of the build), the whole under eight.
#
#   kernels/device_run.sh [OUTDIR]        OUTDIR defaults to $OUT, else build/device-out
#
# Before copying the tree to such a machine (which may have no .git), write
# the revision: `git rev-parse --short HEAD > REVISION` (or set NB_REVISION).
# The archive is OUTDIR/kernels-set.tar.gz (layout in kernels/README.md),
# re-packed after the build and after every program, so a call killed at any
# point returns every program that finished; the last lines printed are the
# targets, met or not.  Environment: NB_BUILD_DIR (default build-device),
# NB_CUDA_HOME, NB_DEADLINE_S, NB_BUILD_LIMIT_S and the rest of run_all.sh's.
set -u
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

# Whole-run deadline after the build: 270 s, leaving time to pack and to
# rerun once within a 10-minute call.  run_all.sh packs into $dest itself
# after every step.
NB_DEADLINE_S=${NB_DEADLINE_S:-270} NB_BUILD_LIMIT_S=${NB_BUILD_LIMIT_S:-150} \
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
