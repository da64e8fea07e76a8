/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GRIM NI driver: internal state shared by the files of the driver.
 *
 * An NI (struct grim_ni) is the private part of a "grim" netdev bound to a
 * lower Ethernet device.  It knows its peers (struct grim_peer); between
 * this NI and a peer, every pair of logical channels is an independent
 * stream with its own sequence space: struct grim_txs at the sender and
 * struct grim_rxs at the receiver.  A NACK or a loss on one stream never
 * holds back another.
 */
#ifndef _DRIVERS_NET_GRIM_H
#define _DRIVERS_NET_GRIM_H

#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/grim.h>
#include <uapi/linux/grim.h>

#define GRIM_DRV_NAME		"grim"
/* GRIM_VERSION comes from the top-level VERSION file, through Kbuild. */
#define GRIM_DRV_VERSION	GRIM_VERSION

#define GRIM_PEER_HASH_BITS	6
#define GRIM_MAX_PEERS		1024
#define GRIM_MIN_LOWER_MTU	256
#define GRIM_ACK_EVERY		16	/* frames between ACKs inside a message */
#define GRIM_ACK_DELAY		1	/* jiffies an ACK may wait for a reply */
/* The least time a hole may be overtaken by frames sent after it before
 * it counts as lost, in the frames' clock (grim_ts_now(): about µs).
 */
#define GRIM_DUPACK_THRESH	3	/* frames held past a hole: lost */
#define GRIM_REO_MIN		64
#define GRIM_REO_SHIFT_MAX	8	/* reo_wnd grows to 256 times its base */
#define GRIM_REO_CALM		16	/* recoveries without a spurious resend
					 * before reo_wnd shrinks a step
					 */
#define GRIM_PROBE_MIN		2	/* jiffies before a loss probe, at least */
/* ... on a stream of a link's endpoint (IP): TCP above probes its own
 * tail two round trips and 2 jiffies after its last ACK, and GRIM's
 * probe must be answered before that, or TCP resends what GRIM was
 * recovering.
 */
#define GRIM_PROBE_MIN_DEV	1
/* ... and that is a whole jiffy, which the timer wheel may fire as late
 * as two ticks on: on such a stream a round trip shorter than a jiffy
 * probes from a high-resolution timer, two smoothed round trips after
 * the stream last moved (RFC 8985, 7.2), at least this long (in
 * grim_ts_now() units).
 */
#define GRIM_TLP_MIN		50
/* Frames held past a gap, per stream: no further than a SACK report
 * reaches, and no more bytes than a share of the NI's room for them.
 */
#define GRIM_SACK_REACH		(64 * GRIM_SACK_WORDS)
#define GRIM_OOO_MEM		(32 << 20)	/* bytes held so, per NI */
#define GRIM_OOO_STREAM_MEM	(GRIM_OOO_MEM / 8)	/* and per stream */

#define GRIM_DEF_HELLO_MS	1000
#define GRIM_TENTATIVE_PROBES	3	/* tentative hellos before the first */
#define GRIM_TENTATIVE_MS	100	/* between them, and after the last */
#define GRIM_DEF_DEAD_MS	4000
#define GRIM_DEF_RTO_MS		20
#define GRIM_MAX_RTO_MS		1000
#define GRIM_DEF_WINDOW		GRIM_SACK_REACH
#define GRIM_MAX_WINDOW		4096
/* A peer's congestion window, in frames (tx.c, "Congestion"). */
#define GRIM_CWND_INIT		64
#define GRIM_CWND_MIN		4
#define GRIM_CWND_MAX		16384
#define GRIM_CWND_QUANTUM	4	/* frames a waiting stream sends a turn */
#define GRIM_RTT_MIN_WINDOW	(10 * HZ)	/* the base RTT's memory */
#define GRIM_QUEUE_DELAY_MS	8	/* RTT above the base that is a queue */
#define GRIM_RTT_STALE		8	/* srtts without a sample: stale */
#define GRIM_NACK_BACKOFF_MIN	1		/* jiffies */
#define GRIM_NACK_BACKOFF_MAX	(HZ / 4)
/* What hosts on the segment can make an NI keep (see grim.rst, Limits):
 * new peers from hellos, a burst and then peer_rate a second (by
 * default GRIM_DEF_PEER_RATE, at most GRIM_MAX_PEERS); rx streams per
 * NI.  Peers silent for 2 * dead_ms are reclaimed.
 */
#define GRIM_PEER_BURST		64
#define GRIM_DEF_PEER_RATE	16
#define GRIM_MAX_NI_RXS		32768
#define GRIM_MAX_PEER_RXS	8192	/* of them, made by one peer */
/* A receive stream is forgotten after no frame for twice dead_ms, and
 * never sooner than this: a few of the longest a sender with something
 * unacknowledged waits before it sends again (GRIM_MAX_RTO_MS).
 */
#define GRIM_RXS_EXPIRE_MIN	(5 * HZ)
/* A reassembly whose stream stays silent this many dead_ms, every query
 * after it unanswered, is given up (rx.c): a sender that never answers
 * must not hold a receiver's room for good.
 */
