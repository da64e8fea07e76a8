// SPDX-License-Identifier: GPL-2.0
/*
 * AF_GRIM: the GRIM socket family.  A SOCK_RDM socket is an endpoint: a
 * port with its own logical channel.  Messages keep their boundaries and
 * reach each receiving socket exactly once and in the order each sending
 * socket sent them.  SO_SNDBUF bounds what a socket has in flight (a
 * message is charged until the receiver's NI acknowledges it), SO_RCVBUF
 * what it has queued; a full receiver makes the NI refuse and the sender
 * wait.  A message that cannot be delivered (no socket bound to its
 * port, its peer gone) is reported to its sender, on the sending
 * socket's error queue: which message, and why.
 */
#include <linux/errno.h>
#include <linux/errqueue.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/sockios.h>
#include <linux/termios.h>
#include <net/grim.h>
#include <net/sock.h>
#include <uapi/linux/grim.h>

#define GRIM_LINEAR_MAX		1024	/* longer messages go in pages */
#define GRIM_RCVBUF_DEF		SZ_1M	/* default receive queue, bytes */
#define GRIM_PAGE_RING		48	/* payload pages a socket reuses */
#define GRIM_MSG_PAGES		DIV_ROUND_UP(GRIM_MAX_PAYLOAD, PAGE_SIZE)

/* The pages a socket sent payload in, for the next messages.  A page
 * whose only reference left is the ring's carried a message that was
 * acknowledged and freed: it is taken again as it is, without the
 * allocator and without the zeroing that init_on_alloc (the default of
 * several distributions) does to every new page.  The ring holds at
 * most the socket's send buffer, the memory the socket may have in
 * flight anyway; it is emptied when the socket goes.
 */
struct grim_page_ring {
	spinlock_t lock;		/* senders of the socket */
	unsigned int count;
	unsigned int next;		/* where the next search starts */
	struct page *page[GRIM_PAGE_RING];
};

struct grim_sock {
	struct sock sk;
	struct grim_ep ep;		/* ep.port: 0 until bound */
	u32 peer_node;			/* connect() default destination: */
	u16 peer_port;
	u32 peer_group;			/* ... or a group */
	struct grim_page_ring ring;
};

static struct grim_sock *grim_sk(const struct sock *sk)
{
	return container_of(sk, struct grim_sock, sk);
}

static struct sock *grim_ep_sk(const struct grim_ep *ep)
{
	return &container_of(ep, struct grim_sock, ep)->sk;
}

/* The socket as an endpoint of the NI (include/net/grim.h).  A socket is
 * freed by RCU (SOCK_RCU_FREE), and the messages it sent are charged to
 * it (sock_wfree()), which keeps it in memory while the NI holds them.
 */

static bool grim_sk_ep_get(struct grim_ep *ep)
{
	return refcount_inc_not_zero(&grim_ep_sk(ep)->sk_refcnt);
}

static void grim_sk_ep_put(struct grim_ep *ep)
{
	sock_put(grim_ep_sk(ep));
}

static bool grim_sk_reserve(struct grim_ep *ep, unsigned int len)
{
	struct sock *sk = grim_ep_sk(ep);
	int rmem = atomic_read(&sk->sk_rmem_alloc);

	/* An empty queue takes any message, or a big one never would. */
	if (rmem && rmem + len > READ_ONCE(sk->sk_rcvbuf) &&
	    !sock_flag(sk, SOCK_DEAD)) {
		atomic_inc(&sk->sk_drops);
		return false;
	}
	atomic_add(len, &sk->sk_rmem_alloc);
	return true;
}

static void grim_sk_unreserve(struct grim_ep *ep, unsigned int len)
{
	struct sock *sk = grim_ep_sk(ep);

	atomic_sub(len, &sk->sk_rmem_alloc);
}

