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
#include <crypto/algapi.h>
#include <crypto/chacha.h>
#include <crypto/poly1305.h>
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

/* The Poly1305 code tags are computed with (see grim_auth_pick()): the
 * generic C, the architecture's, or the architecture's fed in steps short
 * enough that it keeps to its scalar code (x86 starts its vector code at
 * 18 blocks a call).
 */
enum grim_poly_mode {
	GRIM_POLY_GENERIC,
	GRIM_POLY_ARCH,
	GRIM_POLY_ARCH_STEPS,
	GRIM_POLY_MODES,
};

#define GRIM_POLY_STEP	(16 * POLY1305_BLOCK_SIZE)

static const char *const grim_poly_names[GRIM_POLY_MODES] = {
	[GRIM_POLY_GENERIC] = "generic",
	[GRIM_POLY_ARCH] = "arch",
	[GRIM_POLY_ARCH_STEPS] = "arch-steps",
};

static enum grim_poly_mode grim_poly_mode __read_mostly;

static void grim_poly_init(struct poly1305_desc_ctx *d, const u8 *key)
{
#if IS_ENABLED(CONFIG_CRYPTO_ARCH_HAVE_LIB_POLY1305)
	if (grim_poly_mode != GRIM_POLY_GENERIC)
		return poly1305_init_arch(d, key);
#endif
	poly1305_init_generic(d, key);
}

static void grim_poly_update(struct poly1305_desc_ctx *d, const u8 *p,
			     unsigned int n)
{
#if IS_ENABLED(CONFIG_CRYPTO_ARCH_HAVE_LIB_POLY1305)
	unsigned int step;

	switch (grim_poly_mode) {
	case GRIM_POLY_ARCH:
		return poly1305_update_arch(d, p, n);
	case GRIM_POLY_ARCH_STEPS:
		for (; n; p += step, n -= step) {
			step = min_t(unsigned int, n, GRIM_POLY_STEP);
			poly1305_update_arch(d, p, step);
		}
		return;
	default:
		break;
	}
#endif
	poly1305_update_generic(d, p, n);
}

static void grim_poly_final(struct poly1305_desc_ctx *d, u8 *tag)
{
#if IS_ENABLED(CONFIG_CRYPTO_ARCH_HAVE_LIB_POLY1305)
	if (grim_poly_mode != GRIM_POLY_GENERIC)
		return poly1305_final_arch(d, tag);
#endif
	poly1305_final_generic(d, tag);
}

/* What computing a tag needs besides the frame: per CPU, with bottom
 * halves off, rather than on a stack that the kernel may zero on every
 * call (INIT_STACK_ALL_ZERO).
 */
struct grim_auth_scratch {
	struct poly1305_desc_ctx d;
	u32 state[CHACHA_STATE_WORDS];
	u8 otk[CHACHA_BLOCK_SIZE];
	u8 iv[CHACHA_IV_SIZE];
	__le64 lens[2];
};

/* Allocated with the first key (grim_auth_pick()), freed at unload. */
static struct grim_auth_scratch __percpu *grim_auth_scratch;

/* Feed the first @len bytes of @skb, which has no frag list. */
static void grim_poly_skb(struct poly1305_desc_ctx *d,
			  const struct sk_buff *skb, unsigned int len)
{
	unsigned int n = min(len, skb_headlen(skb)), i;
	u32 p_off, p_len, done;
	struct page *page;
	u8 *va;

	grim_poly_update(d, skb->data, n);
	len -= n;
	for (i = 0; len && i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		n = min(len, skb_frag_size(f));
		skb_frag_foreach_page(f, skb_frag_off(f), n, page, p_off, p_len,
				      done) {
			va = kmap_local_page(page);
			grim_poly_update(d, va + p_off, p_len);
			kunmap_local(va);
		}
		len -= n;
	}
}

/* The tag of the first @adlen bytes of @skb, wherever they lie (but not
 * in a frag list), under @key and the 12-byte @nonce: the RFC 8439 AEAD
 * with all of them as associated data and nothing to encrypt.  This is
 * what the crypto API's "rfc7539(chacha20,poly1305)" computes
 * (grim_auth_pick() checks it), without a request to allocate, a
 * scatterlist or a copy of the frame.
 */
