// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: peers, discovery and sessions.
 *
 * Peers are found by hello frames broadcast on the lower device every
 * hello_ms; any valid frame from a peer proves it alive, and a peer heard
 * from for none of dead_ms is declared down: its queued messages fail
 * with EHOSTUNREACH.  A switch's storm control drops broadcasts alone,
 * and can drop every hello of a live peer, so a peer that missed a hello
 * (silent for 1.5 times the longer of our hello_ms and the interval it
 * announces, see grim_peer_missed()) is also asked directly, once a hello
 * interval, with a unicast probe it must answer.
 *
 * Sessions (the seed's pair-sequencing reset): each side keeps a
 * generation per peer, lgen, and learns the peer's, rgen.  Every frame
 * carries both.  A side that resets (the NI restarted, or it declared the
 * peer down) moves to a newer generation; the other side sees a newer
 * src_gen and resets too, failing unacknowledged messages with
 * ECONNRESET.  Frames naming an old generation are stale and dropped, so
 * sequence numbers of two sessions never mix.  A peer is UP once a frame
 * shows it knows our current lgen; until then we send unicast probes.
 *
 * Broadcast hellos name no peer, so they carry the NI's base generation,
 * which a peer declared down has left behind.  They are checked against
 * rbase, the sender's base generation, not against the session: a newer
 * one means the peer's NI restarted, an equal one that it is alive.
 *
 * Base generations come from the wall clock; session generations take a
 * random step of up to 2^16 past the clock or their last value, so that
 * a host that sees only broadcasts cannot guess them.  An NI restarted
 * with its clock set back has older ones than it had, and its frames are
 * stale to a side that still holds the old session.  A side that drops a
 * frame as stale says which generations it holds (a resync probe, at
 * most one per GRIM_RESYNC_GAP).  Here that probe names a generation of
 * the NI's newer than the NI's own, which no true probe does: the NI
 * starts a session past it (grim_peer_overtake()), and the other side
 * takes that as a restart.  A side that took a forged generation is
 * overtaken the same way.  Only probes move sessions so: a DATA, ACK or
 * NACK frame of another session is dropped with no other effect.
 */
#include <linux/etherdevice.h>
#include <linux/hash.h>
#include <linux/if_packet.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "grim.h"
#include "trace.h"
#include "netlink.h"

static u32 grim_gen_now(void)
{
	/* About a millisecond per step: newer across NI restarts. */
	return (u32)(ktime_get_real_ns() >> 20) | 1;
}

/* A session generation newer than @gen: a random step of up to 2^16 past
 * the clock's, or past @gen if that is newer, so that a host that sees
 * only broadcast frames (which carry the NI's base generation) cannot
 * guess a session's.
 */
u32 grim_gen_next(u32 gen)
{
	u32 step = 1 + (get_random_u32() & 0xffff);
	u32 now = grim_gen_now();
	u32 next = gen + step;

	/* Past @gen in any case: when @gen is about 2^31 ahead of the
	 * clock (a forged generation), the clock is after it and the clock
	 * plus a step may not be.
	 */
	if (grim_seq_after(now, gen) && grim_seq_after(now + step, gen))
		next = now + step;
	return next ?: 1;
}

struct grim_peer *grim_peer_lookup(struct grim_ni *ni, u32 node)
{
	struct grim_peer *peer;

	hlist_for_each_entry_rcu(peer, &ni->peers[hash_32(node, GRIM_PEER_HASH_BITS)],
				 link) {
		if (peer->node == node)
			return peer;
	}
	return NULL;
}

static struct grim_peer *grim_peer_alloc(struct grim_ni *ni, u32 node)
{
	struct grim_peer *peer;

	peer = kzalloc(sizeof(*peer), GFP_ATOMIC);
	if (!peer)
		return NULL;
	peer->ni = ni;
	peer->node = node;
	spin_lock_init(&peer->lock);
	__skb_queue_head_init(&peer->xmitq);
	WRITE_ONCE(peer->state, GRIM_PEER_NEW);
	WRITE_ONCE(peer->lgen, ni->base_gen);
	peer->auth_chal = grim_auth_random();
	peer->auth_challenged = jiffies - HZ;
	peer->resynced = jiffies - HZ;
	peer->last_rx = jiffies;
	spin_lock_init(&peer->ack_lock);
	spin_lock_init(&peer->cc_lock);
	INIT_LIST_HEAD(&peer->ack_list);
	INIT_LIST_HEAD(&peer->txs_list);
	INIT_LIST_HEAD(&peer->rxs_list);
	INIT_LIST_HEAD(&peer->cwnd_wait);
	grim_peer_cc_init(peer);
	timer_setup(&peer->ack_timer, grim_ack_timer, 0);
	return peer;
}

/* Whether a hello may make one more peer: GRIM_PEER_BURST at once, then
 * peer_rate a second, so that hellos from ever new node ids cannot fill
 * the table faster than silent peers are reclaimed.  NI lock held.
 */
static bool grim_peer_budget(struct grim_ni *ni)
{
	unsigned long now = jiffies, add;

	add = (now - ni->peer_refill) * READ_ONCE(ni->peer_rate) / HZ;
	if (add) {
		ni->peer_tokens = min_t(unsigned long, GRIM_PEER_BURST,
					ni->peer_tokens + add);
		ni->peer_refill = now;
	}
	if (!ni->peer_tokens)
		return false;
	ni->peer_tokens--;
	return true;
}

/* The peer @node, made if need be; @hello: a hello makes it, within the
 * NI's budget (an administrator's static peer is not counted).
 */
struct grim_peer *grim_peer_create(struct grim_ni *ni, u32 node, bool hello)
{
	struct grim_peer *peer;

	spin_lock(&ni->lock);
	peer = grim_peer_lookup(ni, node);
	if (peer || !ni->running)
		goto out;
	if (ni->npeers >= GRIM_MAX_PEERS || (hello && !grim_peer_budget(ni))) {
		grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
		goto out;
	}
	peer = grim_peer_alloc(ni, node);
	if (!peer) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		goto out;
	}
	/* Newer than any session an entry of this node had before it was
	 * reclaimed, which the peer may still hold.
	 */
	WRITE_ONCE(peer->lgen, grim_gen_next(ni->base_gen));
	ni->npeers++;
	hlist_add_head_rcu(&peer->link,
			   &ni->peers[hash_32(node, GRIM_PEER_HASH_BITS)]);
out:
	spin_unlock(&ni->lock);
	return peer;
}

