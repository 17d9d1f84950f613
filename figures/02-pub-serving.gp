# Time per output token of LLaMA-3.1-8B-Instruct on H100 SXM under
# TensorRT-LLM: each of NVIDIA's published serving runs (silicon_sample.csv,
# aiconfigurator-core 0.12.0) against napkin serve's prediction, on the
# roofline and calibrated.  On the diagonal the prediction is exact.  Each
# calibrated answer carries its measured error band (band.h: the 10th to
# 90th percentile of held-out runs like it), drawn as the span of measured
# TPOT it allows: a point whose bar crosses the diagonal is inside its band.
# Data: 02-pub-serving.tsv (code/ch02/published.c).
d = datadir.'/02-pub-serving.tsv'
set datafile separator tab
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy
set format x '%g'
set format y '%g'
set xrange [0.8:40]
set yrange [0.8:40]
set xlabel 'Measured TPOT (ms)'
set ylabel 'Predicted TPOT (ms)'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot x with lines lw 1 lc rgb '#999999' title 'prediction = measurement', \
     d using 2:3 with points pt 6 ps 0.8 lc rgb '#777777' title 'roofline', \
     d using 2:4:7:8 with xerrorbars pt 7 ps 0.8 lw 1 lc rgb '#1f5fa8' title 'calibrated, with its band'
