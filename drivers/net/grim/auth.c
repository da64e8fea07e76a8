// SPDX-License-Identifier: GPL-2.0
/*
 * GRIM NI: authenticated links.
 *
 * With a cluster key every frame an NI sends ends in a struct grim_auth
 * and a ChaCha20-Poly1305 tag over the whole frame (see the wire format
 * in include/uapi/linux/grim.h), and every frame it receives must carry
 * a good one under one of its keys before anything else looks at it.
 * The payload is authenticated, not encrypted.
 *
 * A nonce is the NI's random run id and a 64-bit frame counter that
 * starts at random: frames of one run never share one, and two runs (of
 * any NIs with the key) share one with a chance of about one in 2^96 per
 * frame.  The tag binds the sender's node id, the session generations
 * and the sender's MAC; the receiver's peer code then takes a frame only
 * if its number was not seen before (a window per peer) and, for a run it
 * does not know yet, only if it echoes a fresh challenge
 * (grim_peer_auth_fresh()).  Replayed frames, of this run or an earlier
 * one, are dropped and counted.
 *
 * An NI holds up to GRIM_MAX_KEYS keys: it takes frames under any of
 * them and sends under one.  A key is rolled over by adding the new one
 * everywhere, then sending with it everywhere, then removing the old one;
 * nothing is lost on the way.
 *
 * The AEAD is the crypto API's synchronous "rfc7539(chacha20,poly1305)":
 * frames are sealed and opened in the softirq or under the peer lock
 * that sends them, and never wait.
 */
#include <crypto/aead.h>
#include <linux/etherdevice.h>
#include <linux/if_packet.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "grim.h"

#define GRIM_AUTH_AEAD	"rfc7539(chacha20,poly1305)"
#define GRIM_AUTH_AEAD_GENERIC	"rfc7539(chacha20-generic,poly1305-generic)"
#define GRIM_AUTH_CAL_LEN	1500
#define GRIM_NONCE_OFF	offsetof(struct grim_auth, boot)
#define GRIM_NONCE_LEN	12

static_assert(sizeof(struct grim_auth) == 28);
static_assert(offsetof(struct grim_auth, pn_lo) + 4 ==
	      GRIM_NONCE_OFF + GRIM_NONCE_LEN);

/* A nonzero random 32-bit value: run ids and challenges. */
u32 grim_auth_random(void)
{
	u32 v;

	do {
		v = get_random_u32();
	} while (!v);
	return v;
}

/* A new run of the NI (it starts): new nonces, new challenges. */
void grim_auth_start(struct grim_ni *ni)
{
	ni->auth_boot = grim_auth_random();
	/* 2^62 frames to go before the counter could wrap. */
	atomic64_set(&ni->auth_pn, get_random_u64() >> 2);
}

/* One AEAD operation on a linear frame of @len bytes at @data, whose last
 * GRIM_AUTH_TAG_LEN bytes are the tag: written when sealing, checked when
 * opening.  Nothing else is written.
 */
static int grim_auth_crypt(struct grim_key *key, u8 *data, unsigned int len,
			   bool seal)
{
	struct aead_request *req;
	struct scatterlist sg;
	u8 iv[GRIM_NONCE_LEN];
	int err;

	req = aead_request_alloc(key->tfm, GFP_ATOMIC);
	if (!req)
		return -ENOMEM;
	memcpy(iv, data + len - GRIM_AUTH_LEN + GRIM_NONCE_OFF, sizeof(iv));
	sg_init_one(&sg, data, len);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, len - GRIM_AUTH_TAG_LEN);
	aead_request_set_crypt(req, &sg, &sg, seal ? 0 : GRIM_AUTH_TAG_LEN, iv);
	err = seal ? crypto_aead_encrypt(req) : crypto_aead_decrypt(req);
	aead_request_free(req);
	return err;
}

/* Seal a frame about to go to the lower device (its data starts at the
 * link header): append the trailer and the tag.  A frame shared with the
 * transmit queue, or without the room, is copied first.  Returns the
 * frame to send, or NULL when it was dropped (and counted).
 */
struct sk_buff *grim_auth_seal(struct grim_ni *ni, struct grim_peer *peer,
			       struct sk_buff *skb, u32 echo)
{
	struct net_device *lower = ni->lower;
	struct grim_link_hdr *lh;
	struct grim_auth *tr;
	struct grim_key *key;
	struct sk_buff *nskb;
	u64 pn;

