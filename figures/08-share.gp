# Share of a decode step CUDA graphs save, against batch: LLaMA-3-8B on one
# H100 SXM and LLaMA-3-70B on 4 x H100 (tp 4), bf16, 1024-token contexts, at
# three host costs per eager launch (4 us, the driver's; 9.1 us, a Python-side
# launch; 20 us, a what-if).  Graph launch 4 us + 1 us per node, no per-step
# host work.  Curves end where memory ends (captured graphs taken out of the
# KV budget).  Points: published gains at batch 1 (other GPUs and engines).
# Data: 08-share.tsv, 08-published.tsv (code/ch08/graph_share.c).
sh = datadir.'/08-share.tsv'
pub = datadir.'/08-published.tsv'
set datafile separator tab
set datafile missing '-'
set logscale x 2
set xrange [1:512]
set yrange [-0.02:0.6]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '512' 512) nomirror
set ytics ('0' 0, '10%%' 0.1, '20%%' 0.2, '30%%' 0.3, '40%%' 0.4, '50%%' 0.5, '60%%' 0.6) nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Batch (sequences)'
set ylabel 'Share of the step saved, 1 - graph time / eager time'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque font ',10'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 450
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot sh using 1:3 with lines lw 2.5 lc rgb '#1f5fa8' title '8B, 20 us per launch (what-if)', \
     sh using 1:6 with lines lw 2.5 dt 2 lc rgb '#1f5fa8' title '70B tp 4, 20 us per launch', \
     sh using 1:4 with lines lw 2.5 lc rgb '#c0392b' title '8B and 70B, 9.1 us (Python-side launch)', \
     sh using 1:7 with lines lw 2.5 dt 2 lc rgb '#c0392b' notitle, \
     sh using 1:2 with lines lw 2 lc rgb '#555555' title '8B and 70B, 4 us per launch (driver)', \
     sh using 1:5 with lines lw 2 dt 2 lc rgb '#555555' notitle, \
     pub using 1:2 with points pt 7 ps 1.3 lc rgb '#222222' title 'published, batch 1', \
     pub using 1:($2 + $4):3 with labels left offset 1,0 font ',9' notitle
