#!/bin/sh
# Rehearses kernels/device_run.sh end to end on a machine without a GPU:
# stand-ins for nvidia-smi, nvcc and the kernel programs (which sleep and
# write rows), a C compiler that fails on the config reader as a machine
# without jansson does, small budgets.  Runs:
#   A  the whole path: an nvcc that falls back to sm_75 under -arch=native
#      (the build must name sm_90, from compute_cap), the budget printed,
#      the order (a quick pass, decode attention second, then the full
#      sweeps, decode attention first, then the never-run versions alone),
#      the archive looked at by each program as it starts (it must hold
#      every program before it), and a CUDA error in attention v5's
#      validation that must leave v1-v4's rows;
#   B  the call killed outright while a program runs: the archive in OUTDIR
#      holds every program that finished;
#   C  no nvcc: named as missing, every program NOT MEASURED, an archive;
#   D  no GPU answers: still an archive saying why;
#   E  gemv hangs deaf to SIGTERM: it costs its limit and 2 s, and decode
#      attention still gets its whole limit;
#   F  nvidia-smi hangs (but for -L): the whole run stays inside its budget;
#   G  a CUDA error in attention v4, after v1-v3 in the same process (a
#      quick run_all.sh): v1-v3's rows stay in decode_attention_sweep.tsv
#      and the next program runs.
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

# ------------------------------------------------------------------ A
t0=$(date +%s)
echo "== A: the whole path; the card's architecture; a CUDA error in attention v5"
seed_build "$tmp/bA"
mkdir -p "$tmp/outA" "$tmp/snapA"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapA REHEARSE_ARCHIVE=$tmp/outA/kernels-set.tar.gz \
    REHEARSE_NVCC_SLEEP=0.3 REHEARSE_FAULT=decode_attention:5 NB_BUILD_JOBS=1 \
    NB_BUILD_DIR=$tmp/bA NB_BUDGET_S=60 NB_PACK_RESERVE_S=2 NB_MIN_START_S=1 \
    NB_CUDA_HOME=/nonexistent \
    timeout -k 5 100 "$src/kernels/device_run.sh" "$tmp/outA" >"$tmp/A.log" 2>&1
rcA=$?
[ $rcA -eq 1 ] || fail "A: device_run exited $rcA, want 1 (attention v5 failed)"
head -n 1 "$tmp/A.log" | grep -q 'budget 60 s' || fail "A: the budget is not the first line: $(head -n 1 "$tmp/A.log")"
has "$tmp/A.log" "== budget: 60 s in all"
[ "$(ls -A "$tmp/outA")" = kernels-set.tar.gz ] || fail "A: OUTDIR holds $(ls -A "$tmp/outA" | tr '\n' ' '), want the archive alone"
unpack "$tmp/outA/kernels-set.tar.gz" "$tmp/xA"
set=$tmp/xA/set
has "$set/provenance.txt" "built: bandwidth launch gemm_sweep gemv lora_bgmv step_graph decode_attention" \
    "A: not every kernel built without jansson (build.log: $(tail -n 3 "$set/build.log" 2>/dev/null))"
has "$set/provenance.txt" "tools_missing: none"
has "$set/provenance.txt" "sass check: exit 77"
has "$set/provenance.txt" "build_arch: sm_90" "A: the build does not say it targets sm_90"
grep -q -- '-arch=native' "$set/build.log" && fail "A: the build asked nvcc for -arch=native"
has "$set/build.log" "arch=compute_90,code=sm_90"
for p in bandwidth launch gemm_sweep gemv lora_bgmv step_graph decode_attention; do
    has "$set/logs/$p.log" "$p: built for sm_90" "A: $p was not built for the card's sm_90"
