#!/bin/sh
# Launcher tests: launcher_test.sh CASE MPIEXEC PROBE
# Every case asserts exit codes and output; none asserts timings. Waits are bounded loops
# (for a background job to become ready, or for killed processes to disappear).
set -u

CASE=$1
MPIEXEC=$2
PROBE=$3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/aptus-launcher-test.XXXXXX") || exit 1
# A unique token on every probe's command line, to find leftover processes.
TAG="tag=lt$$x$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
OUT=$WORK/out
ERR=$WORK/err
BGPID=
OTHER=

cleanup() {
    if [ -n "$BGPID" ]; then kill -KILL "$BGPID" 2>/dev/null; fi
    if [ -n "$OTHER" ]; then rm -f "$OTHER"; fi
    pkill -KILL -f -- "$TAG" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    echo "---- stdout ----"; cat "$OUT" 2>/dev/null | head -50
    echo "---- stderr ----"; cat "$ERR" 2>/dev/null | head -50
    exit 1
}

# run ARGS...: mpiexec with a safety timeout; sets RC
run() {
    "$MPIEXEC" --timeout 60 "$@" >"$OUT" 2>"$ERR"
    RC=$?
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"
}

expect_out() { grep -q -e "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_err() { grep -q -e "$1" "$ERR" || fail "stderr lacks '$1'"; }
count_out() { grep -c -e "$1" "$OUT"; }
expect_count() {
    n=$(count_out "$1")
    [ "$n" -eq "$2" ] || fail "stdout has $n lines matching '$1', expected $2"
}

# Bounded wait for a condition (a command), 60 s at most.
wait_for() {
    i=0
    while ! "$@"; do
        i=$((i + 1))
        [ $i -le 600 ] || return 1
        sleep 0.1
    done
    return 0
}

no_probes() { ! pgrep -f -- "$TAG" >/dev/null 2>&1; }
expect_no_orphans() {
    wait_for no_probes || fail "processes left behind: $(pgrep -a -f -- "$TAG")"
}
ready_count() { [ "$(count_out "ready")" -ge "$1" ]; }
# A job started in the background redirects its output in the child: empty the files first,
# or a wait on them can see the last job's lines and go on before this job has started.
fresh_out() { : >"$OUT"; : >"$ERR"; }

case "$CASE" in
spawn_room)
    # mpiexec serves the PMI-2 spawn command and counts the universe over every job: a spawn
    # that needs the room of a running job waits for it to end (5 s at most); one the universe
    # cannot hold even once the other jobs have ended is refused at once. The new jobs have the pre-put key, say
    # they were spawned, and have job ids of the first one's (ID.1, ID.2).
    # The parent ends only once the second job's probes asked (its end would leave them room).
    MPI_UNIVERSE_SIZE=4 run -n 1 "$PROBE" init universe spawn=2:1500 universe spawn=2:0 spawn=4:0 \
        universe awaitmarks="$WORK/c.s2:2" finalize childmark="$WORK/c" "$TAG"
    expect_rc 0
    expect_out "rank 0 universe free 3 live 0"
    expect_out "rank 0 universe free 1 live 1"
    expect_count "rank 0 spawn 2 ok" 2
    expect_out "rank 0 spawn 4 refused: .*room for [13] more"
    expect_count "child from" 4
    expect_count "parent probe" 4
    # (a job's own processes see no running job whose end could leave them room: their own
    # cannot end while they wait)
    expect_count "rank [01] universe free 1 live 0" 4
    expect_out "rank 0 awaited 2 marks"
    expect_count "size 2 singleton 0 jobid .*\.1$" 2
    expect_count "size 2 singleton 0 jobid .*\.2$" 2
    ;;

spawn_late)
    # A spawn given up on whose answer came as it was cancelled: the cancel names the job the
    # late answer gave, and mpiexec ends it (its probes would print "late from R" after 4 s; -v:
    # mpiexec says so).
    MPI_UNIVERSE_SIZE=4 run -v -n 1 "$PROBE" init spawnlate=2:4000 sleep=500 finalize "$TAG"
    expect_rc 0
    expect_out "rank 0 spawn 2 given up"
    expect_err "its spawn was given up; ending it"
    expect_count "late from" 0
    expect_no_orphans
    ;;

kvs4)
    run -n 4 "$PROBE" "$TAG" init put fence getall getmissing finalize
    expect_rc 0
    expect_count "getall ok" 4
    expect_count "getmissing ok" 4
    for r in 0 1 2 3; do expect_out "^rank $r size 4 singleton 0 jobid "; done
    # One jobid for all ranks, of the form <pid>x<hex>.
    [ "$(sed -n 's/^rank [0-9]* size 4 singleton 0 jobid //p' "$OUT" | sort -u | wc -l)" -eq 1 ] ||
        fail "ranks disagree on the jobid"
    sed -n 's/^rank 0 size 4 singleton 0 jobid //p' "$OUT" | grep -q '^[0-9][0-9]*x[0-9a-f][0-9a-f]*$' ||
        fail "jobid has an unexpected form"
    expect_no_orphans
    ;;

barrier)
    # aptus_pmi_barrier: nobody passes it before every rank reached it (rank 0 comes late),
    # and a vote against is seen by every other rank.
    run -n 4 "$PROBE" "$TAG" init r0:sleep=300 mark="$WORK/m" barrier checkmarks="$WORK/m" barrier=2 finalize
    expect_rc 0
    expect_count "barrier 1 ok$" 4
    expect_count "marks ok$" 4
    expect_count "barrier 2 failed 2$" 3
    expect_out "^rank 2 barrier 2 ok$"
    expect_no_orphans
    ;;

