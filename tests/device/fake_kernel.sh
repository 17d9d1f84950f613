#!/bin/sh
# Stand-in for the kernel program @NAME@ in the device-run rehearsal, built
# for @ARCH@ by the stand-in nvcc.  On start it lists the archive the caller
# would get back now ($REHEARSE_SNAP/NN-@NAME@.list, NN its turn, with its
# arguments), then "measures": for each version asked for (--version LIST
# or a number as the first argument; none: every version, "all") it
# writes REHEARSE_ROWS rows to @NAME@.tsv, each after a short sleep, and a
# target line.  decode_attention, as the real one does, writes each
# version's rows to decode_attention_sweep.tsv as that version finishes,
# and decode_attention.tsv (here every row) at the end.  Faults on purpose:
#   built for an architecture without sm_90 (the card): fails as a build
#     for sm_75 fails there, on __reduce_add_sync, before any row;
#   REHEARSE_FAULT="NAME:V ..." naming @NAME@:V, and version V asked for:
#     a CUDA error during V's validation, after the rows of the versions
#     before it (each version is validated, timed and written in turn);
#   REHEARSE_HANG=@NAME@: hangs after its rows (a kernel stuck);
#   REHEARSE_HANG_HARD=@NAME@: the first run hangs after its rows and
#     ignores SIGTERM.
set -u
out=.
prev=
versions=
case ${1:-} in [1-9] | [1-9][0-9]) versions=$1 ;; esac # a version as argv[1], llm.c style
for a in "$@"; do
    [ "$prev" = --out ] && out=$a
    [ "$prev" = --version ] && versions=$(echo "$a" | tr ',' ' ')
    prev=$a
done
n=$(ls "$REHEARSE_SNAP" | grep -c '\.list$')
turn=$(printf '%02d' $((n + 1)))
snap=$REHEARSE_SNAP/$turn-@NAME@.list
tar -tzf "$REHEARSE_ARCHIVE" >"$snap.part" 2>&1 || echo "NO ARCHIVE" >>"$snap.part"
echo "ARGS: $*" >>"$snap.part"
mv "$snap.part" "$snap"
echo "@NAME@: built for @ARCH@"
case ,@ARCH@, in
*sm_90*) ;;
*) echo "@NAME@: CUDA error cudaErrorNoKernelImageForDevice (built for @ARCH@; __reduce_add_sync needs sm_80)"; exit 1 ;;
esac
# Whether REHEARSE_FAULT names version $1 of this program ("all": any version).
faulty() {
    for f in ${REHEARSE_FAULT:-}; do
        [ "${f%:*}" = @NAME@ ] && { [ "$1" = all ] || [ "${f#*:}" = "$1" ]; } && return 0
    done
    return 1
}
mkdir -p "$out"
rows=$out/@NAME@.tsv
[ @NAME@ = decode_attention ] && rows=$out/@NAME@_sweep.tsv
[ -f "$rows" ] || { echo "# measurement: @NAME@ (rehearsal stand-in)"; echo "row	value"; } >"$rows"
for v in ${versions:-all}; do
    if faulty "$v"; then
        echo "kernels/@NAME@.cu:1066: CUDA error cudaErrorIllegalAddress: an illegal memory access was encountered"
        exit 1
    fi
    i=1
    while [ $i -le "${REHEARSE_ROWS:-2}" ]; do
        sleep "${REHEARSE_ROW_SLEEP:-0.05}"
        echo "@NAME@-v$v-row-$i	$i" >>"$rows"
        echo "@NAME@ v$v row $i measured"
        i=$((i + 1))
    done
done
[ "$rows" = "$out/@NAME@.tsv" ] || cp "$rows" "$out/@NAME@.tsv"
if [ "${REHEARSE_HANG:-}" = @NAME@ ]; then
    echo "@NAME@ stuck"
    exec sleep 1000
fi
if [ "${REHEARSE_HANG_HARD:-}" = @NAME@ ] && ! [ -f "$REHEARSE_SNAP/hung" ]; then
    : >"$REHEARSE_SNAP/hung"
    echo "@NAME@ stuck, deaf to SIGTERM"
    trap '' TERM
    sleep 1000
fi
echo "  target @NAME@ rehearsal                     1.00 x (target >= 1, median, H200): met"
exit 0
