// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM: the "grim" generic netlink family (Documentation/netlink/specs/
 * grim.yaml).  Node ids, peers, NI state and counters, bound sockets, and
 * an "events" multicast group for peer and NI changes.  Every object is
 * looked up in the caller's network namespace; changes need CAP_NET_ADMIN
 * in its user namespace.
 */
#include <linux/etherdevice.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <uapi/linux/grim.h>

#include "grim.h"
#include "netlink.h"

static struct genl_family grim_nl_family;

enum grim_nl_mcgrp {
	GRIM_NL_MCGRP_EVENTS,
};

static const struct genl_multicast_group grim_nl_mcgrps[] = {
	[GRIM_NL_MCGRP_EVENTS] = { .name = GRIM_GENL_MCGRP_EVENTS, },
};

/* Policies: one per request, exactly the attributes the spec lists. */

static struct netlink_range_validation grim_nl_node_range = {
	.min = 1,
	.max = GRIM_NODE_ANY - 1,
};

static const struct nla_policy grim_nl_ifindex_policy[GRIM_A_IFINDEX + 1] = {
	[GRIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy grim_nl_node_set_policy[GRIM_A_CLUSTER + 1] = {
	[GRIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[GRIM_A_NODE] = NLA_POLICY_FULL_RANGE(NLA_U32, &grim_nl_node_range),
	[GRIM_A_CLUSTER] = { .type = NLA_U32 },
};

static const struct nla_policy grim_nl_peer_policy[GRIM_A_NODE + 1] = {
	[GRIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[GRIM_A_NODE] = NLA_POLICY_FULL_RANGE(NLA_U32, &grim_nl_node_range),
};

static const struct nla_policy grim_nl_peer_add_policy[GRIM_A_PEER_MAC + 1] = {
	[GRIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[GRIM_A_NODE] = NLA_POLICY_FULL_RANGE(NLA_U32, &grim_nl_node_range),
	[GRIM_A_PEER_MAC] = NLA_POLICY_EXACT_LEN(ETH_ALEN),
};

static const struct nla_policy grim_nl_key_policy[GRIM_A_KEY_TX + 1] = {
	[GRIM_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[GRIM_A_KEY_ID] = NLA_POLICY_MIN(NLA_U8, 1),
	[GRIM_A_KEY_SECRET] = NLA_POLICY_EXACT_LEN(GRIM_AUTH_KEY_LEN),
	[GRIM_A_KEY_TX] = { .type = NLA_FLAG },
};

static const struct nla_policy grim_nl_socket_policy[GRIM_A_SOCK_PORT + 1] = {
	[GRIM_A_SOCK_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
};

/* Find the NI with @ifindex in @net.  RTNL or RCU held. */
static struct grim_ni *grim_nl_ni_find(struct net *net, u32 ifindex)
{
	struct grim_ni *ni;

	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list,
				lockdep_rtnl_is_held()) {
		if (ni->dev->ifindex == ifindex)
			return ni;
	}
	return NULL;
}

/* The NI a request names with GRIM_A_IFINDEX; sets extack if none. */
static struct grim_ni *grim_nl_ni_get(struct genl_info *info)
{
	struct grim_ni *ni;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_IFINDEX))
		return ERR_PTR(-EINVAL);
	ni = grim_nl_ni_find(genl_info_net(info),
			     nla_get_u32(info->attrs[GRIM_A_IFINDEX]));
	if (!ni) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GRIM_A_IFINDEX],
				    "no GRIM link with this ifindex");
		return ERR_PTR(-ENODEV);
	}
	return ni;
}

static int grim_nl_put_stats(struct sk_buff *skb, const u64 *stats, int n)
{
	struct nlattr *nest;
	int i;

	for (i = 0; i < n; i++) {
		nest = nla_nest_start(skb, GRIM_A_STAT);
		if (!nest)
			return -EMSGSIZE;
		if (nla_put_string(skb, GRIM_A_STAT_NAME, grim_stat_names[i]) ||
		    nla_put_u64_64bit(skb, GRIM_A_STAT_VALUE, stats[i],
				      GRIM_A_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, nest);
	}
	return 0;
}

/* Node and link messages. */

static int grim_nl_fill_node(struct sk_buff *skb, const struct grim_ni *ni)
{
	if (nla_put_u32(skb, GRIM_A_IFINDEX, ni->dev->ifindex) ||
	    nla_put_string(skb, GRIM_A_IFNAME, ni->dev->name) ||
	    nla_put_u32(skb, GRIM_A_NODE, READ_ONCE(ni->node)) ||
	    nla_put_u32(skb, GRIM_A_CLUSTER, READ_ONCE(ni->cluster)))
		return -EMSGSIZE;
	return 0;
}

/* Which keys a link has, never what they are.  RTNL or RCU. */
static int grim_nl_put_keys(struct sk_buff *skb, const struct grim_ni *ni)
{
	const struct grim_key *key;
	u8 ids[GRIM_MAX_KEYS];
	int i, n = 0;

	key = rcu_dereference_rtnl(ni->tx_key);
	if (nla_put_u8(skb, GRIM_A_KEY_TX_ID, key ? key->id : 0))
		return -EMSGSIZE;
	for (i = 0; i < GRIM_MAX_KEYS; i++) {
		key = rcu_dereference_rtnl(ni->keys[i]);
		if (key)
			ids[n++] = key->id;
	}
	return n ? nla_put(skb, GRIM_A_KEY_IDS, n, ids) : 0;
}

static int grim_nl_fill_link(struct sk_buff *skb, const struct grim_ni *ni,
			     bool stats)
{
	if (grim_nl_fill_node(skb, ni) || grim_nl_put_keys(skb, ni) ||
	    nla_put_u32(skb, GRIM_A_LOWER_IFINDEX, ni->lower->ifindex) ||
	    nla_put_u8(skb, GRIM_A_RUNNING, READ_ONCE(ni->running)) ||
	    nla_put_u32(skb, GRIM_A_HELLO_MS, READ_ONCE(ni->hello_ms)) ||
	    nla_put_u32(skb, GRIM_A_DEAD_MS, READ_ONCE(ni->dead_ms)) ||
	    nla_put_u32(skb, GRIM_A_RTO_MS, READ_ONCE(ni->rto_ms)) ||
	    nla_put_u32(skb, GRIM_A_WINDOW, READ_ONCE(ni->window)) ||
	    nla_put_u8(skb, GRIM_A_DATA_CRC, READ_ONCE(ni->data_crc)) ||
	    nla_put_u32(skb, GRIM_A_NPEERS, READ_ONCE(ni->npeers)) ||
	    nla_put_u32(skb, GRIM_A_TX_STREAMS, atomic_read(&ni->ntxs)) ||
	    nla_put_u32(skb, GRIM_A_RX_STREAMS, atomic_read(&ni->nrxs)) ||
	    nla_put_u32(skb, GRIM_A_STREAM_IDLE_MS,
			READ_ONCE(ni->stream_idle_ms)) ||
	    nla_put_u32(skb, GRIM_A_PEER_RATE, READ_ONCE(ni->peer_rate)))
		return -EMSGSIZE;
	if (stats) {
		u64 v[GRIM_STAT_MAX];

		grim_ni_read_stats(ni, v);
		return grim_nl_put_stats(skb, v, GRIM_STAT_MAX);
	}
	return 0;
}

static int grim_nl_send_ni(struct sk_buff *skb, const struct grim_ni *ni,
			   u32 portid, u32 seq, int flags, u8 cmd)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &grim_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if ((cmd == GRIM_CMD_NODE_GET ? grim_nl_fill_node(skb, ni) :
	     grim_nl_fill_link(skb, ni, cmd == GRIM_CMD_LINK_GET))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int grim_nl_ni_doit(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	struct grim_ni *ni;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rcu_read_lock();
	ni = grim_nl_ni_get(info);
	err = IS_ERR(ni) ? PTR_ERR(ni) :
	      grim_nl_send_ni(msg, ni, info->snd_portid, info->snd_seq, 0, cmd);
	rcu_read_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* Dumps with an optional GRIM_A_IFINDEX filter. */
static u32 grim_nl_dump_ifindex(struct netlink_callback *cb)
{
	struct nlattr **attrs = grim_dump_attrs(cb);

	if (attrs && attrs[GRIM_A_IFINDEX])
		return nla_get_u32(attrs[GRIM_A_IFINDEX]);
	return 0;
}

static int grim_nl_ni_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u8 cmd = genl_dumpit_info(cb)->op.cmd;
	u32 ifindex = grim_nl_dump_ifindex(cb);
	struct net *net = sock_net(skb->sk);
	long idx = 0, skip = cb->args[0];
	struct grim_ni *ni;
	int err = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (ifindex && ni->dev->ifindex != ifindex)
			continue;
		if (idx++ < skip)
			continue;
		err = grim_nl_send_ni(skb, ni, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI, cmd);
		if (err) {
			idx--;
			break;
		}
	}
	rcu_read_unlock();
	cb->args[0] = idx;
	if (err && idx == skip)
		return err;	/* one object does not fit an empty skb */
	return skb->len;
}

static int grim_nl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct grim_ni *ni;
	__be32 addr;
	int err = 0;

	if (!info->attrs[GRIM_A_NODE] && !info->attrs[GRIM_A_CLUSTER]) {
		NL_SET_ERR_MSG(info->extack, "nothing to set: give a node or cluster id");
		return -EINVAL;
	}
	rtnl_lock();
	ni = grim_nl_ni_get(info);
	if (IS_ERR(ni)) {
		err = PTR_ERR(ni);
		goto out;
	}
	if (netif_running(ni->dev)) {
		NL_SET_ERR_MSG(info->extack,
			       "node and cluster change only while the link is down");
		err = -EBUSY;
		goto out;
	}
	if (info->attrs[GRIM_A_CLUSTER])
		WRITE_ONCE(ni->cluster,
			   nla_get_u32(info->attrs[GRIM_A_CLUSTER]));
	if (info->attrs[GRIM_A_NODE]) {
		WRITE_ONCE(ni->node, nla_get_u32(info->attrs[GRIM_A_NODE]));
		addr = cpu_to_be32(ni->node);
		dev_addr_set(ni->dev, (u8 *)&addr);
		call_netdevice_notifiers(NETDEV_CHANGEADDR, ni->dev);
	}
out:
	rtnl_unlock();
	return err;
}

/* Cluster keys. */

static int grim_nl_key_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *secret = info->attrs[GRIM_A_KEY_SECRET];
	struct grim_ni *ni;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_KEY_ID))
		return -EINVAL;
	if (!secret && !info->attrs[GRIM_A_KEY_TX]) {
		NL_SET_ERR_MSG(info->extack, "give a secret, or tx to send with the key");
		return -EINVAL;
	}
	rtnl_lock();
	ni = grim_nl_ni_get(info);
	err = IS_ERR(ni) ? PTR_ERR(ni) :
	      grim_key_set(ni, nla_get_u8(info->attrs[GRIM_A_KEY_ID]),
			   secret ? nla_data(secret) : NULL,
			   nla_get_flag(info->attrs[GRIM_A_KEY_TX]),
			   info->extack);
	rtnl_unlock();
	/* The request is freed by netlink; the secret goes with it now. */
	if (secret)
		memzero_explicit(nla_data(secret), nla_len(secret));
	return err;
}

