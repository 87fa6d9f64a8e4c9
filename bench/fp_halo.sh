#!/bin/sh
# fp_halo.sh: seed 003's Table 2 over namespaces -- bench/fp_halo (an AMG-like irregular halo
# exchange) under each fast-path layout and limit: the fast-path memory per process and the share
# of the messages to other nodes that took the fast path.
#
# usage: bench/fp_halo.sh [-s "RANKS:NODES ..."] [-d "DESIGNS"] [-m "LIMITS"] [-i ITERS] [-w WARM]
#                        [-P] [-I "IDLE_MS ..."] [-R "RC_MAX ..."] [BUILD_DIR]
#   -s  job sizes as ranks:namespaces (default "27:3 64:4")
#   -d  APTUS_RCFP_DESIGN values (default "fixed fixed-reduced veloblock")
#   -m  APTUS_RCFP_MAX values (default "0 8 32 128"; 0: no fast path)
#   -i  timed iterations (default 60), -w warm-up ones before them (default 20)
#   -P  two phases, the second with other neighbours (fp_halo -P): the second's figures
#   -I  APTUS_CHANNEL_IDLE values, milliseconds (default "0": fast paths and connections never
#       given back)
#   -R  APTUS_RC_MAX values (default "256": a connection for every peer that asks); with -R the
#       runs count messages per channel (APTUS_STATS=1) and the rows have the share of the remote
#       messages that went over RC (rc_%)
# Every run: the default send chain (rc-fp first for up to 8 KiB), an RC connection asked for
# after 16 messages, a fast path asked for after 16 small messages (the default allocation
# rules). Needs root (scripts/netns.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
sizes="27:3 64:4" designs="fixed fixed-reduced veloblock" limits="0 8 32 128" iters=60 warm=20 two= idles=0 rcmaxes=256 stats=0
while [ $# -gt 0 ]; do
    case "$1" in
    -s) sizes=$2; shift 2 ;;
    -d) designs=$2; shift 2 ;;
    -m) limits=$2; shift 2 ;;
    -i) iters=$2; shift 2 ;;
    -w) warm=$2; shift 2 ;;
    -P) two=-P; shift ;;
    -I) idles=$2; shift 2 ;;
    -R) rcmaxes=$2; stats=1; shift 2 ;;
    -h) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "fp_halo.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=${1:-$repo/build}
mpiexec=$build/tools/mpiexec/mpiexec prog=$build/bench/fp_halo
[ -x "$mpiexec" ] && [ -x "$prog" ] || { echo "fp_halo.sh: build $build first (mpiexec, bench/fp_halo)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# fp_halo.sh: $(date -u +%F\ %H:%M) UTC, $(nproc) cores, $iters timed iterations, build $build"
for s in $sizes; do
    n=${s%:*} nodes=${s#*:}
    header=
    for m in $limits; do
        for d in $designs; do
            [ "$m" = 0 ] && [ "$d" != "$(echo "$designs" | cut -d' ' -f1)" ] && continue # (no fast path: once)
            for idle in $idles; do for rcm in $rcmaxes; do
                [ "$m" = 0 ] && [ "$idle" != "$(echo "$idles" | cut -d' ' -f1)" ] && [ "$stats" = 0 ] && continue
                label="$d/max$m"
                [ "$m" = 0 ] && label="none/max0"
                [ "$rcm" = 256 ] || label="$label/rc$rcm"
                [ "$idle" = 0 ] || label="$label/idle$idle"
                sh "$repo/scripts/netns.sh" run -n "$nodes" -- sh -c \
                    "APTUS_STATS=$stats APTUS_RCFP_DESIGN=$d APTUS_RCFP_MAX=$m APTUS_RC_MAX=$rcm APTUS_CHANNEL_IDLE=$idle timeout 900 \
                     '$mpiexec' --launcher netns --hosts \"\$APTUS_NETNS_HOSTS\" -n $n --timeout 890 '$prog' \
                     -i $iters -w $warm $two -c $label" >"$out/run" 2>&1
                rc=$?
                [ -n "$header" ] || { header=1; grep '^#' "$out/run" | grep -v '^# config' | head -n 1; grep '^# config' "$out/run"; }
                row=$(grep -v '^#' "$out/run" | grep -E "^$label " | tail -n 1)
                [ $rc -eq 0 ] && [ -n "$row" ] || row="$label FAILED (exit $rc): $(grep -v '^\[aptus' "$out/run" | tail -n 2 | tr '\n' ' ')"
                echo "$row"
            done; done
        done
    done
done
