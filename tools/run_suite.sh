#!/bin/sh
# Run each Criterion binary given; print everything; fail if any failed.
status=0
failed=""
for t in "$@"; do
    echo "== $t"
    if ! "$t" --jobs=2; then
        status=1
        failed="$failed $t"
    fi
done
[ $status -eq 0 ] || echo "FAILED suites:$failed" >&2
exit $status
