/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * GRIM: General-purpose Reliable In-order Message layer.
 *
 * User-space ABI: the AF_GRIM socket family, its socket address, socket
 * options and control messages, the rtnetlink attributes of the "grim"
 * link kind, and the on-wire frame format (for tools that build or
 * decode frames, such as the selftests' fault injector).
 */
#ifndef _UAPI_LINUX_GRIM_H
#define _UAPI_LINUX_GRIM_H

#include <linux/types.h>
#include <linux/socket.h>

/*
 * Address family number.  Linux 6.1 only lets a module register families
 * below AF_MAX (46), and every number there is spoken for.  19 was
 * AF_ECONET, whose implementation left the kernel in 3.5; no kernel a
 * distribution ships today can load anything under it, so GRIM takes it
 * over.  An upstream merge would allocate a fresh number instead.
 */
#define AF_GRIM		19
#define PF_GRIM		AF_GRIM

/* Socket option level (getsockopt/setsockopt and control messages). */
#define SOL_GRIM	299

/* Ethernet type of GRIM frames: IEEE 802 local experimental 1. */
#define GRIM_ETH_P	0x88B5

/* The GRIM identifier that starts every frame and message header. */
#define GRIM_ID		0x0636

/* Largest message payload, in bytes (the GRIM MTU). */
#define GRIM_MAX_PAYLOAD	64572

/* Node id meaning "any node" (hello broadcast); never a real node. */
#define GRIM_NODE_ANY	0xffffffffU

/*
 * Ports: 0 asks for autobind; below 1024 needs CAP_NET_BIND_SERVICE.
 * Autobind picks from GRIM_PORT_EPHEMERAL to GRIM_PORT_DEV - 1.  Ports
 * from GRIM_PORT_DEV on belong to the endpoints of one link (IP over
 * GRIM has GRIM_PORT_IP and the channels after it, groups GRIM_PORT_MC
 * and GRIM_PORT_MC_ROOT); no socket binds them or sends to them.
 */
#define GRIM_PORT_ANY		0
#define GRIM_PORT_PRIVILEGED	1024
#define GRIM_PORT_EPHEMERAL	32768
#define GRIM_PORT_DEV		0xff00
#define GRIM_PORT_IP		0xff00	/* channel N is GRIM_PORT_IP + N */

/* Ports of every link's multicast engine (see grim.rst, "Groups"): the
 * sockets' groups, and the link's own group (GRIM_GROUP_LINK) on ports
 * of its own, so that its messages take streams of their own.
 */
#define GRIM_PORT_LMC_ROOT	0xfffb	/* the link's group: at the root */
#define GRIM_PORT_LMC		0xfffc	/* the link's group: a tree's hops */
#define GRIM_PORT_MC_ROOT	0xfffd	/* at the root: injections, joins */
#define GRIM_PORT_MC		0xfffe	/* a tree's hops, parent to child */

/*
 * An endpoint (node, port), or, with @sgrim_group set, a group: then
 * @sgrim_node and @sgrim_port are 0 when sending, and a message received
 * through a group has its sender in @sgrim_node and @sgrim_port and the
 * group in @sgrim_group (0 for a message sent to the socket itself).
 */
struct sockaddr_grim {
	__kernel_sa_family_t	sgrim_family;	/* AF_GRIM */
	__u16			sgrim_port;	/* endpoint (host byte order) */
	__u32			sgrim_node;	/* node id (host byte order) */
	__u32			sgrim_group;	/* group id, 0 for none */
	__u32			sgrim_reserved;	/* must be zero */
};

/*
 * Groups: ids from 1 to GRIM_GROUP_MAX name groups that sockets join
 * (setsockopt GRIM_JOIN) and anyone sends to.  GRIM_GROUP_ALL is the
 * sockets' broadcast group: a message sent to it reaches every socket,
 * on every node of the link, that joined it.  GRIM_GROUP_LINK is the
 * link's own, which every NI of the link is in: IP's broadcasts and
 * multicast go through it; no socket joins it or sends to it.  The ids
 * between are reserved.  A socket joins at most
 * GRIM_GROUPS_PER_SOCKET groups (ENOBUFS past that, and when an NI of
 * the namespace knows as many groups as it may).  A group message
 * carries at most GRIM_GROUP_MAX_PAYLOAD bytes.
 */
#define GRIM_GROUP_MAX		0xfeffffffU
#define GRIM_GROUP_ALL		0xffffffffU
#define GRIM_GROUP_LINK		0xfffffffeU
#define GRIM_GROUPS_PER_SOCKET	64
#define GRIM_GROUP_HLEN		24
#define GRIM_GROUP_MAX_PAYLOAD	(GRIM_MAX_PAYLOAD - GRIM_GROUP_HLEN)

/* Control message types at level SOL_GRIM. */
enum {
	GRIM_AM = 1,	/* struct grim_am: active-message header fields */
	GRIM_RECVERR = 2, /* struct sock_extended_err, on the error queue */
	GRIM_GROUP = 3,	/* struct grim_group_info: a group message */
};

/*
 * A message received through a group: the group and the message's
 * ticket, its place in the group's one order (every member sees the
 * group's messages in increasing ticket order, modulo 2^32).  Returned
 * when the caller passes a control buffer.
 */
struct grim_group_info {
	__u32	group;
	__u32	ticket;
};

/*
 * Active-message fields of a message: the handler id and the four 32-bit
 * user arguments of the GRIM header.  On send, a GRIM_AM control message
 * sets them (zero otherwise); on receive, they are returned in a GRIM_AM
 * control message when the caller passes a control buffer.
 */
struct grim_am {
	__u16	handler;
	__u16	reserved;	/* must be zero */
	__u32	arg[4];
};

/*
 * A message that was accepted by sendmsg() but could not be delivered is
 * reported on the sending socket's error queue (recvmsg(MSG_ERRQUEUE)),
 * once, with: its destination in msg_name; its active-message fields in
 * a GRIM_AM control message; and a GRIM_RECVERR control message, a
 * struct sock_extended_err with ee_origin SO_EE_ORIGIN_LOCAL, ee_errno
 * the reason (ECONNREFUSED: no socket bound to the port; ETIMEDOUT: the
 * receiver gave up its reassembly; EHOSTUNREACH: the peer went down;
 * ECONNRESET: the peer restarted its session; ENETDOWN: the local link
 * went down or away; ENOSR: the receiving NI had no room for another
 * stream) and ee_info the message's length.  No payload is
 * returned.  Reports that do not fit in the socket's receive buffer are
 * lost: the socket then has sk_err set to ENOBUFS, and SO_ERROR says so.
 */

/* Socket options at level SOL_GRIM. */
enum {
	GRIM_LOCAL_NODE = 1,	/* get: __u32 node id of the local NI */
	GRIM_JOIN = 2,		/* set: __u32 group id to join */
	GRIM_LEAVE = 3,		/* set: __u32 group id to leave */
};

/* rtnetlink attributes of the "grim" link kind (IFLA_INFO_DATA). */
enum {
	IFLA_GRIM_UNSPEC,
	IFLA_GRIM_NODE,		/* u32: node id (also the link address) */
	IFLA_GRIM_CLUSTER,	/* u32: cluster id, keeps clusters apart */
	IFLA_GRIM_HELLO_MS,	/* u32: hello interval, ms */
	IFLA_GRIM_DEAD_MS,	/* u32: peer declared down after this, ms */
	IFLA_GRIM_RTO_MS,	/* u32: initial retransmission timeout, ms */
	IFLA_GRIM_WINDOW,	/* u32: frames in flight per stream */
	IFLA_GRIM_DATA_CRC,	/* u8: enum grim_data_crc */
	IFLA_GRIM_STREAM_IDLE_MS, /* u32: a send stream idle this long closes */
	IFLA_GRIM_PEER_RATE,	/* u32: new peers hellos may make a second */
	__IFLA_GRIM_MAX,
};

/* How the DATA frames an NI sends cover their payload (IFLA_GRIM_DATA_CRC,
 * GRIM_A_DATA_CRC).  The headers are always under the frame's CRC32C.
 */
enum grim_data_crc {
	GRIM_DATA_CRC_OFF,	/* not at all: left to the lower link */
	GRIM_DATA_CRC_ON,	/* CRC32C, computed by the NI */
	GRIM_DATA_CRC_OFFLOAD,	/* the Internet checksum, left to a lower
				 * device with NETIF_F_HW_CSUM; CRC32C on
				 * any other
				 */
};

#define IFLA_GRIM_MAX	(__IFLA_GRIM_MAX - 1)

/*
 * Wire format.  Every frame on the lower Ethernet device, after the
 * Ethernet header with type GRIM_ETH_P, starts with a link header.
 * All fields are big-endian.  See Documentation/networking/grim.rst.
 */
enum grim_frame_type {
	GRIM_FT_DATA	= 1,	/* a fragment of a message */
	GRIM_FT_ACK	= 2,	/* cumulative acknowledgment of a stream */
	GRIM_FT_NACK	= 3,	/* refusal: endpoint full, roll back */
	GRIM_FT_HELLO	= 4,	/* discovery (broadcast) and keep-alive */
	GRIM_FT_REJECT	= 5,	/* a message will never be delivered */
	GRIM_FT_ABORT	= 6,	/* the sender cuts its frames again */
	GRIM_FT_CLOSE	= 7,	/* the sender is done with a stream */
	GRIM_FT_CLOSED	= 8,	/* the receiver forgot it */
};

#define GRIM_WIRE_VERSION	8

/* The frame check (link header csum) is CRC32C over the frame's bytes from
 * offset GRIM_CRC_SPLIT to its end, then over bytes 0 .. GRIM_CRC_SPLIT - 1
 * (or the whole frame, if shorter) with the csum field, and in a DATA
 * frame flagged GRIM_FF_ICSUM the fragment header's check field, as zero.
 */
#define GRIM_CRC_SPLIT		64
/* A DATA frame without GRIM_FF_DCRC has only its first GRIM_CRC_HDR_LEN
 * bytes (the frame and message headers) covered by the CRC.  With
 * GRIM_FF_ICSUM its payload is covered instead by the Internet checksum
 * in grim_frag_hdr.check, over the whole frame from the link header on
 * (RFC 1071: the 16-bit ones' complement sum of the frame is 0xffff).
 */
#define GRIM_CRC_HDR_LEN	96

/* Link header flags. */
#define GRIM_FF_FIRST	0x01	/* first fragment of a message */
#define GRIM_FF_LAST	0x02	/* last fragment of a message */
#define GRIM_FF_ACK	0x04	/* data: frag_hdr.ack acknowledges the
				 * reverse stream
				 */
#define GRIM_FF_DCRC	0x08	/* data: the CRC covers the whole frame */
#define GRIM_FF_PROBE	0x10	/* hello: unicast keep-alive probe */
#define GRIM_FF_ACKREQ	0x20	/* data: the sender's window is full, ACK now */
#define GRIM_FF_SACK	0x40	/* ACK: a struct grim_sack follows */
#define GRIM_FF_ICSUM	0x80	/* data: grim_frag_hdr.check covers the
				 * frame (never with GRIM_FF_DCRC)
				 */

/* More link header flags (xflags). */
#define GRIM_XF_SKIP	0x01	/* data, the first frame of a message: the
				 * sender gave up the frames from
				 * grim_frag_hdr.ack (no GRIM_FF_ACK then) up
				 * to this one; a receiver that took every
				 * frame before those goes on from here
				 */
#define GRIM_XF_AUTH	0x02	/* the frame ends in a struct grim_auth and
				 * a GRIM_AUTH_TAG_LEN-byte tag; the csum
				 * field is zero
				 */
#define GRIM_XF_QUERY	0x04	/* ACK: the receiver holds part of a
				 * message and has heard nothing of the
				 * stream for dead_ms: is it still coming?
				 * ABORT: the answer of a sender that has no
				 * such stream (channels and incarnation),
				 * or never sent that frame: the receiver
				 * drops what it holds of it
				 */

struct grim_link_hdr {
	__be16	magic;		/* GRIM_ID */
	__u8	version;	/* GRIM_WIRE_VERSION */
	__u8	type;		/* enum grim_frame_type */
	__u8	flags;		/* GRIM_FF_* */
	__u8	xflags;		/* GRIM_XF_* */
	__be16	len;		/* bytes from this header to the frame's end */
	__be32	cluster;	/* cluster id */
	__be32	src_node;
	__be32	dst_node;	/* GRIM_NODE_ANY for broadcast hello */
	__be32	src_gen;	/* sender's session generation for this pair */
	__be32	dst_gen;	/* receiver's generation as the sender knows it */
	__be32	csum;		/* CRC32C of len bytes, this field as zero */
};

/*
 * The seed's 8-byte control message, and the incarnation of the stream it
 * is about.  ACK and NACK frames carry exactly this after the link
 * header; data frames carry it too, naming their stream and the frame's
 * sequence number.
 *
 * A stream is (src_chan, peer, dst_chan) in one direction.  Its state is
 * made when its first frame arrives and forgotten when it has been idle
 * for a while (CLOSE, CLOSED below), so the same channels are used again
 * by a new incarnation: @inc, drawn by the sender from a per-peer
 * counter, never 0.  Every frame about a stream (data, and each control
 * frame, whichever way it goes) names the incarnation of the stream's
 * data direction; a frame of another incarnation than the one a side
 * holds is never taken for it.  A receiver takes each incarnation at most
 * once (see Documentation/networking/grim.rst, "Streams").
 *
 * @tsval is the sender's clock (microseconds, 1024 ns each, modulo 2^32)
 * at this transmission.  @tsecr, in an ACK or NACK and in a data frame
 * that carries an ACK for the reverse stream, echoes the @tsval of the
 * last data frame of that stream that arrived in sequence (a frame that
 * filled a hole included), or is 0.  The data's sender times its round
 * trip from it, whether or not the frame was resent (TCP's timestamp
 * option, RFC 7323, without its PAWS check: the incarnation does that).
 */
struct grim_ctl_msg {
	__be16	src_chan;	/* logical channel of the sending endpoint */
	__be16	dst_chan;	/* logical channel of the receiving endpoint */
	__be32	seq;		/* data: frame sequence; ACK: next expected;
				 * NACK: the refused frame; CLOSE, CLOSED:
				 * the sender's next frame
				 */
	__be32	inc;		/* the stream's incarnation */
	__be32	tsval;		/* the sender's clock when it sent this */
	__be32	tsecr;		/* a @tsval of the stream's data, echoed */
};

/*
 * An ACK flagged GRIM_FF_SACK goes on with the frames its receiver holds
 * past the gap at seq, so that the sender resends only the missing ones:
 * 1 to GRIM_SACK_WORDS words, as many as the frame's length leaves (the
 * receiver sends no word past the last frame it holds).  A receiver
 * holds no frame further than 64 * GRIM_SACK_WORDS past its gap.
 */
#define GRIM_SACK_WORDS	16

struct grim_sack {
	__be64	held;		/* bit i of word j set: frame
				 * seq + 1 + 64 * j + i is held
				 */
};

/*
 * A REJECT frame: the message whose last frame is ctl_msg.seq was not,
 * and will not be, delivered.  The receiver took the frames before it,
 * not that one; it waits for the sender's next frame, flagged
 * GRIM_XF_SKIP from ctl_msg.seq.
 *
 * An ABORT frame (sender to receiver, channels as in DATA frames) asks
 * the receiver to give up every frame up to ctl_msg.seq that it has not
 * taken: the sender cuts them again (the lower MTU went down).  The
 * receiver drops what it holds of an incomplete message, goes on at
 * ctl_msg.seq + 1, and answers with a REJECT for ctl_msg.seq, reason
 * GRIM_REJ_ABORTED, whose @from is where it stood: the messages that end
 * before @from were delivered, the others were not.  It answers a
 * repeated ABORT the same way.
 *
 * A REJECT with one of the stream reasons (GRIM_REJ_NO_STREAM,
 * GRIM_REJ_UNBOUND, GRIM_REJ_STALE) is about the whole incarnation
 * ctl_msg.inc, not one message: the receiver holds no state for it and
 * never will.  NO_STREAM and UNBOUND mean that it took none of its
 * frames: every message queued on it fails (ENOSR, ECONNREFUSED).
 * STALE means that it took exactly the frames the sender saw
 * acknowledged and takes no more: the sender sends the others again
 * under a new incarnation, from sequence 0.
 *
 * A CLOSE frame (sender to receiver) says that everything before
 * ctl_msg.seq was acknowledged and nothing more will be sent under
 * ctl_msg.inc.  A receiver that took exactly that forgets the stream
 * and answers CLOSED with the same fields; so does one that no longer
 * knows the incarnation.
 */
enum grim_reject_reason {
	GRIM_REJ_NO_PORT	= 1,	/* no endpoint is bound to dst_chan */
	GRIM_REJ_TIMEOUT	= 2,	/* its reassembly stalled, its
					 * sender never answering the
					 * receiver's GRIM_XF_QUERY, and was
					 * given up
					 */
	GRIM_REJ_ABORTED	= 3,	/* the answer to an ABORT */
	GRIM_REJ_NO_STREAM	= 4,	/* no room for another stream */
	GRIM_REJ_UNBOUND	= 5,	/* no endpoint bound to dst_chan, and
					 * no stream state made for it
					 */
	GRIM_REJ_STALE		= 6,	/* the incarnation is gone */
};

struct grim_reject {
	__be16	reason;		/* enum grim_reject_reason */
	__be16	reserved;	/* zero */
	__be32	from;		/* ABORTED: the receiver's next expected
				 * frame before it gave up; else ctl_msg.seq
				 */
};

/*
 * Data frames: fragment position, a piggybacked acknowledgment of the
 * reverse stream (valid with GRIM_FF_ACK), then the fragment bytes.
 */
struct grim_frag_hdr {
	__be16	offset;		/* byte offset of this fragment in the message */
	__sum16	check;		/* Internet checksum with GRIM_FF_ICSUM, else 0 */
	__be32	ack;		/* next frame expected on the reverse stream */
	__be32	ack_inc;	/* the incarnation @ack is about */
};

/*
 * The message header: the seed's eight 32-bit words, carried at the start
 * of a message's first fragment.
 *
 *  w0  GRIM ID (16) | NI token (8) | NI sequence (8)
 *  w1  type (6) | payload correction (2) | multicast tree (8) | src endpoint (16)
 *  w2  payload word length (16) | dst endpoint (16)
 *  w3  logical channel (16) | active-message handler (16)
 *  w4..w7  user arguments
 */
struct grim_msg_hdr {
	__be32	w0;
	__be32	w1;
	__be32	w2;
	__be32	w3;
	__be32	arg[4];
};

/* Message types (w1 bits 31..26). */
enum grim_msg_type {
	GRIM_MT_AM	= 1,	/* active message / datagram */
};

/*
 * Authenticated frames (an NI with a cluster key sends nothing else, and
 * takes nothing else).  The frame's last bytes are this trailer, then the
 * tag: ChaCha20-Poly1305 (RFC 8439) under the key @key_id, with no
 * ciphertext and the whole frame up to the tag, the trailer included, as
 * associated data.  The nonce is the twelve bytes at offset 8: @boot,
 * drawn at random when the NI starts, then the 64-bit frame number
 * (@pn_hi, @pn_lo), which counts up from a random start; no two frames
 * under one key share a nonce.  A receiver keeps, per peer, the @boot it
 * accepted and a window of the numbers it saw.  A frame of another @boot
 * is taken only when it echoes the receiver's current challenge to that
 * peer (@echo): proof that it was made after the receiver last heard of
 * a new run, not replayed from an old one.
 */
#define GRIM_AUTH_TAG_LEN	16
#define GRIM_AUTH_KEY_LEN	32

struct grim_auth {
	__u8	key_id;		/* 1..255 */
	__u8	reserved;	/* zero */
	__u8	src_mac[6];	/* the sender's MAC: must be the frame's */
	__be32	boot;		/* the sender NI's run: nonce, first word */
	__be32	pn_hi;		/* the frame's number: nonce, the rest */
	__be32	pn_lo;
	__be32	echo;		/* the receiver's challenge, as last heard */
	__be32	chal;		/* the sender's challenge to the receiver;
				 * zero in broadcast frames
				 */
};

#define GRIM_AUTH_LEN	(sizeof(struct grim_auth) + GRIM_AUTH_TAG_LEN)

/* Hello flags. */
#define GRIM_HF_ANSWER		0x01	/* probe: answer me */
#define GRIM_HF_TENTATIVE	0x02	/* the sender checks that no other NI
					 * has its node id; learn nothing from
					 * it, but an NI that has the node id
					 * answers with a broadcast hello
					 */

struct grim_hello {
	__be32	flags;		/* GRIM_HF_* */
	__be32	hello_ms;	/* the sender's hello interval */
	__be32	age_ms;		/* how long the sender's NI has run */
};

/* Generic netlink family "grim": configuration and statistics of the NIs,
 * their peers and the bound sockets of a network namespace.  Specified in
 * Documentation/netlink/specs/grim.yaml.  Changes need CAP_NET_ADMIN in
 * the namespace's user namespace; reads do not.
 */
#define GRIM_GENL_NAME		"grim"
#define GRIM_GENL_VERSION	1
#define GRIM_GENL_MCGRP_EVENTS	"events"

/* Peer states as reported in GRIM_A_PEER_STATE. */
enum grim_nl_peer_state {
	GRIM_NL_PEER_NEW,	/* heard of, session not yet confirmed */
	GRIM_NL_PEER_UP,	/* session confirmed both ways */
	GRIM_NL_PEER_DOWN,	/* silent for dead_ms */
};

enum {
	GRIM_CMD_UNSPEC,
	GRIM_CMD_NODE_GET,	/* do, dump: node and cluster id of links */
	GRIM_CMD_NODE_SET,	/* do: node, cluster id (link must be down) */
	GRIM_CMD_PEER_GET,	/* do, dump: peers and their counters */
	GRIM_CMD_PEER_ADD,	/* do: static peer (node, MAC) */
	GRIM_CMD_PEER_DEL,	/* do: forget a peer */
	GRIM_CMD_LINK_GET,	/* do, dump: NI state, tunables, counters */
	GRIM_CMD_SOCKET_GET,	/* dump: bound AF_GRIM sockets */
	GRIM_CMD_PEER_NTF,	/* notification: a peer changed state */
	GRIM_CMD_LINK_NEW_NTF,	/* notification: an NI was added */
	GRIM_CMD_LINK_DEL_NTF,	/* notification: an NI was removed */
	GRIM_CMD_KEY_SET,	/* do: add a cluster key, or pick the one
				 * frames are sent with
				 */
	GRIM_CMD_KEY_DEL,	/* do: remove a cluster key */
	GRIM_CMD_GROUP_GET,	/* dump: the groups each NI knows */
	__GRIM_CMD_MAX,
};

#define GRIM_CMD_MAX	(__GRIM_CMD_MAX - 1)

enum {
	GRIM_A_UNSPEC,
	GRIM_A_PAD,
	GRIM_A_IFINDEX,		/* u32: the grim link */
	GRIM_A_IFNAME,		/* string */
	GRIM_A_LOWER_IFINDEX,	/* u32: the Ethernet device below */
	GRIM_A_NODE,		/* u32: node id (of the link or the peer) */
	GRIM_A_CLUSTER,		/* u32: cluster id */
	GRIM_A_RUNNING,		/* u8: the NI runs (link up) */
	GRIM_A_HELLO_MS,	/* u32 */
	GRIM_A_DEAD_MS,		/* u32 */
	GRIM_A_RTO_MS,		/* u32 */
	GRIM_A_WINDOW,		/* u32 */
	GRIM_A_NPEERS,		/* u32: peers known, this NI included */
	GRIM_A_STAT,		/* nest, multi: one counter, GRIM_A_STAT_* */
	GRIM_A_PEER_STATE,	/* u8: enum grim_nl_peer_state */
	GRIM_A_PEER_MAC,	/* binary: 6-byte MAC on the lower device */
	GRIM_A_PEER_LGEN,	/* u32: our session generation */
	GRIM_A_PEER_RGEN,	/* u32: the peer's generation, 0 unknown */
	GRIM_A_PEER_LAST_RX_MS,	/* u32: ms since its last valid frame */
	GRIM_A_PEER_STATIC,	/* flag: configured, not discovered */
	GRIM_A_PEER_TX_STREAMS,	/* u32 */
	GRIM_A_PEER_RX_STREAMS,	/* u32 */
	GRIM_A_SOCK_PORT,	/* u16 */
	GRIM_A_SOCK_TYPE,	/* u16: SOCK_RDM */
	GRIM_A_SOCK_PEER_NODE,	/* u32: connect() destination */
	GRIM_A_SOCK_PEER_PORT,	/* u16 */
	GRIM_A_SOCK_RX_QUEUE,	/* u32: bytes queued to read */
	GRIM_A_SOCK_TX_QUEUE,	/* u32: bytes sent, not yet acknowledged */
	GRIM_A_SOCK_RCVBUF,	/* u32 */
	GRIM_A_SOCK_SNDBUF,	/* u32 */
	GRIM_A_SOCK_DROPS,	/* u32 */
	GRIM_A_SOCK_INODE,	/* u64 */
	GRIM_A_SOCK_UID,	/* u32 */
	GRIM_A_DATA_CRC,	/* u8: enum grim_data_crc */
	GRIM_A_KEY_ID,		/* u8: a cluster key, 1..255 */
	GRIM_A_KEY_SECRET,	/* binary: GRIM_AUTH_KEY_LEN bytes, write
				 * only: never reported
				 */
	GRIM_A_KEY_TX,		/* flag: send with this key from now on */
	GRIM_A_KEY_TX_ID,	/* u8: the key frames are sent with, 0: none */
	GRIM_A_KEY_IDS,		/* binary: the ids of the keys frames are
				 * taken with
				 */
	GRIM_A_TX_STREAMS,	/* u32: live send streams of the NI */
	GRIM_A_RX_STREAMS,	/* u32: live receive streams of the NI */
	GRIM_A_STREAM_IDLE_MS,	/* u32: IFLA_GRIM_STREAM_IDLE_MS */
	GRIM_A_PEER_RATE,	/* u32: IFLA_GRIM_PEER_RATE */
	GRIM_A_PEER_CWND,	/* u32: congestion window, frames */
	GRIM_A_PEER_INFLIGHT,	/* u32: frames in flight to the peer */
	GRIM_A_PEER_SRTT_US,	/* u32: smoothed round trip, 0 unknown */
	GRIM_A_PEER_INFLIGHT_MAX,	/* u32: the most frames in flight to
					 * the peer at once, since it was made
					 */
	GRIM_A_GROUP_ID,	/* u32 */
	GRIM_A_GROUP_ROOT,	/* u32: its root's node id, 0 unknown */
	GRIM_A_GROUP_TICKET,	/* u32: the next ticket the NI takes (the
				 * root: stamps)
				 */
	GRIM_A_GROUP_IN_TREE,	/* u8: the NI delivers the group's messages */
	GRIM_A_GROUP_PARENT,	/* u32: the NI's parent, 0 none */
	GRIM_A_GROUP_CHILDREN,	/* binary: its children, 0 to 2 __u32 */
	GRIM_A_GROUP_MEMBERS,	/* binary: the member NIs, __u32 each,
				 * ascending (at the root only)
				 */
	GRIM_A_GROUP_LOCAL,	/* u32: sockets of the namespace in it */
	GRIM_A_GROUP_QUEUED,	/* u32: messages taken, not yet passed on */
	GRIM_A_GROUP_RX,	/* u64: messages taken from the tree, or
				 * (the root) stamped
				 */
	GRIM_A_GROUP_DELIVERED,	/* u64: copies handed to local sockets */
	__GRIM_A_MAX,
};

#define GRIM_A_MAX	(__GRIM_A_MAX - 1)

/* One counter: the names are those of ethtool -S. */
enum {
	GRIM_A_STAT_UNSPEC,
	GRIM_A_STAT_PAD,
	GRIM_A_STAT_NAME,	/* string */
	GRIM_A_STAT_VALUE,	/* u64 */
	__GRIM_A_STAT_MAX,
};

#define GRIM_A_STAT_MAX	(__GRIM_A_STAT_MAX - 1)

#endif /* _UAPI_LINUX_GRIM_H */
