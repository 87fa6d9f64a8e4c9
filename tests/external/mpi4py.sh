#!/bin/bash
# mpi4py as a user: mpi4py 4.1.2, built from PyPI's source distribution against this build of
# Aptus MPI (its mpicc wrapper, hence include/mpi.h and libmpi_abi.so), runs its own test suite
# (test/main.py) at each of the given rank counts under our mpiexec. mpi4py's prebuilt wheels
# cannot be used: they ship only MPICH-ABI and Open MPI-ABI variants, not the standard ABI.
#
#   mpi4py.sh BUILD_DIR SOURCE_DIR MPIEXEC [NP...]        (default NP: 1 2)
#
# Everything lives under BUILD_DIR/external/mpi4py and is reused by later runs: the virtual
# environment (venv/), the source distribution (download/), its test/ directory (src/) and the
# wheel built from it (wheel/<key>/, key = mpi4py version + Python version + hash of
# include/*.h and of the mpicc wrapper, so a header change rebuilds it; the library itself is
# found at run time through the wrapper's rpath, so library changes need no rebuild). The logs
# of the last run are in logs/. A first run downloads the sdist (0.5 MB), setuptools and Cython
# into the venv (~5 MB) and builds the wheel (~2.5 min of CPU); later runs only run the tests
# (~40 s of CPU for both rank counts), then mpi4py.futures' own test suite (demo/futures, four
# runs of about a minute: its executors spawn their workers).
#
# Environment:
#   APTUS_MPI4PY_SDIST=/path/mpi4py-4.1.2.tar.gz  use a local copy of the source distribution
#   APTUS_PYTHON=python3       the interpreter the virtual environment is made from
#   APTUS_MPI4PY_TIMEOUT=600   seconds each mpiexec job may run (then it fails, exit 124)
#   APTUS_MPI4PY_ARGS="..."    extra arguments for test/main.py (e.g. "-i test_p2p" to run
#                              only some modules, or "-x Pattern" to exclude more)
#   APTUS_MPI4PY_UNIVERSE=8    MPI_UNIVERSE_SIZE of the runs (what spawns may start)
#   CC                         the C compiler the mpicc wrapper uses (APTUS_CC)
#
# Exit status: 0 when every test that is run passes at every rank count; 77 (skipped) only when
# there is no network to reach PyPI (pip's log says so) and what is needed is not cached; 1 otherwise (any failure, error, crash or
# timeout; also when python3's venv/pip/headers are missing: scripts/ensure-deps.sh installs
# them on Debian -- packages python3-venv, python3-pip, python3-dev).
set -u

version=4.1.2
# sha256 of mpi4py-4.1.2.tar.gz as published on PyPI.
sdist_sha256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02

# Tests excluded -- by module (-e, a regular expression on the file name) and by test name (-x,
# a pattern on module.Class.method) --, each with the reason: none now (the last were those of
# MPI_Comm_spawn and the ports, in since issue 33).
exclude_modules=(
)
exclude_tests=(
)
# MPI_UNIVERSE_SIZE for the runs: mpiexec's default is this machine's CPUs (2 on CI), and
# test_spawn.py and mpi4py.futures start more processes than that (a spawn beyond the universe
# fails with MPI_ERR_SPAWN, as it must).
universe=${APTUS_MPI4PY_UNIVERSE:-8}

say() { echo "mpi4py.sh: $*"; }
fail() { say "FAIL: $*"; exit 1; }
# A pip step that could not reach PyPI: skipped (77) only when pip's log (argument 1) shows that
# there is no network (no name resolution, no route, refused or timed out); any other failure
# (an HTTP error, no such version, a broken proxy) fails, so that CI cannot skip by accident.
pip_failed() {
    tail -n 5 "$1"
    if grep -qE 'Temporary failure in name resolution|Name or service not known|No address associated|Network is unreachable|No route to host|Connection refused|timed out|Read timed out' "$1"; then
        say "SKIP: no network to reach PyPI: $2"
        exit 77
    fi
    fail "$2 (see $1)"
}

