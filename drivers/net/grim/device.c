// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: the "grim" netdev.  `ip link add link eth0 name grim0 type grim`
 * binds an NI to an Ethernet device; the link address is the 4-byte node
 * id.  The NI runs while the link is up.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rhashtable.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>

#include "grim.h"
#include "netlink.h"

LIST_HEAD(grim_all_nis);	/* every NI, for lower-device events; RTNL */

const char grim_stat_names[GRIM_STAT_MAX][ETH_GSTRING_LEN] = {
	[GRIM_STAT_TX_MSGS] = "tx_msgs",
	[GRIM_STAT_TX_BYTES] = "tx_bytes",
	[GRIM_STAT_RX_MSGS] = "rx_msgs",
	[GRIM_STAT_RX_BYTES] = "rx_bytes",
	[GRIM_STAT_TX_FRAMES] = "tx_frames",
	[GRIM_STAT_RX_FRAMES] = "rx_frames",
	[GRIM_STAT_TX_ACKS] = "tx_acks",
	[GRIM_STAT_RX_ACKS] = "rx_acks",
	[GRIM_STAT_TX_NACKS] = "tx_nacks",
	[GRIM_STAT_RX_NACKS] = "rx_nacks",
	[GRIM_STAT_RETRANS_FRAMES] = "retransmit_frames",
	[GRIM_STAT_RTO_EVENTS] = "retransmit_timeouts",
	[GRIM_STAT_FAST_RETRANS] = "fast_retransmits",
	[GRIM_STAT_PROBES] = "retransmit_probes",
	[GRIM_STAT_DUP_FRAMES] = "rx_duplicate_frames",
	[GRIM_STAT_OOO_FRAMES] = "rx_out_of_order_frames",
	[GRIM_STAT_MSG_FAILED] = "tx_msgs_failed",
	[GRIM_STAT_PEER_UP] = "peer_up_events",
	[GRIM_STAT_PEER_DOWN] = "peer_down_events",
	[GRIM_STAT_PEER_RESET] = "peer_session_resets",
	[GRIM_STAT_TX_HELLOS] = "tx_hellos",
	[GRIM_STAT_RX_HELLOS] = "rx_hellos",
	[GRIM_STAT_TX_CSUM_OFFLOAD] = "tx_frames_csum_offload",
	[GRIM_STAT_RX_CSUM_LOCAL] = "rx_frames_csum_local",
	[GRIM_STAT_DROP_SHORT] = "rx_drop_truncated",
	[GRIM_STAT_DROP_MAGIC] = "rx_drop_bad_magic",
	[GRIM_STAT_DROP_VERSION] = "rx_drop_bad_version",
	[GRIM_STAT_DROP_LENGTH] = "rx_drop_bad_length",
	[GRIM_STAT_DROP_CSUM] = "rx_drop_bad_checksum",
	[GRIM_STAT_DROP_CLUSTER] = "rx_drop_other_cluster",
	[GRIM_STAT_DROP_NOT_OURS] = "rx_drop_not_for_us",
	[GRIM_STAT_DROP_UNKNOWN_PEER] = "rx_drop_unknown_peer",
	[GRIM_STAT_DROP_STALE] = "rx_drop_stale_session",
	[GRIM_STAT_DROP_TYPE] = "rx_drop_bad_type",
	[GRIM_STAT_DROP_FRAG] = "rx_drop_bad_fragment",
	[GRIM_STAT_DROP_MSG] = "rx_drop_bad_message",
	[GRIM_STAT_DROP_REFUSED] = "rx_drop_stream_refused",
	[GRIM_STAT_DROP_NO_EP] = "rx_drop_no_endpoint",
	[GRIM_STAT_DROP_NOMEM] = "rx_drop_no_memory",
	[GRIM_STAT_DROP_LIMIT] = "rx_drop_table_full",
	[GRIM_STAT_DROP_BAD_ACK] = "rx_drop_bad_ack",
	[GRIM_STAT_DROP_REJECTED] = "rx_drop_stream_rejected",
	[GRIM_STAT_DROP_AUTH] = "rx_drop_auth",
	[GRIM_STAT_DROP_REPLAY] = "rx_drop_replay",
	[GRIM_STAT_DROP_UNPROVEN] = "rx_drop_unproven",
	[GRIM_STAT_TX_REJECTS] = "tx_rejects",
	[GRIM_STAT_RX_REJECTS] = "rx_rejects",
	[GRIM_STAT_REASM_TIMEOUTS] = "rx_reassembly_timeouts",
	[GRIM_STAT_NODE_CONFLICTS] = "rx_node_id_conflicts",
	[GRIM_STAT_TX_ABORTS] = "tx_aborts",
	[GRIM_STAT_MSGS_RECUT] = "tx_msgs_recut",
	[GRIM_STAT_TX_ERRORS] = "tx_errors",
	[GRIM_STAT_AUTH_CHALLENGES] = "tx_auth_challenges",
	[GRIM_STAT_AUTH_NEW_RUNS] = "rx_auth_new_runs",
	[GRIM_STAT_DROP_BAD_MAC] = "rx_drop_bad_mac",
	[GRIM_STAT_TX_STREAMS_OPENED] = "tx_streams_opened",
	[GRIM_STAT_TX_STREAMS_CLOSED] = "tx_streams_closed",
	[GRIM_STAT_RX_STREAMS_OPENED] = "rx_streams_opened",
	[GRIM_STAT_RX_STREAMS_CLOSED] = "rx_streams_closed",
	[GRIM_STAT_TX_CLOSES] = "tx_closes",
	[GRIM_STAT_STREAM_REJECTS] = "tx_stream_rejects",
	[GRIM_STAT_STREAM_RENUMBERS] = "stream_renumbers",
	[GRIM_STAT_DROP_STALE_STREAM] = "rx_drop_stale_stream",
	[GRIM_STAT_DROP_NO_STREAM] = "rx_drop_no_stream",
	[GRIM_STAT_RX_STREAMS_EXPIRED] = "rx_streams_expired",
	[GRIM_STAT_CWND_CUTS] = "tx_cwnd_cuts",
	[GRIM_STAT_TX_QDISC_DROPS] = "tx_qdisc_drops",
	[GRIM_STAT_STREAM_QUERIES] = "rx_stream_queries",
	[GRIM_STAT_TX_DENIALS] = "tx_stream_denials",
	[GRIM_STAT_PEER_PROBES] = "tx_peer_probes",
	[GRIM_STAT_RETRANS_SPURIOUS] = "retransmit_spurious",
	[GRIM_STAT_DROP_PAST_REACH] = "rx_drop_past_reach",
	[GRIM_STAT_TX_BATCHES] = "tx_batches",
	[GRIM_STAT_RX_BATCHES] = "rx_batches",
	[GRIM_STAT_MC_INJECTED] = "mc_injected",
	[GRIM_STAT_MC_TICKETED] = "mc_ticketed",
	[GRIM_STAT_MC_RX] = "mc_rx",
	[GRIM_STAT_MC_TX_COPIES] = "mc_tx_copies",
	[GRIM_STAT_MC_DELIVERED] = "mc_delivered",
	[GRIM_STAT_MC_TREE_UPDATES] = "mc_tree_updates",
	[GRIM_STAT_MC_REFUSED] = "mc_refused",
	[GRIM_STAT_MC_DUPS] = "mc_dups",
	[GRIM_STAT_MC_STALE] = "mc_stale",
	[GRIM_STAT_MC_NO_MEMBERS] = "mc_no_members",
	[GRIM_STAT_MC_SKIPPED] = "mc_skipped",
	[GRIM_STAT_MC_REPAIRED] = "mc_repaired",
	[GRIM_STAT_MC_NOT_PARENT] = "mc_not_parent",
	[GRIM_STAT_MC_FORGOTTEN] = "mc_forgotten",
	[GRIM_STAT_MC_CTL_TX] = "mc_ctl_tx",
	[GRIM_STAT_MC_CTL_RX] = "mc_ctl_rx",
};

