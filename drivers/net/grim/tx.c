// SPDX-License-Identifier: GPL-2.0
/* GRIM NI: the sending side of the reliable transport.
 *
 * A message becomes a run of frames with consecutive sequence numbers on
 * its stream (source channel, peer, destination channel).  Sending is
 * optimistic: frames go out as soon as they are queued, up to a window of
 * frames in flight, with no credits.  Then:
 *
 *  - ACK(n): frames before n are in the receiver's endpoint queue (or in a
 *    reassembly it made room for); they and their messages are freed.
 *  - NACK(n): the endpoint was full when frame n (a message start)
 *    arrived.  Only this stream rolls back to n and holds for a back-off
 *    that doubles while NACKs repeat; then frame n alone probes the
 *    endpoint, and the window reopens when it is ACKed.
 *  - Loss probe: no progress for two round trips (rto at most); resend
 *    the oldest unacknowledged frame alone, flagged for an ACK at once.
 *    On a link endpoint's stream (IP) a high-resolution timer sends it,
 *    as TCP above probes its own tail within a jiffy or two.
 *    A lost ACK at a full window, or a lost last frame, when nothing
 *    else makes the receiver speak, then costs a probe instead of a
 *    timeout.  The answer shows what the receiver lacks of all that was
 *    sent before the probe: resend that.
 *  - Retransmission timer: no progress for rto after the probe; go back
 *    to the oldest unacknowledged frame, doubling rto up to
 *    GRIM_MAX_RTO_MS, and send the window again but for the frames the
 *    receiver's last report (if one came since the last timeout) said it
 *    held.  If the loss counts as congestion, that frame goes alone
 *    until an ACK moves the stream (which skips what the receiver held).
 *    Progress is a time stamp; the timer is not moved on every ACK, nor
 *    stopped when all is acknowledged.  It looks at the stamp when it
 *    fires and, if the stream moved meanwhile, sleeps again until the
 *    deadline the stamp gives.  A request-response pattern thus touches
 *    the timer wheel about once per probe interval, not twice per
 *    message.
 *  - Loss detection by time (RACK, RFC 8985): a frame the receiver lacks
 *    (its report, SACK, does not show it held) is lost once a frame sent
 *    reo_wnd after it has arrived; until reordering has been seen, once
 *    three frames after it are held.  Each such frame is resent alone;
 *    a resent frame is resent again only if it is lost again.
 *  - Congestion: all streams to a peer share its congestion window, the
 *    frames they may have in flight together.  It grows on ACKs (slow
 *    start, then a frame per window) and is halved, at most once a round
 *    trip, on a loss that congestion explains: a frame the local qdisc
 *    dropped, or a loss (timeout or loss detection) while the round trip
 *    stands well above the path's base (a queue has built up) or was not
 *    measured lately.  A loss at the base round trip (corruption, a
 *    lossy link) ends slow start and cuts nothing.  A stream that finds
 *    the window full waits in line and sends a few frames a turn.  The
 *    receiver's NACK stays the only flow control.
 *
 * Frames are built once, when queued.  A message that fits one frame is
 * that frame: the socket left headroom for the headers.  Longer ones are
 * cut into frames that share the message's payload pages.  The first
 * transmission of a frame finishes its head in place (with the ACK of
 * the reverse stream, so that a reply acknowledges the request) and sends
 * a clone; a retransmission sends a copy with a private, refreshed head.
 *
 * Locking.  A send stream's state is its own lock's, txs->lock.  The
 * peer lock covers which streams there are and the incarnations drawn;
 * the path the streams share (congestion window, frames in flight, the
 * line of streams waiting for room, the peer's round trip) is under the
 * peer's cc_lock, a leaf.  The order is: peer lock, then a send stream's
 * lock, then a receive stream's (the ACK a frame carries for the reverse
 * stream), then the leaves.  A sender finds its stream under RCU and
 * takes its lock alone; an ACK or NACK is admitted under the peer lock,
 * which is released once the stream's lock is taken; the stream's timer
 * takes the stream's lock alone.  So sending, acknowledging and timing
 * out on one stream never wait for another stream of the peer.  No path
 * takes the peer lock, or a second send stream's lock, while it holds a
 * stream's: whoever needs both takes the peer lock first, and the
 * streams waiting for room are woken once the lock of the stream that
 * freed it is released (grim_txs_unlock()).  A stream unhashed (reaped)
 * under both locks is found so by whoever takes its lock after; it is
 * freed an RCU grace period after its timer is stopped.  Frames made
 * under a stream's lock wait on its xmitq until it is released.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rculist.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>

#include "grim.h"
#include "trace.h"

static_assert(offsetof(struct grim_txs, src_chan) ==
	      offsetof(struct grim_txs, node) + offsetof(struct grim_skey, src_chan));
static_assert(offsetof(struct grim_txs, dst_chan) ==
	      offsetof(struct grim_txs, node) + offsetof(struct grim_skey, dst_chan));

const struct rhashtable_params grim_txs_params = {
	.key_len = sizeof(struct grim_skey),
	.key_offset = offsetof(struct grim_txs, node),
	.head_offset = offsetof(struct grim_txs, hnode),
	/* Grown by a worker: a burst of new streams (a server's clients
	 * all at once) must not outrun it, or insertions fail.
	 */
	.min_size = GRIM_STREAM_TABLE_MIN,
	.automatic_shrinking = true,
};

static void grim_txs_timer(struct timer_list *t);
static enum hrtimer_restart grim_txs_tlp_fire(struct hrtimer *t);
static void grim_tx_rcv_stream_reject(struct grim_ni *ni,
				      struct grim_peer *peer,
				      const struct grim_ctl_msg *cm, u16 reason,
				      u32 from);
static void grim_txs_send_ctl(struct grim_txs *txs, u8 type);
static void grim_txs_aborted(struct grim_txs *txs, u32 from);
static void grim_frame_fail(struct grim_txs *txs, struct sk_buff *skb,
			    int err);
static void grim_txs_rcv_reject(struct grim_txs *txs,
				const struct grim_ctl_msg *cm, int err,
				u32 from);
static void grim_txs_rcv_stream_reject(struct grim_txs *txs, u16 reason,
				       u32 from);

/* A new incarnation for a stream to @peer: never 0.  Peer lock held. */
static u32 grim_peer_next_inc(struct grim_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	if (!++peer->tx_inc)
		peer->tx_inc = 1;
	return peer->tx_inc;
}

/* One RTT sample @m into the estimator @srtt8, @rttvar4 (Jacobson/Karels,
 * in jiffies).
 */
static void grim_rtt_update(unsigned long *srtt8, unsigned long *rttvar4,
			    unsigned long m)
{
	long err;

	if (!*srtt8) {
		*srtt8 = m << 3;
		*rttvar4 = m << 1;
		return;
	}
	err = (long)m - (long)(*srtt8 >> 3);
	*srtt8 += err;
	*rttvar4 += abs(err) - (*rttvar4 >> 2);
}

/* The retransmission timeout an estimate gives, never below the link's
 * configured rto_ms nor above GRIM_MAX_RTO_MS.  Before any sample, the
 * longest (RFC 6298 2.1): a path slower than rto_ms would otherwise see
 * its first window time out, and a timeout on a path never timed counts
 * as congestion, which ends slow start for good.  The loss probe, two
 * jiffies after the first frames, repairs a lost one without waiting.
 */
static unsigned long grim_rto_of(const struct grim_ni *ni,
				 unsigned long srtt8, unsigned long rttvar4)
{
	unsigned long floor = msecs_to_jiffies(READ_ONCE(ni->rto_ms)) ?: 1;
	unsigned long top = msecs_to_jiffies(GRIM_MAX_RTO_MS);

	if (!srtt8)
		return max(floor, top);
	return clamp((srtt8 >> 3) + rttvar4, floor, top);
}

/* Feed the stream's RTT estimator and the peer's, and derive the stream's
 * retransmission timeout.  The peer's estimate is where the next new
 * stream to it starts: all of a peer's streams share its path, and a
 * stream that started from rto_ms on a path slower than that would send
 * its first messages twice.  Stream lock held.
 */
static void grim_txs_rtt_sample(struct grim_txs *txs, unsigned long m)
{
	struct grim_peer *peer = txs->peer;

	m = max(m, 1UL);
	grim_rtt_update(&txs->srtt8, &txs->rttvar4, m);
	spin_lock(&peer->cc_lock);
	grim_rtt_update(&peer->srtt8, &peer->rttvar4, m);
	peer->rtt_sampled = jiffies;
	/* The base: the least round trip of this half of
	 * GRIM_RTT_MIN_WINDOW and of the half before.  It forgets, so that
	 * a host that is busy for a while (its own round trips grow) does
	 * not take every loss for a queue; it forgets slowly, so that a
	 * queue that builds up is not the base at once.
	 */
	if (time_after(jiffies, peer->rtt_min_at + GRIM_RTT_MIN_WINDOW / 2)) {
		peer->rtt_min_prev = peer->rtt_min;
		peer->rtt_min = m;
		peer->rtt_min_at = jiffies;
	} else if (!peer->rtt_min || m < peer->rtt_min) {
		peer->rtt_min = m;
	}
	spin_unlock(&peer->cc_lock);
	txs->rto_base = grim_rto_of(peer->ni, txs->srtt8, txs->rttvar4);
}

/* A stream's estimate starts from its peer's. */
static void grim_txs_rtt_seed(struct grim_txs *txs)
{
	struct grim_peer *peer = txs->peer;

	spin_lock(&peer->cc_lock);
	txs->srtt8 = peer->srtt8;
	txs->rttvar4 = peer->rttvar4;
	spin_unlock(&peer->cc_lock);
	txs->rto_base = grim_rto_of(peer->ni, txs->srtt8, txs->rttvar4);
}

/* A new path: a fresh window, no base round trip.  For a peer not yet
 * published; grim_peer_cc_reset() for one in use.
 */
void grim_peer_cc_init(struct grim_peer *peer)
{
	peer->cwnd = GRIM_CWND_INIT;
	peer->ssthresh = GRIM_CWND_MAX;
	peer->cwnd_acked = 0;
	peer->rtt_min = 0;
	peer->rtt_min_prev = 0;
	peer->rtt_min_at = jiffies;
	peer->cwnd_cut = jiffies - HZ;
}

/* A new path for a peer in use.  Peer lock held (BH off). */
void grim_peer_cc_reset(struct grim_peer *peer)
{
	spin_lock(&peer->cc_lock);
	grim_peer_cc_init(peer);
	spin_unlock(&peer->cc_lock);
}

/* @n more frames (negative: fewer) in flight to @peer; keep the most
 * there have been, which netlink reports.  cc_lock held.
 */
static void grim_peer_inflight_add(struct grim_peer *peer, s32 n)
{
	lockdep_assert_held(&peer->cc_lock);
	peer->inflight += n;
	if (peer->inflight > peer->inflight_max)
		peer->inflight_max = peer->inflight;
}

/* Bring the peer's frames in flight up to date with @txs's.  A stream
 * unhashed gave its share back for good.
 */
static void grim_txs_flight(struct grim_txs *txs)
{
	u32 now = txs->snd_nxt - txs->snd_una;

	/* Most pushes and ACKs of a busy stream change nothing here. */
	if (txs->reaped || now == txs->flight)
		return;
	spin_lock(&txs->peer->cc_lock);
	grim_peer_inflight_add(txs->peer, now - txs->flight);
	spin_unlock(&txs->peer->cc_lock);
	txs->flight = now;
}

/* @acked frames, still counted in flight, left the network: grow the
 * window, if it was what held the peer's streams back (half of it in
 * use, at least).  cc_lock held.
 */
static void grim_peer_cwnd_grow(struct grim_peer *peer, u32 acked)
{
	if (peer->inflight < peer->cwnd / 2)
		return;
	if (peer->cwnd < peer->ssthresh) {
		peer->cwnd = min(peer->cwnd + acked, peer->ssthresh);
		return;
	}
	peer->cwnd_acked += acked;
	if (peer->cwnd_acked >= peer->cwnd) {
		peer->cwnd_acked -= peer->cwnd;
		peer->cwnd = min_t(u32, peer->cwnd + 1, GRIM_CWND_MAX);
	}
}

/* Whether the peer's round trip stands well above its base: a queue on
 * the path holds our frames.  Twice the base, and GRIM_QUEUE_DELAY_MS
 * past it, so that a round trip of a jiffy or less, and the jitter of a
 * busy host, do not count.
 */
static bool grim_peer_queueing(const struct grim_peer *peer)
{
	unsigned long base = min_not_zero(peer->rtt_min, peer->rtt_min_prev);

	return base && peer->srtt8 >> 3 >
	       base + max(base, msecs_to_jiffies(GRIM_QUEUE_DELAY_MS));
}

/* A loss, found by the receiver's reports or a timeout; @congestion when the
 * local qdisc dropped, which congestion explains in any case.  A loss
 * while the round trip is at its base (a lossy or corrupting link) ends
 * slow start and cuts nothing.  Returns whether the loss counts as
 * congestion.  Halve the
 * window, once a round trip: the losses of one overflow, found one by
 * one, are one event.  Takes cc_lock.
 */
