/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GRIM: the in-kernel endpoint API of the NI driver (drivers/net/grim).
 *
 * An endpoint is anything in the kernel that sends and receives GRIM
 * messages on a port of a network namespace: an AF_GRIM socket
 * (net/grim), and any other driver or subsystem that wants the reliable
 * in-order message path (the seed's device endpoints).  It embeds a
 * struct grim_ep, binds it to a port with grim_ep_bind(), sends with
 * grim_ni_send() and is called back through its struct grim_ep_ops.
 *
 * The NI never sees what the endpoint is, and the endpoint never sees
 * frames, sequence numbers or peers.  Dependencies point one way: users
 * of this header call the NI; the NI calls them only through their ops.
 * Documentation/networking/grim.rst ("In-kernel endpoints") has the
 * rules with an example.
 */
#ifndef _NET_GRIM_H
#define _NET_GRIM_H

#include <linux/list.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <net/net_namespace.h>

struct grim_ep;

/*
 * Per-message descriptor, in skb->cb of a message skb.
 * Transmit: @node is the destination; receive: the source.
 */
struct grim_msg_cb {
	u32 node;
	u16 src_port;
	u16 dst_port;
	u16 handler;
	u16 flags;		/* GRIM_MSG_F_* */
	u32 arg[4];
	u32 group;		/* with GRIM_MSG_F_GROUP: the group, */
	u32 ticket;		/* and the message's place in its order */
};

/* A message that came through a group (receive), or goes to one. */
#define GRIM_MSG_F_GROUP	0x0001
/* Left to the receiving endpoint, from admit() to deliver(). */
#define GRIM_MSG_F_EP		0xff00

#define GRIM_MSG_CB(skb) ((struct grim_msg_cb *)(skb)->cb)

/* An endpoint as a dump (netlink, `grim socket show`) reports it. */
struct grim_ep_info {
	u16 port;
	u16 type;		/* SOCK_* for a socket */
	u32 peer_node;		/* default destination, 0 if none */
	u16 peer_port;
	u32 rx_queue;		/* bytes queued or reserved for receive */
	u32 tx_queue;		/* bytes sent and not yet acknowledged */
	u32 rcvbuf;
	u32 sndbuf;
	u32 drops;
	u64 inode;		/* 0 for an endpoint with no inode */
	u32 uid;
};

/*
 * What the NI asks of an endpoint.  Every op is called in any context
 * (softirq included) and must not sleep.  An op may run under a lock of
 * the NI (a peer's or a stream's), so it must not call into the NI.
 */
struct grim_ep_ops {
	/*
	 * Take a reference that keeps the endpoint (and its ops) until
	 * put(); false when it is going away and takes no more messages.
	 * Called under RCU on an endpoint found bound.
	 */
	bool (*get)(struct grim_ep *ep);
	void (*put)(struct grim_ep *ep);
	/*
	 * Reserve room for a @len byte message about to be received
	 * (charged at once, so that messages in reassembly count against
	 * the endpoint's receive buffer); false when it is full: the NI
	 * then refuses the message on the wire and the sender tries again.
	 */
	bool (*reserve)(struct grim_ep *ep, unsigned int len);
	/*
	 * Optional, in place of reserve(): the same, told the message's
	 * descriptor (its source and active-message fields) and its first
	 * frame, whose data starts at the message's first byte.  Bits
	 * GRIM_MSG_F_EP of @cb->flags may be set: deliver() finds them.
	 */
	bool (*admit)(struct grim_ep *ep, struct grim_msg_cb *cb,
		      const struct sk_buff *first, unsigned int len);
	/* Give back a reservation whose message will not arrive. */
	void (*unreserve)(struct grim_ep *ep, unsigned int len);
	/*
	 * A complete message (payload only, GRIM_MSG_CB() filled), in
	 * place of the @reserved bytes reserved for it; the endpoint takes
	 * @skb.  The NI acknowledges the message once this returns: an
	 * endpoint that drops it must count the drop where its user sees.
	 */
	void (*deliver)(struct grim_ep *ep, struct sk_buff *skb,
			unsigned int reserved);
	/*
	 * A message the endpoint sent will not be delivered; @err < 0.
	 * @msg is what the endpoint gave grim_ni_send() (its headers may
	 * have been pushed and its cb reused): @cb and @len describe the
	 * message.  The endpoint takes @msg.
	 */
	void (*tx_failed)(struct grim_ep *ep, struct sk_buff *msg,
			  const struct grim_msg_cb *cb, unsigned int len,
			  int err);
	/*
	 * Whether nobody waits for the endpoint's messages any more (a
	 * closed socket): the NI then gives up a message that the
	 * receiver kept refusing for dead_ms rather than retrying it for
	 * ever.
	 */
	bool (*orphaned)(const struct grim_ep *ep);
	/* Fill @info for a dump; under RCU. */
	void (*info)(const struct grim_ep *ep, struct grim_ep_info *info);
};

/*
 * An endpoint, embedded in its owner's structure.  Only @port may be
 * read by the owner (0 until bound); the rest is the NI's.
 *
 * Lifetime: the memory of a bound endpoint is freed no sooner than an
 * RCU grace period after grim_ep_unbind(), and no sooner than the last
 * message it sent has been freed or handed back by tx_failed(): every
 * message pins its endpoint (a socket does so by charging its messages
 * to itself, skb->sk and sock_wfree()).
 */
struct grim_ep {
	const struct grim_ep_ops *ops;
	possible_net_t net;
	struct net_device *dev;		/* a link's endpoint: its grim netdev */
	u16 port;
	struct hlist_node bind_node;	/* the namespace's ports, RCU */
	struct list_head groups;	/* the groups it joined */
	u8 ngroups;
};

/* Set up @ep for @net, unbound: an endpoint of the namespace. */
void grim_ep_init(struct grim_ep *ep, const struct grim_ep_ops *ops,
		  struct net *net);
/*
 * Set up @ep as an endpoint of one link, the grim netdev @dev, unbound:
 * it binds a port from GRIM_PORT_DEV on, takes messages that come
 * through that link only, and sends through it only.  -ENODEV if @dev
 * is not a grim link.  The owner must hold @dev while @ep is bound, and
 * unbind it before the link stops (ndo_stop) or goes.
 */
int grim_ep_init_dev(struct grim_ep *ep, const struct grim_ep_ops *ops,
		     struct net_device *dev);
/*
 * Bind @ep to @port.  An endpoint of the namespace binds a port below
 * GRIM_PORT_DEV, or a free port from GRIM_PORT_EPHEMERAL on when @port
 * is 0; a link's endpoint binds a port from GRIM_PORT_DEV on.  -EINVAL
 * if it is bound already, -EADDRNOTAVAIL for a port of the other kind,
 * -EADDRINUSE if the port (or every ephemeral one) is taken.  Messages
 * for the port reach the endpoint from now on.
 */
int grim_ep_bind(struct grim_ep *ep, u16 port);
/*
 * No more messages reach @ep (ops calls for messages already taken may
 * still come, until the owner's last reference goes).  The port is free
 * again.  Safe on an unbound endpoint.
 */
void grim_ep_unbind(struct grim_ep *ep);

/*
 * Groups.  An endpoint joins group @group: from then on every message
 * sent to the group reaches it too, once, in the group's one order,
 * with GRIM_MSG_F_GROUP, the group and the ticket in its descriptor.  An
 * endpoint of a namespace joins 1..GRIM_GROUP_MAX or GRIM_GROUP_ALL, is
 * a member through every link of the namespace, and takes what the
 * namespace's endpoints sent.  A link's endpoint joins GRIM_GROUP_LINK
 * only, the link's own group, which has ports, streams and room of its
 * own; it is a member through its link only, and takes only what the
 * same port of another node sent (a device does not hear its own
 * broadcasts).  Binds the endpoint first if it is not bound.  -EINVAL
 * for an invalid id or one of the other kind,
 * -EADDRINUSE if it is a member, -ENOBUFS past GRIM_GROUPS_PER_SOCKET
 * groups or when an NI knows as many groups as it may, -ENOMEM.  An
 * endpoint of a namespace returns once an NI of the namespace is in the
 * group's tree, or after GRIM_JOIN_WAIT_MS (the join holds, and takes
 * effect when the tree comes), and sleeps; a link's endpoint does not
 * wait (its link may not be up yet: it joins once it is).  Leaving:
 * -EADDRNOTAVAIL if not a member.  Unbinding leaves every group.
 */
#define GRIM_JOIN_WAIT_MS	5000
int grim_ep_join(struct grim_ep *ep, u32 group);
int grim_ep_leave(struct grim_ep *ep, u32 group);
/*
 * Send @skb from @ep to every member of @group, through the namespace's
 * first running NI (a link's endpoint: through its link): once to the
 * root of the group's tree, which orders it.  GRIM_MSG_CB() gives the
 * active-message fields (node and dst_port are ignored).  @skb must
 * have GRIM_GROUP_HLEN bytes of headroom more
 * than grim_ni_headroom().  Errors as grim_ni_send(), and -ENETUNREACH
 * when no link is up; a message later refused is handed back to
 * tx_failed() with GRIM_MSG_F_GROUP and the group in its descriptor.
 */
int grim_ni_send_group(struct grim_ep *ep, struct sk_buff *skb, u32 group,
		       gfp_t gfp);

/* The node id of the first running NI of @net; 0 if there is none. */
u32 grim_ni_local_node(struct net *net);
/*
 * Headroom for a message skb in @net: a message that fits one frame and
 * has it in its linear part is sent without being copied.
 */
unsigned int grim_ni_headroom(struct net *net);
/*
 * Queue a message from @ep (bound) for reliable, in-order delivery to
 * GRIM_MSG_CB()->node, port GRIM_MSG_CB()->dst_port, through the NI of
 * the endpoint's namespace that reaches the node (a link's endpoint:
 * through its link); src_port is @ep's.  Frames are allocated with
 * @gfp: GFP_KERNEL may sleep, but no reference to any device is held
 * while it does, so it never delays the removal of an NI or its lower
 * device; GFP_ATOMIC serves any context.  The NI takes the skb in all
 * cases.  Returns 0 or a negative errno (-EHOSTUNREACH: no NI reaches
 * the node, or the peer is down; -ENETDOWN: the NI is stopping;
 * -EMSGSIZE: too long, or the lower device's MTU is too small;
 * -ENOBUFS: no memory; -ENOTCONN: @ep is not bound).  A message that
 * later cannot be delivered is handed back through @ep's tx_failed().
 *
 * A link's endpoint may send to GRIM_NODE_ANY: a copy goes to every peer
 * of the link that is up (0 if there was at least one).
 */
int grim_ni_send(struct grim_ep *ep, struct sk_buff *skb, gfp_t gfp);

/*
 * The NI and the AF_GRIM family are one module, grim.ko, whose entry
 * point is the family's (net/grim/af_grim.c): it brings the NI up first
 * with grim_ni_init() and takes it down last with grim_ni_exit().  The
 * NI calls nothing of the family, so either could be a module of its
 * own.
 */
int grim_ni_init(void);
void grim_ni_exit(void);

#endif /* _NET_GRIM_H */