/* Forget all stream state of a session, failing what was not yet
 * acknowledged.  Send streams stay allocated (their timers may be
 * running) and restart at sequence 0, under a new incarnation, in the
 * next session; receive streams and the incarnations seen go.  Peer
 * lock held.
 */
void grim_peer_flush(struct grim_peer *peer, int err)
{
	struct grim_rxs *rxs, *rtmp;
	struct grim_txs *txs;

	/* A sender takes its stream's lock alone, and sends only to a peer
	 * that is up: from here until the caller has set up the next
	 * session, nothing is stamped with this one's generations.
	 */
	if (peer->state == GRIM_PEER_UP && peer != peer->ni->self)
		WRITE_ONCE(peer->state, GRIM_PEER_NEW);

	list_for_each_entry(txs, &peer->txs_list, plink) {
		spin_lock(&txs->lock);
		grim_txs_fail(txs, err);
		grim_txs_unlock_nested(txs);
	}
	list_for_each_entry_safe(rxs, rtmp, &peer->rxs_list, plink)
		grim_rxs_free(rxs);
	grim_peer_inc_reset(peer);
	grim_peer_cc_reset(peer);
}

/* Take every stream of @peer out of the NI's tables, for good: the peer
 * is dead.  Peer lock held.
 */
static void grim_peer_unhash_streams(struct grim_peer *peer)
{
	struct grim_txs *txs;

	list_for_each_entry(txs, &peer->txs_list, plink) {
		spin_lock(&txs->lock);
		grim_txs_unhash(txs);
		grim_txs_unlock_nested(txs);
	}
}

/* Take @peer out of the NI: its messages fail with @err, nothing finds
 * it any more, and no stream timer re-arms.  It is freed after an RCU
 * grace period, by the caller or through ni->reap.  NI and peer locks
 * held.
 */
void grim_peer_unlink(struct grim_ni *ni, struct grim_peer *peer, int err)
{
	WRITE_ONCE(peer->dead, true);
	grim_peer_flush(peer, err);
	grim_peer_unhash_streams(peer);
	hlist_del_rcu(&peer->link);
	ni->npeers--;
}

/* Free the peers the hello timer reclaimed (process context). */
void grim_ni_reap_work(struct work_struct *work)
{
	struct grim_ni *ni = container_of(work, struct grim_ni, reap_work);
	struct grim_peer *peer, *tmp;
	LIST_HEAD(gone);

	/* Peers first: the tx streams a peer closed before it was
	 * unlinked are then all on ni->txs_reap, and their timers are
	 * stopped before the peer they lock is freed.
	 */
	spin_lock_bh(&ni->lock);
	list_splice_init(&ni->reap, &gone);
	spin_unlock_bh(&ni->lock);
	grim_ni_reap_txs(ni);
	if (list_empty(&gone))
		return;
	synchronize_rcu();
	list_for_each_entry_safe(peer, tmp, &gone, reap_link)
		grim_peer_free(peer);
}

/* Whether @peer is a discovered peer that has been down for dead_ms
 * more (silent for twice dead_ms): it goes, and if it comes back it is
 * found again.  Static peers stay.  Peer lock held.
 */
static bool grim_peer_stale(struct grim_peer *peer, unsigned long dead)
{
	return !peer->dead && !peer->configured &&
	       peer->state == GRIM_PEER_DOWN &&
	       time_after(jiffies, peer->last_rx + 2 * dead);
}

/* Unlink a stale peer and have it freed.  Hello timer, no lock held:
 * the NI lock comes before a peer's.
 */
