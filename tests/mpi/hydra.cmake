# Tests registered by the hydra work (see tests/mpi/CMakeLists.txt for aptus_mpi_test).
#
# The MPI test programs under MPICH's own launcher, Hydra (Debian's `mpiexec.mpich`, package
# mpich), which speaks PMI-2 with a lazy fence and has no PMI-2 abort in 4.0.x (see
# src/runtime/pmi.c). Each job runs through tests/launcher/hydra_check.sh, which also requires
# that the job leaves no process and no /dev/shm/aptus-* file behind. Label `hydra`; skipped
# (exit 77) where mpiexec.mpich is not installed.

set(APTUS_HYDRA_CHECK ${PROJECT_SOURCE_DIR}/tests/launcher/hydra_check.sh)

# aptus_hydra_test(NAME <name> NP <n> [CHECK <hydra_check.sh options>...] RUN <mpiexec arguments>)
function(aptus_hydra_test)
  cmake_parse_arguments(H "" "NAME;NP" "CHECK;RUN" ${ARGN})
  if(H_UNPARSED_ARGUMENTS OR NOT H_RUN)
    message(FATAL_ERROR "aptus_hydra_test(${H_NAME}): bad arguments ${H_UNPARSED_ARGUMENTS}")
  endif()
  add_test(NAME hydra.${H_NAME}
    COMMAND ${APTUS_SH} ${APTUS_HYDRA_CHECK} ${H_CHECK} -- ${H_RUN})
  set_tests_properties(hydra.${H_NAME} PROPERTIES
    LABELS "mpi;hydra" PROCESSORS ${H_NP} SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# The PMI-2 client alone (tests/launcher/pmi_probe.c): Hydra's fence is lazy, so only
# aptus_pmi_barrier keeps ranks from passing before rank 0 (which comes late) has arrived; a
# vote against reaches every other rank.
# (aptus_pmi_probe is defined by tests/launcher, added after this directory.)
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/launcher/CMakeLists.txt)
  aptus_hydra_test(NAME pmi_barrier_np4 NP 4
    CHECK --grep "rank 0 marks ok" --grep "rank 1 marks ok" --grep "rank 3 marks ok"
          --grep "rank 0 barrier 3 failed 2" --grep "rank 3 barrier 3 failed 2" --grep "rank 2 barrier 3 ok"
    RUN -n 4 $<TARGET_FILE:aptus_pmi_probe> init unmark=${CMAKE_CURRENT_BINARY_DIR}/hydra_marks barrier
        r0:sleep=300 mark=${CMAKE_CURRENT_BINARY_DIR}/hydra_marks barrier
        checkmarks=${CMAKE_CURRENT_BINARY_DIR}/hydra_marks barrier=2 finalize)
  # The abort of the PMI client itself: Hydra's mpiexec exits with the code.
  aptus_hydra_test(NAME pmi_abort_np3 NP 3 CHECK --exit 7
    RUN -n 3 $<TARGET_FILE:aptus_pmi_probe> init fence r1:abort=7 hang)
  # An abort naming a lost peer goes in the same PMI-1 form (Hydra has no place for the peer).
  aptus_hydra_test(NAME pmi_abortlost_np3 NP 3 CHECK --exit 16
    RUN -n 3 $<TARGET_FILE:aptus_pmi_probe> init fence r1:abortlost=16:0 hang)
endif()

# A representative set of the MPI test programs at 1 to 4 ranks: exit 0, nothing left behind.
foreach(t
    p2p_basic:2 p2p_basic:3 p2p_anysource:4 p2p_probe:2 p2p_persistent:4 p2p_noncontig:1
    coll_basic:1 coll_basic:2 coll_basic:3 coll_basic:4 coll_reduce:3 coll_move:4
    comm:1 comm:3 comm:4 comm_create:4 inter_basic:4
    dt_p2p:2 dt_pack:1 dt_darray:4)
  string(REPLACE ":" ";" parts ${t})
  list(GET parts 0 prog)
  list(GET parts 1 np)
  aptus_hydra_test(NAME ${prog}_np${np} NP ${np} RUN -n ${np} $<TARGET_FILE:mpitest_${prog}>)
endforeach()

# Start-up stress: 10 four-rank jobs back to back (before the fix most failed in MPI_Init:
# the shared-memory names were removed before every rank had opened them).
aptus_hydra_test(NAME startup_stress_np4 NP 4 CHECK --repeat 10
  RUN -n 4 $<TARGET_FILE:mpitest_coll_basic>)
aptus_hydra_test(NAME startup_stress_np2 NP 2 CHECK --repeat 10
  RUN -n 2 $<TARGET_FILE:mpitest_p2p_basic>)

