// SPDX-License-Identifier: GPL-2.0
/* GRIM NI: frames on the lower Ethernet device.  Every frame is parsed
 * here first: length, identifier, version, CRC32C, cluster and address
 * checks happen in one place before any state is touched.
 */
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/if_packet.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <crypto/hash.h>
#include <net/checksum.h>
#include <net/netfilter/nf_conntrack.h>

#include "grim.h"

static_assert(sizeof(struct grim_link_hdr) == 32);
static_assert(sizeof(struct grim_ctl_msg) == 20);
static_assert(sizeof(struct grim_frag_hdr) == 12);
static_assert(sizeof(struct grim_sack) == 8);
static_assert(sizeof(struct grim_msg_hdr) == 32);
/* A data frame's ACK field lies before the split, its message after. */
static_assert(GRIM_CRC_SPLIT == GRIM_DATA_HLEN);
static_assert(GRIM_DATA_HLEN + GRIM_MSG_HLEN == GRIM_CRC_HDR_LEN);

/* The frame check is CRC32C.  It runs over the frame from byte
 * GRIM_CRC_SPLIT (or its end, if shorter) to the end, then over the bytes
 * before that with the csum field as zero.  What follows the split (a
 * data frame's message header and payload) never changes once a frame is
 * queued, so a sender sums it once and re-sums only the head, whose ACK
 * field changes between transmissions; a receiver sums every byte once.
 * Which CRC32C driver sums is chosen at load, by grim_crc_init().  The
 * generic driver is the library's table-driven code, called directly:
 * a frame takes up to four short sums, and the crypto API's indirect
 * calls cost as much as summing a small frame.
 */
static struct crypto_shash *grim_crc_tfm;
static bool grim_crc_generic;

#define GRIM_CRC_CAL_LEN	4096

static u32 grim_crc_by(struct crypto_shash *tfm, u32 crc, const void *buf,
		       unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, tfm);

	desc->tfm = tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	/* A CRC update has nothing that can fail. */
	crypto_shash_update(desc, buf, len);
	return *(u32 *)shash_desc_ctx(desc);
}

static u32 grim_crc(u32 crc, const void *buf, unsigned int len)
{
	if (grim_crc_generic)
		return __crc32c_le(crc, buf, len);
	return grim_crc_by(grim_crc_tfm, crc, buf, len);
}

/* Continue @crc over @len bytes of @skb from @off, wherever they lie. */
static u32 grim_crc_skb(struct sk_buff *skb, unsigned int off,
			unsigned int len, u32 crc)
{
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *p;

	if (off + len <= skb_headlen(skb))
		return grim_crc(crc, skb->data + off, len);
	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len && (n = skb_seq_read(done, &p, &st)) != 0) {
		/* A block runs to the end of its page or fragment, which
		 * may lie past the bytes asked for.
		 */
		n = min(n, len - done);
		crc = grim_crc(crc, p, n);
		done += n;
	}
	if (done == len)
		skb_abort_seq_read(&st);
	return crc;
}

/* Continue @crc over the linear head [0, @hlen) of a frame, its csum
 * field taken as zero without writing it (a received frame may share its
 * head with a packet tap), and so the fragment check of a data frame
 * flagged GRIM_FF_ICSUM, which the lower device fills in after the CRC.
 */
static u32 grim_crc_head(const u8 *head, unsigned int hlen, u32 crc)
{
	const unsigned int check = GRIM_CTL_LEN +
				   offsetof(struct grim_frag_hdr, check);
	const struct grim_link_hdr *lh = (const void *)head;
	u8 buf[GRIM_CRC_SPLIT];

	memcpy(buf, head, hlen);
	memset(buf + offsetof(struct grim_link_hdr, csum), 0,
	       sizeof(lh->csum));
	if (lh->type == GRIM_FT_DATA && lh->flags & GRIM_FF_ICSUM &&
	    hlen >= check + sizeof(__sum16))
		memset(buf + check, 0, sizeof(__sum16));
	return grim_crc(crc, buf, hlen);
}

/* How many bytes of a frame of @len the CRC covers: all of them, but for
 * data frames whose sender left the payload to the lower link's check.
 */
static unsigned int grim_crc_len(const struct grim_link_hdr *lh,
				 unsigned int len)
{
	if (lh->type == GRIM_FT_DATA && !(lh->flags & GRIM_FF_DCRC))
		return min_t(unsigned int, len, GRIM_CRC_HDR_LEN);
	return len;
}

/* The CRC state of a frame's covered bytes past the split, to finish
 * with grim_frame_finish_head() at every transmission.
 */
u32 grim_frame_crc_tail(struct sk_buff *skb)
{
	unsigned int len = grim_crc_len((void *)skb->data, skb->len);

	if (len <= GRIM_CRC_SPLIT)
		return ~0U;
	return grim_crc_skb(skb, GRIM_CRC_SPLIT, len - GRIM_CRC_SPLIT, ~0U);
}

