#!/bin/sh
# Builds Aptus MPI and runs the 4-rank demo with the per-channel statistics.
set -e
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
APTUS_STATS=1 build/tools/mpiexec/mpiexec -n 4 build/demo
