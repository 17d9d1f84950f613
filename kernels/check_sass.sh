#!/bin/sh
# What the machine code of the kernels must show, read from the sm_90 SASS
# of the built binaries (no GPU needed; cuobjdump needed):
#   - no function uses local memory or a stack frame (no spills, no
#     register array moved to memory);
#   - the streaming kernels load 16 bytes per instruction (LDG.E...128):
#     bandwidth v2, GEMV v2-v5; decode attention v2 and v3 copy 16 bytes
#     per cp.async (LDGSTS...128);
#   - GEMV v5 and decode attention v3 issue tensor-core HMMA.16816.
#
#   kernels/check_sass.sh [BUILD_DIR]      exit 0 all hold, 1 not, 77 no cuobjdump
set -u
build=${1:-build}
cuobjdump=${CUOBJDUMP:-cuobjdump}
if ! command -v "$cuobjdump" >/dev/null 2>&1; then
    echo "SKIP: no cuobjdump (set CUOBJDUMP or put it on PATH)"
    exit 77
fi
status=0
fail() {
    echo "FAIL: $*"
    status=1
}
for bin in bandwidth gemm_sweep gemv decode_attention launch; do
    f=$build/kernels/$bin
    [ -x "$f" ] || { fail "$f not built"; continue; }
    usage=$("$cuobjdump" -res-usage -arch sm_90 "$f" 2>&1) || { fail "$bin: cuobjdump -res-usage failed"; continue; }
    n=$(echo "$usage" | grep -c 'REG:')
    [ "$n" -gt 0 ] || { fail "$bin: no sm_90 functions"; continue; }
    bad=$(echo "$usage" | grep 'REG:' | grep -v 'STACK:0 ' ; echo "$usage" | grep 'REG:' | grep -v 'LOCAL:0 ')
    if [ -n "$bad" ]; then
        fail "$bin: local memory or a stack frame:"
        echo "$usage" | grep -B1 'STACK:[1-9]\|LOCAL:[1-9]'
    else
        echo "ok: $bin: $n sm_90 functions, none with local memory or a stack frame"
    fi
done

# 16-byte loads in the functions that stream.  $1 binary, $2 function
# name pattern (grep), $3 instruction pattern (grep -E).
wide() {
    f=$build/kernels/$1
    [ -x "$f" ] || return
    funcs=$("$cuobjdump" -res-usage -arch sm_90 "$f" 2>/dev/null | sed -n 's/^ *Function \([^:]*\):.*/\1/p' | grep "$2")
    [ -n "$funcs" ] || { fail "$1: no function matches $2"; return; }
    n=0
    for fn in $funcs; do
        if "$cuobjdump" -sass -arch sm_90 -fun "$fn" "$f" 2>/dev/null | grep -Eq "$3"; then
            n=$((n + 1))
        else
            fail "$1: $fn lacks $3"
        fi
    done
    echo "ok: $1: $n functions matching '$2' have $3"
}
wide bandwidth 'ILi4ELb1E' 'LDG\.E[.A-Z]*\.128|STG\.E[.A-Z]*\.128'
wide gemv '_Z8gemv_vec\|_Z7gemv_v4\|_Z7gemv_v5' 'LDG\.E[.A-Z]*\.128'
wide decode_attention '_Z7attn_v2' 'LDGSTS\.E[.A-Z]*\.128'
# The tensor-core versions use the tensor cores.
wide gemv '_Z7gemv_v5' 'HMMA\.16816\.F32\.BF16'
wide decode_attention '_Z7attn_v2ILi[0-9]ELb1E' 'HMMA\.16816\.F32\.BF16'
exit $status