/* Seal a frame whose tail CRC state is known: only the head is summed.
 * The head (up to the split) must be linear and private.
 */
void grim_frame_finish_head(struct sk_buff *skb, u32 tail)
{
	struct grim_link_hdr *lh = (struct grim_link_hdr *)skb->data;

	lh->len = htons(skb->len);
	lh->csum = 0;
	lh->csum = htonl(~grim_crc(tail, skb->data,
				   min_t(unsigned int, skb->len,
					 GRIM_CRC_SPLIT)));
}

/* Seal a frame the NI owns: length and CRC over the whole frame. */
void grim_frame_finish(struct sk_buff *skb)
{
	grim_frame_finish_head(skb, grim_frame_crc_tail(skb));
}

/* With datacrc offload, give a data frame whose payload the CRC would
 * cover the Internet checksum instead, left to the lower device, when
 * that device computes it for any protocol (NETIF_F_HW_CSUM): hardware
 * that does so fills it in on the way out; veth hands the frame to its
 * peer with the sum still to do, so that a frame which never leaves the
 * host is never summed, as for TCP and UDP.  Wherever the frame meets a
 * device or a qdisc that must have the sum (a bridge port without the
 * feature, netem corrupting it), skb_checksum_help() computes it and the
 * receiver checks it.  Not the default: two bit errors in one frame can
 * cancel in that sum, never in CRC32C.  Called once per frame, before
 * its tail CRC; the frame's head is private.
 */
void grim_frame_csum_offload(struct grim_ni *ni, struct sk_buff *skb)
{
	const unsigned int check = GRIM_CTL_LEN +
				   offsetof(struct grim_frag_hdr, check);
	struct grim_link_hdr *lh = (struct grim_link_hdr *)skb->data;

	if (!(lh->flags & GRIM_FF_DCRC) || grim_ni_keyed(ni) ||
	    READ_ONCE(ni->data_crc) != GRIM_DATA_CRC_OFFLOAD ||
	    !(READ_ONCE(ni->lower->features) & NETIF_F_HW_CSUM) ||
	    !skb_partial_csum_set(skb, 0, check))
		return;
	lh->flags = (lh->flags & ~GRIM_FF_DCRC) | GRIM_FF_ICSUM;
	*(__sum16 *)(skb->data + check) = 0;
	grim_count(ni, NULL, GRIM_STAT_TX_CSUM_OFFLOAD);
}

/* The payload check of a data frame sent with GRIM_FF_ICSUM.  A frame
 * still CHECKSUM_PARTIAL has not been summed by anyone: it went from a
 * sender on this host to us through software only (veth, a bridge, our
 * own loopback), untouched, like a TCP segment in the same case.  Any
 * other frame is summed here; what hardware says of an unknown EtherType
 * is not trusted.
 */
static bool grim_frame_icsum_ok(struct grim_ni *ni, struct sk_buff *skb,
				unsigned int len)
{
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		grim_count(ni, NULL, GRIM_STAT_RX_CSUM_LOCAL);
		return true;
	}
	return !csum_fold(skb_checksum(skb, 0, len, 0));
}

/* Check a received frame of @len bytes, trimmed to @len, whose first
 * min(@len, GRIM_CRC_SPLIT) bytes are linear.
 */
static bool grim_frame_crc_ok(struct grim_ni *ni, struct sk_buff *skb,
			      unsigned int len)
{
	const struct grim_link_hdr *lh = (const void *)skb->data;
	unsigned int hlen = min_t(unsigned int, len, GRIM_CRC_SPLIT);
	unsigned int clen = grim_crc_len(lh, len);
	u32 crc = ~0U;

	if (clen > hlen)
		crc = grim_crc_skb(skb, hlen, clen - hlen, crc);
	crc = grim_crc_head(skb->data, hlen, crc);
	if (ntohl(lh->csum) != ~crc)
		return false;
	/* A data frame too short for its headers is dropped further on. */
	if (lh->type != GRIM_FT_DATA || !(lh->flags & GRIM_FF_ICSUM) ||
	    len < GRIM_DATA_HLEN)
		return true;
	return !(lh->flags & GRIM_FF_DCRC) &&
	       grim_frame_icsum_ok(ni, skb, len);
}

