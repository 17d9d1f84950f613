# The two capacity numbers against images per request for Qwen2.5-VL-7B on
# one H100 SXM, bf16, 1080p images, 200 text and 256 output tokens, a
# prefill budget of 8192 tokens per step, TTFT target 2 s, encoder and LM at
# the calibrated efficiencies: concurrent sequences the KV cache holds, and
# requests per second the prefill budget admits (0, off the log axis, once
# not one request meets the target).  Data: 07-capacity.tsv (code/ch07/images.c).
cp = datadir.'/07-capacity.tsv'
set datafile separator tab
set logscale y 10
set xrange [-0.3:12.3]
set yrange [0.3:5000]
set xtics 1 nomirror
set ytics ('0.3' 0.3, '1' 1, '3' 3, '10' 10, '30' 30, '100' 100, '300' 300, '1000' 1000, '3000' 3000) nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Images per request (0 = text only)'
set ylabel 'Sequences, or requests per second'
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot cp using 1:3 with linespoints lw 2.5 pt 7 lc rgb '#1f5fa8' title 'concurrent sequences (KV memory)', \
     cp using 1:($4 > 0 ? $4 : 1/0) with linespoints lw 2.5 pt 5 lc rgb '#c0392b' title 'requests/s within the prefill budget', \
     cp using 1:($6 > 0 ? $6 : 1/0) with linespoints lw 1.5 dt 2 pt 6 lc rgb '#888888' title 'sequences in flight at that rate'
