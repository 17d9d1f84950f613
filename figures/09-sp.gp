# Wan2.1-T2V-14B, 81 frames of 1280x720, 50 steps, on H100 SXM at 45% of the
# dense bf16 peak: minutes per request against sequence-parallel GPUs, with
# the efficiency taken from HunyuanVideo's published xDiT latencies (points:
# those latencies as a fraction of their one-GPU figure, times Wan's one-GPU
# minutes) against perfect scaling.  Data: 09-sp.tsv, 09-sp-published.tsv
# (code/ch09/requests.c).
d = datadir.'/09-sp.tsv'
p = datadir.'/09-sp-published.tsv'
set datafile separator tab
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'GPUs working on one request'
set ylabel 'Minutes per request'
set xrange [1:8]
set xtics 1
set yrange [0:*]
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:3 with lines lw 1.5 dt 2 lc rgb '#888888' title 'perfect scaling', \
     d using 1:2 with linespoints lw 2.5 pt 7 ps 0.8 lc rgb '#1f5fa8' title 'model (published efficiency)', \
     p using 1:2 with points pt 6 ps 1.6 lw 2 lc rgb '#c0392b' title 'HunyuanVideo xDiT, scaled'
