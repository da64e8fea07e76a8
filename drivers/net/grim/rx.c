// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: the receiving side of the reliable transport.
 *
 * Each stream accepts exactly the next frame in sequence; anything else
 * is a duplicate (re-ACKed, so lost ACKs heal) or out of order (dropped,
 * answered with a duplicate ACK so the sender retransmits early).
 *
 * Frames ahead of a gap wait in a small per-stream queue until the gap
 * is filled, so that go-back-N costs little more than the lost frame.
 *
 * When the first frame of a message arrives, the destination endpoint
 * must have room for the whole message; if it has not, the frame is
 * NACKed and the stream refuses everything until that frame comes back.
 * Frames are ACKed only once they are in the endpoint's queue or in a
 * reassembly the endpoint made room for: an ACK is never taken back.
 *
 * A message that cannot be delivered (no endpoint is bound to its port,
 * or its reassembly was given up and its room given back: its stream
 * silent for GRIM_REASM_PATIENCE times dead_ms with no answer to the
 * receiver's queries) is consumed frame by frame up to its last frame,
 * which is not taken: a REJECT names it instead, and the sender fails
 * that message and goes on with the next frame flagged GRIM_XF_SKIP.
 * So the last frame of a message is ACKed only when the message was
 * delivered.  The ACK of a completed message waits GRIM_ACK_DELAY for a
 * data frame going back on the reverse stream to carry it; every
 * GRIM_ACK_EVERY frames, on a closed gap, on duplicates and when the
 * sender asks (its window is full) it goes at once.
 *
 * Locking.  The peer lock covers which receive streams there are (the
 * table, the peer's list, the incarnations seen) and the admission of a
 * frame: its session and, with a key, its replay window.  A stream's own
 * state is its lock's, rxs->lock, which the receive path takes only
 * under the peer lock.  A DATA frame is admitted and its stream found
 * under the peer lock; the frame's work then goes on under the stream's
 * lock alone, so that two CPUs take frames of two streams of one peer at
 * once.  Whoever frees a stream holds the peer lock and takes the
 * stream's lock first: that waits out a frame still at work, and no
 * other can start.  A sender that puts the stream's ACK on a frame of the
 * reverse stream takes the lock under its own send stream's, with no
 * peer lock; it finds the stream under RCU, and marked dead if it was
 * freed meanwhile (grim_frame_ack() in tx.c).  Frames
 * made under the stream's lock wait on its xmitq until it is released.
 * The streams owing a delayed ACK are on the peer's ack_list, under
 * ack_lock, a leaf.
 */
#include <linux/bitmap.h>
#include <linux/netdevice.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>

#include "grim.h"
#include "trace.h"

#define GRIM_RX_SEQ(skb) (*(u32 *)(skb)->cb)

static_assert(offsetof(struct grim_rxs, src_chan) ==
	      offsetof(struct grim_rxs, node) + offsetof(struct grim_skey, src_chan));
static_assert(offsetof(struct grim_rxs, dst_chan) ==
	      offsetof(struct grim_rxs, node) + offsetof(struct grim_skey, dst_chan));

const struct rhashtable_params grim_rxs_params = {
	.key_len = sizeof(struct grim_skey),
	.key_offset = offsetof(struct grim_rxs, node),
	.head_offset = offsetof(struct grim_rxs, hnode),
	/* Grown by a worker: a burst of new streams (a server's clients
	 * all at once) must not outrun it, or insertions fail.
	 */
	.min_size = GRIM_STREAM_TABLE_MIN,
	.automatic_shrinking = true,
};

/* The receive stream @src_chan (the peer's) to @dst_chan (ours), if this
 * NI holds one.  Peer lock or RCU held.
 */
struct grim_rxs *grim_rxs_find(struct grim_peer *peer, u16 src_chan,
			       u16 dst_chan)
{
	struct grim_skey key = {
		.node = peer->node, .src_chan = src_chan, .dst_chan = dst_chan,
	};
	struct grim_rxs *rxs;

	rxs = rhashtable_lookup_fast(&peer->ni->rxs_ht, &key, grim_rxs_params);
	return rxs && rxs->peer == peer ? rxs : NULL;
}

/* Incarnations.  A receiver takes each incarnation of a peer's streams
 * at most once in a session.  It remembers the newest one it saw and,
 * of the GRIM_INC_WINDOW before it, which it saw; anything older counts
 * as seen.  A frame of an incarnation seen before, whose stream is gone,
 * is stale: it can neither make state nor reach a newer incarnation of
 * the same channels, whatever its sequence number.
 */
static bool grim_inc_fresh(const struct grim_peer *peer, u32 inc)
{
	u32 back;

	if (!inc)
		return false;
	if (!peer->rx_inc_max || grim_seq_after(inc, peer->rx_inc_max))
		return true;
	back = peer->rx_inc_max - inc;
	return back < GRIM_INC_WINDOW && !test_bit(back, peer->rx_inc_seen);
}

/* Record @inc as seen, for good.  Peer lock held. */
static void grim_inc_burn(struct grim_peer *peer, u32 inc)
{
	u32 shift;

	if (!peer->rx_inc_max || grim_seq_after(inc, peer->rx_inc_max)) {
		shift = peer->rx_inc_max ? inc - peer->rx_inc_max :
					   GRIM_INC_WINDOW;
		if (shift >= GRIM_INC_WINDOW)
			bitmap_zero(peer->rx_inc_seen, GRIM_INC_WINDOW);
		else
			bitmap_shift_left(peer->rx_inc_seen, peer->rx_inc_seen,
					  shift, GRIM_INC_WINDOW);
		peer->rx_inc_max = inc;
		__set_bit(0, peer->rx_inc_seen);
		return;
	}
	if (peer->rx_inc_max - inc < GRIM_INC_WINDOW)
		__set_bit(peer->rx_inc_max - inc, peer->rx_inc_seen);
}

/* A new session: incarnations start over.  Peer lock held. */
void grim_peer_inc_reset(struct grim_peer *peer)
{
	peer->rx_inc_max = 0;
	bitmap_zero(peer->rx_inc_seen, GRIM_INC_WINDOW);
}

static void grim_rxs_purge_ooo(struct grim_rxs *rxs);
static void grim_rxs_idle(struct grim_rxs *rxs);

/* Queue a frame made under the stream's lock. */
static void grim_rxs_xmit(struct grim_rxs *rxs, struct sk_buff *skb)
{
	lockdep_assert_held(&rxs->lock);
	__skb_queue_tail(&rxs->xmitq, skb);
}

/* Release the lock of a stream, the peer lock still held: its frames go
 * with the peer's.
 */
static void grim_rxs_unlock_nested(struct grim_rxs *rxs)
	__releases(&rxs->lock)
{
	lockdep_assert_held(&rxs->peer->lock);
	skb_queue_splice_tail_init(&rxs->xmitq, &rxs->peer->xmitq);
	spin_unlock(&rxs->lock);
}

/* Release the lock of a stream whose peer lock was released before, and
 * send its frames.  The peer outlives this: the receive path holds RCU.
 */
static void grim_rxs_unlock(struct grim_rxs *rxs)
	__releases(&rxs->lock)
{
	struct grim_peer *peer = rxs->peer;
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	skb_queue_splice_init(&rxs->xmitq, &q);
	spin_unlock(&rxs->lock);
	grim_xmit_queue(peer->ni, peer, &q);
}

static void grim_rxs_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(grim_rxs_cache, container_of(head, struct grim_rxs,
						     rcu));
}

/* Forget a receive stream.  Peer lock held, not the stream's: its
 * taking waits out a frame at work on the stream.
 */
void grim_rxs_free(struct grim_rxs *rxs)
{
	struct grim_peer *peer = rxs->peer;
	struct grim_ni *ni = peer->ni;

	spin_lock(&rxs->lock);
	rxs->dead = true;
	grim_rxs_idle(rxs);
	grim_rxs_purge_ooo(rxs);
	grim_rxs_acked(rxs);
	grim_rxs_unlock_nested(rxs);
	rhashtable_remove_fast(&ni->rxs_ht, &rxs->hnode, grim_rxs_params);
	list_del(&rxs->plink);
	peer->nrx--;
	atomic_dec(&ni->nrxs);
	grim_count(ni, NULL, GRIM_STAT_RX_STREAMS_CLOSED);
	call_rcu(&rxs->rcu, grim_rxs_free_rcu);
}

/* A stream for incarnation @inc, in place of none.  NULL when the NI has
 * no room for it (or the peer has its share), an error pointer when the
 * table could not take it for now.  Peer lock held.
 */
static struct grim_rxs *grim_rxs_new(struct grim_peer *peer, u16 src_chan,
				     u16 dst_chan, u32 inc)
{
	struct grim_ni *ni = peer->ni;
	struct grim_rxs *rxs;

	if (peer->dead || peer->nrx >= GRIM_MAX_PEER_RXS)
		return NULL;
	if (atomic_inc_return(&ni->nrxs) > GRIM_MAX_NI_RXS)
		goto full;
	rxs = kmem_cache_zalloc(grim_rxs_cache, GFP_ATOMIC);
	if (!rxs)
		goto full;
	rxs->peer = peer;
	rxs->node = peer->node;
	rxs->src_chan = src_chan;
	rxs->dst_chan = dst_chan;
	rxs->inc = inc;
	spin_lock_init(&rxs->lock);
	__skb_queue_head_init(&rxs->xmitq);
	rxs->last_rx = jiffies;
	__skb_queue_head_init(&rxs->ooo);
	INIT_LIST_HEAD(&rxs->ack_link);
	if (rhashtable_lookup_insert_fast(&ni->rxs_ht, &rxs->hnode,
					  grim_rxs_params)) {
		kmem_cache_free(grim_rxs_cache, rxs);
		atomic_dec(&ni->nrxs);
		return ERR_PTR(-EBUSY);
	}
	list_add_tail(&rxs->plink, &peer->rxs_list);
	peer->nrx++;
	grim_count(ni, NULL, GRIM_STAT_RX_STREAMS_OPENED);
	return rxs;
full:
	atomic_dec(&ni->nrxs);
	return NULL;
}

/* A stateless REJECT of the whole incarnation of the stream @cm is
 * about, with @reason (include/uapi/linux/grim.h).  Peer lock held.
 */
static void grim_send_stream_reject(struct grim_ni *ni, struct grim_peer *peer,
				    const struct grim_ctl_msg *cm, u16 reason)
{
	struct grim_reject *r;
	struct sk_buff *skb;

	skb = grim_ctl_frame(ni, peer, GRIM_FT_REJECT, 0, ntohs(cm->dst_chan),
			     ntohs(cm->src_chan), ntohl(cm->seq),
			     ntohl(cm->inc), sizeof(*r));
	if (!skb)
		return;
	r = skb_put(skb, sizeof(*r));
	r->reason = htons(reason);
	r->reserved = 0;
	/* With STALE, the newest incarnation seen: the sender's next one
	 * must be past it to be taken.
	 */
	r->from = reason == GRIM_REJ_STALE ? htonl(peer->rx_inc_max) : cm->seq;
	grim_frame_finish(skb);
	grim_count(ni, peer, GRIM_STAT_TX_REJECTS);
	grim_count(ni, peer, GRIM_STAT_STREAM_REJECTS);
	grim_peer_xmit(peer, skb);
}

/* Whether @rxs may give way to a newer incarnation of its channels.
 * Its sender has moved on only after closing it for dead_ms without an
 * answer: by then no frame of it has come for that long, and none will.
 * A frame that merely claims a new incarnation cannot push a stream in
 * use aside.
 */
static bool grim_rxs_quiet(const struct grim_rxs *rxs)
{
	return time_after(jiffies, READ_ONCE(rxs->last_rx) +
			  msecs_to_jiffies(READ_ONCE(rxs->peer->ni->dead_ms)));
}

static void grim_send_ctl_x(struct grim_ni *ni, struct grim_peer *peer,
			    struct grim_rxs *rxs, u8 type, u32 seq, u8 xflags);

/* Ask @rxs's sender whether it still has the frame the stream waits for:
 * an ACK of what arrived, flagged GRIM_XF_QUERY.  Stream lock held.
 */
static void grim_rxs_query(struct grim_rxs *rxs)
{
	struct grim_peer *peer = rxs->peer;

	grim_count(peer->ni, peer, GRIM_STAT_STREAM_QUERIES);
	grim_send_ctl_x(peer->ni, peer, rxs, GRIM_FT_ACK, rxs->rcv_nxt,
			GRIM_XF_QUERY);
}

/* Forget receive streams that hold no reassembly and that no DATA or
 * ABORT frame came for in @idle (twice dead_ms, at least
 * GRIM_RXS_EXPIRE_MIN).  A sender that is up sends again what is not
 * acknowledged at least once a second, but a loaded path can lose all of
 * that for as long, and a stream forgotten with frames on the way fails
 * their messages (REJECT STALE).  So the receiver first asks, as for a
 * reassembly (grim_peer_expire_reasm()), for twice @dead more: a sender
 * with frames on the way resends, one with nothing unacknowledged or no
 * such stream says so (grim_rx_denied()) and the stream goes at once.
 * Unanswered, it goes after that.  This bounds what a peer that never
 * closes its streams holds.  From the hello timer.
 */
void grim_peer_expire_rxs(struct grim_peer *peer, unsigned long idle,
			  unsigned long dead)
{
	struct grim_rxs *rxs, *tmp;
	bool busy, expire;

	spin_lock_bh(&peer->lock);
	list_for_each_entry_safe(rxs, tmp, &peer->rxs_list, plink) {
		if (time_before_eq(jiffies, READ_ONCE(rxs->last_rx) + idle))
			continue;
		spin_lock(&rxs->lock);
		/* A reassembly has its own rules (grim_peer_expire_reasm()). */
		busy = rxs->state == GRIM_RX_REASM ||
		       time_before_eq(jiffies, rxs->last_rx + idle);
		expire = !busy && (peer->state != GRIM_PEER_UP ||
				   time_after_eq(jiffies, rxs->last_rx + idle +
						 2 * dead));
		if (!busy && !expire)
			grim_rxs_query(rxs);
		grim_rxs_unlock_nested(rxs);
		if (expire) {
			grim_count(peer->ni, NULL, GRIM_STAT_RX_STREAMS_EXPIRED);
			grim_rxs_free(rxs);
		}
	}
	grim_peer_unlock_bh(peer);
}

/* The stream a DATA or ABORT frame of incarnation @cm->inc belongs to,
 * made if the incarnation is new.  NULL if the frame is not to be taken;
 * its sender has then been told why if it must be (stale incarnation, no
 * room, nobody bound).  Peer lock held.
 */
static struct grim_rxs *grim_rxs_open(struct grim_ni *ni,
				      struct grim_peer *peer,
				      const struct grim_ctl_msg *cm)
{
	u16 src = ntohs(cm->src_chan), dst = ntohs(cm->dst_chan);
	u32 inc = ntohl(cm->inc);
	struct grim_rxs *rxs;
	struct grim_ep *ep;

	rxs = grim_rxs_find(peer, src, dst);
	if (rxs && rxs->inc == inc)
		return rxs;
	if (!grim_inc_fresh(peer, inc)) {
		grim_count(ni, peer, GRIM_STAT_DROP_STALE_STREAM);
		grim_send_stream_reject(ni, peer, cm, GRIM_REJ_STALE);
		return NULL;
	}
	if (rxs) {
		/* The sender moved on to a new incarnation: the old one
		 * gives way once it holds nothing.  Until then the new
		 * one's frames are dropped, and sent again.
		 */
		if (!grim_rxs_quiet(rxs)) {
			grim_count(ni, peer, GRIM_STAT_DROP_STALE_STREAM);
			return NULL;
		}
		grim_rxs_free(rxs);
	}
	/* No state for a port nobody is bound to. */
	ep = grim_ep_get(ni, dst);
	if (!ep) {
		grim_inc_burn(peer, inc);
		grim_count(ni, peer, GRIM_STAT_DROP_NO_EP);
		grim_send_stream_reject(ni, peer, cm, GRIM_REJ_UNBOUND);
		return NULL;
	}
	grim_ep_put(ep);
	rxs = grim_rxs_new(peer, src, dst, inc);
	if (IS_ERR(rxs)) {
		/* The table is busy growing: the sender tries again. */
		grim_count(ni, peer, GRIM_STAT_DROP_NOMEM);
		return NULL;
	}
	grim_inc_burn(peer, inc);
	if (!rxs) {
		grim_count(ni, peer, GRIM_STAT_DROP_NO_STREAM);
		grim_send_stream_reject(ni, peer, cm, GRIM_REJ_NO_STREAM);
	}
	return rxs;
}

/* A CLOSE: the sender is done with the incarnation, everything before
 * ctl_msg.seq acknowledged.  Forget the stream if we took exactly that,
 * and say so; say so too if it is gone already.  Peer lock held.
 */
void grim_rx_close(struct grim_ni *ni, struct grim_peer *peer,
		   const struct grim_ctl_msg *cm)
{
	u32 inc = ntohl(cm->inc), seq = ntohl(cm->seq);
	struct grim_rxs *rxs;
	struct sk_buff *skb;
	bool done;

	rxs = grim_rxs_find(peer, ntohs(cm->src_chan), ntohs(cm->dst_chan));
	if (rxs && rxs->inc == inc) {
		/* Everything before @seq was acknowledged or given up by
		 * the sender (a refused message whose socket went, a
		 * rejected one): we took all we ever will.
		 */
		spin_lock(&rxs->lock);
		done = (rxs->state == GRIM_RX_IDLE || rxs->rejected) &&
		       skb_queue_empty(&rxs->ooo) &&
		       !grim_seq_before(seq, rxs->rcv_nxt + rxs->rejected);
		grim_rxs_unlock_nested(rxs);
		if (!done)
			return;	/* frames still on the way: it repeats */
		grim_rxs_free(rxs);
	} else if (grim_inc_fresh(peer, inc)) {
		/* Never took any of it: it never will. */
		grim_inc_burn(peer, inc);
	}
	skb = grim_ctl_frame(ni, peer, GRIM_FT_CLOSED, 0, ntohs(cm->dst_chan),
			     ntohs(cm->src_chan), seq, inc, 0);
	if (!skb)
		return;
	grim_frame_finish(skb);
	grim_peer_xmit(peer, skb);
}

/* Frames held past the gap: on rxs->ooo, sorted by sequence, each with
 * its bit in ooo_map.  They all lie within GRIM_SACK_REACH past rcv_nxt,
 * so that frame s has bit s % GRIM_SACK_REACH alone: rcv_nxt moves on one
 * frame at a time, taking the held frames it reaches off the list, and
 * whatever makes it jump purges the list first.  The map exists while
 * the list holds frames: most streams never see a gap.
 */
static_assert(!(GRIM_SACK_REACH & (GRIM_SACK_REACH - 1)),
	      "frame s % GRIM_SACK_REACH must survive the wrap of s");

static void grim_ooo_set(struct grim_rxs *rxs, u32 seq, bool held)
{
	u32 b = seq % GRIM_SACK_REACH;

	if (held)
		rxs->ooo_map[b / 64] |= BIT_ULL(b % 64);
	else
		rxs->ooo_map[b / 64] &= ~BIT_ULL(b % 64);
}

static bool grim_ooo_held(const struct grim_rxs *rxs, u32 seq)
{
	u32 b = seq % GRIM_SACK_REACH;

	return rxs->ooo_map && rxs->ooo_map[b / 64] & BIT_ULL(b % 64);
}

/* The 64 bits of ooo_map from frame @seq on: bit i, frame seq + i. */
static u64 grim_ooo_word(const struct grim_rxs *rxs, u32 seq)
{
	u32 b = seq % GRIM_SACK_REACH, sh = b % 64;
	u64 lo = rxs->ooo_map[b / 64];
	u64 hi = rxs->ooo_map[(b / 64 + 1) % GRIM_SACK_WORDS];

	return sh ? lo >> sh | hi << (64 - sh) : lo;
}

/* Take held frame @skb off the list; the caller frees or delivers it. */
static void grim_ooo_unlink(struct grim_rxs *rxs, struct sk_buff *skb)
{
	__skb_unlink(skb, &rxs->ooo);
	grim_ooo_set(rxs, GRIM_RX_SEQ(skb), false);
	rxs->ooo_bytes -= skb->truesize;
	atomic_long_sub(skb->truesize, &rxs->peer->ni->ooo_mem);
	if (skb_queue_empty(&rxs->ooo)) {
		kfree(rxs->ooo_map);
		rxs->ooo_map = NULL;
	}
}

static void grim_rxs_purge_ooo(struct grim_rxs *rxs)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(&rxs->ooo))) {
		grim_ooo_unlink(rxs, skb);
		kfree_skb(skb);
	}
}

