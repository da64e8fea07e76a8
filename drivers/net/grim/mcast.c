// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI driver: groups, and multicast by NI recycling.
 *
 * A sender hands a group message to its NI once.  The NI sends it, as an
 * ordinary reliable message, to the root of the group's tree, on the
 * root's port GRIM_PORT_MC_ROOT.  The root stamps it with the group's
 * next ticket and passes it down the tree: every NI of the tree takes it
 * from its parent on port GRIM_PORT_MC, delivers it to the sockets of
 * its namespace that joined the group, and sends it on to at most two
 * children.  Every hop is the reliable transport, so a hop is
 * acknowledged once the next NI has queued the message, and a full NI
 * refuses it (NACK) and its parent tries again.
 *
 * The tree: the root, then the member NIs in ascending node id order,
 * laid out as a binary heap (the children of entry i are 2i + 1 and
 * 2i + 2), so every parent has a smaller id than its children and one
 * queue per NI cannot deadlock (the seed's rule).  The root of every
 * group of a link is the link's leader: the smallest node id among the
 * NI and its peers that are up.  It keeps the groups' members (NIs send
 * it JOIN and LEAVE) and their ticket counters.
 *
 * Membership changes travel in-band: the root sends a TREE message, with
 * the whole new list, through the new tree, as the next ticket of the
 * group; an NI applies it to the messages that follow it.  An NI takes
 * only the ticket it expects next from the tree: one further on (a new
 * parent's, overtaking what the old parent still holds) is refused and
 * comes again; one it has taken already is acknowledged and dropped.  So
 * every NI sees every message of the group once, in ticket order.  When
 * a member NI goes down, the root builds the tree without it.  The root
 * keeps every message it stamped until each member NI has it (members
 * report what they have, HAVE); an NI whose parent went down, or that
 * has waited a hello for a ticket, asks the root for what it lacks
 * (REPAIR), and the root sends it again, straight from its log.  So a
 * member that goes down loses nothing for the others.
 *
 * Locking: mc->lock (BH) guards the groups; the endpoints' ops run under
 * the NI's peer and stream locks and only queue.  The work (process
 * context, never two at once) forwards, delivers and sends.
 */
#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "grim.h"
#include "trace.h"

/* Tree messages (port GRIM_PORT_MC): the handler's low byte says which,
 * its high byte holds flags; the arguments carry the group, the ticket,
 * and the root: its node id and its term for the group (drawn when the
 * root's NI first knows the group, so that a root that restarted, or
 * forgot the group and knows it again, is a new one to the members).  A DATA message's payload
 * starts with struct grim_mc_data, an injection's with struct
 * grim_mc_inj (of the same size: the root turns one into the other in
 * place); a TREE message's payload is struct grim_mc_tree, then the
 * node ids of the tree (__be32), the root first, ascending.
 */
enum {
	GRIM_MC_DATA = 1,
	GRIM_MC_TREE = 2,
	GRIM_MC_JOIN = 3,	/* to the root, from its GRIM_PORT_MC_ROOT */
	GRIM_MC_LEAVE = 4,
	GRIM_MC_SKIP = 5,	/* parent to child: the tickets before this
				 * one will not come from me (I skipped them)
				 */
	GRIM_MC_RELAY = 6,	/* to the root, from an NI the sender took
				 * for the root: a DATA message to ticket
				 */
	GRIM_MC_HAVE = 7,	/* to the root: I have every ticket before
				 * arg1
				 */
	GRIM_MC_REPAIR = 8,	/* to the root: ... send me those from arg1
				 * on again
				 */
};

#define GRIM_MC_KIND(h)		((h) & 0xff)
#define GRIM_MC_FLAGS(h)	((h) >> 8)
/* TREE flags */
#define GRIM_MC_F_RESYNC	0x01	/* the tree without a member that
					 * went down
					 */
#define GRIM_MC_F_JOIN		0x02	/* the answer to @joiner's join */
#define GRIM_MC_F_SINCE		0x04	/* @joiner left at ticket @since: it
					 * takes this tree once it has every
					 * ticket before that one
					 */
#define GRIM_MC_F_FORCE		0x08	/* @joiner takes it as it is (it was
					 * dropped as down)
					 */

struct grim_mc_data {
	__be32	arg[4];		/* the sender's active-message arguments */
	__be32	origin;		/* the sender's node */
	__be16	handler;	/* ... its handler */
	__be16	port;		/* ... and its port */
};

struct grim_mc_inj {
	__be32	group;
	__be32	reserved[5];
};

struct grim_mc_tree {
	__be32	joiner;		/* with GRIM_MC_F_JOIN */
	__be32	since;		/* with GRIM_MC_F_SINCE */
};

/* Whether @cb is one of the group engines' own messages (a join or a
 * leave, a tree, a skip, a report): those count as mc_ctl_tx and
 * mc_ctl_rx, not as the endpoints' messages.
 */
bool grim_mc_ctl_msg(const struct grim_msg_cb *cb)
{
	u32 kind = GRIM_MC_KIND(cb->handler);

	return cb->src_port >= GRIM_PORT_LMC_ROOT &&
	       cb->src_port <= GRIM_PORT_MC &&
	       kind != GRIM_MC_DATA && kind != GRIM_MC_RELAY;
}

static_assert(sizeof(struct grim_mc_data) == GRIM_GROUP_HLEN);
static_assert(sizeof(struct grim_mc_inj) == GRIM_GROUP_HLEN);

/* How the endpoints' admit() classed a tree message, for deliver(),
 * and whether the NI skipped tickets to take it, for the work.
 */
#define GRIM_MC_CB_NEXT		0x0100
#define GRIM_MC_CB_SKIPPED	0x0200
#define GRIM_MC_CB_BADPORT	0x0400	/* on the other group kind's ports */

#define GRIM_MC_MEM		(8 << 20)	/* bytes an NI holds for groups */
#define GRIM_MC_FWD_MAX		1024	/* copies in flight to children */
#define GRIM_MC_MAX_GROUPS	4096	/* groups an NI knows */
#define GRIM_MC_RETRY		(HZ / 50)	/* a member socket was full */
#define GRIM_MC_CTLQ_MAX	1024	/* joins, leaves, relays waiting */
#define GRIM_MC_LOG_MEM		(4 << 20)	/* bytes the root keeps */
/* Of the NI's room, copies in flight and log above, what only the
 * link's own group (GRIM_GROUP_LINK) takes: the sockets' groups never
 * take the last of them.
 */
#define GRIM_MC_LINK_MEM	SZ_1M
#define GRIM_MC_LINK_FWD	128
#define GRIM_MC_LINK_LOG	SZ_512K
#define GRIM_MC_HAVE_EVERY	32	/* tickets between two HAVEs */
#define GRIM_MC_REPAIR_MAX	256	/* messages sent again per REPAIR */

static bool grim_mc_group_ok(u32 group)
{
	return (group && group <= GRIM_GROUP_MAX) || group == GRIM_GROUP_ALL ||
	       group == GRIM_GROUP_LINK;
}

/* The link's own group: every NI is in it (IP's endpoint joins it), its
 * messages take ports and streams of their own, and it has room that
 * the sockets' groups do not take.
 */
static bool grim_mc_is_link(u32 group)
{
	return group == GRIM_GROUP_LINK;
}

/* A member, as its root follows it. */
struct grim_mc_member {
	u32 have;		/* the ticket it waits for, as it last said */
	unsigned long repair_at;	/* jiffies: its last REPAIR answered */
};

/* A member that left, as its root remembers it. */
struct grim_mc_left {
	u32 node;
	u32 ticket;		/* of the tree without it */
	bool down;		/* dropped as down, not left */
};

struct grim_mc_group {
	struct hlist_node hnode;	/* mc->groups */
	struct list_head busy_link;	/* on mc->busy while @q has work */
	u32 id;
	/* What the NI takes from the tree: the root's tickets, @expect
	 * next.
	 */
	bool known;
	bool joined;		/* the NI last told the root it is in */
	u32 root;
	u32 term;
	u32 expect;
	u32 from;		/* our parent in the last TREE taken */
	/* The tree as applied to the messages processed so far. */
	bool in_tree;		/* we deliver to our members */
	u32 parent;		/* 0: none (the root, or not in it) */
	u32 child[2];		/* 0: none */
	/* Since when (jiffies) the NI refuses the tickets past @expect,
	 * waiting for it (0: it does not).
	 */
	unsigned long stalled;
	u32 stalled_at;
	/* At the root: the member NIs (ascending) and what it knows of
	 * each (@mem, in the same order), those that left, the next
	 * ticket, and the messages some member may still lack, in ticket
	 * order.
	 */
	u32 ndir;
	u32 *dir;
	struct grim_mc_member *mem;
	u32 nleft;
	struct grim_mc_left *left;
	u32 next_ticket;
	struct sk_buff_head log;
	/* At a member: the ticket last reported to the root, when, and
	 * when the NI last asked it for a repair (jiffies).
	 */
	u32 reported;
	unsigned long reported_at;
	unsigned long repair_at;
	/* Taken, in ticket order: to forward and deliver. */
	struct sk_buff_head q;
	/* Our term as the group's root, and when (jiffies) the NI last
	 * took one of its messages, stamped one, or saw a member come or
	 * go: the sweep forgets a group idle long enough.
	 */
	u32 own_term;
	unsigned long active;
	u64 rx;			/* messages taken (or stamped) */
	u64 delivered;		/* copies handed to local sockets */
};

static struct grim_mc *grim_mc_of_ep(struct grim_ep *ep)
{
	return container_of(ep, struct grim_mc_ep, ep)->mc;
}

static struct grim_ni *grim_mc_ni(struct grim_mc *mc)
{
	return container_of(mc, struct grim_ni, mc);
}

/* Run the work now, or @delay from now if it is not queued already: a
 * kick never puts off a run queued sooner.
 */
static void grim_mc_kick(struct grim_mc *mc, unsigned long delay)
{
	if (!READ_ONCE(mc->up))
		return;
	if (delay)
		queue_delayed_work(system_wq, &mc->work, delay);
	else
		mod_delayed_work(system_wq, &mc->work, 0);
}

/* A message the NI passes on (a copy for a child, a message relayed to
 * the root) leaves it: acknowledged, or failed.
 */
static void grim_mc_fwd_done(struct sk_buff *skb)
{
	struct grim_ni *ni = netdev_priv(skb->dev);

	atomic_dec(&ni->mc.fwd);
}

/* mc->lock held. */
static struct grim_mc_group *grim_mc_find(struct grim_mc *mc, u32 id)
{
	struct grim_mc_group *g;

	hlist_for_each_entry(g, &mc->groups[hash_32(id, GRIM_MC_HASH_BITS)],
			     hnode)
		if (g->id == id)
			return g;
	return NULL;
}

static struct grim_mc_group *grim_mc_get(struct grim_mc *mc, u32 id)
{
	struct grim_mc_group *g = grim_mc_find(mc, id);
	bool link = grim_mc_is_link(id);

