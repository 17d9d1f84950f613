#!/bin/sh
# Rehearses kernels/device_run.sh end to end on a machine without a GPU:
# stand-ins for nvidia-smi, nvcc and the kernel programs (which sleep and
# write rows), a C compiler that fails on the config reader as a machine
# without jansson does, short deadlines.  Four runs:
#   A  the whole path: the build (its time not taken from the deadline), the
#      archive looked at by each program as it starts (it must hold every
#      program before it), the last program stopped at the deadline with its
#      rows kept;
#   B  the call killed outright while a program runs: the archive in OUTDIR
#      holds every program that finished;
#   C  no nvcc: named as missing, every program NOT MEASURED, an archive;
#   D  no GPU answers: still an archive saying why.
#
#   tests/device/rehearse.sh [SRC_DIR] [BUILD_DIR]     (default: NB_SRC, NB_BUILD)
# BUILD_DIR must hold the library's objects (make lib).  Exit 0 when every
# check holds; each failure is printed as "FAIL: ...".
set -u
src=${1:-${NB_SRC:-$(pwd)}}
built=${2:-${NB_BUILD:-$src/build}}
here=$src/tests/device
[ -d "$built/obj/napkin" ] || { echo "rehearse: $built/obj/napkin missing (make lib first)"; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nb-rehearse.XXXXXX") || exit 2
trap '[ -n "${REHEARSE_KEEP:-}" ] || rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { grep -q -- "$2" "$1" 2>/dev/null || fail "${3:-$1 lacks '$2'}"; }

# Stand-in tools first on the PATH.
mkdir -p "$tmp/bin"
cp "$here/fake_nvidia_smi.sh" "$tmp/bin/nvidia-smi"
cp "$here/fake_nvcc.sh" "$tmp/bin/nvcc"
chmod +x "$tmp/bin/"*
export REHEARSE_DIR=$here REHEARSE_REAL_CC=${CC:-cc}
export CC=$here/fake_cc.sh NB_REVISION=rehearsal TMPDIR=$tmp
# The stand-in kernels have no machine code to read: the SASS check skips.
export CUOBJDUMP=$tmp/no-cuobjdump
unset MAKEFLAGS MFLAGS MAKELEVEL NVCC

# A build folder holding the library's compiled objects (timestamps kept,
# so make takes them as up to date), less the config reader's.
seed_build() { # dir
    mkdir -p "$1"
    cp -Rp "$built/obj" "$built/gen" "$1/" || exit 2
    rm -f "$1/obj/napkin/hf_config.o" "$1/obj/napkin/hf_config.d"
}

# Unpack an archive into a fresh folder; print nothing.
unpack() { # archive dir
    rm -rf "$2"
    mkdir -p "$2" && tar -xzf "$1" -C "$2"
}

order="bandwidth launch gemm_sweep gemv lora_bgmv step_graph gemv gemv decode_attention"

# ------------------------------------------------------------------ A
t0=$(date +%s)
echo "== A: the whole path, the last program stopped at the deadline"
seed_build "$tmp/bA"
mkdir -p "$tmp/outA" "$tmp/snapA"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapA REHEARSE_ARCHIVE=$tmp/outA/kernels-set.tar.gz \
    REHEARSE_NVCC_SLEEP=0.3 REHEARSE_HANG=decode_attention NB_BUILD_JOBS=1 \
    NB_BUILD_DIR=$tmp/bA NB_DEADLINE_S=9 NB_PACK_RESERVE_S=1 NB_MIN_START_S=1 NB_BUILD_LIMIT_S=120 \
    NB_CUDA_HOME=/nonexistent \
    timeout -k 5 100 "$src/kernels/device_run.sh" "$tmp/outA" >"$tmp/A.log" 2>&1
rcA=$?
[ $rcA -eq 1 ] || fail "A: device_run exited $rcA, want 1 (decode_attention stopped at its limit)"
[ "$(ls -A "$tmp/outA")" = kernels-set.tar.gz ] || fail "A: OUTDIR holds $(ls -A "$tmp/outA" | tr '\n' ' '), want the archive alone"
unpack "$tmp/outA/kernels-set.tar.gz" "$tmp/xA"
set=$tmp/xA/set
has "$set/provenance.txt" "built: bandwidth launch gemm_sweep gemv lora_bgmv step_graph decode_attention" \
    "A: not every kernel built without jansson (build.log: $(tail -n 3 "$set/build.log" 2>/dev/null))"
has "$set/provenance.txt" "tools_missing: none"
has "$set/provenance.txt" "sass check: exit 77"
# The build took 7 x 0.3 s, one compile at a time (NB_BUILD_JOBS=1); the 9 s
# deadline counts after it: every program
# before the last ran and finished.
build_s=$(sed -n 's/^build_s: //p' "$set/provenance.txt")
[ "${build_s:-0}" -ge 2 ] || fail "A: build_s '$build_s': the stand-in build takes 2.1 s at least"
turn=0
before=
for p in $order; do
    turn=$((turn + 1))
    snap=$(ls "$tmp/snapA/"$(printf '%02d' $turn)-$p.list 2>/dev/null)
    if [ -z "$snap" ]; then
        fail "A: program $turn ($p) never started"
        continue
    fi
    grep -q 'NO ARCHIVE' "$snap" && fail "A: no archive in OUTDIR when $p started"
    grep -q 'set/build.log' "$snap" || fail "A: the archive when $p started lacks build.log"
    for b in $before; do
        grep -q "set/logs/$b.log" "$snap" || fail "A: the archive when $p started lacks logs/$b.log"
    done
    case $before in *bandwidth*) grep -q 'set/bandwidth.tsv' "$snap" || fail "A: the archive when $p started lacks bandwidth.tsv" ;; esac
    case $before in *gemv_flush_memset*) grep -q 'set/flush-memset/gemv.tsv' "$snap" || fail "A: no flush-memset/gemv.tsv when $p started" ;; esac
    case $p:$turn in gemv:7) before="$before gemv_flush_memset" ;; gemv:8) before="$before gemv_flush_rotate" ;; *) before="$before $p" ;; esac
