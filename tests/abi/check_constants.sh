#!/usr/bin/env bash
# Cross-checks the constants of include/mpi.h against a reference MPI 5.0
# standard ABI header (mpi_abi.h from the mpich 5.0.2 wheel on PyPI).
#
#   check_constants.sh [BUILD_DIR]
#
# print_constants.c is compiled twice -- once against our include/mpi.h and
# once against the reference header (through a one-line shim "mpi.h" that
# includes mpi_abi.h) -- and the two outputs are diffed.  In addition every
# constant name and every function name that the reference header defines
# must also be present in ours.
#
# The reference header comes from the wheel cached under BUILD_DIR/abi-reference
# (mpich_wheel.sh, shared with abi_binary.sh).  Set APTUS_ABI_REF_HEADER to use an
# existing mpi_abi.h instead of downloading.
#
# Exit status: 0 = identical, 1 = difference found or the reference header could not be
# obtained, 77 = skipped (no network to download it), 2 = usage / build error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
mkdir -p "$build" || exit 2
build=$(cd "$build" && pwd)
cache=$build/abi-reference
work=$build/abi-check
cc=${CC:-cc}
cflags=(-std=c11 -Wall -Wextra -Werror -pedantic)

say() { printf 'check_constants: %s\n' "$*"; }

# ---- 1. obtain the reference header ------------------------------------
ref=${APTUS_ABI_REF_HEADER:-}
if [ -z "$ref" ]; then
    . "$here/mpich_wheel.sh"
    mpich_wheel "$cache" || exit $?
    ref=$mpich_wheel_prefix/include/mpi_abi.h
fi
if [ ! -f "$ref" ]; then
    say "FAIL: reference header $ref not found"
    exit 1
fi
say "reference header: $ref"

# ---- 2. build and run the printer against both headers ------------------
rm -rf "$work"
mkdir -p "$work/shim" || exit 2
printf '#include "mpi_abi.h"\n' >"$work/shim/mpi.h"

if ! "$cc" "${cflags[@]}" -I"$root/include" "$here/print_constants.c" -o "$work/print_ours"; then
    say "FAIL: print_constants.c does not compile against include/mpi.h"
    exit 1
fi
if ! "$cc" "${cflags[@]}" -I"$work/shim" -I"$(dirname "$ref")" "$here/print_constants.c" -o "$work/print_ref"; then
    say "ERROR: print_constants.c does not compile against the reference header"
    exit 2
fi
"$work/print_ours" >"$work/ours.txt" || { say "FAIL: printer (ours) failed"; exit 1; }
"$work/print_ref" >"$work/ref.txt" || { say "ERROR: printer (reference) failed"; exit 2; }

status=0
if ! diff -u "$work/ref.txt" "$work/ours.txt" >"$work/values.diff"; then
    say "FAIL: constant values differ (- reference, + ours):"
    cat "$work/values.diff"
    status=1
else
    say "$(wc -l <"$work/ours.txt") constants, sizes and offsets identical"
fi

# ---- 3. names: everything the reference defines must exist in ours -------
# Constant names (#define MPI_... or enumerators), MPIX_ extensions excluded.
names() {
    sed -n -E \
        -e 's/^[[:space:]]*#[[:space:]]*define[[:space:]]+(P?MPI_[A-Za-z0-9_]+).*/\1/p' \
        -e 's/^[[:space:]]+(MPI_[A-Z0-9_]+)[[:space:]]*(=.*)?,?[[:space:]]*(\/\*.*)?$/\1/p' "$1" |
        grep -v -E '_H(_ABI|_INCLUDED)?$' | sort -u
}
# Function names: identifiers directly followed by '('.
functions() {
    grep -o -E '\bP?MPI_[A-Za-z0-9_]+\(' "$1" | tr -d '(' |
        grep -v -E '^MPI_[A-Z0-9_]+$' | sort -u
}
names "$ref" | grep -v -E '^MPI_ABI_(Aint|Offset|Count)$' >"$work/ref_names.txt"
names "$root/include/mpi.h" >"$work/our_names.txt"
missing=$(comm -23 "$work/ref_names.txt" "$work/our_names.txt")
if [ -n "$missing" ]; then
    say "FAIL: constants defined by the reference but missing from include/mpi.h:"
    printf '  %s\n' $missing
    status=1
else
    say "$(wc -l <"$work/ref_names.txt") reference constant names all present"
fi
functions "$ref" >"$work/ref_functions.txt"
functions "$root/include/mpi.h" >"$work/our_functions.txt"
missing=$(comm -23 "$work/ref_functions.txt" "$work/our_functions.txt")
if [ -n "$missing" ]; then
    say "FAIL: functions declared by the reference but missing from include/mpi.h:"
    printf '  %s\n' $missing
    status=1
else
    say "$(wc -l <"$work/ref_functions.txt") reference function names all declared"
fi

# ---- 4. our header on its own: strict C11 and C++ -----------------------
printf '#include <mpi.h>\nint main(void) { return MPI_SUCCESS; }\n' >"$work/alone.c"
if ! "$cc" "${cflags[@]}" -I"$root/include" -c "$work/alone.c" -o "$work/alone.o"; then
    say "FAIL: include/mpi.h is not clean C11 (-Wall -Wextra -Werror -pedantic)"
    status=1
fi
cxx=${CXX:-c++}
if command -v "$cxx" >/dev/null 2>&1; then
    cp "$work/alone.c" "$work/alone.cpp"
    if ! "$cxx" -std=c++11 -Wall -Wextra -Werror -pedantic -I"$root/include" -c "$work/alone.cpp" -o "$work/alone_cpp.o"; then
        say "FAIL: include/mpi.h does not compile as C++"
        status=1
    fi
fi

[ "$status" -eq 0 ] && say "PASS"
exit "$status"