	/* The link's own group always has room. */
	if (g || (!link && mc->ngroups >= GRIM_MC_MAX_GROUPS))
		return g;
	g = kzalloc(sizeof(*g), GFP_ATOMIC);
	if (!g)
		return NULL;
	g->id = id;
	g->own_term = get_random_u32() ?: 1;
	g->active = jiffies;
	INIT_LIST_HEAD(&g->busy_link);
	skb_queue_head_init(&g->q);
	skb_queue_head_init(&g->log);
	hlist_add_head(&g->hnode,
		       &mc->groups[hash_32(id, GRIM_MC_HASH_BITS)]);
	mc->ngroups += !link;
	return g;
}

/* At the root: forget what every member of @g has (@all: everything).
 * mc->lock held.
 */
static void grim_mc_trim(struct grim_mc *mc, struct grim_mc_group *g,
			 bool all)
{
	struct grim_ni *ni = grim_mc_ni(mc);
	u32 floor = g->next_ticket, i;
	struct sk_buff *skb;

	for (i = 0; !all && i < g->ndir; i++)
		if (g->dir[i] != ni->node &&
		    grim_seq_before(g->mem[i].have, floor))
			floor = g->mem[i].have;
	while ((skb = skb_peek(&g->log)) &&
	       (all || grim_seq_before(GRIM_MSG_CB(skb)->arg[1], floor))) {
		__skb_unlink(skb, &g->log);
		mc->logged -= skb->truesize;
		kfree_skb(skb);
	}
}

static void grim_mc_free_group(struct grim_mc *mc, struct grim_mc_group *g)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&g->q))) {
		mc->held -= skb->len;
		kfree_skb(skb);
	}
	grim_mc_trim(mc, g, true);
	list_del(&g->busy_link);
	hlist_del(&g->hnode);
	mc->ngroups -= !grim_mc_is_link(g->id);
	kfree(g->dir);
	kfree(g->mem);
	kfree(g->left);
	kfree(g);
}

/* Queue @skb (taken, in ticket order) for the work. */
static void grim_mc_enqueue(struct grim_mc *mc, struct grim_mc_group *g,
			    struct sk_buff *skb)
{
	__skb_queue_tail(&g->q, skb);
	if (list_empty(&g->busy_link))
		list_add_tail(&g->busy_link, &mc->busy);
}

/* Local members: the namespace's table of joined endpoints.  A socket
 * is a member through every link of its namespace; a link's own
 * endpoint (IP's) through its link only.
 */

static struct hlist_head *grim_sub_bucket(struct grim_net *gn, u32 group)
{
	return &gn->mc_subs[hash_32(group, GRIM_SUB_HASH_BITS)];
}

/* Whether @sub is a member through the link @dev. */
static bool grim_mc_sub_on(const struct grim_mc_sub *sub,
			   const struct net_device *dev)
{
	return !sub->ep->dev || sub->ep->dev == dev;
}

/* Whether an endpoint of @gn is in @group through the link @dev: its NI
 * is to be in the group's tree.  RCU or gn->mc_lock held.
 */
static bool grim_mc_has_local(struct grim_net *gn,
			      const struct net_device *dev, u32 group)
{
	struct grim_mc_sub *sub;

	hlist_for_each_entry_rcu(sub, grim_sub_bucket(gn, group), hnode,
				 lockdep_is_held(&gn->mc_lock))
		if (sub->group == group && grim_mc_sub_on(sub, dev))
			return true;
	return false;
}

/* Make every running NI of @net (@dev: that link's only) know @group,
 * for a member of its namespace: -ENOBUFS when one knows
 * GRIM_MC_MAX_GROUPS groups already, -ENOMEM without memory.  An NI
 * that is not in the group yet, and not the root, is out of its tree
 * until the root's answer comes (it may still hold a tree from before it
 * left, which the tree without it never corrected): a joining socket
 * waits for that.  The sweep leaves the group alone while it has a
 * member.
 */
static int grim_mc_hold(struct net *net, u32 group,
			const struct net_device *dev)
{
	struct grim_mc_group *g;
	struct grim_ni *ni;
	int err = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (!READ_ONCE(ni->mc.up) || (dev && ni->dev != dev))
			continue;
		spin_lock_bh(&ni->mc.lock);
		g = grim_mc_get(&ni->mc, group);
		if (g) {
			if (!g->joined && ni->mc.leader != ni->node)
				g->in_tree = false;
			g->active = jiffies;
		} else {
			err = ni->mc.ngroups >= GRIM_MC_MAX_GROUPS ? -ENOBUFS :
								     -ENOMEM;
		}
		spin_unlock_bh(&ni->mc.lock);
		if (err)
			break;
	}
	rcu_read_unlock();
	return err;
}

/* Tell every running NI of @net (@dev: that link's only) that a member
 * of its namespace joined or left @group: each one that is in the group
 * now and was not, or the reverse, tells its root.
 */
static void grim_mc_local_event(struct net *net, u32 group,
				const struct net_device *dev)
{
	struct grim_ni *ni;
	struct sk_buff *skb;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (!READ_ONCE(ni->mc.up) || (dev && ni->dev != dev))
			continue;
		skb = alloc_skb(0, GFP_ATOMIC);
		if (!skb) {
			/* Told again when the root changes. */
			grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
			continue;
		}
		memset(skb->cb, 0, sizeof(struct grim_msg_cb));
		GRIM_MSG_CB(skb)->node = ni->node;
		GRIM_MSG_CB(skb)->handler = GRIM_MC_JOIN;
		GRIM_MSG_CB(skb)->arg[0] = group;
		GRIM_MSG_CB(skb)->arg[1] = true;	/* an event */
		skb_queue_tail(&ni->mc.ctlq, skb);
		grim_mc_kick(&ni->mc, 0);
	}
	rcu_read_unlock();
}

/* Whether a running NI of @net is in @group's tree. */
static bool grim_mc_joined(struct net *net, u32 group)
{
	struct grim_mc_group *g;
	bool any = false, in = false;
	struct grim_ni *ni;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (!READ_ONCE(ni->mc.up))
			continue;
		any = true;
		spin_lock_bh(&ni->mc.lock);
		g = grim_mc_find(&ni->mc, group);
		in = g && g->in_tree;
		spin_unlock_bh(&ni->mc.lock);
		if (in)
			break;
	}
	rcu_read_unlock();
	return in || !any;
}

/* gn->mc_lock held. */
static void grim_mc_sub_del(struct grim_net *gn, struct grim_mc_sub *sub)
{
	hlist_del_rcu(&sub->hnode);
	list_del(&sub->ep_link);
	sub->ep->ngroups--;
	kfree_rcu(sub, rcu);
}

int grim_ep_join(struct grim_ep *ep, u32 group)
{
	struct net *net = read_pnet(&ep->net);
	struct grim_net *gn = grim_pernet(net);
	struct grim_mc_sub *sub, *s;
	int err;

	/* The link's own group is for a link's endpoints, and only it. */
	if (!grim_mc_group_ok(group) || grim_mc_is_link(group) != !!ep->dev)
		return -EINVAL;
	if (!READ_ONCE(ep->port)) {
		err = grim_ep_bind(ep, 0);
		if (err && err != -EINVAL)	/* -EINVAL: bound meanwhile */
			return err;
	}
	sub = kzalloc(sizeof(*sub), GFP_KERNEL);
	if (!sub)
		return -ENOMEM;
	sub->group = group;
	sub->ep = ep;

	spin_lock_bh(&gn->mc_lock);
	list_for_each_entry(s, &ep->groups, ep_link) {
		if (s->group == group) {
			err = -EADDRINUSE;
			goto unlock;
		}
	}
	if (ep->ngroups >= GRIM_GROUPS_PER_SOCKET) {
		err = -ENOBUFS;
		goto unlock;
	}
	list_add_tail(&sub->ep_link, &ep->groups);
	ep->ngroups++;
	hlist_add_head_rcu(&sub->hnode, grim_sub_bucket(gn, group));
	spin_unlock_bh(&gn->mc_lock);

	err = grim_mc_hold(net, group, ep->dev);
	if (err) {
		/* A root told of this join meanwhile is told it left. */
		spin_lock_bh(&gn->mc_lock);
		grim_mc_sub_del(gn, sub);
		spin_unlock_bh(&gn->mc_lock);
		grim_mc_local_event(net, group, ep->dev);
		return err;
	}
	grim_mc_local_event(net, group, ep->dev);
	/* A link's endpoint joins as its link comes up: it does not wait. */
	if (!ep->dev)
		wait_event_interruptible_timeout(gn->mc_wait,
						 grim_mc_joined(net, group),
						 msecs_to_jiffies(GRIM_JOIN_WAIT_MS));
	return 0;

unlock:
	spin_unlock_bh(&gn->mc_lock);
	kfree(sub);
	return err;
}
EXPORT_SYMBOL_GPL(grim_ep_join);

int grim_ep_leave(struct grim_ep *ep, u32 group)
{
	struct net *net = read_pnet(&ep->net);
	struct grim_net *gn = grim_pernet(net);
	struct grim_mc_sub *sub;
	bool found = false;

	spin_lock_bh(&gn->mc_lock);
	list_for_each_entry(sub, &ep->groups, ep_link) {
		if (sub->group == group) {
			found = true;
			grim_mc_sub_del(gn, sub);
			break;
		}
	}
	spin_unlock_bh(&gn->mc_lock);
	if (!found)
		return -EADDRNOTAVAIL;
	grim_mc_local_event(net, group, ep->dev);
	return 0;
}
EXPORT_SYMBOL_GPL(grim_ep_leave);

/* The endpoint is unbound: it leaves every group. */
void grim_ep_leave_all(struct grim_ep *ep)
{
	struct net *net = read_pnet(&ep->net);
	struct grim_net *gn = grim_pernet(net);
	struct grim_mc_sub *sub;
	u32 group;

	for (;;) {
		spin_lock_bh(&gn->mc_lock);
		sub = list_first_entry_or_null(&ep->groups, struct grim_mc_sub,
					       ep_link);
		if (!sub) {
			spin_unlock_bh(&gn->mc_lock);
			return;
		}
		group = sub->group;
		grim_mc_sub_del(gn, sub);
		spin_unlock_bh(&gn->mc_lock);
		grim_mc_local_event(net, group, ep->dev);
	}
}

void grim_mc_net_init(struct grim_net *gn)
{
	int i;

	spin_lock_init(&gn->mc_lock);
	init_waitqueue_head(&gn->mc_wait);
	for (i = 0; i < ARRAY_SIZE(gn->mc_subs); i++)
		INIT_HLIST_HEAD(&gn->mc_subs[i]);
}

/* Sending to a group: once, to the root. */

int grim_ni_send_group(struct grim_ep *ep, struct sk_buff *skb, u32 group,
		       gfp_t gfp)
{
	struct net *net = read_pnet(&ep->net);
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct grim_mc_inj *inj;
	struct grim_ni *ni;
	u32 leader = 0;
	int err;

	if (!grim_mc_group_ok(group) || grim_mc_is_link(group) != !!ep->dev) {
		err = -EINVAL;
		goto free;
	}
	if (skb->len > GRIM_GROUP_MAX_PAYLOAD) {
		err = -EMSGSIZE;
		goto free;
	}
	/* A link's endpoint sends through its link. */
	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (READ_ONCE(ni->mc.up) && (!ep->dev || ni->dev == ep->dev)) {
			leader = READ_ONCE(ni->mc.leader);
			grim_count(ni, NULL, GRIM_STAT_MC_INJECTED);
			break;
		}
	}
	rcu_read_unlock();
	if (!leader) {
		err = -ENETUNREACH;
		goto free;
	}
	if (skb_cow_head(skb, GRIM_GROUP_HLEN)) {
		err = -ENOBUFS;
		goto free;
	}
	inj = skb_push(skb, sizeof(*inj));
	memset(inj, 0, sizeof(*inj));
	inj->group = htonl(group);
	cb->node = leader;
	cb->dst_port = grim_mc_is_link(group) ? GRIM_PORT_LMC_ROOT :
						GRIM_PORT_MC_ROOT;
	cb->flags |= GRIM_MSG_F_GROUP;
	cb->group = group;
	cb->ticket = 0;
	return grim_ni_send(ep, skb, gfp);

