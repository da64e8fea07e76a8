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

struct grim_ni;

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

/* Find the NI that reaches @node in @net; takes a reference. */
struct grim_ni *grim_ni_route(struct net *net, u32 node);
/* The node id of the first running NI of @net; 0 if there is none. */
u32 grim_ni_local_node(struct net *net);
void grim_ni_put(struct grim_ni *ni);
/*
 * Headroom for a message skb: a message that fits one frame and has it
 * in its linear part is sent without being copied.
 */
unsigned int grim_ni_headroom(const struct grim_ni *ni);
/*
 * Queue a message for reliable, in-order delivery.  The NI takes the skb
 * in all cases.  Returns 0 or a negative errno (-EHOSTUNREACH: no live
 * peer; -ENETDOWN: the NI is stopping).  A message that later cannot be
 * delivered is reported with grim_ep_tx_failed().
 */
int grim_ni_send(struct grim_ni *ni, struct sk_buff *skb);

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
/* A message the endpoint sent could not be delivered; @err < 0. */
void grim_ep_tx_failed(struct sk_buff *msg, int err);

#endif /* _NET_GRIM_H */
