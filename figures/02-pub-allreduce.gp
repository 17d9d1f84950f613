# One all-reduce over 8 H100 SXM against its message size: NVIDIA's published
# TensorRT-LLM custom all-reduce, the ring model of the GPU table (latency +
# 2(tp-1)/tp x bytes / link bandwidth) and the calibrated two-line curve.
# Data: 02-pub-allreduce.tsv (code/ch02/published.c).
d = datadir.'/02-pub-allreduce.tsv'
set datafile separator tab
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy
set format x '%g'
set format y '%g'
set xrange [100:2e9]
set xlabel 'Message (bytes)'
set ylabel 'Time per all-reduce (µs)'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) { set xtics 100; set format x '10^{%T}' }
plot d using 1:3 with lines lw 2 dt 2 lc rgb '#777777' title 'ring model (GPU table)', \
     d using 1:4 with lines lw 2.5 lc rgb '#1f5fa8' title 'calibrated (two lines)', \
     d using 1:2 with points pt 7 ps 0.9 lc rgb '#c0392b' title 'published measurement'
