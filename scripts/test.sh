#!/bin/sh
# Builds Aptus MPI twice -- optimised with warnings as errors, and with AddressSanitizer +
# UndefinedBehaviorSanitizer -- and runs the whole test suite on both; then the threads tests
# once more under ThreadSanitizer. The optimised run also
# builds the tree once more from scratch with the Unix Makefiles generator (test
# build.makefiles, label nosan), the plain `cmake -B build && cmake --build build` of a new user.
# It also runs mpi4py's own test suite against the build (test external.mpi4py, labels
# mpi4py;nosan: the uninstrumented Python interpreter cannot load the sanitized library).
set -e
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
# matplotlib for aptus-report's picture (tests report.*, netns.stats_report_*): a virtual
# environment from PyPI (~/.cache/aptus/report-venv, or APTUS_REPORT_VENV), made once, at once
# when it is there; where it cannot be had those tests check the numbers and skip the picture.
python3 tools/report/aptus-report --setup --quiet ||
  echo "test.sh: no matplotlib for aptus-report (see above); its tests will skip the picture"
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAPTUS_WERROR=ON >/dev/null
cmake --build build
(cd build && ctest --output-on-failure -j "$jobs" --timeout 600)
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAPTUS_WERROR=ON \
  -DAPTUS_SANITIZE=address,undefined >/dev/null
cmake --build build-asan
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/../tests/lsan.supp" \
  ctest --output-on-failure -j "$jobs" --timeout 900 -LE "nosan|slurm")
# ThreadSanitizer on the tests of MPI_THREAD_MULTIPLE and of the progress thread (label threads);
# only what those tests run is built.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAPTUS_WERROR=ON -DAPTUS_SANITIZE=thread >/dev/null
cmake --build build-tsan --target mpiexec fft3d mpitest_thread_multiple mpitest_nbc_multi mpitest_coll_move \
  mpitest_coll_reduce mpitest_p2p_basic mpitest_rma_basic mpitest_rma_sync mpitest_rma_win mpitest_rma_atomic \
  mpitest_nbc_background mpitest_comm_create_threads mpitest_thread_lazy mpitest_mpi4_part_order \
  mpitest_mpi4_session_reinit mpitest_rma_defer mpitest_p2p_cancel_send mpitest_p2p_rndv_cust mpitest_rc_idle test_arena \
  mpitest_io_threads mpitest_io_async mpitest_comm_split_hw mpitest_mpit_event mpitest_mpit_threads mpitest_dpm_connect
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1" ctest --output-on-failure -j "$jobs" --timeout 900 -L threads -LE netns)
