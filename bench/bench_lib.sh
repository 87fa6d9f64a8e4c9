# bench_lib.sh: shell helpers shared by bench/compare.sh and bench/net_compare.sh (sourced by
# bash, not run). Before using them the caller sets
#   bl_name   its name, for messages ("compare.sh")
#   tmp       a scratch directory of its own (package logs go there)
# and may set cflags (default -O2) for bl_mpicc. Every function name starts with bl_.

bl_is_root=0
[ "$(id -u)" = 0 ] && bl_is_root=1
bl_apt_updated=0

# "0-3,6" -> "0 1 2 3 6"
bl_expand_cpus() {
    local part out=""
    for part in $(echo "$1" | tr ',' ' '); do
        case $part in
        *-*) out="$out $(seq "${part%-*}" "${part#*-}" | tr '\n' ' ')" ;;
        *) out="$out $part" ;;
        esac
    done
    echo $out
}

# The cores the benchmarks may use: $BENCH_CPUS, else those this process may run on.
bl_cpus() {
    echo "${BENCH_CPUS:-$(bl_expand_cpus "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)")}"
}

# bl_write_pin FILE CPUS: writes the pinning wrapper FILE, called as
#   FILE RANKVAR... -- program args
# It takes the rank from the first of the RANKVARs set in its environment and execs
# `taskset -c CPU program args` with CPU the (rank mod count)-th of CPUS; it refuses to run
# without a rank. On stderr: "pin.sh: rank R -> cpu C", followed by " netns NAME" when the
# process runs in a named network namespace. With CPUS "none" it only reports
# ("-> cpu none") and execs the program unpinned.
bl_write_pin() {
    local file=$1 cpus=$2
    cat >"$file" <<EOF
#!/bin/sh
cpus="$cpus"
ncpus=$(echo $cpus | wc -w)
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
ns=\$(ip netns identify \$\$ 2>/dev/null)
if [ "\$cpus" = none ]; then
    echo "pin.sh: rank \$r -> cpu none\${ns:+ netns \$ns}" >&2
    exec "\$@"
fi
i=\$(( r % ncpus + 1 ))
cpu=\$(echo \$cpus | cut -d' ' -f\$i)
echo "pin.sh: rank \$r -> cpu \$cpu\${ns:+ netns \$ns}" >&2
exec taskset -c "\$cpu" "\$@"
EOF
    chmod +x "$file"
}

# bl_ensure_pkgs CMD... -- PKG...: succeeds when every CMD is found; as root, installs the
# PKGs with apt-get first when one is missing.
bl_ensure_pkgs() {
    local cmds=() pkgs=() missing=0 c
    while [ "$1" != "--" ]; do cmds+=("$1"); shift; done
    shift
    pkgs=("$@")
    for c in "${cmds[@]}"; do command -v "$c" >/dev/null || missing=1; done
    [ $missing = 0 ] && return 0
    if [ $bl_is_root = 1 ] && command -v apt-get >/dev/null; then
        echo "$bl_name: installing ${pkgs[*]}" >&2
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >"$tmp/apt.log" 2>&1; then
            if [ $bl_apt_updated = 0 ]; then
                bl_apt_updated=1
                apt-get update -q >>"$tmp/apt.log" 2>&1
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >>"$tmp/apt.log" 2>&1
            fi
        fi
    fi
    for c in "${cmds[@]}"; do
        command -v "$c" >/dev/null || { echo "$bl_name: $c not found (packages: ${pkgs[*]})" >&2; return 1; }
    done
}

# bl_aptus_mpiexec BUILD: prints the Aptus launcher ($APTUS_MPIEXEC, else the one of the build
# tree BUILD); prints nothing when there is none.
bl_aptus_mpiexec() {
    local build=$1 c
    if [ -n "${APTUS_MPIEXEC:-}" ]; then echo "$APTUS_MPIEXEC"; return; fi
    for c in "$build/tools/mpiexec/mpiexec" "$build/mpiexec/mpiexec" "$build/bin/mpiexec" "$build/mpiexec"; do
        [ -f "$c" ] && [ -x "$c" ] && { echo "$c"; return; }
    done
    [ -d "$build" ] && find "$build" -maxdepth 3 -name mpiexec -type f -perm -u+x 2>/dev/null | head -n 1
}

# bl_aptus_bench BUILD NAME: prints the path of Aptus' build of bench/NAME.c, building the
# target when it is missing; on failure prints nothing and returns 1.
bl_aptus_bench() {
    local bin="$1/bench/$2"
    if [ ! -x "$bin" ] && command -v cmake >/dev/null; then
        cmake --build "$1" --target "$2" >"$tmp/aptus-build-$2.log" 2>&1 || true
    fi
    [ -x "$bin" ] || return 1
    echo "$bin"
}

# bl_mpich_ok / bl_openmpi_ok: Debian's MPICH / Open MPI is there (installed when missing and
# root); otherwise prints the reason to skip it.
bl_mpich_ok() {
    bl_ensure_pkgs mpicc.mpich mpiexec.mpich -- mpich libmpich-dev ||
        { echo "skipped: MPICH not installed (apt-get install mpich libmpich-dev)"; return 1; }
}
bl_openmpi_ok() {
    bl_ensure_pkgs mpicc.openmpi mpiexec.openmpi -- openmpi-bin libopenmpi-dev ||
        { echo "skipped: Open MPI not installed (apt-get install openmpi-bin libopenmpi-dev)"; return 1; }
}