#define GRIM_REASM_PATIENCE	4
/* Buckets the stream tables start with and never go below. */
#define GRIM_STREAM_TABLE_MIN	16384
/* Stream incarnations a receiver remembers per peer (see rx.c). */
#define GRIM_INC_WINDOW		2048
/* A send stream with nothing to send for this long is closed (default). */
#define GRIM_DEF_STREAM_IDLE_MS	1000
#define GRIM_MAX_STREAM_IDLE_MS	600000
#define GRIM_MAX_KEYS		2	/* cluster keys an NI takes frames with */
#define GRIM_AUTH_WINDOW	1024	/* frame numbers remembered per peer */
#define GRIM_AUTH_CHAL_GAP	(HZ / 20)	/* between challenges to a peer */
#define GRIM_RESYNC_GAP		(HZ / 20)	/* between resync probes to a peer */

/* Sizes of the frame headers, see include/uapi/linux/grim.h. */
#define GRIM_LINK_HLEN	sizeof(struct grim_link_hdr)
#define GRIM_DATA_HLEN	(GRIM_LINK_HLEN + sizeof(struct grim_ctl_msg) + \
			 sizeof(struct grim_frag_hdr))
#define GRIM_CTL_LEN	(GRIM_LINK_HLEN + sizeof(struct grim_ctl_msg))
#define GRIM_MSG_HLEN	sizeof(struct grim_msg_hdr)

/* Counters: this enum and grim_stat_names[] (device.c) feed ethtool -S,
 * netlink and the grim tool.  Kept per NI and, for the first
 * GRIM_PEER_STATS of them, per peer.
 */
enum grim_stat {
	GRIM_STAT_TX_MSGS,
	GRIM_STAT_TX_BYTES,
	GRIM_STAT_RX_MSGS,
	GRIM_STAT_RX_BYTES,
	GRIM_STAT_TX_FRAMES,
	GRIM_STAT_RX_FRAMES,
	GRIM_STAT_TX_ACKS,
	GRIM_STAT_RX_ACKS,
	GRIM_STAT_TX_NACKS,
	GRIM_STAT_RX_NACKS,
	GRIM_STAT_RETRANS_FRAMES,
	GRIM_STAT_RTO_EVENTS,
	GRIM_STAT_FAST_RETRANS,
	GRIM_STAT_PROBES,
	GRIM_STAT_DUP_FRAMES,
	GRIM_STAT_OOO_FRAMES,
	GRIM_STAT_MSG_FAILED,
	GRIM_STAT_PEER_UP,
	GRIM_STAT_PEER_DOWN,
	GRIM_STAT_PEER_RESET,
	GRIM_STAT_TX_HELLOS,
	GRIM_STAT_RX_HELLOS,
	GRIM_STAT_TX_CSUM_OFFLOAD,
	GRIM_STAT_RX_CSUM_LOCAL,
	GRIM_STAT_DROP_SHORT,
	GRIM_STAT_DROP_MAGIC,
	GRIM_STAT_DROP_VERSION,
	GRIM_STAT_DROP_LENGTH,
	GRIM_STAT_DROP_CSUM,
	GRIM_STAT_DROP_CLUSTER,
	GRIM_STAT_DROP_NOT_OURS,
	GRIM_STAT_DROP_UNKNOWN_PEER,
	GRIM_STAT_DROP_STALE,
	GRIM_STAT_DROP_TYPE,
	GRIM_STAT_DROP_FRAG,
	GRIM_STAT_DROP_MSG,
	GRIM_STAT_DROP_REFUSED,
	GRIM_STAT_DROP_NO_EP,
	GRIM_STAT_DROP_NOMEM,
	GRIM_STAT_DROP_LIMIT,
	GRIM_STAT_DROP_BAD_ACK,
	GRIM_STAT_DROP_REJECTED,
	GRIM_STAT_DROP_AUTH,
	GRIM_STAT_DROP_REPLAY,
	GRIM_STAT_DROP_UNPROVEN,
	GRIM_STAT_TX_REJECTS,
	GRIM_STAT_RX_REJECTS,
	GRIM_STAT_REASM_TIMEOUTS,
	GRIM_STAT_NODE_CONFLICTS,
	GRIM_STAT_TX_ABORTS,
	GRIM_STAT_MSGS_RECUT,
	GRIM_STAT_TX_ERRORS,
	GRIM_STAT_AUTH_CHALLENGES,
	GRIM_STAT_AUTH_NEW_RUNS,
	GRIM_STAT_DROP_BAD_MAC,
	GRIM_STAT_TX_STREAMS_OPENED,
	GRIM_STAT_TX_STREAMS_CLOSED,
	GRIM_STAT_RX_STREAMS_OPENED,
	GRIM_STAT_RX_STREAMS_CLOSED,
	GRIM_STAT_TX_CLOSES,
	GRIM_STAT_STREAM_REJECTS,
	GRIM_STAT_STREAM_RENUMBERS,
	GRIM_STAT_DROP_STALE_STREAM,
	GRIM_STAT_DROP_NO_STREAM,
	GRIM_STAT_RX_STREAMS_EXPIRED,
	GRIM_STAT_CWND_CUTS,
	GRIM_STAT_TX_QDISC_DROPS,
	GRIM_STAT_STREAM_QUERIES,
	GRIM_STAT_TX_DENIALS,
	GRIM_STAT_PEER_PROBES,
	GRIM_STAT_RETRANS_SPURIOUS,
	GRIM_STAT_DROP_PAST_REACH,
	GRIM_STAT_TX_BATCHES,
	GRIM_STAT_RX_BATCHES,
	GRIM_STAT_MC_INJECTED,
	GRIM_STAT_MC_TICKETED,
	GRIM_STAT_MC_RX,
	GRIM_STAT_MC_TX_COPIES,
	GRIM_STAT_MC_DELIVERED,
	GRIM_STAT_MC_TREE_UPDATES,
	GRIM_STAT_MC_REFUSED,
	GRIM_STAT_MC_DUPS,
	GRIM_STAT_MC_STALE,
	GRIM_STAT_MC_NO_MEMBERS,
	GRIM_STAT_MC_SKIPPED,
	GRIM_STAT_MC_REPAIRED,
	GRIM_STAT_MC_NOT_PARENT,
	GRIM_STAT_MC_FORGOTTEN,
	GRIM_STAT_MC_CTL_TX,
	GRIM_STAT_MC_CTL_RX,
	GRIM_STAT_MAX
};

