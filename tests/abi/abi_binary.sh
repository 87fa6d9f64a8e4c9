#!/usr/bin/env bash
# Binary proof of the MPI 5.0 standard ABI: MPI programs compiled and linked by ANOTHER
# implementation's ABI toolchain -- the `mpicc_abi` wrapper, `mpi.h`/`mpi_abi.h` and
# `libmpi_abi.so.1` of the MPICH 5.0.2 wheel on PyPI -- run unchanged on Aptus MPI's library
# and launcher.
#
#   abi_binary.sh BUILD_DIR MPIEXEC OUR_LIBMPI_ABI_SONAME_FILE
#
# 1. Unpacks the wheel (mpich_wheel.sh: cached in BUILD_DIR/abi-reference, shared with
#    check_constants.sh; APTUS_ABI_WHEEL=/path/to/mpich-5.0.2-*.whl uses a local copy instead
#    of downloading).
# 2. Compiles tests/abi/abi_prog.c and tests/mpi/{p2p_basic,coll_basic,comm,errors,env}.c with
#    the wheel's mpicc_abi, and checks that each binary was built with the wheel's header (not
#    ours) and NEEDs exactly the wheel's libmpi_abi SONAME.
# 3. Checks that our library has that SONAME, then runs every binary with OUR mpiexec and
#    LD_LIBRARY_PATH at OUR library (which takes precedence over the RUNPATH to the wheel that
#    mpicc_abi records) at 1, 2 and 4 ranks, and proves that our library ran: the loader resolves
#    libmpi_abi.so.1 to our file (ldd), every rank prints Aptus MPI's statistics at finalize
#    (APTUS_STATS=1), and abi_prog prints MPI_Get_library_version = "Aptus MPI ...".
#
# Exit status: 0 = all passed, 1 = failure (the wheel's download failed included), 77 = skipped
# (no network to download the wheel, or not x86_64), 2 = usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 BUILD_DIR MPIEXEC OUR_LIBMPI_ABI_SONAME_FILE" >&2; exit 2; }
build=$1 mpiexec=$2 ourlib=$3
mkdir -p "$build" || exit 2
build=$(cd "$build" && pwd)
cache=$build/abi-reference
work=$build/abi-binary
say() { printf 'abi_binary: %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

[ -x "$mpiexec" ] || { say "our mpiexec $mpiexec not found"; exit 2; }
[ -f "$ourlib" ] || { say "our library $ourlib not found"; exit 2; }
for tool in readelf ldd; do
    command -v $tool >/dev/null || { say "SKIP: $tool not available"; exit 77; }
done

# ---- 1. the wheel, unpacked ---------------------------------------------------
. "$here/mpich_wheel.sh"
mpich_wheel "$cache" || exit $?
whl=$mpich_wheel_file prefix=$mpich_wheel_prefix
case "$(uname -m)" in
x86_64) ;;
*) say "SKIP: the mpich wheel is built for x86_64, this is $(uname -m)"; exit 77 ;;
esac
mpicc_abi=$prefix/bin/mpicc_abi
wheel_lib=$(ls "$prefix"/lib/libmpi_abi.so.* 2>/dev/null | head -n 1)
[ -n "$wheel_lib" ] || fail "no libmpi_abi.so.* in the wheel"
wheel_soname=$(readelf -d "$wheel_lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
our_soname=$(readelf -d "$ourlib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
say "wheel: $whl"
say "wheel library SONAME $wheel_soname; ours ($ourlib) $our_soname"
[ -n "$wheel_soname" ] && [ "$wheel_soname" = "$our_soname" ] ||
    fail "our library's SONAME '$our_soname' differs from the standard ABI library's '$wheel_soname'"
ourdir=$(cd "$(dirname "$ourlib")" && pwd)
[ -e "$ourdir/$our_soname" ] || fail "$ourdir/$our_soname does not exist"

# ---- 2. build with the wheel's toolchain ------------------------------------------
rm -rf "$work"
mkdir -p "$work" || exit 2
progs="abi_prog p2p_basic coll_basic comm errors env"
for p in $progs; do
    if [ "$p" = abi_prog ]; then src=$here/abi_prog.c; else src=$root/tests/mpi/$p.c; fi
    # The same flags as tests/mpi; CC may name the C compiler (mpicc_abi honours MPICH_CC).
    # -MD -MF: the compiler lists every header it read (checked below).
    if ! MPICH_CC=${CC:-cc} "$mpicc_abi" -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wno-unused-parameter \
            -MD -MF "$work/$p.deps" -o "$work/$p" "$src" -lm >"$work/$p.build.log" 2>&1; then
        cat "$work/$p.build.log"
        fail "$p.c does not build with the wheel's mpicc_abi"
    fi
    # The header used was the wheel's, not ours.
    grep -q "$prefix/include/mpi_abi.h" "$work/$p.deps" || fail "$p was not compiled with the wheel's mpi_abi.h"
    if grep -q "$root/include/mpi.h" "$work/$p.deps"; then fail "$p was compiled with our include/mpi.h"; fi
    needed=$(readelf -d "$work/$p" | sed -n 's/.*(NEEDED).*\[\(libmpi.*\)\]/\1/p')
    [ "$needed" = "$wheel_soname" ] || fail "$p NEEDs '$needed', not $wheel_soname"
done
say "built with $mpicc_abi: $progs (each NEEDs $wheel_soname, headers from the wheel)"

# ---- 3. run on our library ---------------------------------------------------------
export LD_LIBRARY_PATH=$ourdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
resolved=$(ldd "$work/abi_prog" | sed -n "s/^[[:space:]]*$wheel_soname => \([^ ]*\).*/\1/p")
[ -n "$resolved" ] || fail "ldd does not resolve $wheel_soname"
[ "$(readlink -f "$resolved")" = "$(readlink -f "$ourdir/$our_soname")" ] ||
    fail "$wheel_soname resolves to $resolved, not to our library"
say "$wheel_soname => $resolved (ours)"

# A sanitizer build of our library: its runtime must be loaded first (the programs are not
# instrumented), so preload it.
asan=$(ldd "$ourlib" | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\).*/\1/p')
if [ -n "$asan" ]; then
    export LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
    say "our library is built with AddressSanitizer: preloading $asan"
fi

status=0
for p in $progs; do
    for np in 1 2 4; do
        log=$work/$p.np$np.log
        case $p in
        p2p_basic) [ $np -ge 2 ] || continue ;; # needs a peer
        env) export MTEST_EXPECT_MPI_VERSION=5.0 MTEST_EXPECT_NP=$np ;;
        esac
        APTUS_STATS=1 "$mpiexec" -n $np --timeout 120 "$work/$p" >"$log" 2>&1
        rc=$?
        stats=$(grep -c '^\[aptus stats\] rank [0-9]*: channel memory' "$log")
        unset MTEST_EXPECT_MPI_VERSION MTEST_EXPECT_NP
        if [ $rc -ne 0 ]; then
            say "FAIL: $p at $np ranks exited with $rc"
            tail -n 20 "$log" | sed 's/^/    | /'
            status=1
        elif [ "$stats" -ne $np ]; then
            say "FAIL: $p at $np ranks: $stats of $np ranks printed Aptus MPI statistics (not our library?)"
            status=1
        elif [ $p = abi_prog ] && ! grep -q '^abi_prog: library: Aptus MPI' "$log"; then
            say "FAIL: abi_prog at $np ranks: MPI_Get_library_version is not Aptus MPI's"
            grep '^abi_prog: library:' "$log" | sed 's/^/    | /'
            status=1
        else
            say "ok   $p at $np ranks"
        fi
    done
done
[ $status -eq 0 ] && say "PASS: $(grep -h '^abi_prog: library:' "$work/abi_prog.np1.log" | cut -d' ' -f3-)"
exit $status
