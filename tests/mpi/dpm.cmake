# Dynamic processes: two jobs started by two mpiexecs meet (MPI_Open_port, MPI_Comm_accept,
# MPI_Comm_connect, MPI_Comm_join; tests/mpi/dpm_connect.c run by dpm_jobs.sh): on this machine
# (the jobs' processes reach each other through shared memory -- DPM_JOBS_SMP=1 checks it --, or
# over UD with APTUS_SMP_JOBS=0) and from two network namespaces (label netns: root only,
# skipped elsewhere; over UD).
add_executable(mpitest_dpm_connect dpm_connect.c)
set_target_properties(mpitest_dpm_connect PROPERTIES OUTPUT_NAME dpm_connect
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
target_include_directories(mpitest_dpm_connect PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(mpitest_dpm_connect PRIVATE mpi_abi m)
function(aptus_dpm_test name ns nc)
  cmake_parse_arguments(D "NETNS" "" "ARGS;ENV;LABELS" ${ARGN})
  set(netns)
  set(labels "mpi;dpm;${D_LABELS}")
  if(D_NETNS)
    set(netns --netns ${PROJECT_SOURCE_DIR}/scripts/netns.sh)
    set(labels "mpi;dpm;netns;${D_LABELS}")
  endif()
  add_test(NAME mpi.${name}
    COMMAND ${APTUS_SH} ${CMAKE_CURRENT_SOURCE_DIR}/dpm_jobs.sh ${netns} $<TARGET_FILE:mpiexec> ${ns} ${nc}
            $<TARGET_FILE:mpitest_dpm_connect> ${D_ARGS})
  math(EXPR np "${ns} + ${nc}")
  set_tests_properties(mpi.${name} PROPERTIES LABELS "${labels}" PROCESSORS ${np} TIMEOUT 300
    SKIP_RETURN_CODE 77)
  if(D_ENV)
    set_tests_properties(mpi.${name} PROPERTIES ENVIRONMENT "${D_ENV}")
  endif()
endfunction()
aptus_dpm_test(dpm_connect_2x3 2 3 ENV "DPM_JOBS_SMP=1")
aptus_dpm_test(dpm_connect_1x1_join 1 1 ARGS join ENV "DPM_JOBS_SMP=1")
aptus_dpm_test(dpm_connect_3x2_join 3 2 ARGS join)
aptus_dpm_test(dpm_connect_2x2_threads 2 2 ARGS threads LABELS threads ENV "DPM_JOBS_SMP=1")
# ranks that sleep while they wait: the other job's senders ring the door's doorbell
aptus_dpm_test(dpm_connect_2x2_block 2 2 ENV "APTUS_WAIT_BLOCK=1;DPM_JOBS_SMP=1")
if(APTUS_HAVE_UD)
  # the jobs over UD on one machine; messages of every size over ud-sr (no zero-copy rendezvous)
  aptus_dpm_test(dpm_connect_2x3_ud 2 3 ENV "APTUS_SMP_JOBS=0;DPM_JOBS_SMP=0")
  aptus_dpm_test(dpm_connect_2x2_udsr 2 2 ENV "APTUS_SMP_JOBS=0;APTUS_SEND_RULES=self,smp,ud-sr;DPM_JOBS_SMP=0")
  aptus_dpm_test(dpm_connect_netns_2x2_join 2 2 NETNS ARGS join)
  # across namespaces over RC connections (rc-sr from the first message): each job, on one node,
  # starts its RC channel when it meets the other; every process connects to every process of the
  # other job (DPM_JOBS_RC=1 checks it); the same with threads meeting at once
  set(rc_env "APTUS_SEND_RULES=self,smp,rc-sr,size<=8K:ud-sr,ud-zcopy;APTUS_RC_THRESHOLD=1;DPM_JOBS_RC=1")
  aptus_dpm_test(dpm_connect_netns_2x2_rc 2 2 NETNS LABELS rc ENV "${rc_env}")
  aptus_dpm_test(dpm_connect_netns_2x2_rc_threads 2 2 NETNS ARGS threads LABELS rc threads ENV "${rc_env}")
  # ... and by the chain for RDMA hardware, given explicitly (rc-fp for small messages, rc-rdma for
  # large ones): a fast path each way between every process of one job and every process of the other
  aptus_dpm_test(dpm_connect_netns_2x2_rcfp 2 2 NETNS LABELS rc ENV
    "APTUS_SEND_RULES=self,smp,size<=8K:rc-fp,size<=8K:rc-sr,rc-rdma,size<=8K:ud-sr,ud-zcopy;APTUS_RC_THRESHOLD=1;DPM_JOBS_RC=2")
endif()
# MPI_Comm_spawn / spawn_multiple (tests/mpi/dpm_spawn.c): 1-4 parents x 1-4 children, two
# programs, a nested spawn, the errors (no such program, a job that cannot start, beyond the
# universe, soft), and a child that dies taking its parents' job down. MPI_UNIVERSE_SIZE is set
# for each (mpiexec's default is this machine's CPUs). DPM_JOBS_SMP=1: parents and children talk
# through shared memory (checked by counters), =0 with APTUS_SMP_JOBS=0: they do not.
add_executable(mpitest_dpm_spawn_two dpm_spawn.c)
set_target_properties(mpitest_dpm_spawn_two PROPERTIES OUTPUT_NAME dpm_spawn_two
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
target_compile_definitions(mpitest_dpm_spawn_two PRIVATE PROGRAM=2)
target_include_directories(mpitest_dpm_spawn_two PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(mpitest_dpm_spawn_two PRIVATE mpi_abi m)
foreach(pc 1_1 2_3 3_2 4_4 1_4 4_1)
  string(REPLACE "_" ";" pcl ${pc})
  list(GET pcl 0 np)
  list(GET pcl 1 nc)
  math(EXPR u "${np} + ${nc}")
  aptus_mpi_test(NAME dpm_spawn_${np}x${nc} SOURCE dpm_spawn.c NP ${np} LABELS dpm ARGS basic ${nc}
    ENV MPI_UNIVERSE_SIZE=${u} DPM_JOBS_SMP=1 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
endforeach()
if(APTUS_HAVE_UD)
  aptus_mpi_test(NAME dpm_spawn_2x3_ud SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS basic 3
    ENV MPI_UNIVERSE_SIZE=5 APTUS_SMP_JOBS=0 DPM_JOBS_SMP=0 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
endif()
# ranks that sleep while they wait (the doorbells of other jobs' processes rung)
aptus_mpi_test(NAME dpm_spawn_2x2_block SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS basic 2
  ENV MPI_UNIVERSE_SIZE=4 APTUS_WAIT_BLOCK=1 DPM_JOBS_SMP=1 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
aptus_mpi_test(NAME dpm_spawn_multiple_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS multiple
  ENV MPI_UNIVERSE_SIZE=5 DPM_JOBS_SMP=1 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
aptus_mpi_test(NAME dpm_spawn_nested_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS nested
  ENV MPI_UNIVERSE_SIZE=4 DPM_JOBS_SMP=1 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
aptus_mpi_test(NAME dpm_spawn_icreate_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS icreate
  ENV MPI_UNIVERSE_SIZE=4 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
aptus_mpi_test(NAME dpm_spawn_icreate_np3 SOURCE dpm_spawn.c NP 3 LABELS dpm ARGS icreate
  ENV MPI_UNIVERSE_SIZE=5 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
# the universe counted over every job of the run (mpiexec counts it: a parent alone would see room)
aptus_mpi_test(NAME dpm_spawn_shared_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS shared
  ENV MPI_UNIVERSE_SIZE=4 EXPECT_EXIT 0 EXPECT_OUTPUT "universe has room for 0 more")
# a child that outlives its parent: mpiexec waits for every job
aptus_mpi_test(NAME dpm_spawn_outlive SOURCE dpm_spawn.c NP 1 LABELS dpm ARGS outlive
  ENV MPI_UNIVERSE_SIZE=2 EXPECT_EXIT 0 EXPECT_OUTPUT "child outlived its parent")
# the child bound to a core the parent does not use (mpiexec binds the parent; 2 CPUs needed)
aptus_mpi_test(NAME dpm_spawn_bound SOURCE dpm_spawn.c NP 1 LABELS dpm ARGS bound
  ENV MPI_UNIVERSE_SIZE=2 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: child on")
# a spawn given up on (the child does not start in time): cancelled, the run goes on and ends well
aptus_mpi_test(NAME dpm_spawn_slow_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS slow
  ENV MPI_UNIVERSE_SIZE=4 APTUS_SPAWN_TIMEOUT=2 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
# the run's name service is mpiexec's: a name published by a parent is found by its child (the
# shared directory cannot be written here: only the launcher holds it)
aptus_mpi_test(NAME dpm_spawn_names_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS names
  ENV MPI_UNIVERSE_SIZE=3 APTUS_NAME_SERVICE=/proc/aptus-no-such-dir EXPECT_EXIT 0
  EXPECT_OUTPUT "the child found the parent's name through mpiexec")
aptus_mpi_test(NAME dpm_spawn_errors_np2 SOURCE dpm_spawn.c NP 2 LABELS dpm ARGS errors
  ENV MPI_UNIVERSE_SIZE=5 EXPECT_EXIT 0 EXPECT_OUTPUT "dpm_spawn: ok")
add_test(NAME mpi.dpm_spawn_die_np2
  COMMAND ${APTUS_SH} ${CMAKE_CURRENT_SOURCE_DIR}/dpm_die.sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh
          $<TARGET_FILE:mpiexec> $<TARGET_FILE:mpitest_dpm_spawn>)
set_tests_properties(mpi.dpm_spawn_die_np2 PROPERTIES LABELS "mpi;dpm" PROCESSORS 3 TIMEOUT 120
  ENVIRONMENT MPI_UNIVERSE_SIZE=3)
# The parents' mpiexec killed (SIGINT, SIGTERM, SIGKILL) while the children run: nothing of either
# job left (tests/mpi/dpm_kill.sh).
foreach(sig INT TERM KILL)
  add_test(NAME mpi.dpm_spawn_kill_${sig}_np2
    COMMAND ${APTUS_SH} ${CMAKE_CURRENT_SOURCE_DIR}/dpm_kill.sh ${sig} $<TARGET_FILE:mpiexec>
            $<TARGET_FILE:mpitest_dpm_spawn>)
  set_tests_properties(mpi.dpm_spawn_kill_${sig}_np2 PROPERTIES LABELS "mpi;dpm" PROCESSORS 4 TIMEOUT 120)
endforeach()
# A singleton (no launcher) cannot start a job: MPI_ERR_SPAWN saying so, the process goes on.
add_test(NAME mpi.dpm_spawn_nolauncher_np1 COMMAND $<TARGET_FILE:mpitest_dpm_spawn> nolauncher)
set_tests_properties(mpi.dpm_spawn_nolauncher_np1 PROPERTIES LABELS "mpi;dpm" TIMEOUT 60
  PASS_REGULAR_EXPRESSION "dpm_spawn: ok" ENVIRONMENT "PMI_FD=;PMI_PORT=")
