// SPDX-License-Identifier: GPL-2.0
/*
 * grim-perf: one micro-benchmark for AF_GRIM and the transports it is
 * compared with, so that every family is measured by the same code.
 *
 *   grim-perf server -f FAMILY [-p PORT] [-i IFACE]
 *   grim-perf client -f FAMILY -d DEST [-p PORT] [-i IFACE]
 *                    -T pingpong|stream|rate [-s SIZE] [-n COUNT] [-t SECONDS]
 *                    [-P SENDERS] [-S SOCKETS] [--csv] [--loss PCT] [--rep N]
 *   grim-perf client -f FAM,FAM... -d DEST,DEST...
 *                    -T interleaved|interleaved-stream [-l LPORT] ...
 *   grim-perf hold -d NODE,NODE... -n COUNT,COUNT... [-p PORT] [-t SECONDS]
 *   grim-perf member -f grim|tipc [-p PORT] [-g GROUP]
 *   grim-perf mcast -f grim|tipc -T group|unicast -d NODE,NODE... [-p PORT]
 *                   [-g GROUP] [-s SIZE] [-n ROUNDS] [--csv]
 *
 * Families: grim (AF_GRIM SOCK_RDM, DEST = node id), tipc (AF_TIPC
 * SOCK_RDM to the service {18888, PORT}, DEST ignored), udp and tcp
 * (DEST = IPv4 address), raw (AF_PACKET SOCK_DGRAM on EtherType 0x88B6,
 * DEST = the server's MAC on IFACE: the floor nothing can beat).
 *
 * Every message starts with an 8-byte header (op, senders, run, seq).
 * pingpong: the server echoes each PING; the client reports the one-way
 * latency (half the round trip, as sockperf does): median, p99, mean, min.
 * stream: the client(s) send DATA for -t seconds or -n messages, then FIN;
 * the server answers STAT (messages and bytes it received in this run)
 * once FINs from all -P senders are in.  Bandwidth and message rate are
 * what the *receiver* got, over the time from the first send to the STAT.
 * For udp the difference between sent and received is reported as loss.
 * interleaved: ping-pong with several families (their servers all
 * running) from one process, one round trip of each in turn, the order
 * rotating every round; one result per family.  Whatever the machine
 * does meanwhile (a busy host under an emulated CPU) then falls on all
 * families alike, and their medians compare the protocols.
 * interleaved-stream: the same for streams: a burst of about 1 MiB
 * (DATA, FIN, STAT as above) of each family in turn, for -t seconds;
 * per family, what its receiver got over the sum of its bursts' times.
 * rate: a stream from -S sockets of one process, each sending one
 * message in turn without blocking; a socket that would block waits in
 * poll() while the others go on.  Then a FIN on every socket; the
 * server answers once it has all of them, counted by sender address.
 * hold: AF_GRIM sockets that send one message each (HOLD, which a
 * server ignores) and then stay open, so that their send streams stay
 * live for as long as the link's streamidle allows.
 * member and mcast: one message to N members, each of which answers
 * with a short PONG to the sender (the seed's multicast benchmark).  A
 * member joins the group (grim: GROUP, and binds PORT for unicasts;
 * tipc: the group {18889} as instance PORT).  mcast sends ROUNDS
 * messages, one at a time: grim group, one sendto() to the group; grim
 * unicast, one sendto() to PORT of each NODE; tipc group, one send() to
 * the group (the client joins it as instance 0).  -d names the members
 * (their number, for grim group and tipc).  Two results: test
 * "inject", the sender's time in the send calls of a round, and test
 * "complete", the time until the last member's answer; the senders
 * column holds N.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/tipc.h>
#include <linux/grim.h>

#ifndef AF_TIPC
#define AF_TIPC 30
#endif

#define PERF_TIPC_TYPE	18888
#define PERF_TIPC_GROUP	18889
#define DEF_GROUP	7007
#define MAX_MEMBERS	256
#define PERF_ETH_P	0x88B6		/* IEEE 802 local experimental 2 */
#define DEF_PORT	7007
#define MAX_MSG		65536
#define MAX_FINS	255		/* hdr.senders is 8 bits */
#define MAX_CONNS	256
#define MAX_HOLD_DESTS	8

enum { OP_PING = 1, OP_PONG, OP_DATA, OP_FIN, OP_STAT, OP_HELLO, OP_HOLD };
enum { F_GRIM, F_TIPC, F_UDP, F_TCP, F_RAW };
static const char *const fam_names[] = { "grim", "tipc", "udp", "tcp", "raw" };

struct hdr {
	uint8_t op;
	uint8_t senders;
	uint16_t run;
	uint32_t seq;
};

struct stat_msg {
	struct hdr h;
	uint64_t msgs;
	uint64_t bytes;
};

struct dest {
	struct sockaddr_storage a;
	socklen_t alen;
	int fd;
};

static struct {
	int fam;
	uint16_t port;
	const char *ifname;
	const char *dest;
	const char *test;
	uint32_t size;
	uint32_t count;
	double secs;
	int senders;
	int socks;		/* rate: sockets per sender process */
	uint16_t lport;		/* AF_GRIM clients bind LPORT, LPORT + 1, ... */
	int csv;
	const char *loss;
	int rep;
	int wait_s;
	const char *label;	/* the family's name in reports, if not its own */
	uint32_t group;		/* member, mcast */
} o = {
	.port = DEF_PORT, .ifname = "eth0", .test = "pingpong", .size = 64,
	.count = 1000, .secs = 2, .senders = 1, .socks = 1, .loss = "0",
	.wait_s = 15, .group = DEF_GROUP,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "grim-perf: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int reliable(void)
{
	return o.fam == F_GRIM || o.fam == F_TIPC || o.fam == F_TCP;
}

/* ---- addresses and sockets ------------------------------------------------ */

static int ifindex(int fd)
{
	int i = if_nametoindex(o.ifname);

	(void)fd;
	if (!i)
		die(o.ifname);
	return i;
}

/* The address a server binds (or a client sends to, with @dst). */
static void make_addr(struct dest *d, int fd, int server)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
	switch (o.fam) {
	case F_GRIM: {
		struct sockaddr_grim *g = (void *)&d->a;

		g->sgrim_family = AF_GRIM;
		g->sgrim_port = o.port;
		g->sgrim_node = server ? 0 : strtoul(o.dest, NULL, 0);
		d->alen = sizeof(*g);
		break;
	}
	case F_TIPC: {
		struct sockaddr_tipc *t = (void *)&d->a;

		t->family = AF_TIPC;
		if (server) {
			t->addrtype = TIPC_SERVICE_RANGE;
			t->scope = TIPC_CLUSTER_SCOPE;
			t->addr.nameseq.type = PERF_TIPC_TYPE;
			t->addr.nameseq.lower = o.port;
			t->addr.nameseq.upper = o.port;
		} else {
			t->addrtype = TIPC_SERVICE_ADDR;
			t->addr.name.name.type = PERF_TIPC_TYPE;
			t->addr.name.name.instance = o.port;
			t->addr.name.domain = 0;
		}
		d->alen = sizeof(*t);
		break;
	}
	case F_UDP:
	case F_TCP: {
		struct sockaddr_in *in = (void *)&d->a;

		in->sin_family = AF_INET;
		in->sin_port = htons(o.port);
		if (!server && inet_pton(AF_INET, o.dest, &in->sin_addr) != 1) {
			fprintf(stderr, "grim-perf: bad IPv4 address %s\n", o.dest);
			exit(2);
		}
		d->alen = sizeof(*in);
		break;
	}
	case F_RAW: {
		struct sockaddr_ll *ll = (void *)&d->a;
		unsigned int m[6], i;

		ll->sll_family = AF_PACKET;
		ll->sll_protocol = htons(PERF_ETH_P);
		ll->sll_ifindex = ifindex(fd);
		if (!server) {
			if (sscanf(o.dest, "%x:%x:%x:%x:%x:%x", &m[0], &m[1],
				   &m[2], &m[3], &m[4], &m[5]) != 6) {
				fprintf(stderr, "grim-perf: bad MAC %s\n", o.dest);
				exit(2);
			}
			for (i = 0; i < 6; i++)
				ll->sll_addr[i] = m[i];
			ll->sll_halen = 6;
		}
		d->alen = sizeof(*ll);
		break;
	}
	}
}

