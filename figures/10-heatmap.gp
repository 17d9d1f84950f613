# LLaMA-3-70B target with a LLaMA-3-8B draft on 4 x H100 SXM, bf16, 256-token
# contexts: speedup over plain decoding for each acceptance rate alpha and
# draft length gamma.  Left: regime (i), verification costs one target step
# (batch 1, c from the step model).  Right: regime (ii), verification costs
# what the roofline step model says at batch 256.  Numbers in the cells;
# white is speedup 1, red a loss, blue a win.
# Data: 10-heatmap.tsv (code/ch10/regimes.c).
hm = datadir.'/10-heatmap.tsv'
set datafile separator tab

# Margins leave room for the y label at the left and the colour bar's
# label at the right; cell numbers are white on the dark cells.
# On a phone (narrow=1, the Makefile's narrow drawing) the panels stack.
# Stacked, the gap between the panels holds the first one's tick labels, its
# x-axis label and the second one's title; narrow_height is the canvas height
# that leaves each panel its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 700
if (narrow) {
    set multiplot layout 2,1 margins 0.18, 0.85, 0.09, 0.93 spacing 0, 0.16
} else {
    set multiplot layout 1,2 margins 0.10, 0.86, 0.13, 0.92 spacing 0.06, 0
}
set xrange [0.5:10.5]
set yrange [0.475:0.975]
set xtics 1 nomirror
set ytics 0.05 nomirror format '%.2f'
set xlabel 'Draft tokens per round (gamma)'
set cbrange [0.5:4.5]
set palette defined (0.5 '#b2182b', 1.0 '#f7f7f7', 2.0 '#92c5de', 4.5 '#053061')
unset colorbox
set border 3 lc rgb '#555555'

set title 'Regime (i): verification costs one step'
set ylabel 'Acceptance rate (alpha)'
plot hm index 0 using 2:1:3 with image notitle, \
     hm index 0 using 2:1:(sprintf('%.1f', $3)):($3 > 3.0 || $3 < 0.65 ? 0xffffff : 0x000000) with labels font ',10' tc rgb variable notitle

set title 'Regime (ii): roofline verification, batch 256'
if (!narrow) { unset ylabel }
if (narrow) { set colorbox vertical user origin 0.875, 0.09 size 0.025, 0.34 } else { set colorbox vertical user origin 0.875, 0.13 size 0.02, 0.79 }
set cbtics 0.5
# on a phone the colour bar goes unlabelled: its numbers are the cells' speedups
if (!narrow) { set cblabel 'Speedup' offset -0.5, 0 }
plot hm index 1 using 2:1:3 with image notitle, \
     hm index 1 using 2:1:(sprintf('%.2f', $3)):($3 > 3.0 || $3 < 0.65 ? 0xffffff : 0x000000) with labels font ',9' tc rgb variable notitle
unset multiplot