static int grim_nl_key_del(struct sk_buff *skb, struct genl_info *info)
{
	struct grim_ni *ni;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_KEY_ID))
		return -EINVAL;
	rtnl_lock();
	ni = grim_nl_ni_get(info);
	err = IS_ERR(ni) ? PTR_ERR(ni) :
	      grim_key_del(ni, nla_get_u8(info->attrs[GRIM_A_KEY_ID]),
			   info->extack);
	rtnl_unlock();
	return err;
}

/* Peers. */

static u8 grim_nl_peer_state(enum grim_peer_state state)
{
	switch (state) {
	case GRIM_PEER_UP:
		return GRIM_NL_PEER_UP;
	case GRIM_PEER_DOWN:
		return GRIM_NL_PEER_DOWN;
	default:
		return GRIM_NL_PEER_NEW;
	}
}

/* A peer message.  Called with the peer lock held: nothing may sleep. */
static int grim_nl_fill_peer(struct sk_buff *skb, struct grim_peer *peer,
			     bool stats)
{
	u32 cwnd, inflight, inflight_max;
	struct grim_ni *ni = peer->ni;
	unsigned long srtt8;

	/* The path's state is written by the peer's streams. */
	spin_lock(&peer->cc_lock);
	cwnd = peer->cwnd;
	inflight = peer->inflight;
	inflight_max = peer->inflight_max;
	srtt8 = peer->srtt8;
	spin_unlock(&peer->cc_lock);
	if (nla_put_u32(skb, GRIM_A_IFINDEX, ni->dev->ifindex) ||
	    nla_put_u32(skb, GRIM_A_NODE, peer->node) ||
	    nla_put_u8(skb, GRIM_A_PEER_STATE, grim_nl_peer_state(peer->state)) ||
	    nla_put(skb, GRIM_A_PEER_MAC, ETH_ALEN, peer->mac) ||
	    nla_put_u32(skb, GRIM_A_PEER_LGEN, peer->lgen) ||
	    nla_put_u32(skb, GRIM_A_PEER_RGEN, peer->rgen) ||
	    nla_put_u32(skb, GRIM_A_PEER_LAST_RX_MS,
			jiffies_to_msecs(jiffies - peer->last_rx)) ||
	    (peer->configured && nla_put_flag(skb, GRIM_A_PEER_STATIC)) ||
	    nla_put_u32(skb, GRIM_A_PEER_TX_STREAMS, peer->ntx) ||
	    nla_put_u32(skb, GRIM_A_PEER_RX_STREAMS, peer->nrx) ||
	    nla_put_u32(skb, GRIM_A_PEER_CWND, cwnd) ||
	    nla_put_u32(skb, GRIM_A_PEER_INFLIGHT, inflight) ||
	    nla_put_u32(skb, GRIM_A_PEER_INFLIGHT_MAX, inflight_max) ||
	    nla_put_u32(skb, GRIM_A_PEER_SRTT_US, jiffies_to_usecs(srtt8 >> 3)))
		return -EMSGSIZE;
	if (stats) {
		u64 v[GRIM_PEER_STATS];
		int i;

		for (i = 0; i < GRIM_PEER_STATS; i++)
			v[i] = atomic_long_read(&peer->stats[i]);
		return grim_nl_put_stats(skb, v, GRIM_PEER_STATS);
	}
	return 0;
}

