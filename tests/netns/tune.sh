#!/bin/sh
# netns.aptus_tune: aptus-tune --quick measures the channels between two namespaces and writes a
# tune file; then a job reads that file and takes its chain.
#
#   tune.sh NETNS_SH MPIEXEC APTUS_TUNE PROG
#
# Checks: aptus-tune ends well; every channel it tried carried the messages it was measured at
# (no "carried N of M" or "no message went by" line), each RC channel's connection came up; the
# file holds an APTUS_SEND_RULES line whose first rule after self;smp names the channel of the
# smallest size's starred (chosen) cell; `aptus-tune --show` explains it; PROG run across the two
# namespaces with APTUS_TUNE_FILE set to the file sends its first (small) messages from rank 0
# to rank 1 by that channel (its statistics). Exit 77 where namespaces cannot be made.
set -u
NETNS_SH=$1 MPIEXEC=$2 TUNE=$3 PROG=$4
[ "$(id -u)" = 0 ] || { echo "tune.sh: needs root (network namespaces)"; exit 77; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*"
    for f in err show job; do [ -s "$T/$f" ] && { echo "--- $f"; cat "$T/$f"; }; done
    exit 1
}

sh "$NETNS_SH" run -n 2 -- sh -c '
    hosts="$APTUS_NETNS_H0,$APTUS_NETNS_H1"
    "$1" --quick --mpiexec "$2" -o "$3/tune.conf" -- --launcher netns --hosts "$hosts" --ppn 1 --timeout 120 \
        >"$3/show" 2>"$3/err" || exit 3
    APTUS_TUNE_FILE="$3/tune.conf" APTUS_STATS=1 "$2" --launcher netns --hosts "$hosts" --ppn 1 -n 2 --timeout 60 \
        "$4" >"$3/job" 2>&1 || exit 4' sh "$TUNE" "$MPIEXEC" "$T" "$PROG"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 3 ] && fail "aptus-tune failed"
[ $rc -eq 4 ] && fail "the job with the tune file failed"
[ $rc -eq 0 ] || fail "netns.sh run ended with $rc"
cat "$T/show"
grep -E '^#\| [a-z-]+: .*(carried [0-9]+ of|no message went by|failed)' "$T/tune.conf" &&
    fail "a channel did not carry what it was measured at"
for ch in rc-sr rc-fp rc-rdma; do
    grep -q "^#| $ch: the connection carried its first message" "$T/tune.conf" ||
        fail "no connection time for $ch"
done
rules=$(sed -n 's/^APTUS_SEND_RULES=//p' "$T/tune.conf")
[ -n "$rules" ] || fail "no APTUS_SEND_RULES line in the file"
first=$(echo "$rules" | cut -d';' -f3 | sed 's/.*://')
# the starred cell of the 8-byte row of the latency table
header=$(grep -m1 '^#| size' "$T/tune.conf")
row=$(grep -m1 '^#| 8 ' "$T/tune.conf")
star=$(echo "$row" | awk '{for (i = 3; i <= NF; i++) if ($i ~ /\*$/) print i}')
chosen=$(echo "$header" | awk -v i="$star" '{print $i}')
[ -n "$chosen" ] && [ "$chosen" = "$first" ] ||
    fail "the chain's first network rule names '$first', the 8-byte row chose '$chosen'"
grep -q -E "messages (up to [0-9KM]+ bytes|of any size): $first" "$T/show" || fail "--show does not explain the chain"
grep -q -E "^\[aptus stats\] rank 0: 1 +$first +[0-9]" "$T/job" ||
    fail "the job did not send by $first, the file's channel for small messages"
echo "tune.sh: chosen for small messages: $first; chain $rules"