static int open_sock(void)
{
	int fd = -1, one = 1;

	switch (o.fam) {
	case F_GRIM: fd = socket(AF_GRIM, SOCK_RDM, 0); break;
	case F_TIPC: fd = socket(AF_TIPC, SOCK_RDM, 0); break;
	case F_UDP: fd = socket(AF_INET, SOCK_DGRAM, 0); break;
	case F_TCP:
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		}
		break;
	case F_RAW: fd = socket(AF_PACKET, SOCK_DGRAM, htons(PERF_ETH_P)); break;
	}
	if (fd < 0)
		die("socket");
	return fd;
}

/* ---- reliable-enough I/O -------------------------------------------------- */

static int readn(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += n;
	}
	return 0;
}

static int writen(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += n;
	}
	return 0;
}

static int xmit(struct dest *d, const void *buf, size_t len)
{
	ssize_t n;

	if (o.fam == F_TCP)
		return writen(d->fd, buf, len);
	do {
		n = sendto(d->fd, buf, len, 0, (struct sockaddr *)&d->a, d->alen);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && o.fam == F_UDP && (errno == ENOBUFS || errno == ECONNREFUSED))
		return 0;	/* a lost datagram, as the wire would lose it */
	return n < 0 ? -1 : 0;
}

/*
 * Wait up to @tmo seconds for a message whose header has @op (and @seq if
 * @seq >= 0); anything else (stale echoes, TIPC rejections) is skipped.
 * Returns the message length, 0 on timeout, -1 on error, -2 when TIPC
 * returned our FIN (it rejects messages to an overloaded socket).
 */
static ssize_t await(int fd, void *buf, size_t size, int op, long long seq,
		     double tmo)
{
	double end = now() + tmo;
	struct hdr *h = buf;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now();
		ssize_t n;

		if (left <= 0)
			return 0;
		if (o.fam == F_TCP) {
			/* A TCP client only ever gets what it asked for. */
			if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
				return 0;
			if (readn(fd, buf, size))
				return -1;
			return size;
		}
		n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n <= 0)
			continue;
		n = recv(fd, buf, MAX_MSG, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			/* ICMP errors (udp), rejected messages coming back (tipc) */
			if (errno == ECONNREFUSED || errno == ECONNRESET ||
			    errno == EHOSTUNREACH || errno == ENOENT)
				continue;
			return -1;
		}
		if ((size_t)n >= sizeof(*h) && o.fam == F_TIPC &&
		    h->op == OP_FIN && op == OP_STAT)
			return -2;	/* our FIN, rejected: server queue full */
		if ((size_t)n < sizeof(*h) || h->op != op ||
		    (seq >= 0 && h->seq != (uint32_t)seq))
			continue;
		return n;
	}
}

/* ---- server --------------------------------------------------------------- */

struct conn {
	int fd;
	uint32_t size;		/* TCP: message size announced by HELLO */
	uint32_t have;
	uint8_t buf[MAX_MSG];
};

static struct {
	uint16_t run;
	uint64_t msgs, bytes;
	int fins, complete;
	struct dest fin[MAX_FINS];
} sv;

static int same_dest(const struct dest *a, const struct dest *b)
{
	if (o.fam == F_TCP)
		return a->fd == b->fd;
	return a->alen == b->alen && !memcmp(&a->a, &b->a, a->alen);
}

static void send_stat(struct dest *d)
{
	struct stat_msg s = {
		.h = { .op = OP_STAT, .run = sv.run },
		.msgs = sv.msgs, .bytes = sv.bytes,
	};

	xmit(d, &s, sizeof(s));
}

static void new_run(uint16_t run)
{
	sv.run = run;
	sv.msgs = sv.bytes = 0;
	sv.fins = sv.complete = 0;
}

static void serve_msg(struct dest *from, uint8_t *buf, size_t n)
{
	struct hdr *h = (struct hdr *)buf;
	int i;

	if (n < sizeof(*h))
		return;
	switch (h->op) {
	case OP_PING:
		h->op = OP_PONG;
		xmit(from, buf, n);
		break;
	case OP_DATA:
		if (h->run != sv.run)
			new_run(h->run);
		sv.msgs++;
		sv.bytes += n;
		break;
	case OP_FIN:
		if (h->run != sv.run)
			new_run(h->run);
		for (i = 0; i < sv.fins; i++)
			if (same_dest(&sv.fin[i], from))
				break;
		if (i == sv.fins && sv.fins < MAX_FINS)
			sv.fin[sv.fins++] = *from;
		if (sv.complete) {
			send_stat(from);	/* a repeated FIN (udp) */
		} else if (sv.fins >= (h->senders ? h->senders : 1)) {
			sv.complete = 1;
			for (i = 0; i < sv.fins; i++)
				send_stat(&sv.fin[i]);
		}
		break;
	}
}

static void __attribute__((noreturn)) serve_dgram(void)
{
	static uint8_t buf[MAX_MSG];
	struct dest me;
	int fd = open_sock();

	make_addr(&me, fd, 1);
	if (bind(fd, (struct sockaddr *)&me.a, me.alen))
		die("bind");
	printf("grim-perf: %s server on port %u\n", fam_names[o.fam], o.port);
	fflush(stdout);
	for (;;) {
		struct dest from = { .fd = fd, .alen = sizeof(from.a) };
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from.a, &from.alen);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)
				continue;
			die("recvfrom");
		}
		if (o.fam == F_RAW) {
			/* Reply to the sender's MAC on our interface. */
			struct sockaddr_ll *ll = (void *)&from.a;

			ll->sll_protocol = htons(PERF_ETH_P);
			ll->sll_pkttype = 0;
		}
		serve_msg(&from, buf, n);
	}
}