/* Drop the message in reassembly and give its room back. */
static void grim_rxs_abort(struct grim_rxs *rxs)
{
	kfree_skb(rxs->reasm);
	rxs->reasm = NULL;
	rxs->reasm_tail = NULL;
	if (rxs->ep) {
		rxs->ep->ops->unreserve(rxs->ep, rxs->reasm_want);
		grim_ep_put(rxs->ep);
	}
	rxs->ep = NULL;
}

/* Back to between messages. */
static void grim_rxs_idle(struct grim_rxs *rxs)
{
	grim_rxs_abort(rxs);
	rxs->state = GRIM_RX_IDLE;
	rxs->reason = 0;
	rxs->reasm_want = 0;
	rxs->reasm_got = 0;
}

static void grim_send_ctl(struct grim_ni *ni, struct grim_peer *peer,
			  struct grim_rxs *rxs, u8 type, u32 seq);

/* The peer has been told rcv_nxt (by an ACK, or on a data frame).
 * Stream lock held.  Only its holder puts a stream on the ack_list; the
 * ACK timer may take it off meanwhile, which leaves it empty.
 */
void grim_rxs_acked(struct grim_rxs *rxs)
{
	struct grim_peer *peer = rxs->peer;

	lockdep_assert_held(&rxs->lock);
	rxs->unacked = 0;
	if (list_empty_careful(&rxs->ack_link))
		return;
	spin_lock(&peer->ack_lock);
	list_del_init(&rxs->ack_link);
	spin_unlock(&peer->ack_lock);
}

