// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: association tags and packets from remotes with no peer.
 *
 * A device's tag for one remote is a keyed hash of the pair of addresses
 * (docs/protocol.md, "Tags and peer restart"): unguessable without the
 * engine's secret, the same whether the peer was made by a local send or
 * by the remote, and computable without state.  So a HELLO from a remote
 * we keep nothing for is answered from the hash alone, and a later packet
 * that names the answer's tag proves its sender receives at its address:
 * only then is a peer created.  The secret comes from ops->random_u32 when
 * the engine is created, and dies with it (a new incarnation, new tags).
 */
#include "tag.h"
#include "wire.h"

/* SipHash-2-4 (Aumasson and Bernstein), written from the paper. */
static inline uint64_t rotl64(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* One SipRound on the caller's v0..v3. */
#define SIPROUND do {							\
	v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32);	\
	v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32);	\
} while (0)

uint64_t srd_siphash24(const uint8_t key[16], const uint8_t *m, size_t len)
{
	uint64_t k0 = get_le64(key), k1 = get_le64(key + 8);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = k1 ^ 0x7465646279746573ull;
	uint64_t b = (uint64_t)len << 56, w;
	size_t i, tail = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		w = get_le64(m + i);
		v3 ^= w;
		SIPROUND;
		SIPROUND;
		v0 ^= w;
	}
	while (tail--)
		b |= (uint64_t)m[i + tail] << (8 * tail);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void srd_tag_init(struct srd_engine *eng)
{
	uint32_t i, r;

	for (i = 0; i < 4; i++) {
		r = eng->ops->random_u32(eng->os);
		srd_put_be32(eng->tag_key + 4 * i, r);
	}
	eng->stray_tokens = SRD_STRAY_BURST;
	eng->stray_refill_us = eng->ops->now_us(eng->os);
}

uint32_t srd_engine_tag(const struct srd_engine *eng, const void *addr,
			size_t addr_len)
{
	uint64_t h = srd_siphash24(eng->tag_key, addr, addr_len);
	uint32_t tag = (uint32_t)(h ^ (h >> 32));

	return tag ? tag : 1;	/* 0 means "unknown" on the wire */
}

/*
 * The challenge for a claimed new remote tag @claimed of @peer (docs/
 * protocol.md, "Tags and peer restart"): sent only to the remote's
 * address, so a HELLO that echoes it proves its sender receives there.
 * Keyed by the engine's secret, bound to the peer's tag and the claimed
 * one, and fresh: it changes every SRD_CHALLENGE_PERIOD_US, and one of
 * the period before is still taken, so an answer in flight across the
 * change counts.  No state: a flood of claims costs a hash each, no
 * memory, and no claim can push out another's.  Never 0 (none).
 */
static uint32_t challenge_at(const struct srd_peer *peer, uint32_t claimed,
			     uint64_t period)
{
	uint8_t m[13];
	uint64_t h;
	uint32_t c;

	srd_put_be32(m, peer->local_tag);
	srd_put_be32(m + 4, claimed);
	srd_put_be32(m + 8, (uint32_t)period);
	m[12] = 'C';	/* no tag's input is 13 bytes long */
	h = srd_siphash24(peer->eng->tag_key, m, sizeof(m));
	c = (uint32_t)(h ^ (h >> 32));
	return c ? c : 1;
}

uint32_t srd_peer_challenge(const struct srd_peer *peer, uint32_t claimed,
			    uint64_t now_us)
{
	return challenge_at(peer, claimed, now_us / SRD_CHALLENGE_PERIOD_US);
}

bool srd_peer_challenge_ok(const struct srd_peer *peer, uint32_t claimed,
			   uint32_t echo, uint64_t now_us)
{
	uint64_t period = now_us / SRD_CHALLENGE_PERIOD_US;

	return echo && (echo == challenge_at(peer, claimed, period) ||
			(period && echo == challenge_at(peer, claimed,
							 period - 1)));
}

/*
 * A reply without a peer: at most SRD_STRAY_BURST at once, then one per
 * SRD_STRAY_GAP_US, for the whole engine.
 */
static bool stray_budget(struct srd_engine *eng)
{
	uint64_t now = eng->ops->now_us(eng->os);
	uint64_t earned = (now - eng->stray_refill_us) / SRD_STRAY_GAP_US;

	if (earned) {
		eng->stray_tokens = earned >= SRD_STRAY_BURST ? SRD_STRAY_BURST :
				    srd_min_u64(SRD_STRAY_BURST,
						eng->stray_tokens + earned);
		eng->stray_refill_us += earned * SRD_STRAY_GAP_US;
	}
	if (!eng->stray_tokens)
		return false;
	eng->stray_tokens--;
	return true;
}

enum srd_stray_verdict srd_engine_on_stray(struct srd_engine *eng,
					   const void *addr, size_t addr_len,
					   const uint8_t *buf, size_t len,
					   uint8_t *reply, uint32_t *reply_len)
{
	uint32_t tag = srd_engine_tag(eng, addr, addr_len);
	struct srd_pkt p, h;
	int err = srd_wire_parse(buf, len, &p);

	/*
	 * Its sender has heard from us at its address: the packet goes to
	 * the new peer, which counts it.
	 */
	if (err == SRD_PARSE_OK && p.dst_tag == tag &&
	    (p.opcode == SRD_WOP_DATA || p.opcode == SRD_WOP_WRITE ||
	     p.opcode == SRD_WOP_READ_REQ))
		return SRD_STRAY_ACCEPT;
	eng->ctr.rx_pkts++;
	eng->ctr.rx_bytes += len;
	if (err != SRD_PARSE_OK) {
		eng->ctr.rx_drop_bad_hdr++;
		return SRD_STRAY_DROP;
	}
	if (p.dst_tag == tag && !(p.opcode == SRD_WOP_HELLO && p.challenge)) {
		/*
		 * From a sender that heard from us, but nothing of ours for
		 * an ACK, NAK, HELLO or READ response to act on.
		 */
		eng->ctr.rx_drop_unsolicited++;
		return SRD_STRAY_DROP;
	}
	if (p.dst_tag == tag)		/* it asks us to prove our address */
		eng->ctr.hellos_received++;
	else if (p.dst_tag)
		eng->ctr.rx_drop_stale_tag++;
	else
		eng->ctr.hellos_received++;
	/* Tell the address who we are, from the hash alone. */
	if (!stray_budget(eng))
		return SRD_STRAY_DROP;
	srd_memset(&h, 0, sizeof(h));
	h.src_tag = tag;
	h.dst_tag = p.src_tag;
	/*
	 * Echo the tag the packet named (an older incarnation's: its sender
	 * then knows we live at the address it sent to), or, to a HELLO that
	 * named ours, its challenge.
	 */
	h.echo = p.dst_tag == tag ? p.challenge : p.dst_tag;
	*reply_len = srd_wire_put_hello(reply, &h);
	eng->ctr.hellos_sent++;
	eng->ctr.stateless_replies++;
	eng->ctr.tx_pkts++;
	eng->ctr.tx_bytes += *reply_len;
	return SRD_STRAY_REPLY;
}