static bool grim_peer_cwnd_loss(struct grim_peer *peer, bool congestion)
{
	unsigned long srtt;
	bool cut = true;

	spin_lock(&peer->cc_lock);
	srtt = max(peer->srtt8 >> 3, 1UL);

	/* A path not timed lately has no round trip to tell a queue by:
	 * once a queue grows past rto_ms, every frame is resent before its
	 * ACK comes, no sample is taken, and the estimate stays where it
	 * was before the queue.  Its losses count as congestion until it is
	 * timed again; so do those of a path never timed.
	 */
	if (!congestion && peer->rtt_min &&
	    time_before(jiffies, peer->rtt_sampled +
			max(srtt * GRIM_RTT_STALE, (unsigned long)HZ / 4)) &&
	    !grim_peer_queueing(peer)) {
		/* Not a queue of ours that overflowed: leave slow start. */
		peer->ssthresh = max_t(u32, peer->cwnd, GRIM_CWND_MIN);
		cut = false;
	} else if (time_after_eq(jiffies, peer->cwnd_cut + srtt)) {
		peer->cwnd_cut = jiffies;
		peer->ssthresh = max_t(u32, peer->cwnd / 2, GRIM_CWND_MIN);
		peer->cwnd = peer->ssthresh;
		peer->cwnd_acked = 0;
		grim_count(peer->ni, peer, GRIM_STAT_CWND_CUTS);
	}
	spin_unlock(&peer->cc_lock);
	return cut;
}

/* Take one frame's room in the peer's window for @txs, or get in line
 * for it.  Streams already in line go first, unless this is one taking
 * its turn.  Returns whether @txs may put the frame in flight; it is
 * counted there already.  Stream lock held.
 */
static bool grim_txs_cwnd_take(struct grim_txs *txs, bool *full)
{
	struct grim_peer *peer = txs->peer;
	bool room;

	spin_lock(&peer->cc_lock);
	room = peer->inflight < peer->cwnd &&
	       (txs->cwnd_turn || list_empty(&peer->cwnd_wait));
	if (room) {
		/* Ask for an ACK at once if this fills a window too small
		 * for the receiver's ACK every GRIM_ACK_EVERY frames.
		 */
		*full |= peer->inflight + 1 >= peer->cwnd &&
			 peer->cwnd < 2 * GRIM_ACK_EVERY;
		grim_peer_inflight_add(peer, 1);
		txs->flight++;
	} else if (list_empty(&txs->cwnd_link)) {
		list_add_tail(&txs->cwnd_link, &peer->cwnd_wait);
	}
	spin_unlock(&peer->cc_lock);
	return room;
}

/* Give back the room taken for a frame that did not go. */
static void grim_txs_cwnd_untake(struct grim_txs *txs)
{
	spin_lock(&txs->peer->cc_lock);
	grim_peer_inflight_add(txs->peer, -1);
	spin_unlock(&txs->peer->cc_lock);
	txs->flight--;
}

/* Give the room in the window to the streams waiting for it, a few frames
 * each in turn; one that has more goes back to the end of the line.  Each
 * turn sends a frame or takes a stream out of line, so this ends.  The
 * frames go on @q.  No stream lock held (the peer lock may be): whatever
 * freed room, the line moves once that stream's lock is released.
 */
void grim_peer_cwnd_wake(struct grim_peer *peer, struct sk_buff_head *q)
{
	struct grim_txs *txs;

	/* A stream taken off the line may be unhashed meanwhile; it is
	 * freed a grace period later.
	 */
	rcu_read_lock();
	for (;;) {
		spin_lock(&peer->cc_lock);
		txs = peer->inflight < peer->cwnd ?
		      list_first_entry_or_null(&peer->cwnd_wait,
					       struct grim_txs, cwnd_link) :
		      NULL;
		if (txs)
			list_del_init(&txs->cwnd_link);
		spin_unlock(&peer->cc_lock);
		if (!txs)
			break;
		spin_lock(&txs->lock);
		if (!txs->reaped) {
			txs->cwnd_turn = true;
			grim_txs_push(txs);
			txs->cwnd_turn = false;
		}
		skb_queue_splice_tail_init(&txs->xmitq, q);
		spin_unlock(&txs->lock);
	}
	rcu_read_unlock();
}

/* Queue a frame made under the stream's lock. */
static void grim_txs_xmit(struct grim_txs *txs, struct sk_buff *skb)
{
	lockdep_assert_held(&txs->lock);
	__skb_queue_tail(&txs->xmitq, skb);
}

/* Release the lock of a stream, the peer lock still held: its frames go
 * with the peer's, and the streams waiting for room are woken when the
 * peer lock is released.
 */
void grim_txs_unlock_nested(struct grim_txs *txs)
	__releases(&txs->lock)
{
	lockdep_assert_held(&txs->peer->lock);
	skb_queue_splice_tail_init(&txs->xmitq, &txs->peer->xmitq);
	spin_unlock(&txs->lock);
}

/* Release the lock of a stream, no peer lock held, BH off: send its
 * frames, and give whatever room it freed to the streams waiting.
 */
static void grim_txs_unlock(struct grim_txs *txs)
	__releases(&txs->lock)
{
	struct grim_peer *peer = txs->peer;
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	skb_queue_splice_init(&txs->xmitq, &q);
	spin_unlock(&txs->lock);
	if (!list_empty_careful(&peer->cwnd_wait))
		grim_peer_cwnd_wake(peer, &q);
	grim_xmit_queue(peer->ni, peer, &q);
}

static void grim_txs_init(struct grim_txs *txs, struct grim_peer *peer,
			  u16 src_chan, u16 dst_chan)
{
	txs->peer = peer;
	txs->node = peer->node;
	txs->src_chan = src_chan;
	txs->dst_chan = dst_chan;
	txs->inc = grim_peer_next_inc(peer);
	spin_lock_init(&txs->lock);
	__skb_queue_head_init(&txs->xmitq);
	skb_queue_head_init(&txs->frames);
	INIT_LIST_HEAD(&txs->cwnd_link);
	timer_setup(&txs->timer, grim_txs_timer, 0);
	hrtimer_init(&txs->tlp, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	txs->tlp.function = grim_txs_tlp_fire;
	grim_txs_rtt_seed(txs);
	txs->rto = txs->rto_base;
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
	txs->idle_since = jiffies;
}

/* The send stream @src_chan to @dst_chan of @peer, made if @create.
 * Peer lock held.  There is no fixed number of them: each is charged to
 * the sender's memory cgroup, and closed after it idles.
 */
static struct grim_txs *grim_txs_get(struct grim_peer *peer, u16 src_chan,
				     u16 dst_chan, bool create)
{
	struct grim_skey key = {
		.node = peer->node, .src_chan = src_chan, .dst_chan = dst_chan,
	};
	struct grim_ni *ni = peer->ni;
	struct grim_txs *txs;

	txs = rhashtable_lookup_fast(&ni->txs_ht, &key, grim_txs_params);
	if (txs)
		return txs->peer == peer ? txs : NULL;
	if (!create || peer->dead)
		return NULL;
	/* Made by a sender (process context): charged to its cgroup. */
	txs = kmem_cache_zalloc(grim_txs_cache, GFP_ATOMIC | __GFP_ACCOUNT);
	if (!txs)
		return NULL;
	grim_txs_init(txs, peer, src_chan, dst_chan);
	if (rhashtable_lookup_insert_fast(&ni->txs_ht, &txs->hnode,
					  grim_txs_params)) {
		kmem_cache_free(grim_txs_cache, txs);
		return NULL;
	}
	list_add_tail(&txs->plink, &peer->txs_list);
	peer->ntx++;
	atomic_inc(&ni->ntxs);
	grim_count(ni, NULL, GRIM_STAT_TX_STREAMS_OPENED);
	return txs;
}

static void grim_txs_free_rcu(struct rcu_head *head)
{
	grim_txs_free(container_of(head, struct grim_txs, rcu));
}

/* Take @txs out of the NI's table and the peer's list (peer dying or
 * stopping; the peer's free stops its timer and frees it).  Peer lock
 * and stream lock held.
 */
void grim_txs_unhash(struct grim_txs *txs)
{
	struct grim_peer *peer = txs->peer;
	struct sk_buff *skb;

	lockdep_assert_held(&peer->lock);
	lockdep_assert_held(&txs->lock);
	if (txs->reaped)
		return;
	txs->dead = true;
	txs->reaped = true;
	/* A sender that took the stream's lock between the peer's flush
	 * and this queued messages nobody would send.
	 */
	while ((skb = __skb_dequeue(&txs->frames)))
		grim_frame_fail(txs, skb, -ENETDOWN);
	txs->send_head = NULL;
	spin_lock(&peer->cc_lock);
	list_del_init(&txs->cwnd_link);
	peer->inflight -= txs->flight;
	spin_unlock(&peer->cc_lock);
	txs->flight = 0;
	rhashtable_remove_fast(&peer->ni->txs_ht, &txs->hnode,
			       grim_txs_params);
	atomic_dec(&peer->ni->ntxs);
	grim_count(peer->ni, NULL, GRIM_STAT_TX_STREAMS_CLOSED);
}

/* The stream is closed: unhash it and have the reap work stop its timer
 * and free it.  Peer lock and stream lock held; the peer is alive.
 */
static void grim_txs_reap(struct grim_txs *txs)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;

	grim_txs_unhash(txs);
	list_del(&txs->plink);
	peer->ntx--;
	spin_lock(&ni->reap_lock);
	list_add_tail(&txs->plink, &ni->txs_reap);
	spin_unlock(&ni->reap_lock);
	schedule_work(&ni->reap_work);
}

/* Stop the timers of, and free, the closed tx streams (process
 * context).  Their peers are still alive: see grim_ni_reap_work().
 */
void grim_ni_reap_txs(struct grim_ni *ni)
{
	struct grim_txs *txs, *tmp;
	LIST_HEAD(gone);

	spin_lock_bh(&ni->reap_lock);
	list_splice_init(&ni->txs_reap, &gone);
	spin_unlock_bh(&ni->reap_lock);
	list_for_each_entry_safe(txs, tmp, &gone, plink) {
		grim_txs_stop_timers(txs);
		call_rcu(&txs->rcu, grim_txs_free_rcu);
	}
}

/* Stop the timers of a stream marked dead: neither rearms itself or
 * starts the other once it finds the stream so.  Process context.
 */
void grim_txs_stop_timers(struct grim_txs *txs)
{
	hrtimer_cancel(&txs->tlp);
	del_timer_sync(&txs->timer);
}

/* Free a tx stream no lookup can find any more, its timer stopped. */
void grim_txs_free(struct grim_txs *txs)
{
	kfree(txs->sack_map);
	kmem_cache_free(grim_txs_cache, txs);
}

static unsigned long grim_idle_jiffies(const struct grim_txs *txs)
{
	return msecs_to_jiffies(READ_ONCE(txs->peer->ni->stream_idle_ms));
}

/* Nothing left to send: the stream starts idling.  Stream lock held. */
static void grim_txs_now_idle(struct grim_txs *txs)
{
	txs->idle_since = jiffies;
	if (!txs->dead && !timer_pending(&txs->timer))
		mod_timer(&txs->timer, jiffies +
			  grim_idle_jiffies(txs));
}

/* Whether the stream has nothing to send or to wait for. */
static bool grim_txs_is_idle(const struct grim_txs *txs)
{
	return skb_queue_empty(&txs->frames) && !txs->aborting;
}

/* The time since an echoed send time @tsecr, in the frames' clock, or
 * 0 if it gives none: no echo, or one from the future or from longer
 * ago than any round trip the transport waits for (a peer's garbage).
 */
static u32 grim_ts_age(u32 tsecr)
{
	u32 d = grim_ts_now() - tsecr;

	if (!tsecr || (s32)d < 0 || d > GRIM_MAX_RTO_MS * 1000U)
		return 0;
	return d ?: 1;
}

/* A round trip @d in the frames' clock, in jiffies (0 for none). */
static unsigned long grim_ts_jiffies(u32 d)
{
	return d ? max(nsecs_to_jiffies((u64)d << 10), 1UL) : 0;
}

/* Feed the fine-grained round trip estimates loss detection uses: the
 * least round trip of the last ten seconds and a smoothed one.
 */
static void grim_txs_rtt_fine(struct grim_txs *txs, u32 d)
{
	if (!txs->rtt_min || d <= txs->rtt_min ||
	    time_after(jiffies, txs->rtt_min_at + 10 * HZ)) {
		txs->rtt_min = d;
		txs->rtt_min_at = jiffies;
	}
	if (!txs->srtt_ts8)
		txs->srtt_ts8 = d << 3;
	else
		txs->srtt_ts8 += d - (txs->srtt_ts8 >> 3);
}

/* How long a hole may be overtaken by frames sent after it before it
 * counts as lost: a quarter of the least round trip, doubled for every
 * resend found spurious lately, at most the smoothed round trip.
 */
static u32 grim_txs_reo_wnd(const struct grim_txs *txs)
{
	u32 base = max_t(u32, txs->rtt_min >> 2, GRIM_REO_MIN);
	u32 cap = max_t(u32, txs->srtt_ts8 >> 3, GRIM_REO_MIN);

	return min(base << txs->reo_shift, cap);
}

/* A frame sent at @ts has arrived: frames sent well before it and still
 * missing are lost (grim_txs_mark_lost()).
 */