	rcu_read_lock();
	key = rcu_dereference(ni->tx_key);
	if (!key) {
		rcu_read_unlock();
		return skb;
	}
	/* A frame cut before the key came may have left its sum to the
	 * lower device, which would write it after the tag: sum it now.
	 */
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb))
		goto drop;
	if (skb_cloned(skb) || skb_is_nonlinear(skb) ||
	    skb_tailroom(skb) < GRIM_AUTH_LEN + lower->needed_tailroom) {
		nskb = skb_copy_expand(skb, LL_RESERVED_SPACE(lower),
				       GRIM_AUTH_LEN + lower->needed_tailroom,
				       GFP_ATOMIC);
		if (!nskb)
			goto drop;
		consume_skb(skb);
		skb = nskb;
	}
	lh = (struct grim_link_hdr *)skb->data;
	tr = skb_put(skb, sizeof(*tr));
	tr->key_id = key->id;
	tr->reserved = 0;
	ether_addr_copy(tr->src_mac, lower->dev_addr);
	tr->boot = htonl(ni->auth_boot);
	pn = atomic64_inc_return(&ni->auth_pn);
	tr->pn_hi = htonl(upper_32_bits(pn));
	tr->pn_lo = htonl(lower_32_bits(pn));
	tr->echo = htonl(echo);
	tr->chal = htonl(peer ? READ_ONCE(peer->auth_chal) : 0);
	skb_put_zero(skb, GRIM_AUTH_TAG_LEN);
	lh->xflags |= GRIM_XF_AUTH;
	lh->len = htons(skb->len);
	lh->csum = 0;
	if (grim_auth_crypt(key, skb->data, skb->len, true))
		goto drop;
	rcu_read_unlock();
	return skb;
drop:
	rcu_read_unlock();
	grim_count(ni, peer, GRIM_STAT_TX_ERRORS);
	kfree_skb(skb);
	return NULL;
}

/* Which implementation of the AEAD keys use: the crypto API's choice, or
 * the generic C code when that is faster here.  The crypto API ranks
 * drivers by a static priority, the CPU's vector instructions first;
 * an emulated CPU runs those as helpers, several times slower than
 * scalar code (as for CRC32C, see grim_crc_init()).  So the first key
 * times both on a frame-sized tag and keeps the faster.
 */
static DEFINE_MUTEX(grim_auth_alg_lock);
static const char *grim_auth_alg;

static struct crypto_aead *grim_auth_alloc(const char *name, const u8 *secret)
{
	struct crypto_aead *tfm;
	int err;

	tfm = crypto_alloc_aead(name, 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(tfm))
		return tfm;
	err = crypto_aead_setauthsize(tfm, GRIM_AUTH_TAG_LEN) ?:
	      crypto_aead_setkey(tfm, secret, GRIM_AUTH_KEY_LEN);
	if (err) {
		crypto_free_aead(tfm);
		return ERR_PTR(err);
	}
	return tfm;
}

/* The best of a few rounds of tagging @buf with @tfm, in ns. */
static u64 grim_auth_time(struct crypto_aead *tfm, u8 *buf)
{
	struct grim_key key = { .tfm = tfm };
	u64 best = U64_MAX, t;
	int round, i;

	for (round = 0; round < 4; round++) {
		t = ktime_get_ns();
		for (i = 0; i < 8; i++)
			grim_auth_crypt(&key, buf, GRIM_AUTH_CAL_LEN, true);
		best = min(best, ktime_get_ns() - t);
	}
	return best ?: 1;
}

static const char *grim_auth_pick(void)
{
	struct crypto_aead *best, *generic;
	u8 secret[GRIM_AUTH_KEY_LEN];
	u64 t_best, t_generic;
	u8 *buf;

	mutex_lock(&grim_auth_alg_lock);
	if (grim_auth_alg)
		goto out;
	get_random_bytes(secret, sizeof(secret));
	best = grim_auth_alloc(GRIM_AUTH_AEAD, secret);
	if (IS_ERR(best))
		goto out;	/* no AEAD: the key fails with the reason */
	grim_auth_alg = GRIM_AUTH_AEAD;
	generic = grim_auth_alloc(GRIM_AUTH_AEAD_GENERIC, secret);
	buf = kmalloc(GRIM_AUTH_CAL_LEN, GFP_KERNEL);
	if (!IS_ERR(generic) && buf) {
		get_random_bytes(buf, GRIM_AUTH_CAL_LEN);
		local_bh_disable();
		t_best = grim_auth_time(best, buf);
		t_generic = grim_auth_time(generic, buf);
		local_bh_enable();
		pr_info("cluster keys: %s %llu ns, generic %llu ns per %u-byte frame\n",
			crypto_aead_driver_name(best), div_u64(t_best, 8),
			div_u64(t_generic, 8), GRIM_AUTH_CAL_LEN);
		if (t_generic < t_best)
			grim_auth_alg = GRIM_AUTH_AEAD_GENERIC;
	}
	kfree(buf);
	if (!IS_ERR(generic))
		crypto_free_aead(generic);
	crypto_free_aead(best);
out:
	mutex_unlock(&grim_auth_alg_lock);
	memzero_explicit(secret, sizeof(secret));
	return grim_auth_alg ?: GRIM_AUTH_AEAD;
}