/* TCP: a poll loop over the listener and its connections. */
static void __attribute__((noreturn)) serve_tcp(void)
{
	static struct conn *c[MAX_CONNS];
	struct pollfd p[MAX_CONNS + 1];
	struct dest me;
	int lfd = open_sock(), nc = 0, i;

	make_addr(&me, lfd, 1);
	if (bind(lfd, (struct sockaddr *)&me.a, me.alen) ||
	    listen(lfd, MAX_CONNS))
		die("bind/listen");
	printf("grim-perf: tcp server on port %u\n", o.port);
	fflush(stdout);
	for (;;) {
		p[0].fd = lfd;
		p[0].events = POLLIN;
		for (i = 0; i < nc; i++) {
			p[i + 1].fd = c[i]->fd;
			p[i + 1].events = POLLIN;
		}
		if (poll(p, nc + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL), one = 1;

			if (fd >= 0 && nc < MAX_CONNS) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				c[nc] = calloc(1, sizeof(struct conn));
				c[nc]->fd = fd;
				nc++;
			} else if (fd >= 0) {
				close(fd);
			}
		}
		for (i = nc - 1; i >= 0; i--) {
			struct conn *k = c[i];
			struct hdr *h = (struct hdr *)k->buf;
			uint32_t want;
			ssize_t n;

			if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			want = sizeof(*h);
			if (k->have >= sizeof(*h) &&
			    (h->op == OP_PING || h->op == OP_DATA))
				want = k->size;
			n = read(k->fd, k->buf + k->have, want - k->have);
			if (n <= 0) {
				close(k->fd);
				for (int j = 0; j < sv.fins; j++)
					if (sv.fin[j].fd == k->fd)
						sv.fin[j].fd = -1;
				free(k);
				c[i] = c[--nc];
				continue;
			}
			k->have += n;
			if (k->have == sizeof(*h) &&
			    (h->op == OP_PING || h->op == OP_DATA) &&
			    k->size > sizeof(*h))
				continue;	/* now read the body */
			if (k->have < want)
				continue;
			if (h->op == OP_HELLO) {
				k->size = h->seq < sizeof(*h) ? sizeof(*h) :
					  h->seq > MAX_MSG ? MAX_MSG : h->seq;
			} else {
				struct dest d = { .fd = k->fd };

				serve_msg(&d, k->buf, k->have);
			}
			k->have = 0;
		}
	}
}

/* ---- client --------------------------------------------------------------- */

static int connect_client(struct dest *d)
{
	static uint16_t lport_used;
	int fd = open_sock();
	double end = now() + o.wait_s;

	make_addr(d, fd, 0);
	if (o.lport && o.fam == F_GRIM) {
		/* The same port, and so the same stream, from run to run. */
		struct sockaddr_grim me = {
			.sgrim_family = AF_GRIM,
			.sgrim_port = o.lport + lport_used++,
		};

		if (bind(fd, (struct sockaddr *)&me, sizeof(me)))
			die("bind to the local port");
	}
	if (o.fam == F_RAW) {
		struct dest me;

		make_addr(&me, fd, 1);
		if (bind(fd, (struct sockaddr *)&me.a, me.alen))
			die("bind");
	}
	if (o.fam == F_TCP) {
		struct hdr h = { .op = OP_HELLO, .seq = o.size };

		while (connect(fd, (struct sockaddr *)&d->a, d->alen)) {
			if (now() > end)
				die("connect");
			close(fd);
			usleep(100000);
			fd = open_sock();
			d->fd = fd;
		}
		if (writen(fd, &h, sizeof(h)))
			die("hello");
	}
	return fd;
}

/*
 * Make sure the server answers before measuring: the peer may not be
 * discovered yet (GRIM: EHOSTUNREACH until hellos were seen; TIPC: the
 * service is not yet in the name table).
 */
static int handshake(struct dest *d, uint8_t *buf)
{
	double end = now() + o.wait_s;
	struct hdr *h = (struct hdr *)buf;
	uint32_t seq = 0x80000000u;

	if (o.fam == F_TCP)
		return 0;
	while (now() < end) {
		memset(h, 0, sizeof(*h));
		h->op = OP_PING;
		h->seq = ++seq;
		if (xmit(d, buf, sizeof(*h)) && errno != EHOSTUNREACH &&
		    errno != ENOENT && errno != ECONNREFUSED &&
		    errno != ENETUNREACH && errno != EAGAIN) {
			perror("grim-perf: handshake send");
			return -1;
		}
		if (await(d->fd, buf, sizeof(*h), OP_PONG, seq, 0.3) > 0)
			return 0;
	}
	fprintf(stderr, "grim-perf: no answer from the server in %d s\n", o.wait_s);
	return -1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *status, uint32_t n, double med, double p99,
		   double mean, double min, double mbps, double rate,
		   uint64_t sent, uint64_t rcvd, double elapsed)
{
	const char *name = o.label ? o.label : fam_names[o.fam];
	int senders = o.senders * o.socks;
	double lossp = sent ? 100.0 * (double)(sent - (rcvd < sent ? rcvd : sent)) / sent : 0;

	if (o.csv) {
		printf("%s,%s,%u,%d,%s,%d,%s,%u,%.2f,%.2f,%.2f,%.2f,%.3f,%.0f,%llu,%llu,%.3f,%.3f\n",
		       name, o.test, o.size, senders, o.loss,
		       o.rep, status, n, med, p99, mean, min, mbps, rate,
		       (unsigned long long)sent, (unsigned long long)rcvd,
		       lossp, elapsed);
	} else if (!strstr(o.test, "stream") && strcmp(o.test, "rate")) {
		printf("%s %s size %u: %s, %u samples, latency (RTT/2) median %.2f us, p99 %.2f us, mean %.2f us, min %.2f us; %llu of %llu answered\n",
		       name, o.test, o.size, status, n, med, p99,
		       mean, min, (unsigned long long)rcvd, (unsigned long long)sent);
	} else {
		printf("%s %s size %u x%d: %s, sent %llu, received %llu (loss %.2f%%) in %.3f s: %.3f MB/s, %.0f msg/s\n",
		       name, o.test, o.size, senders, status,
		       (unsigned long long)sent, (unsigned long long)rcvd,
		       lossp, elapsed, mbps, rate);
	}
	fflush(stdout);
}

/* One round trip of @len bytes, numbered @seq, on @d (family o.fam):
 * its duration in seconds, 0 if the echo did not come in @tmo, < 0 on
 * an error.
 */
static double round_trip(struct dest *d, uint8_t *buf, uint8_t *rbuf,
			 size_t len, uint32_t seq, double tmo)
{
	struct hdr *h = (struct hdr *)buf;
	double t0;
	ssize_t r;

	h->op = OP_PING;
	h->senders = 0;
	h->run = 0;
	h->seq = seq;
	t0 = now();
	if (xmit(d, buf, len)) {
		perror("grim-perf: send");
		return -1;
	}
	r = await(d->fd, rbuf, len, OP_PONG, seq, tmo);
	if (r < 0) {
		perror("grim-perf: recv");
		return -1;
	}
	return r ? now() - t0 : 0;
}