/* An ACK owed for frames of a message it completed: let a reply carry
 * it, or the ACK timer.  Stream lock held.
 */
static void grim_rxs_ack_later(struct grim_rxs *rxs)
{
	struct grim_peer *peer = rxs->peer;

	spin_lock(&peer->ack_lock);
	if (list_empty(&rxs->ack_link))
		list_add_tail(&rxs->ack_link, &peer->ack_list);
	spin_unlock(&peer->ack_lock);
	if (!timer_pending(&peer->ack_timer))
		mod_timer(&peer->ack_timer, jiffies + GRIM_ACK_DELAY);
}

/* Delayed ACKs that no reply carried: send them now.  Streams are taken
 * off the list one at a time, each under ack_lock, and then locked:
 * ack_lock is a leaf.  The peer lock keeps them from being freed.
 */
void grim_ack_timer(struct timer_list *t)
{
	struct grim_peer *peer = from_timer(peer, t, ack_timer);
	struct grim_rxs *rxs;
	LIST_HEAD(due);

	spin_lock_bh(&peer->lock);
	if (peer->dead)
		goto out;
	spin_lock(&peer->ack_lock);
	list_splice_init(&peer->ack_list, &due);
	spin_unlock(&peer->ack_lock);
	for (;;) {
		spin_lock(&peer->ack_lock);
		rxs = list_first_entry_or_null(&due, struct grim_rxs,
					       ack_link);
		if (rxs)
			list_del_init(&rxs->ack_link);
		spin_unlock(&peer->ack_lock);
		if (!rxs)
			break;
		spin_lock(&rxs->lock);
		/* Unless a frame's work sent it meanwhile. */
		if (rxs->unacked)
			grim_send_ctl(peer->ni, peer, rxs, GRIM_FT_ACK,
				      rxs->rcv_nxt);
		/* Without memory for it, the timer tries again. */
		if (rxs->unacked)
			grim_rxs_ack_later(rxs);
		grim_rxs_unlock_nested(rxs);
	}
out:
	grim_peer_unlock_bh(peer);
}

