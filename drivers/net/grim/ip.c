// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI driver: IP over GRIM.  A grim link is an IP interface: IPv4,
 * IPv6 and ARP packets go to the destination node's NI as GRIM messages,
 * over the reliable transport, and come up the receiver's stack once its
 * NI has taken them whole.
 *
 * The link-layer address is the 4-byte node id; ff:ff:ff:ff, the
 * broadcast address, sends to every node through the link's own group
 * (GRIM_GROUP_LINK), which IP's first endpoint joins as the link comes
 * up: the NIs replicate the packet along the group's tree, and every
 * node takes the link's broadcasts in one order.  The group is the
 * link's: no socket joins it, sends to it or holds it back.  So ARP, IPv6
 * neighbour discovery and IP multicast work as on Ethernet, and lose
 * nothing.  A packet too large for a group message goes to every peer
 * that is up, a copy each.  There is no link header
 * in the packet: dev_hard_header() leaves the destination node in the
 * skb's control buffer for ndo_start_xmit.
 *
 * IP uses the link's own endpoints (include/net/grim.h), one per
 * channel, on ports GRIM_PORT_IP + N.  A flow's hash picks its channel,
 * and each channel is a stream of its own to every peer, so one flow's
 * loss recovery or slow receiver holds up only the flows of its channel.
 * The message's active-message handler field carries the EtherType.
 */
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/dst.h>
#include <net/neighbour.h>
#include <net/pkt_sched.h>

#include "grim.h"

/* In a message's first argument word: it went to every node; its
 * transport checksum is still to fill in, at the place the second word
 * gives (start << 16 | offset from start), as CHECKSUM_PARTIAL says.
 */
#define GRIM_IP_F_BCAST		0x1
#define GRIM_IP_F_CSUM		0x2

/* Where dev_hard_header() leaves the destination node for the xmit:
 * past what the core and tc keep in skb->cb on the way down.
 */
struct grim_ip_txcb {
	u8 core[44];
	__be32 dst;
};

static_assert(sizeof(struct tc_skb_cb) <= offsetof(struct grim_ip_txcb, dst));
static_assert(sizeof(struct grim_ip_txcb) <= sizeof_field(struct sk_buff, cb));

#define GRIM_IP_TXCB(skb) ((struct grim_ip_txcb *)(skb)->cb)

/* On the receive queue: the room the message reserved. */
struct grim_ip_rxcb {
	unsigned int charge;
};

#define GRIM_IP_RXCB(skb) ((struct grim_ip_rxcb *)(skb)->cb)

static int grim_ip_header_create(struct sk_buff *skb, struct net_device *dev,
				 unsigned short type, const void *daddr,
				 const void *saddr, unsigned int len)
{
	if (!daddr)
		return -EINVAL;
	memcpy(&GRIM_IP_TXCB(skb)->dst, daddr, sizeof(__be32));
	return 0;
}

/* No parse: the header is not in the packet, so a packet socket is
 * not told the source node.
 */
static const struct header_ops grim_ip_header_ops = {
	.create	= grim_ip_header_create,
};

static bool grim_ip_proto_ok(u16 proto)
{
	return proto == ETH_P_IP || proto == ETH_P_IPV6 || proto == ETH_P_ARP;
}

/* The node @skb goes to.  An IP packet's is its neighbour's address:
 * what dev_hard_header() left in skb->cb does not survive the core's
 * GSO segmentation (SKB_GSO_CB is there too), which TCP's packets may go
 * through on the way here.  Other packets (ARP, a packet socket's) are
 * never segmented, and their cb holds.
 */
static u32 grim_ip_dst_node(struct sk_buff *skb)
{
	struct dst_entry *dst = skb_dst(skb);
	struct neighbour *n;
	__be32 ha;

	if (!dst || (skb->protocol != htons(ETH_P_IP) &&
		     skb->protocol != htons(ETH_P_IPV6)))
		return be32_to_cpu(GRIM_IP_TXCB(skb)->dst);
	n = dst_neigh_lookup_skb(dst, skb);
	if (!n)
		return 0;
	neigh_ha_snapshot((char *)&ha, n, skb->dev);
	neigh_release(n);
	return be32_to_cpu(ha);
}

/* A packet of no socket leaves the NI (acknowledged, or failed). The
 * NI sends clones and copies of what it keeps, and never the packet
 * itself: its dev is still the link's.
 */
