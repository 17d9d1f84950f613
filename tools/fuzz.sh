#!/bin/sh
# fuzz.sh BUILD_DIR SECONDS FUZZER...
#
# Run each libFuzzer target for SECONDS over a corpus seeded from the
# project's own tables (code/specs, tests/specs), the target's own seeds
# (tests/fuzz/seeds/TARGET/), and every regression input
# under tests/fuzz/regressions/ (inputs that once crashed; they are replayed
# first, so a regression fails at once).  New crashing inputs land in
# BUILD_DIR/fuzz/artifacts/.  Prints each target's executions and time.
set -u
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
        if ! "$bin" tests/fuzz/regressions/* > "$build/fuzz/$name.regressions.log" 2>&1; then
            echo "fuzz: $name: a regression input fails again (see $build/fuzz/$name.regressions.log)"
            status=1
            continue
        fi
    fi
    log="$build/fuzz/$name.log"
    if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
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