/* ACK, NACK or REJECT @seq of stream @rxs, with link header @xflags.
 * Stream lock held.
 */
static void grim_send_ctl_x(struct grim_ni *ni, struct grim_peer *peer,
			    struct grim_rxs *rxs, u8 type, u32 seq, u8 xflags)
{
	bool rej = type == GRIM_FT_REJECT;
	struct sk_buff *skb, *last;
	unsigned int words = 0, j;

	/* The report reaches the last frame held past the gap. */
	last = type == GRIM_FT_ACK && seq == rxs->rcv_nxt ?
	       skb_peek_tail(&rxs->ooo) : NULL;
	if (last)
		words = (GRIM_RX_SEQ(last) - seq - 1) / 64 + 1;
	/* Channels from the sender of this control message's side. */
	skb = grim_ctl_frame(ni, peer, type, words ? GRIM_FF_SACK : 0,
			     rxs->dst_chan, rxs->src_chan, seq, rxs->inc,
			     words * sizeof(struct grim_sack) +
			     (rej ? sizeof(struct grim_reject) : 0));
	if (!skb)
		return;
	((struct grim_link_hdr *)skb->data)->xflags |= xflags;
	/* The round trip of the frame taken last in sequence. */
	((struct grim_ctl_msg *)(skb->data + GRIM_LINK_HLEN))->tsecr =
		htonl(rxs->ts_recent);
	/* What waits past the gap, so that only the gap is resent. */
	for (j = 0; j < words; j++)
		((struct grim_sack *)skb_put(skb, sizeof(struct grim_sack)))->held =
			cpu_to_be64(grim_ooo_word(rxs, seq + 1 + 64 * j));
	if (rej) {
		struct grim_reject *r = skb_put(skb, sizeof(*r));

		r->reason = htons(rxs->reason);
		r->reserved = 0;
		r->from = htonl(rxs->rej_from);
	}
	grim_frame_finish(skb);
	grim_count(ni, peer, type == GRIM_FT_ACK ? GRIM_STAT_TX_ACKS :
			     rej ? GRIM_STAT_TX_REJECTS : GRIM_STAT_TX_NACKS);
	grim_rxs_xmit(rxs, skb);
	if (type == GRIM_FT_ACK)
		grim_rxs_acked(rxs);
}

