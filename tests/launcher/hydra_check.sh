#!/bin/sh
# Runs an MPI job under MPICH's Hydra launcher (Debian's mpiexec.mpich) and checks how it ended.
#
#   hydra_check.sh [--repeat N] [--exit CODE | --nonzero] [--grep TEXT]... [--timeout S]
#                  -- MPIEXEC-ARGUMENTS...
#
# Runs `mpiexec.mpich -launcher fork MPIEXEC-ARGUMENTS` (N times, back to back, with --repeat)
# and requires of every run:
#   - the exit status: 0 by default, CODE with --exit, anything but 0 (and not a timeout) with
#     --nonzero or --exit;
#   - the output (stdout and stderr) contains every TEXT (fixed strings);
#   - no process of the job is left (a process that has the job's tag in its environment);
#   - no /dev/shm/aptus-* file of the job is left. Hydra names a job's key-value space, which
#     Aptus uses as the job id in its segment names, kvs_<pid of mpiexec>_..., so the job's
#     files are /dev/shm/aptus-kvs_<pid>_*, whatever other tests running at the same time do.
# Exit status: 0 when every run passed, 77 when mpiexec.mpich is not installed (CTest's
# SKIP_RETURN_CODE), 1 otherwise. Hydra starts local ranks with fork (no ssh) and runs as root
# without any flag.
set -u

MPIEXEC=${APTUS_HYDRA_MPIEXEC:-mpiexec.mpich}
repeat=1
want=0
timeout=120
greps=""
while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --exit) want=$2; shift 2 ;;
    --nonzero) want=nonzero; shift ;;
    --grep) greps="$greps
$2"; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "hydra_check.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "hydra_check.sh: no mpiexec arguments" >&2; exit 2; }
if ! command -v "$MPIEXEC" >/dev/null 2>&1; then
    echo "hydra_check.sh: $MPIEXEC is not installed (Debian package mpich): skipped"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/aptus-hydra.XXXXXX") || exit 2
OUT=$WORK/out
TAG="lt$$x$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
trap 'rm -rf "$WORK"' EXIT

# Processes whose environment carries the tag (every process of the job gets it from mpiexec).
tagged() {
    for e in /proc/[0-9]*/environ; do
        if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "HYDRA_CHECK_TAG=$TAG"; then
            p=${e#/proc/}
            echo "${p%/environ}"
        fi
    done
}

run=0
while [ $run -lt "$repeat" ]; do
    run=$((run + 1))
    # The shell writes its pid and becomes mpiexec (exec, and env's exec): $WORK/pid is mpiexec's.
    rm -f "$WORK/pid"
    timeout -k 10 "$timeout" sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$WORK/pid" \
        env HYDRA_CHECK_TAG="$TAG" "$MPIEXEC" -launcher fork "$@" >"$OUT" 2>&1
    rc=$?
    pid=$(cat "$WORK/pid" 2>/dev/null)
    cat "$OUT"
    bad=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        bad="$bad; timed out after ${timeout}s (exit $rc)"
    elif [ "$want" = nonzero ]; then
        [ $rc -ne 0 ] || bad="$bad; exit status 0, expected non-zero"
    elif [ $rc -ne "$want" ]; then
        bad="$bad; exit status $rc, expected $want"
    fi
    if [ -n "$greps" ]; then
        while IFS= read -r pat; do
            [ -z "$pat" ] && continue
            grep -qF -- "$pat" "$OUT" || bad="$bad; output lacks \"$pat\""
        done <<EOF
$greps
EOF
    fi
    # Processes of the job: Hydra waits for them, so give stragglers a few seconds at most.
    i=0
    left=$(tagged)
    while [ -n "$left" ] && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
        left=$(tagged)
    done
    if [ -n "$left" ]; then
        bad="$bad; processes left behind:$(for p in $left; do printf ' %s' "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done)"
        for p in $left; do kill -KILL "$p" 2>/dev/null; done
    fi
    [ -n "$pid" ] || { echo "hydra_check.sh: mpiexec did not start" >&2; exit 1; }
    files=$(ls /dev/shm 2>/dev/null | grep "^aptus-kvs_${pid}_")
    if [ -n "$files" ]; then
        bad="$bad; shared memory left behind: $(echo $files)"
        for f in $files; do rm -f "/dev/shm/$f"; done
    fi
    if [ -n "$bad" ]; then
        echo "hydra_check.sh: FAIL (run $run of $repeat, mpiexec.mpich $*)${bad#;}" >&2
        exit 1
    fi
done
echo "hydra_check.sh: ok ($repeat run(s), exit $rc)"
exit 0
