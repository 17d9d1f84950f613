#!/bin/sh
# Stand-in for the kernel program @NAME@ in the device-run rehearsal.  On
# start it lists the archive the caller would get back now
# ($REHEARSE_SNAP/NN-@NAME@.list, NN its turn), then "measures": it prints
# and writes REHEARSE_ROWS rows to @NAME@.tsv, each after a short sleep, and
# a target line.  The program named in REHEARSE_HANG hangs after its rows
# (a kernel stuck at the deadline).
set -u
out=.
prev=
for a in "$@"; do
    [ "$prev" = --out ] && out=$a
    prev=$a
done
n=$(ls "$REHEARSE_SNAP" | grep -c '\.list$')
turn=$(printf '%02d' $((n + 1)))
tar -tzf "$REHEARSE_ARCHIVE" >"$REHEARSE_SNAP/$turn-@NAME@.list" 2>&1 || echo "NO ARCHIVE" >>"$REHEARSE_SNAP/$turn-@NAME@.list"
echo "# measurement: @NAME@ (rehearsal stand-in)" >"$out/@NAME@.tsv"
echo "row	value" >>"$out/@NAME@.tsv"
i=1
while [ $i -le "${REHEARSE_ROWS:-2}" ]; do
    sleep "${REHEARSE_ROW_SLEEP:-0.05}"
    echo "@NAME@-row-$i	$i" >>"$out/@NAME@.tsv"
    echo "@NAME@ row $i measured"
    i=$((i + 1))
done
if [ "${REHEARSE_HANG:-}" = @NAME@ ]; then
    echo "@NAME@ stuck"
    exec sleep 1000
fi
echo "  target @NAME@ rehearsal                     1.00 x (target >= 1, median, H200): met"
exit 0