# bl_mpicc MPICC SRC OUT: compiles a benchmark with another MPI's compiler wrapper ($cflags,
# default -O2, and -std=c11); on failure prints the reason to skip it and returns 1.
bl_mpicc() {
    mkdir -p "$(dirname "$3")"
    if ! "$1" ${cflags:--O2} -std=c11 -o "$3" "$2" >"$3.build.log" 2>&1; then
        echo "skipped: compile failed: $(tail -n 3 "$3.build.log" | tr '\n' ' ')"
        return 1
    fi
}

# bl_run_one LIMIT OUT ERR TITLE cmd...: runs cmd with a time limit, stdout to OUT and stderr
# to ERR; shows OUT unless BL_QUIET=1; on failure shows ERR's tail, renames OUT to OUT.failed
# and returns 1. With BL_STALL=S, a run whose OUT has not grown for S seconds is stopped as well
# (a job that hangs, e.g. in MPI_Finalize, after printing its results): OUT keeps its rows and
# the return is 2.
# The command runs in the background (timeout makes it a process group of its own, which a
# terminal's Ctrl-C does not reach) and is waited for, so that the caller's INT/TERM trap runs at
# once; the trap should call bl_stop_run.
bl_run_pid=
bl_run_one() {
    local limit=$1 out=$2 err=$3 title=$4 rc size last=-1 since
    shift 4
    timeout "$limit" "$@" >"$out" 2>"$err" </dev/null &
    bl_run_pid=$!
    if [ -n "${BL_STALL:-}" ]; then
        since=$SECONDS
        while kill -0 "$bl_run_pid" 2>/dev/null; do
            sleep 1
            size=$(stat -c %s "$out" 2>/dev/null || echo 0)
            [ "$size" != "$last" ] && { last=$size; since=$SECONDS; }
            if [ $((SECONDS - since)) -ge "$BL_STALL" ]; then
                kill -TERM "$bl_run_pid" 2>/dev/null
                wait "$bl_run_pid"
                bl_run_pid=
                [ "${BL_QUIET:-0}" = 1 ] || cat "$out"
                echo "!!! $title: no output for $BL_STALL s, stopped (hung?); the rows it printed are kept; stderr:"
                tail -n 8 "$err" | sed 's/^/!!!   /'
                return 2
            fi
        done
    fi
    wait "$bl_run_pid"
    rc=$?
    bl_run_pid=
    [ "${BL_QUIET:-0}" = 1 ] || cat "$out"
    if [ $rc -ne 0 ]; then
        [ $rc = 124 ] && echo "!!! $title timed out after $limit s"
        echo "!!! $title failed (exit $rc); stderr:"
        tail -n 20 "$err" | sed 's/^/!!!   /'
        mv "$out" "$out.failed"
        return 1
    fi
}

# bl_stop_run: ends the command of bl_run_one that runs now, if any (timeout passes the TERM on).
bl_stop_run() {
    [ -n "$bl_run_pid" ] && kill -TERM "$bl_run_pid" 2>/dev/null
    bl_run_pid=
    return 0
}

# bl_summary "KEY..." FILE...: the side-by-side summary of benchmark outputs named
# DIR/KEY.roundN.txt (the output format of bench/bench_common.h): per table and size, for each
# KEY, the best of the per-round bests and the median of the per-round medians. Data rows are
# the lines after a "# table:" line whose first field is a number.
bl_summary() {
    local keys=$1
    shift
    awk -v libs="$keys" '
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
/^#/ || NF < 4 || table == "" || $1 !~ /^[0-9]+$/ { next }
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
    for (i = 1; i <= nl; i++) { W[i] = length(L[i]) + 7; if (W[i] < 15) W[i] = 15 }
    for (i = 1; i <= nl; i++) if (L[i] in libname) printf "# %-8s = %s\n", L[i], libname[L[i]]
    for (t = 1; t <= ntables; t++) {
        table = torder[t]
        printf "\n# table: %s  unit: %s  better: %s\n", table, tunit[table], tbetter[table]
        printf "# %10s", "size"
        for (i = 1; i <= nl; i++) printf " %*s %*s", W[i], L[i] "_best", W[i], L[i] "_median"
        printf "\n"
        for (s = 1; s <= nsz[table]; s++) {
            size = szorder[table, s]
            printf "  %10s", size
            for (i = 1; i <= nl; i++) {
                k = table SUBSEP size SUBSEP L[i]
                if (k in best) {
                    fmt = (tunit[table] == "us") ? " %*.3f %*.3f" : (tunit[table] == "msgs/s" ? " %*.0f %*.0f" : " %*.2f %*.2f")
                    printf fmt, W[i], best[k], W[i], median(meds[k])
                } else printf " %*s %*s", W[i], "-", W[i], "-"
            }
            printf "\n"
        }
    }
}' "$@"
}
