#!/usr/bin/env bash
# net_compare.sh: Aptus MPI against Debian's Open MPI (tcp BTL) and MPICH (ch4:ucx, UCX tcp)
# between two network namespaces of this machine (scripts/netns.sh), plus a raw libfabric udp
# ping-pong; runs interleaved (A B C A B C ...) and prints one table per benchmark.
#
# usage: bench/net_compare.sh [options] [BUILD_DIR]
#   BUILD_DIR     Aptus build tree (default: <repo>/build); its mpiexec and bench/ programs
# options:
#   -r ROUNDS     rounds (default 3, with --quick 1; env ROUNDS)
#   -l LIBS       libraries, comma-separated, in column order (default aptus,ompi,mpich,raw);
#                 raw = fi_pingpong -p udp -e dgram (1-byte latency, a column of the latency
#                 table; always run without loss: a lost datagram would hang it); rawtcp =
#                 fi_pingpong -p tcp -e msg (the connected endpoints rc-sr runs on)
#   -V SPEC       a column: LIB[:LABEL][=VAR=VAL[ VAR=VAL...]] (repeatable), e.g.
#                   -V aptus  -V 'aptus:zcopy=APTUS_SEND_RULES=self;smp;ud-zcopy'
#                   -V 'aptus:spin50=APTUS_SPIN_COUNT=50 APTUS_WAIT_BLOCK=1'
#                   -V 'ompi:yield=OMPI_MCA_mpi_yield_when_idle=1'
#                 The settings go into the launcher's environment (Open MPI: also -x VAR).
#                 A library of -l with no -V has one column with its defaults.
#   -F FILE       more -V SPECs, one per line ('#' starts a comment)
#   -b BENCHES    comma-separated (default latency,bandwidth,msgrate,oversub):
#                   latency    pt2pt_latency -m 1M (0 B .. 1 MiB), 2 ranks
#                   bandwidth  pt2pt_bandwidth (uni- and bi-directional, 1 B .. 4 MiB), 2 ranks
#                   msgrate    msg_rate (1 pair, 1 B .. 64 KiB), 2 ranks
#                   ring4      ring_allreduce -T 1, 4 ranks (2 per namespace) on the 2 cores
#                   coll4      coll_latency -c allreduce,alltoall -m 4K -T 0.5, 4 ranks likewise
#                   oversub    ring4,coll4
#                   rma        rma_latency -m 64K (put/get latency, put bandwidth, accumulate,
#                              fetch-and-op, compare-and-swap; MPI_Win_allocate + flush), 2 ranks
#                              (not in the default list; -a 'rma=-s pscw' etc. for the others)
#   -a BENCH=ARGS more arguments for one benchmark, after the defaults (repeatable), e.g.
#                 -a 'latency=-m 64K -r 3'
#   --loss P      drop P % (steps of 0.1) of the UDP and TCP packets that arrive at each
#                 namespace's eth0 from the other namespace (nftables, input hook); packets
#                 from the bridge address (the launchers in the root namespace) are kept
#                 (the veths pass TCP as GSO packets of up to ~64 KB, which the rule drops
#                 whole, and UDP as 1.5 KB datagrams: see --gso-segs)
#   --gso-segs N  set gso_max_segs N on both namespaces' eth0 (1: TCP in MTU-sized packets,
#                 so that the loss rule drops frames alike for TCP and UDP; this VM then moves
#                 TCP several times slower); default: left as made (65535)
#   --mtu N       the links' MTU (scripts/netns.sh -m; default 1500): 9000 for jumbo frames,
#                 65520 for an IP-over-InfiniBand-like link where a 32 KiB datagram is one frame
#   --quick       tiny iteration counts, for a smoke test (time limit per run 120 s)
#   -u            unpinned (the ranks still report their namespace)
#   --pin-oversub pin the 4-rank runs too (rank r on the (r mod 2)-th core; default unpinned)
#   --no-verify   keep a column whose check run did not send its data over the veth link
#   -o DIR        keep every run's output and stderr in DIR (default: a temp dir, removed
#                 at the end unless -k)
#   -k            keep the temp dir
#   -t SECONDS    time limit per run (default 900, with --quick 120)
#   --stall S     stop a run that prints nothing for S seconds (default 300, with --quick 30;
#                 0: never) and keep the rows it printed: MPICH 4.0.2 with UCX 1.13 tcp hangs
#                 in MPI_Finalize now and then, after its results are out
#   -h            this help
# env: CFLAGS (default -O2) for mpicc.mpich / mpicc.openmpi; APTUS_MPIEXEC; BENCH_CPUS ("0 1").
#
# Needs root (namespaces, nftables), iproute2, taskset; Open MPI, MPICH and fi_pingpong
# (libfabric-bin) are used where installed (as root the script installs missing Debian
# packages) and skipped with a note otherwise.
#
# How each library runs (all launchers in the root namespace, reaching the namespaces over the
# bridge; one rank per namespace for the 2-rank benchmarks, ranks 0,1 / 2,3 for the 4-rank ones):
#   aptus  mpiexec --launcher netns --hosts H0,H1 -ppn K -n N
#   ompi   mpirun --host A0:K,A1:K --map-by slot --bind-to none --mca pml ob1
#            --mca btl tcp,self (4 ranks: self,vader,tcp) --mca btl_tcp_if_include eth0
#            --mca oob_tcp_if_include NET/24 --mca plm_rsh_agent bench/netns_agent.sh
#            (NETNS_AGENT_HOST=own: each daemon gets the namespace's name as host name and a
#            /dev/shm of its own, see bench/netns_agent.sh)
#   mpich  UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 mpiexec.mpich -launcher ssh
#            -launcher-exec bench/netns_agent.sh -localhost BRIDGE_ADDR -hosts A0:K,A1:K
#            -ppn K -bind-to none   (without UCX_TLS, UCX takes shared memory between the
#            namespaces: same kernel; MPICH's own shared memory serves ranks of one namespace)
#   raw    server: ip netns exec H1 taskset -c CPU1 fi_pingpong -p udp -e dgram -I N -S 1
#          client: ip netns exec H0 taskset -c CPU0 fi_pingpong ... A1
# A0, A1 are the namespaces' addresses; bench/netns_agent.sh maps them back to namespaces.
#
# Pinning: each rank starts through a wrapper that takes its rank from PMI_RANK (Aptus, Hydra)
# or OMPI_COMM_WORLD_RANK and execs taskset -c CPU (rank 0 -> first core, 1 -> second); the
# launchers' own binding is off, the launchers and their daemons/proxies are not pinned.
# Checks: the wrapper reports each rank's namespace (ip netns identify), which must be H0 for
# rank 0 (and 1 with 4 ranks) and H1 for the others, in every run; before the rounds, each
# column runs pt2pt_bandwidth -u -s 64K once, which must carry >= 2 MB over H1's eth0
# (Aptus: with APTUS_STATS=1, whose channel lines are shown); a column that fails it is dropped.
#
# Example: bench/net_compare.sh -r 3 build-bench
#          bench/net_compare.sh --quick --loss 1 -l aptus,ompi -b latency,oversub build-bench
set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=bench/bench_lib.sh
. "$here/bench_lib.sh"
bl_name=net_compare.sh

usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "net_compare.sh: $*" >&2; exit 2; }

rounds=${ROUNDS:-}
libs="aptus,ompi,mpich,raw"
benches="latency,bandwidth,msgrate,oversub"
specs=()
declare -A extra_args
loss=""
quick=0
unpinned=0
pin_oversub=0
verify=1
gso_segs=""
link_mtu=""
outdir=""
keep=0
run_limit=""
stall=""
build="$repo/build"

while [ $# -gt 0 ]; do
    case $1 in
    -r) [ $# -ge 2 ] || die "-r needs a value"; rounds=$2; shift 2 ;;
    -l) [ $# -ge 2 ] || die "-l needs a value"; libs=$2; shift 2 ;;
    -V) [ $# -ge 2 ] || die "-V needs a value"; specs+=("$2"); shift 2 ;;
    -F)
        [ $# -ge 2 ] && [ -r "$2" ] || die "-F needs a readable file"
        while IFS= read -r line; do
            line=${line%%#*}
            line=$(echo "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
            [ -n "$line" ] && specs+=("$line")
        done <"$2"
        shift 2 ;;
    -b) [ $# -ge 2 ] || die "-b needs a value"; benches=$2; shift 2 ;;
    -a)
        [ $# -ge 2 ] || die "-a needs BENCH=ARGS"
        case $2 in *=*) ;; *) die "-a needs BENCH=ARGS, got '$2'" ;; esac
        extra_args[${2%%=*}]="${extra_args[${2%%=*}]:-} ${2#*=}"; shift 2 ;;
    --loss) [ $# -ge 2 ] || die "--loss needs a percentage"; loss=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --gso-segs) [ $# -ge 2 ] || die "--gso-segs needs a number"; gso_segs=$2; shift 2 ;;
    --mtu) [ $# -ge 2 ] || die "--mtu needs a number"; link_mtu=$2; shift 2 ;;
    -u) unpinned=1; shift ;;
    --pin-oversub) pin_oversub=1; shift ;;
    --no-verify) verify=0; shift ;;
    -o) [ $# -ge 2 ] || die "-o needs a directory"; outdir=$2; shift 2 ;;
    -k) keep=1; shift ;;
    -t) [ $# -ge 2 ] || die "-t needs seconds"; run_limit=$2; shift 2 ;;
    --stall) [ $# -ge 2 ] || die "--stall needs seconds"; stall=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
[ -d "$build" ] && build=$(cd "$build" && pwd)
[ -n "$rounds" ] || { if [ $quick = 1 ]; then rounds=1; else rounds=3; fi; }
[ -n "$run_limit" ] || { if [ $quick = 1 ]; then run_limit=120; else run_limit=900; fi; }
[ -n "$stall" ] || { if [ $quick = 1 ]; then stall=30; else stall=300; fi; }
case $stall in '' | *[!0-9]*) die "bad --stall '$stall'" ;; 0) stall="" ;; esac
case $rounds in '' | *[!0-9]* | 0) die "bad round count '$rounds'" ;; esac
case $run_limit in '' | *[!0-9]* | 0) die "bad time limit '$run_limit'" ;; esac
case $gso_segs in *[!0-9]* | 0) die "bad --gso-segs '$gso_segs'" ;; esac
permille=""
if [ -n "$loss" ]; then
    echo "$loss" | grep -q -E '^[0-9]+(\.[0-9])?$' || die "--loss: a percentage with at most one decimal, got '$loss'"
    permille=$(awk -v p="$loss" 'BEGIN { printf "%d", p * 10 + 0.5 }')
    [ "$permille" -ge 1 ] && [ "$permille" -le 1000 ] || die "--loss must be 0.1 .. 100, got '$loss'"
