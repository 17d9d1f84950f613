# A simulated regression: rounds of gamma 4 drafts with acceptance rate 0.8,
# dropping to 0.6 at round 2000.  Top: the acceptance rate estimated over the
# last 200 rounds.  Bottom: the CUSUM statistic designed for 0.8 -> 0.6 with
# a false alarm at most once per 1e8 rounds, and its threshold.
# Data: 11-detector.tsv (code/ch11/detector.c).
dt = datadir.'/11-detector.tsv'
set datafile separator tab
# On a phone (narrow=1) the left margin holds the y labels' ticks and text.
if (!exists('narrow')) narrow = 0
if (narrow) {
    set multiplot layout 2,1 margins 0.2, 0.95, 0.08, 0.97 spacing 0, 0.06
} else {
    set multiplot layout 2,1 margins 0.10, 0.97, 0.12, 0.96 spacing 0, 0.06
}
set xrange [1200:2400]
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set arrow 1 from 2000, graph 0 to 2000, graph 1 nohead dt 2 lw 1.5 lc rgb '#c0392b'
set format x ''
set ylabel 'alpha (200-round window)'
set yrange [0.5:0.9]
set ytics 0.1
plot dt using 1:5 with lines lw 2 lc rgb '#1f5fa8' notitle
set format x '%g'
set xlabel 'Round'
set ylabel 'CUSUM statistic (nats)'
set yrange [0:22]
set ytics 5
set label 1 'alpha drops 0.8 -> 0.6' at 1990, 12 right tc rgb '#c0392b' font ',10'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
plot dt using 1:4 with lines lw 1.5 dt 2 lc rgb '#555555' title 'threshold h', \
     dt using 1:3 with lines lw 2 lc rgb '#e67e22' title 'CUSUM'
unset multiplot
