#!/bin/sh
# run_bounded.sh SECONDS COMMAND [ARG...]
#
# Run COMMAND so that nothing it starts can outlive it or hang the build.
# coreutils timeout puts COMMAND in a process group of its own; past SECONDS
# the whole group gets TERM, and KILL NB_KILL_AFTER seconds later (default 5)
# for anything that ignores TERM.  When COMMAND ends, on time or not, whatever
# it left running in that group (a forked child) is killed.  Exit status:
# COMMAND's, 124 when it timed out, 137 when it had to be killed.
set -u
limit=$1
shift
timeout -k "${NB_KILL_AFTER:-5}" "$limit" "$@" &
pid=$!
wait "$pid"
rc=$?
kill -KILL "-$pid" 2>/dev/null
exit "$rc"