# MPI_Abort(MPI_COMM_WORLD, 3) on rank 1: Hydra must end the job with 3 (the PMI-1 abort
# that every Hydra understands), the library's message must be there.
foreach(np 2 4)
  aptus_hydra_test(NAME abort_np${np} NP ${np}
    CHECK --exit 3 --grep "Aptus MPI: rank 1: MPI_Abort called with error code 3"
    RUN -n ${np} $<TARGET_FILE:mpitest_abort>)
endforeach()
# A fatal error (MPI_ERRORS_ARE_FATAL) ends the job through the same abort. The library's own
# message is matched (as EXPECT_ERROR does for mpi.errors_fatal_np2), not the bare call name,
# which a test's own "FAIL ..." line would contain too.
aptus_hydra_test(NAME errors_fatal_np2 NP 2 CHECK --nonzero --grep "Aptus MPI: rank 1: MPI_Send"
  RUN -n 2 $<TARGET_FILE:mpitest_errors_fatal>)

# A rank killed by a signal after MPI_Init: non-zero, nothing left behind.
aptus_mpi_test(NAME rank_killed_np3 SOURCE rank_killed.c NP 3 LABELS env EXPECT_NONZERO)
aptus_hydra_test(NAME rank_killed_np3 NP 3 CHECK --nonzero RUN -n 3 $<TARGET_FILE:mpitest_rank_killed>)

# Failed start-ups, all ranks must fail cleanly and remove every segment name:
#  - rank 0 refuses its configuration before any segment exists;
#  - rank 0's segment has another size (its own block size), found while mapping, after every
#    segment was created.
# (Only the messages of a rank that aborts are checked: Hydra kills the other ranks at once, so
# what they print after the vote may be lost.)
aptus_hydra_test(NAME init_fails_early_np4 NP 4
  CHECK --nonzero --grep "Aptus MPI: APTUS_SMP_BLOCK_SIZE=100 is out of range (1K..1G, multiple of 64)"
        --grep "MPI initialization failed"
  RUN -n 1 -env APTUS_SMP_BLOCK_SIZE 100 $<TARGET_FILE:mpitest_coll_basic>
   : -n 3 $<TARGET_FILE:mpitest_coll_basic>)
# A value out of range given to rank 3 only: ranks 0-2 start, rank 3 reports it itself after
# waiting in vain for the launcher to end it (rank 0 would have reported a value every rank had).
aptus_hydra_test(NAME init_fails_range_rank3_np4 NP 4
  CHECK --nonzero --grep "Aptus MPI: APTUS_UD_WINDOW=0 is out of range (1..32768)"
        --grep "rank 3: MPI initialization failed"
  RUN -n 3 $<TARGET_FILE:mpitest_coll_basic>
   : -n 1 -env APTUS_UD_WINDOW 0 $<TARGET_FILE:mpitest_coll_basic>)
aptus_hydra_test(NAME init_fails_mapping_np4 NP 4
  CHECK --nonzero --grep "do all ranks have the same APTUS_SMP_BLOCK_SIZE"
        --grep "MPI initialization failed"
  RUN -n 1 -env APTUS_SMP_BLOCK_SIZE 8K $<TARGET_FILE:mpitest_coll_basic>
   : -n 3 $<TARGET_FILE:mpitest_coll_basic>)

# MPI_Comm_spawn under Hydra: the library asks the launcher with the PMI-2 spawn command (the new
# job finds the parents' port in its key space): the basic, two-program, nested and icreate
# exchanges, and the errors (no program, no working directory, a program that never connects --
# APTUS_SPAWN_TIMEOUT, 5 s here --, beyond the universe named, soft). (The targets come from
# tests/mpi/dpm.cmake.)
aptus_hydra_test(NAME dpm_spawn_2x3 NP 5 CHECK --grep "dpm_spawn: ok"
  RUN -n 2 -genv DPM_JOBS_SMP 1 $<TARGET_FILE:mpitest_dpm_spawn> basic 3)
foreach(mode multiple nested icreate)
  aptus_hydra_test(NAME dpm_spawn_${mode}_np2 NP 4 CHECK --grep "dpm_spawn: ok"
    RUN -n 2 $<TARGET_FILE:mpitest_dpm_spawn> ${mode})
endforeach()
aptus_hydra_test(NAME dpm_spawn_errors_np2 NP 4 CHECK --grep "did not connect within APTUS_SPAWN_TIMEOUT=5"
  RUN -n 2 -genv APTUS_SPAWN_TIMEOUT 5 -genv MPI_UNIVERSE_SIZE 5 $<TARGET_FILE:mpitest_dpm_spawn> errors)