#define GRIM_PEER_STATS	(GRIM_STAT_PEER_RESET + 1)

extern const char grim_stat_names[GRIM_STAT_MAX][ETH_GSTRING_LEN];

enum grim_peer_state {
	GRIM_PEER_NEW,	/* heard of it; our session not yet confirmed */
	GRIM_PEER_UP,	/* both sides agree on the session generations */
	GRIM_PEER_DOWN,	/* silent for dead_ms: its messages failed */
};

struct grim_ni;

/* What finds a stream in the NI's tables: the peer's node id and the
 * stream's channels, as they lie in struct grim_txs and grim_rxs.
 */
struct grim_skey {
	u32 node;
	u16 src_chan;
	u16 dst_chan;
};

/* Sender side of one stream: this NI's src_chan to the peer's dst_chan.
 * Made by the first message sent on it, found through ni->txs_ht, and
 * closed after GRIM_STREAM_IDLE_MS with nothing to send (tx.c).  @plink
 * is the peer lock's; @inc and @reaped change under both locks; the rest
 * is @lock's (the locking rules are at the top of tx.c).
 */
struct grim_txs {
	struct rhash_head hnode;	/* ni->txs_ht */
	struct list_head plink;		/* peer->txs_list, then ni->txs_reap */
	struct grim_peer *peer;
	u32 node;		/* with the channels: the key, grim_skey */
	u16 src_chan;
	u16 dst_chan;
	u32 inc;		/* incarnation, never 0 */
	bool reaped;		/* unhashed: freed by the reap work */
	struct rcu_head rcu;
	spinlock_t lock;	/* the stream's state: see tx.c */
	/* Frames made under @lock, sent once it is released. */
	struct sk_buff_head xmitq;
	unsigned long idle_since;	/* jiffies: the last frame was ACKed */
	unsigned long queried;		/* jiffies: resent for a query */
	bool closing;		/* CLOSE sent, waiting for CLOSED */
	u32 next_seq;		/* sequence of the next frame queued */
	u32 snd_una;		/* oldest unacknowledged frame */
	u32 snd_nxt;		/* next frame to (re)transmit */
	u32 next_sent;		/* one past the highest frame ever sent */
	u32 recover;		/* no second cwnd cut before this is acked */
	struct sk_buff_head frames;	/* unacked frames in sequence order */
	struct sk_buff *send_head;	/* frame numbered snd_nxt, or NULL */
	struct timer_list timer;	/* retransmission or NACK hold */
	struct hrtimer tlp;	/* a link endpoint's tail loss probe */
	u32 tlp_ts;		/* grim_ts_now() when the stream last moved:
				 * a frame sent, or an ACK that moved it
				 */
	bool tlp_delack;	/* the last frame sent ends a message and
				 * asks no ACK at once: its receiver may
				 * hold the ACK GRIM_ACK_DELAY for a reply
				 */
	unsigned long progress;		/* jiffies: last ACK that moved, or
					 * first frame sent after idle
					 */
	unsigned long rto;		/* jiffies, backs off on timeouts */
	unsigned long rto_base;		/* rto from the RTT estimate */
	unsigned long srtt8;		/* smoothed RTT, jiffies << 3 */
	unsigned long rttvar4;		/* RTT variation, jiffies << 2 */
	unsigned long backoff;		/* jiffies, backs off on NACKs */
	unsigned long refused_since;	/* jiffies: first NACK of a refusal */
	u32 rack_ts;		/* send time of the last frame known to have
				 * arrived (its tsval), 0 for none
				 */
	u32 rtt_min;		/* least round trip seen lately, and */
	unsigned long rtt_min_at;	/* jiffies when it was seen */
	u32 srtt_ts8;		/* smoothed round trip << 3; grim_ts_now() units */
	u8 reo_shift;		/* reo_wnd's growth by spurious resends */
	u8 reo_calm;		/* recoveries since the last spurious resend */
	u32 sack_seq;		/* the receiver's last report: it lacked this, */
	/* and held frame sack_seq + 1 + 64 * j + i for bit i of word j
	 * (GRIM_SACK_WORDS of them, allocated while a report holds frames)
	 */
	u64 *sack_map;
	u8 sack_words;		/* of sack_map; the others hold nothing */
	u32 sack_ts;		/* the receiver's clock at that report */
	bool sack_fresh;	/* a report came since the last timeout */
	bool sack_skip;		/* going back: skip what the report held */
	bool held;		/* rolled back by a NACK, waiting to resume */
	bool probe;		/* after a NACK: one frame in flight */
	bool rto_one;		/* after a timeout: one frame, until an ACK */
	bool fast;		/* in recovery until recover is acked */
	bool probed;		/* the timer has sent its loss probe */
	bool dead;		/* NI stopping: timer must not rearm */
	bool skip;		/* frame skip_seq goes with GRIM_XF_SKIP */
	u32 skip_seq;		/* the first frame after frames given up */
	u32 skip_from;		/* the first frame given up */
	bool aborting;		/* asked the receiver to give up frames to
				 * abort_to (ABORT): nothing is sent, no
				 * ACK heeded, until it answers
				 */
	u32 abort_to;
	u32 flight;		/* frames counted in peer->inflight */
	struct list_head cwnd_link;	/* on peer->cwnd_wait (cc_lock) */
	bool cwnd_turn;		/* its turn to send, off cwnd_wait */
};

