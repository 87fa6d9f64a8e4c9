#!/bin/sh
# Runs one MPI job across network namespaces ("hosts" on this machine) and checks how it ended.
#
#   run_netns.sh --netns-sh PATH --mpiexec PATH --nodes N --np NP [options] -- prog [args...]
#
# Makes N namespaces with scripts/netns.sh (a set unique to this run, named ar<pid>x so that
# `netns.sh gc` removes it should this script be killed), runs
#   mpiexec --launcher netns --hosts h0,...,hN-1 [-ppn K] -n NP --timeout T prog args
# through tests/mpi/expect_exit.sh (exit status, the library's messages, statistics), checks
# that no process of the job is left on any host and that its shared memory
# (/dev/shm/aptus-<jobid>-*) is gone, and removes the namespaces, veths, bridge and nftables
# rules again -- also when a check fails or this script is interrupted.
#
# Options:
#   --ppn K            K consecutive ranks per host (mpiexec -ppn)
#   --timeout T        mpiexec --timeout (default 120 s)
#   --env VAR=VAL      set in the job's environment (repeatable)
#   --loss PCT         drop PCT % of the UDP datagrams arriving in every namespace (nftables,
#                      input hook); afterwards the rules' counters must show drops
#   --loss-on I        apply --loss to namespace I only
#   --loss-tcp         --loss drops TCP packets too (those between namespaces: the launcher's,
#                      from the bridge address, are kept): RC connections then lose packets
#   --link-down I      take namespace I's link (eth0) down once rank 0 of the program has made
#                      the file named by $NETNS_TEST_READY (tests/netns/dead_peer.c does); the
#                      job must have got that far
#                      (the job's environment also has NETNS_TEST_HOSTS, the namespaces in
#                      host order: tests/mpi/dpm_spawn.c onhost names the first)
#   --exit N           the job's exit status must be N (default 0)
#   --nonzero          the job must fail (any status but a timeout)
#   --error TEXT       a message of the library ("Aptus MPI: ...") contains TEXT (repeatable)
#   --error-re RE      ... contains a match of the extended regular expression RE (repeatable)
#   --grep TEXT        the output contains TEXT, outside the program's FAIL lines (repeatable)
#   --each-rank TEXT   every rank's statistics contain TEXT (sets APTUS_STATS=1)
#   --any-rank RE      some rank's statistics match the extended regular expression RE (sets
#                      APTUS_STATS=1; repeatable)
#   --channel R:P:CH   rank R's statistics say that its messages to rank P went by channel CH
#                      (sets APTUS_STATS=1; repeatable)
# Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage, 77 (skip) where
# namespaces (or, with --loss, nftables rules) cannot be made.
set -u

usage() {
    echo "run_netns.sh: $*" >&2
    exit 2
}
num() { case "$2" in '' | *[!0-9]*) usage "$1 needs a number, got '$2'" ;; esac; }

NETNS_SH= MPIEXEC= NODES= NP= PPN= TIMEOUT=120 LOSS= LOSS_ON= LOSS_TCP= DOWN= WANT=0
CHANNELS=
ERROR_RES=$(mktemp) || exit 2
ANY_RANK=$(mktemp) || exit 2
PREFIX= WORK= DOWN_PID=
TAG=
# Texts with spaces are kept as "option\ntext" pairs in a file, replayed into expect_exit.sh.
CHECKS=$(mktemp) || exit 2
JOBENV=$(mktemp) || exit 2
STATS=0

