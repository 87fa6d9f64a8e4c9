# Shared parts of the throw-away Slurm clusters of the tests: sourced (not run) by
# tests/launcher/slurm_one_node.sh and tests/netns/slurm_two_nodes.sh.
#
#   slurm_need_root            skip unless root
#   slurm_install              install slurm-wlm and munge with apt when missing (skip where that
#                              is forbidden, APTUS_SLURM_INSTALL=0, or impossible)
#   slurm_setup_tmp            make the temporary directory $T and set the traps: on exit
#                              slurm_cleanup_more (a hook, by default nothing; redefine it after
#                              sourcing) runs, every process in $PIDS is stopped, then any other
#                              process of the cluster (slurm_pids) killed and $T removed
#   slurm_start_munge          a private munged (own key and socket, $MUNGE_SOCK) in $T
#   slurm_write_conf CTLADDR   $T/slurm.conf without nodes and partitions (append them): the
#                              controller at CTLADDR, ports $SLURM_BASE and $SLURM_BASE+1,
#                              proctrack/pgid, no cgroups, files per node (%n) in $T, jobids
#                              from this shell's pid (so that the jobs of two clusters on this
#                              machine, and their /dev/shm names, differ); exports SLURM_CONF
#   slurm_start_ctld           slurmctld in the foreground (-D), in the background of this shell
#   slurm_wait_idle SECONDS N  wait until N nodes are idle; 1 when they are not after SECONDS,
#                              2 as soon as a process of $PIDS (the daemons) has ended
#   slurm_need_pmi2            skip unless srun has the mpi/pmi2 plugin
#   slurm_one_node PROGRAM     all of the above for a one-node cluster (root, packages, munge,
#                              controller, slurmd on 127.0.0.1, node up, pmi2), after checking
#                              that PROGRAM is executable; sets PROGRAM_ABS to its absolute path
#   skip TEXT, fail TEXT       exit 77 / print the logs of $T and exit 1
#
# The system's own Slurm/munge configuration is not touched. Variables of an enclosing Slurm job
# (SLURM_*) are removed from the environment, so that srun talks to the throw-away cluster only.
SKIP=77
T=
PIDS=

skip() { echo "SKIP: $*"; exit $SKIP; }
fail() {
    echo "FAIL: $*"
    for f in "$T"/out "$T"/err "$T"/*.out "$T"/*.log; do
        [ -s "$f" ] && { echo "---- $f (tail) ----"; tail -n 30 "$f"; }
    done
    exit 1
}

slurm_need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }

have_slurm() {
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
        command -v srun >/dev/null 2>&1 && command -v sinfo >/dev/null 2>&1 &&
        command -v munged >/dev/null 2>&1
}

slurm_install() {
    have_slurm && return 0
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
}

# Processes of this cluster: slurmctld, slurmd, the slurmstepd's they fork (which can outlive a
# slurmd that is stopped), srun and the tasks all have SLURM_CONF=$T/slurm.conf in their
# environment.
slurm_pids() {
    [ -n "$T" ] || return 0
    # Not exported to grep and sed, which would find themselves.
    (
        unset SLURM_CONF
        grep -l -s -z -x -F "SLURM_CONF=$T/slurm.conf" /proc/[0-9]*/environ 2>/dev/null |
            sed 's|^/proc/\([0-9]*\)/environ$|\1|'
    )
}

slurm_cleanup_more() { :; }
slurm_cleanup() {
    slurm_cleanup_more
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    # Up to 5 s for the daemons to go, then by force.
    i=0
    while [ $i -lt 50 ]; do
        alive=
        for p in $PIDS; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
        i=$((i + 1))
    done
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
    for try in 1 2 3; do
        pids=$(slurm_pids)
        [ -n "$pids" ] || break
        for p in $pids; do kill -KILL "$p" 2>/dev/null; done
        sleep 0.2
    done
    [ -n "$T" ] && rm -rf "$T"
}

slurm_setup_tmp() {
    T=$(mktemp -d /tmp/aptus-slurm.XXXXXX) || exit 1
    chmod 755 "$T"
    trap slurm_cleanup EXIT
    trap 'exit 1' INT TERM HUP PIPE
}

# Private munge: own key, socket, logs. munged refuses root without --force.
slurm_start_munge() {
    MUNGE_SOCK=$T/munge/munge.socket
    mkdir -p "$T/munge" && chmod 700 "$T/munge"
    dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$T/munge/munge.key"
    munged --force --key-file="$T/munge/munge.key" --socket="$MUNGE_SOCK" \
        --pid-file="$T/munge/munged.pid" --log-file="$T/munged.log" \
        --seed-file="$T/munge/munge.seed" >/dev/null 2>&1 ||
        skip "munged would not start"
    PIDS="$PIDS $(cat "$T/munge/munged.pid" 2>/dev/null)"
}

slurm_write_conf() {
    # Ports away from the defaults (6817/6818) so a real Slurm on this machine is unaffected,
    # and (where ss(8) tells) not in use.
    SLURM_BASE=$((20000 + $$ % 20000))
    n=0
    while [ $n -lt 50 ] && command -v ss >/dev/null 2>&1 &&
        ss -Htan 2>/dev/null | awk '{print $4}' | grep -q -E ":($SLURM_BASE|$((SLURM_BASE + 1)))\$"; do
        SLURM_BASE=$((20000 + (SLURM_BASE + 2 - 20000) % 20000))
        n=$((n + 1))
    done
    mkdir -p "$T/state" "$T/spool"
    cat >"$T/slurm.conf" <<EOF
ClusterName=aptustest
SlurmctldHost=$(hostname -s)($1)
SlurmctldPort=$SLURM_BASE
SlurmdPort=$((SLURM_BASE + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$T/state
FirstJobId=$(($$ % 6000000 * 10 + 1))
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd-%n.log
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
EOF
    export SLURM_CONF="$T/slurm.conf"
    for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
        [ "$v" = SLURM_CONF ] || unset "$v"
    done
}

slurm_start_ctld() {
    slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
    PIDS="$PIDS $!"
}

slurm_wait_idle() {
    i=0
    until [ "$(sinfo -h -N -o %t 2>/dev/null | grep -c '^idle$')" -ge "$2" ]; do
        for p in $PIDS; do
            kill -0 "$p" 2>/dev/null || { echo "a daemon (pid $p) ended"; return 2; }
        done
        i=$((i + 1))
        if [ $i -gt "$1" ]; then
            echo "node state: $(sinfo -h -N -o '%N %t %E' 2>&1)"
            return 1
        fi
        sleep 1
    done
    return 0
}

slurm_need_pmi2() {
    srun --mpi=list 2>&1 | grep -q pmi2 || skip "this Slurm has no mpi/pmi2 plugin"
}

slurm_one_node() {
    slurm_need_root
    case "$1" in /*) PROGRAM_ABS=$1 ;; *) PROGRAM_ABS=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") ;; esac
    [ -x "$PROGRAM_ABS" ] || skip "program '$PROGRAM_ABS' not executable"
    slurm_install
    slurm_setup_tmp
    slurm_start_munge
    slurm_write_conf 127.0.0.1
    cat >>"$SLURM_CONF" <<EOF
NodeName=aptusnode NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=aptus Nodes=aptusnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
    slurm_start_ctld
    slurmd -D -N aptusnode -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
    PIDS="$PIDS $!"
    # Bounded wait for the node to come up.
    slurm_wait_idle 60 1 || skip "the one-node Slurm did not come up"
    slurm_need_pmi2
}
