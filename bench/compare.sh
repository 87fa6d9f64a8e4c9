#!/usr/bin/env bash
# compare.sh: run one benchmark of bench/ with Aptus MPI, Debian's MPICH and
# Debian's Open MPI, interleaved (A B C A B C ...), and summarize.
#
# usage: bench/compare.sh [options] BENCH [BUILD_DIR] [-- BENCH_ARGS...]
#   BENCH        pt2pt_latency | pt2pt_bandwidth | msg_rate | coll_latency (a bench/*.c name)
#   BUILD_DIR    Aptus build tree (default: <repo>/build); its mpiexec and
#                bench/BENCH binary are used. Without an mpiexec there, the
#                Aptus column is skipped with a note.
#   BENCH_ARGS   passed to the benchmark, e.g.  -- -m 64K -r 5
# options:
#   -r ROUNDS    rounds (default 3; env ROUNDS)
#   -n NP        ranks (default 2)
#   -l LIBS      libraries, in order (default "aptus mpich openmpi")
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
#      the cores (rank r runs on the (r mod count)-th listed core).
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
cleanup() { if [ "$keep" = 1 ]; then echo "compare.sh: temp dir kept: $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
[ -n "$outdir" ] || outdir="$tmp/out"
mkdir -p "$outdir"

# --- cores -----------------------------------------------------------------
expand_cpus() { # "0-3,6" -> "0 1 2 3 6"
    local part out=""
    for part in $(echo "$1" | tr ',' ' '); do
        case $part in
        *-*) out="$out $(seq "${part%-*}" "${part#*-}" | tr '\n' ' ')" ;;
        *) out="$out $part" ;;
        esac
    done
    echo $out
}
cpus=${BENCH_CPUS:-$(expand_cpus "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)")}
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

