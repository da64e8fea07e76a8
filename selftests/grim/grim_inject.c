// SPDX-License-Identifier: GPL-2.0
/*
 * grim_inject: put malformed, foreign and replayed GRIM frames on an
 * Ethernet device with an AF_PACKET socket, for the selftests.
 *
 *   grim_inject -i IFNAME -d DSTMAC -m MODE [-k COUNT] [-n SNIFF]
 *               [-p PORT] [-w WAIT_MS] [-t TIMEOUT_S] [-S SEED]
 *
 * MODE is one class of frames; COUNT frames of it are sent to DSTMAC:
 *
 *   random      random bytes after an Ethernet header of type GRIM_ETH_P
 *   short       link headers cut to 1..31 bytes
 *   badmagic    well-formed frames with another identifier
 *   badversion  ... with another wire version
 *   badlen      ... whose len field exceeds the frame or is below the
 *               link header size
 *   badcsum     ... with a wrong CRC32C
 *   hdrcrc      DATA frames without GRIM_FF_DCRC (CRC over the headers
 *               only), one bit of the headers flipped
 *   badicsum    DATA frames with GRIM_FF_ICSUM (Internet checksum over
 *               the frame): one payload bit flipped after summing, or
 *               GRIM_FF_DCRC set as well
 *   cluster     valid CRC, another cluster id
 *   notours     valid CRC, addressed to another node, or from node 0,
 *               GRIM_NODE_ANY or the receiver's own node
 *   badtype     valid CRC, unknown frame type
 *   unknownpeer valid CRC, DATA from a node the receiver never heard of
 *   stale       a sniffed DATA frame with the wrong dst_gen, CRC redone
 *   frag        sniffed DATA frames turned into bogus fragments on
 *               fresh streams (valid session and CRC): fragments with no
 *               message started, with a wrong offset, overrunning or
 *               ending the message short; first fragments whose message
 *               header lies about the message length
 *   sack        valid CRC and session, ACKs flagged GRIM_FF_SACK whose
 *               report is cut short (no word, or a partial one), longer
 *               than GRIM_SACK_WORDS words, or that report on a stream
 *               the receiver never sent on
 *   reasm       valid session and CRC: COUNT first fragments of 64000-byte
 *               messages to the endpoint PORT, each on a fresh stream,
 *               whose other fragments never come; each one that the
 *               endpoint makes room for pins that room until the
 *               receiver's reassembly timeout (past 65536 frames the
 *               channels repeat); with -g, sent once GOFILE exists
 *   reasmlive   valid session and CRC: the first fragment of one 64000-byte
 *               message to the endpoint PORT, on a fresh stream, sent
 *               COUNT times WAIT_MS apart: any frame of its stream shows
 *               that its sender is there, and the reassembly lives on
 *               while they come
 *   hello       valid CRC and cluster: broadcast hellos that claim node
 *               PORT, with a newer NI generation than the sniffed one,
 *               from another source MAC (02:00:00:00:ee:ee)
 *   churn       valid CRC, cluster 0: one broadcast hello from each of
 *               COUNT node ids from PORT on, WAIT_MS apart, each from a
 *               MAC of its own (no template needed)
 *   mcforge     group messages forged from -f FILE (from capture): DATA,
 *               TREE and SKIP with the real group, root and term and
 *               tickets just past the real ones, and joins, leaves,
 *               reports, repair requests and relays to the root
 *   mcport      valid session and CRC: COUNT one-frame group DATA messages
 *               on the group engines' ports with the group kind swapped,
 *               each on a fresh incarnation, from the template's source
 *               (the groups' root): the link's own group (0xfffffffe) on
 *               the sockets' groups' ports (0xfffd -> 0xfffe), group 77
 *               on the link group's (0xfffb -> 0xfffc), and each across
 *               the pairs (0xfffe -> 0xfffc, 0xfffc -> 0xfffe): one fresh
 *               incarnation of each pair's stream, its messages in
 *               sequence.  Each one is dropped and counted
 *               (rx_drop_bad_message).  It must
 *               run while this host sends IPv4 over grim0 to DSTMAC's
 *               node: the template is the first frame of such a packet.
 *   replay      sniff SNIFF real DATA frames sent to DSTMAC, wait until
 *               DSTMAC has acknowledged them all, then WAIT_MS more, and
 *               send them again unchanged, twice
 *   ipjunk      valid session and CRC: COUNT one-frame messages to IP's
 *               endpoint PORT (GRIM_PORT_IP + a channel), each on a fresh
 *               stream (channels 0x5000..0x7fff), in turn: random bytes as
 *               IPv4 (the message's handler 0x0800), IPv6 (0x86dd) and ARP
 *               (0x0806); random bytes of an EtherType IP does not carry
 *               (GRIM_ETH_P, 0, ETH_P_ALL, VLAN, LLDP, 0xffff); an empty
 *               IPv4, IPv6 or ARP packet; a UDP datagram to port 9 of the
 *               receiver flagged broadcast (arg[0] bit 0), though it goes
 *               to one node; the same datagram unflagged; the same
 *               datagram, or ARP, flagged with its checksum still to
 *               fill in (arg[0] bit 1) at a place arg[1] puts inside the
 *               IP header, past the packet's end, or anywhere (ARP has
 *               none).  It must run
 *               while this host sends IPv4 over grim0 to DSTMAC's node:
 *               the template is the first frame of such a packet, whose
 *               addresses the datagrams take.  Prints "ipjunk CLASS N"
 *               for each class (ipv4 ipv6 arp other empty udp-bcast
 *               udp csum-out).  Every message counts in rx_msgs; the
 *               other EtherTypes, the empty packets and the checksums
 *               out of place in rx_dropped, the
 *               receiving link's netdev counter (ip -s link), which is
 *               not one of ethtool's
 *
 * The modes that need a real frame (cluster id, node ids, session
 * generations) sniff one outgoing DATA frame to DSTMAC on IFNAME first, so
 * they must run while GRIM traffic flows from this host to DSTMAC.  Every
 * sniffed frame's CRC is verified, which also checks the CRC here.
 *
 * For every frame sent, the tool works out which receive counter the
 * receiver's validation order (drivers/net/grim/wire.c, rx.c) makes
 * responsible, and prints one "expect COUNTER N" line per counter.
 * Counters named "expect-min" may also move for other reasons (the
 * receiver must count at least that many).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/grim.h>

#define LH_LEN		((int)sizeof(struct grim_link_hdr))
#define CTL_LEN		(LH_LEN + (int)sizeof(struct grim_ctl_msg))
#define DATA_HLEN	(CTL_LEN + (int)sizeof(struct grim_frag_hdr))
#define MSG_HLEN	((int)sizeof(struct grim_msg_hdr))
#define FRAME_MAX	65536
#define MAX_SNIFF	4096

/* ---- CRC32C (Castagnoli, reflected 0x82F63B78) ----------------------------- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t c, i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c_update(uint32_t c, const uint8_t *p, size_t len)
{
	while (len--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#define FRAG_CHECK_OFF	(sizeof(struct grim_link_hdr) + sizeof(struct grim_ctl_msg) + \
			 offsetof(struct grim_frag_hdr, check))

/* The frame check of @len bytes from the link header @lh: CRC32C over the
 * covered bytes from GRIM_CRC_SPLIT on, then over the head with its csum
 * field as zero (Documentation/networking/grim.rst).
 */
static uint32_t frame_crc(const uint8_t *lh, size_t len)
{
	const struct grim_link_hdr *hdr = (const struct grim_link_hdr *)lh;
	size_t h = len < GRIM_CRC_SPLIT ? len : GRIM_CRC_SPLIT;
	uint8_t head[GRIM_CRC_SPLIT];
	uint32_t c = ~0u;

	/* Without GRIM_FF_DCRC a data frame's CRC covers its headers only. */
	if (hdr->type == GRIM_FT_DATA && !(hdr->flags & GRIM_FF_DCRC) &&
	    len > GRIM_CRC_HDR_LEN)
		len = GRIM_CRC_HDR_LEN;
	memcpy(head, lh, h);
	memset(head + offsetof(struct grim_link_hdr, csum), 0, 4);
	/* ... and the fragment check of a data frame that uses it */
	if (hdr->type == GRIM_FT_DATA && hdr->flags & GRIM_FF_ICSUM &&
	    h >= FRAG_CHECK_OFF + 2)
		memset(head + FRAG_CHECK_OFF, 0, 2);
	c = crc32c_update(c, lh + h, len - h);
	c = crc32c_update(c, head, h);
	return ~c;
}

/* The Internet checksum (RFC 1071) to store in a frame of @len bytes
 * whose check field is zero.
 */
static uint16_t inet_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static uint16_t *frag_check(uint8_t *lh)
{
	return (uint16_t *)(lh + FRAG_CHECK_OFF);
}

/* Set len to @len and the CRC over it. */
static void seal(uint8_t *lhp, size_t len)
{
	struct grim_link_hdr *lh = (struct grim_link_hdr *)lhp;

	lh->len = htons(len);
	lh->csum = htonl(frame_crc(lhp, len));
}

/* ---- counters the receiver should move -------------------------------------- */

enum ctr {
	C_TRUNC, C_MAGIC, C_VERSION, C_LENGTH, C_CSUM, C_CLUSTER, C_NOT_OURS,
	C_UNKNOWN_PEER, C_STALE, C_TYPE, C_FRAG, C_MSG, C_NO_EP, C_DUP, C_BAD_ACK,
	C_STALE_STREAM, C_REPLAYED, C_RX_MSGS, C_RX_DROPPED, C_MAX
};

static const struct {
	const char *name;
	int min_only;	/* other traffic may move it too */
} ctr_info[C_MAX] = {
	[C_TRUNC]	 = { "rx_drop_truncated", 0 },
	[C_MAGIC]	 = { "rx_drop_bad_magic", 0 },
	[C_VERSION]	 = { "rx_drop_bad_version", 0 },
	[C_LENGTH]	 = { "rx_drop_bad_length", 0 },
	[C_CSUM]	 = { "rx_drop_bad_checksum", 0 },
	[C_CLUSTER]	 = { "rx_drop_other_cluster", 0 },
	[C_NOT_OURS]	 = { "rx_drop_not_for_us", 0 },
	[C_UNKNOWN_PEER] = { "rx_drop_unknown_peer", 0 },
	[C_STALE]	 = { "rx_drop_stale_session", 1 },
	[C_TYPE]	 = { "rx_drop_bad_type", 0 },
	[C_FRAG]	 = { "rx_drop_bad_fragment", 0 },
	[C_MSG]		 = { "rx_drop_bad_message", 0 },
	[C_NO_EP]	 = { "rx_drop_no_endpoint", 1 },
	[C_BAD_ACK]	 = { "rx_drop_bad_ack", 1 },
	[C_DUP]		 = { "rx_duplicate_frames", 1 },
	[C_STALE_STREAM] = { "rx_drop_stale_stream", 1 },
	/* inject.sh: rx_duplicate_frames + rx_drop_stale_stream */
	[C_REPLAYED]	 = { "rx_dup_or_stale", 1 },
	[C_RX_MSGS]	 = { "rx_msgs", 1 },
	/* the link's netdev counter (ip -s link), not ethtool's */
	[C_RX_DROPPED]	 = { "rx_dropped", 1 },
};