static int grim_nl_send_peer(struct sk_buff *skb, struct grim_peer *peer,
			     u32 portid, u32 seq, int flags, u8 cmd)
{
	void *hdr;
	int err;

	hdr = genlmsg_put(skb, portid, seq, &grim_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	spin_lock_bh(&peer->lock);
	err = grim_nl_fill_peer(skb, peer, cmd == GRIM_CMD_PEER_GET);
	spin_unlock_bh(&peer->lock);
	if (err) {
		genlmsg_cancel(skb, hdr);
		return err;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int grim_nl_peer_get(struct sk_buff *skb, struct genl_info *info)
{
	struct grim_peer *peer;
	struct grim_ni *ni;
	struct sk_buff *msg;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_NODE))
		return -EINVAL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rcu_read_lock();
	ni = grim_nl_ni_get(info);
	if (IS_ERR(ni)) {
		err = PTR_ERR(ni);
		goto out;
	}
	peer = grim_peer_lookup(ni, nla_get_u32(info->attrs[GRIM_A_NODE]));
	if (!peer) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[GRIM_A_NODE],
				    "no such peer");
		err = -ENOENT;
		goto out;
	}
	err = grim_nl_send_peer(msg, peer, info->snd_portid, info->snd_seq, 0,
				GRIM_CMD_PEER_GET);
