# Roofline of one H100 SXM in bf16, with each op of one LLaMA-3-70B decode
# step (4 x H100, batch 64, 4k context) placed at its arithmetic intensity.
# Data: 01-roof.tsv, 01-ridge.tsv, 01-step-ops.tsv, 01-step-whole.tsv
# (written by code/ch01/step_ops.c).
roof  = datadir.'/01-roof.tsv'
ridge = datadir.'/01-ridge.tsv'
ops   = datadir.'/01-step-ops.tsv'
whole = datadir.'/01-step-whole.tsv'

set datafile separator tab
stats ridge using 1 nooutput
r_x = STATS_min
stats ridge using 2 nooutput
r_peak = STATS_min

set logscale xy
set xrange [0.1:3000]
set yrange [0.1:5000]
set format x '%g'
set format y '%g'
set xlabel 'Arithmetic intensity (FLOP per byte)'
set ylabel 'Attainable TFLOP/s (bf16, one GPU)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1
set border 3 lc rgb '#555555'
set tics nomirror
set key top left Left reverse samplen 2 box lc rgb '#bbbbbb' opaque

set arrow 1 from r_x, 0.1 to r_x, r_peak nohead dt 2 lw 1.2 lc rgb '#888888'
set label 1 sprintf('ridge %.0f FLOP/B', r_x) at r_x*1.12, 0.25 left tc rgb '#555555'

# Kinds of op, told apart by name.
is_proj(s) = strstrt(s, '_proj') > 0 || s eq 'logits'
is_attn(s) = strstrt(s, 'attn_score') > 0 || strstrt(s, 'attn_value') > 0
is_norm(s) = strstrt(s, 'norm') > 0
is_elem(s) = strstrt(s, 'residual') > 0 || s eq 'act_mul'

set label 2 "weight projections\n(qkv, o, gate-up,\ndown, logits)" at 75, 40 left tc rgb '#1f5fa8'
set label 3 'attention over the KV cache' at 6.5, 40 right tc rgb '#c0392b'
set label 4 'norms' at 1.35, 3.3 left tc rgb '#6b8e23'
set label 5 'SiLU·up' at 1.05, 1.9 left tc rgb '#8e44ad'
set label 6 'residual adds' at 0.2, 0.3 left tc rgb '#8e44ad'
# On a phone (narrow=1): the key under the plot in two lines, the labels
# placed and broken for a 360 px canvas.
if (!exists('narrow')) narrow = 0
if (narrow) {
    set key below Left reverse samplen 2 nobox maxrows 2
    set label 1 sprintf("ridge\n%.0f", r_x) at r_x*1.12, 2 left
    set label 2 "weight\nprojections" at 60, 12 left
    set label 3 "attention\nover the\nKV cache" at 2.5, 60 right
}
roof_title = narrow ? sprintf('H100 roof: %.0f TFLOP/s, %.2f TB/s', r_peak, r_peak / r_x) \
                    : sprintf('H100 SXM roof: min(%.1f TFLOP/s, %.2f TB/s × intensity)', r_peak, r_peak / r_x)
set arrow 2 from 80, 55 to 64, 180 head size 6,20 lc rgb '#1f5fa8'

plot roof using 1:2 with lines lw 3 lc rgb '#222222' title roof_title, \
     ops using 2:(is_proj(strcol(1)) ? $3 : NaN) with points pt 7 ps 1.4 lc rgb '#1f5fa8' notitle, \
     ops using 2:(is_attn(strcol(1)) ? $3 : NaN) with points pt 9 ps 1.6 lc rgb '#c0392b' notitle, \
     ops using 2:(is_norm(strcol(1)) ? $3 : NaN) with points pt 5 ps 1.2 lc rgb '#6b8e23' notitle, \
     ops using 2:(is_elem(strcol(1)) ? $3 : NaN) with points pt 13 ps 1.4 lc rgb '#8e44ad' notitle, \
     whole using 1:2 with points pt 6 ps 2.6 lw 2 lc rgb '#e67e22' title 'whole step'
