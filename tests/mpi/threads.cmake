# MPI_THREAD_MULTIPLE and the progress thread (runtime/lock.h, APTUS_ASYNC_PROGRESS).
foreach(np 1 2 3)
  aptus_mpi_test(NAME thread_multiple_np${np} SOURCE thread_multiple.c NP ${np} LABELS threads)
endforeach()
aptus_mpi_test(NAME thread_multiple_8t_np2 SOURCE thread_multiple.c NP 2 ARGS 8 100 LABELS threads)
# The flat broadcast (each rank reading from the root's buffer, no HYBRID copy) from 4 threads.
aptus_mpi_test(NAME thread_multiple_bcast_linear_np3 SOURCE thread_multiple.c NP 3 LABELS threads coll
  ENV APTUS_COLL_BCAST_ALG=linear EXPECT_STATS "collective bcast linear:")
# The lazy lock: MPI_THREAD_MULTIPLE provided (by a session opened with MPI_INFO_NULL, or by
# MPI_Init_thread), one thread for a while, then a second one entering while the first waits in
# MPI for it, while it is outside MPI, and all at once.
foreach(np 1 2)
  aptus_mpi_test(NAME thread_lazy_session_np${np} SOURCE thread_lazy.c NP ${np} LABELS threads mpi4)
  aptus_mpi_test(NAME thread_lazy_world_np${np} SOURCE thread_lazy.c NP ${np} ARGS world LABELS threads)
endforeach()
# Oversubscribed (waiting ranks block in the kernel while the lock is lazy).
aptus_mpi_test(NAME thread_lazy_world_block_np2 SOURCE thread_lazy.c NP 2 ARGS world LABELS threads
  ENV APTUS_WAIT_BLOCK=1)
aptus_mpi_test(NAME thread_lazy_session_block_np2 SOURCE thread_lazy.c NP 2 LABELS threads mpi4
  ENV APTUS_WAIT_BLOCK=1)
# The same with a progress thread per rank taking the lock too.
aptus_mpi_test(NAME thread_multiple_async_np2 SOURCE thread_multiple.c NP 2 LABELS threads
  ENV APTUS_ASYNC_PROGRESS=1)
# Nonblocking collectives progressed by the progress thread (single-threaded programs).
foreach(np 2 4)
  aptus_mpi_test(NAME nbc_multi_async_np${np} SOURCE nbc_multi.c NP ${np} LABELS threads nbc
    ENV APTUS_ASYNC_PROGRESS=1)
endforeach()
aptus_mpi_test(NAME nbc_i_coll_move_async_np3 SOURCE coll_move.c NP 3 LABELS threads nbc
  ENV MTEST_NBC=i APTUS_ASYNC_PROGRESS=1)
aptus_mpi_test(NAME nbc_p_coll_reduce_async_np3 SOURCE coll_reduce.c NP 3 LABELS threads nbc
  ENV MTEST_NBC=p APTUS_ASYNC_PROGRESS=1)
aptus_mpi_test(NAME p2p_basic_async_np2 SOURCE p2p_basic.c NP 2 LABELS threads p2p ENV APTUS_ASYNC_PROGRESS=1)
# The progress thread with a short scheduler slice and no idle polls (it sleeps at once).
aptus_mpi_test(NAME nbc_multi_async_slice_np2 SOURCE nbc_multi.c NP 2 LABELS threads nbc
  ENV APTUS_ASYNC_PROGRESS=1 APTUS_ASYNC_PROGRESS_SLICE=100 APTUS_ASYNC_PROGRESS_SPIN=0)
# Nonblocking collectives of 1 MiB that must move while rank 0 computes without calling MPI: its
# progress thread does rank 0's part, so the others' waits end long before the computation does
# (nbc_background.c); without the thread they end after it (the documented progress rule), with
# the same results. (Whether a rank's thread was woken by its exit from MPI is not asserted: a
# thread already running at that moment needs no wake-up.)
foreach(np 2 3)
  aptus_mpi_test(NAME nbc_background_async_np${np} SOURCE nbc_background.c NP ${np} LABELS threads nbc
    ENV APTUS_ASYNC_PROGRESS=1 MTEST_NBC_FAST=1 EXPECT_STATS "progress thread (")
endforeach()
# The same with the thread told that it has a core of its own (APTUS_ASYNC_PROGRESS_OWN_CORE=1:
# woken for every nonblocking operation, polling while one is in flight, the lock handed back by
# spinning, and a large schedule left to it from its first step); here the cores are shared all the
# same, which it must survive.
aptus_mpi_test(NAME nbc_background_own_np2 SOURCE nbc_background.c NP 2 LABELS threads nbc
  ENV APTUS_ASYNC_PROGRESS=1 APTUS_ASYNC_PROGRESS_OWN_CORE=1 MTEST_NBC_FAST=1
  EXPECT_STATS "progress thread (own core)" "schedules left whole to the progress thread (own core):")
