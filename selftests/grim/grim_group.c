// SPDX-License-Identifier: GPL-2.0
/*
 * grim_group: AF_GRIM group traffic for the selftests.
 *
 *   grim_group recv -g GROUP [-g GROUP...] -o PREFIX [-T SECONDS]
 *                   [-r RCVBUF] [-s SLOW_US]
 *
 * Joins every GROUP (setsockopt GRIM_JOIN; it returns once the local NI
 * is in the group's tree), prints "joined" and then receives until
 * SIGTERM or SIGINT (or for SECONDS, default 600).  Every message must
 * come through one of its groups, carry the control message GRIM_GROUP
 * with the same group, and have a ticket after the last one of that
 * group; its payload must be the one its active-message arguments
 * describe, and no (sender, sequence) may come twice.  Each group's
 * messages are logged to PREFIX.GROUP, one "NODE:PORT:SEQ" line each, in
 * the order received: members of a group compare those files.  At the
 * end it prints "recv: group G: N msgs" per group and exits 1 if any
 * check failed.
 *
 *   grim_group send -g GROUP -n COUNT [-m MIN] [-M MAX] [-S SEED]
 *                   [-i GAP_US] [-j JOIN]
 *
 * Sends COUNT messages to GROUP (sizes MIN..MAX, default 1..2000), each
 * with (sequence, length, content hash, seed) in its active-message
 * arguments, then prints "sent N".  -j joins group JOIN first (a sender
 * that is also a member).  Fails on the first error.
 *
 *   grim_group churn -g FIRST -n COUNT
 *
 * One socket joins and leaves the groups FIRST .. FIRST + COUNT - 1, one
 * after the other, then prints "churned COUNT"; a join that fails is
 * reported with its errno and ends it (exit 1).
 *
 *   grim_group fill -g FIRST -n COUNT [-H SECONDS]
 *
 * Joins the groups FIRST .. FIRST + COUNT - 1 and stays in them, as many
 * sockets as that takes, until a join fails or all are joined; prints
 * "joined N" and, after a failure, "join G: ERROR", then "holding" and
 * SECONDS later (default 0) leaves them all (closes the sockets) and
 * exits 0.
 *
 *   grim_group bad
 *
 * The errors of bad requests: every line "ok ..." or "FAIL ...", exit 1
 * on any FAIL.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/grim.h>

#ifndef SOCK_RDM
#define SOCK_RDM 4
#endif

#define MAX_GROUPS	16
#define MAX_SEEN	(1 << 20)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "grim_group: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* Payload byte i of message (seed, seq). */
static uint8_t pat(uint32_t seed, uint32_t seq, uint32_t i)
{
	return (uint8_t)mix(seed * 2654435761u + seq * 40503u + (i >> 2)) >>
	       (8 * (i & 3));
}

static uint32_t hash_of(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u, i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int sock_new(void)
{
	int fd = socket(AF_GRIM, SOCK_RDM, 0);

	if (fd < 0)
		die("socket");
	return fd;
}

static void join(int fd, uint32_t g)
{
	if (setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)))
		die("GRIM_JOIN");
}