static struct grim_key *grim_key_find(struct grim_ni *ni, u8 id)
{
	struct grim_key *key;
	int i;

	for (i = 0; i < GRIM_MAX_KEYS; i++) {
		key = rcu_dereference_rtnl(ni->keys[i]);
		if (key && key->id == id)
			return key;
	}
	return NULL;
}

/* Check a received frame (trimmed to its length, the first
 * GRIM_LINK_HLEN bytes linear) against the NI's keys.  With no key, only
 * frames without a tag pass, and @ai says they were not authenticated.
 * With keys, only frames whose tag is good under one of them, and whose
 * sender's MAC is the one the tag covers, pass: the trailer is then
 * taken off, and @ai says what it held.  Counts what it drops.  RCU.
 */
bool grim_auth_open(struct grim_ni *ni, struct sk_buff *skb,
		    struct grim_auth_info *ai)
{
	const struct grim_link_hdr *lh = (const void *)skb->data;
	unsigned int len = skb->len;
	struct grim_auth tr;
	struct grim_key *key;
	bool tagged = lh->xflags & GRIM_XF_AUTH;

	memset(ai, 0, sizeof(*ai));
	/* An NI with keys always has one to send with. */
	if (!grim_ni_keyed(ni)) {
		if (!tagged)
			return true;
		goto bad;	/* we cannot check it */
	}
	if (!tagged || len < GRIM_LINK_HLEN + GRIM_AUTH_LEN)
		goto bad;
	if (skb_linearize(skb)) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return false;
	}
	memcpy(&tr, skb->data + len - GRIM_AUTH_LEN, sizeof(tr));
	key = grim_key_find(ni, tr.key_id);
	if (!key || grim_auth_crypt(key, skb->data, len, false))
		goto bad;
	/* The MAC a hello teaches must be the one the sender signed. */
	if (!skb_mac_header_was_set(skb) || skb->mac_len < ETH_HLEN ||
	    !ether_addr_equal(eth_hdr(skb)->h_source, tr.src_mac))
		goto bad;
	ai->authed = true;
	ether_addr_copy(ai->mac, tr.src_mac);
	ai->boot = ntohl(tr.boot);
	ai->pn = (u64)ntohl(tr.pn_hi) << 32 | ntohl(tr.pn_lo);
	ai->echo = ntohl(tr.echo);
	ai->chal = ntohl(tr.chal);
	if (pskb_trim_rcsum(skb, len - GRIM_AUTH_LEN)) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return false;
	}
	return true;
bad:
	grim_count(ni, NULL, GRIM_STAT_DROP_AUTH);
	return false;
}

/* Whether frame number @pn of the peer's current run was not seen yet;
 * records it.  Frames more than GRIM_AUTH_WINDOW behind the newest are
 * taken as seen.  Peer lock held.
 */
bool grim_auth_window(struct grim_peer *peer, u64 pn)
{
	u64 shift;

	if (pn > peer->auth_pn_max) {
		shift = pn - peer->auth_pn_max;
		if (shift >= GRIM_AUTH_WINDOW) {
			bitmap_zero(peer->auth_seen, GRIM_AUTH_WINDOW);
		} else {
			bitmap_shift_left(peer->auth_seen, peer->auth_seen,
					  shift, GRIM_AUTH_WINDOW);
		}
		peer->auth_pn_max = pn;
		__set_bit(0, peer->auth_seen);
		return true;
	}
	shift = peer->auth_pn_max - pn;
	if (shift >= GRIM_AUTH_WINDOW)
		return false;
	return !__test_and_set_bit(shift, peer->auth_seen);
}

