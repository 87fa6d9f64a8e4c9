#!/bin/sh
# The statistics files (APTUS_STATS_FILE) and aptus-report on a real job: every rank writes its
# file, aptus-report draws the picture from them and its numbers (--json-out) are those of the
# `[aptus stats]` lines the same run printed (APTUS_STATS=1 too); check_report.py compares them.
#
#   report_test.sh --report TOOL --mpiexec PATH --np N --ppn K [--netns-sh PATH] [--env VAR=VAL ...]
#                  [--want-channel CH ...] [--more] -- prog [args...]
#
# Without --netns-sh the job runs on this machine, K ranks per simulated node (mpiexec --ppn);
# with it, on N/K network namespaces (scripts/netns.sh run; mpiexec --launcher netns), root
# needed. --want-channel: a channel the run must have used. --more also checks, with 2 ranks:
# a file that cannot be written is reported on stderr (naming the variable and the file) and the
# job still ends well, without statistics lines when APTUS_STATS is not set; the %r and %h
# patterns; no file when the variable is empty; an unknown %-pattern stops MPI_Init.
# matplotlib comes from `aptus-report --setup` (a virtual environment, PyPI): where it cannot be
# had, the picture is left out and, if every other check passed, the test is skipped (77).
set -u
REPORT= MPIEXEC= NP= PPN= NETNS_SH= MORE=0 WANT= ENVS=
usage() { echo "report_test.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --report) REPORT=$2; shift 2 ;;
    --mpiexec) MPIEXEC=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --ppn) PPN=$2; shift 2 ;;
    --netns-sh) NETNS_SH=$2; shift 2 ;;
    --env) ENVS="$ENVS $2"; shift 2 ;;
    --want-channel) WANT="$WANT --want-channel $2"; shift 2 ;;
    --more) MORE=1; shift ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
    esac
