#!/bin/sh
# Build every kernel for the local GPU, validate and run every measurement
# under per-program time limits and one global deadline, and pack the set
# (TSV files, logs, nvidia-smi before and after, clocks after each program,
# the targets report, provenance) into ONE archive, OUTDIR/kernels-set.tar.gz,
# whose top folder is set/.  The same files stay in OUTDIR/set/.
#
#   kernels/run_all.sh [--quick] [--dry-run] [--no-build] OUTDIR [BUILD_DIR]
#
#   --quick     small sizes: a correctness run (recorded in provenance.txt)
#   --dry-run   for a machine without a GPU: build, run every binary (each
#               must print "SKIP: <reason>" and exit 77) and write the same
#               archive layout; exit 0 when every program built and skipped
#   --no-build  run what BUILD_DIR/kernels already holds
#
# Order: a quick pass of every program (--quick: one small sweep each; the
# read ceiling first, decode attention second), then the full sweeps of the
# versions that have run before (decode attention first), then each
# version never run on a GPU (attention v5, GEMV v5, BGMV v3) in a process
# of its own, its files under new/<program>-v<N>/: a fault there, after
# which every CUDA call of that process fails, costs that version alone.
# With --quick the quick pass and the new versions at quick size.
#
# Time: every limit comes from one budget, NB_BUDGET_S (default 600; the
# device script passes 360), counted from the start and printed first:
# the build gets 25 % of it (NB_BUILD_LIMIT_S overrides), the SASS check
# 5 %, NB_PACK_RESERVE_S (default 10) is kept for the last pack, and the
# runs share the rest, each program a fixed share (limit_of below), all
# cut to what is left.  A program that ignores SIGTERM is killed 2 s after
# its limit.  NB_DEADLINE_S, if set, caps the runs' time after the build.
# Every nvidia-smi call is bounded (NB_SMI_LIMIT_S, default 5, killed 1 s
# later); after one times out no other is made.
#
# Architecture: the build targets the card nvidia-smi reports
# (-gencode arch=compute_XY,code=sm_XY from compute_cap); a program that
# fails to build so is rebuilt with the default architectures (sm_80,
# sm_90 and compute_90 PTX, which the driver compiles for a newer card);
# provenance.txt says which each used.  Never -arch=native: an nvcc that
# cannot see the GPU quietly falls back to an old architecture.
#
# Environment also: NB_REVISION (the code's revision; else git, else
# ./REVISION), NB_BUILD_JOBS (parallel compiles, default nproc), NB_PACK_TO
# (a second place for the archive, e.g. $OUT/kernels-set.tar.gz),
# NB_MIN_START_S (a program needs this many seconds left to start, default
# 5), NB_SASS_CHECK=1 (check_sass.sh on the build into set/sass-check.txt),
# NB_TOOLS_MISSING (what the caller found missing, recorded).
#
# The archive is re-packed after the build and after every program (written
# aside, then renamed), so a run killed at any point leaves the last complete
# set, holding every program that finished; rows and lines are flushed as
# they are measured, so a program stopped at its limit keeps what it wrote.
#
# Exit: 0 all measured and valid; 1 something invalid, failed or not
# measured (each named in targets.txt as "NOT MEASURED: <reason>" or in the
# logs as INVALID); 77 no GPU answers (without --dry-run); 2 bad usage.
set -u
usage() {
    echo "usage: kernels/run_all.sh [--quick] [--dry-run] [--no-build] OUTDIR [BUILD_DIR]" >&2
    exit 2
}
quick=
dry=0
build_it=1
out=
build=
for a in "$@"; do
    case $a in
    --quick) quick=--quick ;;
    --dry-run) dry=1 ;;
    --no-build) build_it=0 ;;
    -*) echo "run_all.sh: unknown flag '$a' (flags: --quick --dry-run --no-build)" >&2; usage ;;
    *) if [ -z "$out" ]; then out=$a; elif [ -z "$build" ]; then build=$a; else usage; fi ;;
    esac
done
[ -n "$out" ] || usage
[ -n "$build" ] || build=build
# Relative paths name places under the caller's directory, not the repository's.
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd) || exit 1
cd "$repo" || exit 1

run_start_s=$(date +%s)
set_dir=$out/set
rm -rf "$set_dir"
mkdir -p "$set_dir/logs" || exit 1
targets=$set_dir/targets.txt
: >"$targets"
prov=$set_dir/provenance.txt

