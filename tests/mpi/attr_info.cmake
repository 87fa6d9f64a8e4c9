# MPI tests for this area (included from CMakeLists.txt): attributes and keyvals, info objects,
# error handlers and user error classes/codes. MTEST_APTUS=1 turns on checks of values the
# standard leaves to the implementation (what Aptus MPI promises).
foreach(np 1 2 3)
  aptus_mpi_test(NAME attr_comm_np${np} SOURCE attr_comm.c NP ${np} LABELS attr ENV MTEST_APTUS=1)
endforeach()
aptus_mpi_test(NAME attr_comm_universe_np2 SOURCE attr_universe.c NP 2 LABELS attr
  ENV MPI_UNIVERSE_SIZE=7 MTEST_EXPECT_UNIVERSE=7)
foreach(np 1 2)
  aptus_mpi_test(NAME attr_type_np${np} SOURCE attr_type.c NP ${np} LABELS attr ENV MTEST_APTUS=1)
endforeach()
foreach(np 1 3)
  aptus_mpi_test(NAME info_basic_np${np} SOURCE info_basic.c NP ${np} ARGS one two LABELS attr ENV MTEST_APTUS=1)
endforeach()
foreach(np 1 2 4)
  aptus_mpi_test(NAME err_user_np${np} SOURCE err_user.c NP ${np} LABELS attr ENV MTEST_APTUS=1)
endforeach()
# A user error class raised under MPI_ERRORS_ARE_FATAL: the job fails and prints the user's string.
aptus_mpi_test(NAME err_user_fatal_np2 SOURCE err_user_fatal.c NP 2 LABELS attr
  EXPECT_NONZERO EXPECT_ERROR "the frobnicator is jammed")