done
# The order: the quick pass (bandwidth, then decode attention), the full
# sweeps (decode attention first), then each never-run version alone.
turn_of() { # args-pattern: the turn of the first program started with these arguments
    grep -l -- "$1" "$tmp/snapA/"[0-9]*.list 2>/dev/null | head -n 1 | sed 's|.*/\([0-9]*\)-.*|\1|'
}
[ "$(turn_of 'ARGS: --quick --out')" = 01 ] || fail "A: the quick pass does not start with bandwidth"
[ "$(ls "$tmp/snapA" | sed -n 2p)" = 02-decode_attention.list ] || fail "A: decode attention is not second"
[ "$(ls "$tmp/snapA" | sed -n 8p)" = 08-decode_attention.list ] || fail "A: the full sweeps do not start with decode attention"
n_runs=$(ls "$tmp/snapA" | grep -c '\.list$')
[ "$n_runs" -eq 19 ] || fail "A: $n_runs programs started, want 19 (7 quick, 9 full, 3 new versions)"
last3=$(ls "$tmp/snapA" | tail -n 3 | sed 's/^[0-9]*-//' | tr '\n' ' ')
[ "$last3" = "decode_attention.list gemv.list lora_bgmv.list " ] || fail "A: the last three are $last3"
for f in $(ls "$tmp/snapA" | tail -n 3); do
    grep -q 'ARGS: --version [0-9] ' "$tmp/snapA/$f" || fail "A: $f was not one version alone: $(grep ARGS "$tmp/snapA/$f")"
done
for f in $(ls "$tmp/snapA" | head -n 16); do
    case $f in *decode_attention* | *gemv*) grep -q 'ARGS: --version [0-9,]*5' "$tmp/snapA/$f" ;; *lora_bgmv*) grep -q 'ARGS: --version [0-9,]*3' "$tmp/snapA/$f" ;; *) false ;; esac &&
        fail "A: $f ran a never-run version among the proven ones"
done
# Each program, as it starts, finds every earlier one's log in the archive.
before=
for f in $(ls "$tmp/snapA"); do
    grep -q 'NO ARCHIVE' "$tmp/snapA/$f" && fail "A: no archive in OUTDIR when $f started"
    grep -q 'set/build.log' "$tmp/snapA/$f" || fail "A: the archive when $f started lacks build.log"
    for b in $before; do
        grep -q "set/logs/$b.log" "$tmp/snapA/$f" || fail "A: the archive when $f started lacks logs/$b.log"
    done
    case $f in 01-*) before=quick-bandwidth ;; 02-*) before="$before quick-decode_attention" ;; esac
done
# The crash in v5's validation costs v5 alone.
for v in 1 2 3 4; do
    has "$set/decode_attention.tsv" "decode_attention-v$v-row-2" "A: attention v$v's rows were lost to v5's crash"
    has "$set/quick/decode_attention.tsv" "decode_attention-v$v-row-2" "A: the quick pass lacks attention v$v"
done
grep -q 'decode_attention-v5-row' "$set/decode_attention.tsv" && fail "A: v5 rows in the proven file"
has "$set/targets.txt" "NOT MEASURED: decode_attention-v5: exit 1"
has "$set/logs/decode_attention-v5.log" "cudaErrorIllegalAddress"
has "$set/new/gemv-v5/gemv.tsv" "gemv-v5-row-2"
has "$set/new/lora_bgmv-v3/lora_bgmv.tsv" "lora_bgmv-v3-row-2"
for p in bandwidth launch gemm_sweep gemv lora_bgmv step_graph decode_attention; do
    has "$set/targets.txt" "^$p:   target $p rehearsal" "A: targets.txt lacks $p's target line"
done
has "$set/flush-rotate/gemv.tsv" "gemv-v4-row-2"
has "$set/clocks.tsv" "^decode_attention	2026"
has "$set/provenance.txt" "^exit: 1"
[ "$(grep -c '^build_s:' "$set/provenance.txt")" = 1 ] || fail "A: provenance.txt gives the build's time more than once"
has "$set/MANIFEST.txt" "packed after: end"
has "$tmp/A.log" "== targets"