# ---------------------------------------------------------------- budget
pct() { echo $(($1 * $2 / 100)); } # total percent
budget=${NB_BUDGET_S:-600}
case $budget in '' | *[!0-9]*) echo "run_all.sh: NB_BUDGET_S must be whole seconds, not '$budget'" >&2; exit 2 ;; esac
end_s=$((run_start_s + budget))
blim=${NB_BUILD_LIMIT_S:-$(pct "$budget" 25)}
slim=$(pct "$budget" 5)
[ "$slim" -lt 5 ] && slim=5
reserve_s=${NB_PACK_RESERVE_S:-10}
min_start_s=${NB_MIN_START_S:-5}
smi_lim=${NB_SMI_LIMIT_S:-5}
echo "== budget: $budget s in all (build $blim s, SASS check $slim s, runs the rest less $reserve_s s for packing;" \
    "nvidia-smi $smi_lim s a call)"

# nvidia-smi, bounded; after one call times out no other is made (a hung
# driver query would otherwise cost its limit after every program).
smi_dead=$out/.nvidia-smi-timed-out
rm -f "$smi_dead"
smi() {
    [ -f "$smi_dead" ] && return 124
    timeout -k 1 "$smi_lim" nvidia-smi "$@"
    r=$?
    if [ $r -eq 124 ] || [ $r -eq 137 ]; then
        : >"$smi_dead"
        echo "nvidia-smi $1: no answer in $smi_lim s; no further nvidia-smi calls" >&2
    fi
    return $r
}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && smi -L >/dev/null 2>&1; then
    have_gpu=1
fi
if [ $have_gpu = 0 ] && [ $dry = 0 ]; then
    echo "SKIP: no GPU answers nvidia-smi (kernels/run_all.sh --dry-run packs a set without one)"
    exit 77
fi

# ---------------------------------------------------------------- provenance
rev=${NB_REVISION:-}
if [ -z "$rev" ]; then
    rev=$(git rev-parse --short HEAD 2>/dev/null) || rev=
    if [ -n "$rev" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
        rev=$rev-dirty
    fi
fi
[ -n "$rev" ] || { [ -f REVISION ] && rev=$(head -n 1 REVISION | tr -d ' \t\r'); }
[ -n "$rev" ] || rev=unknown
NB_REVISION=$rev
export NB_REVISION
nvcc_version=$( (timeout -k 1 20 ${NVCC:-nvcc} --version 2>/dev/null || echo "nvcc not found") | tail -n 1)
cap=
[ $have_gpu = 1 ] && cap=$(smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .\r')
case $cap in [0-9][0-9] | [0-9][0-9][0-9]) ;; *) cap= ;; esac
{
    echo "revision: $rev"
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname 2>/dev/null || echo unknown)"
    echo "quick: $([ -n "$quick" ] && echo yes || echo no)"
    echo "dry_run: $([ $dry = 1 ] && echo yes || echo no)"
    echo "nvcc: $nvcc_version"
    echo "budget_s: $budget (build $blim, SASS check $slim, pack reserve $reserve_s, nvidia-smi $smi_lim a call)"
    [ -n "${NB_DEADLINE_S:-}" ] && echo "deadline_s: $NB_DEADLINE_S (from the end of the build)"
    echo "tools_missing: ${NB_TOOLS_MISSING:-none}"
    echo "gpu: $([ $have_gpu = 1 ] && smi -L 2>/dev/null | head -n 1 || echo none)"
    echo "compute_cap: ${cap:-unread}"
} >"$prov"

smi_q() { # file: nvidia-smi -q, or why not
    if [ $have_gpu = 1 ]; then
        smi -q >"$1" 2>&1 || echo "nvidia-smi -q: failed or timed out" >>"$1"
    else echo "nvidia-smi unavailable: no GPU (dry run)" >"$1"; fi
}
clocks=$set_dir/clocks.tsv
echo "after	timestamp	sm_mhz	mem_mhz	power_w	temp_c	throttle_reasons" >"$clocks"
clocks_row() { # after-what
    if [ $have_gpu = 1 ]; then
        q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu
        row=$(smi --query-gpu=$q,clocks_event_reasons.active --format=csv,noheader,nounits 2>/dev/null ||
            smi --query-gpu=$q,clocks_throttle_reasons.active --format=csv,noheader,nounits 2>/dev/null ||
            echo "unreadable")
        echo "$1	$(echo "$row" | head -n 1 | sed 's/, */\t/g')" >>"$clocks"
    else
        echo "$1	-	-	-	-	-	no GPU (dry run)" >>"$clocks"
    fi
}
smi_q "$set_dir/nvidia-smi-before.txt"
clocks_row start