fi

[ "$(id -u)" = 0 ] || { echo "net_compare.sh: needs root (network namespaces, nftables)" >&2; exit 77; }
for c in ip taskset timeout; do command -v $c >/dev/null || die "$c is needed"; done
if [ -n "$loss" ] && ! command -v nft >/dev/null; then
    bl_ensure_pkgs nft -- nftables || die "--loss needs nft (apt-get install nftables)"
fi

# --- benchmarks --------------------------------------------------------------------------------
# name -> "program ranks-per-namespace default-args quick-args"
declare -A b_prog b_ppn b_args
def_bench() { b_prog[$1]=$2; b_ppn[$1]=$3; if [ $quick = 1 ]; then b_args[$1]=$5; else b_args[$1]=$4; fi; }
def_bench latency pt2pt_latency 1 "-m 1M" "-m 1M -i 20 -r 2"
def_bench bandwidth pt2pt_bandwidth 1 "" "-m 1M -w 8 -i 2 -r 2"
def_bench msgrate msg_rate 1 "" "-m 64K -w 8 -i 2 -r 2"
def_bench ring4 ring_allreduce 2 "-T 1" "-i 200 -r 2 -T 0.2"
def_bench coll4 coll_latency 2 "-c allreduce,alltoall -m 4K -T 0.5" "-c allreduce,alltoall -m 1K -i 50 -r 2 -T 0.2"
def_bench rma rma_latency 1 "-m 64K -i 200" "-m 1K -i 20 -r 2"
blist=()
for b in $(echo "$benches" | tr ',' ' '); do
    case $b in
    oversub) blist+=(ring4 coll4) ;;
    latency | bandwidth | msgrate | ring4 | coll4 | rma) blist+=("$b") ;;
    *) die "unknown benchmark '$b' (latency, bandwidth, msgrate, ring4, coll4, oversub, rma)" ;;
    esac
done
for b in "${!extra_args[@]}"; do
    [ -n "${b_prog[$b]:-}" ] || die "-a: unknown benchmark '$b'"
    b_args[$b]="${b_args[$b]} ${extra_args[$b]}"
done

