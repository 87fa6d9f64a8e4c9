#!/bin/sh
# Compiles (and links) programs that use every special constant of mpi.h with the build's mpicc
# wrapper under -Wall -Wextra -Werror at -O2 and -O3: users' code must get no warning from the
# header (GCC 11+ used to report -Wstringop-overread for MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY
# passed to array parameters). Also checks that APTUS_NO_REMOVED_MPI1 hides the MPI-1
# functions removed in MPI 3.0.
# usage: check_header.sh MPICC SOURCE_DIR
set -eu
mpicc=$1
here=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_header: FAIL: $*" >&2; exit 1; }

for opt in -O2 -O3; do
  "$mpicc" -std=c11 $opt -Wall -Wextra -Werror "$here/special_constants.c" -o "$tmp/sc" \
    || fail "special_constants.c does not compile cleanly at $opt"
done
# -pedantic and C99 too: the header is plain ISO C.
"$mpicc" -std=c99 -O2 -Wall -Wextra -pedantic -Werror -c "$here/special_constants.c" -o "$tmp/sc.o" \
  || fail "special_constants.c does not compile cleanly as C99 with -pedantic"
"$mpicc" -std=c11 -O2 -Wall -Wextra -Werror -c "$here/no_removed.c" -o "$tmp/nr.o" \
  || fail "APTUS_NO_REMOVED_MPI1 does not hide the removed MPI-1 functions"
echo "check_header: ok"