# ---------------------------------------------------------------- build
programs="bandwidth launch gemm_sweep gemv lora_bgmv step_graph decode_attention"
blog=$set_dir/build.log
: >"$blog"
# A make inside a make (make test) must not share the outer jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL
# No -Werror on the measurement machine: another compiler's new warning must
# not cost the run.  -k: one kernel that fails to build stops no other.
warn="WARN=-std=c11 -Wall -Wextra"
build_arch=default
if [ $build_it = 1 ]; then
    echo "== build ($build)"
    jobs=${NB_BUILD_JOBS:-$(nproc 2>/dev/null || echo 4)}
    build_end_s=$(($(date +%s) + blim))
    # Binaries built elsewhere with other flags must not be taken as up to date.
    [ $have_gpu = 1 ] && rm -f "$build"/kernels/*
    if [ -n "$cap" ]; then
        build_arch=sm_$cap
        echo "building for sm_$cap (-gencode arch=compute_$cap,code=sm_$cap: nvidia-smi's compute_cap)" | tee -a "$blog"
        timeout -k 10 "$blim" make --no-print-directory -k -j"$jobs" B="$build" "$warn" kernels \
            "NVCC_ARCH=-gencode arch=compute_$cap,code=sm_$cap" >>"$blog" 2>&1
        missing=
        for p in $programs; do [ -x "$build/kernels/$p" ] || missing="$missing $p"; done
        if [ -n "$missing" ]; then
            echo "sm_$cap build left out:$missing; trying the default architectures (sm_80, sm_90, compute_90 PTX)" |
                tee -a "$blog"
            bleft=$((build_end_s - $(date +%s)))
            if [ $bleft -lt 5 ]; then
                echo "build limit of $blim s reached: not retried" | tee -a "$blog"
            else
                targets_missing=
                for p in $missing; do targets_missing="$targets_missing $build/kernels/$p"; done
                timeout -k 10 "$bleft" make --no-print-directory -k -j"$jobs" B="$build" "$warn" \
                    $targets_missing >>"$blog" 2>&1
                for p in $missing; do [ -x "$build/kernels/$p" ] && echo "built_default_arch: $p" >>"$prov"; done
            fi
        fi
    else
        [ $have_gpu = 1 ] && echo "compute_cap unread: building for the default architectures" | tee -a "$blog"
        timeout -k 10 "$blim" make --no-print-directory -k -j"$jobs" B="$build" "$warn" kernels >>"$blog" 2>&1
    fi
fi
echo "build_arch: $build_arch$([ "$build_arch" = default ] && echo ' (sm_80, sm_90, compute_90 PTX)')" >>"$prov"
built=
not_built=
for p in $programs; do
    if [ -x "$build/kernels/$p" ]; then built="$built $p"; else not_built="$not_built $p"; fi
done
echo "built:${built:- none}" | tee -a "$prov"
echo "not_built:${not_built:- none}" | tee -a "$prov"
for p in $not_built; do
    echo "NOT MEASURED: $p: not built (see build.log)" >>"$targets"
done
[ -n "${NB_TOOLS_MISSING:-}" ] && echo "NOT MEASURED: tools missing on this machine: $NB_TOOLS_MISSING" >>"$targets"
if [ "${NB_SASS_CHECK:-0}" = 1 ]; then
    # A build for this card holds its architecture alone.
    sass_arch=
    [ "$build_arch" != default ] && sass_arch=$build_arch
    timeout -k 2 "$slim" kernels/check_sass.sh "$build" $sass_arch >"$set_dir/sass-check.txt" 2>&1
    echo "sass check: exit $? (set/sass-check.txt)" | tee -a "$prov"
fi

# ---------------------------------------------------------------- pack
# MANIFEST and archive, written aside and renamed: whoever reads
# OUTDIR/kernels-set.tar.gz (or NB_PACK_TO) sees a whole set, never half one.
pack() { # after-what
    {
        echo "kernels set: one folder, packed as kernels-set.tar.gz (packed after: $1)"
        echo "provenance.txt        revision, date, nvcc, quick, dry run, built and not built, elapsed"
        echo "targets.txt           every target line (met / NOT met), NOT MEASURED and INVALID lines"
        echo "build.log             the build's output"
        echo "nvidia-smi-before.txt nvidia-smi -q before the first program"
        echo "nvidia-smi-after.txt  nvidia-smi -q after the last"
        echo "clocks.tsv            SM and memory clocks, power, temperature, throttle reasons after each program"
        echo "logs/NAME.log         each program's output"
        echo "*.tsv                 the measurements, each with its provenance header"
        echo "flush-*/gemv.tsv      GEMV v4 with the L2 emptied by memset / by rotating weight copies (full runs)"
        echo "sass-check.txt        check_sass.sh on the build (device_run.sh)"
        echo "files:"
        (cd "$set_dir" && find . -type f ! -name MANIFEST.txt | sort | sed 's|^\./|  |')
    } >"$set_dir/MANIFEST.txt"
    tar -czf "$out/.kernels-set.tar.gz.part" -C "$out" set &&
        mv -f "$out/.kernels-set.tar.gz.part" "$out/kernels-set.tar.gz" || {
        echo "run_all.sh: could not write the archive" >&2
        return 1
    }
    if [ -n "${NB_PACK_TO:-}" ]; then
        cp "$out/kernels-set.tar.gz" "$NB_PACK_TO.part" && mv -f "$NB_PACK_TO.part" "$NB_PACK_TO" ||
            echo "run_all.sh: could not copy the archive to $NB_PACK_TO" >&2
    fi
    return 0
}
echo "build_s: $(($(date +%s) - run_start_s))" >>"$prov"
pack build