static void grim_txs_rack(struct grim_txs *txs, u32 ts)
{
	/* A date older than any round trip (a stream held back by NACKs
	 * for long) is no date: the clock wraps in 2^31 of its units.
	 */
	if (ts && (!grim_ts_age(txs->rack_ts) ||
		   (s32)(ts - txs->rack_ts) > 0))
		txs->rack_ts = ts;
}

/* The copy of frame @skb that filled its hole was sent before its last
 * resend (the echo @tsecr dates the copy that arrived): the resend was
 * spurious, the hole only overtaken.  Allow more reordering.
 */
static void grim_txs_spurious(struct grim_txs *txs, struct sk_buff *skb,
			      u32 tsecr)
{
	struct grim_frame_cb *fcb = GRIM_FRAME_CB(skb);

	if (!fcb->marked || !grim_ts_age(tsecr) ||
	    (s32)(tsecr - fcb->xmit_ts) >= 0)
		return;
	grim_count(txs->peer->ni, txs->peer, GRIM_STAT_RETRANS_SPURIOUS);
	if (txs->reo_shift < GRIM_REO_SHIFT_MAX)
		txs->reo_shift++;
	txs->reo_calm = 0;
}

/* Free acknowledged frames; complete their messages.  @tsecr is the
 * send time the ACK echoes, 0 for none.  Returns whether the ACK timed
 * a round trip.  Stream lock held.
 */
static bool grim_txs_ack_to(struct grim_txs *txs, u32 seq, u32 tsecr)
{
	struct sk_buff *skb, *newest = NULL;
	bool retx = false, sampled = false, any;
	u32 d = grim_ts_age(tsecr);
	unsigned long rtt = grim_ts_jiffies(d);

	while ((skb = skb_peek(&txs->frames)) &&
	       grim_seq_before(GRIM_FRAME_CB(skb)->seq, seq)) {
		if (newest)
			consume_skb(newest);
		else
			grim_txs_spurious(txs, skb, tsecr);
		newest = skb;
		retx |= GRIM_FRAME_CB(skb)->retx;
		if (!GRIM_FRAME_CB(skb)->resent)
			grim_txs_rack(txs, GRIM_FRAME_CB(skb)->xmit_ts);
		__skb_unlink(skb, &txs->frames);
		if (skb == txs->send_head)
			txs->send_head = skb_peek(&txs->frames);
		if (GRIM_FRAME_CB(skb)->msg)
			consume_skb(GRIM_FRAME_CB(skb)->msg);
	}
	any = newest;
	if (newest && rtt) {
		/* The echo times the frame that let this ACK go, the first
		 * copy or a resent one: no ambiguity, no Karn's rule.
		 */
		grim_txs_rtt_sample(txs, rtt);
		grim_txs_rtt_fine(txs, d);
		grim_txs_rack(txs, tsecr);
		sampled = true;
		consume_skb(newest);
	} else if (newest) {
		/* No echo: Karn's rule, for the whole range: an ACK that a resent
		 * frame let through (a filled hole releasing frames held
		 * past it) times the recovery, not the round trip.  A
		 * frame resent only by a loss probe still times from its
		 * first transmission: if the ACK answers that one, this is
		 * the round trip; if it answers the probe, the sample is
		 * long by the probe's wait, at most twice the estimate.
		 * Leaving such frames out would starve the estimator on a
		 * path slower than its estimate, where every frame is
		 * probed before its ACK comes back and no sample is ever
		 * taken: the probes and timeouts would never stop.
		 */
		sampled = !retx;
		if (sampled)
			grim_txs_rtt_sample(txs, jiffies -
					    GRIM_FRAME_CB(newest)->sent);
		consume_skb(newest);
	}
	if (grim_seq_after(seq, txs->snd_una)) {
		spin_lock(&txs->peer->cc_lock);
		grim_peer_cwnd_grow(txs->peer, min(seq - txs->snd_una,
						   txs->flight));
		spin_unlock(&txs->peer->cc_lock);
	}
	txs->snd_una = seq;
	if (grim_seq_before(txs->snd_nxt, seq))
		txs->snd_nxt = seq;
	grim_txs_flight(txs);
	if (txs->skip && grim_seq_after(seq, txs->skip_seq))
		txs->skip = false;	/* the receiver took the skip */
	if (any && skb_queue_empty(&txs->frames))
		grim_txs_now_idle(txs);
	return sampled;
}

/* The message that frame @skb (unlinked, its last frame) completes, as
 * its sender gave it: the message itself, or the frame when the message
 * went whole; *@cb and *@len are set to describe it.
 */
static struct sk_buff *grim_frame_msg(struct grim_txs *txs,
				      struct sk_buff *skb,
				      struct grim_msg_cb *cb, unsigned int *len)
{
	const struct grim_msg_hdr *mh;
	struct sk_buff *msg;
	int i;

	if (!GRIM_FRAME_CB(skb)->whole) {
		msg = GRIM_FRAME_CB(skb)->msg;
		*cb = *GRIM_MSG_CB(msg);
		*len = msg->len;
		return msg;
	}
	/* The frame's cb is the NI's now: read the message header. */
	mh = (const struct grim_msg_hdr *)(skb->data + GRIM_DATA_HLEN);
	memset(cb, 0, sizeof(*cb));
	cb->node = txs->peer->node;
	cb->src_port = txs->src_chan;
	cb->dst_port = txs->dst_chan;
	cb->handler = ntohl(mh->w3) & 0xffff;
	for (i = 0; i < 4; i++)
		cb->arg[i] = ntohl(mh->arg[i]);
	*len = skb->len - GRIM_DATA_HLEN - GRIM_MSG_HLEN;
	/* A socket's message to a group went to the root with the group
	 * in its first bytes.
	 */
	if (cb->dst_port == GRIM_PORT_MC_ROOT && cb->src_port < GRIM_PORT_DEV &&
	    *len >= GRIM_GROUP_HLEN) {
		__be32 group;

		memcpy(&group, mh + 1, sizeof(group));
		cb->flags = GRIM_MSG_F_GROUP;
		cb->group = ntohl(group);
	}
	return skb;
}

/* Report the message that frame @skb (unlinked) completes as failed, and
 * free the frame; a frame that completes no message is just freed.
 */
static void grim_frame_fail(struct grim_txs *txs, struct sk_buff *skb,
			    int err)
{
	struct grim_ep *ep = GRIM_FRAME_CB(skb)->ep;
	struct grim_ni *ni = txs->peer->ni;
	struct grim_msg_cb cb;
	struct sk_buff *msg;
	unsigned int len;

	if (!GRIM_FRAME_CB(skb)->whole && !GRIM_FRAME_CB(skb)->msg) {
		kfree_skb(skb);
		return;
	}
	grim_count(ni, txs->peer, GRIM_STAT_MSG_FAILED);
	msg = grim_frame_msg(txs, skb, &cb, &len);
	if (msg != skb)
		kfree_skb(skb);
	ep->ops->tx_failed(ep, msg, &cb, len, err);
}

/* Forget the receiver's last report, and the memory that kept it. */
static void grim_txs_report_clear(struct grim_txs *txs)
{
	txs->sack_words = 0;
	txs->sack_ts = 0;
	kfree(txs->sack_map);
	txs->sack_map = NULL;
}

/* A new incarnation of @txs, from sequence 0, with nothing sent and no
 * recovery, refusal or close going on; what is queued stays, for the
 * caller to number.  Peer and stream locks held.
 */
static void grim_txs_restart(struct grim_txs *txs)
{
	txs->inc = grim_peer_next_inc(txs->peer);
	txs->send_head = NULL;
	txs->next_seq = 0;
	txs->snd_una = 0;
	txs->snd_nxt = 0;
	txs->next_sent = 0;
	txs->recover = 0;
	txs->rack_ts = 0;
	txs->fast = false;
	txs->probed = false;
	txs->held = false;
	txs->probe = false;
	txs->rto_one = false;
	txs->skip = false;
	txs->sack_fresh = false;
	txs->sack_skip = false;
	grim_txs_report_clear(txs);
	txs->aborting = false;
	txs->closing = false;
	grim_txs_flight(txs);
	if (!txs->srtt8)
		grim_txs_rtt_seed(txs);
	txs->rto = txs->rto_base;
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
}

/* Fail everything queued; restart the stream at sequence 0, under a new
 * incarnation.  Peer and stream locks held.
 */
void grim_txs_fail(struct grim_txs *txs, int err)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&txs->frames)))
		grim_frame_fail(txs, skb, err);
	grim_txs_restart(txs);
	grim_txs_now_idle(txs);
}

static struct sk_buff *grim_txs_frame_at(struct grim_txs *txs, u32 seq)
{
	struct sk_buff *skb;

	skb_queue_walk(&txs->frames, skb) {
		if (GRIM_FRAME_CB(skb)->seq == seq)
			return skb;
	}
	return NULL;
}

/* Go back to @seq.  Frames already sent past it will draw duplicate ACKs
 * when they arrive; @recover marks them so that the losses they show
 * cut the congestion window no second time.
 */
static void grim_txs_rollback(struct grim_txs *txs, u32 seq)
{
	txs->send_head = grim_txs_frame_at(txs, seq);
	txs->snd_nxt = seq;
	txs->recover = txs->next_sent;
	txs->fast = false;
	txs->probed = false;
	txs->sack_skip = false;
	grim_txs_flight(txs);
}

/* Whether the receiver's last report says it holds frame @f.  Never the
 * oldest unacknowledged frame, nor one before it: the receiver lacks
 * that one, whatever it said (it took what it held once the gap closed).
 */
static bool grim_txs_held(const struct grim_txs *txs, u32 f)
{
	u32 d = f - txs->sack_seq - 1;

	return grim_seq_after(f, txs->snd_una) &&
	       d < 64 * txs->sack_words &&
	       (txs->sack_map[d / 64] & BIT_ULL(d % 64));
}

/* How many frames past snd_una the last report holds, and one past the
 * last of them (snd_una + 1 if none).
 */
static u32 grim_txs_held_count(const struct grim_txs *txs, u32 *end)
{
	u32 base = txs->snd_una - txs->sack_seq;	/* bit of snd_una + 1 */
	u32 j, n = 0;

	*end = txs->snd_una + 1;
	for (j = 0; j < txs->sack_words; j++) {
		u64 w = txs->sack_map[j];

		if (64 * j + 64 <= base)
			continue;
		if (64 * j < base)
			w &= GENMASK_ULL(63, base - 64 * j);
		if (w) {
			n += hweight64(w);
			*end = txs->sack_seq + 1 + 64 * j + fls64(w);
		}
	}
	return n;
}

/* Whether a timeout's pass back over the window leaves frame @seq out:
 * the receiver's last report, if it came since the timeout before,
 * held it.
 */
static bool grim_txs_sacked(const struct grim_txs *txs, u32 seq)
{
	return txs->sack_skip && grim_txs_held(txs, seq);
}

/* Keep the receiver's report @rep of what it holds past its gap at
 * @seq (no earlier than the kept one's), sent at its clock's @ts.  ACKs
 * may overtake each other: an older report of the same gap, which may
 * hold less, changes nothing.  Memory for a report is taken only
 * while the receiver holds frames: a stream with no gap costs none.
 * With no memory, the report is taken as holding nothing (the frames it
 * named are sent again).  Stream lock held.
 */
static void grim_txs_report(struct grim_txs *txs, u32 seq,
			    const struct grim_report *rep, u32 ts)
{
	unsigned int j, words = rep ? rep->words : 0;

	if (seq == txs->sack_seq && txs->sack_ts &&
	    (s32)(ts - txs->sack_ts) < 0)
		return;
	if (!words) {
		grim_txs_report_clear(txs);
	} else if (!txs->sack_map) {
		txs->sack_map = kmalloc_array(GRIM_SACK_WORDS,
					      sizeof(*txs->sack_map),
					      GFP_ATOMIC);
		if (!txs->sack_map)
			words = 0;
	}
	txs->sack_ts = ts;
	txs->sack_seq = seq;
	txs->sack_words = words;
	for (j = 0; j < words; j++)
		txs->sack_map[j] = be64_to_cpu(rep->held[j].held);
	txs->sack_fresh = true;
}

/* Put the current ACK of the reverse stream into a frame's head, and ask
 * for an ACK at once if the frame fills the stream's window, or the
 * peer's congestion window when that is too small for the receiver's
 * ACK every GRIM_ACK_EVERY frames to keep it moving (the receiver, which
 * knows neither window, would otherwise wait for its ACK timer).
 * The frame after frames given up carries, instead of that ACK, where
 * the frames given up start (GRIM_XF_SKIP).
 */