out:
	rcu_read_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: NIs done; cb->args[1]: peers of the current NI done. */
static int grim_nl_peer_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 ifindex = grim_nl_dump_ifindex(cb);
	struct net *net = sock_net(skb->sk);
	long ni_idx = 0, peer_idx;
	struct grim_peer *peer;
	struct grim_ni *ni;
	int i, err = 0;
	bool sent = false;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (ni_idx++ < cb->args[0])
			continue;
		if (ifindex && ni->dev->ifindex != ifindex)
			goto next_ni;
		peer_idx = 0;
		for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
			hlist_for_each_entry_rcu(peer, &ni->peers[i], link) {
				if (peer_idx++ < cb->args[1])
					continue;
				err = grim_nl_send_peer(skb, peer,
							NETLINK_CB(cb->skb).portid,
							cb->nlh->nlmsg_seq,
							NLM_F_MULTI,
							GRIM_CMD_PEER_GET);
				if (err)
					goto out;
				sent = true;
				cb->args[1] = peer_idx;
			}
		}
next_ni:
		cb->args[0] = ni_idx;
		cb->args[1] = 0;
	}
out:
	rcu_read_unlock();
	if (err && !sent)
		return err;
	return skb->len;
}

static int grim_nl_peer_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	const u8 *mac;
	struct grim_ni *ni;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_NODE) ||
	    GENL_REQ_ATTR_CHECK(info, GRIM_A_PEER_MAC))
		return -EINVAL;
	mac = nla_data(attrs[GRIM_A_PEER_MAC]);
	if (!is_valid_ether_addr(mac)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[GRIM_A_PEER_MAC],
				    "peer MAC must be a unicast, non-zero address");
		return -EINVAL;
	}
	rtnl_lock();
	ni = grim_nl_ni_get(info);
	err = IS_ERR(ni) ? PTR_ERR(ni) :
	      grim_peer_add_static(ni, nla_get_u32(attrs[GRIM_A_NODE]), mac,
				   info->extack);
	rtnl_unlock();
	return err;
}

