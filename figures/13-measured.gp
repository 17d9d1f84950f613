# Time per output token of DeepSeek-V3/R1 and Qwen3-235B-A22B: each of
# NVIDIA's published aggregated serving runs (serving_runs_moe.tsv,
# aiconfigurator-core 0.12.0) against napkin serve's answer to the same
# question (calib/validate_moe.c: the run's layout, weights, engine and, for
# one R1 sweep, MTP),
# calibrated (filled) and on the roofline (open).  On the diagonal the answer
# is exact; the shaded band is +-12 %, issue 32's bar for a group's median.
# Data: 13-measured.tsv (code/ch13/measured.c).
d = datadir.'/13-measured.tsv'
set datafile separator tab
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy
set format x '%g'
set format y '%g'
set xrange [5:150]
set yrange [0.5:150]
set xlabel 'Measured TPOT (ms)'
set ylabel 'napkin serve TPOT (ms)'
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1): the key under the plot, off the data; narrow_height
# is the canvas height that leaves the plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 430
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
set samples 200
plot '+' using 1:(0.88*$1):(1.12*$1) with filledcurves lc rgb '#dde8f3' title 'within 12 %', \
     x with lines lw 1 lc rgb '#999999' title 'answer = measurement', \
     d using ($1 == 0 ? $2 : 1/0):4 with points pt 6 ps 0.6 lc rgb '#9db7d6' title 'DeepSeek-V3/R1, roofline', \
     d using ($1 == 1 ? $2 : 1/0):4 with points pt 4 ps 0.6 lc rgb '#e0a99f' title 'Qwen3-235B, roofline', \
     d using ($1 == 0 ? $2 : 1/0):3 with points pt 7 ps 0.6 lc rgb '#1f5fa8' title 'DeepSeek-V3/R1, calibrated', \
     d using ($1 == 1 ? $2 : 1/0):3 with points pt 5 ps 0.6 lc rgb '#c0392b' title 'Qwen3-235B, calibrated'
