# Fixture: a gnuplot file with a snippet behind a shell-style comment.
# //> axes
set xlabel "batch"
set ylabel "tokens/s"
# //< axes