static void grim_sk_deliver(struct grim_ep *ep, struct sk_buff *skb,
			    unsigned int reserved)
{
	struct sock *sk = grim_ep_sk(ep);

	atomic_sub(reserved, &sk->sk_rmem_alloc);
	if (sock_flag(sk, SOCK_DEAD)) {
		kfree_skb(skb);
		return;
	}
	skb_set_owner_r(skb, sk);
	skb_queue_tail(&sk->sk_receive_queue, skb);
	sk->sk_data_ready(sk);
}

/* A report on the error queue: which message failed, and why.  Kept in
 * the report's data (its cb is the socket layer's).
 */
struct grim_msg_err {
	struct grim_msg_cb cb;
	u32 len;
	int err;		/* positive errno */
};

/* Queue the report of a failed message on @sk's error queue.  A report
 * that does not fit is counted as a drop and leaves ENOBUFS in sk_err,
 * so that it is never lost without a trace.
 */
static void grim_report_failed(struct sock *sk, const struct grim_msg_cb *cb,
			       unsigned int len, int err)
{
	struct grim_msg_err *e;
	struct sk_buff *skb;

	skb = alloc_skb(sizeof(*e), GFP_ATOMIC);
	if (!skb)
		goto lost;
	e = skb_put(skb, sizeof(*e));
	e->cb = *cb;
	e->len = len;
	e->err = -err;
	if (sock_queue_err_skb(sk, skb)) {
		kfree_skb(skb);
		goto lost;
	}
	return;
lost:
	atomic_inc(&sk->sk_drops);
	WRITE_ONCE(sk->sk_err, ENOBUFS);
	sk_error_report(sk);
}

static void grim_sk_tx_failed(struct grim_ep *ep, struct sk_buff *msg,
			      const struct grim_msg_cb *cb, unsigned int len,
			      int err)
{
	struct sock *sk = grim_ep_sk(ep);

	if (!sock_flag(sk, SOCK_DEAD))
		grim_report_failed(sk, cb, len, err);
	kfree_skb(msg);
}

static bool grim_sk_orphaned(const struct grim_ep *ep)
{
	return sock_flag(grim_ep_sk(ep), SOCK_DEAD);
}

static void grim_sk_info(const struct grim_ep *ep, struct grim_ep_info *info)
{
	const struct grim_sock *gs = container_of(ep, struct grim_sock, ep);
	struct sock *sk = grim_ep_sk(ep);

	info->type = sk->sk_type;
	info->peer_node = READ_ONCE(gs->peer_node);
	info->peer_port = READ_ONCE(gs->peer_port);
	info->rx_queue = sk_rmem_alloc_get(sk);
	info->tx_queue = sk_wmem_alloc_get(sk);
	info->rcvbuf = READ_ONCE(sk->sk_rcvbuf);
	info->sndbuf = READ_ONCE(sk->sk_sndbuf);
	info->drops = atomic_read(&sk->sk_drops);
	info->inode = sock_i_ino(sk);
	info->uid = from_kuid_munged(sk_user_ns(sk), sock_i_uid(sk));
}

static const struct grim_ep_ops grim_sk_ep_ops = {
	.get		= grim_sk_ep_get,
	.put		= grim_sk_ep_put,
	.reserve	= grim_sk_reserve,
	.unreserve	= grim_sk_unreserve,
	.deliver	= grim_sk_deliver,
	.tx_failed	= grim_sk_tx_failed,
	.orphaned	= grim_sk_orphaned,
	.info		= grim_sk_info,
};

/* Socket operations. */

static int grim_check_addr(const struct sockaddr_grim *addr, int len)
{
	if (len < (int)sizeof(*addr))
		return -EINVAL;
	if (addr->sgrim_family != AF_GRIM)
		return -EAFNOSUPPORT;
	if (addr->sgrim_reserved)
		return -EINVAL;
	/* A group is named by its id alone. */
	if (addr->sgrim_group && (addr->sgrim_node || addr->sgrim_port))
		return -EINVAL;
	return 0;
}

