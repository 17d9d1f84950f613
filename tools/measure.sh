#!/bin/sh
# make measure: run the CUDA kernels where a GPU answers, the CPU twins
# otherwise, and leave the set in BUILD/measured/<device-slug>/.
#
#   tools/measure.sh BUILD_DIR        (MEASURE_QUICK=1 for a small, fast run)
set -u
B=${1:-build}
quick=
[ "${MEASURE_QUICK:-0}" = 1 ] && quick=--quick
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$B/measured" || exit 1

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    incoming="$B/measured/.incoming-gpu"
    rm -rf "$incoming"
    kernels/run_all.sh $quick "$incoming" "$B"
    rc=$?
    slug=$(sed -n 's/^# device_slug: //p' "$incoming"/set/*.tsv 2>/dev/null | head -n 1)
    [ -n "$slug" ] || slug=gpu-unknown
    rm -rf "${B:?}/measured/$slug"
    mv "$incoming/set" "$B/measured/$slug" || exit 1
    mv "$incoming/kernels-set.tar.gz" "$B/measured/$slug.tar.gz" 2>/dev/null
    rm -rf "$incoming"
    echo "measure: GPU set in $B/measured/$slug, packed as $B/measured/$slug.tar.gz (exit $rc)"
    exit $rc
fi

echo "measure: no GPU answers nvidia-smi; running the CPU twins"
make --no-print-directory B="$B" "$B/bin/measure/stream" "$B/bin/measure/gemm_sweep" || exit 1
slug=$("$B/bin/measure/stream" --print-slug) || exit 1
dir="$B/measured/$slug"
mkdir -p "$dir" || exit 1
"$B/bin/measure/stream" $quick --out "$dir/stream.tsv" || exit 1
"$B/bin/measure/gemm_sweep" $quick --stream "$dir/stream.tsv" --out "$dir/gemm.tsv" || exit 1
make --no-print-directory B="$B" "$B/bin/measure/lora_bgmv" && "$B/bin/measure/lora_bgmv" $quick --out "$dir/lora_bgmv.tsv" || exit 1
echo "measure: CPU set in $dir"
echo "measure: the book plots committed sets from figures/measured/; to add this one: cp -r $dir figures/measured/"
