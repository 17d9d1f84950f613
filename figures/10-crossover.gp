# LLaMA-3-70B target with a LLaMA-3-8B draft time-sliced on 4 x H100 SXM,
# bf16, alpha 0.8, gamma 4: speedup against serving batch in the two
# verification cost regimes.  Regime (i) only feels the draft's cost c;
# regime (ii) also pays for verifying five tokens per sequence once the
# target step leaves the memory-bound region.  Curves stop where the KV of
# target and draft no longer fits (10-ceilings.tsv); grey is past the
# 256-token limit.  The limit lines' labels are short, so that they end below
# the label of the 4k point where memory ends.
# Data: 10-crossover.tsv, 10-marks.tsv, 10-ceilings.tsv (code/ch10/regimes.c).
cx = datadir.'/10-crossover.tsv'
mk = datadir.'/10-marks.tsv'
ce = datadir.'/10-ceilings.tsv'
set datafile separator tab
set datafile missing 'NaN'
set logscale x 2
set xrange [1:2048]
set yrange [0:3.5]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '1024' 1024, '2048' 2048) nomirror
set ytics 0.5 nomirror
set y2range [0:7]
set y2tics 1
set y2label 'Verification step / target step'
set grid xtics ytics lc rgb '#e4e4e4'
set border 11 lc rgb '#555555'
set xlabel 'Batch (sequences)'
set ylabel 'Speedup over plain decoding'
set style fill transparent solid 0.18 noborder
set arrow 1 from 1, 1 to 2048, 1 nohead dt 2 lw 1.5 lc rgb '#555555'
set label 1 'break-even' at 1.3, 1.08 left tc rgb '#555555'
set key at graph 0.99, graph 0.99 right top Left reverse samplen 2 box lc rgb '#bbbbbb' opaque font ',10'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 384
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
# a mark's label broken after its colon on a phone, so it stays on the canvas
brk(s) = (narrow && strstrt(s, ': ') > 0) ? s[1:strstrt(s, ': ')] . "\n" . s[strstrt(s, ': ') + 2:] : s
# and the right-hand marks' labels broken before their batch, break-even's
# above its point and the other's below, so that they end short of the right
# axis's numbers; the 256-token limit goes unlabelled there (the caption names
# the grey band past it), as its label would cross both
brkb(s) = strstrt(s, ' batch ') > 1 ? s[1:strstrt(s, ' batch ') - 1] . "\n" . s[strstrt(s, ' batch ') + 1:] : s
if (narrow) { unset label 1 }  # the dashed line at 1 is named by its mark's label
if (narrow) { set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '2048' 2048) }
plot cx using 1:($2 > 0 ? NaN : 3.5) with filledcurves x1 lc rgb '#888888' notitle, \
     ce using 2:(0):(0):(3.5) with vectors nohead dt 4 lw 1.2 lc rgb '#444444' notitle, \
     ce using 2:(narrow && $1 < 1000 ? NaN : 0.12):(sprintf('limit, %s (%d)', $1 < 1000 ? '256-token' : '4k', $2)) with labels rotate by 90 left offset -1.6,0 font ',9' tc rgb '#444444' notitle, \
     cx using 1:3 with lines lw 2.5 lc rgb '#1f5fa8' title 'regime (i), 256-token contexts', \
     cx using 1:4 with lines lw 2.5 lc rgb '#c0392b' title 'regime (ii), 256-token contexts', \
     cx using 1:7 with lines lw 2.5 lc rgb '#e67e22' title 'regime (ii), 4096-token contexts', \
     cx using 1:5 axes x1y2 with lines lw 1.5 dt 3 lc rgb '#888888' title 'verification / target step, 256 (right axis)', \
     mk using 1:2 with points pt 7 ps 1.2 lc rgb '#222222' notitle, \
     mk using 1:($4 > 0 || narrow && $1 > 1 ? NaN : $2):3 with labels left offset 0.8,0.6 font ',10' notitle, \
     mk using 1:(narrow && $4 == 0 && $1 > 1 && strstrt(strcol(3), 'break-even') > 0 ? $2 : NaN):(brkb(strcol(3))) with labels left offset 0.8,1.4 font ',10' notitle, \
     mk using 1:(narrow && $4 == 0 && $1 > 1 && strstrt(strcol(3), 'break-even') == 0 ? $2 : NaN):(brkb(strcol(3))) with labels left offset 0.6,-1.3 font ',10' notitle, \
     mk using 1:($4 > 0 ? $2 : NaN):(brk(strcol(3))) with labels right offset -0.8,-0.6 font ',10' notitle
