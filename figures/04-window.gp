# The wait a batch window adds, as a share of the window W, against the
# offered load lambda*W (requests per window).  Lines: the chapter-3 theory
# (window.h; Poisson arrivals, max batch 256, instant dispatch): mean from the
# closed form, p50 and p99 simulated.  Points: the real batcher
# (code/napkin/runtime/batcher.c) with a no-op handler, measured on the machine that
# built the book, for W = 1 ms and 3 ms.
# Data: 04-window-theory.tsv, 04-window-measured.tsv (code/ch04/window_latency.c).
theory = datadir.'/04-window-theory.tsv'
meas   = datadir.'/04-window-measured.tsv'

set datafile separator tab
# The key sits beside the plot: the measured points can land anywhere.
set key outside right top vertical box samplen 2 font ',10'
set logscale x
set xrange [0.2:64]
set yrange [0:*]
set xtics ('0.25' 0.25, '1' 1, '4' 4, '16' 16, '64' 64)
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
# UTF-8 λ: the SVG terminal does not map the Symbol font.
set xlabel 'Offered load λW (requests per window)'
set ylabel 'Wait / W'

c50 = '#1f5fa8'; c99 = '#c0392b'; cm = '#7f8c8d'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 438
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot theory using 1:3 skip 1 with lines lw 2 lc rgb c50 title 'p50, theory', \
     theory using 1:4 skip 1 with lines lw 2 lc rgb c99 title 'p99, theory', \
     theory using 1:2 skip 1 with lines lw 1.5 dt 2 lc rgb cm title 'mean, theory', \
     meas using ($2 == 1 ? $1 : NaN):6 skip 1 with points pt 7 ps 1.1 lc rgb c50 title 'p50, W = 1 ms', \
     meas using ($2 == 3 ? $1 : NaN):6 skip 1 with points pt 5 ps 1.0 lc rgb c50 title 'p50, W = 3 ms', \
     meas using ($2 == 1 ? $1 : NaN):7 skip 1 with points pt 7 ps 1.1 lc rgb c99 title 'p99, W = 1 ms', \
     meas using ($2 == 3 ? $1 : NaN):7 skip 1 with points pt 5 ps 1.0 lc rgb c99 title 'p99, W = 3 ms'