static void grim_peer_reclaim(struct grim_ni *ni, struct grim_peer *peer,
			      unsigned long dead)
{
	bool gone = false;

	spin_lock_bh(&ni->lock);
	spin_lock(&peer->lock);
	if (grim_peer_stale(peer, dead)) {
		grim_peer_unlink(ni, peer, -EHOSTUNREACH);
		list_add_tail(&peer->reap_link, &ni->reap);
		gone = true;
	}
	grim_peer_unlock(peer);
	spin_unlock_bh(&ni->lock);
	if (gone)
		schedule_work(&ni->reap_work);
}

static void grim_peer_set_up(struct grim_ni *ni, struct grim_peer *peer)
{
	if (peer->state == GRIM_PEER_UP)
		return;
	/* After the session's generations, for senders that read them
	 * without the peer lock (grim_txs_push()).
	 */
	smp_store_release(&peer->state, GRIM_PEER_UP);
	trace_grim_peer_state(peer->node, peer->state);
	grim_nl_peer_event(ni, peer);
	grim_mc_peers_changed(ni);
	grim_count(ni, peer, GRIM_STAT_PEER_UP);
	netdev_dbg(ni->dev, "peer %u up\n", peer->node);
	grim_peer_push_all(peer);
}

static u32 grim_ni_age_ms(const struct grim_ni *ni)
{
	unsigned long age = jiffies - ni->started;

	return min_t(unsigned long, jiffies_to_msecs(age), U32_MAX);
}

/* A hello: unicast to @peer (a probe), or broadcast when @peer is NULL,
 * echoing @echo then (see grim_xmit_echo()).
 */
static bool grim_send_hello_to(struct grim_ni *ni, struct grim_peer *peer,
			       u32 flags, u32 echo, const u8 *mac)
{
	struct grim_hello *h;
	struct sk_buff *skb;

	skb = grim_ctl_alloc(ni, GRIM_LINK_HLEN + sizeof(*h));
	if (!skb)
		return false;
	grim_link_hdr_init(ni, peer, skb_put(skb, GRIM_LINK_HLEN),
			   GRIM_FT_HELLO, peer ? GRIM_FF_PROBE : 0, 0);
	h = skb_put(skb, sizeof(*h));
	h->flags = htonl(flags);
	h->hello_ms = htonl(ni->hello_ms);
	h->age_ms = htonl(grim_ni_age_ms(ni));
	grim_frame_finish(skb);
	grim_count(ni, peer, GRIM_STAT_TX_HELLOS);
	if (peer)
		echo = READ_ONCE(peer->auth_rchal);
	grim_xmit_echo(ni, peer, skb, echo, mac);
	return true;
}

/* A probe to @peer; false when it could not be allocated. */
static bool grim_send_probe(struct grim_ni *ni, struct grim_peer *peer,
			    bool answer)
{
	return grim_send_hello_to(ni, peer, answer ? GRIM_HF_ANSWER : 0, 0,
				  NULL);
}

static void grim_send_hello(struct grim_ni *ni, u32 echo)
{
	grim_send_hello_to(ni, NULL, ni->tentative ? GRIM_HF_TENTATIVE : 0,
			   echo, NULL);
}

/* Another NI on the segment has our node id: we are the newcomer, or the
 * younger of two.  The link loses its carrier and stays silent until its
 * node id is changed (link down, set, up): the other NI keeps the node
 * id, and its peers their sessions.
 */
static void grim_ni_yield(struct grim_ni *ni, const u8 *mac)
{
	if (READ_ONCE(ni->conflict))
		return;
	WRITE_ONCE(ni->conflict, true);
	/* Its bit operation orders the flag before the carrier, as
	 * grim_carrier_sync() reads them the other way round.
	 */
	netif_carrier_off(ni->dev);
	if (net_ratelimit())
		netdev_warn(ni->dev,
			    "node id %u is in use by %pM: link off until its node id changes\n",
			    ni->node, mac);
}

/* A hello that claims our node id, from another NI.  Softirq.
 *
 * With a cluster key a hello of ours, replayed, must not take our node
 * id: one of our own run is dropped, and one of another run counts
 * only when it echoes our run id, which an NI with our node id does when
 * it answers a hello of ours.  An unproven one is answered so (at most
 * ten times a second), and only then acted on.
 */
