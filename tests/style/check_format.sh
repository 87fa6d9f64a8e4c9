#!/bin/sh
# Every C/C++ source of the project follows .clang-format (include/mpi.h, laid out by hand
# chapter by chapter, and include/mpif.h, Fortran, are the exceptions). Exit 77 (skip) without
# clang-format.
cd "$1" || exit 2
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
git ls-files '*.c' '*.h' '*.cpp' 2>/dev/null | grep -v -e '^include/mpi.h$' -e '^include/mpif.h$' | xargs clang-format --dry-run -Werror
