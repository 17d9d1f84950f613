# Decode attention over one layer's KV cache of LLaMA-3-8B (32 query heads,
# 8 KV heads, head dim 128, bf16), contiguous layout: the time the K and V
# bytes take at the H200's datasheet bandwidth and at a read ceiling, at
# batch 1 and 16; with the measured times of kernels/decode_attention.cu.
# The ceiling is the measured set's own read (its bandwidth.tsv) when a GPU
# set is committed; without one, the published read, and the key says so
# (its title is the data's column header).  The points are the set's; until
# one exists, NVIDIA's published measurements of the same shape on an H200,
# and the key says which (the data's "# points:" line).
# Data: 02-gpu-attn.tsv, 02-gpu-attn-meas.tsv (code/ch02/gpu_predicted.c).
pred = datadir.'/02-gpu-attn.tsv'
meas = datadir.'/02-gpu-attn-meas.tsv'

set datafile separator tab
points = system("sed -n 's/^# points: //p' '".meas."' | head -n 1")
set logscale xy
set xrange [800:160000]
set format x '%.0s%c'
set format y '%g'
set xlabel 'Context (cached tokens per sequence)'
set ylabel 'Attention time, one layer (µs)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
# the published curves' names without their parenthesis, short enough for a phone
short_head(n) = system(sprintf("head -n 1 '%s' | cut -f%d | sed 's/ (.*)$//'", pred, n))
narrow_height = 420
if (narrow) { set key below left Left reverse samplen 2 nobox noopaque maxcols 1 font ',9' }
plot pred using 1:2 with lines lw 2 lc rgb '#c0392b' title 'batch 1, H200 datasheet 4.8 TB/s', \
     pred using 1:3 with lines lw 1.5 dt 2 lc rgb '#c0392b' title (narrow ? short_head(3) : columnheader(3)), \
     pred using 1:($7 > 0 ? $4 : NaN) with lines lw 2 lc rgb '#1f5fa8' title 'batch 16, H200 datasheet', \
     pred using 1:($7 > 0 ? $5 : NaN) with lines lw 1.5 dt 2 lc rgb '#1f5fa8' title (narrow ? short_head(5) : columnheader(5)), \
     meas using 1:($2 == 1 ? $3 : NaN) with points pt 7 ps 1.2 lc rgb '#c0392b' title points.', batch 1', \
     meas using 1:($2 == 16 ? $3 : NaN) with points pt 7 ps 1.2 lc rgb '#1f5fa8' title points.', batch 16'