# --- scratch, namespaces, clean-up -------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aptus-netcompare.XXXXXX")
[ -n "$outdir" ] || outdir="$tmp/out"
mkdir -p "$outdir"
agent="$here/netns_agent.sh"
netns_sh="$repo/scripts/netns.sh"
# Every process of a run carries the tag in its environment (the launchers pass it on; the
# agent runs the remote daemons with the launcher's environment), so leftovers can be found.
TAG="nc$$x$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
tagged_pids() {
    local f
    for f in $(grep -l -s -z -x -F "NET_COMPARE_TAG=$TAG" /proc/[0-9]*/environ); do
        f=${f#/proc/}
        [ "${f%/environ}" = $$ ] || echo "${f%/environ}"
    done
}
kill_leftovers() { # TERM, then KILL after 2 s, each process of the tag by its id
    local pids p i
    pids=$(tagged_pids)
    [ -n "$pids" ] || return 0
    for p in $pids; do kill -TERM "$p" 2>/dev/null; done
    for i in 1 2 3 4 5 6 7 8 9 10; do
        [ -n "$(tagged_pids)" ] || return 0
        sleep 0.2
    done
    for p in $(tagged_pids); do kill -KILL "$p" 2>/dev/null; done
}
PREFIX=""
cleanup() {
    bl_stop_run
    kill_leftovers
    [ -n "$PREFIX" ] && sh "$netns_sh" down "$PREFIX"
    if [ "$keep" = 1 ]; then echo "net_compare.sh: temp dir kept: $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The form of the sets of `netns.sh run` (ar<pid>x<hex>, at most 10 characters), which
# `netns.sh gc` removes once this script's process is gone (also after a kill -9).
sh "$netns_sh" gc
PREFIX=$(printf 'ar%sx%s' $$ "$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')" | cut -c1-10)
vars=$(sh "$netns_sh" up -n 2 -p "$PREFIX" ${link_mtu:+-m "$link_mtu"})
rc=$?
if [ $rc -ne 0 ]; then
    echo "net_compare.sh: scripts/netns.sh up failed ($rc)" >&2
    [ $rc = 77 ] && exit 77
    exit 1
fi
eval "$vars"
H0=$APTUS_NETNS_H0 H1=$APTUS_NETNS_H1 A0=$APTUS_NETNS_ADDR0 A1=$APTUS_NETNS_ADDR1
BR=$APTUS_NETNS_BRIDGE_ADDR
NET=${A0%.*}.0/24
if [ -n "$gso_segs" ]; then
    for h in $H0 $H1; do
        ip -n "$h" link set dev eth0 gso_max_segs "$gso_segs" || die "cannot set gso_max_segs on $h's eth0"
    done
fi

# --- packet loss -------------------------------------------------------------------------------
loss_rule() {
    ip netns exec "$1" nft add rule inet aptusloss input iifname eth0 ip saddr != "$BR" \
        meta l4proto '{ udp, tcp }' numgen random mod 1000 '<' "$permille" counter drop
}
loss_on() {
    [ -n "$loss" ] || return 0
    local h
    for h in $H0 $H1; do loss_rule "$h" || return 1; done
}
loss_off() { # also resets the counters
    [ -n "$loss" ] || return 0
    local h
    for h in $H0 $H1; do ip netns exec "$h" nft flush chain inet aptusloss input; done
}
dropped() { # packets the loss rules of both namespaces dropped (0 without --loss)
    local h
    for h in $H0 $H1; do [ -z "$loss" ] || ip netns exec "$h" nft list chain inet aptusloss input 2>/dev/null; done |
        awk '{ for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}
if [ -n "$loss" ]; then
    for h in $H0 $H1; do
        ip netns exec "$h" nft add table inet aptusloss &&
            ip netns exec "$h" nft add chain inet aptusloss input '{ type filter hook input priority 0; }' ||
            die "cannot add the nftables table in $h"
    done
    loss_on || die "cannot add the nftables loss rule"
fi
rx_bytes() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/rx_bytes; }
rx_packets() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/rx_packets; }

# --- cores -------------------------------------------------------------------------------------
cpus=$(bl_cpus)
ncpus=$(echo $cpus | wc -w)
[ "$ncpus" -ge 2 ] || echo "net_compare.sh: note: only $ncpus usable core(s); both ranks share it" >&2
cpu0=$(echo $cpus | cut -d' ' -f1)
cpu1=$(echo $cpus | cut -d' ' -f2)
cpu1=${cpu1:-$cpu0}
pin2="$cpus" pin4=none
[ $unpinned = 1 ] && pin2=none
[ $pin_oversub = 1 ] && [ $unpinned = 0 ] && pin4="$cpus"
bl_write_pin "$tmp/pin2.sh" "$pin2"
bl_write_pin "$tmp/pin4.sh" "$pin4"

# --- columns -----------------------------------------------------------------------------------
cflags=${CFLAGS:--O2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
declare -A note col_lib col_env col_desc
cols=()
raw=0 rawtcp=0
progs=$(for b in "${blist[@]}"; do echo "${b_prog[$b]}"; done | sort -u)
progs="$progs pt2pt_bandwidth" # the check run
lib_ok() { # lib_ok LIB: "" when usable (binaries built), else why not
    case $1 in
    aptus)
        mpiexec=$(bl_aptus_mpiexec "$build")
        [ -n "$mpiexec" ] || { echo "skipped: no mpiexec in build dir $build (build Aptus first)"; return; }
        for p in $progs; do
            bl_aptus_bench "$build" "$p" >/dev/null ||
                { echo "skipped: $build/bench/$p not built (cmake --build $build --target $p)"; return; }
        done ;;
    ompi | mpich)
        local cc=mpicc.mpich
        [ "$1" = ompi ] && { bl_openmpi_ok || return; cc=mpicc.openmpi; }
        [ "$1" = mpich ] && { bl_mpich_ok || return; }
        for p in $progs; do bl_mpicc $cc "$here/$p.c" "$tmp/$1/$p" || return; done ;;
    raw | rawtcp)
        bl_ensure_pkgs fi_pingpong -- libfabric-bin ||
            echo "skipped: fi_pingpong not installed (apt-get install libfabric-bin)" ;;
    esac
}
for lib in $(echo "$libs" | tr ',' ' '); do
    case $lib in
    aptus | ompi | mpich | raw | rawtcp) ;;
    openmpi) lib=ompi ;;
    *) die "unknown library '$lib' (aptus, ompi, mpich, raw, rawtcp)" ;;
    esac
    note[$lib]=$(lib_ok "$lib")
    [ -z "${note[$lib]}" ] || continue
    [ "$lib" = aptus ] && mpiexec=$(bl_aptus_mpiexec "$build")
    if [ "$lib" = raw ]; then raw=1; continue; fi
    if [ "$lib" = rawtcp ]; then rawtcp=1; continue; fi
    n=0
    for s in "${specs[@]}"; do
        head=${s%%=*}
        [ "${head%%:*}" = "$lib" ] || continue
        label=${head#*:}
        key=$lib
        [ "$head" != "$lib" ] && [ "$label" != "$lib" ] && key="$lib:$label"
        echo "$key" | grep -q -E '^[a-z]+(:[A-Za-z0-9._+-]+)?$' || die "-V '$s': a label is letters, digits and ._+-"
        env=""
        case $s in *=*) env=${s#*=} ;; esac
        read -r -a kvs <<<"$env"
        for kv in "${kvs[@]}"; do
            echo "$kv" | grep -q -E '^[A-Za-z_][A-Za-z0-9_]*=' || die "-V '$s': '$kv' is not VAR=VALUE"
        done
        cols+=("$key"); col_lib[$key]=$lib; col_env[$key]=$env
        n=$((n + 1))
    done
    if [ $n = 0 ]; then cols+=("$lib"); col_lib[$lib]=$lib; col_env[$lib]=""; fi
done
for s in "${specs[@]}"; do
    l=${s%%[:=]*}
    [ "$l" = openmpi ] && die "-V '$s': the library is called ompi here"
    case ",$libs," in *",$l,"*) ;; *) echo "net_compare.sh: note: -V '$s' ignored: $l is not in -l $libs" >&2 ;; esac
