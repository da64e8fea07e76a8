// SPDX-License-Identifier: GPL-2.0
/*
 * grim: configure and inspect GRIM NIs through the "grim" generic netlink
 * family (Documentation/netlink/specs/grim.yaml), in the style of
 * iproute2's tipc and devlink.  See grim(8).
 *
 * Exit status: 0 success, 1 the kernel refused or a system error, 2 a
 * usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/grim.h>

/* The release, from the top-level VERSION file (tools/grim/Makefile). */
#ifndef GRIM_VERSION
#error "GRIM_VERSION is not defined: build with tools/grim/Makefile"
#endif

#define EXIT_USAGE	2
#define GRIM_RECV_SIZE	32768

static bool json, pretty, show_stats;
static struct mnl_socket *nl;
static uint16_t family_id;
static uint32_t events_grp;
static unsigned int seq;
static int raw_type;		/* --raw-attr: testing aid */
static uint32_t raw_val;
static bool have_raw;

/* ---- a small JSON / text writer ------------------------------------------ */

static int jdepth;
static bool jfirst[32];

static void jindent(void)
{
	int i;

	if (!pretty)
		return;
	putchar('\n');
	for (i = 0; i < jdepth; i++)
		fputs("    ", stdout);
}

static void jsep(const char *key)
{
	if (!jfirst[jdepth])
		putchar(',');
	jfirst[jdepth] = false;
	jindent();
	if (key)
		printf(pretty ? "\"%s\": " : "\"%s\":", key);
}

static void jopen(const char *key, char c)
{
	jsep(key);
	putchar(c);
	jfirst[++jdepth] = true;
}

static void jclose(char c)
{
	bool empty = jfirst[jdepth];

	jdepth--;
	if (!empty)
		jindent();
	putchar(c);
	if (!jdepth)
		putchar('\n');
}

static void jstr(const char *key, const char *v)
{
	const char *p;

	jsep(key);
	putchar('"');
	for (p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void juint(const char *key, uint64_t v)
{
	jsep(key);
	printf("%" PRIu64, v);
}

static void jbool(const char *key, bool v)
{
	jsep(key);
	fputs(v ? "true" : "false", stdout);
}

/* ---- netlink -------------------------------------------------------------- */

static const char *const attr_names[GRIM_A_MAX + 1] = {
	[GRIM_A_IFINDEX] = "ifindex", [GRIM_A_IFNAME] = "ifname",
	[GRIM_A_LOWER_IFINDEX] = "lower-ifindex", [GRIM_A_NODE] = "node",
	[GRIM_A_CLUSTER] = "cluster", [GRIM_A_RUNNING] = "running",
	[GRIM_A_HELLO_MS] = "hello-ms", [GRIM_A_DEAD_MS] = "dead-ms",
	[GRIM_A_RTO_MS] = "rto-ms", [GRIM_A_WINDOW] = "window",
	[GRIM_A_DATA_CRC] = "data-crc",
	[GRIM_A_PEER_MAC] = "mac", [GRIM_A_SOCK_PORT] = "port",
	[GRIM_A_KEY_ID] = "id", [GRIM_A_KEY_SECRET] = "secret",
};

static void usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("grim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\nTry \"grim help\".\n", stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

static void die(const char *what)
{
	fprintf(stderr, "grim: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int extack_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type <= NLMSGERR_ATTR_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

/* NLMSG_ERROR: errno plus the extack message, if any. */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	unsigned int off = sizeof(*e);
	int err = -e->error;

	if (!err)
		return MNL_CB_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		mnl_attr_parse(nlh, off, extack_attr_cb, tb);

	fprintf(stderr, "Error: %s", strerror(err));
	if (tb[NLMSGERR_ATTR_MSG])
		fprintf(stderr, ": %s", mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
		uint32_t t = mnl_attr_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);

		fprintf(stderr, ": missing required attribute %s",
			t <= GRIM_A_MAX && attr_names[t] ? attr_names[t] : "?");
	}
	fputs(".\n", stderr);
	errno = err;
	return MNL_CB_ERROR;
}

static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_STOP;
}

/* With a control array, libmnl calls only what it names. */
static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = error_cb,
	[NLMSG_DONE] = done_cb,
};

static struct nlmsghdr *msg_start(char *buf, uint16_t type, uint8_t cmd,
				  uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = GRIM_GENL_VERSION;
	return nlh;
}

/* Send @nlh, run @cb on every reply; returns 0 or exits on failure. */
static int talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[GRIM_RECV_SIZE];
	uint32_t portid = mnl_socket_get_portid(nl);
	int ret;

	if (have_raw && nlh->nlmsg_type == family_id)
		mnl_attr_put_u32(nlh, raw_type, raw_val);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		die("send");
	do {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0)
			die("receive");
		ret = mnl_cb_run2(buf, ret, nlh->nlmsg_seq, portid, cb, data,
				  ctl_cbs, NLMSG_MIN_TYPE);
	} while (ret == MNL_CB_OK);
	if (ret < 0)
		exit(1);
	return 0;
}

