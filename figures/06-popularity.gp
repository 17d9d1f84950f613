# What popularity does to D: expected distinct adapters in a batch of B
# requests drawn from 300 adapters, uniform and Zipf popularity (the exact
# expectation, lines), with the simulated mean and its standard deviation
# for Zipf 1.0 (points).
# Data: 06-popularity.tsv, 06-popularity-sim.tsv (code/ch06/popularity.c).
d = datadir.'/06-popularity.tsv'
s = datadir.'/06-popularity-sim.tsv'
set datafile separator tab
set logscale x 2
set xrange [1:256]
set yrange [0:180]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256) nomirror
set ytics 20 nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Batch B (requests)'
set ylabel 'Distinct adapters in the batch'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 420
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot x with lines lw 1 dt 3 lc rgb '#888888' title 'every request its own adapter', \
     d using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title 'uniform', \
     d using 1:3 with lines lw 2.5 lc rgb '#7d3c98' title 'Zipf 0.8', \
     d using 1:4 with lines lw 2.5 lc rgb '#c0392b' title 'Zipf 1.0', \
     d using 1:5 with lines lw 2.5 lc rgb '#2e8b57' title 'Zipf 1.2', \
     s using 1:2:3 with yerrorbars pt 7 ps 0.9 lc rgb '#222222' title 'Zipf 1.0, simulated'
