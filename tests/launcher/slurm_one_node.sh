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
SKIP=77

skip() { echo "SKIP: $*"; exit $SKIP; }
fail() {
    echo "FAIL: $*"
    for f in "$T"/out "$T"/err "$T"/slurmctld.log "$T"/slurmd.log "$T"/munged.log; do
        [ -s "$f" ] && { echo "---- $f (tail) ----"; tail -n 30 "$f"; }
    done
    exit 1
}

[ "$(id -u)" -eq 0 ] || skip "needs root"
case "$PROBE" in /*) ;; *) PROBE=$(cd "$(dirname "$PROBE")" && pwd)/$(basename "$PROBE") ;; esac
[ -x "$PROBE" ] || skip "probe '$PROBE' not executable"

have_slurm() {
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
        command -v srun >/dev/null 2>&1 && command -v munged >/dev/null 2>&1
}

if ! have_slurm; then
    [ "${APTUS_SLURM_INSTALL:-1}" != 0 ] || skip "Slurm not installed and APTUS_SLURM_INSTALL=0"
    command -v apt-get >/dev/null 2>&1 || skip "Slurm not installed and no apt-get"
    echo "Installing slurm-wlm and munge with apt-get..."
    # Keep the packages from starting their system services.
    POLICY=/usr/sbin/policy-rc.d
    ADDED_POLICY=
    if [ ! -e "$POLICY" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$POLICY" && chmod +x "$POLICY" && ADDED_POLICY=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        slurm-wlm munge >/tmp/aptus-slurm-apt.log 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
              slurm-wlm munge >/tmp/aptus-slurm-apt.log 2>&1; }
    [ -n "$ADDED_POLICY" ] && rm -f "$POLICY"
    have_slurm || skip "could not install slurm-wlm/munge (see /tmp/aptus-slurm-apt.log)"
fi

T=$(mktemp -d /tmp/aptus-slurm.XXXXXX) || exit 1
chmod 755 "$T"
PIDS=
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    sleep 1
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Private munge: own key, socket, logs. munged refuses root without --force.
MUNGE_SOCK=$T/munge/munge.socket
mkdir -p "$T/munge" && chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" --socket="$MUNGE_SOCK" \
    --pid-file="$T/munge/munged.pid" --log-file="$T/munged.log" \
    --seed-file="$T/munge/munge.seed" >/dev/null 2>&1 ||
    skip "munged would not start"
PIDS="$PIDS $(cat "$T/munge/munged.pid" 2>/dev/null)"

HOST=$(hostname -s)
NCPU=$(nproc)
# Ports away from the defaults (6817/6818) so a real Slurm on this machine is unaffected.
BASE=$((20000 + $$ % 20000))
mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<EOF
ClusterName=aptustest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$BASE
SlurmdPort=$((BASE + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
NodeName=aptusnode NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=100 State=UNKNOWN
PartitionName=aptus Nodes=aptusnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$T/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D -N aptusnode -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
PIDS="$PIDS $!"

# Bounded wait for the node to come up.
i=0
until [ "$(sinfo -h -n aptusnode -o %t 2>/dev/null)" = idle ]; do
    i=$((i + 1))
    if [ $i -gt 60 ]; then
        cat "$T/slurmctld.out" "$T/slurmd.out" >>"$T/err" 2>/dev/null
        fail_state=$(sinfo -h -N -o '%N %t %E' 2>&1)
        echo "node state: $fail_state"
        skip "the one-node Slurm did not come up (logs in $T are removed on exit)"
    fi
    sleep 1
done

srun --mpi=list 2>&1 | grep -q pmi2 || skip "this Slurm has no mpi/pmi2 plugin"

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

echo "PASS: srun --mpi=pmi2 with the Aptus PMI-2 client"
exit 0
