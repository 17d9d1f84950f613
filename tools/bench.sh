#!/bin/sh
# Performance figures of the build and the tools, each against its target:
#   tools/bench.sh BUILD_DIR [bench binaries...]
# prints "name<TAB>value<TAB>target<TAB>verdict" lines, the verdict "met" or
# "MISSED" for a target "< N", "<= N", "> N" or ">= N" and "-" for a figure
# without one, then a summary line.  The exit status is 0 either way: a
# missed target is news, not a broken build.  BENCH_FULL=1 also times a
# clean build of the book in a scratch directory (slow).
#
# The make test figures: by default a bounded proxy, the unit suites on the
# built tree at -j1 and at -j2 (every suite, nothing compiled).  BENCH_TEST=1
# runs the real thing instead: make test in a fresh clone of the committed
# HEAD at -j1, then in another at -j2 (tens of minutes), each against the
# recorded baseline (tools/bench-baseline.tsv: make test at the commit before
# the speed work, on this machine).  Times are CPU seconds (user + sys of
# every process make waited for) beside wall seconds: on a shared machine
# the CPU seconds are the stable measure, so the ratios use them.
set -eu

B=${1:?usage: tools/bench.sh BUILD_DIR [bench binaries...]}
shift
MAKE=${MAKE:-make}

now() { date +%s.%N; }
# seconds between two `now` stamps, to the millisecond
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
verdicts=$(mktemp)
cpulog=$(mktemp)
trap 'rm -f "$verdicts" "$cpulog"' EXIT
# timed LOG CMD...: run CMD (its output to LOG); sets wall_s, cpu_s (user +
# sys of every process waited for, from the shell's `times`) and rc.
timed() {
    log=$1; shift
    t0=$(now)
    r=$( { set +e; "$@" > "$log" 2>&1; rc=$?; times; echo "rc $rc"; } )
    t1=$(now)
    wall_s=$(elapsed "$t0" "$t1")
    cpu_s=$(printf '%s\n' "$r" | awk '
        function secs(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
        NR == 2 { printf "%.1f", secs($1) + secs($2) }')
    rc=$(printf '%s\n' "$r" | sed -n 's/^rc //p')
}
# baseline NAME: the recorded value of NAME (tools/bench-baseline.tsv), or "".
baseline() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' tools/bench-baseline.tsv 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
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

# `make` (the book and every chapter page) with nothing to do.
$MAKE --no-print-directory B="$B" all >/dev/null 2>&1 || { echo "bench: make failed" >&2; exit 1; }
t0=$(now)
$MAKE --no-print-directory B="$B" all >/dev/null 2>&1
t1=$(now)
report "noop_make_s" "$(elapsed "$t0" "$t1")" "< 0.5"

# A prose edit of one chapter (its time stamp is all make sees): what make
# rebuilds must be that chapter's expansion and page and the book, nothing
# else; the files it wrote under B are listed.
chapter=$(ls chapters/[0-9][0-9]-*.md 2>/dev/null | head -n 1 || true)
if [ -n "$chapter" ]; then
    num=$(basename "$chapter" | cut -c1-2)
    stem=$(basename "$chapter")
    stamp="$B/.bench-stamp"
    touch "$stamp"
    sleep 1   # a coarse file system's time stamps must tell the stamp from the edit
    touch "$chapter"
    t0=$(now)
    $MAKE --no-print-directory B="$B" all >/dev/null 2>&1
    t1=$(now)
    report "touch_one_chapter_rebuild_s" "$(elapsed "$t0" "$t1")" "< 10"
    rebuilt=$(cd "$B" && find . -type f -newer .bench-stamp ! -path './cells/*' ! -path './nav/*' | sed 's|^\./||' | sort | tr '\n' ' ')
    rm -f "$stamp"
    other=$(for f in $rebuilt; do case "$f" in
        "md/chapters/$stem"|"chapter-$num.html"|book.html|book-instructor.html|book-practice.html) ;;
        *) echo "$f" ;; esac; done)
    verdict=met
    [ -z "$other" ] || verdict=MISSED
    printf 'touch_one_chapter_rebuilt\t%s\tchapter %s and the book\t%s\n' "${rebuilt:-nothing}" "$num" "$verdict"
    printf 'touch_one_chapter_rebuilt\t%s\n' "$verdict" >> "$verdicts"
else
    report "touch_one_chapter_rebuild_s" "n/a (no chapter)" "< 10"
fi

# make test: -j2 must beat -j1, and the whole run must take at most half the
# baseline's CPU seconds (see the header: BENCH_TEST=1 for the full runs).
base_cpu=$(baseline make_test_j1_cpu_s)
if [ "${BENCH_TEST:-0}" = 1 ]; then
    for j in 1 2; do
        scratch=$(mktemp -d)
        git clone -q . "$scratch/src"
        timed "$scratch/make-test.log" sh -c "cd '$scratch/src' && $MAKE --no-print-directory -j$j test"
        [ "$rc" = 0 ] || { echo "bench: make -j$j test failed (rc $rc); its log:" >&2; tail -n 30 "$scratch/make-test.log" >&2; }
        report "make_test_j${j}_wall_s" "$wall_s" "-"
        report "make_test_j${j}_cpu_s" "$cpu_s" "-"
        eval "wall_j$j=\$wall_s; cpu_j$j=\$cpu_s"
        rm -rf "$scratch"
    done
    report "make_test_j1_cpu_over_baseline" "$(ratio "$cpu_j1" "$base_cpu")" "<= 0.5"
    report "make_test_j2_over_j1_wall" "$(ratio "$wall_j2" "$wall_j1")" "< 1"
else
    # The proxy: every unit suite on the built tree, -j1 then -j2.
    $MAKE --no-print-directory B="$B" unit-tests-built >/dev/null 2>&1 || echo "bench: building the unit suites failed" >&2
    for j in 1 2; do
        timed "$cpulog" $MAKE --no-print-directory -j$j B="$B" unit-tests
        [ "$rc" = 0 ] || { echo "bench: make -j$j unit-tests failed (rc $rc); its log:" >&2; tail -n 30 "$cpulog" >&2; }
        report "proxy_unit_tests_j${j}_wall_s" "$wall_s" "-"
        report "proxy_unit_tests_j${j}_cpu_s" "$cpu_s" "-"
        eval "wall_j$j=\$wall_s"
    done
    report "proxy_unit_tests_j2_over_j1_wall" "$(ratio "$wall_j2" "$wall_j1")" "< 1"
    echo "bench: make test itself: BENCH_TEST=1 make bench (fresh clones, -j1 and -j2; baseline ${base_cpu:-?} CPU s)"
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