exit_codes)
    run -n 2 "$PROBE" "$TAG" init fence finalize
    expect_rc 0
    # Non-zero exit after finalize: the job's exit code, others finish normally.
    run -n 3 "$PROBE" "$TAG" init fence finalize r1:exit=3
    expect_rc 3
    # Non-zero exit before finalize (here before init): the others are killed.
    run -n 2 "$PROBE" "$TAG" r1:exit=5 r0:hang
    expect_rc 5
    expect_err "rank 1.*exited with code 5"
    # Exit 0 after init but without finalize is a failure.
    run -n 2 "$PROBE" "$TAG" init fence r1:exit=0 r0:fence
    [ "$RC" -ne 0 ] || fail "exit without finalize was not an error"
    expect_err "rank 1.*without calling finalize"
    # Plain programs that never speak PMI.
    run -n 3 echo hello
    expect_rc 0
    expect_count "^hello$" 3
    run -n 2 false
    expect_rc 1
    expect_no_orphans
    ;;

kill9)
    run -n 4 "$PROBE" "$TAG" init fence r2:forkchild r2:kill=9 fence finalize
    expect_rc 137
    expect_err "rank 2 .*signal 9"
    [ "$(grep -c 'mpiexec:' "$ERR")" -eq 1 ] || fail "expected exactly one mpiexec message"
    expect_no_orphans
    ;;

escalate)
    # Ranks that ignore SIGTERM are SIGKILLed; the job's code is the failing rank's.
    run -n 3 "$PROBE" "$TAG" init ignoreterm forkchild fence r1:exit=3 fence finalize
    expect_rc 3
    expect_err "rank 1 .*exited with code 3 before finalize"
    expect_no_orphans
    ;;

abort7)
    run -n 4 "$PROBE" "$TAG" init fence r1:abort=7 fence finalize
    expect_rc 7
    expect_err "rank 1 called abort with exit code 7"
    expect_no_orphans
    ;;

abort_lost)
    # An abort that names a lost peer as its cause (the library's, when a channel gives up on
    # a rank) ranks below that peer's own failure reported soon after: here rank 2's abort comes
    # first, then rank 1 dies of SIGKILL; the job names rank 1 and exits 137.
    run -n 4 "$PROBE" "$TAG" init fence r2:abortlost=16:1 r1:sleep=50 r1:kill=9 hang
    expect_rc 137
    expect_err "^mpiexec: rank 1 (pid [0-9]*) was killed by signal 9 (Killed)"
    [ "$(grep -c 'mpiexec:' "$ERR")" -eq 1 ] || fail "expected exactly one mpiexec message"
    expect_no_orphans
    # The same through proxies (ranks 1 and 2 on different hosts).
    run --launcher ssh --hosts localhost:2,127.0.0.1:2 -n 4 "$PROBE" "$TAG" init fence r2:abortlost=16:1 r1:sleep=50 \
        r1:kill=9 hang
    expect_rc 137
    expect_err "^mpiexec: rank 1 (pid [0-9]* on host localhost) was killed by signal 9 (Killed)"
    expect_no_orphans
    # No news of the peer: the abort is the job's cause.
    run -n 3 "$PROBE" "$TAG" init fence r2:abortlost=16:1 hang
    expect_rc 16
    expect_err "^mpiexec: rank 2 called abort with exit code 16: probe lost its peer"
    expect_no_orphans
    # The peer ends well (after finalize): the abort stands, at once.
    run -n 3 "$PROBE" "$TAG" init fence r2:abortlost=16:1 r1:finalize r1:exit=0 hang
    expect_rc 16
    expect_err "rank 2 called abort with exit code 16"
    # An abort of a rank's own accord, made meanwhile, is the cause: it is no consequence.
    run -n 3 "$PROBE" "$TAG" init fence r2:abortlost=16:1 r0:sleep=50 r0:abort=7 hang
    expect_rc 7
    expect_err "^mpiexec: rank 0 called abort with exit code 7"
    expect_no_orphans
    ;;

sigterm|sigint)
    if [ "$CASE" = sigterm ]; then SIG=TERM; CODE=143; else SIG=INT; CODE=130; fi
    fresh_out
    "$MPIEXEC" --timeout 60 -n 3 "$PROBE" "$TAG" init trapterm fence ready hang >"$OUT" 2>"$ERR" &
    BGPID=$!
    wait_for ready_count 3 || fail "ranks never became ready"
    kill -$SIG "$BGPID"
    wait "$BGPID"
    RC=$?
    BGPID=
    expect_rc $CODE
    if [ "$SIG" = TERM ]; then
        # The ranks' SIGTERM handlers ran: the signal was forwarded to each.
        for r in 0 1 2; do expect_out "^rank $r got SIGTERM$"; done
    fi
    expect_err "caught signal"
    expect_no_orphans
    ;;

mpiexec_killed)
    # mpiexec itself SIGKILLed: ranks (PDEATHSIG) and their children (watchdog) must go.
    fresh_out
    "$MPIEXEC" --timeout 60 -n 3 "$PROBE" "$TAG" init forkchild shm fence ready hang >"$OUT" 2>"$ERR" &
    BGPID=$!
    wait_for ready_count 3 || fail "ranks never became ready"
    kill -KILL "$BGPID"
    wait "$BGPID" 2>/dev/null
    BGPID=
    expect_no_orphans
    JOBID=$(sed -n 's/^rank 0 size 3 singleton 0 jobid //p' "$OUT")
    [ -n "$JOBID" ] || fail "no jobid"
    shm_gone() { ! ls /dev/shm/ | grep -q "^aptus-$JOBID-"; }
    wait_for shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-$JOBID-")"
    ;;

timeout)
    "$MPIEXEC" --timeout 1 -n 2 "$PROBE" "$TAG" init fence hang >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 124
    expect_err "timeout"
    expect_no_orphans
    ;;