cleanup() {
    [ -n "$DOWN_PID" ] && kill "$DOWN_PID" 2>/dev/null
    # Whatever of the job survived the checks (they failed then): its processes carry the tag.
    [ -n "$TAG" ] && for pid in $(tagged_pids); do kill -KILL "$pid" 2>/dev/null; done
    [ -n "$PREFIX" ] && sh "$NETNS_SH" down "$PREFIX"
    [ -n "$WORK" ] && rm -rf "$WORK"
    rm -f "$CHECKS" "$JOBENV" "$ERROR_RES" "$ANY_RANK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

while [ $# -gt 0 ]; do
    case "$1" in
    --netns-sh) [ $# -ge 2 ] || usage "$1 needs a path"; NETNS_SH=$2; shift 2 ;;
    --mpiexec) [ $# -ge 2 ] || usage "$1 needs a path"; MPIEXEC=$2; shift 2 ;;
    --nodes) num "$1" "${2:-}"; NODES=$2; shift 2 ;;
    --np) num "$1" "${2:-}"; NP=$2; shift 2 ;;
    --ppn) num "$1" "${2:-}"; PPN=$2; shift 2 ;;
    --timeout) num "$1" "${2:-}"; TIMEOUT=$2; shift 2 ;;
    --loss) num "$1" "${2:-}"; LOSS=$2; shift 2 ;;
    --loss-on) num "$1" "${2:-}"; LOSS_ON=$2; shift 2 ;;
    --loss-tcp) LOSS_TCP=1; shift ;;
    --link-down) num "$1" "${2:-}"; DOWN=$2; shift 2 ;;
    --exit) num "$1" "${2:-}"; WANT=$2; shift 2 ;;
    --nonzero) WANT=nonzero; shift ;;
    --env)
        echo "${2:-}" | grep -q -E '^[A-Za-z_][A-Za-z0-9_]*=' || usage "--env needs VAR=VALUE"
        printf '%s\n' "$2" >>"$JOBENV"; shift 2 ;;
    --error | --grep)
        [ $# -ge 2 ] || usage "$1 needs a text"
        printf '%s\n%s\n' "$1" "$2" >>"$CHECKS"; shift 2 ;;
    --error-re)
        [ $# -ge 2 ] || usage "$1 needs a regular expression"
        printf '%s\n' "$2" >>"$ERROR_RES"; shift 2 ;;
    --each-rank)
        [ $# -ge 2 ] || usage "$1 needs a text"
        STATS=1; printf '%s\n%s\n' "$1" "$2" >>"$CHECKS"; shift 2 ;;
    --any-rank)
        [ $# -ge 2 ] || usage "$1 needs a text"
        STATS=1; printf '%s\n' "$2" >>"$ANY_RANK"; shift 2 ;;
    --channel)
        echo "${2:-}" | grep -q -E '^[0-9]+:[0-9]+:[a-z0-9-]+$' || usage "--channel needs RANK:PEER:CHANNEL"
        STATS=1; CHANNELS="$CHANNELS $2"; shift 2 ;;
    --) shift; break ;;
    *) usage "unknown option '$1'" ;;
    esac
