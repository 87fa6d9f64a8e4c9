#!/bin/sh
# netns_agent.sh: an "ssh" for the hosts of scripts/netns.sh, for launchers that start their
# remote daemons through a remote-shell command (Open MPI's plm_rsh_agent, MPICH Hydra's
# -launcher-exec). Called like ssh:
#
#   netns_agent.sh [ssh options...] HOST command words...
#
# HOST is a network namespace's name or an IPv4 address that one of the namespaces has (the
# launchers are given addresses, which they can resolve); the command words are joined with
# spaces and run by sh inside that namespace, as ssh would have the remote shell do:
#   exec ip netns exec NAMESPACE sh -c "command words..."
# Leading words that start with '-' are taken as ssh options and ignored (Hydra passes -x).
# With NETNS_AGENT_HOST=own in the environment, the command runs more like on a host of its own:
# with its own host name (the namespace's name, in a UTS namespace of its own) and its own empty
# /dev/shm (a tmpfs mounted in the mount namespace that ip netns exec makes; shared by the daemon
# and the ranks it starts, gone with them). Otherwise the namespaces share the machine's host
# name and /dev/shm, and Open MPI, which names its daemons' nodes and its shared-memory segments
# (vader_segment.HOST.JOBID.LOCALRANK) after the host name, mixes up the two "hosts": ranks of
# both open the same segment (segfaults in mca_btl_vader_poll_handle_frag) or mpirun cannot
# route to a daemon ("ORTE does not know how to route a message to the specified daemon").
# Needs root (ip netns exec). Exits 255 (ssh's code for a connection failure) when HOST is no
# namespace.
set -u
while [ $# -gt 0 ]; do
    case "$1" in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options that take a value
    -*) shift ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "netns_agent.sh: usage: netns_agent.sh HOST command..." >&2; exit 255; }
host=$1
shift
ns=
for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if [ "$n" = "$host" ]; then ns=$n; break; fi
done
if [ -z "$ns" ]; then
    for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
        if ip -n "$n" -4 -o addr show 2>/dev/null | awk '$2 != "lo" {sub(/\/.*/, "", $4); print $4}' | grep -q -x -F "$host"; then
            ns=$n
            break
        fi
    done
fi
[ -n "$ns" ] || { echo "netns_agent.sh: no network namespace is or has the address '$host'" >&2; exit 255; }
if [ "${NETNS_AGENT_HOST:-}" = own ]; then
    # shellcheck disable=SC2016
    exec ip netns exec "$ns" unshare --uts sh -c \
        'hostname "$2" && mount -t tmpfs -o mode=1777 netns-shm /dev/shm || exit 255; exec sh -c "$1"' sh "$*" "$ns"
fi
exec ip netns exec "$ns" sh -c "$*"
