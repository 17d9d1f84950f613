#!/bin/sh
# Performance figures of the build and the tools, each against its target:
#   tools/bench.sh BUILD_DIR [bench binaries...]
# prints "name<TAB>value<TAB>target<TAB>verdict" lines, the verdict "met" or
# "MISSED" for a target "< N", "<= N", "> N" or ">= N" and "-" for a figure
# without one, then a summary line.  The exit status is 0 either way: a
# missed target is news, not a broken build.  BENCH_FULL=1 also times a
# clean build of the book in a scratch directory (slow).
set -eu

B=${1:?usage: tools/bench.sh BUILD_DIR [bench binaries...]}
shift
MAKE=${MAKE:-make}

now() { date +%s.%N; }
# seconds between two `now` stamps, to the millisecond
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
verdicts=$(mktemp)
trap 'rm -f "$verdicts"' EXIT
# judge: "name value target..." lines in, the same with a verdict out; each
# judged line is also noted in $verdicts for the summary.
judge() {
    awk -F'\t' -v OFS='\t' -v vlog="$verdicts" '
        NF < 3 { print; next }
        {
            v = "-"
            if (match($3, /^(<=|>=|<|>) *[0-9.eE+-]+/) && $2 ~ /^-?[0-9.eE+-]+$/) {
                t = substr($3, RSTART, RLENGTH); op = t; sub(/ *[0-9.eE+-]+$/, "", op)
                n = t; sub(/^(<=|>=|<|>) */, "", n); n += 0; x = $2 + 0
                ok = (op == "<" && x < n) || (op == "<=" && x <= n) || (op == ">" && x > n) || (op == ">=" && x >= n)
                v = ok ? "met" : "MISSED"
                print $1, v >> vlog
            }
            print $1, $2, $3, v
        }'
}
report() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" | judge; }

printf 'name\tvalue\ttarget\tverdict\n'

if [ "${BENCH_FULL:-0}" = 1 ]; then
    scratch=$(mktemp -d)
    t0=$(now)
    $MAKE --no-print-directory B="$scratch" book >/dev/null 2>&1 || echo "bench: clean build failed" >&2
    t1=$(now)
    report "clean_book_build_s" "$(elapsed "$t0" "$t1")" "-"
    rm -rf "$scratch"
fi

# One read of the Makefile and nothing else (make help): what every make and
# every recursive $(MAKE) of make test pays before it starts.  Shell probes at
# parse time (a head | grep per test, a compiler probe) once made it seconds.
t0=$(now)
$MAKE --no-print-directory B="$B" help >/dev/null 2>&1
t1=$(now)
report "makefile_parse_s" "$(elapsed "$t0" "$t1")" "< 0.5"

# The book must exist for the incremental figures to mean anything.
$MAKE --no-print-directory B="$B" book >/dev/null 2>&1 || { echo "bench: make book failed" >&2; exit 1; }

t0=$(now)
$MAKE --no-print-directory B="$B" book >/dev/null 2>&1
t1=$(now)
report "noop_make_book_s" "$(elapsed "$t0" "$t1")" "< 0.5"

chapter=$(ls chapters/[0-9][0-9]-*.md 2>/dev/null | head -n 1 || true)
if [ -n "$chapter" ]; then
    touch "$chapter"
    t0=$(now)
    $MAKE --no-print-directory B="$B" book >/dev/null 2>&1
    t1=$(now)
    report "touch_one_chapter_rebuild_s" "$(elapsed "$t0" "$t1")" "< 10"
else
    report "touch_one_chapter_rebuild_s" "n/a (no chapter)" "< 10"
fi

napkin="$B/bin/napkin"
if [ -x "$napkin" ]; then
    runs=100
    t0=$(now)
    i=0
    while [ $i -lt $runs ]; do
        "$napkin" decode --model llama3-70b --gpu h100 --tp 4 --batch 64 --context 4096 >/dev/null
        i=$((i + 1))
    done
    t1=$(now)
    report "napkin_decode_ms" "$(awk -v a="$t0" -v b="$t1" -v n=$runs 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')" "< 10"
else
    report "napkin_decode_ms" "n/a ($napkin not built)" "< 10"
fi

# The slowest accepted inputs found so far (a linear break-even scan once took
# 17 minutes at --batch-max 2147483647): each must answer within 100 ms.
if [ -x "$napkin" ]; then
    worst=0
    for args in "spec --batch-max 2147483647" \
                "spec --batch-max 2147483647 --context 1 --c 0.1" \
                "spec --alpha 0.99 --gamma 64 --batch-max 2147483647 --context 1 --model llama3.2-1b --tp 1 --draft llama3.2-1b" \
                "decode --model llama3-405b --gpu b200 --tp 8 --batch 1000 --context 1" \
                "specs"; do
        t0=$(now)
        # shellcheck disable=SC2086
        "$napkin" $args >/dev/null 2>&1 || true
        t1=$(now)
        worst=$(awk -v a="$t0" -v b="$t1" -v w="$worst" 'BEGIN { t = (b - a) * 1000; printf "%.2f", (t > w ? t : w) }')
    done
    report "napkin_worst_case_ms" "$worst" "< 100"
fi

for bench in "$@"; do
    echo "== $bench"
    { "$bench" || echo "bench: $bench exited with status $?" >&2; } | judge
done

met=$(grep -c '	met$' "$verdicts" || true)
missed=$(grep '	MISSED$' "$verdicts" | cut -f1 | tr '\n' ' ' || true)
if [ -n "$missed" ]; then
    echo "bench: $met targets met; missed: $missed"
else
    echo "bench: all $met targets met"
fi
