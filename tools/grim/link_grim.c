// SPDX-License-Identifier: GPL-2.0
/*
 * link_grim.so: iproute2 plugin for the "grim" link kind.
 *
 *   ip link add link eth0 name grim0 type grim [node N] [cluster C]
 *            [hello MS] [dead MS] [rto MS] [window N]
 *   ip -d link show grim0
 *
 * ip loads $IP_LIB_DIR/link_grim.so (default LIBDIR/ip, on Debian
 * /usr/lib/<multiarch>/ip) and looks up
 * grim_link_util.  iproute2 has no public plugin header, so struct
 * link_util is declared here as iproute2 6.1's ip/ip_common.h has it;
 * addattr32, matches, is_json_context and print_color_uint come from the
 * ip binary, which exports them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/grim.h>

/* From iproute2 6.1: ip/ip_common.h, include/json_print.h, color.h. */
struct link_util {
	struct link_util *next;
	const char *id;
	int maxattr;
	int (*parse_opt)(struct link_util *lu, int argc, char **argv,
			 struct nlmsghdr *n);
	void (*print_opt)(struct link_util *lu, FILE *f, struct rtattr *tb[]);
	void (*print_xstats)(struct link_util *lu, FILE *f, struct rtattr *xs);
	void (*print_help)(struct link_util *lu, int argc, char **argv,
			   FILE *f);
	int (*parse_ifla_xstats)(struct link_util *lu, int argc, char **argv);
	int (*print_ifla_xstats)(struct nlmsghdr *n, void *arg);
};

enum output_type { PRINT_FP = 1, PRINT_JSON = 2, PRINT_ANY = 4 };
enum color_attr { COLOR_NONE = 6 };

int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
int addattr8(struct nlmsghdr *n, int maxlen, int type, __u8 data);
int print_color_string(enum output_type t, enum color_attr c, const char *key,
		       const char *fmt, const char *value);
int print_color_uint(enum output_type t, enum color_attr c, const char *key,
		     const char *fmt, unsigned int value);

/* sizeof(struct iplink_req): the request ip builds the link in. */
#define IPLINK_REQ_MAX	(sizeof(struct nlmsghdr) + \
			 sizeof(struct ifinfomsg) + 1024)

static const struct {
	const char *name;
	int type;
	unsigned long min, max;
} grim_opts[] = {
	{ "node",	IFLA_GRIM_NODE,		1, GRIM_NODE_ANY - 1 },
	{ "cluster",	IFLA_GRIM_CLUSTER,	0, 0xffffffffUL },
	{ "hello",	IFLA_GRIM_HELLO_MS,	10, 30000 },
	{ "dead",	IFLA_GRIM_DEAD_MS,	30, 600000 },
	{ "rto",	IFLA_GRIM_RTO_MS,	1, 1000 },
	{ "window",	IFLA_GRIM_WINDOW,	1, 4096 },
	{ "streamidle",	IFLA_GRIM_STREAM_IDLE_MS, 10, 600000 },
	{ "peerrate",	IFLA_GRIM_PEER_RATE,	1, 1024 },
};

#define N_OPTS	(sizeof(grim_opts) / sizeof(grim_opts[0]))

static const char * const datacrc_names[] = {
	[GRIM_DATA_CRC_OFF] = "off",
	[GRIM_DATA_CRC_ON] = "on",
	[GRIM_DATA_CRC_OFFLOAD] = "offload",
};

#define N_DATACRC	(sizeof(datacrc_names) / sizeof(datacrc_names[0]))

static int datacrc_mode(const char *s)
{
	unsigned int i;

	for (i = 0; i < N_DATACRC; i++)
		if (!strcmp(s, datacrc_names[i]))
			return i;
	return -1;
}

static const char *datacrc_name(unsigned int mode)
{
	return mode < N_DATACRC ? datacrc_names[mode] : "unknown";
}

