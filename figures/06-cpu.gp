# The batched adapter operator measured on a CPU (one thread): 16 layers of
# a 4096 -> 4096 projection at rank 16, batch 64, against D distinct
# adapters.  Points: median of the repeats, bars from the fastest to the
# slowest; line: the rooflines of shrink and expand from the read and compute
# ceilings measured in the same run.
# Data: 06-cpu.tsv (code/ch06/cpu_measured.c, from
# measured/cpu-amd-epyc-2c/lora_bgmv.tsv, committed as the twin wrote it).
d = datadir.'/06-cpu.tsv'
set datafile separator tab
set logscale x 2
set xrange [0.8:80]
set yrange [0:*]
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16, '32' 32, '64' 64) nomirror
set ytics nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Distinct adapters in the batch of 64'
set ylabel 'Time of 16 layers (ms)'
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 348
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:2:3:4 with yerrorbars pt 7 ps 1.1 lc rgb '#c0392b' title 'measured (median, min to max)', \
     d using 1:5 with lines lw 2.5 lc rgb '#1f5fa8' title 'roofline from the measured ceilings'