/* The core kernel's nearest reason for each frame the NI drops, for drop
 * monitors (skb:kfree_skb, dropwatch, perf); the counter named above is
 * the exact cause.  Drops with no core counterpart stay NOT_SPECIFIED: an
 * out-of-tree module cannot add a drop-reason subsystem of its own.
 */
static const u16 grim_drop_reasons[GRIM_STAT_MAX] = {
	[GRIM_STAT_DROP_SHORT] = SKB_DROP_REASON_PKT_TOO_SMALL,
	[GRIM_STAT_DROP_MAGIC] = SKB_DROP_REASON_INVALID_PROTO,
	[GRIM_STAT_DROP_VERSION] = SKB_DROP_REASON_UNHANDLED_PROTO,
	[GRIM_STAT_DROP_LENGTH] = SKB_DROP_REASON_HDR_TRUNC,
	[GRIM_STAT_DROP_CSUM] = SKB_DROP_REASON_SKB_CSUM,
	[GRIM_STAT_DROP_CLUSTER] = SKB_DROP_REASON_OTHERHOST,
	[GRIM_STAT_DROP_NOT_OURS] = SKB_DROP_REASON_OTHERHOST,
	[GRIM_STAT_DROP_TYPE] = SKB_DROP_REASON_UNHANDLED_PROTO,
	[GRIM_STAT_DROP_FRAG] = SKB_DROP_REASON_INVALID_PROTO,
	[GRIM_STAT_DROP_MSG] = SKB_DROP_REASON_INVALID_PROTO,
	[GRIM_STAT_DROP_REFUSED] = SKB_DROP_REASON_SOCKET_RCVBUFF,
	[GRIM_STAT_DROP_NO_EP] = SKB_DROP_REASON_NO_SOCKET,
	[GRIM_STAT_DROP_NOMEM] = SKB_DROP_REASON_NOMEM,
	[GRIM_STAT_DROP_LIMIT] = SKB_DROP_REASON_PROTO_MEM,
	[GRIM_STAT_DROP_BAD_ACK] = SKB_DROP_REASON_INVALID_PROTO,
	[GRIM_STAT_DROP_NO_STREAM] = SKB_DROP_REASON_PROTO_MEM,
	[GRIM_STAT_DROP_PAST_REACH] = SKB_DROP_REASON_PROTO_MEM,
};