void grim_ni_rcv_own_hello(struct grim_ni *ni, struct sk_buff *skb,
			   const struct grim_auth_info *ai)
{
	const struct grim_hello *h;
	const u8 *mac, *own = ni->lower->dev_addr;
	bool tentative, older;
	u32 flags, age;

	if (!skb_mac_header_was_set(skb) || skb->mac_len < ETH_HLEN ||
	    !pskb_may_pull(skb, GRIM_LINK_HLEN + sizeof(*h)))
		return;
	mac = eth_hdr(skb)->h_source;
	if (ether_addr_equal(mac, own))
		return;		/* our own hello, reflected */
	if (ai->authed && ai->boot == ni->auth_boot) {
		grim_count(ni, NULL, GRIM_STAT_DROP_REPLAY);
		return;
	}
	if (ai->authed && ai->echo != ni->auth_boot) {
		grim_count(ni, NULL, GRIM_STAT_DROP_UNPROVEN);
		if (time_after(jiffies, ni->defended + HZ / 10) &&
		    !READ_ONCE(ni->conflict)) {
			ni->defended = jiffies;
			grim_count(ni, NULL, GRIM_STAT_AUTH_CHALLENGES);
			grim_send_hello(ni, ai->boot);
		}
		return;
	}
	grim_count(ni, NULL, GRIM_STAT_NODE_CONFLICTS);
	h = (const struct grim_hello *)(skb->data + GRIM_LINK_HLEN);
	flags = ntohl(h->flags);
	age = ntohl(h->age_ms);
	tentative = flags & GRIM_HF_TENTATIVE;
	if (tentative && !ni->tentative) {
		/* A newcomer checks our node id: show it we hold it. */
		if (time_after(jiffies, ni->defended + HZ / 10) &&
		    !READ_ONCE(ni->conflict)) {
			ni->defended = jiffies;
			grim_send_hello(ni, ai->boot);
		}
		if (net_ratelimit())
			netdev_info(ni->dev, "%pM tried to take our node id %u\n",
				    mac, ni->node);
		return;
	}
	if (!tentative && ni->tentative) {
		grim_ni_yield(ni, mac);		/* it was there first */
		return;
	}
	/* Both checking, or both running (two segments joined): the one
	 * that ran longer keeps the node id; the lower MAC breaks a tie.
	 */
	older = tentative ? false : grim_ni_age_ms(ni) > age;
	if (!older && (tentative || grim_ni_age_ms(ni) == age))
		older = memcmp(own, mac, ETH_ALEN) < 0;
	if (older) {
		if (net_ratelimit())
			netdev_warn(ni->dev, "node id %u is also used by %pM\n",
				    ni->node, mac);
		/* With a key, the other NI learns of us from an answer. */
		if (ai->authed && time_after(jiffies, ni->defended + HZ / 10)) {
			ni->defended = jiffies;
			grim_send_hello(ni, ai->boot);
		}
		return;
	}
	grim_ni_yield(ni, mac);
}

/* Account a newer or first generation of the peer.  Returns false for a
 * frame of an older session, which the caller drops.  Peer lock held.
 */
static bool grim_peer_learn_gen(struct grim_ni *ni, struct grim_peer *peer,
				u32 src_gen)
{
	if (!src_gen)
		return false;
	if (src_gen == peer->rgen)
		return true;
	if (peer->rgen && grim_seq_before(src_gen, peer->rgen))
		return false;
	if (peer->rgen) {
		/* The peer started over: so do we.  Its base is learned
		 * afresh from its next hello, which must not reset what this
		 * frame starts (a restart's hello may come after its probe;
		 * an NI that restarted with its clock set back has an older
		 * base).
		 */
		grim_count(ni, peer, GRIM_STAT_PEER_RESET);
		netdev_dbg(ni->dev, "peer %u reset its session\n", peer->node);
		grim_peer_flush(peer, -ECONNRESET);
		peer->rbase = 0;
	}
	WRITE_ONCE(peer->rgen, src_gen);
	if (peer->state != GRIM_PEER_NEW)
		WRITE_ONCE(peer->state, GRIM_PEER_NEW);
	return true;
}

/* Account the base generation of a broadcast hello.  The session is
 * left alone unless the NI behind it restarted.  Returns false for an
 * older NI.  Peer lock held.
 */
static bool grim_peer_learn_base(struct grim_ni *ni, struct grim_peer *peer,
				 u32 base)
{
	if (!base)
		return false;
	if (base == peer->rbase)
		return true;
	if (peer->rbase && grim_seq_before(base, peer->rbase))
		return false;
	if (peer->rbase && peer->rgen) {
		/* A new session of ours too: a hello that is not the NI's
		 * restart (a forged one, or another NI with its node id)
		 * must not leave the NI in a session whose streams we reset.
		 * Its frames name our old generation now, and it resets.
		 */
		grim_count(ni, peer, GRIM_STAT_PEER_RESET);
		netdev_dbg(ni->dev, "peer %u restarted\n", peer->node);
		grim_peer_flush(peer, -ECONNRESET);
		WRITE_ONCE(peer->lgen, grim_gen_next(peer->lgen));
		WRITE_ONCE(peer->rgen, 0);
		if (peer->state == GRIM_PEER_UP)
			WRITE_ONCE(peer->state, GRIM_PEER_NEW);
	}
	peer->rbase = base;
	return true;
}

/* With a cluster key: whether an authenticated frame from @peer is new.
 * A frame of the peer's run we know must bear a number not seen before.
 * A frame of another run (the peer's NI restarted, or an old frame is
 * replayed) must echo our current challenge to the peer, which we sent
 * after we last took a new run from it; then we take that run, and
 * change the challenge.  An unproven one is dropped, and the peer is sent
 * a probe with the challenge (at most every GRIM_AUTH_CHAL_GAP): a peer
 * that really started over answers it.  Without a key every frame is
 * new.  Peer lock held.
 */
