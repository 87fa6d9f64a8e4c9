# The range of every configuration variable, checked at start-up (src/runtime/config_vars.def,
# docs/TUNING.md "Value syntax"): a value out of its range, or of the wrong form, ends the job at
# once -- a non-zero exit within a short launcher timeout, never a hang -- with the message
# "Aptus MPI: VAR=VALUE is out of range (RANGE)" (or "is not an integer (RANGE)", ...). The job
# is config_ranges.c: it passes a message around a ring, so a value the start-up let through
# would run it (exit 0) or hang it (a timeout, which fails the check too).
#
# The check does not depend on the channels the job uses: the UD variables are refused on one
# node with the default rule chain (smp only, no UD channel started) as well as with every
# message over UD (APTUS_SEND_RULES=self;ud-sr, label ud).
set(APTUS_CFG_RUN SOURCE config_ranges.c TIMEOUT 20 EXPECT_NONZERO)

# Values an outside fault probe found: APTUS_UD_RECV_BUFS=0 hung the job (no receive buffer
# posted), -1 was refused with a message blaming APTUS_UD_ZCOPY_EPS, the others with "the
# reliability engine refused its configuration (APTUS_UD_*)".
set(probe_cases
  "ud_recv_bufs_0|APTUS_UD_RECV_BUFS=0|APTUS_UD_RECV_BUFS=0 is out of range (1..65536)"
  "ud_recv_bufs_m1|APTUS_UD_RECV_BUFS=-1|APTUS_UD_RECV_BUFS=-1 is out of range (1..65536)"
  "ud_window_0|APTUS_UD_WINDOW=0|APTUS_UD_WINDOW=0 is out of range (1..32768)"
  "ud_rto_min_m1|APTUS_UD_RTO_MIN_US=-1|APTUS_UD_RTO_MIN_US=-1 is out of range (1..APTUS_UD_RTO_MAX_US, with APTUS_UD_RTO_MAX_US=1000000)"
  "peer_timeout_0|APTUS_PEER_TIMEOUT=0|APTUS_PEER_TIMEOUT=0 is out of range (1..max)")
foreach(c IN LISTS probe_cases)
  string(REPLACE "|" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 setting)
  list(GET c 2 message)
  aptus_mpi_test(NAME config_${name}_np2 ${APTUS_CFG_RUN} NP 2 LABELS errors config
    ENV ${setting} EXPECT_ERROR "${message}")
  if(APTUS_HAVE_UD)
    aptus_mpi_test(NAME config_${name}_ud_np2 ${APTUS_CFG_RUN} NP 2 LABELS errors config ud
      ENV "APTUS_SEND_RULES=self,ud-sr" ${setting} EXPECT_ERROR "${message}")
  endif()
endforeach()

# 1024 receive buffers: within the range of the variable, but with the 4 zero-copy endpoints
# they do not fit the provider's receive queue (1024 over udp); the job ends where UD starts,
# and the message names both variables. Two simulated nodes: the default chain takes UD (and
# ud-zcopy) between them. Over ud-sr alone (no zero-copy endpoint) 1024 fit, and the job runs.
if(APTUS_HAVE_UD)
  aptus_mpi_test(NAME config_ud_recv_bufs_1024_ppn2_np4 SOURCE config_ranges.c NP 4 TIMEOUT 30
    LABELS errors config ud ENV APTUS_PPN=2 APTUS_FABRIC_PROVIDER=udp APTUS_UD_RECV_BUFS=1024 EXPECT_NONZERO
    EXPECT_ERROR_ONCE "APTUS_UD_RECV_BUFS=1024 is out of range with APTUS_UD_ZCOPY_EPS=4 (1..1020:")
  aptus_mpi_test(NAME config_ud_recv_bufs_1024_sr_np2 SOURCE config_ranges.c NP 2 TIMEOUT 30
    LABELS config ud ENV "APTUS_SEND_RULES=self,ud-sr" APTUS_FABRIC_PROVIDER=udp APTUS_UD_RECV_BUFS=1024
    EXPECT_EXIT 0 EXPECT_OUTPUT "2 ranks started and passed the ring")
  # The low ends of the ranges run: one receive buffer, a window of one datagram.
  aptus_mpi_test(NAME config_ud_low_ends_np3 SOURCE config_ranges.c NP 3 TIMEOUT 60
    LABELS config ud ENV "APTUS_SEND_RULES=self,ud-sr" APTUS_UD_RECV_BUFS=1 APTUS_UD_WINDOW=1
    EXPECT_EXIT 0 EXPECT_OUTPUT "3 ranks started and passed the ring")
endif()