static void grim_send_ctl(struct grim_ni *ni, struct grim_peer *peer,
			  struct grim_rxs *rxs, u8 type, u32 seq)
{
	grim_send_ctl_x(ni, peer, rxs, type, seq, 0);
}

/* Hand a complete message to @ep, in place of the @reserved bytes it
 * made room for; consumes the reference to @ep.
 */
static void grim_rx_deliver(struct grim_ni *ni, struct grim_peer *peer,
			    struct grim_ep *ep, struct sk_buff *skb,
			    unsigned int reserved)
{
	trace_grim_msg_rx(peer->node, GRIM_MSG_CB(skb)->src_port,
			  GRIM_MSG_CB(skb)->dst_port, skb->len);
	if (grim_mc_ctl_msg(GRIM_MSG_CB(skb))) {
		grim_count(ni, peer, GRIM_STAT_MC_CTL_RX);
	} else {
		grim_count(ni, peer, GRIM_STAT_RX_MSGS);
		grim_count_add(ni, peer, GRIM_STAT_RX_BYTES, skb->len);
	}
	ep->ops->deliver(ep, skb, reserved);
	grim_ep_put(ep);
}

/* The message whose last frame is @seq will not be delivered, for
 * @reason: leave that frame untaken, tell the sender, and wait for its
 * next frame, flagged GRIM_XF_SKIP.  Stream lock held.
 */
static void grim_rxs_reject(struct grim_ni *ni, struct grim_peer *peer,
			    struct grim_rxs *rxs, u32 seq, u8 reason)
{
	grim_rxs_idle(rxs);
	grim_rxs_purge_ooo(rxs);
	rxs->rejected = true;
	rxs->reason = reason;
	rxs->rej_from = seq;
	grim_send_ctl(ni, peer, rxs, GRIM_FT_REJECT, seq);
}

/* An ABORT: the sender gives up frames up to ctl_msg.seq, to cut them
 * again.  Drop what is held of a message not complete, go on after
 * them, and say where we stood (include/uapi/linux/grim.h).  Peer lock
 * held.
 */
void grim_rx_abort(struct grim_ni *ni, struct grim_peer *peer,
		   const struct grim_ctl_msg *cm)
{
	u32 to = ntohl(cm->seq);
	struct grim_rxs *rxs;
	u8 reason;

	rxs = grim_rxs_open(ni, peer, cm);
	if (!rxs)
		return;
	spin_lock(&rxs->lock);
	WRITE_ONCE(rxs->last_rx, jiffies);
	if (!rxs->aborted || rxs->abort_to != to) {
		/* The sender sends nothing past @to before our answer. */
		rxs->rej_from = grim_seq_after(rxs->rcv_nxt, to) ? to + 1 :
				rxs->rcv_nxt;
		grim_rxs_idle(rxs);
		grim_rxs_purge_ooo(rxs);
		rxs->refused = false;
		rxs->rejected = false;
		rxs->rcv_nxt = to + 1;
		rxs->aborted = true;
		rxs->abort_to = to;
	}
	/* The REJECT names rej_from, and the reason of an ABORT. */
	reason = rxs->reason;
	rxs->reason = GRIM_REJ_ABORTED;
	grim_send_ctl(ni, peer, rxs, GRIM_FT_REJECT, to);
	rxs->reason = reason;
	grim_rxs_unlock_nested(rxs);
}

static void grim_rxs_trace_give_up(const struct grim_rxs *rxs)
{
	trace_grim_reasm_timeout(rxs->peer->node, rxs->src_chan,
				 rxs->dst_chan, rxs->rcv_nxt, rxs->reasm_got,
				 rxs->reasm_want,
				 jiffies_to_msecs(jiffies - rxs->last_rx),
				 jiffies_to_msecs(jiffies - rxs->peer->last_rx));
}

/* Ask after reassemblies whose stream received no frame for @timeout
 * (dead_ms) jiffies.  A sender that is up sends again what is not
 * acknowledged at least every GRIM_MAX_RTO_MS, but a loaded path can
 * lose every one of those for longer than dead_ms while the peer's
 * other frames get through: silence alone does not tell a message still
 * coming from one whose sender forgot it (or never had it: a forged
 * first frame).  So the receiver asks, once a hello interval: an ACK
 * flagged GRIM_XF_QUERY.  A sender that has the stream resends the frame
 * asked for; one that has not answers with an ABORT flagged
 * GRIM_XF_QUERY (grim_rx_denied()).  A sender that never answers, and
 * whose stream stays silent GRIM_REASM_PATIENCE times as long, loses the
 * reassembly all the same: its room goes back to the endpoint, the rest
 * of its frames is taken and the message rejected at its last frame
 * (ETIMEDOUT at the sender).  From the hello timer.
 */
