#!/bin/sh
# What the machine code of the kernels must show, read from the SASS of the
# built binaries for each architecture asked for (no GPU needed; cuobjdump
# and nvdisasm needed):
#   - no function uses local memory or a stack frame (no spills, no
#     register array moved to memory), in every program;
#   - the streaming kernels load 16 bytes per instruction (LDG.E...128):
#     bandwidth v2, GEMV v2-v6, the fused BGMV; decode attention v2-v5
#     copy 16 bytes per cp.async (LDGSTS...128);
#   - GEMV v5 and decode attention v3-v5 issue tensor-core HMMA.16816;
#     attention v5 reads V transposed for its P V by ldmatrix.trans
#     (LDSM...MT88).
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

# A binary's whole SASS for one architecture, disassembled once and kept
# (one cuobjdump per function would disassemble the binary each time).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sass_of() {
    c=$tmp/$1.$2.sass
    [ -f "$c" ] || "$cuobjdump" -sass -arch "$1" "$build/kernels/$2" >"$c" 2>/dev/null
}
# Its resource usage (registers, stack, local memory per function), once.
usage_of() {
    c=$tmp/$1.$2.usage
    [ -f "$c" ] || "$cuobjdump" -res-usage -arch "$1" "$build/kernels/$2" >"$c" 2>&1 || { rm -f "$c"; return 1; }
    cat "$c"
}

# 16-byte loads (or a given instruction) in the functions that stream.
# $1 arch, $2 binary, $3 function name pattern (grep), $4 instruction
# pattern (grep -E).
wide() {
    f=$build/kernels/$2
    [ -x "$f" ] || return
    funcs=$(usage_of "$1" "$2" | sed -n 's/^ *Function \([^:]*\):.*/\1/p' | grep "$3")
    [ -n "$funcs" ] || { fail "$1 $2: no function matches $3"; return; }
    sass_of "$1" "$2"
    n=0
    for fn in $funcs; do
        if awk -v fn="$fn" '$1 == "Function" && $2 == ":" { on = $3 == fn } on' "$tmp/$1.$2.sass" | grep -Eq "$4"; then
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
        usage=$(usage_of "$arch" "$bin") || { fail "$arch $bin: cuobjdump -res-usage failed"; continue; }
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
    wide "$arch" decode_attention '_Z7attn_v5' 'LDGSTS\.E[.A-Z]*\.128'
    wide "$arch" decode_attention '_Z7attn_v5' 'HMMA\.16816\.F32\.BF16'
    wide "$arch" decode_attention '_Z7attn_v5' 'LDSM\.16\.MT88'
done
exit $status