output)
    run -n 2 --prefix "$PROBE" print=hello eprint=oops partial
    expect_rc 0
    expect_out "^\[0\] hello from 0$"
    expect_out "^\[1\] hello from 1$"
    expect_out "^\[0\] part1-0-part2$"
    expect_out "^\[1\] part1-1-part2$"
    grep -q "^\[1\] oops from 1$" "$ERR" || fail "stderr lacks prefixed line"
    [ "$(wc -l <"$OUT")" -eq 4 ] || fail "unexpected stdout line count"
    run -n 2 -l "$PROBE" print=hi
    expect_rc 0
    expect_out "^\[1\] hi from 1$"
    run -n 2 "$PROBE" print=plain
    expect_rc 0
    expect_out "^plain from 0$"
    expect_out "^plain from 1$"
    # A last line without a newline is still delivered, terminated.
    run -n 1 --prefix sh -c 'printf "no newline"'
    expect_rc 0
    expect_out "^\[0\] no newline$"
    ;;

no_interleave)
    run -n 4 --prefix "$PROBE" spam=3000
    expect_rc 0
    PAD=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
    [ "$(wc -l <"$OUT")" -eq 12000 ] || fail "stdout has $(wc -l <"$OUT") lines, expected 12000"
    [ "$(wc -l <"$ERR")" -eq 12000 ] || fail "stderr has $(wc -l <"$ERR") lines, expected 12000"
    bad=$(grep -c -v -E "^\[([0-3])\] spam rank \1 line [0-9]+ $PAD end$" "$OUT")
    [ "$bad" -eq 0 ] || fail "$bad garbled stdout lines"
    bad=$(grep -c -v -E "^\[([0-3])\] espam rank \1 line [0-9]+ $PAD end$" "$ERR")
    [ "$bad" -eq 0 ] || fail "$bad garbled stderr lines"
    ;;

ppn)
    run -n 4 --ppn 2 "$PROBE" init map finalize
    expect_rc 0
    expect_count " map 0,0,1,1 " 4
    for r in 0 1; do expect_out "^rank $r map 0,0,1,1 env_node 0$"; done
    for r in 2 3; do expect_out "^rank $r map 0,0,1,1 env_node 1$"; done
    APTUS_PPN=3 "$MPIEXEC" --timeout 60 -n 4 "$PROBE" init map finalize >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_count " map 0,0,0,1 " 4
    expect_out "^rank 3 map 0,0,0,1 env_node 1$"
    run -n 3 "$PROBE" init map finalize
    expect_rc 0
    expect_count " map 0,0,0 env_node 0$" 3
    ;;

binding)
    # --bind-to / --map-by / --cpus-per-rank / --report-bindings: each rank prints the CPUs it
    # may use (the kernel's view), against what the options ask for on this machine.
    NCPU=$(nproc)
    SHOW='echo "rank $PMI_RANK node $APTUS_NODE_ID cpus $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
    ALL=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    # none: every rank may use what mpiexec may use
    run -n 2 --bind-to none --report-bindings sh -c "$SHOW"
    expect_rc 0
    expect_count "cpus $ALL\$" 2
    expect_err "rank 0 on host .*: not bound (may use CPUs $ALL)"
    if [ "$NCPU" -ge 2 ]; then
        # the default: a core each when they fit (the report and the kernel agree; different
        # cores), else not bound (a machine with one core of two hardware threads)
        run -n 2 --report-bindings sh -c "$SHOW"
        expect_rc 0
        c0=$(sed -n 's/^rank 0 node 0 cpus //p' "$OUT")
        c1=$(sed -n 's/^rank 1 node 0 cpus //p' "$OUT")
        if grep -q "rank 0 on host .*: bound to core" "$ERR"; then
            [ -n "$c0" ] && [ -n "$c1" ] && [ "$c0" != "$c1" ] || fail "ranks not on different cores: '$c0' '$c1'"
            [ "$c0" != "$ALL" ] || fail "rank 0 bound to every CPU"
            expect_err "rank 0 on host .*: bound to core (CPUs $c0)"
            expect_err "rank 1 on host .*: bound to core (CPUs $c1)"
        else
            expect_err "rank 0 on host .*: not bound"
            [ "$c0" = "$ALL" ] || fail "rank 0 reported unbound, has '$c0'"
        fi
        # two cores for one rank (a progress thread gets the second one)
        run -n 1 --cpus-per-rank 2 sh -c "$SHOW"
        expect_rc 0
        c=$(sed -n 's/^rank 0 node 0 cpus //p' "$OUT")
        case "$c" in *,* | *-*) ;; *) fail "--cpus-per-rank 2 gave '$c'" ;; esac
        MPIEXEC_CPUS_PER_RANK=2 "$MPIEXEC" --timeout 60 -n 1 sh -c "$SHOW" >"$OUT" 2>"$ERR"
        RC=$?
        expect_rc 0
        [ "$(sed -n 's/^rank 0 node 0 cpus //p' "$OUT")" = "$c" ] || fail "MPIEXEC_CPUS_PER_RANK=2 differs"
        # hardware threads: one CPU each
        run -n 2 --bind-to hwthread sh -c "$SHOW"
        expect_rc 0
        [ "$(grep -c 'cpus [0-9][0-9]*$' "$OUT")" -eq 2 ] || fail "--bind-to hwthread: not one CPU each"
        # mpiexec restricted to one CPU (taskset, a cgroup, Slurm): binding stays inside it
        if command -v taskset >/dev/null 2>&1; then
            first=$(echo "$ALL" | sed 's/[-,].*//')
            taskset -c "$first" "$MPIEXEC" --timeout 60 -n 1 --report-bindings sh -c "$SHOW" >"$OUT" 2>"$ERR"
            RC=$?
            expect_rc 0
            expect_out "cpus $first\$"
            taskset -c "$first" "$MPIEXEC" --timeout 60 -n 2 sh -c "$SHOW" >"$OUT" 2>"$ERR"
            RC=$?
            expect_rc 0
            expect_count "cpus $first\$" 2
        fi
    fi
    # more ranks than cores: not bound by default; an explicit core binding is refused, or shares
    # the cores when told it may
    MORE=$((NCPU + 1))
    run -n $MORE sh -c "$SHOW"
    expect_rc 0
    expect_count "cpus $ALL\$" $MORE
    run -n $MORE --bind-to core sh -c "$SHOW"
    expect_rc 2
    expect_err "bind-to core: $MORE rank(s) on host .* need $MORE cores, it has [0-9]* for this job"
    run -n $MORE --bind-to core:overload-allowed --report-bindings sh -c "$SHOW"
    expect_rc 0
    [ "$(grep -c 'bound to core (CPUs ' "$ERR")" -eq $MORE ] || fail "overload-allowed: not every rank bound"
    [ "$(grep -c "cpus $ALL\$" "$OUT")" -lt $MORE ] || fail "overload-allowed: the ranks were not bound"
    # --map-by node: ranks round-robin over the (simulated) nodes
    run -n 4 --ppn 2 --map-by node "$PROBE" init map finalize
    expect_rc 0
    expect_count " map 0,1,0,1 " 4
    # bad words
    for bad in "--bind-to cores" "--bind-to core:sometimes" "--map-by board" "--cpus-per-rank 0"; do
        # shellcheck disable=SC2086
        run -n 1 $bad true
        expect_rc 2
    done
    expect_err "cpus-per-rank needs a number of cores"
    run -n 1 --bind-to cores true
    expect_err "bind-to 'cores': expected none, hwthread, core, numa or socket"
    MPIEXEC_MAP_BY=board "$MPIEXEC" --timeout 60 -n 1 true >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 2
    expect_err "map-by 'board'"
    ;;

