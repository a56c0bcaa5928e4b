// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: the TCP channel between client and server: framing, messages,
 * listen, accept and connect.
 */
#include "perf.h"

void wb_put(struct perf *p, struct wbuf *w, const void *d, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;

		while (cap < w->len + n)
			cap *= 2;
		w->b = realloc(w->b, cap);
		if (!w->b)
			die(p, "out of memory for a %zu-byte message", cap);
		w->cap = cap;
	}
	memcpy(w->b + w->len, d, n);
	w->len += n;
}

void wb_u32(struct perf *p, struct wbuf *w, uint32_t v)
{
	v = htonl(v);
	wb_put(p, w, &v, 4);
}

void wb_u64(struct perf *p, struct wbuf *w, uint64_t v)
{
	wb_u32(p, w, v >> 32);
	wb_u32(p, w, v);
}

void wb_get(struct wbuf *w, void *d, size_t n)
{
	if (w->bad || w->pos + n > w->len) {
		w->bad = true;
		memset(d, 0, n);
		return;
	}
	memcpy(d, w->b + w->pos, n);
	w->pos += n;
}

uint32_t wb_get_u32(struct wbuf *w)
{
	uint32_t v;

	wb_get(w, &v, 4);
	return ntohl(v);
}

uint64_t wb_get_u64(struct wbuf *w)
{
	uint64_t hi = wb_get_u32(w);

	return hi << 32 | wb_get_u32(w);
}

void wb_reset(struct wbuf *w)
{
	w->len = w->pos = 0;
	w->bad = false;
}

/* Move len bytes over the socket, waiting at most the stall time for each. */
static void sock_io(struct perf *p, bool out, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = p->sock, .events = out ? POLLOUT : POLLIN };
	int timeout = p->o.stall_s ? (int)p->o.stall_s * 1000 : -1;
	uint8_t *b = buf;
	ssize_t n;
	int rc;

	while (len) {
		rc = poll(&pfd, 1, timeout);
		if (rc == 0)
			die(p, "nothing from the peer over TCP for %u s", p->o.stall_s);
		if (rc < 0 && errno != EINTR)
			die(p, "poll: %s", strerror(errno));
		if (rc < 0)
			continue;
		n = out ? send(p->sock, b, len, MSG_NOSIGNAL) : recv(p->sock, b, len, 0);
		if (n == 0)
			die(p, "the peer closed the TCP connection");
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			die(p, "TCP %s: %s", out ? "send" : "recv", strerror(errno));
		if (n > 0) {
			b += n;
			len -= n;
		}
	}
}

void msg_send(struct perf *p, uint32_t type, struct wbuf *w)
{
	uint32_t h[2] = { htonl(type), htonl(w->len) };

	sock_io(p, true, h, sizeof(h));
	sock_io(p, true, w->b, w->len);
}

/* The next message into w; its type. */
uint32_t msg_recv_any(struct perf *p, struct wbuf *w)
{
	uint32_t h[2], len;

	sock_io(p, false, h, sizeof(h));
	len = ntohl(h[1]);
	if (len > PERF_MAX_MSG)
		die(p, "a %u-byte message from the peer: out of sync", len);
	wb_reset(w);
	if (len > w->cap) {
		w->b = realloc(w->b, len);
		if (!w->b)
			die(p, "out of memory for a %u-byte message", len);
		w->cap = len;
	}
	sock_io(p, false, w->b, len);
	w->len = len;
	return ntohl(h[0]);
}

void msg_recv(struct perf *p, uint32_t type, struct wbuf *w)
{
	uint32_t t = msg_recv_any(p, w);

	if (t != type)
		die(p, "expected message %u from the peer, got %u", type, t);
}

void msg_check_end(struct perf *p, struct wbuf *w, const char *what)
{
	if (w->bad || w->pos != w->len)
		die(p, "malformed %s message from the peer", what);
}

int tcp_listen(struct perf *p)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(p->o.port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(p->o.port) };
	int fd, one = 1, zero = 0;

	/* One dual-stack socket takes both IPv4 and IPv6 clients. */
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd >= 0) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0)
			goto bound;
		close(fd);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die(p, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)))
		die(p, "bind to TCP port %u: %s", p->o.port, strerror(errno));
bound:
	if (listen(fd, 1))
		die(p, "listen: %s", strerror(errno));
	return fd;
}

void tcp_accept(struct perf *p)
{
	struct pollfd pfd = { .fd = p->lsock, .events = POLLIN };
	int rc = poll(&pfd, 1, p->o.stall_s ? (int)p->o.stall_s * 1000 : -1);

	if (rc == 0)
		die(p, "no client connected within %u s", p->o.stall_s);
	p->sock = rc > 0 ? accept(p->lsock, NULL, NULL) : -1;
	if (p->sock < 0)
		die(p, "accept: %s", strerror(errno));
}

void tcp_connect(struct perf *p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { .tv_sec = p->o.stall_s };
	char port[16];
	int rc, err = 0;

	snprintf(port, sizeof(port), "%u", p->o.port);
	rc = getaddrinfo(p->o.host, port, &hints, &res);
	if (rc)
		die(p, "%s: %s", p->o.host, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		p->sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (p->sock < 0)
			continue;
		/* Bounds connect() too. */
		setsockopt(p->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(p->sock, ai->ai_addr, ai->ai_addrlen))
			break;
		err = errno;
		close(p->sock);
		p->sock = -1;
	}
	freeaddrinfo(res);
	if (p->sock < 0)
		die(p, "cannot connect to %s port %u: %s", p->o.host, p->o.port,
		    strerror(err));
}