struct seen {
	uint32_t node, port, seq;
};

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static int do_recv(int argc, char **argv)
{
	uint32_t groups[MAX_GROUPS], last[MAX_GROUPS], n[MAX_GROUPS] = { 0 };
	int ng = 0, opt, fd, i, bad = 0, secs = 600, rcvbuf = 0, slow = 0;
	FILE *logs[MAX_GROUPS];
	struct seen *seen;
	size_t nseen = 0;
	const char *prefix = NULL;
	static uint8_t buf[GRIM_MAX_PAYLOAD + 1];
	char cbuf[256], name[4096];
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	time_t end;

	while ((opt = getopt(argc, argv, "g:o:T:r:s:")) != -1) {
		switch (opt) {
		case 'g':
			if (ng == MAX_GROUPS)
				return 2;
			groups[ng++] = strtoul(optarg, NULL, 0);
			break;
		case 'o': prefix = optarg; break;
		case 'T': secs = atoi(optarg); break;
		case 'r': rcvbuf = atoi(optarg); break;
		case 's': slow = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!ng || !prefix)
		return 2;
	seen = calloc(MAX_SEEN, sizeof(*seen));
	if (!seen)
		die("calloc");
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fd = sock_new();
	if (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				 sizeof(rcvbuf)))
		die("SO_RCVBUF");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO");
	for (i = 0; i < ng; i++) {
		join(fd, groups[i]);
		snprintf(name, sizeof(name), "%s.%u", prefix, groups[i]);
		logs[i] = fopen(name, "w");
		if (!logs[i])
			die(name);
		/* Read while it runs: a line is there once it is received. */
		setvbuf(logs[i], NULL, _IOLBF, 0);
	}
	printf("joined\n");
	fflush(stdout);

	end = time(NULL) + secs;
	while (!stop && time(NULL) < end) {
		struct sockaddr_grim from;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct grim_group_info gi = { 0 };
		struct grim_am am = { 0 };
		int have_gi = 0, have_am = 0, k;
		struct cmsghdr *c;
		uint32_t j;
		ssize_t len;

		len = recvmsg(fd, &m, 0);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recvmsg");
		}
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != SOL_GRIM)
				continue;
			if (c->cmsg_type == GRIM_GROUP) {
				memcpy(&gi, CMSG_DATA(c), sizeof(gi));
				have_gi = 1;
			} else if (c->cmsg_type == GRIM_AM) {
				memcpy(&am, CMSG_DATA(c), sizeof(am));
				have_am = 1;
			}
		}
		for (k = 0; k < ng && groups[k] != from.sgrim_group; k++)
			;
		if (k == ng || !have_gi || !have_am ||
		    gi.group != from.sgrim_group) {
			fprintf(stderr, "recv: a message not through a group of ours (group %u, cmsg %d %u)\n",
				from.sgrim_group, have_gi, gi.group);
			bad++;
			continue;
		}
		if (n[k] && (int32_t)(gi.ticket - last[k]) <= 0) {
			fprintf(stderr, "recv: group %u: ticket %u after %u\n",
				groups[k], gi.ticket, last[k]);
			bad++;
		}
		last[k] = gi.ticket;
		if ((uint32_t)len != am.arg[1] ||
		    hash_of(buf, len) != am.arg[2]) {
			fprintf(stderr, "recv: group %u: %u:%u seq %u: length or hash wrong\n",
				groups[k], from.sgrim_node, from.sgrim_port,
				am.arg[0]);
			bad++;
		}
		for (j = 0; j < (uint32_t)len; j++) {
			if (buf[j] != pat(am.arg[3], am.arg[0], j)) {
				fprintf(stderr, "recv: %u:%u seq %u: byte %u wrong\n",
					from.sgrim_node, from.sgrim_port,
					am.arg[0], j);
				bad++;
				break;
			}
		}
		if (nseen < MAX_SEEN) {
			/* the group in the high bits of node: per group */
			seen[nseen].node = from.sgrim_node;
			seen[nseen].port = from.sgrim_port | (uint32_t)k << 16;
			seen[nseen].seq = am.arg[0];
			nseen++;
		}
		fprintf(logs[k], "%u:%u:%u\n", from.sgrim_node,
			from.sgrim_port, am.arg[0]);
		n[k]++;
		if (slow)
			usleep(slow);
	}
	qsort(seen, nseen, sizeof(*seen), cmp_seen);
	for (i = 1; i < (int)nseen; i++) {
		if (!cmp_seen(&seen[i - 1], &seen[i])) {
			fprintf(stderr, "recv: %u:%u seq %u came twice\n",
				seen[i].node, seen[i].port & 0xffff,
				seen[i].seq);
			bad++;
		}
	}
	for (i = 0; i < ng; i++) {
		fclose(logs[i]);
		printf("recv: group %u: %u msgs\n", groups[i], n[i]);
	}
	if (bad)
		printf("recv: %d errors\n", bad);
	return bad ? 1 : 0;
}