done
for p in bandwidth launch gemm_sweep gemv lora_bgmv step_graph; do
    has "$set/$p.tsv" "$p-row-2" "A: $p.tsv lacks its rows"
    has "$set/targets.txt" "^$p:   target $p rehearsal" "A: targets.txt lacks $p's target line"
done
has "$set/flush-rotate/gemv.tsv" "gemv-row-2"
# The last program: stopped by its limit, its rows and lines kept.
has "$set/targets.txt" "NOT MEASURED: decode_attention: stopped at its time limit"
has "$set/decode_attention.tsv" "decode_attention-row-2" "A: decode_attention's rows written before the stop are lost"
has "$set/logs/decode_attention.log" "decode_attention stuck"
has "$set/clocks.tsv" "^decode_attention	2026"
has "$set/provenance.txt" "^exit: 1"
has "$set/MANIFEST.txt" "packed after: end"
has "$tmp/A.log" "== targets"

# ------------------------------------------------------------------ B
echo "   ($(($(date +%s) - t0)) s)"
echo "== B: the call killed outright while gemv runs"
seed_build "$tmp/bB"
mkdir -p "$tmp/outB" "$tmp/snapB"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapB REHEARSE_ARCHIVE=$tmp/outB/kernels-set.tar.gz \
    REHEARSE_HANG=gemv NB_BUILD_DIR=$tmp/bB NB_DEADLINE_S=200 NB_CUDA_HOME=/nonexistent \
    setsid "$src/kernels/device_run.sh" "$tmp/outB" >"$tmp/B.log" 2>&1 &
pid=$!
i=0
# gemv's turn is the fourth; it hangs once its rows are written.
while [ $i -lt 300 ] && ! [ -f "$tmp/snapB/04-gemv.list" ]; do
    sleep 0.1
    i=$((i + 1))
done
sleep 0.5
[ -f "$tmp/snapB/04-gemv.list" ] || fail "B: gemv never started ($(tail -n 2 "$tmp/B.log"))"
kill -KILL -- -$pid 2>/dev/null || kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
if [ -f "$tmp/outB/kernels-set.tar.gz" ]; then
    unpack "$tmp/outB/kernels-set.tar.gz" "$tmp/xB"
    for p in bandwidth launch gemm_sweep; do
        has "$tmp/xB/set/$p.tsv" "$p-row-2" "B: the archive after the kill lacks $p's rows"
        has "$tmp/xB/set/targets.txt" "^$p:   target" "B: the archive after the kill lacks $p's target"
    done
    has "$tmp/xB/set/MANIFEST.txt" "packed after: gemm_sweep"
else
    fail "B: no archive in OUTDIR after the kill"
fi

# ------------------------------------------------------------------ C
echo "   ($(($(date +%s) - t0)) s)"
echo "== C: no nvcc on the machine"
seed_build "$tmp/bC"
mkdir -p "$tmp/outC" "$tmp/binC"
cp "$here/fake_nvidia_smi.sh" "$tmp/binC/nvidia-smi"
# The PATH less every folder that holds an nvcc.
path_c=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/nvcc" ] || printf '%s:' "$d"; done)
PATH=$tmp/binC:${path_c%:} NB_BUILD_DIR=$tmp/bC NB_DEADLINE_S=20 NB_CUDA_HOME=/nonexistent REHEARSE_SNAP=$tmp \
    REHEARSE_ARCHIVE=/nonexistent timeout -k 5 100 "$src/kernels/device_run.sh" "$tmp/outC" >"$tmp/C.log" 2>&1
rcC=$?
[ $rcC -ne 0 ] || fail "C: exit 0 without a compiler"
has "$tmp/C.log" "missing on this machine: nvcc(CUDA compiler)"
unpack "$tmp/outC/kernels-set.tar.gz" "$tmp/xC" || fail "C: no archive"
has "$tmp/xC/set/targets.txt" "NOT MEASURED: bandwidth: not built"
has "$tmp/xC/set/targets.txt" "NOT MEASURED: tools missing on this machine: nvcc(CUDA compiler)"

# ------------------------------------------------------------------ D
echo "   ($(($(date +%s) - t0)) s)"
echo "== D: no GPU answers"
mkdir -p "$tmp/outD" "$tmp/binD"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed (rehearsal)"; exit 9\n' >"$tmp/binD/nvidia-smi"
chmod +x "$tmp/binD/nvidia-smi"
PATH=$tmp/binD:$tmp/bin:$PATH NB_BUILD_DIR=$tmp/bD NB_CUDA_HOME=/nonexistent \
    timeout -k 5 60 "$src/kernels/device_run.sh" "$tmp/outD" >"$tmp/D.log" 2>&1
rcD=$?
[ $rcD -ne 0 ] || fail "D: exit 0 without a GPU"
if unpack "$tmp/outD/kernels-set.tar.gz" "$tmp/xD"; then
    has "$tmp/xD/set/targets.txt" "NOT MEASURED: every program"
    has "$tmp/xD/set/run_all.log" "SKIP: no GPU answers"
else
    fail "D: no archive"
fi

if [ $fails -gt 0 ]; then
    for r in A B C D; do echo "---- $r.log (tail)"; tail -n 15 "$tmp/$r.log" 2>/dev/null; done
    echo "rehearse: $fails checks failed"
    exit 1
fi
echo "rehearse: every check held"
