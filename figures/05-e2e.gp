# LLaMA-3-70B bf16 on 4 x H100 (datasheet ceilings), prompts of 2048 and
# outputs of 256 tokens, continuous batching (request.h).  Left: time per
# output token against the requests in flight, whole prompts and chunks of
# 512; the dashed line is the memory ceiling.  Right: cost per million output
# tokens at the stated price per GPU-hour.  Data: 05-e2e-concurrency.tsv
# (code/ch05/end_to_end.c).
d = datadir.'/05-e2e-concurrency.tsv'
set datafile separator tab
stats d using 1 nooutput
cmax = STATS_max
c1 = '#1f5fa8'; c2 = '#e67e22'
# On a phone (narrow=1, the Makefile's narrow drawing) the panels stack.
if (!exists('narrow')) narrow = 0
if (narrow) {
    set multiplot layout 2,1 margins 0.2, 0.94, 0.08, 0.98 spacing 0, 0.1
} else {
    set multiplot layout 1,2 margins 0.09, 0.98, 0.14, 0.95 spacing 0.1, 0
}
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Requests in flight'
set xrange [0:cmax * 1.05]
set arrow 1 from cmax, graph 0 to cmax, graph 1 nohead dt 2 lc rgb '#888888'
set label 1 'memory ceiling' at cmax, graph 0.06 right offset -0.5, 0 tc rgb '#555555'
set ylabel 'Time per output token (ms)'
set key top left
plot d using 1:($3 * 1000) with lines lw 2 lc rgb c1 title 'whole prompts', \
     d using 1:($7 * 1000) with lines lw 2 lc rgb c2 title 'chunks of 512'
set ylabel 'Cost per million output tokens'
set logscale y
set key at graph 0.92, graph 0.75 right
plot d using 1:5 with lines lw 2 lc rgb c1 title 'whole prompts', \
     d using 1:8 with lines lw 2 lc rgb c2 title 'chunks of 512'
unset multiplot
