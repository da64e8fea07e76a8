/* SPDX-License-Identifier: GPL-2.0 */
/* GRIM NI: tracepoints of the transport (events/grim in tracefs). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM grim

#if !defined(_GRIM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _GRIM_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(grim_msg,
		    TP_PROTO(u32 node, u16 src, u16 dst, u32 len),
		    TP_ARGS(node, src, dst, len),
		    TP_STRUCT__entry(__field(u32, node)
				     __field(u16, src)
				     __field(u16, dst)
				     __field(u32, len)),
		    TP_fast_assign(__entry->node = node;
				   __entry->src = src;
				   __entry->dst = dst;
				   __entry->len = len;),
		    TP_printk("node=%u chan=%u->%u len=%u", __entry->node,
			      __entry->src, __entry->dst, __entry->len)
);

/* A message queued for @node (src: our channel). */
DEFINE_EVENT(grim_msg, grim_msg_tx,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 len),
	     TP_ARGS(node, src, dst, len));

/* A message from @node delivered to an endpoint (dst: our channel). */
DEFINE_EVENT(grim_msg, grim_msg_rx,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 len),
	     TP_ARGS(node, src, dst, len));

DECLARE_EVENT_CLASS(grim_seq,
		    TP_PROTO(u32 node, u16 src, u16 dst, u32 seq),
		    TP_ARGS(node, src, dst, seq),
		    TP_STRUCT__entry(__field(u32, node)
				     __field(u16, src)
				     __field(u16, dst)
				     __field(u32, seq)),
		    TP_fast_assign(__entry->node = node;
				   __entry->src = src;
				   __entry->dst = dst;
				   __entry->seq = seq;),
		    TP_printk("node=%u chan=%u->%u seq=%u", __entry->node,
			      __entry->src, __entry->dst, __entry->seq)
);

/* An ACK for our stream src->dst at @node: frames before @seq arrived. */
DEFINE_EVENT(grim_seq, grim_ack,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 seq),
	     TP_ARGS(node, src, dst, seq));

/* A NACK: @node's endpoint had no room for frame @seq. */
DEFINE_EVENT(grim_seq, grim_nack,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 seq),
	     TP_ARGS(node, src, dst, seq));

/* The retransmission timer fired: going back to frame @seq. */
DEFINE_EVENT(grim_seq, grim_timeout,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 seq),
	     TP_ARGS(node, src, dst, seq));

/* Frame @seq is sent again (after a timeout, NACK, probe or a loss found). */
DEFINE_EVENT(grim_seq, grim_retransmit,
	     TP_PROTO(u32 node, u16 src, u16 dst, u32 seq),
	     TP_ARGS(node, src, dst, seq));

/* The reassembly of a message from @node on src->dst was given up, its
 * sender having denied the stream: no frame of it for @silent_ms (of the
 * peer: @peer_silent_ms), @got of its @want bytes, frame @seq expected.
 */
TRACE_EVENT(grim_reasm_timeout,
	    TP_PROTO(u32 node, u16 src, u16 dst, u32 seq, u32 got, u32 want,
		     u32 silent_ms, u32 peer_silent_ms),
	    TP_ARGS(node, src, dst, seq, got, want, silent_ms, peer_silent_ms),
	    TP_STRUCT__entry(__field(u32, node)
			     __field(u16, src)
			     __field(u16, dst)
			     __field(u32, seq)
			     __field(u32, got)
			     __field(u32, want)
			     __field(u32, silent_ms)
			     __field(u32, peer_silent_ms)),
	    TP_fast_assign(__entry->node = node;
			   __entry->src = src;
			   __entry->dst = dst;
			   __entry->seq = seq;
			   __entry->got = got;
			   __entry->want = want;
			   __entry->silent_ms = silent_ms;
			   __entry->peer_silent_ms = peer_silent_ms;),
	    TP_printk("node=%u chan=%u->%u seq=%u got=%u/%u silent=%ums peer_silent=%ums",
		      __entry->node, __entry->src, __entry->dst, __entry->seq,
		      __entry->got, __entry->want, __entry->silent_ms,
		      __entry->peer_silent_ms)
);

TRACE_EVENT(grim_peer_state,
	    TP_PROTO(u32 node, int state),
	    TP_ARGS(node, state),
	    TP_STRUCT__entry(__field(u32, node)
			     __field(int, state)),
	    TP_fast_assign(__entry->node = node;
			   __entry->state = state;),
	    TP_printk("node=%u state=%s", __entry->node,
		      __print_symbolic(__entry->state, { 0, "new" },
				       { 1, "up" }, { 2, "down" }))
);

/* An NI applied a group's tree: the tree the messages after @ticket take
 * from it.
 */
TRACE_EVENT(grim_mc_tree,
	    TP_PROTO(u32 node, u32 group, u32 ticket, u32 root, u32 flags,
		     bool in_tree, u32 parent, u32 child0, u32 child1),
	    TP_ARGS(node, group, ticket, root, flags, in_tree, parent, child0,
		    child1),
	    TP_STRUCT__entry(__field(u32, node)
			     __field(u32, group)
			     __field(u32, ticket)
			     __field(u32, root)
			     __field(u32, flags)
			     __field(bool, in_tree)
			     __field(u32, parent)
			     __field(u32, child0)
			     __field(u32, child1)),
	    TP_fast_assign(__entry->node = node;
			   __entry->group = group;
			   __entry->ticket = ticket;
			   __entry->root = root;
			   __entry->flags = flags;
			   __entry->in_tree = in_tree;
			   __entry->parent = parent;
			   __entry->child0 = child0;
			   __entry->child1 = child1;),
	    TP_printk("node=%u group=%u ticket=%u root=%u flags=%#x in_tree=%d parent=%u children=%u,%u",
		      __entry->node, __entry->group, __entry->ticket,
		      __entry->root, __entry->flags, __entry->in_tree,
		      __entry->parent, __entry->child0, __entry->child1)
);

/* The root sends member @member the messages of @group from @from on
 * again (@count of them), from its log.
 */
TRACE_EVENT(grim_mc_repair,
	    TP_PROTO(u32 node, u32 group, u32 member, u32 from, u32 count),
	    TP_ARGS(node, group, member, from, count),
	    TP_STRUCT__entry(__field(u32, node)
			     __field(u32, group)
			     __field(u32, member)
			     __field(u32, from)
			     __field(u32, count)),
	    TP_fast_assign(__entry->node = node;
			   __entry->group = group;
			   __entry->member = member;
			   __entry->from = from;
			   __entry->count = count;),
	    TP_printk("node=%u group=%u member=%u from=%u count=%u",
		      __entry->node, __entry->group, __entry->member,
		      __entry->from, __entry->count)
);

/* An NI forgets a group it has no use for any more (mcast.c). */
TRACE_EVENT(grim_mc_forget,
	    TP_PROTO(u32 node, u32 group, u32 root, u32 expect),
	    TP_ARGS(node, group, root, expect),
	    TP_STRUCT__entry(__field(u32, node)
			     __field(u32, group)
			     __field(u32, root)
			     __field(u32, expect)),
	    TP_fast_assign(__entry->node = node;
			   __entry->group = group;
			   __entry->root = root;
			   __entry->expect = expect;),
	    TP_printk("node=%u group=%u root=%u expect=%u",
		      __entry->node, __entry->group, __entry->root,
		      __entry->expect)
);

#endif /* _GRIM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