static void grim_auth_tag(const struct grim_key *key, struct sk_buff *skb,
			  unsigned int adlen, const u8 *nonce, u8 *tag)
{
	static const u8 pad[POLY1305_BLOCK_SIZE];
	struct grim_auth_scratch *sc;

	local_bh_disable();
	sc = this_cpu_ptr(grim_auth_scratch);
	/* Block 0 of the key stream is the one-time Poly1305 key. */
	memset(sc->iv, 0, 4);
	memcpy(sc->iv + 4, nonce, GRIM_NONCE_LEN);
	chacha_init_generic(sc->state, key->k, sc->iv);
	chacha_block_generic(sc->state, sc->otk, 20);
	grim_poly_init(&sc->d, sc->otk);
	memzero_explicit(sc->state, sizeof(sc->state));
	memzero_explicit(sc->otk, sizeof(sc->otk));

	grim_poly_skb(&sc->d, skb, adlen);
	if (adlen % POLY1305_BLOCK_SIZE)
		grim_poly_update(&sc->d, pad, POLY1305_BLOCK_SIZE -
				 adlen % POLY1305_BLOCK_SIZE);
	sc->lens[0] = cpu_to_le64(adlen);
	sc->lens[1] = 0;	/* no cipher text */
	grim_poly_update(&sc->d, (const u8 *)sc->lens, sizeof(sc->lens));
	grim_poly_final(&sc->d, tag);	/* and wipes the state */
	local_bh_enable();
}

/* Room for the trailer at the end of @skb, which the caller may then
 * write: in the tail of a linear frame, else in a fragment of its own
 * (the payload's pages stay shared with the frame kept for
 * retransmission).  Returns the trailer, or NULL without memory.
 */
static struct grim_auth *grim_auth_room(struct sk_buff *skb,
					unsigned int tailroom)
{
	unsigned int nr = skb_shinfo(skb)->nr_frags;
	struct page *page;
	void *va;

	if (!skb_is_nonlinear(skb)) {
		if ((skb_cloned(skb) || skb_tailroom(skb) < tailroom) &&
		    pskb_expand_head(skb, 0,
				     max_t(int, tailroom - skb_tailroom(skb), 0),
				     GFP_ATOMIC))
			return NULL;
		return skb_put(skb, GRIM_AUTH_LEN);
	}
	if ((skb_cloned(skb) && pskb_expand_head(skb, 0, 0, GFP_ATOMIC)) ||
	    (nr >= MAX_SKB_FRAGS && __skb_linearize(skb)))
		return NULL;
	if (!skb_is_nonlinear(skb))
		return grim_auth_room(skb, tailroom);
	va = netdev_alloc_frag(GRIM_AUTH_LEN);
	if (!va)
		return NULL;
	page = virt_to_head_page(va);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page,
			va - page_address(page), GRIM_AUTH_LEN,
			SKB_DATA_ALIGN(GRIM_AUTH_LEN));
	return va;
}

/* Seal a frame about to go to the lower device (its data starts at the
 * link header): append the trailer and the tag.  The head of a frame
 * shared with the transmit queue is copied first.  Returns the frame to
 * send, or NULL when it was dropped (and counted).
 */
struct sk_buff *grim_auth_seal(struct grim_ni *ni, struct grim_peer *peer,
			       struct sk_buff *skb, u32 echo)
{
	struct net_device *lower = ni->lower;
	struct grim_link_hdr *lh;
	struct grim_auth *tr;
	struct grim_key *key;
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
	tr = grim_auth_room(skb, GRIM_AUTH_LEN + lower->needed_tailroom);
	if (!tr)
		goto drop;
	lh = (struct grim_link_hdr *)skb->data;
	tr->key_id = key->id;
	tr->reserved = 0;
	ether_addr_copy(tr->src_mac, lower->dev_addr);
	tr->boot = htonl(ni->auth_boot);
	pn = atomic64_inc_return(&ni->auth_pn);
	tr->pn_hi = htonl(upper_32_bits(pn));
	tr->pn_lo = htonl(lower_32_bits(pn));
	tr->echo = htonl(echo);
	tr->chal = htonl(peer ? READ_ONCE(peer->auth_chal) : 0);
	lh->xflags |= GRIM_XF_AUTH;
	lh->len = htons(skb->len);
	lh->csum = 0;
	grim_auth_tag(key, skb, skb->len - GRIM_AUTH_TAG_LEN,
		      (const u8 *)tr + GRIM_NONCE_OFF, (u8 *)(tr + 1));
	rcu_read_unlock();
	return skb;
drop:
	rcu_read_unlock();
	grim_count(ni, peer, GRIM_STAT_TX_ERRORS);
	kfree_skb(skb);
	return NULL;
}

