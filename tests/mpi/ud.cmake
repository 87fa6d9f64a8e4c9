# The UD send/receive channel (src/channel/ud/) on one node: APTUS_SEND_RULES="self;ud-sr"
# sends every message between ranks over UDP datagrams through libfabric, the reliability
# engine and the segmentation, with no namespaces needed. The same programs run again with the
# test-only impairment stage (APTUS_UD_IMPAIR: 5 % of datagrams lost, 25 % held back and sent
# after later ones, 1 % duplicated), which every run proves was applied ("(impaired)"), and
# with CRC32C on and a small datagram size (many pieces per frame). Jobs across network
# namespaces (real nodes) are in tests/launcher (label netns).
if(NOT APTUS_HAVE_UD)
  return()
endif()
set(APTUS_UD "APTUS_SEND_RULES=self,ud-sr") # ',' separates rules too: ';' would split the CMake list
set(APTUS_UD_BAD "APTUS_UD_IMPAIR=loss=0.05,reorder=0.25,dup=0.01,seed=11")

foreach(np 2 3)
  aptus_mpi_test(NAME ud_p2p_basic_np${np} SOURCE p2p_basic.c NP ${np} LABELS p2p ud ENV ${APTUS_UD})
endforeach()
foreach(prog p2p_order p2p_noncontig p2p_persistent p2p_truncate p2p_wait selfmsg p2p_match_deep mpi4_isendrecv
        dt_p2p p2p_cancel_send)
  aptus_mpi_test(NAME ud_${prog}_np2 SOURCE ${prog}.c NP 2 LABELS p2p ud ENV ${APTUS_UD})
endforeach()
foreach(prog p2p_probe p2p_anysource coll_basic coll_reduce comm)
  aptus_mpi_test(NAME ud_${prog}_np4 SOURCE ${prog}.c NP 4 LABELS ud ENV ${APTUS_UD})
endforeach()
foreach(prog p2p_reorder coll_move coll_ops)
  aptus_mpi_test(NAME ud_${prog}_np3 SOURCE ${prog}.c NP 3 LABELS ud ENV ${APTUS_UD})
endforeach()
# Frames of many datagrams: a 256-byte datagram size, CRC32C on.
aptus_mpi_test(NAME ud_p2p_basic_mtu256_crc_np2 SOURCE p2p_basic.c NP 2 LABELS p2p ud
  ENV ${APTUS_UD} APTUS_UD_MTU=256 APTUS_CRC=1)
# Small messages by smp, large ones by UD on the same pairs: consecutive messages on one tag
# take different channels, and the non-overtaking rule must hold (p2p_order, p2p_reorder).
# (p2p_order is a 2-rank program: its by-tag phase leaves rank 2 out of a barrier.)
aptus_mpi_test(NAME ud_mixed_p2p_order_np2 SOURCE p2p_order.c NP 2 LABELS p2p ud
  ENV "APTUS_SEND_RULES=self,size<=1K:smp,ud-sr" EXPECT_STATS "ud-sr engine:")
aptus_mpi_test(NAME ud_mixed_p2p_reorder_np3 SOURCE p2p_reorder.c NP 3 LABELS p2p ud
  ENV "APTUS_SEND_RULES=self,size<=1K:smp,ud-sr" EXPECT_STATS "ud-sr engine:")

# Two simulated nodes of two ranks (APTUS_PPN=2) with the default rule chain: smp inside a
# node, UD between them, chosen by the chain alone.
foreach(prog coll_basic p2p_reorder comm)
  aptus_mpi_test(NAME ud_ppn2_${prog}_np4 SOURCE ${prog}.c NP 4 LABELS ud ENV APTUS_PPN=2
    EXPECT_STATS "ud-sr engine:")
endforeach()

# Under impairment: loss, reordering and duplication between the channel and the provider.
aptus_mpi_test(NAME ud_impair_p2p_order_np2 SOURCE p2p_order.c NP 2 LABELS p2p ud
  ENV ${APTUS_UD} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)")
foreach(prog p2p_basic p2p_reorder p2p_noncontig)
  aptus_mpi_test(NAME ud_impair_${prog}_np3 SOURCE ${prog}.c NP 3 LABELS p2p ud
    ENV ${APTUS_UD} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)")