aptus_mpi_test(NAME nbc_multi_async_own_np2 SOURCE nbc_multi.c NP 2 LABELS threads nbc
  ENV APTUS_ASYNC_PROGRESS=1 APTUS_ASYNC_PROGRESS_OWN_CORE=1)
aptus_mpi_test(NAME thread_multiple_async_own_np2 SOURCE thread_multiple.c NP 2 LABELS threads
  ENV APTUS_ASYNC_PROGRESS=1 APTUS_ASYNC_PROGRESS_OWN_CORE=1)
# Judged from the CPU set: a rank given two cores (mpiexec --cpus-per-rank 2), or one that may
# use every CPU of a machine with two or more (--bind-to none), has a core for its thread.
cmake_host_system_information(RESULT aptus_ncpus QUERY NUMBER_OF_LOGICAL_CORES)
if(aptus_ncpus GREATER 1)
  aptus_mpi_test(NAME nbc_multi_async_np1 SOURCE nbc_multi.c NP 1 LABELS threads nbc
    ENV APTUS_ASYNC_PROGRESS=1 MPIEXEC_CPUS_PER_RANK=2 EXPECT_STATS "progress thread (own core)")
  aptus_mpi_test(NAME nbc_multi_async_unbound_np1 SOURCE nbc_multi.c NP 1 LABELS threads nbc
    ENV APTUS_ASYNC_PROGRESS=1 MPIEXEC_BIND_TO=none EXPECT_STATS "progress thread (own core)")
  # bound to one core (mpiexec's default when the ranks fit), the thread shares it
  aptus_mpi_test(NAME nbc_multi_async_bound_np1 SOURCE nbc_multi.c NP 1 LABELS threads nbc
    ENV APTUS_ASYNC_PROGRESS=1 EXPECT_STATS "progress thread (shared core)")
endif()
aptus_mpi_test(NAME nbc_background_np2 SOURCE nbc_background.c NP 2 LABELS nbc ENV MTEST_COMPUTE=0.2)
# ... and pinned to one CPU the thread shares it, unless APTUS_ASYNC_PROGRESS_CPU puts it on
# another one.
find_program(APTUS_TASKSET taskset)
if(APTUS_TASKSET)
  set(aptus_pin_cases shared)
  if(aptus_ncpus GREATER 1)
    list(APPEND aptus_pin_cases own)
  endif()
  foreach(case IN LISTS aptus_pin_cases)
    set(cpu -1)
    if(case STREQUAL "own")
      set(cpu 1)
    endif()
    add_test(NAME mpi.nbc_multi_async_pinned_${case}_np1
      COMMAND ${APTUS_SH} ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh --exit 0
        --each-rank 1 "progress thread (${case} core)"
        -- ${APTUS_TASKSET} -c 0 $<TARGET_FILE:mpiexec> -n 1 --timeout ${APTUS_MPI_TEST_LAUNCH_TIMEOUT}
        $<TARGET_FILE:mpitest_nbc_multi>)
    set_tests_properties(mpi.nbc_multi_async_pinned_${case}_np1 PROPERTIES LABELS "mpi;threads;nbc"
      ENVIRONMENT "APTUS_ASYNC_PROGRESS=1;APTUS_STATS=1;APTUS_ASYNC_PROGRESS_CPU=${cpu}")
  endforeach()
endif()
# Communicators created by several threads at once, each on its own parent: every kind of
# constructor against every other; each new communicator must get a context of its own.
foreach(np 3 4)
  aptus_mpi_test(NAME comm_create_threads_np${np} SOURCE comm_create_threads.c NP ${np} LABELS threads comm)
endforeach()
aptus_mpi_test(NAME comm_create_threads_dup_np4 SOURCE comm_create_threads.c NP 4 ARGS 4 20 dup LABELS threads comm)
aptus_mpi_test(NAME comm_create_threads_async_np2 SOURCE comm_create_threads.c NP 2 ARGS 3 11
  LABELS threads comm ENV APTUS_ASYNC_PROGRESS=1)
# MPI-IO from 4 threads per rank: a file and a communicator each, and one file shared by all.
foreach(np 1 2 3)
  aptus_mpi_test(NAME io_threads_np${np} SOURCE io_threads.c NP ${np} LABELS threads io)
endforeach()
