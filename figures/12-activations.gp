# LLaMA-3-70B on H100 SXM: activations one GPU holds (the first stage of
# TP 8 x PP 4 with 1F1B, four microbatches in flight, microbatch 1) against
# sequence length, for each recompute and parallelism setting.  Thin lines:
# Korthikanti et al.'s GPT count (scores stored, dropout, 4h MLP) applied to
# the 70B's width and heads; thick lines: the modern count (flash attention,
# no dropout, GQA, gated MLP).  Grey: the memory left after weights,
# gradients and the ZeRO-1 optimizer (DP 16).
# Data: 12-activations.tsv (code/ch12/activations.c).
ac = datadir.'/12-activations.tsv'
set datafile separator tab
set logscale xy 2
set xrange [1024:131072]
set yrange [2**-2:2**12]
set xtics ('1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192, '16k' 16384, '32k' 32768, '64k' 65536, '128k' 131072) nomirror
set ytics ('0.25' 0.25,  '2' 2, '8' 8, '32' 32, '128' 128, '512' 512, '2048' 2048) nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Sequence length (tokens)'
set ylabel 'Activations per GPU (GB)'
set key below Left reverse samplen 2 font ',9' maxrows 3 width -2 height 1.5

# On a phone (narrow=1, the Makefile's narrow drawing): a canvas tall
# enough for the whole y label, one key entry a line; narrow_height is the
# canvas height that leaves the plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 560
if (narrow) { set key below left Left reverse samplen 2 font ',9' maxcols 1 }
G = 1e9
plot ac using 1:($13/G) with lines lw 6 lc rgb '#dddddd' title 'room left after weights, gradients, optimizer', \
     ac using 1:($3/G) with lines lw 1.5 lc rgb '#c0392b' title 'Korthikanti: TP', \
     ac using 1:($4/G) with lines lw 1.5 dt 2 lc rgb '#c0392b' title 'Korthikanti: TP + SP', \
     ac using 1:($5/G) with lines lw 1.5 lc rgb '#e67e22' title 'Korthikanti: TP + selective', \
     ac using 1:($6/G) with lines lw 1.5 dt 2 lc rgb '#e67e22' title 'Korthikanti: TP + SP + selective', \
     ac using 1:($9/G) with lines lw 2.5 lc rgb '#1f5fa8' title 'modern: TP', \
     ac using 1:($10/G) with lines lw 2.5 dt 2 lc rgb '#1f5fa8' title 'modern: TP + SP', \
     ac using 1:($11/G) with lines lw 2.5 lc rgb '#27ae60' title 'full recompute', \
     ac using 1:($12/G) with lines lw 2.5 dt 2 lc rgb '#27ae60' title 'full recompute + SP'