enum skb_drop_reason grim_drop_reason(enum grim_stat s)
{
	if (s < GRIM_STAT_MAX && grim_drop_reasons[s])
		return grim_drop_reasons[s];
	return SKB_DROP_REASON_NOT_SPECIFIED;
}

/* The carrier follows the lower device's, unless a node id conflict
 * took it (grim_ni_yield()): only a new node id gives it back.  RTNL held.
 */
static void grim_carrier_sync(struct grim_ni *ni)
{
	netif_stacked_transfer_operstate(ni->lower, ni->dev);
	/* A yield meanwhile set the flag, then took the carrier: one of
	 * the two sees the other.
	 */
	smp_mb();
	if (READ_ONCE(ni->conflict))
		netif_carrier_off(ni->dev);
}

static int grim_open(struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);
	int err;

	err = grim_ni_start(ni);
	if (err)
		return err;
	err = grim_ip_open(ni);
	if (err) {
		grim_ni_stop(ni);
		grim_ip_drain(ni);
		return err;
	}
	err = grim_mc_open(ni);
	if (err) {
		grim_ip_stop(ni);
		grim_ni_stop(ni);
		grim_ip_drain(ni);
		grim_mc_drain(ni);
		return err;
	}
	grim_carrier_sync(ni);
	return 0;
}

static int grim_stop(struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);

	grim_mc_stop(ni);
	grim_ip_stop(ni);
	grim_ni_stop(ni);
	grim_ip_drain(ni);
	grim_mc_drain(ni);
	return 0;
}

/* Sum the NI's per-CPU counters into @out[GRIM_STAT_MAX]. */
void grim_ni_read_stats(const struct grim_ni *ni, u64 *out)
{
	u64 v[GRIM_STAT_MAX];
	unsigned int start;
	int cpu, i;

	memset(out, 0, sizeof(v));
	for_each_possible_cpu(cpu) {
		const struct grim_pcpu_stats *st = per_cpu_ptr(ni->stats, cpu);

		do {
			start = u64_stats_fetch_begin(&st->syncp);
			for (i = 0; i < GRIM_STAT_MAX; i++)
				v[i] = u64_stats_read(&st->c[i]);
		} while (u64_stats_fetch_retry(&st->syncp, start));
		for (i = 0; i < GRIM_STAT_MAX; i++)
			out[i] += v[i];
	}
}