static int pingpong(void)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	uint32_t warm = 10, i, n = 0, sent = 0, answered = 0;
	double *lat = calloc(o.count, sizeof(double)), sum = 0, t_end;
	/* UDP and raw lose messages: give up on one after 50 ms. */
	double tmo = reliable() ? 30 : 0.05;
	struct dest d;

	connect_client(&d);
	if (handshake(&d, rbuf)) {
		report("noconn", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
		return 1;
	}
	memset(buf, 0xa5, o.size);
	t_end = now() + o.secs;
	for (i = 0; n < o.count && now() < t_end; i++) {
		double rtt = round_trip(&d, buf, rbuf, o.size, i, tmo);

		if (rtt < 0)
			break;
		if (i >= warm)
			sent++;
		if (rtt == 0) {
			if (reliable()) {
				fprintf(stderr, "grim-perf: no echo in %.0f s\n", tmo);
				break;
			}
			continue;
		}
		if (i < warm)
			continue;
		answered++;
		lat[n++] = rtt * 1e6 / 2;
		sum += rtt * 1e6 / 2;
	}
	if (!n) {
		report("fail", 0, 0, 0, 0, 0, 0, 0, sent, answered, 0);
		return 1;
	}
	qsort(lat, n, sizeof(double), cmp_dbl);
	report("ok", n, lat[n / 2], lat[(size_t)((n - 1) * 0.99)], sum / n,
	       lat[0], 0, 0, sent, answered, 0);
	return 0;
}

static void usage(void) __attribute__((noreturn));

/* ---- groups: one message, N members answering ------------------------------ */

/* Join the benchmark's group: grim (bound to o.port as well, for the
 * unicast case), or tipc as instance @instance.
 */
static int group_sock(uint32_t instance)
{
	int fd = open_sock();

	if (o.fam == F_GRIM) {
		struct dest d;

		make_addr(&d, fd, 1);
		if (instance && bind(fd, (struct sockaddr *)&d.a, d.alen))
			die("bind");
		if (setsockopt(fd, SOL_GRIM, GRIM_JOIN, &o.group, sizeof(o.group)))
			die("GRIM_JOIN");
	} else {
		struct tipc_group_req req = {
			.type = PERF_TIPC_GROUP,
			.instance = instance,
			.scope = TIPC_CLUSTER_SCOPE,
		};

		if (setsockopt(fd, SOL_TIPC, TIPC_GROUP_JOIN, &req, sizeof(req)))
			die("TIPC_GROUP_JOIN");
	}
	return fd;
}

static void __attribute__((noreturn)) member(void)
{
	static uint8_t buf[MAX_MSG];
	int fd = group_sock(o.port);

	printf("member: joined\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_storage from;
		socklen_t alen = sizeof(from);
		struct hdr *h = (struct hdr *)buf;
		ssize_t n;

		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &alen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv");
		if (n < (ssize_t)sizeof(*h) || h->op != OP_PING)
			continue;
		h->op = OP_PONG;
		if (o.fam == F_GRIM)	/* to the sender itself */
			((struct sockaddr_grim *)&from)->sgrim_group = 0;
		while (sendto(fd, buf, sizeof(*h), 0, (struct sockaddr *)&from,
			      alen) < 0 && errno == EINTR)
			;
	}
}

/* The answers to round @seq from @n members: 0 once all came, 1 if they
 * did not within @tmo seconds.
 */
static int answers(int fd, uint8_t *rbuf, uint32_t seq, int n, double tmo)
{
	double end = now() + tmo;
	int got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((end - now()) * 1000);
		const struct hdr *h = (const struct hdr *)rbuf;
		ssize_t r;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return 1;
		r = recv(fd, rbuf, MAX_MSG, MSG_DONTWAIT);
		if (r >= (ssize_t)sizeof(*h) && h->op == OP_PONG && h->seq == seq)
			got++;
	}
	return 0;
}

/* One round's message: to the tipc group, or to @n grim addresses. */
static int mc_send(int fd, const uint8_t *buf, const struct sockaddr_grim *to,
		   int n)
{
	int k;

	if (o.fam == F_TIPC)
		return send(fd, buf, o.size, 0) < 0 ? -1 : 0;
	for (k = 0; k < n; k++)
		if (sendto(fd, buf, o.size, 0, (const struct sockaddr *)&to[k],
			   sizeof(to[k])) < 0)
			return -1;
	return 0;
}

static int mcast(void)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	uint32_t nodes[MAX_MEMBERS], warm = 10, i, k, n = 0;
	struct sockaddr_grim to[MAX_MEMBERS];
	double *inj, *done, t0, t1, isum = 0, dsum = 0;
	int unicast = !strcmp(o.test, "unicast"), fd, nm = 0;
	struct hdr *h = (struct hdr *)buf;
	char *list = strdup(o.dest), *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok && nm < MAX_MEMBERS;
	     tok = strtok_r(NULL, ",", &save))
		nodes[nm++] = strtoul(tok, NULL, 0);
	free(list);
	if (!nm || (unicast && o.fam != F_GRIM) ||
	    (!unicast && strcmp(o.test, "group")))
		usage();
	fd = o.fam == F_TIPC ? group_sock(0) : open_sock();
	memset(to, 0, sizeof(to));
	for (k = 0; k < (uint32_t)nm; k++) {
		to[k].sgrim_family = AF_GRIM;
		to[k].sgrim_port = unicast ? o.port : 0;
		to[k].sgrim_node = unicast ? nodes[k] : 0;
		to[k].sgrim_group = unicast ? 0 : o.group;
	}
	inj = calloc(o.count, sizeof(double));
	done = calloc(o.count, sizeof(double));
	if (!inj || !done)
		die("calloc");
	memset(buf, 0xa5, o.size);
	o.senders = nm;
	/* Rounds from 0x80000000 on until one is answered by every member
	 * (TIPC learns its group's members; a grim member NI may still be
	 * joining), for -w seconds at most; then the rounds that count.
	 */
	t0 = now();
	for (i = 0x80000000u; ; i++) {
		h->op = OP_PING;
		h->seq = i;
		if (mc_send(fd, buf, to, unicast ? nm : 1) < 0)
			die("send");
		if (!answers(fd, rbuf, i, nm, 1))
			break;
		if (now() - t0 > o.wait_s) {
			fprintf(stderr, "grim-perf: not every member answers\n");
			report("noconn", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
			return 1;
		}
	}
	for (i = 0; n < o.count; i++) {
		h->op = OP_PING;
		h->senders = 0;
		h->run = 0;
		h->seq = i;
		t0 = now();
		if (mc_send(fd, buf, to, unicast ? nm : 1) < 0) {
			perror("grim-perf: send");
			break;
		}
		t1 = now();
		if (answers(fd, rbuf, i, nm, 30)) {
			fprintf(stderr, "grim-perf: round %u: not every member answered\n", i);
			break;
		}
		if (i < warm)
			continue;
		inj[n] = (t1 - t0) * 1e6;
		done[n] = (now() - t0) * 1e6;
		isum += inj[n];
		dsum += done[n];
		n++;
	}
	if (!n) {
		report("fail", 0, 0, 0, 0, 0, 0, 0, i, 0, 0);
		return 1;
	}
	qsort(inj, n, sizeof(double), cmp_dbl);
	qsort(done, n, sizeof(double), cmp_dbl);
	o.test = "inject";
	report(n == o.count ? "ok" : "short", n, inj[n / 2],
	       inj[(size_t)((n - 1) * 0.99)], isum / n, inj[0], 0, 0, n, n, 0);
	o.test = "complete";
	report(n == o.count ? "ok" : "short", n, done[n / 2],
	       done[(size_t)((n - 1) * 0.99)], dsum / n, done[0], 0, 0, n, n, 0);
	return n == o.count ? 0 : 1;
}

#define MAX_ILV 5