# Wrapper: pin.sh RANKVAR... -- program args
cat >"$tmp/pin.sh" <<EOF
#!/bin/sh
cpus="$cpus"
ncpus=$ncpus
r=""
while [ \$# -gt 0 ] && [ "\$1" != "--" ]; do
    eval "v=\\\${\$1:-}"
    if [ -z "\$r" ] && [ -n "\$v" ]; then r=\$v; fi
    shift
done
shift
if [ -z "\$r" ]; then
    echo "pin.sh: no rank found in the environment; refusing to run unpinned" >&2
    exit 97
fi
i=\$(( r % ncpus + 1 ))
cpu=\$(echo \$cpus | cut -d' ' -f\$i)
echo "pin.sh: rank \$r -> cpu \$cpu" >&2
exec taskset -c "\$cpu" "\$@"
EOF
chmod +x "$tmp/pin.sh"

# --- libraries ---------------------------------------------------------------
is_root=0
[ "$(id -u)" = 0 ] && is_root=1
apt_updated=0
ensure_pkgs() { # ensure_pkgs CMD... -- PKG...
    local cmds=() pkgs=() missing=0 c
    while [ "$1" != "--" ]; do cmds+=("$1"); shift; done
    shift
    pkgs=("$@")
    for c in "${cmds[@]}"; do command -v "$c" >/dev/null || missing=1; done
    [ $missing = 0 ] && return 0
    if [ $is_root = 1 ] && command -v apt-get >/dev/null; then
        echo "compare.sh: installing ${pkgs[*]}" >&2
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >"$tmp/apt.log" 2>&1; then
            if [ $apt_updated = 0 ]; then
                apt_updated=1
                apt-get update -q >>"$tmp/apt.log" 2>&1
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >>"$tmp/apt.log" 2>&1
            fi
        fi
    fi
    for c in "${cmds[@]}"; do
        command -v "$c" >/dev/null || { echo "compare.sh: $c not found (packages: ${pkgs[*]})" >&2; return 1; }
    done
}

cflags=${CFLAGS:--O2}
declare -A launch note label
active=()
for lib in $libs; do
    case $lib in
    aptus)
        mpiexec=${APTUS_MPIEXEC:-}
        if [ -z "$mpiexec" ]; then
            for c in "$build/tools/mpiexec/mpiexec" "$build/mpiexec/mpiexec" "$build/bin/mpiexec" "$build/mpiexec"; do
                [ -f "$c" ] && [ -x "$c" ] && { mpiexec=$c; break; }
            done
        fi
        if [ -z "$mpiexec" ] && [ -d "$build" ]; then
            mpiexec=$(find "$build" -maxdepth 3 -name mpiexec -type f -perm -u+x 2>/dev/null | head -n 1)
        fi
        if [ -z "$mpiexec" ]; then
            note[aptus]="skipped: no mpiexec in build dir $build (build Aptus first)"
            continue
        fi
        bin="$build/bench/$bench"
        if [ ! -x "$bin" ] && command -v cmake >/dev/null; then
            cmake --build "$build" --target "$bench" >"$tmp/aptus-build.log" 2>&1 || true
        fi
        if [ ! -x "$bin" ]; then
            note[aptus]="skipped: $bin not built (cmake --build $build --target $bench)"
            continue
        fi
        launch[aptus]="$mpiexec -n $np $(pin PMI_RANK MPI_LOCALRANKID) $bin"
        ;;
    mpich)
        if ! ensure_pkgs mpicc.mpich mpiexec.mpich -- mpich libmpich-dev; then
            note[mpich]="skipped: MPICH not installed (apt-get install mpich libmpich-dev)"
            continue
        fi
        mkdir -p "$tmp/mpich"
        if ! mpicc.mpich $cflags -std=c11 -o "$tmp/mpich/$bench" "$src" >"$tmp/mpich/build.log" 2>&1; then
            note[mpich]="skipped: compile failed: $(tail -n 3 "$tmp/mpich/build.log" | tr '\n' ' ')"
            continue
        fi
        launch[mpich]="mpiexec.mpich -bind-to none -n $np $(pin PMI_RANK) $tmp/mpich/$bench"
        ;;
    openmpi)
        if ! ensure_pkgs mpicc.openmpi mpiexec.openmpi -- openmpi-bin libopenmpi-dev; then
            note[openmpi]="skipped: Open MPI not installed (apt-get install openmpi-bin libopenmpi-dev)"
            continue
        fi
        mkdir -p "$tmp/openmpi"
        if ! mpicc.openmpi $cflags -std=c11 -o "$tmp/openmpi/$bench" "$src" >"$tmp/openmpi/build.log" 2>&1; then
            note[openmpi]="skipped: compile failed: $(tail -n 3 "$tmp/openmpi/build.log" | tr '\n' ' ')"
            continue
        fi
        extra="--bind-to none"
        [ $is_root = 1 ] && extra="$extra --allow-run-as-root"
        [ "$np" -gt "$ncpus" ] && extra="$extra --oversubscribe"
        launch[openmpi]="mpiexec.openmpi $extra -n $np $(pin OMPI_COMM_WORLD_RANK PMIX_RANK) $tmp/openmpi/$bench"
        ;;
    *)
        echo "compare.sh: unknown library '$lib' (aptus, mpich, openmpi)" >&2
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
        timeout "$run_limit" ${launch[$lib]} "${bench_args[@]}" >"$out" 2>"$outdir/$lib.round$r.err"
        rc=$?
        cat "$out"
        if [ $rc -ne 0 ]; then
            failed=1
            echo "!!! $lib round $r failed (exit $rc); stderr:"
            tail -n 20 "$outdir/$lib.round$r.err" | sed 's/^/!!!   /'
            mv "$out" "$out.failed"
        fi
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
awk -v libs="${active[*]}" '
function libof(path,   n, p) { n = split(path, p, "/"); sub(/\.round[0-9]+\.txt$/, "", p[n]); return p[n] }
function isort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function median(s,   a, n, i) { n = split(s, a, " "); for (i = 1; i <= n; i++) a[i] += 0; isort(a, n); return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
FNR == 1 { lib = libof(FILENAME); table = "" }
/^# benchmark:/ { if (!(lib in libname)) { s = $0; sub(/.*library: /, "", s); sub(/ \| .*/, "", s); libname[lib] = s } next }
/^# table:/ {
    table = $3; unit = ""; better = "lower"
    for (i = 4; i < NF; i++) { if ($i == "unit:") unit = $(i + 1); if ($i == "better:") better = $(i + 1) }
    if (!(table in tunit)) { ntables++; torder[ntables] = table; tunit[table] = unit; tbetter[table] = better }
    next
}
/^#/ || NF < 4 || table == "" { next }
{
    size = $1; key = table SUBSEP size
    if (!(key in seen)) { seen[key] = 1; nsz[table]++; szorder[table, nsz[table]] = size }
    k = key SUBSEP lib
    b = $3 + 0
    if (!(k in best)) best[k] = b
    else if ((tbetter[table] == "higher" && b > best[k]) || (tbetter[table] != "higher" && b < best[k])) best[k] = b
    meds[k] = meds[k] " " $4; nrounds[k]++
}
END {
    nl = split(libs, L, " ")
    for (i = 1; i <= nl; i++) if (L[i] in libname) printf "# %-8s = %s\n", L[i], libname[L[i]]
    for (t = 1; t <= ntables; t++) {
        table = torder[t]
        printf "\n# table: %s  unit: %s  better: %s\n", table, tunit[table], tbetter[table]
        printf "# %10s", "size"
        for (i = 1; i <= nl; i++) printf " %15s %15s", L[i] "_best", L[i] "_median"
        printf "\n"
        for (s = 1; s <= nsz[table]; s++) {
            size = szorder[table, s]
            printf "  %10s", size
            for (i = 1; i <= nl; i++) {
                k = table SUBSEP size SUBSEP L[i]
                if (k in best) {
                    fmt = (tunit[table] == "us") ? " %15.3f %15.3f" : (tunit[table] == "msgs/s" ? " %15.0f %15.0f" : " %15.2f %15.2f")
                    printf fmt, best[k], median(meds[k])
                } else printf " %15s %15s", "-", "-"
            }
            printf "\n"
        }
    }
}' "${files[@]}"
[ "$outdir" != "$tmp/out" ] && echo "# outputs kept in $outdir"
exit $failed
