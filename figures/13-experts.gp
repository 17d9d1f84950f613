# DeepSeek-V3's router (256 routed experts, top 8): experts some token of a
# step touches against the tokens in the step, the expected-coverage formula
# (lines) and a seeded simulation of 200 steps (points), for uniform routing
# and an assumed Zipf-skewed one.
# Data: 13-experts.tsv (code/ch13/today.c).
ex = datadir.'/13-experts.tsv'
set datafile separator tab
set logscale x 2
set xrange [1:4096]
set yrange [0:270]
set xtics ('1' 1, '8' 8, '64' 64, '512' 512, '4096' 4096) nomirror
set ytics 32 nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Tokens in the step'
set ylabel 'Experts touched (of 256)'
set key bottom right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1) the key goes under the plot, clear of the curves.
if (!exists('narrow')) narrow = 0
if (narrow) { set key below Left reverse samplen 2 nobox }
plot ex using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title 'uniform routing: 256 (1 - (31/32)^{tokens})', \
     ex using 1:4 with points pt 7 ps 0.9 lc rgb '#1f5fa8' title 'uniform, simulated', \
     ex using 1:3 with lines lw 2 lc rgb '#c0392b' title 'Zipf-skewed routing (s = 0.8, assumed)', \
     ex using 1:5 with points pt 5 ps 0.8 lc rgb '#c0392b' title 'skewed, simulated'
