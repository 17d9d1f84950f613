# LLaMA-3-8B bf16 on one H100 at its published read and GEMM ceilings, output
# 256 tokens: how many times faster one batch of R is than R requests one
# after another, at prompts of 512, 2048 and 6144 tokens.  Solid where the
# batch's KV cache fits in the memory budget, dotted beyond; a large dot at
# each prompt's memory ceiling.  Data: 03-seq-vs-batch.tsv and
# 03-seq-caps.tsv (code/ch03/seq_vs_batch.c).
d = datadir.'/03-seq-vs-batch.tsv'
caps = datadir.'/03-seq-caps.tsv'
set datafile separator tab
fits(f, y) = f > 0 ? y : NaN
over(f, y) = f > 0 ? NaN : y
c1 = '#1f5fa8'; c2 = '#e67e22'; c3 = '#c0392b'
set logscale xy
set xrange [1:700]
set yrange [1:100]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '512' 512)
set ytics ('1' 1, '2' 2, '5' 5, '10' 10, '20' 20, '50' 50, '100' 100)
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Requests R'
set ylabel 'Sequential time / one-batch time'
set key top left Left reverse samplen 2 title 'prompt' box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 420
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot x with lines lw 1 dt 4 lc rgb '#999999' title 'R (perfect sharing)', \
     d index 0 using 2:(fits($6, $5)) with linespoints pt 7 ps 0.6 lw 2.5 lc rgb c1 title '512', \
     d index 0 using 2:(over($6, $5)) with linespoints pt 6 ps 0.6 lw 1.5 dt 3 lc rgb c1 notitle, \
     d index 1 using 2:(fits($6, $5)) with linespoints pt 7 ps 0.6 lw 2.5 lc rgb c2 title '2048', \
     d index 1 using 2:(over($6, $5)) with linespoints pt 6 ps 0.6 lw 1.5 dt 3 lc rgb c2 notitle, \
     d index 2 using 2:(fits($6, $5)) with linespoints pt 7 ps 0.6 lw 2.5 lc rgb c3 title '6144', \
     d index 2 using 2:(over($6, $5)) with linespoints pt 6 ps 0.6 lw 1.5 dt 3 lc rgb c3 notitle, \
     caps using ($1 == 512 ? $2 : NaN):3 with points pt 7 ps 1.4 lc rgb c1 notitle, \
     caps using ($1 == 2048 ? $2 : NaN):3 with points pt 7 ps 1.4 lc rgb c2 notitle, \
     caps using ($1 == 6144 ? $2 : NaN):3 with points pt 7 ps 1.4 lc rgb c3 notitle, \
     NaN with points pt 7 ps 1.4 lc rgb '#555555' title 'largest batch that fits', \
     NaN with lines lw 1.5 dt 3 lc rgb '#555555' title 'KV cache does not fit'
