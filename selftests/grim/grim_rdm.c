// SPDX-License-Identifier: GPL-2.0
/*
 * grim_rdm: send and verify AF_GRIM SOCK_RDM traffic for the selftests.
 *
 *   grim_rdm send -d NODE -p PORT [-n COUNT] [-m MIN] [-M MAX] [-S SEED]
 *                 [-b BINDPORT] [-R RETRY_S] [-i GAP_US] [-B SNDBUF] [-L]
 *                 [-E] [-D]
 *
 * -L draws sizes log-uniformly between MIN and MAX (every 1000th message
 * is MIN and the next one MAX); -E sends until an error and reports it;
 * -D uses MSG_DONTWAIT and counts EAGAINs; -i sleeps GAP_US after each
 * message; -B sets SO_SNDBUF (what may wait unacknowledged).
 *   grim_rdm recv -p PORT -n TOTAL [-t TIMEOUT_S] [-s SLOW_US] [-r RCVBUF] [-g]
 *                 [-T SECONDS]
 *
 * -g allows a sender's sequence to skip messages (that failed at the
 * sender): each one is printed as "missing PORT:SEQ" and counts toward
 * TOTAL, which the last message sent must then close.  -T receives for
 * SECONDS from the first message on, whatever TOTAL, and reports the
 * bytes of every source ("recv:   source NODE:PORT: N msgs in order,
 * B bytes").
 *   grim_rdm duplex -d NODE -p PORT -P PEERPORT [-n COUNT] [-m MIN] [-M MAX]
 *                   [-S SEED] [-t TIMEOUT_S] [-g GO_FILE]
 *   grim_rdm mesh -p PORT -N FIRST-LAST -s SELF [-n COUNT] [-m MIN]
 *                 [-M MAX] [-S SEED] [-t TIMEOUT_S] [-g GO_FILE]
 *   grim_rdm bound -p PORT    (exit 0 when some socket has bound PORT)
 *   grim_rdm wedge -d NODE -p PORT -e OTHER
 *   grim_rdm pattern -S SEED -n SEQ -l LEN   (payload bytes, in hex)
 *   grim_rdm errq -d NODE -p PORT [-q PORT2] [-b BINDPORT] [-n COUNT]
 *                 [-m MIN] [-M MAX] [-w WAIT_MS] [-x EXPECT_FAILED]
 *                 [-i GAP_US]
 *
 * wedge fills its send buffer with messages to NODE:PORT (a receiver that
 * does not read), prints "wedged", then blocks in one more send, to
 * OTHER:PORT, and reports how that send ended.
 *
 *   grim_rdm echo -p PORT [-t SECONDS] [-r RCVBUF]
 *   grim_rdm churn -d NODE -p PORT -n COUNT [-j JOBS] [-S SEED]
 *                  [-t TIMEOUT_S]
 *
 * echo sends every message it receives on PORT back to its sender, for
 * SECONDS (default 600) or until killed.  churn makes COUNT sockets, in
 * JOBS processes at once: each binds an ephemeral port, sends one request
 * to NODE:PORT, checks that the answer is the request (bytes, length and
 * source) and closes.  Any error, a wrong answer or none within TIMEOUT_S
 * fails it; it prints "churn: N round trips ok".
 *
 *   grim_rdm fan -d NODE -p PORT -n SOCKETS [-T SECONDS] [-l LEN] [-G MS]
 *                [-E MS]
 *
 * fan keeps SOCKETS sockets (ephemeral ports) talking to an echo server
 * at NODE:PORT for SECONDS: each has one request at a time out, and sends
 * the next when the echo or a failure report of the last comes back.  An
 * echo must be of the socket's last request (or of one reported failed:
 * the peer may have taken it just before it restarted), never twice.  A
 * request with neither after MS milliseconds (-G, default 5000) is given
 * up (its answer was lost: an echo server drops what it cannot send).
 * With every socket's request out at once, a request waits behind all
 * the others: MS must be well above SOCKETS over the server's rate, or
 * requests given up too soon add to the load.  With -E, it stops MS
 * milliseconds after every socket has had an echo since the first failure
 * report, if that is before SECONDS.  It prints, every second, the
 * echoes and reports so far, and at the end the totals, the echoes after
 * the first report, and the longest time with no echo at all.
 *
 * errq sends COUNT messages, alternating between PORT and PORT2 when -q is
 * given (each port's messages numbered 0, 1, ... in arg[0], so that a
 * receiver on either sees an unbroken sequence), then reads its socket's
 * error queue until EXPECT_FAILED reports came (or none more for WAIT_MS).
 * It prints one line per report ("failed PORT:SEQ errno E len L") and a
 * summary, and fails on a report that does not name a message it sent,
 * or names one twice.
 *
 * Every message carries (sequence, length, content hash, sender seed) in
 * its active-message arguments and a payload generated from them.  The
 * receiver checks, per sending socket, that sequences arrive exactly once
 * and in order, and that length, hash and every payload byte match.
 * duplex does both on one socket bound to PORT, talking to PEERPORT on
 * NODE (which runs duplex the other way round).  mesh does it with every
 * node FIRST..LAST but SELF, all on PORT: COUNT messages to each, numbered
 * per destination, taken in turn, and COUNT checked from each.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>
#include <linux/grim.h>

#define AM_HANDLER	0x6d
#define MAX_SRC		256

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static uint32_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/* Payload of message @seq of sender @seed: a xorshift stream. */
static void fill(uint8_t *buf, uint32_t len, uint32_t seed, uint32_t seq)
{
	uint64_t s = ((uint64_t)seed << 32 | seq) * 0x9e3779b97f4a7c15ull | 1;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		v = s;
		memcpy(buf + i, &v, 8);
	}
	for (; i < len; i++)
		buf[i] = rng_next(&s) & 0xff;
}

