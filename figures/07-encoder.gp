# Vision encoder against language-model prefill for one 16:9 image and 27
# text tokens on one H100 SXM, bf16: roofline times at peak (Qwen2-VL-7B's
# full-attention encoder, Qwen2.5-VL-7B's windowed one, and the shared 7B
# LM), and Qwen2.5-VL at the efficiencies one published measurement implies
# (vLLM issue #41267, the two points).  Data: 07-encoder.tsv, 07-measured.tsv
# (code/ch07/images.c).
en = datadir.'/07-encoder.tsv'
mk = datadir.'/07-measured.tsv'
set datafile separator tab
set logscale y 10
set xrange [224:4096]
set yrange [0.001:3]
set xtics 512 nomirror
set ytics ('1 ms' 0.001, '3 ms' 0.003, '10 ms' 0.01, '30 ms' 0.03, '100 ms' 0.1, '300 ms' 0.3, '1 s' 1, '3 s' 3) nomirror
set grid xtics ytics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set xlabel 'Image width (px), height = width x 9/16'
set ylabel 'Time for one image'
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque font ',10'
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 420
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
if (narrow) { set xtics 1024 }
plot en using 1:3 with lines lw 2 lc rgb '#1f5fa8' title 'Qwen2-VL encoder, peak', \
     en using 1:4 with lines lw 2 dt 2 lc rgb '#1f5fa8' title 'Qwen2.5-VL encoder, peak', \
     en using 1:5 with lines lw 2 lc rgb '#c0392b' title 'LM prefill, peak', \
     en using 1:6 with lines lw 2 dt 2 lc rgb '#27ae60' title 'Qwen2.5-VL encoder, calibrated', \
     en using 1:7 with lines lw 2 lc rgb '#27ae60' title 'LM prefill, calibrated', \
     mk using 1:2 with points pt 7 ps 1.3 lc rgb '#222222' title 'measured (vLLM #41267)', \
     mk using 1:3 with points pt 5 ps 1.3 lc rgb '#222222' notitle