static void grim_print_help(struct link_util *lu, int argc, char **argv,
			    FILE *f)
{
	fprintf(f,
		"Usage: ... grim [ node NODE_ID ] [ cluster CLUSTER_ID ]\n"
		"                [ hello MS ] [ dead MS ] [ rto MS ] [ window FRAMES ]\n"
		"                [ streamidle MS ] [ peerrate N ]\n"
		"                [ datacrc { on | off | offload } ]\n"
		"\n"
		"Where: NODE_ID    := 1..4294967294 (default: low 32 bits of the lower MAC)\n"
		"       CLUSTER_ID := 0..4294967295\n"
		"       hello 10..30000, dead 30..600000 (at least 3 hellos),\n"
		"       rto 1..1000 ms, window 1..4096 frames in flight per stream\n"
		"       streamidle 10..600000 ms: a send stream idle so long closes\n"
		"       peerrate 1..1024: new peers hellos may make a second\n"
		"       datacrc off: the CRC of sent frames covers only their\n"
		"       headers, the payload is left to the lower link's check;\n"
		"       offload: the payload has the Internet checksum, left to\n"
		"       a lower device that computes it (tx-checksum-ip-generic)\n"
		"Node and cluster change only while the link is down.\n");
}

static int grim_parse_opt(struct link_util *lu, int argc, char **argv,
			  struct nlmsghdr *n)
{
	unsigned long long v;
	unsigned int i;
	char *end;

	while (argc > 0) {
		if (!strcmp(*argv, "help")) {
			grim_print_help(lu, argc, argv, stderr);
			return -1;
		}
		if (!strcmp(*argv, "datacrc")) {
			int mode = argc < 2 ? -1 : datacrc_mode(argv[1]);

			if (mode < 0) {
				fprintf(stderr, "grim: datacrc needs \"on\", \"off\" or \"offload\"\n");
				return -1;
			}
			if (addattr8(n, IPLINK_REQ_MAX, IFLA_GRIM_DATA_CRC, mode))
				return -1;
			argc -= 2;
			argv += 2;
			continue;
		}
		for (i = 0; i < N_OPTS; i++)
			if (!strcmp(*argv, grim_opts[i].name))
				break;
		if (i == N_OPTS) {
			fprintf(stderr, "grim: unknown option \"%s\"\n", *argv);
			grim_print_help(lu, argc, argv, stderr);
			return -1;
		}
		if (argc < 2) {
			fprintf(stderr, "grim: \"%s\" needs a value\n", *argv);
			return -1;
		}
		errno = 0;
		v = strtoull(argv[1], &end, 0);
		if (!*argv[1] || *end || errno || argv[1][0] == '-' ||
		    v < grim_opts[i].min || v > grim_opts[i].max) {
			fprintf(stderr, "grim: invalid %s \"%s\" (%lu..%lu)\n",
				*argv, argv[1], grim_opts[i].min,
				grim_opts[i].max);
			return -1;
		}
		if (addattr32(n, IPLINK_REQ_MAX, grim_opts[i].type, v))
			return -1;
		argc -= 2;
		argv += 2;
	}
	return 0;
}

static void grim_print_opt(struct link_util *lu, FILE *f, struct rtattr *tb[])
{
	static const char *const fmt[] = {
		"node %u ", "cluster %u ", "hello %ums ", "dead %ums ",
		"rto %ums ", "window %u ", "streamidle %ums ", "peerrate %u ",
	};
	unsigned int i;

	if (!tb)
		return;
	for (i = 0; i < N_OPTS; i++) {
		struct rtattr *a = tb[grim_opts[i].type];

		if (!a || RTA_PAYLOAD(a) < sizeof(__u32))
			continue;
		print_color_uint(PRINT_ANY, COLOR_NONE, grim_opts[i].name,
				 fmt[i], *(__u32 *)RTA_DATA(a));
	}
	if (tb[IFLA_GRIM_DATA_CRC] &&
	    RTA_PAYLOAD(tb[IFLA_GRIM_DATA_CRC]) >= sizeof(__u8))
		print_color_string(PRINT_ANY, COLOR_NONE, "datacrc",
				   "datacrc %s ",
				   datacrc_name(*(__u8 *)RTA_DATA(tb[IFLA_GRIM_DATA_CRC])));
}

struct link_util grim_link_util = {
	.id		= "grim",
	.maxattr	= IFLA_GRIM_MAX,
	.parse_opt	= grim_parse_opt,
	.print_opt	= grim_print_opt,
	.print_help	= grim_print_help,
};