/* A content hash, 8 bytes at a time. */
static uint32_t fnv(const uint8_t *buf, uint32_t len)
{
	uint64_t h = 1469598103934665603ull, v;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, buf + i, 8);
		h = (h ^ v) * 1099511628211ull;
	}
	for (; i < len; i++)
		h = (h ^ buf[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int open_sock(uint16_t port, int rcvbuf)
{
	struct sockaddr_grim a = { .sgrim_family = AF_GRIM, .sgrim_port = port };
	int fd = socket(AF_GRIM, SOCK_RDM, 0), tries;

	if (fd < 0) {
		perror("socket(AF_GRIM)");
		exit(2);
	}
	/* Past net.core.rmem_max when root may (the tests run as root). */
	if (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				 sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
		perror("SO_RCVBUF");
		exit(2);
	}
	/* wait_bound (lib.sh) probes a port by binding it for an instant:
	 * a receiver started just before may find it taken, briefly.
	 */
	for (tries = 0; port && bind(fd, (struct sockaddr *)&a, sizeof(a));
	     tries++) {
		if (errno != EADDRINUSE || tries == 200) {
			perror("bind");
			exit(2);
		}
		usleep(10000);
	}
	return fd;
}

/* Send message @seq of @len bytes, already in @buf, with its check
 * values in the active-message arguments.
 */
static ssize_t send_one(int fd, uint32_t node, uint16_t port,
			const uint8_t *buf, uint32_t len, uint32_t seed,
			uint32_t seq, int flags)
{
	struct sockaddr_grim to = {
		.sgrim_family = AF_GRIM, .sgrim_node = node, .sgrim_port = port,
	};
	char cbuf[CMSG_SPACE(sizeof(struct grim_am))] = {};
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct grim_am am = {
		.handler = AM_HANDLER,
		.arg = { seq, len, fnv(buf, len), seed },
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_GRIM;
	c->cmsg_type = GRIM_AM;
	c->cmsg_len = CMSG_LEN(sizeof(am));
	memcpy(CMSG_DATA(c), &am, sizeof(am));
	return sendmsg(fd, &mh, flags);
}

/* One report from the error queue of @fd: the message's port and
 * sequence (arg[0]), its errno and length.  Returns 1, 0 when there is
 * none, -1 on a malformed report.
 */
static int errq_read(int fd, uint16_t *port, uint32_t *seq, int *err,
		     uint32_t *len)
{
	char cbuf[CMSG_SPACE(sizeof(struct grim_am)) +
		  CMSG_SPACE(sizeof(struct sock_extended_err))];
	struct sockaddr_grim to;
	struct msghdr mh = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct sock_extended_err *ee = NULL;
	struct grim_am *am = NULL;
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_GRIM)
			continue;
		if (c->cmsg_type == GRIM_AM)
			am = (struct grim_am *)CMSG_DATA(c);
		if (c->cmsg_type == GRIM_RECVERR)
			ee = (struct sock_extended_err *)CMSG_DATA(c);
	}
	if (!am || !ee || !(mh.msg_flags & MSG_ERRQUEUE) ||
	    ee->ee_origin != SO_EE_ORIGIN_LOCAL || am->handler != AM_HANDLER ||
	    am->arg[1] != ee->ee_info) {
		printf("errq: malformed report\n");
		return -1;
	}
	*port = to.sgrim_port;
	*seq = am->arg[0];
	*err = ee->ee_errno;
	*len = ee->ee_info;
	return 1;
}

/* A message sent earlier failed: say which, as a failed send would. */
static int report_failed(int fd, uint32_t sent, uint64_t t0)
{
	struct pollfd pf = { .fd = fd, .events = 0 };
	uint32_t seq, len;
	uint16_t port;
	int err;

	if (poll(&pf, 1, 0) <= 0 || !(pf.revents & POLLERR))
		return 0;
	if (errq_read(fd, &port, &seq, &err, &len) <= 0)
		return 0;
	printf("send: error after %u msgs, %llu ms: message %u failed: %s (errno %d)\n",
	       sent, (unsigned long long)(now_ms() - t0), seq, strerror(err),
	       err);
	return 1;
}

static int do_send(int argc, char **argv)
{
	uint32_t node = 0, count = 1000, min = 0, max = 1024, seed = 1;
	int retry_s = 10, until_err = 0, dontwait = 0, logsz = 0, opt, fd;
	int sndbuf = 0;
	unsigned long eagain = 0, gap_us = 0;
	uint16_t port = 0, bport = 0;
	uint64_t t0, sent_bytes = 0;
	uint8_t *buf;
	uint32_t i;

	while ((opt = getopt(argc, argv, "d:p:n:m:M:S:b:R:i:B:LED")) != -1) {
		switch (opt) {
		case 'd': node = strtoul(optarg, NULL, 0); break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': min = strtoul(optarg, NULL, 0); break;
		case 'M': max = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 'b': bport = strtoul(optarg, NULL, 0); break;
		case 'R': retry_s = atoi(optarg); break;
		case 'i': gap_us = strtoul(optarg, NULL, 0); break;
		case 'B': sndbuf = atoi(optarg); break;
		case 'E': until_err = 1; break;
		case 'L': logsz = 1; break;
		case 'D': dontwait = 1; break;
		default: return 2;
		}
	}
	if (!port || max < min || max > GRIM_MAX_PAYLOAD) {
		fprintf(stderr, "send: bad arguments\n");
		return 2;
	}
	buf = malloc(GRIM_MAX_PAYLOAD);
	fd = open_sock(bport, 0);
	/* What may wait unacknowledged: past net.core.wmem_max as root. */
	if (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
				 sizeof(sndbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf))) {
		perror("SO_SNDBUF");
		exit(2);
	}
	srand(seed);
	t0 = now_ms();
	for (i = 0; until_err || i < count; i++) {
		uint32_t len = min + (max > min ? (uint32_t)rand() % (max - min + 1) : 0);
		ssize_t n;

		if (logsz) {
			double r = (double)rand() / RAND_MAX;

			len = (uint32_t)(exp(log(min + 1.0) +
					 r * (log(max + 1.0) - log(min + 1.0))) - 1);
			if (len > max)
				len = max;
			if (i % 1000 == 0)
				len = min;
			else if (i % 1000 == 1)
				len = max;
		}
		fill(buf, len, seed, i);
again:
		n = send_one(fd, node, port, buf, len, seed, i,
			     dontwait ? MSG_DONTWAIT : 0);
		if (n < 0 && errno == EHOSTUNREACH && i == 0 &&
		    now_ms() - t0 < (uint64_t)retry_s * 1000) {
			usleep(50000);
			goto again;
		}
		if (n < 0 && errno == EAGAIN && dontwait) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			eagain++;
			poll(&p, 1, 1000);
			goto again;
		}
		if (n < 0) {
			int e = errno;

			printf("send: error after %u msgs, %llu ms: %s (errno %d)\n",
			       i, (unsigned long long)(now_ms() - t0),
			       strerror(e), e);
			return until_err ? 3 : 1;
		}
		if ((uint32_t)n != len) {
			printf("send: short send %zd of %u\n", n, len);
			return 1;
		}
		sent_bytes += len;
		if (report_failed(fd, i, t0))
			return until_err ? 3 : 1;
		if (gap_us)
			usleep(gap_us);
	}
	if (report_failed(fd, count, t0))
		return 1;
	printf("send: %u msgs, %llu bytes to %u:%u in %llu ms, %lu EAGAIN\n",
	       count, (unsigned long long)sent_bytes, node, port,
	       (unsigned long long)(now_ms() - t0), eagain);
	close(fd);
	return 0;
}

