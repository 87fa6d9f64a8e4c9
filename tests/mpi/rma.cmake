# One-sided communication (MPI standard, chapter 12). Every program checks its results against a
# serial model computed locally and runs at any number of ranks (neighbours modulo the size):
#   rma_win     window objects: the four creation flavors (create, allocate, allocate_shared with
#               shared_query and direct load/store, create_dynamic with attach/detach), attributes,
#               group, name, info hints, keyvals, error handlers;
#   rma_basic   Put, Get, Accumulate (SUM, MAX, REPLACE, BAND, MAXLOC, double SUM), Get_accumulate,
#               Fetch_and_op, Compare_and_swap, the request-based forms, derived datatypes, per-rank
#               displacement units, the large-count (_c) forms;
#   rma_sync    fences with assertions, post-start-complete-wait (Win_test, NOCHECK), locks, lock_all,
#               the flushes, Win_sync;
#   rma_atomic  accumulates and fetch-and-ops from every rank to one target, mutual exclusion of
#               exclusive locks, a Compare_and_swap spin lock;
#   rma_errors  erroneous calls under MPI_ERRORS_RETURN give the right error class.
foreach(np 1 2 3 4)
  foreach(prog rma_win rma_basic rma_sync rma_atomic)
    aptus_mpi_test(NAME ${prog}_np${np} SOURCE ${prog}.c NP ${np} LABELS rma)
  endforeach()
endforeach()
foreach(np 2 3)
  aptus_mpi_test(NAME rma_errors_np${np} SOURCE rma_errors.c NP ${np} LABELS rma)
endforeach()
# Passive target while the target computes without calling MPI: on a node the origin acts on the
# target's memory itself (load/store for allocated windows, Cross Memory Attach for created ones),
# so the epoch must end long before the computation does (tests/netns: the same across nodes).
aptus_mpi_test(NAME rma_passive_np2 SOURCE rma_passive.c NP 2 LABELS rma ENV MTEST_PASSIVE_FAST=1)
aptus_mpi_test(NAME rma_passive_create_np2 SOURCE rma_passive.c NP 2 ARGS create LABELS rma ENV MTEST_PASSIVE_FAST=1)
# Every rank a node of its own (APTUS_PPN=1, over the network channels of this machine): every
# other target is reached by active messages, applied by its agent.
foreach(prog rma_basic rma_sync rma_win)
  aptus_mpi_test(NAME ${prog}_am_np3 SOURCE ${prog}.c NP 3 LABELS rma ENV APTUS_PPN=1
    EXPECT_STATS "one-sided:" EXPECT_NO_STATS "by active message 0,")
endforeach()
# (every rank of rma_atomic targets one rank, which itself sends none)
aptus_mpi_test(NAME rma_atomic_am_np3 SOURCE rma_atomic.c NP 3 LABELS rma ENV APTUS_PPN=1)
aptus_mpi_test(NAME rma_errors_am_np2 SOURCE rma_errors.c NP 2 LABELS rma ENV APTUS_PPN=1)
# Targets of the node by load/store (allocated windows: every rank of rma_atomic uses one).
aptus_mpi_test(NAME rma_atomic_shared_np3 SOURCE rma_atomic.c NP 3 LABELS rma
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "by load/store 0,")
# The copy agent (APTUS_RMA_LOOPBACK) takes every put and get.
foreach(prog rma_basic rma_sync rma_win)
  aptus_mpi_test(NAME ${prog}_loopback_np3 SOURCE ${prog}.c NP 3 LABELS rma threads
    ENV APTUS_RMA_LOOPBACK=1 APTUS_RMA_LOOPBACK_MIN=1 EXPECT_STATS "one-sided:" EXPECT_NO_STATS "copy agent 0;")
endforeach()
# With the progress thread (its passes run the agents).
foreach(prog rma_atomic rma_sync)
  aptus_mpi_test(NAME ${prog}_async_am_np3 SOURCE ${prog}.c NP 3 LABELS rma threads
    ENV APTUS_ASYNC_PROGRESS=1 APTUS_PPN=1)