# ------------------------------------------------------------------ B
echo "   ($(($(date +%s) - t0)) s)"
echo "== B: the call killed outright while gemv runs"
seed_build "$tmp/bB"
mkdir -p "$tmp/outB" "$tmp/snapB"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapB REHEARSE_ARCHIVE=$tmp/outB/kernels-set.tar.gz \
    REHEARSE_HANG=gemv NB_BUILD_DIR=$tmp/bB NB_BUDGET_S=200 NB_CUDA_HOME=/nonexistent \
    setsid "$src/kernels/device_run.sh" "$tmp/outB" >"$tmp/B.log" 2>&1 &
pid=$!
i=0
# gemv's turn is the third (the quick pass); it hangs once its rows are written.
while [ $i -lt 300 ] && ! [ -f "$tmp/snapB/03-gemv.list" ]; do
    sleep 0.1
    i=$((i + 1))
done
sleep 0.5
[ -f "$tmp/snapB/03-gemv.list" ] || fail "B: gemv never started ($(tail -n 2 "$tmp/B.log"))"
kill -KILL -- -$pid 2>/dev/null || kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
if [ -f "$tmp/outB/kernels-set.tar.gz" ]; then
    unpack "$tmp/outB/kernels-set.tar.gz" "$tmp/xB"
    for p in bandwidth decode_attention; do
        has "$tmp/xB/set/quick/$p.tsv" "$p-v.*-row-2" "B: the archive after the kill lacks $p's rows"
        has "$tmp/xB/set/targets.txt" "^quick-$p:   target" "B: the archive after the kill lacks $p's target"
    done
    has "$tmp/xB/set/MANIFEST.txt" "packed after: quick-decode_attention"
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
PATH=$tmp/binC:${path_c%:} NB_BUILD_DIR=$tmp/bC NB_BUDGET_S=30 NB_CUDA_HOME=/nonexistent REHEARSE_SNAP=$tmp \
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

# ------------------------------------------------------------------ E
echo "   ($(($(date +%s) - t0)) s)"
echo "== E: gemv hangs deaf to SIGTERM"
seed_build "$tmp/bE"
mkdir -p "$tmp/outE" "$tmp/snapE"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapE REHEARSE_ARCHIVE=$tmp/outE/kernels-set.tar.gz \
    REHEARSE_HANG_HARD=gemv NB_BUILD_DIR=$tmp/bE NB_BUDGET_S=60 NB_PACK_RESERVE_S=2 NB_MIN_START_S=1 \
    NB_CUDA_HOME=/nonexistent timeout -k 5 100 "$src/kernels/device_run.sh" "$tmp/outE" >"$tmp/E.log" 2>&1
unpack "$tmp/outE/kernels-set.tar.gz" "$tmp/xE" || fail "E: no archive"
runs=$(sed -n 's/^runs: \([0-9]*\) s left after the build/\1/p' "$tmp/xE/set/provenance.txt")
# The quick gemv's limit is 6 % of the runs' time (3 s at least), plus the
# 2 s before SIGKILL; decode attention's full sweep, right after the quick
# pass, still gets its whole share: 25 % of the runs' time.
want=$(( ${runs:-0} * 25 / 100 ))
line=$(grep '^== decode_attention (limit' "$tmp/E.log")
got=$(echo "$line" | sed 's/^== decode_attention (limit \([0-9]*\) s.*/\1/')
[ -n "$runs" ] && [ "${got:-0}" -eq "$want" ] 2>/dev/null ||
    fail "E: decode attention's limit '$got' s, want its whole share $want s of $runs s ($line)"
has "$tmp/xE/set/targets.txt" "NOT MEASURED: quick-gemv: stopped at its time limit"
has "$tmp/xE/set/quick/gemv.tsv" "gemv-v1-row-2" "E: the hung gemv's rows are lost"
has "$tmp/xE/set/decode_attention.tsv" "decode_attention-v4-row-2" "E: decode attention has no rows"
quick_gemv_s=$(sed -n 's/^   (quick-gemv: exit [0-9]*, \([0-9]*\) s)$/\1/p' "$tmp/E.log")
qlim=$(( ${runs:-0} * 6 / 100 )); [ $qlim -lt 3 ] && qlim=3
[ -n "$quick_gemv_s" ] && [ "$quick_gemv_s" -le $((qlim + 3)) ] ||
    fail "E: the hung quick gemv took '$quick_gemv_s' s, want its limit $qlim s + the 2 s kill"

