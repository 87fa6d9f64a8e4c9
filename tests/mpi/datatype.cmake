# MPI tests for this area (included from CMakeLists.txt).
# Constructors, queries, envelope/contents, names, f90 types, error classes.
aptus_mpi_test(NAME dt_ctor_np1 SOURCE dt_ctor.c NP 1 LABELS datatype)
aptus_mpi_test(NAME dt_ctor_np2 SOURCE dt_ctor.c NP 2 LABELS datatype)
# Pack/Unpack of nested types, external32 bytes, Get_elements on partial data.
aptus_mpi_test(NAME dt_pack_np1 SOURCE dt_pack.c NP 1 LABELS datatype)
# Darray against a serial distribution, gathered and rebuilt on rank 0.
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME dt_darray_np${np} SOURCE dt_darray.c NP ${np} LABELS datatype)
endforeach()
# Derived datatypes through the message layer: eager and rendezvous, every rendezvous path.
aptus_mpi_test(NAME dt_p2p_np2 SOURCE dt_p2p.c NP 2 LABELS datatype)
# The statistics prove the path: copies only; with CMA for every size, one-sided reads for the
# contiguous sides and streamed copies where both sides are non-contiguous (never copies alone).
aptus_mpi_test(NAME dt_p2p_nocma_np2 SOURCE dt_p2p.c NP 2 LABELS datatype ENV APTUS_SMP_CMA=0
  EXPECT_PATH copy)
aptus_mpi_test(NAME dt_p2p_cma_np2 SOURCE dt_p2p.c NP 2 LABELS datatype ENV APTUS_SMP_CMA_MIN=0
  EXPECT_PATH mixed)
# MPI_Type_free while an Isend/Irecv still uses the type (the request must keep it alive).
aptus_mpi_test(NAME dt_p2p_freed_np2 SOURCE dt_p2p.c NP 2 ARGS freed LABELS datatype)