/* Connect to each family of the lists @fams and @dests ("grim,tipc",
 * "2,any"), filling @fam, @label and @d; the number of families, or -1
 * when a server does not answer.  A name "grim<x>" (grimo) is AF_GRIM,
 * "tcp<x>" (tcpj) TCP, and so on, reported under that name: another NI
 * or path, set up differently.
 */
static int ilv_open(const char *fams, const char *dests, int *fam,
		    const char **label, struct dest *d, uint8_t *rbuf)
{
	char *fl = strdup(fams), *dl = strdup(dests), *sf, *sd, *f, *dd;
	int nf = 0, i;

	for (f = strtok_r(fl, ",", &sf), dd = strtok_r(dl, ",", &sd); f && dd;
	     f = strtok_r(NULL, ",", &sf), dd = strtok_r(NULL, ",", &sd)) {
		if (nf == MAX_ILV)
			usage();
		label[nf] = NULL;
		for (fam[nf] = -1, i = 0; i < 5; i++)
			if (!strncmp(f, fam_names[i], strlen(fam_names[i]))) {
				fam[nf] = i;
				if (strcmp(f, fam_names[i]))
					label[nf] = f;
			}
		if (fam[nf] < 0 || fam[nf] == F_RAW)
			usage();
		o.fam = fam[nf];
		o.dest = dd;
		connect_client(&d[nf]);
		if (handshake(&d[nf], rbuf))
			return -1;
		nf++;
	}
	if (!nf || f || dd)
		usage();
	free(dl);
	return nf;	/* @label points into fl, kept */
}

static int interleaved(const char *fams, const char *dests)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	uint32_t warm = 10, round, n = 0, got[MAX_ILV] = { 0 }, k;
	double *lat[MAX_ILV], sum[MAX_ILV] = { 0 }, t_end;
	int fam[MAX_ILV], nf, i, err = 0;
	const char *label[MAX_ILV];
	struct dest d[MAX_ILV];

	nf = ilv_open(fams, dests, fam, label, d, rbuf);
	if (nf < 0) {
		report("noconn", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
		return 1;
	}
	for (i = 0; i < nf; i++) {
		lat[i] = calloc(o.count, sizeof(double));
		if (!lat[i])
			die("calloc");
	}
	memset(buf, 0xa5, o.size);
	t_end = now() + o.secs;
	for (round = 0; n < o.count && now() < t_end; round++) {
		for (k = 0; k < (uint32_t)nf; k++) {
			int j = (round + k) % nf;
			double rtt;

			o.fam = fam[j];
			rtt = round_trip(&d[j], buf, rbuf, o.size, round,
					 reliable() ? 30 : 0.05);
			if (rtt < 0) {
				err = 1;
				goto out;
			}
			if (round < warm || rtt == 0)
				continue;	/* a lost UDP echo: no sample */
			lat[j][got[j]++] = rtt * 1e6 / 2;
			sum[j] += rtt * 1e6 / 2;
		}
		if (round >= warm)
			n++;
	}
out:
	for (i = 0; i < nf; i++) {
		uint32_t c = got[i];

		o.fam = fam[i];
		o.label = label[i];
		if (!c || err) {
			report("fail", 0, 0, 0, 0, 0, 0, 0, n, c, 0);
			continue;
		}
		qsort(lat[i], c, sizeof(double), cmp_dbl);
		report("ok", c, lat[i][c / 2], lat[i][(size_t)((c - 1) * 0.99)],
		       sum[i] / c, lat[i][0], 0, 0, n, c, 0);
	}
	return err || !n;
}

/* End run @run on @d: send FIN (op and seq set in @buf, the rest as the
 * DATA before it) until the server's STAT for @run is in @rbuf.  udp may
 * lose the FIN or the STAT: up to 10 tries.  TIPC returns a FIN that
 * met a full socket: sent again until @deadline.  A short STAT or one
 * of an earlier run (udp answers every repeated FIN) is skipped.
 * Returns 0, or -1 on an error.
 */
static int fin_stat(struct dest *d, uint8_t *buf, uint8_t *rbuf,
		    uint16_t run, double deadline)
{
	const struct stat_msg *st = (const struct stat_msg *)rbuf;
	struct hdr *h = (struct hdr *)buf;
	int tries = 0;
	ssize_t r;

	h->op = OP_FIN;
	h->seq = 0;
	while (tries < (reliable() ? 1 : 10)) {
		if (xmit(d, buf, sizeof(*h))) {
			perror("grim-perf: send FIN");
			return -1;
		}
		do {
			r = await(d->fd, rbuf, sizeof(*st), OP_STAT, -1,
				  reliable() ? 60 : 0.5);
		} while (r > 0 && (r < (ssize_t)sizeof(*st) ||
				   st->h.run != run));
		if (r == -2 && now() < deadline) {
			usleep(10000);	/* TIPC bounced the FIN */
			continue;
		}
		if (r < 0) {
			perror("grim-perf: waiting for STAT");
			return -1;
		}
		if (r > 0)
			return 0;
		tries++;
	}
	fprintf(stderr, "grim-perf: no STAT from the server\n");
	return -1;
}

/* One burst of the interleaved stream: @count DATA messages of run @run,
 * then FIN until the server's STAT for @run comes.  Returns 0 and the
 * bytes received and the time from the first send to the STAT, or -1.
 */
static int burst(struct dest *d, uint8_t *buf, uint8_t *rbuf, uint16_t run,
		 uint32_t count, uint64_t *bytes, uint64_t *msgs, double *secs)
{
	const struct stat_msg *st = (const struct stat_msg *)rbuf;
	struct hdr *h = (struct hdr *)buf;
	double t0 = now();
	uint32_t i;

	h->op = OP_DATA;
	h->senders = 1;
	h->run = run;
	for (i = 0; i < count; i++) {
		h->seq = i;
		if (xmit(d, buf, o.size)) {
			perror("grim-perf: send");
			return -1;
		}
	}
	if (fin_stat(d, buf, rbuf, run, t0 + 60))
		return -1;
	*secs = now() - t0;
	*bytes = st->bytes;
	*msgs = st->msgs;
	return 0;
}

/* Streams of several families from one process: a burst of about 1 MiB
 * of each in turn, the order rotating every round, for -t seconds.  Per
 * family: what its receiver got over the sum of its bursts' times.
 */
static int interleaved_stream(const char *fams, const char *dests)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	uint64_t bytes[MAX_ILV] = { 0 }, msgs[MAX_ILV] = { 0 };
	uint64_t sent[MAX_ILV] = { 0 };
	uint16_t run = (uint16_t)(getpid() * 64);
	double secs[MAX_ILV] = { 0 }, t_end;
	int fam[MAX_ILV], nf, i, err = 0;
	uint32_t count, round, k;
	const char *label[MAX_ILV];
	struct dest d[MAX_ILV];

	count = (1u << 20) / o.size;
	count = count < 8 ? 8 : count > 2048 ? 2048 : count;
	if (o.count < count)
		count = o.count;
	nf = ilv_open(fams, dests, fam, label, d, rbuf);
	if (nf < 0) {
		report("noconn", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
		return 1;
	}
	memset(buf, 0x5a, o.size);
	t_end = now() + o.secs;
	/* Round 0 warms every path up and is not counted. */
	for (round = 0; round < 2 || now() < t_end; round++) {
		for (k = 0; k < (uint32_t)nf; k++) {
			int j = (round + k) % nf;
			uint64_t b, m;
			double t;

			o.fam = fam[j];
			if (!++run)
				run++;
			if (burst(&d[j], buf, rbuf, run, count, &b, &m, &t)) {
				err = 1;
				goto out;
			}
			if (!round)
				continue;
			bytes[j] += b;
			msgs[j] += m;
			sent[j] += count;
			secs[j] += t;
		}
	}
out:
	for (i = 0; i < nf; i++) {
		o.fam = fam[i];
		o.label = label[i];
		if (err || !secs[i]) {
			report("fail", 0, 0, 0, 0, 0, 0, 0, sent[i], msgs[i], 0);
			continue;
		}
		report("ok", msgs[i], 0, 0, 0, 0, bytes[i] / secs[i] / 1e6,
		       msgs[i] / secs[i], sent[i], msgs[i], secs[i]);
	}
	return err;
}