bool grim_peer_auth_fresh(struct grim_ni *ni, struct grim_peer *peer,
			  const struct grim_auth_info *ai)
{
	if (!ai->authed)
		return true;
	if (peer->auth_rboot && ai->boot == peer->auth_rboot) {
		if (!grim_auth_window(peer, ai->pn)) {
			grim_count(ni, peer, GRIM_STAT_DROP_REPLAY);
			return false;
		}
		if (ai->chal)
			WRITE_ONCE(peer->auth_rchal, ai->chal);
		return true;
	}
	/* Broadcast frames carry no challenge. */
	if (ai->chal)
		WRITE_ONCE(peer->auth_rchal, ai->chal);
	if (ai->echo == peer->auth_chal) {
		/* A new run of the peer's NI: it kept no session of ours.
		 * The hello that says so with a newer base generation may
		 * come after this frame, and must not reset what this one
		 * starts.
		 */
		if (peer->auth_rboot && peer->rgen) {
			grim_count(ni, peer, GRIM_STAT_PEER_RESET);
			grim_peer_flush(peer, -ECONNRESET);
			WRITE_ONCE(peer->rgen, 0);
			if (peer->state == GRIM_PEER_UP)
				WRITE_ONCE(peer->state, GRIM_PEER_NEW);
		}
		peer->rbase = 0;
		grim_auth_window_reset(peer, ai->boot, ai->pn);
		WRITE_ONCE(peer->auth_chal, grim_auth_random());
		grim_count(ni, peer, GRIM_STAT_AUTH_NEW_RUNS);
		return true;
	}
	grim_count(ni, peer, GRIM_STAT_DROP_UNPROVEN);
	/* The challenge goes where the frame came from: its MAC is the
	 * sender's own (the tag covers it), if perhaps an old one.  The
	 * peer's MAC is learned from fresh frames alone.
	 */
	if (!ni->tentative && peer != ni->self &&
	    time_after(jiffies, peer->auth_challenged + GRIM_AUTH_CHAL_GAP)) {
		peer->auth_challenged = jiffies;
		grim_count(ni, peer, GRIM_STAT_AUTH_CHALLENGES);
		grim_send_hello_to(ni, peer, GRIM_HF_ANSWER, 0,
				   peer->configured ? NULL : ai->mac);
	}
	return false;
}

/* A probe of the session we hold with @peer names @dst_gen as ours, and
 * it is newer than ours: the peer took a session of ours that never was
 * (from a forged frame, or from an earlier run of this NI whose clock was
 * ahead).  To it our frames are stale, and to us its: neither side would
 * ever move.  Start a session past the one it holds, which it takes as
 * our restart.  Peer lock.
 */
static void grim_peer_overtake(struct grim_ni *ni, struct grim_peer *peer,
			       u32 dst_gen)
{
	grim_count(ni, peer, GRIM_STAT_PEER_RESET);
	netdev_dbg(ni->dev, "peer %u holds a newer session of ours\n",
		   peer->node);
	grim_peer_flush(peer, -ECONNRESET);
	WRITE_ONCE(peer->lgen, grim_gen_next(dst_gen));
	if (peer->state == GRIM_PEER_UP)
		WRITE_ONCE(peer->state, GRIM_PEER_NEW);
}

/* Is probe @lh of the session we hold with @peer, naming a generation of
 * ours newer than ours?  A peer learns our generations from our frames
 * alone, and ours only grow: no true probe does.
 */
static bool grim_peer_ahead(const struct grim_peer *peer,
			    const struct grim_link_hdr *lh)
{
	return peer->rgen && ntohl(lh->src_gen) == peer->rgen &&
	       lh->dst_gen && grim_seq_after(ntohl(lh->dst_gen), peer->lgen);
}

/* Is probe @lh of an older session of @peer's than the one we hold,
 * naming a generation of ours newer than ours?  Both sides hold what the other
 * never had.
 */
static bool grim_peer_crossed(const struct grim_peer *peer,
			      const struct grim_link_hdr *lh)
{
	return peer->rgen && lh->src_gen &&
	       grim_seq_before(ntohl(lh->src_gen), peer->rgen) &&
	       lh->dst_gen && grim_seq_after(ntohl(lh->dst_gen), peer->lgen);
}

/* A frame of @peer's was dropped as of another session than the one we
 * hold: tell the peer which generations we hold (a probe names both), at
 * most every GRIM_RESYNC_GAP.  A peer that finds a generation of its own
 * there newer than its own starts past it (grim_peer_overtake()); one that
 * finds ours newer than it held resets; for one that only had old frames
 * in flight, the probe is news of nothing.  With @ask, the peer answers
 * with a probe of its own in any case.  Peer lock.
 */
