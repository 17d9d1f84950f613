# Tokens per 16:9 image against its width, one curve per preprocessor:
# LLaVA-1.5's fixed crop, LLaVA-NeXT's grid pinpoints, Qwen2-VL's native
# resolution, InternVL2.5's dynamic tiles and Llama 3.2 Vision's
# cross-attention tiles.  Data: 07-staircase.tsv (code/ch07/images.c).
st = datadir.'/07-staircase.tsv'
set datafile separator tab
set logscale y 10
set xrange [64:4096]
set yrange [3:30000]
set xtics 512 nomirror
set ytics ('3' 3, '10' 10, '30' 30, '100' 100, '300' 300, '1k' 1000, '3k' 3000, '10k' 10000, '30k' 30000) nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Image width (px), height = width x 9/16'
set ylabel 'Tokens per image'
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 402
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) { set xtics 1024 }
plot st using 1:4 with steps lw 2.5 lc rgb '#1f5fa8' title 'Qwen2-VL (native, 28 px per token)', \
     st using 1:3 with steps lw 2 lc rgb '#c0392b' title 'LLaVA-NeXT (pinpoints + base)', \
     st using 1:5 with steps lw 2 lc rgb '#27ae60' title 'InternVL2.5 (448 px tiles + thumbnail)', \
     st using 1:6 with steps lw 2 dt 2 lc rgb '#8e44ad' title 'Llama 3.2 Vision (cross-attention KV)', \
     st using 1:2 with steps lw 2 lc rgb '#555555' title 'LLaVA-1.5 (fixed 336 px crop)'
