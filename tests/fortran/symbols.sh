#!/bin/sh
# Every procedure tools/gen_fortran.py lists (src/fortran/gen/procedures.txt: those of mpif.h and
# `mpi`, and the specifics of mpi_f08 under their standard names, mpi_send_f08ts) is exported by
# libmpifort_abi under both names, mpi_<name>_ and pmpi_<name>_ (gfortran's naming).
# Usage: symbols.sh LIBRARY PROCEDURES_TXT
set -e
lib=$1
list=$2
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u >"$syms"
missing=0
total=0
while read -r name; do
  for s in "${name}_" "p${name}_"; do
    total=$((total + 1))
    if ! grep -qx "$s" "$syms"; then
      echo "FAIL symbols.sh: $lib does not export $s"
      missing=$((missing + 1))
    fi
  done
done <"$list"
[ "$total" -gt 800 ] || { echo "FAIL symbols.sh: only $total symbols listed in $list"; exit 1; }
echo "symbols.sh: $total symbols checked, $missing missing"
[ "$missing" = 0 ]