free:
	kfree_skb(skb);
	return err;
}
EXPORT_SYMBOL_GPL(grim_ni_send_group);

/* The NI's two endpoints. */

static bool grim_mc_ep_get(struct grim_ep *ep)
{
	return READ_ONCE(grim_mc_of_ep(ep)->up);
}

static void grim_mc_ep_put(struct grim_ep *ep)
{
}

/* Room for @len more bytes of a group (@link: the link's own), and
 * for copies to the children.  mc->lock.
 */
static bool grim_mc_room(struct grim_mc *mc, unsigned int len, bool link)
{
	if (atomic_read(&mc->fwd) >=
	    GRIM_MC_FWD_MAX - (link ? 0 : GRIM_MC_LINK_FWD))
		return false;
	return !mc->held ||
	       mc->held + len <= GRIM_MC_MEM - (link ? 0 : GRIM_MC_LINK_MEM);
}

/* Whether the root's log has room for a message of a group (@link: the
 * link's own).  mc->lock.
 */
static bool grim_mc_log_room(struct grim_mc *mc, bool link)
{
	return mc->logged < GRIM_MC_LOG_MEM - (link ? 0 : GRIM_MC_LINK_LOG);
}

/* The class of a tree message for this NI. */
enum {
	GRIM_MC_NEXT,		/* take it: the ticket the NI waits for */
	GRIM_MC_OLD,		/* drop it: taken already, or of a root the
				 * NI no longer follows
				 */
	GRIM_MC_LATER,		/* refuse it for now: tickets before it must
				 * come first, or its root is not yet known
				 */
};

/* An NI refused the tickets past the one it waits for, from any parent,
 * for this long: it takes the next one that comes, and counts what it
 * skipped.  The root sends what a member lacks again, a hello after it
 * asks; this is the last resort, for a root that cannot (it restarted
 * faster than its peers saw it down, or had no memory to keep it).
 */
static unsigned long grim_mc_stall_max(struct grim_ni *ni)
{
	return msecs_to_jiffies(2 * READ_ONCE(ni->dead_ms));
}

/* Class tree message @cb (with @t, the head of a TREE's payload) for
 * group @g (NULL: unknown).  mc->lock held.
 */
static int grim_mc_class(struct grim_mc *mc, struct grim_mc_group *g,
			 const struct grim_msg_cb *cb,
			 const struct grim_mc_tree *t)
{
	u32 kind = GRIM_MC_KIND(cb->handler), ticket = cb->arg[1];
	u32 flags = GRIM_MC_FLAGS(cb->handler);
	struct grim_ni *ni = grim_mc_ni(mc);

	if (!g || !g->known || g->root != cb->arg[3] ||
	    g->term != cb->arg[2]) {
		/* A new root's first tree, once we take it for the root. */
		if (kind != GRIM_MC_TREE)
			return GRIM_MC_OLD;
		return cb->arg[3] == mc->leader ? GRIM_MC_NEXT : GRIM_MC_LATER;
	}
	if (kind == GRIM_MC_SKIP)
		return grim_seq_after(ticket, g->expect) ? GRIM_MC_NEXT :
							    GRIM_MC_OLD;
	if (ticket == g->expect)
		return GRIM_MC_NEXT;
	if (grim_seq_before(ticket, g->expect))
		return GRIM_MC_OLD;
	/* Past a gap.  Our join: past the tickets sent while we were out
	 * of the tree, once we have those from before we left.
	 */
	if (kind == GRIM_MC_TREE && (flags & GRIM_MC_F_JOIN) &&
	    ntohl(t->joiner) == ni->node &&
	    ((flags & GRIM_MC_F_FORCE) ||
	     ((flags & GRIM_MC_F_SINCE) &&
	      !grim_seq_before(g->expect, ntohl(t->since)))))
		return GRIM_MC_NEXT;
	if (!g->stalled || g->stalled_at != g->expect) {
		g->stalled = jiffies ?: 1;
		g->stalled_at = g->expect;
	} else if (time_after(jiffies, g->stalled + grim_mc_stall_max(ni))) {
		return GRIM_MC_NEXT;
	}
	return GRIM_MC_LATER;
}

/* The head of a TREE message whose data starts at @skb's. */
static void grim_mc_tree_head(const struct grim_msg_cb *cb,
			      const struct sk_buff *skb,
			      struct grim_mc_tree *t)
{
	memset(t, 0, sizeof(*t));
	if (GRIM_MC_KIND(cb->handler) == GRIM_MC_TREE &&
	    skb_copy_bits(skb, 0, t, sizeof(*t)))
		memset(t, 0, sizeof(*t));
}

/* A message on the link group's ports (mep->link) must be the link
 * group's, and one on the others a sockets' group's; the engine then
 * sees the ports it knows, GRIM_PORT_MC and GRIM_PORT_MC_ROOT, whichever
 * pair the message came on.  Returns false for one on the wrong pair.
 */
static bool grim_mc_port_in(struct grim_ep *ep, struct grim_msg_cb *cb,
			    const struct sk_buff *first, unsigned int len)
{
	bool link = container_of(ep, struct grim_mc_ep, ep)->link;
	const u16 shift = GRIM_PORT_MC - GRIM_PORT_LMC;
	struct grim_mc_inj inj;
	u32 group = cb->arg[0];

	switch (cb->src_port) {
	case GRIM_PORT_LMC:
	case GRIM_PORT_LMC_ROOT:
		if (!link)
			return false;
		cb->src_port += shift;
		break;
	case GRIM_PORT_MC:
	case GRIM_PORT_MC_ROOT:
		if (link)
			return false;
		break;
	default:
		/* A sender's: the group heads its payload. */
		if (len < sizeof(inj) ||
		    skb_copy_bits(first, 0, &inj, sizeof(inj)))
			return false;
		group = ntohl(inj.group);
	}
	if (link)
		cb->dst_port += shift;
	return grim_mc_is_link(group) == link;
}

/* A tree message comes from a parent's GRIM_PORT_MC, or, sent again,
 * from the root's GRIM_PORT_MC_ROOT.
 */
static bool grim_mc_tree_src(const struct grim_msg_cb *cb)
{
	return cb->src_port == GRIM_PORT_MC ||
	       (cb->src_port == GRIM_PORT_MC_ROOT && cb->node == cb->arg[3]);
}

static bool grim_mc_tree_admit(struct grim_ep *ep, struct grim_msg_cb *cb,
			       const struct sk_buff *first, unsigned int len)
{
	struct grim_mc *mc = grim_mc_of_ep(ep);
	struct grim_mc_tree t;
	int class;

	if (!grim_mc_port_in(ep, cb, first, len)) {
		cb->src_port = 0;	/* not a tree's */
		cb->flags |= GRIM_MC_CB_BADPORT;
	}
	if (!grim_mc_tree_src(cb) || !grim_mc_group_ok(cb->arg[0]) ||
	    (GRIM_MC_KIND(cb->handler) != GRIM_MC_DATA &&
	     GRIM_MC_KIND(cb->handler) != GRIM_MC_TREE &&
	     GRIM_MC_KIND(cb->handler) != GRIM_MC_SKIP)) {
		/* Dropped by deliver(), which gives back what it holds. */
		spin_lock_bh(&mc->lock);
		mc->held += len;
		spin_unlock_bh(&mc->lock);
		return true;
	}
	grim_mc_tree_head(cb, first, &t);
	spin_lock_bh(&mc->lock);
	class = grim_mc_class(mc, grim_mc_find(mc, cb->arg[0]), cb, &t);
	if (class == GRIM_MC_LATER ||
	    !grim_mc_room(mc, len, grim_mc_is_link(cb->arg[0]))) {
		spin_unlock_bh(&mc->lock);
		grim_count(grim_mc_ni(mc), NULL, GRIM_STAT_MC_REFUSED);
		return false;
	}
	if (class == GRIM_MC_NEXT)
		cb->flags |= GRIM_MC_CB_NEXT;
	mc->held += len;
	spin_unlock_bh(&mc->lock);
	return true;
}

static void grim_mc_unreserve(struct grim_ep *ep, unsigned int len)
{
	struct grim_mc *mc = grim_mc_of_ep(ep);

	spin_lock_bh(&mc->lock);
	mc->held -= len;
	spin_unlock_bh(&mc->lock);
}

/* The parent of the NI in the tree TREE message @skb carries; 0 if the
 * NI is not in it (or is its root).
 */
static u32 grim_mc_tree_parent(struct grim_ni *ni, const struct sk_buff *skb)
{
	const unsigned int off = sizeof(struct grim_mc_tree);
	unsigned int n, i;
	__be32 id;

	if (skb->len < off)
		return 0;
	n = min_t(unsigned int, (skb->len - off) / sizeof(id),
		  GRIM_MAX_PEERS + 1);
	for (i = 1; i < n; i++) {
		if (skb_copy_bits(skb, off + i * sizeof(id), &id, sizeof(id)) ||
		    ntohl(id) > ni->node)
			return 0;
		if (ntohl(id) != ni->node)
			continue;
		if (skb_copy_bits(skb, off + (i - 1) / 2 * sizeof(id), &id,
				  sizeof(id)))
			return 0;
		return ntohl(id);
	}
	return 0;
}

/* Whether tree message @skb, the next one of @g, comes from the NI that
 * passes @g's messages to us: DATA and SKIP from our parent in the last
 * TREE taken, a TREE from our parent in the tree it carries (it travels
 * down that one).  The root sends what a member lacks from its own port
 * (grim_mc_tree_src()), and the last resort takes what comes.  mc->lock
 * held.
 */
static bool grim_mc_from_parent(struct grim_ni *ni, struct grim_mc_group *g,
				const struct sk_buff *skb)
{
	const struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	u32 parent = 0;

	if (cb->src_port == GRIM_PORT_MC_ROOT ||
	    (g->stalled &&
	     time_after(jiffies, g->stalled + grim_mc_stall_max(ni))))
		return true;
	if (GRIM_MC_KIND(cb->handler) == GRIM_MC_TREE)
		parent = grim_mc_tree_parent(ni, skb);
	if (!parent && g->known && g->root == cb->arg[3])
		parent = g->from;
	return parent && cb->node == parent;
}