static void grim_frame_ack(struct grim_txs *txs, struct sk_buff *skb,
			   bool ackreq, u32 now)
{
	struct grim_link_hdr *lh = (struct grim_link_hdr *)skb->data;
	struct grim_ctl_msg *cm = (struct grim_ctl_msg *)(lh + 1);
	struct grim_frag_hdr *fh;
	struct grim_rxs *rev;

	cm->tsval = htonl(now);
	cm->tsecr = 0;
	if (ackreq)
		lh->flags |= GRIM_FF_ACKREQ;
	else
		lh->flags &= ~GRIM_FF_ACKREQ;
	txs->tlp_delack = !ackreq && (lh->flags & GRIM_FF_LAST);

	fh = (struct grim_frag_hdr *)(skb->data + GRIM_CTL_LEN);
	if (txs->skip && GRIM_FRAME_CB(skb)->seq == txs->skip_seq) {
		lh->xflags |= GRIM_XF_SKIP;
		lh->flags &= ~GRIM_FF_ACK;
		fh->ack = htonl(txs->skip_from);
		fh->ack_inc = 0;
		return;
	}
	lh->xflags &= ~GRIM_XF_SKIP;
	lh->flags &= ~GRIM_FF_ACK;
	fh->ack = 0;
	fh->ack_inc = 0;
	/* The reverse stream may be freed meanwhile: it is, a grace period
	 * after it was marked dead under its lock.
	 */
	rcu_read_lock();
	rev = grim_rxs_find(txs->peer, txs->dst_chan, txs->src_chan);
	if (rev) {
		spin_lock(&rev->lock);
		if (!rev->dead) {
			lh->flags |= GRIM_FF_ACK;
			fh->ack = htonl(rev->rcv_nxt);
			fh->ack_inc = htonl(rev->inc);
			cm->tsecr = htonl(rev->ts_recent);
			grim_rxs_acked(rev);
		}
		spin_unlock(&rev->lock);
	}
	rcu_read_unlock();
}

/* The first transmission of a queued frame: stamp the session, finish
 * the head in place and send a clone.  Nobody writes the head after
 * this, so the clone may share it; header release lets the lower
 * device's header go into the shared headroom without a copy.
 */
static struct sk_buff *grim_frame_first(struct grim_txs *txs,
					struct sk_buff *skb, bool ackreq)
{
	struct grim_link_hdr *lh = (struct grim_link_hdr *)skb->data;
	struct grim_frame_cb *fcb = GRIM_FRAME_CB(skb);
	u32 now = grim_ts_now();

	if (!fcb->stamped) {
		/* A session that changes fails or restarts the stream under
		 * its lock: these are the session's the frame goes in.
		 */
		lh->src_gen = htonl(READ_ONCE(txs->peer->lgen));
		lh->dst_gen = htonl(READ_ONCE(txs->peer->rgen));
		grim_frame_csum_offload(txs->peer->ni, skb);
		fcb->crc_tail = grim_frame_crc_tail(skb);
		__skb_header_release(skb);
		fcb->stamped = true;
	}
	grim_frame_ack(txs, skb, ackreq, now);
	grim_frame_finish_head(skb, fcb->crc_tail);
	fcb->xmit_ts = now;
	txs->tlp_ts = now;
	return skb_clone(skb, GFP_ATOMIC);
}

/* A retransmission: a copy with a private head (the payload is shared),
 * carrying the current ACK of the reverse stream.
 */
static struct sk_buff *grim_frame_copy(struct grim_txs *txs,
				       struct sk_buff *skb, bool ackreq)
{
	struct grim_frame_cb *fcb = GRIM_FRAME_CB(skb);
	u32 now = grim_ts_now();
	struct sk_buff *copy;

	copy = pskb_copy(skb, GFP_ATOMIC);
	if (!copy)
		return NULL;
	grim_frame_ack(txs, copy, ackreq, now);
	grim_frame_finish_head(copy, fcb->crc_tail);
	fcb->xmit_ts = now;
	txs->tlp_ts = now;
	fcb->resent = true;
	fcb->marked = false;
	return copy;
}

/* Resend frame @skb alone, flagged for an ACK at once.  A loss probe's
 * copy (@probe) leaves the frame's round trip measurable: see
 * grim_txs_ack_to().  Returns whether it went.  Stream lock held.
 */
static bool grim_txs_resend(struct grim_txs *txs, struct sk_buff *skb,
			    bool probe)
{
	struct grim_peer *peer = txs->peer;
	struct sk_buff *copy;

	copy = grim_frame_copy(txs, skb, true);
	if (!copy)
		return false;	/* the retransmission timer goes back for it */
	if (!probe)
		GRIM_FRAME_CB(skb)->retx = true;
	trace_grim_retransmit(peer->node, txs->src_chan, txs->dst_chan,
			      GRIM_FRAME_CB(skb)->seq);
	grim_count(peer->ni, peer, GRIM_STAT_RETRANS_FRAMES);
	grim_count(peer->ni, peer, GRIM_STAT_TX_FRAMES);
	grim_txs_xmit(txs, copy);
	return true;
}

/* Resend the frames below @end that the receiver lacks (not in its last
 * report) although a frame sent @reo_wnd or more after
 * them has arrived (@rack: its send time): RACK's rule (RFC 8985), with
 * the frames' own send times.  Reordering shorter than reo_wnd costs
 * nothing; a resent frame has a new send time, so it is resent again
 * only when a frame sent reo_wnd after the resend arrives without it (a
 * lost retransmission).  Returns how many went.  Stream lock held.
 */
static u32 grim_txs_mark_lost(struct grim_txs *txs, u32 rack, u32 end)
{
	s32 reo = grim_txs_reo_wnd(txs);
	u32 f, n = 0, last;
	struct sk_buff *skb;

	if (!grim_ts_age(rack))
		return 0;
	/* Until reordering has been seen, three frames held past a hole
	 * are proof enough (RFC 8985 6.2): a loss early in a burst sent
	 * within reo_wnd is found at once, not by the loss probe.
	 */
	if (!txs->reo_shift &&
	    grim_txs_held_count(txs, &last) >= GRIM_DUPACK_THRESH)
		reo = 0;
	/* The receiver holds no frame further than a report reaches past
	 * the gap: what lies beyond goes when the stream moves.
	 */
	if (grim_seq_after(end, txs->snd_una + 1 + GRIM_SACK_REACH))
		end = txs->snd_una + 1 + GRIM_SACK_REACH;
	if (grim_seq_after(end, txs->snd_nxt))
		end = txs->snd_nxt;
	skb_queue_walk(&txs->frames, skb) {
		struct grim_frame_cb *fcb = GRIM_FRAME_CB(skb);

		f = fcb->seq;
		if (!grim_seq_before(f, end))
			break;
		if ((s32)(rack - fcb->xmit_ts) < reo) {
			/* First copies go in sequence order, and a resend
			 * only makes a frame's send time later: no frame
			 * after a first copy sent this late is older.
			 */
			if (!fcb->resent)
				break;
			continue;
		}
		if (grim_txs_held(txs, f))
			continue;
		if (!grim_txs_resend(txs, skb, false))
			break;
		fcb->marked = true;
		n++;
	}
	return n;
}

/* An ACK of @seq (snd_una now) from the receiver itself (not one riding
 * on its data), whose report of the frames it holds past the gap is
 * kept: date what arrived, resend what is lost, and enter recovery if
 * that is new.  The congestion window is cut once per window of frames.
 * Stream lock held.
 */
static void grim_txs_recover(struct grim_txs *txs, u32 seq)
{
	struct grim_peer *peer = txs->peer;
	struct sk_buff *skb;
	u32 end;

	if (grim_txs_held_count(txs, &end)) {
		skb_queue_walk(&txs->frames, skb) {
			struct grim_frame_cb *fcb = GRIM_FRAME_CB(skb);

			if (!grim_seq_before(fcb->seq, end) ||
			    !grim_seq_before(fcb->seq, txs->snd_nxt))
				break;
			if (!fcb->resent && grim_txs_held(txs, fcb->seq))
				grim_txs_rack(txs, fcb->xmit_ts);
		}
	}
	if (!grim_txs_mark_lost(txs, txs->rack_ts, txs->snd_nxt) ||
	    txs->fast)
		return;
	txs->fast = true;
	if (!grim_seq_before(seq, txs->recover)) {
		grim_count(peer->ni, peer, GRIM_STAT_FAST_RETRANS);
		grim_peer_cwnd_loss(peer, false);
		if (txs->reo_calm < GRIM_REO_CALM) {
			txs->reo_calm++;
		} else if (txs->reo_shift) {
			txs->reo_shift--;
			txs->reo_calm = 0;
		}
	}
	txs->recover = txs->next_sent;
}

/* Whether the timer's next expiry sends a loss probe: once per stall,
 * not while a NACKed stream probes the endpoint (NACKs pace that), nor
 * while one frame finds out what the receiver holds after a timeout.
 */
static bool grim_txs_may_probe(const struct grim_txs *txs)
{
	return !txs->probed && !txs->probe && !txs->rto_one;
}

/* When the timer fires next, from the progress stamp: at the loss probe
 * (two round trips, no later than the retransmission timeout), then a
 * whole retransmission timeout after the probe (RFC 8985, 7.3), so that
 * the probe's answer has a round trip to come back.  A stall always
 * costs a probe first: a timeout goes back over the whole window and
 * may cut the congestion window, a probe resends one frame.
 */
static unsigned long grim_txs_timeout(struct grim_txs *txs)
{
	unsigned long pto = max_t(unsigned long, txs->srtt8 >> 2,
				  txs->src_chan >= GRIM_PORT_DEV ?
				  GRIM_PROBE_MIN_DEV : GRIM_PROBE_MIN);

	return grim_txs_may_probe(txs) ? min(pto, txs->rto) : txs->rto;
}

/* Whether a link endpoint's stream owes a tail loss probe from the
 * high-resolution timer: frames in flight, a round trip measured, and
 * nothing else (a NACK, a timeout, a close) in charge.  TCP above such
 * a stream probes its own tail about a jiffy after its last ACK, and the
 * timer wheel may fire GRIM's probe no sooner than TCP's.  Stream lock
 * held.
 */
static bool grim_txs_tlp_owed(const struct grim_txs *txs)
{
	return txs->src_chan >= GRIM_PORT_DEV && txs->srtt_ts8 &&
	       txs->snd_nxt != txs->snd_una && grim_txs_may_probe(txs) &&
	       !txs->dead && !txs->held && !txs->aborting && !txs->closing;
}

/* The tail probe's wait after the stream last moved, in grim_ts_now()
 * units: two smoothed round trips (RFC 8985, 7.2), and the longest the
 * receiver may hold its ACK when the tail ends a message (7.2's
 * WCDelAckT): a request's ACK waits for the answer that carries it.
 * The smoothed round trip has such waits in it, but not their spread:
 * without this, a reply a little later than usual cost a resend.
 */
static u32 grim_txs_tlp_pto(const struct grim_txs *txs)
{
	u32 pto = max_t(u32, txs->srtt_ts8 >> 2, GRIM_TLP_MIN);

	if (txs->tlp_delack)
		pto += jiffies_to_nsecs(GRIM_ACK_DELAY) >> 10;
	return pto;
}

/* Make sure the timer fires by the deadline the progress stamp gives;
 * a timer already due by then stays as it is.  Likewise the tail probe,
 * which looks at the stream when it fires and sleeps again if the
 * stream moved meanwhile.  Stream lock held.
 */
static void grim_txs_arm(struct grim_txs *txs)
{
	unsigned long due = txs->progress + grim_txs_timeout(txs);

	if (!timer_pending(&txs->timer) ||
	    time_after(txs->timer.expires, due))
		mod_timer(&txs->timer, due);
	if (grim_txs_tlp_owed(txs) && !hrtimer_is_queued(&txs->tlp)) {
		s32 left = txs->tlp_ts + grim_txs_tlp_pto(txs) - grim_ts_now();

		hrtimer_start(&txs->tlp, ns_to_ktime((u64)max(left, 1) << 10),
			      HRTIMER_MODE_REL_SOFT);
	}
}

/* Transmit what the window allows.  Stream lock held: the frames wait on
 * its queue until it is released.
 */
void grim_txs_push(struct grim_txs *txs)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	u32 window = READ_ONCE(ni->window);
	u32 quantum = txs->cwnd_turn ? GRIM_CWND_QUANTUM : U32_MAX;
	struct sk_buff *skb, *clone;
	bool up;

	grim_txs_flight(txs);
	if (READ_ONCE(peer->xmit_congested)) {
		WRITE_ONCE(peer->xmit_congested, false);
		grim_peer_cwnd_loss(peer, true);
	}
	/* The peer's state before its generations (grim_frame_first()):
	 * pairs with the release in grim_peer_set_up().
	 */
	up = smp_load_acquire(&peer->state) == GRIM_PEER_UP;
	if (txs->dead || txs->held || txs->aborting || !up)
		return;
	/* After a NACK, one frame probes the endpoint until it is ACKed;
	 * after a timeout, one frame finds what the receiver holds.
	 */
	if (txs->probe || txs->rto_one)
		window = 1;
	if (txs->snd_nxt == txs->snd_una)
		txs->progress = jiffies;	/* nothing was in flight */
	while ((skb = txs->send_head) &&
	       txs->snd_nxt - txs->snd_una < window) {
		bool retx = grim_seq_before(txs->snd_nxt, txs->next_sent);
		bool full = txs->snd_nxt + 1 - txs->snd_una >= window;

		if (retx && grim_txs_sacked(txs, txs->snd_nxt)) {
			/* The receiver holds it: still in flight, not sent. */
			txs->snd_nxt++;
			txs->send_head = skb_queue_is_last(&txs->frames, skb) ?
					 NULL : skb->next;
			continue;
		}
		if (!quantum--) {
			spin_lock(&peer->cc_lock);
			if (list_empty(&txs->cwnd_link))
				list_add_tail(&txs->cwnd_link,
					      &peer->cwnd_wait);
			spin_unlock(&peer->cc_lock);
			break;
		}
		if (!grim_txs_cwnd_take(txs, &full))
			break;

		clone = retx ? grim_frame_copy(txs, skb, full) :
			       grim_frame_first(txs, skb, full);
		if (!clone) {
			grim_txs_cwnd_untake(txs);
			break;	/* the retransmission timer tries again */
		}
		if (retx) {
			trace_grim_retransmit(peer->node, txs->src_chan,
					      txs->dst_chan, txs->snd_nxt);
			grim_count(ni, peer, GRIM_STAT_RETRANS_FRAMES);
			GRIM_FRAME_CB(skb)->retx = true;
		} else {
			txs->next_sent = txs->snd_nxt + 1;
			GRIM_FRAME_CB(skb)->sent = jiffies;
		}
		grim_count(ni, peer, GRIM_STAT_TX_FRAMES);
		txs->snd_nxt++;
		txs->send_head = skb_queue_is_last(&txs->frames, skb) ?
				 NULL : skb->next;
		grim_txs_xmit(txs, clone);
	}
	if (txs->snd_nxt != txs->snd_una || txs->send_head)
		grim_txs_arm(txs);
}