void grim_peer_expire_reasm(struct grim_peer *peer, unsigned long timeout)
{
	struct grim_rxs *rxs;

	spin_lock_bh(&peer->lock);
	if (peer->state != GRIM_PEER_UP)
		goto out;
	list_for_each_entry(rxs, &peer->rxs_list, plink) {
		if (time_before(jiffies, READ_ONCE(rxs->last_rx) + timeout))
			continue;
		spin_lock(&rxs->lock);
		if (rxs->state != GRIM_RX_REASM ||
		    time_before(jiffies, rxs->last_rx + timeout)) {
			/* not reassembling, or a frame came meanwhile */
		} else if (time_before(jiffies, rxs->last_rx +
				       GRIM_REASM_PATIENCE * timeout)) {
			grim_rxs_query(rxs);
		} else {
			grim_count(peer->ni, peer, GRIM_STAT_REASM_TIMEOUTS);
			grim_rxs_trace_give_up(rxs);
			grim_rxs_abort(rxs);
			rxs->state = GRIM_RX_DISCARD;
			rxs->reason = GRIM_REJ_TIMEOUT;
		}
		grim_rxs_unlock_nested(rxs);
	}
out:
	grim_peer_unlock_bh(peer);
}

/* An ABORT flagged GRIM_XF_QUERY: the sender has no stream of these
 * channels and incarnation, or nothing for it from the frame we asked
 * for.  Forget the stream, and give up what it holds, if we asked: a
 * stream that is not silent or has moved since is not touched.  Peer
 * lock held.
 */
void grim_rx_denied(struct grim_ni *ni, struct grim_peer *peer,
		    const struct grim_ctl_msg *cm)
{
	struct grim_rxs *rxs;
	bool asked;

	rxs = grim_rxs_find(peer, ntohs(cm->src_chan), ntohs(cm->dst_chan));
	if (!rxs || rxs->inc != ntohl(cm->inc)) {
		grim_count(ni, peer, GRIM_STAT_DROP_STALE_STREAM);
		return;
	}
	spin_lock(&rxs->lock);
	asked = rxs->rcv_nxt == ntohl(cm->seq) && grim_rxs_quiet(rxs);
	if (!asked)
		grim_count(ni, peer, GRIM_STAT_DROP_STALE_STREAM);
	else if (rxs->state == GRIM_RX_REASM)
		grim_count(ni, peer, GRIM_STAT_REASM_TIMEOUTS);
	else
		grim_count(ni, NULL, GRIM_STAT_RX_STREAMS_EXPIRED);
	if (asked && rxs->state == GRIM_RX_REASM)
		grim_rxs_trace_give_up(rxs);
	grim_rxs_unlock_nested(rxs);
	if (asked)
		grim_rxs_free(rxs);
}

/* What grim_rx_first() did with a frame, besides a stat to drop it by. */
enum {
	GRIM_RXF_TAKEN = 0,	/* consumed; the stream advances */
	GRIM_RXF_APPEND = -1,	/* the caller appends it to the reassembly */
	GRIM_RXF_REJECTED = -2,	/* a one-frame message rejected: consumed,
				 * the stream does not advance
				 */
};

/* The first frame of a message, in sequence.  Returns a GRIM_RXF_* or a
 * stat to count and drop it by.
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

	if (rxs->state != GRIM_RX_IDLE)
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

	ep = grim_ep_get(ni, rxs->dst_chan);
	if (!ep) {
		/* Nobody listens: the sender will be told, at the last
		 * frame of the message.
		 */
		grim_drop(ni, peer, skb, GRIM_STAT_DROP_NO_EP);
		if (last) {
			grim_rxs_reject(ni, peer, rxs, seq, GRIM_REJ_NO_PORT);
			return GRIM_RXF_REJECTED;
		}
		rxs->state = GRIM_RX_DISCARD;
		rxs->reason = GRIM_REJ_NO_PORT;
		rxs->reasm_want = len;
		rxs->reasm_got = plen;
		return GRIM_RXF_TAKEN;
	}
	cb = GRIM_MSG_CB(skb);
	cb->node = peer->node;
	cb->src_port = rxs->src_chan;
	cb->dst_port = rxs->dst_chan;
	cb->handler = w3 & 0xffff;
	cb->flags = 0;
	for (i = 0; i < 4; i++)
		cb->arg[i] = ntohl(mh->arg[i]);
	cb->group = 0;
	cb->ticket = 0;
	skb_pull(skb, GRIM_DATA_HLEN + GRIM_MSG_HLEN);
	if (ep->ops->admit ? !ep->ops->admit(ep, cb, skb, len) :
	    !ep->ops->reserve(ep, len)) {
		grim_ep_put(ep);
		rxs->refused = true;
		grim_send_ctl(ni, peer, rxs, GRIM_FT_NACK, seq);
		return GRIM_STAT_DROP_REFUSED;
	}
	/* The sender probes with this frame alone: ACK it at once. */
	if (rxs->refused)
		rxs->unacked = GRIM_ACK_EVERY;
	rxs->refused = false;

	if (last) {
		grim_rx_deliver(ni, peer, ep, skb, len);
		return GRIM_RXF_TAKEN;
	}
	/* Frames may share their data with the sender's copy, so they are
	 * chained under a head of our own rather than onto each other.
	 */
	rxs->reasm = alloc_skb(0, GFP_ATOMIC);
	if (!rxs->reasm) {
		ep->ops->unreserve(ep, len);
		grim_ep_put(ep);
		skb_push(skb, GRIM_DATA_HLEN + GRIM_MSG_HLEN);
		return GRIM_STAT_DROP_NOMEM;
	}
	memcpy(rxs->reasm->cb, skb->cb, sizeof(struct grim_msg_cb));
	rxs->ep = ep;
	rxs->state = GRIM_RX_REASM;
	rxs->reasm_want = len;
	rxs->reasm_got = 0;
	rxs->reasm_tail = NULL;
	return GRIM_RXF_APPEND;
}

/* Move the page fragments of frame @skb into the reassembly head, and
 * consume the frame.  A fragment that continues the head's last one in
 * the same page extends it: frames cut from one sender's pages (or laid
 * out back to back by a driver) make one fragment per page again.  A
 * message then costs one skb and a few long copies in recvmsg() instead
 * of an skb and a short copy or two per frame.  Only for frames with no
 * bytes of their own in the head and plain page references; returns
 * false when the frame must be chained instead.
 */
