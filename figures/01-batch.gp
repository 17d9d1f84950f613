# LLaMA-3-70B on 4 x H100 SXM, bf16: one decode step against batch at 1k,
# 4k and 32k context.  Left: step time.  Right: the whole step's arithmetic
# intensity against the ridge.  Solid where the batch's KV cache fits in
# memory, dotted beyond; a filled circle marks the largest batch that fits.
# Data: 01-batch-sweep.tsv, 01-ceilings.tsv (code/ch01/batch_sweep.c),
# 01-ridge.tsv (code/ch01/step_ops.c).
sweep = datadir.'/01-batch-sweep.tsv'
ceil  = datadir.'/01-ceilings.tsv'
ridge = datadir.'/01-ridge.tsv'

set datafile separator tab
stats ridge using 1 nooutput
r_x = STATS_min

c1 = '#1f5fa8'; c4 = '#e67e22'; c32 = '#c0392b'
fits(f, y) = f > 0 ? y : NaN
over(f, y) = f > 0 ? NaN : y

# On a phone (narrow=1, the Makefile's narrow drawing) the panels stack.
if (!exists('narrow')) narrow = 0
if (narrow) {
    set multiplot layout 2,1 margins 0.2, 0.94, 0.08, 0.99 spacing 0, 0.1
} else {
    set multiplot layout 1,2 margins 0.09, 0.98, 0.13, 0.97 spacing 0.09, 0
}
set logscale xy
set xrange [1:1024]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '1024' 1024)
set format y '%g'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Batch (sequences)'

# Left: step time.
set ylabel 'Step time (ms)'
set yrange [5:2000]
set key top left Left reverse samplen 2 title 'context' box lc rgb '#bbbbbb' opaque
plot sweep index 0 using 1:(fits($6, $2)) with lines lw 2.5 lc rgb c1 title '1k', \
     sweep index 0 using 1:(over($6, $2)) with lines lw 1.5 dt 3 lc rgb c1 notitle, \
     sweep index 1 using 1:(fits($6, $2)) with lines lw 2.5 lc rgb c4 title '4k', \
     sweep index 1 using 1:(over($6, $2)) with lines lw 1.5 dt 3 lc rgb c4 notitle, \
     sweep index 2 using 1:(fits($6, $2)) with lines lw 2.5 lc rgb c32 title '32k', \
     sweep index 2 using 1:(over($6, $2)) with lines lw 1.5 dt 3 lc rgb c32 notitle, \
     ceil using 2:($1 == 1024 ? $3 : NaN) with points pt 7 ps 1.3 lc rgb c1 notitle, \
     ceil using 2:($1 == 4096 ? $3 : NaN) with points pt 7 ps 1.3 lc rgb c4 notitle, \
     ceil using 2:($1 == 32768 ? $3 : NaN) with points pt 7 ps 1.3 lc rgb c32 notitle

# Right: intensity of the whole step.
set ylabel 'Step intensity (FLOP per byte)'
set yrange [1:6000]
set key top left Left reverse samplen 2 notitle box lc rgb '#bbbbbb' opaque
set arrow 1 from 1, r_x to 1024, r_x nohead dt 2 lw 1.5 lc rgb '#555555'
set label 1 sprintf('H100 ridge %.0f', r_x) at 150, r_x*0.75 right tc rgb '#555555'
plot x with lines lw 1 dt 4 lc rgb '#999999' title 'weights only (the shortcut)', \
     sweep index 0 using 1:(fits($6, $3)) with lines lw 2.5 lc rgb c1 notitle, \
     sweep index 0 using 1:(over($6, $3)) with lines lw 1.5 dt 3 lc rgb c1 notitle, \
     sweep index 1 using 1:(fits($6, $3)) with lines lw 2.5 lc rgb c4 notitle, \
     sweep index 1 using 1:(over($6, $3)) with lines lw 1.5 dt 3 lc rgb c4 notitle, \
     sweep index 2 using 1:(fits($6, $3)) with lines lw 2.5 lc rgb c32 notitle, \
     sweep index 2 using 1:(over($6, $3)) with lines lw 1.5 dt 3 lc rgb c32 notitle, \
     ceil using 2:($1 == 1024 ? $4 : NaN) with points pt 7 ps 1.3 lc rgb c1 notitle, \
     ceil using 2:($1 == 4096 ? $4 : NaN) with points pt 7 ps 1.3 lc rgb c4 notitle, \
     ceil using 2:($1 == 32768 ? $4 : NaN) with points pt 7 ps 1.3 lc rgb c32 notitle, \
     NaN with points pt 7 ps 1.3 lc rgb '#555555' title 'largest batch that fits', \
     NaN with lines lw 1.5 dt 3 lc rgb '#555555' title 'KV cache does not fit'
unset multiplot
