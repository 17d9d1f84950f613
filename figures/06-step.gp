# The step-time limit: one decode step with D distinct adapters among 64
# sequences, relative to the base model's step.  Rank 16 on q, k, v, o, bf16,
# 4096-token contexts, H100 SXM; LLaMA-3-70B at TP 4 and LLaMA-3-8B on one
# GPU.  Solid: the adapter ops' rooflines plus a fixed cost per kernel;
# dashed: the rooflines alone.
# Data: 06-step.tsv (code/ch06/step.c).
d = datadir.'/06-step.tsv'
set datafile separator tab
set logscale x 2
set xrange [1:68]
set yrange [1:1.25]
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16, '32' 32, '64' 64) nomirror
set ytics 0.05 nomirror
set format y '%.2f'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Distinct adapters in the batch of 64'
set ylabel 'Step time / base step'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot d using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title '70B, TP 4', \
     d using 1:3 with lines lw 2 dt 2 lc rgb '#1f5fa8' title '70B, TP 4, rooflines alone', \
     d using 1:4 with lines lw 2.5 lc rgb '#2e8b57' title '8B, one GPU', \
     d using 1:5 with lines lw 2 dt 2 lc rgb '#2e8b57' title '8B, one GPU, rooflines alone'
