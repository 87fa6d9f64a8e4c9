#!/bin/sh
# Two-node Slurm job over the network: slurm_two_nodes.sh NETNS_SH PROG [ARGS...]
#
# As root on Debian 12: installs slurm-wlm and munge with apt when they are missing (set
# APTUS_SLURM_INSTALL=0 to forbid that), makes two network namespaces joined by a bridge
# (scripts/netns.sh, a set named ar<pid>x.. that `netns.sh gc` removes should this script be
# killed), starts a private munged and slurmctld in the root namespace (reachable at the bridge
# address) and one slurmd per namespace (nodes node0 and node1, entered with nsenter: `ip netns
# exec` would remount /sys and slurmd then finds no cgroup filesystem), then runs
#   srun --mpi=pmi2 -N 2 -n 4 --ntasks-per-node=2 PROG ARGS   (APTUS_STATS=1)
# with a real MPI program of tests/mpi that exchanges messages between all ranks and checks
# them. Every task first says where it runs (SLURM_PROCID, SLURMD_NODENAME, its network
# namespace). Checks: the job succeeded; each node ran 2 of the 4 ranks, in its own namespace;
# every rank's statistics show its messages to the ranks of the other node going by ud-sr or RC (the
# UD channel: the network between the namespaces) and to the rank of its own node by smp; no
# process of the job is left on either node, and no shared memory. Everything it started is
# stopped, the namespaces removed and the temporary directory deleted on exit, also on failure or
# interruption. The system's own Slurm/munge configuration is not touched.
#
# Exit: 0 pass, 1 fail, 77 skip (not root, no namespaces, packages unavailable, daemons would
# not start).
set -u

NETNS_SH=${1:?usage: slurm_two_nodes.sh NETNS_SH PROG [ARGS...]}
PROG=${2:?usage: slurm_two_nodes.sh NETNS_SH PROG [ARGS...]}
shift 2
. "$(dirname "$0")/../launcher/slurm_common.sh"
# Bounds (seconds): nodes coming up, the job.
UP_WAIT=60
JOB_TIME=120

