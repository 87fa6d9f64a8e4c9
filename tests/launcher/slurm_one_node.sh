#!/bin/sh
# One-node Slurm check of the PMI-2 client: slurm_one_node.sh PROBE
#
# As root on Debian 12: installs slurm-wlm and munge with apt when they are missing (set
# APTUS_SLURM_INSTALL=0 to forbid that), starts a private munged, slurmctld and slurmd from a
# configuration in a temporary directory (non-default ports, proctrack/pgid, no cgroups), runs
#   srun --mpi=pmi2 -n 4 PROBE ... init put fence getall map finalize
# and checks the key-value exchange and the process mapping. Everything it started is stopped
# and the temporary directory removed on exit. The system's own Slurm/munge configuration is
# not touched.
#
# Exit: 0 pass, 1 fail, 77 skip (not root, not Debian-like, packages unavailable, daemons
# would not start).
set -u

PROBE=${1:?usage: slurm_one_node.sh PROBE}
. "$(dirname "$0")/slurm_common.sh"

slurm_one_node "$PROBE"
PROBE=$PROGRAM_ABS

srun --mpi=pmi2 -n 4 --overcommit -t 2 "$PROBE" plain init put fence getall getmissing map \
    barrier barrier=2 finalize >"$T/out" 2>"$T/err"
RC=$?
[ $RC -eq 0 ] || fail "srun exited with $RC"
[ "$(grep -c 'getall ok$' "$T/out")" -eq 4 ] || fail "not every rank saw every key"
[ "$(grep -c 'barrier 1 ok$' "$T/out")" -eq 4 ] || fail "aptus_pmi_barrier failed"
[ "$(grep -c 'barrier 2 failed 2$' "$T/out")" -eq 3 ] || fail "aptus_pmi_barrier missed a vote against"
for r in 0 1 2 3; do
    grep -q "^rank $r size 4 singleton 0 jobid " "$T/out" || fail "rank $r missing or wrong size"
    grep -q "^rank $r map 0,0,0,0 " "$T/out" || fail "rank $r: wrong process mapping"
done
[ "$(sed -n 's/^rank [0-9] size 4 singleton 0 jobid //p' "$T/out" | sort -u | wc -l)" -eq 1 ] ||
    fail "ranks disagree on the jobid"
echo "---- srun --mpi=pmi2 -n 4 output ----"
sort "$T/out"

# Abort under Slurm: the step is killed and srun fails.
srun --mpi=pmi2 -n 2 --overcommit -t 2 "$PROBE" init fence r1:abort=7 fence finalize \
    >"$T/out" 2>"$T/err"
RC=$?
[ $RC -ne 0 ] || fail "abort under srun did not fail the step"
echo "---- abort: srun exited $RC ----"
cat "$T/err"
# An abort naming a lost peer carries a key Slurm does not know (peerlost): the same ending.
srun --mpi=pmi2 -n 2 --overcommit -t 2 "$PROBE" init fence r1:abortlost=16:0 fence finalize \
    >"$T/out" 2>"$T/err"
RC=$?
[ $RC -ne 0 ] || fail "an abort naming a lost peer under srun did not fail the step"
echo "---- abort naming a lost peer: srun exited $RC ----"
cat "$T/err"

echo "PASS: srun --mpi=pmi2 with the Aptus PMI-2 client"
exit 0