static unsigned long expect[C_MAX];

/*
 * The link-level checks of grim_rcv_valid(), in their order, for a frame
 * of @len bytes after the Ethernet header.  Returns C_MAX if it passes
 * them all (cluster included: the caller knows what comes next).
 */
static enum ctr classify_link(const uint8_t *p, size_t len, uint32_t cluster)
{
	const struct grim_link_hdr *lh = (const struct grim_link_hdr *)p;
	size_t l;

	if (len < (size_t)LH_LEN)
		return C_TRUNC;
	if (ntohs(lh->magic) != GRIM_ID)
		return C_MAGIC;
	if (lh->version != GRIM_WIRE_VERSION)
		return C_VERSION;
	l = ntohs(lh->len);
	if (l < (size_t)LH_LEN || l > len)
		return C_LENGTH;
	if (ntohl(lh->csum) != frame_crc(p, l))
		return C_CSUM;
	if (ntohl(lh->cluster) != cluster)
		return C_CLUSTER;
	return C_MAX;
}

/* ---- options and sockets ----------------------------------------------------- */

static const char *ifname, *mode, *txat, *gofile;
static uint8_t dmac[ETH_ALEN], smac[ETH_ALEN], srcmac[ETH_ALEN];
static int have_srcmac, have_genoff;
static uint32_t genoff;
static int ifindex, count = 32, nsniff = 16, wait_ms = 300, timeout_s = 30;
static uint16_t port;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int txfd;
static unsigned long sent, send_errors;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: grim_inject -i IFNAME -d DSTMAC -m MODE [-k COUNT] [-n SNIFF]\n"
		"                   [-p PORT] [-w WAIT_MS] [-t TIMEOUT_S] [-S SEED]\n"
		"                   [-f FILE] [-o NETNS:IFNAME (macflip)]\n"
		"                   [-M SRCMAC (probe)] [-g GOFILE (probe, reasm)]\n"
		"                   [-G GENOFF (probe)]\n"
		"modes: random short badmagic badversion badlen badcsum hdrcrc badicsum\n"
		"       capture flood rehello mcforge\n"
		"       cluster notours\n"
		"       badtype unknownpeer stale frag reasm hello probe macflip replay\n"
		"       sack churn ipjunk mcport\n");
	exit(2);
}

static void open_tx(void)
{
	struct ifreq ifr = {};

	txfd = socket(AF_PACKET, SOCK_RAW, 0);
	if (txfd < 0)
		die("socket(AF_PACKET)");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(txfd, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR");
	memcpy(smac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
}

/*
 * -o NETNS:IFNAME: send from IFNAME in network namespace NETNS (a name
 * under /run/netns) rather than from -i, once the sniffing is done.  From
 * the switch's port, frames reach a host that the bridge would not pass.
 */
static void tx_elsewhere(void)
{
	char path[128], *name;
	int fd;

	if (!txat)
		return;
	name = strchr(txat, ':');
	if (!name)
		usage();
	snprintf(path, sizeof(path), "/run/netns/%.*s", (int)(name - txat),
		 txat);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die(path);
	close(fd);
	close(txfd);
	ifname = name + 1;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		die(ifname);
	open_tx();
}

/*
 * Send one whole frame (Ethernet header included) to dmac.  A full queue
 * on the way is waited for: up to @tries waits of @wait_us.  Returns
 * whether the frame went; counts it as an error if not.
 */
static int send_frame(const uint8_t *frame, size_t len, int tries,
		      useconds_t wait_us)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(GRIM_ETH_P),
		.sll_ifindex = ifindex,
		.sll_halen = ETH_ALEN,
	};

	memcpy(sll.sll_addr, dmac, ETH_ALEN);
	while (sendto(txfd, frame, len, 0, (struct sockaddr *)&sll,
		      sizeof(sll)) != (ssize_t)len) {
		if ((errno == ENOBUFS || errno == EAGAIN) && tries-- > 0) {
			usleep(wait_us);
			continue;
		}
		perror("sendto");
		send_errors++;
		return 0;
	}
	sent++;
	return 1;
}

/*
 * Send a frame and remember which counter it must move.  Paced, so that
 * the receiver's backlog never overflows and every frame really reaches
 * it.  Returns whether the frame went.
 */
static int xmit(const uint8_t *frame, size_t len, enum ctr c)
{
	if (!send_frame(frame, len, 100, 10000))
		return 0;
	if (c < C_MAX)
		expect[c]++;
	usleep(2000);
	return 1;
}

/* Ethernet header to dmac from our own MAC; returns the link header. */
static uint8_t *eth_init(uint8_t *f)
{
	struct ethhdr *eh = (struct ethhdr *)f;

	memcpy(eh->h_dest, dmac, ETH_ALEN);
	memcpy(eh->h_source, smac, ETH_ALEN);
	eh->h_proto = htons(GRIM_ETH_P);
	return f + ETH_HLEN;
}

/* ---- sniffing real frames ------------------------------------------------------ */

struct sframe {
	size_t len;		/* Ethernet header included */
	uint8_t *data;
};

/* The packet next_frame() takes frames from (below). */
static uint8_t pkt[FRAME_MAX];
static size_t pkt_len, pkt_off;
static struct sockaddr_ll pkt_from;

static int sniff_open(void)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = ifindex,
	};
	int fd;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		die("socket(AF_PACKET, ETH_P_ALL)");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind(AF_PACKET)");
	pkt_len = pkt_off = 0;
	return fd;
}

/*
 * A packet a tap sees may be a batch (grim.rst, Batches): whole Ethernet
 * frames back to back, each GRIM frame as long as its header says.
 * next_frame() hands them out one at a time, as the wire has them; a
 * packet that is not GRIM's comes out whole.  Returns the length, or -1
 * (errno EAGAIN) when nothing is left to read.
 */
static int frame_pending(void)
{
	return pkt_off < pkt_len;
}

static ssize_t next_frame(int fd, uint8_t *buf, struct sockaddr_ll *from)
{
	const struct grim_link_hdr *lh;
	const struct ethhdr *eh;
	size_t left, n;

	if (!frame_pending()) {
		socklen_t fl = sizeof(pkt_from);
		ssize_t r = recvfrom(fd, pkt, sizeof(pkt), MSG_DONTWAIT,
				     (struct sockaddr *)&pkt_from, &fl);

		if (r < 0)
			return -1;
		pkt_len = r;
		pkt_off = 0;
	}
	left = pkt_len - pkt_off;
	eh = (const struct ethhdr *)(pkt + pkt_off);
	lh = (const struct grim_link_hdr *)(pkt + pkt_off + ETH_HLEN);
	n = left;
	if (left >= ETH_HLEN + LH_LEN && ntohs(eh->h_proto) == GRIM_ETH_P &&
	    ntohs(lh->len) >= LH_LEN && ntohs(lh->len) <= left - ETH_HLEN)
		n = ETH_HLEN + ntohs(lh->len);
	memcpy(buf, pkt + pkt_off, n);
	pkt_off += n;
	/* Too short for another frame: the last one's padding. */
	if (pkt_len - pkt_off < ETH_HLEN + LH_LEN)
		pkt_off = pkt_len;
	if (from)
		*from = pkt_from;
	return n;
}

/* The ACKs from dmac that sniff_one() passed over while it looked for
 * other frames: the replay must know of them, or a frame acknowledged
 * while the sniffer still collected others (the last frame of a stream
 * that then ends) would never count as acknowledged.
 */
#define MAX_ACKLOG	65536
static struct grim_ctl_msg acklog[MAX_ACKLOG];
static int nacklog;

/*
 * Next GRIM frame of @type on @fd by the deadline: sent by this host to
 * dmac (@outgoing) or received from dmac.  Its CRC must be right.
 * Returns its length (Ethernet header included), 0 at the deadline.
 */
static size_t sniff_one(int fd, uint8_t *buf, uint8_t type, int outgoing,
			uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		const struct grim_link_hdr *lh;
		struct sockaddr_ll from;
		const struct ethhdr *eh;
		int left = (int)(deadline - now_ms());
		/* A hello has no control message: it is the shortest. */
		size_t min = type == GRIM_FT_HELLO ? LH_LEN : CTL_LEN;
		size_t l;
		ssize_t r;

		if (left <= 0 || (!frame_pending() && poll(&p, 1, left) <= 0))
			return 0;
		r = next_frame(fd, buf, &from);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recvfrom");
		}
		eh = (const struct ethhdr *)buf;
		lh = (const struct grim_link_hdr *)(buf + ETH_HLEN);
		if (type != GRIM_FT_ACK && from.sll_pkttype != PACKET_OUTGOING &&
		    r >= ETH_HLEN + CTL_LEN && ntohs(eh->h_proto) == GRIM_ETH_P &&
		    !memcmp(eh->h_source, dmac, ETH_ALEN) &&
		    lh->type == GRIM_FT_ACK && nacklog < MAX_ACKLOG)
			memcpy(&acklog[nacklog++], buf + ETH_HLEN + LH_LEN,
			       sizeof(acklog[0]));
		if ((from.sll_pkttype == PACKET_OUTGOING) != outgoing ||
		    (size_t)r < ETH_HLEN + min ||
		    ntohs(eh->h_proto) != GRIM_ETH_P ||
		    memcmp(outgoing ? eh->h_dest : eh->h_source, dmac, ETH_ALEN) ||
		    ntohs(lh->magic) != GRIM_ID ||
		    lh->version != GRIM_WIRE_VERSION ||
		    lh->type != type)
			continue;
		l = ntohs(lh->len);
		if (l < min || l > (size_t)r - ETH_HLEN) {
			fprintf(stderr, "sniffed frame with len %zu in %zd bytes\n",
				l, r - ETH_HLEN);
			exit(1);
		}
		/* A frame whose Internet checksum is left to the device is
		 * seen here before the device: sum it as the wire has it.
		 */
		if (lh->type == GRIM_FT_DATA && lh->flags & GRIM_FF_ICSUM &&
		    l >= DATA_HLEN) {
			uint8_t *p = buf + ETH_HLEN;

			if (!*frag_check(p))
				*frag_check(p) = inet_csum(p, l);
			if (inet_csum(p, l)) {
				fprintf(stderr, "sniffed frame: bad Internet checksum\n");
				exit(1);
			}
		}
		if (ntohl(lh->csum) != frame_crc((const uint8_t *)lh, l)) {
			fprintf(stderr, "sniffed frame: CRC %08x, computed %08x\n",
				ntohl(lh->csum), frame_crc((const uint8_t *)lh, l));
			exit(1);
		}
		return r;
	}
}

/*
 * Collect @n DATA frames this host sends to dmac on ifname.  Every one
 * must carry a correct CRC.  Returns how many were caught by the deadline.
 */
