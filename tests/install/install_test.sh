#!/bin/sh
# Installs the build into a temporary prefix, then builds a C and a C++ program with the
# installed wrappers, a C program with pkg-config's flags and one with CMake's find_package(MPI),
# and runs them with the installed mpiexec. Also checks the wrappers' options (-show,
# -compile-info, -link-info, -showme:...), that every installed program answers --help, that the
# installed tree still works once moved, and the wrappers of the build tree.
# usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun bin/aptus-report include/mpi.h; do
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
# Its ranks' statistics files (APTUS_STATS_FILE), read by the installed aptus-report (the summary
# and the numbers need no matplotlib).
APTUS_STATS_FILE="$tmp/stats" "$tmp/prefix/bin/mpiexec" -n 2 "$tmp/demo" >/dev/null || fail "demo with APTUS_STATS_FILE"
"$tmp/prefix/bin/aptus-report" --no-image --json-out "$tmp/stats.data" "$tmp/stats" >"$tmp/report.txt" 2>&1 ||
  { cat "$tmp/report.txt"; fail "the installed aptus-report could not read the demo's statistics files"; }
grep -q '^smp ' "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "aptus-report's summary names no smp messages"; }
out=$("$tmp/prefix/bin/mpirun" -np 2 "$tmp/hello_cpp")
echo "$out"
[ "$(echo "$out" | grep -c 'ok$')" = 2 ] || fail "C++ program did not run on 2 ranks"

# The wrappers' other options, as MPICH's and Open MPI's (build systems ask them for flags).
p=$tmp/prefix/bin
info=$("$p/mpicc" -compile-info -c x.c)
case "$info" in *"-I$tmp/prefix/include"*"x.c"*) ;; *) fail "mpicc -compile-info printed: $info" ;; esac
case "$info" in *-lmpi_abi*) fail "mpicc -compile-info has the library: $info" ;; esac
info=$("$p/mpicc" -link-info x.o -o x)
case "$info" in *"x.o -o x -L$tmp/prefix/lib"*"-lmpi_abi"*) ;; *) fail "mpicc -link-info printed: $info" ;; esac
[ "$("$p/mpicc" -showme:compile)" = "-I$tmp/prefix/include" ] || fail "mpicc -showme:compile: $("$p/mpicc" -showme:compile)"
case "$("$p/mpicxx" -showme:link)" in "-L$tmp/prefix/lib -lmpi_abi "*) ;; *) fail "mpicxx -showme:link: $("$p/mpicxx" -showme:link)" ;; esac
[ "$("$p/mpicc" -showme:libs)" = mpi_abi ] || fail "mpicc -showme:libs: $("$p/mpicc" -showme:libs)"
[ "$("$p/mpicc" -showme:incdirs)" = "$tmp/prefix/include" ] || fail "mpicc -showme:incdirs"
"$p/mpicc" -showme:version | grep -q '^Aptus MPI [0-9]' || fail "mpicc -showme:version"
if "$p/mpicc" -showme:nonsense >/dev/null 2>&1; then fail "mpicc -showme:nonsense succeeded"; fi
# Every installed program answers --help (a usage text, exit 0).
for prog in "$p"/*; do
  out=$("$prog" --help 2>&1) || fail "${prog##*/} --help failed: $out"
  echo "$out" | grep -qi '^usage' || fail "${prog##*/} --help printed no usage: $out"
done
# The tool interface through the installed library (aptus-info finds it beside itself).
"$p/aptus-info" --mpit | grep -q 'control variables, [0-9]* performance variables' || fail "aptus-info --mpit"

# pkg-config (mpi.pc, aptus.pc): the flags build a program that runs.
pc=$(dirname "$(find "$tmp/prefix" -name mpi.pc | head -1)")
[ -e "$pc/aptus.pc" ] || fail "aptus.pc not installed"
ver=$(PKG_CONFIG_PATH=$pc pkg-config --modversion aptus)
[ -n "$ver" ] || fail "pkg-config --modversion aptus"
# shellcheck disable=SC2046
cc -O2 "$src/examples/demo.c" -o "$tmp/demo_pc" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs mpi)
"$p/mpiexec" -n 2 "$tmp/demo_pc" | grep -q "all data correct" || fail "the program built with pkg-config"

# CMake's find_package(MPI), pointed at the installed tree.
cmake -S "$src/tests/install/find_mpi" -B "$tmp/cm" -DMPI_HOME="$tmp/prefix" -DDEMO_SOURCE="$src/examples/demo.c" \
  >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "find_package(MPI) did not configure"; }
grep -q "Found MPI_C: $tmp/prefix" "$tmp/cm.log" || { cat "$tmp/cm.log"; fail "find_package(MPI) found another MPI"; }
cmake --build "$tmp/cm" >"$tmp/cmb.log" 2>&1 || { cat "$tmp/cmb.log"; fail "the find_package(MPI) build"; }
"$p/mpiexec" -n 2 "$tmp/cm/demo_cmake" | grep -q "all data correct" || fail "the program built with find_package(MPI)"

# The installed tree moved elsewhere: the wrappers and pkg-config follow it.
mv "$tmp/prefix" "$tmp/moved"
"$tmp/moved/bin/mpicc" -O2 "$src/examples/demo.c" -o "$tmp/demo_moved"
"$tmp/moved/bin/mpiexec" -n 2 "$tmp/demo_moved" | grep -q "all data correct" || fail "the moved tree's mpicc"
case "$(PKG_CONFIG_PATH=$tmp/moved/${pc#"$tmp/prefix/"} pkg-config --cflags mpi)" in
  *"$tmp/moved/"*) ;;
  *) fail "pkg-config of the moved tree: $(PKG_CONFIG_PATH=$tmp/moved/${pc#"$tmp/prefix/"} pkg-config --cflags mpi)" ;;
esac

# The build-tree wrappers work too.
"$build/tools/wrappers/mpicxx" -O2 "$src/tests/install/hello.cpp" -o "$tmp/hello_cpp2"
"$build/tools/mpiexec/mpiexec" -n 2 "$tmp/hello_cpp2" | grep -q "c++ rank 1 of 2 ok" || fail "build-tree mpicxx"
echo "install_test: ok"
