# LLaMA-3.1-8B-Instruct bf16 on one H100 under TensorRT-LLM, prompts of 1024
# and outputs of 512 tokens: the benchmark's TTFT against the requests in
# flight.  Points: NVIDIA's measured runs (filled: held out from the overhead
# fit; open: fitted on) and serve --simulate's mean; lines: the closed form
# (calibrated, the engine's budget and overhead), the same with the clock
# started when a request is made ready (one departure interval more), and
# the prefill alone.  Data: 05-bench-runs.tsv, 05-bench-curve.tsv
# (code/ch05/bench_ttft.c).
r = datadir.'/05-bench-runs.tsv'
c = datadir.'/05-bench-curve.tsv'
set datafile separator tab
c1 = '#1f5fa8'; c2 = '#e67e22'; c3 = '#2a9d3a'; c4 = '#888888'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set logscale xy 2
set xrange [1:160]
set yrange [10:2000]
set xtics (1, 2, 4, 8, 16, 32, 64, 128)
set ytics (10, 20, 50, 100, 200, 500, 1000, 2000)
set xlabel 'Requests in flight'
set ylabel 'Time to first token (ms)'
set key at graph 0.99, graph 0.5 right

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 480
if (narrow) { set key below left Left reverse samplen 2 nobox noopaque maxcols 1 font ',9' }
plot c using 1:($2 * 1000) with lines lw 2 lc rgb c1 title 'closed form (estimate)', \
     c using 1:($3 * 1000) with lines lw 2 dt 2 lc rgb c2 title 'closed form, clock from the departure', \
     c using 1:($4 * 1000) with lines lw 1 lc rgb c4 title 'prefill alone', \
     r using 1:($3 == 1 ? $2 * 1000 : 1/0) with points pt 7 ps 1.3 lc rgb '#000000' title 'measured, held out', \
     r using 1:($3 == 0 ? $2 * 1000 : 1/0) with points pt 6 ps 1.3 lc rgb '#000000' title 'measured, fitted on', \
     r using 1:($6 * 1000) with points pt 2 ps 1.5 lw 2 lc rgb c3 title 'serve --simulate, mean'
