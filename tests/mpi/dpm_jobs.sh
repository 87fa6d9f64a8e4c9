#!/bin/sh
# Two MPI jobs started separately that meet through MPI_Open_port / MPI_Comm_accept /
# MPI_Comm_connect (tests/mpi/dpm_connect.c): the server job first, then the client job, each by
# its own mpiexec; both must end with status 0 and the server's rank 0 must print "ok".
#
#   dpm_jobs.sh [--netns NETNS_SH] MPIEXEC NP_SERVER NP_CLIENT PROG [ARG]
#
# The jobs meet through files in a directory of their own (removed afterwards), which also holds
# their name service (APTUS_NAME_SERVICE): it must be empty once they have ended. With --netns
# each job runs in a network namespace of its own (scripts/netns.sh: two "hosts" joined by a
# bridge), its UD channel on that namespace's eth0, so the jobs reach each other across it.
# Exit status: 0 when both passed, 1 otherwise, 77 (skip) where namespaces cannot be made.
set -u
NETNS=
if [ "${1:-}" = --netns ]; then
    NETNS=$2
    shift 2
fi
[ $# -ge 4 ] || { echo "usage: dpm_jobs.sh [--netns NETNS_SH] MPIEXEC NP_SERVER NP_CLIENT PROG [ARG]" >&2; exit 2; }
MPIEXEC=$1 NS=$2 NC=$3 PROG=$4
ARG=${5:-}
if [ -n "$NETNS" ] && [ -z "${APTUS_NETNS_H0:-}" ]; then
    # (again inside `netns.sh run`, which makes the namespaces and removes them afterwards)
    exec "$NETNS" run -n 2 -- "$0" --netns "$NETNS" "$@"
fi
DIR=$(mktemp -d) || exit 1
trap 'rm -rf "$DIR"' EXIT INT TERM
# (the jobs' own name service: what they publish, and what is left of it afterwards)
mkdir "$DIR/names" || exit 1
export APTUS_NAME_SERVICE="$DIR/names"
in_host() { # in_host I cmd...: cmd on "host" I (a namespace with --netns, else here)
    i=$1
    shift
    if [ -n "$NETNS" ]; then
        eval ns=\$APTUS_NETNS_H$i
        ip netns exec "$ns" env APTUS_FABRIC_IFACE=eth0 "$@"
    else
        "$@"
    fi
}
in_host 0 "$MPIEXEC" -n "$NS" --timeout 60 "$PROG" server "$DIR" $ARG >"$DIR/server.out" 2>&1 &
spid=$!
in_host 1 "$MPIEXEC" -n "$NC" --timeout 60 "$PROG" client "$DIR" $ARG >"$DIR/client.out" 2>&1
crc=$?
wait $spid
src=$?
echo "--- server job (exit $src)"
cat "$DIR/server.out"
echo "--- client job (exit $crc)"
cat "$DIR/client.out"
bad=0
[ $src = 0 ] && [ $crc = 0 ] || { echo "dpm_jobs.sh: FAIL: exit statuses: server $src, client $crc"; bad=1; }
grep -q "^dpm_connect: ok" "$DIR/server.out" || { echo "dpm_jobs.sh: FAIL: the server job did not say ok"; bad=1; }
grep -q "^dpm_connect: ok" "$DIR/client.out" || { echo "dpm_jobs.sh: FAIL: the client job did not say ok"; bad=1; }
left=$(ls -A "$DIR/names")
[ -z "$left" ] || { echo "dpm_jobs.sh: FAIL: names left published after the jobs: $left"; bad=1; }
[ $bad = 0 ] && echo "dpm_jobs.sh: ok"
exit $bad