static int family_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= CTRL_ATTR_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	const struct nlattr *grp, *a;

	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr_cb, tb);
	if (tb[CTRL_ATTR_FAMILY_ID])
		family_id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(grp, tb[CTRL_ATTR_MCAST_GROUPS]) {
		const char *name = NULL;
		uint32_t id = 0;

		mnl_attr_for_each_nested(a, grp) {
			if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID)
				id = mnl_attr_get_u32(a);
		}
		if (name && !strcmp(name, GRIM_GENL_MCGRP_EVENTS))
			events_grp = id;
	}
	return MNL_CB_OK;
}

static void nl_open(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int one = 1;

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl)
		die("netlink socket");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die("netlink bind");
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));

	nlh = msg_start(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, GRIM_GENL_NAME);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		die("send");
	for (;;) {
		int ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (ret < 0)
			die("receive");
		ret = mnl_cb_run(buf, ret, nlh->nlmsg_seq,
				 mnl_socket_get_portid(nl), family_cb, NULL);
		if (ret <= 0) {
			if (ret < 0 || !family_id) {
				fprintf(stderr, "grim: the grim netlink family is not available (is the grim module loaded?)\n");
				exit(1);
			}
			break;
		}
	}
}

/* ---- attribute parsing ---------------------------------------------------- */

struct attrs {
	const struct nlattr *tb[GRIM_A_MAX + 1];
	const struct nlattr *stats[128];
	int nstats;
};

static int grim_attr_cb(const struct nlattr *a, void *data)
{
	struct attrs *at = data;
	int type = mnl_attr_get_type(a);

	if (type == GRIM_A_STAT) {
		if (at->nstats < (int)(sizeof(at->stats) / sizeof(at->stats[0])))
			at->stats[at->nstats++] = a;
	} else if (type <= GRIM_A_MAX) {
		at->tb[type] = a;
	}
	return MNL_CB_OK;
}

static void parse(const struct nlmsghdr *nlh, struct attrs *at)
{
	memset(at, 0, sizeof(*at));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), grim_attr_cb, at);
}

static uint64_t u32a(const struct attrs *at, int t)
{
	return at->tb[t] ? mnl_attr_get_u32(at->tb[t]) : 0;
}

static const char *ifname_of(const struct attrs *at, char *buf)
{
	if (at->tb[GRIM_A_IFNAME])
		return mnl_attr_get_str(at->tb[GRIM_A_IFNAME]);
	if (at->tb[GRIM_A_IFINDEX] &&
	    if_indextoname(mnl_attr_get_u32(at->tb[GRIM_A_IFINDEX]), buf))
		return buf;
	snprintf(buf, IF_NAMESIZE, "if%u", (unsigned int)u32a(at, GRIM_A_IFINDEX));
	return buf;
}

static void print_stats(const struct attrs *at)
{
	int i;

	if (json)
		jopen("stats", '{');
	else
		printf("    counters:\n");
	for (i = 0; i < at->nstats; i++) {
		const char *name = NULL;
		uint64_t val = 0;
		const struct nlattr *a;

		mnl_attr_for_each_nested(a, at->stats[i]) {
			if (mnl_attr_get_type(a) == GRIM_A_STAT_NAME)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == GRIM_A_STAT_VALUE)
				val = mnl_attr_get_u64(a);
		}
		if (!name)
			continue;
		if (json)
			juint(name, val);
		else
			printf("        %-28s %" PRIu64 "\n", name, val);
	}
	if (json)
		jclose('}');
}

/* ---- objects -------------------------------------------------------------- */