static void grim_mc_tree_deliver(struct grim_ep *ep, struct sk_buff *skb,
				 unsigned int reserved)
{
	struct grim_mc *mc = grim_mc_of_ep(ep);
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct grim_ni *ni = grim_mc_ni(mc);
	enum grim_stat why = GRIM_STAT_MC_DUPS;
	struct grim_mc_group *g;
	struct grim_mc_tree t;

	grim_mc_tree_head(cb, skb, &t);
	spin_lock_bh(&mc->lock);
	mc->held -= reserved;
	if (!(cb->flags & GRIM_MC_CB_NEXT)) {
		g = grim_mc_find(mc, cb->arg[0]);
		if (cb->flags & GRIM_MC_CB_BADPORT)
			why = GRIM_STAT_DROP_MSG;
		else if (!grim_mc_tree_src(cb) || !g || g->root != cb->arg[3])
			why = GRIM_STAT_MC_STALE;
		goto drop;
	}
	g = grim_mc_get(mc, cb->arg[0]);
	if (!g) {
		why = GRIM_STAT_DROP_NOMEM;
		goto drop;
	}
	/* Classed again: another copy of it may have come first. */
	if (grim_mc_class(mc, g, cb, &t) != GRIM_MC_NEXT)
		goto drop;
	if (!grim_mc_from_parent(ni, g, skb)) {
		why = GRIM_STAT_MC_NOT_PARENT;
		goto drop;
	}
	cb->flags &= ~GRIM_MC_CB_NEXT;
	if (g->known && g->root == cb->arg[3] && g->term == cb->arg[2] &&
	    cb->arg[1] != g->expect) {
		/* Our children would wait for these: they are told. */
		cb->flags |= GRIM_MC_CB_SKIPPED;
		grim_count_add(ni, NULL, GRIM_STAT_MC_SKIPPED,
			       cb->arg[1] - g->expect);
	}
	g->known = true;
	g->root = cb->arg[3];
	g->term = cb->arg[2];
	g->expect = cb->arg[1] +
		    (GRIM_MC_KIND(cb->handler) != GRIM_MC_SKIP);
	if (GRIM_MC_KIND(cb->handler) == GRIM_MC_TREE)
		g->from = grim_mc_tree_parent(ni, skb);
	g->stalled = 0;
	g->active = jiffies;
	mc->held += skb->len;
	grim_mc_enqueue(mc, g, skb);
	spin_unlock_bh(&mc->lock);
	grim_mc_kick(mc, 0);
	return;

drop:
	spin_unlock_bh(&mc->lock);
	grim_count(ni, NULL, why);
	kfree_skb(skb);
}

/* At the root: injections from senders, and joins and leaves from NIs. */
static bool grim_mc_root_admit(struct grim_ep *ep, struct grim_msg_cb *cb,
			       const struct sk_buff *first, unsigned int len)
{
	bool link = container_of(ep, struct grim_mc_ep, ep)->link;
	struct grim_mc *mc = grim_mc_of_ep(ep);
	bool ok;

	if (!grim_mc_port_in(ep, cb, first, len)) {
		/* Dropped by deliver(), which gives back what it holds. */
		cb->src_port = GRIM_PORT_MC_ROOT;
		cb->handler = 0;
	}
	spin_lock_bh(&mc->lock);
	/* Joins, leaves and reports hold no payload: only their number is
	 * bounded.
	 */
	if (skb_queue_len(&mc->ctlq) >= GRIM_MC_CTLQ_MAX)
		ok = false;
	else if (cb->src_port != GRIM_PORT_MC_ROOT)
		/* A sender's message to ticket: room for it, and to keep
		 * it.
		 */
		ok = grim_mc_room(mc, len, link) && grim_mc_log_room(mc, link);
	else if (cb->handler == GRIM_MC_RELAY)
		/* Relayed, on the stream the NI's reports take too: never
		 * held back by a full log, which those reports empty.
		 */
		ok = grim_mc_room(mc, len, link);
	else
		ok = true;
	if (ok)
		mc->held += len;
	spin_unlock_bh(&mc->lock);
	if (!ok)
		grim_count(grim_mc_ni(mc), NULL, GRIM_STAT_MC_REFUSED);
	return ok;
}

/* At the root: @cb's message is the next of @g, stamped with its ticket
 * and the root's node id and term; the root takes it as a member would.
 * mc->lock held.
 */
static void grim_mc_stamp(struct grim_ni *ni, struct grim_mc_group *g,
			  struct grim_msg_cb *cb)
{
	cb->arg[0] = g->id;
	cb->arg[1] = g->next_ticket++;
	cb->arg[2] = g->own_term;
	cb->arg[3] = ni->node;
	g->known = true;
	g->root = ni->node;
	g->term = g->own_term;
	g->expect = cb->arg[1] + 1;
	g->active = jiffies;
}

/* A message taken in frames chained under a head of the receiver's
 * (a frag_list) is sent on from single pages: the NI cuts frames from a
 * message's head and page fragments.  NULL if there is no memory.
 */
static struct sk_buff *grim_mc_flatten(struct sk_buff *skb)
{
	unsigned int off = 0, n, i = 0;
	struct sk_buff *f;
	struct page *page;

	f = alloc_skb(0, GFP_ATOMIC);
	if (!f)
		return NULL;
	while (off < skb->len) {
		page = alloc_page(GFP_ATOMIC);
		if (!page || i == MAX_SKB_FRAGS) {
			if (page)
				__free_page(page);
			kfree_skb(f);
			return NULL;
		}
		n = min_t(unsigned int, PAGE_SIZE, skb->len - off);
		if (skb_copy_bits(skb, off, page_address(page), n)) {
			__free_page(page);
			kfree_skb(f);
			return NULL;
		}
		skb_fill_page_desc(f, i++, page, 0, n);
		f->len += n;
		f->data_len += n;
		f->truesize += PAGE_SIZE;
		off += n;
	}
	memcpy(f->cb, skb->cb, sizeof(f->cb));
	return f;
}

/* At the root: @skb, a DATA message with its header written (and
 * charged to mc->held), is the next of group @group.  Elsewhere: relayed
 * to the root (node ids fall along the way: each NI relays to a smaller
 * one).  mc->lock held.
 */
static void grim_mc_ticket(struct grim_ni *ni, struct sk_buff *skb,
			   u32 group, struct sk_buff_head *relay)
{
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_group *g;

	memset(cb, 0, sizeof(*cb));
	cb->arg[0] = group;
	if (mc->leader != ni->node) {
		mc->held -= skb->len;
		if (skb_has_frag_list(skb)) {
			struct sk_buff *f = grim_mc_flatten(skb);

			consume_skb(skb);
			if (!f) {
				grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
				return;
			}
			skb = f;
			cb = GRIM_MSG_CB(skb);
		}
		cb->handler = GRIM_MC_RELAY;
		skb_orphan(skb);
		skb->dev = ni->dev;
		skb->destructor = grim_mc_fwd_done;
		atomic_inc(&mc->fwd);
		__skb_queue_tail(relay, skb);
		return;
	}
	g = grim_mc_group_ok(group) ? grim_mc_find(mc, group) : NULL;
	if (!g || !g->ndir) {
		mc->held -= skb->len;
		grim_count(ni, NULL, GRIM_STAT_MC_NO_MEMBERS);
		consume_skb(skb);
		return;
	}
	cb->handler = GRIM_MC_DATA;
	grim_mc_stamp(ni, g, cb);
	grim_mc_enqueue(mc, g, skb);
	grim_count(ni, NULL, GRIM_STAT_MC_TICKETED);
}

static void grim_mc_root_deliver(struct grim_ep *ep, struct sk_buff *skb,
				 unsigned int reserved)
{
	struct grim_mc *mc = grim_mc_of_ep(ep);
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct grim_ni *ni = grim_mc_ni(mc);
	enum grim_stat why = GRIM_STAT_DROP_MSG;
	struct grim_mc_inj inj;
	struct grim_mc_data *d;

	/* A message to pass on stays charged, @reserved == skb->len. */
	if (cb->src_port == GRIM_PORT_MC_ROOT) {
		/* From another NI: joins, leaves, relayed messages. */
		if (cb->handler != GRIM_MC_RELAY)
			grim_mc_unreserve(ep, reserved);
		if (cb->handler != GRIM_MC_JOIN &&
		    cb->handler != GRIM_MC_LEAVE &&
		    cb->handler != GRIM_MC_HAVE &&
		    cb->handler != GRIM_MC_REPAIR &&
		    cb->handler != GRIM_MC_RELAY) {
			grim_count(ni, NULL, why);
			kfree_skb(skb);
			return;
		}
		skb_queue_tail(&mc->ctlq, skb);
		grim_mc_kick(mc, 0);
		return;
	}
	/* From a sender (a socket, or a link's endpoint other than the
	 * group engine's): the header becomes a DATA message's.
	 */
	if (cb->src_port >= GRIM_PORT_MC_ROOT ||
	    skb_copy_bits(skb, 0, &inj, sizeof(inj)) ||
	    !grim_mc_group_ok(ntohl(inj.group)))
		goto drop;
	if (skb_ensure_writable(skb, sizeof(*d))) {
		why = GRIM_STAT_DROP_NOMEM;
		goto drop;
	}
	d = (struct grim_mc_data *)skb->data;
	d->arg[0] = htonl(cb->arg[0]);
	d->arg[1] = htonl(cb->arg[1]);
	d->arg[2] = htonl(cb->arg[2]);
	d->arg[3] = htonl(cb->arg[3]);
	d->origin = htonl(cb->node);
	d->handler = htons(cb->handler);
	d->port = htons(cb->src_port);
	memset(cb, 0, sizeof(*cb));
	cb->handler = GRIM_MC_RELAY;
	cb->arg[0] = ntohl(inj.group);
	skb_queue_tail(&mc->ctlq, skb);
	grim_mc_kick(mc, 0);
	return;

drop:
	grim_mc_unreserve(ep, reserved);
	grim_count(ni, NULL, why);
	kfree_skb(skb);
}

static void grim_mc_tx_failed(struct grim_ep *ep, struct sk_buff *msg,
			      const struct grim_msg_cb *cb, unsigned int len,
			      int err)
{
	struct grim_mc *mc = grim_mc_of_ep(ep);

	/* A join that did not reach the root: tell it everything again. */
	if (cb->handler == GRIM_MC_JOIN &&
	    (cb->dst_port == GRIM_PORT_MC_ROOT ||
	     cb->dst_port == GRIM_PORT_LMC_ROOT)) {
		WRITE_ONCE(mc->rejoin, true);
		grim_mc_kick(mc, HZ / 10);
	}
	kfree_skb(msg);
}

/* Nobody waits for what a stopped link sent. */
static bool grim_mc_orphaned(const struct grim_ep *ep)
{
	return !READ_ONCE(container_of(ep, struct grim_mc_ep, ep)->mc->up);
}

static void grim_mc_info(const struct grim_ep *ep, struct grim_ep_info *info)
{
}

static const struct grim_ep_ops grim_mc_tree_ops = {
	.get		= grim_mc_ep_get,
	.put		= grim_mc_ep_put,
	.admit		= grim_mc_tree_admit,
	.unreserve	= grim_mc_unreserve,
	.deliver	= grim_mc_tree_deliver,
	.tx_failed	= grim_mc_tx_failed,
	.orphaned	= grim_mc_orphaned,
	.info		= grim_mc_info,
};

