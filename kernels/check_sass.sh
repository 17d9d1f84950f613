#!/bin/sh
# What the machine code of the kernels must show, read from the SASS of the
# built binaries for each architecture asked for (no GPU needed; cuobjdump
# and nvdisasm needed):
#   - no function uses local memory or a stack frame (no spills, no
#     register array moved to memory), in every program;
#   - the streaming kernels load 16 bytes per instruction (LDG.E...128):
#     bandwidth v2, GEMV v2-v6, the fused BGMV; decode attention v2 and v3
#     copy 16 bytes per cp.async (LDGSTS...128);
#   - GEMV v5 and decode attention v3 issue tensor-core HMMA.16816.
#
#   kernels/check_sass.sh [BUILD_DIR] [ARCH...]   ARCH default: sm_80 sm_90
#   exit 0 all hold, 1 not, 77 no cuobjdump
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
archs=${*:-sm_80 sm_90}
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
programs="bandwidth gemm_sweep gemv decode_attention launch lora_bgmv step_graph"

# 16-byte loads (or a given instruction) in the functions that stream.
# $1 arch, $2 binary, $3 function name pattern (grep), $4 instruction
# pattern (grep -E).
wide() {
    f=$build/kernels/$2
    [ -x "$f" ] || return
    funcs=$("$cuobjdump" -res-usage -arch "$1" "$f" 2>/dev/null | sed -n 's/^ *Function \([^:]*\):.*/\1/p' | grep "$3")
    [ -n "$funcs" ] || { fail "$1 $2: no function matches $3"; return; }
    n=0
    for fn in $funcs; do
        if "$cuobjdump" -sass -arch "$1" -fun "$fn" "$f" 2>/dev/null | grep -Eq "$4"; then
            n=$((n + 1))
        else
            fail "$1 $2: $fn lacks $4"
        fi
    done
    echo "ok: $1 $2: $n functions matching '$3' have $4"
}

for arch in $archs; do
    for bin in $programs; do
        f=$build/kernels/$bin
        [ -x "$f" ] || { fail "$f not built"; continue; }
        usage=$("$cuobjdump" -res-usage -arch "$arch" "$f" 2>&1) || { fail "$arch $bin: cuobjdump -res-usage failed"; continue; }
        n=$(echo "$usage" | grep -c 'REG:')
        [ "$n" -gt 0 ] || { fail "$arch $bin: no $arch functions"; continue; }
        bad=$(echo "$usage" | grep 'REG:' | grep -v 'STACK:0 ' ; echo "$usage" | grep 'REG:' | grep -v 'LOCAL:0 ')
        if [ -n "$bad" ]; then
            fail "$arch $bin: local memory or a stack frame:"
            echo "$usage" | grep -B1 'STACK:[1-9]\|LOCAL:[1-9]'
        else
            echo "ok: $arch $bin: $n functions, none with local memory or a stack frame"
        fi
    done
    wide "$arch" bandwidth 'ILi4ELb1E' 'LDG\.E[.A-Z]*\.128|STG\.E[.A-Z]*\.128'
    wide "$arch" gemv '_Z8gemv_vec\|_Z7gemv_v4\|_Z7gemv_v5' 'LDG\.E[.A-Z]*\.128'
    wide "$arch" decode_attention '_Z7attn_v2' 'LDGSTS\.E[.A-Z]*\.128'
    wide "$arch" lora_bgmv '_Z10bgmv_fused\|_Z11bgmv_shrink' 'LDG\.E[.A-Z]*\.128'
    # The tensor-core versions use the tensor cores.
    wide "$arch" gemv '_Z7gemv_v5' 'HMMA\.16816\.F32\.BF16'
    wide "$arch" decode_attention '_Z7attn_v2ILi[0-9]ELb1E' 'HMMA\.16816\.F32\.BF16'
done
exit $status
