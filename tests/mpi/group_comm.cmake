# MPI tests for this area (included from CMakeLists.txt): groups, communicators,
# intercommunicators (label comm).
foreach(np 1 3 4)
  aptus_mpi_test(NAME grp_algebra_np${np} SOURCE grp_algebra.c NP ${np} LABELS comm)
endforeach()
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME comm_create_np${np} SOURCE comm_create.c NP ${np} LABELS comm)
  aptus_mpi_test(NAME comm_idup_np${np} SOURCE comm_idup.c NP ${np} LABELS comm)
endforeach()
foreach(np 2 3 4)
  aptus_mpi_test(NAME inter_basic_np${np} SOURCE inter_basic.c NP ${np} LABELS comm)
endforeach()
aptus_mpi_test(NAME inter_basic_np1 SOURCE inter_basic.c NP 1 LABELS comm)
# MPI_COMM_TYPE_SHARED follows the launcher's nodes: 2 ranks per node (APTUS_PPN is
# mpiexec's --ppn), and the whole job on one node. The split itself talks only within each node,
# but no channel reaches another (simulated) node yet, so a job over several nodes cannot even
# finish MPI_Finalize: the ppn runs are disabled until a network channel exists. (Run by hand,
# every rank prints "node-local checks passed" and then hangs in MPI_Finalize.)
aptus_mpi_test(NAME comm_split_type_ppn2_np4 SOURCE comm_split_type.c NP 4 ARGS 2 LABELS comm
  ENV APTUS_PPN=2)
aptus_mpi_test(NAME comm_split_type_ppn2_np3 SOURCE comm_split_type.c NP 3 ARGS 2 LABELS comm
  ENV APTUS_PPN=2)
set_tests_properties(mpi.comm_split_type_ppn2_np4 mpi.comm_split_type_ppn2_np3 PROPERTIES DISABLED TRUE)
aptus_mpi_test(NAME comm_split_type_np3 SOURCE comm_split_type.c NP 3 LABELS comm)
aptus_mpi_test(NAME comm_split_type_np4 SOURCE comm_split_type.c NP 4 LABELS comm)
aptus_mpi_test(NAME comm_split_type_np1 SOURCE comm_split_type.c NP 1 LABELS comm)
# The hardware split types and MPI_Get_hw_resource_info (hwloc in the library) against sysfs:
# ranks bound to cores (two per core where the cores are fewer than the ranks), unbound, alone,
# some bound and some not, and from two threads of each rank at once, the topology read among them.
if(APTUS_HAVE_HWLOC)
  foreach(np 1 2 4)
    aptus_mpi_test(NAME comm_split_hw_core_np${np} SOURCE comm_split_hw.c NP ${np} ARGS core LABELS comm
      ENV MPIEXEC_BIND_TO=core:overload-allowed)
  endforeach()
  aptus_mpi_test(NAME comm_split_hw_none_np2 SOURCE comm_split_hw.c NP 2 ARGS none LABELS comm
    ENV MPIEXEC_BIND_TO=none)
  aptus_mpi_test(NAME comm_split_hw_mixed_np3 SOURCE comm_split_hw.c NP 3 ARGS mixed LABELS comm
    ENV MPIEXEC_BIND_TO=none)
  aptus_mpi_test(NAME comm_split_hw_threads_np2 SOURCE comm_split_hw.c NP 2 ARGS core threads LABELS comm threads
    ENV MPIEXEC_BIND_TO=core:overload-allowed)
endif()
