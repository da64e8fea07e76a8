// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: peers configured by the administrator (the netlink family's
 * peer add and del).  A static peer is known by node id and MAC without
 * waiting for its hello; the hello timer probes it like a discovered one.
 * Peers live while the NI runs; stopping the NI forgets them all.
 */
#include <linux/etherdevice.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "grim.h"

/* Add a static peer (RTNL held, which keeps the NI from stopping). */
int grim_peer_add_static(struct grim_ni *ni, u32 node, const u8 *mac,
			 struct netlink_ext_ack *extack)
{
	struct grim_peer *peer;
	bool exists;

	ASSERT_RTNL();
	if (!READ_ONCE(ni->running)) {
		NL_SET_ERR_MSG(extack, "link is down: peers exist only while it is up");
		return -ENETDOWN;
	}
	if (node == ni->node) {
		NL_SET_ERR_MSG(extack, "node id is this NI's own");
		return -EINVAL;
	}
	rcu_read_lock();
	peer = grim_peer_lookup(ni, node);
	exists = peer && peer->configured;
	rcu_read_unlock();
	if (exists) {
		NL_SET_ERR_MSG(extack, "peer already configured");
		return -EEXIST;
	}

	/* A discovered peer becomes static, with the given MAC. */
	local_bh_disable();
	peer = grim_peer_create(ni, node, false);
	local_bh_enable();
	if (!peer) {
		if (READ_ONCE(ni->npeers) >= GRIM_MAX_PEERS) {
			NL_SET_ERR_MSG(extack, "peer table is full");
			return -ENOSPC;
		}
		return -ENOMEM;
	}
	spin_lock_bh(&peer->lock);
	ether_addr_copy(peer->mac, mac);
	peer->configured = true;
	peer->last_rx = jiffies;
	grim_peer_unlock_bh(peer);
	return 0;
}

/* Forget a peer.  One without a live session (it never answered, or it
 * was declared down) is removed.  One with a session, which may hold
 * stream state of ours, cannot simply vanish: a new entry would start
 * again at the same generation and sequence 0 while the peer still
 * expects our old sequence numbers.  So its session ends
 * as if it had gone down: queued messages fail with ECONNABORTED and its
 * next frames carry a newer generation, which makes the peer reset too;
 * it is then rediscovered.  RTNL held; sleeps.
 */
int grim_peer_del(struct grim_ni *ni, u32 node, struct netlink_ext_ack *extack)
{
	struct grim_peer *peer;
	bool session;

	ASSERT_RTNL();
	if (!READ_ONCE(ni->running)) {
		NL_SET_ERR_MSG(extack, "link is down: it has no peers");
		return -ENETDOWN;
	}
	if (node == ni->node) {
		NL_SET_ERR_MSG(extack, "cannot remove the NI's own node");
		return -EINVAL;
	}
	spin_lock_bh(&ni->lock);
	peer = grim_peer_lookup(ni, node);
	if (peer) {
		spin_lock(&peer->lock);
		session = peer->rgen != 0;
		if (session) {
			grim_peer_flush(peer, -ECONNABORTED);
			WRITE_ONCE(peer->lgen, grim_gen_next(peer->lgen));
			WRITE_ONCE(peer->rgen, 0);
			WRITE_ONCE(peer->state, GRIM_PEER_NEW);
			peer->configured = false;
			peer->last_rx = jiffies;
		} else {
			grim_peer_unlink(ni, peer, -ECONNABORTED);
		}
		grim_peer_unlock(peer);
	}
	spin_unlock_bh(&ni->lock);
	if (!peer) {
		NL_SET_ERR_MSG(extack, "no such peer");
		return -ENOENT;
	}
	if (!session) {
		synchronize_rcu();
		/* Its closed streams' timers first: they lock the peer.  The
		 * reap work may hold some of them: wait for it too.
		 */
		flush_work(&ni->reap_work);
		grim_ni_reap_txs(ni);
		grim_peer_free(peer);
	}
	return 0;
}
