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
# Environment: NB_REVISION (the code's revision; else git, else ./REVISION),
# NB_DEADLINE_S (seconds for the runs, counted from the end of the build,
# default 330), NB_BUILD_LIMIT_S (the whole build's limit, retries
# included, default 240), NB_BUILD_JOBS (parallel compiles, default nproc),
# NB_PACK_TO (a second place for the archive, e.g.
# $OUT/kernels-set.tar.gz), NB_PACK_RESERVE_S (seconds kept for packing at
# the deadline, default 15), NB_MIN_START_S (a program needs this many
# seconds left to start, default 10), NB_SASS_CHECK=1 (check_sass.sh on the
# build into set/sass-check.txt), NB_TOOLS_MISSING (what the caller found
# missing, recorded).
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

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
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
nvcc_version=$( (${NVCC:-nvcc} --version 2>/dev/null || echo "nvcc not found") | tail -n 1)
{
    echo "revision: $rev"
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname 2>/dev/null || echo unknown)"
    echo "quick: $([ -n "$quick" ] && echo yes || echo no)"
    echo "dry_run: $([ $dry = 1 ] && echo yes || echo no)"
    echo "nvcc: $nvcc_version"
    echo "deadline_s: ${NB_DEADLINE_S:-330} (from the end of the build)"
    echo "tools_missing: ${NB_TOOLS_MISSING:-none}"
    echo "gpu: $([ $have_gpu = 1 ] && nvidia-smi -L 2>/dev/null | head -n 1 || echo none)"
} >"$prov"

smi_q() { # file: nvidia-smi -q, or why not
    if [ $have_gpu = 1 ]; then
        timeout -k 2 20 nvidia-smi -q >"$1" 2>&1 || echo "nvidia-smi -q: failed or timed out" >>"$1"
    else echo "nvidia-smi unavailable: no GPU (dry run)" >"$1"; fi
}
clocks=$set_dir/clocks.tsv
echo "after	timestamp	sm_mhz	mem_mhz	power_w	temp_c	throttle_reasons" >"$clocks"
clocks_row() { # after-what
    if [ $have_gpu = 1 ]; then
        q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu
        row=$(timeout -k 2 10 nvidia-smi --query-gpu=$q,clocks_event_reasons.active --format=csv,noheader,nounits 2>/dev/null ||
            timeout -k 2 10 nvidia-smi --query-gpu=$q,clocks_throttle_reasons.active --format=csv,noheader,nounits 2>/dev/null ||
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
if [ $build_it = 1 ]; then
    echo "== build ($build)"
    jobs=${NB_BUILD_JOBS:-$(nproc 2>/dev/null || echo 4)}
    blim=${NB_BUILD_LIMIT_S:-240}
    build_end_s=$(($(date +%s) + blim))
    if [ $have_gpu = 1 ]; then
        # Binaries built elsewhere with other flags must not be taken as up to date.
        rm -f "$build"/kernels/*
        timeout -k 10 "$blim" make --no-print-directory -k -j"$jobs" B="$build" "$warn" kernels \
            NVCC_ARCH=-arch=native >>"$blog" 2>&1
        missing=
        for p in $programs; do [ -x "$build/kernels/$p" ] || missing="$missing $p"; done
        if [ -n "$missing" ]; then
            echo "native build left out:$missing; trying the default architectures" | tee -a "$blog"
            # One make for all of them (-k: each on its own), within what
            # is left of the build's limit.
            bleft=$((build_end_s - $(date +%s)))
            if [ $bleft -lt 5 ]; then
                echo "build limit of $blim s reached: not retried" | tee -a "$blog"
            else
                targets_missing=
                for p in $missing; do targets_missing="$targets_missing $build/kernels/$p"; done
                timeout -k 10 "$bleft" make --no-print-directory -k -j"$jobs" B="$build" "$warn" \
                    $targets_missing >>"$blog" 2>&1
            fi
        fi
    else
        timeout -k 10 "$blim" make --no-print-directory -k -j"$jobs" B="$build" "$warn" kernels >>"$blog" 2>&1
    fi
fi
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
    # The native build holds this card's architecture alone.
    sass_arch=
    if [ $have_gpu = 1 ]; then
        cap=$(timeout -k 2 10 nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
        case $cap in [0-9][0-9] | [0-9][0-9][0-9]) sass_arch=sm_$cap ;; esac
    fi
    timeout -k 5 60 kernels/check_sass.sh "$build" $sass_arch >"$set_dir/sass-check.txt" 2>&1
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

# The deadline counts from here: the build's time is its own limit.
start_s=$(date +%s)
deadline_s=$((start_s + ${NB_DEADLINE_S:-330}))
reserve_s=${NB_PACK_RESERVE_S:-15}
min_start_s=${NB_MIN_START_S:-10}

# ---------------------------------------------------------------- run
# Per-program limits, sized from the work at full size on an H200 (estimates
# in kernels/README.md) with room to spare; quick runs take a fraction.
limit_of() {
    case $1 in
    bandwidth) echo 90 ;;
    launch) echo 60 ;;
    gemm_sweep) echo 150 ;;
    gemv) echo 150 ;;
    gemv_flush_memset | gemv_flush_rotate) echo 45 ;;
    decode_attention) echo 150 ;;
    lora_bgmv) echo 90 ;;
    step_graph) echo 60 ;;
    *) echo 60 ;;
    esac
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
    left=$((deadline_s - now - reserve_s)) # kept for packing
    lim=$(limit_of "$name")
    if [ $left -lt "$min_start_s" ]; then
        echo "NOT MEASURED: $name: the global deadline was reached before it started" | tee -a "$targets"
        status=1
        dry_bad=1
        return
    fi
    [ -n "$quick" ] && [ $lim -gt 60 ] && lim=60 # quick sizes: a fraction of the work
    [ $lim -gt $left ] && lim=$left
    mkdir -p "$dir"
    echo "== $name (limit ${lim} s)"
    log=$set_dir/logs/$name.log
    # "$@" first: a version number must be argv[1] (llm.c style).
    timeout -k 5 "$lim" "$build/kernels/$bin" "$@" --out "$dir" $quick >"$log" 2>&1
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

run bandwidth bandwidth "$set_dir"
bw=
[ -f "$set_dir/bandwidth.tsv" ] && bw="--bandwidth $set_dir/bandwidth.tsv"
run launch launch "$set_dir"
lat=
[ -f "$set_dir/launch.tsv" ] && lat="--launch $set_dir/launch.tsv"
run gemm_sweep gemm_sweep "$set_dir" $bw $lat
run gemv gemv "$set_dir" $bw
run lora_bgmv lora_bgmv "$set_dir" $bw
run step_graph step_graph "$set_dir"
# One shape timed the other two ways of emptying the L2, to settle which
# the figures should use (the main run reads a buffer; see kernels/README.md).
if [ -z "$quick" ]; then
    run gemv_flush_memset gemv "$set_dir/flush-memset" 4 --quick --flush memset $bw
    run gemv_flush_rotate gemv "$set_dir/flush-rotate" 4 --quick --flush rotate $bw
fi
# The longest program last: a deadline it meets costs no other program.
run decode_attention decode_attention "$set_dir" $bw

# ---------------------------------------------------------------- pack
smi_q "$set_dir/nvidia-smi-after.txt"
echo "elapsed_s: $(($(date +%s) - start_s)) (after the build)" >>"$prov"
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