static int grim_bind(struct socket *sock, struct sockaddr *uaddr, int len)
{
	struct sockaddr_grim *addr = (struct sockaddr_grim *)uaddr;
	struct sock *sk = sock->sk;
	u32 local;
	int err;

	err = grim_check_addr(addr, len);
	if (err)
		return err;
	if (addr->sgrim_group)
		return -EINVAL;		/* GRIM_JOIN joins a group */
	local = grim_ni_local_node(sock_net(sk));
	if (addr->sgrim_node && addr->sgrim_node != local)
		return -EADDRNOTAVAIL;
	if (addr->sgrim_port && addr->sgrim_port < GRIM_PORT_PRIVILEGED &&
	    !ns_capable(sock_net(sk)->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;

	lock_sock(sk);
	err = grim_ep_bind(&grim_sk(sk)->ep, addr->sgrim_port);
	release_sock(sk);
	return err;
}

static int grim_connect(struct socket *sock, struct sockaddr *uaddr,
			int len, int flags)
{
	struct sockaddr_grim *addr = (struct sockaddr_grim *)uaddr;
	struct grim_sock *gs = grim_sk(sock->sk);
	int err;

	if (len >= (int)sizeof(sa_family_t) && uaddr->sa_family == AF_UNSPEC) {
		lock_sock(&gs->sk);
		gs->peer_port = 0;
		gs->peer_node = 0;
		gs->peer_group = 0;
		release_sock(&gs->sk);
		return 0;
	}
	err = grim_check_addr(addr, len);
	if (err)
		return err;
	if ((!addr->sgrim_port && !addr->sgrim_group) ||
	    addr->sgrim_port >= GRIM_PORT_DEV)
		return -EINVAL;
	if (addr->sgrim_group > GRIM_GROUP_MAX &&
	    addr->sgrim_group != GRIM_GROUP_ALL)
		return -EINVAL;
	lock_sock(&gs->sk);
	gs->peer_node = addr->sgrim_node;
	gs->peer_port = addr->sgrim_port;
	gs->peer_group = addr->sgrim_group;
	release_sock(&gs->sk);
	return 0;
}

static int grim_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sockaddr_grim *addr = (struct sockaddr_grim *)uaddr;
	struct grim_sock *gs = grim_sk(sock->sk);

	memset(addr, 0, sizeof(*addr));
	addr->sgrim_family = AF_GRIM;
	if (peer) {
		if (!gs->peer_port && !gs->peer_group)
			return -ENOTCONN;
		addr->sgrim_node = gs->peer_node;
		addr->sgrim_port = gs->peer_port;
		addr->sgrim_group = gs->peer_group;
	} else {
		addr->sgrim_node = grim_ni_local_node(sock_net(sock->sk));
		addr->sgrim_port = gs->ep.port;
	}
	return sizeof(*addr);
}

static int grim_parse_cmsg(struct msghdr *msg, struct grim_am *am)
{
	struct cmsghdr *cmsg;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_GRIM)
			continue;
		if (cmsg->cmsg_type != GRIM_AM ||
		    cmsg->cmsg_len != CMSG_LEN(sizeof(*am)))
			return -EINVAL;
		memcpy(am, CMSG_DATA(cmsg), sizeof(*am));
		if (am->reserved)
			return -EINVAL;
	}
	return 0;
}

/* Take @n pages for a message's payload into @pages: pages of the ring
 * that nothing else holds, then new ones, which join the ring while it
 * is smaller than the send buffer.
 */
