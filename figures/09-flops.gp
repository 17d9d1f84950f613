# Wan2.1-T2V-14B, bf16, 50 steps with classifier-free guidance (two passes a
# step): FLOP per request against frames, split into attention (quadratic in
# the tokens) and the linear layers (linear in them), at 1280x720 and 832x480.
# Data: 09-flops.tsv (code/ch09/requests.c).
d = datadir.'/09-flops.tsv'
set datafile separator tab
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Frames'
set ylabel 'PFLOP per request'
set xrange [1:161]
set yrange [0:*]
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:2 with lines lw 2.5 lc rgb '#c0392b' title 'attention, 1280x720', \
     d using 1:3 with lines lw 2.5 lc rgb '#1f5fa8' title 'linear, 1280x720', \
     d using 1:4 with lines lw 2 dt 2 lc rgb '#c0392b' title 'attention, 832x480', \
     d using 1:5 with lines lw 2 dt 2 lc rgb '#1f5fa8' title 'linear, 832x480'