shm_cleanup)
    # A file of another job must survive.
    OTHER=/dev/shm/aptus-otherjob$$-keep
    : >"$OTHER"
    run -n 2 "$PROBE" "$TAG" init shm fence r0:kill=9 fence finalize
    expect_rc 137
    JOBID=$(sed -n 's/^rank 0 size 2 singleton 0 jobid //p' "$OUT")
    [ -n "$JOBID" ] || fail "no jobid"
    expect_out "^rank 0 shm /aptus-$JOBID-probe0$"
    expect_out "^rank 1 shm /aptus-$JOBID-probe1$"
    [ ! -e "/dev/shm/aptus-$JOBID-probe0" ] && [ ! -e "/dev/shm/aptus-$JOBID-probe1" ] ||
        fail "shared memory of the killed job left behind"
    # Also after a successful job.
    run -n 2 "$PROBE" "$TAG" init shm fence finalize
    expect_rc 0
    JOBID=$(sed -n 's/^rank 0 size 2 singleton 0 jobid //p' "$OUT")
    [ ! -e "/dev/shm/aptus-$JOBID-probe0" ] || fail "shared memory left behind after success"
    [ -e "$OTHER" ] || fail "another job's shared memory was removed"
    rm -f "$OTHER"
    expect_no_orphans
    ;;

singleton)
    env -u PMI_FD -u PMI_RANK -u PMI_SIZE -u PMI_JOBID \
        "$PROBE" init put fence getall getmissing map finalize >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out "^rank 0 size 1 singleton 1 jobid s[0-9]"
    expect_out "^rank 0 getall ok$"
    expect_out "^rank 0 map 0 env_node none$"
    # Abort in a singleton exits with the code.
    env -u PMI_FD "$PROBE" init abort=9 >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 9
    ;;

usage_errors)
    run -n 0 "$PROBE"
    [ "$RC" -ne 0 ] || fail "-n 0 accepted"
    expect_err "\-n"
    run "$PROBE"
    [ "$RC" -ne 0 ] || fail "missing -n accepted"
    run -n 2 "$WORK/does-not-exist"
    expect_rc 127
    expect_err "cannot run"
    run -n 2 aptus-no-such-program-anywhere
    expect_rc 127
    expect_err "not in PATH"
    : >"$WORK/notexec"
    run -n 2 "$WORK/notexec"
    expect_rc 126
    expect_err "cannot run"
    run -n 2 --bogus-option "$PROBE"
    [ "$RC" -ne 0 ] || fail "unknown option accepted"
    expect_err "unknown option"
    "$MPIEXEC" --help >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out "Usage"
    # mpirun is the same program; -np is accepted.
    "$(dirname "$MPIEXEC")/mpirun" -np 2 "$PROBE" init fence finalize >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_count "^rank [01] size 2 " 2
    ;;

stdin)
    echo "from-stdin" | "$MPIEXEC" --timeout 60 -n 3 cat >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_count "^from-stdin$" 1
    ;;

hosts_fork)
    # A host list with the fork launcher: everything on this machine, nodes follow the hosts.
    run --launcher fork --hosts a,b -ppn 2 -n 5 "$PROBE" init map where finalize
    expect_rc 0
    expect_count " map 0,0,1,1,0 " 5
    expect_out "^rank 4 netns .* local 2/3 nodes 2 via fd$"
    expect_out "^rank 3 netns .* local 1/2 nodes 2 via fd$"
    # Slots without -ppn: a:2 takes 0-1, b:1 takes 2, then around again.
    run --launcher fork --hosts a:2,b -n 5 "$PROBE" init map finalize
    expect_rc 0
    expect_count " map 0,0,1,0,0 " 5
    # A name given twice is one host (one node); localhost alone defaults to fork.
    run --hosts localhost,localhost -n 3 "$PROBE" init map where finalize
    expect_rc 0
    expect_count " map 0,0,0 " 3
    expect_count " via fd$" 3
    # Hostfile: comments, blank lines, slots.
    printf '# hosts\n\nx:3   # three\ny\n  z:1\n' >"$WORK/hf"
    run --launcher fork -f "$WORK/hf" -n 6 "$PROBE" init map finalize
    expect_rc 0
    expect_count " map 0,0,0,1,2,0 " 6
    expect_no_orphans
    ;;