done

# launch COL BENCH: sets the array cmd to the command line of one run (without the arguments)
launch() {
    local col=$1 b=$2 lib=${col_lib[$1]} ppn=${b_ppn[$2]} prog=${b_prog[$2]} np pin kv ev=()
    np=$((2 * ppn))
    read -r -a ev <<<"${col_env[$col]}"
    if [ "$ppn" = 1 ]; then pin=$tmp/pin2.sh; else pin=$tmp/pin4.sh; fi
    cmd=(env NET_COMPARE_TAG="$TAG")
    case $lib in
    aptus)
        cmd+=("${ev[@]}" "$mpiexec" --launcher netns --hosts "$H0,$H1" -ppn "$ppn" -n "$np"
            "$pin" PMI_RANK -- "$build/bench/$prog") ;;
    ompi)
        local btl=tcp,self xs=()
        [ "$ppn" = 1 ] || btl=self,vader,tcp
        for kv in "${ev[@]}"; do xs+=(-x "${kv%%=*}"); done
        cmd+=(NETNS_AGENT_HOST=own "${ev[@]}" mpirun.openmpi --allow-run-as-root --host "$A0:$ppn,$A1:$ppn" -n "$np"
            --map-by slot --bind-to none --mca plm_rsh_agent "$agent" --mca pml ob1 --mca btl "$btl"
            --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include "$NET" "${xs[@]}"
            "$pin" OMPI_COMM_WORLD_RANK PMIX_RANK -- "$tmp/ompi/$prog") ;;
    mpich)
        cmd+=(UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 "${ev[@]}" mpiexec.mpich -launcher ssh
            -launcher-exec "$agent" -localhost "$BR" -hosts "$A0:$ppn,$A1:$ppn" -ppn "$ppn" -n "$np"
            -bind-to none "$pin" PMI_RANK -- "$tmp/mpich/$prog") ;;
    esac
}