static void grim_get_stats64(struct net_device *dev,
			     struct rtnl_link_stats64 *s)
{
	struct grim_ni *ni = netdev_priv(dev);
	u64 v[GRIM_STAT_MAX], drops = 0;
	int i;

	grim_ni_read_stats(ni, v);
	s->tx_packets = v[GRIM_STAT_TX_MSGS];
	s->tx_bytes = v[GRIM_STAT_TX_BYTES];
	s->rx_packets = v[GRIM_STAT_RX_MSGS];
	s->rx_bytes = v[GRIM_STAT_RX_BYTES];
	for (i = GRIM_STAT_DROP_SHORT; i <= GRIM_STAT_DROP_UNPROVEN; i++)
		drops += v[i];
	s->rx_dropped = drops;
	s->rx_crc_errors = v[GRIM_STAT_DROP_CSUM];
	s->rx_errors = s->rx_crc_errors + v[GRIM_STAT_DROP_LENGTH];
	s->tx_errors = v[GRIM_STAT_TX_ERRORS] + v[GRIM_STAT_MSG_FAILED];
}

static int grim_set_mac_address(struct net_device *dev, void *p)
{
	struct grim_ni *ni = netdev_priv(dev);
	struct sockaddr *sa = p;
	u32 node;

	if (netif_running(dev))
		return -EBUSY;
	node = get_unaligned_be32(sa->sa_data);
	if (!node || node == GRIM_NODE_ANY)
		return -EADDRNOTAVAIL;
	ni->node = node;
	dev_addr_set(dev, sa->sa_data);
	return 0;
}

static int grim_get_iflink(const struct net_device *dev)
{
	const struct grim_ni *ni = netdev_priv(dev);

	return ni->lower->ifindex;
}

/* Before the device is registered; grim_destructor() frees it, also when
 * registration fails after this.
 */
static int grim_dev_init(struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);
	int err;

	ni->stats = netdev_alloc_pcpu_stats(struct grim_pcpu_stats);
	if (!ni->stats)
		return -ENOMEM;
	err = rhashtable_init(&ni->txs_ht, &grim_txs_params);
	if (err)
		return err;
	err = rhashtable_init(&ni->rxs_ht, &grim_rxs_params);
	if (err) {
		rhashtable_destroy(&ni->txs_ht);
		return err;
	}
	ni->tables = true;
	err = grim_mc_init(ni);
	if (err)
		return err;
	return grim_ip_init(ni);
}

static const struct net_device_ops grim_netdev_ops = {
	.ndo_init		= grim_dev_init,
	.ndo_open		= grim_open,
	.ndo_stop		= grim_stop,
	.ndo_start_xmit		= grim_ip_xmit,
	.ndo_get_stats64	= grim_get_stats64,
	.ndo_set_mac_address	= grim_set_mac_address,
	.ndo_get_iflink		= grim_get_iflink,
};

static void grim_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	struct grim_ni *ni = netdev_priv(dev);

	strscpy(info->driver, GRIM_DRV_NAME, sizeof(info->driver));
	strscpy(info->version, GRIM_DRV_VERSION, sizeof(info->version));
	snprintf(info->fw_version, sizeof(info->fw_version), "grim-wire-%u",
		 GRIM_WIRE_VERSION);
	strscpy(info->bus_info, ni->lower->name, sizeof(info->bus_info));
}

static int grim_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? GRIM_STAT_MAX : -EOPNOTSUPP;
}

static void grim_get_strings(struct net_device *dev, u32 sset, u8 *buf)
{
	if (sset == ETH_SS_STATS)
		memcpy(buf, grim_stat_names, sizeof(grim_stat_names));
}

static void grim_get_ethtool_stats(struct net_device *dev,
				   struct ethtool_stats *stats, u64 *data)
{
	grim_ni_read_stats(netdev_priv(dev), data);
}

/* NI queue sizes: TX is the window, the frames each stream may have in
 * flight unacknowledged; RX is the number of frames a stream holds past a
 * gap, fixed by the NI.
 */
