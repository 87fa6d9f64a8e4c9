# MPI tests for this area (included from CMakeLists.txt).
#
# Collectives: every test runs at 1..4 ranks with the automatic algorithm choice, then at 3 and
# 4 ranks (not a power of two, and a power of two) with each algorithm forced through the
# APTUS_COLL_*_ALG variables, and with the size limits lowered so that the automatic choice
# switches on small messages. Each forced variant proves through the statistics (APTUS_STATS=1,
# "collective <kind> <algorithm>: <runs>" on every rank, docs/TUNING.md) that the algorithms it
# forces, or the ones its lowered limits select, really ran on every rank, and, where the forced
# algorithm never falls back (docs/TUNING.md), that no rank ran the others of that collective --
# the data alone cannot tell one algorithm from another.

# Data movement: Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v/w).
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME coll_move_np${np} SOURCE coll_move.c NP ${np} LABELS coll)
endforeach()
set(coll_move_alg_a APTUS_COLL_BCAST_ALG=binomial APTUS_COLL_GATHER_ALG=binomial
  APTUS_COLL_SCATTER_ALG=binomial APTUS_COLL_ALLGATHER_ALG=bruck APTUS_COLL_ALLTOALL_ALG=bruck)
set(coll_move_alg_b APTUS_COLL_BCAST_ALG=scatter_allgather APTUS_COLL_GATHER_ALG=linear
  APTUS_COLL_SCATTER_ALG=linear APTUS_COLL_ALLGATHER_ALG=ring APTUS_COLL_ALLTOALL_ALG=pairwise)
set(coll_move_alg_c APTUS_COLL_ALLGATHER_ALG=recursive_doubling APTUS_COLL_ALLTOALL_ALG=linear
  APTUS_COLL_BCAST_LONG=1K APTUS_COLL_GATHER_LONG=64 APTUS_COLL_SCATTER_LONG=64
  APTUS_COLL_ALLGATHER_LONG=1K APTUS_COLL_ALLTOALL_SHORT=16 APTUS_COLL_ALLTOALL_LONG=512)
set(coll_move_ran_a "collective bcast binomial:" "collective gather binomial:"
  "collective scatter binomial:" "collective allgather bruck:" "collective alltoall bruck:")
set(coll_move_ran_b "collective bcast scatter_allgather:" "collective gather linear:"
  "collective scatter linear:" "collective allgather ring:" "collective alltoall pairwise:")
# recursive doubling needs a power of two: on 3 ranks the allgather falls back to Bruck's
set(coll_move_ran_c "collective alltoall linear:" "collective bcast scatter_allgather:"
  "collective gather linear:" "collective scatter linear:")
set(coll_move_not_a "collective bcast scatter_allgather:" "collective gather linear:"
  "collective scatter linear:" "collective allgather recursive_doubling:" "collective allgather ring:")
set(coll_move_not_b "collective gather binomial:" "collective scatter binomial:"
  "collective allgather bruck:" "collective allgather recursive_doubling:"
  "collective alltoall linear:" "collective alltoall bruck:")
set(coll_move_not_c "collective alltoall bruck:" "collective alltoall pairwise:"
  "collective allgather ring:")
foreach(np 3 4)
  foreach(v a b c)
    set(ran ${coll_move_ran_${v}})
    set(not ${coll_move_not_${v}})
    if(v STREQUAL "c" AND np EQUAL 4)
      list(APPEND ran "collective allgather recursive_doubling:")
      list(APPEND not "collective allgather bruck:")
    elseif(v STREQUAL "c")
      list(APPEND ran "collective allgather bruck:")
    endif()
    aptus_mpi_test(NAME coll_move_alg_${v}_np${np} SOURCE coll_move.c NP ${np} ARGS quick LABELS coll
      ENV ${coll_move_alg_${v}} EXPECT_STATS ${ran} EXPECT_NO_STATS ${not})
  endforeach()
endforeach()

# The pipelined broadcast forced at every size (down to one partial segment), the largest counts
# included (20 segments).
foreach(np 3 4)
  aptus_mpi_test(NAME coll_move_bcast_pipelined_np${np} SOURCE coll_move.c NP ${np} LABELS coll
    ENV APTUS_COLL_BCAST_ALG=pipelined EXPECT_STATS "collective bcast pipelined:"
    EXPECT_NO_STATS "collective bcast binomial:" "collective bcast scatter_allgather:")
endforeach()

# The flat broadcast forced at every size; and chosen by itself (16-256 KiB) on a node with more
# ranks than cores.
foreach(np 3 4)
  aptus_mpi_test(NAME coll_move_bcast_linear_np${np} SOURCE coll_move.c NP ${np} LABELS coll
    ENV APTUS_COLL_BCAST_ALG=linear EXPECT_STATS "collective bcast linear:"
    EXPECT_NO_STATS "collective bcast binomial:" "collective bcast scatter_allgather:" "collective bcast pipelined:")
endforeach()
aptus_mpi_test(NAME coll_move_oversub SOURCE coll_move.c NP ${aptus_np_oversub} LABELS coll
  EXPECT_STATS "collective bcast linear:" "collective bcast binomial:" EXPECT_NO_STATS "collective bcast pipelined:")

# Reductions: Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan, Reduce_local, user ops.
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME coll_reduce_np${np} SOURCE coll_reduce.c NP ${np} LABELS coll)
endforeach()
# The reduction kernels over whole vectors (their vector loops, remainders, unaligned starts).
aptus_mpi_test(NAME op_vector_np1 SOURCE op_vector.c NP 1 LABELS coll)
set(coll_reduce_alg_a APTUS_COLL_REDUCE_ALG=binomial APTUS_COLL_ALLREDUCE_ALG=recursive_doubling
  APTUS_COLL_REDUCE_SCATTER_ALG=reduce_scatterv)