/* Time @tfm over @buf: the best of a few rounds, in ns per KiB. */
static u64 grim_crc_time(struct crypto_shash *tfm, const u8 *buf)
{
	u64 best = U64_MAX, t;
	int round, i;
	u32 crc = 0;

	for (round = 0; round < 4; round++) {
		t = ktime_get_ns();
		for (i = 0; i < 4; i++)
			crc = grim_crc_by(tfm, crc, buf, GRIM_CRC_CAL_LEN);
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	/* Keep the sums from being optimised away. */
	barrier_data(&crc);
	return div_u64(best, 4 * GRIM_CRC_CAL_LEN / 1024) ?: 1;
}

/* The crypto API ranks CRC32C drivers by a static priority: the CPU's
 * instructions first.  Where those instructions are slow (an emulated
 * CPU runs crc32 and pclmulqdq as helpers, several times slower than the
 * table-driven generic code), rank by speed instead, as the XOR and
 * RAID6 code do: time the chosen driver against the generic one on a
 * few KiB when the module loads and keep the faster.
 */
int grim_crc_init(void)
{
	struct crypto_shash *best, *generic;
	u64 t_best, t_generic;
	u8 *buf;

	best = crypto_alloc_shash("crc32c", 0, 0);
	if (IS_ERR(best))
		return PTR_ERR(best);
	grim_crc_tfm = best;
	grim_crc_generic = !strcmp(crypto_shash_driver_name(best),
				   "crc32c-generic");
	if (grim_crc_generic)
		return 0;
	generic = crypto_alloc_shash("crc32c-generic", 0, 0);
	if (IS_ERR(generic))
		return 0;
	buf = kmalloc(GRIM_CRC_CAL_LEN, GFP_KERNEL);
	if (!buf) {
		crypto_free_shash(generic);
		return 0;
	}
	get_random_bytes(buf, GRIM_CRC_CAL_LEN);
	t_best = grim_crc_time(best, buf);
	t_generic = grim_crc_time(generic, buf);
	kfree(buf);
	pr_info("CRC32C: %s %llu MB/s, %s %llu MB/s\n",
		crypto_shash_driver_name(best), div64_u64(1024000, t_best),
		crypto_shash_driver_name(generic),
		div64_u64(1024000, t_generic));
	if (t_generic < t_best) {
		grim_crc_tfm = generic;
		grim_crc_generic = true;
		crypto_free_shash(best);
	} else {
		crypto_free_shash(generic);
	}
	return 0;
}

void grim_crc_exit(void)
{
	crypto_free_shash(grim_crc_tfm);
}

const char *grim_crc_driver(void)
{
	return crypto_shash_driver_name(grim_crc_tfm);
}

void grim_link_hdr_init(struct grim_ni *ni, struct grim_peer *peer,
			struct grim_link_hdr *lh, u8 type, u8 flags,
			unsigned int len)
{
	lh->magic = htons(GRIM_ID);
	lh->version = GRIM_WIRE_VERSION;
	lh->type = type;
	lh->flags = flags;
	lh->xflags = 0;
	lh->len = htons(len);
	lh->cluster = htonl(ni->cluster);
	lh->src_node = htonl(ni->node);
	lh->dst_node = htonl(peer ? peer->node : GRIM_NODE_ANY);
	/* A receive stream makes frames without the peer lock. */
	lh->src_gen = htonl(peer ? READ_ONCE(peer->lgen) : ni->base_gen);
	lh->dst_gen = htonl(peer ? READ_ONCE(peer->rgen) : 0);
	lh->csum = 0;
}

/* A small linear frame with room for the lower device's header. */
struct sk_buff *grim_ctl_alloc(struct grim_ni *ni, unsigned int len)
{
	unsigned int hh = LL_RESERVED_SPACE(ni->lower);
	struct sk_buff *skb;

	skb = alloc_skb(hh + len + GRIM_AUTH_LEN + ni->lower->needed_tailroom,
			GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, hh);
	skb_reset_network_header(skb);
	return skb;
}

/* A control frame of @type about a stream: the link header and the
 * control message, with @extra bytes of room after them for the caller
 * to put.  Channels are from this NI's side: its own first.  NULL when
 * memory ran out (the frame is sent again, or its answer asked again).
 */
struct sk_buff *grim_ctl_frame(struct grim_ni *ni, struct grim_peer *peer,
			       u8 type, u8 flags, u16 src_chan, u16 dst_chan,
			       u32 seq, u32 inc, unsigned int extra)
{
	struct grim_ctl_msg *cm;
	struct sk_buff *skb;

	skb = grim_ctl_alloc(ni, GRIM_CTL_LEN + extra);
	if (!skb)
		return NULL;
	grim_link_hdr_init(ni, peer, skb_put(skb, GRIM_LINK_HLEN), type, flags,
			   0);
	cm = skb_put(skb, sizeof(*cm));
	cm->src_chan = htons(src_chan);
	cm->dst_chan = htons(dst_chan);
	cm->seq = htonl(seq);
	cm->inc = htonl(inc);
	cm->tsval = htonl(grim_ts_now());
	cm->tsecr = 0;
	return skb;
}

/* Make @skb a frame for the lower device, its Ethernet header pushed
 * (or, for our own node, hand it back to our receive path through the
 * backlog, so sending to oneself follows the same protocol: NULL then).
 * The skb may be a clone of a frame kept for retransmission: the
 * Ethernet header goes into a private head.  With a cluster key the
 * frame is sealed on the way; @echo is the challenge it echoes (a
 * broadcast frame's is 0, or the run id of an NI it answers).  It goes
 * to @mac if given, else to the peer's MAC, or to everyone when there is
 * no peer.  NULL, @skb consumed and counted, if it cannot be sent.
 */
static struct sk_buff *grim_xmit_prep(struct grim_ni *ni,
				      struct grim_peer *peer,
				      struct sk_buff *skb, u32 echo,
				      const u8 *mac)
{
	struct net_device *lower = ni->lower;

	skb->dev = lower;
	skb->protocol = htons(GRIM_ETH_P);
	/* ACKs, NACKs and hellos overtake data in priority qdiscs. */
	skb->priority = ((struct grim_link_hdr *)skb->data)->type ==
			GRIM_FT_DATA ? TC_PRIO_BESTEFFORT : TC_PRIO_CONTROL;
	skb_reset_network_header(skb);

	if (peer == ni->self) {
		skb->pkt_type = PACKET_LOOPBACK;
		skb_reset_mac_header(skb);
		netif_rx(skb);
		return NULL;
	}
	skb = grim_auth_seal(ni, peer, skb, echo);
	if (!skb)
		return NULL;
	if (skb_cow_head(skb, LL_RESERVED_SPACE(lower)) ||
	    dev_hard_header(skb, lower, GRIM_ETH_P,
			    mac ?: peer ? peer->mac : lower->broadcast, NULL,
			    skb->len) < 0) {
		grim_count(ni, peer, GRIM_STAT_TX_ERRORS);
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Queue @skb, @n frames, on the lower device.  Consumes @skb. */
static void grim_xmit_lower(struct grim_ni *ni, struct grim_peer *peer,
			    struct sk_buff *skb, unsigned int n)
{
	int rc = dev_queue_xmit(skb);

	if (rc == NET_XMIT_SUCCESS)
		return;
	if (rc == NET_XMIT_DROP || rc == NET_XMIT_CN) {
		/* A full qdisc: congestion on our own side of the path. */
		grim_count_add(ni, peer, GRIM_STAT_TX_QDISC_DROPS, n);
		if (peer)
			WRITE_ONCE(peer->xmit_congested, true);
		return;
	}
	grim_count_add(ni, peer, GRIM_STAT_TX_ERRORS, n);
}

/* Send one frame: see grim_xmit_prep().  Consumes @skb. */
void grim_xmit_echo(struct grim_ni *ni, struct grim_peer *peer,
		    struct sk_buff *skb, u32 echo, const u8 *mac)
{
	skb = grim_xmit_prep(ni, peer, skb, echo, mac);
	if (skb)
		grim_xmit_lower(ni, peer, skb, 1);
}

/* Batches.  Frames to one peer that are ready together go to the lower
 * device as one packet, the way TCP hands it a 64 KB segment: a GSO skb
 * (SKB_GSO_FRAGLIST) whose head is the first frame and whose frag_list
 * holds the others, each a whole Ethernet frame with its own header.  A
 * device that carries such packets whole (veth, and what forwards
 * between them) moves the batch in one pass through the qdisc, the
 * device and the peer's receive path, and the receiving NI takes the
 * frames apart again (grim_rcv_batch()).  Any other device has the core
 * split it before its driver, in grim_gso_segment(), for free: the
 * frames are already made, and go to the driver back to back, each
 * with xmit_more but the last.  Nothing on the wire changes.
 *
 * The packet's "transport header" is its mac header, so that a qdisc
 * charges it exactly its bytes on the wire and a shaper (tbf) sees each
 * frame's whole length as gso_size.
 */

struct grim_batch {
	struct sk_buff *head, *tail;
	unsigned int n;
	unsigned int max_len;
};

static void grim_batch_flush(struct grim_ni *ni, struct grim_peer *peer,
			     struct grim_batch *b)
{
	struct sk_buff *head = b->head;

	if (!head)
		return;
	if (b->n > 1) {
		skb_shinfo(head)->gso_type = SKB_GSO_FRAGLIST;
		skb_shinfo(head)->gso_size = b->max_len;
		skb_shinfo(head)->gso_segs = b->n;
		/* The core splits a GSO packet that is neither: a head
		 * whose sum is left to the device stays so.
		 */
		if (head->ip_summed != CHECKSUM_PARTIAL)
			head->ip_summed = CHECKSUM_UNNECESSARY;
		skb_reset_transport_header(head);
		grim_count(ni, peer, GRIM_STAT_TX_BATCHES);
	}
	grim_xmit_lower(ni, peer, head, b->n);
	b->head = NULL;
}

/* Add @skb, a frame made by grim_xmit_prep(), to the batch, or send the
 * batch and start the next with it.
 */
static void grim_batch_add(struct grim_ni *ni, struct grim_peer *peer,
			   struct grim_batch *b, struct sk_buff *skb)
{
	struct net_device *lower = ni->lower;
	struct sk_buff *head = b->head;
	unsigned int limit;

	limit = min_t(unsigned int, grim_gso_max_size(lower),
		      GSO_LEGACY_MAX_SIZE);
	if (head && head->priority == skb->priority &&
	    head->ip_summed == skb->ip_summed &&
	    !skb_has_frag_list(skb) && head->len + skb->len < limit &&
	    b->n < READ_ONCE(lower->gso_max_segs)) {
		if (b->n == 1) {
			/* A first transmission is a clone that shares its
			 * head with the frame kept for retransmission: the
			 * batch's frag_list needs a head of its own.
			 */
			if (skb_has_frag_list(head) ||
			    (skb_cloned(head) &&
			     pskb_expand_head(head, 0, 0, GFP_ATOMIC)))
				goto flush;
			skb_shinfo(head)->frag_list = skb;
		} else {
			b->tail->next = skb;
		}
		skb->next = NULL;
		b->tail = skb;
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
		b->max_len = max(b->max_len, skb->len);
		b->n++;
		return;
	}
flush:
	grim_batch_flush(ni, peer, b);
	b->head = skb;
	b->n = 1;
	b->max_len = skb->len;
}

/* Queue a frame made under the peer lock.  It goes to the lower device
 * when the lock is released: nothing holds the lock every stream of the
 * peer shares across the lower device's transmit path.
 */
void grim_peer_xmit(struct grim_peer *peer, struct sk_buff *skb)
{
	lockdep_assert_held(&peer->lock);
	__skb_queue_tail(&peer->xmitq, skb);
}

/* Send the frames on @q, made for @peer, to the lower device in
 * batches.  No lock held, BH off.
 */
void grim_xmit_queue(struct grim_ni *ni, struct grim_peer *peer,
		     struct sk_buff_head *q)
{
	struct grim_batch b = { };
	struct sk_buff *skb;
	u32 echo;

	if (skb_queue_empty(q))
		return;
	echo = READ_ONCE(peer->auth_rchal);
	while ((skb = __skb_dequeue(q))) {
		skb = grim_xmit_prep(ni, peer, skb, echo, NULL);
		if (skb)
			grim_batch_add(ni, peer, &b, skb);
	}
	grim_batch_flush(ni, peer, &b);
}

/* Release the peer lock, and move what was queued under it to the tail
 * of @q, for whoever sends @q (a receive stream that keeps its own lock
 * after this).  Streams waiting for room in the window are not woken:
 * a stream sending takes the lock of its reverse stream, which may be
 * held (grim_frame_ack()).
 */
void grim_peer_unlock_to(struct grim_peer *peer, struct sk_buff_head *q)
	__releases(&peer->lock)
{
	skb_queue_splice_tail_init(&peer->xmitq, q);
	spin_unlock(&peer->lock);
}

/* Release the peer lock, BH still off, and send what was queued under
 * it, in batches.  Each CPU sends the frames it took, in their order;
 * two CPUs that release the lock at once may interleave theirs, which
 * the transport takes as any reordering.  (A single sender for all
 * would keep a stream's order across CPUs, but could be held sending,
 * BH off, for as long as the other CPUs keep queueing.)
 */
void grim_peer_unlock(struct grim_peer *peer)
	__releases(&peer->lock)
{
	struct sk_buff_head q;

	if (!list_empty_careful(&peer->cwnd_wait))
		grim_peer_cwnd_wake(peer, &peer->xmitq);
	__skb_queue_head_init(&q);
	grim_peer_unlock_to(peer, &q);
	grim_xmit_queue(peer->ni, peer, &q);
}

/* A frame taken off a batch's frag_list, as an skb of our own: a clone
 * if another holder of the batch (a packet tap) references it too, since
 * then not even its ->next may change.  Consumes @skb; NULL if no memory.
 */
static struct sk_buff *grim_skb_own(struct sk_buff *skb)
{
	struct sk_buff *c;

	if (!skb_shared(skb)) {
		skb_mark_not_on_list(skb);
		return skb;
	}
	c = skb_clone(skb, GFP_ATOMIC);
	consume_skb(skb);
	return c;
}

/* The core's software segmentation of a batch (see above), for a device
 * that cannot carry it whole: unchain its frames.  The head comes with
 * its data past its Ethernet header; every other frame has its own.
 */
static struct sk_buff *grim_gso_segment(struct sk_buff *skb,
					netdev_features_t features)
{
	struct sk_buff *list = skb_shinfo(skb)->frag_list;
	struct sk_buff *seg, *tail = skb;
	unsigned int len = 0, truesize = 0;

	if (!(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST) || !list)
		return ERR_PTR(-EINVAL);
	if (skb_unclone(skb, GFP_ATOMIC))
		return ERR_PTR(-ENOMEM);
	/* skb_unclone() may have given the head a new frag_list of
	 * references to the same frames.
	 */
	list = skb_shinfo(skb)->frag_list;
	skb_shinfo(skb)->frag_list = NULL;
	while (list) {
		seg = list;
		list = seg->next;
		len += seg->len;
		truesize += seg->truesize;
		seg = grim_skb_own(seg);
		tail->next = seg;
		if (!seg) {
			kfree_skb_list(list);
			goto fail;
		}
		tail = seg;
		/* The qdisc's state for the packet (its drop reason,
		 * should one drop the frame) is in the head's cb; the
		 * frame's own cb is still the NI's.
		 */
		memcpy(seg->cb, skb->cb, sizeof(seg->cb));
		seg->dev = skb->dev;
		seg->protocol = skb->protocol;
		seg->priority = skb->priority;
		seg->queue_mapping = skb->queue_mapping;
		skb_reset_mac_header(seg);
		skb_set_network_header(seg, ETH_HLEN);
		seg->mac_len = ETH_HLEN;
		if (skb_needs_linearize(seg, features) && __skb_linearize(seg)) {
			kfree_skb_list(list);
			goto fail;
		}
	}
	tail->next = NULL;
	skb->len -= len;
	skb->data_len -= len;
	if (skb->truesize > truesize)
		skb->truesize -= truesize;
	skb_gso_reset(skb);
	skb->prev = tail;
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		skb->ip_summed = CHECKSUM_NONE;
	if (skb_needs_linearize(skb, features) && __skb_linearize(skb))
		goto fail;
	/* The core leaves the split frames' sums to us: a frame whose sum
	 * was left to a device that cannot make it is summed here.
	 */
	if (!(features & NETIF_F_HW_CSUM)) {
		for (seg = skb; seg; seg = seg->next)
			if (seg->ip_summed == CHECKSUM_PARTIAL &&
			    skb_checksum_help(seg))
				goto fail;
	}
	skb_get(skb);	/* the caller frees the packet it split */
	return skb;

fail:
	kfree_skb_list(skb->next);
	skb->next = NULL;
	skb->prev = skb;
	return ERR_PTR(-ENOMEM);
}

static struct packet_offload grim_offload __read_mostly = {
	.type = cpu_to_be16(GRIM_ETH_P),
	.callbacks = {
		.gso_segment = grim_gso_segment,
	},
};

void grim_offload_init(void)
{
	dev_add_offload(&grim_offload);
}

void grim_offload_exit(void)
{
	dev_remove_offload(&grim_offload);
}

/* Whether @skb is a whole, intact GRIM frame of our cluster; if not,
 * *why is the counter to drop it by (GRIM_STAT_MAX: counted already).
 */
static bool grim_rcv_valid(struct grim_ni *ni, struct sk_buff *skb,
			   struct grim_auth_info *ai, enum grim_stat *why)
{
	const struct grim_link_hdr *lh;
	unsigned int len;

	if (!pskb_may_pull(skb, GRIM_LINK_HLEN)) {
		*why = GRIM_STAT_DROP_SHORT;
		return false;
	}
	lh = (const struct grim_link_hdr *)skb->data;
	if (lh->magic != htons(GRIM_ID)) {
		*why = GRIM_STAT_DROP_MAGIC;
		return false;
	}
	if (lh->version != GRIM_WIRE_VERSION) {
		*why = GRIM_STAT_DROP_VERSION;
		return false;
	}
	len = ntohs(lh->len);
	if (len < GRIM_LINK_HLEN || len > skb->len) {
		*why = GRIM_STAT_DROP_LENGTH;
		return false;
	}
	/* Ethernet may pad short frames: the header's length is the truth. */
	if (pskb_trim_rcsum(skb, len)) {
		*why = GRIM_STAT_DROP_NOMEM;
		return false;
	}
	/* Our own frames, from the backlog, carry no tag. */
	if (skb->pkt_type == PACKET_LOOPBACK) {
		memset(ai, 0, sizeof(*ai));
	} else if (!grim_auth_open(ni, skb, ai)) {
		*why = GRIM_STAT_MAX;
		return false;
	}
	len = skb->len;
	if (!pskb_may_pull(skb, min_t(unsigned int, len, GRIM_CRC_SPLIT))) {
		*why = GRIM_STAT_DROP_NOMEM;
		return false;
	}
	lh = (const struct grim_link_hdr *)skb->data;
	/* The tag covers more than the CRC would, and better. */
	if (!ai->authed && !grim_frame_crc_ok(ni, skb, len)) {
		*why = GRIM_STAT_DROP_CSUM;
		return false;
	}
	if (ntohl(lh->cluster) != ni->cluster) {
		*why = GRIM_STAT_DROP_CLUSTER;
		return false;
	}
	return true;
}

static int grim_rcv_frame(struct sk_buff *skb, struct grim_ni *ni);

/* A batch (see grim_batch_flush()) that came whole: the head is a frame
 * past its Ethernet header, every other frame has its own.  Take them
 * apart and receive each in turn, as if they had come one by one.
 */
static int grim_rcv_batch(struct sk_buff *skb, struct grim_ni *ni)
{
	struct net_device *dev = skb->dev;
	unsigned int len = 0, truesize = 0;
	struct sk_buff *list, *seg;
	ktime_t tstamp;
	int iif;

	if (skb_unclone(skb, GFP_ATOMIC)) {
		grim_drop(ni, NULL, skb, GRIM_STAT_DROP_NOMEM);
		return NET_RX_DROP;
	}
	list = skb_shinfo(skb)->frag_list;
	skb_shinfo(skb)->frag_list = NULL;
	for (seg = list; seg; seg = seg->next) {
		len += seg->len;
		truesize += seg->truesize;
	}
	skb->len -= len;
	skb->data_len -= len;
	if (skb->truesize > truesize)
		skb->truesize -= truesize;
	skb_gso_reset(skb);
	grim_count(ni, NULL, GRIM_STAT_RX_BATCHES);

	/* What the frames after the head take from it: the head is
	 * consumed first.
	 */
	iif = skb->skb_iif;
	tstamp = skb->tstamp;
	grim_rcv_frame(skb, ni);
	while (list) {
		seg = list;
		list = seg->next;
		/* Shared with another holder of the batch (a packet tap,
		 * which copies it later): not even ->next is ours.
		 */
		seg = grim_skb_own(seg);
		if (!seg) {
			grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
			continue;
		}
		if (!pskb_may_pull(seg, ETH_HLEN)) {
			grim_drop(ni, NULL, seg, GRIM_STAT_DROP_SHORT);
			continue;
		}
		seg->protocol = eth_type_trans(seg, dev);
		skb_reset_network_header(seg);
		skb_reset_mac_len(seg);
		seg->skb_iif = iif;
		seg->tstamp = tstamp;
		if (seg->protocol != htons(GRIM_ETH_P)) {
			grim_drop(ni, NULL, seg, GRIM_STAT_DROP_NOT_OURS);
			continue;
		}
		grim_rcv_frame(seg, ni);
	}
	return NET_RX_SUCCESS;
}

/* Entry point for GRIM frames from the lower device (softirq, RCU). */
int grim_rcv(struct sk_buff *skb, struct net_device *dev,
	     struct packet_type *pt, struct net_device *orig_dev)
{
	struct grim_ni *ni = pt->af_packet_priv;

	/* Frames a bridge floods to every port: not worth a clone. */
	if (skb->pkt_type == PACKET_OTHERHOST) {
		consume_skb(skb);
		return NET_RX_SUCCESS;
	}
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (unlikely(skb_has_frag_list(skb)) &&
	    skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST &&
	    READ_ONCE(ni->running))
		return grim_rcv_batch(skb, ni);
	return grim_rcv_frame(skb, ni);
}

/* One frame, @skb not shared. */
static int grim_rcv_frame(struct sk_buff *skb, struct grim_ni *ni)
{
	const struct grim_link_hdr *lh;
	enum grim_stat why = GRIM_STAT_MAX;
	struct grim_auth_info ai;
	struct grim_peer *peer;
	u32 src, dst;
	struct grim_report rep = { };
	u16 reason = 0;
	u32 from = 0;
	bool loop;

	if (skb->pkt_type == PACKET_OTHERHOST)
		goto consume;
	if (!READ_ONCE(ni->running))
		goto consume;
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	if (!grim_rcv_valid(ni, skb, &ai, &why))
		goto drop;

	lh = (const struct grim_link_hdr *)skb->data;
	src = ntohl(lh->src_node);
	dst = ntohl(lh->dst_node);
	loop = skb->pkt_type == PACKET_LOOPBACK;
	if (!loop && src == ni->node && lh->type == GRIM_FT_HELLO) {
		grim_ni_rcv_own_hello(ni, skb, &ai);
		goto consume;
	}
	if (READ_ONCE(ni->conflict))
		goto consume;	/* frames for the NI that has our node id */
	if ((loop ? src != ni->node : src == ni->node) ||
	    src == GRIM_NODE_ANY || src == 0 ||
	    (dst != ni->node && !(dst == GRIM_NODE_ANY &&
				  lh->type == GRIM_FT_HELLO))) {
		why = GRIM_STAT_DROP_NOT_OURS;
		goto drop;
	}

	switch (lh->type) {
	case GRIM_FT_HELLO:
		grim_count(ni, NULL, GRIM_STAT_RX_HELLOS);
		grim_peer_rcv_hello(ni, skb, lh, &ai);
		goto consume;
	case GRIM_FT_DATA:
	case GRIM_FT_ACK:
	case GRIM_FT_NACK:
	case GRIM_FT_REJECT:
	case GRIM_FT_ABORT:
	case GRIM_FT_CLOSE:
	case GRIM_FT_CLOSED:
		break;
	default:
		why = GRIM_STAT_DROP_TYPE;
		goto drop;
	}

	peer = grim_peer_lookup(ni, src);
	if (!peer) {
		why = GRIM_STAT_DROP_UNKNOWN_PEER;
		goto drop;
	}
	if (!pskb_may_pull(skb, GRIM_CTL_LEN)) {
		grim_drop(ni, peer, skb, GRIM_STAT_DROP_SHORT);
		return NET_RX_DROP;
	}
	lh = (const struct grim_link_hdr *)skb->data;
	if (lh->type == GRIM_FT_ACK && lh->flags & GRIM_FF_SACK) {
		unsigned int rlen = skb->len - GRIM_CTL_LEN;

		/* Whole words, at least one: the frame's length says how
		 * many (its header's length was checked against it).
		 */
		if (!rlen || rlen % sizeof(struct grim_sack) ||
		    !pskb_may_pull(skb, skb->len)) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_SHORT);
			return NET_RX_DROP;
		}
		if (rlen > GRIM_SACK_WORDS * sizeof(struct grim_sack)) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_LENGTH);
			return NET_RX_DROP;
		}
		lh = (const struct grim_link_hdr *)skb->data;
		rep.held = (const struct grim_sack *)(skb->data + GRIM_CTL_LEN);
		rep.words = rlen / sizeof(struct grim_sack);
	}
	if (lh->type == GRIM_FT_REJECT) {
		const struct grim_reject *rej;

		if (!pskb_may_pull(skb, GRIM_CTL_LEN + sizeof(*rej))) {
			grim_drop(ni, peer, skb, GRIM_STAT_DROP_SHORT);
			return NET_RX_DROP;
		}
		lh = (const struct grim_link_hdr *)skb->data;
		rej = (const struct grim_reject *)(skb->data + GRIM_CTL_LEN);
		reason = ntohs(rej->reason);
		from = ntohl(rej->from);
	}
	grim_count(ni, peer, GRIM_STAT_RX_FRAMES);

	spin_lock(&peer->lock);
	if (peer->dead || !grim_peer_auth_fresh(ni, peer, &ai) ||
	    !grim_peer_check_session(ni, peer, lh)) {
		grim_peer_unlock(peer);
		goto drop;
	}
	if (lh->type == GRIM_FT_DATA) {
		/* Consumes skb, and releases the lock. */
		grim_rx_data(ni, peer, skb);
		return NET_RX_SUCCESS;
	}
	if (lh->type == GRIM_FT_ACK || lh->type == GRIM_FT_NACK) {
		/* Releases the lock. */
		grim_tx_rcv_ack(ni, peer, lh,
				(const struct grim_ctl_msg *)(lh + 1), &rep);
		goto consume;
	}
	if (lh->type == GRIM_FT_ABORT && lh->xflags & GRIM_XF_QUERY)
		grim_rx_denied(ni, peer, (const struct grim_ctl_msg *)(lh + 1));
	else if (lh->type == GRIM_FT_ABORT)
		grim_rx_abort(ni, peer, (const struct grim_ctl_msg *)(lh + 1));
	else if (lh->type == GRIM_FT_CLOSE)
		grim_rx_close(ni, peer, (const struct grim_ctl_msg *)(lh + 1));
	else if (lh->type == GRIM_FT_CLOSED)
		grim_tx_rcv_closed(ni, peer,
				   (const struct grim_ctl_msg *)(lh + 1));
	else
		grim_tx_rcv_reject(ni, peer, (const struct grim_ctl_msg *)(lh + 1),
				   reason, from);
	grim_peer_unlock(peer);

consume:
	consume_skb(skb);
	return NET_RX_SUCCESS;
drop:
	if (why < GRIM_STAT_MAX)
		grim_count(ni, NULL, why);
	kfree_skb_reason(skb, grim_drop_reason(why));
	return NET_RX_DROP;
}