static void grim_get_ringparam(struct net_device *dev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct grim_ni *ni = netdev_priv(dev);

	ring->tx_max_pending = GRIM_MAX_WINDOW;
	ring->tx_pending = READ_ONCE(ni->window);
	ring->rx_max_pending = GRIM_SACK_REACH;
	ring->rx_pending = GRIM_SACK_REACH;
}

static int grim_set_ringparam(struct net_device *dev,
			      struct ethtool_ringparam *ring,
			      struct kernel_ethtool_ringparam *kring,
			      struct netlink_ext_ack *extack)
{
	struct grim_ni *ni = netdev_priv(dev);

	if (ring->rx_pending != GRIM_SACK_REACH || ring->rx_mini_pending ||
	    ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG(extack,
			       "only the TX window (frames in flight per stream) can be set");
		return -EOPNOTSUPP;
	}
	if (!ring->tx_pending) {
		NL_SET_ERR_MSG(extack, "the TX window needs at least one frame");
		return -EINVAL;
	}
	WRITE_ONCE(ni->window, ring->tx_pending);
	return 0;
}

/* Logical channels: "other" counts the namespace's bound endpoints,
 * each with its port; "combined" the channels IP spreads its flows over.
 */
static void grim_get_channels(struct net_device *dev,
			      struct ethtool_channels *ch)
{
	struct grim_ni *ni = netdev_priv(dev);
	u32 n = grim_ep_count(dev_net(dev));

	ch->max_other = U16_MAX;
	ch->other_count = min_t(u32, n, U16_MAX);
	ch->max_combined = GRIM_IP_CHANNELS_MAX;
	ch->combined_count = READ_ONCE(ni->ip.nchan);
}

static int grim_set_channels(struct net_device *dev,
			     struct ethtool_channels *ch)
{
	struct grim_ni *ni = netdev_priv(dev);
	struct ethtool_channels now = { };

	grim_get_channels(dev, &now);
	if (ch->other_count != now.other_count || ch->rx_count ||
	    ch->tx_count || !ch->combined_count)
		return -EINVAL;
	WRITE_ONCE(ni->ip.nchan, ch->combined_count);
	return 0;
}

static const struct ethtool_ops grim_ethtool_ops = {
	.get_drvinfo		= grim_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_sset_count		= grim_get_sset_count,
	.get_strings		= grim_get_strings,
	.get_ethtool_stats	= grim_get_ethtool_stats,
	.get_ringparam		= grim_get_ringparam,
	.set_ringparam		= grim_set_ringparam,
	.get_channels		= grim_get_channels,
	.set_channels		= grim_set_channels,
};

/* The last reference to the grim netdev is gone: so is the NI's use of
 * its lower device.
 */
static void grim_destructor(struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);

	grim_keys_free(ni);
	if (ni->lower_held)
		netdev_put(ni->lower, &ni->lower_tracker);
	ni->lower_held = false;
	free_percpu(ni->stats);
	ni->stats = NULL;
	if (ni->tables) {
		/* Empty: the NI stopped, and freed every stream. */
		rhashtable_destroy(&ni->txs_ht);
		rhashtable_destroy(&ni->rxs_ht);
		ni->tables = false;
	}
}

static void grim_setup(struct net_device *dev)
{
	struct grim_ni *ni = netdev_priv(dev);

	dev->netdev_ops = &grim_netdev_ops;
	dev->ethtool_ops = &grim_ethtool_ops;
	dev->needs_free_netdev = true;
	dev->priv_destructor = grim_destructor;
	dev->type = ARPHRD_NONE;
	dev->addr_len = sizeof(__be32);
	dev->hard_header_len = 0;
	dev->mtu = GRIM_MAX_PAYLOAD;
	dev->min_mtu = 68;
	dev->max_mtu = GRIM_MAX_PAYLOAD;
	grim_ip_setup(dev);
	dev->priv_flags |= IFF_NO_QUEUE;
	grim_set_netns_local(dev);
	memset(dev->broadcast, 0xff, sizeof(__be32));

	ni->dev = dev;
	spin_lock_init(&ni->lock);
	timer_setup(&ni->hello_timer, grim_hello_timer, 0);
	INIT_LIST_HEAD(&ni->reap);
	INIT_WORK(&ni->reap_work, grim_ni_reap_work);
	spin_lock_init(&ni->reap_lock);
	INIT_LIST_HEAD(&ni->txs_reap);
	ni->hello_ms = GRIM_DEF_HELLO_MS;
	ni->dead_ms = GRIM_DEF_DEAD_MS;
	ni->rto_ms = GRIM_DEF_RTO_MS;
	ni->stream_idle_ms = GRIM_DEF_STREAM_IDLE_MS;
	ni->peer_rate = GRIM_DEF_PEER_RATE;
	ni->window = GRIM_DEF_WINDOW;
	ni->data_crc = GRIM_DATA_CRC_ON;
}