hosts_errors)
    printf 'x:0\n' >"$WORK/hf"
    run -f "$WORK/hf" -n 2 "$PROBE"
    expect_rc 2
    expect_err "hostfile '$WORK/hf' line 1: bad slot count '0'"
    printf 'a\nb c\n' >"$WORK/hf"
    run -f "$WORK/hf" -n 2 "$PROBE"
    expect_rc 2
    expect_err "line 2: expected 'host' or 'host:slots', got 'b c'"
    printf '# nothing\n\n' >"$WORK/hf"
    run -f "$WORK/hf" -n 2 "$PROBE"
    expect_rc 2
    expect_err "names no host"
    run -f "$WORK/no-such-hostfile" -n 2 "$PROBE"
    expect_rc 2
    expect_err "cannot read hostfile"
    run --hosts a,,b -n 2 "$PROBE"
    expect_rc 2
    expect_err "empty host name"
    run --hosts 'a;b' -n 2 "$PROBE"
    expect_rc 2
    expect_err "host name 'a;b'"
    run --hosts a:x -n 2 "$PROBE"
    expect_rc 2
    expect_err "bad slot count 'x' for host 'a'"
    run --launcher rsh --hosts a -n 2 "$PROBE"
    expect_rc 2
    expect_err "unknown launcher 'rsh'"
    run --launcher netns -n 2 "$PROBE"
    expect_rc 2
    expect_err "netns launcher needs hosts"
    run --launcher netns --launcher-exec ssh --hosts a -n 2 "$PROBE"
    expect_rc 2
    expect_err "launcher-exec goes with the ssh launcher"
    run --launcher ssh --iface aptus-no-such-if0 --hosts localhost -n 1 "$PROBE"
    expect_rc 2
    expect_err "no interface 'aptus-no-such-if0'"
    ;;

proxy_local)
    # The ssh launcher with hosts that are this machine: one proxy per host, forked without
    # ssh, ranks reaching the PMI server over TCP (loopback).
    run --launcher ssh --hosts localhost:2,127.0.0.1:2 -n 4 "$PROBE" "$TAG" init put fence getall map where barrier finalize
    expect_rc 0
    expect_count "getall ok$" 4
    expect_count " map 0,0,1,1 " 4
    expect_count " via port$" 4
    expect_count "barrier 1 ok$" 4
    run --launcher ssh --hosts localhost,127.0.0.1 -n 2 --prefix "$PROBE" print=hello eprint=oops partial
    expect_rc 0
    expect_out "^\[0\] hello from 0$"
    expect_out "^\[1\] part1-1-part2$"
    grep -q "^\[1\] oops from 1$" "$ERR" || fail "stderr lacks a prefixed line"
    run --launcher ssh --hosts localhost,127.0.0.1 -n 4 "$PROBE" "$TAG" init fence r3:forkchild r3:kill=9 fence finalize
    expect_rc 137
    expect_err "rank 3 (pid [0-9]* on host 127.0.0.1) was killed by signal 9"
    expect_no_orphans
    run --launcher ssh --hosts localhost,127.0.0.1 -n 3 "$PROBE" "$TAG" init fence r2:abort=7 fence finalize
    expect_rc 7
    expect_err "rank 2 called abort with exit code 7"
    run --launcher ssh --hosts localhost,127.0.0.1 -n 2 "$PROBE" "$TAG" r1:exit=5 r0:hang
    expect_rc 5
    expect_err "rank 1 (pid [0-9]* on host 127.0.0.1) exited with code 5"
    expect_no_orphans
    ;;