static void grim_ip_tx_done(struct sk_buff *skb)
{
	struct grim_ni *ni = netdev_priv(skb->dev);

	atomic_dec(&ni->ip.tx_unowned);
}

/* The NI keeps a packet until the peer has it.  A socket's packets are
 * bounded by its send buffer (TCP's small queues, UDP's sndbuf); a
 * packet of no socket (forwarded, or the kernel's own) by the link's
 * txqueuelen, for all of them at once.  Over it the packet is dropped,
 * as a full queue would drop it.
 */
static bool grim_ip_tx_charge(struct grim_ip *ip, struct sk_buff *skb)
{
	if (skb->sk || skb->destructor)
		return true;
	if (atomic_inc_return(&ip->tx_unowned) >
	    READ_ONCE(ip->dev->tx_queue_len)) {
		atomic_dec(&ip->tx_unowned);
		return false;
	}
	skb->destructor = grim_ip_tx_done;
	return true;
}

/* Whether the NI covers every byte of what it sends: CRC32C, the lower
 * link's sum (datacrc offload) or a key's tag.  With datacrc off and no
 * key only the headers are, and the packet's own checksum must be there.
 */
static bool grim_ip_payload_covered(const struct grim_ni *ni)
{
	return READ_ONCE(ni->data_crc) != GRIM_DATA_CRC_OFF ||
	       grim_ni_keyed(ni);
}

/* Make @skb fit to be kept by the NI.  The NI shares the packet's pages
 * with the frames it sends and sums them once, for every resend: pages
 * that someone else may still write (sendfile's page cache, a
 * MSG_ZEROCOPY user buffer) are copied first, as a device without
 * scatter-gather would have had them copied.  A transport checksum left
 * to fill either travels as such, or is filled in here when nothing
 * else would protect the payload.
 */
static int grim_ip_tx_prepare(struct grim_ni *ni, struct sk_buff *skb,
			      struct grim_msg_cb *cb)
{
	if (skb_orphan_frags_rx(skb, GFP_ATOMIC))
		return -ENOMEM;
	if (skb_has_shared_frag(skb)) {
		if (skb_copy_ubufs(skb, GFP_ATOMIC))
			return -ENOMEM;
		skb_shinfo(skb)->flags &= ~SKBFL_SHARED_FRAG;
	}
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return 0;
	if (!grim_ip_payload_covered(ni))
		return skb_checksum_help(skb);
	cb->arg[0] |= GRIM_IP_F_CSUM;
	cb->arg[1] = (u32)skb_checksum_start_offset(skb) << 16 |
		     skb->csum_offset;
	return 0;
}

netdev_tx_t grim_ip_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);
	struct grim_ip *ip = &ni->ip;
	struct grim_msg_cb *cb;
	unsigned int ch = 0;
	u32 node;

	node = grim_ip_dst_node(skb);
	if (!READ_ONCE(ip->up) || !node || node == ni->node ||
	    !grim_ip_proto_ok(ntohs(skb->protocol)))
		goto drop;
	/* A hash of the headers, not the socket's: TCP draws a new one
	 * after a timeout, and a flow that changed channels would reorder.
	 */
	if (node != GRIM_NODE_ANY)
		ch = reciprocal_scale(__skb_get_hash_symmetric(skb),
				      READ_ONCE(ip->nchan));
	/* The NI may keep the packet until it is acknowledged: not its
	 * route or its connection tracking.
	 */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	if (!grim_ip_tx_charge(ip, skb))
		goto drop;
	cb = GRIM_MSG_CB(skb);
	memset(cb, 0, sizeof(*cb));
	cb->node = node;
	cb->dst_port = GRIM_PORT_IP + ch;
	cb->handler = ntohs(skb->protocol);
	if (node == GRIM_NODE_ANY)
		cb->arg[0] = GRIM_IP_F_BCAST;
	if (grim_ip_tx_prepare(ni, skb, cb))
		goto drop;
	if (node == GRIM_NODE_ANY && skb->len <= GRIM_GROUP_MAX_PAYLOAD) {
		if (grim_ni_send_group(&ip->chan[0].ep, skb, GRIM_GROUP_LINK,
				       GFP_ATOMIC))
			dev_core_stats_tx_dropped_inc(dev);
		return NETDEV_TX_OK;
	}
	if (grim_ni_send(&ip->chan[ch].ep, skb, GFP_ATOMIC))
		dev_core_stats_tx_dropped_inc(dev);
	return NETDEV_TX_OK;