struct sender_result {
	double t0, t1;
	uint64_t sent, rcvd, bytes;
	int ok;
};

static void stream_one(uint16_t run, int go_fd, struct sender_result *res)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	struct hdr *h = (struct hdr *)buf;
	struct stat_msg *st = (struct stat_msg *)rbuf;
	double t_end;
	struct dest d;
	char go;

	memset(res, 0, sizeof(*res));
	connect_client(&d);
	if (handshake(&d, rbuf))
		return;
	if (go_fd >= 0 && read(go_fd, &go, 1) != 1) {
		fprintf(stderr, "grim-perf: no go signal\n");
		return;
	}
	memset(buf, 0x5a, o.size);
	h->op = OP_DATA;
	h->run = run;
	res->t0 = now();
	t_end = res->t0 + o.secs;
	while (res->sent < o.count) {
		h->seq = res->sent;
		if (xmit(&d, buf, o.size)) {
			perror("grim-perf: send");
			return;
		}
		res->sent++;
		if (!(res->sent & 15) && now() >= t_end)
			break;
	}
	h->senders = o.senders;
	if (fin_stat(&d, buf, rbuf, run, res->t0 + o.secs + 60))
		return;
	res->t1 = now();
	res->rcvd = st->msgs;
	res->bytes = st->bytes;
	res->ok = 1;
}

/* Let RLIMIT_NOFILE allow @want descriptors (root may raise the hard
 * limit up to fs.nr_open).
 */
static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		rl.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(RLIMIT_NOFILE)");
}

/* Take the reports of failed messages off an AF_GRIM socket's error
 * queue, and a pending socket error: how many there were.
 */
static int errq_drain(int fd)
{
	socklen_t el = sizeof(int);
	char cbuf[256];
	uint8_t b[64];
	int n = 0, err = 0;

	for (;;) {
		struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};

		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		n++;
	}
	if (!getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) && err)
		n++;
	return n;
}

/* A socket of the rate test. */
struct msock {
	struct dest d;
	uint32_t seq;		/* of its next DATA message */
	uint32_t off;		/* tcp: bytes of that message written */
	int blocked;		/* it would block: waits for POLLOUT */
	int got;		/* the server's STAT came */
};

/* Send the message in @buf (or, tcp, what is left of it) on @s without
 * blocking: 1 when it went, 0 when the socket would block, -1 on an
 * error.  A UDP datagram the stack drops counts as sent (lost).
 */
static int xmit_nb(struct msock *s, const uint8_t *buf, size_t len)
{
	ssize_t n;

	if (o.fam == F_TCP) {
		while (s->off < len) {
			n = send(s->d.fd, buf + s->off, len - s->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK ?
				       0 : -1;
			s->off += n;
		}
		s->off = 0;
		return 1;
	}
	do {
		n = sendto(s->d.fd, buf, len, MSG_DONTWAIT,
			   (struct sockaddr *)&s->d.a, s->d.alen);
	} while (n < 0 && errno == EINTR);
	if (n >= 0)
		return 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	if (o.fam == F_UDP && (errno == ENOBUFS || errno == ECONNREFUSED))
		return 1;
	return -1;
}

/* Wait up to @tmo seconds (0: only look) until blocked sockets of @m
 * can take more, and unblock those; @p has room for all of them.
 * Returns -1 on an error.
 */
static int rate_wait(struct msock *m, int n, int *nb, struct pollfd *p,
		     double tmo)
{
	int i, k = 0, r;

	for (i = 0; i < n; i++) {
		if (!m[i].blocked)
			continue;
		p[k].fd = m[i].d.fd;
		p[k].events = POLLOUT;
		p[k].revents = 0;
		k++;
	}
	r = poll(p, k, tmo > 0 ? (int)(tmo * 1000) + 1 : 0);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0, k = 0; i < n && r > 0; i++) {
		if (!m[i].blocked)
			continue;
		if (p[k].revents) {
			/* A failed message (GRIM's error queue) is a lost
			 * one; the server's count shows it.
			 */
			if ((p[k].revents & POLLERR) && o.fam == F_GRIM)
				errq_drain(p[k].fd);
			m[i].blocked = 0;
			(*nb)--;
			r--;
		}
		k++;
	}
	return 0;
}

/* End run @run on the @n sockets of @m: FIN on each (the header in @buf
 * says how many senders there are), then the server's STAT on each; it
 * sends them once it has every sender's FIN.  udp may lose a FIN or a
 * STAT: the FINs of the sockets still waiting go again, up to 10 times.
 * TIPC returns a FIN that met a full socket: sent again until
 * @deadline.  The STAT goes to @st.  Returns 0, or -1.
 */
static int fin_all(struct msock *m, int n, uint8_t *buf, uint8_t *rbuf,
		   uint16_t run, double deadline, struct stat_msg *st)
{
	const struct stat_msg *got = (const struct stat_msg *)rbuf;
	struct hdr *h = (struct hdr *)buf;
	int left = n, tries = 0, bounced, i;
	ssize_t r;

	h->op = OP_FIN;
	h->seq = 0;
	while (left) {
		bounced = 0;
		for (i = 0; i < n; i++) {
			if (!m[i].got && xmit(&m[i].d, buf, sizeof(*h))) {
				perror("grim-perf: send FIN");
				return -1;
			}
		}
		for (i = 0; i < n; i++) {
			if (m[i].got)
				continue;
			do {
				r = await(m[i].d.fd, rbuf, sizeof(*got), OP_STAT,
					  -1, reliable() ? 60 : 0.5);
			} while (r > 0 && (r < (ssize_t)sizeof(*got) ||
					   got->h.run != run));
			if (r == -2) {
				bounced = 1;	/* TIPC bounced this FIN */
				continue;
			}
			if (r < 0) {
				perror("grim-perf: waiting for STAT");
				return -1;
			}
			if (!r)
				break;		/* a FIN or STAT lost: again */
			*st = *got;
			m[i].got = 1;
			left--;
		}
		if (!left)
			break;
		if (bounced && now() < deadline) {
			usleep(10000);
			continue;
		}
		if (++tries >= (reliable() ? 1 : 10)) {
			fprintf(stderr, "grim-perf: no STAT from the server on %d of %d sockets\n",
				left, n);
			return -1;
		}
	}
	return 0;
}

/*
 * One sender process of the rate test: o.socks sockets, each sending in
 * turn one message without blocking.  A socket that would block sits out
 * until poll() finds it writable, while the others go on; when they all
 * would block, the process waits in poll() for any of them.  So every
 * socket has data in flight at once, as many senders would, without as
 * many processes taking turns on the CPU.
 */
