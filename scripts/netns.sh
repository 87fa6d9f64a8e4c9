#!/bin/sh
# Network namespaces joined by a bridge: several "hosts" on this machine, for the launcher
# tests, the benchmarks and users (mpiexec --launcher netns --hosts ...).
#
#   scripts/netns.sh up [-n COUNT] [-p PREFIX] [-m MTU]
#                                                make COUNT namespaces (default 2); prints
#                                                shell assignments (eval "$(... up)"):
#       APTUS_NETNS_PREFIX=P  APTUS_NETNS_HOSTS=P-h0,P-h1,...  APTUS_NETNS_BRIDGE_ADDR=10.A.B.254
#       APTUS_NETNS_H0=P-h0   APTUS_NETNS_ADDR0=10.A.B.1   ... (one pair per namespace)
#   scripts/netns.sh down PREFIX                 remove them (namespaces, veths, bridge)
#   scripts/netns.sh run [-n COUNT] [-m MTU] -- cmd...
#                                                make them, export the variables above, run
#                                                cmd, remove everything (also when cmd fails or
#                                                this script is interrupted); exits with cmd's code
#   scripts/netns.sh gc                          remove the sets of `run`s whose process is gone
#
# Each namespace P-hI has loopback up and a veth (eth0, 10.A.B.(I+1)/24) into the bridge Pb in
# the root namespace, which has 10.A.B.254 so that a program there (mpiexec) is reachable. The
# /24 is chosen per set, among those no interface or route of this machine uses. There is no
# default route: traffic stays between the namespaces and the root namespace, on this machine.
# -m MTU sets the links' MTU (veths and bridge; default 1500, as made): 9000 is an Ethernet
# with jumbo frames, 65520 the largest IP-over-InfiniBand (connected mode) MTU.
# Needs root and iproute2; exits 77 (skip) where namespaces cannot be made.
set -u

die_skip() { echo "netns.sh: $*" >&2; exit 77; }
die() { echo "netns.sh: $*" >&2; exit 2; }

need_tools() {
    [ "$(id -u)" -eq 0 ] || die_skip "needs root to create network namespaces"
    command -v ip >/dev/null 2>&1 || die_skip "needs iproute2 (ip)"
}

rand_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

# Removes the set with this prefix; never fails.
down() {
    p=$1
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$p-h[0-9]+$"); do
        # Processes still in the namespace would keep it alive (a bind mount stays until the
        # last user exits, but the name goes).
        ip netns delete "$ns" 2>/dev/null
    done
    for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${p}(b|v[0-9]+)$"); do
        ip link delete "$l" 2>/dev/null
    done
    return 0
}

# gc: sets made by `run` carry its PID (prefix ar<PID>x..); remove those whose process is gone.
gc() {
    for p in $(ip netns list 2>/dev/null | awk '{print $1}' | sed -n 's/^\(ar[0-9][0-9]*x[0-9a-f]*\)-h[0-9]*$/\1/p' | sort -u); do
        pid=$(echo "$p" | sed 's/^ar\([0-9]*\)x.*/\1/')
        if ! kill -0 "$pid" 2>/dev/null; then down "$p"; fi
    done
    for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^ar[0-9]+x[0-9a-f]+(b|v[0-9]+)$'); do
        p=$(echo "$l" | sed -E 's/(b|v[0-9]+)$//')
        pid=$(echo "$p" | sed 's/^ar\([0-9]*\)x.*/\1/')
        if ! kill -0 "$pid" 2>/dev/null; then ip link delete "$l" 2>/dev/null; fi
    done
}

subnet_free() {
    ! ip -4 -o addr show 2>/dev/null | grep -q " 10\.$1\.$2\." &&
        ! ip -4 route show table all 2>/dev/null | grep -q "10\.$1\.$2\."
}

