#!/bin/sh
# fp_poll.sh: seed 000's Figure 3b over two namespaces -- bench/fp_poll's 8-byte latency between
# rank 0 and rank 1 while rank 0 polls the fast-path blocks of N peers (rank 0 alone on one
# namespace, ranks 1..N on the other), against rc-sr's in the same job shape; runs interleaved
# (fast path, then rc-sr, for each N).
#
# usage: bench/fp_poll.sh [-n "PEERS ..."] [-r ROUNDS] [-d DESIGN] [BUILD_DIR]
#   -n  peer counts (default "1 2 4 8 16 32 64")
#   -r  rounds (default 2): each a job per N and config; rows per round
#   -d  APTUS_RCFP_DESIGN (default veloblock)
# Needs root (scripts/netns.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
peers="1 2 4 8 16 32 64" rounds=2 design=veloblock
while [ $# -gt 0 ]; do
    case "$1" in
    -n) peers=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -d) design=$2; shift 2 ;;
    -h) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fp_poll.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$repo/build}
mpiexec=$build/tools/mpiexec/mpiexec prog=$build/bench/fp_poll
[ -x "$mpiexec" ] && [ -x "$prog" ] || { echo "fp_poll.sh: build $build first (mpiexec, bench/fp_poll)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# fp_poll.sh: $(date -u +%F\ %H:%M) UTC, $(nproc) cores, design $design, build $build"
sr_chain='self;smp;size<=8K:rc-sr;rc-rdma;size<=8K:ud-sr;ud-zcopy'
header=
for r in $(seq "$rounds"); do
    for n in $peers; do
        for cfg in rc-fp rc-sr; do
            chain=
            [ "$cfg" = rc-sr ] && chain="APTUS_SEND_RULES='$sr_chain'"
            sh "$repo/scripts/netns.sh" run -n 2 -- sh -c \
                "$chain APTUS_RCFP_DESIGN=$design APTUS_RCFP_MAX=$((n + 1)) APTUS_RC_MAX=$((n + 8)) timeout 600 \
                 '$mpiexec' --launcher netns --hosts \"\$(echo \$APTUS_NETNS_HOSTS | cut -d, -f1):1,\$(echo \$APTUS_NETNS_HOSTS | cut -d, -f2):$n\" \
                 -n $((n + 1)) --timeout 590 '$prog' -c $cfg/r$r" >"$out/run" 2>&1
            rc=$?
            [ -n "$header" ] || { header=1; grep '^#' "$out/run"; }
            row=$(grep -v '^#' "$out/run" | grep -E "^$cfg/" | tail -n 1)
            [ $rc -eq 0 ] && [ -n "$row" ] || row="$cfg/r$r $n FAILED (exit $rc): $(grep -v '^\[aptus' "$out/run" | tail -n 2 | tr '\n' ' ')"
            echo "$row"
        done
    done
done
