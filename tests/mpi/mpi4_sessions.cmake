# Tests registered by the mpi4_sessions work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).

# Sessions (MPI 4.1, 11.3): without MPI_Init, with MPI_Init after and before the session.
foreach(np 1 2 4)
  aptus_mpi_test(NAME mpi4_session_np${np} SOURCE mpi4_session.c NP ${np} LABELS mpi4)
  aptus_mpi_test(NAME mpi4_session_after_np${np} SOURCE mpi4_session.c NP ${np} ARGS after LABELS mpi4)
  aptus_mpi_test(NAME mpi4_session_before_np${np} SOURCE mpi4_session.c NP ${np} ARGS before LABELS mpi4)
endforeach()

# Partitioned communication (MPI 4.1, 4.2).
foreach(np 1 2 4)
  aptus_mpi_test(NAME mpi4_part_np${np} SOURCE mpi4_part.c NP ${np} LABELS mpi4)
endforeach()

# Partitioned operations match in the order of their init calls, whatever the order of starts,
# over many rounds and with a thread per pair (MPI_THREAD_MULTIPLE).
foreach(np 1 2 4)
  aptus_mpi_test(NAME mpi4_part_order_np${np} SOURCE mpi4_part_order.c NP ${np} LABELS mpi4 threads)
endforeach()
aptus_mpi_test(NAME mpi4_part_order_async_np2 SOURCE mpi4_part_order.c NP 2 LABELS mpi4 threads
  ENV APTUS_ASYNC_PROGRESS=1)

# The same under Hydra (MPICH's mpiexec; see hydra.cmake): a session starts the runtime there too.
foreach(mode only after before)
  aptus_hydra_test(NAME mpi4_session_${mode}_np4 NP 4 RUN -n 4 $<TARGET_FILE:mpitest_mpi4_session> ${mode})
endforeach()

# A session after the last one was finalized: refused clearly (the runtime cannot restart).
aptus_mpi_test(NAME mpi4_session_reinit_np2 SOURCE mpi4_session_reinit.c NP 2 LABELS mpi4)