static const struct grim_ep_ops grim_mc_root_ops = {
	.get		= grim_mc_ep_get,
	.put		= grim_mc_ep_put,
	.admit		= grim_mc_root_admit,
	.unreserve	= grim_mc_unreserve,
	.deliver	= grim_mc_root_deliver,
	.tx_failed	= grim_mc_tx_failed,
	.orphaned	= grim_mc_orphaned,
	.info		= grim_mc_info,
};

/* The work: roots, trees, forwarding and delivery. */

/* @skb as a message from one of the NI's endpoints to @port of @node. */
static struct sk_buff *grim_mc_out(struct sk_buff *skb, u32 node, u16 port)
{
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);

	cb->node = node;
	cb->dst_port = port;
	cb->flags = 0;
	return skb;
}

/* Copies of tree message @skb for the children of @g, onto @out. */
static void grim_mc_forward(struct grim_ni *ni, struct grim_mc_group *g,
			    struct sk_buff *skb, struct sk_buff_head *out)
{
	struct sk_buff *copy;
	int i;

	for (i = 0; i < 2; i++) {
		if (!g->child[i])
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		if (!copy) {
			/* The child waits for this ticket until a resync
			 * tree; rare, and counted.
			 */
			grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
			continue;
		}
		memcpy(copy->cb, skb->cb, sizeof(struct grim_msg_cb));
		grim_mc_out(copy, g->child[i], GRIM_PORT_MC);
		copy->dev = ni->dev;
		copy->destructor = grim_mc_fwd_done;
		atomic_inc(&ni->mc.fwd);
		__skb_queue_tail(out, copy);
		if (GRIM_MC_KIND(GRIM_MSG_CB(skb)->handler) == GRIM_MC_DATA)
			grim_count(ni, NULL, GRIM_STAT_MC_TX_COPIES);
	}
}

/* Apply TREE message @skb to @g: its children, for what follows. */
static void grim_mc_apply_tree(struct grim_ni *ni, struct grim_mc_group *g,
			       struct sk_buff *skb)
{
	const unsigned int off = sizeof(struct grim_mc_tree);
	unsigned int n = (skb->len - off) / sizeof(__be32), i, self = n;
	__be32 id;
	u32 prev = 0;

	g->child[0] = 0;
	g->child[1] = 0;
	g->parent = 0;
	g->in_tree = false;
	if (skb->len < off || (skb->len - off) % sizeof(__be32) || !n ||
	    n > GRIM_MAX_PEERS + 1)
		goto bad;
	for (i = 0; i < n; i++) {
		if (skb_copy_bits(skb, off + i * sizeof(id), &id, sizeof(id)))
			goto bad;
		if ((i && ntohl(id) <= prev) || !id ||
		    (!i && ntohl(id) != GRIM_MSG_CB(skb)->arg[3]))
			goto bad;
		if (ntohl(id) == ni->node)
			self = i;
		prev = ntohl(id);
	}
	if (self == n)
		return;		/* not in it (any more) */
	g->in_tree = true;
	if (self) {
		if (skb_copy_bits(skb, off + (self - 1) / 2 * sizeof(id), &id,
				  sizeof(id)))
			goto bad;
		g->parent = ntohl(id);
	}
	for (i = 0; i < 2 && 2 * self + 1 + i < n; i++) {
		if (skb_copy_bits(skb, off + (2 * self + 1 + i) * sizeof(id),
				  &id, sizeof(id)))
			goto bad;
		g->child[i] = ntohl(id);
	}
	return;
bad:
	grim_count(ni, NULL, GRIM_STAT_DROP_MSG);
}

/* Whether member @sub takes a message of @origin's @port through the
 * NI: a socket takes what sockets sent (not what a link's endpoint
 * sent: IP's broadcasts are not theirs to read); a link's endpoint,
 * through its link only, what the same endpoint of another node sent,
 * never its own, as a device never hears its own broadcasts.
 */
static bool grim_mc_sub_takes(const struct grim_ni *ni,
			      const struct grim_mc_sub *sub, u32 origin,
			      u16 port)
{
	if (!sub->ep->dev)
		return port < GRIM_PORT_DEV;
	return sub->ep->dev == ni->dev && origin != ni->node &&
	       port == READ_ONCE(sub->ep->port);
}

/* Deliver DATA message @skb to every local member of @g: to all or to
 * none, so that a full socket holds the group back rather than miss a
 * message.  Returns false when one had no room.
 */
static bool grim_mc_deliver_local(struct grim_ni *ni, struct grim_mc_group *g,
				  struct sk_buff *skb)
{
	struct grim_net *gn = grim_pernet(dev_net(ni->dev));
	const struct grim_msg_cb *mcb = GRIM_MSG_CB(skb);
	unsigned int len = skb->len - sizeof(struct grim_mc_data), n = 0, i;
	struct sk_buff *copies[GRIM_MC_LOCAL_MAX];
	struct grim_ep *eps[GRIM_MC_LOCAL_MAX];
	struct grim_mc_data d;
	struct grim_mc_sub *sub;
	struct grim_msg_cb *cb;
	struct sk_buff *copy;
	bool ok = true;
	int k;

	if (skb->len < sizeof(d) || skb_copy_bits(skb, 0, &d, sizeof(d))) {
		grim_count(ni, NULL, GRIM_STAT_DROP_MSG);
		return true;
	}
	rcu_read_lock();
	hlist_for_each_entry_rcu(sub, grim_sub_bucket(gn, g->id), hnode) {
		if (sub->group != g->id ||
		    !grim_mc_sub_takes(ni, sub, ntohl(d.origin), ntohs(d.port)))
			continue;
		if (n == ARRAY_SIZE(eps)) {
			grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
			break;
		}
		if (!sub->ep->ops->get(sub->ep))
			continue;
		if (!sub->ep->ops->reserve(sub->ep, len)) {
			sub->ep->ops->put(sub->ep);
			ok = false;
			break;
		}
		eps[n++] = sub->ep;
	}
	rcu_read_unlock();
	/* Every copy first: a message reaches all of them or none. */
	for (i = 0; ok && i < n; i++) {
		copies[i] = skb_clone(skb, GFP_ATOMIC);
		if (copies[i] && !pskb_pull(copies[i], sizeof(d))) {
			kfree_skb(copies[i]);
			copies[i] = NULL;
		}
		if (!copies[i]) {
			while (i--)
				kfree_skb(copies[i]);
			ok = false;
		}
	}
	for (i = 0; i < n; i++) {
		if (!ok) {
			eps[i]->ops->unreserve(eps[i], len);
			eps[i]->ops->put(eps[i]);
			continue;
		}
		copy = copies[i];
		cb = GRIM_MSG_CB(copy);
		memset(cb, 0, sizeof(*cb));
		cb->node = ntohl(d.origin);
		cb->src_port = ntohs(d.port);
		cb->dst_port = READ_ONCE(eps[i]->port);
		cb->handler = ntohs(d.handler);
		cb->flags = GRIM_MSG_F_GROUP;
		for (k = 0; k < 4; k++)
			cb->arg[k] = ntohl(d.arg[k]);
		cb->group = g->id;
		cb->ticket = mcb->arg[1];
		eps[i]->ops->deliver(eps[i], copy, len);
		eps[i]->ops->put(eps[i]);
		g->delivered++;
		grim_count(ni, NULL, GRIM_STAT_MC_DELIVERED);
	}
	return ok;
}

/* At the root: the next ticket of @g is its new tree.  @joiner (0: none)
 * is the member whose join it answers.  mc->lock held.
 */
static void grim_mc_new_tree(struct grim_ni *ni, struct grim_mc_group *g,
			     u32 flags, u32 joiner, u32 since)
{
	struct grim_mc_tree *t;
	struct grim_msg_cb *cb;
	struct sk_buff *skb;
	__be32 *ids;
	u32 i;

	skb = alloc_skb(sizeof(*t) + (g->ndir + 1) * sizeof(*ids), GFP_ATOMIC);
	if (!skb) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return;
	}
	t = skb_put(skb, sizeof(*t));
	t->joiner = htonl(joiner);
	t->since = htonl(since);
	/* The root first, then the members (the root may be one). */
	ids = skb_put(skb, sizeof(*ids));
	*ids = htonl(ni->node);
	for (i = 0; i < g->ndir; i++) {
		if (g->dir[i] == ni->node)
			continue;
		ids = skb_put(skb, sizeof(*ids));
		*ids = htonl(g->dir[i]);
	}
	cb = GRIM_MSG_CB(skb);
	memset(cb, 0, sizeof(*cb));
	cb->node = ni->node;
	cb->src_port = GRIM_PORT_MC;
	cb->handler = GRIM_MC_TREE | flags << 8;
	grim_mc_stamp(ni, g, cb);
	ni->mc.held += skb->len;
	grim_mc_enqueue(&ni->mc, g, skb);
}

/* At the root: remember that @node left @g with the next ticket. */
static void grim_mc_note_left(struct grim_ni *ni, struct grim_mc_group *g,
			      u32 node, bool down)
{
	struct grim_mc_left *l;
	u32 i;

	for (i = 0; i < g->nleft && g->left[i].node != node; i++)
		;
	if (i == g->nleft) {
		if (g->nleft == GRIM_MAX_PEERS) {
			/* The oldest goes: it rejoins as a new member. */
			memmove(&g->left[0], &g->left[1],
				(g->nleft - 1) * sizeof(*l));
			i = g->nleft - 1;
		} else {
			l = krealloc(g->left, (g->nleft + 1) * sizeof(*l),
				     GFP_ATOMIC);
			if (!l) {
				grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
				return;
			}
			g->left = l;
			i = g->nleft++;
		}
	}
	g->left[i].node = node;
	g->left[i].ticket = g->next_ticket;
	g->left[i].down = down;
}

