/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the rdma_srd trace events, one per decision of the SRD
 * transport (enum srd_event_type, engine/srd_engine.h).  The engine calls
 * srd_os_event() only while one of them is enabled (srd_trace_on, kept by
 * their registration callbacks), so with tracing off an event costs the
 * engine a load and a branch.
 *
 *   echo 1 > /sys/kernel/tracing/events/rdma_srd/enable
 *   trace-cmd record -e rdma_srd ...
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdma_srd

#if !defined(SRD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRD_TRACE_H

#include <linux/tracepoint.h>
#include "engine/srd_engine.h"

extern bool srd_trace_on;
int srd_trace_reg(void);
void srd_trace_unreg(void);

#define srd_show_why(w)							\
	__print_symbolic(w, { SRD_TXW_NEW, "new" }, { SRD_TXW_RTO, "rto" }, \
			 { SRD_TXW_SACK, "sack" }, { SRD_TXW_TLP, "tlp" })
#define srd_show_nak(r)							\
	__print_symbolic(r, { SRD_NAK_RNR, "RNR" }, { SRD_NAK_BAD_QPN, "BAD_QPN" }, \
			 { SRD_NAK_BAD_QKEY, "BAD_QKEY" },		\
			 { SRD_NAK_BAD_LENGTH, "BAD_LENGTH" },		\
			 { SRD_NAK_REMOTE_ABORT, "REMOTE_ABORT" },	\
			 { SRD_NAK_REMOTE_ACCESS, "REMOTE_ACCESS" })
/* From the engine's lists (srd_engine.h): every value has its name. */
#define srd_trace_kind_sym(n, name)	{ SRD_MSG_##n, #name }
#define srd_show_kind(k)						\
	__print_symbolic(k, SRD_MSG_KINDS(srd_trace_kind_sym, SRD_LIST_COMMA))
#define srd_trace_path_sym(n, name)	{ SRD_PATH_##n, #name }
#define srd_show_path(s)						\
	__print_symbolic(s, SRD_PATH_STATES(srd_trace_path_sym, SRD_LIST_COMMA))
#define srd_trace_status_sym(n)		{ SRD_COMP_##n, #n }
#define srd_show_status(s)						\
	__print_symbolic(s, SRD_COMP_STATUSES(srd_trace_status_sym, SRD_LIST_COMMA))

TRACE_EVENT_FN(srd_data_tx,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, psn)
		__field(u32, msg_id)
		__field(u32, seg)
		__field(u32, path)
		__field(u32, why)
		__field(u32, kind)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->psn = ev->psn;
		__entry->msg_id = ev->msg_id;
		__entry->seg = ev->seg;
		__entry->path = ev->path;
		__entry->why = ev->why;
		__entry->kind = ev->value;
	),
	TP_printk("peer %pI6 psn %u msg %u seg %u path %u why %s kind %s",
		  __entry->dgid, __entry->psn, __entry->msg_id, __entry->seg,
		  __entry->path, srd_show_why(__entry->why),
		  srd_show_kind(__entry->kind)),
	srd_trace_reg, srd_trace_unreg
);

TRACE_EVENT_FN(srd_ack_rx,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, ack_psn)
		__field(u32, newly_acked)
		__field(u32, inflight)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->ack_psn = ev->psn;
		__entry->newly_acked = ev->value;
		__entry->inflight = ev->value2;
	),
	TP_printk("peer %pI6 ack_psn %u newly_acked %u inflight %u",
		  __entry->dgid, __entry->ack_psn, __entry->newly_acked,
		  __entry->inflight),
	srd_trace_reg, srd_trace_unreg
);

DECLARE_EVENT_CLASS(srd_nak_class,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, psn)
		__field(u32, msg_id)
		__field(u32, reason)
		__field(u32, attempt)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->psn = ev->psn;
		__entry->msg_id = ev->msg_id;
		__entry->reason = ev->value;
		__entry->attempt = ev->value2;
	),
	TP_printk("peer %pI6 psn %u msg %u attempt %u reason %s",
		  __entry->dgid, __entry->psn, __entry->msg_id,
		  __entry->attempt, srd_show_nak(__entry->reason))
);

DEFINE_EVENT_FN(srd_nak_class, srd_nak_rx,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	srd_trace_reg, srd_trace_unreg
);

DEFINE_EVENT_FN(srd_nak_class, srd_nak_tx,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	srd_trace_reg, srd_trace_unreg
);

TRACE_EVENT_FN(srd_rto,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, snd_una)
		__field(u32, backoff)
		__field(u32, rto_us)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->snd_una = ev->psn;
		__entry->backoff = ev->value;
		__entry->rto_us = ev->value2;
	),
	TP_printk("peer %pI6 snd_una %u backoff %u rto_us %u",
		  __entry->dgid, __entry->snd_una, __entry->backoff,
		  __entry->rto_us),
	srd_trace_reg, srd_trace_unreg
);

TRACE_EVENT_FN(srd_path,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, path)
		__field(u32, state)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->path = ev->path;
		__entry->state = ev->value;
	),
	TP_printk("peer %pI6 path %u state %s", __entry->dgid, __entry->path,
		  srd_show_path(__entry->state)),
	srd_trace_reg, srd_trace_unreg
);

TRACE_EVENT_FN(srd_peer_restart,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, new_tag)
		__field(u32, old_tag)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->new_tag = ev->value;
		__entry->old_tag = ev->value2;
	),
	TP_printk("peer %pI6 tag %08x -> %08x", __entry->dgid,
		  __entry->old_tag, __entry->new_tag),
	srd_trace_reg, srd_trace_unreg
);

TRACE_EVENT_FN(srd_msg_error,
	TP_PROTO(const u8 *dgid, const struct srd_event *ev),
	TP_ARGS(dgid, ev),
	TP_STRUCT__entry(
		__array(u8, dgid, 16)
		__field(u32, msg_id)
		__field(u32, status)
	),
	TP_fast_assign(
		memcpy(__entry->dgid, dgid, 16);
		__entry->msg_id = ev->msg_id;
		__entry->status = ev->value;
	),
	TP_printk("peer %pI6 msg %u status %s", __entry->dgid,
		  __entry->msg_id, srd_show_status(__entry->status)),
	srd_trace_reg, srd_trace_unreg
);

#endif /* SRD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