/* The peer is up: send what its streams hold.  Peer lock held. */
void grim_peer_push_all(struct grim_peer *peer)
{
	struct grim_txs *txs;

	list_for_each_entry(txs, &peer->txs_list, plink) {
		spin_lock(&txs->lock);
		grim_txs_push(txs);
		grim_txs_unlock_nested(txs);
	}
}

/* The last frame, in @q, of the message that starts at frame @skb. */
static struct sk_buff *grim_msg_end(struct sk_buff_head *q,
				    struct sk_buff *skb)
{
	for (; skb != (struct sk_buff *)q; skb = skb->next)
		if (GRIM_FRAME_CB(skb)->whole || GRIM_FRAME_CB(skb)->msg)
			return skb;
	return NULL;
}

/* The receiver has refused this stream's next message for dead_ms: give
 * up the messages at its head whose senders are gone (a closed socket
 * has no one to wait for them), and tell the receiver to skip them.
 * Stream lock held.
 */
static void grim_txs_give_up_orphans(struct grim_txs *txs)
{
	u32 from = txs->snd_una;
	struct sk_buff *skb, *last, *next;
	const struct grim_ep *ep;
	bool any = false;

	while ((skb = skb_peek(&txs->frames))) {
		last = grim_msg_end(&txs->frames, skb);
		if (!last)
			break;
		ep = GRIM_FRAME_CB(last)->ep;
		if (!ep->ops->orphaned(ep))
			break;
		do {
			next = skb->next;
			__skb_unlink(skb, &txs->frames);
			grim_frame_fail(txs, skb, -ECONNABORTED);
		} while (skb != last && (skb = next));
		any = true;
	}
	if (!any)
		return;
	skb = skb_peek(&txs->frames);
	txs->snd_una = skb ? GRIM_FRAME_CB(skb)->seq : txs->next_seq;
	grim_txs_rollback(txs, txs->snd_una);
	txs->skip = true;
	txs->skip_from = from;
	txs->skip_seq = txs->snd_una;
	txs->probe = false;
	txs->rto_one = false;
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
	if (skb_queue_empty(&txs->frames))
		grim_txs_now_idle(txs);
}

/* A CLOSE (everything before next_seq was acknowledged) or an ABORT
 * (give up the frames up to abort_to) of @txs.  Stream lock held.
 */
static void grim_txs_send_ctl(struct grim_txs *txs, u8 type)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	bool close = type == GRIM_FT_CLOSE;
	struct sk_buff *skb;

	skb = grim_ctl_frame(ni, peer, type, 0, txs->src_chan, txs->dst_chan,
			     close ? txs->next_seq : txs->abort_to, txs->inc,
			     0);
	if (!skb)
		return;		/* the timer sends it again */
	grim_frame_finish(skb);
	grim_count(ni, peer, close ? GRIM_STAT_TX_CLOSES : GRIM_STAT_TX_ABORTS);
	grim_txs_xmit(txs, skb);
}

/* Close an idle stream: CLOSE until the receiver answers CLOSED.  A
 * message queued meanwhile takes the stream back (grim_ni_queue()).
 * Stream lock held.
 */
static void grim_txs_close(struct grim_txs *txs)
{
	txs->closing = true;
	txs->progress = jiffies;
	txs->rto = txs->rto_base;
	grim_txs_send_ctl(txs, GRIM_FT_CLOSE);
	mod_timer(&txs->timer, jiffies + txs->rto);
}

/* Whether a closing stream has had no CLOSED for dead_ms: it is then
 * forgotten anyway.  Nothing is lost so: nothing was pending, and a
 * receiver that still holds the stream lets a new incarnation take its
 * place.
 */
static bool grim_txs_close_expired(const struct grim_txs *txs)
{
	return txs->closing && !txs->dead &&
	       time_after(jiffies, txs->progress +
			  msecs_to_jiffies(READ_ONCE(txs->peer->ni->dead_ms)));
}

/* No CLOSED yet: send CLOSE again, backing off.  Stream lock held. */
static void grim_txs_close_timer(struct grim_txs *txs)
{
	if (READ_ONCE(txs->peer->state) == GRIM_PEER_UP)
		grim_txs_send_ctl(txs, GRIM_FT_CLOSE);
	txs->rto = min_t(unsigned long, txs->rto * 2,
			 msecs_to_jiffies(GRIM_MAX_RTO_MS));
	mod_timer(&txs->timer, jiffies + txs->rto);
}

/* A closing stream's time is up: forget it, which takes the peer lock
 * first (grim_txs_reap()).  BH off, no lock held.
 */
static void grim_txs_close_reap(struct grim_txs *txs)
{
	struct grim_peer *peer = txs->peer;

	spin_lock(&peer->lock);
	spin_lock(&txs->lock);
	if (grim_txs_close_expired(txs))
		grim_txs_reap(txs);
	grim_txs_unlock_nested(txs);
	grim_peer_unlock(peer);
}

/* The receiver's answer to our CLOSE.  Peer lock held. */
void grim_tx_rcv_closed(struct grim_ni *ni, struct grim_peer *peer,
			const struct grim_ctl_msg *cm)
{
	struct grim_txs *txs;

	txs = grim_txs_get(peer, ntohs(cm->dst_chan), ntohs(cm->src_chan),
			   false);
	if (!txs || ntohl(cm->inc) != txs->inc)
		return;
	spin_lock(&txs->lock);
	/* Unless late, or the stream was taken back. */
	if (txs->closing && ntohl(cm->seq) == txs->next_seq)
		grim_txs_reap(txs);
	grim_txs_unlock_nested(txs);
}

/* The loss probe: resend the oldest unacknowledged frame alone, flagged
 * for an ACK at once, and what the receiver's last report showed
 * missing.  Not the last frame sent, as TCP's probe does: the receiver
 * lacks the oldest unless only its ACK is late, while a last frame that
 * arrived past a hole would be resent for nothing, its answer too
 * ambiguous to date the hole's loss (grim_txs_recover()).  Then a whole
 * retransmission timeout from the probe (RFC 8985, 7.3), so that its
 * answer has a round trip to come back.  Stream lock held.
 */
static void grim_txs_probe(struct grim_txs *txs)
{
	struct sk_buff *skb = skb_peek(&txs->frames);
	struct grim_peer *peer = txs->peer;
	u32 end;

	grim_count(peer->ni, peer, GRIM_STAT_PROBES);
	txs->probed = true;
	if (skb) {
		grim_txs_resend(txs, skb, true);
		/* The holes the last report showed, if it came since the
		 * last timeout and they had a round trip to arrive.
		 */
		if (txs->sack_fresh && grim_txs_held_count(txs, &end))
			grim_txs_mark_lost(txs, grim_ts_now() -
					   (txs->srtt_ts8 >> 3), end);
	}
	txs->progress = jiffies;
	grim_txs_arm(txs);
}

/* The tail probe's high-resolution timer (softirq, BH off).  A stream
 * that moved since the timer was set (grim_txs_arm() sets it once, not
 * on every frame) sleeps again until its new deadline.
 */
static enum hrtimer_restart grim_txs_tlp_fire(struct hrtimer *t)
{
	struct grim_txs *txs = container_of(t, struct grim_txs, tlp);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	s32 left;

	spin_lock(&txs->lock);
	if (!grim_txs_tlp_owed(txs) ||
	    READ_ONCE(txs->peer->state) != GRIM_PEER_UP)
		goto out;
	left = txs->tlp_ts + grim_txs_tlp_pto(txs) - grim_ts_now();
	if (left > 0) {
		/* Unless grim_txs_arm() started it again meanwhile. */
		if (hrtimer_is_queued(t))
			goto out;
		hrtimer_set_expires(t, ktime_add_ns(hrtimer_cb_get_time(t),
						    (u64)left << 10));
		ret = HRTIMER_RESTART;
		goto out;
	}
	grim_txs_probe(txs);
	grim_txs_push(txs);
out:
	grim_txs_unlock(txs);
	return ret;
}

static void grim_txs_timer(struct timer_list *t)
{
	struct grim_txs *txs = from_timer(txs, t, timer);
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;

	spin_lock_bh(&txs->lock);
	if (txs->dead)
		goto out;
	if (grim_txs_close_expired(txs)) {
		grim_txs_unlock(txs);
		grim_txs_close_reap(txs);
		local_bh_enable();
		return;
	}
	if (txs->closing) {
		grim_txs_close_timer(txs);
		goto out;
	}
	if (grim_txs_is_idle(txs)) {
		unsigned long due = txs->idle_since +
				    grim_idle_jiffies(txs);

		if (READ_ONCE(peer->state) != GRIM_PEER_UP)
			due = jiffies + grim_idle_jiffies(txs);
		if (time_before(jiffies, due))
			mod_timer(&txs->timer, due);
		else
			grim_txs_close(txs);
		goto out;
	}
	if (txs->aborting) {
		if (READ_ONCE(peer->state) == GRIM_PEER_UP)
			grim_txs_send_ctl(txs, GRIM_FT_ABORT);
		txs->rto = min_t(unsigned long, txs->rto * 2,
				 msecs_to_jiffies(GRIM_MAX_RTO_MS));
		mod_timer(&txs->timer, jiffies + txs->rto);
		goto out;
	}
	if (txs->held) {
		txs->held = false;
		if (time_after(jiffies, txs->refused_since +
			       msecs_to_jiffies(READ_ONCE(ni->dead_ms))))
			grim_txs_give_up_orphans(txs);
	} else if (txs->snd_nxt != txs->snd_una &&
		   READ_ONCE(peer->state) == GRIM_PEER_UP) {
		unsigned long due = txs->progress + grim_txs_timeout(txs);

		if (time_before(jiffies, due)) {
			/* The stream moved since the timer was set. */
			mod_timer(&txs->timer, due);
			goto out;
		}
		if (grim_txs_may_probe(txs)) {
			grim_txs_probe(txs);
			goto out;
		}
		grim_count(ni, peer, GRIM_STAT_RTO_EVENTS);
		trace_grim_timeout(peer->node, txs->src_chan, txs->dst_chan,
				   txs->snd_una);
		grim_txs_rollback(txs, txs->snd_una);
		/* Into a queue that overflowed, one frame finds out what the
		 * receiver holds; on a lossy link, the whole window goes
		 * again at once, but for the frames the receiver reported
		 * holding since the last timeout.  A report no newer than
		 * that is not trusted twice: the receiver may have had to
		 * drop what it held.
		 */
		txs->rto_one = grim_peer_cwnd_loss(peer, false);
		txs->sack_skip = txs->sack_fresh;
		txs->sack_fresh = false;
		txs->sack_ts = 0;
		txs->rto = min_t(unsigned long, txs->rto * 2,
				 msecs_to_jiffies(GRIM_MAX_RTO_MS));
		txs->progress = jiffies;
	}
	grim_txs_push(txs);
out:
	grim_txs_unlock(txs);
	local_bh_enable();
}

/* The receiver of a stream we have no incarnation @cm->inc of, or whose
 * frame @cm->seq we never sent, asks after a message it holds part of
 * (GRIM_XF_QUERY): none is coming, say so with an ABORT flagged the same
 * way.  The frame goes on @q, the transmit queue of the lock held.
 */
static void grim_tx_deny(struct grim_ni *ni, struct grim_peer *peer,
			 const struct grim_ctl_msg *cm, struct sk_buff_head *q)
{
	struct sk_buff *skb;

	skb = grim_ctl_frame(ni, peer, GRIM_FT_ABORT, 0, ntohs(cm->dst_chan),
			     ntohs(cm->src_chan), ntohl(cm->seq),
			     ntohl(cm->inc), 0);
	if (!skb)
		return;		/* it asks again */
	((struct grim_link_hdr *)skb->data)->xflags |= GRIM_XF_QUERY;
	grim_frame_finish(skb);
	grim_count(ni, peer, GRIM_STAT_TX_DENIALS);
	__skb_queue_tail(q, skb);
}