static int do_send(int argc, char **argv)
{
	uint32_t group = 0, count = 100, min = 1, max = 2000, seed = 1, jg = 0;
	static uint8_t buf[GRIM_MAX_PAYLOAD];
	int opt, fd, gap = 0;
	uint32_t i, j, len;

	while ((opt = getopt(argc, argv, "g:n:m:M:S:i:j:")) != -1) {
		switch (opt) {
		case 'g': group = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': min = strtoul(optarg, NULL, 0); break;
		case 'M': max = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 'i': gap = atoi(optarg); break;
		case 'j': jg = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!group || min > max || max > GRIM_GROUP_MAX_PAYLOAD)
		return 2;
	fd = sock_new();
	if (jg)
		join(fd, jg);
	srand(seed);
	for (i = 0; i < count; i++) {
		struct sockaddr_grim to = {
			.sgrim_family = AF_GRIM, .sgrim_group = group,
		};
		char cbuf[CMSG_SPACE(sizeof(struct grim_am))] = { 0 };
		struct iovec iov = { buf, 0 };
		struct msghdr m = {
			.msg_name = &to, .msg_namelen = sizeof(to),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		struct grim_am am = { 0 };

		len = min + (uint32_t)rand() % (max - min + 1);
		for (j = 0; j < len; j++)
			buf[j] = pat(seed, i, j);
		iov.iov_len = len;
		am.handler = 7;
		am.arg[0] = i;
		am.arg[1] = len;
		am.arg[2] = hash_of(buf, len);
		am.arg[3] = seed;
		c->cmsg_level = SOL_GRIM;
		c->cmsg_type = GRIM_AM;
		c->cmsg_len = CMSG_LEN(sizeof(am));
		memcpy(CMSG_DATA(c), &am, sizeof(am));
		if (sendmsg(fd, &m, 0) != (ssize_t)len) {
			fprintf(stderr, "grim_group: send %u of %u: %s\n", i,
				count, strerror(errno));
			return 1;
		}
		if (gap)
			usleep(gap);
	}
	printf("sent %u\n", count);
	return 0;
}

/* churn and fill: -g FIRST -n COUNT [-H SECONDS]; false if either is
 * missing or the option unknown.
 */
static bool range_opts(int argc, char **argv, uint32_t *first,
		       uint32_t *count, uint32_t *hold)
{
	int c;

	while ((c = getopt(argc, argv, "g:n:H:")) != -1) {
		switch (c) {
		case 'g':
			*first = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			*count = strtoul(optarg, NULL, 0);
			break;
		case 'H':
			*hold = strtoul(optarg, NULL, 0);
			break;
		default:
			return false;
		}
	}
	return *first && *count;
}

static int do_churn(int argc, char **argv)
{
	uint32_t first = 0, count = 0, hold = 0, g;
	int fd;

	if (!range_opts(argc, argv, &first, &count, &hold))
		return 2;
	fd = sock_new();
	for (g = first; g < first + count; g++) {
		if (setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g))) {
			printf("join %u: %s\n", g, strerror(errno));
			return 1;
		}
		if (setsockopt(fd, SOL_GRIM, GRIM_LEAVE, &g, sizeof(g)))
			die("GRIM_LEAVE");
	}
	close(fd);
	printf("churned %u\n", count);
	return 0;
}

static int do_fill(int argc, char **argv)
{
	uint32_t first = 0, count = 0, g, n = 0, hold = 0;
	int *fds, nfd, i, fd = -1;

	if (!range_opts(argc, argv, &first, &count, &hold))
		return 2;
	nfd = (count + GRIM_GROUPS_PER_SOCKET - 1) / GRIM_GROUPS_PER_SOCKET;
	fds = calloc(nfd, sizeof(*fds));
	if (!fds)
		die("calloc");
	for (g = first; g < first + count; g++, n++) {
		if (n % GRIM_GROUPS_PER_SOCKET == 0) {
			fd = sock_new();
			fds[n / GRIM_GROUPS_PER_SOCKET] = fd;
		}
		if (setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g))) {
			printf("joined %u\njoin %u: %s\n", n, g,
			       strerror(errno));
			break;
		}
	}
	if (g == first + count)
		printf("joined %u\n", n);
	printf("holding\n");
	sleep(hold);
	for (i = 0; i < nfd; i++)
		if (fds[i] > 0)
			close(fds[i]);
	free(fds);
	return 0;
}

static int bad_count;

static void expect(const char *what, int rc, int want)
{
	if (want ? rc == -1 && errno == want : rc == 0) {
		printf("ok %s\n", what);
		return;
	}
	printf("FAIL %s: got %d (%s), expected %s\n", what, rc,
	       rc ? strerror(errno) : "success", want ? strerror(want) : "0");
	bad_count++;
}

