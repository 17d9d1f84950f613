# A 7e9-parameter model on 1e12 tokens (6ND = 4.2e22 FLOP) on H100 SXM:
# GPUs needed, in whole 8-GPU nodes, against the deadline in days, for
# several model FLOPs utilisations at the dense bf16 peak, with the goodput
# Llama 3's interruption rate leaves.  Dashed: the same at 40% MFU against
# the sparse figure (twice the dense one), the cluster that misses.
# Data: 12-deadline.tsv, 12-deadline-marks.tsv (code/ch12/cluster.c).
dl = datadir.'/12-deadline.tsv'
mk = datadir.'/12-deadline-marks.tsv'
set datafile separator tab
set logscale y 2
set xrange [5:90]
set yrange [8:512]
set ytics ('8' 8, '16' 16, '32' 32, '64' 64, '128' 128, '256' 256, '512' 512) nomirror
set xtics 10 nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Deadline (days)'
set ylabel 'H100 GPUs (whole 8-GPU nodes)'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
set arrow 1 from 21, 8 to 21, 512 nohead dt 3 lw 1 lc rgb '#888888'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 402
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot dl using 1:2 with steps lw 2 lc rgb '#c0392b' title 'MFU 30%', \
     dl using 1:3 with steps lw 2.5 lc rgb '#1f5fa8' title 'MFU 40%', \
     dl using 1:4 with steps lw 2 lc rgb '#27ae60' title 'MFU 50%', \
     dl using 1:5 with steps lw 2 lc rgb '#8e44ad' title 'MFU 60%', \
     dl using 1:6 with steps lw 1.5 dt 2 lc rgb '#555555' title 'MFU 40% of the sparse figure (wrong)', \
     mk using 1:2 with points pt 7 ps 1.3 lc rgb '#222222' notitle, \
     mk using 1:2:3 with labels left offset 2,2.2 font ',10' notitle