endforeach()
# The same on the target's own memory (MPI_Win_create: Cross Memory Attach, and small accumulates
# deferred to the flush, handed to the target or written by the origin).
foreach(np 3 4)
  aptus_mpi_test(NAME rma_atomic_create_np${np} SOURCE rma_atomic.c NP ${np} ARGS create LABELS rma
    EXPECT_STATS "one-sided:")
endforeach()
# Accumulates atomic per element by CPU atomics (the mpi_accumulate_granularity hint of MPI 4.1);
# by default they take the target's accumulate lock.
foreach(np 2 4)
  aptus_mpi_test(NAME rma_atomic_fine_np${np} SOURCE rma_atomic.c NP ${np} LABELS rma ENV MTEST_ACC_GRANULARITY=8)
endforeach()
# Dynamic windows under large transfers, regions attached again inside an epoch, more regions than
# a target's table holds (rma_dynamic); with every rank a node (active messages here; RDMA across
# namespaces: tests/netns).
foreach(np 1 2 3)
  aptus_mpi_test(NAME rma_dynamic_np${np} SOURCE rma_dynamic.c NP ${np} LABELS rma)
endforeach()
aptus_mpi_test(NAME rma_dynamic_am_np3 SOURCE rma_dynamic.c NP 3 LABELS rma ENV APTUS_PPN=1
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "by active message 0,")
# Small puts and accumulates to MPI_Win_create / dynamic memory on the node wait for the epoch's
# end (docs/DESIGN.md, "deferred operations"): they ride with MPI_Win_complete, are handed to the
# target's agent at a fence or at a flush while the target polls, are taken back and written by the
# origin when the target computes without calling MPI (and the epoch still ends at once), from
# several threads at once too. Each way must have run on every rank (statistics).
foreach(np 2 3)
  aptus_mpi_test(NAME rma_defer_pscw_np${np} SOURCE rma_defer.c NP ${np} ARGS pscw LABELS rma
    EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0," "MPI_Win_complete 0,")
  aptus_mpi_test(NAME rma_defer_fence_np${np} SOURCE rma_defer.c NP ${np} ARGS fence LABELS rma
    EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0," "handed to the target 0,")
  aptus_mpi_test(NAME rma_defer_flush_np${np} SOURCE rma_defer.c NP ${np} ARGS flush LABELS rma
    ENV APTUS_RMA_HANDOVER_WAIT=5000
    EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0," "handed to the target 0,"
    "written by the origin 0")
endforeach()
aptus_mpi_test(NAME rma_defer_flush_dynamic_np2 SOURCE rma_defer.c NP 2 ARGS flush dynamic LABELS rma
  ENV APTUS_RMA_HANDOVER_WAIT=5000
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0," "handed to the target 0,")
aptus_mpi_test(NAME rma_defer_fence_dynamic_np3 SOURCE rma_defer.c NP 3 ARGS fence dynamic LABELS rma
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0," "handed to the target 0,")
aptus_mpi_test(NAME rma_defer_passive_np2 SOURCE rma_defer.c NP 2 ARGS passive LABELS rma
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "taken back 0," "written by the origin 0")
# The same with the progress thread: the target's agent runs there while the target computes.
aptus_mpi_test(NAME rma_defer_passive_async_np2 SOURCE rma_defer.c NP 2 ARGS passive LABELS rma threads
  ENV APTUS_ASYNC_PROGRESS=1 EXPECT_STATS "one-sided:")
aptus_mpi_test(NAME rma_defer_threads_np2 SOURCE rma_defer.c NP 2 ARGS threads LABELS rma threads
  ENV APTUS_RMA_HANDOVER_WAIT=5000
  EXPECT_STATS "one-sided:" EXPECT_NO_STATS "deferred to the epoch's end 0,")
# Without deferral (APTUS_RMA_DEFER_MAX=0) every operation goes at once, as before.
aptus_mpi_test(NAME rma_defer_off_np2 SOURCE rma_defer.c NP 2 ARGS flush LABELS rma ENV APTUS_RMA_DEFER_MAX=0
  EXPECT_STATS "deferred to the epoch's end 0,")