/* What a receive stream is doing with the message at rcv_nxt. */
enum grim_rx_state {
	GRIM_RX_IDLE,		/* between messages */
	GRIM_RX_REASM,		/* reassembling it, room reserved for it */
	GRIM_RX_DISCARD,	/* taking its frames, to reject it at the last */
};

/* Receiver side of one stream: the peer's src_chan to our dst_chan.
 * Made by a frame of a new incarnation for a bound endpoint, freed by
 * the sender's CLOSE (rx.c).  The fields up to @rcu are the peer lock's;
 * the others are @lock's.  @lock is taken only under the peer lock, but
 * a DATA frame's work keeps it after the peer lock is released: see the
 * locking rules at the top of rx.c.
 */
struct grim_rxs {
	struct rhash_head hnode;	/* ni->rxs_ht */
	struct list_head plink;		/* peer->rxs_list */
	struct grim_peer *peer;
	u32 node;		/* with the channels: the key, grim_skey */
	u16 src_chan;
	u16 dst_chan;
	u32 inc;		/* the incarnation taken */
	struct rcu_head rcu;
	spinlock_t lock;	/* the fields below: see rx.c */
	bool dead;		/* freed: a late sender finds it so */
	/* Frames made under @lock, sent once it is released. */
	struct sk_buff_head xmitq;
	unsigned long last_rx;	/* jiffies of its last DATA or ABORT frame:
				 * read without @lock
				 */
	u32 rcv_nxt;		/* next expected frame */
	u32 ts_recent;		/* tsval of the last frame taken in sequence */
	u8 state;		/* enum grim_rx_state */
	u8 reason;		/* DISCARD, rejected: enum grim_reject_reason */
	bool refused;		/* NACKed rcv_nxt; drop until it returns */
	bool rejected;		/* REJECTed rcv_nxt, the last frame of a
				 * message; drop until the sender skips it
				 */
	bool aborted;		/* gave up frames to abort_to on an ABORT */
	u32 abort_to;		/* ... the ABORT's last frame */
	u32 rej_from;		/* @from of the next REJECT sent */
	u8 unacked;		/* frames accepted since the last ACK */
	struct list_head ack_link;	/* on peer->ack_list (ack_lock) */
	struct grim_ep *ep;	/* endpoint of the message in reassembly */
	struct sk_buff_head ooo;	/* frames past a gap, by sequence */
	u64 *ooo_map;		/* while ooo holds frames, GRIM_SACK_WORDS
				 * words: bit s % GRIM_SACK_REACH set, frame s
				 * is on ooo (they all lie within
				 * GRIM_SACK_REACH past rcv_nxt)
				 */
	u32 ooo_bytes;		/* their truesize */
	struct sk_buff *reasm;	/* message in reassembly (payload) */
	struct sk_buff *reasm_tail;
	u32 reasm_want;		/* its payload length, and the room reserved */
	u32 reasm_got;		/* bytes of it received so far */
};

struct grim_peer {
	struct hlist_node link;		/* ni->peers, RCU */
	struct grim_ni *ni;
	/* Protects everything below but the path (@cc_lock's), and which
	 * streams there are; a stream's state has its own lock, taken
	 * inside this one (tx.c, rx.c).  Taken in softirq (receive, timers)
	 * and process context (send), always with BH off.
	 */
	spinlock_t lock;
	/* Frames made under @lock, sent once it is released: see
	 * grim_peer_unlock().
	 */
	struct sk_buff_head xmitq;
	u32 node;
	u8 mac[ETH_ALEN];
	enum grim_peer_state state;
	bool dead;
	bool configured;	/* static: added by the administrator */
	u32 lgen;		/* our session generation toward this peer */
	u32 rgen;		/* the peer's generation, 0 if unknown */
	u32 rbase;		/* the peer NI's own, from its broadcasts */
	unsigned long last_rx;	/* jiffies of the last valid frame */
	unsigned int ntx;
	unsigned int nrx;
	/* Receive streams owing a delayed ACK, and the timer that sends
	 * them.  @ack_lock, a leaf, protects the list: streams join it
	 * under their own lock alone.
	 */
	spinlock_t ack_lock;
	struct list_head ack_list;
	struct timer_list ack_timer;
	struct list_head txs_list;	/* our streams to the peer */
	struct list_head rxs_list;	/* its streams to us */
	u32 tx_inc;			/* the last incarnation drawn */
	/* The path, shared by all our streams to the peer, under @cc_lock
	 * (a leaf: streams take it under their own lock alone), up to
	 * @cwnd_wait.
	 */
	spinlock_t cc_lock;
	/* The path's round trip, from every stream's samples: where a new
	 * stream's estimate starts (0: no sample yet).
	 */
	unsigned long srtt8;		/* smoothed RTT, jiffies << 3 */
	unsigned long rttvar4;		/* RTT variation, jiffies << 2 */
	/* Congestion (tx.c): what all our streams to the peer may have in
	 * flight together, in frames, and what they have.  Streams that
	 * found no room wait on @cwnd_wait, in turn.  @xmit_congested is
	 * set with no lock, by a transmit the qdisc dropped.
	 */
	u32 cwnd;
	u32 ssthresh;
	u32 cwnd_acked;			/* frames ACKed toward cwnd + 1 */
	u32 inflight;
	u32 inflight_max;		/* the most @inflight has been */
	unsigned long cwnd_cut;		/* jiffies of the last cut */
	unsigned long rtt_min;		/* least RTT sample of this epoch */
	unsigned long rtt_min_prev;	/* ... of the epoch before (0: none) */
	unsigned long rtt_min_at;	/* jiffies this epoch began */
	unsigned long rtt_sampled;	/* jiffies of the last RTT sample */
	struct list_head cwnd_wait;
	bool xmit_congested;
	/* Incarnations of its streams seen in this session: bit i of
	 * @rx_inc_seen is @rx_inc_max - i; older ones count as seen.
	 */
	u32 rx_inc_max;
	unsigned long rx_inc_seen[GRIM_INC_WINDOW / BITS_PER_LONG];
	/* With a cluster key: the run of the peer's NI whose frames we take
	 * (0: none yet), the frame numbers seen from it (bit i of @auth_seen:
	 * @auth_pn_max - i), our challenge to the peer, which a frame of a
	 * new run must echo, and the peer's challenge to us, which ours echo.
	 */
	u32 auth_rboot;
	u64 auth_pn_max;
	unsigned long auth_seen[GRIM_AUTH_WINDOW / BITS_PER_LONG];
	u32 auth_chal;
	u32 auth_rchal;
	unsigned long auth_challenged;	/* jiffies of our last challenge */
	unsigned long resynced;		/* jiffies of our last resync probe */
	u32 hello_ms;			/* its hello interval, as it announces */
	struct list_head reap_link;	/* on ni->reap: to be freed */
	atomic_long_t stats[GRIM_PEER_STATS];
};