mpi_signals)
    # An MPI rank killed by SIGSEGV or abort(): exit 128+signal, a message naming the rank and
    # the signal, and nothing left -- no file in the working directory (a fabric library's
    # backtrace file, PROG.80s-PID,HOST.btr from libinfinipath), no process, no shared memory.
    # Core dumps are the user's choice (ulimit -c), off here; so is a sanitizer's SEGV handler.
    MPIPROG=$4 FAKEFI=$5 FABRIC=$6
    mkdir "$WORK/cwd"
    # crash NP VICTIM MODE CODE SIGNAME [mpiexec options...]
    crash() {
        np=$1 victim=$2 mode=$3 code=$4 signame=$5
        shift 5
        (cd "$WORK/cwd" && ulimit -c 0 &&
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0" \
                "$MPIEXEC" --timeout 60 "$@" -n "$np" "$MPIPROG" "$mode" "$victim" "$TAG") >"$OUT" 2>"$ERR"
        RC=$?
        expect_rc "$code"
        expect_err "^mpiexec: rank $victim (pid [0-9]*) was killed by signal $((code - 128)) ($signame)"
        [ "$(grep -c 'mpiexec:' "$ERR")" -eq 1 ] || fail "expected exactly one mpiexec message"
        left=$(ls -A "$WORK/cwd")
        [ -z "$left" ] || fail "files left in the working directory: $left"
        expect_no_orphans
        JOBID=$(sed -n 's/^jobid //p' "$OUT")
        [ -n "$JOBID" ] || fail "no jobid"
        shm_gone() { ! ls /dev/shm/ | grep -q "^aptus-$JOBID-"; }
        wait_for shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-$JOBID-")"
    }
    crash 2 1 segv 139 "Segmentation fault"
    crash 3 1 abort 134 "Aborted"
    if [ "$FABRIC" = 1 ]; then
        # Every rank a node of its own: the network channels open the fabric layer.
        crash 2 1 segv 139 "Segmentation fault" --ppn 1
        crash 4 3 abort 134 "Aborted" --ppn 2
        # A provider library that catches the signals as libfabric loads it.
        export FI_PROVIDER_PATH="$FAKEFI"
        crash 2 1 segv 139 "Segmentation fault" --ppn 1
        crash 3 2 abort 134 "Aborted" --ppn 1
        unset FI_PROVIDER_PATH
    fi
    ;;

netns_place)
    HA=$APTUS_NETNS_H0 HB=$APTUS_NETNS_H1
    IA=$(stat -L -c %i "/run/netns/$HA") IB=$(stat -L -c %i "/run/netns/$HB")
    run --launcher netns --hosts "$HA,$HB" -ppn 2 -n 4 "$PROBE" "$TAG" init put fence getall map where barrier finalize
    expect_rc 0
    expect_count "getall ok$" 4
    expect_count "barrier 1 ok$" 4
    expect_count " map 0,0,1,1 " 4
    for r in 0 1; do expect_out "^rank $r netns $IA local $r/2 nodes 2 via port$"; done
    for r in 2 3; do expect_out "^rank $r netns $IB local $((r - 2))/2 nodes 2 via port$"; done
    # host:slots, wrapping around: A takes 0-1, B 2, A 3-4.
    run --launcher netns --hosts "$HA:2,$HB:1" -n 5 "$PROBE" init map where finalize
    expect_rc 0
    expect_count " map 0,0,1,0,0 " 5
    for r in 0 1 3 4; do expect_out "^rank $r netns $IA "; done
    expect_out "^rank 2 netns $IB local 0/1 "
    # A hostfile, and -ppn with more ranks than places (wraps): A, B, A.
    printf '%s\n%s # second\n' "$HA" "$HB" >"$WORK/hf"
    run --launcher netns -f "$WORK/hf" -ppn 1 -n 3 "$PROBE" init map where finalize
    expect_rc 0
    expect_count " map 0,1,0 " 3
    expect_out "^rank 2 netns $IA local 1/2 "
    # --map-by node: round-robin over the hosts, whatever their slots
    run --launcher netns --hosts "$HA:2,$HB:2" --map-by node -n 3 "$PROBE" init map where finalize
    expect_rc 0
    expect_count " map 0,1,0 " 3
    expect_out "^rank 1 netns $IB local 0/1 "
    # binding through the proxies: none by default here (the namespaces share this machine), and
    # what --bind-to asks for, from each host's topology
    SHOW='echo "rank $PMI_RANK cpus $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
    ALL=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    run --launcher netns --hosts "$HA,$HB" -n 2 sh -c "$SHOW"
    expect_rc 0
    expect_count "cpus $ALL\$" 2
    run --launcher netns --hosts "$HA,$HB" -n 2 --bind-to core:overload-allowed --report-bindings sh -c "$SHOW"
    expect_rc 0
    expect_err "rank 0 on host $HA: bound to core (CPUs "
    expect_err "rank 1 on host $HB: bound to core (CPUs "
    [ "$(grep -c "cpus $ALL\$" "$OUT")" -eq 0 ] || [ "$(nproc)" -eq 1 ] || fail "--bind-to core through the proxies: not bound"
    expect_no_orphans
    ;;

netns_failures)
    H=$APTUS_NETNS_HOSTS
    run --launcher netns --hosts "$H" -n 4 "$PROBE" "$TAG" init fence r3:forkchild r3:shm r3:kill=9 fence finalize
    expect_rc 137
    expect_err "rank 3 (pid [0-9]* on host $APTUS_NETNS_H1) was killed by signal 9"
    expect_no_orphans
    JOBID=$(sed -n 's/^rank 0 size 4 singleton 0 jobid //p' "$OUT")
    [ -n "$JOBID" ] || fail "no jobid"
    [ ! -e "/dev/shm/aptus-$JOBID-probe3" ] || fail "shared memory of the killed job left behind"
    run --launcher netns --hosts "$H" -n 4 "$PROBE" "$TAG" init fence r2:abort=9 fence finalize
    expect_rc 9
    expect_err "rank 2 called abort with exit code 9"
    expect_no_orphans
    run --launcher netns --hosts "$H" -n 2 "$PROBE" "$TAG" init fence finalize r1:exit=3
    expect_rc 3
    run --launcher netns --hosts "$H" -n 2 "$PROBE" "$TAG" init fence r1:exit=0 r0:fence
    [ "$RC" -ne 0 ] || fail "exit without finalize was not an error"
    expect_err "rank 1 .*without calling finalize"
    # A program that does not exist: each rank's exec fails on its host.
    run --launcher netns --hosts "$H" -n 2 "$WORK/does-not-exist"
    expect_rc 127
    expect_no_orphans
    ;;