/* At the root: @node joins or leaves @group.  mc->lock held. */
static void grim_mc_member(struct grim_ni *ni, u32 group, u32 node, bool join)
{
	u32 i, at, *dir, flags = 0, since = 0;
	struct grim_mc_member *mem;
	struct grim_mc_group *g;
	bool added;

	if (!grim_mc_group_ok(group)) {
		grim_count(ni, NULL, GRIM_STAT_DROP_MSG);
		return;
	}
	if (node < ni->node) {
		/* It should be the root: it finds out soon. */
		grim_count(ni, NULL, GRIM_STAT_MC_STALE);
		return;
	}
	g = join ? grim_mc_get(&ni->mc, group) : grim_mc_find(&ni->mc, group);
	if (!g) {
		/* The NI knows as many groups as it may: the member asks
		 * again a hello later.
		 */
		if (join)
			grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
		return;
	}
	g->active = jiffies;
	for (i = 0; i < g->ndir && g->dir[i] < node; i++)
		;
	if (!join) {
		if (i == g->ndir || g->dir[i] != node)
			return;
		memmove(&g->dir[i], &g->dir[i + 1],
			(g->ndir - i - 1) * sizeof(*dir));
		memmove(&g->mem[i], &g->mem[i + 1],
			(g->ndir - i - 1) * sizeof(*g->mem));
		g->ndir--;
		grim_mc_note_left(ni, g, node, false);
		grim_mc_new_tree(ni, g, 0, 0, 0);
		grim_mc_trim(&ni->mc, g, false);
		return;
	}
	added = i == g->ndir || g->dir[i] != node;
	if (added) {
		/* @mem first: it holds as many as @dir, or more. */
		mem = krealloc(g->mem, (g->ndir + 1) * sizeof(*mem),
			       GFP_ATOMIC);
		dir = NULL;
		if (mem) {
			g->mem = mem;
			dir = krealloc(g->dir, (g->ndir + 1) * sizeof(*dir),
				       GFP_ATOMIC);
		}
		if (!dir) {
			grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
			return;
		}
		memmove(&dir[i + 1], &dir[i], (g->ndir - i) * sizeof(*dir));
		memmove(&g->mem[i + 1], &g->mem[i],
			(g->ndir - i) * sizeof(*mem));
		dir[i] = node;
		g->dir = dir;
		g->ndir++;
	}
	at = i;
	/* A join again (its NI restarted, or took another root for a
	 * while) is answered with the tree as well.
	 */
	flags = GRIM_MC_F_JOIN;
	for (i = 0; i < g->nleft; i++) {
		if (g->left[i].node != node)
			continue;
		flags |= g->left[i].down ? GRIM_MC_F_FORCE : GRIM_MC_F_SINCE;
		since = g->left[i].ticket;
		g->left[i] = g->left[--g->nleft];
		break;
	}
	if (node == ni->node)
		flags |= GRIM_MC_F_FORCE;
	/* A new member needs the tickets from its tree on, or from where
	 * it left; one that joins again keeps what it said it has.
	 */
	if (added) {
		g->mem[at].have = flags & GRIM_MC_F_SINCE ? since :
							    g->next_ticket;
		g->mem[at].repair_at = 0;
	}
	grim_mc_new_tree(ni, g, flags, node, since);
}

/* The smallest node id of the link that is up: the root of its groups;
 * *@rgen: that peer's session, which changes when it restarts.
 */
static u32 grim_mc_leader(struct grim_ni *ni, u32 *rgen)
{
	struct grim_peer *peer;
	u32 min = ni->node;
	int i;

	*rgen = 0;
	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(ni->peers); i++) {
		hlist_for_each_entry_rcu(peer, &ni->peers[i], link) {
			if (READ_ONCE(peer->state) != GRIM_PEER_UP ||
			    peer->node >= min)
				continue;
			min = peer->node;
			*rgen = READ_ONCE(peer->rgen);
		}
	}
	rcu_read_unlock();
	return min;
}

static bool grim_mc_peer_up(struct grim_ni *ni, u32 node)
{
	struct grim_peer *peer;
	bool up;

	if (node == ni->node)
		return true;
	rcu_read_lock();
	peer = grim_peer_lookup(ni, node);
	up = peer && READ_ONCE(peer->state) == GRIM_PEER_UP;
	rcu_read_unlock();
	return up;
}

static bool grim_mc_orphan(struct grim_ni *ni, struct grim_mc_group *g)
{
	return g->parent && !grim_mc_peer_up(ni, g->parent);
}

/* At the root: members that are down leave their groups; the NIs below
 * them ask for what those held (grim_mc_report()).  mc->lock held.
 */
static void grim_mc_prune(struct grim_ni *ni)
{
	struct grim_mc_group *g;
	bool gone;
	u32 i, k;
	int b;

	hash_for_each(ni->mc.groups, b, g, hnode) {
		gone = false;
		for (i = 0, k = 0; i < g->ndir; i++) {
			if (grim_mc_peer_up(ni, g->dir[i])) {
				g->mem[k] = g->mem[i];
				g->dir[k++] = g->dir[i];
				continue;
			}
			grim_mc_note_left(ni, g, g->dir[i], true);
			gone = true;
		}
		g->ndir = k;
		if (!gone)
			continue;
		grim_mc_new_tree(ni, g, GRIM_MC_F_RESYNC, 0, 0);
		/* What only the dead member lacked is kept no longer. */
		grim_mc_trim(&ni->mc, g, false);
	}
}

/* A local join or leave, of the NI's namespace (an event, cb->arg[1]),
 * or a join told again (a new root's, or one not answered): as the
 * root, apply it; else, tell the root (on @out).
 */
static void grim_mc_local(struct grim_ni *ni, struct sk_buff *skb,
			  struct sk_buff_head *out)
{
	struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	bool join, event = cb->arg[1];
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_group *g;

	/* What the namespace is now, not what the event said: a leave and
	 * a join of two sockets may have queued their events in the other
	 * order.
	 */
	rcu_read_lock();
	join = grim_mc_has_local(grim_pernet(dev_net(ni->dev)), ni->dev,
				 cb->arg[0]);
	rcu_read_unlock();
	cb->handler = join ? GRIM_MC_JOIN : GRIM_MC_LEAVE;
	cb->arg[1] = 0;

	spin_lock_bh(&mc->lock);
	g = join ? grim_mc_get(mc, cb->arg[0]) : grim_mc_find(mc, cb->arg[0]);
	if (event && (g ? g->joined : false) == join) {
		/* Another member came or went: the NI stays as it was. */
		spin_unlock_bh(&mc->lock);
		kfree_skb(skb);
		return;
	}
	if (g) {
		g->joined = join;
		g->active = jiffies;	/* a leave: copies may still come */
	} else if (join) {
		/* No room for the group: the NI must not be in a tree it
		 * cannot follow.  Asked again a hello later.
		 */
		spin_unlock_bh(&mc->lock);
		grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
		kfree_skb(skb);
		return;
	}
	if (mc->leader == ni->node) {
		grim_mc_member(ni, cb->arg[0], ni->node, join);
		spin_unlock_bh(&mc->lock);
		kfree_skb(skb);
		return;
	}
	spin_unlock_bh(&mc->lock);
	__skb_queue_tail(out, grim_mc_out(skb, mc->leader, GRIM_PORT_MC_ROOT));
}

/* Whether the NI is in @g's tree as the root it takes for the root now
 * has it: not when the tree it last had came from an older root.
 */
static bool grim_mc_in_tree(struct grim_mc *mc, struct grim_mc_group *g)
{
	return g->in_tree && g->known && g->root == READ_ONCE(mc->leader);
}

/* A JOIN of every group the namespace joined, for a new root; with
 * @missing, of those whose tree does not have the NI yet (a join lost on
 * the way, or taken by an NI that was not the root yet: a member that
 * hears of the old root's death first joins the next one before it
 * knows it is the root, and is still in the old root's tree meanwhile).
 * Returns whether there were any such.
 */
static bool grim_mc_rejoin(struct grim_ni *ni, struct sk_buff_head *out,
			   bool missing)
{
	struct grim_net *gn = grim_pernet(dev_net(ni->dev));
	struct grim_mc_sub *sub, *s;
	struct grim_mc_group *g;
	bool seen, any = false;
	struct sk_buff *skb;
	int i;

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(gn->mc_subs); i++) {
		hlist_for_each_entry_rcu(sub, &gn->mc_subs[i], hnode) {
			if (!grim_mc_sub_on(sub, ni->dev))
				continue;
			/* Once per group: at its first entry. */
			seen = false;
			hlist_for_each_entry_rcu(s, &gn->mc_subs[i], hnode) {
				if (s == sub)
					break;
				seen |= s->group == sub->group &&
					grim_mc_sub_on(s, ni->dev);
			}
			if (seen)
				continue;
			if (missing) {
				spin_lock_bh(&ni->mc.lock);
				g = grim_mc_find(&ni->mc, sub->group);
				seen = g && grim_mc_in_tree(&ni->mc, g);
				spin_unlock_bh(&ni->mc.lock);
				if (seen)
					continue;
				any = true;
			}
			skb = alloc_skb(0, GFP_ATOMIC);
			if (!skb) {
				WRITE_ONCE(ni->mc.rejoin, true);
				continue;
			}
			memset(skb->cb, 0, sizeof(struct grim_msg_cb));
			GRIM_MSG_CB(skb)->node = ni->node;
			GRIM_MSG_CB(skb)->handler = GRIM_MC_JOIN;
			GRIM_MSG_CB(skb)->arg[0] = sub->group;
			grim_mc_local(ni, skb, out);
		}
	}
	rcu_read_unlock();
	return any;
}

/* A message from the root's GRIM_PORT_MC_ROOT to @node's GRIM_PORT_MC,
 * onto @out: @skb, or a copy of it (@copy).
 */
static bool grim_mc_resend(struct grim_ni *ni, struct sk_buff *skb,
			   bool copy, u32 node, struct sk_buff_head *out)
{
	struct sk_buff *c = copy ? skb_clone(skb, GFP_ATOMIC) : skb;

	if (!c) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return false;
	}
	if (copy)
		memcpy(c->cb, skb->cb, sizeof(struct grim_msg_cb));
	grim_mc_out(c, node, GRIM_PORT_MC);
	c->dev = ni->dev;
	c->destructor = grim_mc_fwd_done;
	atomic_inc(&ni->mc.fwd);
	__skb_queue_tail(out, c);
	return true;
}

/* At the root: tell @node to go past the tickets of @g before @ticket
 * (lost: the root could not keep them).  mc->lock held.
 */
static void grim_mc_skip_to(struct grim_ni *ni, struct grim_mc_group *g,
			    u32 ticket, u32 node, struct sk_buff_head *out)
{
	struct sk_buff *skip = alloc_skb(0, GFP_ATOMIC);
	struct grim_msg_cb *cb;

	if (!skip) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return;
	}
	cb = GRIM_MSG_CB(skip);
	memset(cb, 0, sizeof(*cb));
	cb->handler = GRIM_MC_SKIP;
	cb->arg[0] = g->id;
	cb->arg[1] = ticket;
	cb->arg[2] = g->own_term;
	cb->arg[3] = ni->node;
	grim_mc_resend(ni, skip, false, node, out);
}

/* At the root: member @cb->node has every ticket of group @cb->arg[0]
 * before @cb->arg[1] (HAVE), and with REPAIR asks for those from there
 * on: they go to it straight from the log, GRIM_MC_REPAIR_MAX at a
 * time (it asks again for the rest).  mc->lock held.
 */
static void grim_mc_have(struct grim_ni *ni, const struct grim_msg_cb *cb,
			 struct sk_buff_head *out)
{
	u32 from = cb->arg[1], want = from, i = 0, n = 0, t;
	struct grim_mc_group *g = NULL;
	struct grim_mc *mc = &ni->mc;
	struct sk_buff *skb;
	bool more = false;

