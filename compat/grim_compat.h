/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GRIM: what differs between the kernels GRIM builds on (6.1 to 6.12).
 *
 * The sources are written against the newest supported kernel's API;
 * this header, force-included by Kbuild into every object, supplies that
 * API on older kernels.  It is the only file that tests kernel versions;
 * Kbuild adds GRIM_HAVE_* for what a version cannot tell.
 * An in-tree GRIM would not have it.
 */
#ifndef _GRIM_COMPAT_H
#define _GRIM_COMPAT_H

#include <linux/version.h>

/*
 * <asm/unaligned.h> became <linux/unaligned.h> in 6.12, and the skb
 * fragment reference helpers moved to <linux/skbuff_ref.h> in 6.11.  The
 * sources include neither: they get them here.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#include <linux/skbuff_ref.h>
#else
#include <linux/skbuff.h>
#endif

/*
 * Generic netlink dumps: 6.6 put a struct genl_info into the dump
 * context (genl_info_dump()); before that the parsed attributes sat in
 * struct genl_dumpit_info itself.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define grim_dump_attrs(cb)	(genl_info_dump(cb)->attrs)
#else
#define grim_dump_attrs(cb)	(genl_dumpit_info(cb)->attrs)
#endif

/*
 * A device that may not leave its network namespace: a flag bit in
 * dev->features until 6.12, a bit field of its own since, renamed from
 * netns_local to netns_immutable in 6.15 and in later 6.12 stable
 * releases (Kbuild finds which one the headers have).
 */
#if defined(GRIM_HAVE_NETNS_IMMUTABLE)
#define grim_set_netns_local(dev)	((dev)->netns_immutable = true)
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define grim_set_netns_local(dev)	((dev)->netns_local = true)
#else
#define grim_set_netns_local(dev)	((dev)->features |= NETIF_F_NETNS_LOCAL)
#endif

/*
 * The largest GSO packet a device takes whole, for a protocol other than
 * IPv6: since 6.3 the core checks dev->gso_ipv4_max_size for it (BIG TCP
 * for IPv4), before that dev->gso_max_size.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define grim_gso_max_size(dev) ({					\
	const struct net_device *__dev = (dev);				\
	min(READ_ONCE(__dev->gso_max_size),				\
	    READ_ONCE(__dev->gso_ipv4_max_size));			\
})
#else
#define grim_gso_max_size(dev)	READ_ONCE((dev)->gso_max_size)
#endif

#endif /* _GRIM_COMPAT_H */