struct src {
	uint32_t node, port, seed, next;
	uint64_t bytes;
};

/* recv -g: a sender's sequence may skip messages (they failed at the
 * sender, which reports them): print each one missing, not an error.
 */
static int gaps_ok;
static uint32_t missing;

/* What a receiving socket has seen, per sending socket. */
struct checker {
	struct src srcs[MAX_SRC];
	uint32_t nsrc, got, errors;
	uint64_t bytes;
	uint8_t *buf, *want;
};

static void checker_init(struct checker *ck)
{
	memset(ck, 0, sizeof(*ck));
	ck->buf = malloc(GRIM_MAX_PAYLOAD + 1);
	ck->want = malloc(GRIM_MAX_PAYLOAD);
	if (!ck->buf || !ck->want) {
		perror("malloc");
		exit(2);
	}
}

/* Receive one message on @fd without blocking and check it: exactly once,
 * in order per source, every byte as the sender made it.  Returns 1 for a
 * message, 0 if none was waiting, -1 on a socket error or too many bad
 * messages (already reported).
 */
static int recv_check(int fd, struct checker *ck)
{
	char cbuf[CMSG_SPACE(sizeof(struct grim_am))];
	struct iovec iov = { ck->buf, GRIM_MAX_PAYLOAD + 1 };
	struct sockaddr_grim from;
	struct msghdr mh = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct grim_am *am = NULL;
	struct src *s = NULL;
	struct cmsghdr *c;
	uint32_t i;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		printf("recv: %s\n", strerror(errno));
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_GRIM && c->cmsg_type == GRIM_AM)
			am = (struct grim_am *)CMSG_DATA(c);
	if (!am || am->handler != AM_HANDLER || mh.msg_flags & MSG_TRUNC) {
		printf("recv: message without AM fields or truncated\n");
		return ++ck->errors > 10 ? -1 : 1;
	}
	for (i = 0; i < ck->nsrc; i++)
		if (ck->srcs[i].node == from.sgrim_node &&
		    ck->srcs[i].port == from.sgrim_port)
			s = &ck->srcs[i];
	if (!s) {
		if (ck->nsrc == MAX_SRC) {
			printf("recv: too many sources\n");
			return -1;
		}
		s = &ck->srcs[ck->nsrc++];
		s->node = from.sgrim_node;
		s->port = from.sgrim_port;
		s->seed = am->arg[3];
		s->next = 0;
	}
	if (gaps_ok && am->arg[0] > s->next) {
		for (i = s->next; i < am->arg[0]; i++)
			printf("missing %u:%u\n", s->port, i);
		missing += am->arg[0] - s->next;
	} else if (am->arg[0] != s->next) {
		printf("recv: %u:%u sent seq %u, expected %u (%s)\n",
		       s->node, s->port, am->arg[0], s->next,
		       am->arg[0] < s->next ? "duplicate or reordered" : "lost");
		ck->errors++;
	}
	s->next = am->arg[0] + 1;
	fill(ck->want, am->arg[1], am->arg[3], am->arg[0]);
	if ((uint32_t)n != am->arg[1] || fnv(ck->buf, n) != am->arg[2] ||
	    memcmp(ck->buf, ck->want, n)) {
		printf("recv: %u:%u seq %u: content mismatch (len %zd/%u)\n",
		       s->node, s->port, am->arg[0], n, am->arg[1]);
		ck->errors++;
	}
	ck->got++;
	ck->bytes += n;
	s->bytes += n;
	return ck->errors > 10 ? -1 : 1;
}

static void checker_report(struct checker *ck, uint64_t t0)
{
	uint32_t i;

	printf("recv: %u msgs, %llu bytes from %u sources in %llu ms, %u errors\n",
	       ck->got, (unsigned long long)ck->bytes, ck->nsrc,
	       (unsigned long long)(now_ms() - t0), ck->errors);
	for (i = 0; i < ck->nsrc; i++)
		printf("recv:   source %u:%u: %u msgs in order, %llu bytes\n",
		       ck->srcs[i].node, ck->srcs[i].port, ck->srcs[i].next,
		       (unsigned long long)ck->srcs[i].bytes);
}