static int grim_nl_peer_del(struct sk_buff *skb, struct genl_info *info)
{
	struct grim_ni *ni;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GRIM_A_NODE))
		return -EINVAL;
	rtnl_lock();
	ni = grim_nl_ni_get(info);
	err = IS_ERR(ni) ? PTR_ERR(ni) :
	      grim_peer_del(ni, nla_get_u32(info->attrs[GRIM_A_NODE]),
			    info->extack);
	rtnl_unlock();
	return err;
}

/* Sockets. */

struct grim_nl_sock_ctx {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	u16 port;
	int err;
};

static int grim_nl_fill_sock(const struct grim_ep_info *si, void *arg)
{
	struct grim_nl_sock_ctx *ctx = arg;
	struct sk_buff *skb = ctx->skb;
	void *hdr;

	if (ctx->port && si->port != ctx->port)
		return 0;
	hdr = genlmsg_put(skb, NETLINK_CB(ctx->cb->skb).portid,
			  ctx->cb->nlh->nlmsg_seq, &grim_nl_family,
			  NLM_F_MULTI, GRIM_CMD_SOCKET_GET);
	if (!hdr)
		goto full;
	if (nla_put_u32(skb, GRIM_A_NODE,
			grim_ni_local_node(sock_net(skb->sk))) ||
	    nla_put_u16(skb, GRIM_A_SOCK_PORT, si->port) ||
	    nla_put_u16(skb, GRIM_A_SOCK_TYPE, si->type) ||
	    (si->peer_port &&
	     (nla_put_u32(skb, GRIM_A_SOCK_PEER_NODE, si->peer_node) ||
	      nla_put_u16(skb, GRIM_A_SOCK_PEER_PORT, si->peer_port))) ||
	    nla_put_u32(skb, GRIM_A_SOCK_RX_QUEUE, si->rx_queue) ||
	    nla_put_u32(skb, GRIM_A_SOCK_TX_QUEUE, si->tx_queue) ||
	    nla_put_u32(skb, GRIM_A_SOCK_RCVBUF, si->rcvbuf) ||
	    nla_put_u32(skb, GRIM_A_SOCK_SNDBUF, si->sndbuf) ||
	    nla_put_u32(skb, GRIM_A_SOCK_DROPS, si->drops) ||
	    nla_put_u64_64bit(skb, GRIM_A_SOCK_INODE, si->inode, GRIM_A_PAD) ||
	    nla_put_u32(skb, GRIM_A_SOCK_UID, si->uid)) {
		genlmsg_cancel(skb, hdr);
		goto full;
	}
	genlmsg_end(skb, hdr);
	return 0;
full:
	ctx->err = -EMSGSIZE;
	return 1;
}