static int sniff(int fd, struct sframe *out, int n)
{
	uint64_t deadline = now_ms() + timeout_s * 1000ull;
	static uint8_t buf[FRAME_MAX];
	int got;
	size_t r;

	for (got = 0; got < n; got++) {
		r = sniff_one(fd, buf, GRIM_FT_DATA, 1, deadline);
		if (!r || r < ETH_HLEN + DATA_HLEN)
			break;
		out[got].len = r;
		out[got].data = malloc(r);
		if (!out[got].data)
			die("malloc");
		memcpy(out[got].data, buf, r);
	}
	return got;
}

/* One real DATA frame: its link header is the template of valid fields. */
static struct grim_link_hdr tmpl;

static void need_template(void)
{
	struct sframe f;
	int fd = sniff_open();

	if (sniff(fd, &f, 1) != 1) {
		fprintf(stderr, "%s: no GRIM DATA frame to %s seen on %s in %d s\n",
			mode, "the destination", ifname, timeout_s);
		exit(1);
	}
	close(fd);
	memcpy(&tmpl, f.data + ETH_HLEN, sizeof(tmpl));
	free(f.data);
	printf("template: cluster %u, node %u -> %u, gen %08x -> %08x\n",
	       ntohl(tmpl.cluster), ntohl(tmpl.src_node), ntohl(tmpl.dst_node),
	       ntohl(tmpl.src_gen), ntohl(tmpl.dst_gen));
	fflush(stdout);		/* a test may wait for this line */
}

/*
 * A well-formed frame: link header from the template (or zeros with the
 * right magic and version), @type, and @plen bytes of random payload.
 * Returns the link header; *flen gets the frame length.
 */
static uint8_t *build(uint8_t *f, uint8_t type, size_t plen, size_t *flen)
{
	uint8_t *p = eth_init(f);
	struct grim_link_hdr *lh = (struct grim_link_hdr *)p;
	size_t i;

	memcpy(lh, &tmpl, sizeof(*lh));
	lh->magic = htons(GRIM_ID);
	lh->version = GRIM_WIRE_VERSION;
	lh->type = type;
	/* Data frames as the NI sends them by default: CRC over it all. */
	lh->flags = type == GRIM_FT_DATA ? GRIM_FF_DCRC : 0;
	lh->xflags = 0;
	for (i = 0; i < plen; i++)
		p[LH_LEN + i] = rnd();
	/* unused without GRIM_FF_ICSUM, and then zero */
	if (type == GRIM_FT_DATA && LH_LEN + plen >= FRAG_CHECK_OFF + 2)
		*frag_check(p) = 0;
	seal(p, LH_LEN + plen);
	*flen = ETH_HLEN + LH_LEN + plen;
	return p;
}

/* ---- the modes ------------------------------------------------------------------- */

static void mode_random(void)
{
	static uint8_t f[2048];
	size_t len, i;
	int k;

	for (k = 0; k < count; k++) {
		uint8_t *p = eth_init(f);

		len = rnd() % 300;
		for (i = 0; i < len; i++)
			p[i] = rnd();
		xmit(f, ETH_HLEN + len,
		     classify_link(p, len, ntohl(tmpl.cluster)));
	}
}

static void mode_short(void)
{
	static uint8_t f[2048];
	size_t flen;
	int k;

	for (k = 0; k < count; k++) {
		build(f, GRIM_FT_DATA, 64, &flen);
		xmit(f, ETH_HLEN + 1 + k % (LH_LEN - 1), C_TRUNC);
	}
}

static void mode_badmagic(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen;
	int k;

	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_DATA, rnd() % 200, &flen);
		do
			lh->magic = htons(rnd());
		while (ntohs(lh->magic) == GRIM_ID);
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_MAGIC);
	}
}

static void mode_badversion(void)
{
	/* 1 is the wire version before the CRC order changed */
	static const uint8_t bad[] = {
		0, GRIM_WIRE_VERSION - 1, GRIM_WIRE_VERSION + 1, 0x81, 0xff,
	};
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen;
	int k;

	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_DATA, rnd() % 200, &flen);
		lh->version = bad[k % sizeof(bad)];
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_VERSION);
	}
}

static void mode_badlen(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen, l;
	int k;

	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_DATA, rnd() % 200, &flen);
		if (k % 2)
			l = LH_LEN - 1 - rnd() % LH_LEN;	/* 0..31 */
		else
			l = flen - ETH_HLEN + 1 + rnd() % 1000;	/* past the end */
		/* A CRC over what there is, as a sender confused about len would. */
		seal((uint8_t *)lh, flen - ETH_HLEN);
		lh->len = htons(l);
		xmit(f, flen, C_LENGTH);
	}
}

static void mode_badcsum(void)
{
	static uint8_t f[2048];
	uint8_t *p;
	size_t flen;
	int k;

	for (k = 0; k < count; k++) {
		p = build(f, GRIM_FT_DATA, CTL_LEN - LH_LEN + rnd() % 200, &flen);
		if (k % 2) {
			/* one bit of the CRC */
			struct grim_link_hdr *lh = (struct grim_link_hdr *)p;

			lh->csum ^= htonl(1u << (rnd() % 32));
		} else {
			/* one bit of the frame, anywhere the CRC covers */
			size_t off;

			do
				off = rnd() % (flen - ETH_HLEN);
			while (off >= offsetof(struct grim_link_hdr, csum) &&
			       off < offsetof(struct grim_link_hdr, csum) + 4);
			/* ...but not one the earlier checks would catch */
			if (off < offsetof(struct grim_link_hdr, cluster))
				off = offsetof(struct grim_link_hdr, cluster) + rnd() % 12;
			p[off] ^= 1u << (rnd() % 8);
		}
		xmit(f, flen, C_CSUM);
	}
}

/* Data frames whose sender left the payload to the lower link
 * (GRIM_FF_DCRC clear): one bit flipped in the headers the CRC still
 * covers.
 */
static void mode_hdrcrc(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen, off;
	uint8_t *p;
	int k;

	for (k = 0; k < count; k++) {
		p = build(f, GRIM_FT_DATA, 200 + rnd() % 800, &flen);
		lh = (struct grim_link_hdr *)p;
		lh->flags &= ~GRIM_FF_DCRC;
		seal(p, flen - ETH_HLEN);
		/* past the fields the earlier checks look at, before the
		 * end of the covered headers
		 */
		off = offsetof(struct grim_link_hdr, src_gen) +
		      rnd() % (GRIM_CRC_HDR_LEN - offsetof(struct grim_link_hdr, src_gen));
		if (off >= offsetof(struct grim_link_hdr, csum) &&
		    off < offsetof(struct grim_link_hdr, csum) + 4)
			off += 4;
		p[off] ^= 1u << (rnd() % 8);
		xmit(f, flen, C_CSUM);
	}
}

/* Data frames whose payload the Internet checksum covers
 * (GRIM_FF_ICSUM): one payload bit flipped after the sum, past the
 * headers the CRC covers; or GRIM_FF_DCRC claimed as well.
 */
static void mode_badicsum(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen, off;
	uint8_t *p;
	int k;

	for (k = 0; k < count; k++) {
		p = build(f, GRIM_FT_DATA, 200 + rnd() % 800, &flen);
		lh = (struct grim_link_hdr *)p;
		lh->flags = GRIM_FF_ICSUM | (k % 3 == 2 ? GRIM_FF_DCRC : 0);
		*frag_check(p) = 0;
		seal(p, flen - ETH_HLEN);
		*frag_check(p) = inet_csum(p, flen - ETH_HLEN);
		if (k % 3 != 2) {
			off = GRIM_CRC_HDR_LEN +
			      rnd() % (flen - ETH_HLEN - GRIM_CRC_HDR_LEN);
			p[off] ^= 1u << (rnd() % 8);
		}
		xmit(f, flen, C_CSUM);
	}
}

/* ACK frames with a SACK report, from the sniffed session: reports cut
 * short (the flag set, no whole word after the control message, or a
 * partial word after whole ones), reports of more words than a report
 * has, and whole random reports on streams the receiver never sent on.
 */
static void mode_sack(void)
{
	static uint8_t f[2048];
	struct grim_ctl_msg *cm;
	struct grim_link_hdr *lh;
	size_t flen, i;
	uint8_t *p;
	int k;

	need_template();
	for (k = 0; k < count; k++) {
		size_t w = sizeof(struct grim_sack);
		size_t rlen = k % 2 ? w * (1 + rnd() % GRIM_SACK_WORDS) :
			      k % 4 == 0 ? rnd() % w :
			      w * (rnd() % GRIM_SACK_WORDS) + 1 + rnd() % (w - 1);
		int c = k % 2 ? C_BAD_ACK : C_TRUNC;

		if (k % 8 == 7) {
			rlen = w * (GRIM_SACK_WORDS + 1 + rnd() % 8);
			c = C_LENGTH;
		}

		p = build(f, GRIM_FT_ACK, sizeof(*cm) + rlen, &flen);
		lh = (struct grim_link_hdr *)p;
		lh->flags = GRIM_FF_SACK;
		cm = (struct grim_ctl_msg *)(p + LH_LEN);
		cm->src_chan = htons(0x8000 | (rnd() & 0x7fff));
		cm->dst_chan = htons(0x8000 | (rnd() & 0x7fff));
		cm->seq = htonl(rnd());
		for (i = 0; i < rlen; i++)
			p[CTL_LEN + i] = k % 4 == 1 ? 0xff : rnd();
		seal(p, flen - ETH_HLEN);
		xmit(f, flen, c);
	}
}

static void mode_cluster(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen;
	int k;

	need_template();
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, k % 2 ? GRIM_FT_HELLO : GRIM_FT_DATA,
						   12 + rnd() % 200, &flen);
		lh->cluster = htonl(ntohl(tmpl.cluster) ^ (1 + rnd() % 0xfffffffe));
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_CLUSTER);
	}
}

static void mode_notours(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	uint32_t me;
	size_t flen;
	int k;

	need_template();
	me = ntohl(tmpl.dst_node);
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_DATA, CTL_LEN - LH_LEN + rnd() % 200, &flen);
		switch (k % 5) {
		case 0:		/* another node */
			lh->dst_node = htonl(me + 1000 + k);
			break;
		case 1:		/* from the receiver itself, not looped back */
			lh->src_node = htonl(me);
			break;
		case 2:		/* from node 0 */
			lh->src_node = 0;
			break;
		case 3:		/* from "any node" */
			lh->src_node = htonl(GRIM_NODE_ANY);
			break;
		case 4:		/* broadcast that is not a hello */
			lh->dst_node = htonl(GRIM_NODE_ANY);
			lh->type = k % 2 ? GRIM_FT_ACK : GRIM_FT_DATA;
			break;
		}
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_NOT_OURS);
	}
}

static void mode_badtype(void)
{
	static const uint8_t bad[] = { 0, GRIM_FT_CLOSED + 1, GRIM_FT_CLOSED + 2,
				       0x41, 0xff };
	static uint8_t f[2048];
	size_t flen;
	int k;

	need_template();
	for (k = 0; k < count; k++) {
		build(f, bad[k % sizeof(bad)], 12 + rnd() % 200, &flen);
		xmit(f, flen, C_TYPE);
	}
}

