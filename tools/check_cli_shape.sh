#!/bin/sh
# The napkin command's functions stay short enough to read top to bottom:
# run by make test.
#
#   tools/check_cli_shape.sh [DIR...]      (default: code/cli)
#
# A function is counted from the line of its signature (the line at the
# left margin where its declaration starts) to its closing brace, both
# included; one longer than CLI_FUNCTION_MAX lines (default 120) is printed
# as file:line: name is N lines (limit L), and the exit status is 1 if any.
# The project's layout is assumed: a definition's signature starts at the
# left margin and its closing brace stands alone there ("}"); its opening
# brace is alone at the margin too, or ends the signature's last line.
set -eu
limit=${CLI_FUNCTION_MAX:-120}
[ $# -gt 0 ] || set -- code/cli

fail=0
for dir in "$@"; do
    if [ ! -d "$dir" ]; then
        echo "check_cli_shape: $dir is not a directory" >&2
        exit 2
    fi
    for f in "$dir"/*.c; do
        [ -e "$f" ] || continue
        awk -v limit="$limit" -v file="$f" '
            # a line at the left margin that can begin a declaration
            /^[A-Za-z_]/ && !infn { start = NR; sig = $0 }
            # the opening brace: alone at the margin, or ending a signature
            (/^\{[ \t]*$/ || (/^[A-Za-z_].*\)[ \t]*\{[ \t]*$/)) && !infn && start {
                infn = 1
                next
            }
            /^\}[ \t]*$/ && infn {
                n = NR - start + 1
                if (n > limit) {
                    name = sig
                    sub(/\(.*/, "", name)
                    sub(/.*[ \t*]/, "", name)
                    printf "%s:%d: %s is %d lines (limit %d)\n", file, start, name, n, limit
                    bad = 1
                }
                infn = 0
                start = 0
            }
            END { exit bad }
        ' "$f" || fail=1
    done
done
exit $fail
