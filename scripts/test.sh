#!/bin/sh
# Builds Aptus MPI twice -- optimised with warnings as errors, and with AddressSanitizer +
# UndefinedBehaviorSanitizer -- and runs the whole test suite on both.
set -e
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAPTUS_WERROR=ON >/dev/null
cmake --build build
(cd build && ctest --output-on-failure -j "$jobs" --timeout 600)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAPTUS_WERROR=ON \
  -DAPTUS_SANITIZE=address,undefined >/dev/null
cmake --build build-asan
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" --timeout 900 -LE "nosan|slurm")