# up COUNT PREFIX [MTU]: prints the assignments; on failure removes what it made and exits 77.
up() {
    count=$1
    p=$2
    mtu=${3:-}
    ip netns list 2>/dev/null | awk '{print $1}' | grep -q -E "^$p-h[0-9]+$" && die "namespaces with prefix $p exist already"
    # Choose the /24 under a lock, so that parallel runs do not pick the same one.
    exec 9>/run/aptus-netns.lock 2>/dev/null || exec 9>/tmp/aptus-netns.lock
    command -v flock >/dev/null 2>&1 && flock 9
    a= b=
    for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
        ca=$((100 + r % 150))
        cb=$((r / 150 % 256))
        if subnet_free "$ca" "$cb"; then a=$ca; b=$cb; break; fi
    done
    [ -n "$a" ] || { exec 9>&-; die_skip "found no free 10.x.y.0/24"; }
    net="10.$a.$b"
    br="${p}b"
    fail() { echo "netns.sh: $*" >&2; down "$p"; exec 9>&-; exit 77; }
    ip link add "$br" type bridge 2>/dev/null || fail "cannot create a bridge (ip link add $br type bridge)"
    ip addr add "$net.254/24" dev "$br" || fail "cannot address the bridge"
    ip link set "$br" up || fail "cannot bring the bridge up"
    exec 9>&-
    hosts=
    i=0
    while [ $i -lt "$count" ]; do
        ns="$p-h$i"
        v="${p}v$i"
        ip netns add "$ns" 2>/dev/null || fail "cannot create network namespace $ns"
        ip link add "$v" type veth peer name eth0 netns "$ns" 2>/dev/null || fail "cannot create veth $v"
        ip link set "$v" master "$br" && ip link set "$v" up || fail "cannot attach $v to $br"
        ip -n "$ns" link set lo up && ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0 &&
            ip -n "$ns" link set eth0 up || fail "cannot configure $ns"
        if [ -n "$mtu" ]; then
            ip link set "$v" mtu "$mtu" && ip -n "$ns" link set eth0 mtu "$mtu" || fail "cannot set MTU $mtu on $v"
        fi
        hosts="$hosts${hosts:+,}$ns"
        i=$((i + 1))
    done
    echo "APTUS_NETNS_PREFIX=$p"
    echo "APTUS_NETNS_HOSTS=$hosts"
    echo "APTUS_NETNS_BRIDGE=$br"
    echo "APTUS_NETNS_BRIDGE_ADDR=$net.254"
    i=0
    while [ $i -lt "$count" ]; do
        echo "APTUS_NETNS_H$i=$p-h$i"
        echo "APTUS_NETNS_ADDR$i=$net.$((i + 1))"
        i=$((i + 1))
    done
}

check_mtu() {
    [ -z "$1" ] && return 0
    case "$1" in *[!0-9]*) die "-m needs a number, got '$1'" ;; esac
    [ "$1" -ge 576 ] && [ "$1" -le 65535 ] || die "-m must be 576..65535, got $1"
}

check_count() {
    case "$1" in '' | *[!0-9]*) die "-n needs a number, got '$1'" ;; esac
    [ "$1" -ge 1 ] && [ "$1" -le 200 ] || die "-n must be 1..200, got $1"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up)
    count=2 prefix= mtu=
    while [ $# -gt 0 ]; do
        case "$1" in
        -n) count=${2:-}; shift 2 || die "-n needs a value" ;;
        -p) prefix=${2:-}; shift 2 || die "-p needs a value" ;;
        -m) mtu=${2:-}; shift 2 || die "-m needs a value" ;;
        *) die "unknown argument '$1'" ;;
        esac
    done
    check_count "$count"
    check_mtu "$mtu"
    [ -n "$prefix" ] || prefix="an$(rand_hex 3)"
    echo "$prefix" | grep -q -E '^[a-z][a-z0-9]{0,9}$' || die "-p: 1 to 10 lower-case letters and digits, starting with a letter"
    need_tools
    up "$count" "$prefix" "$mtu"
    ;;
down)
    [ $# -eq 1 ] || die "usage: netns.sh down PREFIX"
    need_tools
    down "$1"
    ;;
gc)
    need_tools
    gc
    ;;
run)
    count=2 mtu=
    while [ $# -gt 0 ]; do
        case "$1" in
        -n) count=${2:-}; shift 2 || die "-n needs a value" ;;
        -m) mtu=${2:-}; shift 2 || die "-m needs a value" ;;
        --) shift; break ;;
        *) die "unknown argument '$1' (usage: netns.sh run [-n COUNT] [-m MTU] -- cmd...)" ;;
        esac
    done
    [ $# -gt 0 ] || die "run: no command given"
    check_count "$count"
    check_mtu "$mtu"
    need_tools
    gc
    prefix="ar$$x$(rand_hex 1)"
    vars=$(up "$count" "$prefix" "$mtu") || exit $?
    trap 'down "$prefix"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    for v in $vars; do export "$v"; done
    "$@"
    rc=$?
    exit $rc
    ;;
*)
    echo "usage: netns.sh up [-n COUNT] [-p PREFIX] [-m MTU] | down PREFIX | run [-n COUNT] [-m MTU] -- cmd... | gc" >&2
    exit 2
    ;;
esac