static void mode_unknownpeer(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen;
	int k;

	need_template();
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, k % 2 ? GRIM_FT_ACK : GRIM_FT_DATA,
						   12 + rnd() % 200, &flen);
		lh->src_node = htonl(0x00abc000 + k);
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_UNKNOWN_PEER);
	}
}

static void mode_stale(void)
{
	static uint8_t f[2048];
	struct grim_link_hdr *lh;
	size_t flen;
	int k;

	need_template();
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_DATA, CTL_LEN - LH_LEN + rnd() % 200, &flen);
		/* dst_gen is checked first: a wrong one has no side effect */
		lh->dst_gen = htonl(ntohl(tmpl.dst_gen) ^ (1 + rnd() % 0xfffffffe));
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_STALE);
	}
}

/*
 * A DATA frame of stream (schan -> dchan) with sequence @seq, @flags,
 * fragment @offset and @plen payload bytes; with GRIM_FF_FIRST, a message
 * header claiming a @msglen byte message comes first.
 */
static size_t data_frame(uint8_t *f, uint16_t schan, uint16_t dchan,
			 uint32_t inc, uint32_t seq, uint8_t flags,
			 uint16_t offset, uint32_t msglen, size_t plen)
{
	uint8_t *p = eth_init(f);
	struct grim_link_hdr *lh = (struct grim_link_hdr *)p;
	struct grim_ctl_msg *cm = (struct grim_ctl_msg *)(p + LH_LEN);
	struct grim_frag_hdr *fh = (struct grim_frag_hdr *)(p + CTL_LEN);
	size_t len = DATA_HLEN, i;

	memcpy(lh, &tmpl, sizeof(*lh));
	lh->type = GRIM_FT_DATA;
	lh->flags = flags | GRIM_FF_DCRC;
	lh->xflags = 0;
	cm->src_chan = htons(schan);
	cm->dst_chan = htons(dchan);
	cm->seq = htonl(seq);
	cm->inc = htonl(inc);
	cm->tsval = 0;
	cm->tsecr = 0;
	fh->offset = htons(offset);
	fh->check = 0;
	fh->ack = 0;
	fh->ack_inc = 0;
	if (flags & GRIM_FF_FIRST) {
		struct grim_msg_hdr *mh = (struct grim_msg_hdr *)(p + len);
		uint32_t words = (msglen + 3) / 4, corr = words * 4 - msglen;

		mh->w0 = htonl((uint32_t)GRIM_ID << 16 | (rnd() & 0xffff));
		mh->w1 = htonl((uint32_t)GRIM_MT_AM << 26 | corr << 24 | schan);
		mh->w2 = htonl(words << 16 | dchan);
		mh->w3 = htonl((uint32_t)schan << 16 | 0x6d);
		for (i = 0; i < 4; i++)
			mh->arg[i] = htonl(rnd());
		len += MSG_HLEN;
	}
	for (i = 0; i < plen; i++)
		p[len + i] = rnd();
	len += plen;
	seal(p, len);
	return ETH_HLEN + len;
}

/*
 * An incarnation for a stream the tool makes up: new to the receiver.
 * Real senders count theirs up from 1; these start far past that, and
 * later runs start past earlier ones (the clock, in seconds).  The
 * receiver's real peer then renumbers its next new stream once, past
 * the newest the receiver saw, and counts on from there: each made-up
 * one is far enough past the last that the real peer's do not reach it.
 */
static uint32_t fresh_inc(void)
{
	static uint32_t next;

	if (!next)
		next = 0x10000000u + (((uint32_t)time(NULL) & 0xfff) << 16);
	next += 0x10000;
	return next;
}

static void mode_frag(void)
{
	static uint8_t f[4096];
	/* Below the ephemeral ports: no real stream uses these channels. */
	uint16_t base = 0x1000 + (rnd() % 0x1000) * 4;
	/* Below the device endpoints' ports (GRIM_PORT_DEV..: grim0's IP
	 * channels listen on GRIM_PORT_IP + N), above the sockets' ports
	 * the tests bind.
	 */
	uint16_t noep = GRIM_PORT_DEV - 1 - (rnd() % 0x100);
	uint32_t inc;
	size_t flen;
	int k;

	if (!port) {
		fprintf(stderr, "frag: -p PORT (a listening endpoint) is required\n");
		exit(2);
	}
	need_template();
	printf("frag: streams from channels %u..%u, endpoint %u, unused port %u\n",
	       base, base + 2, port, noep);

	/* A: fragments of no message (nothing started on a fresh stream). */
	inc = fresh_inc();
	for (k = 0; k < count; k++) {
		flen = data_frame(f, base, port, inc, 0,
				  k % 2 ? GRIM_FF_LAST : 0, 100 + k, 0,
				  64 + rnd() % 512);
		xmit(f, flen, C_FRAG);
	}

	/*
	 * B: a message of 1000 bytes to a port nobody listens on.  Its
	 * first fragment, 200 bytes, makes no stream state: the receiver
	 * rejects the incarnation.  Then bad second fragments (wrong
	 * offset, overrunning the message, LAST short of it) are stale.
	 */
	inc = fresh_inc();
	flen = data_frame(f, base + 1, noep, inc, 0, GRIM_FF_FIRST, 0, 1000,
			  200);
	xmit(f, flen, C_NO_EP);
	for (k = 0; k < count; k++) {
		switch (k % 3) {
		case 0:
			flen = data_frame(f, base + 1, noep, inc, 1, 0,
					  k % 6 ? 0 : 204 + k, 0, 300);
			break;
		case 1:
			flen = data_frame(f, base + 1, noep, inc, 1, 0, 200, 0,
					  801 + rnd() % 200);
			break;
		case 2:
			flen = data_frame(f, base + 1, noep, inc, 1,
					  GRIM_FF_LAST, 200, 0,
					  100 + rnd() % 700);
			break;
		}
		xmit(f, flen, C_STALE_STREAM);
	}

	/*
	 * C: first fragments to the real endpoint whose message header lies
	 * about the length: shorter than the fragment, or a single-fragment
	 * message (FIRST|LAST) that claims more or fewer bytes than it has.
	 */
	inc = fresh_inc();
	for (k = 0; k < count; k++) {
		size_t plen = 40 + rnd() % 400;

		switch (k % 3) {
		case 0:
			flen = data_frame(f, base + 2, port, inc, 0,
					  GRIM_FF_FIRST | GRIM_FF_LAST, 0,
					  plen + 1 + rnd() % 1000, plen);
			break;
		case 1:
			flen = data_frame(f, base + 2, port, inc, 0,
					  GRIM_FF_FIRST | GRIM_FF_LAST, 0,
					  plen - 1 - rnd() % 40, plen);
			break;
		case 2:
			flen = data_frame(f, base + 2, port, inc, 0,
					  GRIM_FF_FIRST, 0, plen - 1 - rnd() % 40,
					  plen);
			break;
		}
		xmit(f, flen, C_MSG);
	}
}

static void mode_hello(void)
{
	static const uint8_t evil[ETH_ALEN] = { 2, 0, 0, 0, 0xee, 0xee };
	static uint8_t f[256];
	struct grim_link_hdr *lh;
	struct grim_hello *h;
	size_t flen;
	int k;

	if (!port) {
		fprintf(stderr, "hello: -p NODE (the node id to claim) is required\n");
		exit(2);
	}
	need_template();
	memcpy(smac, evil, ETH_ALEN);
	printf("hello: claiming node %u from 02:00:00:00:ee:ee\n", port);
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_HELLO, sizeof(*h),
						   &flen);
		lh->src_node = htonl(port);
		lh->dst_node = htonl(GRIM_NODE_ANY);
		lh->src_gen = htonl(ntohl(tmpl.src_gen) + 100000 + k);
		lh->dst_gen = 0;
		h = (struct grim_hello *)(lh + 1);
		h->flags = 0;
		h->hello_ms = htonl(1000);
		h->age_ms = htonl(1);
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_MAX);
	}
}

/* The later of two generations, in sequence order. */
static uint32_t later(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0 ? a : b;
}

/* A generation GRIM's clock gives now (drivers/net/grim/peer.c), plus OFF. */
static uint32_t clock_gen(uint32_t off)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	return ((uint32_t)(ns >> 20) | 1) + off;
}

/*
 * churn: COUNT node ids come and go.  One broadcast hello claims each of
 * nodes PORT .. PORT + COUNT - 1 in turn, WAIT_MS apart, each from a MAC
 * of its own (02:00:ee plus the node id's low 24 bits), in cluster 0 (no
 * template): every NI on the segment takes each as a new peer that is
 * never heard again.
 */
static void mode_churn(void)
{
	static uint8_t f[256];
	struct grim_link_hdr *lh;
	struct grim_hello *h;
	uint32_t node;
	size_t flen;
	int k;

	if (!port) {
		fprintf(stderr, "churn: -p NODE (the first node id) is required\n");
		exit(2);
	}
	printf("churn: %d node ids from %u, one hello each, %d ms apart\n",
	       count, port, wait_ms);
	for (k = 0; k < count; k++) {
		node = port + k;
		smac[0] = 2;
		smac[1] = 0;
		smac[2] = 0xee;
		smac[3] = node >> 16;
		smac[4] = node >> 8;
		smac[5] = node;
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_HELLO, sizeof(*h),
						   &flen);
		lh->src_node = htonl(node);
		lh->dst_node = htonl(GRIM_NODE_ANY);
		lh->src_gen = htonl(clock_gen(0));
		lh->dst_gen = 0;
		h = (struct grim_hello *)(lh + 1);
		h->flags = 0;
		h->hello_ms = htonl(1000);
		h->age_ms = htonl(1);
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_MAX);
		usleep(wait_ms * 1000);
	}
}


/*
 * probe: COUNT unicast probes claiming the template's sender, from
 * another MAC (or from -M SRCMAC, the real NI's for one), with a newer
 * session generation, WAIT_MS after the template was seen (or once
 * GOFILE exists, with -g): a receiver must not let them take the session
 * from the real NI for good.  The generation is 100000 past the later
 * of the template's and the clock's (a session older than 100 s would
 * otherwise be forged behind the clock), or with -G the clock's plus
 * GENOFF (mod 2^32): one about 2^31 past the clock is newer than a
 * young session's, yet the clock is past it in sequence order.
 */
/* -g GOFILE: once the template is taken, wait (up to -t) until GOFILE
 * exists.  Returns 0 without -g.
 */
static int wait_go(void)
{
	uint64_t end = now_ms() + timeout_s * 1000ull;

	if (!gofile)
		return 0;
	while (access(gofile, F_OK)) {
		if (now_ms() > end) {
			fprintf(stderr, "%s: no %s in %d s\n", mode, gofile,
				timeout_s);
			exit(1);
		}
		usleep(10000);
	}
	return 1;
}