static void rate_one(uint16_t run, int go_fd, struct sender_result *res)
{
	static uint8_t buf[MAX_MSG], rbuf[MAX_MSG];
	struct hdr *h = (struct hdr *)buf;
	int n = o.socks, nb = 0, stop = 0, i, r;
	struct stat_msg st = { .msgs = 0 };
	struct pollfd *p;
	struct msock *m;
	double t_end;
	char go;

	memset(res, 0, sizeof(*res));
	raise_nofile(n + 16);
	m = calloc(n, sizeof(*m));
	p = calloc(n, sizeof(*p));
	if (!m || !p)
		die("calloc");
	for (i = 0; i < n; i++) {
		connect_client(&m[i].d);
		if (handshake(&m[i].d, rbuf))
			goto out;
	}
	if (go_fd >= 0 && read(go_fd, &go, 1) != 1) {
		fprintf(stderr, "grim-perf: no go signal\n");
		goto out;
	}
	memset(buf, 0x5a, o.size);
	h->op = OP_DATA;
	h->run = run;
	res->t0 = now();
	t_end = res->t0 + o.secs;
	while (!stop && res->sent < o.count) {
		for (i = 0; i < n && !stop && res->sent < o.count; i++) {
			struct msock *s = &m[i];

			if (s->blocked)
				continue;
			h->seq = s->seq;
			r = xmit_nb(s, buf, o.size);
			if (r < 0) {
				perror("grim-perf: send");
				goto out;
			}
			if (!r) {
				s->blocked = 1;
				nb++;
				continue;
			}
			s->seq++;
			res->sent++;
			if (!(res->sent & 15) && now() >= t_end)
				stop = 1;
		}
		if (stop || !nb)
			continue;
		if (rate_wait(m, n, &nb, p, nb == n ? t_end - now() : 0)) {
			perror("grim-perf: poll");
			goto out;
		}
		stop = now() >= t_end;
	}
	/* tcp: a message half written goes out whole before the FIN. */
	for (i = 0; i < n; i++) {
		struct pollfd q = { .fd = m[i].d.fd, .events = POLLOUT };

		if (!m[i].off)
			continue;
		h->seq = m[i].seq;
		while (!(r = xmit_nb(&m[i], buf, o.size)))
			poll(&q, 1, 1000);
		if (r < 0) {
			perror("grim-perf: send");
			goto out;
		}
		res->sent++;
	}
	h->senders = o.senders * o.socks;
	if (fin_all(m, n, buf, rbuf, run, res->t0 + o.secs + 60, &st))
		goto out;
	res->t1 = now();
	res->rcvd = st.msgs;
	res->bytes = st.bytes;
	res->ok = 1;
out:
	for (i = 0; i < n; i++)
		if (m[i].d.fd > 0)
			close(m[i].d.fd);
	free(p);
	free(m);
}

static int stream(void)
{
	uint16_t run = (uint16_t)(getpid() ^ (uint32_t)(now() * 1000));
	void (*one)(uint16_t, int, struct sender_result *) = stream_one;
	struct sender_result *res;
	int go[2], i, ok = 1;
	double t0 = 1e300, t1 = 0, el;
	uint64_t sent = 0, rcvd = 0, bytes = 0;

	if (!run)
		run = 1;
	if (!strcmp(o.test, "rate"))
		one = rate_one;
	res = calloc(o.senders, sizeof(*res));
	if (o.senders == 1) {
		one(run, -1, res);
	} else {
		int rp[2];

		if (pipe(go) || pipe(rp))
			die("pipe");
		for (i = 0; i < o.senders; i++) {
			if (fork() == 0) {
				struct sender_result r;

				close(go[1]);
				one(run, go[0], &r);
				if (write(rp[1], &r, sizeof(r)) != sizeof(r))
					_exit(1);
				_exit(0);
			}
		}
		close(go[0]);
		close(rp[1]);
		/* Let every sender connect and handshake, then start them. */
		usleep(300000);
		for (i = 0; i < o.senders; i++)
			if (write(go[1], "g", 1) != 1)
				die("go");
		for (i = 0; i < o.senders; i++)
			if (readn(rp[0], &res[i], sizeof(res[i])))
				res[i].ok = 0;
		while (wait(NULL) > 0)
			;
	}
	for (i = 0; i < o.senders; i++) {
		ok &= res[i].ok;
		sent += res[i].sent;
		if (res[i].t0 && res[i].t0 < t0)
			t0 = res[i].t0;
		if (res[i].t1 > t1)
			t1 = res[i].t1;
		if (res[i].rcvd > rcvd) {
			rcvd = res[i].rcvd;
			bytes = res[i].bytes;
		}
	}
	if (!ok) {
		report("fail", 0, 0, 0, 0, 0, 0, 0, sent, rcvd, 0);
		return 1;
	}
	el = t1 - t0;
	report("ok", rcvd, 0, 0, 0, 0, bytes / el / 1e6, rcvd / el, sent, rcvd, el);
	return 0;
}

/*
 * hold: COUNT AF_GRIM sockets for each NODE; each sends one HOLD message
 * (a server ignores it) to (NODE, PORT) and stays open, so that its send
 * stream lives on until the link's streamidle.  A message is taken when
 * nothing of it is left in flight (SIOCOUTQ 0) and no failure was
 * reported on the error queue.  One that failed (ENOSR: the receiver
 * makes at most 8,192 receive streams for one peer, and forgets idle
 * ones after twice dead_ms) goes again a second later, until all are
 * taken or -w seconds passed.  Then "grim-perf: holding TAKEN of TOTAL
 * streams" on stdout, and the sockets stay open for -t seconds, or until
 * a signal ends the process.
 */
