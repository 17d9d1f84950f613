#!/bin/sh
# run_bounded.sh SECONDS COMMAND [ARG...]
#
# Run COMMAND so that nothing it starts can outlive it or hang the build.
# Where the build has made tools/nb_contain.c ($NB_CONTAIN, exported by the
# Makefile), that does it: a child subreaper that kills every descendant
# when COMMAND ends, setsid() or double fork notwithstanding, TERM then KILL
# past SECONDS, COMMAND's output capped at NB_OUTPUT_MAX bytes (exit 123
# past it) and every file it writes at NB_FILE_MAX bytes (default 64 MiB;
# exit 122 when that stops it).  Without it: ulimit -f caps the files all
# the same (a write past the cap kills the writer with SIGXFSZ), and
# coreutils timeout puts COMMAND in a process group of
# its own; past SECONDS the whole group gets TERM, and KILL NB_KILL_AFTER
# seconds later (default 5) for anything that ignores TERM.  When COMMAND
# ends, on time or not, whatever it left running in that group is killed
# (a process that left the group is not found).  Exit status: COMMAND's,
# 124 when it timed out, 137 when it had to be killed.
set -u
limit=$1
shift
if [ -n "${NB_CONTAIN:-}" ] && [ -x "$NB_CONTAIN" ]; then
    exec "$NB_CONTAIN" "$limit" "$@"
fi
file_max=${NB_FILE_MAX:-67108864}
case $file_max in '' | *[!0-9]*) file_max=67108864 ;; esac
ulimit -f $((file_max / 512)) # blocks of 512 bytes, as POSIX sh counts them
timeout -k "${NB_KILL_AFTER:-5}" "$limit" "$@" &
pid=$!
wait "$pid"
rc=$?
kill -KILL "-$pid" 2>/dev/null
exit "$rc"
