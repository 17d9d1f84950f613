# Wan2.1-T2V-14B, 81 frames of 1280x720, on 8 x H100 SXM at 45% of peak:
# minutes from arrival to finished video against arrivals per hour, Poisson
# arrivals, fixed service (M/D/c, simulated).  Blue: one 8-way sequence-
# parallel job at a time (M/D/1); red: eight independent jobs, one per GPU
# (M/D/8).  Solid: mean; dashed: 95th percentile.  Data: 09-load.tsv
# (code/ch09/requests.c).
d = datadir.'/09-load.tsv'
set datafile separator tab
set datafile missing '?'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Arrivals (jobs per hour)'
set ylabel 'Minutes in system'
set xrange [0:*]
set yrange [0:90]
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title 'one 8-way job at a time, mean', \
     d using 1:3 with lines lw 1.5 dt 2 lc rgb '#1f5fa8' title '... p95', \
     d using 1:4 with lines lw 2.5 lc rgb '#c0392b' title 'eight independent jobs, mean', \
     d using 1:5 with lines lw 1.5 dt 2 lc rgb '#c0392b' title '... p95'
