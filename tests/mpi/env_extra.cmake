# Tests registered by the mpi4py triage (issue 7 item 4; see tests/external/mpi4py.sh): functions
# mpi4py's suite found missing that no other area covers.
foreach(np 1 2 3)
  aptus_mpi_test(NAME env_extra_np${np} SOURCE env_extra.c NP ${np} LABELS mpi4)
endforeach()

# MPI_BOTTOM with absolute addresses as displacements (mpi4py's testNeighborAlltoallwBottom):
# MPI_Alltoallw(_c) and MPI_Neighbor_alltoallw(_c).
foreach(np 1 2 3)
  aptus_mpi_test(NAME bottom_displ_np${np} SOURCE bottom_displ.c NP ${np} LABELS mpi4)
endforeach()
