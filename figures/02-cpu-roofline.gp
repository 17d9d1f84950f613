# The measured roofline of the committed CPU set: the roof from the measured
# ceilings (peak of the GEMM sweep, stream read bandwidth), and every GEMM of
# the sweep at its arithmetic intensity (fp32, 4096 x 4096 weight).
# Data: measured/cpu-intel-xeon-processor-2c/gemm.tsv (committed),
# 02-cpu-roof.tsv, 02-cpu-ridge.tsv (code/ch02/cpu_measured.c).
meas  = measureddir.'/cpu-intel-xeon-processor-2c/gemm.tsv'
roof  = datadir.'/02-cpu-roof.tsv'
ridge = datadir.'/02-cpu-ridge.tsv'

set datafile separator tab
# The row of cblas_sgemv (shape gemv_...) is drawn apart from the sweep.
is_gemv(s) = strstrt(s, 'gemv') == 1
stats ridge using 1 nooutput
r_x = STATS_min
stats ridge using 2 nooutput
r_peak = STATS_min

set logscale xy
set xrange [0.3:1000]
set format x '%g'
set format y '%g'
set xlabel 'Arithmetic intensity (FLOP per byte)'
set ylabel 'GFLOP/s (fp32, all cores)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
# Bottom right: the one corner the roof and the sweep leave empty.
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque

set arrow 1 from r_x, graph 0 to r_x, r_peak nohead dt 2 lw 1.2 lc rgb '#888888'
set label 1 sprintf('ridge %.0f FLOP/B', r_x) at r_x*1.12, graph 0.94 left tc rgb '#555555'

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below left Left reverse samplen 2 nobox noopaque maxcols 1 font ',9' }
plot roof using 1:2 with lines lw 3 lc rgb '#222222' title (narrow ? 'measured roof: min(peak, bandwidth × intensity)' : 'measured roof: min(peak, bandwidth ceiling × intensity)'), \
     meas using 8:(is_gemv(strcol(1)) ? NaN : $6*1e3) with points pt 7 ps 1.2 lc rgb '#c0392b' title 'sgemm sweep, M = 1 … 1024', \
     meas using 8:(is_gemv(strcol(1)) ? $6*1e3 : NaN) with points pt 5 ps 1.2 lc rgb '#6b8e23' title 'sgemv, M = 1'
