#!/bin/sh
# The one command for a machine with a GPU: build for the card, read the
# machine code, validate and measure every kernel under time limits, and
# leave ONE archive in the output folder.  Sized for an H200: build about a
# minute, measurements under four minutes, the whole under six.
#
#   kernels/device_run.sh [OUTDIR]        OUTDIR defaults to $OUT, else build/device-out
#
# Before copying the tree to such a machine (which may have no .git), write
# the revision: `git rev-parse --short HEAD > REVISION` (or set NB_REVISION).
# The archive is OUTDIR/kernels-set.tar.gz (layout in kernels/README.md);
# the last lines printed are the targets, met or not.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd) || exit 1
dest=${1:-${OUT:-build/device-out}}
case $dest in /*) ;; *) dest=$(pwd)/$dest ;; esac
mkdir -p "$dest" || exit 1
cd "$repo" || exit 1
work=${TMPDIR:-/tmp}/nb-device-run.$$
rm -rf "$work"
mkdir -p "$work" || exit 1

# Whole-run deadline after the build: 270 s, leaving time to pack and to
# rerun once within a 10-minute call.
NB_DEADLINE_S=${NB_DEADLINE_S:-270} NB_BUILD_LIMIT_S=${NB_BUILD_LIMIT_S:-150} \
    kernels/run_all.sh "$work/run" build-device
rc=$?
if [ -f "$work/run/kernels-set.tar.gz" ]; then
    # The machine code of the native build, read where cuobjdump exists.
    kernels/check_sass.sh build-device >"$work/run/set/sass-check.txt" 2>&1
    echo "sass check: exit $? (set/sass-check.txt)"
    tar -czf "$dest/kernels-set.tar.gz" -C "$work/run" set || rc=1
    echo "device_run: $dest/kernels-set.tar.gz ($(wc -c <"$dest/kernels-set.tar.gz") bytes), run_all exit $rc"
else
    echo "device_run: run_all.sh wrote no archive (exit $rc)"
    [ $rc -eq 0 ] && rc=1
fi
echo "== targets (also set/targets.txt)"
cat "$work/run/set/targets.txt" 2>/dev/null
rm -rf "$work"
exit $rc