/* The stream an ACK or NACK (@piggybacked on a data frame, or not) is
 * about, if it is one of ours and of the incarnation it names.  Peer
 * lock held.
 */
static struct grim_txs *grim_tx_ctl_stream(struct grim_ni *ni,
					   struct grim_peer *peer,
					   const struct grim_link_hdr *lh,
					   const struct grim_ctl_msg *cm,
					   bool piggybacked)
{
	struct grim_txs *txs;

	/* Their source channel is our destination channel. */
	txs = grim_txs_get(peer, ntohs(cm->dst_chan), ntohs(cm->src_chan),
			   false);
	if (txs && ntohl(cm->inc) == txs->inc)
		return txs;
	/* About an incarnation that is gone, or never was. */
	if (!piggybacked && lh->type == GRIM_FT_ACK &&
	    lh->xflags & GRIM_XF_QUERY)
		grim_tx_deny(ni, peer, cm, &peer->xmitq);
	if (!txs)
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
	else if (!piggybacked)
		grim_count(ni, peer, GRIM_STAT_DROP_STALE_STREAM);
	return NULL;
}

/* An ACK or NACK for @txs, of its incarnation.  Stream lock held.  An
 * ACK @piggybacked on a data frame repeats itself on every frame of the
 * reverse stream: it counts only when it moves, never as a duplicate.
 */
static void grim_txs_rcv_ctl(struct grim_txs *txs,
			     const struct grim_link_hdr *lh,
			     const struct grim_ctl_msg *cm,
			     const struct grim_report *rep, bool piggybacked)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	u32 seq = ntohl(cm->seq);
	bool timed, query;

	query = !piggybacked && lh->type == GRIM_FT_ACK &&
		lh->xflags & GRIM_XF_QUERY;
	if (txs->reaped)
		return;
	if (grim_seq_after(seq, txs->next_sent)) {
		/* The receiver holds frames we never sent. */
		if (query)
			grim_tx_deny(ni, peer, cm, &txs->xmitq);
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	if (grim_seq_before(seq, txs->snd_una))
		return;		/* an old ACK overtaken by a newer one */
	if (txs->aborting)
		return;		/* the answer to the ABORT says it all */

	if (lh->type == GRIM_FT_NACK) {
		grim_count(ni, peer, GRIM_STAT_RX_NACKS);
		trace_grim_nack(peer->node, txs->src_chan, txs->dst_chan, seq);
		if (seq == txs->next_sent)	/* nothing there to refuse */
			return;
		grim_txs_ack_to(txs, seq, ntohl(cm->tsecr));
		grim_txs_rollback(txs, seq);
		if (!txs->probe)
			txs->refused_since = jiffies;
		txs->held = true;
		txs->probe = true;
		mod_timer(&txs->timer, jiffies + txs->backoff);
		txs->backoff = min_t(unsigned long, txs->backoff * 2,
				     GRIM_NACK_BACKOFF_MAX);
		return;
	}

	if (!piggybacked) {
		/* What the receiver holds past its gap. */
		grim_txs_report(txs, seq, rep, ntohl(cm->tsval));
	} else if (seq == txs->snd_una) {
		return;
	}
	grim_count(ni, peer, GRIM_STAT_RX_ACKS);
	if (seq == txs->snd_una) {
		struct sk_buff *head = skb_peek(&txs->frames);

		if (query) {
			/* The receiver has waited for it for dead_ms: send
			 * it now, once a retransmission timeout at most
			 * (queries are cheap to forge, frames are not).
			 * With nothing unacknowledged, it may forget the
			 * stream: say so.
			 */
			if (!head && seq == txs->next_sent) {
				grim_tx_deny(ni, peer, cm, &txs->xmitq);
			} else if (head && !txs->held &&
				   GRIM_FRAME_CB(head)->seq == seq &&
				   (!txs->queried ||
				    time_after(jiffies,
					       txs->queried + txs->rto))) {
				txs->queried = jiffies;
				grim_txs_resend(txs, head, true);
			}
			return;
		}
		if (txs->snd_nxt == txs->snd_una || txs->held)
			return;
		/* No progress: frames after snd_una arrived, this one
		 * not (yet).
		 */
		grim_txs_rack(txs, grim_ts_age(ntohl(cm->tsecr)) ?
				   ntohl(cm->tsecr) : 0);
		grim_txs_recover(txs, seq);
		return;
	}
	trace_grim_ack(peer->node, txs->src_chan, txs->dst_chan, seq);
	timed = grim_txs_ack_to(txs, seq, ntohl(cm->tsecr));
	if (txs->fast && !grim_seq_before(seq, txs->recover))
		txs->fast = false;
	/* The endpoint took frames past any refusal: a NACK that overtook
	 * this ACK (they may leave the peer on different CPUs) is over.
	 */
	txs->held = false;
	txs->probe = false;
	txs->rto_one = false;
	/* A timeout's back-off unwinds by half on each ACK that gives no
	 * sample (Karn), and at once on one that does.  On a path slower
	 * than the estimate, frames resent and then ACKed give no sample,
	 * and going straight back to the estimate would send every frame
	 * twice again; holding the back-off until a sample comes would
	 * leave a lossy stream waiting a second per hole.
	 */
	if (timed)
		txs->rto = txs->rto_base;
	else
		txs->rto = max(txs->rto / 2, txs->rto_base);
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
	txs->probed = false;
	txs->progress = jiffies;
	txs->tlp_ts = grim_ts_now();
	/* With the receiver's own ACK, resend what it lacks.  Without a
	 * report it holds nothing past the new gap (a refusal whose NACK
	 * was lost dropped what followed, say): what was sent reo_wnd
	 * before the frame the ACK dates goes again.  An ACK riding on
	 * data carries no report: the receiver's own ACK follows.
	 */
	if (!piggybacked && txs->snd_nxt != txs->snd_una)
		grim_txs_recover(txs, seq);
	grim_txs_push(txs);
}

/* An ACK or NACK frame for one of our streams.  Called with the peer
 * lock held, which it releases: the stream's work goes on under the
 * stream's lock alone.
 */
void grim_tx_rcv_ack(struct grim_ni *ni, struct grim_peer *peer,
		     const struct grim_link_hdr *lh,
		     const struct grim_ctl_msg *cm,
		     const struct grim_report *rep)
	__releases(&peer->lock)
{
	struct grim_txs *txs;

	txs = grim_tx_ctl_stream(ni, peer, lh, cm, false);
	if (!txs) {
		grim_peer_unlock(peer);
		return;
	}
	/* Before the stream's lock: a stream woken takes its own. */
	if (!list_empty_careful(&peer->cwnd_wait))
		grim_peer_cwnd_wake(peer, &peer->xmitq);
	spin_lock(&txs->lock);
	grim_peer_unlock_to(peer, &txs->xmitq);
	grim_txs_rcv_ctl(txs, lh, cm, rep, false);
	grim_txs_unlock(txs);
}

/* The ACK a DATA frame carries for the reverse stream, our send stream.
 * Peer lock held.
 */
void grim_tx_rcv_piggyback(struct grim_ni *ni, struct grim_peer *peer,
			   const struct grim_link_hdr *lh,
			   const struct grim_ctl_msg *cm)
{
	struct grim_txs *txs;

	txs = grim_tx_ctl_stream(ni, peer, lh, cm, true);
	if (!txs)
		return;
	spin_lock(&txs->lock);
	grim_txs_rcv_ctl(txs, lh, cm, NULL, true);
	grim_txs_unlock_nested(txs);
}

/* The receiver will never deliver the message whose last frame is
 * ctl_msg.seq: it took the frames before that one, not that one nor any
 * after it.  Fail the message with the errno @reason stands for, and go
 * back to the next frame, which tells the receiver to skip the rejected
 * one (GRIM_XF_SKIP).  Peer lock held.
 */