static int do_recv(int argc, char **argv)
{
	int timeout_s = 60, slow_us = 0, rcvbuf = 0, opt, fd, rc;
	static struct checker ck;
	uint64_t t0, deadline, t_first = 0;
	uint32_t total = 0, for_s = 0;
	uint16_t port = 0;

	while ((opt = getopt(argc, argv, "p:n:t:s:r:gT:")) != -1) {
		switch (opt) {
		case 'T': for_s = strtoul(optarg, NULL, 0); break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'n': total = strtoul(optarg, NULL, 0); break;
		case 't': timeout_s = atoi(optarg); break;
		case 's': slow_us = atoi(optarg); break;
		case 'r': rcvbuf = atoi(optarg); break;
		case 'g': gaps_ok = 1; break;
		default: return 2;
		}
	}
	if (!port || !total) {
		fprintf(stderr, "recv: -p and -n are required\n");
		return 2;
	}
	checker_init(&ck);
	fd = open_sock(port, rcvbuf);
	printf("recv: listening on port %u\n", port);
	fflush(stdout);
	t0 = now_ms();
	deadline = t0 + timeout_s * 1000ull;

	/* With gaps allowed, -n counts messages received or missing. */
	while (for_s || ck.got + missing < total) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)(deadline - now_ms());

		if (for_s && ck.got && !t_first) {
			t_first = now_ms();
			deadline = t_first + for_s * 1000ull;
			left = (int)(deadline - now_ms());
		}
		if (for_s && t_first && left <= 0)
			break;
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			if (for_s && t_first)
				break;
			printf("recv: timeout after %u of %u msgs\n", ck.got,
			       total);
			return 1;
		}
		rc = recv_check(fd, &ck);
		if (rc < 0)
			return 1;
		if (rc && slow_us)
			usleep(slow_us);
	}
	checker_report(&ck, t_first ? t_first : t0);
	if (gaps_ok)
		printf("recv: %u missing\n", missing);
	return ck.errors ? 1 : 0;
}

/* Both ways on one socket: send COUNT messages to NODE:PEER while
 * receiving and checking COUNT from that peer, driven by poll() alone
 * (non-blocking sends that wait for POLLOUT).
 */
static int do_duplex(int argc, char **argv)
{
	uint32_t node = 0, count = 1000, min = 0, max = 1024, seed = 1;
	uint32_t sent = 0, len = 0, have = UINT32_MAX;
	uint16_t port = 0, peer = 0;
	static struct checker ck;
	const char *go = NULL;
	unsigned long eagain = 0;
	uint64_t t0, deadline;
	int timeout_s = 120, opt, fd;
	uint8_t *buf;

	while ((opt = getopt(argc, argv, "d:p:P:n:m:M:S:t:g:")) != -1) {
		switch (opt) {
		case 'd': node = strtoul(optarg, NULL, 0); break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'P': peer = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': min = strtoul(optarg, NULL, 0); break;
		case 'M': max = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 't': timeout_s = atoi(optarg); break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	if (!port || !peer || max < min || max > GRIM_MAX_PAYLOAD) {
		fprintf(stderr, "duplex: bad arguments\n");
		return 2;
	}
	checker_init(&ck);
	buf = malloc(GRIM_MAX_PAYLOAD);
	fd = open_sock(port, 0);
	srand(seed);
	t0 = now_ms();
	deadline = t0 + timeout_s * 1000ull;
	/* Messages to a port nobody has bound are dropped: with -g, start
	 * when FILE exists (the caller makes it once both ends are bound).
	 */
	while (go && access(go, F_OK)) {
		if (now_ms() > deadline) {
			printf("duplex: %s never appeared\n", go);
			return 1;
		}
		usleep(10000);
	}
	while (sent < count || ck.got < count) {
		struct pollfd p = {
			.fd = fd,
			.events = POLLIN | (sent < count ? POLLOUT : 0),
		};
		int left = (int)(deadline - now_ms()), rc;
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0) {
			printf("duplex: timeout: sent %u, received %u of %u\n",
			       sent, ck.got, count);
			return 1;
		}
		if (p.revents & POLLIN) {
			rc = recv_check(fd, &ck);
			if (rc < 0)
				return 1;
		}
		if (!(p.revents & POLLOUT) || sent == count)
			continue;
		if (have != sent) {
			len = min + (max > min ? (uint32_t)rand() % (max - min + 1) : 0);
			fill(buf, len, seed, sent);
			have = sent;
		}
		n = send_one(fd, node, peer, buf, len, seed, sent, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN ||
			      (errno == EHOSTUNREACH && !sent && !ck.got))) {
			eagain += errno == EAGAIN;
			if (errno == EHOSTUNREACH)
				usleep(50000);
			continue;
		}
		if (n != (ssize_t)len) {
			printf("duplex: send %u: %s\n", sent,
			       n < 0 ? strerror(errno) : "short");
			return 1;
		}
		sent++;
	}
	printf("duplex: sent %u msgs to %u:%u, %lu EAGAIN\n", sent, node, peer,
	       eagain);
	checker_report(&ck, t0);
	return ck.errors || ck.nsrc != 1 ? 1 : 0;
}

/* mesh: one socket, all-to-all over nodes FIRST..LAST.  A node not yet
 * discovered (EHOSTUNREACH before its first message) is tried again
 * later; a message that fails after it was sent ends the run.
 */