	if (mc->leader == ni->node && cb->arg[3] == ni->node &&
	    grim_mc_group_ok(cb->arg[0]))
		g = grim_mc_find(mc, cb->arg[0]);
	if (g && cb->arg[2] != g->own_term)
		g = NULL;	/* of the group's earlier life */
	while (g && i < g->ndir && g->dir[i] != cb->node)
		i++;
	if (!g || i == g->ndir || grim_seq_after(from, g->next_ticket)) {
		/* Not a member (any more), or not of this root. */
		if (cb->handler == GRIM_MC_REPAIR)
			grim_count(ni, NULL, GRIM_STAT_MC_STALE);
		return;
	}
	if (grim_seq_after(from, g->mem[i].have)) {
		g->mem[i].have = from;
		grim_mc_trim(mc, g, false);
	}
	if (cb->handler != GRIM_MC_REPAIR)
		return;
	/* A member asks once a hello: more often, the answer to the last
	 * request may still be on its way.
	 */
	if (g->mem[i].repair_at &&
	    time_before(jiffies, g->mem[i].repair_at +
			msecs_to_jiffies(READ_ONCE(ni->hello_ms)) / 2)) {
		grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
		return;
	}
	g->mem[i].repair_at = jiffies ?: 1;
	skb_queue_walk(&g->log, skb) {
		t = GRIM_MSG_CB(skb)->arg[1];
		if (grim_seq_before(t, from))
			continue;
		more = n == GRIM_MC_REPAIR_MAX ||
		       atomic_read(&mc->fwd) >=
		       GRIM_MC_FWD_MAX -
		       (grim_mc_is_link(g->id) ? 0 : GRIM_MC_LINK_FWD);
		if (more)
			break;
		if (t != want)
			grim_mc_skip_to(ni, g, t, cb->node, out);
		more = !grim_mc_resend(ni, skb, true, cb->node, out);
		if (more)
			break;
		grim_count(ni, NULL, GRIM_STAT_MC_REPAIRED);
		want = t + 1;
		n++;
	}
	trace_grim_mc_repair(ni->node, g->id, cb->node, from, n);
	if (more)
		return;		/* the rest when it asks again */
	/* Past the log: what the root still holds comes down the tree;
	 * what it could not keep is gone.
	 */
	skb = skb_peek(&g->q);
	t = skb && GRIM_MSG_CB(skb)->arg[3] == ni->node &&
	    GRIM_MSG_CB(skb)->arg[2] == g->own_term ? GRIM_MSG_CB(skb)->arg[1] :
						   g->next_ticket;
	if (grim_seq_before(want, t))
		grim_mc_skip_to(ni, g, t, cb->node, out);
}

/* Joins and leaves: of the namespace (the node is ours), or of NIs that
 * take us for their root; and the members' reports (@out: what the root
 * sends).
 */
static void grim_mc_control(struct grim_ni *ni, struct sk_buff_head *out)
{
	struct grim_mc *mc = &ni->mc;
	struct grim_msg_cb *cb;
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&mc->ctlq))) {
		cb = GRIM_MSG_CB(skb);
		if (cb->handler == GRIM_MC_RELAY) {
			spin_lock_bh(&mc->lock);
			grim_mc_ticket(ni, skb, cb->arg[0], out);
			spin_unlock_bh(&mc->lock);
			continue;
		}
		if (cb->handler == GRIM_MC_HAVE ||
		    cb->handler == GRIM_MC_REPAIR) {
			spin_lock_bh(&mc->lock);
			grim_mc_have(ni, cb, out);
			spin_unlock_bh(&mc->lock);
			kfree_skb(skb);
			continue;
		}
		if (cb->node == ni->node) {
			grim_mc_local(ni, skb, out);
			continue;
		}
		if (mc->leader == ni->node) {
			spin_lock_bh(&mc->lock);
			grim_mc_member(ni, cb->arg[0], cb->node,
				       cb->handler == GRIM_MC_JOIN);
			spin_unlock_bh(&mc->lock);
		} else {
			grim_count(ni, NULL, GRIM_STAT_MC_STALE);
		}
		kfree_skb(skb);
	}
}

/* Send what @q holds from @mep, or, for the link's own group, from its
 * twin on the link group's ports, to their twins.
 */
static void grim_mc_send_all(struct grim_mc_ep *mep, struct sk_buff_head *q)
{
	struct grim_mc *mc = mep->mc;
	struct grim_ni *ni = grim_mc_ni(mc);
	const u16 shift = GRIM_PORT_MC - GRIM_PORT_LMC;
	struct grim_msg_cb *cb;
	struct sk_buff *skb;
	struct grim_ep *ep;

	while ((skb = __skb_dequeue(q))) {
		cb = GRIM_MSG_CB(skb);
		/* Relayed: to the root as we see it now. */
		if (cb->handler == GRIM_MC_RELAY)
			grim_mc_out(skb, READ_ONCE(mc->leader),
				    GRIM_PORT_MC_ROOT);
		ep = &mep->ep;
		if (grim_mc_is_link(cb->arg[0])) {
			ep = mep == &mc->tree ? &mc->ltree.ep : &mc->lroot.ep;
			cb->dst_port -= shift;
		}
		/* A copy that never leaves: the child takes the next one
		 * past the gap, grim_mc_stall_max() later.
		 */
		if (grim_ni_send(ep, skb, GFP_KERNEL))
			grim_count(ni, NULL, GRIM_STAT_MSG_FAILED);
	}
}

/* Tell the children of @g that the tickets before @skb's will not come. */
static void grim_mc_skip(struct grim_ni *ni, struct grim_mc_group *g,
			 struct sk_buff *skb, struct sk_buff_head *out)
{
	struct grim_msg_cb *cb;
	struct sk_buff *skip;

	skip = alloc_skb(0, GFP_ATOMIC);
	if (!skip) {
		/* They wait, grim_mc_stall_max() at most. */
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return;
	}
	cb = GRIM_MSG_CB(skip);
	memcpy(cb, skb->cb, sizeof(*cb));
	cb->handler = GRIM_MC_SKIP;
	grim_mc_forward(ni, g, skip, out);
	kfree_skb(skip);
}

/* At the root: keep a copy of @skb, stamped and about to go down the
 * tree, until every member has it.  mc->lock held.
 */
static void grim_mc_log(struct grim_ni *ni, struct grim_mc_group *g,
			struct sk_buff *skb)
{
	const struct grim_msg_cb *cb = GRIM_MSG_CB(skb);
	struct sk_buff *copy;

	/* Ours: not a message of the root before us still queued. */
	if (ni->mc.leader != ni->node || cb->arg[3] != ni->node ||
	    cb->arg[2] != g->own_term)
		return;
	/* Full (a member that does not report holds it): a member that
	 * misses this one goes past it, the root's SKIP says so.
	 */
	if (!grim_mc_log_room(&ni->mc, grim_mc_is_link(g->id))) {
		grim_count(ni, NULL, GRIM_STAT_DROP_LIMIT);
		return;
	}
	copy = skb_clone(skb, GFP_ATOMIC);
	if (!copy) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return;
	}
	memcpy(copy->cb, skb->cb, sizeof(struct grim_msg_cb));
	GRIM_MSG_CB(copy)->flags = 0;
	__skb_queue_tail(&g->log, copy);
	ni->mc.logged += copy->truesize;
	grim_mc_trim(&ni->mc, g, false);
}

/* Forward and deliver what @g took, in ticket order, until a member
 * socket has no room.  mc->lock held.  Returns false then.
 */
static bool grim_mc_run(struct grim_ni *ni, struct grim_mc_group *g,
			struct sk_buff_head *out, bool *wake)
{
	struct grim_msg_cb *cb;
	struct sk_buff *skb;

	while ((skb = skb_peek(&g->q))) {
		/* Sent on from single pages, not as the frames it came in. */
		if (skb_has_frag_list(skb)) {
			struct sk_buff *f = grim_mc_flatten(skb);

			if (!f)
				return false;	/* again soon */
			__skb_unlink(skb, &g->q);
			__skb_queue_head(&g->q, f);
			ni->mc.held += f->len;
			ni->mc.held -= skb->len;
			consume_skb(skb);
			skb = f;
		}
		cb = GRIM_MSG_CB(skb);
		if (cb->flags & GRIM_MC_CB_SKIPPED) {
			grim_mc_skip(ni, g, skb, out);
			cb->flags &= ~GRIM_MC_CB_SKIPPED;
		}
		if (GRIM_MC_KIND(cb->handler) == GRIM_MC_SKIP) {
			/* told on above */
		} else if (GRIM_MC_KIND(cb->handler) == GRIM_MC_TREE) {
			grim_mc_log(ni, g, skb);
			grim_mc_apply_tree(ni, g, skb);
			trace_grim_mc_tree(ni->node, g->id, cb->arg[1],
					   cb->arg[3], GRIM_MC_FLAGS(cb->handler),
					   g->in_tree, g->parent, g->child[0],
					   g->child[1]);
			grim_mc_forward(ni, g, skb, out);
			grim_count(ni, NULL, GRIM_STAT_MC_TREE_UPDATES);
			*wake = true;
		} else {
			/* Forwarded once; delivered once there is room. */
			if (!(cb->flags & GRIM_MSG_F_GROUP)) {
				grim_mc_log(ni, g, skb);
				grim_mc_forward(ni, g, skb, out);
				cb->flags |= GRIM_MSG_F_GROUP;
				g->rx++;
				grim_count(ni, NULL, GRIM_STAT_MC_RX);
			}
			if (g->in_tree && !grim_mc_deliver_local(ni, g, skb))
				return false;
		}
		__skb_unlink(skb, &g->q);
		ni->mc.held -= skb->len;
		kfree_skb(skb);
	}
	return true;
}

/* Forget the groups the NI has no use for: no member in its namespace,
 * none that takes the NI for its root, nothing queued or kept, and
 * nothing taken, stamped, joined or left for twice the dead time.  What
 * was in flight to the NI has settled by then; a copy that comes later
 * finds no group and is dropped as stale, and a member below that
 * needed it asks the root.  A member NI is never told it left (the tree
 * without it does not reach it): this is where it lets go.  The root
 * forgets what it logged once no member is left to want it.  Returns
 * whether a group will be idle long enough later.  mc->lock held, RCU
 * read side.
 */
static bool grim_mc_sweep(struct grim_ni *ni)
{
	struct grim_net *gn = grim_pernet(dev_net(ni->dev));
	unsigned long idle = grim_mc_stall_max(ni);
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_group *g;
	struct hlist_node *tmp;
	bool later = false;
	int b;

	hash_for_each_safe(mc->groups, b, tmp, g, hnode) {
		if (g->ndir || !skb_queue_empty(&g->q) ||
		    !list_empty(&g->busy_link) ||
		    grim_mc_has_local(gn, ni->dev, g->id))
			continue;
		grim_mc_trim(mc, g, true);
		if (time_before(jiffies, g->active + idle)) {
			later = true;
			continue;
		}
		trace_grim_mc_forget(ni->node, g->id, g->root, g->expect);
		grim_mc_free_group(mc, g);
		grim_count(ni, NULL, GRIM_STAT_MC_FORGOTTEN);
	}
	return later;
}

/* To the root of each group the NI delivers: what it has, every
 * GRIM_MC_HAVE_EVERY tickets or a hello after the last report; and a
 * REPAIR, once a hello, while its parent is down or it has refused the
 * tickets past the one it waits for, a hello long.  Returns whether to
 * look again a hello later.
 */
