// SPDX-License-Identifier: GPL-2.0
/*
 * UDP datagrams numbered in order, for IP over GRIM:
 *
 *   udp_seq send -a ADDR -p PORT -n COUNT [-s SIZE] [-M IFNAME]
 *   udp_seq recv -p PORT -n COUNT [-t SECONDS] [-g GROUP -M IFNAME]
 *
 * The sender numbers COUNT datagrams of SIZE bytes (default 1000) and
 * fills each with a pattern of its number.  The receiver (IPv4 or IPv6,
 * any address) exits 0 once it has the COUNT datagrams exactly once, in
 * order and intact; 1 at the first one out of order, doubled or
 * corrupt, or when the time runs out; it prints what it got.
 *
 * Multicast, with standard socket calls only: the receiver joins the IP
 * multicast GROUP on interface IFNAME (IP_ADD_MEMBERSHIP or
 * IPV6_JOIN_GROUP); the sender to a multicast ADDR sends through IFNAME
 * (IP_MULTICAST_IF or IPV6_MULTICAST_IF).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned char pat(uint32_t seq, size_t i)
{
	return (unsigned char)(seq * 131 + i * 7);
}

/* Join @group on interface @ifindex with @fd, of @group's family. */
static int mc_join(int fd, const struct addrinfo *group, unsigned int ifindex)
{
	if (group->ai_family == AF_INET) {
		struct ip_mreqn m = { .imr_ifindex = ifindex };

		m.imr_multiaddr =
			((struct sockaddr_in *)group->ai_addr)->sin_addr;
		return setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m,
				  sizeof(m));
	} else {
		struct ipv6_mreq m = { .ipv6mr_interface = ifindex };

		m.ipv6mr_multiaddr =
			((struct sockaddr_in6 *)group->ai_addr)->sin6_addr;
		return setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m,
				  sizeof(m));
	}
}

/* Send @fd's multicast through interface @ifindex. */
static int mc_out(int fd, int family, unsigned int ifindex)
{
	if (family == AF_INET) {
		struct ip_mreqn m = { .imr_ifindex = ifindex };

		return setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &m,
				  sizeof(m));
	}
	return setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex,
			  sizeof(ifindex));
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_seq send -a ADDR -p PORT -n COUNT [-s SIZE] [-M IFNAME]\n"
			"       udp_seq recv -p PORT -n COUNT [-t SECONDS] [-g GROUP -M IFNAME]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = NULL, *group = NULL, *ifname = NULL;
	unsigned int ifindex = 0;
	unsigned long n = 0, size = 1000, secs = 60;
	unsigned char buf[65536];
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	int send_mode, fd, c, err;

	if (argc < 2)
		usage();
	send_mode = !strcmp(argv[1], "send");
	if (!send_mode && strcmp(argv[1], "recv"))
		usage();
	optind = 2;
	while ((c = getopt(argc, argv, "a:p:n:s:t:g:M:")) != -1) {
		switch (c) {
		case 'g': group = optarg; break;
		case 'M': ifname = optarg; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 't': secs = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!port || !n || size < 4 || size > sizeof(buf) ||
	    (send_mode && !addr) || (group && !ifname) ||
	    (send_mode && group))
		usage();
	if (ifname) {
		ifindex = if_nametoindex(ifname);
		if (!ifindex) {
			perror("udp_seq: if_nametoindex");
			return 1;
		}
	}

	if (send_mode) {
		err = getaddrinfo(addr, port, &hints, &ai);
		if (err) {
			fprintf(stderr, "udp_seq: %s: %s\n", addr, gai_strerror(err));
			return 1;
		}
		fd = socket(ai->ai_family, SOCK_DGRAM, 0);
		if (fd < 0 || (ifindex && mc_out(fd, ai->ai_family, ifindex)) ||
		    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			perror("udp_seq: socket/connect");
			return 1;
		}
		for (uint32_t seq = 0; seq < n; seq++) {
			uint32_t be = htonl(seq);

			memcpy(buf, &be, 4);
			for (size_t i = 4; i < size; i++)
				buf[i] = pat(seq, i);
			while (send(fd, buf, size, 0) < 0) {
				if (errno != ENOBUFS && errno != EAGAIN) {
					perror("udp_seq: send");
					return 1;
				}
				usleep(1000);
			}
		}
		printf("sent %lu datagrams of %lu bytes\n", n, size);
		return 0;
	}

	if (group) {
		struct addrinfo *g;

		err = getaddrinfo(group, port, &hints, &g);
		if (err) {
			fprintf(stderr, "udp_seq: %s: %s\n", group,
				gai_strerror(err));
			return 1;
		}
		hints.ai_family = g->ai_family;
		hints.ai_flags = AI_PASSIVE;
		err = getaddrinfo(NULL, port, &hints, &ai);
		if (err) {
			fprintf(stderr, "udp_seq: %s\n", gai_strerror(err));
			return 1;
		}
		fd = socket(g->ai_family, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) ||
		    mc_join(fd, g, ifindex)) {
			perror("udp_seq: socket/bind/join");
			return 1;
		}
		freeaddrinfo(g);
	} else {
		hints.ai_family = AF_INET6;
		hints.ai_flags = AI_PASSIVE;
		err = getaddrinfo(NULL, port, &hints, &ai);
		if (err) {
			fprintf(stderr, "udp_seq: %s\n", gai_strerror(err));
			return 1;
		}
		fd = socket(AF_INET6, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen)) {
			perror("udp_seq: socket/bind");
			return 1;
		}
	}
	{
		int rcv = 8 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	}
	printf("listening\n");
	fflush(stdout);
	time_t end = time(NULL) + secs;
	uint32_t want = 0;

	while (want < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;
		uint32_t seq;

		if (time(NULL) >= end || poll(&p, 1, 1000) < 0)
			break;
		if (!(p.revents & POLLIN))
			continue;
		got = recv(fd, buf, sizeof(buf), 0);
		if (got < 4) {
			printf("short datagram (%zd bytes) after %u\n", got, want);
			return 1;
		}
		memcpy(&seq, buf, 4);
		seq = ntohl(seq);
		if (seq != want) {
			printf("datagram %u where %u was due\n", seq, want);
			return 1;
		}
		for (ssize_t i = 4; i < got; i++) {
			if (buf[i] != pat(seq, i)) {
				printf("datagram %u corrupt at byte %zd\n", seq, i);
				return 1;
			}
		}
		want++;
	}
	printf("received %u of %lu datagrams in order\n", want, n);
	return want == n ? 0 : 1;
}
