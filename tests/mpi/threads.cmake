# MPI_THREAD_MULTIPLE and the progress thread (runtime/lock.h, APTUS_ASYNC_PROGRESS).
foreach(np 1 2 3)
  aptus_mpi_test(NAME thread_multiple_np${np} SOURCE thread_multiple.c NP ${np} LABELS threads)
endforeach()
aptus_mpi_test(NAME thread_multiple_8t_np2 SOURCE thread_multiple.c NP 2 ARGS 8 100 LABELS threads)
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
    ENV APTUS_ASYNC_PROGRESS=1 MTEST_NBC_FAST=1 EXPECT_STATS "progress thread:")
endforeach()
aptus_mpi_test(NAME nbc_background_np2 SOURCE nbc_background.c NP 2 LABELS nbc ENV MTEST_COMPUTE=0.2)
