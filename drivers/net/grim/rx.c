// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: the receiving side of the reliable transport.
 *
 * Each stream accepts exactly the next frame in sequence; anything else
 * is a duplicate (re-ACKed, so lost ACKs heal) or out of order (dropped,
 * answered with a duplicate ACK so the sender retransmits early).
 *
 * When the first frame of a message arrives, the destination endpoint
 * must have room for the whole message; if it has not, the frame is
 * NACKed and the stream refuses everything until that frame comes back.
 * Frames are ACKed only once they are in the endpoint's queue or in a
 * reassembly the endpoint made room for: an ACK is never taken back.
 */
#include <linux/hash.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

#include "grim.h"

static struct grim_rxs *grim_rxs_get(struct grim_peer *peer, u16 src_chan,
				     u16 dst_chan)
{
	u32 key = hash_32(((u32)src_chan << 16) | dst_chan,
			  GRIM_STREAM_HASH_BITS);
	struct grim_rxs *rxs;

	hlist_for_each_entry(rxs, &peer->rxs[key], link) {
		if (rxs->src_chan == src_chan && rxs->dst_chan == dst_chan)
			return rxs;
	}
	if (peer->nrx >= GRIM_MAX_STREAMS)
		return NULL;
	rxs = kzalloc(sizeof(*rxs), GFP_ATOMIC);
	if (!rxs)
		return NULL;
	rxs->src_chan = src_chan;
	rxs->dst_chan = dst_chan;
	hlist_add_head(&rxs->link, &peer->rxs[key]);
	peer->nrx++;
	return rxs;
}

static void grim_rxs_abort(struct grim_rxs *rxs)
{
	kfree_skb(rxs->reasm);
	rxs->reasm = NULL;
	rxs->reasm_tail = NULL;
	if (rxs->ep)
		grim_ep_put(rxs->ep);
	rxs->ep = NULL;
	rxs->reasm_want = 0;
	rxs->reasm_got = 0;
	rxs->discard = false;
}

void grim_rxs_reset(struct grim_rxs *rxs)
{
	grim_rxs_abort(rxs);
	rxs->rcv_nxt = 0;
	rxs->refused = false;
	rxs->unacked = 0;
}

/* ACK or NACK @seq of stream @rxs.  Peer lock held. */
static void grim_send_ctl(struct grim_ni *ni, struct grim_peer *peer,
			  struct grim_rxs *rxs, u8 type, u32 seq)
{
	struct grim_ctl_msg *cm;
	struct sk_buff *skb;

	skb = grim_ctl_alloc(ni, GRIM_CTL_LEN);
	if (!skb)
		return;
	grim_link_hdr_init(ni, peer, skb_put(skb, GRIM_LINK_HLEN), type, 0, 0);
	cm = skb_put(skb, sizeof(*cm));
	/* Channels from the sender of this control message's side. */
	cm->src_chan = htons(rxs->dst_chan);
	cm->dst_chan = htons(rxs->src_chan);
	cm->seq = htonl(seq);
	grim_frame_finish(skb);
	grim_count(ni, peer, type == GRIM_FT_ACK ? GRIM_STAT_TX_ACKS :
						   GRIM_STAT_TX_NACKS);
	grim_xmit(ni, peer, skb);
	if (type == GRIM_FT_ACK)
		rxs->unacked = 0;
}

static void grim_rx_deliver(struct grim_ni *ni, struct grim_peer *peer,
			    struct grim_ep *ep, struct sk_buff *skb)
{
	grim_count(ni, peer, GRIM_STAT_RX_MSGS);
	grim_count_add(ni, peer, GRIM_STAT_RX_BYTES, skb->len);
	grim_ep_deliver(ep, skb);
	grim_ep_put(ep);
}

/*
 * The first frame of a message, in sequence.  Returns 0 when the frame
 * was taken (the stream advances), or a stat to count and drop it by.
 */