static struct netlink_range_validation grim_node_range = {
	.min = 1, .max = GRIM_NODE_ANY - 1,
};

static struct netlink_range_validation grim_dead_range = {
	.min = 30, .max = 600000,
};

/* Not const: 6.1's nla_policy points to a writable one. */
static struct netlink_range_validation grim_idle_range = {
	.min = 10, .max = GRIM_MAX_STREAM_IDLE_MS,
};

static const struct nla_policy grim_policy[IFLA_GRIM_MAX + 1] = {
	[IFLA_GRIM_NODE]	= NLA_POLICY_FULL_RANGE(NLA_U32, &grim_node_range),
	[IFLA_GRIM_CLUSTER]	= { .type = NLA_U32 },
	[IFLA_GRIM_HELLO_MS]	= NLA_POLICY_RANGE(NLA_U32, 10, 30000),
	[IFLA_GRIM_DEAD_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &grim_dead_range),
	[IFLA_GRIM_RTO_MS]	= NLA_POLICY_RANGE(NLA_U32, 1, GRIM_MAX_RTO_MS),
	[IFLA_GRIM_WINDOW]	= NLA_POLICY_RANGE(NLA_U32, 1, GRIM_MAX_WINDOW),
	[IFLA_GRIM_DATA_CRC]	= NLA_POLICY_MAX(NLA_U8, GRIM_DATA_CRC_OFFLOAD),
	[IFLA_GRIM_STREAM_IDLE_MS] = NLA_POLICY_FULL_RANGE(NLA_U32,
							   &grim_idle_range),
	[IFLA_GRIM_PEER_RATE]	= NLA_POLICY_RANGE(NLA_U32, 1, GRIM_MAX_PEERS),
};

static int grim_validate(struct nlattr *tb[], struct nlattr *data[],
			 struct netlink_ext_ack *extack)
{
	if (tb[IFLA_ADDRESS]) {
		u32 node;

		if (nla_len(tb[IFLA_ADDRESS]) != sizeof(__be32)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "GRIM link address is a 4-byte node id");
			return -EINVAL;
		}
		node = get_unaligned_be32(nla_data(tb[IFLA_ADDRESS]));
		if (!node || node == GRIM_NODE_ANY) {
			NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_ADDRESS],
					    "node id 0 and 255.255.255.255 are reserved");
			return -EADDRNOTAVAIL;
		}
	}
	return 0;
}

/* Apply the IFLA_GRIM_* tunables.  RTNL held. */
static int grim_apply(struct grim_ni *ni, struct nlattr *data[],
		      struct netlink_ext_ack *extack)
{
	u32 hello = ni->hello_ms, dead = ni->dead_ms;