static int grim_nl_socket_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct nlattr **attrs = grim_dump_attrs(cb);
	struct grim_nl_sock_ctx ctx = { .skb = skb, .cb = cb };
	long skip = cb->args[0];

	if (attrs && attrs[GRIM_A_SOCK_PORT])
		ctx.port = nla_get_u16(attrs[GRIM_A_SOCK_PORT]);
	cb->args[0] = grim_ep_walk(sock_net(skb->sk), skip,
				   grim_nl_fill_sock, &ctx);
	if (ctx.err && cb->args[0] == skip && !skb->len)
		return ctx.err;
	return skb->len;
}

/* Groups. */

struct grim_nl_group_ctx {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	struct grim_ni *ni;
	bool sent;
};

static int grim_nl_fill_group(const struct grim_mc_info *gi, void *arg)
{
	struct grim_nl_group_ctx *ctx = arg;
	struct sk_buff *skb = ctx->skb;
	u32 nchild = !!gi->child[0] + !!gi->child[1];
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(ctx->cb->skb).portid,
			  ctx->cb->nlh->nlmsg_seq, &grim_nl_family,
			  NLM_F_MULTI, GRIM_CMD_GROUP_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GRIM_A_IFINDEX, ctx->ni->dev->ifindex) ||
	    nla_put_u32(skb, GRIM_A_NODE, ctx->ni->node) ||
	    nla_put_u32(skb, GRIM_A_GROUP_ID, gi->id) ||
	    nla_put_u32(skb, GRIM_A_GROUP_ROOT, gi->root) ||
	    nla_put_u32(skb, GRIM_A_GROUP_TICKET, gi->ticket) ||
	    nla_put_u8(skb, GRIM_A_GROUP_IN_TREE, gi->in_tree) ||
	    nla_put_u32(skb, GRIM_A_GROUP_PARENT, gi->parent) ||
	    nla_put(skb, GRIM_A_GROUP_CHILDREN, nchild * sizeof(u32),
		    gi->child[0] ? gi->child : &gi->child[1]) ||
	    (gi->members &&
	     nla_put(skb, GRIM_A_GROUP_MEMBERS,
		     gi->nmembers * sizeof(u32), gi->members)) ||
	    nla_put_u32(skb, GRIM_A_GROUP_LOCAL, gi->local) ||
	    nla_put_u32(skb, GRIM_A_GROUP_QUEUED, gi->queued) ||
	    nla_put_u64_64bit(skb, GRIM_A_GROUP_RX, gi->rx, GRIM_A_PAD) ||
	    nla_put_u64_64bit(skb, GRIM_A_GROUP_DELIVERED, gi->delivered,
			      GRIM_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	ctx->sent = true;
	return 0;
}

/* cb->args[0]: NIs done; cb->args[1]: groups of the current NI done. */
static int grim_nl_group_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct grim_nl_group_ctx ctx = { .skb = skb, .cb = cb };
	u32 ifindex = grim_nl_dump_ifindex(cb);
	struct net *net = sock_net(skb->sk);
	long ni_idx = 0;
	int err = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ctx.ni, &grim_pernet(net)->nis, list) {
		if (ni_idx++ < cb->args[0])
			continue;
		if (!ifindex || ctx.ni->dev->ifindex == ifindex) {
			err = grim_mc_walk(ctx.ni, &cb->args[1],
					   grim_nl_fill_group, &ctx);
			if (err)
				break;
		}
		cb->args[0] = ni_idx;
		cb->args[1] = 0;
	}
	rcu_read_unlock();
	if (err && !ctx.sent)
		return err;
	return skb->len;
}