/* A cluster key: what the NI authenticates frames with.  Replaced only by
 * RCU: a key is freed a grace period after it was unpublished.
 */
#define GRIM_KEY_WORDS	(GRIM_AUTH_KEY_LEN / sizeof(u32))

struct grim_key {
	struct rcu_head rcu;
	u32 k[GRIM_KEY_WORDS];	/* the secret, as ChaCha20 takes it */
	u8 id;
};

/* What the authentication of a received frame says of it. */
struct grim_auth_info {
	bool authed;		/* verified under a key (else: no key) */
	u8 mac[ETH_ALEN];	/* the sender's, as the tag covers it */
	u32 boot;
	u32 echo;
	u32 chal;
	u64 pn;
};

/* The NI's counters, one set per CPU: every stream and frame counts, on
 * every CPU, and a shared counter would be a cache line they all write.
 */
struct grim_pcpu_stats {
	u64_stats_t c[GRIM_STAT_MAX];
	struct u64_stats_sync syncp;
};

/* IP over GRIM (ip.c): the channels are the link's endpoints on ports
 * GRIM_PORT_IP + N.  A sender spreads flows over the first @nchan; a
 * receiver takes every channel.
 */
#define GRIM_IP_CHANNELS_MAX	16
#define GRIM_IP_CHANNELS_DEF	4
/* Packets taken from the NI and not yet by the stack, in bytes. */
#define GRIM_IP_RXQ_BYTES	(4 << 20)

struct grim_ip;

struct grim_ip_chan {
	struct grim_ep ep;
	struct grim_ip *ip;
};

struct grim_ip {
	struct net_device *dev;
	bool up;
	u8 nchan;
	atomic_t rx_bytes;		/* reserved or on @rxq */
	atomic_t tx_unowned;		/* packets of no socket held by the NI */
	struct sk_buff_head rxq;
	struct napi_struct napi;
	struct grim_ip_chan chan[GRIM_IP_CHANNELS_MAX];
};

/* Groups (mcast.c): the link's multicast engine, two endpoints of the
 * link and the groups it knows.
 */
#define GRIM_MC_HASH_BITS	6
#define GRIM_MC_LOCAL_MAX	64	/* members of a group in a namespace
					 * that a message reaches
					 */

struct grim_mc;

struct grim_mc_ep {
	struct grim_ep ep;
	struct grim_mc *mc;
	bool link;		/* GRIM_GROUP_LINK's, on its ports */
};

struct grim_mc {
	spinlock_t lock;	/* the groups; BH off */
	bool up;
	bool rejoin;		/* tell the root every group joined */
	bool peers_dirty;	/* a peer came up or went down */
	u32 leader;		/* the root of the link's groups, 0: none */
	u32 leader_rgen;	/* its session, as we last told it */
	unsigned long rejoined;	/* jiffies: joins last sent again */
	unsigned long swept;	/* jiffies: idle groups last looked for */
	bool sweep;		/* look again: a group may become idle */
	u32 ngroups;
	u32 held;		/* bytes taken and not yet passed on */
	u32 logged;		/* bytes the root keeps for repairs */
	atomic_t fwd;		/* copies to children not yet acknowledged */
	struct hlist_head groups[1 << GRIM_MC_HASH_BITS];
	struct list_head busy;	/* groups with messages to pass on */
	struct sk_buff_head ctlq;	/* joins and leaves to handle */
	struct delayed_work work;
	struct grim_mc_ep tree;		/* GRIM_PORT_MC */
	struct grim_mc_ep root;		/* GRIM_PORT_MC_ROOT */
	struct grim_mc_ep ltree;	/* GRIM_PORT_LMC */
	struct grim_mc_ep lroot;	/* GRIM_PORT_LMC_ROOT */
};