set(coll_reduce_alg_b APTUS_COLL_REDUCE_ALG=rabenseifner APTUS_COLL_ALLREDUCE_ALG=rabenseifner
  APTUS_COLL_REDUCE_SCATTER_ALG=recursive_halving)
set(coll_reduce_alg_c APTUS_COLL_ALLREDUCE_ALG=reduce_bcast APTUS_COLL_REDUCE_LONG=64
  APTUS_COLL_BCAST_LONG=64 APTUS_COLL_SCATTER_ALG=binomial)
set(coll_reduce_ran_a "collective reduce binomial:" "collective allreduce recursive_doubling:"
  "collective reduce_scatter reduce_scatterv:")
set(coll_reduce_ran_b "collective reduce rabenseifner:" "collective allreduce rabenseifner:"
  "collective reduce_scatter recursive_halving:")
set(coll_reduce_ran_c "collective allreduce reduce_bcast:" "collective reduce rabenseifner:"
  "collective bcast scatter_allgather:")
set(coll_reduce_not_a "collective reduce rabenseifner:" "collective allreduce rabenseifner:"
  "collective allreduce reduce_bcast:" "collective reduce_scatter recursive_halving:")
set(coll_reduce_not_b "")
set(coll_reduce_not_c "collective allreduce recursive_doubling:" "collective allreduce rabenseifner:")
foreach(np 3 4)
  foreach(v a b c)
    aptus_mpi_test(NAME coll_reduce_alg_${v}_np${np} SOURCE coll_reduce.c NP ${np} ARGS quick LABELS coll
      ENV ${coll_reduce_alg_${v}} EXPECT_STATS ${coll_reduce_ran_${v}}
      EXPECT_NO_STATS ${coll_reduce_not_${v}})
  endforeach()
endforeach()

# Predefined ops against the standard's table (every op on every predefined type), the unusual
# kernels through a collective.
foreach(np 1 3)
  aptus_mpi_test(NAME coll_ops_np${np} SOURCE coll_ops.c NP ${np} LABELS coll)
endforeach()

# Argument errors under MPI_ERRORS_RETURN.
foreach(np 1 2 3)
  aptus_mpi_test(NAME coll_errors_np${np} SOURCE coll_errors.c NP ${np} LABELS coll)
endforeach()

# Intercommunicator collectives (groups of 1+1, 2+1, 2+2 ranks).
foreach(np 2 3 4)
  aptus_mpi_test(NAME coll_inter_np${np} SOURCE coll_inter.c NP ${np} LABELS coll)
endforeach()
# The batched alltoall (long blocks, APTUS_COLL_ALLTOALL_BATCH peers at a time): forced with
# batches of 2 (5 ranks: two batches, the second full; 4 ranks: a full and a partial one), by
# the automatic choice once the long limit is lowered, and as a schedule (MPI_Ialltoall).
foreach(np 4 5)
  aptus_mpi_test(NAME coll_move_batched_np${np} SOURCE coll_move.c NP ${np} LABELS coll
    ENV APTUS_COLL_ALLTOALL_ALG=batched APTUS_COLL_ALLTOALL_BATCH=2
    EXPECT_STATS "collective alltoall batched:" EXPECT_NO_STATS "collective alltoall pairwise:")
endforeach()
aptus_mpi_test(NAME coll_move_batched_auto_np3 SOURCE coll_move.c NP 3 LABELS coll
  ENV APTUS_COLL_ALLTOALL_LONG=64 EXPECT_STATS "collective alltoall batched:")
aptus_mpi_test(NAME nbc_i_coll_move_batched_np5 SOURCE coll_move.c NP 5 LABELS coll nbc
  ENV MTEST_NBC=i APTUS_COLL_ALLTOALL_ALG=batched APTUS_COLL_ALLTOALL_BATCH=3
  EXPECT_STATS "collective alltoall batched:")

# MPI_CHAR in the reductions and accumulates, as a signed 8-bit integer (an extension MPICH and
# Open MPI share, docs/DESIGN.md): every reducing collective in its three forms, MPI_Reduce_local,
# derived types of MPI_CHAR, MPI_Accumulate / MPI_Get_accumulate / MPI_Fetch_and_op on the node
# (load/store, Cross Memory Attach) and with every rank a node of its own (active messages;
# across network namespaces: tests/netns).
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME coll_char_np${np} SOURCE coll_char.c NP ${np} LABELS coll rma)
endforeach()
foreach(mode i p)
  aptus_mpi_test(NAME nbc_${mode}_coll_char_np3 SOURCE coll_char.c NP 3 LABELS coll nbc rma ENV MTEST_NBC=${mode})
endforeach()
aptus_mpi_test(NAME coll_char_am_np3 SOURCE coll_char.c NP 3 LABELS coll rma ENV APTUS_PPN=1
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "by active message 0,")

# Aliased send and receive buffers (no MPI_IN_PLACE) in every collective that has both, at every
# rank or at the root alone (which then fails before anything moves: MPICH's errors/coll/noalias
# patterns), and buffers that only come close; the nonblocking and persistent forms too.
foreach(np 1 2 3 4)
  aptus_mpi_test(NAME coll_alias_np${np} SOURCE coll_alias.c NP ${np} LABELS coll errors)
endforeach()
foreach(mode i p)
  aptus_mpi_test(NAME nbc_${mode}_coll_alias_np3 SOURCE coll_alias.c NP 3 LABELS coll errors nbc ENV MTEST_NBC=${mode})
endforeach()