static int node_cb(const struct nlmsghdr *nlh, void *data)
{
	char ifn[IF_NAMESIZE];
	struct attrs at;

	parse(nlh, &at);
	if (json) {
		jopen(NULL, '{');
		jstr("ifname", ifname_of(&at, ifn));
		juint("ifindex", u32a(&at, GRIM_A_IFINDEX));
		juint("node", u32a(&at, GRIM_A_NODE));
		juint("cluster", u32a(&at, GRIM_A_CLUSTER));
		jclose('}');
	} else {
		printf("%s: node %" PRIu64 " cluster %" PRIu64 "\n",
		       ifname_of(&at, ifn), u32a(&at, GRIM_A_NODE),
		       u32a(&at, GRIM_A_CLUSTER));
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	char ifn[IF_NAMESIZE], lower[IF_NAMESIZE];
	static const char * const crc_names[] = {
		[GRIM_DATA_CRC_OFF] = "off",
		[GRIM_DATA_CRC_ON] = "on",
		[GRIM_DATA_CRC_OFFLOAD] = "offload",
	};
	const char *data_crc = "unknown";
	struct attrs at;
	bool running;
	uint8_t crc;

	parse(nlh, &at);
	running = at.tb[GRIM_A_RUNNING] && mnl_attr_get_u8(at.tb[GRIM_A_RUNNING]);
	if (at.tb[GRIM_A_DATA_CRC]) {
		crc = mnl_attr_get_u8(at.tb[GRIM_A_DATA_CRC]);
		if (crc < sizeof(crc_names) / sizeof(crc_names[0]))
			data_crc = crc_names[crc];
	}
	if (!if_indextoname(u32a(&at, GRIM_A_LOWER_IFINDEX), lower))
		snprintf(lower, sizeof(lower), "if%u",
			 (unsigned int)u32a(&at, GRIM_A_LOWER_IFINDEX));
	if (json) {
		jopen(NULL, '{');
		jstr("ifname", ifname_of(&at, ifn));
		juint("ifindex", u32a(&at, GRIM_A_IFINDEX));
		juint("node", u32a(&at, GRIM_A_NODE));
		juint("cluster", u32a(&at, GRIM_A_CLUSTER));
		jstr("lower", lower);
		juint("lower_ifindex", u32a(&at, GRIM_A_LOWER_IFINDEX));
		jbool("running", running);
		juint("hello_ms", u32a(&at, GRIM_A_HELLO_MS));
		juint("dead_ms", u32a(&at, GRIM_A_DEAD_MS));
		juint("rto_ms", u32a(&at, GRIM_A_RTO_MS));
		juint("window", u32a(&at, GRIM_A_WINDOW));
		jstr("data_crc", data_crc);
		juint("tx_key", at.tb[GRIM_A_KEY_TX_ID] ?
			       mnl_attr_get_u8(at.tb[GRIM_A_KEY_TX_ID]) : 0);
		juint("peers", u32a(&at, GRIM_A_NPEERS));
		juint("tx_streams", u32a(&at, GRIM_A_TX_STREAMS));
		juint("rx_streams", u32a(&at, GRIM_A_RX_STREAMS));
		juint("stream_idle_ms", u32a(&at, GRIM_A_STREAM_IDLE_MS));
		juint("peer_rate", u32a(&at, GRIM_A_PEER_RATE));
		if (show_stats)
			print_stats(&at);
		jclose('}');
	} else {
		printf("%s: node %" PRIu64 " cluster %" PRIu64 " lower %s %s\n",
		       ifname_of(&at, ifn), u32a(&at, GRIM_A_NODE),
		       u32a(&at, GRIM_A_CLUSTER), lower,
		       running ? "running" : "down");
		printf("    hello %" PRIu64 "ms dead %" PRIu64 "ms rto %" PRIu64
		       "ms window %" PRIu64 " data-crc %s peers %" PRIu64 "\n",
		       u32a(&at, GRIM_A_HELLO_MS), u32a(&at, GRIM_A_DEAD_MS),
		       u32a(&at, GRIM_A_RTO_MS), u32a(&at, GRIM_A_WINDOW),
		       data_crc, u32a(&at, GRIM_A_NPEERS));
		printf("    streams: tx %" PRIu64 " rx %" PRIu64
		       ", closed after %" PRIu64 "ms idle\n",
		       u32a(&at, GRIM_A_TX_STREAMS),
		       u32a(&at, GRIM_A_RX_STREAMS),
		       u32a(&at, GRIM_A_STREAM_IDLE_MS));
		printf("    new peers from hellos: %" PRIu64 " a second\n",
		       u32a(&at, GRIM_A_PEER_RATE));
		if (at.tb[GRIM_A_KEY_TX_ID] &&
		    mnl_attr_get_u8(at.tb[GRIM_A_KEY_TX_ID]))
			printf("    authenticated: key %u\n",
			       mnl_attr_get_u8(at.tb[GRIM_A_KEY_TX_ID]));
		if (show_stats)
			print_stats(&at);
	}
	return MNL_CB_OK;
}

static const char *peer_state(const struct attrs *at)
{
	if (!at->tb[GRIM_A_PEER_STATE])
		return "?";
	switch (mnl_attr_get_u8(at->tb[GRIM_A_PEER_STATE])) {
	case GRIM_NL_PEER_NEW:
		return "new";
	case GRIM_NL_PEER_UP:
		return "up";
	case GRIM_NL_PEER_DOWN:
		return "down";
	}
	return "?";
}

static const char *mac_str(const struct attrs *at, char *buf)
{
	const uint8_t *m;

	if (!at->tb[GRIM_A_PEER_MAC] ||
	    mnl_attr_get_payload_len(at->tb[GRIM_A_PEER_MAC]) != 6)
		return "";
	m = mnl_attr_get_payload(at->tb[GRIM_A_PEER_MAC]);
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x",
		m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

static int peer_cb(const struct nlmsghdr *nlh, void *data)
{
	char ifn[IF_NAMESIZE], mac[18];
	bool is_static;
	struct attrs at;

	parse(nlh, &at);
	is_static = at.tb[GRIM_A_PEER_STATIC];
	if (json) {
		jopen(NULL, '{');
		jstr("ifname", ifname_of(&at, ifn));
		juint("node", u32a(&at, GRIM_A_NODE));
		jstr("state", peer_state(&at));
		jstr("mac", mac_str(&at, mac));
		jbool("static", is_static);
		juint("lgen", u32a(&at, GRIM_A_PEER_LGEN));
		juint("rgen", u32a(&at, GRIM_A_PEER_RGEN));
		juint("last_rx_ms", u32a(&at, GRIM_A_PEER_LAST_RX_MS));
		juint("tx_streams", u32a(&at, GRIM_A_PEER_TX_STREAMS));
		juint("rx_streams", u32a(&at, GRIM_A_PEER_RX_STREAMS));
		juint("cwnd", u32a(&at, GRIM_A_PEER_CWND));
		juint("inflight", u32a(&at, GRIM_A_PEER_INFLIGHT));
		juint("inflight_max", u32a(&at, GRIM_A_PEER_INFLIGHT_MAX));
		juint("srtt_us", u32a(&at, GRIM_A_PEER_SRTT_US));
		if (show_stats)
			print_stats(&at);
		jclose('}');
	} else {
		printf("%s: node %" PRIu64 " %s mac %s%s gen %" PRIu64 "/%" PRIu64
		       " last-rx %" PRIu64 "ms streams %" PRIu64 "/%" PRIu64
		       " cwnd %" PRIu64 " inflight %" PRIu64
		       " inflight-max %" PRIu64 " srtt %" PRIu64 "us\n",
		       ifname_of(&at, ifn), u32a(&at, GRIM_A_NODE),
		       peer_state(&at), mac_str(&at, mac),
		       is_static ? " static" : "",
		       u32a(&at, GRIM_A_PEER_LGEN), u32a(&at, GRIM_A_PEER_RGEN),
		       u32a(&at, GRIM_A_PEER_LAST_RX_MS),
		       u32a(&at, GRIM_A_PEER_TX_STREAMS),
		       u32a(&at, GRIM_A_PEER_RX_STREAMS),
		       u32a(&at, GRIM_A_PEER_CWND),
		       u32a(&at, GRIM_A_PEER_INFLIGHT),
		       u32a(&at, GRIM_A_PEER_INFLIGHT_MAX),
		       u32a(&at, GRIM_A_PEER_SRTT_US));
		if (show_stats)
			print_stats(&at);
	}
	return MNL_CB_OK;
}

static uint64_t u16a(const struct attrs *at, int t)
{
	return at->tb[t] ? mnl_attr_get_u16(at->tb[t]) : 0;
}

static int sock_cb(const struct nlmsghdr *nlh, void *data)
{
	uint64_t inode;
	char peer[32], local[32];
	struct attrs at;

	parse(nlh, &at);
	inode = at.tb[GRIM_A_SOCK_INODE] ?
		mnl_attr_get_u64(at.tb[GRIM_A_SOCK_INODE]) : 0;
	if (json) {
		jopen(NULL, '{');
		juint("node", u32a(&at, GRIM_A_NODE));
		juint("port", u16a(&at, GRIM_A_SOCK_PORT));
		jstr("type", u16a(&at, GRIM_A_SOCK_TYPE) == SOCK_RDM ? "rdm" : "?");
		if (at.tb[GRIM_A_SOCK_PEER_PORT]) {
			juint("peer_node", u32a(&at, GRIM_A_SOCK_PEER_NODE));
			juint("peer_port", u16a(&at, GRIM_A_SOCK_PEER_PORT));
		}
		juint("rx_queue", u32a(&at, GRIM_A_SOCK_RX_QUEUE));
		juint("tx_queue", u32a(&at, GRIM_A_SOCK_TX_QUEUE));
		juint("rcvbuf", u32a(&at, GRIM_A_SOCK_RCVBUF));
		juint("sndbuf", u32a(&at, GRIM_A_SOCK_SNDBUF));
		juint("drops", u32a(&at, GRIM_A_SOCK_DROPS));
		juint("uid", u32a(&at, GRIM_A_SOCK_UID));
		juint("inode", inode);
		jclose('}');
		return MNL_CB_OK;
	}
	snprintf(local, sizeof(local), "%u:%u",
		 (unsigned int)u32a(&at, GRIM_A_NODE),
		 (unsigned int)u16a(&at, GRIM_A_SOCK_PORT));
	if (at.tb[GRIM_A_SOCK_PEER_PORT])
		snprintf(peer, sizeof(peer), "%u:%u",
			 (unsigned int)u32a(&at, GRIM_A_SOCK_PEER_NODE),
			 (unsigned int)u16a(&at, GRIM_A_SOCK_PEER_PORT));
	else
		strcpy(peer, "*");
	printf("%-5s %-8" PRIu64 " %-8" PRIu64 " %-16s %-16s %-8" PRIu64
	       " %-8" PRIu64 " %-6" PRIu64 " %-6" PRIu64 " %" PRIu64 "\n",
	       u16a(&at, GRIM_A_SOCK_TYPE) == SOCK_RDM ? "rdm" : "?",
	       u32a(&at, GRIM_A_SOCK_RX_QUEUE), u32a(&at, GRIM_A_SOCK_TX_QUEUE),
	       local,
	       peer, u32a(&at, GRIM_A_SOCK_RCVBUF), u32a(&at, GRIM_A_SOCK_SNDBUF),
	       u32a(&at, GRIM_A_SOCK_DROPS), u32a(&at, GRIM_A_SOCK_UID), inode);
	return MNL_CB_OK;
}

/* ---- command line --------------------------------------------------------- */

static bool matches(const char *arg, const char *word)
{
	return *arg && !strncmp(word, arg, strlen(arg));
}

static uint32_t get_u32(const char *what, const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || v > UINT32_MAX || *s == '-')
		usage_err("invalid %s \"%s\": expected a number 0..4294967295",
			  what, s);
	return v;
}

static uint32_t get_dev(const char *s)
{
	unsigned int idx = if_nametoindex(s);

	if (!idx) {
		fprintf(stderr, "grim: cannot find device \"%s\"\n", s);
		exit(1);
	}
	return idx;
}

static void get_mac(const char *s, uint8_t *mac)
{
	unsigned int m[6];
	char c;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5], &c) != 6)
		usage_err("invalid MAC \"%s\": expected xx:xx:xx:xx:xx:xx", s);
	for (i = 0; i < 6; i++) {
		if (m[i] > 255)
			usage_err("invalid MAC \"%s\"", s);
		mac[i] = m[i];
	}
}

