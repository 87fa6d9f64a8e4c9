#!/bin/sh
# mem_scale.sh: memory per process against the number of peers (seed 000, Figure 3a), for the
# RC-only, UD-only and default (Aptus) configurations, on jobs of 8, 16, 32 and 64 ranks over
# network namespaces (2 for 8 and 16 ranks, 4 for 32 and 64; oversubscribed on this machine's
# cores: correctness and memory matter here, not speed). Each job runs bench/mem_scale (every
# rank exchanges messages with every other: all-to-all traffic, contents checked) and prints one
# row; this script prints them as one table per configuration.
#   RC-only  a connection to every peer at its first message (APTUS_RC_THRESHOLD=1,
#            APTUS_RC_MAX=100000), no fast path (rc-fp out of the chain): UD carries only the
#            first messages
#   rc-fixed RC-only plus a fast path to every peer in the paper's original layout
#            (APTUS_RCFP_DESIGN=fixed, APTUS_RCFP_MAX=4096: 512 KiB a pair)
#   rc-velo  the same with Veloblock blocks (32 KiB a pair)
#   UD-only  APTUS_SEND_RULES=self;smp;size<=8K:ud-sr;ud-zcopy
#   default  the default chain and allocation (connections after 16 messages, at most 16)
#   rc-credit RC-only without the shared receive context (APTUS_RC_SRX=0: receive buffers
#            per connection): what the shared receive context saves (not run by default)
# usage: bench/mem_scale.sh [-s "8 16 32 64"] [-c "rc ud default rc-credit rc-fixed rc-velo"] [-r ROUNDS]
#                          [BUILD_DIR]
# (root: network namespaces; BUILD_DIR default <repo>/build-bench, with bench/mem_scale built)
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
sizes="8 16 32 64" configs="rc ud default" rounds=40
while [ $# -gt 0 ]; do
    case "$1" in
    -s) sizes=$2; shift 2 ;;
    -c) configs=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -h) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "mem_scale.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$repo/build-bench}
mpiexec=$build/tools/mpiexec/mpiexec prog=$build/bench/mem_scale
[ -x "$mpiexec" ] && [ -x "$prog" ] || { echo "mem_scale.sh: build $build first (mpiexec, bench/mem_scale)" >&2; exit 2; }
env_of() {
    case $1 in
    rc) echo "APTUS_RC_THRESHOLD=1 APTUS_RC_MAX=100000 'APTUS_SEND_RULES=self;smp;size<=8K:rc-sr;rc-rdma;size<=8K:ud-sr;ud-zcopy'" ;;
    rc-fixed) echo "APTUS_RC_THRESHOLD=1 APTUS_RC_MAX=100000 APTUS_RCFP_MAX=4096 APTUS_RCFP_DESIGN=fixed" ;;
    rc-velo) echo "APTUS_RC_THRESHOLD=1 APTUS_RC_MAX=100000 APTUS_RCFP_MAX=4096" ;;
    ud) echo "'APTUS_SEND_RULES=self;smp;size<=8K:ud-sr;ud-zcopy'" ;;
    rc-credit) echo "APTUS_RC_THRESHOLD=1 APTUS_RC_MAX=100000 APTUS_RC_SRX=0 'APTUS_SEND_RULES=self;smp;size<=8K:rc-sr;rc-rdma;size<=8K:ud-sr;ud-zcopy'" ;;
    default) echo "" ;;
    esac
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# mem_scale.sh: $(date -u +%F\ %H:%M) UTC, $(nproc) cores, rounds $rounds, build $build"
for n in $sizes; do
    nodes=2
    [ "$n" -ge 32 ] && nodes=4
    [ "$n" -ge 128 ] && nodes=8
    for c in $configs; do
        # shellcheck disable=SC2046
        sh "$repo/scripts/netns.sh" run -n "$nodes" -- sh -c \
            "env $(env_of "$c") timeout 600 '$mpiexec' --launcher netns --hosts \"\$APTUS_NETNS_HOSTS\" -ppn $((n / nodes)) -n $n --timeout 590 '$prog' -r $rounds" \
            >"$out/$c.$n" 2>&1
        rc=$?
        row=$(grep -v '^#' "$out/$c.$n" | grep -E '^ *[0-9]' | tail -n 1)
        [ $rc -eq 0 ] && [ -n "$row" ] || row="$(printf '%7d' "$n")  FAILED (exit $rc): $(grep -v '^\[aptus' "$out/$c.$n" | tail -n 2 | tr '\n' ' ')"
        echo "$c $nodes $row" >>"$out/rows"
        echo "$c: $n ranks on $nodes namespaces done (exit $rc)" >&2
    done
done
for c in $configs; do
    echo
    echo "## $c: $(env_of "$c")"
    echo "# nodes  ranks peers  rss_avg_MB rss_max_MB hwm_max_MB  lib_avg_MB lib_max_MB  rc_avg rc_max  fp_avg fpmem_avg_MB"
    grep "^$c " "$out/rows" | cut -d' ' -f2- | awk '{ printf "%7s %s\n", $1, substr($0, index($0, $2)) }'
done
