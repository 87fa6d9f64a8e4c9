#!/bin/sh
# Runs a command that is expected to end the job abnormally and checks how.
#   expect_exit.sh [--exit N | --nonzero] [--grep TEXT]... -- command [args...]
# --exit N     the command's exit status must be exactly N
# --nonzero    the exit status must be non-zero (the default)
# --grep TEXT  the combined stdout+stderr must contain TEXT (fixed string)
# The command's output is passed through so that CTest logs show it.
want=nonzero
greps_file=$(mktemp) || exit 2
out=$(mktemp) || exit 2
trap 'rm -f "$greps_file" "$out"' EXIT
while [ $# -gt 0 ]; do
    case "$1" in
    --exit) want=$2; shift 2 ;;
    --nonzero) want=nonzero; shift ;;
    --grep) printf '%s\n' "$2" >>"$greps_file"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_exit.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "expect_exit.sh: no command" >&2; exit 2; }

"$@" >"$out" 2>&1
rc=$?
cat "$out"
status=0
if [ "$want" = nonzero ]; then
    if [ $rc -eq 0 ]; then
        echo "expect_exit.sh: FAIL: command exited 0, expected a non-zero exit" >&2
        status=1
    fi
elif [ $rc -ne "$want" ]; then
    echo "expect_exit.sh: FAIL: command exited $rc, expected $want" >&2
    status=1
fi
while IFS= read -r pat; do
    if ! grep -qF -- "$pat" "$out"; then
        echo "expect_exit.sh: FAIL: output does not contain \"$pat\"" >&2
        status=1
    fi
done <"$greps_file"
[ $status -eq 0 ] && echo "expect_exit.sh: ok (exit $rc)"
exit $status