# ------------------------------------------------------------------ F
echo "   ($(($(date +%s) - t0)) s)"
echo "== F: nvidia-smi hangs"
seed_build "$tmp/bF"
mkdir -p "$tmp/outF" "$tmp/snapF"
f0=$(date +%s)
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapF REHEARSE_ARCHIVE=$tmp/outF/kernels-set.tar.gz \
    REHEARSE_SMI_HANG=1 NB_SMI_LIMIT_S=2 NB_BUILD_DIR=$tmp/bF NB_BUDGET_S=40 NB_PACK_RESERVE_S=3 \
    NB_MIN_START_S=1 NB_CUDA_HOME=/nonexistent timeout -k 5 100 "$src/kernels/device_run.sh" "$tmp/outF" \
    >"$tmp/F.log" 2>&1
f_s=$(($(date +%s) - f0))
# Inside the budget of 40 s (a second of rounding): one nvidia-smi call
# times out (2 s + the 1 s kill), the rest are skipped.
[ $f_s -le 41 ] || fail "F: the run took $f_s s with a hanging nvidia-smi, over its budget of 40 s"
unpack "$tmp/outF/kernels-set.tar.gz" "$tmp/xF" || fail "F: no archive"
has "$tmp/xF/set/provenance.txt" "nvidia-smi: a call timed out"
has "$tmp/xF/set/provenance.txt" "compute_cap: unread"
has "$tmp/xF/set/provenance.txt" "build_arch: default"
has "$tmp/xF/set/decode_attention.tsv" "decode_attention-v4-row-2" "F: decode attention has no rows"

# ------------------------------------------------------------------ G
echo "   ($(($(date +%s) - t0)) s)"
echo "== G: attention v4 crashes after v1-v3 in its process"
seed_build "$tmp/bG"
mkdir -p "$tmp/outG" "$tmp/snapG"
PATH=$tmp/bin:$PATH REHEARSE_SNAP=$tmp/snapG REHEARSE_ARCHIVE=$tmp/outG/kernels-set.tar.gz \
    REHEARSE_FAULT=decode_attention:4 NB_BUILD_JOBS=1 NB_BUDGET_S=60 NB_PACK_RESERVE_S=2 NB_MIN_START_S=1 \
    timeout -k 5 100 "$src/kernels/run_all.sh" --quick "$tmp/outG" "$tmp/bG" >"$tmp/G.log" 2>&1
rcG=$?
[ $rcG -eq 1 ] || fail "G: run_all exited $rcG, want 1 (attention v4 failed)"
unpack "$tmp/outG/kernels-set.tar.gz" "$tmp/xG" || fail "G: no archive"
qG=$tmp/xG/set/quick
for v in 1 2 3; do
    has "$qG/decode_attention_sweep.tsv" "decode_attention-v$v-row-2" "G: attention v$v's rows were lost to v4's crash"
done
grep -q 'decode_attention-v4-row' "$qG/decode_attention_sweep.tsv" && fail "G: v4 rows after v4's crash"
[ -f "$qG/decode_attention.tsv" ] && fail "G: a table of the fastest versions from a run that crashed"
has "$tmp/xG/set/targets.txt" "NOT MEASURED: quick-decode_attention: exit 1"
has "$tmp/xG/set/logs/quick-decode_attention.log" "cudaErrorIllegalAddress"
has "$qG/gemv.tsv" "gemv-v1-row-2" "G: the program after the crash did not run"

if [ $fails -gt 0 ]; then
    for r in A B C D E F G; do echo "---- $r.log (tail)"; tail -n 15 "$tmp/$r.log" 2>/dev/null; done
    echo "rehearse: $fails checks failed"
    exit 1
fi
echo "rehearse: every check held"