static void mode_probe(void)
{
	static const uint8_t evil[ETH_ALEN] = { 2, 0, 0, 0, 0xee, 0xee };
	static uint8_t f[256];
	struct grim_link_hdr *lh;
	struct grim_hello *h;
	size_t flen;
	int k;

	need_template();
	if (!wait_go())
		usleep(wait_ms * 1000);
	memcpy(smac, have_srcmac ? srcmac : evil, ETH_ALEN);
	printf("probe: claiming node %u to node %u from %02x:%02x:%02x:%02x:%02x:%02x\n",
	       ntohl(tmpl.src_node), ntohl(tmpl.dst_node), smac[0], smac[1],
	       smac[2], smac[3], smac[4], smac[5]);
	for (k = 0; k < count; k++) {
		lh = (struct grim_link_hdr *)build(f, GRIM_FT_HELLO, sizeof(*h),
						   &flen);
		lh->flags = GRIM_FF_PROBE;
		if (have_genoff)
			lh->src_gen = htonl(clock_gen(genoff) + 2 * k);
		else
			lh->src_gen = htonl(later(ntohl(tmpl.src_gen),
						  clock_gen(0)) + 100000 + k);
		if (!k)
			printf("probe: generation %08x, the template's %08x, the clock's %08x\n",
			       ntohl(lh->src_gen), ntohl(tmpl.src_gen), clock_gen(0));
		h = (struct grim_hello *)(lh + 1);
		h->flags = htonl(GRIM_HF_ANSWER);
		h->hello_ms = htonl(1000);
		h->age_ms = htonl(1);
		seal((uint8_t *)lh, flen - ETH_HLEN);
		xmit(f, flen, C_MAX);
	}
}

/*
 * macflip: frames of the session that a link which damages frames could
 * deliver, the Ethernet header being outside the frame check.  COUNT
 * times, to DSTMAC: this host's next hello and a probe of its session
 * with DSTMAC (the template's generations), both with one bit of the
 * Ethernet source flipped, and the hello again from a multicast source.
 * The receiver must keep the session and drop the last.
 */
