#!/bin/sh
# Write code/specs/calibrations.tsv's text to stdout: the achieved rates
# napkin calibrate fits to every published set under code/specs/measured/.
# Usage: tools/make_calibrations.sh NAPKIN [MEASURED_DIR]
set -eu
napkin=$1
dir=${2:-code/specs/measured}
first=1
for system in h100_sxm h200_sxm; do
    case $system in h100_sxm) gpu=h100 ;; h200_sxm) gpu=h200 ;; esac
    for backend in trtllm vllm sglang; do
        set_dir=$dir/$system/$backend
        [ -d "$set_dir" ] || continue
        header=
        [ $first = 1 ] && header=--header
        "$napkin" calibrate --set "$set_dir" --backend $backend --gpu $gpu \
            --name "published:$system/$backend" --rows $header
        first=0
    done
done
