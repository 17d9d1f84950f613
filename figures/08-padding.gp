# Padding to vLLM's capture sizes ([1, 2, 4] + range(8, 256, 8) +
# range(256, 513, 16)): the share of rows that are dummies, and the GPU time
# they cost, against batch.  LLaMA-3-8B on one H100 SXM, bf16, 512-token
# contexts; dummy rows run every op but attention.
# Data: 08-padding.tsv (code/ch08/graph_share.c).
pd = datadir.'/08-padding.tsv'
set datafile separator tab
set xrange [1:512]
set yrange [0:0.8]
set y2range [0:0.04]
set xtics 64 nomirror
set ytics ('0' 0, '10%%' 0.1, '20%%' 0.2, '30%%' 0.3, '40%%' 0.4, '50%%' 0.5, '60%%' 0.6, '70%%' 0.7, '80%%' 0.8) nomirror
set y2tics ('0' 0, '1%%' 0.01, '2%%' 0.02, '3%%' 0.03, '4%%' 0.04)
set grid xtics ytics lc rgb '#e4e4e4'
set border 11 lc rgb '#555555'
set xlabel 'Batch (sequences)'
set ylabel 'Rows that are padding, (padded - batch) / batch'
set y2label 'GPU time wasted, t(padded) / t(batch) - 1'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque font ',10'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 430
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot pd using 1:3 with steps lw 1.5 lc rgb '#888888' title 'rows padded (left axis)', \
     pd using 1:4 axes x1y2 with lines lw 2.5 lc rgb '#c0392b' title 'GPU time wasted (right axis)'
