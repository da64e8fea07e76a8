/* SPDX-License-Identifier: GPL-2.0 */
/* AF_GRIM protocol family: what the module entry point calls. */
#ifndef _NET_GRIM_AF_GRIM_H
#define _NET_GRIM_AF_GRIM_H

int grim_af_init(void);
void grim_af_exit(void);

#endif /* _NET_GRIM_AF_GRIM_H */