static int grim_ring_get(struct grim_sock *gs, struct page **pages,
			 unsigned int n)
{
	unsigned int limit = min_t(unsigned int, GRIM_PAGE_RING,
				   READ_ONCE(gs->sk.sk_sndbuf) >> PAGE_SHIFT);
	struct grim_page_ring *r = &gs->ring;
	unsigned int got = 0, reused, i, k;
	struct page *page;

	spin_lock(&r->lock);
	for (i = 0; i < r->count && got < n; i++) {
		k = (r->next + i) % r->count;
		page = r->page[k];
		/* Ours alone: its last message is gone, and no one else
		 * can take a reference to it but us, under this lock.
		 */
		if (page_ref_count(page) != 1)
			continue;
		get_page(page);
		pages[got++] = page;
		r->next = k + 1;
	}
	spin_unlock(&r->lock);
	if (got == n)
		return 0;

	for (reused = got; got < n; got++) {
		pages[got] = alloc_page(gs->sk.sk_allocation);
		if (!pages[got])
			goto nomem;
	}
	spin_lock(&r->lock);
	for (i = reused; i < n && r->count < limit; i++) {
		get_page(pages[i]);
		r->page[r->count++] = pages[i];
	}
	spin_unlock(&r->lock);
	return 0;

nomem:
	while (got)
		put_page(pages[--got]);
	return -ENOBUFS;
}

static void grim_ring_empty(struct grim_sock *gs)
{
	struct grim_page_ring *r = &gs->ring;

	while (r->count)
		put_page(r->page[--r->count]);
}

/* Give @skb, which has no payload yet, @len bytes of page fragments,
 * charged to the socket like the rest of the skb.  Order-0 pages, as
 * RDS uses: at most 16 of them (GRIM_MAX_PAYLOAD), cheap to allocate,
 * needing no contiguous memory.  The copy from user space into compound
 * pages was measured 2.4 times slower than into single pages
 * (BENCH_PROFILE in tools/grim/bench, under QEMU TCG).
 */
static int grim_skb_add_pages(struct grim_sock *gs, struct sk_buff *skb,
			      unsigned int len)
{
	unsigned int n = DIV_ROUND_UP(len, PAGE_SIZE), i, chunk;
	struct page *pages[GRIM_MSG_PAGES];
	int err;

	if (WARN_ON_ONCE(n > ARRAY_SIZE(pages) || n > MAX_SKB_FRAGS))
		return -EMSGSIZE;
	err = grim_ring_get(gs, pages, n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		chunk = min_t(unsigned int, len - i * PAGE_SIZE, PAGE_SIZE);
		skb_fill_page_desc(skb, i, pages[i], 0, chunk);
	}
	skb->data_len = len;
	skb->len += len;
	skb->truesize += n * PAGE_SIZE;
	refcount_add(n * PAGE_SIZE, &gs->sk.sk_wmem_alloc);
	return 0;
}

