# LLaMA-3-70B on 4 x H100 SXM, bf16: what the replica produces (tokens/s,
# all sequences) against what one user sees (tokens/s of one sequence), as
# the decode batch grows, at 1k, 4k and 32k context.  Solid where the KV
# cache fits; labels give the batch.
# Data: 01-batch-sweep.tsv, 01-ceilings.tsv (code/ch01/batch_sweep.c).
sweep = datadir.'/01-batch-sweep.tsv'
ceil  = datadir.'/01-ceilings.tsv'

set datafile separator tab
c1 = '#1f5fa8'; c4 = '#e67e22'; c32 = '#c0392b'
fits(f, y) = f > 0 ? y : NaN
over(f, y) = f > 0 ? NaN : y
shown(b) = b == 1 || b == 4 || b == 16 || b == 64 || b == 256

set logscale y
set xrange [0:105]
set yrange [50:40000]
set format y '%g'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Per-user pace (tokens/s of one sequence)'
set ylabel 'Replica throughput (tokens/s)'
set key bottom left Left reverse samplen 2 title 'context' box lc rgb '#bbbbbb' opaque

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 396
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 title "\ncontext" }
plot sweep index 0 using 5:(fits($6, $4)) with lines lw 2.5 lc rgb c1 title '1k', \
     sweep index 0 using 5:(over($6, $4)) with lines lw 1.5 dt 3 lc rgb c1 notitle, \
     sweep index 1 using 5:(fits($6, $4)) with lines lw 2.5 lc rgb c4 title '4k', \
     sweep index 1 using 5:(over($6, $4)) with lines lw 1.5 dt 3 lc rgb c4 notitle, \
     sweep index 2 using 5:(fits($6, $4)) with lines lw 2.5 lc rgb c32 title '32k', \
     sweep index 2 using 5:(over($6, $4)) with lines lw 1.5 dt 3 lc rgb c32 notitle, \
     sweep index 0 using 5:(shown($1) ? $4 : NaN):(sprintf('B=%d', $1)) with labels point pt 7 ps 0.8 lc rgb c1 offset char 0.6,0.6 left tc rgb c1 notitle, \
     sweep index 1 using 5:(shown($1) && $6 > 0 ? $4 : NaN):(sprintf('%d', $1)) with labels point pt 7 ps 0.8 lc rgb c4 offset char 0.6,-0.7 left tc rgb c4 notitle, \
     ceil using 6:5 with points pt 6 ps 1.8 lw 2 lc rgb '#555555' title 'largest batch that fits'