	if (!data)
		return 0;
	if (data[IFLA_GRIM_HELLO_MS])
		hello = nla_get_u32(data[IFLA_GRIM_HELLO_MS]);
	if (data[IFLA_GRIM_DEAD_MS])
		dead = nla_get_u32(data[IFLA_GRIM_DEAD_MS]);
	if (dead < 3 * hello) {
		NL_SET_ERR_MSG(extack, "dead time must be at least 3 hello intervals");
		return -EINVAL;
	}
	if ((data[IFLA_GRIM_NODE] || data[IFLA_GRIM_CLUSTER]) &&
	    netif_running(ni->dev)) {
		NL_SET_ERR_MSG(extack, "node and cluster change only while the link is down");
		return -EBUSY;
	}
	WRITE_ONCE(ni->hello_ms, hello);
	WRITE_ONCE(ni->dead_ms, dead);
	if (data[IFLA_GRIM_RTO_MS])
		WRITE_ONCE(ni->rto_ms, nla_get_u32(data[IFLA_GRIM_RTO_MS]));
	if (data[IFLA_GRIM_WINDOW])
		WRITE_ONCE(ni->window, nla_get_u32(data[IFLA_GRIM_WINDOW]));
	if (data[IFLA_GRIM_STREAM_IDLE_MS])
		WRITE_ONCE(ni->stream_idle_ms,
			   nla_get_u32(data[IFLA_GRIM_STREAM_IDLE_MS]));
	if (data[IFLA_GRIM_PEER_RATE])
		WRITE_ONCE(ni->peer_rate,
			   nla_get_u32(data[IFLA_GRIM_PEER_RATE]));
	if (data[IFLA_GRIM_DATA_CRC])
		WRITE_ONCE(ni->data_crc,
			   nla_get_u8(data[IFLA_GRIM_DATA_CRC]));
	if (data[IFLA_GRIM_CLUSTER])
		ni->cluster = nla_get_u32(data[IFLA_GRIM_CLUSTER]);
	if (data[IFLA_GRIM_NODE]) {
		__be32 addr = cpu_to_be32(nla_get_u32(data[IFLA_GRIM_NODE]));

		ni->node = nla_get_u32(data[IFLA_GRIM_NODE]);
		dev_addr_set(ni->dev, (u8 *)&addr);
	}
	return 0;
}

static struct grim_ni *grim_ni_of_lower(const struct net_device *lower)
{
	struct grim_ni *ni;

	list_for_each_entry(ni, &grim_all_nis, all) {
		if (ni->lower == lower)
			return ni;
	}
	return NULL;
}

static int grim_newlink(struct net *src_net, struct net_device *dev,
			struct nlattr *tb[], struct nlattr *data[],
			struct netlink_ext_ack *extack)
{
	struct grim_ni *ni = netdev_priv(dev);
	struct net_device *lower;
	int err;

	if (!tb[IFLA_LINK]) {
		NL_SET_ERR_MSG(extack, "a GRIM link needs a lower Ethernet device (link DEV)");
		return -EINVAL;
	}
	lower = __dev_get_by_index(src_net, nla_get_u32(tb[IFLA_LINK]));
	if (!lower) {
		NL_SET_ERR_MSG(extack, "lower device not found");
		return -ENODEV;
	}
	if (lower->type != ARPHRD_ETHER || lower->addr_len != ETH_ALEN ||
	    (lower->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "lower device must be Ethernet");
		return -EOPNOTSUPP;
	}
	if (grim_ni_of_lower(lower)) {
		NL_SET_ERR_MSG(extack, "lower device already carries a GRIM link");
		return -EBUSY;
	}
	ni->lower = lower;

	if (tb[IFLA_ADDRESS]) {
		ni->node = get_unaligned_be32(dev->dev_addr);
	} else {
		/* Default node id: the low 32 bits of the lower MAC. */
		ni->node = get_unaligned_be32(lower->dev_addr + 2);
		if (!ni->node || ni->node == GRIM_NODE_ANY) {
			NL_SET_ERR_MSG(extack, "lower MAC gives a reserved node id; set one");
			return -EADDRNOTAVAIL;
		}
		dev_addr_set(dev, lower->dev_addr + 2);
	}
	err = grim_apply(ni, data, extack);
	if (err)
		return err;
	/* Room for the frame headers in front of IP's packets: one that
	 * fits a frame goes without a copy.
	 */
	dev->needed_headroom = LL_RESERVED_SPACE(lower) + GRIM_DATA_HLEN +
			       GRIM_MSG_HLEN;

	err = register_netdevice(dev);
	if (err)
		return err;
	/* RTNL is held: the lower cannot have gone since we looked it up.
	 * Held until grim_destructor(), like a VLAN holds its real device.
	 */
	netdev_hold(lower, &ni->lower_tracker, GFP_KERNEL);
	ni->lower_held = true;
	err = netdev_upper_dev_link(lower, dev, extack);
	if (err) {
		unregister_netdevice(dev);
		return err;
	}
	list_add_rcu(&ni->list, &grim_pernet(dev_net(dev))->nis);
	list_add(&ni->all, &grim_all_nis);
	netif_stacked_transfer_operstate(lower, dev);
	grim_nl_link_event(ni, true);
	return 0;
}

