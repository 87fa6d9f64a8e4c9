# Sourced by abi_binary.sh and check_constants.sh (not run on its own): the MPICH 5.0.2 wheel
# from PyPI, whose mpi_abi.h, mpicc_abi and libmpi_abi.so.1 are the reference MPI 5.0 standard
# ABI implementation the two tests compare Aptus MPI with.
#
#   mpich_wheel CACHE
#
# Downloads the wheel into CACHE/download once (APTUS_ABI_WHEEL=/path/to/mpich-5.0.2-*.whl uses
# a local copy instead) and unpacks its headers, mpicc_abi and ABI libraries (lib/libmpi_abi.so*,
# lib/mpich/) under CACHE/wheel, again when the wheel is newer. Sets mpich_wheel_file (the wheel)
# and mpich_wheel_prefix (the unpacked tree: bin/, include/, lib/). Returns 0, or 77 (skip) after
# telling why through the caller's say(). Both tests may run at once: they share CACHE under a
# lock.

mpich_wheel() {
    local cache=$1 py whl tree rc
    py=$(command -v python3 || true)
    [ -n "$py" ] || { say "SKIP: python3 is needed to unpack the mpich wheel"; return 77; }
    mkdir -p "$cache/download" || return 77
    if command -v flock >/dev/null; then
        exec {mpich_wheel_lock}>"$cache/lock"
        flock "$mpich_wheel_lock"
    fi
    whl=${APTUS_ABI_WHEEL:-}
    [ -n "$whl" ] || whl=$(ls "$cache"/download/mpich-5.0.2-*.whl 2>/dev/null | head -n 1)
    rc=0
    if [ -z "$whl" ]; then
        if ! "$py" -m pip --version >/dev/null 2>&1; then
            say "SKIP: python3 -m pip is not available to fetch the mpich wheel"
            rc=77
        elif ! "$py" -m pip download --quiet --no-deps --only-binary=:all: \
                -d "$cache/download" mpich==5.0.2 >"$cache/pip.log" 2>&1; then
            say "SKIP: could not download mpich==5.0.2 (see $cache/pip.log)"
            rc=77
        fi
        whl=$(ls "$cache"/download/mpich-5.0.2-*.whl 2>/dev/null | head -n 1)
    fi
    if [ $rc -eq 0 ] && [ ! -f "$whl" ]; then
        say "SKIP: no mpich 5.0.2 wheel"
        rc=77
    fi
    tree=$cache/wheel
    mpich_wheel_file=$whl
    mpich_wheel_prefix=$tree/mpich-5.0.2.data/data
    if [ $rc -eq 0 ] && { [ ! -x "$mpich_wheel_prefix/bin/mpicc_abi" ] ||
        [ ! -f "$mpich_wheel_prefix/include/mpi_abi.h" ] || [ "$whl" -nt "$mpich_wheel_prefix/bin/mpicc_abi" ]; }; then
        rm -rf "$tree"
        mkdir -p "$tree"
        if ! "$py" - "$whl" "$tree" <<'EOF'
import os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
want = ('/bin/mpicc_abi', '/include/', '/lib/libmpi_abi.so', '/lib/mpich/')
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.startswith('mpich-5.0.2.data/data/') and any(w in n for w in want)]
    if not any(n.endswith('/bin/mpicc_abi') for n in names) or not any(n.endswith('/include/mpi_abi.h') for n in names):
        sys.exit(1)
    for n in names:
        z.extract(n, dest)
os.chmod(os.path.join(dest, 'mpich-5.0.2.data/data/bin/mpicc_abi'), 0o755)
EOF
        then
            rm -rf "$tree"
            say "SKIP: the wheel $whl holds no mpicc_abi or include/mpi_abi.h"
            rc=77
        fi
    fi
    if [ -n "${mpich_wheel_lock:-}" ]; then
        exec {mpich_wheel_lock}>&-
        unset mpich_wheel_lock
    fi
    return $rc
}
