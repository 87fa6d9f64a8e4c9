#!/bin/sh
# The interface of a running job loses its address: a job of 2 ranks over ud-sr inside one
# network namespace (mpiexec there too), and once dead_peer's ring runs the namespace's eth0
# address is removed. Every send then fails; the job must end within seconds with the UD
# channel's message saying so -- not retry until APTUS_PEER_TIMEOUT -- and leave no process.
# usage: iface_gone.sh NETNS_SH MPIEXEC DEAD_PEER   (root; exit 77 where namespaces cannot be made)
set -u
[ $# -eq 3 ] || { echo "usage: iface_gone.sh NETNS_SH MPIEXEC DEAD_PEER" >&2; exit 2; }
if [ -z "${APTUS_NETNS_H0:-}" ]; then
    exec sh "$1" run -n 1 -- sh "$0" "$@"
fi
MPIEXEC=$2 PROG=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL iface_gone: $*" >&2; cat "$WORK/out" >&2; exit 1; }
ip netns exec "$APTUS_NETNS_H0" env APTUS_SEND_RULES='self;ud-sr' APTUS_PEER_TIMEOUT=300 \
    NETNS_TEST_READY="$WORK/ready" "$MPIEXEC" --timeout 90 -n 2 "$PROG" >"$WORK/out" 2>&1 &
job=$!
i=0
while [ ! -e "$WORK/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$WORK/ready" ] || fail "the program never got ready"
ip -n "$APTUS_NETNS_H0" addr flush dev eth0 || fail "cannot remove the address"
t0=$(date +%s)
wait $job
rc=$?
took=$(($(date +%s) - t0))
echo "job ended with status $rc, $took s after the address went"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "status $rc: the job must fail, not time out"
[ $took -le 30 ] || fail "it took $took s"
grep -q "Aptus MPI: rank .: UD channel: every datagram sent for 5 s failed" "$WORK/out" || fail "no message of the UD channel"
grep -q "did the interface go away?" "$WORK/out" || fail "the message does not say why"
i=0
while [ -n "$(ip netns pids "$APTUS_NETNS_H0")" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
left=$(ip netns pids "$APTUS_NETNS_H0")
[ -z "$left" ] || fail "processes left in the namespace: $(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; done)"
echo "ok"