static int do_mesh(int argc, char **argv)
{
	uint32_t first = 0, last = 0, self = 0, count = 100, min = 0;
	uint32_t max = 1024, seed = 1, nd = 0, d = 0, done = 0, i;
	uint32_t *dst, *sent;
	uint64_t *later, t0, deadline;
	unsigned long eagain = 0;
	static struct checker ck;
	const char *go = NULL;
	int timeout_s = 300, opt, fd, bad = 0;
	uint16_t port = 0;
	uint8_t *buf;

	while ((opt = getopt(argc, argv, "p:N:s:n:m:M:S:t:g:")) != -1) {
		switch (opt) {
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'N':
			if (sscanf(optarg, "%u-%u", &first, &last) != 2)
				return 2;
			break;
		case 's': self = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': min = strtoul(optarg, NULL, 0); break;
		case 'M': max = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 't': timeout_s = atoi(optarg); break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	if (!port || !first || last < first || last - first >= MAX_SRC ||
	    max < min || max > GRIM_MAX_PAYLOAD) {
		fprintf(stderr, "mesh: bad arguments\n");
		return 2;
	}
	dst = calloc(last - first + 1, sizeof(*dst));
	sent = calloc(last - first + 1, sizeof(*sent));
	later = calloc(last - first + 1, sizeof(*later));
	buf = malloc(GRIM_MAX_PAYLOAD);
	if (!dst || !sent || !later || !buf) {
		perror("malloc");
		return 2;
	}
	for (i = first; i <= last; i++)
		if (i != self)
			dst[nd++] = i;
	checker_init(&ck);
	fd = open_sock(port, 0);
	srand(seed);
	t0 = now_ms();
	deadline = t0 + timeout_s * 1000ull;
	while (go && access(go, F_OK)) {
		if (now_ms() > deadline) {
			printf("mesh: %s never appeared\n", go);
			return 1;
		}
		usleep(10000);
	}
	while (done < nd || ck.got < count * nd) {
		struct pollfd p = {
			.fd = fd,
			.events = POLLIN | (done < nd ? POLLOUT : 0),
		};
		int left = (int)(deadline - now_ms()), rc;
		uint32_t len, k;
		uint16_t eport;
		ssize_t n;
		int err;

		if (left <= 0 || poll(&p, 1, left > 50 ? 50 : left) < 0) {
			printf("mesh: timeout: %u of %u destinations done, received %u of %u\n",
			       done, nd, ck.got, count * nd);
			for (k = 0; k < nd; k++)
				if (sent[k] < count)
					printf("mesh:   node %u: sent %u\n", dst[k], sent[k]);
			checker_report(&ck, t0);
			return 1;
		}
		if (p.revents & POLLERR &&
		    errq_read(fd, &eport, &k, &err, &len) > 0) {
			printf("mesh: message %u failed: %s (errno %d)\n", k,
			       strerror(err), err);
			return 1;
		}
		if (p.revents & POLLIN) {
			do {
				rc = recv_check(fd, &ck);
				if (rc < 0)
					return 1;
			} while (rc > 0);
		}
		if (!(p.revents & POLLOUT) || done == nd)
			continue;
		/* the next destination with something left to send */
		for (k = 0; k < nd; k++, d = (d + 1) % nd)
			if (sent[d] < count && later[d] <= now_ms())
				break;
		if (k == nd) {		/* only nodes not discovered yet */
			usleep(10000);
			continue;
		}
		len = min + (max > min ? (uint32_t)rand() % (max - min + 1) : 0);
		fill(buf, len, seed, sent[d]);
		n = send_one(fd, dst[d], port, buf, len, seed, sent[d],
			     MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN) {
			eagain++;
			continue;
		}
		if (n < 0 && errno == EHOSTUNREACH && !sent[d]) {
			later[d] = now_ms() + 50;
			d = (d + 1) % nd;
			continue;
		}
		if (n != (ssize_t)len) {
			printf("mesh: send %u to node %u: %s\n", sent[d], dst[d],
			       n < 0 ? strerror(errno) : "short");
			return 1;
		}
		if (++sent[d] == count)
			done++;
		d = (d + 1) % nd;
	}
	printf("mesh: node %u sent %u msgs to each of %u nodes, %lu EAGAIN\n",
	       self, count, nd, eagain);
	checker_report(&ck, t0);
	for (i = 0; i < ck.nsrc; i++)
		if (ck.srcs[i].next != count || ck.srcs[i].port != port)
			bad++;
	return ck.errors || ck.nsrc != nd || bad ? 1 : 0;
}

static int do_bound(int argc, char **argv)
{
	struct sockaddr_grim a = { .sgrim_family = AF_GRIM };
	int opt, fd, rc;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return 2;
		a.sgrim_port = strtoul(optarg, NULL, 0);
	}
	fd = socket(AF_GRIM, SOCK_RDM, 0);
	if (fd < 0 || !a.sgrim_port)
		return 2;
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return rc && errno == EADDRINUSE ? 0 : 1;
}

static int do_wedge(int argc, char **argv)
{
	uint32_t node = 0, other = 0, i;
	uint16_t port = 0;
	uint64_t t0;
	uint8_t *buf;
	ssize_t n;
	int opt, fd;

	while ((opt = getopt(argc, argv, "d:p:e:")) != -1) {
		switch (opt) {
		case 'd': node = strtoul(optarg, NULL, 0); break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'e': other = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!node || !port || !other)
		return 2;
	buf = malloc(64000);
	fd = open_sock(0, 0);
	t0 = now_ms();
	for (i = 0; ; i++) {
		fill(buf, 64000, 1, i);
		n = send_one(fd, node, port, buf, 64000, 1, i, MSG_DONTWAIT);
		/*
		 * Full only when it stays full: the receiver may still take
		 * one message before it stops reading, and its ACK frees room.
		 */
		if (n < 0 && errno == EAGAIN) {
			usleep(500000);
			fill(buf, 64000, 1, i);
			n = send_one(fd, node, port, buf, 64000, 1, i,
				     MSG_DONTWAIT);
			if (n < 0 && errno == EAGAIN)
				break;
		}
		if (n < 0 && errno == EHOSTUNREACH && !i &&
		    now_ms() - t0 < 10000) {
			usleep(50000);
			i--;
			continue;
		}
		if (n < 0) {
			printf("wedge: send %u to %u failed: %s\n", i, node,
			       strerror(errno));
			return 1;
		}
	}
	printf("wedged after %u msgs\n", i);
	fflush(stdout);
	t0 = now_ms();
	n = send_one(fd, other, port, buf, 64000, 1, 0, 0);
	printf("wedge: send to %u returned %zd after %llu ms: %s (errno %d)\n",
	       other, n, (unsigned long long)(now_ms() - t0),
	       n < 0 ? strerror(errno) : "ok", n < 0 ? errno : 0);
	return 0;
}

/* The first LEN bytes of the payload of message SEQ of a sender seeded
 * SEED, in hex: what a sniffer looks for.
 */
static int do_pattern(int argc, char **argv)
{
	uint32_t seed = 1, seq = 0, len = 64, i;
	uint8_t *buf;
	int opt;

	while ((opt = getopt(argc, argv, "S:n:l:")) != -1) {
		switch (opt) {
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 'n': seq = strtoul(optarg, NULL, 0); break;
		case 'l': len = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (len > GRIM_MAX_PAYLOAD)
		return 2;
	buf = malloc(len + 8);
	fill(buf, len, seed, seq);
	for (i = 0; i < len; i++)
		printf("%02x", buf[i]);
	printf("\n");
	return 0;
}

static int do_errq(int argc, char **argv)
{
	uint32_t node = 0, count = 1, min = 0, max = 100, i, seq, len;
	uint32_t nfail = 0, expect = 0, next[2] = { 0, 0 };
	uint16_t port[2] = { 0, 0 }, p, bport = 0;
	int wait_ms = 10000, gap_us = 0, opt, fd, err, k, rc;
	uint8_t *seen[2], *buf;
	uint64_t last;

	while ((opt = getopt(argc, argv, "d:p:q:n:m:M:w:x:i:b:")) != -1) {
		switch (opt) {
		case 'i': gap_us = atoi(optarg); break;
		case 'b': bport = strtoul(optarg, NULL, 0); break;
		case 'd': node = strtoul(optarg, NULL, 0); break;
		case 'p': port[0] = strtoul(optarg, NULL, 0); break;
		case 'q': port[1] = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': min = strtoul(optarg, NULL, 0); break;
		case 'M': max = strtoul(optarg, NULL, 0); break;
		case 'w': wait_ms = atoi(optarg); break;
		case 'x': expect = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!port[0] || max < min || max > GRIM_MAX_PAYLOAD)
		return 2;
	buf = malloc(GRIM_MAX_PAYLOAD);
	seen[0] = calloc(count + 1, 1);
	seen[1] = calloc(count + 1, 1);
	fd = open_sock(bport, 0);
	srand(1);
	for (i = 0; i < count; i++) {
		k = port[1] && (i & 1);
		len = min + (max > min ? (uint32_t)rand() % (max - min + 1) : 0);
		fill(buf, len, 1, next[k]);
		if (send_one(fd, node, port[k], buf, len, 1, next[k], 0) < 0) {
			printf("errq: send %u to port %u: %s (errno %d)\n", i,
			       port[k], strerror(errno), errno);
			return 1;
		}
		next[k]++;
		if (gap_us)
			usleep(gap_us);
	}
	printf("errq: sent %u to port %u, %u to port %u\n", next[0], port[0],
	       next[1], port[1]);
	last = now_ms();
	while (now_ms() - last < (uint64_t)wait_ms && (!expect || nfail < expect)) {
		struct pollfd pf = { .fd = fd, .events = 0 };

		rc = errq_read(fd, &p, &seq, &err, &len);
		if (rc < 0)
			return 1;
		if (!rc) {
			poll(&pf, 1, 100);
			continue;
		}
		k = p == port[0] ? 0 : p == port[1] ? 1 : -1;
		if (k < 0 || seq >= next[k] || seen[k][seq]) {
			printf("errq: report of port %u seq %u: %s\n", p, seq,
			       k < 0 || seq >= next[k] ? "never sent" : "twice");
			return 1;
		}
		seen[k][seq] = 1;
		nfail++;
		printf("failed %u:%u errno %d len %u\n", p, seq, err, len);
		last = now_ms();
	}
	/* Anything more would be a report too many. */
	usleep(200000);
	while ((rc = errq_read(fd, &p, &seq, &err, &len)) > 0) {
		printf("errq: one report too many: port %u seq %u\n", p, seq);
		return 1;
	}
	if (expect && nfail < expect) {
		/* Short: say which case it is.  A pending socket error
		 * (ENOBUFS) means reports were dropped; bytes still queued
		 * mean messages not yet failed.
		 */
		socklen_t sl = sizeof(err);
		int outq = -1, shown = 0;

		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl))
			err = -errno;
		if (ioctl(fd, SIOCOUTQ, &outq))
			outq = -1;
		printf("errq: short: SO_ERROR %d, SIOCOUTQ %d\n", err, outq);
		/* PORT's messages are the ones expected to fail. */
		for (i = 0; i < next[0] && shown < 20; i++) {
			if (seen[0][i])
				continue;
			printf("errq: no report: port %u seq %u\n", port[0], i);
			shown++;
		}
	}
	printf("errq: %u failed\n", nfail);
	return 0;
}

static int do_echo(int argc, char **argv)
{
	static uint8_t buf[GRIM_MAX_PAYLOAD];
	struct sockaddr_grim from;
	unsigned int secs = 600;
	uint16_t port = 0;
	uint64_t end, n = 0, lost = 0;
	int opt, fd, rcvbuf = 4 << 20;
	socklen_t fl;
	ssize_t r;

	while ((opt = getopt(argc, argv, "p:t:r:")) != -1) {
		switch (opt) {
		case 'r':
			rcvbuf = atoi(optarg);
			break;
		case 'p':
			port = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!port)
		return 2;
	fd = open_sock(port, rcvbuf);
	end = now_ms() + secs * 1000ull;
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		fl = sizeof(from);
		r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &fl);
		if (r < 0) {
			if (errno == ENOBUFS)
				continue;	/* a report was lost: above */
			perror("echo: recvfrom");
			return 1;
		}
		if (sendto(fd, buf, r, 0, (struct sockaddr *)&from, fl) != r) {
			if (errno != ENOBUFS && errno != EHOSTUNREACH) {
				perror("echo: sendto");
				return 1;
			}
			lost++;
		} else {
			n++;
		}
		/* An answer to a socket that is gone fails later, on the
		 * error queue: drop such reports, they are not news here.
		 */
		while (recv(fd, buf, sizeof(buf), MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
			lost++;
	}
	printf("echo: %llu messages answered, %llu answers lost\n",
	       (unsigned long long)n, (unsigned long long)lost);
	return 0;
}

/* One short-lived socket: a request to @node:@port and its echo. */
static int churn_one(uint32_t node, uint16_t port, uint32_t seed,
		     uint32_t i, int timeout_s)
{
	uint8_t req[512], ans[600];
	struct sockaddr_grim to = {
		.sgrim_family = AF_GRIM, .sgrim_node = node, .sgrim_port = port,
	};
	struct sockaddr_grim from;
	struct pollfd pfd;
	uint32_t len = 16 + (seed + i * 2654435761u) % 400;
	socklen_t fl = sizeof(from);
	ssize_t r;
	int fd, err = 0;

	fill(req, len, seed, i);
	fd = open_sock(0, 0);
	if (bind(fd, (struct sockaddr *)&(struct sockaddr_grim){
			.sgrim_family = AF_GRIM }, sizeof(to))) {
		fprintf(stderr, "churn %u: bind: %s\n", i, strerror(errno));
		close(fd);
		return 1;
	}
	if (sendto(fd, req, len, 0, (struct sockaddr *)&to, sizeof(to)) !=
	    (ssize_t)len) {
		fprintf(stderr, "churn %u: sendto: %s\n", i, strerror(errno));
		close(fd);
		return 1;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, timeout_s * 1000) != 1) {
		fprintf(stderr, "churn %u: no answer in %d s\n", i, timeout_s);
		err = 1;
		goto out;
	}
	if (!(pfd.revents & POLLIN)) {
		/* A failure report: the request was not delivered. */
		fprintf(stderr, "churn %u: the request failed (poll %#x)\n", i,
			pfd.revents);
		err = 1;
		goto out;
	}
	r = recvfrom(fd, ans, sizeof(ans), 0, (struct sockaddr *)&from, &fl);
	if (r < 0) {
		fprintf(stderr, "churn %u: recvfrom: %s\n", i, strerror(errno));
		err = 1;
	} else if (r != (ssize_t)len || memcmp(ans, req, len) ||
		   from.sgrim_node != node || from.sgrim_port != port) {
		fprintf(stderr, "churn %u: wrong answer (%zd bytes from %u:%u)\n",
			i, r, from.sgrim_node, from.sgrim_port);
		err = 1;
	}
out:
	close(fd);
	return err;
}

static int do_churn(int argc, char **argv)
{
	uint32_t node = 0, count = 0, seed = 1, jobs = 1, j, i;
	int opt, timeout_s = 60, status, bad = 0;
	uint16_t port = 0;
	uint64_t t0 = now_ms();
	pid_t pid;

	while ((opt = getopt(argc, argv, "d:p:n:j:S:t:")) != -1) {
		switch (opt) {
		case 'd':
			node = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			port = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			jobs = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 't':
			timeout_s = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!node || !port || !count || !jobs)
		return 2;
	for (j = 0; j < jobs; j++) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid)
			continue;
		for (i = j; i < count; i += jobs)
			if (churn_one(node, port, seed, i, timeout_s))
				_exit(1);
		_exit(0);
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	if (bad) {
		fprintf(stderr, "churn: %d of %u jobs failed\n", bad, jobs);
		return 1;
	}
	printf("churn: %u round trips ok in %llu ms\n", count,
	       (unsigned long long)(now_ms() - t0));
	return 0;
}

struct fan_sock {
	int fd;
	uint32_t seq;		/* of the request out, or to send */
	uint32_t echoed;	/* requests echoed, +1: 0 none yet */
	uint8_t out;		/* a request is out */
	uint8_t after;		/* echoed since the first report */
	int err;		/* of the last sendto that failed */
	uint64_t sent;		/* ms: when it went */
};

/* The errno of one report on @fd's error queue, 0 if there is none. */
static int fan_report(int fd)
{
	char cbuf[512];
	struct msghdr mh = { .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_GRIM && c->cmsg_type == GRIM_RECVERR)
			return ((struct sock_extended_err *)CMSG_DATA(c))->ee_errno;
	return -1;
}

static int do_fan(int argc, char **argv)
{
	unsigned long echoes = 0, reports = 0, resets = 0, late = 0;
	unsigned long timeouts = 0, after = 0, socks_after = 0;
	uint32_t node = 0, n = 0, len = 200, secs = 30, i, seq, plen;
	struct sockaddr_grim to = { .sgrim_family = AF_GRIM };
	uint64_t t0, now, last_echo, gap = 0, next_print, giveup = 5000;
	uint64_t end_after = 0, all_after = 0;
	static uint8_t buf[4096], ans[4096];
	struct pollfd *pfd;
	struct fan_sock *fs;
	int opt, err;
	ssize_t r;

	while ((opt = getopt(argc, argv, "d:p:n:T:l:G:E:")) != -1) {
		switch (opt) {
		case 'd':
			node = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			to.sgrim_port = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			secs = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			len = strtoul(optarg, NULL, 0);
			break;
		case 'G':
			giveup = strtoull(optarg, NULL, 0);
			break;
		case 'E':
			end_after = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	to.sgrim_node = node;
	if (!node || !to.sgrim_port || !n || len < 8 || len > sizeof(buf) ||
	    !giveup)
		return 2;
	fs = calloc(n, sizeof(*fs));
	pfd = calloc(n, sizeof(*pfd));
	if (!fs || !pfd)
		return 2;
	for (i = 0; i < n; i++) {
		struct sockaddr_grim a = { .sgrim_family = AF_GRIM };

		fs[i].fd = open_sock(0, 0);
		if (bind(fs[i].fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("fan: bind");
			return 2;
		}
		pfd[i].fd = fs[i].fd;
	}
	t0 = now_ms();
	last_echo = t0;
	next_print = t0 + 1000;
	for (;;) {
		now = now_ms();
		if (now - t0 >= secs * 1000ull)
			break;
		if (end_after && all_after && now - all_after >= end_after)
			break;
		if (now >= next_print) {
			printf("fan: %llu s: echoes %lu, reports %lu\n",
			       (unsigned long long)(now - t0) / 1000, echoes,
			       reports);
			fflush(stdout);
			next_print += 1000;
		}
		for (i = 0; i < n; i++) {
			if (fs[i].out)
				continue;
			/* The request names its socket and number. */
			memcpy(buf, &i, 4);
			memcpy(buf + 4, &fs[i].seq, 4);
			fill(buf + 8, len - 8, i, fs[i].seq);
			if (sendto(fs[i].fd, buf, len, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len) {
				fs[i].out = 1;
				fs[i].sent = now;
				fs[i].err = 0;
				continue;
			}
			fs[i].err = errno;
			if (errno != EAGAIN && errno != EHOSTUNREACH &&
			    errno != ENOBUFS) {
				fprintf(stderr, "fan: sendto: %s\n", strerror(errno));
				return 1;
			}
		}
		for (i = 0; i < n; i++)
			pfd[i].events = POLLIN;
		if (poll(pfd, n, 20) < 0) {
			perror("fan: poll");
			return 1;
		}
		now = now_ms();
		for (i = 0; i < n; i++) {
			if (pfd[i].revents & POLLERR) {
				while ((err = fan_report(fs[i].fd))) {
					reports++;
					resets += err == ECONNRESET;
					/* the report is of the request out */
					if (fs[i].out) {
						fs[i].out = 0;
						fs[i].seq++;
					}
				}
			}
			/* Taken, but its answer was lost: an echo server whose
			 * link went away drops what it cannot send.  Give up
			 * waiting for it, as a program would.
			 */
			if (fs[i].out && now - fs[i].sent > giveup) {
				timeouts++;
				fs[i].out = 0;
				fs[i].seq++;
			}
			if (!(pfd[i].revents & POLLIN))
				continue;
			r = recv(fs[i].fd, ans, sizeof(ans), MSG_DONTWAIT);
			if (r < 0)
				continue;
			memcpy(&seq, ans + 4, 4);
			plen = r;
			fill(buf + 8, len - 8, i, seq);
			if (plen != len || memcmp(ans, &i, 4) ||
			    memcmp(ans + 8, buf + 8, len - 8)) {
				fprintf(stderr, "fan: socket %u: a wrong echo\n", i);
				return 1;
			}
			if (seq + 1 <= fs[i].echoed || seq > fs[i].seq) {
				fprintf(stderr, "fan: socket %u: echo of request %u again (or never sent); %u echoed\n",
					i, seq, fs[i].echoed);
				return 1;
			}
			fs[i].echoed = seq + 1;
			now = now_ms();
			if (now - last_echo > gap)
				gap = now - last_echo;
			last_echo = now;
			echoes++;
			after += reports > 0;
			if (reports && !fs[i].after) {
				fs[i].after = 1;
				if (++socks_after == n)
					all_after = now;
			}
			if (seq == fs[i].seq && fs[i].out) {
				fs[i].out = 0;
				fs[i].seq++;
			} else {
				late++;	/* reported failed, but it got there */
			}
		}
	}
	if (now_ms() - last_echo > gap)
		gap = now_ms() - last_echo;
	/* What a socket with no echo since the first report was doing. */
	now = now_ms();
	for (i = 0, r = 0; reports && i < n && r < 10; i++) {
		if (fs[i].after)
			continue;
		r++;
		fprintf(stderr, "fan: socket %u: no echo since the first report: request %u %s %llu ms ago, %u echoed, last sendto error %s\n",
			i, fs[i].seq, fs[i].out ? "out, sent" : "not out, last sent",
			(unsigned long long)(now - fs[i].sent), fs[i].echoed,
			fs[i].err ? strerror(fs[i].err) : "none");
	}
	printf("fan: %u sockets, %lu echoes, %lu reports (%lu ECONNRESET), %lu late echoes, %lu given up, %lu echoes after the first report, to %lu sockets, longest gap %llu ms\n",
	       n, echoes, reports, resets, late, timeouts, after, socks_after,
	       (unsigned long long)gap);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: grim_rdm send|recv [options]\n");
		return 2;
	}
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "duplex"))
		return do_duplex(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mesh"))
		return do_mesh(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bound"))
		return do_bound(argc - 1, argv + 1);
	if (!strcmp(argv[1], "wedge"))
		return do_wedge(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pattern"))
		return do_pattern(argc - 1, argv + 1);
	if (!strcmp(argv[1], "errq"))
		return do_errq(argc - 1, argv + 1);
	if (!strcmp(argv[1], "echo"))
		return do_echo(argc - 1, argv + 1);
	if (!strcmp(argv[1], "churn"))
		return do_churn(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fan"))
		return do_fan(argc - 1, argv + 1);
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return 2;
}
