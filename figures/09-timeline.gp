# A run of the job queue (code/napkin/runtime/jobqueue.c): two workers, 4 ms sleeps
# standing in for denoising steps, an admission bound of 0.15 s of predicted
# wait, job 3 cancelled after its tenth step.  Thin grey: queued; thick bars:
# steps run; a cross: the finish the ETA promised at submit.  Measured on the
# build machine.  Data: 09-timeline.tsv, 09-steps.tsv (code/ch09/timeline.c).
t = datadir.'/09-timeline.tsv'
s = datadir.'/09-steps.tsv'
set datafile separator tab
set grid xtics lc rgb '#e4e4e4'
set border 3 lc rgb '#555555'
set tics nomirror
set xlabel 'Seconds since the first submit'
set ylabel 'Job'
stats t using 1 nooutput
set yrange [STATS_max + 0.7:0.3]
set ytics 1
set key top right Left reverse samplen 2 box lc rgb '#bbbbbb' opaque
# On a phone (narrow=1, the Makefile's narrow drawing): the key under the
# plot, off the data; narrow_height is the canvas height that leaves the
# plot its room (the Makefile reads it).
if (!exists('narrow')) narrow = 0
narrow_height = 366
if (narrow) { set key below Left reverse samplen 2 nobox noopaque maxcols 1 }
plot t using 2:1:($3-$2):(0) with vectors nohead lw 2 lc rgb '#bbbbbb' title 'queued', \
     s using 2:1:($3-$2):(0) with vectors nohead lw 9 lc rgb '#1f5fa8' title 'a step', \
     t using 6:1 with points pt 2 ps 1.4 lw 2 lc rgb '#c0392b' title 'ETA given at submit'