netns_signals)
    H=$APTUS_NETNS_HOSTS
    fresh_out
    "$MPIEXEC" --timeout 60 --launcher netns --hosts "$H" -n 4 "$PROBE" "$TAG" init trapterm fence ready hang >"$OUT" 2>"$ERR" &
    BGPID=$!
    wait_for ready_count 4 || fail "ranks never became ready"
    kill -TERM "$BGPID"
    wait "$BGPID"
    RC=$?
    BGPID=
    expect_rc 143
    for r in 0 1 2 3; do expect_out "^rank $r got SIGTERM$"; done
    expect_no_orphans
    # mpiexec SIGKILLed: the proxies lose their connection and kill their ranks (and the
    # ranks' children); no shared memory is left.
    fresh_out
    "$MPIEXEC" --timeout 60 --launcher netns --hosts "$H" -n 4 "$PROBE" "$TAG" init forkchild shm fence ready hang >"$OUT" 2>"$ERR" &
    BGPID=$!
    wait_for ready_count 4 || fail "ranks never became ready"
    kill -KILL "$BGPID"
    wait "$BGPID" 2>/dev/null
    BGPID=
    expect_no_orphans
    JOBID=$(sed -n 's/^rank 0 size 4 singleton 0 jobid //p' "$OUT")
    [ -n "$JOBID" ] || fail "no jobid"
    shm_gone() { ! ls /dev/shm/ | grep -q "^aptus-$JOBID-"; }
    wait_for shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-$JOBID-")"
    # A proxy killed: its ranks die with it (PDEATHSIG) and mpiexec ends the job.
    fresh_out
    "$MPIEXEC" --timeout 60 --launcher netns --hosts "$H" -n 4 "$PROBE" "$TAG" init fence ready hang >"$OUT" 2>"$ERR" &
    BGPID=$!
    wait_for ready_count 4 || fail "ranks never became ready"
    pkill -KILL -f -- "--proxy .* $APTUS_NETNS_H1\$"
    wait "$BGPID"
    RC=$?
    BGPID=
    [ "$RC" -ne 0 ] || fail "job with a lost proxy exited 0"
    expect_err "host $APTUS_NETNS_H1: lost the connection to its proxy"
    expect_no_orphans
    ;;

netns_errors)
    H=$APTUS_NETNS_HOSTS
    run --launcher netns --hosts "$H,aptus-no-such-ns" -n 3 "$PROBE" "$TAG" init fence finalize
    expect_rc 1
    expect_err "host aptus-no-such-ns: no network namespace named 'aptus-no-such-ns'"
    # Through a launcher command standing in for ssh, the failure shows at run time: the
    # launcher exits before its proxy connects; the job ends with a message naming the host.
    printf '#!/bin/sh\nh=$1; shift; exec ip netns exec "$h" "$@"\n' >"$WORK/fake-ssh"
    chmod +x "$WORK/fake-ssh"
    run --launcher-exec "$WORK/fake-ssh" --hosts "$H,aptus-no-such-ns" -n 3 "$PROBE" "$TAG" init fence hang
    expect_rc 1
    expect_err "host aptus-no-such-ns: .*fake-ssh aptus-no-such-ns' exited with code [0-9]* before its proxy connected"
    expect_no_orphans
    ;;

netns_ssh)
    # --launcher-exec: a script called as "CMD host command..." in place of ssh.
    HA=$APTUS_NETNS_H0 HB=$APTUS_NETNS_H1
    IA=$(stat -L -c %i "/run/netns/$HA") IB=$(stat -L -c %i "/run/netns/$HB")
    printf '#!/bin/sh\necho "$1" >>"%s/fake-ssh.log"\nh=$1; shift; exec ip netns exec "$h" "$@"\n' "$WORK" >"$WORK/fake-ssh"
    chmod +x "$WORK/fake-ssh"
    run --launcher-exec "$WORK/fake-ssh" --hosts "$HA,$HB" -ppn 2 -n 4 "$PROBE" "$TAG" init put fence getall where finalize
    expect_rc 0
    expect_count "getall ok$" 4
    for r in 0 1; do expect_out "^rank $r netns $IA "; done
    for r in 2 3; do expect_out "^rank $r netns $IB "; done
    [ "$(sort "$WORK/fake-ssh.log" | tr '\n' ' ')" = "$HA $HB " ] || fail "fake-ssh was not called once per host"
    run --launcher-exec "$WORK/fake-ssh" --hosts "$HA,$HB" -n 4 "$PROBE" "$TAG" init fence r3:kill=9 fence finalize
    expect_rc 137
    expect_no_orphans
    ;;

netns_ssh_default)
    # The default launcher for other hosts: plain "ssh -x -o BatchMode=yes host command...".
    # An ssh stand-in first in PATH does what ssh does with the command: joins the words with
    # spaces and hands the string to a shell on the host (here: in its namespace). mpiexec runs
    # from a folder whose name has a space and a quote, so the words must arrive quoted.
    HA=$APTUS_NETNS_H0 HB=$APTUS_NETNS_H1
    IA=$(stat -L -c %i "/run/netns/$HA") IB=$(stat -L -c %i "/run/netns/$HB")
    mkdir -p "$WORK/bin" "$WORK/it's here"
    cat >"$WORK/bin/ssh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in -x) shift ;; -o) shift 2 ;; *) break ;; esac
done
h=\$1; shift
echo "\$h" >>"$WORK/ssh.log"
exec ip netns exec "\$h" sh -c "\$*"
EOF
    chmod +x "$WORK/bin/ssh"
    cp "$MPIEXEC" "$WORK/it's here/mpiexec"
    PATH="$WORK/bin:$PATH" "$WORK/it's here/mpiexec" --timeout 60 --hosts "$HA,$HB" -ppn 2 -n 4 "$PROBE" "$TAG" \
        init put fence getall where finalize >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_count "getall ok$" 4
    for r in 0 1; do expect_out "^rank $r netns $IA "; done
    for r in 2 3; do expect_out "^rank $r netns $IB "; done
    [ "$(sort "$WORK/ssh.log" | tr '\n' ' ')" = "$HA $HB " ] || fail "ssh was not called once per host"
    expect_no_orphans
    ;;

