#!/bin/sh
# The library built without libfabric (-DAPTUS_WITH_LIBFABRIC=OFF: what a machine without
# libfabric-dev gets from the README's plain build): it builds, a job on one node runs (self and
# smp only), and MPI_Comm_spawn works there, the parents and children talking through shared
# memory (tests/mpi/dpm_spawn.c, DPM_JOBS_SMP=1 checks the channel).
#
#   nofabric_build.sh SOURCE_DIR [C_COMPILER]
#
# Quiet unless it fails (then the log is shown). Exit 0 = passed, 1 = failed.
set -u
src=$1 cc=${2:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/aptus-nofabric.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log=$dir/log
fail() {
    echo "nofabric_build: FAIL: $*"
    tail -n 60 "$log"
    exit 1
}
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
set -- -S "$src" -B "$dir/build" -DAPTUS_WITH_LIBFABRIC=OFF
[ -n "$cc" ] && set -- "$@" -DCMAKE_C_COMPILER="$cc"
# shellcheck disable=SC2086
cmake $gen "$@" >"$log" 2>&1 || fail "cmake could not configure the tree"
grep -q "no network channels" "$log" || fail "the configuration did not say it builds no network channel"
cmake --build "$dir/build" -j2 --target mpi_abi mpiexec mpitest_dpm_spawn >>"$log" 2>&1 ||
    fail "the build without libfabric failed"
echo "nofabric_build: build ok"
MPI_UNIVERSE_SIZE=4 DPM_JOBS_SMP=1 "$dir/build/tools/mpiexec/mpiexec" -n 2 --timeout 60 \
    "$dir/build/tests/mpi/dpm_spawn" basic 2 >"$log" 2>&1 || fail "MPI_Comm_spawn without libfabric failed"
grep -q "dpm_spawn: ok" "$log" || fail "the spawn test did not say ok"
echo "nofabric_build: MPI_Comm_spawn over shared memory ok"
