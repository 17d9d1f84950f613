#!/bin/sh
# fuzz.sh BUILD_DIR SECONDS FUZZER...
#
# Run each libFuzzer target for SECONDS over a corpus seeded from the
# project's own tables (code/specs, tests/specs), the target's own seeds
# (tests/fuzz/seeds/TARGET/), and every regression input
# under tests/fuzz/regressions/ (inputs that once crashed; they are replayed
# first, so a regression fails at once).  New crashing inputs land in
# BUILD_DIR/fuzz/artifacts/.  Prints each target's executions and time.
#
# A slow input is a finding too: every input has a budget of
# NAPKIN_FUZZ_INPUT_MS milliseconds of CPU (100 here), which a target checks
# itself around each run (tests/fuzz/fuzz_budget.h) and aborts past, so
# libFuzzer keeps the input as it keeps a crash.  libFuzzer's own -timeout
# counts whole seconds of wall clock, which a loaded machine spends on other
# work; it stays as the backstop for an input that never returns.  A
# target's extra libFuzzer flags (a larger -max_len) are in
# tests/fuzz/TARGET.flags.
set -u
export NAPKIN_FUZZ_INPUT_MS="${NAPKIN_FUZZ_INPUT_MS:-100}"
build=$1
seconds=$2
shift 2
status=0
for bin in "$@"; do
    name=$(basename "$bin")
    corpus="$build/fuzz/corpus-$name"
    artifacts="$build/fuzz/artifacts"
    mkdir -p "$corpus" "$artifacts"
    cp code/specs/*.tsv tests/specs/*.tsv "$corpus"/ 2>/dev/null
    # a target's own seeds (a valid journal for fuzz_journal), where it has some
    if [ -d "tests/fuzz/seeds/$name" ]; then cp "tests/fuzz/seeds/$name"/* "$corpus"/; fi
    if ls tests/fuzz/regressions/* >/dev/null 2>&1; then
        if ! "$bin" -timeout=10 tests/fuzz/regressions/* > "$build/fuzz/$name.regressions.log" 2>&1; then
            echo "fuzz: $name: a regression input fails again (see $build/fuzz/$name.regressions.log)"
            status=1
            continue
        fi
    fi
    log="$build/fuzz/$name.log"
    flags=
    if [ -f "tests/fuzz/$name.flags" ]; then flags=$(cat "tests/fuzz/$name.flags"); fi
    # shellcheck disable=SC2086 # the flags file holds words
    if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $flags \
        -artifact_prefix="$artifacts/$name-" "$corpus" > "$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        echo "fuzz: $name: ${runs:-?} inputs in ${seconds} s, no crash (corpus $(ls "$corpus" | wc -l) files)"
    else
        echo "fuzz: $name: CRASH; the input is under $artifacts/, the log is $log:"
        tail -n 30 "$log"
        status=1
    fi
done
exit $status
