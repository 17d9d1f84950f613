# LLaMA-3-70B on H100 SXM, bf16, 1024-token contexts, gamma 4, draft
# time-sliced on the target's GPUs: speedup of speculative decoding (regime
# ii, the roofline step model) against serving batch.  Left TP 4, right TP 8.
# Blue: LLaMA-3.2-1B draft; orange: LLaMA-3-8B draft; line style by alpha.
# Dots mark where each curve crosses 1.  Each curve stops at the largest
# batch whose weights and KV (target and that draft) fit; light grey is past
# the 8B draft's limit, dark grey past the 1B draft's.
# Data: 11-batch.tsv, 11-crossings.tsv (code/ch11/fleet.c).
bt = datadir.'/11-batch.tsv'
cr = datadir.'/11-crossings.tsv'
set datafile separator tab
set datafile missing 'NaN'
c1 = '#1f5fa8'; c8 = '#e67e22'

# The left margin leaves room for the y label (at 0.08 it fell off the canvas).
# On a phone (narrow=1, the Makefile's narrow drawing) the panels stack, the
# gap between them holding the first one's x-axis label and the second one's
# title; narrow_height is the canvas height that leaves each panel its room
# (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 680
if (narrow) {
    set multiplot layout 2,1 margins 0.2, 0.94, 0.09, 0.94 spacing 0, 0.16
} else {
    set multiplot layout 1,2 margins 0.10, 0.98, 0.13, 0.92 spacing 0.06, 0
}
set logscale x 2
set xrange [1:2048]
set yrange [0:4]
# No label at 2048: beside 1024 the two ran together.
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '1024' 1024) nomirror
set ytics 0.5 nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Batch (sequences)'
set style fill transparent solid 0.15 noborder

do for [t = 0:1] {
    tp = t == 0 ? 4 : 8
    set title sprintf('LLaMA-3-70B on %d x H100', tp)
    if (t == 0 || narrow) { set ylabel 'Speedup over plain decoding' } else { unset ylabel }
    set arrow 1 from 1, 1 to 2048, 1 nohead dt 2 lw 1.5 lc rgb '#555555' front
    # the key sits bottom left, where no curve goes (top right it hid the memory limits)
    if (t == 0) { set key bottom left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque font ',9' } else { unset key }
    plot bt index t using 1:($3 > 0 ? NaN : 4) with filledcurves x1 lc rgb '#888888' notitle, \
         bt index t using 1:($2 > 0 ? NaN : 4) with filledcurves x1 lc rgb '#555555' notitle, \
         bt index t using 1:4 with lines lw 2 dt 3 lc rgb c1 title '1B draft, alpha 0.6', \
         bt index t using 1:6 with lines lw 2.5 lc rgb c1 title '1B draft, alpha 0.8', \
         bt index t using 1:8 with lines lw 2 dt 3 lc rgb c8 title '8B draft, alpha 0.6', \
         bt index t using 1:10 with lines lw 2.5 lc rgb c8 title '8B draft, alpha 0.8', \
         cr using ($1 == tp && ($3 == 0.6 || $3 == 0.8) ? $4 : NaN):5 with points pt 7 ps 1.1 lc rgb '#222222' notitle
}
unset multiplot
