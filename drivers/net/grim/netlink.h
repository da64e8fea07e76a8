/* SPDX-License-Identifier: GPL-2.0 */
/* GRIM generic netlink family: entry points and notifications. */
#ifndef _NET_GRIM_NETLINK_H
#define _NET_GRIM_NETLINK_H

#include <linux/types.h>

struct grim_ni;
struct grim_peer;

int grim_nl_init(void);
void grim_nl_exit(void);
void grim_nl_peer_event(struct grim_ni *ni, struct grim_peer *peer);
void grim_nl_link_event(struct grim_ni *ni, bool added);

#endif /* _NET_GRIM_NETLINK_H */
