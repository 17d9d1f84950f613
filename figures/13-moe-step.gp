# One decode step of DeepSeek-V3 (fp8 weights and KV) on one H200 of an
# expert-parallel group of 8, attention data-parallel, 8192-token contexts:
# weight bytes read and tokens per second against the sequences each GPU
# decodes, up to the largest batch that fits.
# Data: 13-moe-step.tsv (code/ch13/today.c).
st = datadir.'/13-moe-step.tsv'
set datafile separator tab
set logscale x 2
set xtics nomirror
set ytics nomirror
set y2tics
set grid xtics ytics lc rgb '#e4e4e4'
set border 11 lc rgb '#555555'
set xlabel 'Sequences each GPU decodes'
set ylabel 'Weight bytes read per step (GB)'
set y2label 'Tokens/s per GPU'
set yrange [0:110]
set y2range [0:*]
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1) the key goes under the plot, clear of the curves.
if (!exists('narrow')) narrow = 0
if (narrow) { set key below Left reverse samplen 2 nobox }
plot st using 1:2 with linespoints pt 7 ps 0.7 lw 2.5 lc rgb '#1f5fa8' title 'weights read (experts touched)', \
     st using 1:5 axes x1y2 with linespoints pt 5 ps 0.7 lw 2 lc rgb '#c0392b' title 'tokens/s per GPU'