static void mode_macflip(void)
{
	static const uint8_t bcast[ETH_ALEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	static uint8_t hello[FRAME_MAX], f[FRAME_MAX];
	uint8_t target[ETH_ALEN];
	struct grim_link_hdr *lh;
	struct ethhdr *eh;
	size_t len;
	int fd, k;

	need_template();
	memcpy(target, dmac, ETH_ALEN);
	memcpy(dmac, bcast, ETH_ALEN);
	fd = sniff_open();
	len = sniff_one(fd, hello, GRIM_FT_HELLO, 1,
			now_ms() + timeout_s * 1000ull);
	close(fd);
	memcpy(dmac, target, ETH_ALEN);
	if (len < ETH_HLEN + LH_LEN + sizeof(struct grim_hello)) {
		fprintf(stderr, "macflip: no hello sent on %s in %d s\n",
			ifname, timeout_s);
		exit(1);
	}
	tx_elsewhere();
	len = ETH_HLEN + ntohs(((struct grim_link_hdr *)(hello + ETH_HLEN))->len);
	eh = (struct ethhdr *)hello;
	memcpy(eh->h_dest, dmac, ETH_ALEN);
	printf("macflip: hello of base %08x, probe of generation %08x\n",
	       ntohl(((struct grim_link_hdr *)(hello + ETH_HLEN))->src_gen),
	       ntohl(tmpl.src_gen));
	for (k = 0; k < count; k++) {
		eh->h_source[5] ^= 1u << (k % 8);
		xmit(hello, len, C_MAX);

		/* the probe from another damaged MAC than the hello's */
		memcpy(f, hello, len);
		((struct ethhdr *)f)->h_source[4] ^= 1u << (k % 8);
		lh = (struct grim_link_hdr *)(f + ETH_HLEN);
		lh->flags = GRIM_FF_PROBE;
		lh->dst_node = tmpl.dst_node;
		lh->src_gen = tmpl.src_gen;
		lh->dst_gen = tmpl.dst_gen;
		seal((uint8_t *)lh, len - ETH_HLEN);
		xmit(f, len, C_MAX);
		eh->h_source[5] ^= 1u << (k % 8);

		eh->h_source[0] |= 1;
		xmit(hello, len, C_MAX);
		eh->h_source[0] &= ~1;
	}
}

static void mode_reasm(void)
{
	static uint8_t f[4096];
	uint16_t base = 0x2000 + (rnd() % 0x1000) * 4;
	size_t flen;
	int k;

	if (!port) {
		fprintf(stderr, "reasm: -p PORT (a listening endpoint) is required\n");
		exit(2);
	}
	need_template();
	wait_go();
	printf("reasm: %d messages never completed, streams from channels %u..%u to %u\n",
	       count, base, (uint16_t)(base + count - 1), port);
	for (k = 0; k < count; k++) {
		flen = data_frame(f, (uint16_t)(base + k), port, fresh_inc(), 0,
				  GRIM_FF_FIRST, 0, 64000, 1000);
		xmit(f, flen, C_MAX);
	}
}

static void mode_reasmlive(void)
{
	static uint8_t f[4096];
	uint16_t chan = 0x2000 + (rnd() % 0x1000) * 4;
	uint32_t inc;
	size_t flen;
	int k;

	if (!port) {
		fprintf(stderr, "reasmlive: -p PORT (a listening endpoint) is required\n");
		exit(2);
	}
	need_template();
	inc = fresh_inc();
	printf("reasmlive: one message from channel %u to %u, its first fragment sent %d times, %d ms apart\n",
	       chan, port, count, wait_ms);
	fflush(stdout);
	for (k = 0; k < count; k++) {
		if (k)
			usleep(wait_ms * 1000);
		flen = data_frame(f, chan, port, inc, 0, GRIM_FF_FIRST, 0,
				  64000, 1000);
		xmit(f, flen, C_MAX);
	}
}

/* ---- IP over GRIM (drivers/net/grim/ip.c) -------------------------------------- */

/* In a message's first argument word: it went to every node; its
 * transport checksum is to fill in at the place the second word gives
 * (start << 16 | offset from start).
 */
#define GRIM_IP_F_BCAST	0x1
#define GRIM_IP_F_CSUM	0x2

/* The addresses of the sniffed IPv4 packet (network byte order). */
static uint32_t ip_saddr, ip_daddr;

/*
 * The template of the IP modes: the first frame of a message with an
 * IPv4 packet that this host sends over IP over GRIM to dmac (handler
 * ETH_P_IP, to one of IP's endpoints).  Its link header is the template
 * of valid fields; its addresses are those of the datagrams made up.
 */
static void need_ip_template(void)
{
	uint64_t deadline = now_ms() + timeout_s * 1000ull;
	static uint8_t buf[FRAME_MAX];
	int fd = sniff_open();
	size_t r;

	while ((r = sniff_one(fd, buf, GRIM_FT_DATA, 1, deadline))) {
		const struct grim_link_hdr *lh = (const void *)(buf + ETH_HLEN);
		const struct grim_msg_hdr *mh =
			(const void *)(buf + ETH_HLEN + DATA_HLEN);
		const struct iphdr *iph =
			(const void *)(buf + ETH_HLEN + DATA_HLEN + MSG_HLEN);

		if (!(lh->flags & GRIM_FF_FIRST) ||
		    ntohs(lh->len) < DATA_HLEN + MSG_HLEN + sizeof(*iph) ||
		    (ntohl(mh->w2) & 0xffff) < GRIM_PORT_IP ||
		    (ntohl(mh->w3) & 0xffff) != ETH_P_IP || iph->version != 4)
			continue;
		close(fd);
		memcpy(&tmpl, lh, sizeof(tmpl));
		ip_saddr = iph->saddr;
		ip_daddr = iph->daddr;
		printf("template: cluster %u, node %u -> %u, gen %08x -> %08x, IPv4 %08x -> %08x\n",
		       ntohl(tmpl.cluster), ntohl(tmpl.src_node),
		       ntohl(tmpl.dst_node), ntohl(tmpl.src_gen),
		       ntohl(tmpl.dst_gen), ntohl(ip_saddr), ntohl(ip_daddr));
		return;
	}
	fprintf(stderr, "%s: no IPv4 packet over GRIM to the destination seen on %s in %d s\n",
		mode, ifname, timeout_s);
	exit(1);
}

/*
 * One whole message (FIRST | LAST) to IP's endpoint PORT, alone on a
 * fresh stream from channel @chan: EtherType @handler, first argument
 * word @arg0, second @arg1 if @arg0 says a checksum is to fill in (the
 * others random, which IP ignores), and @plen bytes of @payload, or
 * random ones.  Returns the frame's length.
 */
static size_t ip_msg(uint8_t *f, uint16_t chan, uint16_t handler,
		     uint32_t arg0, uint32_t arg1, const uint8_t *payload,
		     size_t plen)
{
	size_t flen = data_frame(f, chan, port, fresh_inc(), 0,
				 GRIM_FF_FIRST | GRIM_FF_LAST, 0, plen, plen);
	uint8_t *p = f + ETH_HLEN;
	struct grim_msg_hdr *mh = (struct grim_msg_hdr *)(p + DATA_HLEN);

	mh->w3 = htonl((uint32_t)chan << 16 | handler);
	mh->arg[0] = htonl(arg0);
	if (arg0 & GRIM_IP_F_CSUM)
		mh->arg[1] = htonl(arg1);
	if (payload)
		memcpy(p + DATA_HLEN + MSG_HLEN, payload, plen);
	seal(p, flen - ETH_HLEN);
	return flen;
}

/*
 * An IPv4 UDP datagram from the template's source to port 9 of its
 * destination (discard: nobody listens there in the tests), without a
 * UDP checksum (0: none, allowed over IPv4).  Returns its length.
 */
static size_t udp_closed(uint8_t *d)
{
	struct iphdr *iph = (struct iphdr *)d;
	struct udphdr *uh = (struct udphdr *)(iph + 1);
	size_t plen = 16 + rnd() % 64, i;

	memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tot_len = htons(sizeof(*iph) + sizeof(*uh) + plen);
	iph->id = htons(rnd());
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = ip_saddr;
	iph->daddr = ip_daddr;
	iph->check = inet_csum(d, sizeof(*iph));
	uh->source = htons(40000 + rnd() % 10000);
	uh->dest = htons(9);
	uh->len = htons(sizeof(*uh) + plen);
	uh->check = 0;
	for (i = 0; i < plen; i++)
		d[sizeof(*iph) + sizeof(*uh) + i] = rnd();
	return sizeof(*iph) + sizeof(*uh) + plen;
}

enum ipjunk_class {
	J_IPV4, J_IPV6, J_ARP, J_OTHER, J_EMPTY, J_UDP_BCAST, J_UDP, J_CSUM,
	J_MAX
};

static const char *const ipjunk_names[J_MAX] = {
	"ipv4", "ipv6", "arp", "other", "empty", "udp-bcast", "udp", "csum-out",
};

static void mode_ipjunk(void)
{
	/* EtherTypes that grim_ip_deliver() must refuse */
	static const uint16_t other[] = {
		GRIM_ETH_P, 0, ETH_P_ALL, ETH_P_8021Q, 0x88cc /* LLDP */, 0xffff,
	};
	static const uint16_t empty[] = { ETH_P_IP, ETH_P_IPV6, ETH_P_ARP };
	/* Below the ephemeral ports: no real stream uses these channels. */
	uint16_t base = rnd() % 0x1000;
	unsigned long per[J_MAX] = {};
	static uint8_t f[4096], d[256];
	size_t flen, dlen;
	int k, c;

	if (port < GRIM_PORT_IP) {
		fprintf(stderr, "ipjunk: -p PORT (IP's, %#x + channel) is required\n",
			GRIM_PORT_IP);
		exit(2);
	}
	need_ip_template();
	printf("ipjunk: streams from channels %u.. to %#x\n", 0x5000 + base,
	       port);
	for (k = 0; k < count; k++) {
		/* a fresh stream each, from channels 0x5000..0x7fff */
		uint16_t chan = 0x5000 + (base + k) % 0x3000;
		size_t n = k / J_MAX;
		uint16_t oth = other[n % (sizeof(other) / sizeof(other[0]))];
		uint16_t emp = empty[n % (sizeof(empty) / sizeof(empty[0]))];

		c = k % J_MAX;
		switch (c) {
		case J_IPV4:
			flen = ip_msg(f, chan, ETH_P_IP, 0, 0, NULL, 1 + rnd() % 300);
			break;
		case J_IPV6:
			flen = ip_msg(f, chan, ETH_P_IPV6, 0, 0, NULL, 1 + rnd() % 300);
			break;
		case J_ARP:
			flen = ip_msg(f, chan, ETH_P_ARP, 0, 0, NULL, 1 + rnd() % 100);
			break;
		case J_OTHER:
			flen = ip_msg(f, chan, oth, 0, 0, NULL, 1 + rnd() % 300);
			break;
		case J_EMPTY:
			flen = ip_msg(f, chan, emp, 0, 0, NULL, 0);
			break;
		case J_CSUM:
			/* grim_ip_rx_csum(): the UDP checksum's place
			 * (start 20, offset 6) is right; these are not
			 */
			dlen = udp_closed(d);
			switch (n % 4) {
			case 0:		/* in the IP header */
				flen = ip_msg(f, chan, ETH_P_IP, GRIM_IP_F_CSUM,
					      8 << 16 | 2, d, dlen);
				break;
			case 1:		/* the sum past the packet's end */
				flen = ip_msg(f, chan, ETH_P_IP, GRIM_IP_F_CSUM,
					      20 << 16 | (dlen - 21), d, dlen);
				break;
			case 2:		/* anywhere past it */
				flen = ip_msg(f, chan, ETH_P_IP, GRIM_IP_F_CSUM,
					      (rnd() | 0x100) << 16 |
					      (rnd() & 0xffff), d, dlen);
				break;
			default:	/* ARP has no checksum */
				flen = ip_msg(f, chan, ETH_P_ARP, GRIM_IP_F_CSUM,
					      20 << 16 | 6, NULL,
					      28 + rnd() % 32);
				break;
			}
			break;
		default:	/* J_UDP_BCAST, J_UDP */
			dlen = udp_closed(d);
			flen = ip_msg(f, chan, ETH_P_IP,
				      c == J_UDP_BCAST ? GRIM_IP_F_BCAST : 0,
				      0, d, dlen);
			break;
		}
		if (!xmit(f, flen, C_RX_MSGS))
			continue;
		per[c]++;
		/* grim_ip_deliver(): not IP's EtherType, or no packet, or
		 * a checksum to fill in out of place
		 */
		if (c == J_OTHER || c == J_EMPTY || c == J_CSUM)
			expect[C_RX_DROPPED]++;
	}
	for (c = 0; c < J_MAX; c++)
		printf("ipjunk %s %lu\n", ipjunk_names[c], per[c]);
}

/* mcast.c's kind of a tree message that carries a group message */
#define MC_DATA		1

static void mode_mcport(void)
{
	static const struct {
		uint16_t schan, dchan;
		uint32_t group;
	} swapped[] = {
		{ GRIM_PORT_MC_ROOT, GRIM_PORT_MC, GRIM_GROUP_LINK },
		{ GRIM_PORT_LMC_ROOT, GRIM_PORT_LMC, 77 },
		{ GRIM_PORT_MC, GRIM_PORT_LMC, GRIM_GROUP_LINK },
		{ GRIM_PORT_LMC, GRIM_PORT_MC, 77 },
	};
	const size_t nsw = sizeof(swapped) / sizeof(swapped[0]);
	uint32_t inc[sizeof(swapped) / sizeof(swapped[0])];
	static uint8_t f[4096];
	size_t j;
	int k;

	need_ip_template();
	/* One fresh incarnation of each pair's stream, its messages in
	 * sequence.
	 */
	for (j = 0; j < nsw; j++)
		inc[j] = fresh_inc();
	for (k = 0; k < count; k++) {
		const size_t plen = 24 + 8;	/* struct grim_mc_data, data */
		uint16_t sch = swapped[k % nsw].schan;
		size_t flen = data_frame(f, sch, swapped[k % nsw].dchan,
					 inc[k % nsw], k / nsw,
					 GRIM_FF_FIRST | GRIM_FF_LAST, 0, plen,
					 plen);
		uint8_t *p = f + ETH_HLEN;
		struct grim_msg_hdr *mh =
			(struct grim_msg_hdr *)(p + DATA_HLEN);
		size_t i;

		mh->w3 = htonl((uint32_t)sch << 16 | MC_DATA);
		mh->arg[0] = htonl(swapped[k % nsw].group);
		mh->arg[1] = htonl(rnd());		/* ticket */
		mh->arg[2] = htonl(rnd() | 1);		/* term */
		mh->arg[3] = tmpl.src_node;		/* the root */
		for (i = 0; i < plen; i++)
			p[DATA_HLEN + MSG_HLEN + i] = rnd();
		seal(p, flen - ETH_HLEN);
		xmit(f, flen, C_MSG);
	}
}

static const struct grim_ctl_msg *ctl_of(const uint8_t *frame)
{
	return (const struct grim_ctl_msg *)(frame + ETH_HLEN + LH_LEN);
}

/*
 * Wait until the receiver has ACKed every sniffed frame (an ACK of the
 * same stream naming a later next-expected sequence).  Only then is the
 * replay of a frame a duplicate by definition.
 */
static int wait_acked(int fd, struct sframe *fr, int n)
{
	uint64_t deadline = now_ms() + timeout_s * 1000ull;
	static uint8_t buf[FRAME_MAX];
	int left = n, i;
	char *acked;

	acked = calloc(n, 1);
	if (!acked)
		die("calloc");
	for (;;) {
		const struct grim_ctl_msg *ack;

		if (nacklog) {
			ack = &acklog[--nacklog];	/* seen while sniffing */
		} else {
			if (!left || !sniff_one(fd, buf, GRIM_FT_ACK, 0, deadline))
				break;
			ack = ctl_of(buf);
		}
		for (i = 0; i < n; i++) {
			const struct grim_ctl_msg *cm = ctl_of(fr[i].data);

			if (acked[i] || ack->src_chan != cm->dst_chan ||
			    ack->dst_chan != cm->src_chan ||
			    (int32_t)(ntohl(ack->seq) - ntohl(cm->seq)) <= 0)
				continue;
			acked[i] = 1;
			left--;
		}
	}
	free(acked);
	return n - left;
}

static void mode_replay(void)
{
	static struct sframe fr[MAX_SNIFF];
	int fd = sniff_open(), got, i;

	if (nsniff > MAX_SNIFF)
		nsniff = MAX_SNIFF;
	got = sniff(fd, fr, nsniff);
	printf("replay: sniffed %d DATA frames\n", got);
	if (got < nsniff) {
		fprintf(stderr, "replay: only %d of %d frames seen in %d s\n",
			got, nsniff, timeout_s);
		exit(1);
	}
	i = wait_acked(fd, fr, got);
	close(fd);
	printf("replay: the receiver acknowledged %d of them\n", i);
	if (i < got) {
		fprintf(stderr, "replay: %d frames not acknowledged in %d s\n",
			got - i, timeout_s);
		exit(1);
	}
	usleep(wait_ms * 1000);
	for (i = 0; i < got; i++) {
		const struct grim_link_hdr *lh =
			(const struct grim_link_hdr *)(fr[i].data + ETH_HLEN);
		const struct grim_ctl_msg *cm = ctl_of(fr[i].data);

		if (i < 4 || i == got - 1)
			printf("replay: %u -> %u chan %u -> %u seq %u flags %#x len %u\n",
			       ntohl(lh->src_node), ntohl(lh->dst_node),
			       ntohs(cm->src_chan), ntohs(cm->dst_chan),
			       ntohl(cm->seq), lh->flags, ntohs(lh->len));
		xmit(fr[i].data, fr[i].len, C_REPLAYED);
	}
	/* And once more, in reverse order. */
	for (i = got - 1; i >= 0; i--)
		xmit(fr[i].data, fr[i].len, C_REPLAYED);
}

/* ---- an attacker on the segment: capture, then flood ---------------------------- */

static const char *file;	/* -f: captured frames */

/* Whether a sniffed frame is a GRIM frame of the cluster's traffic to or
 * from dmac, or a broadcast hello: what an attacker on the segment sees
 * of the target's conversation.
 */
static int grim_seen(const uint8_t *buf, ssize_t r)
{
	static const uint8_t bcast[ETH_ALEN] = { 255, 255, 255, 255, 255, 255 };
	const struct ethhdr *eh = (const struct ethhdr *)buf;
	const struct grim_link_hdr *lh = (const void *)(buf + ETH_HLEN);

	return r >= ETH_HLEN + LH_LEN && ntohs(eh->h_proto) == GRIM_ETH_P &&
	       ntohs(lh->magic) == GRIM_ID &&
	       lh->version == GRIM_WIRE_VERSION &&
	       (!memcmp(eh->h_dest, dmac, ETH_ALEN) ||
		!memcmp(eh->h_source, dmac, ETH_ALEN) ||
		!memcmp(eh->h_dest, bcast, ETH_ALEN)) &&
	       ntohs(lh->len) <= r - ETH_HLEN;
}

/*
 * capture: record COUNT frames of the target's traffic (every frame to
 * or from DSTMAC, and broadcast hellos) to -f FILE, as length-prefixed
 * Ethernet frames.  The attacker's port must see them (a bridge that
 * floods, or a hub).  It goes on past COUNT until it has a hello, a DATA
 * and an ACK frame, and fails without them.
 */
static void mode_capture(void)
{
	const int all = 1 << GRIM_FT_HELLO | 1 << GRIM_FT_DATA | 1 << GRIM_FT_ACK;
	uint64_t deadline = now_ms() + timeout_s * 1000ull;
	static uint8_t buf[FRAME_MAX];
	int fd = sniff_open(), got = 0, types = 0;
	FILE *out;

	if (!file) {
		fprintf(stderr, "capture: -f FILE is required\n");
		exit(2);
	}
	out = fopen(file, "w");
	if (!out)
		die(file);
	while ((got < count || (types & all) != all) && got < MAX_SNIFF) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)(deadline - now_ms()), t;
		uint16_t len;
		ssize_t r;

		if (left <= 0 || (!frame_pending() && poll(&p, 1, left) <= 0))
			break;
		r = next_frame(fd, buf, NULL);
		if (r < 0 || !grim_seen(buf, r))
			continue;
		len = r;
		t = 1 << ((const struct grim_link_hdr *)(buf + ETH_HLEN))->type;
		/* Past COUNT, only the kinds still missing. */
		if (got >= count && types & t)
			continue;
		types |= t;
		if (fwrite(&len, sizeof(len), 1, out) != 1 ||
		    fwrite(buf, r, 1, out) != 1)
			die("write");
		got++;
	}
	fclose(out);
	close(fd);
	printf("capture: %d frames%s%s%s\n", got,
	       types & 1 << GRIM_FT_HELLO ? ", hellos" : "",
	       types & 1 << GRIM_FT_DATA ? ", data" : "",
	       types & 1 << GRIM_FT_ACK ? ", acks" : "");
	if (got < count || (types & all) != all) {
		fprintf(stderr, "capture: %d of %d frames in %d s, not every kind\n",
			got, count, timeout_s);
		exit(1);
	}
}

