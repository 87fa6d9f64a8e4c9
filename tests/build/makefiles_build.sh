#!/bin/sh
# The README's plain build as a new user runs it -- `cmake -B build && cmake --build build -j2`,
# i.e. the Unix Makefiles generator -- from scratch in a temporary directory, then two
# incremental builds: nothing to do when nothing changed, and the stubs of the unimplemented MPI
# functions generated again when an object of the library was rebuilt.
#
#   makefiles_build.sh SOURCE_DIR [C_COMPILER [CXX_COMPILER]]
#
# Quiet unless it fails (then the build's log is shown). Exit 0 = passed, 1 = failed,
# 77 = skipped (no make).
set -u
src=$1 cc=${2:-} cxx=${3:-}
command -v make >/dev/null 2>&1 || { echo "makefiles_build: SKIP: no make"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/aptus-makefiles.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log=$dir/log
fail() {
    echo "makefiles_build: FAIL: $*"
    tail -n 60 "$log"
    exit 1
}
set -- -S "$src" -B "$dir/build" -G "Unix Makefiles"
[ -n "$cc" ] && set -- "$@" -DCMAKE_C_COMPILER="$cc"
[ -n "$cxx" ] && set -- "$@" -DCMAKE_CXX_COMPILER="$cxx"
cmake "$@" >"$log" 2>&1 || fail "cmake could not configure the tree"
cmake --build "$dir/build" -j2 >>"$log" 2>&1 || fail "the fresh build failed"
[ -f "$dir/build/generated/unimplemented.c" ] || fail "no generated/unimplemented.c"
echo "makefiles_build: fresh build ok"
cmake --build "$dir/build" -j2 --target mpi_abi >"$log" 2>&1 || fail "the second build failed"
if grep -E "Building C|Generating|Linking" "$log" >/dev/null; then
    fail "a second build of the library with nothing changed rebuilt something"
fi
# An object of aptus_core newer than the generated stubs: they must be generated again.
obj=$(find "$dir/build/CMakeFiles/aptus_core.dir" -name 'status.c.o' | head -n 1)
[ -n "$obj" ] || fail "no object of src/api/status.c"
sleep 1
touch "$obj"
cmake --build "$dir/build" -j2 --target mpi_abi >"$log" 2>&1 || fail "the incremental build failed"
grep -q "Generating stubs" "$log" || fail "a rebuilt object did not make the stubs be generated again"
echo "makefiles_build: incremental builds ok"