slurm_need_root
case "$PROG" in /*) ;; *) PROG=$(cd "$(dirname "$PROG")" && pwd)/$(basename "$PROG") ;; esac
[ -x "$PROG" ] || skip "program '$PROG' not executable"
[ -f "$NETNS_SH" ] || skip "no $NETNS_SH"
for tool in ip nsenter timeout stat; do
    command -v $tool >/dev/null 2>&1 || skip "needs $tool"
done
slurm_install

# --- the nodes: two namespaces ---------------------------------------------------------------
PREFIX= JOB=
# Before the daemons of the root namespace (slurmctld, munged) are stopped: the job, then
# everything in the namespaces (slurmd, slurmstepd, tasks: they would keep the namespaces alive),
# then the namespaces.
slurm_cleanup_more() {
    if [ -n "$JOB" ]; then
        # timeout(1) passes the signal on to srun; both are in timeout's process group.
        kill -TERM "$JOB" 2>/dev/null
        i=0
        while kill -0 "$JOB" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "-$JOB" 2>/dev/null
    fi
    [ -n "$PREFIX" ] || return 0
    for try in 1 2 3; do
        pids=$(for ns in "$PREFIX-h0" "$PREFIX-h1"; do ip netns pids "$ns" 2>/dev/null; done)
        [ -n "$pids" ] || break
        for p in $pids; do kill -KILL "$p" 2>/dev/null; done
        sleep 0.2
    done
    sh "$NETNS_SH" down "$PREFIX"
}
slurm_setup_tmp
sh "$NETNS_SH" gc
# The form of the sets of `netns.sh run` (ar<pid>x<hex>, 10 characters at most), which
# `netns.sh gc` removes once their process is gone.
PREFIX=$(printf 'ar%sx%s' $$ "$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')" | cut -c1-10)
vars=$(sh "$NETNS_SH" up -n 2 -p "$PREFIX")
rc=$?
[ $rc -eq 77 ] && skip "network namespaces cannot be made"
[ $rc -eq 0 ] || fail "netns.sh up failed ($rc)"
eval "$vars"
echo "nodes: node0 in $APTUS_NETNS_H0 ($APTUS_NETNS_ADDR0), node1 in $APTUS_NETNS_H1 ($APTUS_NETNS_ADDR1)," \
    "slurmctld at $APTUS_NETNS_BRIDGE_ADDR"

# --- the cluster -----------------------------------------------------------------------------
slurm_start_munge
slurm_write_conf "$APTUS_NETNS_BRIDGE_ADDR"
HOST=$(hostname -s)
NCPU=$(nproc)
cat >>"$SLURM_CONF" <<EOF
NodeName=node0 NodeHostname=$HOST NodeAddr=$APTUS_NETNS_ADDR0 CPUs=$NCPU RealMemory=100 State=UNKNOWN
NodeName=node1 NodeHostname=$HOST NodeAddr=$APTUS_NETNS_ADDR1 CPUs=$NCPU RealMemory=100 State=UNKNOWN
PartitionName=aptus Nodes=node0,node1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
slurm_start_ctld
nsenter --net="/var/run/netns/$APTUS_NETNS_H0" slurmd -D -N node0 -f "$SLURM_CONF" >"$T/slurmd-node0.out" 2>&1 &
PIDS="$PIDS $!"
nsenter --net="/var/run/netns/$APTUS_NETNS_H1" slurmd -D -N node1 -f "$SLURM_CONF" >"$T/slurmd-node1.out" 2>&1 &
PIDS="$PIDS $!"

# A daemon that ended is Slurm not working here; daemons that run but do not form the cluster
# are this test's (or the namespaces') fault.
slurm_wait_idle $UP_WAIT 2
case $? in
0) ;;
2) skip "Slurm would not start here: $(tail -q -n 2 "$T"/*.out 2>/dev/null | tr '\n' ' ')" ;;
*) fail "the two nodes did not come up in $UP_WAIT s" ;;
esac
slurm_need_pmi2

# --- the job ---------------------------------------------------------------------------------
# Each task says where it runs, then becomes the MPI program.
WHERE='echo "slurmtask $SLURM_PROCID node $SLURMD_NODENAME netns $(readlink /proc/self/ns/net)" \
    "job $SLURM_JOB_ID"; exec "$@"'
START=$(date +%s)
# In the background, so that a signal to this script is handled (the traps) while the job runs.
APTUS_STATS=1 timeout -k 10 $JOB_TIME srun --mpi=pmi2 -N 2 -n 4 --ntasks-per-node=2 --overcommit \
    -K -t $((JOB_TIME / 60 + 1)) sh -c "$WHERE" sh "$PROG" "$@" >"$T/out" 2>"$T/err" &
JOB=$!
# What the processes on the nodes were doing, should the job not end in time (fail prints it).
(
    i=0
    while [ $i -lt $((JOB_TIME - 10)) ]; do
        sleep 1
        kill -0 $JOB 2>/dev/null || exit 0
        i=$((i + 1))
    done
    for ns in "$APTUS_NETNS_H0" "$APTUS_NETNS_H1"; do
        echo "$ns:"
        ps -o pid,stat,wchan:24,time,args -p "$(ip netns pids "$ns" | paste -s -d, -)"
    done >"$T/hang.log" 2>&1
) &
wait $JOB
RC=$?
JOB=
SECS=$(($(date +%s) - START))
echo "---- srun --mpi=pmi2 -N 2 -n 4 --ntasks-per-node=2 $(basename "$PROG"): exit $RC after $SECS s ----"
grep -v '^\[aptus stats\]' "$T/out" | sort
# timeout(1): 124, or 137 when srun needed SIGKILL (srun's own 137 is a task killed by SIGKILL).
[ $RC -ne 124 ] && { [ $RC -ne 137 ] || [ $SECS -lt $JOB_TIME ]; } || fail "the job did not end within $JOB_TIME s"
[ $RC -eq 0 ] || fail "srun exited with $RC"
! grep -q '^FAIL' "$T/out" "$T/err" || fail "the program reported a failure"

# Where the ranks ran: 2 on each node, in that node's namespace.
node_of() { sed -n "s/^slurmtask $1 node \([a-z0-9]*\) netns .*/\1/p" "$T/out"; }
for n in 0 1; do
    eval "ns=\$APTUS_NETNS_H$n"
    eval "NS$n=\"net:[$(stat -L -c %i "/var/run/netns/$ns")]\""
