/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GRIM kernel-internal contract between the NI driver (drivers/net/grim)
 * and the AF_GRIM protocol family (net/grim).
 *
 * The family hands whole messages to an NI and receives whole messages
 * from it; it never sees frames, sequence numbers or peers.  The NI sees
 * endpoints only through struct grim_ep and the grim_ep_*() upcalls; it
 * never touches a socket.
 */
#ifndef _NET_GRIM_H
#define _NET_GRIM_H

#include <linux/skbuff.h>
#include <linux/types.h>
#include <net/net_namespace.h>

/* An endpoint (a port with its logical channel), as the NI sees it. */
struct grim_ep {
	u16 port;
};

/*
 * Per-message descriptor, in skb->cb of a message skb.
 * Transmit: @node is the destination; receive: the source.
 */
struct grim_msg_cb {
	u32 node;
	u16 src_port;
	u16 dst_port;
	u16 handler;
	u16 flags;
	u32 arg[4];
};

#define GRIM_MSG_CB(skb) ((struct grim_msg_cb *)(skb)->cb)

/* NI side, called by the family. */

/* The node id of the first running NI of @net; 0 if there is none. */
u32 grim_ni_local_node(struct net *net);
/*
 * Headroom for a message skb in @net: a message that fits one frame and
 * has it in its linear part is sent without being copied.
 */
unsigned int grim_ni_headroom(struct net *net);
/*
 * Queue a message for reliable, in-order delivery to GRIM_MSG_CB()->node
 * through the NI of @net that reaches it.  Process context; may sleep
 * (to allocate frames) but holds no reference to any device while it
 * does, so it never delays the removal of an NI or its lower device.
 * The NI takes the skb in all cases.  Returns 0 or a negative errno
 * (-EHOSTUNREACH: no NI reaches the node, or the peer is down;
 * -ENETDOWN: the NI is stopping; -EMSGSIZE: too long, or the lower
 * device's MTU is too small).  A message that later cannot be delivered
 * is reported with grim_ep_tx_failed().
 */
int grim_ni_send(struct net *net, struct sk_buff *skb);

/* Family side, called by the NI (any context, never sleeping). */

/* Find the bound endpoint @port of @net; takes a reference. */
struct grim_ep *grim_ep_get(struct net *net, u16 port);
void grim_ep_put(struct grim_ep *ep);
/*
 * Reserve room for a @len byte message in the endpoint's receive queue
 * (charged to it at once, so that messages in reassembly count against
 * SO_RCVBUF); false when the endpoint is full.
 */
bool grim_ep_reserve(struct grim_ep *ep, unsigned int len);
/* Give back a reservation whose message will not arrive. */
void grim_ep_unreserve(struct grim_ep *ep, unsigned int len);
/*
 * Queue a complete message (payload only, cb filled) on the endpoint,
 * in place of the @reserved bytes it reserved.
 */
void grim_ep_deliver(struct grim_ep *ep, struct sk_buff *skb,
		     unsigned int reserved);
/*
 * A message the endpoint sent could not be delivered; @err < 0.  @msg is
 * what the endpoint gave grim_ni_send() (its headers may have been
 * pushed, and its cb reused): @cb and @len describe the message.  The
 * endpoint takes @msg.
 */
void grim_ep_tx_failed(struct sk_buff *msg, const struct grim_msg_cb *cb,
		       unsigned int len, int err);
/*
 * Whether the endpoint that sent @msg is gone (a closed socket): the NI
 * then gives up such a message after the receiver refused it for
 * dead_ms, rather than retrying it for ever.
 */
bool grim_ep_tx_orphaned(const struct sk_buff *msg);

#endif /* _NET_GRIM_H */
