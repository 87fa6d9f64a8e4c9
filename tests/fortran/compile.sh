#!/bin/sh
# Compiles a Fortran source with the mpifort wrapper (no link, no run), in a directory of its own
# so that no module file of another build is picked up. Usage: compile.sh MPIFORT SOURCE
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
if ! "$1" -c "$2" -o out.o 2>err.txt; then
  cat err.txt
  echo "FAIL compile.sh: $1 could not compile $2"
  exit 1
fi
echo "compile.sh: $(basename "$2") compiled"
