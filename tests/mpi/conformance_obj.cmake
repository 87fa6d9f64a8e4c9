# Tests registered by the conformance_obj work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
# Keyvals freed while attributes use them (MPI 4.1, 7.7.2); a second free is tolerated.
foreach(np 1 2)
  aptus_mpi_test(NAME confobj_keyval_np${np} SOURCE confobj_keyval.c NP ${np} LABELS attr ENV MTEST_APTUS=1)
endforeach()
# User error classes and codes added and removed in a loop (MPI 4.1): values are reused.
aptus_mpi_test(NAME confobj_errclass_np1 SOURCE confobj_errclass.c NP 1 LABELS attr ENV MTEST_APTUS=1)
# MPI 4.1: the names of the null handles.
aptus_mpi_test(NAME confobj_names_np1 SOURCE confobj_names.c NP 1 LABELS comm)
# MPI_Info_create_env and MPI_INFO_ENV: the same before and after MPI_Init.
foreach(np 1 2)
  aptus_mpi_test(NAME confobj_infoenv_np${np} SOURCE confobj_infoenv.c NP ${np} ARGS a b LABELS attr ENV MTEST_APTUS=1)
endforeach()
# Errors outside any communicator: MPI_COMM_SELF's handler, else MPI_COMM_WORLD's if only it was set.
foreach(np 1 2)
  aptus_mpi_test(NAME confobj_errself_np${np} SOURCE confobj_errself.c NP ${np} LABELS attr)
endforeach()
# The MPI-1 functions removed in MPI 3.0, still provided for old programs.
foreach(np 1 3)
  aptus_mpi_test(NAME confobj_legacy_np${np} SOURCE confobj_legacy.c NP ${np} LABELS datatype)
endforeach()

# Every constructor sets its output handle to the null handle when it fails (a table of bad
# calls, each checked for its error class and its output).
foreach(np 1 2)
  aptus_mpi_test(NAME ctor_null_np${np} SOURCE ctor_null.c NP ${np} LABELS errors)
endforeach()