struct grim_ni {
	struct net_device *dev;		/* the grim netdev */
	/* The Ethernet device we run on, held from newlink until the NI's
	 * destructor: anything that reaches the NI (under RCU, or holding
	 * the grim netdev) may use it.
	 */
	struct net_device *lower;
	netdevice_tracker lower_tracker;
	bool lower_held;
	struct list_head list;		/* grim_net->nis, RCU; RTNL for writes */
	struct list_head all;		/* grim_all_nis, RTNL */
	struct packet_type pt;
	/* Protects the peer table and @running; BH off. */
	spinlock_t lock;
	bool running;
	u32 node;
	u32 cluster;
	u32 hello_ms;
	u32 dead_ms;
	u32 rto_ms;
	u32 window;
	u32 stream_idle_ms;
	u32 peer_rate;		/* new peers hellos may make a second */
	u8 data_crc;		/* enum grim_data_crc */
	u32 base_gen;
	unsigned long started;		/* jiffies: the NI started */
	unsigned long defended;		/* jiffies: answered a tentative hello */
	u8 tentative;			/* tentative hellos still to send */
	bool conflict;			/* another NI has our node id */
	bool conflict_done;		/* ... and our peers were failed */
	unsigned int npeers;
	unsigned int peer_tokens;	/* new peers hellos may still make */
	unsigned long peer_refill;	/* jiffies: tokens last added */
	atomic_t nrxs;			/* rx streams of all peers */
	atomic_t ntxs;			/* tx streams of all peers */
	struct rhashtable txs_ht;	/* grim_txs by grim_skey */
	struct rhashtable rxs_ht;	/* grim_rxs by grim_skey */
	/* Closed tx streams, freed by reap_work once their timers are
	 * stopped.  A leaf lock.
	 */
	spinlock_t reap_lock;
	struct list_head txs_reap;
	bool tables;			/* the two tables were made */
	struct list_head reap;		/* peers unlinked, to be freed */
	struct work_struct reap_work;	/* ... after a grace period */
	struct grim_peer *self;
	struct hlist_head peers[1 << GRIM_PEER_HASH_BITS];
	struct timer_list hello_timer;
	atomic_long_t ooo_mem;		/* truesize of frames held past gaps */
	/* Cluster keys (RTNL for writes): frames are taken under any of
	 * @keys and sent under @tx_key, which is one of them.  @auth_boot
	 * and @auth_pn make the nonces: a random run id drawn at start, and
	 * a frame counter from a random start.
	 */
	struct grim_key __rcu *keys[GRIM_MAX_KEYS];
	struct grim_key __rcu *tx_key;
	u32 auth_boot;
	atomic64_t auth_pn;
	struct grim_pcpu_stats __percpu *stats;
	/* Endpoints of this link, ports GRIM_PORT_DEV on (ep.c). */
	struct grim_ep __rcu *dev_eps[0x10000 - GRIM_PORT_DEV];
	struct grim_ip ip;
	struct grim_mc mc;
};

/* A frame queued on a tx stream: its sequence and, on the last frame of
 * a message cut into several, the message to complete when the frame is
 * acknowledged.  A @whole frame is the message itself.
 */
struct grim_frame_cb {
	struct sk_buff *msg;
	struct grim_ep *ep;	/* the sender: set in a message's last frame */
	unsigned long sent;	/* jiffies of the first transmission */
	u32 seq;
	u32 crc_tail;		/* CRC32C state of the bytes past the split */
	bool stamped;		/* session and tail CRC set, head released */
	bool retx;		/* resent, not by a loss probe: no RTT sample */
	bool resent;		/* sent more than once: its arrival dates no
				 * transmission
				 */
	bool marked;		/* its last copy was resent as lost */
	u32 xmit_ts;		/* grim_ts_now() of its last transmission */
	bool whole;
};

#define GRIM_FRAME_CB(skb) ((struct grim_frame_cb *)(skb)->cb)
static_assert(sizeof(struct grim_frame_cb) <=
	      sizeof_field(struct sk_buff, cb));

/* The clock frames carry in grim_ctl_msg.tsval: microseconds (of 1024
 * ns), modulo 2^32, never 0 (0 echoes nothing).
 */
static inline u32 grim_ts_now(void)
{
	return (u32)(ktime_get_ns() >> 10) ?: 1;
}

static inline void grim_count_add(struct grim_ni *ni, struct grim_peer *peer,
				  enum grim_stat s, long v)
{
	struct grim_pcpu_stats *st = get_cpu_ptr(ni->stats);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&st->syncp);
	u64_stats_add(&st->c[s], v);
	u64_stats_update_end_irqrestore(&st->syncp, flags);
	put_cpu_ptr(ni->stats);
	if (peer && s < GRIM_PEER_STATS)
		atomic_long_add(v, &peer->stats[s]);
}

static inline void grim_count(struct grim_ni *ni, struct grim_peer *peer,
			      enum grim_stat s)
{
	grim_count_add(ni, peer, s, 1);
}

enum skb_drop_reason grim_drop_reason(enum grim_stat s);

/* Free @skb, a frame the NI drops, counted under @s (NULL @peer: the NI's
 * count only) and reported to drop monitors with grim_drop_reason(@s).
 */
static inline void grim_drop(struct grim_ni *ni, struct grim_peer *peer,
			     struct sk_buff *skb, enum grim_stat s)
{
	grim_count(ni, peer, s);
	kfree_skb_reason(skb, grim_drop_reason(s));
}

