# Share of token slots that are padding, against batch size, for two prompt
# length distributions (chat: lognormal, median 300, sigma 0.8; mixed: the
# same with 10% documents, median 4000, sigma 0.6; clamped to [16, 8192]),
# padded to the longest and bucketed by powers of two from 256.  Packing
# wastes none.  Data: 03-padding.tsv (code/ch03/padding.c).
d = datadir.'/03-padding.tsv'
set datafile separator tab
set logscale x 2
set xrange [1:270]
set yrange [0:1]
set format y '%.0f%%'
set ytics ('0%%' 0, '20%%' 0.2, '40%%' 0.4, '60%%' 0.6, '80%%' 0.8, '100%%' 1)
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256)
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Sequences in the batch'
set ylabel 'Padding share of slots'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:4 skip 2 with linespoints pt 7 ps 0.6 lw 2.5 lc rgb '#c0392b' title 'mixed, padded', \
     d using 1:2 skip 2 with linespoints pt 7 ps 0.6 lw 2.5 lc rgb '#1f5fa8' title 'chat, padded', \
     d using 1:5 skip 2 with linespoints pt 6 ps 0.6 lw 1.5 dt 2 lc rgb '#c0392b' title 'mixed, bucketed', \
     d using 1:3 skip 2 with linespoints pt 6 ps 0.6 lw 1.5 dt 2 lc rgb '#1f5fa8' title 'chat, bucketed'