static int grim_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	DECLARE_SOCKADDR(struct sockaddr_grim *, addr, msg->msg_name);
	struct sock *sk = sock->sk;
	struct grim_sock *gs = grim_sk(sk);
	struct grim_am am = {};
	unsigned int headroom;
	struct grim_msg_cb *cb;
	size_t linear;
	struct sk_buff *skb;
	u32 node, group;
	u16 port;
	int err;

	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR |
			       MSG_CMSG_COMPAT))
		return -EOPNOTSUPP;
	if (addr) {
		err = grim_check_addr(addr, msg->msg_namelen);
		if (err)
			return err;
		node = addr->sgrim_node;
		port = addr->sgrim_port;
		group = addr->sgrim_group;
	} else {
		lock_sock(sk);
		node = gs->peer_node;
		port = gs->peer_port;
		group = gs->peer_group;
		release_sock(sk);
		if (!port && !group)
			return -EDESTADDRREQ;
	}
	/* The ports from GRIM_PORT_DEV on are the links' own (IP, the
	 * group engine): no socket speaks for them.
	 */
	if ((group > GRIM_GROUP_MAX && group != GRIM_GROUP_ALL) ||
	    (!group && !port) ||
	    port >= GRIM_PORT_DEV || node == GRIM_NODE_ANY)
		return -EINVAL;
	if (len > (group ? GRIM_GROUP_MAX_PAYLOAD : GRIM_MAX_PAYLOAD))
		return -EMSGSIZE;
	err = grim_parse_cmsg(msg, &am);
	if (err)
		return err;

	lock_sock(sk);
	err = sock_error(sk);
	if (!err && !gs->ep.port)
		err = grim_ep_bind(&gs->ep, 0);
	release_sock(sk);
	if (err)
		return err;

	if (!node && !group)
		node = grim_ni_local_node(sock_net(sk));
	if (!node && !group)
		return -EHOSTUNREACH;

	/* No NI is held while this waits for send buffer, allocates or
	 * copies: an NI or its lower device may go meanwhile, and
	 * grim_ni_send() then fails the message with a clear errno.
	 */
	linear = len <= GRIM_LINEAR_MAX ? len : 0;
	headroom = grim_ni_headroom(sock_net(sk));
	if (group)
		headroom += GRIM_GROUP_HLEN;
	skb = sock_alloc_send_pskb(sk, headroom + linear, 0,
				   msg->msg_flags & MSG_DONTWAIT, &err, 0);
	if (!skb)
		return err;
	skb_reserve(skb, headroom);
	skb_put(skb, linear);
	if (len > linear) {
		err = grim_skb_add_pages(gs, skb, len);
		if (err)
			goto free;
	}
	err = skb_copy_datagram_from_iter(skb, 0, &msg->msg_iter, len);
	if (err)
		goto free;
	cb = GRIM_MSG_CB(skb);
	cb->node = node;
	cb->dst_port = port;
	cb->handler = am.handler;
	cb->flags = 0;
	memcpy(cb->arg, am.arg, sizeof(cb->arg));
	cb->group = 0;
	cb->ticket = 0;
	if (group)
		err = grim_ni_send_group(&gs->ep, skb, group, GFP_KERNEL);
	else
		err = grim_ni_send(&gs->ep, skb, GFP_KERNEL);
	return err ?: len;

free:
	kfree_skb(skb);
	return err;
}

/* recvmsg(MSG_ERRQUEUE): the oldest report of a failed message, as
 * include/uapi/linux/grim.h describes it.  Never blocks.
 */
static int grim_recv_err(struct sock *sk, struct msghdr *msg)
{
	DECLARE_SOCKADDR(struct sockaddr_grim *, addr, msg->msg_name);
	struct sock_extended_err ee = {};
	const struct grim_msg_err *e;
	struct grim_am am = {};
	struct sk_buff *skb;
	bool group;
	int err;

	skb = sock_dequeue_err_skb(sk);
	if (!skb)
		return -EAGAIN;
	e = (const struct grim_msg_err *)skb->data;
	group = e->cb.flags & GRIM_MSG_F_GROUP;
	if (addr) {
		memset(addr, 0, sizeof(*addr));
		addr->sgrim_family = AF_GRIM;
		if (group) {
			addr->sgrim_group = e->cb.group;
		} else {
			addr->sgrim_node = e->cb.node;
			addr->sgrim_port = e->cb.dst_port;
		}
		msg->msg_namelen = sizeof(*addr);
	}
	am.handler = e->cb.handler;
	memcpy(am.arg, e->cb.arg, sizeof(am.arg));
	ee.ee_errno = e->err;
	ee.ee_origin = SO_EE_ORIGIN_LOCAL;
	ee.ee_info = e->len - (group && e->len >= GRIM_GROUP_HLEN ?
			       GRIM_GROUP_HLEN : 0);
	err = put_cmsg(msg, SOL_GRIM, GRIM_AM, sizeof(am), &am);
	if (!err)
		err = put_cmsg(msg, SOL_GRIM, GRIM_RECVERR, sizeof(ee), &ee);
	msg->msg_flags |= MSG_ERRQUEUE;
	kfree_skb(skb);
	return err;
}

