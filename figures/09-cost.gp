# Where the time of one request goes, each model at its default video and
# steps on one H100 SXM at 45% of the dense bf16 peak: attention and linear
# layers of the conditional pass, the second (guidance) pass, VAE decode and
# text encoder, as shares of the request's time.  Data: 09-cost.tsv (code/ch09/requests.c).
d = datadir.'/09-cost.tsv'
set datafile separator tab
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb '#ffffff'
set boxwidth 0.6
set grid ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set ylabel 'Share of the time per request'
set yrange [0:1.3]
set ytics 0.2
tot(a) = column(2) + column(3) + column(4) + column(5) + column(6)
set key top center horizontal Left reverse samplen 1 box lc rgb '#bbbbbb' opaque maxrows 2
set xtics scale 0 font ',10'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 402
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) { set xtics rotate by -30 left }
plot d using ($2/tot(0)):xtic(1) title 'attention' lc rgb '#c0392b', \
     '' using ($3/tot(0)) title 'linear layers' lc rgb '#1f5fa8', \
     '' using ($4/tot(0)) title 'guidance pass' lc rgb '#e67e22', \
     '' using ($5/tot(0)) title 'VAE decode' lc rgb '#27ae60', \
     '' using ($6/tot(0)) title 'text encoder' lc rgb '#888888'