static void grim_dellink(struct net_device *dev, struct list_head *head)
{
	struct grim_ni *ni = netdev_priv(dev);

	grim_nl_link_event(ni, false);
	list_del_rcu(&ni->list);
	list_del(&ni->all);
	netdev_upper_dev_unlink(ni->lower, dev);
	unregister_netdevice_queue(dev, head);
}

static int grim_changelink(struct net_device *dev, struct nlattr *tb[],
			   struct nlattr *data[],
			   struct netlink_ext_ack *extack)
{
	return grim_apply(netdev_priv(dev), data, extack);
}

static size_t grim_get_size(const struct net_device *dev)
{
	return 8 * nla_total_size(sizeof(u32)) + nla_total_size(sizeof(u8));
}

static int grim_fill_info(struct sk_buff *skb, const struct net_device *dev)
{
	const struct grim_ni *ni = netdev_priv(dev);

	if (nla_put_u32(skb, IFLA_GRIM_NODE, ni->node) ||
	    nla_put_u32(skb, IFLA_GRIM_CLUSTER, ni->cluster) ||
	    nla_put_u32(skb, IFLA_GRIM_HELLO_MS, ni->hello_ms) ||
	    nla_put_u32(skb, IFLA_GRIM_DEAD_MS, ni->dead_ms) ||
	    nla_put_u32(skb, IFLA_GRIM_RTO_MS, ni->rto_ms) ||
	    nla_put_u32(skb, IFLA_GRIM_WINDOW, ni->window) ||
	    nla_put_u32(skb, IFLA_GRIM_STREAM_IDLE_MS, ni->stream_idle_ms) ||
	    nla_put_u32(skb, IFLA_GRIM_PEER_RATE, ni->peer_rate) ||
	    nla_put_u8(skb, IFLA_GRIM_DATA_CRC, ni->data_crc))
		return -EMSGSIZE;
	return 0;
}

static struct net *grim_get_link_net(const struct net_device *dev)
{
	const struct grim_ni *ni = netdev_priv(dev);

	return dev_net(ni->lower);
}

static struct rtnl_link_ops grim_link_ops __read_mostly;

bool grim_dev_is_ni(const struct net_device *dev)
{
	return dev->rtnl_link_ops == &grim_link_ops;
}

static struct rtnl_link_ops grim_link_ops __read_mostly = {
	.kind		= GRIM_DRV_NAME,
	.priv_size	= sizeof(struct grim_ni),
	.setup		= grim_setup,
	.maxtype	= IFLA_GRIM_MAX,
	.policy		= grim_policy,
	.validate	= grim_validate,
	.newlink	= grim_newlink,
	.changelink	= grim_changelink,
	.dellink	= grim_dellink,
	.get_size	= grim_get_size,
	.fill_info	= grim_fill_info,
	.get_link_net	= grim_get_link_net,
};

/* The lower device goes away (or leaves its namespace): so does the NI. */
static int grim_lower_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct grim_ni *ni;
	LIST_HEAD(kill);

	if (dev->rtnl_link_ops == &grim_link_ops)
		return NOTIFY_DONE;
	ni = grim_ni_of_lower(dev);
	if (!ni)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		grim_dellink(ni->dev, &kill);
		unregister_netdevice_many(&kill);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		grim_carrier_sync(ni);
		break;
	case NETDEV_CHANGEMTU:
		grim_ni_lower_mtu(ni);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block grim_notifier = {
	.notifier_call = grim_lower_event,
};

int grim_device_init(void)
{
	int err;

	err = register_netdevice_notifier(&grim_notifier);
	if (err)
		return err;
	err = rtnl_link_register(&grim_link_ops);
	if (err)
		unregister_netdevice_notifier(&grim_notifier);
	return err;
}

void grim_device_exit(void)
{
	rtnl_link_unregister(&grim_link_ops);
	unregister_netdevice_notifier(&grim_notifier);
}