/* Take the peer's run @boot from its frame number @pn on.  Peer lock. */
void grim_auth_window_reset(struct grim_peer *peer, u32 boot, u64 pn)
{
	peer->auth_rboot = boot;
	peer->auth_pn_max = pn;
	bitmap_zero(peer->auth_seen, GRIM_AUTH_WINDOW);
	__set_bit(0, peer->auth_seen);
}

static void grim_key_free_rcu(struct rcu_head *head)
{
	struct grim_key *key = container_of(head, struct grim_key, rcu);

	crypto_free_aead(key->tfm);
	kfree_sensitive(key);
}

/* Add key @id with @secret, or (no @secret) pick key @id to send with.
 * The first key an NI gets is the one it sends with; @tx makes a new key
 * that one at once.  RTNL held.
 */
int grim_key_set(struct grim_ni *ni, u8 id, const u8 *secret, bool tx,
		 struct netlink_ext_ack *extack)
{
	struct grim_key *key, *old_tx;
	bool first;
	int slot = -1, i, err;

	ASSERT_RTNL();
	key = grim_key_find(ni, id);
	if (!secret) {
		if (!key) {
			NL_SET_ERR_MSG(extack, "no key with this id");
			return -ENOENT;
		}
		rcu_assign_pointer(ni->tx_key, key);
		return 0;
	}
	if (key) {
		/* A key is never changed under frames signed with it. */
		NL_SET_ERR_MSG(extack, "a key with this id exists: remove it first");
		return -EEXIST;
	}
	for (i = 0; i < GRIM_MAX_KEYS; i++)
		if (!rtnl_dereference(ni->keys[i]))
			slot = i;
	if (slot < 0) {
		NL_SET_ERR_MSG(extack, "the link has its two keys: remove one first");
		return -ENOSPC;
	}
	key = kzalloc(sizeof(*key), GFP_KERNEL);
	if (!key)
		return -ENOMEM;
	key->id = id;
	key->tfm = grim_auth_alloc(grim_auth_pick(), secret);
	if (IS_ERR(key->tfm)) {
		err = PTR_ERR(key->tfm);
		kfree(key);
		NL_SET_ERR_MSG(extack, "the kernel has no " GRIM_AUTH_AEAD);
		return err;
	}
	old_tx = rtnl_dereference(ni->tx_key);
	first = !old_tx;
	rcu_assign_pointer(ni->keys[slot], key);
	if (first || tx)
		rcu_assign_pointer(ni->tx_key, key);
	/* Frames are longer by the trailer now: those cut for the link
	 * without it are cut again, like after an MTU change.
	 */
	if (first)
		grim_ni_lower_mtu(ni);
	return 0;
}

/* Remove key @id.  The key frames are sent with goes only when it is the
 * last one: the link then sends and takes frames without a tag.  RTNL.
 */
int grim_key_del(struct grim_ni *ni, u8 id, struct netlink_ext_ack *extack)
{
	struct grim_key *key;
	int i, n = 0;

	ASSERT_RTNL();
	key = grim_key_find(ni, id);
	if (!key) {
		NL_SET_ERR_MSG(extack, "no key with this id");
		return -ENOENT;
	}
	for (i = 0; i < GRIM_MAX_KEYS; i++)
		n += !!rtnl_dereference(ni->keys[i]);
	if (key == rtnl_dereference(ni->tx_key)) {
		if (n > 1) {
			NL_SET_ERR_MSG(extack, "frames are sent with this key: pick another first");
			return -EBUSY;
		}
		RCU_INIT_POINTER(ni->tx_key, NULL);
	}
	for (i = 0; i < GRIM_MAX_KEYS; i++)
		if (rtnl_dereference(ni->keys[i]) == key)
			RCU_INIT_POINTER(ni->keys[i], NULL);
	call_rcu(&key->rcu, grim_key_free_rcu);
	return 0;
}

/* The NI goes: no frame is in flight any more.  */
void grim_keys_free(struct grim_ni *ni)
{
	struct grim_key *key;
	int i;

	RCU_INIT_POINTER(ni->tx_key, NULL);
	for (i = 0; i < GRIM_MAX_KEYS; i++) {
		key = rcu_dereference_protected(ni->keys[i], true);
		RCU_INIT_POINTER(ni->keys[i], NULL);
		if (key) {
			crypto_free_aead(key->tfm);
			kfree_sensitive(key);
		}
	}
}