/* Which Poly1305 code tags are computed with, and a check that they are
 * the crypto API's AEAD.  The architecture's code is the fast one on real
 * CPUs; an emulated CPU runs its vector instructions as helpers, several
 * times slower than scalar code (as for CRC32C, see grim_crc_init()).  So
 * the first key times each way on a frame-sized tag and keeps the fastest.
 */
static DEFINE_MUTEX(grim_auth_pick_lock);
static int grim_auth_picked;	/* 0: not yet, 1: done, < 0: errno */

/* The best of a few rounds of tagging @skb, in ns. */
static u64 grim_auth_time(const struct grim_key *key, struct sk_buff *skb)
{
	u8 nonce[GRIM_NONCE_LEN] = {}, tag[GRIM_AUTH_TAG_LEN];
	u64 best = U64_MAX, t;
	int round, i;

	for (round = 0; round < 4; round++) {
		t = ktime_get_ns();
		for (i = 0; i < 8; i++)
			grim_auth_tag(key, skb, skb->len, nonce, tag);
		best = min(best, ktime_get_ns() - t);
	}
	return div_u64(best, 8) ?: 1;
}

/* The crypto API's tag of @skb's linear data under @secret and @nonce. */
static int grim_auth_api_tag(struct sk_buff *skb, const u8 *secret,
			     const u8 *nonce, u8 *tag)
{
	struct crypto_aead *tfm;
	struct aead_request *req;
	struct scatterlist sg[2];
	u8 iv[GRIM_NONCE_LEN];
	int err;

	tfm = crypto_alloc_aead(GRIM_AUTH_AEAD, 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	req = aead_request_alloc(tfm, GFP_KERNEL);
	err = -ENOMEM;
	if (!req)
		goto out;
	err = crypto_aead_setauthsize(tfm, GRIM_AUTH_TAG_LEN) ?:
	      crypto_aead_setkey(tfm, secret, GRIM_AUTH_KEY_LEN);
	if (err)
		goto out;
	memcpy(iv, nonce, sizeof(iv));
	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], skb->data, skb->len);
	sg_set_buf(&sg[1], tag, GRIM_AUTH_TAG_LEN);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, skb->len);
	aead_request_set_crypt(req, sg, sg, 0, iv);
	err = crypto_aead_encrypt(req);
out:
	aead_request_free(req);
	crypto_free_aead(tfm);
	return err;
}