/* Is @key one of the space-separated words of @list? */
static bool word_in(const char *list, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = list; (p = strstr(p, key)); p += n) {
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	}
	return false;
}

/* Generic "key value" arguments of the object commands. */
struct args {
	uint32_t dev, node, cluster, port, id;
	bool has_dev, has_node, has_cluster, has_port, has_mac, has_id;
	bool has_secret, tx;
	uint8_t mac[6];
	uint8_t secret[GRIM_AUTH_KEY_LEN];
};

/* A key: GRIM_AUTH_KEY_LEN bytes in hex, spaces and newlines allowed
 * between the digits (od -An -tx1 prints that).  From the command line,
 * or better from a file ("-": standard input), which ps does not show.
 */
static void get_secret(const char *what, const char *s, uint8_t *key)
{
	size_t n = 0;
	int hi = -1, v;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
			continue;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			v = *s - 'A' + 10;
		else
			usage_err("invalid %s: hex digits only", what);
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n == GRIM_AUTH_KEY_LEN)
			break;
		key[n++] = hi << 4 | v;
		hi = -1;
	}
	if (n != GRIM_AUTH_KEY_LEN || hi >= 0 || *s)
		usage_err("invalid %s: expected %d bytes in hex (%d digits)",
			  what, GRIM_AUTH_KEY_LEN, 2 * GRIM_AUTH_KEY_LEN);
}

