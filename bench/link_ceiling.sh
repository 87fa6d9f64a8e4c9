#!/bin/sh
# link_ceiling.sh: the kernel's own throughput between two network namespaces, by plain
# sockets (bench/link/sock_stream.c): UDP datagrams of several sizes (what a UD channel over
# libfabric's udp provider can reach at best: one sendmsg per datagram, IP fragments above the
# link's MTU), UDP with segmentation offload (UDP_SEGMENT, which the udp provider does not
# use) and TCP (what Open MPI's tcp BTL and UCX's tcp transport ride on).
#
# usage: bench/link_ceiling.sh [-m MTU[,MTU...]] [-t SECONDS] [-r ROUNDS] [BUILD_DIR]
#   -m   link MTUs to measure (default 1500,9000,65520; scripts/netns.sh -m)
#   -t   seconds per run (default 2);  -r  rounds (default 3; best and median are printed)
# Sender pinned to core 1 in namespace h1, receiver to core 0 in h0 (BENCH_CPUS="0 1").
# Needs root and iproute2. Prints one table: MB/s received (10^6 bytes/s).
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
mtus=1500,9000,65520 secs=2 rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
    -m) mtus=$2; shift 2 ;;
    -t) secs=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -h) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "link_ceiling.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$repo/build}
tool=$build/bench/sock_stream
[ -x "$tool" ] || { echo "link_ceiling.sh: no $tool (build the project first)" >&2; exit 2; }
set -- ${BENCH_CPUS:-0 1}
cpu0=$1 cpu1=${2:-$1}

# One measurement inside a set of namespaces: MODE SIZE RCVBUF -> MB/s (or "-").
measure() {
    rmode=$1
    [ "$1" = udp-gso ] && rmode=udp
    out=$(mktemp)
    port=$((20000 + $$ % 20000))
    ip netns exec "$APTUS_NETNS_H0" taskset -c "$cpu0" "$tool" recv $port $rmode "$3" >"$out" 2>&1 &
    rp=$!
    sleep 0.3
    ip netns exec "$APTUS_NETNS_H1" taskset -c "$cpu1" "$tool" send "$APTUS_NETNS_ADDR0" $port "$1" "$2" "$secs" >/dev/null 2>&1
    wait $rp
    sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' "$out" | grep . || echo -
    rm -f "$out"
}

# best and median of a list of numbers
stats() { tr ' ' '\n' | grep -v -e '^-$' -e '^$' | sort -n | awk '{v[NR]=$1} END {if (!NR) print "- -"; else printf "%.0f %.0f\n", v[NR], v[int((NR+1)/2)]}'; }

cases="udp:1472:0 udp:8972:0 udp:32768:0 udp:32768:4194304 udp:65000:4194304 udp-gso:64768:4194304 tcp:1048576:0"

# Inside a set of namespaces (netns.sh run calls this script again): one MTU's rows.
if [ "${LINK_CEILING_INSIDE:-}" = 1 ]; then
    for c in $cases; do
        mode=${c%%:*} rest=${c#*:}
        size=${rest%%:*} rb=${rest#*:}
        vals= r=0
        while [ $r -lt "$rounds" ]; do
            vals="$vals $(measure "$mode" "$size" "$rb")"
            r=$((r + 1))
        done
        printf '%-7s %-8s %-9s %-8s %s\n' "$LINK_CEILING_MTU" "$mode" "$size" "$rb" "$(echo $vals | stats)"
    done
    exit 0
fi

echo "# link_ceiling: sock_stream $secs s per run, $rounds rounds; receiver cpu $cpu0 in h0, sender cpu $cpu1 in h1; MB/s received, best / median"
echo "# (rcvbuf 0: the default socket receive buffer, $(cat /proc/sys/net/core/rmem_default) bytes here)"
printf '%-7s %-8s %-9s %-8s %s\n' mtu mode size rcvbuf "best median"
for mtu in $(echo "$mtus" | tr ',' ' '); do
    LINK_CEILING_INSIDE=1 LINK_CEILING_MTU=$mtu sh "$repo/scripts/netns.sh" run -n 2 -m "$mtu" -- \
        sh "$0" -t "$secs" -r "$rounds" "$build" || exit $?
done