# The runs end where the budget does, less the last pack's reserve (and
# at NB_DEADLINE_S after the build where that is set).
start_s=$(date +%s)
deadline_s=$((end_s - reserve_s))
if [ -n "${NB_DEADLINE_S:-}" ] && [ $((start_s + NB_DEADLINE_S)) -lt $deadline_s ]; then
    deadline_s=$((start_s + NB_DEADLINE_S))
fi
runs_s=$((end_s - reserve_s - start_s)) # what the budget left the runs; each limit a share of it
[ $runs_s -lt 0 ] && runs_s=0
echo "runs: $((deadline_s - start_s)) s left after the build" | tee -a "$prov"

# ---------------------------------------------------------------- run
# Each program's limit: a share (percent) of the runs' time, sized from the
# work on an H200 (estimates in kernels/README.md); a quick pass takes 6 %.
share_of() {
    case $1 in
    quick-*) echo 6 ;;
    bandwidth) echo 6 ;;
    launch) echo 4 ;;
    gemm_sweep) echo 10 ;;
    gemv) echo 12 ;;
    gemv_flush_memset | gemv_flush_rotate) echo 3 ;;
    decode_attention) echo 25 ;;
    lora_bgmv) echo 8 ;;
    step_graph) echo 4 ;;
    decode_attention-v5) echo 12 ;;
    gemv-v5) echo 6 ;;
    lora_bgmv-v3) echo 5 ;;
    *) echo 5 ;;
    esac
}
limit_of() {
    l=$(pct "$runs_s" "$(share_of "$1")")
    [ "$l" -lt 3 ] && l=3
    echo "$l"
}
status=0
dry_bad=0
run() { # name binary outdir args...
    name=$1
    bin=$2
    dir=$3
    shift 3
    if [ ! -x "$build/kernels/$bin" ]; then
        status=1
        return
    fi
    now=$(date +%s)
    left=$((deadline_s - now - 2)) # 2 s: the kill after SIGTERM
    lim=$(limit_of "$name")
    if [ $left -lt "$min_start_s" ]; then
        echo "NOT MEASURED: $name: the global deadline was reached before it started" | tee -a "$targets"
        status=1
        dry_bad=1
        return
    fi
    [ $lim -gt $left ] && lim=$left
    mkdir -p "$dir"
    echo "== $name (limit ${lim} s, $left s left)"
    log=$set_dir/logs/$name.log
    # "$@" first: a version number must be argv[1] (llm.c style).
    timeout -k 2 "$lim" "$build/kernels/$bin" "$@" --out "$dir" >"$log" 2>&1
    rc=$?
    cat "$log"
    echo "   ($name: exit $rc, $(($(date +%s) - now)) s)"
    clocks_row "$name"
    case $rc in
    0) ;;
    77)
        echo "NOT MEASURED: $name: $(grep -m1 '^SKIP:' "$log" || echo 'exit 77 without a SKIP line')" >>"$targets"
        grep -q '^SKIP: ' "$log" || dry_bad=1
        status=1
        ;;
    124 | 137)
        echo "NOT MEASURED: $name: stopped at its time limit of $lim s (the rows it wrote remain)" >>"$targets"
        status=1
        ;;
    1)
        grep -q 'INVALID' "$log" && echo "INVALID: $name: some results failed validation (valid column; logs/$name.log)" >>"$targets"
        grep -q 'INVALID' "$log" || echo "NOT MEASURED: $name: exit 1 ($(tail -n 1 "$log"))" >>"$targets"
        status=1
        ;;
    *)
        echo "NOT MEASURED: $name: exit $rc ($(tail -n 1 "$log"))" >>"$targets"
        status=1
        ;;
    esac
    [ $dry = 1 ] && [ $rc -ne 77 ] && dry_bad=1
    grep -h ' target ' "$log" | sed "s/^/$name: /" >>"$targets"
    pack "$name"
}
bw_flag() { [ -f "$1/bandwidth.tsv" ] && echo "--bandwidth $1/bandwidth.tsv"; }

