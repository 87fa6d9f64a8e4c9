#!/bin/sh
# MPI_Comm_spawn under Slurm (srun --mpi=pmi2): slurm_spawn.sh DPM_SPAWN
#
# A throw-away one-node Slurm (tests/launcher/slurm_common.sh) runs tests/mpi/dpm_spawn: the
# library asks srun for the new job with the PMI-2 spawn command (a new job step of the
# allocation), and the new job's processes find the parents' port in their key space:
#   - 2 parents spawn 2 children (point-to-point, intercommunicator collectives, merge, RMA);
#   - spawn_multiple of two programs (MPI_APPNUM 0, 0, 1);
#   - a nested spawn;
#   - the errors (no program, no working directory, a program that never connects: the spawn
#     fails with MPI_ERR_SPAWN after APTUS_SPAWN_TIMEOUT, here 5 s; beyond MPI_UNIVERSE_SIZE;
#     soft);
#   - MPI_UNIVERSE_SIZE is the allocation's CPUs.
# A step takes CPUs of the allocation: the parents run with SLURM_OVERLAP=1 (srun --overlap), which
# the new steps inherit. Without it, on a full allocation, the new step waits for CPUs and the
# spawn fails after APTUS_SPAWN_TIMEOUT with a message saying so (checked last).
# Exit: 0 pass, 1 fail, 77 skip (not root, Slurm not installable, daemons would not start).
set -u

PROG=${1:?usage: slurm_spawn.sh DPM_SPAWN}
. "$(dirname "$0")/slurm_common.sh"

slurm_one_node "$PROG"
PROG=$PROGRAM_ABS

# run NAME MIN_OK [VAR=VALUE...] -- SRUN-ARGUMENTS: srun must exit 0 and print "dpm_spawn: ok"
# at least MIN_OK times (once per job: parents, children, grandchildren)
run() {
    name=$1 min=$2
    shift 2
    envs=
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    # (env: the cluster's environment is clean of SLURM_* variables; the new steps inherit these)
    timeout 120 env SLURM_OVERLAP=1 $envs srun --mpi=pmi2 --overcommit -t 2 "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 0 ] || fail "$name: srun exited with $rc"
    n=$(grep -c '^dpm_spawn: ok$' "$T/out")
    [ "$n" -ge "$min" ] || fail "$name: $n of $min jobs said ok"
    echo "---- $name: ok ($n jobs)"
    grep -v '^dpm_spawn: ok$' "$T/out"
}
run "2 parents x 2 children" 2 -- -n 2 "$PROG" basic 2
run "spawn_multiple" 2 -- -n 2 "$PROG" multiple
run "nested" 3 -- -n 2 "$PROG" nested
run "errors" 2 APTUS_SPAWN_TIMEOUT=5 MPI_UNIVERSE_SIZE=5 -- -n 2 "$PROG" errors
grep -q "within APTUS_SPAWN_TIMEOUT=5 seconds" "$T/out" || fail "errors: no timeout message"

# MPI_UNIVERSE_SIZE under srun: the allocation's CPUs (the node's), not the step's tasks (1).
ncpu=$(nproc)
timeout 120 salloc -n "$ncpu" srun --mpi=pmi2 --overlap -n 1 -t 2 "$PROG" universe "$ncpu" >"$T/out" 2>"$T/err" ||
    fail "universe: exited with $?"
grep -q '^dpm_spawn: ok$' "$T/out" || fail "universe: MPI_UNIVERSE_SIZE is not the allocation's $ncpu CPUs"
echo "---- MPI_UNIVERSE_SIZE = the allocation's CPUs: ok"

# No CPU left for the new step (no overlap; the parent's step holds the allocation's one CPU):
# MPI_ERR_SPAWN after the timeout, naming the reason; the parent goes on and ends well.
timeout 120 env APTUS_SPAWN_TIMEOUT=5 salloc -n 1 srun --mpi=pmi2 -n 1 -t 2 "$PROG" busy >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "a full allocation: exited with $rc"
grep -q '^dpm_spawn: ok$' "$T/out" || fail "a full allocation: the parent did not end well"
grep -q "overlap" "$T/out" || fail "a full allocation: the message does not name srun --overlap"
echo "---- a full allocation: ok"
grep -v '^dpm_spawn: ok$' "$T/out"
echo "PASS: MPI_Comm_spawn under srun --mpi=pmi2"
exit 0
