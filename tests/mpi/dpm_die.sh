#!/bin/sh
# A process started by MPI_Comm_spawn dies (tests/mpi/dpm_spawn.c, mode die): its job ends, and
# that takes the parents' job down -- mpiexec exits with the child's status, saying why -- and
# nothing of either job is left running afterwards (every process of both carries a token of
# this run in its arguments).
#   dpm_die.sh EXPECT_EXIT_SH MPIEXEC PROG
set -u
[ $# = 3 ] || { echo "usage: dpm_die.sh EXPECT_EXIT_SH MPIEXEC PROG" >&2; exit 2; }
token=dpmdie$$x$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
sh "$1" --exit 3 --grep "which MPI_Comm_spawn started, ended with exit status 3" -- "$2" -n 2 --timeout 60 "$3" die "$token"
rc=$?
sleep 1
left=$(pgrep -f "$token")
if [ -n "$left" ]; then
    echo "dpm_die.sh: FAIL: processes of the jobs are left: $left"
    pkill -KILL -f "$token"
    exit 1
fi
[ $rc = 0 ] && echo "dpm_die.sh: ok (no process left)"
exit $rc
