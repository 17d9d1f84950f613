#!/bin/sh
# The untouched fill-in kits must build and run, and their tests must report
# failures (the TODO bodies are wrong on purpose) without any crash.
status=0
for t in "$@"; do
    out=$("$t" --jobs=1 2>&1)
    rc=$?
    synth=$(printf '%s\n' "$out" | grep 'Synthesis:' | tail -n 1)
    crashing=$(printf '%s\n' "$synth" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    failing=$(printf '%s\n' "$synth" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    if [ "$rc" -ne 0 ] && [ "${crashing:-1}" = 0 ] && [ "${failing:-0}" -gt 0 ]; then
        echo "kit $t: $failing failing, 0 crashing, as expected for an untouched kit"
    else
        echo "kit $t: expected failures and no crash, got rc=$rc: $synth" >&2
        printf '%s\n' "$out" | tail -n 20 >&2
        status=1
    fi
done
exit $status
