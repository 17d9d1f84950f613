# Predicted time of a bf16 8192 x 8192 GEMM against batch on H100 SXM and
# H200 SXM from the datasheet ceilings, and on H200 from published measured
# ceilings (BabelStream read 4.48 TB/s, cuBLAS 790 TFLOP/s).  Prediction
# only: no GPU set is committed yet.
# Data: 02-gpu-pred.tsv, 02-gpu-knees.tsv (code/ch02/gpu_predicted.c).
pred  = datadir.'/02-gpu-pred.tsv'
knees = datadir.'/02-gpu-knees.tsv'

set datafile separator tab
set logscale xy
set xrange [1:4096]
set format x '%g'
set format y '%g'
set xlabel 'Batch M (rows of X)'
set ylabel 'Predicted time per GEMM (µs)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot pred using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title 'H100 SXM, datasheet ceilings', \
     pred using 1:3 with lines lw 2.5 lc rgb '#c0392b' title 'H200 SXM, datasheet ceilings', \
     pred using 1:4 with lines lw 1.5 dt 2 lc rgb '#c0392b' title 'H200, published measured ceilings', \
     knees using 2:3 with points pt 7 ps 1.3 lc rgb '#222222' title 'knee (predicted)'