static int grim_auth_pick(void)
{
	u8 tag[GRIM_AUTH_TAG_LEN], api[GRIM_AUTH_TAG_LEN];
	u8 nonce[GRIM_NONCE_LEN], secret[GRIM_AUTH_KEY_LEN];
	u64 t[GRIM_POLY_MODES] = {};
	struct grim_key key = {};
	int err, i, modes, best = 0;
	struct sk_buff *skb;

	mutex_lock(&grim_auth_pick_lock);
	err = grim_auth_picked;
	if (err)
		goto out;
	err = -ENOMEM;
	if (!grim_auth_scratch)
		grim_auth_scratch = alloc_percpu(struct grim_auth_scratch);
	skb = grim_auth_scratch ? alloc_skb(GRIM_AUTH_CAL_LEN, GFP_KERNEL) : NULL;
	if (!skb)
		goto out;
	get_random_bytes(skb_put(skb, GRIM_AUTH_CAL_LEN), GRIM_AUTH_CAL_LEN);
	get_random_bytes(secret, sizeof(secret));
	get_random_bytes(nonce, sizeof(nonce));
	for (i = 0; i < GRIM_KEY_WORDS; i++)
		key.k[i] = get_unaligned_le32(secret + 4 * i);

	/* The tags are the crypto API's, with every Poly1305 here. */
	modes = IS_ENABLED(CONFIG_CRYPTO_ARCH_HAVE_LIB_POLY1305) ?
		GRIM_POLY_MODES : GRIM_POLY_GENERIC + 1;
	err = grim_auth_api_tag(skb, secret, nonce, api);
	if (err)
		goto free;
	for (i = 0; i < modes; i++) {
		grim_poly_mode = i;
		grim_auth_tag(&key, skb, skb->len, nonce, tag);
		if (crypto_memneq(tag, api, sizeof(tag))) {
			pr_err("cluster keys: tags differ from " GRIM_AUTH_AEAD "\n");
			err = -EINVAL;
			goto free;
		}
	}

	local_bh_disable();
	for (i = 0; i < modes; i++) {
		grim_poly_mode = i;
		t[i] = grim_auth_time(&key, skb);
		if (t[i] < t[best])
			best = i;
	}
	grim_poly_mode = best;
	local_bh_enable();
	if (modes > 1)
		pr_info("cluster keys: Poly1305 %s; ns per %u-byte frame: generic %llu, arch %llu, arch-steps %llu\n",
			grim_poly_names[best], GRIM_AUTH_CAL_LEN,
			t[GRIM_POLY_GENERIC], t[GRIM_POLY_ARCH],
			t[GRIM_POLY_ARCH_STEPS]);
	err = 1;
free:
	kfree_skb(skb);
	memzero_explicit(&key, sizeof(key));
	memzero_explicit(secret, sizeof(secret));
	/* A missing AEAD may be loaded later: only a verdict is kept. */
	if (err != -ENOENT && err != -ENOMEM)
		grim_auth_picked = err;
out:
	mutex_unlock(&grim_auth_pick_lock);
	return err < 0 ? err : 0;
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
	unsigned int len = skb->len, adlen = len - GRIM_AUTH_TAG_LEN;
	u8 tag[GRIM_AUTH_TAG_LEN], want[GRIM_AUTH_TAG_LEN];
	bool tagged = lh->xflags & GRIM_XF_AUTH;
	struct grim_auth tr;
	struct grim_key *key;

	memset(ai, 0, sizeof(*ai));
	/* An NI with keys always has one to send with. */
	if (!grim_ni_keyed(ni)) {
		if (!tagged)
			return true;
		goto bad;	/* we cannot check it */
	}
	if (!tagged || len < GRIM_LINK_HLEN + GRIM_AUTH_LEN ||
	    skb_copy_bits(skb, len - GRIM_AUTH_LEN, &tr, sizeof(tr)) ||
	    skb_copy_bits(skb, adlen, tag, sizeof(tag)) || tr.reserved)
		goto bad;
	/* Nothing that takes GRIM's EtherType builds frag lists: rare. */
	if (skb_has_frag_list(skb) && skb_linearize(skb)) {
		grim_count(ni, NULL, GRIM_STAT_DROP_NOMEM);
		return false;
	}
	key = grim_key_find(ni, tr.key_id);
	if (!key)
		goto bad;
	grim_auth_tag(key, skb, adlen, (const u8 *)&tr + GRIM_NONCE_OFF, want);
	if (crypto_memneq(tag, want, sizeof(tag)))
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
	err = grim_auth_pick();
	if (err) {
		NL_SET_ERR_MSG(extack, "the kernel has no working " GRIM_AUTH_AEAD);
		return err;
	}
	key = kzalloc(sizeof(*key), GFP_KERNEL);
	if (!key)
		return -ENOMEM;
	key->id = id;
	for (i = 0; i < GRIM_KEY_WORDS; i++)
		key->k[i] = get_unaligned_le32(secret + 4 * i);
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

/* The module goes: no NI, so no key, is left. */
void grim_auth_exit(void)
{
	free_percpu(grim_auth_scratch);
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
		kfree_sensitive(key);
	}
}
