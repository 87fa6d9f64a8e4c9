#!/bin/sh
# APTUS_FABRIC_IFACE=auto with a bridge made after the node's own interface (our namespace
# sets make one in this namespace, as containers and virtual machines do): providers list the
# newest interface first, and a job that took it broke when it went away. The job must take the
# interface of the default route, or without one the oldest usable interface -- never the
# bridge. usage: iface_auto.sh NETNS_SH MPIEXEC PROG  (root; 77 where namespaces cannot be made)
set -u
[ $# -eq 3 ] || { echo "usage: iface_auto.sh NETNS_SH MPIEXEC PROG" >&2; exit 2; }
if [ -z "${APTUS_NETNS_BRIDGE:-}" ]; then
    exec sh "$1" run -n 1 -- sh "$0" "$@"
fi
out=$(APTUS_SEND_RULES='self;ud-sr' APTUS_STATS=1 "$2" --timeout 60 -n 2 "$3" 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out" >&2; echo "FAIL iface_auto: the job failed ($rc)" >&2; exit 1; }
used=$(echo "$out" | sed -n 's/.*ud-sr engine: provider [a-z]*, interface \([^;]*\);.*/\1/p' | sort -u)
route=$(awk '$2 == "00000000" { print $1; exit }' /proc/net/route)
echo "interface used: $used; default route: ${route:-none}; bridge: $APTUS_NETNS_BRIDGE"
[ -n "$used" ] || { echo "FAIL iface_auto: the statistics name no interface" >&2; exit 1; }
[ "$used" != "$APTUS_NETNS_BRIDGE" ] || { echo "FAIL iface_auto: the job took the bridge made last" >&2; exit 1; }
[ -z "$route" ] || [ "$used" = "$route" ] || { echo "FAIL iface_auto: not the default route's interface" >&2; exit 1; }
echo ok