drop:
	dev_core_stats_tx_dropped_inc(dev);
	kfree_skb(skb);
	return NETDEV_TX_OK;
}

static struct grim_ip *grim_ip_of(const struct grim_ep *ep)
{
	const struct grim_ip_chan *c = container_of(ep, struct grim_ip_chan, ep);

	return c->ip;
}

/* The endpoints live in the link's netdev, which outlives every
 * message of theirs (the NI stops before the netdev goes): while the
 * link runs IP, they take messages.
 */
static bool grim_ip_get(struct grim_ep *ep)
{
	return READ_ONCE(grim_ip_of(ep)->up);
}

static void grim_ip_put(struct grim_ep *ep)
{
}

/* Room on the receive queue, which NAPI drains into the stack.  A full
 * queue refuses the message on the wire (NACK): the sender keeps it and
 * tries again, so nothing the NI acknowledged is dropped for want of
 * room.
 */
static bool grim_ip_reserve(struct grim_ep *ep, unsigned int len)
{
	struct grim_ip *ip = grim_ip_of(ep);
	int now = atomic_read(&ip->rx_bytes);

	if (now && now + len > GRIM_IP_RXQ_BYTES)
		return false;
	atomic_add(len, &ip->rx_bytes);
	return true;
}

static void grim_ip_unreserve(struct grim_ep *ep, unsigned int len)
{
	atomic_sub(len, &grim_ip_of(ep)->rx_bytes);
}

/* A packet whose transport checksum the sender left to fill: the NI
 * checked its bytes, so it goes up as CHECKSUM_PARTIAL, as over veth, and
 * a router fills the sum in on the way out.  The place must lie in the
 * packet, past the IP header.
 */
static bool grim_ip_rx_csum(struct sk_buff *skb, u16 proto, u32 where)
{
	unsigned int start = where >> 16, off = where & 0xffff;
	unsigned int min = proto == ETH_P_IP ? sizeof(struct iphdr) :
			   proto == ETH_P_IPV6 ? sizeof(struct ipv6hdr) : 0;

	if (!min || start < min || start + off + sizeof(__sum16) > skb->len ||
	    skb_headroom(skb) + start > U16_MAX ||
	    !pskb_may_pull(skb, start + off + sizeof(__sum16)))
		return false;
	return skb_partial_csum_set(skb, start, off);
}

static void grim_ip_deliver(struct grim_ep *ep, struct sk_buff *skb,
			    unsigned int reserved)
{
	struct grim_ip *ip = grim_ip_of(ep);
	const struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct net_device *dev = ip->dev;
	bool bcast = cb->arg[0] & GRIM_IP_F_BCAST;
	u16 proto = cb->handler;

	if (!READ_ONCE(ip->up) || !grim_ip_proto_ok(proto) || !skb->len)
		goto drop;
	skb->ip_summed = CHECKSUM_NONE;
	if ((cb->arg[0] & GRIM_IP_F_CSUM) &&
	    !grim_ip_rx_csum(skb, proto, cb->arg[1]))
		goto drop;
	skb->dev = dev;
	skb->protocol = htons(proto);
	skb->pkt_type = bcast ? PACKET_BROADCAST : PACKET_HOST;
	skb_reset_mac_header(skb);
	skb_reset_network_header(skb);
	skb->mac_len = 0;
	GRIM_IP_RXCB(skb)->charge = reserved;
	skb_queue_tail(&ip->rxq, skb);
	napi_schedule(&ip->napi);
	return;

drop:
	atomic_sub(reserved, &ip->rx_bytes);
	dev_core_stats_rx_dropped_inc(dev);
	kfree_skb(skb);
}

static void grim_ip_tx_failed(struct grim_ep *ep, struct sk_buff *msg,
			      const struct grim_msg_cb *cb, unsigned int len,
			      int err)
{
	dev_core_stats_tx_dropped_inc(grim_ip_of(ep)->dev);
	kfree_skb(msg);
}