static void get_secret_file(const char *path, uint8_t *key)
{
	char buf[1024];
	size_t n;
	FILE *f;

	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "grim: cannot open key file \"%s\": %s\n",
			path, strerror(errno));
		exit(1);
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	if (f != stdin)
		fclose(f);
	buf[n] = 0;
	get_secret("key file", buf, key);
	memset(buf, 0, sizeof(buf));
}

static void parse_args(int argc, char **argv, struct args *a,
		       const char *allowed)
{
	memset(a, 0, sizeof(*a));
	for (; argc > 0; argc--, argv++) {
		const char *key = argv[0];

		if (!strcmp(key, "-s") || !strcmp(key, "-stats")) {
			show_stats = true;
			continue;
		}
		if (!strcmp(key, "tx") && word_in(allowed, key)) {
			a->tx = true;
			continue;
		}
		if (!*key || !word_in(allowed, key) || argc < 2)
			usage_err(argc < 2 && *key && word_in(allowed, key) ?
				  "\"%s\" needs a value" : "unknown argument \"%s\"",
				  key);
		if (!strcmp(key, "dev")) {
			a->dev = get_dev(argv[1]);
			a->has_dev = true;
		} else if (!strcmp(key, "node")) {
			a->node = get_u32("node id", argv[1]);
			a->has_node = true;
		} else if (!strcmp(key, "cluster")) {
			a->cluster = get_u32("cluster id", argv[1]);
			a->has_cluster = true;
		} else if (!strcmp(key, "port")) {
			a->port = get_u32("port", argv[1]);
			if (a->port > 65535)
				usage_err("invalid port \"%s\": 1..65535", argv[1]);
			a->has_port = true;
		} else if (!strcmp(key, "mac")) {
			get_mac(argv[1], a->mac);
			a->has_mac = true;
		} else if (!strcmp(key, "id")) {
			a->id = get_u32("key id", argv[1]);
			if (a->id < 1 || a->id > 255)
				usage_err("invalid key id \"%s\": 1..255", argv[1]);
			a->has_id = true;
		} else if (!strcmp(key, "secret")) {
			get_secret("secret", argv[1], a->secret);
			a->has_secret = true;
		} else if (!strcmp(key, "secret-file")) {
			get_secret_file(argv[1], a->secret);
			a->has_secret = true;
		} else {
			usage_err("unknown argument \"%s\"", key);
		}
		argc--;
		argv++;
	}
}

static void put_args(struct nlmsghdr *nlh, const struct args *a)
{
	if (a->has_dev)
		mnl_attr_put_u32(nlh, GRIM_A_IFINDEX, a->dev);
	if (a->has_node)
		mnl_attr_put_u32(nlh, GRIM_A_NODE, a->node);
	if (a->has_cluster)
		mnl_attr_put_u32(nlh, GRIM_A_CLUSTER, a->cluster);
	if (a->has_mac)
		mnl_attr_put(nlh, GRIM_A_PEER_MAC, 6, a->mac);
	if (a->has_port)
		mnl_attr_put_u16(nlh, GRIM_A_SOCK_PORT, a->port);
	if (a->has_id)
		mnl_attr_put_u8(nlh, GRIM_A_KEY_ID, a->id);
	if (a->has_secret)
		mnl_attr_put(nlh, GRIM_A_KEY_SECRET, GRIM_AUTH_KEY_LEN,
			     a->secret);
	if (a->tx)
		mnl_attr_put(nlh, GRIM_A_KEY_TX, 0, NULL);
}