# A sample of every type, on one node (smp only: neither UD nor RC starts, yet their variables
# are checked). (A message is matched up to its first ';', which would split a CMake list.)
set(type_cases
  # int: below, above, and a value that is no integer
  "spin_count_m1|APTUS_SPIN_COUNT=-1|APTUS_SPIN_COUNT=-1 is out of range (0..max)"
  "progress_cpu_5000|APTUS_ASYNC_PROGRESS_CPU=5000|APTUS_ASYNC_PROGRESS_CPU=5000 is out of range (-1..1023)"
  "progress_slice_50|APTUS_ASYNC_PROGRESS_SLICE=50|APTUS_ASYNC_PROGRESS_SLICE=50 is out of range (0, 100..100000)"
  "ud_window_abc|APTUS_UD_WINDOW=abc|APTUS_UD_WINDOW=abc is not an integer (1..32768)"
  "rc_conn_bufs_1|APTUS_RC_CONN_BUFS=1|APTUS_RC_CONN_BUFS=1 is out of range (2..65536)"
  # size: not a multiple, below, too large for the type, not a size
  "smp_block_size_1000|APTUS_SMP_BLOCK_SIZE=1000|APTUS_SMP_BLOCK_SIZE=1000 is out of range (1K..1G, multiple of 64)"
  "rc_buf_size_100|APTUS_RC_BUF_SIZE=100|APTUS_RC_BUF_SIZE=100 is out of range (512..64M)"
  "smp_chunk_huge|APTUS_SMP_CHUNK=17179869184G|APTUS_SMP_CHUNK=17179869184G is out of range (1..max)"
  "ud_mtu_abc|APTUS_UD_MTU=9K6|APTUS_UD_MTU=9K6 is not a size (0, 96..65535"
  # bool
  "stats_maybe|APTUS_STATS=maybe|APTUS_STATS=maybe is not a boolean (0, 1"
  # enum
  "bcast_alg|APTUS_COLL_BCAST_ALG=fastest|APTUS_COLL_BCAST_ALG=fastest is out of range (auto, binomial, scatter_allgather, pipelined, linear)"
  "rdma_mode|APTUS_RC_RDMA_MODE=sideways|APTUS_RC_RDMA_MODE=sideways is out of range (write, read)"
  "wait_block|APTUS_WAIT_BLOCK=sometimes|APTUS_WAIT_BLOCK=sometimes is out of range (auto, 0, 1, no, yes)"
  # strings, checked by their own parsers whether or not the channel that reads them starts
  "alloc_rules|APTUS_ALLOC_RULES=size>=64K:rc-rdma@0|APTUS_ALLOC_RULES: rule 1 'size>=64K:rc-rdma@0'"
  "ud_impair|APTUS_UD_IMPAIR=loss=2|APTUS_UD_IMPAIR: loss='2' is not a probability (0..1)"
  # a bound naming another variable: the one set is blamed, with the other's value
  "rto_max_500|APTUS_UD_RTO_MAX_US=500|APTUS_UD_RTO_MAX_US=500 is out of range (APTUS_UD_RTO_MIN_US..max, with APTUS_UD_RTO_MIN_US=1000)")
foreach(c IN LISTS type_cases)
  string(REPLACE "|" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 setting)
  list(GET c 2 message)
  aptus_mpi_test(NAME config_${name}_np2 ${APTUS_CFG_RUN} NP 2 LABELS errors config
    ENV "${setting}" EXPECT_ERROR "${message}")
endforeach()

# One line, not one per rank: rank 0 prints the message and ends the job, the others wait for
# the launcher to end them (4 ranks; also under MPI_Session_init).
aptus_mpi_test(NAME config_once_np4 ${APTUS_CFG_RUN} NP 4 LABELS errors config
  ENV APTUS_UD_WINDOW=0 EXPECT_ERROR_ONCE "APTUS_UD_WINDOW=0 is out of range (1..32768)")
aptus_mpi_test(NAME config_once_session_np4 ${APTUS_CFG_RUN} NP 4 ARGS session LABELS errors config mpi4
  ENV APTUS_SPIN_COUNT=-1 EXPECT_ERROR_ONCE "APTUS_SPIN_COUNT=-1 is out of range (0..max)")
# A value only rank 2 is given: rank 0 starts, rank 2 reports it itself (after its wait) and
# the job ends.
aptus_mpi_test(NAME config_one_rank_np4 ${APTUS_CFG_RUN} NP 4 ARGS 2:APTUS_PEER_TIMEOUT=0 LABELS errors config
  EXPECT_ERROR_ONCE "APTUS_PEER_TIMEOUT=0 is out of range (1..max)" EXPECT_ERROR "rank 2: MPI initialization failed")
# The same program with values at the ends of their ranges runs (one node).
aptus_mpi_test(NAME config_ends_np2 SOURCE config_ranges.c NP 2 TIMEOUT 30 LABELS config
  ENV APTUS_SMP_BLOCK_SIZE=1K APTUS_SPIN_COUNT=0 APTUS_YIELD_COUNT=2147483647 APTUS_ASYNC_PROGRESS_NICE=19
      APTUS_COLL_BCAST_ALG=BINOMIAL APTUS_WAIT_BLOCK=yes APTUS_RC_BUF_SIZE=64M APTUS_STATS=off
  EXPECT_EXIT 0 EXPECT_OUTPUT "2 ranks started and passed the ring")