static int grim_recvmsg(struct socket *sock, struct msghdr *msg, size_t size,
			int flags)
{
	DECLARE_SOCKADDR(struct sockaddr_grim *, addr, msg->msg_name);
	struct sock *sk = sock->sk;
	const struct grim_msg_cb *cb;
	struct sk_buff *skb;
	size_t copied;
	int err;

	if (flags & ~(MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC | MSG_CMSG_COMPAT |
		      MSG_ERRQUEUE))
		return -EOPNOTSUPP;
	if (flags & MSG_ERRQUEUE)
		return grim_recv_err(sk, msg);
	skb = skb_recv_datagram(sk, flags, &err);
	if (!skb)
		return err;

	copied = skb->len;
	if (copied > size) {
		copied = size;
		msg->msg_flags |= MSG_TRUNC;
	}
	err = skb_copy_datagram_msg(skb, 0, msg, copied);
	if (err)
		goto out;

	cb = GRIM_MSG_CB(skb);
	if (addr) {
		memset(addr, 0, sizeof(*addr));
		addr->sgrim_family = AF_GRIM;
		addr->sgrim_node = cb->node;
		addr->sgrim_port = cb->src_port;
		if (cb->flags & GRIM_MSG_F_GROUP)
			addr->sgrim_group = cb->group;
		msg->msg_namelen = sizeof(*addr);
	}
	if (msg->msg_controllen) {
		struct grim_am am = { .handler = cb->handler };

		memcpy(am.arg, cb->arg, sizeof(am.arg));
		err = put_cmsg(msg, SOL_GRIM, GRIM_AM, sizeof(am), &am);
		if (!err && (cb->flags & GRIM_MSG_F_GROUP)) {
			struct grim_group_info gi = {
				.group = cb->group,
				.ticket = cb->ticket,
			};

			err = put_cmsg(msg, SOL_GRIM, GRIM_GROUP, sizeof(gi),
				       &gi);
		}
		if (err)
			goto out;
	}
	err = (flags & MSG_TRUNC) ? skb->len : copied;
out:
	skb_free_datagram(sk, skb);
	return err;
}

static int grim_getsockopt(struct socket *sock, int level, int optname,
			   char __user *optval, int __user *optlen)
{
	u32 node;
	int len;

	if (level != SOL_GRIM)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (optname != GRIM_LOCAL_NODE)
		return -ENOPROTOOPT;
	if (len < (int)sizeof(node))
		return -EINVAL;
	node = grim_ni_local_node(sock_net(sock->sk));
	if (put_user(sizeof(node), optlen) ||
	    copy_to_user(optval, &node, sizeof(node)))
		return -EFAULT;
	return 0;
}

static int grim_setsockopt(struct socket *sock, int level, int optname,
			   sockptr_t optval, unsigned int optlen)
{
	struct grim_sock *gs = grim_sk(sock->sk);
	u32 group;
	int err;

	if (level != SOL_GRIM)
		return -EOPNOTSUPP;
	if (optname != GRIM_JOIN && optname != GRIM_LEAVE)
		return -ENOPROTOOPT;
	if (optlen < sizeof(group))
		return -EINVAL;
	if (copy_from_sockptr(&group, optval, sizeof(group)))
		return -EFAULT;
	if (optname == GRIM_LEAVE)
		return grim_ep_leave(&gs->ep, group);
	if (!group || (group > GRIM_GROUP_MAX && group != GRIM_GROUP_ALL))
		return -EINVAL;
	/* Joined, the socket receives: it needs its port. */
	lock_sock(&gs->sk);
	err = gs->ep.port ? 0 : grim_ep_bind(&gs->ep, 0);
	release_sock(&gs->sk);
	return err ?: grim_ep_join(&gs->ep, group);
}

