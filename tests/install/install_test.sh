#!/bin/sh
# Installs the build into a temporary prefix, then builds a C and a C++ program with the
# installed wrappers and runs them with the installed mpiexec. Also checks the wrappers of the
# build tree and their -show output.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun include/mpi.h; do
  [ -e "$tmp/prefix/$f" ] || fail "$f not installed"
done
lib=$(find "$tmp/prefix" -name 'libmpi_abi.so*' | head -1)
[ -n "$lib" ] || fail "libmpi_abi.so not installed"
[ -e "$(dirname "$lib")/libmpi.so" ] || fail "libmpi.so link not installed"

# -show prints the command with the installed paths and does not run it.
show=$("$tmp/prefix/bin/mpicc" -show -O2 x.c -o x)
case "$show" in
  *"-I$tmp/prefix/include"*"-lmpi_abi"*) ;;
  *) fail "mpicc -show printed: $show" ;;
esac

"$tmp/prefix/bin/mpicc" -O2 "$src/examples/demo.c" -o "$tmp/demo"
"$tmp/prefix/bin/mpicxx" -O2 "$src/tests/install/hello.cpp" -o "$tmp/hello_cpp"
out=$("$tmp/prefix/bin/mpiexec" -n 2 "$tmp/demo")
echo "$out"
echo "$out" | grep -q "all data correct" || fail "installed demo did not report correct data"
out=$("$tmp/prefix/bin/mpirun" -np 2 "$tmp/hello_cpp")
echo "$out"
[ "$(echo "$out" | grep -c 'ok$')" = 2 ] || fail "C++ program did not run on 2 ranks"

# The build-tree wrappers work too.
"$build/tools/wrappers/mpicxx" -O2 "$src/tests/install/hello.cpp" -o "$tmp/hello_cpp2"
"$build/tools/mpiexec/mpiexec" -n 2 "$tmp/hello_cpp2" | grep -q "c++ rank 1 of 2 ok" || fail "build-tree mpicxx"
echo "install_test: ok"