[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR SOURCE_DIR MPIEXEC [NP...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 1
srcdir=$(cd "$2" && pwd) || exit 1
mpiexec=$(cd "$(dirname "$3")" && pwd)/$(basename "$3") || exit 1
shift 3
nps=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(1 2)
mpicc=$build/tools/wrappers/mpicc
[ -x "$mpicc" ] || fail "no mpicc wrapper at $mpicc"
[ -x "$mpiexec" ] || fail "no mpiexec at $mpiexec"
timeout_s=${APTUS_MPI4PY_TIMEOUT:-600}

cache=$build/external/mpi4py
mkdir -p "$cache/download" "$cache/logs" || exit 1
if command -v flock >/dev/null; then
    exec {lockfd}>"$cache/lock"
    flock "$lockfd"
fi

# --- Python: venv, pip and the C headers (Debian: python3-venv, python3-pip, python3-dev).
py=${APTUS_PYTHON:-python3}
command -v "$py" >/dev/null || fail "$py not found (Debian: apt-get install python3; or run scripts/ensure-deps.sh)"
"$py" -c 'import venv, ensurepip' 2>/dev/null ||
    fail "$py has no venv/ensurepip module (Debian: apt-get install python3-venv; or run scripts/ensure-deps.sh)"
"$py" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
    fail "$py has no C headers (Python.h) to build an extension (Debian: apt-get install python3-dev; or run scripts/ensure-deps.sh)"
pyid=$("$py" -c 'import sys; print(sys.implementation.cache_tag, sys.executable)') || exit 1
venv=$cache/venv
vpy=$venv/bin/python
if [ ! -x "$vpy" ] || [ "$(cat "$venv/.aptus-python" 2>/dev/null)" != "$pyid" ] || ! "$vpy" -m pip --version >/dev/null 2>&1; then
    say "creating the virtual environment $venv ($pyid)"
    rm -rf "$venv"
    "$py" -m venv "$venv" >"$cache/logs/venv.log" 2>&1 || { cat "$cache/logs/venv.log"; fail "python3 -m venv failed"; }
    echo "$pyid" >"$venv/.aptus-python"
fi
pip() { "$vpy" -m pip --disable-pip-version-check --no-input "$@"; }

# --- The source distribution (the only download; its hash is checked).
sdist=${APTUS_MPI4PY_SDIST:-$cache/download/mpi4py-$version.tar.gz}
if [ ! -f "$sdist" ]; then
    say "downloading mpi4py==$version (source distribution) from PyPI"
    # --no-binary mpi4py: the sdist of mpi4py itself; its metadata step may use wheels of
    # setuptools (--no-binary :all: would build those from source too, for minutes).
    if ! pip download --no-deps --no-binary mpi4py -d "$cache/download" "mpi4py==$version" \
        >"$cache/logs/download.log" 2>&1 || [ ! -f "$sdist" ]; then
        pip_failed "$cache/logs/download.log" \
            "cannot download mpi4py==$version from PyPI and nothing is cached (set APTUS_MPI4PY_SDIST to a local copy)"
    fi
fi
sum=$(sha256sum "$sdist" | cut -d' ' -f1)
[ "$sum" = "$sdist_sha256" ] || fail "$sdist: sha256 $sum, expected $sdist_sha256"
tree=$cache/src/mpi4py-$version
if [ ! -f "$tree/test/main.py" ] || [ ! -f "$tree/demo/futures/test_futures.py" ] ||
    [ "$sdist" -nt "$tree/test/main.py" ]; then
    rm -rf "$cache/src"
    mkdir -p "$cache/src"
    tar -xzf "$sdist" -C "$cache/src" "mpi4py-$version/test" "mpi4py-$version/demo/futures" ||
        fail "cannot unpack $sdist"
    touch "$tree/test/main.py"
fi

# --- The wheel, built against this build's mpicc (include/mpi.h), cached by key.
key=$({
    echo "mpi4py $version $pyid"
    cat "$srcdir"/include/*.h "$mpicc"
} | sha256sum | cut -c1-16)
wheeldir=$cache/wheel/$key
whl=$(ls "$wheeldir"/mpi4py-$version-*.whl 2>/dev/null | head -n 1)
if [ -z "$whl" ]; then
    say "building mpi4py $version against $mpicc (log: $cache/logs/build.log)"
    # Built without build isolation, with the venv's build tools, so that a rebuild after a
    # header change needs no network once the venv has them: setuptools >= 70.1, which makes
    # wheels itself (older ones need the package wheel; Python 3.12's venv has none at all),
    # and Cython >= 3.0.1 (the sdist holds no generated C).
    if ! "$vpy" -c 'import setuptools.command.bdist_wheel, Cython' 2>/dev/null; then
        pip install --upgrade 'setuptools>=70.1' 'cython>=3.0.1' >"$cache/logs/tools.log" 2>&1 ||
            pip_failed "$cache/logs/tools.log" \
                "cannot install setuptools and Cython from PyPI into $venv, and no wheel is cached"
    fi
    rm -rf "$cache/wheel"
    mkdir -p "$wheeldir.tmp"
    start=$(date +%s)
    if ! APTUS_CC=${CC:-${APTUS_CC:-cc}} MPI4PY_BUILD_MPICC=$mpicc MPI4PY_BUILD_MPILD=$mpicc MPI4PY_BUILD_BACKEND=setuptools \
        pip wheel --no-deps --no-build-isolation --no-cache-dir -w "$wheeldir.tmp" "$sdist" \
        >"$cache/logs/build.log" 2>&1; then
        tail -n 30 "$cache/logs/build.log"
        rm -rf "$wheeldir.tmp"
        fail "building mpi4py against Aptus MPI failed"
    fi
    mv "$wheeldir.tmp" "$wheeldir"
    whl=$(ls "$wheeldir"/mpi4py-$version-*.whl | head -n 1)
    say "built $(basename "$whl") in $(($(date +%s) - start)) s"
fi
if [ "$(cat "$venv/.aptus-mpi4py" 2>/dev/null)" != "$key" ]; then
    pip install --no-deps --no-index --force-reinstall "$whl" >"$cache/logs/install.log" 2>&1 || {
        cat "$cache/logs/install.log"
        fail "cannot install $whl"
    }
    echo "$key" >"$venv/.aptus-mpi4py"
fi
# The module must use this build's library (through the wrapper's rpath).
lib=$("$vpy" -c 'import glob, mpi4py; print(glob.glob(mpi4py.__path__[0] + "/MPI.*.so")[0])') ||
    fail "no mpi4py.MPI extension module in $venv"
ldd "$lib" | grep -qF "$build/libmpi_abi.so" || { ldd "$lib"; fail "$lib does not load $build/libmpi_abi.so"; }
[ -n "${lockfd:-}" ] && exec {lockfd}>&-

# --- The test suite at each rank count.
args=(-v --no-builddir)
for e in "${exclude_modules[@]+"${exclude_modules[@]}"}"; do args+=(-e "$e"); done
for x in "${exclude_tests[@]+"${exclude_tests[@]}"}"; do args+=(-x "$x"); done
# shellcheck disable=SC2206
[ -n "${APTUS_MPI4PY_ARGS:-}" ] && args+=(${APTUS_MPI4PY_ARGS})
status=0
cd "$tree/test" || exit 1
for np in "${nps[@]}"; do
    log=$cache/logs/np$np.log
    say "running test/main.py at $np rank(s) (log: $log)"
    start=$(date +%s)
    # (This script's own APTUS_* variables are no settings of the library, which would warn.)
    env -u APTUS_MPI4PY_SDIST -u APTUS_PYTHON -u APTUS_MPI4PY_TIMEOUT -u APTUS_MPI4PY_ARGS \
        MPI_UNIVERSE_SIZE="$universe" "$mpiexec" -n "$np" --timeout "$timeout_s" -l "$vpy" main.py "${args[@]}" \
        >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    # Per rank: unittest's summary lines ("Ran N tests", "OK (skipped=S)" or
    # "FAILED (failures=F, errors=E, skipped=S)").
    "$vpy" - "$log" "$np" "$rc" "$secs" <<'EOF' || status=1
import re, sys
log, np, rc, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ok = True
text = open(log, errors="replace").read()
lines = text.splitlines()
for r in range(np):
    mine = [l[len(f"[{r}] "):] for l in lines if l.startswith(f"[{r}] ")]
    ran = [int(m.group(1)) for l in mine if (m := re.match(r"Ran (\d+) tests? in", l))]
    res = [l for l in mine if re.match(r"(OK|FAILED)( \(|$)", l)]
    if not ran or not res:
        last = [l for l in mine if " ... " in l]
        print(f"  rank {r}: no result (exit {rc}); last test started: {last[-1] if last else '?'}")
        ok = False
        continue
    counts = dict(re.findall(r"(\w+)=(\d+)", res[-1]))
    f, e, s = (int(counts.get(k, 0)) for k in ("failures", "errors", "skipped"))
    passed = ran[-1] - f - e - s
    ok = ok and f == 0 and e == 0 and res[-1].startswith("OK")
    print(f"  rank {r}: {ran[-1]} tests: {passed} passed, {f} failed, {e} errors, {s} skipped ({res[-1]})")
bad = sorted({re.sub(r"^\[\d+\] ", "", l) for l in lines if re.match(r"(\[\d+\] )?(ERROR|FAIL): ", l)})
for l in bad:
    print("  " + l)
print(f"  exit status {rc}, {secs} s")
sys.exit(0 if ok else 1)
EOF
    if [ $rc -ne 0 ]; then
        [ $rc -eq 124 ] && say "TIMEOUT after $timeout_s s at $np rank(s)"
        say "failed at $np rank(s); the end of $log:"
        tail -n 60 "$log"
        status=1
    fi
done
# --- mpi4py.futures' own test suite (demo/futures/test_futures.py: MPIPoolExecutor spawns its
# workers), as its makefile runs it: at 1 and 2 ranks, and under `python -m mpi4py.futures`.
cd "$tree/demo/futures" || exit 1
for np in "${nps[@]}"; do
    for how in plain module; do
        log=$cache/logs/futures-np$np-$how.log
        run=("$vpy" test_futures.py)
        [ $how = module ] && run=("$vpy" -m mpi4py.futures test_futures.py)
        say "running mpi4py.futures' test_futures.py at $np rank(s)${how/plain/}${how/module/ under -m mpi4py.futures} (log: $log)"
        start=$(date +%s)
        env -u APTUS_MPI4PY_SDIST -u APTUS_PYTHON -u APTUS_MPI4PY_TIMEOUT -u APTUS_MPI4PY_ARGS \
            -u APTUS_MPI4PY_UNIVERSE PYTHONPATH="$tree/test" MPI_UNIVERSE_SIZE="$universe" \
            "$mpiexec" -n "$np" --timeout "$timeout_s" "${run[@]}" >"$log" 2>&1
        rc=$?
        res=$(grep -E "^(Ran [0-9]+ tests|OK|FAILED)" "$log" | tr '\n' ' ')
        say "  exit status $rc, $(($(date +%s) - start)) s: ${res:-no result}"
        if [ $rc -ne 0 ] || ! grep -q "^OK" "$log"; then
            grep -E "^(ERROR|FAIL): " "$log" | sort -u | sed 's/^/  /'
            say "mpi4py.futures failed at $np rank(s) ($how); the end of $log:"
            tail -n 40 "$log"
            status=1
        fi
    done
done
[ $status -eq 0 ] && say "PASS"
exit $status
