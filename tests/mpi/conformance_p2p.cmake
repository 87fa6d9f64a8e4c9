# Tests registered by the conformance_p2p work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).

# Issue 7 (E1): MPI_BOTTOM with absolute-address datatypes in point-to-point and neighbourhood
# collectives; probing MPI_PROC_NULL leaves MPI_ERROR alone; count 0 of MPI_DATATYPE_NULL.
foreach(np 1 2 3)
  aptus_mpi_test(NAME conf_bottom_np${np} SOURCE conf_bottom.c NP ${np} LABELS p2p conformance)
endforeach()
aptus_mpi_test(NAME conf_bottom_nocma_np2 SOURCE conf_bottom.c NP 2 LABELS p2p conformance
  ENV APTUS_SMP_CMA=0 EXPECT_PATH copy)
aptus_mpi_test(NAME conf_probe_procnull_np1 SOURCE conf_probe_procnull.c NP 1 LABELS p2p conformance)
foreach(np 1 2)
  aptus_mpi_test(NAME conf_recv_nulltype_np${np} SOURCE conf_recv_nulltype.c NP ${np}
    LABELS p2p conformance)
endforeach()

# In-place Reduce_scatter(_block) writes only the caller's block (canaries past it), every
# algorithm, and the intercommunicator forms.
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME conf_rs_inplace_np${np} SOURCE conf_rs_inplace.c NP ${np} LABELS coll conformance)
endforeach()
foreach(np 3 4)
  foreach(alg recursive_halving reduce_scatterv)
    aptus_mpi_test(NAME conf_rs_inplace_${alg}_np${np} SOURCE conf_rs_inplace.c NP ${np}
      LABELS coll conformance ENV APTUS_COLL_REDUCE_SCATTER_ALG=${alg}
      EXPECT_STATS "collective reduce_scatter ${alg}:")
  endforeach()
endforeach()

# MPI_Type_match_size: every size of every class; MPI_Comm_split_type on intercommunicators.
aptus_mpi_test(NAME conf_type_match_size_np1 SOURCE conf_type_match_size.c NP 1 LABELS datatype conformance)
foreach(np 2 3 4)
  aptus_mpi_test(NAME conf_split_type_inter_np${np} SOURCE conf_split_type_inter.c NP ${np}
    LABELS comm conformance)
endforeach()