endforeach()
foreach(prog p2p_probe coll_basic coll_move coll_reduce)
  aptus_mpi_test(NAME ud_impair_${prog}_np4 SOURCE ${prog}.c NP 4 LABELS ud
    ENV ${APTUS_UD} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)")
endforeach()
# Cancelled sends whose questions overtake their messages ("asked again").
aptus_mpi_test(NAME ud_impair_p2p_cancel_send_np2 SOURCE p2p_cancel_send.c NP 2 ARGS 100 LABELS p2p ud
  ENV ${APTUS_UD} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)" "send cancellation:")
aptus_mpi_test(NAME ud_impair_crc_p2p_basic_np2 SOURCE p2p_basic.c NP 2 LABELS p2p ud
  ENV ${APTUS_UD} ${APTUS_UD_BAD} APTUS_CRC=1 APTUS_UD_MTU=512 EXPECT_STATS "(impaired)")

# Bad settings end the job at start-up with a message naming the problem.
aptus_mpi_test(NAME ud_bad_provider_np2 SOURCE p2p_basic.c NP 2 LABELS errors ud
  ENV ${APTUS_UD} APTUS_FABRIC_PROVIDER=nosuch EXPECT_NONZERO EXPECT_ERROR "APTUS_FABRIC_PROVIDER=nosuch")
aptus_mpi_test(NAME ud_bad_iface_np2 SOURCE p2p_basic.c NP 2 LABELS errors ud
  ENV ${APTUS_UD} APTUS_FABRIC_IFACE=nosuch0 EXPECT_NONZERO EXPECT_ERROR "APTUS_FABRIC_IFACE=nosuch0")
aptus_mpi_test(NAME ud_bad_impair_np2 SOURCE p2p_basic.c NP 2 LABELS errors ud
  ENV ${APTUS_UD} APTUS_UD_IMPAIR=loss=2 EXPECT_NONZERO EXPECT_ERROR "APTUS_UD_IMPAIR: loss='2'")

# Rendezvous over UD (seed 000, section 3.2). ud-zcopy: the receiver pulls the message into its
# own buffer (receives posted straight into it, pieces streamed from the sender's buffer);
# "(one-sided only)" proves every rendezvous receive went that way. ud-copy: the copy-based
# rendezvous (CTS, then the data in eager frames): "(copy only)".
set(APTUS_UDZ "APTUS_SEND_RULES=self,size<=8K:ud-sr,ud-zcopy")
foreach(prog p2p_basic p2p_order p2p_large dt_p2p p2p_noncontig p2p_cancel_send)
  aptus_mpi_test(NAME udz_${prog}_np2 SOURCE ${prog}.c NP 2 LABELS p2p ud ENV ${APTUS_UDZ})
endforeach()
# Registered buffers (FI_MR_LOCAL, what verbs asks for) forced on the udp provider: the
# receive and send pools registered, descriptors passed with each datagram and zero-copy piece.
set(APTUS_MRL_UD APTUS_FABRIC_MR_LOCAL=1 EXPECT_STATS "ud-sr: send and receive buffers registered (FI_MR_LOCAL, forced")
foreach(prog p2p_large p2p_window)
  aptus_mpi_test(NAME udz_mrlocal_${prog}_np2 SOURCE ${prog}.c NP 2 LABELS p2p ud ENV ${APTUS_UDZ} ${APTUS_MRL_UD}
    "ud-zcopy: received")
endforeach()
aptus_mpi_test(NAME udz_mrlocal_dt_p2p_np2 SOURCE dt_p2p.c NP 2 LABELS p2p ud ENV ${APTUS_UDZ} ${APTUS_MRL_UD})
# Windows of 64 messages both ways with a zero-copy window beyond the socket's receive
# buffer: datagrams overflow it and are lost, credit goes to pieces that never arrive, and the
# receiver must still answer each SENT (a run once stalled here for good).
aptus_mpi_test(NAME udz_window_overflow_np2 SOURCE p2p_window.c NP 2 ARGS 64 4 LABELS p2p ud
  ENV ${APTUS_UDZ} APTUS_UD_ZCOPY_WINDOW_BYTES=512K EXPECT_STATS "ud-zcopy: received")
