// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI driver: endpoints (include/net/grim.h).  Every namespace has a
 * table of bound ports, and every link a table of its own endpoints'
 * (ports GRIM_PORT_DEV on); a frame that opens a stream or starts a
 * message finds its receiver there, whatever kind of endpoint it is.
 */
#include <linux/hash.h>
#include <linux/random.h>
#include <linux/rculist.h>

#include "grim.h"

static struct hlist_head *grim_port_bucket(struct grim_net *gn, u16 port)
{
	return &gn->ports[hash_32(port, GRIM_PORT_HASH_BITS)];
}

/* RCU or gn->ports_lock held. */
static struct grim_ep *grim_port_lookup(struct grim_net *gn, u16 port)
{
	struct grim_ep *ep;

	hlist_for_each_entry_rcu(ep, grim_port_bucket(gn, port), bind_node,
				 lockdep_is_held(&gn->ports_lock)) {
		if (ep->port == port)
			return ep;
	}
	return NULL;
}

void grim_ep_init(struct grim_ep *ep, const struct grim_ep_ops *ops,
		  struct net *net)
{
	ep->ops = ops;
	write_pnet(&ep->net, net);
	ep->dev = NULL;
	ep->port = 0;
	INIT_HLIST_NODE(&ep->bind_node);
	INIT_LIST_HEAD(&ep->groups);
	ep->ngroups = 0;
}
EXPORT_SYMBOL_GPL(grim_ep_init);

int grim_ep_init_dev(struct grim_ep *ep, const struct grim_ep_ops *ops,
		     struct net_device *dev)
{
	if (!grim_dev_is_ni(dev))
		return -ENODEV;
	grim_ep_init(ep, ops, dev_net(dev));
	ep->dev = dev;
	return 0;
}
EXPORT_SYMBOL_GPL(grim_ep_init_dev);

static struct grim_ep __rcu **grim_dev_slot(struct grim_ep *ep, u16 port)
{
	struct grim_ni *ni = netdev_priv(ep->dev);

	return &ni->dev_eps[port - GRIM_PORT_DEV];
}

static int grim_ep_bind_dev(struct grim_ep *ep, u16 port)
{
	struct grim_ep __rcu **slot;

	if (port < GRIM_PORT_DEV)
		return -EADDRNOTAVAIL;
	slot = grim_dev_slot(ep, port);
	if (rcu_access_pointer(*slot))
		return -EADDRINUSE;
	WRITE_ONCE(ep->port, port);
	rcu_assign_pointer(*slot, ep);
	return 0;
}

int grim_ep_bind(struct grim_ep *ep, u16 port)
{
	struct grim_net *gn = grim_pernet(read_pnet(&ep->net));
	u32 span = GRIM_PORT_DEV - GRIM_PORT_EPHEMERAL, i;
	int err = 0;

	spin_lock_bh(&gn->ports_lock);
	if (ep->port) {
		err = -EINVAL;
		goto out;
	}
	if (ep->dev) {
		err = grim_ep_bind_dev(ep, port);
		goto out;
	}
	if (port >= GRIM_PORT_DEV) {
		err = -EADDRNOTAVAIL;
		goto out;
	}
	if (!port) {
		u32 start = get_random_u32_below(span);

		err = -EADDRINUSE;
		for (i = 0; i < span; i++) {
			u16 p = GRIM_PORT_EPHEMERAL + (start + i) % span;

			if (!grim_port_lookup(gn, p)) {
				port = p;
				err = 0;
				break;
			}
		}
		if (err)
			goto out;
	} else if (grim_port_lookup(gn, port)) {
		err = -EADDRINUSE;
		goto out;
	}
	WRITE_ONCE(ep->port, port);
	hlist_add_head_rcu(&ep->bind_node, grim_port_bucket(gn, port));
	WRITE_ONCE(gn->nports, gn->nports + 1);
out:
	spin_unlock_bh(&gn->ports_lock);
	return err;
}
EXPORT_SYMBOL_GPL(grim_ep_bind);

void grim_ep_unbind(struct grim_ep *ep)
{
	struct grim_net *gn = grim_pernet(read_pnet(&ep->net));

	grim_ep_leave_all(ep);

	spin_lock_bh(&gn->ports_lock);
	if (ep->dev) {
		if (ep->port &&
		    rcu_access_pointer(*grim_dev_slot(ep, ep->port)) == ep) {
			RCU_INIT_POINTER(*grim_dev_slot(ep, ep->port), NULL);
			WRITE_ONCE(ep->port, 0);
		}
	} else if (!hlist_unhashed(&ep->bind_node)) {
		hlist_del_init_rcu(&ep->bind_node);
		WRITE_ONCE(gn->nports, gn->nports - 1);
	}
	spin_unlock_bh(&gn->ports_lock);
}
EXPORT_SYMBOL_GPL(grim_ep_unbind);

/* The endpoint bound to @port for frames that came through @ni,
 * referenced; NULL if none, or if it is going away.
 */
struct grim_ep *grim_ep_get(struct grim_ni *ni, u16 port)
{
	struct grim_ep *ep;

	rcu_read_lock();
	if (port >= GRIM_PORT_DEV)
		ep = rcu_dereference(ni->dev_eps[port - GRIM_PORT_DEV]);
	else
		ep = grim_port_lookup(grim_pernet(dev_net(ni->dev)), port);
	if (ep && !ep->ops->get(ep))
		ep = NULL;
	rcu_read_unlock();
	return ep;
}

/* How many endpoints of @net are bound. */
u32 grim_ep_count(struct net *net)
{
	return READ_ONCE(grim_pernet(net)->nports);
}

/* Report the bound endpoints of @net to @fn, skipping the first @skip,
 * in hash order, until @fn returns non-zero.  Returns how many were
 * walked past, the @skip of the next call.  For netlink dumps.
 */
int grim_ep_walk(struct net *net, int skip,
		 int (*fn)(const struct grim_ep_info *info, void *arg),
		 void *arg)
{
	struct grim_net *gn = grim_pernet(net);
	struct grim_ep_info info;
	struct grim_ep *ep;
	int i, idx = 0;

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(gn->ports); i++) {
		hlist_for_each_entry_rcu(ep, &gn->ports[i], bind_node) {
			if (idx < skip) {
				idx++;
				continue;
			}
			memset(&info, 0, sizeof(info));
			info.port = READ_ONCE(ep->port);
			ep->ops->info(ep, &info);
			if (fn(&info, arg))
				goto out;
			idx++;
		}
	}
out:
	rcu_read_unlock();
	return idx;
}

void grim_ports_init(struct grim_net *gn)
{
	int i;

	spin_lock_init(&gn->ports_lock);
	for (i = 0; i < ARRAY_SIZE(gn->ports); i++)
		INIT_HLIST_HEAD(&gn->ports[i]);
}
