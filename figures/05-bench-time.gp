# serve --simulate's replay of one benchmark: LLaMA-3.1-8B-Instruct bf16 on
# one H100 under TensorRT-LLM, 64 requests in flight, 640 sent, prompts of
# 1024 and outputs of 512 tokens.  Each point is one request: when it was
# sent and its TTFT; orange the start-up burst (the first 64), blue the rest.
# Dashed: the closed form's burst and steady-state means.  Data:
# 05-bench-time.tsv (code/ch05/bench_ttft.c).
d = datadir.'/05-bench-time.tsv'
set datafile separator tab
c1 = '#1f5fa8'; c2 = '#e67e22'
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set logscale y
set xlabel 'Time the request was sent (s)'
set ylabel 'Time to first token (ms)'
set key top right

# On a phone (narrow=1, the Makefile's narrow drawing): the key under the plot, off the data;
# narrow_height is the canvas height that leaves the plot its room (the
# Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 440
if (narrow) { set key below left Left reverse samplen 2 nobox noopaque maxcols 1 font ',9' }
plot d using 1:($3 == 1 ? $2 * 1000 : 1/0) with points pt 7 ps 0.6 lc rgb c2 title 'start-up burst', \
     d using 1:($3 == 0 ? $2 * 1000 : 1/0) with points pt 7 ps 0.4 lc rgb c1 title 'the rest', \
     d using 1:($4 * 1000) with lines dt 2 lw 2 lc rgb c2 title 'closed form, burst mean', \
     d using 1:($5 * 1000) with lines dt 2 lw 2 lc rgb c1 title 'closed form, steady mean'
