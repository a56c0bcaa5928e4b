/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the device's counters, shown in hw_counters and by "rdma
 * statistic", one SRD_COUNTER(ID) each: srd.h makes the enum from this
 * list (SRD_CNT_ID) and counters.c the names (id, in lower case), so the
 * two cannot disagree.  docs/architecture.md says what each counts; a
 * host test fails while one is missing there.  No include guard: it is
 * included once per use, with SRD_COUNTER defined.  A name the EFA
 * driver also has (tx_bytes, send_wrs, rdma_read_bytes, ...) counts what
 * EFA's counts: one name, one meaning (docs/architecture.md, "Counters").
 */

/* Live objects: they return to their baseline when all is freed. */
SRD_COUNTER(PDS)
SRD_COUNTER(CQS)
SRD_COUNTER(QPS)
SRD_COUNTER(MRS)
SRD_COUNTER(AHS)
/* Events, monotonic. */
/* UD datagrams sent. */
SRD_COUNTER(TX_PACKETS)
/*
 * Every packet the device sent, UD or SRD, and its bytes (EFA's); per CPU
 * (struct srd_pcpu_traffic), as are RX_PKTS and RX_BYTES.
 */
SRD_COUNTER(TX_PKTS)
SRD_COUNTER(TX_BYTES)
SRD_COUNTER(TX_ERRORS)
/* Outgoing packets whose buffer did not come from a page pool (txbuf.c). */
SRD_COUNTER(TX_BUF_FALLBACKS)
/* UD datagrams and SRD messages taken by a receive. */
SRD_COUNTER(RX_PACKETS)
/* Every packet that reached the device, and its bytes (EFA's). */
SRD_COUNTER(RX_PKTS)
SRD_COUNTER(RX_BYTES)
SRD_COUNTER(RX_DROP_BAD_HDR)
SRD_COUNTER(RX_DROP_NO_QP)
SRD_COUNTER(RX_DROP_QP_STATE)
SRD_COUNTER(RX_DROP_QKEY)
SRD_COUNTER(RX_DROP_NO_RECV)
/* UD datagrams larger than the receive posted for them. */
SRD_COUNTER(RX_DROP_TOO_LONG)
/*
 * Datagrams from outside the fabric: in on another interface than the
 * device's netdev, or IPv6 with an IPv4-mapped source.
 */
SRD_COUNTER(RX_DROP_INGRESS)
SRD_COUNTER(CQ_OVERFLOWS)
SRD_COUNTER(WQE_ERRORS)
SRD_COUNTER(SRD_RX_DROP_NO_PEER)
/*
 * Peers created, idle ones destroyed to make room, and scans of a full
 * table, or of a prefix at its share, that found none to destroy (at
 * most ten a second each).
 */
SRD_COUNTER(SRD_PEERS)
SRD_COUNTER(SRD_PEERS_EVICTED)
SRD_COUNTER(SRD_PEER_EVICT_MISSES)
/*
 * RDMA requests this device refused as their responder: no live MR has
 * the rkey; the MR is not in the QP's PD; it lacks REMOTE_READ/WRITE;
 * outside the MR, or wrapping.
 */
SRD_COUNTER(RDMA_RKEY_INVALID)
SRD_COUNTER(RDMA_RKEY_PD)
SRD_COUNTER(RDMA_RKEY_ACCESS)
SRD_COUNTER(RDMA_RKEY_RANGE)
/*
 * EFA's message and RDMA counters.  Send-queue work requests the device
 * processed, by kind, and the bytes of those that succeeded; receives a
 * SEND completed; bytes this device served as an RDMA responder.
 */
SRD_COUNTER(SEND_WRS)
SRD_COUNTER(SEND_BYTES)
SRD_COUNTER(RECV_WRS)
SRD_COUNTER(RECV_BYTES)
SRD_COUNTER(RDMA_READ_WRS)
SRD_COUNTER(RDMA_READ_BYTES)
SRD_COUNTER(RDMA_READ_WR_ERR)
SRD_COUNTER(RDMA_READ_RESP_BYTES)
SRD_COUNTER(RDMA_WRITE_WRS)
SRD_COUNTER(RDMA_WRITE_BYTES)
SRD_COUNTER(RDMA_WRITE_WR_ERR)
SRD_COUNTER(RDMA_WRITE_RECV_BYTES)
/*
 * EFA's device counters of verbs that failed (any error the verb
 * returned): device.c counts them around the verbs, mr.c reg_mr's.
 */
SRD_COUNTER(ALLOC_PD_ERR)
SRD_COUNTER(CREATE_QP_ERR)
SRD_COUNTER(CREATE_CQ_ERR)
SRD_COUNTER(REG_MR_ERR)
SRD_COUNTER(ALLOC_UCONTEXT_ERR)
SRD_COUNTER(CREATE_AH_ERR)
SRD_COUNTER(MMAP_ERR)