done
[ -n "$REPORT" ] && [ -n "$MPIEXEC" ] && [ -n "$NP" ] && [ -n "$PPN" ] && [ $# -gt 0 ] || usage "missing arguments"
HERE=$(cd "$(dirname "$0")" && pwd)
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
MPIEXEC=$(abs "$MPIEXEC") REPORT=$(abs "$REPORT")
prog=$(abs "$1")
shift
set -- "$prog" "$@"
T=$(mktemp -d "${TMPDIR:-/tmp}/aptus-report-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
STATUS=0
fail() { echo "report_test.sh: FAIL: $*"; STATUS=1; }
show() { echo "--- $1"; cat "$1"; }

# --- matplotlib (idempotent: at once when the virtual environment is there) ----------------------
IMG=1
python3 "$REPORT" --setup --quiet >"$T/setup" 2>&1 || { show "$T/setup"; IMG=0; }

# --- the job -------------------------------------------------------------------------------------
mkdir "$T/stats"
NODES=$((NP / PPN))
# shellcheck disable=SC2086
if [ -n "$NETNS_SH" ]; then
    env APTUS_STATS=1 APTUS_STATS_FILE="$T/stats/job" $ENVS sh "$NETNS_SH" run -n "$NODES" -- sh -c \
        'm=$0 k=$1 n=$2; shift 2; exec "$m" --launcher netns --hosts "$APTUS_NETNS_HOSTS" -ppn "$k" -n "$n" --timeout 120 "$@"' \
        "$MPIEXEC" "$PPN" "$NP" "$@" >"$T/out" 2>&1
    rc=$?
else
    env APTUS_STATS=1 APTUS_STATS_FILE="$T/stats/job" $ENVS "$MPIEXEC" -n "$NP" --ppn "$PPN" --timeout 120 "$@" \
        >"$T/out" 2>&1
    rc=$?
fi
[ $rc -eq 77 ] && { cat "$T/out"; echo "report_test.sh: SKIP: no network namespaces here"; exit 77; }
[ $rc -eq 0 ] || { show "$T/out"; fail "the job ended with $rc"; exit 1; }
grep -q '^\[aptus stats\]' "$T/out" || { show "$T/out"; fail "APTUS_STATS=1 printed no statistics"; exit 1; }
ls "$T/stats"

# --- the report and the comparison ---------------------------------------------------------------
if [ $IMG -eq 1 ]; then
    python3 "$REPORT" -o "$T/report.png" --svg --json-out "$T/data.json" "$T/stats/job" >"$T/summary" 2>&1 ||
        { show "$T/summary"; fail "aptus-report failed"; }
    pics="--png $T/report.png --svg $T/report.svg"
else
    python3 "$REPORT" --no-image --json-out "$T/data.json" "$T/stats/job" >"$T/summary" 2>&1 ||
        { show "$T/summary"; fail "aptus-report --no-image failed"; }
    pics=
fi
cat "$T/summary"
extra=
[ -n "$NETNS_SH" ] && extra="--distinct-netns"
# shellcheck disable=SC2086
python3 "$HERE/check_report.py" --stats "$T/out" --data "$T/data.json" --files "$T/stats/job" --np "$NP" \
    --nodes "$NODES" $extra $pics $WANT || { show "$T/out"; fail "the report does not agree with the statistics lines"; }

# --- the variable's other cases ------------------------------------------------------------------
if [ $MORE -eq 1 ]; then
    prog=$1
    shift
    # A file that cannot be written: said on stderr, the job ends well; no lines without APTUS_STATS.
    env -u APTUS_STATS APTUS_STATS_FILE="$T/none/x" "$MPIEXEC" -n 2 --timeout 60 "$prog" "$@" >"$T/o1" 2>"$T/e1" ||
        { show "$T/e1"; fail "a job whose statistics file cannot be written failed"; }
    grep -q "APTUS_STATS_FILE: cannot write the statistics file $T/none/x.1.json: .*No such file or directory" "$T/e1" ||
        { show "$T/e1"; fail "no message naming APTUS_STATS_FILE and $T/none/x.1.json"; }
    grep -q '^\[aptus stats\]' "$T/o1" && { show "$T/o1"; fail "statistics lines printed without APTUS_STATS=1"; }
    # %r and %h in the name
    mkdir "$T/pat"
    host=$(hostname)
    env -u APTUS_STATS APTUS_STATS_FILE="$T/pat/r%r-%h.json" "$MPIEXEC" -n 2 --timeout 60 "$prog" "$@" >"$T/o2" 2>&1 ||
        { show "$T/o2"; fail "the job with a pattern failed"; }
    for r in 0 1; do
        [ -s "$T/pat/r$r-$host.json" ] || { ls "$T/pat"; fail "no file r$r-$host.json for APTUS_STATS_FILE=r%r-%h.json"; }
    done
    # ... and the variable alone turned the statistics on: the messages were counted.
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["totals"]["messages"] > 0 and
        sum(sum(p["messages"].values()) for p in d["peers"]) == d["totals"]["messages"]))' "$T/pat/r0-$host.json" ||
        fail "APTUS_STATS_FILE alone did not turn the statistics on (no message counted in r0-$host.json)"
    # Empty: no file (the job runs in an empty directory)
    mkdir "$T/cwd"
    (cd "$T/cwd" && env APTUS_STATS=1 APTUS_STATS_FILE= "$MPIEXEC" -n 2 --timeout 60 "$prog" "$@" >"$T/o3" 2>&1) ||
        { show "$T/o3"; fail "the job with APTUS_STATS_FILE empty failed"; }
    [ -z "$(ls -A "$T/cwd")" ] || fail "files written with APTUS_STATS_FILE empty: $(ls -A "$T/cwd")"
    # An unknown pattern stops the start-up, with the variable named.
    env APTUS_STATS_FILE="$T/x%q" "$MPIEXEC" -n 2 --timeout 60 "$prog" "$@" >"$T/o4" 2>&1 &&
        fail "APTUS_STATS_FILE=x%q was accepted"
    grep -q "APTUS_STATS_FILE=$T/x%q: '%q' is not a pattern" "$T/o4" || { show "$T/o4"; fail "no message for %q"; }
    [ $STATUS -eq 0 ] && echo "report_test.sh: unwritable file reported, %r/%h, empty and unknown patterns: ok"
fi

[ $STATUS -eq 0 ] || exit 1
if [ $IMG -eq 0 ]; then
    echo "report_test.sh: SKIP: the numbers agree, but matplotlib could not be had to draw the picture"
    exit 77
fi
echo "report_test.sh: ok"