/* Once IP is down on the link nobody waits for its packets. */
static bool grim_ip_orphaned(const struct grim_ep *ep)
{
	return !READ_ONCE(grim_ip_of(ep)->up);
}

static void grim_ip_info(const struct grim_ep *ep, struct grim_ep_info *info)
{
	info->rx_queue = atomic_read(&grim_ip_of(ep)->rx_bytes);
}

static const struct grim_ep_ops grim_ip_ep_ops = {
	.get		= grim_ip_get,
	.put		= grim_ip_put,
	.reserve	= grim_ip_reserve,
	.unreserve	= grim_ip_unreserve,
	.deliver	= grim_ip_deliver,
	.tx_failed	= grim_ip_tx_failed,
	.orphaned	= grim_ip_orphaned,
	.info		= grim_ip_info,
};

static int grim_ip_poll(struct napi_struct *napi, int budget)
{
	struct grim_ip *ip = container_of(napi, struct grim_ip, napi);
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = skb_dequeue(&ip->rxq))) {
		atomic_sub(GRIM_IP_RXCB(skb)->charge, &ip->rx_bytes);
		memset(skb->cb, 0, sizeof(skb->cb));
		netif_receive_skb(skb);
		done++;
	}
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

/* The netdev is set up (ndo_init): the channels' endpoints and NAPI. */
int grim_ip_init(struct grim_ni *ni)
{
	struct grim_ip *ip = &ni->ip;
	int i, err;

	ip->dev = ni->dev;
	ip->nchan = GRIM_IP_CHANNELS_DEF;
	skb_queue_head_init(&ip->rxq);
	for (i = 0; i < GRIM_IP_CHANNELS_MAX; i++) {
		ip->chan[i].ip = ip;
		err = grim_ep_init_dev(&ip->chan[i].ep, &grim_ip_ep_ops,
				       ni->dev);
		if (err)
			return err;
	}
	netif_napi_add(ni->dev, &ip->napi, grim_ip_poll);
	return 0;
}

/* The link comes up, its NI running: bind every channel; the first
 * joins the link's own group.
 */
int grim_ip_open(struct grim_ni *ni)
{
	struct grim_ip *ip = &ni->ip;
	int i, err;

	for (i = 0; i < GRIM_IP_CHANNELS_MAX; i++) {
		err = grim_ep_bind(&ip->chan[i].ep, GRIM_PORT_IP + i);
		if (err)
			goto unbind;
	}
	err = grim_ep_join(&ip->chan[0].ep, GRIM_GROUP_LINK);
	if (err)
		goto unbind;
	napi_enable(&ip->napi);
	WRITE_ONCE(ip->up, true);
	return 0;

unbind:
	while (i--)
		grim_ep_unbind(&ip->chan[i].ep);
	return err;
}

/* The link goes down: no more messages for IP.  Before the NI stops,
 * which fails what IP still has in flight.
 */
void grim_ip_stop(struct grim_ni *ni)
{
	struct grim_ip *ip = &ni->ip;
	int i;

	WRITE_ONCE(ip->up, false);
	for (i = 0; i < GRIM_IP_CHANNELS_MAX; i++)
		grim_ep_unbind(&ip->chan[i].ep);
}

/* After the NI stopped: nothing delivers any more. */
void grim_ip_drain(struct grim_ni *ni)
{
	struct grim_ip *ip = &ni->ip;
	struct sk_buff *skb;

	napi_disable(&ip->napi);
	while ((skb = skb_dequeue(&ip->rxq))) {
		atomic_sub(GRIM_IP_RXCB(skb)->charge, &ip->rx_bytes);
		dev_core_stats_rx_dropped_inc(ip->dev);
		kfree_skb(skb);
	}
}

void grim_ip_setup(struct net_device *dev)
{
	dev->header_ops = &grim_ip_header_ops;
	dev->flags = IFF_BROADCAST | IFF_MULTICAST;
	/* The NI takes a packet's pages as they are and covers its bytes
	 * (see grim_ip_tx_prepare()).  Off until ethtool -K turns them on:
	 * TCP, faster with them, then probes its tail (TLP) sooner than the
	 * NI has recovered a lost frame, and resends what was not lost.
	 */
	dev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_HIGHDMA;
	dev->features |= NETIF_F_HIGHDMA;
	/* ndo_start_xmit reads the packet's neighbour through its route */
	netif_keep_dst(dev);
}