done
[ $# -gt 0 ] || usage "no program given"
[ -n "$NETNS_SH" ] && [ -n "$MPIEXEC" ] && [ -n "$NODES" ] && [ -n "$NP" ] ||
    usage "--netns-sh, --mpiexec, --nodes and --np are required"
[ -z "$LOSS_ON" ] || [ -n "$LOSS" ] || usage "--loss-on needs --loss"
[ -z "$LOSS_ON" ] || [ "$LOSS_ON" -lt "$NODES" ] || usage "--loss-on $LOSS_ON: no such namespace"
[ -z "$DOWN" ] || [ "$DOWN" -lt "$NODES" ] || usage "--link-down $DOWN: no such namespace"
EXPECT_EXIT=$(cd "$(dirname "$0")/../mpi" && pwd)/expect_exit.sh
[ -f "$EXPECT_EXIT" ] || usage "missing $EXPECT_EXIT"

fail() {
    echo "run_netns.sh: FAIL: $*" >&2
    STATUS=1
}

# Processes of the job: every one (mpiexec, the proxies, the ranks and their children) has the
# tag in its environment, on whichever host (namespace) it runs.
tagged_pids() {
    grep -l -s -z -x -F "NETNS_TEST_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null |
        sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}
# Bounded wait (tenths of a second) for a condition.
wait_for() {
    tenths=$1
    shift
    while ! "$@"; do
        tenths=$((tenths - 1))
        [ $tenths -gt 0 ] || return 1
        sleep 0.1
    done
    return 0
}
no_job_processes() { [ -z "$(tagged_pids)" ]; }

# --- the hosts -------------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || { echo "run_netns.sh: needs root for network namespaces; skipped" >&2; exit 77; }
sh "$NETNS_SH" gc
# The form of the sets of `netns.sh run` (ar<pid>x<hex>), which `netns.sh gc` removes once their
# process is gone; with a 7-digit pid no hex digit fits in the 10 characters `up -p` allows, and
# gc then removes the namespaces (and with them the veths) but not the bridge.
PREFIX="ar$$x"
while [ ${#PREFIX} -lt 10 ]; do PREFIX="$PREFIX$(od -An -N1 -tx1 /dev/urandom | tr -d ' ' | cut -c1)"; done
vars=$(sh "$NETNS_SH" up -n "$NODES" -p "$PREFIX")
rc=$?
if [ $rc -ne 0 ]; then
    [ $rc -eq 77 ] && exit 77
    echo "run_netns.sh: netns.sh up failed ($rc)" >&2
    exit 1
fi
HOSTS=$(echo "$vars" | sed -n 's/^APTUS_NETNS_HOSTS=//p')
[ -n "$HOSTS" ] || { echo "run_netns.sh: netns.sh up named no hosts" >&2; exit 1; }
host() { echo "$HOSTS" | cut -d, -f$(($1 + 1)); }
BRIDGE_ADDR=$(echo "$vars" | sed -n 's/^APTUS_NETNS_BRIDGE_ADDR=//p')

WORK=$(mktemp -d "${TMPDIR:-/tmp}/aptus-netns-test.XXXXXX") || exit 1
TAG="nt$$x$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"

# --- packet loss -----------------------------------------------------------------------------
loss_hosts=
if [ -n "$LOSS" ]; then
    if [ -n "$LOSS_ON" ]; then loss_hosts=$(host "$LOSS_ON"); else loss_hosts=$(echo "$HOSTS" | tr , ' '); fi
    for h in $loss_hosts; do
        ip netns exec "$h" nft add table inet aptusloss &&
            ip netns exec "$h" nft add chain inet aptusloss input '{ type filter hook input priority 0; }' &&
            if [ -n "$LOSS_TCP" ]; then
                ip netns exec "$h" nft add rule inet aptusloss input ip saddr != "$BRIDGE_ADDR" \
                    meta l4proto '{ udp, tcp }' numgen random mod 100 '<' "$LOSS" counter drop
            else
                ip netns exec "$h" nft add rule inet aptusloss input meta l4proto udp \
                    numgen random mod 100 '<' "$LOSS" counter drop
            fi || {
            echo "run_netns.sh: cannot add the nftables loss rule in $h; skipped" >&2
            exit 77
        }
    done
fi
# Datagrams the loss rules dropped, over every namespace that has them.
dropped() {
    n=0
    for h in $loss_hosts; do
        c=$(ip netns exec "$h" nft list chain inet aptusloss input 2>/dev/null |
            sed -n 's/.*counter packets \([0-9]*\) .*/\1/p' | head -1)
        n=$((n + ${c:-0}))
    done
    echo $n
}

# --- a link going down -----------------------------------------------------------------------
READY=$WORK/ready
if [ -n "$DOWN" ]; then
    dh=$(host "$DOWN")
    (
        # Wait for the program to say that it runs (at most the job's time-out).
        wait_for $((TIMEOUT * 10)) test -e "$READY" || exit 0
        ip netns exec "$dh" ip link set eth0 down && echo "$(date +%T) link of $dh down" >"$WORK/down"
    ) &
    DOWN_PID=$!
fi

# --- the job ---------------------------------------------------------------------------------
set -- "$MPIEXEC" --launcher netns --hosts "$HOSTS" ${PPN:+-ppn "$PPN"} -n "$NP" --timeout "$TIMEOUT" "$@"
# env VAR=VAL... sh -c 'echo $$; exec mpiexec ...': the jobid starts with mpiexec's pid.
while IFS= read -r kv; do set -- "$kv" "$@"; done <"$JOBENV"
[ "$STATS" -eq 1 ] && set -- APTUS_STATS=1 "$@"
set -- env NETNS_TEST_TAG="$TAG" NETNS_TEST_READY="$READY" NETNS_TEST_HOSTS="$HOSTS" "$@"
# Arguments of expect_exit.sh, in front of the command.
set -- -- sh -c 'echo $$ >"$0"; exec "$@"' "$WORK/pid" "$@"
if [ "$WANT" = nonzero ]; then set -- --nonzero "$@"; else set -- --exit "$WANT" "$@"; fi
# The checks go in front as well (read back in reverse, so that their order is kept).
if [ -s "$CHECKS" ]; then
    n=$(wc -l <"$CHECKS")
    i=$n
    while [ $i -gt 0 ]; do
        text=$(sed -n "${i}p" "$CHECKS")
        opt=$(sed -n "$((i - 1))p" "$CHECKS")
        case "$opt" in --each-rank) set -- "$opt" "$NP" "$text" "$@" ;; *) set -- "$opt" "$text" "$@" ;; esac
        i=$((i - 2))
    done
fi
echo "run_netns.sh: $NODES hosts ($HOSTS), np $NP${PPN:+ ppn $PPN}${LOSS:+, ${LOSS} % UDP${LOSS_TCP:+ and TCP} loss on ${loss_hosts}}${DOWN:+, link of $(host "$DOWN") down once ready}"
STATUS=0
sh "$EXPECT_EXIT" "$@" >"$WORK/out" 2>&1 || STATUS=1
cat "$WORK/out"

# --- after the job ---------------------------------------------------------------------------
while IFS= read -r re; do
    grep '^Aptus MPI: ' "$WORK/out" | grep -q -E -- "$re" ||
        fail "no message of the library (a line \"Aptus MPI: ...\") matches \"$re\""
done <"$ERROR_RES"
while IFS= read -r text; do
    grep '^\[aptus stats\] rank [0-9]*: ' "$WORK/out" | grep -q -E -- "$text" ||
        fail "no rank's statistics match \"$text\""
done <"$ANY_RANK"
for c in $CHANNELS; do
    r=${c%%:*} rest=${c#*:}
    p=${rest%%:*} ch=${rest#*:}
    grep -q -E "^\[aptus stats\] rank $r: $p +$ch +[0-9]" "$WORK/out" ||
        fail "rank $r's statistics do not show its messages to rank $p going by $ch"
done
if [ -n "$LOSS" ]; then
    d=$(dropped)
    echo "run_netns.sh: the loss rules dropped $d datagrams"
    [ "$d" -gt 0 ] || fail "the loss rules dropped nothing: the job was not tested under loss"
fi
if [ -n "$DOWN" ]; then
    if [ -s "$WORK/down" ]; then cat "$WORK/down"; else fail "the link never went down (the program did not get ready)"; fi
fi
wait_for 300 no_job_processes || fail "processes of the job left behind: $(for p in $(tagged_pids); do
    tr '\0' ' ' <"/proc/$p/cmdline"
    echo "(pid $p)"
done)"
JOBPID=$(cat "$WORK/pid" 2>/dev/null)
if [ -n "$JOBPID" ]; then
    shm_gone() { ! ls /dev/shm/ | grep -q "^aptus-${JOBPID}x"; }
    wait_for 100 shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-${JOBPID}x")"
else
    fail "mpiexec never ran"
fi
[ $STATUS -eq 0 ] && echo "run_netns.sh: ok"
exit $STATUS
