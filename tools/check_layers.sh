#!/bin/sh
# The library's floors hold (ARCHITECTURE.md): run by make test.
#
#   tools/check_layers.sh [ROOT]      (ROOT: the repository, default .)
#
# 1. Every source of code/napkin/ lives in a floor named below, and includes
#    headers of its own floor and of the floors below it only; nothing there
#    includes code/practice/.  A header is named alone (#include "x.h"), so
#    its floor is the folder that holds x.h.  A header whose name ends in
#    _internal.h is its floor's own parts (price/pricing_internal.h): no
#    other floor includes it, so the door stays the one way in.
# 2. Only price/ turns bytes or FLOPs into seconds: outside it, no division
#    by a bandwidth or a FLOP rate (a name, or a function called, ending in
#    _bw, bandwidth, peak or flops), comments and strings aside.  Every other module
#    asks price/ (price_op, or a roofline term of roofline.h) for a time.
#    The one exception is a quotient that is not a time at all but a share,
#    a rate over a rate of the same kind (a measured bandwidth over the
#    datasheet's, achieved FLOPs over the peak): its line carries the
#    comment  /* a share, not a time */  exactly, which a reviewer checks
#    against the units.  Nothing else silences the rule.
# Each breach is printed as file:line: reason; the exit status is 1 if any.
set -eu
export LC_ALL=C # the files in one order everywhere, so the report is the same
root=${1:-.}
cd "$root"

# floor: the floors it may include besides its own (lower floors only)
allowed() {
    case $1 in
    core) echo "" ;;
    specs) echo "core" ;;
    ref) echo "core" ;;
    price) echo "core specs ref" ;;
    model) echo "core specs ref price" ;;
    serving) echo "core specs ref price model" ;;
    workloads) echo "core specs ref price model" ;;
    calib) echo "core specs ref price model serving workloads" ;;
    runtime) echo "core" ;;
    *) echo "?" ;;
    esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# header name -> floor (code/practice/ is the floor "practice")
for h in code/napkin/*/*.h code/practice/*.h; do
    [ -e "$h" ] || continue
    d=${h%/*}
    printf '%s %s\n' "${h##*/}" "${d##*/}"
done > "$tmp/headers"

fail=0
for f in code/napkin/*; do
    [ -f "$f" ] || continue
    case ${f##*/} in README.md) continue ;; esac
    echo "$f:1: a file directly in code/napkin/: put it in the floor of its concept (ARCHITECTURE.md)"
    fail=1
done

for f in code/napkin/*/*.c code/napkin/*/*.h; do
    [ -e "$f" ] || continue
    d=${f%/*}
    floor=${d##*/}
    ok=$(allowed "$floor")
    if [ "$ok" = "?" ]; then
        echo "$f:1: floor '$floor' is not in tools/check_layers.sh's table: name the floors it may include there"
        fail=1
        continue
    fi
    # #include "x.h" lines: line number and header
    out=$(awk -v file="$f" -v floor="$floor" -v ok=" $ok " -v headers="$tmp/headers" '
        BEGIN {
            while ((getline l < headers) > 0) { split(l, p, " "); home[p[1]] = p[2] }
            below = ok; gsub(/^ +| +$/, "", below); if (below == "") below = "nothing else"
        }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            h = $0; sub(/^[^"]*"/, "", h); sub(/".*$/, "", h)
            if (!(h in home)) { printf "%s:%d: includes \"%s\", which is in no floor of code/napkin\n", file, FNR, h; next }
            to = home[h]
            if (to == floor) next
            if (h ~ /_internal\.h$/) { printf "%s:%d: includes \"%s\", the own parts of %s/: ask its door instead\n", file, FNR, h, to; next }
            if (to == "practice") { printf "%s:%d: includes \"%s\" from code/practice/: the library never includes the exercises\n", file, FNR, h; next }
            if (index(ok, " " to " ") == 0)
                printf "%s:%d: %s/ includes \"%s\" from %s/, which is not below it (%s/ may include: %s)\n", file, FNR, floor, h, to, floor, below
        }' "$f")
    if [ -n "$out" ]; then
        echo "$out"
        fail=1
    fi
done

# Divisions by a bandwidth or a FLOP rate outside price/.  Comments and
# string literals are blanked first, so a formula written in a comment is
# not a division.
for f in code/napkin/*/*.c code/napkin/*/*.h; do
    [ -e "$f" ] || continue
    case $f in code/napkin/price/*) continue ;; esac
    out=$(awk -v file="$f" '
        {
            line = $0; out = ""; i = 1; n = length(line)
            while (i <= n) {
                c = substr(line, i, 1); two = substr(line, i, 2)
                if (incomment) { if (two == "*/") { incomment = 0; i += 2 } else i++; continue }
                if (two == "/*") { incomment = 1; i += 2; continue }
                if (two == "//") break
                if (c == "\"" || c == "\047") {   # a string or character literal
                    q = c; i++
                    while (i <= n && substr(line, i, 1) != q) { if (substr(line, i, 1) == "\\") i++; i++ }
                    i++; out = out q q; continue
                }
                out = out c; i++
            }
            if (index($0, "/* a share, not a time */") == 0 && out ~ /\/[ \t]*\(?[ \t]*([A-Za-z_][A-Za-z0-9_]*(->|\.))*[A-Za-z0-9_]*(_bw|bandwidth[0-9]*|peak|flops)([^A-Za-z0-9_]|$)/)
                printf "%s:%d: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the time\n", file, FNR
        }' "$f")
    if [ -n "$out" ]; then
        echo "$out"
        fail=1
    fi
done

if [ "$fail" -ne 0 ]; then
    echo "check_layers: the floors do not hold (see ARCHITECTURE.md)" >&2
    exit 1
fi
echo "check_layers: $(ls code/napkin/*/*.c | wc -l | tr -d ' ') sources in $(ls -d code/napkin/*/ | wc -l | tr -d ' ') floors hold"