/* A show command: do if @single, else dump; JSON array around it. */
static int do_show(uint8_t cmd, const struct args *a, bool single, mnl_cb_t cb)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = msg_start(buf, family_id, cmd, single ? 0 : NLM_F_DUMP);
	put_args(nlh, a);
	if (json)
		jopen(NULL, '[');
	talk(nlh, cb, NULL);
	if (json)
		jclose(']');
	return 0;
}

static int do_change(uint8_t cmd, const struct args *a)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	nlh = msg_start(buf, family_id, cmd, 0);
	put_args(nlh, a);
	ret = talk(nlh, NULL, NULL);
	memset(buf, 0, sizeof(buf));	/* a key may have been in it */
	return ret;
}

static int cmd_node(int argc, char **argv)
{
	struct args a;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		parse_args(argc ? argc - 1 : 0, argv + 1, &a, "dev");
		return do_show(GRIM_CMD_NODE_GET, &a, a.has_dev, node_cb);
	}
	if (matches(argv[0], "set")) {
		parse_args(argc - 1, argv + 1, &a, "dev node cluster");
		if (!a.has_dev)
			usage_err("node set needs \"dev DEV\"");
		return do_change(GRIM_CMD_NODE_SET, &a);
	}
	usage_err("unknown node command \"%s\"", argv[0]);
	return EXIT_USAGE;
}

static int cmd_peer(int argc, char **argv)
{
	struct args a;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		parse_args(argc ? argc - 1 : 0, argv + 1, &a, "dev node");
		if (a.has_node && !a.has_dev)
			usage_err("peer show node N needs \"dev DEV\"");
		return do_show(GRIM_CMD_PEER_GET, &a, a.has_node, peer_cb);
	}
	if (matches(argv[0], "add")) {
		parse_args(argc - 1, argv + 1, &a, "dev node mac");
		if (!a.has_dev)
			usage_err("peer add needs \"dev DEV\"");
		return do_change(GRIM_CMD_PEER_ADD, &a);
	}
	if (matches(argv[0], "delete")) {
		parse_args(argc - 1, argv + 1, &a, "dev node");
		if (!a.has_dev)
			usage_err("peer del needs \"dev DEV\"");
		return do_change(GRIM_CMD_PEER_DEL, &a);
	}
	usage_err("unknown peer command \"%s\"", argv[0]);
	return EXIT_USAGE;
}

static int cmd_link(int argc, char **argv)
{
	struct args a;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		parse_args(argc ? argc - 1 : 0, argv + 1, &a, "dev");
		return do_show(GRIM_CMD_LINK_GET, &a, a.has_dev, link_cb);
	}
	usage_err("unknown link command \"%s\"", argv[0]);
	return EXIT_USAGE;
}

/* grim key: the cluster keys of a link, which are never shown. */
static int key_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *ids;
	char ifn[IF_NAMESIZE];
	struct attrs at;
	uint16_t i, n;

	parse(nlh, &at);
	ids = at.tb[GRIM_A_KEY_IDS];
	n = ids ? mnl_attr_get_payload_len(ids) : 0;
	if (json) {
		jopen(NULL, '{');
		jstr("ifname", ifname_of(&at, ifn));
		juint("tx_key", at.tb[GRIM_A_KEY_TX_ID] ?
			       mnl_attr_get_u8(at.tb[GRIM_A_KEY_TX_ID]) : 0);
		jopen("keys", '[');
		for (i = 0; i < n; i++)
			juint(NULL, ((uint8_t *)mnl_attr_get_payload(ids))[i]);
		jclose(']');
		jclose('}');
		return MNL_CB_OK;
	}
	printf("%s:", ifname_of(&at, ifn));
	if (!n)
		printf(" no key: frames are not authenticated");
	for (i = 0; i < n; i++) {
		uint8_t id = ((uint8_t *)mnl_attr_get_payload(ids))[i];

		printf(" key %u%s", id, at.tb[GRIM_A_KEY_TX_ID] &&
		       mnl_attr_get_u8(at.tb[GRIM_A_KEY_TX_ID]) == id ?
		       " (tx)" : "");
	}
	printf("\n");
	return MNL_CB_OK;
}

static int cmd_key(int argc, char **argv)
{
	struct args a;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		parse_args(argc ? argc - 1 : 0, argv + 1, &a, "dev");
		return do_show(GRIM_CMD_LINK_GET, &a, a.has_dev, key_cb);
	}
	if (matches(argv[0], "add")) {
		parse_args(argc - 1, argv + 1, &a, "dev id secret secret-file tx");
		if (!a.has_dev || !a.has_id || !a.has_secret)
			usage_err("key add needs \"dev DEV id ID\" and \"secret-file FILE\" or \"secret HEX\"");
		return do_change(GRIM_CMD_KEY_SET, &a);
	}
	if (matches(argv[0], "use")) {
		parse_args(argc - 1, argv + 1, &a, "dev id");
		if (!a.has_dev || !a.has_id)
			usage_err("key use needs \"dev DEV id ID\"");
		a.tx = true;
		return do_change(GRIM_CMD_KEY_SET, &a);
	}
	if (matches(argv[0], "delete")) {
		parse_args(argc - 1, argv + 1, &a, "dev id");
		if (!a.has_dev || !a.has_id)
			usage_err("key del needs \"dev DEV id ID\"");
		return do_change(GRIM_CMD_KEY_DEL, &a);
	}
	usage_err("unknown key command \"%s\"", argv[0]);
	return EXIT_USAGE;
}