# What each column is, for the header.
ucx_version=$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null)
fab_version=$(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p')
for col in "${cols[@]}"; do
    case ${col_lib[$col]} in
    aptus) d="Aptus MPI ($build), UD over libfabric ${fab_version:-?} (provider udp), mpiexec --launcher netns" ;;
    ompi) d="Open MPI $(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p'), pml ob1 + btl tcp (TCP over the veth eth0; 4 ranks: vader within a namespace), mpirun + orted via netns_agent.sh" ;;
    mpich) d="MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p') $(mpichversion 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p'), UCX ${ucx_version:-?} UCX_TLS=tcp,self (TCP over the veth eth0; 4 ranks: MPICH shared memory within a namespace), Hydra via netns_agent.sh" ;;
    esac
    col_desc[$col]="$d${col_env[$col]:+; env: ${col_env[$col]}}"
done

# --- header ------------------------------------------------------------------------------------
pinning="pinned: rank r on the (r mod $ncpus)-th of cpus $cpus (taskset), 4-rank runs unpinned"
[ "$pin4" != none ] && pinning="pinned: rank r on the (r mod $ncpus)-th of cpus $cpus (taskset), 4-rank runs too"
[ $unpinned = 1 ] && pinning="unpinned (cpus allowed: $cpus)"
echo "# net_compare.sh: 2 namespaces $H0 ($A0), $H1 ($A1), bridge $BR; $rounds rounds; $pinning"
if [ -n "$loss" ]; then
    echo "# loss: $loss % of the UDP+TCP packets arriving at each namespace's eth0 from the other namespace (nftables: numgen random mod 1000 < $permille drop)"
else
    echo "# loss: none"