# The versions that have run on a GPU before, and the ones never run, each
# of those alone (a fault in one costs its own rows only).
proven_attention=1,2,3,4
proven_gemv=1,2,3,4,6
proven_bgmv=1,2
new_versions="decode_attention:5 gemv:5 lora_bgmv:3"

# 1. A quick pass of every program, the read ceiling first (the others read
#    it), decode attention next: every program has rows before any full sweep.
qd=$set_dir/quick
run quick-bandwidth bandwidth "$qd" --quick
run quick-decode_attention decode_attention "$qd" --version $proven_attention --quick $(bw_flag "$qd")
run quick-gemv gemv "$qd" --version $proven_gemv --quick $(bw_flag "$qd")
run quick-lora_bgmv lora_bgmv "$qd" --version $proven_bgmv --quick $(bw_flag "$qd")
run quick-launch launch "$qd" --quick
run quick-step_graph step_graph "$qd" --quick
run quick-gemm_sweep gemm_sweep "$qd" --quick $(bw_flag "$qd")

# 2. The full sweeps of the proven versions, decode attention first.
if [ -z "$quick" ]; then
    bwq=$(bw_flag "$qd")
    run decode_attention decode_attention "$set_dir" --version $proven_attention $bwq
    run bandwidth bandwidth "$set_dir"
    bw=$(bw_flag "$set_dir")
    [ -n "$bw" ] || bw=$bwq
    run gemv gemv "$set_dir" --version $proven_gemv $bw
    run lora_bgmv lora_bgmv "$set_dir" --version $proven_bgmv $bw
    run launch launch "$set_dir"
    lat=
    [ -f "$set_dir/launch.tsv" ] && lat="--launch $set_dir/launch.tsv"
    run gemm_sweep gemm_sweep "$set_dir" $bw $lat
    run step_graph step_graph "$set_dir"
    # One shape timed the other two ways of emptying the L2, to settle which
    # the figures should use (the main run reads a buffer; see kernels/README.md).
    run gemv_flush_memset gemv "$set_dir/flush-memset" 4 --quick --flush memset $bw
    run gemv_flush_rotate gemv "$set_dir/flush-rotate" 4 --quick --flush rotate $bw
else
    bw=$(bw_flag "$qd")
fi

# 3. Each never-run version in a process of its own, after the proven ones.
for nv in $new_versions; do
    p=${nv%:*}
    v=${nv#*:}
    run "$p-v$v" "$p" "$set_dir/new/$p-v$v" --version "$v" $quick $bw
done

# ---------------------------------------------------------------- pack
smi_q "$set_dir/nvidia-smi-after.txt"
echo "elapsed_s: $(($(date +%s) - start_s)) (after the build)" >>"$prov"
echo "total_s: $(($(date +%s) - run_start_s)) (budget $budget)" >>"$prov"
[ -f "$smi_dead" ] && echo "nvidia-smi: a call timed out; later calls skipped" >>"$prov"
rm -f "$smi_dead"
echo "exit: $status" >>"$prov"
echo "== targets"
cat "$targets"
pack end || exit 1
echo "== wrote $out/kernels-set.tar.gz ($(wc -c <"$out/kernels-set.tar.gz") bytes)"
if [ $dry = 1 ]; then
    [ -z "$not_built" ] && [ $dry_bad = 0 ] && exit 0
    exit 1
fi
exit $status