static int hold(const char *nodes, const char *counts)
{
	char *nl = strdup(nodes), *cl = strdup(counts), *sn, *sc, *a, *b;
	uint32_t node[MAX_HOLD_DESTS], cnt[MAX_HOLD_DESTS];
	uint32_t total = 0, taken = 0, fails = 0, i, j;
	static uint8_t buf[MAX_MSG];
	struct hdr *h = (struct hdr *)buf;
	struct sockaddr_grim to = {
		.sgrim_family = AF_GRIM, .sgrim_port = o.port,
	};
	int nd = 0, last_err = 0, k, *fd;
	uint32_t *dst;
	uint8_t *state;		/* 0 to send, 1 in flight, 2 taken */
	double end;

	for (a = strtok_r(nl, ",", &sn), b = strtok_r(cl, ",", &sc); a && b;
	     a = strtok_r(NULL, ",", &sn), b = strtok_r(NULL, ",", &sc)) {
		if (nd == MAX_HOLD_DESTS)
			usage();
		node[nd] = strtoul(a, NULL, 0);
		cnt[nd] = strtoul(b, NULL, 0);
		total += cnt[nd++];
	}
	if (!nd || a || b || !total)
		usage();
	raise_nofile(total + 16);
	fd = calloc(total, sizeof(*fd));
	dst = calloc(total, sizeof(*dst));
	state = calloc(total, 1);
	if (!fd || !dst || !state)
		die("calloc");
	for (k = 0, i = 0; k < nd; k++) {
		for (j = 0; j < cnt[k]; j++, i++) {
			fd[i] = socket(AF_GRIM, SOCK_RDM, 0);
			if (fd[i] < 0)
				die("socket");
			dst[i] = node[k];
		}
	}
	memset(buf, 0x3c, o.size);
	memset(h, 0, sizeof(*h));
	h->op = OP_HOLD;
	end = now() + o.wait_s;
	while (taken < total && now() < end) {
		uint32_t failed = 0;

		for (i = 0; i < total; i++) {
			if (state[i])
				continue;
			to.sgrim_node = dst[i];
			h->seq = i;
			/* Not yet (EHOSTUNREACH before discovery, EAGAIN,
			 * the error a failed message left): next round.
			 */
			if (sendto(fd[i], buf, o.size, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to)) < 0) {
				last_err = errno;
				continue;
			}
			state[i] = 1;
		}
		usleep(200000);
		for (i = 0; i < total; i++) {
			int q = 0;

			if (state[i] != 1 || ioctl(fd[i], SIOCOUTQ, &q) || q > 0)
				continue;
			if (errq_drain(fd[i])) {
				state[i] = 0;
				failed++;
			} else {
				state[i] = 2;
				taken++;
			}
		}
		fails += failed;
		if (failed)
			usleep(1000000);
	}
	printf("grim-perf: holding %u of %u streams (%u failed sends went again)\n",
	       taken, total, fails);
	if (taken < total && last_err)
		fprintf(stderr, "grim-perf: last send error while holding: %s\n",
			strerror(last_err));
	fflush(stdout);
	end = now() + o.secs;
	for (;;) {
		double left = end - now();

		if (left <= 0)
			break;
		usleep(left > 1 ? 1000000 : (useconds_t)(left * 1e6) + 1);
	}
	return taken == total ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: grim-perf server -f FAMILY [-p PORT] [-i IFACE]\n"
		"       grim-perf client -f FAMILY -d DEST [-p PORT] [-i IFACE]\n"
		"                        [-T pingpong|stream|rate] [-s SIZE] [-n COUNT] [-t SECONDS]\n"
		"                        [-P SENDERS] [-S SOCKETS] [-w WAIT_S] [--csv] [--csv-header]\n"
		"                        [--loss PCT] [--rep N]\n"
		"       grim-perf client -f FAM,FAM... -d DEST,DEST...\n"
		"                        -T interleaved|interleaved-stream [-l LPORT]\n"
		"                        [-s SIZE] [-n ROUNDS|BURST] [-t SECONDS] [--csv]\n"
		"       grim-perf hold -d NODE,NODE... -n COUNT,COUNT... [-p PORT] [-s SIZE]\n"
		"                        [-w WAIT_S] [-t SECONDS]\n"
		"       grim-perf member -f grim|tipc [-p PORT] [-g GROUP]\n"
		"       grim-perf mcast -f grim|tipc -T group|unicast -d NODE,NODE... [-p PORT]\n"
		"                        [-g GROUP] [-s SIZE] [-n ROUNDS] [-w WAIT_S] [--csv]\n"
		"FAMILY: grim (DEST node id), tipc (DEST ignored), udp, tcp (DEST IPv4),\n"
		"        raw (DEST server MAC on IFACE)\n");
	exit(2);
}

#define CSV_HEADER "family,test,size,senders,loss,rep,status,n,lat_med_us,lat_p99_us,lat_mean_us,lat_min_us,mbps,msgs_per_s,sent,rcvd,loss_pct,elapsed_s"

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "csv", no_argument, NULL, 'C' },
		{ "csv-header", no_argument, NULL, 'H' },
		{ "loss", required_argument, NULL, 'L' },
		{ "rep", required_argument, NULL, 'R' },
		{ "family", required_argument, NULL, 'f' },
		{ "size", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mode, *fams = NULL, *counts = NULL;
	int opt, i, count_set = 0;

	if (argc < 2)
		usage();
	mode = argv[1];
	if (!strcmp(mode, "--csv-header")) {
		puts(CSV_HEADER);
		return 0;
	}
	o.fam = -1;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "f:p:i:d:T:s:n:t:P:S:l:w:g:", lo,
				  NULL)) != -1) {
		switch (opt) {
		case 'f':
			fams = optarg;
			for (i = 0; i < 5; i++)
				if (!strcmp(optarg, fam_names[i]))
					o.fam = i;
			break;
		case 'p': o.port = strtoul(optarg, NULL, 0); break;
		case 'i': o.ifname = optarg; break;
		case 'd': o.dest = optarg; break;
		case 'T': o.test = optarg; break;
		case 's': o.size = strtoul(optarg, NULL, 0); break;
		case 'n':
			o.count = strtoul(optarg, NULL, 0);
			counts = optarg;
			count_set = 1;
			break;
		case 't': o.secs = atof(optarg); break;
		case 'P': o.senders = atoi(optarg); break;
		case 'S': o.socks = atoi(optarg); break;
		case 'l': o.lport = strtoul(optarg, NULL, 0); break;
		case 'w': o.wait_s = atoi(optarg); break;
		case 'g': o.group = strtoul(optarg, NULL, 0); break;
		case 'C': o.csv = 1; break;
		case 'H': puts(CSV_HEADER); break;
		case 'L': o.loss = optarg; break;
		case 'R': o.rep = atoi(optarg); break;
		default: usage();
		}
	}
	if (!strncmp(o.test, "interleaved", 11) && fams && strchr(fams, ','))
		o.fam = F_GRIM;	/* each family's in turn, below */
	if (!strcmp(mode, "hold"))
		o.fam = F_GRIM;
	if (o.fam < 0)
		usage();
	if (o.size < sizeof(struct hdr))
		o.size = sizeof(struct hdr);
	if (o.size > MAX_MSG || (o.fam == F_GRIM && o.size > GRIM_MAX_PAYLOAD)) {
		fprintf(stderr, "grim-perf: size %u too large\n", o.size);
		return 2;
	}
	if (o.senders < 1 || o.socks < 1 || o.senders * o.socks > MAX_FINS ||
	    (o.socks > 1 && strcmp(o.test, "rate")))
		usage();
	if (!count_set && (!strcmp(o.test, "stream") || !strcmp(o.test, "rate")))
		o.count = UINT32_MAX;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(mode, "hold")) {
		if (!o.dest || !counts)
			usage();
		return hold(o.dest, counts);
	}
	if (!strcmp(mode, "member")) {
		if (o.fam != F_GRIM && o.fam != F_TIPC)
			usage();
		member();
	}
	if (!strcmp(mode, "mcast")) {
		if ((o.fam != F_GRIM && o.fam != F_TIPC) || !o.dest)
			usage();
		return mcast();
	}
	if (!strcmp(mode, "server")) {
		if (o.fam == F_TCP)
			serve_tcp();
		serve_dgram();
	}
	if (strcmp(mode, "client") || !o.dest)
		usage();
	if (!strcmp(o.test, "pingpong"))
		return pingpong();
	if (!strcmp(o.test, "interleaved"))
		return interleaved(fams, o.dest);
	if (!strcmp(o.test, "interleaved-stream"))
		return interleaved_stream(fams, o.dest);
	if (!strcmp(o.test, "stream") || !strcmp(o.test, "rate"))
		return stream();
	usage();
	return 2;
}