aptus_mpi_test(NAME udz_p2p_large_onesided_np2 SOURCE p2p_large.c NP 2 LABELS p2p ud ENV ${APTUS_UDZ}
  EXPECT_STATS "(one-sided only)" "ud-zcopy: received")
aptus_mpi_test(NAME udc_p2p_basic_np2 SOURCE p2p_basic.c NP 2 LABELS p2p ud
  ENV "APTUS_SEND_RULES=self,size<=8K:ud-sr,ud-copy" EXPECT_STATS "(copy only)")
# Small by smp, middle by ud-sr, large by ud-zcopy, interleaved on one tag (non-overtaking).
aptus_mpi_test(NAME udz_mixed_p2p_order_np2 SOURCE p2p_order.c NP 2 LABELS p2p ud
  ENV "APTUS_SEND_RULES=self,size<=1K:smp,size<=8K:ud-sr,ud-zcopy" EXPECT_STATS "ud-zcopy: received")
aptus_mpi_test(NAME udz_mixed_p2p_reorder_np3 SOURCE p2p_reorder.c NP 3 LABELS p2p ud
  ENV "APTUS_SEND_RULES=self,size<=1K:smp,size<=8K:ud-sr,ud-zcopy")
# Impaired: lost, held back and duplicated pieces are moved, kept aside, asked for again;
# endpoints with receives left over are reopened.
aptus_mpi_test(NAME udz_impair_p2p_order_np2 SOURCE p2p_order.c NP 2 LABELS p2p ud
  ENV ${APTUS_UDZ} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)" "(one-sided only)")
foreach(prog p2p_basic p2p_reorder)
  aptus_mpi_test(NAME udz_impair_${prog}_np3 SOURCE ${prog}.c NP 3 LABELS p2p ud
    ENV ${APTUS_UDZ} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)")
endforeach()
aptus_mpi_test(NAME udz_impair_coll_move_np4 SOURCE coll_move.c NP 4 LABELS ud
  ENV ${APTUS_UDZ} ${APTUS_UD_BAD} EXPECT_STATS "(impaired)")
# Many small pieces (one Ethernet frame each, a 16K window): long NACK lists, credit updates.
aptus_mpi_test(NAME udz_impair_mtu1472_p2p_basic_np2 SOURCE p2p_basic.c NP 2 LABELS p2p ud
  ENV ${APTUS_UDZ} ${APTUS_UD_BAD} APTUS_UD_ZCOPY_MTU=1472 APTUS_UD_ZCOPY_WINDOW_BYTES=16K APTUS_CRC=1
  EXPECT_STATS "(impaired)" "(one-sided only)")
# One receive endpoint: messages wait for it in turn.
aptus_mpi_test(NAME udz_eps1_p2p_order_np2 SOURCE p2p_order.c NP 2 LABELS p2p ud
  ENV ${APTUS_UDZ} APTUS_UD_ZCOPY_EPS=1 EXPECT_STATS "(one-sided only)")
# No endpoints: ud-zcopy streams copies.
aptus_mpi_test(NAME udz_eps0_p2p_basic_np2 SOURCE p2p_basic.c NP 2 LABELS p2p ud
  ENV ${APTUS_UDZ} APTUS_UD_ZCOPY_EPS=0 EXPECT_STATS "(copy only)")
# The default chain on two simulated nodes: smp inside, ud-sr and ud-zcopy between.
aptus_mpi_test(NAME udz_ppn2_coll_move_np4 SOURCE coll_move.c NP 4 LABELS ud ENV APTUS_PPN=2
  EXPECT_STATS "ud-zcopy: received")
aptus_mpi_test(NAME udz_bad_eps_np2 SOURCE p2p_basic.c NP 2 LABELS errors ud
  ENV ${APTUS_UDZ} APTUS_UD_ZCOPY_EPS=300 EXPECT_NONZERO EXPECT_ERROR "APTUS_UD_ZCOPY_EPS=300")