netns_inside)
    # mpiexec inside one of the namespaces: the others reach it through the bridge.
    HA=$APTUS_NETNS_H0 HB=$APTUS_NETNS_H1
    IA=$(stat -L -c %i "/run/netns/$HA") IB=$(stat -L -c %i "/run/netns/$HB")
    ip netns exec "$HA" "$MPIEXEC" --timeout 60 --launcher netns --hosts "$HA,$HB" -ppn 2 -n 4 "$PROBE" "$TAG" \
        init put fence getall where finalize >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_count "getall ok$" 4
    for r in 2 3; do expect_out "^rank $r netns $IB "; done
    # --iface: the bridge's address from the root namespace.
    run --launcher netns --iface "$APTUS_NETNS_BRIDGE" --hosts "$HA,$HB" -n 2 "$PROBE" "$TAG" init fence where finalize
    expect_rc 0
    expect_out "^rank 1 netns $IB "
    expect_no_orphans
    ;;

netns_mpi)
    # A real MPI program with ranks on two namespaces: it must run correctly over the network
    # channels. mpiexec runs in the background so that its PID (the first part of the job id,
    # PID x random) is known even when no rank lives long enough to print the id.
    MPIPROG=$4
    shm_gone() { ! ls /dev/shm/ | grep -q "^aptus-${MPIEXEC_PID}x"; }
    "$MPIEXEC" --timeout 60 --launcher netns --hosts "$APTUS_NETNS_HOSTS" -ppn 2 -n 4 "$MPIPROG" "$TAG" \
        >"$OUT" 2>"$ERR" &
    MPIEXEC_PID=$!
    wait $MPIEXEC_PID
    RC=$?
    expect_rc 0
    expect_count "^node_size 2 world 4$" 4
    expect_out "^sum ok$"
    expect_out "^jobid ${MPIEXEC_PID}x"
    expect_no_orphans
    wait_for shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-${MPIEXEC_PID}x")"
    # Without a network channel in the send rule chain the job ends cleanly with the message.
    APTUS_SEND_RULES="self;smp" "$MPIEXEC" --timeout 60 --launcher netns --hosts "$APTUS_NETNS_HOSTS" -ppn 2 -n 4 \
        "$MPIPROG" "$TAG" >"$OUT" 2>"$ERR" &
    MPIEXEC_PID=$!
    wait $MPIEXEC_PID
    RC=$?
    [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] || fail "exit code $RC, expected a failure other than the timeout"
    expect_err "a job spanning nodes needs a network channel"
    grep -q "^sum ok$" "$OUT" && fail "the allreduce across nodes cannot have worked"
    expect_no_orphans
    wait_for shm_gone || fail "shared memory left behind: $(ls /dev/shm | grep "^aptus-${MPIEXEC_PID}x")"
    ;;

netns_idle_cpu)
    # A job that outlasts its proxies' connect deadline (--connect-timeout 1, ranks out of MPI for
    # 4 s): mpiexec waits in poll, using next to no CPU -- once the deadline had passed it used to
    # wait 0 ms each time, spinning for the rest of the job. Its CPU time read from /proc while
    # it runs: at most half a second.
    MPINODES=$4
    "$MPIEXEC" --timeout 60 --connect-timeout 1 --launcher netns --hosts "$APTUS_NETNS_HOSTS" -n 2 \
        "$MPINODES" --hold=4 "$TAG" >"$OUT" 2>"$ERR" &
    BGPID=$!
    ticks=0
    while kill -0 "$BGPID" 2>/dev/null; do
        t=$(awk '{ print $14 + $15 }' "/proc/$BGPID/stat" 2>/dev/null)
        [ -n "$t" ] && ticks=$t
        sleep 0.2
    done
    wait "$BGPID"
    RC=$?
    BGPID=
    expect_rc 0
    expect_out "^sum ok$"
    hz=$(getconf CLK_TCK)
    [ "$ticks" -le $((hz / 2)) ] || fail "mpiexec used $ticks clock ticks of CPU ($hz a second) in a job of 4 s"
    expect_no_orphans
    ;;

netns_kill_loop)
    # A rank killed with SIGKILL during an MPI_Ialltoall loop, 2 ranks on each of 2 hosts: the
    # ranks of the other host lose their RC connections to it within milliseconds, and their
    # channels give up on it and abort the job ("channel rc-sr gave up on rank N"). Whether that
    # abort or the report of the death reaches mpiexec first is a race; the job must name the
    # rank that died and its signal either way (exit 137). Repeated, victims on both hosts.
    # (APTUS_RC_THRESHOLD=1: the connections are up before the loop's first rounds are over.)
    MPIPROG=$5
    looping() { [ "$(count_out "looping$")" -ge 4 ]; }
    for round in 1 2 3 4 5 6 7 8 9 10; do
        if [ $((round % 2)) -eq 1 ]; then victim=1 host=$APTUS_NETNS_H0; else victim=2 host=$APTUS_NETNS_H1; fi
        fresh_out
        APTUS_RC_THRESHOLD=1 "$MPIEXEC" --timeout 60 --launcher netns --hosts "$APTUS_NETNS_HOSTS" -ppn 2 -n 4 \
            "$MPIPROG" loop "$TAG" >"$OUT" 2>"$ERR" &
        BGPID=$!
        wait_for looping || fail "round $round: the ranks never got into the loop"
        pid=$(sed -n "s/^rank $victim pid //p" "$OUT")
        [ -n "$pid" ] || fail "round $round: no pid of rank $victim"
        kill -KILL "$pid"
        wait "$BGPID"
        RC=$?
        BGPID=
        expect_rc 137
        expect_err "^mpiexec: rank $victim (pid $pid on host $host) was killed by signal 9 (Killed)"
        [ "$(grep -c 'mpiexec:' "$ERR")" -eq 1 ] || fail "round $round: expected exactly one mpiexec message"
        expect_no_orphans
    done
    ;;

*)
    echo "unknown case $CASE"
    exit 2
    ;;
esac
exit 0