static const struct genl_ops grim_nl_ops[] = {
	{
		.cmd = GRIM_CMD_NODE_GET,
		.doit = grim_nl_ni_doit,
		.dumpit = grim_nl_ni_dumpit,
		.policy = grim_nl_ifindex_policy,
		.maxattr = ARRAY_SIZE(grim_nl_ifindex_policy) - 1,
	},
	{
		.cmd = GRIM_CMD_NODE_SET,
		.doit = grim_nl_node_set,
		.policy = grim_nl_node_set_policy,
		.maxattr = ARRAY_SIZE(grim_nl_node_set_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = GRIM_CMD_PEER_GET,
		.doit = grim_nl_peer_get,
		.dumpit = grim_nl_peer_dumpit,
		.policy = grim_nl_peer_policy,
		.maxattr = ARRAY_SIZE(grim_nl_peer_policy) - 1,
	},
	{
		.cmd = GRIM_CMD_PEER_ADD,
		.doit = grim_nl_peer_add,
		.policy = grim_nl_peer_add_policy,
		.maxattr = ARRAY_SIZE(grim_nl_peer_add_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = GRIM_CMD_PEER_DEL,
		.doit = grim_nl_peer_del,
		.policy = grim_nl_peer_policy,
		.maxattr = ARRAY_SIZE(grim_nl_peer_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = GRIM_CMD_LINK_GET,
		.doit = grim_nl_ni_doit,
		.dumpit = grim_nl_ni_dumpit,
		.policy = grim_nl_ifindex_policy,
		.maxattr = ARRAY_SIZE(grim_nl_ifindex_policy) - 1,
	},
	{
		.cmd = GRIM_CMD_KEY_SET,
		.doit = grim_nl_key_set,
		.policy = grim_nl_key_policy,
		.maxattr = ARRAY_SIZE(grim_nl_key_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = GRIM_CMD_KEY_DEL,
		.doit = grim_nl_key_del,
		.policy = grim_nl_key_policy,
		.maxattr = ARRAY_SIZE(grim_nl_key_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = GRIM_CMD_SOCKET_GET,
		.dumpit = grim_nl_socket_dumpit,
		.policy = grim_nl_socket_policy,
		.maxattr = ARRAY_SIZE(grim_nl_socket_policy) - 1,
	},
	{
		.cmd = GRIM_CMD_GROUP_GET,
		.dumpit = grim_nl_group_dumpit,
		.policy = grim_nl_ifindex_policy,
		.maxattr = ARRAY_SIZE(grim_nl_ifindex_policy) - 1,
	},
};

static struct genl_family grim_nl_family __ro_after_init = {
	.name = GRIM_GENL_NAME,
	.version = GRIM_GENL_VERSION,
	.maxattr = GRIM_A_MAX,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = grim_nl_ops,
	.n_ops = ARRAY_SIZE(grim_nl_ops),
	.mcgrps = grim_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(grim_nl_mcgrps),
};

/* Notifications to the "events" group. */

static bool grim_nl_listening(struct net *net)
{
	return genl_has_listeners(&grim_nl_family, net, GRIM_NL_MCGRP_EVENTS);
}

/* A peer changed state.  Any context; the peer lock is held. */
void grim_nl_peer_event(struct grim_ni *ni, struct grim_peer *peer)
{
	struct net *net = dev_net(ni->dev);
	struct sk_buff *skb;
	void *hdr;

	if (!grim_nl_listening(net))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &grim_nl_family, 0, GRIM_CMD_PEER_NTF);
	if (!hdr || grim_nl_fill_peer(skb, peer, false)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&grim_nl_family, net, skb, 0,
				GRIM_NL_MCGRP_EVENTS, GFP_ATOMIC);
}

/* An NI was added (@added) or is being removed.  RTNL held. */
void grim_nl_link_event(struct grim_ni *ni, bool added)
{
	struct net *net = dev_net(ni->dev);
	struct sk_buff *skb;

	if (!grim_nl_listening(net))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	if (grim_nl_send_ni(skb, ni, 0, 0, 0, added ? GRIM_CMD_LINK_NEW_NTF :
			    GRIM_CMD_LINK_DEL_NTF)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_multicast_netns(&grim_nl_family, net, skb, 0,
				GRIM_NL_MCGRP_EVENTS, GFP_KERNEL);
}

int __init grim_nl_init(void)
{
	return genl_register_family(&grim_nl_family);
}

void grim_nl_exit(void)
{
	genl_unregister_family(&grim_nl_family);
}