static int do_bad(void)
{
	struct sockaddr_grim a = { .sgrim_family = AF_GRIM };
	static uint8_t buf[GRIM_MAX_PAYLOAD];
	int fd = sock_new(), fd2 = sock_new();
	uint32_t g;

	/* First: before this socket joins the broadcast group (last). */
	a.sgrim_group = GRIM_GROUP_ALL;
	expect("send to the broadcast group (no member: it goes nowhere)",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0, 0);
	g = 0;
	expect("join group 0: EINVAL",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), EINVAL);
	g = GRIM_GROUP_MAX + 1;
	expect("join a reserved id: EINVAL",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), EINVAL);
	expect("join with a short option: EINVAL",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, 2), EINVAL);
	g = 5000;
	expect("join group 5000",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), 0);
	expect("join it again: EADDRINUSE",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), EADDRINUSE);
	expect("leave it",
	       setsockopt(fd, SOL_GRIM, GRIM_LEAVE, &g, sizeof(g)), 0);
	expect("leave it again: EADDRNOTAVAIL",
	       setsockopt(fd, SOL_GRIM, GRIM_LEAVE, &g, sizeof(g)),
	       EADDRNOTAVAIL);
	for (g = 6000; g < 6000 + GRIM_GROUPS_PER_SOCKET; g++) {
		if (setsockopt(fd2, SOL_GRIM, GRIM_JOIN, &g, sizeof(g))) {
			printf("FAIL join %u of %u: %s\n", g - 6000 + 1,
			       GRIM_GROUPS_PER_SOCKET, strerror(errno));
			bad_count++;
			break;
		}
	}
	expect("one group past the limit: ENOBUFS",
	       setsockopt(fd2, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), ENOBUFS);

	a.sgrim_group = GRIM_GROUP_LINK;
	expect("send to the link's own group: EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_group = GRIM_GROUP_MAX + 1;
	expect("send to a reserved id: EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_group = 7000;
	a.sgrim_node = 1;
	expect("a group and a node: EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_node = 0;
	a.sgrim_reserved = 1;
	expect("reserved field set: EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_reserved = 0;
	expect("a group message too long: EMSGSIZE",
	       sendto(fd, buf, GRIM_GROUP_MAX_PAYLOAD + 1, 0, (void *)&a,
		      sizeof(a)) < 0 ? -1 : 0, EMSGSIZE);
	expect("bind to a group: EINVAL",
	       bind(fd, (void *)&a, sizeof(a)), EINVAL);
	a.sgrim_group = 0;
	a.sgrim_node = 1;
	a.sgrim_port = GRIM_PORT_MC;
	expect("send to a link's group engine (port 0xfffe): EINVAL",
	       sendto(fd, buf, 60000, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_port = GRIM_PORT_MC_ROOT;
	expect("send to a root's port (0xfffd): EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_port = GRIM_PORT_LMC;
	expect("send to the link group's engine (port 0xfffc): EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_port = GRIM_PORT_LMC_ROOT;
	expect("send to the link group's root (port 0xfffb): EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	a.sgrim_port = GRIM_PORT_IP;
	expect("send to a link's IP channel (port 0xff00): EINVAL",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0,
	       EINVAL);
	expect("connect to it: EINVAL",
	       connect(fd, (void *)&a, sizeof(a)), EINVAL);
	a.sgrim_node = 0;
	a.sgrim_port = 0;
	a.sgrim_group = 7000;
	expect("send to a group nobody joined",
	       sendto(fd, "x", 1, 0, (void *)&a, sizeof(a)) < 0 ? -1 : 0, 0);
	/* Last: after the message to the broadcast group above. */
	g = GRIM_GROUP_ALL;
	expect("join the broadcast group",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), 0);
	expect("leave the broadcast group",
	       setsockopt(fd, SOL_GRIM, GRIM_LEAVE, &g, sizeof(g)), 0);
	g = GRIM_GROUP_LINK;
	expect("join the link's own group: EINVAL",
	       setsockopt(fd, SOL_GRIM, GRIM_JOIN, &g, sizeof(g)), EINVAL);
	close(fd);
	close(fd2);
	return bad_count ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bad"))
		return do_bad();
	if (!strcmp(argv[1], "churn"))
		return do_churn(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fill"))
		return do_fill(argc - 1, argv + 1);
	fprintf(stderr, "grim_group: recv, send, churn, fill or bad\n");
	return 2;
}
