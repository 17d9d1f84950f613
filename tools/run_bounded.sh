#!/bin/sh
# run_bounded.sh SECONDS COMMAND [ARG...]
#
# Run COMMAND so that nothing it starts can outlive it or hang the build.
# Where the build has made tools/nb_contain.c ($NB_CONTAIN, exported by the
# Makefile), that does it: a child subreaper that kills every descendant
# when COMMAND ends, setsid() or double fork notwithstanding, TERM then KILL
# past SECONDS, and COMMAND's output capped at NB_OUTPUT_MAX bytes (exit 123
# past it).  Without it: coreutils timeout puts COMMAND in a process group of
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
timeout -k "${NB_KILL_AFTER:-5}" "$limit" "$@" &
pid=$!
wait "$pid"
rc=$?
kill -KILL "-$pid" 2>/dev/null
exit "$rc"