static void grim_peer_resync(struct grim_ni *ni, struct grim_peer *peer,
			     bool ask)
{
	if (ni->tentative || peer->dead || !peer->rgen ||
	    time_before(jiffies, peer->resynced + GRIM_RESYNC_GAP))
		return;
	peer->resynced = jiffies;
	grim_send_probe(ni, peer, ask);
}

/* Validate the session fields of a DATA/ACK/NACK frame.  Peer lock held.
 */
bool grim_peer_check_session(struct grim_ni *ni, struct grim_peer *peer,
			     const struct grim_link_hdr *lh)
{
	if (peer->dead || peer->state == GRIM_PEER_DOWN ||
	    ntohl(lh->dst_gen) != peer->lgen ||
	    !grim_peer_learn_gen(ni, peer, ntohl(lh->src_gen))) {
		grim_peer_resync(ni, peer, false);
		grim_count(ni, peer, GRIM_STAT_DROP_STALE);
		return false;
	}
	peer->last_rx = jiffies;
	grim_peer_set_up(ni, peer);
	return true;
}

/* Where a hello or probe for @peer comes from.  A source that is no
 * unicast MAC is dropped.  A static peer's MAC is the administrator's:
 * hellos from another are dropped.  A discovered peer's is the last
 * hello's, whatever its generation: a frame whose Ethernet source was
 * damaged on the way (the frame check does not cover it) must not end a
 * session, and the NI's next hello teaches its true MAC back.  Returns
 * false to drop.  Peer lock.
 */
static bool grim_peer_hello_mac(struct grim_ni *ni, struct grim_peer *peer,
				const struct sk_buff *skb)
{
	const u8 *mac;

	if (!skb_mac_header_was_set(skb) || skb->mac_len < ETH_HLEN)
		return true;
	mac = eth_hdr(skb)->h_source;
	if (!is_valid_ether_addr(mac)) {
		grim_count(ni, peer, GRIM_STAT_DROP_BAD_MAC);
		return false;
	}
	if (ether_addr_equal(mac, peer->mac))
		return true;
	if (peer->configured) {
		grim_count(ni, peer, GRIM_STAT_DROP_STALE);
		return false;
	}
	ether_addr_copy(peer->mac, mac);
	return true;
}

void grim_peer_rcv_hello(struct grim_ni *ni, struct sk_buff *skb,
			 const struct grim_link_hdr *lh,
			 const struct grim_auth_info *ai)
{
	bool probe = lh->flags & GRIM_FF_PROBE;
	u32 node = ntohl(lh->src_node);
	const struct grim_hello *h;
	struct grim_peer *peer;
	bool answer, ahead;

	if (READ_ONCE(ni->conflict))
		return;

	if (!pskb_may_pull(skb, GRIM_LINK_HLEN + sizeof(*h))) {
		grim_count(ni, NULL, GRIM_STAT_DROP_SHORT);
		return;
	}
	lh = (const struct grim_link_hdr *)skb->data;
	h = (const struct grim_hello *)(lh + 1);
	if (node == ni->node)
		return;		/* our own probe to ourselves: nothing to do */
	if (ntohl(h->flags) & GRIM_HF_TENTATIVE)
		return;		/* not on the segment yet */

	peer = grim_peer_lookup(ni, node);
	if (!peer)
		peer = grim_peer_create(ni, node, true);
	if (!peer)
		return;

	spin_lock(&peer->lock);
	if (peer->dead || !grim_peer_auth_fresh(ni, peer, ai))
		goto out;
	if (!grim_peer_hello_mac(ni, peer, skb))
		goto out;
	ahead = probe && grim_peer_ahead(peer, lh);
	if (probe && grim_peer_crossed(peer, lh)) {
		/* Each side holds a generation of the other's that it
		 * never had (two forged probes): neither would take the
		 * other's frames.  Take this one's, and start past ours.
		 */
		WRITE_ONCE(peer->rgen, ntohl(lh->src_gen));
		peer->rbase = 0;
		ahead = true;
	} else if (!(probe ? grim_peer_learn_gen(ni, peer, ntohl(lh->src_gen)) :
			     grim_peer_learn_base(ni, peer, ntohl(lh->src_gen)))) {
		/* A broadcast hello with an older base than the one we
		 * hold: an old frame, or the real NI after a forged hello
		 * took its place.  Its hellos no longer keep it alive here;
		 * its answer to a probe does, if it holds our session.
		 */
		grim_peer_resync(ni, peer, !probe);
		grim_count(ni, peer, GRIM_STAT_DROP_STALE);
		goto out;
	}
	peer->last_rx = jiffies;
	peer->hello_ms = ntohl(h->hello_ms);
	if (peer->state == GRIM_PEER_DOWN)
		WRITE_ONCE(peer->state, GRIM_PEER_NEW);

	if (probe && ntohl(lh->dst_gen) == peer->lgen)
		grim_peer_set_up(ni, peer);
	else if (ahead)
		grim_peer_overtake(ni, peer, ntohl(lh->dst_gen));
	/* Answer a peer that is not sure of us, or that we are unsure of. */
	answer = peer->state != GRIM_PEER_UP ||
		 (probe && (ntohl(h->flags) & GRIM_HF_ANSWER)) ||
		 (probe && ntohl(lh->dst_gen) != peer->lgen);
	if (answer && !ni->tentative)
		grim_send_probe(ni, peer, peer->state != GRIM_PEER_UP);
out:
	grim_peer_unlock(peer);
}