static struct sframe *cap;
static int ncap;

static void load_capture(void)
{
	FILE *in = file ? fopen(file, "r") : NULL;
	uint16_t len;

	if (!in) {
		fprintf(stderr, "flood: -f FILE (from capture) is required\n");
		exit(2);
	}
	cap = calloc(MAX_SNIFF, sizeof(*cap));
	while (cap && ncap < MAX_SNIFF && fread(&len, sizeof(len), 1, in) == 1) {
		cap[ncap].len = len;
		cap[ncap].data = malloc(len);
		if (!cap[ncap].data || fread(cap[ncap].data, len, 1, in) != 1)
			die("read capture");
		ncap++;
	}
	fclose(in);
	if (!ncap) {
		fprintf(stderr, "flood: nothing captured in %s\n", file);
		exit(1);
	}
}

/* A random captured frame (of @type, if not 0) sent to dmac. */
static const struct sframe *pick(uint8_t type)
{
	int i, tries;

	for (tries = 0; tries < 4 * ncap; tries++) {
		const struct sframe *f = &cap[rnd() % ncap];
		const struct grim_link_hdr *lh = (const void *)(f->data + ETH_HLEN);

		if (memcmp(((const struct ethhdr *)f->data)->h_source, dmac,
			   ETH_ALEN) && (!type || lh->type == type))
			return f;
	}
	for (i = 0; i < ncap; i++)
		if (memcmp(((const struct ethhdr *)cap[i].data)->h_source,
			   dmac, ETH_ALEN))
			return &cap[i];
	fprintf(stderr, "flood: no captured frame from another host\n");
	exit(1);
}

/*
 * Finish a forged frame of @len bytes (link header on): with @tagged a
 * trailer and tag as a keyed NI sends them, random where the key would be
 * needed; else the frame's CRC.  Returns the frame's new length.
 */
static size_t forge_seal(uint8_t *lhp, size_t len, int tagged,
			 const uint8_t *mac)
{
	struct grim_link_hdr *lh = (struct grim_link_hdr *)lhp;
	struct grim_auth *tr;
	size_t i;

	if (!tagged) {
		lh->xflags &= ~GRIM_XF_AUTH;
		seal(lhp, len);
		return len;
	}
	/* Within a 1500-byte MTU, like the frames of a keyed NI. */
	if (len + GRIM_AUTH_LEN > 1500)
		len = 1500 - GRIM_AUTH_LEN;
	tr = (struct grim_auth *)(lhp + len);
	memset(tr, 0, sizeof(*tr));
	tr->key_id = 1 + rnd() % 2;
	memcpy(tr->src_mac, mac, ETH_ALEN);
	tr->boot = htonl(rnd());
	tr->pn_hi = htonl(rnd());
	tr->pn_lo = htonl(rnd());
	tr->echo = htonl(rnd());
	tr->chal = htonl(rnd());
	for (i = 0; i < GRIM_AUTH_TAG_LEN; i++)
		lhp[len + sizeof(*tr) + i] = rnd();
	len += GRIM_AUTH_LEN;
	lh->xflags |= GRIM_XF_AUTH;
	lh->len = htons(len);
	lh->csum = 0;
	return len;
}

enum flood_class {
	F_REPLAY, F_BITFLIP, F_NEWGEN, F_HELLO, F_ACK, F_NACK, F_DATA,
	F_NEWPEER, F_NEWSTREAM, F_REJECT, F_MAX
};

static const char *const flood_names[F_MAX] = {
	"replayed", "bit-flipped", "newer-generation", "forged-hello",
	"forged-ack", "forged-nack", "forged-data", "new-peer", "new-stream",
	"forged-reject",
};

/* Send without xmit()'s pause: a burst of 32, then a millisecond; a full
 * queue is waited for up to two seconds.
 */
static void flood_xmit(const uint8_t *frame, size_t len)
{
	if (send_frame(frame, len, 2000, 1000) && sent % 32 == 0)
		usleep(1000);
}

/*
 * flood: COUNT frames to DSTMAC built from the capture, in ten kinds:
 * exact replays; replays with one bit flipped; replays claiming a newer
 * session generation; hellos, ACKs, NACKs, REJECTs and DATA forged with
 * the real node ids, cluster and generations; hellos from node ids never
 * seen; DATA on channels never used.  Half of the forged frames carry a
 * trailer and a random tag (as if under a key), half a good CRC.  Their
 * source MAC is the real sender's or the attacker's, by turns.
 */
static void mode_flood(void)
{
	static uint8_t f[FRAME_MAX + 64];
	unsigned long per[F_MAX] = {};
	int k;

	load_capture();
	for (k = 0; k < count; k++) {
		enum flood_class c = k % F_MAX;
		int tagged = (k / F_MAX) % 2;
		const struct sframe *src = pick(c == F_ACK || c == F_NACK ||
						c == F_REJECT || c == F_DATA ||
						c == F_NEWSTREAM ? GRIM_FT_DATA :
						c == F_HELLO ? GRIM_FT_HELLO : 0);
		const uint8_t *smac_real = ((const struct ethhdr *)src->data)->h_source;
		struct grim_link_hdr *lh = (struct grim_link_hdr *)(f + ETH_HLEN);
		struct grim_ctl_msg *cm = (struct grim_ctl_msg *)(lh + 1);
		const uint8_t *mac = k & 1 ? smac_real : smac;
		size_t len = src->len - ETH_HLEN, bit;
		struct ethhdr *eh = (struct ethhdr *)f;
		uint16_t sch, dch;
		uint32_t seq;

		memcpy(f, src->data, src->len);
		memcpy(eh->h_dest, dmac, ETH_ALEN);
		switch (c) {
		case F_REPLAY:
			break;
		case F_BITFLIP:
			bit = rnd() % (len * 8);
			f[ETH_HLEN + bit / 8] ^= 1 << (bit % 8);
			break;
		default:
			memcpy(eh->h_source, mac, ETH_ALEN);
			/* The forged frame, without the real one's trailer. */
			if (lh->xflags & GRIM_XF_AUTH && len >= LH_LEN + GRIM_AUTH_LEN)
				len -= GRIM_AUTH_LEN;
			lh->xflags &= ~GRIM_XF_AUTH;
			switch (c) {
			case F_NEWGEN:
				lh->src_gen = htonl(ntohl(lh->src_gen) + 1 + rnd() % 100000);
				break;
			case F_HELLO: {
				struct grim_hello *h = (struct grim_hello *)(lh + 1);

				len = LH_LEN + sizeof(*h);
				lh->type = GRIM_FT_HELLO;
				lh->flags = rnd() % 2 ? GRIM_FF_PROBE : 0;
				lh->src_gen = htonl(ntohl(lh->src_gen) + 1 + rnd() % 100000);
				if (!(lh->flags & GRIM_FF_PROBE))
					lh->dst_node = htonl(GRIM_NODE_ANY);
				h->flags = htonl(rnd() % 2 ? GRIM_HF_ANSWER : 0);
				h->hello_ms = htonl(1000);
				h->age_ms = htonl(rnd());
				break;
			}
			case F_ACK:
			case F_NACK:
			case F_REJECT: {
				uint32_t tmp = lh->src_node;
				uint16_t ch = cm->src_chan;

				/* From the receiver of the data back to its sender. */
				lh->src_node = lh->dst_node;
				lh->dst_node = tmp;
				tmp = lh->src_gen;
				lh->src_gen = lh->dst_gen;
				lh->dst_gen = tmp;
				cm->src_chan = cm->dst_chan;
				cm->dst_chan = ch;
				cm->seq = htonl(ntohl(cm->seq) + rnd() % 64);
				lh->type = c == F_ACK ? GRIM_FT_ACK :
					   c == F_NACK ? GRIM_FT_NACK : GRIM_FT_REJECT;
				lh->flags = 0;
				len = CTL_LEN;
				if (c == F_REJECT) {
					struct grim_reject *rj = (struct grim_reject *)(cm + 1);

					rj->reason = htons(1 + rnd() % 3);
					rj->reserved = 0;
					rj->from = cm->seq;
					len += sizeof(*rj);
				}
				break;
			}
			case F_DATA:
			case F_NEWSTREAM:
				/* A whole message on the real stream, at a
				 * sequence it may be waiting for, or on a
				 * stream never used.
				 */
				memcpy(&tmpl, lh, sizeof(tmpl));
				sch = c == F_DATA ? ntohs(cm->src_chan) : 1 + rnd() % 0xfffe;
				dch = c == F_DATA ? ntohs(cm->dst_chan) : 1 + rnd() % 0xfffe;
				seq = c == F_DATA ? ntohl(cm->seq) + rnd() % 8 : 0;
				bit = 16 + rnd() % 200;
				len = data_frame(f, sch, dch,
						 c == F_DATA ? ntohl(cm->inc) : rnd(),
						 seq, GRIM_FF_FIRST | GRIM_FF_LAST,
						 0, bit, bit) - ETH_HLEN;
				memcpy(eh->h_source, mac, ETH_ALEN);
				break;
			case F_NEWPEER: {
				struct grim_hello *h = (struct grim_hello *)(lh + 1);

				len = LH_LEN + sizeof(*h);
				lh->type = GRIM_FT_HELLO;
				lh->flags = 0;
				lh->src_node = htonl(0x00a00000 + rnd() % 0x100000);
				lh->dst_node = htonl(GRIM_NODE_ANY);
				lh->src_gen = htonl(rnd() | 1);
				lh->dst_gen = 0;
				h->flags = 0;
				h->hello_ms = htonl(1000);
				h->age_ms = htonl(rnd());
				break;
			}
			default:
				break;
			}
			len = forge_seal((uint8_t *)lh, len, tagged, mac);
		}
		per[c]++;
		flood_xmit(f, ETH_HLEN + len);
	}
	printf("flood: %d frames from %d captured:", count, ncap);
	for (k = 0; k < F_MAX; k++)
		printf(" %s %lu", flood_names[k], per[k]);
	printf("\n");
}