static int grim_rx_first(struct grim_ni *ni, struct grim_peer *peer,
			 struct grim_rxs *rxs, struct sk_buff *skb, u32 seq,
			 bool last)
{
	const struct grim_frag_hdr *fh;
	const struct grim_msg_hdr *mh;
	struct grim_msg_cb *cb;
	u32 w1, w2, w3, words, len, plen;
	struct grim_ep *ep;
	int i;

	if (rxs->reasm || rxs->ep)
		return GRIM_STAT_DROP_FRAG;
	if (!pskb_may_pull(skb, GRIM_DATA_HLEN + GRIM_MSG_HLEN))
		return GRIM_STAT_DROP_SHORT;
	fh = (const struct grim_frag_hdr *)(skb->data + GRIM_CTL_LEN);
	mh = (const struct grim_msg_hdr *)(skb->data + GRIM_DATA_HLEN);
	w1 = ntohl(mh->w1);
	w2 = ntohl(mh->w2);
	w3 = ntohl(mh->w3);
	words = w2 >> 16;
	len = words * 4 - ((w1 >> 24) & 3);
	plen = skb->len - GRIM_DATA_HLEN - GRIM_MSG_HLEN;
	if (ntohl(mh->w0) >> 16 != GRIM_ID || w1 >> 26 != GRIM_MT_AM ||
	    (!words && (w1 >> 24) & 3) || len > GRIM_MAX_PAYLOAD ||
	    (w2 & 0xffff) != rxs->dst_chan || (w1 & 0xffff) != rxs->src_chan ||
	    fh->offset || plen > len || (last && plen != len))
		return GRIM_STAT_DROP_MSG;

	ep = grim_ep_get(dev_net(ni->dev), rxs->dst_chan);
	if (!ep) {
		/* Nobody listens: the message is consumed, and counted. */
		grim_count(ni, peer, GRIM_STAT_DROP_NO_EP);
		if (!last) {
			rxs->reasm_want = len;
			rxs->reasm_got = plen;
			rxs->discard = true;
		}
		kfree_skb(skb);
		return 0;
	}
	if (!grim_ep_has_room(ep, len)) {
		grim_ep_put(ep);
		rxs->refused = true;
		grim_send_ctl(ni, peer, rxs, GRIM_FT_NACK, seq);
		return GRIM_STAT_DROP_REFUSED;
	}
	rxs->refused = false;

	skb_pull(skb, GRIM_DATA_HLEN + GRIM_MSG_HLEN);
	cb = GRIM_MSG_CB(skb);
	cb->node = peer->node;
	cb->src_port = rxs->src_chan;
	cb->dst_port = rxs->dst_chan;
	cb->handler = w3 & 0xffff;
	cb->flags = 0;
	for (i = 0; i < 4; i++)
		cb->arg[i] = ntohl(mh->arg[i]);

	if (last) {
		grim_rx_deliver(ni, peer, ep, skb);
		return 0;
	}
	/*
	 * Frames may share their data with the sender's copy, so they are
	 * chained under a head of our own rather than onto each other.
	 */
	rxs->reasm = alloc_skb(0, GFP_ATOMIC);
	if (!rxs->reasm) {
		grim_ep_put(ep);
		skb_push(skb, GRIM_DATA_HLEN + GRIM_MSG_HLEN);
		return GRIM_STAT_DROP_NOMEM;
	}
	memcpy(rxs->reasm->cb, skb->cb, sizeof(struct grim_msg_cb));
	rxs->ep = ep;
	rxs->reasm_want = len;
	rxs->reasm_got = 0;
	rxs->reasm_tail = NULL;
	return -1;	/* caller appends the frame */
}

static void grim_rx_append(struct grim_rxs *rxs, struct sk_buff *skb)
{
	struct sk_buff *head = rxs->reasm;

	if (rxs->reasm_tail)
		rxs->reasm_tail->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	rxs->reasm_tail = skb;
	skb->next = NULL;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	rxs->reasm_got += skb->len;
}

/* A DATA frame whose session checked out.  Peer lock held; consumes skb. */
void grim_rx_data(struct grim_ni *ni, struct grim_peer *peer,
		  struct sk_buff *skb)
{
	const struct grim_link_hdr *lh;
	const struct grim_frag_hdr *fh;
	const struct grim_ctl_msg *cm;
	bool first, last;
	struct grim_rxs *rxs;
	u32 seq, plen;
	int stat;

	if (!pskb_may_pull(skb, GRIM_DATA_HLEN)) {
		stat = GRIM_STAT_DROP_SHORT;
		goto drop;
	}
	lh = (const struct grim_link_hdr *)skb->data;
	cm = (const struct grim_ctl_msg *)(lh + 1);
	fh = (const struct grim_frag_hdr *)(cm + 1);
	first = lh->flags & GRIM_FF_FIRST;
	last = lh->flags & GRIM_FF_LAST;
	seq = ntohl(cm->seq);

	rxs = grim_rxs_get(peer, ntohs(cm->src_chan), ntohs(cm->dst_chan));
	if (!rxs) {
		stat = GRIM_STAT_DROP_LIMIT;
		goto drop;
	}
	if (seq != rxs->rcv_nxt) {
		if (grim_seq_before(seq, rxs->rcv_nxt)) {
			stat = GRIM_STAT_DUP_FRAMES;
		} else if (rxs->refused) {
			stat = GRIM_STAT_DROP_REFUSED;
			goto drop;
		} else {
			stat = GRIM_STAT_OOO_FRAMES;
		}
		grim_send_ctl(ni, peer, rxs, GRIM_FT_ACK, rxs->rcv_nxt);
		goto drop;
	}

	if (first) {
		stat = grim_rx_first(ni, peer, rxs, skb, seq, last);
		if (stat > 0)
			goto drop;
		if (stat < 0)
			grim_rx_append(rxs, skb);
	} else {
		plen = skb->len - GRIM_DATA_HLEN;
		if ((!rxs->reasm && !rxs->discard) ||
		    ntohs(fh->offset) != rxs->reasm_got ||
		    rxs->reasm_got + plen > rxs->reasm_want ||
		    (last && rxs->reasm_got + plen != rxs->reasm_want)) {
			stat = GRIM_STAT_DROP_FRAG;
			goto drop;
		}
		if (rxs->discard) {
			rxs->reasm_got += plen;
			kfree_skb(skb);
		} else {
			skb_pull(skb, GRIM_DATA_HLEN);
			grim_rx_append(rxs, skb);
		}
		if (last) {
			if (rxs->reasm)
				grim_rx_deliver(ni, peer, rxs->ep, rxs->reasm);
			rxs->reasm = NULL;
			rxs->reasm_tail = NULL;
			rxs->ep = NULL;
			rxs->discard = false;
		}
	}

	rxs->rcv_nxt++;
	if (last || ++rxs->unacked >= GRIM_ACK_EVERY)
		grim_send_ctl(ni, peer, rxs, GRIM_FT_ACK, rxs->rcv_nxt);
	return;

drop:
	grim_count(ni, peer, stat);
	kfree_skb(skb);
}
