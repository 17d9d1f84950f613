# Poisson arrivals at 100 requests/s, batches of at most 32: the mean batch
# size a window buys (left axis) and the mean wait it costs each request
# (right axis), closed form (lines) and simulation (points).  Data:
# 03-window.tsv (code/ch03/window_price.c).
d = datadir.'/03-window.tsv'
set datafile separator tab
set xrange [0:400]
set yrange [0:34]
set y2range [0:400]
set grid xtics ytics lc rgb '#e4e4e4'
set border 11 lc rgb '#555555'
set tics nomirror
set y2tics
set xlabel 'Window W (ms)'
set ylabel 'Mean batch size'
set y2label 'Mean wait per request (ms)'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 402
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) { set xtics 100 }
plot d using 1:2 skip 2 with lines lw 2.5 lc rgb '#1f5fa8' title 'batch size (closed form)', \
     d using 1:3 skip 2 with points pt 7 ps 0.6 lc rgb '#1f5fa8' title 'batch size (simulated)', \
     d using 1:4 skip 2 axes x1y2 with lines lw 2.5 lc rgb '#c0392b' title 'mean wait (closed form)', \
     d using 1:5 skip 2 axes x1y2 with points pt 6 ps 0.7 lc rgb '#c0392b' title 'mean wait (simulated)', \
     d using 1:6 skip 2 axes x1y2 with lines lw 1.2 dt 2 lc rgb '#c0392b' title 'p99 wait (simulated)'