static bool grim_rx_steal_frags(struct sk_buff *head, struct sk_buff *skb)
{
	struct skb_shared_info *hs = skb_shinfo(head), *fs = skb_shinfo(skb);
	unsigned int n = hs->nr_frags, i;
	bool merge;
	int delta;

	if (skb_headlen(skb) || !fs->nr_frags || fs->frag_list ||
	    hs->frag_list || skb->pp_recycle || skb_zcopy(skb))
		return false;
	merge = skb_can_coalesce(head, n, skb_frag_page(&fs->frags[0]),
				 skb_frag_off(&fs->frags[0]));
	if (n + fs->nr_frags - merge > MAX_SKB_FRAGS)
		return false;
	for (i = 0; i < fs->nr_frags; i++) {
		if (!i && merge) {
			skb_frag_size_add(&hs->frags[n - 1],
					  skb_frag_size(&fs->frags[0]));
			continue;
		}
		skb_frag_ref(skb, i);
		hs->frags[n++] = fs->frags[i];
	}
	hs->nr_frags = n;
	/* The fragments' share of the frame's truesize, as TCP counts it. */
	delta = skb->truesize - SKB_TRUESIZE(skb_end_offset(skb));
	head->truesize += max_t(int, delta, skb->len);
	head->len += skb->len;
	head->data_len += skb->len;
	consume_skb(skb);
	return true;
}

static void grim_rx_append(struct grim_rxs *rxs, struct sk_buff *skb)
{
	struct sk_buff *head = rxs->reasm;
	unsigned int len = skb->len;

	if (grim_rx_steal_frags(head, skb)) {
		rxs->reasm_got += len;
		return;
	}
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

/* Take the in-sequence frame @skb (consumed).  Returns true when the
 * stream advanced; *ack is set when the frame ended a message.
 */
static bool grim_rx_in_order(struct grim_ni *ni, struct grim_peer *peer,
			     struct grim_rxs *rxs, struct sk_buff *skb,
			     bool *ack)
{
	const struct grim_link_hdr *lh = (const struct grim_link_hdr *)skb->data;
	const struct grim_ctl_msg *cm = (const struct grim_ctl_msg *)(lh + 1);
	const struct grim_frag_hdr *fh = (const struct grim_frag_hdr *)(cm + 1);
	bool first = lh->flags & GRIM_FF_FIRST;
	bool last = lh->flags & GRIM_FF_LAST;
	u32 seq = ntohl(cm->seq), plen;
	int stat;

	if (first) {
		stat = grim_rx_first(ni, peer, rxs, skb, seq, last);
		if (stat > 0)
			goto drop;
		if (stat == GRIM_RXF_REJECTED)
			return false;
		if (stat == GRIM_RXF_APPEND)
			grim_rx_append(rxs, skb);
	} else {
		plen = skb->len - GRIM_DATA_HLEN;
		if (rxs->state == GRIM_RX_IDLE ||
		    ntohs(fh->offset) != rxs->reasm_got ||
		    rxs->reasm_got + plen > rxs->reasm_want ||
		    (last && rxs->reasm_got + plen != rxs->reasm_want)) {
			stat = GRIM_STAT_DROP_FRAG;
			goto drop;
		}
		if (rxs->state == GRIM_RX_DISCARD) {
			kfree_skb_reason(skb, rxs->reason == GRIM_REJ_NO_PORT ?
					 SKB_DROP_REASON_NO_SOCKET :
					 SKB_DROP_REASON_NOT_SPECIFIED);
			if (last) {
				grim_rxs_reject(ni, peer, rxs, seq,
						rxs->reason);
				return false;
			}
			rxs->reasm_got += plen;
		} else {
			skb_pull(skb, GRIM_DATA_HLEN);
			grim_rx_append(rxs, skb);
			if (last) {
				grim_rx_deliver(ni, peer, rxs->ep, rxs->reasm,
						rxs->reasm_want);
				rxs->reasm = NULL;
				rxs->reasm_tail = NULL;
				rxs->ep = NULL;
				grim_rxs_idle(rxs);
			}
		}
	}
	rxs->rcv_nxt++;
	rxs->unacked++;
	*ack |= last;
	return true;

drop:
	grim_drop(ni, peer, skb, stat);
	if (rxs->refused)
		grim_rxs_purge_ooo(rxs);
	return false;
}

/* Keep a frame that arrived ahead of a gap, so that the retransmission
 * of the missing one lets the stream jump forward.  Sorted by sequence;
 * frames past the gap mostly come in order, resent holes near the gap:
 * the walk starts from the nearer end.
 */
static void grim_rx_hold(struct grim_ni *ni, struct grim_peer *peer,
			 struct grim_rxs *rxs, struct sk_buff *skb, u32 seq)
{
	struct sk_buff *pos, *last = skb_peek_tail(&rxs->ooo);

	grim_count(ni, peer, GRIM_STAT_OOO_FRAMES);
	if (grim_seq_after(seq, rxs->rcv_nxt + GRIM_SACK_REACH)) {
		/* Past what a report can name: the sender sends it again
		 * once the stream has moved.
		 */
		grim_drop(ni, peer, skb, GRIM_STAT_DROP_PAST_REACH);
		return;
	}
	if (grim_ooo_held(rxs, seq)) {
		kfree_skb(skb);		/* held already */
		return;
	}
	if (rxs->ooo_bytes + skb->truesize > GRIM_OOO_STREAM_MEM ||
	    atomic_long_read(&ni->ooo_mem) + skb->truesize > GRIM_OOO_MEM) {
		grim_drop(ni, peer, skb, GRIM_STAT_DROP_NOMEM);
		return;
	}
	if (!rxs->ooo_map) {
		rxs->ooo_map = kcalloc(GRIM_SACK_WORDS, sizeof(u64),
				       GFP_ATOMIC);
		if (!rxs->ooo_map) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_NOMEM);
			return;
		}
	}
	GRIM_RX_SEQ(skb) = seq;
	if (!last || grim_seq_after(seq, GRIM_RX_SEQ(last))) {
		__skb_queue_tail(&rxs->ooo, skb);
	} else if (seq - rxs->rcv_nxt < GRIM_RX_SEQ(last) - seq) {
		skb_queue_walk(&rxs->ooo, pos) {
			if (grim_seq_after(GRIM_RX_SEQ(pos), seq))
				break;
		}
		__skb_queue_before(&rxs->ooo, pos, skb);
	} else {
		skb_queue_reverse_walk(&rxs->ooo, pos) {
			if (grim_seq_before(GRIM_RX_SEQ(pos), seq))
				break;
		}
		__skb_queue_after(&rxs->ooo, pos, skb);
	}
	grim_ooo_set(rxs, seq, true);
	rxs->ooo_bytes += skb->truesize;
	atomic_long_add(skb->truesize, &ni->ooo_mem);
}

/* Frame @skb, past rcv_nxt, flagged GRIM_XF_SKIP: its sender gave up
 * the frames from the one its fragment header names up to it (their
 * messages failed at the sender).  If this stream took every frame
 * before those, it drops what it holds of the message in progress and
 * goes on at @skb.  Returns true when it did.  Stream lock held.
 */
