#!/bin/sh
# Runs an MPI job (or any command) and checks how it ended and what it printed.
#   expect_exit.sh [--exit N | --nonzero] [--grep TEXT]... [--error TEXT]... [--error-once TEXT]...
#                  [--each-rank N TEXT]... [--stats-any TEXT]... [--stats-none TEXT]...
#                  -- command [args...]
# --exit N           the command's exit status must be exactly N
# --nonzero          the exit status must be non-zero (the default)
# --grep TEXT        some line of the combined stdout+stderr contains TEXT (a fixed string);
#                    the tests' own failure messages ("FAIL file:line: ...", tests/mpi/mtest.h)
#                    do not count
# --error TEXT       a message of the library itself, a line starting with "Aptus MPI: ",
#                    contains TEXT: what a test expecting a fatal error must match, so that the
#                    program's own words (a failure message naming the same call) cannot pass it
# --error-once TEXT  as --error, and exactly one such line contains TEXT (a message that every
#                    rank would find is printed once, not once per rank)
# --each-rank N TEXT every rank 0..N-1 printed a statistics line ("[aptus stats] rank R: ...",
#                    APTUS_STATS=1) that contains TEXT: proves a path was taken on every rank,
#                    not just on one of them
# --stats-any TEXT   some rank printed a statistics line that contains TEXT
# --stats-none TEXT  no rank printed a statistics line that contains TEXT
# A timeout always fails the check: exit status 124 (what mpiexec --timeout and timeout(1)
# return, unless --exit 124 asks for it) or the launcher's timeout message in the output. A job
# that hangs has not shown the behaviour its test expects.
# The command's output is passed through so that CTest logs show it.
want=nonzero
checks=$(mktemp) || exit 2
out=$(mktemp) || exit 2
trap 'rm -f "$checks" "$out"' EXIT
usage() { echo "expect_exit.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --exit) [ $# -ge 2 ] || usage "--exit needs a value"; want=$2; shift 2 ;;
    --nonzero) want=nonzero; shift ;;
    --grep | --error | --error-once | --stats-any | --stats-none)
        [ $# -ge 2 ] || usage "$1 needs a text"
        printf '%s\n%s\n' "${1#--}" "$2" >>"$checks"; shift 2 ;;
    --each-rank)
        [ $# -ge 3 ] || usage "--each-rank needs a rank count and a text"
        case "$2" in '' | *[!0-9]*) usage "--each-rank: '$2' is not a rank count" ;; esac
        printf 'each-rank %s\n%s\n' "$2" "$3" >>"$checks"; shift 3 ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
    esac
done
[ $# -gt 0 ] || usage "no command"

"$@" >"$out" 2>&1
rc=$?
cat "$out"
status=0
fail() {
    echo "expect_exit.sh: FAIL: $*" >&2
    status=1
}
if [ "$want" != 124 ]; then
    if [ $rc -eq 124 ]; then
        fail "the job timed out (exit 124): a hang is not the expected ending"
    elif grep -q '^mpiexec: timeout: job did not finish' "$out"; then
        fail "the job timed out (the launcher's timeout message)"
    fi
fi
if [ "$want" = nonzero ]; then
    [ $rc -ne 0 ] || fail "command exited 0, expected a non-zero exit"
elif [ $rc -ne "$want" ]; then
    fail "command exited $rc, expected $want"
fi
while IFS= read -r kind && IFS= read -r pat; do
    case "$kind" in
    grep)
        grep -v '^FAIL ' "$out" | grep -qF -- "$pat" ||
            fail "output does not contain \"$pat\" (outside the test's own FAIL lines)"
        ;;
    error)
        grep '^Aptus MPI: ' "$out" | grep -qF -- "$pat" ||
            fail "no message of the library (a line \"Aptus MPI: ...\") contains \"$pat\""
        ;;
    error-once)
        n=$(grep '^Aptus MPI: ' "$out" | grep -cF -- "$pat")
        [ "$n" -eq 1 ] ||
            fail "$n messages of the library (lines \"Aptus MPI: ...\") contain \"$pat\", expected exactly one"
        ;;
    stats-any)
        grep '^\[aptus stats\] rank [0-9]*: ' "$out" | grep -qF -- "$pat" ||
            fail "no rank's statistics contain \"$pat\" (APTUS_STATS=1)"
        ;;
    stats-none)
        if grep '^\[aptus stats\] rank [0-9]*: ' "$out" | grep -qF -- "$pat"; then
            fail "the statistics of a rank contain \"$pat\""
        fi
        ;;
    each-rank*)
        n=${kind#each-rank }
        r=0
        while [ $r -lt "$n" ]; do
            grep "^\[aptus stats\] rank $r: " "$out" | grep -qF -- "$pat" ||
                fail "the statistics of rank $r do not contain \"$pat\" (APTUS_STATS=1)"
            r=$((r + 1))
        done
        ;;
    esac
done <"$checks"
[ $status -eq 0 ] && echo "expect_exit.sh: ok (exit $rc)"
exit $status
