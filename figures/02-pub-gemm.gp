# A bf16 8192 x 8192 GEMM against M on H100 SXM: NVIDIA's published
# TensorRT-LLM measurements (aiconfigurator-core 0.12.0), the roofline on the
# datasheet ceilings, and the model calibrated on the whole table.
# Data: 02-pub-gemm.tsv (code/ch02/published.c).
d = datadir.'/02-pub-gemm.tsv'
set datafile separator tab
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy
set format x '%g'
set format y '%g'
set xrange [0.8:40000]
set xlabel 'Batch M (rows of X)'
set ylabel 'Time per GEMM (µs)'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below left Left reverse samplen 2 nobox noopaque maxcols 1 font ',9' }
plot d using 1:3 with lines lw 2 dt 2 lc rgb '#777777' title 'roofline (datasheet)', \
     d using 1:4 with lines lw 2.5 lc rgb '#1f5fa8' title 'calibrated (published:h100\_sxm/trtllm)', \
     d using 1:2 with points pt 7 ps 0.9 lc rgb '#c0392b' title 'published measurement (NVIDIA, TensorRT-LLM)'