done
for r in 0 1 2 3; do
    [ "$(grep -c "^slurmtask $r node " "$T/out")" -eq 1 ] || fail "task $r did not say where it runs (once)"
    node=$(node_of $r)
    case "$node" in node0 | node1) ;; *) fail "task $r on unknown node '$node'" ;; esac
    eval "want=\$NS${node#node}"
    grep -q -F "slurmtask $r node $node netns $want job " "$T/out" ||
        fail "task $r did not run in the network namespace of $node ($want)"
done
for n in node0 node1; do
    [ "$(grep -c "^slurmtask [0-3] node $n netns " "$T/out")" -eq 2 ] || fail "$n did not run 2 of the 4 ranks"
done

# How the ranks' messages went (one line per peer and channel: "[aptus stats] rank R: P CHANNEL
# MESSAGES BYTES"): to the other node's ranks over the network (ud-sr, or rc-sr / rc-rdma once
# the default chain's connection is up; no smp), to the own node's by smp (and no network
# channel); every rank sent UD datagrams (the job starts on UD).
echo "---- statistics ----"
grep '^\[aptus stats\] rank [0-3]: \(peer\|[0-9]\|ud-sr engine\)' "$T/out" | sort -s -n -k 4,4
for r in 0 1 2 3; do
    for p in 0 1 2 3; do
        [ $p -eq $r ] && continue
        if [ "$(node_of $r)" = "$(node_of $p)" ]; then ch=smp not='(ud|rc)-[a-z]*'; else ch='(ud-sr|rc-sr|rc-rdma)' not=smp; fi
        grep -q -E "^\[aptus stats\] rank $r: $p +$ch +[1-9][0-9]* +[0-9]" "$T/out" ||
            fail "rank $r's statistics do not show messages to rank $p going by $ch"
        ! grep -q -E "^\[aptus stats\] rank $r: $p +$not +[1-9]" "$T/out" ||
            fail "rank $r's statistics show messages to rank $p going by $not"
    done
    grep -q -E "^\[aptus stats\] rank $r: ud-sr engine: (provider [^;]*; )?datagrams [1-9]" "$T/out" ||
        fail "rank $r's statistics show no UD datagrams"
done

# Nothing of the job is left on the nodes: only slurmd runs in each namespace.
left() {
    for ns in "$APTUS_NETNS_H0" "$APTUS_NETNS_H1"; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmd ] || echo "$p"
        done
    done
}
i=0
while [ -n "$(left)" ]; do
    i=$((i + 1))
    [ $i -le 100 ] || fail "processes of the job left on the nodes: $(for p in $(left); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null
        echo "(pid $p)"
    done)"
    sleep 0.1
done

# ... and no shared memory of the job (/dev/shm/aptus-<PMI jobid>-<rank>, the PMI jobid being
# <jobid>.<stepid>).
JOBID=$(sed -n 's/^slurmtask 0 node .* job \([0-9]*\)$/\1/p' "$T/out")
[ -n "$JOBID" ] || fail "task 0 did not say its jobid"
[ -z "$(ls /dev/shm | grep "^aptus-$JOBID\.")" ] ||
    fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-$JOBID\.")"

echo "PASS: srun --mpi=pmi2 across two nodes (network namespaces): 2 ranks on each, UD between them"
exit 0
