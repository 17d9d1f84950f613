# LLaMA-3-70B target with a LLaMA-3-8B draft on 4 x H100 SXM, bf16, 256-token
# contexts, alpha 0.8, gamma 4: speedup against serving batch in the two
# verification cost regimes.  Regime (i) only feels the draft's cost c;
# regime (ii) also pays for verifying five tokens per sequence once the
# target step leaves the memory-bound region.
# Data: 10-crossover.tsv, 10-marks.tsv (code/ch10/regimes.c).
cx = datadir.'/10-crossover.tsv'
mk = datadir.'/10-marks.tsv'
set datafile separator tab
set logscale x 2
set xrange [1:1024]
set yrange [0:3]
set xtics ('1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '1024' 1024) nomirror
set ytics 0.5 nomirror
set y2range [0:6]
set y2tics 1
set y2label 'Verification step / target step'
set grid xtics ytics lc rgb '#e4e4e4'
set border 11 lc rgb '#555555'
set xlabel 'Batch (sequences)'
set ylabel 'Speedup over plain decoding'
set arrow 1 from 1, 1 to 1024, 1 nohead dt 2 lw 1.5 lc rgb '#555555'
set label 1 'break-even' at 1.3, 1.08 left tc rgb '#555555'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
plot cx using 1:2 with lines lw 2.5 lc rgb '#1f5fa8' title 'regime (i): verification costs one step', \
     cx using 1:3 with lines lw 2.5 lc rgb '#c0392b' title 'regime (ii): roofline verification', \
     cx using 1:4 axes x1y2 with lines lw 1.5 dt 3 lc rgb '#888888' title 'verification / target step (right axis)', \
     mk using 1:2 with points pt 7 ps 1.2 lc rgb '#222222' notitle, \
     mk using 1:2:3 with labels left offset 0.8,0.6 font ',10' notitle