static int grim_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sk_buff *skb;
	int amount;

	switch (cmd) {
	case SIOCOUTQ:
		amount = sk_wmem_alloc_get(sk);
		break;
	case SIOCINQ:
		spin_lock_bh(&sk->sk_receive_queue.lock);
		skb = skb_peek(&sk->sk_receive_queue);
		amount = skb ? skb->len : 0;
		spin_unlock_bh(&sk->sk_receive_queue.lock);
		break;
	default:
		return -ENOIOCTLCMD;
	}
	return put_user(amount, (int __user *)arg);
}

static void grim_sock_destruct(struct sock *sk)
{
	skb_queue_purge(&sk->sk_receive_queue);
	skb_queue_purge(&sk->sk_error_queue);
	grim_ring_empty(grim_sk(sk));
}

static int grim_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;
	grim_ep_unbind(&grim_sk(sk)->ep);
	lock_sock(sk);
	sock_orphan(sk);
	sock->sk = NULL;
	release_sock(sk);
	skb_queue_purge(&sk->sk_receive_queue);
	skb_queue_purge(&sk->sk_error_queue);
	/* Messages in flight keep sk (through sk_wmem_alloc) until ACKed. */
	sock_put(sk);
	return 0;
}

static const struct proto_ops grim_rdm_ops = {
	.family		= PF_GRIM,
	.owner		= THIS_MODULE,
	.release	= grim_release,
	.bind		= grim_bind,
	.connect	= grim_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= grim_getname,
	.poll		= datagram_poll,
	.ioctl		= grim_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= grim_setsockopt,
	.getsockopt	= grim_getsockopt,
	.sendmsg	= grim_sendmsg,
	.recvmsg	= grim_recvmsg,
	.mmap		= sock_no_mmap,
};

static struct proto grim_proto = {
	.name		= "GRIM",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct grim_sock),
};

static int grim_create(struct net *net, struct socket *sock, int protocol,
		       int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_RDM)
		return -ESOCKTNOSUPPORT;
	if (protocol)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, PF_GRIM, GFP_KERNEL, &grim_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock->ops = &grim_rdm_ops;
	sock->state = SS_UNCONNECTED;
	sock_init_data(sock, sk);
	/* Room for several messages of the largest size (net.core's
	 * default holds two): fewer refusals, as TIPC's 2 MB default.
	 */
	sk->sk_rcvbuf = max_t(int, sk->sk_rcvbuf, GRIM_RCVBUF_DEF);
	sock_set_flag(sk, SOCK_RCU_FREE);
	sk->sk_destruct = grim_sock_destruct;
	grim_ep_init(&grim_sk(sk)->ep, &grim_sk_ep_ops, net);
	spin_lock_init(&grim_sk(sk)->ring.lock);
	return 0;
}

static const struct net_proto_family grim_family = {
	.family	= PF_GRIM,
	.create	= grim_create,
	.owner	= THIS_MODULE,
};

/* The module's entry: the NI (drivers/net/grim), then the family on
 * top of it, opened to user space last, once nothing else can fail: a
 * socket made while a later step fails would pin a module that is about
 * to be freed.
 */
static int __init grim_init(void)
{
	int err;

	err = grim_ni_init();
	if (err)
		return err;
	err = proto_register(&grim_proto, 0);
	if (err)
		goto err_ni;
	err = sock_register(&grim_family);
	if (err) {
		pr_err("AF_GRIM (%d) is taken by another family\n", AF_GRIM);
		goto err_proto;
	}
	pr_info("AF_GRIM %d\n", AF_GRIM);
	return 0;

err_proto:
	proto_unregister(&grim_proto);
err_ni:
	grim_ni_exit();
	return err;
}

static void __exit grim_exit(void)
{
	sock_unregister(PF_GRIM);
	proto_unregister(&grim_proto);
	grim_ni_exit();
}

module_init(grim_init);
module_exit(grim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GRIM: reliable in-order message layer (NI and AF_GRIM)");
MODULE_VERSION(GRIM_VERSION);
MODULE_ALIAS_NETPROTO(PF_GRIM);
