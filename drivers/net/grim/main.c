// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI driver: module entry, per-namespace NI lists, and the routing
 * of a destination node to the NI that reaches it.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rculist.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/rtnetlink.h>

#include "grim.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
#include "netlink.h"

static unsigned int grim_net_id __read_mostly;
struct kmem_cache *grim_txs_cache __read_mostly;
struct kmem_cache *grim_rxs_cache __read_mostly;

static int grim_stream_caches_init(void)
{
	grim_txs_cache = KMEM_CACHE(grim_txs, 0);
	grim_rxs_cache = KMEM_CACHE(grim_rxs, 0);
	if (grim_txs_cache && grim_rxs_cache)
		return 0;
	kmem_cache_destroy(grim_txs_cache);
	kmem_cache_destroy(grim_rxs_cache);
	return -ENOMEM;
}

/* After rcu_barrier(): streams are freed by RCU callback. */
static void grim_stream_caches_exit(void)
{
	kmem_cache_destroy(grim_txs_cache);
	kmem_cache_destroy(grim_rxs_cache);
}

struct grim_net *grim_pernet(struct net *net)
{
	return net_generic(net, grim_net_id);
}

/* The running NI of @net that reaches @node, if any.  RCU held; the NI
 * (and its lower device) stays valid until rcu_read_unlock().
 */
struct grim_ni *grim_ni_find(struct net *net, u32 node)
{
	struct grim_ni *ni;

	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (!READ_ONCE(ni->running) || READ_ONCE(ni->conflict))
			continue;
		if (ni->node == node || grim_peer_lookup(ni, node))
			return ni;
	}
	return NULL;
}

u32 grim_ni_local_node(struct net *net)
{
	struct grim_ni *ni;
	u32 node = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list) {
		if (READ_ONCE(ni->running)) {
			node = ni->node;
			break;
		}
	}
	rcu_read_unlock();
	return node;
}
EXPORT_SYMBOL_GPL(grim_ni_local_node);

unsigned int grim_ni_headroom(struct net *net)
{
	unsigned int hh = LL_MAX_HEADER;
	struct grim_ni *ni;

	rcu_read_lock();
	list_for_each_entry_rcu(ni, &grim_pernet(net)->nis, list)
		hh = max_t(unsigned int, hh, LL_RESERVED_SPACE(ni->lower));
	rcu_read_unlock();
	return hh + GRIM_DATA_HLEN + GRIM_MSG_HLEN;
}
EXPORT_SYMBOL_GPL(grim_ni_headroom);

static int __net_init grim_net_init(struct net *net)
{
	INIT_LIST_HEAD(&grim_pernet(net)->nis);
	grim_ports_init(grim_pernet(net));
	grim_mc_net_init(grim_pernet(net));
	return 0;
}

static void __net_exit grim_net_exit(struct net *net)
{
	WARN_ON_ONCE(!list_empty(&grim_pernet(net)->nis));
	WARN_ON_ONCE(grim_pernet(net)->nports);
}

static struct pernet_operations grim_net_ops = {
	.init = grim_net_init,
	.exit = grim_net_exit,
	.id = &grim_net_id,
	.size = sizeof(struct grim_net),
};

/* The NI half of the module's init: everything but the socket family,
 * which net/grim registers on top of it (net/grim/module.c).
 */
int __init grim_ni_init(void)
{
	int err;

	err = grim_crc_init();
	if (err)
		return err;
	err = grim_stream_caches_init();
	if (err)
		goto err_crc;
	err = register_pernet_subsys(&grim_net_ops);
	if (err)
		goto err_caches;
	/* The ports (in the namespace state above) and the netlink family
	 * exist before the first link can take a frame or be dumped, and
	 * go after the last one stopped: every frame that opens a stream
	 * or starts a message looks its port up.
	 */
	err = grim_nl_init();
	if (err)
		goto err_pernet;
	grim_offload_init();
	err = grim_device_init();
	if (err)
		goto err_offload;
	pr_info("GRIM NI driver %s, wire version %u, CRC32C by %s\n",
		GRIM_DRV_VERSION, GRIM_WIRE_VERSION, grim_crc_driver());
	return 0;

err_offload:
	grim_offload_exit();
	grim_nl_exit();
err_pernet:
	unregister_pernet_subsys(&grim_net_ops);
	/* Links made before a later step failed may have left keys and
	 * streams to free by RCU callback, as on exit.
	 */
	rcu_barrier();
	grim_auth_exit();
err_caches:
	grim_stream_caches_exit();
err_crc:
	grim_crc_exit();
	return err;
}

void grim_ni_exit(void)
{
	grim_device_exit();
	grim_offload_exit();
	grim_nl_exit();
	unregister_pernet_subsys(&grim_net_ops);
	/* Keys removed from a link, and closed streams, go by RCU
	 * callback.
	 */
	rcu_barrier();
	grim_auth_exit();
	grim_stream_caches_exit();
	grim_crc_exit();
}

MODULE_ALIAS_RTNL_LINK(GRIM_DRV_NAME);
MODULE_SOFTDEP("pre: crc32c");
