#!/bin/sh
# Builds Aptus MPI and runs the 4-rank demo with the per-channel statistics.
# The build is quiet: its log is shown only when it fails.
set -e
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "demo.sh: the build failed (its log is above)" >&2
    exit 1
fi
APTUS_STATS=1 build/tools/mpiexec/mpiexec -n 4 build/demo
