# Nonblocking and persistent collectives (MPI standard, sections 6.12 and 6.13; coll/nbc.h).
#
# The blocking collective tests run again through their nonblocking or persistent forms:
# tests/mpi/nbc_wrap.h turns each blocking call into the form MTEST_NBC names (i: MPI_I<coll> +
# MPI_Wait, t: + MPI_Test until done, p: MPI_<Coll>_init + MPI_Start + MPI_Wait + free, s: the
# same with MPI_Startall/MPI_Waitall), so every result, datatype, in-place, intercommunicator and
# error check of those tests holds for the other forms too. EXPECT_STATS proves on every rank
# that the schedules ran (the statistics line of the schedule engine), and for the forced
# algorithms that the schedules recorded those algorithms.
set(nbc_ran "schedules (nonblocking and persistent collectives):")
foreach(mode i p)
  foreach(np 1 2 3 4 5)
    foreach(prog coll_move coll_reduce)
      aptus_mpi_test(NAME nbc_${mode}_${prog}_np${np} SOURCE ${prog}.c NP ${np} LABELS coll nbc
        ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
    endforeach()
  endforeach()
  foreach(np 2 3 4)
    aptus_mpi_test(NAME nbc_${mode}_coll_inter_np${np} SOURCE coll_inter.c NP ${np} LABELS coll nbc
      ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
  endforeach()
  aptus_mpi_test(NAME nbc_${mode}_coll_errors_np3 SOURCE coll_errors.c NP 3 LABELS coll nbc ENV MTEST_NBC=${mode})
  aptus_mpi_test(NAME nbc_${mode}_coll_ops_np3 SOURCE coll_ops.c NP 3 LABELS coll nbc
    ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
  aptus_mpi_test(NAME nbc_${mode}_conf_rs_inplace_np3 SOURCE conf_rs_inplace.c NP 3 LABELS coll nbc
    ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
endforeach()
foreach(mode t s)
  aptus_mpi_test(NAME nbc_${mode}_coll_basic_np4 SOURCE coll_basic.c NP 4 LABELS coll nbc
    ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
  aptus_mpi_test(NAME nbc_${mode}_coll_move_np3 SOURCE coll_move.c NP 3 LABELS coll nbc
    ENV MTEST_NBC=${mode} EXPECT_STATS ${nbc_ran})
endforeach()
# Every algorithm, recorded: the forced variants of coll.cmake, nonblocking at 3 and 4 ranks.
foreach(np 3 4)
  foreach(v a b c)
    set(ran ${coll_move_ran_${v}})
    if(v STREQUAL "c" AND np EQUAL 4)
      list(APPEND ran "collective allgather recursive_doubling:")
    endif()
    aptus_mpi_test(NAME nbc_i_coll_move_alg_${v}_np${np} SOURCE coll_move.c NP ${np} ARGS quick LABELS coll nbc
      ENV MTEST_NBC=i ${coll_move_alg_${v}} EXPECT_STATS ${nbc_ran} ${ran} EXPECT_NO_STATS ${coll_move_not_${v}})
    aptus_mpi_test(NAME nbc_p_coll_reduce_alg_${v}_np${np} SOURCE coll_reduce.c NP ${np} ARGS quick
      LABELS coll nbc ENV MTEST_NBC=p ${coll_reduce_alg_${v}}
      EXPECT_STATS ${nbc_ran} ${coll_reduce_ran_${v}} EXPECT_NO_STATS ${coll_reduce_not_${v}})
  endforeach()
endforeach()
# The pipelined broadcast recorded (MPI_Ibcast, MPI_Bcast_init), at every size.
foreach(mode i p)
  aptus_mpi_test(NAME nbc_${mode}_coll_move_bcast_pipelined_np4 SOURCE coll_move.c NP 4 LABELS coll nbc
    ENV MTEST_NBC=${mode} APTUS_COLL_BCAST_ALG=pipelined EXPECT_STATS ${nbc_ran} "collective bcast pipelined:"
    EXPECT_NO_STATS "collective bcast binomial:" "collective bcast scatter_allgather:")
endforeach()
# Many outstanding at once, completion mixes, persistent restarts, handles freed meanwhile.
foreach(np 1 2 3 4 5)
  aptus_mpi_test(NAME nbc_multi_np${np} SOURCE nbc_multi.c NP ${np} LABELS coll nbc EXPECT_STATS ${nbc_ran})
endforeach()
# Neighborhood collectives: the persistent forms (p, s) and the nonblocking ones (i).
foreach(mode i p s)
  foreach(np 1 4)
    aptus_mpi_test(NAME nbc_${mode}_nbr_coll_np${np} SOURCE nbr_coll.c NP ${np} LABELS topo nbc ENV MTEST_NBC=${mode})
  endforeach()
endforeach()
