# The memory limit: the largest batch of 4096-token sequences that fits
# beside S adapter slots, each sized for the largest rank allowed.
# LLaMA-3-70B on 4 x H100 SXM (per GPU) and LLaMA-3-8B on one H100, bf16.
# A line ends where not one sequence fits.
# Data: 06-slots.tsv (code/ch06/slots.c).
d = datadir.'/06-slots.tsv'
set datafile separator tab
set datafile missing 'NaN'
set xrange [0:128]
set yrange [0:175]
set xtics 16 nomirror
set ytics 20 nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'GPU adapter slots'
set ylabel 'Largest batch at 4096 tokens'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title '70B, q,k,v,o slots at rank 16', \
     d using 1:3 with lines lw 2.5 lc rgb '#c0392b' title '70B, q,k,v,o slots at rank 64', \
     d using 1:4 with lines lw 2.5 dt 2 lc rgb '#c0392b' title '70B, all seven at rank 64', \
     d using 1:5 with lines lw 2.5 lc rgb '#2e8b57' title '8B on one GPU, all seven at rank 64'