static void grim_peer_down(struct grim_ni *ni, struct grim_peer *peer)
{
	if (net_ratelimit())	/* a remote host decides how often */
		netdev_info(ni->dev, "peer %u down: silent for %u ms\n",
			    peer->node, ni->dead_ms);
	grim_count(ni, peer, GRIM_STAT_PEER_DOWN);
	WRITE_ONCE(peer->state, GRIM_PEER_DOWN);
	trace_grim_peer_state(peer->node, peer->state);
	grim_nl_peer_event(ni, peer);
	grim_mc_peers_changed(ni);
	grim_peer_flush(peer, -EHOSTUNREACH);
	WRITE_ONCE(peer->lgen, grim_gen_next(peer->lgen));
	WRITE_ONCE(peer->rgen, 0);
	peer->rbase = 0;
}

/* Fail every message queued on the NI (its node id is taken).  Timer. */
static void grim_ni_fail_all(struct grim_ni *ni, int err)
{
	struct grim_peer *peer;
	int i;

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry_rcu(peer, &ni->peers[i], link) {
			spin_lock_bh(&peer->lock);
			grim_peer_flush(peer, err);
			if (peer != ni->self && peer->state != GRIM_PEER_DOWN) {
				WRITE_ONCE(peer->state, GRIM_PEER_DOWN);
				WRITE_ONCE(peer->lgen, grim_gen_next(peer->lgen));
				WRITE_ONCE(peer->rgen, 0);
				peer->rbase = 0;
			}
			grim_peer_unlock_bh(peer);
		}
	}
	rcu_read_unlock();
}

/* How long @peer may be silent before we ask it directly: one and a
 * half times the longer of two hello intervals, ours and the one it
 * announces, so that a peer which says hello less often than we do is
 * not probed between its hellos.  The peer's word counts only up to
 * @dead_ms less two of our intervals: probes go out on our ticks, and a
 * peer whose hellos are lost must get one, or two, before the tick that
 * would give it up, as with our own interval alone (dead_ms is at least
 * three of them).  Peer lock.
 */
static unsigned long grim_peer_missed(const struct grim_ni *ni,
				      const struct grim_peer *peer, u32 dead_ms)
{
	u64 ours = READ_ONCE(ni->hello_ms), theirs = peer->hello_ms;
	u64 ms = max(ours * 3 / 2,
		     min(theirs * 3 / 2, (u64)dead_ms - min_t(u64, dead_ms, 2 * ours)));

	return msecs_to_jiffies(min_t(u64, ms, U32_MAX));
}

/* Every hello_ms: announce ourselves, probe new and silent peers, reap
 * dead ones.
 */
void grim_hello_timer(struct timer_list *t)
{
	struct grim_ni *ni = from_timer(ni, t, hello_timer);
	u32 dead_ms = READ_ONCE(ni->dead_ms);
	unsigned long dead = msecs_to_jiffies(dead_ms);
	struct grim_peer *peer;
	bool stale;
	int i;

	if (!READ_ONCE(ni->running))
		return;
	if (READ_ONCE(ni->conflict)) {
		/* Silent; what was queued fails, once. */
		if (!ni->conflict_done) {
			ni->conflict_done = true;
			grim_ni_fail_all(ni, -EADDRINUSE);
		}
		return;
	}
	if (ni->tentative) {
		/* Is our node id free?  Ask, then wait for an answer. */
		ni->tentative--;
		if (ni->tentative) {
			grim_send_hello(ni, 0);
			mod_timer(&ni->hello_timer,
				  jiffies + msecs_to_jiffies(GRIM_TENTATIVE_MS));
			return;
		}
	}
	grim_send_hello(ni, 0);

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry_rcu(peer, &ni->peers[i], link) {
			if (!list_empty_careful(&peer->rxs_list)) {
				grim_peer_expire_reasm(peer, dead);
				grim_peer_expire_rxs(peer, max(2 * dead,
							       GRIM_RXS_EXPIRE_MIN),
						     dead);
			}
			if (peer == ni->self)
				continue;
			spin_lock_bh(&peer->lock);
			stale = grim_peer_stale(peer, dead);
			if (peer->dead || peer->state == GRIM_PEER_DOWN)
				goto next;
			if (time_after(jiffies, peer->last_rx + dead)) {
				grim_peer_down(ni, peer);
			} else if (peer->state == GRIM_PEER_NEW) {
				grim_send_probe(ni, peer, true);
			} else if (time_after(jiffies, peer->last_rx +
					      grim_peer_missed(ni, peer, dead_ms))) {
				/* It missed a hello: ask it directly. */
				if (grim_send_probe(ni, peer, true))
					grim_count(ni, peer,
						   GRIM_STAT_PEER_PROBES);
			}
next:
			grim_peer_unlock_bh(peer);
			if (stale)
				grim_peer_reclaim(ni, peer, dead);
		}
	}
	rcu_read_unlock();
	mod_timer(&ni->hello_timer,
		  jiffies + msecs_to_jiffies(READ_ONCE(ni->hello_ms)));
}