/*
 * rehello: the hellos of the capture, the target's own included, sent
 * again unchanged (but for the Ethernet destination, DSTMAC) COUNT times
 * in turn, one every WAIT_MS milliseconds: an NI that restarts must not
 * take hellos of its earlier run, or of anyone's, for news.
 */
static void mode_rehello(void)
{
	int i, n = 0, own = 0, *idx;
	uint8_t f[ETH_FRAME_LEN + 64];

	load_capture();
	idx = calloc(ncap, sizeof(*idx));
	if (!idx)
		die("calloc");
	for (i = 0; i < ncap; i++) {
		const struct grim_link_hdr *lh =
			(const void *)(cap[i].data + ETH_HLEN);

		if (lh->type != GRIM_FT_HELLO || cap[i].len > sizeof(f))
			continue;
		idx[n++] = i;
		own += !memcmp(((const struct ethhdr *)cap[i].data)->h_source,
			       dmac, ETH_ALEN);
	}
	if (!n) {
		fprintf(stderr, "rehello: no hello in %s\n", file);
		exit(1);
	}
	for (i = 0; i < count; i++) {
		const struct sframe *c = &cap[idx[i % n]];

		memcpy(f, c->data, c->len);
		memcpy(((struct ethhdr *)f)->h_dest, dmac, ETH_ALEN);
		send_frame(f, c->len, 100, 10000);
		usleep(wait_ms * 1000);
	}
	printf("rehello: %d hellos from %d captured, %d of them the target's own\n",
	       count, n, own);
	free(idx);
}

enum mcforge_class { M_DATA, M_TREE, M_SKIP, M_ROOT, M_MAX };

static const char *const mcforge_names[M_MAX] = {
	"data", "tree", "skip", "to-root",
};

/* A captured frame to DSTMAC that opens a message to a group port. */
static const struct sframe *pick_mc(void)
{
	int tries;

	for (tries = 0; tries < 8 * ncap; tries++) {
		const struct sframe *f = pick(GRIM_FT_DATA);
		const struct grim_link_hdr *lh = (const void *)(f->data + ETH_HLEN);
		const struct grim_msg_hdr *mh =
			(const void *)(f->data + ETH_HLEN + DATA_HLEN);
		uint16_t dch;

		if (!(lh->flags & GRIM_FF_FIRST) ||
		    f->len < ETH_HLEN + DATA_HLEN + MSG_HLEN + 4 ||
		    memcmp(((const struct ethhdr *)f->data)->h_dest, dmac, ETH_ALEN))
			continue;
		dch = ntohl(mh->w2) & 0xffff;
		if (dch == GRIM_PORT_MC || dch == GRIM_PORT_MC_ROOT)
			return f;
	}
	fprintf(stderr, "mcforge: no group message to the target captured\n");
	exit(1);
}

/*
 * mcforge: COUNT group messages to DSTMAC forged from captured ones (the
 * real node ids, cluster, generations and streams, the real group, term
 * and root, tickets just past the real ones), each one whole frame, in
 * four kinds by turns: DATA on the tree port with the next tickets; TREE
 * updates that make the target a child of the root; SKIPs far ahead;
 * and to the root's port, joins, leaves, reports (HAVE far ahead), repair
 * requests and relays.  Half on the captured message's stream at a
 * sequence it may wait for, half on fresh streams; half with a trailer
 * and a random tag (as if under a key), half a good CRC; from the real
 * sender's MAC or the attacker's, by turns.
 */
static void mode_mcforge(void)
{
	static const uint16_t to_root[] = { 3, 4, 7, 8, 6 };
	static uint8_t f[FRAME_MAX + 64];
	unsigned long per[M_MAX] = {};
	int k;

	load_capture();
	for (k = 0; k < count; k++) {
		enum mcforge_class c = k % M_MAX;
		int tagged = (k / M_MAX) % 2, same = (k / (2 * M_MAX)) % 2;
		const struct sframe *src = pick_mc();
		const uint8_t *sp = src->data + ETH_HLEN;
		const struct grim_ctl_msg *scm =
			(const void *)(sp + LH_LEN);
		const struct grim_msg_hdr *smh = (const void *)(sp + DATA_HLEN);
		const uint8_t *mac = k & 1 ?
			((const struct ethhdr *)src->data)->h_source : smac;
		uint32_t group, ticket, term, root, me, t;
		uint16_t ch = c == M_ROOT ? GRIM_PORT_MC_ROOT : GRIM_PORT_MC;
		uint16_t handler;
		struct grim_link_hdr *lh;
		struct grim_msg_hdr *mh;
		uint8_t *pl;
		size_t plen, len, i;

		memcpy(&tmpl, sp, sizeof(tmpl));
		me = ntohl(tmpl.dst_node);
		if ((ntohl(smh->w2) & 0xffff) == GRIM_PORT_MC) {
			group = ntohl(smh->arg[0]);
			ticket = ntohl(smh->arg[1]);
			term = ntohl(smh->arg[2]);
			root = ntohl(smh->arg[3]);
		} else {	/* an injection: its group opens the payload */
			memcpy(&t, sp + DATA_HLEN + MSG_HLEN, 4);
			group = ntohl(t);
			ticket = rnd();
			term = rnd();
			root = me;
		}
		switch (c) {
		case M_DATA:
			handler = 1;
			ticket += 1 + rnd() % 64;
			plen = 24 + rnd() % 200;
			break;
		case M_TREE:
			handler = 2 | (rnd() % 16) << 8;
			ticket += 1 + rnd() % 8;
			plen = 8 + 2 * 4;
			break;
		case M_SKIP:
			handler = 5;
			ticket += 100 + rnd() % 10000;
			plen = 0;
			break;
		default:
			handler = to_root[(k / M_MAX) % 5];
			ticket += rnd() % 100000;
			plen = handler == 6 ? 24 + rnd() % 200 : 0;
			break;
		}
		len = data_frame(f, ch, ch, same ? ntohl(scm->inc) : fresh_inc(),
				 same ? ntohl(scm->seq) + rnd() % 8 : 0,
				 GRIM_FF_FIRST | GRIM_FF_LAST, 0, plen, plen) -
		      ETH_HLEN;
		lh = (struct grim_link_hdr *)(f + ETH_HLEN);
		mh = (struct grim_msg_hdr *)(f + ETH_HLEN + DATA_HLEN);
		pl = f + ETH_HLEN + DATA_HLEN + MSG_HLEN;
		mh->w3 = htonl((uint32_t)ch << 16 | handler);
		mh->arg[0] = htonl(group);
		mh->arg[1] = htonl(ticket);
		mh->arg[2] = htonl(term);
		mh->arg[3] = htonl(root);
		if (c == M_TREE) {
			/* joiner, since, then the tree: the root, the target */
			uint32_t ids[4] = { htonl(me), 0, htonl(root), htonl(me) };

			memcpy(pl, ids, sizeof(ids));
		} else if (plen >= 24) {
			/* the group header: a DATA's, or an injection's */
			for (i = 0; i < 24; i++)
				pl[i] = 0;
			t = htonl(c == M_DATA ? ntohl(tmpl.src_node) : group);
			memcpy(pl + (c == M_DATA ? 16 : 0), &t, 4);
		}
		memcpy(((struct ethhdr *)f)->h_source, mac, ETH_ALEN);
		len = forge_seal((uint8_t *)lh, len, tagged, mac);
		per[c]++;
		flood_xmit(f, ETH_HLEN + len);
	}
	printf("mcforge: %d frames from %d captured:", count, ncap);
	for (k = 0; k < M_MAX; k++)
		printf(" %s %lu", mcforge_names[k], per[k]);
	printf("\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} modes[] = {
	{ "capture", mode_capture },
	{ "flood", mode_flood },
	{ "mcforge", mode_mcforge },
	{ "rehello", mode_rehello },
	{ "random", mode_random },
	{ "short", mode_short },
	{ "badmagic", mode_badmagic },
	{ "badversion", mode_badversion },
	{ "badlen", mode_badlen },
	{ "badcsum", mode_badcsum },
	{ "hdrcrc", mode_hdrcrc },
	{ "badicsum", mode_badicsum },
	{ "cluster", mode_cluster },
	{ "notours", mode_notours },
	{ "badtype", mode_badtype },
	{ "unknownpeer", mode_unknownpeer },
	{ "stale", mode_stale },
	{ "frag", mode_frag },
	{ "reasm", mode_reasm },
	{ "reasmlive", mode_reasmlive },
	{ "hello", mode_hello },
	{ "probe", mode_probe },
	{ "macflip", mode_macflip },
	{ "churn", mode_churn },
	{ "replay", mode_replay },
	{ "sack", mode_sack },
	{ "ipjunk", mode_ipjunk },
	{ "mcport", mode_mcport },
};

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int m[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != ETH_ALEN)
		return -1;
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = m[i];
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i;
	int opt, c;

	while ((opt = getopt(argc, argv, "i:d:m:k:n:p:w:t:S:f:o:M:g:G:")) != -1) {
		switch (opt) {
		case 'f': file = optarg; break;
		case 'o': txat = optarg; break;
		case 'g': gofile = optarg; break;
		case 'G':
			genoff = strtoul(optarg, NULL, 0);
			have_genoff = 1;
			break;
		case 'M':
			if (parse_mac(optarg, srcmac))
				usage();
			have_srcmac = 1;
			break;
		case 'i': ifname = optarg; break;
		case 'd':
			if (parse_mac(optarg, dmac))
				usage();
			break;
		case 'm': mode = optarg; break;
		case 'k': count = atoi(optarg); break;
		case 'n': nsniff = atoi(optarg); break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'w': wait_ms = atoi(optarg); break;
		case 't': timeout_s = atoi(optarg); break;
		case 'S': rng = strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ull | 1; break;
		default: usage();
		}
	}
	if (!ifname || !mode || count < 1 || nsniff < 1)
		usage();
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		die(ifname);
	crc_init();
	open_tx();
	/* Without a sniffed template: cluster 0, unknown nodes and sessions. */
	tmpl.magic = htons(GRIM_ID);
	tmpl.version = GRIM_WIRE_VERSION;
	tmpl.src_node = htonl(0x00ab0001);
	tmpl.dst_node = htonl(0x00ab0002);

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name))
			break;
	if (i == sizeof(modes) / sizeof(modes[0]))
		usage();
	modes[i].fn();

	printf("%s: sent %lu frames on %s to %02x:%02x:%02x:%02x:%02x:%02x, %lu errors\n",
	       mode, sent, ifname, dmac[0], dmac[1], dmac[2], dmac[3], dmac[4],
	       dmac[5], send_errors);
	for (c = 0; c < C_MAX; c++)
		if (expect[c])
			printf("%s %s %lu\n", ctr_info[c].min_only ? "expect-min" : "expect",
			       ctr_info[c].name, expect[c]);
	return send_errors ? 1 : 0;
}
