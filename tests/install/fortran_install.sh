#!/bin/sh
# The Fortran bindings installed: mpifort (and mpif77/mpif90), mpif.h and the module files;
# programs of the three styles built with the installed wrapper run with the installed mpiexec;
# CMake's find_package(MPI COMPONENTS Fortran) finds the F77 header, the F90 module and the F08
# module through the installed wrapper.
# usage: fortran_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "fortran_install: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/mpifort bin/mpif77 bin/mpif90 include/mpif.h include/mpi.mod include/mpi_f08.mod; do
  [ -e "$tmp/prefix/$f" ] || fail "$f not installed"
done
[ -n "$(find "$tmp/prefix" -name 'libmpifort_abi.so.1')" ] || fail "libmpifort_abi.so.1 not installed"
show=$("$tmp/prefix/bin/mpifort" -show x.f90 -o x)
case "$show" in
  *"-I$tmp/prefix/include"*"-lmpifort_abi"*"-lmpi_abi"*) ;;
  *) fail "mpifort -show printed: $show" ;;
esac
cd "$tmp"
"$tmp/prefix/bin/mpif77" -O2 "$src/tests/fortran/f77_basic.f" -o f77 2>/dev/null
"$tmp/prefix/bin/mpif90" -O2 "$src/tests/fortran/ftest.f90" "$src/tests/fortran/f90_coll.f90" -o f90
"$tmp/prefix/bin/mpifort" -O2 "$src/tests/fortran/ftest.f90" "$src/tests/fortran/f08_basic.f90" -o f08
for p in f77 f90 f08; do
  "$tmp/prefix/bin/mpiexec" -n 2 "./$p" || fail "installed $p program failed"
done

# CMake's FindMPI, pointed at the installed wrapper
mkdir proj
cat >proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.16)
project(findmpi Fortran)
find_package(MPI REQUIRED COMPONENTS Fortran)
message(STATUS "F77_HEADER=${MPI_Fortran_HAVE_F77_HEADER} F90_MODULE=${MPI_Fortran_HAVE_F90_MODULE} F08_MODULE=${MPI_Fortran_HAVE_F08_MODULE}")
CM
out=$(cmake -S proj -B proj/build -DMPI_Fortran_COMPILER="$tmp/prefix/bin/mpifort" 2>&1) || { echo "$out"; fail "find_package(MPI COMPONENTS Fortran) failed"; }
echo "$out" | grep "F77_HEADER"
echo "$out" | grep -q "F77_HEADER=TRUE F90_MODULE=TRUE F08_MODULE=TRUE" || { echo "$out"; fail "FindMPI did not report all three"; }
echo "fortran_install: ok"