static bool grim_rx_skip(struct grim_ni *ni, struct grim_peer *peer,
			 struct grim_rxs *rxs, struct sk_buff *skb)
{
	const struct grim_link_hdr *lh = (const struct grim_link_hdr *)skb->data;
	const struct grim_ctl_msg *cm = (const struct grim_ctl_msg *)(lh + 1);
	const struct grim_frag_hdr *fh = (const struct grim_frag_hdr *)(cm + 1);
	u32 seq = ntohl(cm->seq), from = ntohl(fh->ack);

	if (!(lh->xflags & GRIM_XF_SKIP) || lh->flags & GRIM_FF_ACK ||
	    !(lh->flags & GRIM_FF_FIRST) ||
	    grim_seq_after(from, rxs->rcv_nxt) || !grim_seq_before(from, seq))
		return false;
	grim_rxs_idle(rxs);
	grim_rxs_purge_ooo(rxs);
	rxs->refused = false;
	rxs->rejected = false;
	rxs->rcv_nxt = seq;
	return true;
}

/* DATA frame @skb of stream @rxs, in @rxs's lock alone: take it, hold
 * it or drop it, and answer.  Consumes skb.
 */
static void grim_rxs_data(struct grim_ni *ni, struct grim_peer *peer,
			  struct grim_rxs *rxs, struct sk_buff *skb)
{
	const struct grim_ctl_msg *cm;
	bool ack = false, now;
	u32 seq, tsval;

	cm = (const struct grim_ctl_msg *)(skb->data + GRIM_LINK_HLEN);
	seq = ntohl(cm->seq);
	/* The sender's window is full: it waits for this ACK. */
	now = ((const struct grim_link_hdr *)skb->data)->flags &
	      GRIM_FF_ACKREQ;
	if (grim_seq_after(seq, rxs->rcv_nxt) && grim_rx_skip(ni, peer, rxs, skb))
		seq = rxs->rcv_nxt;	/* the sender gave up what came before */
	if (rxs->rejected) {
		if (seq == rxs->rcv_nxt) {
			/* The rejected frame again: the REJECT was lost. */
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_REJECTED);
			grim_send_ctl(ni, peer, rxs, GRIM_FT_REJECT, seq);
			return;
		}
		if (grim_seq_after(seq, rxs->rcv_nxt)) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_REJECTED);
			return;
		}
	}
	if (seq != rxs->rcv_nxt) {
		if (rxs->refused && grim_seq_after(seq, rxs->rcv_nxt)) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_REFUSED);
			return;
		}
		if (grim_seq_before(seq, rxs->rcv_nxt)) {
			/* A copy of a frame taken already: its ACK was
			 * lost, and the sender resent it.  Echo this
			 * copy's send time if it is the newer (RFC 7323,
			 * 4.3): the echo of the first copy would time the
			 * sender's wait for the lost ACK as a round trip.
			 */
			tsval = ntohl(cm->tsval);
			if ((s32)(tsval - rxs->ts_recent) > 0)
				rxs->ts_recent = tsval;
			grim_drop(ni, peer, skb, GRIM_STAT_DUP_FRAMES);
		} else {
			grim_rx_hold(ni, peer, rxs, skb, seq);
		}
		/* Tell the sender where we are: heals lost ACKs, and
		 * duplicate ACKs point it at the gap.
		 */
		grim_send_ctl(ni, peer, rxs, GRIM_FT_ACK, rxs->rcv_nxt);
		return;
	}

	tsval = ntohl(cm->tsval);
	if (!grim_rx_in_order(ni, peer, rxs, skb, &ack))
		return;
	rxs->ts_recent = tsval;
	while ((skb = skb_peek(&rxs->ooo))) {
		seq = GRIM_RX_SEQ(skb);
		if (grim_seq_after(seq, rxs->rcv_nxt))
			break;
		grim_ooo_unlink(rxs, skb);
		if (seq != rxs->rcv_nxt) {
			kfree_skb(skb);
			continue;
		}
		now = true;	/* a gap closed: let the sender know at once */
		if (!grim_rx_in_order(ni, peer, rxs, skb, &ack))
			break;
	}
	if (now || rxs->unacked >= GRIM_ACK_EVERY)
		grim_send_ctl(ni, peer, rxs, GRIM_FT_ACK, rxs->rcv_nxt);
	else if (ack)
		grim_rxs_ack_later(rxs);	/* may ride on a reply */
}

/* A DATA frame whose session checked out.  Called with the peer lock
 * held, which it releases; consumes skb.  What the frame says of the
 * reverse stream, and its own stream's finding or making, are the peer
 * lock's work; the rest is the stream's (grim_rxs_data()).
 */
void grim_rx_data(struct grim_ni *ni, struct grim_peer *peer,
		  struct sk_buff *skb)
	__releases(&peer->lock)
{
	const struct grim_ctl_msg *cm;
	struct grim_rxs *rxs;

	if (!pskb_may_pull(skb, GRIM_DATA_HLEN)) {
		grim_peer_unlock(peer);
		grim_drop(ni, peer, skb, GRIM_STAT_DROP_SHORT);
		return;
	}
	cm = (const struct grim_ctl_msg *)(skb->data + GRIM_LINK_HLEN);
	if (((const struct grim_link_hdr *)skb->data)->flags & GRIM_FF_ACK) {
		const struct grim_frag_hdr *fh = (const void *)(cm + 1);
		struct grim_ctl_msg ack = *cm;

		/* About the reverse stream, its own incarnation. */
		ack.seq = fh->ack;
		ack.inc = fh->ack_inc;
		grim_tx_rcv_piggyback(ni, peer, (const void *)skb->data, &ack);
	}

	rxs = grim_rxs_open(ni, peer, cm);
	if (!rxs) {
		grim_peer_unlock(peer);
		kfree_skb(skb);
		return;
	}
	/* Before the stream's lock: a stream woken may take it. */
	if (!list_empty_careful(&peer->cwnd_wait))
		grim_peer_cwnd_wake(peer, &peer->xmitq);
	spin_lock(&rxs->lock);
	/* Before the peer lock goes: a frame of a new incarnation must
	 * find this one busy (grim_rxs_quiet()).
	 */
	WRITE_ONCE(rxs->last_rx, jiffies);
	grim_peer_unlock_to(peer, &rxs->xmitq);
	grim_rxs_data(ni, peer, rxs, skb);
	grim_rxs_unlock(rxs);
}
