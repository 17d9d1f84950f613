# GEMM time against batch on the committed CPU set (fp32, OpenBLAS,
# 4096 x 4096 weight): measured medians, and the library's roofline
# prediction from the measured ceilings (peak of the sweep, stream read).
# After `make measure`, the reader's own sweep is drawn beside it.
# Data: measured/cpu-intel-xeon-processor-2c/gemm.tsv (committed),
# 02-cpu-pred.tsv, 02-cpu-ridge.tsv, 02-yours.tsv (code/ch02/cpu_measured.c).
meas  = measureddir.'/cpu-intel-xeon-processor-2c/gemm.tsv'
pred  = datadir.'/02-cpu-pred.tsv'
ridge = datadir.'/02-cpu-ridge.tsv'
yours = datadir.'/02-yours.tsv'

set datafile separator tab
stats ridge using 3 nooutput
knee_pred = STATS_min
stats ridge using 4 nooutput
knee_meas = STATS_min
# The row of cblas_sgemv (shape gemv_...) is drawn apart from the sweep.
is_gemv(s) = strstrt(s, 'gemv') == 1
yours_dev = system("sed -n 's/^# device: //p' '".yours."' | head -n 1")

set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'Batch M (rows of X)'
set ylabel 'Time per GEMM (ms)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
stats meas using 2 nooutput
set xrange [0.8:STATS_max*1.25]

set arrow 1 from knee_pred, graph 0 to knee_pred, graph 1 nohead dt 2 lw 1.2 lc rgb '#1f5fa8'
set label 1 sprintf('predicted knee M = %.0f', knee_pred) at knee_pred/1.08, graph 0.93 right tc rgb '#1f5fa8'
set arrow 2 from knee_meas, graph 0 to knee_meas, graph 1 nohead dt 3 lw 1.2 lc rgb '#c0392b'
set label 2 sprintf('measured knee M = %.0f', knee_meas) at knee_meas*1.08, graph 0.93 left tc rgb '#c0392b'

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 420
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) {
    set label 1 sprintf("predicted\nknee M = %.0f", knee_pred) at knee_pred/1.08, graph 0.93 right tc rgb '#1f5fa8'
    set label 2 sprintf("measured\nknee M = %.0f", knee_meas) at knee_meas*1.08, graph 0.93 left tc rgb '#c0392b'
}
plot pred using 1:($3*1e3) with lines dt 2 lw 1 lc rgb '#9ab' title 'memory term: bytes / bandwidth ceiling', \
     pred using 1:($4*1e3) with lines dt 4 lw 1 lc rgb '#bbb' title 'compute term: FLOP / measured peak', \
     pred using 1:($2*1e3) with lines lw 2.5 lc rgb '#1f5fa8' title 'roofline prediction (library)', \
     meas using 2:(is_gemv(strcol(1)) ? NaN : $5*1e3) with linespoints pt 7 ps 1.0 lw 1 lc rgb '#c0392b' title 'measured sgemm (median)', \
     meas using 2:(is_gemv(strcol(1)) ? $5*1e3 : NaN) with points pt 5 ps 1.2 lc rgb '#6b8e23' title 'measured sgemv, M = 1', \
     yours using 1:($2*1e3) with points pt 6 ps 1.2 lc rgb '#e67e22' title 'yours: '.yours_dev