static bool grim_mc_report(struct grim_ni *ni, struct sk_buff_head *out)
{
	unsigned long hello = msecs_to_jiffies(READ_ONCE(ni->hello_ms));
	struct grim_net *gn = grim_pernet(dev_net(ni->dev));
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_group *g;
	struct grim_msg_cb *cb;
	struct sk_buff *skb;
	bool again = false;
	u32 kind;
	int b;

	rcu_read_lock();
	spin_lock_bh(&mc->lock);
	hash_for_each(mc->groups, b, g, hnode) {
		/* Not once the namespace left: the tree without us never
		 * reaches us to say so.
		 */
		if (!g->known || !g->in_tree || g->root == ni->node ||
		    g->root != mc->leader ||
		    !grim_mc_has_local(gn, ni->dev, g->id))
			continue;
		if (grim_mc_orphan(ni, g) ||
		    (g->stalled && g->stalled_at == g->expect &&
		     time_after(jiffies, g->stalled + hello))) {
			again = true;
			if (g->repair_at &&
			    time_before(jiffies, g->repair_at + hello))
				continue;
			g->repair_at = jiffies;
			kind = GRIM_MC_REPAIR;
		} else if (g->expect != g->reported) {
			if (g->expect - g->reported < GRIM_MC_HAVE_EVERY &&
			    time_before(jiffies, g->reported_at + hello)) {
				again = true;
				continue;
			}
			kind = GRIM_MC_HAVE;
		} else {
			continue;
		}
		skb = alloc_skb(0, GFP_ATOMIC);
		if (!skb) {
			again = true;
			continue;
		}
		cb = GRIM_MSG_CB(skb);
		memset(cb, 0, sizeof(*cb));
		cb->handler = kind;
		cb->arg[0] = g->id;
		cb->arg[1] = g->expect;
		cb->arg[2] = g->term;
		cb->arg[3] = g->root;
		g->reported = g->expect;
		g->reported_at = jiffies;
		__skb_queue_tail(out, grim_mc_out(skb, g->root,
						  GRIM_PORT_MC_ROOT));
	}
	spin_unlock_bh(&mc->lock);
	rcu_read_unlock();
	return again;
}

/* Whether the namespace joined a group whose tree lacks the NI. */
static bool grim_mc_waiting(struct grim_ni *ni)
{
	struct grim_mc_group *g;
	bool waiting = false;
	int b;

	if (READ_ONCE(ni->mc.leader) == ni->node)
		return false;
	spin_lock_bh(&ni->mc.lock);
	hash_for_each(ni->mc.groups, b, g, hnode) {
		if (!grim_mc_in_tree(&ni->mc, g)) {
			rcu_read_lock();
			waiting = grim_mc_has_local(grim_pernet(dev_net(ni->dev)),
						    ni->dev, g->id);
			rcu_read_unlock();
			if (waiting)
				break;
		}
	}
	spin_unlock_bh(&ni->mc.lock);
	return waiting;
}

static void grim_mc_work(struct work_struct *work)
{
	struct grim_mc *mc = container_of(to_delayed_work(work),
					  struct grim_mc, work);
	struct grim_ni *ni = grim_mc_ni(mc);
	struct sk_buff_head tree_out, root_out;
	struct grim_mc_group *g, *tmp;
	bool retry = false, wake = false, retry_join = false, again;
	u32 leader, rgen;
	int b;

	if (!READ_ONCE(mc->up))
		return;
	__skb_queue_head_init(&tree_out);
	__skb_queue_head_init(&root_out);

	/* The root: the smallest node id that is up.  A new one (or one
	 * that restarted) is told every group the namespace joined.
	 */
	leader = grim_mc_leader(ni, &rgen);
	spin_lock_bh(&mc->lock);
	if (leader != mc->leader || rgen != mc->leader_rgen) {
		if (mc->leader == ni->node && leader != ni->node) {
			hash_for_each(mc->groups, b, g, hnode) {
				g->ndir = 0;	/* not ours to keep */
				g->nleft = 0;
				grim_mc_trim(mc, g, true);
			}
		}
		WRITE_ONCE(mc->leader, leader);
		mc->leader_rgen = rgen;
		mc->rejoin = true;
	}
	if (leader == ni->node && xchg(&mc->peers_dirty, false))
		grim_mc_prune(ni);
	spin_unlock_bh(&mc->lock);
	if (xchg(&mc->rejoin, false)) {
		grim_mc_rejoin(ni, &root_out, false);
		mc->rejoined = jiffies;
	} else if (leader != ni->node &&
		   time_after(jiffies, mc->rejoined +
			      msecs_to_jiffies(READ_ONCE(ni->hello_ms)))) {
		/* Joins not answered within a hello: again. */
		if (grim_mc_rejoin(ni, &root_out, true))
			retry_join = true;
		mc->rejoined = jiffies;
	}
	grim_mc_control(ni, &root_out);

	spin_lock_bh(&mc->lock);
	list_for_each_entry_safe(g, tmp, &mc->busy, busy_link) {
		if (!grim_mc_run(ni, g, &tree_out, &wake))
			retry = true;
		else
			list_del_init(&g->busy_link);
	}
	/* Idle groups go, looked for once a hello; a run between two
	 * looks may have made some (a leave, say): one more look a hello
	 * on, which says whether any is still to wait for.
	 */
	if (time_after_eq(jiffies, mc->swept +
			  msecs_to_jiffies(READ_ONCE(ni->hello_ms)))) {
		rcu_read_lock();
		mc->sweep = grim_mc_sweep(ni);
		rcu_read_unlock();
		mc->swept = jiffies;
	} else {
		mc->sweep = true;
	}
	spin_unlock_bh(&mc->lock);
	again = grim_mc_report(ni, &root_out) || mc->sweep;

	grim_mc_send_all(&mc->root, &root_out);
	grim_mc_send_all(&mc->tree, &tree_out);
	if (wake)
		wake_up_all(&grim_pernet(dev_net(ni->dev))->mc_wait);
	if (retry)
		grim_mc_kick(mc, GRIM_MC_RETRY);
	else if (retry_join || again || grim_mc_waiting(ni))
		grim_mc_kick(mc, msecs_to_jiffies(READ_ONCE(ni->hello_ms)) + 1);
}

/* The groups of @ni for a dump (netlink.c), from the *@skip-th on, one
 * @fill call each, under the NI's group lock, until @fill returns
 * non-zero; *@skip is set to where the next call starts.
 */
int grim_mc_walk(struct grim_ni *ni, long *skip,
		 int (*fill)(const struct grim_mc_info *info, void *arg),
		 void *arg)
{
	struct grim_net *gn = grim_pernet(dev_net(ni->dev));
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_info info;
	struct grim_mc_group *g;
	struct grim_mc_sub *sub;
	long idx = 0;
	int b, err = 0;

	rcu_read_lock();
	spin_lock_bh(&mc->lock);
	hash_for_each(mc->groups, b, g, hnode) {
		if (idx++ < *skip)
			continue;
		memset(&info, 0, sizeof(info));
		info.id = g->id;
		info.root = g->known ? g->root : 0;
		info.ticket = mc->leader == ni->node && g->root == ni->node ?
			      g->next_ticket : g->expect;
		info.in_tree = g->in_tree;
		info.parent = g->parent;
		info.child[0] = g->child[0];
		info.child[1] = g->child[1];
		if (mc->leader == ni->node) {
			info.members = g->dir;
			info.nmembers = g->ndir;
		}
		hlist_for_each_entry_rcu(sub, grim_sub_bucket(gn, g->id), hnode)
			info.local += sub->group == g->id &&
				      grim_mc_sub_on(sub, ni->dev);
		info.queued = skb_queue_len(&g->q);
		info.rx = g->rx;
		info.delivered = g->delivered;
		err = fill(&info, arg);
		if (err)
			break;
		*skip = idx;
	}
	spin_unlock_bh(&mc->lock);
	rcu_read_unlock();
	return err;
}

/* A peer came up or went down: the root may have changed. */
void grim_mc_peers_changed(struct grim_ni *ni)
{
	WRITE_ONCE(ni->mc.peers_dirty, true);
	grim_mc_kick(&ni->mc, 0);
}

/* The netdev is set up (ndo_init). */
int grim_mc_init(struct grim_ni *ni)
{
	struct grim_mc *mc = &ni->mc;
	int err;

	spin_lock_init(&mc->lock);
	hash_init(mc->groups);
	INIT_LIST_HEAD(&mc->busy);
	skb_queue_head_init(&mc->ctlq);
	INIT_DELAYED_WORK(&mc->work, grim_mc_work);
	mc->tree.mc = mc;
	mc->root.mc = mc;
	mc->ltree.mc = mc;
	mc->ltree.link = true;
	mc->lroot.mc = mc;
	mc->lroot.link = true;
	err = grim_ep_init_dev(&mc->tree.ep, &grim_mc_tree_ops, ni->dev);
	if (!err)
		err = grim_ep_init_dev(&mc->root.ep, &grim_mc_root_ops,
				       ni->dev);
	if (!err)
		err = grim_ep_init_dev(&mc->ltree.ep, &grim_mc_tree_ops,
				       ni->dev);
	if (!err)
		err = grim_ep_init_dev(&mc->lroot.ep, &grim_mc_root_ops,
				       ni->dev);
	return err;
}

static void grim_mc_unbind(struct grim_mc *mc)
{
	grim_ep_unbind(&mc->tree.ep);
	grim_ep_unbind(&mc->root.ep);
	grim_ep_unbind(&mc->ltree.ep);
	grim_ep_unbind(&mc->lroot.ep);
}

/* The link comes up, its NI running. */
int grim_mc_open(struct grim_ni *ni)
{
	struct grim_mc *mc = &ni->mc;
	int err;

	err = grim_ep_bind(&mc->tree.ep, GRIM_PORT_MC);
	if (!err)
		err = grim_ep_bind(&mc->root.ep, GRIM_PORT_MC_ROOT);
	if (!err)
		err = grim_ep_bind(&mc->ltree.ep, GRIM_PORT_LMC);
	if (!err)
		err = grim_ep_bind(&mc->lroot.ep, GRIM_PORT_LMC_ROOT);
	if (err) {
		/* Safe on the endpoints not bound. */
		grim_mc_unbind(mc);
		return err;
	}
	mc->leader = 0;
	mc->leader_rgen = 0;
	mc->swept = jiffies;
	mc->rejoin = true;
	mc->peers_dirty = true;
	WRITE_ONCE(mc->up, true);
	grim_mc_kick(mc, 0);
	return 0;
}

/* The link goes down, before its NI stops. */
void grim_mc_stop(struct grim_ni *ni)
{
	struct grim_mc *mc = &ni->mc;

	WRITE_ONCE(mc->up, false);
	grim_mc_unbind(mc);
}

/* After the NI stopped: nothing delivers any more.  Forget the groups. */
void grim_mc_drain(struct grim_ni *ni)
{
	struct grim_mc *mc = &ni->mc;
	struct grim_mc_group *g;
	struct hlist_node *tmp;
	struct sk_buff *skb;
	int b;

	cancel_delayed_work_sync(&mc->work);
	spin_lock_bh(&mc->lock);
	while ((skb = skb_dequeue(&mc->ctlq))) {
		if (GRIM_MSG_CB(skb)->handler == GRIM_MC_RELAY)
			mc->held -= skb->len;
		kfree_skb(skb);
	}
	hash_for_each_safe(mc->groups, b, tmp, g, hnode)
		grim_mc_free_group(mc, g);
	WARN_ON_ONCE(mc->held || mc->logged);
	mc->held = 0;
	mc->logged = 0;
	WRITE_ONCE(mc->leader, 0);
	spin_unlock_bh(&mc->lock);
	wake_up_all(&grim_pernet(dev_net(ni->dev))->mc_wait);
}