fi
echo "# veth: $(ip -n "$H0" -d link show eth0 | grep -o -E 'mtu [0-9]+' | head -1), $(ip -n "$H0" -d link show eth0 | grep -o -E 'gso_max_segs [0-9]+')"
echo "# host: $(uname -n), $(nproc) cpus online, $(date -u '+%Y-%m-%d %H:%M UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for lib in aptus ompi mpich raw rawtcp; do [ -n "${note[$lib]:-}" ] && echo "# $lib: ${note[$lib]}"; done
for col in "${cols[@]}"; do echo "# $col: ${col_desc[$col]}"; done
[ $raw = 1 ] && echo "# raw-udp: fi_pingpong -p udp -e dgram (libfabric ${fab_version:-?}), server in $H1 on cpu $cpu1, client in $H0 on cpu $cpu0; 1 byte, one-way = usec/xfer; run with the loss rules off"
for b in "${blist[@]}"; do echo "# $b: ${b_prog[$b]} ${b_args[$b]}  ($((2 * b_ppn[$b])) ranks, ${b_ppn[$b]} per namespace)"; done
[ $rawtcp = 1 ] && echo "# raw-tcp: fi_pingpong -p tcp -e msg (libfabric ${fab_version:-?}), as raw-udp"
[ ${#cols[@]} -gt 0 ] || [ $raw = 1 ] || [ $rawtcp = 1 ] || { echo "net_compare.sh: no library to run" >&2; exit 1; }

# --- one run -----------------------------------------------------------------------------------
# placement ERR NP: checks the wrapper's lines: ranks below NP/2 in H0, the others in H1.
placement() {
    local err=$1 np=$2 r ns bad="" missing=""
    for ((r = 0; r < np; r++)); do
        ns=$(sed -n "s/^pin\.sh: rank $r -> cpu [a-z0-9]* netns \([^ ]*\)$/\1/p" "$err" | head -1)
        want=$H0
        [ $r -ge $((np / 2)) ] && want=$H1
        if [ -z "$ns" ]; then missing="$missing $r"; elif [ "$ns" != "$want" ]; then bad="$bad rank$r=$ns"; fi
    done
    if [ -n "$bad" ]; then echo "WRONG:$bad"; elif [ -n "$missing" ]; then echo "unverified (no report from rank$missing)"; else echo ok; fi
}
declare -A stat_runs stat_fail stat_place stat_drop stat_stall
failed=0
since() { awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'; }
# run_col COL BENCH ROUND OUTBASE [ARGS...]
run_col() {
    local col=$1 b=$2 r=$3 base=$4 rx0 rx1 p0 p1 d0 t0 rc=0 place
    shift 4
    launch "$col" "$b"
    rx0=$(($(rx_bytes "$H0") + $(rx_bytes "$H1")))
    p0=$(($(rx_packets "$H0") + $(rx_packets "$H1")))
    d0=$(dropped)
    t0=$(date +%s.%N)
    BL_QUIET=1 BL_STALL=$stall bl_run_one "$run_limit" "$base.txt" "$base.err" "$b $col round $r" "${cmd[@]}" "$@"
    rc=$?
    kill_leftovers
    rx1=$(($(rx_bytes "$H0") + $(rx_bytes "$H1")))
    p1=$(($(rx_packets "$H0") + $(rx_packets "$H1")))
    place=$(placement "$base.err" $((2 * b_ppn[$b])))
    printf '%s %s round %s: %s, %s s, veths received %s MB in %s packets, dropped %s, placement %s\n' \
        "$b" "$col" "$r" "$(case $rc in 0) echo ok ;; 2) echo "STALLED (rows kept)" ;; *) echo FAILED ;; esac)" "$(since "$t0")" \
        "$(awk -v b=$((rx1 - rx0)) 'BEGIN { printf "%.2f", b / 1e6 }')" $((p1 - p0)) "$(($(dropped) - d0))" "$place" |
        tee -a "$outdir/runs.log"
    stat_runs[$col]=$((${stat_runs[$col]:-0} + 1))
    [ $rc = 0 ] || { stat_fail[$col]=$((${stat_fail[$col]:-0} + 1)); failed=1; }
    [ $rc = 2 ] && stat_stall[$col]=$((${stat_stall[$col]:-0} + 1))
    [ "$place" = ok ] && stat_place[$col]=$((${stat_place[$col]:-0} + 1))
    stat_drop[$col]=$((${stat_drop[$col]:-0} + $(dropped) - d0))
    case $place in WRONG*) failed=1 ;; esac
    return $rc
}

# raw ROUND [udp|tcp]: fi_pingpong, REPS runs of ITERS round trips at 1 byte, as a bench_common.h
# table (udp: -e dgram; tcp: -e msg, connected endpoints).
raw_run() {
    local r=$1 kind=${2:-udp} reps=5 iters=10000 i v vals=() port srv t0
    local out="$outdir/latency/raw-$kind.round$r.txt" ep=dgram
    [ "$kind" = tcp ] && ep=msg
    [ $quick = 1 ] && { reps=2; iters=200; }
    port=$((47592 + r))
    [ "$kind" = tcp ] && port=$((port + 100))
    loss_off
    t0=$(date +%s.%N)
    for ((i = 0; i < reps; i++)); do
        env NET_COMPARE_TAG="$TAG" timeout 60 ip netns exec "$H1" taskset -c "$cpu1" \
            fi_pingpong -p "$kind" -e "$ep" -I "$iters" -S 1 -B "$port" >"$tmp/raw.srv" 2>&1 &
        srv=$!
        for _ in $(seq 50); do
            ip netns exec "$H1" ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break
            sleep 0.1
        done
        v=$(env NET_COMPARE_TAG="$TAG" timeout 60 ip netns exec "$H0" taskset -c "$cpu0" \
            fi_pingpong -p "$kind" -e "$ep" -I "$iters" -S 1 -P "$port" "$A1" 2>"$tmp/raw.err" |
            awk '$1 == 1 { print $7 }')
        wait $srv
        [ -n "$v" ] && vals+=("$v")
    done
    loss_on
    kill_leftovers
    {
        echo "# benchmark: fi_pingpong | library: fi_pingpong -p $kind -e $ep (libfabric ${fab_version:-?}) | reps: $reps | iters: $iters"
        echo "# table: latency  unit: us  better: lower  (usec/xfer)"
        if [ ${#vals[@]} -gt 0 ]; then
            printf '%s\n' "${vals[@]}" | sort -g | awk -v it="$iters" '{ v[NR] = $1 }
                END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%12d %9d %12.3f %12.3f\n", 1, it, v[1], m }'
        fi
    } >"$out"
    printf 'latency raw-%s round %s: %s, %s s, %d of %d runs\n' "$kind" "$r" \
        "$([ ${#vals[@]} = "$reps" ] && echo ok || echo FAILED)" "$(since "$t0")" \
        "${#vals[@]}" "$reps" | tee -a "$outdir/runs.log"
    if [ ${#vals[@]} != "$reps" ]; then
        failed=1
        sed 's/^/!!!   /' "$tmp/raw.err" "$tmp/raw.srv" | tail -n 10
    fi
}

# --- check: the data goes over the veth link ---------------------------------------------------
mkdir -p "$outdir/check"
echo
echo "=== check: pt2pt_bandwidth -u -s 64K -w 8 -i 4 -r 1 (4 windows of 8 x 64 KiB, >= 2 MB must cross H1's eth0) ==="
b_prog[check]=pt2pt_bandwidth b_ppn[check]=1
keep_cols=()
for col in "${cols[@]}"; do
    saved_env=${col_env[$col]}
    [ "${col_lib[$col]}" = aptus ] && col_env[$col]="$saved_env APTUS_STATS=1"
    h1a=$(rx_bytes "$H1")
    run_col "$col" check 0 "$outdir/check/$col" -u -s 64K -w 8 -i 4 -r 1 >/dev/null
    rc=$?
    col_env[$col]=$saved_env
    h1=$(($(rx_bytes "$H1") - h1a))
    place=$(placement "$outdir/check/$col.err" 2)
    f=$outdir/check/$col.txt
    [ -f "$f" ] || f=$f.failed
    chans=$(sed -n 's/^\[aptus stats\] rank \([0-9]*\): \([0-9][0-9]*\) *\([a-z][a-z0-9-]*\) *[0-9][0-9]* *[0-9][0-9]*$/rank \1 -> \2: \3/p' "$f" |
        sort | tr '\n' ',' | sed 's/,$//; s/,/, /g')
    echo "$col: $([ $rc = 0 ] && echo ran || echo FAILED), $H1 eth0 received $((h1 / 1000)) kB, placement $place${chans:+, channels: $chans}"
    if [ $rc != 0 ]; then
        tail -n 5 "$outdir/check/$col.err" | sed 's/^/!!!   /'
        echo "!!! $col dropped: its check run failed"
        note[$col]="dropped: check run failed"
        failed=1
    elif [ $h1 -lt 2000000 ] || [ "$place" != ok ]; then
        if [ $verify = 1 ]; then
            echo "!!! $col dropped: its data did not cross the veth link between the namespaces (or a rank ran in the wrong one); --no-verify keeps it"
            note[$col]="dropped: not over the network"
            failed=1
        else
            keep_cols+=("$col")
        fi
    else
        keep_cols+=("$col")
    fi
done
cols=("${keep_cols[@]}")
stat_runs=() stat_fail=() stat_place=() stat_drop=() stat_stall=()

# --- interleaved rounds ------------------------------------------------------------------------
for b in "${blist[@]}"; do mkdir -p "$outdir/$b"; done
for ((r = 1; r <= rounds; r++)); do
    echo
    echo "=== round $r/$rounds ==="
    for b in "${blist[@]}"; do
        [ "$b" = latency ] && [ $raw = 1 ] && raw_run "$r" udp
        [ "$b" = latency ] && [ $rawtcp = 1 ] && raw_run "$r" tcp
        for col in "${cols[@]}"; do
            # shellcheck disable=SC2086
            run_col "$col" "$b" "$r" "$outdir/$b/$col.round$r" ${b_args[$b]}
        done
    done
done

# --- summary -----------------------------------------------------------------------------------
echo
echo "=== summary: $rounds rounds; loss ${loss:-0} % ==="
echo "# best = best of the per-round bests; median = median of the per-round medians"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${blist[@]}"; do
    keys=()
    [ "$b" = latency ] && [ $raw = 1 ] && keys+=(raw-udp)
    [ "$b" = latency ] && [ $rawtcp = 1 ] && keys+=(raw-tcp)
    keys+=("${cols[@]}")
    files=()
    # raw-udp (one size) is read last, so that the rows keep the order of the MPI benchmarks
    for k in "${cols[@]}" raw-udp raw-tcp; do
        for ((r = 1; r <= rounds; r++)); do
            [ -f "$outdir/$b/$k.round$r.txt" ] && files+=("$outdir/$b/$k.round$r.txt")
        done
    done
    echo
    echo "## $b: ${b_prog[$b]} ${b_args[$b]}  ($((2 * b_ppn[$b])) ranks, ${b_ppn[$b]} per namespace)"
    if [ ${#files[@]} = 0 ]; then echo "(no successful run)"; continue; fi
    bl_summary "${keys[*]}" "${files[@]}"
done
echo
echo "## runs: successful / total, placement verified, packets dropped by the loss rules"
for col in "${cols[@]}"; do
    n=${stat_runs[$col]:-0}
    printf '# %-16s %d / %d ok, placement ok in %d, dropped %d%s\n' "$col" $((n - ${stat_fail[$col]:-0})) "$n" \
        "${stat_place[$col]:-0}" "${stat_drop[$col]:-0}" \
        "$([ -n "${stat_stall[$col]:-}" ] && echo ", ${stat_stall[$col]} stalled (stopped after $stall s without output; their rows are in the tables)")"
done
for col in "${!note[@]}"; do
    case ${note[$col]} in dropped*) echo "# $col: ${note[$col]}" ;; esac
done
[ "$outdir" != "$tmp/out" ] && echo "# outputs kept in $outdir (runs.log: one line per run)"
exit $failed
