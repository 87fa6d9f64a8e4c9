#!/bin/sh
# The mpifort wrapper of the build tree: `-show` prints a command that includes the bindings and
# links libmpifort_abi and libmpi_abi; a program it builds (mpif.h, fixed form) runs on 2 ranks.
# Usage: wrapper.sh MPIFORT MPIEXEC SOURCE
set -e
fc=$1
mpiexec=$2
src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
show=$("$fc" -show -O2 "$src" -o "$dir/prog")
for want in -lmpifort_abi -lmpi_abi "-I" "-Wl,-rpath"; do
  case "$show" in *"$want"*) ;; *) echo "FAIL wrapper.sh: '$fc -show' lacks $want: $show"; exit 1 ;; esac
done
"$fc" -O2 "$src" -o "$dir/prog" 2>"$dir/err" || { cat "$dir/err"; echo "FAIL wrapper.sh: $fc could not build $src"; exit 1; }
"$mpiexec" -n 2 --timeout 60 "$dir/prog" || { echo "FAIL wrapper.sh: the program built by $fc failed"; exit 1; }
echo "wrapper.sh: built and ran $(basename "$src") with $fc"