void grim_tx_rcv_reject(struct grim_ni *ni, struct grim_peer *peer,
			const struct grim_ctl_msg *cm, u16 reason, u32 from)
{
	struct grim_txs *txs;
	int err;

	switch (reason) {
	case GRIM_REJ_NO_PORT:
		err = -ECONNREFUSED;
		break;
	case GRIM_REJ_TIMEOUT:
		err = -ETIMEDOUT;
		break;
	case GRIM_REJ_ABORTED:
		err = 0;
		break;
	case GRIM_REJ_NO_STREAM:
	case GRIM_REJ_UNBOUND:
	case GRIM_REJ_STALE:
		grim_tx_rcv_stream_reject(ni, peer, cm, reason, from);
		return;
	default:
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	txs = grim_txs_get(peer, ntohs(cm->dst_chan), ntohs(cm->src_chan),
			   false);
	if (!txs || ntohl(cm->inc) != txs->inc) {
		grim_count(ni, peer, txs ? GRIM_STAT_DROP_STALE_STREAM :
					   GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	spin_lock(&txs->lock);
	grim_txs_rcv_reject(txs, cm, err, from);
	grim_txs_unlock_nested(txs);
}

/* A REJECT of one message of @txs's incarnation (@err) or the answer to
 * its ABORT (@err 0).  Stream lock held.
 */
static void grim_txs_rcv_reject(struct grim_txs *txs,
				const struct grim_ctl_msg *cm, int err,
				u32 from)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	u32 seq = ntohl(cm->seq);
	struct sk_buff *skb;

	if (txs->reaped)
		return;
	if (!err) {
		/* The answer to our ABORT, which may name frames never
		 * sent (the rest of the last message sent).
		 */
		if (!txs->aborting || seq != txs->abort_to)
			return;		/* a repeat, already acted on */
		if (grim_seq_after(from, seq + 1)) {
			grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
			return;
		}
		/* Below snd_una, the receiver had not yet seen that we gave
		 * up frames (a rejected message's last frame, orphans): it
		 * gives them up now too.  Refusing the answer would leave
		 * the stream aborting for good.
		 */
		if (grim_seq_before(from, txs->snd_una))
			from = txs->snd_una;
		grim_txs_aborted(txs, from);
		return;
	}
	if (!grim_seq_before(seq, txs->next_sent)) {
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	if (grim_seq_before(seq, txs->snd_una) || txs->aborting)
		return;		/* a repeat, or the ABORT covers it */
	skb = grim_txs_frame_at(txs, seq);
	if (!skb || (!GRIM_FRAME_CB(skb)->whole && !GRIM_FRAME_CB(skb)->msg)) {
		/* Not the last frame of a message: no receiver says that. */
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	grim_count(ni, peer, GRIM_STAT_RX_REJECTS);
	grim_txs_ack_to(txs, seq, ntohl(cm->tsecr));
	if (txs->send_head == skb)
		txs->send_head = skb_queue_is_last(&txs->frames, skb) ?
				 NULL : skb->next;
	__skb_unlink(skb, &txs->frames);
	grim_frame_fail(txs, skb, err);
	txs->snd_una = seq + 1;
	grim_txs_rollback(txs, seq + 1);
	txs->skip = true;
	txs->skip_from = seq;
	txs->skip_seq = seq + 1;
	txs->held = false;
	txs->probe = false;
	txs->rto_one = false;
	txs->probed = false;
	txs->rto = txs->rto_base;
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
	txs->progress = jiffies;
	grim_txs_push(txs);
}

/* Attach @len payload bytes of @msg at @off to frame @skb: bytes in the
 * message's linear part are copied, page fragments are shared.
 */
static int grim_frame_add_payload(struct sk_buff *skb, struct sk_buff *msg,
				  unsigned int off, unsigned int len)
{
	unsigned int hlen = skb_headlen(msg), pos, i;

	if (off < hlen) {
		unsigned int n = min(len, hlen - off);

		skb_put_data(skb, msg->data + off, n);
		off += n;
		len -= n;
	}
	pos = hlen;
	for (i = 0; len && i < skb_shinfo(msg)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(msg)->frags[i];
		unsigned int fsz = skb_frag_size(f), n, start;

		if (off >= pos + fsz) {
			pos += fsz;
			continue;
		}
		start = off - pos;
		n = min(len, fsz - start);
		if (skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS)
			return -EMSGSIZE;
		skb_frag_ref(msg, i);
		skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags,
				   skb_frag_page(f), skb_frag_off(f) + start, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		off += n;
		len -= n;
		pos += fsz;
	}
	return len ? -EFAULT : 0;
}

static void grim_msg_hdr_fill(struct grim_msg_hdr *mh,
			      const struct grim_msg_cb *cb, u32 len, u32 seq)
{
	u32 words = DIV_ROUND_UP(len, 4);
	u32 corr = words * 4 - len;
	int i;

	mh->w0 = htonl((GRIM_ID << 16) | ((seq & 0xff) << 8) | (seq & 0xff));
	mh->w1 = htonl((GRIM_MT_AM << 26) | (corr << 24) | cb->src_port);
	mh->w2 = htonl((words << 16) | cb->dst_port);
	mh->w3 = htonl(((u32)cb->src_port << 16) | cb->handler);
	for (i = 0; i < 4; i++)
		mh->arg[i] = htonl(cb->arg[i]);
}

/* Whether this NI's CRC covers the payload of the frames it sends: not
 * with a cluster key, whose tag covers every byte.
 */
static u8 grim_dcrc(const struct grim_ni *ni)
{
	return READ_ONCE(ni->data_crc) != GRIM_DATA_CRC_OFF &&
	       !grim_ni_keyed(ni) ? GRIM_FF_DCRC : 0;
}

/* The shape of the frames an NI sends: read under RCU, used to cut a
 * message after it, and checked again before the frames are queued.
 */
struct grim_geom {
	unsigned int mtu;	/* bytes of a frame, headers included */
	unsigned int hh;	/* room for the lower device's header */
};

static void grim_geom_get(const struct grim_ni *ni, struct grim_geom *g)
{
	/* The link header's length field bounds a frame too; with a
	 * cluster key, the trailer and tag take their room.
	 */
	g->mtu = min_t(unsigned int, READ_ONCE(ni->lower->mtu), 0xffff);
	if (grim_ni_keyed(ni))
		g->mtu -= GRIM_AUTH_LEN;
	g->hh = LL_RESERVED_SPACE(ni->lower);
}

/* The frame headers of a fragment at @off of a message, as far as they
 * do not depend on the NI: cluster, nodes, sequence numbers and the
 * message header are filled in under the peer lock.
 */
static void grim_frame_init(struct sk_buff *skb, void *hdr,
			    const struct grim_msg_cb *cb, u8 flags,
			    unsigned int off)
{
	struct grim_link_hdr *lh = hdr;
	struct grim_ctl_msg *cm = (struct grim_ctl_msg *)(lh + 1);
	struct grim_frag_hdr *fh = (struct grim_frag_hdr *)(cm + 1);

	memset(GRIM_FRAME_CB(skb), 0, sizeof(struct grim_frame_cb));
	memset(lh, 0, sizeof(*lh));
	lh->magic = htons(GRIM_ID);
	lh->version = GRIM_WIRE_VERSION;
	lh->type = GRIM_FT_DATA;
	lh->flags = flags;
	cm->src_chan = htons(cb->src_port);
	cm->dst_chan = htons(cb->dst_port);
	cm->seq = 0;
	cm->inc = 0;
	cm->tsval = 0;
	cm->tsecr = 0;
	fh->offset = htons(off);
	fh->check = 0;
	fh->ack = 0;
	fh->ack_inc = 0;
}

/* A message that fits one frame, in a linear skb with the headroom the
 * socket left for it, becomes that frame: no allocation, no copy.
 */
static bool grim_frame_whole(struct sk_buff *msg, const struct grim_msg_cb *cb,
			     const struct grim_geom *g,
			     struct sk_buff_head *frames)
{
	const unsigned int hlen = GRIM_DATA_HLEN + GRIM_MSG_HLEN;

	if (msg->len + hlen > g->mtu || skb_is_nonlinear(msg) ||
	    skb_cloned(msg) || skb_headroom(msg) < hlen + g->hh)
		return false;
	grim_frame_init(msg, skb_push(msg, hlen), cb,
			GRIM_FF_FIRST | GRIM_FF_LAST, 0);
	GRIM_FRAME_CB(msg)->whole = true;
	__skb_queue_tail(frames, msg);
	return true;
}

/* Cut a message into frames of the shape @g. */
static int grim_fragment(struct sk_buff *msg, const struct grim_msg_cb *cb,
			 const struct grim_geom *g, struct sk_buff_head *frames,
			 gfp_t gfp)
{
	unsigned int off = 0, room, n, copy;
	struct sk_buff *skb;
	bool first = true;
	int err;

	do {
		room = g->mtu - GRIM_DATA_HLEN - (first ? GRIM_MSG_HLEN : 0);
		n = min(room, msg->len - off);
		/* The head holds the headers and the message's linear bytes. */
		copy = off < skb_headlen(msg) ? min(n, skb_headlen(msg) - off) : 0;
		/* fclone: the clone of the first transmission comes free */
		skb = alloc_skb_fclone(g->hh + GRIM_DATA_HLEN + GRIM_MSG_HLEN +
				       copy, gfp);
		if (!skb)
			return -ENOBUFS;
		skb_reserve(skb, g->hh);
		__skb_queue_tail(frames, skb);
		grim_frame_init(skb, skb_put(skb, GRIM_DATA_HLEN), cb,
				(first ? GRIM_FF_FIRST : 0) |
				(off + n == msg->len ? GRIM_FF_LAST : 0), off);
		if (first)
			skb_put(skb, GRIM_MSG_HLEN);
		err = grim_frame_add_payload(skb, msg, off, n);
		if (err)
			return err;
		off += n;
		first = false;
	} while (off < msg->len);
	return 0;
}

/* Fill in what the NI and the stream give the frames: addresses,
 * sequence numbers and the message header (@cb, @len bytes); @msg is
 * completed with the last frame.  Stream lock held.
 */
static void grim_frames_number(struct grim_txs *txs,
			       struct sk_buff_head *frames,
			       struct sk_buff *msg, struct grim_ep *ep,
			       const struct grim_msg_cb *cb, unsigned int len)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	u8 dcrc = grim_dcrc(ni);
	struct sk_buff *skb;
	bool first = true;

	skb_queue_walk(frames, skb) {
		struct grim_link_hdr *lh = (struct grim_link_hdr *)skb->data;
		struct grim_ctl_msg *cm = (struct grim_ctl_msg *)(lh + 1);

		lh->flags |= dcrc;
		lh->cluster = htonl(ni->cluster);
		lh->src_node = htonl(ni->node);
		lh->dst_node = htonl(peer->node);
		GRIM_FRAME_CB(skb)->seq = txs->next_seq;
		cm->seq = htonl(txs->next_seq);
		cm->inc = htonl(txs->inc);
		if (first)
			grim_msg_hdr_fill((struct grim_msg_hdr *)
					  (skb->data + GRIM_DATA_HLEN), cb, len,
					  txs->next_seq);
		first = false;
		txs->next_seq++;
	}
	GRIM_FRAME_CB(skb_peek_tail(frames))->msg = msg;
	GRIM_FRAME_CB(skb_peek_tail(frames))->ep = ep;
}

/* The send stream @src_chan to @dst_chan of @peer, found under RCU with
 * no lock held; NULL if there is none.
 */
static struct grim_txs *grim_txs_find(struct grim_peer *peer, u16 src_chan,
				      u16 dst_chan)
{
	struct grim_skey key = {
		.node = peer->node, .src_chan = src_chan, .dst_chan = dst_chan,
	};
	struct grim_txs *txs;

	txs = rhashtable_lookup_fast(&peer->ni->txs_ht, &key, grim_txs_params);
	return txs && txs->peer == peer ? txs : NULL;
}

/* Queue the frames of @msg (@whole: @msg is the one frame) on the peer
 * of @ni that is @cb->node.  RCU held.  Consumes the frames and @msg
 * unless it returns an error.
 */
static int grim_ni_queue(struct grim_ni *ni, struct sk_buff_head *frames,
			 struct sk_buff *msg, struct grim_ep *ep,
			 const struct grim_msg_cb *cb, unsigned int len)
{
	struct grim_peer *peer;
	struct grim_txs *txs;
	int err = 0;

	peer = cb->node == ni->node ? READ_ONCE(ni->self) :
				      grim_peer_lookup(ni, cb->node);
	if (!peer)
		return -EHOSTUNREACH;
	local_bh_disable();
	/* The stream's lock alone, if it exists; the peer lock to make it. */
	txs = grim_txs_find(peer, cb->src_port, cb->dst_port);
	if (txs) {
		spin_lock(&txs->lock);
		if (likely(!txs->reaped && !READ_ONCE(peer->dead)))
			goto locked;
		spin_unlock(&txs->lock);
	}
	spin_lock(&peer->lock);
	if (peer->dead)
		err = -ENETDOWN;
	else if (peer->state == GRIM_PEER_DOWN)
		err = -EHOSTUNREACH;
	else
		txs = grim_txs_get(peer, cb->src_port, cb->dst_port, true);
	if (err || !txs) {
		grim_peer_unlock(peer);
		local_bh_enable();
		return err ?: -ENOBUFS;
	}
	spin_lock(&txs->lock);
	grim_peer_unlock_to(peer, &txs->xmitq);
locked:
	/* A peer that went down or away failed the stream, or unhashed
	 * it, under its lock: what is queued now is sent when it is back,
	 * or failed then.
	 */
	if (READ_ONCE(peer->state) == GRIM_PEER_DOWN) {
		grim_txs_unlock(txs);
		local_bh_enable();
		return -EHOSTUNREACH;
	}
	/* A stream being closed is taken back.  If the receiver forgot it
	 * already, it says so (REJECT STALE) and the frames go again under
	 * a new incarnation.
	 */
	if (txs->closing) {
		txs->closing = false;
		txs->rto = txs->rto_base;
	}
	grim_frames_number(txs, frames, msg, ep, cb, len);
	if (!txs->send_head)
		txs->send_head = skb_peek(frames);
	skb_queue_splice_tail_init(frames, &txs->frames);
	trace_grim_msg_tx(peer->node, cb->src_port, cb->dst_port, len);
	if (grim_mc_ctl_msg(cb)) {
		grim_count(ni, peer, GRIM_STAT_MC_CTL_TX);
	} else {
		grim_count(ni, peer, GRIM_STAT_TX_MSGS);
		grim_count_add(ni, peer, GRIM_STAT_TX_BYTES, len);
	}
	grim_txs_push(txs);
	grim_txs_unlock(txs);
	local_bh_enable();
	return 0;
}

/* How often a message is cut again because the lower device changed
 * its MTU or header room while it was being cut.
 */
#define GRIM_SEND_TRIES	3

/* The NI that carries @ep's messages to @node: a link's endpoint's own
 * link, if it reaches the node.  RCU held.
 */
static struct grim_ni *grim_ep_ni(struct grim_ep *ep, u32 node)
{
	struct grim_ni *ni;

	if (!ep->dev)
		return grim_ni_find(read_pnet(&ep->net), node);
	ni = netdev_priv(ep->dev);
	if (!READ_ONCE(ni->running) || READ_ONCE(ni->conflict))
		return NULL;
	if (ni->node == node || grim_peer_lookup(ni, node))
		return ni;
	return NULL;
}

static int grim_ni_send_one(struct grim_ep *ep, struct sk_buff *msg,
			    gfp_t gfp);

/* A link's endpoint sends @msg to every peer of its link that is up;
 * under RCU, so without sleeping.
 */
static int grim_ni_broadcast(struct grim_ep *ep, struct sk_buff *msg)
{
	const gfp_t gfp = GFP_ATOMIC;
	struct grim_ni *ni = netdev_priv(ep->dev);
	struct grim_peer *peer;
	struct sk_buff *copy;
	int i, sent = 0, err = -EHOSTUNREACH;

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry_rcu(peer, &ni->peers[i], link) {
			if (peer->node == ni->node ||
			    READ_ONCE(peer->state) != GRIM_PEER_UP)
				continue;
			copy = skb_clone(msg, gfp);
			if (!copy) {
				err = -ENOBUFS;
				continue;
			}
			GRIM_MSG_CB(copy)->node = peer->node;
			if (!grim_ni_send_one(ep, copy, gfp))
				sent++;
		}
	}
	rcu_read_unlock();
	consume_skb(msg);
	return sent ? 0 : err;
}

int grim_ni_send(struct grim_ep *ep, struct sk_buff *msg, gfp_t gfp)
{
	if (ep->dev && GRIM_MSG_CB(msg)->node == GRIM_NODE_ANY)
		return grim_ni_broadcast(ep, msg);
	return grim_ni_send_one(ep, msg, gfp);
}
EXPORT_SYMBOL_GPL(grim_ni_send);

static int grim_ni_send_one(struct grim_ep *ep, struct sk_buff *msg,
			    gfp_t gfp)
{
	const unsigned int hlen = GRIM_DATA_HLEN + GRIM_MSG_HLEN;
	unsigned int len = msg->len, tries;
	const struct grim_msg_cb *cb;
	struct sk_buff_head frames;
	struct grim_msg_cb mcb;
	struct grim_geom g, now;
	struct grim_ni *ni;
	bool whole;
	int err;

	/* The message keeps its whole descriptor: a message cut again
	 * (grim_txs_recut()) or reported failed is read back from it.
	 */
	GRIM_MSG_CB(msg)->src_port = READ_ONCE(ep->port);
	mcb = *GRIM_MSG_CB(msg);
	cb = &mcb;
	if (!mcb.src_port) {
		err = -ENOTCONN;
		goto free_msg;
	}
	if (len > GRIM_MAX_PAYLOAD) {
		err = -EMSGSIZE;
		goto free_msg;
	}
	__skb_queue_head_init(&frames);
	for (tries = 1; ; tries++) {
		/* The frames are cut with no reference held, then queued
		 * on whatever NI reaches the node by then, if their shape
		 * still fits it.
		 */
		rcu_read_lock();
		ni = grim_ep_ni(ep, cb->node);
		if (ni)
			grim_geom_get(ni, &g);
		rcu_read_unlock();
		if (!ni) {
			err = -EHOSTUNREACH;
			goto free_msg;
		}
		if (g.mtu < GRIM_MIN_LOWER_MTU) {
			err = -EMSGSIZE;
			goto free_msg;
		}
		whole = grim_frame_whole(msg, cb, &g, &frames);
		if (!whole) {
			err = grim_fragment(msg, cb, &g, &frames, gfp);
			if (err)
				goto free_frames;
		}

		rcu_read_lock();
		ni = grim_ep_ni(ep, cb->node);
		if (!ni) {
			err = -EHOSTUNREACH;
			goto unlock_rcu;
		}
		grim_geom_get(ni, &now);
		if (now.mtu == g.mtu && now.hh <= g.hh)
			break;
		rcu_read_unlock();
		if (whole) {
			__skb_unlink(msg, &frames);
			skb_pull(msg, hlen);
		} else {
			__skb_queue_purge(&frames);
		}
		if (tries == GRIM_SEND_TRIES) {
			err = -EAGAIN;
			goto free_msg;
		}
	}
	err = grim_ni_queue(ni, &frames, whole ? NULL : msg, ep, cb, len);
	rcu_read_unlock();
	if (!err)
		return 0;
	if (whole)
		msg = NULL;	/* it is the frame, purged below */
	goto free_frames;

unlock_rcu:
	rcu_read_unlock();
	if (whole)
		msg = NULL;
free_frames:
	__skb_queue_purge(&frames);
free_msg:
	kfree_skb(msg);
	return err;
}

/* Cut the messages of the unsent frames @old again for @g, and queue
 * them on @txs from next_seq on.  A message that cannot be cut for want
 * of memory fails.  Stream lock held.
 */
static void grim_txs_recut(struct grim_txs *txs, struct sk_buff_head *old,
			   const struct grim_geom *g)
{
	const unsigned int hlen = GRIM_DATA_HLEN + GRIM_MSG_HLEN;
	struct sk_buff *skb, *last, *msg, *next;
	struct sk_buff_head frames;
	struct grim_msg_cb cb;
	struct grim_ep *ep;
	unsigned int len;
	bool whole;
	int err;

	while ((skb = skb_peek(old))) {
		last = grim_msg_end(old, skb);
		if (WARN_ON_ONCE(!last)) {
			/* The last frame of a message always carries it. */
			__skb_queue_purge(old);
			break;
		}
		whole = GRIM_FRAME_CB(last)->whole;
		ep = GRIM_FRAME_CB(last)->ep;
		msg = grim_frame_msg(txs, last, &cb, &len);
		do {
			next = skb->next;
			__skb_unlink(skb, old);
			if (skb != msg)
				kfree_skb(skb);
		} while (skb != last && (skb = next));
		if (whole)
			skb_pull(msg, hlen);	/* the message again */
		*GRIM_MSG_CB(msg) = cb;

		__skb_queue_head_init(&frames);
		whole = g->mtu >= GRIM_MIN_LOWER_MTU &&
			grim_frame_whole(msg, &cb, g, &frames);
		if (!whole) {
			err = g->mtu < GRIM_MIN_LOWER_MTU ? -EMSGSIZE :
			      grim_fragment(msg, &cb, g, &frames, GFP_ATOMIC);
			if (err) {
				__skb_queue_purge(&frames);
				grim_count(txs->peer->ni, txs->peer,
					   GRIM_STAT_MSG_FAILED);
				ep->ops->tx_failed(ep, msg, &cb, len, err);
				continue;
			}
		}
		grim_count(txs->peer->ni, txs->peer, GRIM_STAT_MSGS_RECUT);
		grim_frames_number(txs, &frames, whole ? NULL : msg, ep, &cb,
				   len);
		if (!txs->send_head)
			txs->send_head = skb_peek(&frames);
		skb_queue_splice_tail_init(&frames, &txs->frames);
	}
}

/* Move the frames from @skb to the end of the stream to @old, and number
 * from @skb's sequence on again.  Stream lock held.
 */
static void grim_txs_cut_tail(struct grim_txs *txs, struct sk_buff *skb,
			      struct sk_buff_head *old)
{
	struct sk_buff *next;
	bool head = false;

	txs->next_seq = GRIM_FRAME_CB(skb)->seq;
	for (; skb != (struct sk_buff *)&txs->frames; skb = next) {
		next = skb->next;
		head |= skb == txs->send_head;
		__skb_unlink(skb, &txs->frames);
		__skb_queue_tail(old, skb);
	}
	if (head)
		txs->send_head = NULL;
}

/* The receiver gave up the frames up to abort_to, and had taken those
 * before @from: the messages that end before @from were delivered; the
 * others are cut again for the lower MTU of now, and sent after
 * abort_to.  Stream lock held.
 */
static void grim_txs_aborted(struct grim_txs *txs, u32 from)
{
	u32 next = txs->abort_to + 1;
	struct sk_buff_head old;
	struct sk_buff *skb;
	struct grim_geom g;

	grim_txs_ack_to(txs, from, 0);
	__skb_queue_head_init(&old);
	skb = skb_peek(&txs->frames);
	if (skb)
		grim_txs_cut_tail(txs, skb, &old);
	txs->next_seq = next;
	txs->send_head = NULL;
	txs->snd_una = next;
	txs->snd_nxt = next;
	txs->next_sent = next;
	txs->recover = next;
	txs->aborting = false;
	txs->skip = false;
	txs->sack_fresh = false;
	txs->sack_skip = false;
	grim_txs_report_clear(txs);
	txs->held = false;
	txs->probe = false;
	txs->rto_one = false;
	txs->probed = false;
	txs->fast = false;
	txs->rack_ts = 0;
	txs->rto = txs->rto_base;
	txs->backoff = GRIM_NACK_BACKOFF_MIN;
	txs->progress = jiffies;
	grim_geom_get(txs->peer->ni, &g);
	grim_txs_recut(txs, &old, &g);
	grim_txs_push(txs);
}

/* The lower device's MTU went down to @g->mtu: frames cut for the old one
 * would be dropped on every retransmission.  The first message with a
 * frame too long, and all after it, are cut again as they are if none of
 * their frames was sent.  Else the receiver is asked first to give up
 * all the frames sent that it has not taken (ABORT): then every message
 * not delivered is cut again and sent anew, after them.  Stream lock held.
 */
static void grim_txs_lower_mtu(struct grim_txs *txs, const struct grim_geom *g)
{
	struct sk_buff *skb, *start = NULL, *end;
	struct sk_buff_head old;
	bool at_start = true;

	if (txs->aborting)
		return;		/* cut when the receiver has answered */
	skb_queue_walk(&txs->frames, skb) {
		if (at_start)
			start = skb;
		if (skb->len > g->mtu)
			break;
		at_start = GRIM_FRAME_CB(skb)->whole || GRIM_FRAME_CB(skb)->msg;
	}
	if (skb == (struct sk_buff *)&txs->frames)
		return;		/* every frame fits */
	if (!grim_seq_before(GRIM_FRAME_CB(start)->seq, txs->next_sent)) {
		/* Never sent: number and cut as if queued now. */
		__skb_queue_head_init(&old);
		grim_txs_cut_tail(txs, start, &old);
		grim_txs_recut(txs, &old, g);
		return;
	}
	/* Up to the end of the message of the last frame sent. */
	end = grim_txs_frame_at(txs, txs->next_sent - 1);
	end = end ? grim_msg_end(&txs->frames, end) : NULL;
	if (WARN_ON_ONCE(!end))
		return;
	txs->aborting = true;
	txs->abort_to = GRIM_FRAME_CB(end)->seq;
	txs->rto = txs->rto_base;
	grim_txs_send_ctl(txs, GRIM_FT_ABORT);
	mod_timer(&txs->timer, jiffies + txs->rto);
}

/* The lower device's MTU changed: cut again what no longer fits.  From
 * the netdevice notifier, RTNL held.
 */
void grim_peer_lower_mtu(struct grim_peer *peer)
{
	struct grim_txs *txs;
	struct grim_geom g;

	grim_geom_get(peer->ni, &g);
	spin_lock_bh(&peer->lock);
	list_for_each_entry(txs, &peer->txs_list, plink) {
		spin_lock(&txs->lock);
		if (!txs->dead) {
			grim_txs_lower_mtu(txs, &g);
			grim_txs_push(txs);
		}
		grim_txs_unlock_nested(txs);
	}
	grim_peer_unlock_bh(peer);
}

/* Give every frame of @txs a private head: a first transmission's clone
 * may still share it.  In place, so that a frame that is its message
 * stays charged to its socket.  Returns false when memory ran out.
 * Stream lock held.
 */
static bool grim_txs_unshare(struct grim_txs *txs)
{
	struct sk_buff *skb;

	skb_queue_walk(&txs->frames, skb)
		if (skb_unclone(skb, GFP_ATOMIC))
			return false;
	return true;
}

/* A forged STALE can come when the oldest frame not acknowledged is in
 * the middle of a message, which a new incarnation cannot start with:
 * fail that message.  Stream lock held.
 */
static void grim_txs_drop_partial(struct grim_txs *txs)
{
	struct sk_buff *skb, *last, *next;

	skb = skb_peek(&txs->frames);
	if (!skb || GRIM_FRAME_CB(skb)->whole ||
	    ((struct grim_link_hdr *)skb->data)->flags & GRIM_FF_FIRST)
		return;
	last = grim_msg_end(&txs->frames, skb);
	if (WARN_ON_ONCE(!last))
		return;
	do {
		next = skb->next;
		if (skb == txs->send_head)
			txs->send_head = NULL;
		__skb_unlink(skb, &txs->frames);
		grim_frame_fail(txs, skb, -ECONNRESET);
	} while (skb != last && (skb = next));
}

/* The receiver no longer knows the stream's incarnation and took exactly
 * the frames before snd_una under it (REJECT STALE): send the others
 * again under a new incarnation, numbered from 0.  Peer and stream locks held.
 */
static void grim_txs_renumber(struct grim_txs *txs)
{
	struct sk_buff *skb;
	u32 seq = 0;

	grim_txs_drop_partial(txs);
	if (!grim_txs_unshare(txs)) {
		/* No memory to renumber with: fail what is queued, which
		 * frees it too.
		 */
		grim_txs_fail(txs, -ENOBUFS);
		return;
	}
	grim_txs_restart(txs);
	skb_queue_walk(&txs->frames, skb) {
		struct grim_ctl_msg *cm = (struct grim_ctl_msg *)
					  (skb->data + GRIM_LINK_HLEN);

		GRIM_FRAME_CB(skb)->seq = seq;
		GRIM_FRAME_CB(skb)->stamped = false;
		GRIM_FRAME_CB(skb)->retx = false;
		GRIM_FRAME_CB(skb)->resent = false;
		GRIM_FRAME_CB(skb)->marked = false;
		cm->seq = htonl(seq);
		cm->inc = htonl(txs->inc);
		seq++;
	}
	txs->next_seq = seq;
	txs->send_head = skb_peek(&txs->frames);
	txs->progress = jiffies;
}

/* A REJECT about the whole incarnation ctl_msg.inc (see the uapi
 * header).  Peer lock held.
 */
static void grim_tx_rcv_stream_reject(struct grim_ni *ni,
				      struct grim_peer *peer,
				      const struct grim_ctl_msg *cm, u16 reason,
				      u32 from)
{
	struct grim_txs *txs;

	txs = grim_txs_get(peer, ntohs(cm->dst_chan), ntohs(cm->src_chan),
			   false);
	if (!txs || ntohl(cm->inc) != txs->inc) {
		grim_count(ni, peer, txs ? GRIM_STAT_DROP_STALE_STREAM :
					   GRIM_STAT_DROP_BAD_ACK);
		return;
	}
	spin_lock(&txs->lock);
	grim_txs_rcv_stream_reject(txs, reason, from);
	grim_txs_unlock_nested(txs);
}

/* A REJECT of @txs's whole incarnation.  Peer and stream locks held:
 * a new incarnation is drawn under both.
 */
static void grim_txs_rcv_stream_reject(struct grim_txs *txs, u16 reason,
				       u32 from)
{
	struct grim_peer *peer = txs->peer;
	struct grim_ni *ni = peer->ni;
	struct sk_buff_head old;
	struct grim_geom g;

	if (txs->reaped)
		return;
	grim_count(ni, peer, GRIM_STAT_RX_REJECTS);
	if (reason != GRIM_REJ_STALE) {
		/* It took none of it: every message queued fails. */
		grim_txs_fail(txs, reason == GRIM_REJ_NO_STREAM ?
				   -ENOSR : -ECONNREFUSED);
		return;
	}
	if (txs->closing) {
		/* It forgot the stream on our CLOSE: done. */
		if (grim_txs_is_idle(txs))
			grim_txs_reap(txs);
		return;
	}
	grim_count(ni, peer, GRIM_STAT_STREAM_RENUMBERS);
	/* Our incarnations go on past the newest it saw, whoever sent
	 * that: one forged far ahead costs a renumbering, no more.
	 */
	if (grim_seq_after(from, peer->tx_inc))
		peer->tx_inc = from;
	if (txs->aborting) {
		/* It forgot the stream before our ABORT: nothing past
		 * snd_una was taken, cut all of it again.
		 */
		txs->aborting = false;
		__skb_queue_head_init(&old);
		skb_queue_splice_init(&txs->frames, &old);
		txs->send_head = NULL;
		grim_txs_renumber(txs);
		grim_geom_get(ni, &g);
		grim_txs_recut(txs, &old, &g);
		txs->send_head = skb_peek(&txs->frames);
	} else {
		grim_txs_renumber(txs);
	}
	grim_txs_push(txs);
}