static int cmd_socket(int argc, char **argv)
{
	struct args a;

	if (argc > 0 && (matches(argv[0], "show") || matches(argv[0], "list"))) {
		argc--;
		argv++;
	}
	parse_args(argc, argv, &a, "port");
	if (!json)
		printf("%-5s %-8s %-8s %-16s %-16s %-8s %-8s %-6s %-6s %s\n",
		       "Type", "Recv-Q", "Send-Q", "Local", "Peer", "RcvBuf",
		       "SndBuf", "Drops", "UID", "Inode");
	return do_show(GRIM_CMD_SOCKET_GET, &a, false, sock_cb);
}

/* The node ids of a binary attribute of __u32s. */
static void print_ids(const char *key, const struct nlattr *a)
{
	const uint32_t *ids = a ? mnl_attr_get_payload(a) : NULL;
	unsigned int i, n = a ? mnl_attr_get_payload_len(a) / 4 : 0;

	if (json) {
		jopen(key, '[');
		for (i = 0; i < n; i++)
			juint(NULL, ids[i]);
		jclose(']');
		return;
	}
	printf(" %s", key);
	if (!n)
		printf(" -");
	for (i = 0; i < n; i++)
		printf(" %u", ids[i]);
}

static uint64_t u64a(const struct attrs *at, int t)
{
	return at->tb[t] ? mnl_attr_get_u64(at->tb[t]) : 0;
}

static int group_cb(const struct nlmsghdr *nlh, void *data)
{
	char ifn[IF_NAMESIZE];
	struct attrs at;
	bool in;

	parse(nlh, &at);
	in = at.tb[GRIM_A_GROUP_IN_TREE] &&
	     mnl_attr_get_u8(at.tb[GRIM_A_GROUP_IN_TREE]);
	if (json) {
		jopen(NULL, '{');
		jstr("ifname", ifname_of(&at, ifn));
		juint("node", u32a(&at, GRIM_A_NODE));
		juint("group", u32a(&at, GRIM_A_GROUP_ID));
		juint("root", u32a(&at, GRIM_A_GROUP_ROOT));
		juint("ticket", u32a(&at, GRIM_A_GROUP_TICKET));
		jbool("in_tree", in);
		juint("parent", u32a(&at, GRIM_A_GROUP_PARENT));
		print_ids("children", at.tb[GRIM_A_GROUP_CHILDREN]);
		if (at.tb[GRIM_A_GROUP_MEMBERS])
			print_ids("members", at.tb[GRIM_A_GROUP_MEMBERS]);
		juint("local", u32a(&at, GRIM_A_GROUP_LOCAL));
		juint("queued", u32a(&at, GRIM_A_GROUP_QUEUED));
		juint("rx", u64a(&at, GRIM_A_GROUP_RX));
		juint("delivered", u64a(&at, GRIM_A_GROUP_DELIVERED));
		jclose('}');
		return MNL_CB_OK;
	}
	printf("%s: group %" PRIu64 " root %" PRIu64 " ticket %" PRIu64 " %s",
	       ifname_of(&at, ifn), u32a(&at, GRIM_A_GROUP_ID),
	       u32a(&at, GRIM_A_GROUP_ROOT), u32a(&at, GRIM_A_GROUP_TICKET),
	       in ? "in-tree" : "out");
	printf(" parent %" PRIu64, u32a(&at, GRIM_A_GROUP_PARENT));
	print_ids("children", at.tb[GRIM_A_GROUP_CHILDREN]);
	printf(" local %" PRIu64 " queued %" PRIu64 " rx %" PRIu64
	       " delivered %" PRIu64, u32a(&at, GRIM_A_GROUP_LOCAL),
	       u32a(&at, GRIM_A_GROUP_QUEUED), u64a(&at, GRIM_A_GROUP_RX),
	       u64a(&at, GRIM_A_GROUP_DELIVERED));
	if (at.tb[GRIM_A_GROUP_MEMBERS])
		print_ids("members", at.tb[GRIM_A_GROUP_MEMBERS]);
	printf("\n");
	return MNL_CB_OK;
}

static int cmd_group(int argc, char **argv)
{
	struct args a;

	if (argc > 0 && (matches(argv[0], "show") || matches(argv[0], "list"))) {
		argc--;
		argv++;
	}
	parse_args(argc, argv, &a, "dev");
	return do_show(GRIM_CMD_GROUP_GET, &a, false, group_cb);
}

