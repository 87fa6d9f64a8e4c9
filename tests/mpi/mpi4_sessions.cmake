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

# Sessions one after another (three rounds with traffic, no MPI_Init; the process ends without
# MPI_Finalize and must exit 0), then MPI_Init after them; MPI_Session_init after MPI_Finalize is
# refused clearly (the runtime cannot restart once MPI_Finalize has shut it down).
foreach(np 1 2 4)
  aptus_mpi_test(NAME mpi4_session_reinit_np${np} SOURCE mpi4_session_reinit.c NP ${np} LABELS mpi4)
endforeach()
aptus_mpi_test(NAME mpi4_session_reinit_world_np2 SOURCE mpi4_session_reinit.c NP 2 ARGS world LABELS mpi4)
aptus_mpi_test(NAME mpi4_session_reinit_final_np2 SOURCE mpi4_session_reinit.c NP 2 ARGS final LABELS mpi4)
aptus_mpi_test(NAME mpi4_session_reinit_fail_np2 SOURCE mpi4_session_reinit.c NP 2 ARGS fail LABELS mpi4
  EXPECT_EXIT 3)
aptus_mpi_test(NAME mpi4_session_reinit_async_np2 SOURCE mpi4_session_reinit.c NP 2 LABELS mpi4 threads
  ENV APTUS_ASYNC_PROGRESS=1)
# Under Hydra: exit 0 and nothing left behind (processes, /dev/shm) when the processes end right
# after their last MPI_Session_finalize.
aptus_hydra_test(NAME mpi4_session_reinit_np4 NP 4 RUN -n 4 $<TARGET_FILE:mpitest_mpi4_session_reinit>)
aptus_hydra_test(NAME mpi4_session_reinit_world_np4 NP 4 RUN -n 4 $<TARGET_FILE:mpitest_mpi4_session_reinit> world)