void grim_ni_read_stats(const struct grim_ni *ni, u64 *out);

/* Sequence and generation arithmetic, modulo 2^32. */
static inline bool grim_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool grim_seq_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/* main.c */
#define GRIM_PORT_HASH_BITS	8
#define GRIM_SUB_HASH_BITS	6

/* An endpoint's membership of a group (mcast.c). */
struct grim_mc_sub {
	struct hlist_node hnode;	/* grim_net->mc_subs, RCU */
	struct list_head ep_link;	/* ep->groups */
	struct rcu_head rcu;
	u32 group;
	struct grim_ep *ep;
};

struct grim_net {
	struct list_head nis;
	spinlock_t ports_lock;		/* writers of ports; readers use RCU */
	u32 nports;
	struct hlist_head ports[1 << GRIM_PORT_HASH_BITS];
	/* The groups its endpoints joined: writers hold @mc_lock. */
	spinlock_t mc_lock;
	struct hlist_head mc_subs[1 << GRIM_SUB_HASH_BITS];
	wait_queue_head_t mc_wait;	/* joiners wait for their trees */
};

struct grim_net *grim_pernet(struct net *net);

struct grim_ni *grim_ni_find(struct net *net, u32 node);
extern struct list_head grim_all_nis;
/* Stream state has slab caches of its own: a stream costs its size, not
 * the next kmalloc size up (a send stream 344 bytes, not 512).
 */
extern struct kmem_cache *grim_txs_cache;
extern struct kmem_cache *grim_rxs_cache;

/* ep.c */
void grim_ports_init(struct grim_net *gn);
struct grim_ep *grim_ep_get(struct grim_ni *ni, u16 port);
u32 grim_ep_count(struct net *net);
int grim_ep_walk(struct net *net, int skip,
		 int (*fn)(const struct grim_ep_info *info, void *arg),
		 void *arg);

static inline void grim_ep_put(struct grim_ep *ep)
{
	ep->ops->put(ep);
}

/* ip.c */
void grim_ip_setup(struct net_device *dev);
int grim_ip_init(struct grim_ni *ni);
int grim_ip_open(struct grim_ni *ni);
void grim_ip_stop(struct grim_ni *ni);
void grim_ip_drain(struct grim_ni *ni);
netdev_tx_t grim_ip_xmit(struct sk_buff *skb, struct net_device *dev);

/* device.c */
bool grim_dev_is_ni(const struct net_device *dev);
int grim_device_init(void);
void grim_device_exit(void);

/* wire.c */
int grim_crc_init(void);
void grim_crc_exit(void);
const char *grim_crc_driver(void);
void grim_offload_init(void);
void grim_offload_exit(void);
u32 grim_frame_crc_tail(struct sk_buff *skb);
void grim_frame_finish_head(struct sk_buff *skb, u32 tail);
void grim_frame_finish(struct sk_buff *skb);
void grim_frame_csum_offload(struct grim_ni *ni, struct sk_buff *skb);
struct sk_buff *grim_ctl_alloc(struct grim_ni *ni, unsigned int extra);
struct sk_buff *grim_ctl_frame(struct grim_ni *ni, struct grim_peer *peer,
			       u8 type, u8 flags, u16 src_chan, u16 dst_chan,
			       u32 seq, u32 inc, unsigned int extra);
void grim_link_hdr_init(struct grim_ni *ni, struct grim_peer *peer,
			struct grim_link_hdr *lh, u8 type, u8 flags,
			unsigned int len);
void grim_xmit_echo(struct grim_ni *ni, struct grim_peer *peer,
		    struct sk_buff *skb, u32 echo, const u8 *mac);
void grim_peer_xmit(struct grim_peer *peer, struct sk_buff *skb);
void grim_xmit_queue(struct grim_ni *ni, struct grim_peer *peer,
		     struct sk_buff_head *q);
void grim_peer_unlock_to(struct grim_peer *peer, struct sk_buff_head *q)
	__releases(&peer->lock);
void grim_peer_unlock(struct grim_peer *peer) __releases(&peer->lock);

/* grim_peer_unlock() for a lock taken with spin_lock_bh(). */
static inline void grim_peer_unlock_bh(struct grim_peer *peer)
	__releases(&peer->lock)
{
	grim_peer_unlock(peer);
	local_bh_enable();
}

int grim_rcv(struct sk_buff *skb, struct net_device *dev,
	     struct packet_type *pt, struct net_device *orig_dev);

/* peer.c */
struct grim_peer *grim_peer_lookup(struct grim_ni *ni, u32 node);
u32 grim_gen_next(u32 gen);
int grim_ni_start(struct grim_ni *ni);
void grim_ni_stop(struct grim_ni *ni);
void grim_ni_lower_mtu(struct grim_ni *ni);
void grim_peer_rcv_hello(struct grim_ni *ni, struct sk_buff *skb,
			 const struct grim_link_hdr *lh,
			 const struct grim_auth_info *ai);
void grim_ni_rcv_own_hello(struct grim_ni *ni, struct sk_buff *skb,
			   const struct grim_auth_info *ai);
bool grim_peer_auth_fresh(struct grim_ni *ni, struct grim_peer *peer,
			  const struct grim_auth_info *ai);
bool grim_peer_check_session(struct grim_ni *ni, struct grim_peer *peer,
			     const struct grim_link_hdr *lh);
