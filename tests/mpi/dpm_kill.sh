#!/bin/sh
# The parents' job is killed while the jobs MPI_Comm_spawn started run (tests/mpi/dpm_spawn.c,
# mode wait: 2 parents, 2 children, all waiting in receives): its mpiexec gets SIGNAL (INT as a
# user's Ctrl-C, TERM, or KILL, when nothing of it can react), and within 10 s no process of
# either job may be left (every process carries a token of this run in its arguments).
#   dpm_kill.sh SIGNAL MPIEXEC PROG
set -u
[ $# = 3 ] || { echo "usage: dpm_kill.sh SIGNAL MPIEXEC PROG" >&2; exit 2; }
SIG=$1 MPIEXEC=$2 PROG=$3
token=dpmkill$$x$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
OUT=$(mktemp) || exit 1
trap 'rm -f "$OUT"; pkill -KILL -f "$token" 2>/dev/null' EXIT
MPI_UNIVERSE_SIZE=4 "$MPIEXEC" -n 2 --timeout 60 "$PROG" wait "$token" >"$OUT" 2>&1 &
mp=$!
# both jobs up: 2 parents and 2 children (and the new job's mpiexec) carry the token
i=0
while [ "$(pgrep -f -- "child wait $token" | wc -l)" -lt 2 ]; do
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 $mp 2>/dev/null; then
        echo "dpm_kill.sh: FAIL: the children did not start"
        cat "$OUT"
        exit 1
    fi
    sleep 0.1
done
sleep 0.5
kill -"$SIG" $mp
wait $mp
rc=$?
i=0
while [ -n "$(pgrep -f -- "$token")" ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
left=$(pgrep -a -f -- "$token")
if [ -n "$left" ]; then
    echo "dpm_kill.sh: FAIL: processes left $((i / 10)) s after mpiexec got SIG$SIG:"
    echo "$left"
    cat "$OUT"
    exit 1
fi
[ $rc != 0 ] || { echo "dpm_kill.sh: FAIL: mpiexec exited 0 after SIG$SIG"; cat "$OUT"; exit 1; }
echo "dpm_kill.sh: ok (mpiexec exited $rc after SIG$SIG, nothing left)"
exit 0