int grim_ni_start(struct grim_ni *ni)
{
	struct grim_peer *self;

	ni->base_gen = grim_gen_now();
	grim_auth_start(ni);
	ni->peer_tokens = GRIM_PEER_BURST;
	ni->peer_refill = jiffies;
	ni->started = jiffies;
	ni->defended = jiffies - HZ;
	/* One more than the hellos: the last round only waits. */
	ni->tentative = GRIM_TENTATIVE_PROBES + 1;
	WRITE_ONCE(ni->conflict, false);
	ni->conflict_done = false;
	self = grim_peer_alloc(ni, ni->node);
	if (!self)
		return -ENOMEM;
	WRITE_ONCE(self->state, GRIM_PEER_UP);
	WRITE_ONCE(self->rgen, self->lgen);
	ni->self = self;

	spin_lock_bh(&ni->lock);
	hlist_add_head_rcu(&self->link,
			   &ni->peers[hash_32(ni->node, GRIM_PEER_HASH_BITS)]);
	ni->npeers = 1;
	WRITE_ONCE(ni->running, true);
	spin_unlock_bh(&ni->lock);

	/* The first tentative hello goes out before the NI listens: an NI
	 * that holds our node id then hears of us (and counts it) before
	 * anything it says can make us yield, silent from then on.
	 */
	ni->tentative--;
	local_bh_disable();
	grim_send_hello(ni, 0);
	local_bh_enable();

	ni->pt.type = htons(GRIM_ETH_P);
	ni->pt.dev = ni->lower;
	ni->pt.func = grim_rcv;
	ni->pt.af_packet_priv = ni;
	dev_add_pack(&ni->pt);
	mod_timer(&ni->hello_timer,
		  jiffies + msecs_to_jiffies(GRIM_TENTATIVE_MS));
	return 0;
}

/* Free an unlinked peer, a grace period after its streams were
 * unhashed: its receive streams went with its last flush.
 */
void grim_peer_free(struct grim_peer *peer)
{
	struct grim_txs *txs, *tmp;

	del_timer_sync(&peer->ack_timer);
	WARN_ON_ONCE(!list_empty(&peer->rxs_list));
	/* Every release of the lock sends what was queued under it. */
	WARN_ON_ONCE(!skb_queue_empty(&peer->xmitq));
	__skb_queue_purge(&peer->xmitq);
	list_for_each_entry_safe(txs, tmp, &peer->txs_list, plink) {
		grim_txs_stop_timers(txs);
		grim_txs_free(txs);
	}
	kfree(peer);
}

/* Stop the NI (process context, RTNL): no more frames in, every queued
 * message fails with ENETDOWN, all peers and streams are freed.
 */
void grim_ni_stop(struct grim_ni *ni)
{
	struct grim_peer *peer;
	struct hlist_node *tmp;
	HLIST_HEAD(gone);
	int i;

	spin_lock_bh(&ni->lock);
	WRITE_ONCE(ni->running, false);
	spin_unlock_bh(&ni->lock);

	del_timer_sync(&ni->hello_timer);
	dev_remove_pack(&ni->pt);	/* waits for receivers in flight */
	flush_work(&ni->reap_work);	/* the timer queues no more */

	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry(peer, &ni->peers[i], link) {
			spin_lock_bh(&peer->lock);
			WRITE_ONCE(peer->dead, true);
			grim_peer_flush(peer, -ENETDOWN);
			grim_peer_unhash_streams(peer);
			grim_peer_unlock_bh(peer);
		}
	}
	/* No stream closes any more: free those that did. */
	flush_work(&ni->reap_work);
	grim_ni_reap_txs(ni);
	/* Senders find peers under RCU; peers themselves go after a grace
	 * period, their streams now: nothing reaches those past ->dead.
	 */
	WRITE_ONCE(ni->self, NULL);
	spin_lock_bh(&ni->lock);
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry_safe(peer, tmp, &ni->peers[i], link) {
			hlist_del_rcu(&peer->link);
			hlist_add_head(&peer->link, &gone);
		}
	}
	spin_unlock_bh(&ni->lock);
	synchronize_rcu();
	hlist_for_each_entry_safe(peer, tmp, &gone, link)
		grim_peer_free(peer);
	ni->npeers = 0;
}

/* The lower device's MTU changed (RTNL held): every stream cuts again
 * what no longer fits.
 */
void grim_ni_lower_mtu(struct grim_ni *ni)
{
	struct grim_peer *peer;
	int i;

	if (!READ_ONCE(ni->running))
		return;
	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++)
		hlist_for_each_entry_rcu(peer, &ni->peers[i], link)
			grim_peer_lower_mtu(peer);
	rcu_read_unlock();
}