void grim_hello_timer(struct timer_list *t);
struct grim_peer *grim_peer_create(struct grim_ni *ni, u32 node, bool hello);
void grim_peer_flush(struct grim_peer *peer, int err);
void grim_peer_unlink(struct grim_ni *ni, struct grim_peer *peer, int err);
void grim_peer_free(struct grim_peer *peer);
void grim_ni_reap_work(struct work_struct *work);

/* tx.c */
void grim_txs_push(struct grim_txs *txs);
void grim_txs_unlock_nested(struct grim_txs *txs) __releases(&txs->lock);
void grim_txs_fail(struct grim_txs *txs, int err);
/* What an ACK says its receiver holds past its gap: @words words of
 * struct grim_sack as they came off the wire; none, nothing held.
 */
struct grim_report {
	const struct grim_sack *held;
	unsigned int words;
};

void grim_tx_rcv_ack(struct grim_ni *ni, struct grim_peer *peer,
		     const struct grim_link_hdr *lh,
		     const struct grim_ctl_msg *cm,
		     const struct grim_report *rep) __releases(&peer->lock);
void grim_tx_rcv_piggyback(struct grim_ni *ni, struct grim_peer *peer,
			   const struct grim_link_hdr *lh,
			   const struct grim_ctl_msg *cm);
void grim_tx_rcv_reject(struct grim_ni *ni, struct grim_peer *peer,
			const struct grim_ctl_msg *cm, u16 reason, u32 from);
void grim_peer_push_all(struct grim_peer *peer);
void grim_peer_cc_init(struct grim_peer *peer);
void grim_peer_cc_reset(struct grim_peer *peer);
void grim_peer_cwnd_wake(struct grim_peer *peer, struct sk_buff_head *q);
void grim_peer_lower_mtu(struct grim_peer *peer);
void grim_tx_rcv_closed(struct grim_ni *ni, struct grim_peer *peer,
			const struct grim_ctl_msg *cm);
void grim_txs_unhash(struct grim_txs *txs);
void grim_ni_reap_txs(struct grim_ni *ni);
void grim_txs_stop_timers(struct grim_txs *txs);
void grim_txs_free(struct grim_txs *txs);
extern const struct rhashtable_params grim_txs_params;

/* rx.c */
void grim_rx_data(struct grim_ni *ni, struct grim_peer *peer,
		  struct sk_buff *skb) __releases(&peer->lock);
struct grim_rxs *grim_rxs_find(struct grim_peer *peer, u16 src_chan,
			       u16 dst_chan);
void grim_rxs_acked(struct grim_rxs *rxs);
void grim_ack_timer(struct timer_list *t);
void grim_peer_expire_reasm(struct grim_peer *peer, unsigned long timeout);
void grim_rx_denied(struct grim_ni *ni, struct grim_peer *peer,
		    const struct grim_ctl_msg *cm);
void grim_rx_abort(struct grim_ni *ni, struct grim_peer *peer,
		   const struct grim_ctl_msg *cm);
void grim_rx_close(struct grim_ni *ni, struct grim_peer *peer,
		   const struct grim_ctl_msg *cm);
void grim_rxs_free(struct grim_rxs *rxs);
void grim_peer_inc_reset(struct grim_peer *peer);
void grim_peer_expire_rxs(struct grim_peer *peer, unsigned long idle,
			  unsigned long dead);
extern const struct rhashtable_params grim_rxs_params;

/* auth.c */
static inline bool grim_ni_keyed(const struct grim_ni *ni)
{
	return rcu_access_pointer(ni->tx_key);
}

void grim_auth_start(struct grim_ni *ni);
void grim_auth_exit(void);
struct sk_buff *grim_auth_seal(struct grim_ni *ni, struct grim_peer *peer,
			       struct sk_buff *skb, u32 echo);
bool grim_auth_open(struct grim_ni *ni, struct sk_buff *skb,
		    struct grim_auth_info *ai);
bool grim_auth_window(struct grim_peer *peer, u64 pn);
void grim_auth_window_reset(struct grim_peer *peer, u32 boot, u64 pn);
u32 grim_auth_random(void);
int grim_key_set(struct grim_ni *ni, u8 id, const u8 *secret, bool tx,
		 struct netlink_ext_ack *extack);
int grim_key_del(struct grim_ni *ni, u8 id, struct netlink_ext_ack *extack);
void grim_keys_free(struct grim_ni *ni);

/* mcast.c */
void grim_mc_net_init(struct grim_net *gn);
int grim_mc_init(struct grim_ni *ni);
bool grim_mc_ctl_msg(const struct grim_msg_cb *cb);
int grim_mc_open(struct grim_ni *ni);
void grim_mc_stop(struct grim_ni *ni);
void grim_mc_drain(struct grim_ni *ni);
void grim_mc_peers_changed(struct grim_ni *ni);
void grim_ep_leave_all(struct grim_ep *ep);

/* A group as a dump shows it; @members is valid during the call. */
struct grim_mc_info {
	u32 id;
	u32 root;
	u32 ticket;
	bool in_tree;
	u32 parent;
	u32 child[2];
	const u32 *members;
	u32 nmembers;
	u32 local;
	u32 queued;
	u64 rx;
	u64 delivered;
};

int grim_mc_walk(struct grim_ni *ni, long *skip,
		 int (*fill)(const struct grim_mc_info *info, void *arg),
		 void *arg);

/* peer_cfg.c */
int grim_peer_add_static(struct grim_ni *ni, u32 node, const u8 *mac,
			 struct netlink_ext_ack *extack);
int grim_peer_del(struct grim_ni *ni, u32 node, struct netlink_ext_ack *extack);

#endif /* _DRIVERS_NET_GRIM_H */