static int monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	char ifn[IF_NAMESIZE], mac[18];
	const char *ev;
	struct attrs at;

	parse(nlh, &at);
	switch (g->cmd) {
	case GRIM_CMD_PEER_NTF:
		ev = "peer";
		break;
	case GRIM_CMD_LINK_NEW_NTF:
		ev = "link-new";
		break;
	case GRIM_CMD_LINK_DEL_NTF:
		ev = "link-del";
		break;
	default:
		return MNL_CB_OK;
	}
	if (json) {
		jdepth = 0;
		jfirst[0] = true;
		jopen(NULL, '{');
		jstr("event", ev);
		jstr("ifname", ifname_of(&at, ifn));
		juint("node", u32a(&at, GRIM_A_NODE));
		if (g->cmd == GRIM_CMD_PEER_NTF) {
			jstr("state", peer_state(&at));
			jstr("mac", mac_str(&at, mac));
		}
		jclose('}');
	} else if (g->cmd == GRIM_CMD_PEER_NTF) {
		printf("peer %s: node %" PRIu64 " %s mac %s\n",
		       ifname_of(&at, ifn), u32a(&at, GRIM_A_NODE),
		       peer_state(&at), mac_str(&at, mac));
	} else {
		printf("%s %s: node %" PRIu64 " cluster %" PRIu64 "\n", ev,
		       ifname_of(&at, ifn), u32a(&at, GRIM_A_NODE),
		       u32a(&at, GRIM_A_CLUSTER));
	}
	fflush(stdout);
	return MNL_CB_OK;
}

static int cmd_monitor(int argc, char **argv)
{
	char buf[GRIM_RECV_SIZE];
	int ret;

	if (argc)
		usage_err("monitor takes no arguments");
	if (!events_grp) {
		fprintf(stderr, "grim: the kernel has no events group\n");
		return 1;
	}
	if (mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &events_grp,
				  sizeof(events_grp)) < 0)
		die("join the events group");
	for (;;) {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0) {
			if (errno == ENOBUFS) {
				fprintf(stderr, "grim: events lost (ENOBUFS)\n");
				continue;
			}
			die("receive");
		}
		mnl_cb_run(buf, ret, 0, 0, monitor_cb, NULL);
	}
	return 0;
}

static void help(FILE *f)
{
	fputs("Usage: grim [OPTIONS] OBJECT COMMAND [ARGS]\n"
	      "       grim help\n"
	      "Objects and commands:\n"
	      "  grim node [show [dev DEV]]\n"
	      "  grim node set dev DEV [node ID] [cluster ID]   (link must be down)\n"
	      "  grim peer [show [dev DEV [node ID]]] [-s]\n"
	      "  grim peer add dev DEV node ID mac XX:XX:XX:XX:XX:XX\n"
	      "  grim peer del dev DEV node ID\n"
	      "  grim link [show [dev DEV]] [-s]\n"
	      "  grim key [show [dev DEV]]\n"
	      "  grim key add dev DEV id ID {secret-file FILE|secret HEX} [tx]\n"
	      "  grim key use dev DEV id ID\n"
	      "  grim key del dev DEV id ID\n"
	      "  grim socket [show] [port PORT]\n"
	      "  grim group [show] [dev DEV]\n"
	      "  grim monitor\n"
	      "Options:\n"
	      "  -j, -json     JSON output\n"
	      "  -p, -pretty   indented JSON\n"
	      "  -s, -stats    show counters\n"
	      "  -V, -Version  print the version (also --version)\n"
	      "Exit status: 0 ok, 1 error (the kernel's reason is printed), 2 usage.\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *obj;
	int ret;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *o = argv[0] + (argv[0][1] == '-' ? 2 : 1);

		if (!strcmp(o, "j") || !strcmp(o, "json")) {
			json = true;
		} else if (!strcmp(o, "p") || !strcmp(o, "pretty")) {
			pretty = true;
		} else if (!strcmp(o, "s") || !strcmp(o, "stats")) {
			show_stats = true;
		} else if (!strcmp(o, "V") || !strcmp(o, "Version") ||
			   !strcmp(o, "version")) {
			printf("grim %s, GRIM netlink version %d\n",
			       GRIM_VERSION, GRIM_GENL_VERSION);
			return 0;
		} else if (!strcmp(o, "h") || !strcmp(o, "help")) {
			help(stdout);
			return 0;
		} else if (!strcmp(o, "raw-attr") && argc > 1) {
			/* Testing aid: append "TYPE:U32" to the request. */
			if (sscanf(argv[1], "%d:%u", &raw_type, &raw_val) != 2)
				usage_err("--raw-attr TYPE:VALUE");
			have_raw = true;
			argc--;
			argv++;
		} else {
			usage_err("unknown option \"%s\"", argv[0]);
		}
	}
	if (pretty)
		json = true;
	if (argc == 0 || matches(argv[0], "help")) {
		help(argc ? stdout : stderr);
		return argc ? 0 : EXIT_USAGE;
	}
	obj = argv[0];
	nl_open();
	jfirst[0] = true;
	argc--;
	argv++;
	if (matches(obj, "node"))
		ret = cmd_node(argc, argv);
	else if (matches(obj, "peer"))
		ret = cmd_peer(argc, argv);
	else if (matches(obj, "link"))
		ret = cmd_link(argc, argv);
	else if (matches(obj, "socket"))
		ret = cmd_socket(argc, argv);
	else if (matches(obj, "group"))
		ret = cmd_group(argc, argv);
	else if (matches(obj, "key"))
		ret = cmd_key(argc, argv);
	else if (matches(obj, "monitor"))
		ret = cmd_monitor(argc, argv);
	else
		usage_err("unknown object \"%s\"", obj);
	mnl_socket_close(nl);
	return ret;
}
