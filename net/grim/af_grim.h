/* SPDX-License-Identifier: GPL-2.0 */
/* AF_GRIM protocol family: what the module entry point calls. */
#ifndef _NET_GRIM_AF_GRIM_H
#define _NET_GRIM_AF_GRIM_H

#include <linux/types.h>

struct net;

int grim_af_init(void);
void grim_af_exit(void);
int grim_af_register(void);
void grim_af_unregister(void);

/* A bound socket, as the netlink family reports it. */
struct grim_sock_info {
	u16 port;
	u16 type;
	u32 peer_node;
	u16 peer_port;
	u32 rx_queue;
	u32 tx_queue;
	u32 rcvbuf;
	u32 sndbuf;
	u32 drops;
	u64 inode;
	u32 uid;
};

int grim_sock_walk(struct net *net, int skip,
		   int (*fn)(const struct grim_sock_info *si, void *arg),
		   void *arg);

#endif /* _NET_GRIM_AF_GRIM_H */
