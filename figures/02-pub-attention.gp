# Decode attention against context on H100 SXM: 8 sequences, 32 query and
# 8 KV heads of 128 (LLaMA-3-8B on one GPU), bf16 cache.  NVIDIA's published
# TensorRT-LLM measurements, the roofline (the K and V bytes at the datasheet
# bandwidth) and the calibrated model.
# Data: 02-pub-attn.tsv (code/ch02/published.c).
d = datadir.'/02-pub-attn.tsv'
set datafile separator tab
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'Context (tokens attended)'
set ylabel 'Time per attention kernel (µs)'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:3 with lines lw 2 dt 2 lc rgb '#777777' title 'roofline (datasheet)', \
     d using 1:4 with lines lw 2.5 lc rgb '#1f5fa8' title 'calibrated', \
     d using 1:2 with points pt 7 ps 0.9 lc rgb '#c0392b' title 'published measurement'
