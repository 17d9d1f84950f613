# LLaMA-3-8B bf16 on one H100 (published read and GEMM ceilings), requests of 512
# prompt and 256 output tokens, Poisson arrivals, batches run to completion.
# Left: one request at a time, simulated (points) against M/D/1 (line).
# Right: batches of up to 64, with KV caps of 32 and 16 sequences and with a
# 0.5 s window.  Dashed verticals mark each configuration's capacity (the
# saturation point).  Data: 05-latency-load.tsv, 05-capacity.tsv
# (code/ch05/latency_load.c).
d = datadir.'/05-latency-load.tsv'
cap = datadir.'/05-capacity.tsv'
set datafile separator tab
stats cap using 2 every ::0::0 nooutput
mu1 = STATS_min
stats cap using 2 every ::1::1 nooutput
mu64 = STATS_min
stats cap using 2 every ::2::2 nooutput
mu32 = STATS_min
stats cap using 2 every ::3::3 nooutput
mu16 = STATS_min

c1 = '#1f5fa8'; c2 = '#e67e22'; c3 = '#c0392b'; c4 = '#27ae60'
# On a phone (narrow=1, the Makefile's narrow drawing) the panels stack.
if (!exists('narrow')) narrow = 0
if (narrow) {
    set multiplot layout 2,1 margins 0.2, 0.94, 0.08, 0.99 spacing 0, 0.1
} else {
    set multiplot layout 1,2 margins 0.08, 0.98, 0.13, 0.97 spacing 0.08, 0
}
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Arrival rate (requests/s)'

# Left: one at a time.
set ylabel 'Time in system (s)'
set xrange [0:0.8]
set yrange [0:30]
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
set arrow 1 from mu1, 0 to mu1, 30 nohead dt 2 lw 1.5 lc rgb '#555555'
set label 1 'capacity' at mu1, 28 right offset -0.5, 0 tc rgb '#555555'
plot d index 0 using 1:9 skip 2 with lines lw 2 lc rgb '#555555' title 'M/D/1 formula', \
     d index 0 using 1:3 skip 2 with points pt 7 ps 0.6 lc rgb c1 title 'simulated mean', \
     d index 0 using 1:4 skip 2 with lines lw 1.2 dt 2 lc rgb c1 title 'simulated p99'
unset arrow 1
unset label 1

# Right: batches.
set xrange [0:26]
set yrange [0:8]
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
set arrow 2 from mu64, 0 to mu64, 8 nohead dt 2 lw 1.2 lc rgb c1
set arrow 3 from mu32, 0 to mu32, 8 nohead dt 2 lw 1.2 lc rgb c2
set arrow 4 from mu16, 0 to mu16, 8 nohead dt 2 lw 1.2 lc rgb c3
unset ylabel
plot d index 1 using 1:3 skip 2 with linespoints pt 7 ps 0.5 lw 2 lc rgb c1 title 'up to 64 per batch', \
     d index 1 using 1:4 skip 2 with lines lw 1.2 dt 2 lc rgb c1 title '  its p99', \
     d index 2 using 1:3 skip 2 with linespoints pt 7 ps 0.5 lw 2 lc rgb c2 title 'KV cap 32', \
     d index 3 using 1:3 skip 2 with linespoints pt 7 ps 0.5 lw 2 lc rgb c3 title 'KV cap 16', \
     d index 4 using 1:3 skip 2 with linespoints pt 6 ps 0.5 lw 1.2 lc rgb c4 title 'up to 64, 0.5 s window'
unset multiplot
