// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: bandwidth and latency of SRD QPs, with every byte checked.
 *
 * The options, the output and the exit status are in srd_perf(1)
 * (man/srd_perf.1.md) and `srd_perf --help`.  How it works:
 *
 * The client decides everything and tells the server over TCP, which may
 * run over another link than the RDMA traffic.  Each side sends its GID and
 * QP numbers; the AH is made from the peer's GID.  The server serves one
 * client and exits.
 *
 * Every message is a function of (direction, QP index, sequence number,
 * offset): a 16-byte header {seq, size, qp index and direction, magic},
 * cut to the message size, then 64-bit words from a per-message seed.  The
 * receiver checks every byte and keeps the sequence numbers it saw per QP
 * in a bitmap.  Messages shorter than 4 bytes have no room for the
 * sequence number and always go as SEND_WITH_IMM.  After each size the
 * client sends the bitmap of its sends that completed successfully; the
 * server answers with what it received, and a message whose send completed
 * successfully but that never arrived is missing.  The payload is made for
 * each message, which the CPU figure includes.
 *
 * -o write and -o read: the client posts RDMA writes or reads (the
 * ibv_wr_*() API: ibv_post_send() cannot carry an AH and an rkey) into a
 * region of the server's per QP: one slot of the largest size per op the
 * client may have in flight, registered for remote read and write, whose
 * address and rkey the server sends over TCP.  The server takes no part in
 * the data path.  write: client slot s always writes server slot s, which
 * it reuses only after the write completed, so no two writes overlap.  The
 * server poisons its region before each size; after it, the client tells
 * which seq each slot last wrote successfully, and the server checks every
 * slot: the message of that seq (else missing if still poisoned, dup if an
 * older write's message, corrupt otherwise), and its poison past the size
 * untouched.  So the last write of each slot is checked, not every write.
 * read: the server fills slot k with the message (server to client, QP,
 * seq k) before each size; read seq n reads slot n mod slots into a
 * client slot poisoned first, and every read's bytes are checked, and the
 * poison after them; after the size the server checks that its region is
 * unchanged.  Latency for RDMA ops is not a ping-pong: one signalled op at
 * a time per QP, timed from post to completion (write: the data placed and
 * ACKed at the target; read: the data back), which is a whole round trip
 * and reported as such, not halved.
 *
 * Output: per size, a row of a table, or with --json a JSON object on a
 * line of its own (report()); '#' lines are comments, on stderr with
 * --json.  bw: msgs counts successful sends (ops) over all QPs, secs runs
 * from the first post to the last completion, MB are 10^6 bytes, the
 * percentiles are of post-to-completion times, cpu_s_per_GB is the
 * client's user+system time per 10^9 bytes.  lat: one-way figures, half
 * the round trip; RDMA ops: the whole post-to-completion time of one op.
 * errors counts error completions and failed posts on both sides.
 */
#include "perf.h"

FILE *cmt;
const char *const op_names[] = { "send", "write", "read" };
const char *const note_names[NOTE_KINDS] = {
	"errors", "corrupt messages", "duplicates", "other notes",
};
static struct perf perf = { .lsock = -1, .sock = -1 };

/* --- options -------------------------------------------------------------- */

/* -h, --help: to stdout, exit 0; a wrong command line: to stderr, exit 2. */
static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: srd_perf -S [-d DEV] [-g GIDX] [-p PORT] [-W SECS] [-E] [--json]\n"
		"       srd_perf [-d DEV] [-g GIDX] [-p PORT] [-W SECS] [-t bw|lat]\n"
		"                [-o send|write|read] [-s SIZES] [-q NQPS] [-D DEPTH]\n"
		"                [-n ITERS | -T SECS] [-r RNR] [-I] [-e] [-x] [-E] [--json]\n"
		"                SERVER_ADDR\n");
	if (status) {
		fprintf(stderr, "Try 'srd_perf --help' for more.\n");
		exit(status);
	}
	printf("Bandwidth and latency of softsrd's SRD QPs, every byte checked.\n"
	       "  -S         be the server (serves one client, then exits)\n"
	       "  -d DEV     device (default: the first srd device)\n"
	       "  -g GIDX    GID index (default: the first IPv4-mapped GID)\n"
	       "  -p PORT    TCP port of the control connection (default %u)\n"
	       "  -W SECS    give up after SECS without progress (default 60, 0: never)\n"
	       "  -t MODE    bw (streaming, default) or lat (ping-pong; RDMA: one op\n"
	       "             at a time, post to completion, not halved)\n"
	       "  -o OP      send (default), or RDMA write or read of the server's memory\n"
	       "  -s SIZES   message sizes, comma separated (default 4096)\n"
	       "  -q NQPS    QPs per side (default 1, at most %u)\n"
	       "  -D DEPTH   sends (ops) in flight per QP, bw mode (default 16)\n"
	       "  -n ITERS   messages (lat: round trips) per size and QP (default 1000)\n"
	       "  -T SECS    run each size for SECS seconds instead\n"
	       "  -r RNR     rnr_retry of the client QPs, 0-7 (default 7: forever)\n"
	       "  -I         SEND_WITH_IMM, the immediate being the sequence number\n"
	       "  -e         error completions are expected: report, do not fail\n"
	       "  -x         post with the ibv_wr_*() API\n"
	       "  -E         sleep on a completion channel when idle (default: spin)\n"
	       "  -J, --json a JSON object per size on stdout, '#' lines on stderr\n"
	       "             (default: a table, '#' lines among it)\n"
	       "  -h, --help this text\n"
	       "Exit status: 0 all checks passed, 1 a failure ('# FAIL:' says which),\n"
	       "2 a wrong command line, 4 no srd device.  See srd_perf(1).\n",
	       PERF_PORT, PERF_MAX_QPS);
	exit(0);
}

static uint32_t num(const char *s, const char *what, uint32_t lo, uint32_t hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "srd_perf: %s must be %u to %u, not '%s'\n", what,
			lo, hi, s);
		exit(2);
	}
	return v;
}

static void parse_sizes(struct perf_opts *o, char *arg)
{
	char *tok, *save = NULL;

	o->nsizes = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == PERF_MAX_SIZES) {
			fprintf(stderr, "srd_perf: at most %u sizes\n", PERF_MAX_SIZES);
			exit(2);
		}
		o->sizes[o->nsizes++] = num(tok, "a size", 0, 1u << 30);
	}
	if (!o->nsizes)
		usage(2);
}

static void parse_opts(struct perf_opts *o, int argc, char **argv)
{
	char defsize[] = "4096";
	int opt;
	uint32_t i;

	*o = (struct perf_opts){ .gidx = -1, .port = PERF_PORT, .stall_s = 60,
				 .nqps = 1, .depth = 16, .iters = 1000, .rnr = 7 };
	parse_sizes(o, defsize);
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{}
	};

	while ((opt = getopt_long(argc, argv, "Sd:g:p:W:t:o:s:q:D:n:T:r:IexEJUh",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'S': o->server = true; break;
		case 'd': o->dev = optarg; break;
		case 'g': o->gidx = num(optarg, "-g", 0, 255); break;
		case 'p': o->port = num(optarg, "-p", 1, 65535); break;
		case 'W': o->stall_s = num(optarg, "-W", 0, 86400); break;
		case 't':
			if (strcmp(optarg, "bw") && strcmp(optarg, "lat")) {
				fprintf(stderr, "srd_perf: -t is bw or lat, not '%s'\n", optarg);
				usage(2);
			}
			o->mode = strcmp(optarg, "bw") ? MODE_LAT : MODE_BW;
			break;
		case 'o':
			for (i = 0; i < 3 && strcmp(optarg, op_names[i]); i++)
				;
			if (i == 3) {
				fprintf(stderr, "srd_perf: -o is send, write or read, not '%s'\n",
					optarg);
				usage(2);
			}
			o->op = i;
			break;
		case 's': parse_sizes(o, optarg); break;
		case 'q': o->nqps = num(optarg, "-q", 1, PERF_MAX_QPS); break;
		case 'D': o->depth = num(optarg, "-D", 1, 65536); break;
		case 'n': o->iters = num(optarg, "-n", 1, PERF_MAX_SEQ); break;
		case 'T': o->secs = num(optarg, "-T", 1, 86400); break;
		case 'r': o->rnr = num(optarg, "-r", 0, 7); break;
		case 'I': o->flags |= F_IMM; break;
		case 'e': o->flags |= F_EXPECT_ERR; break;
		case 'x': o->flags |= F_WR_API; break;
		case 'E': o->flags |= F_EVENTS; break;
		case 'U': o->flags |= F_UD; break;	/* testing without SRD */
		case 'J': o->json = true; break;
		case 'h': usage(0);
		default: usage(2);
		}
	}
	if (o->server ? optind != argc : optind != argc - 1)
		usage(2);
	if (!o->server)
		o->host = argv[optind];
	if (o->op != OP_SEND) {
		if (o->server || (o->flags & (F_IMM | F_UD))) {
			fprintf(stderr, "srd_perf: -o %s is the client's, and goes with neither -I nor -U\n",
				op_names[o->op]);
			exit(2);
		}
		/* Only the ibv_wr_*() API carries an AH and an rkey. */
		o->flags |= F_WR_API | (o->op == OP_WRITE ? F_WRITE : F_READ);
	}
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > o->max_size)
			o->max_size = o->sizes[i];
}

int main(int argc, char **argv)
{
	struct perf *p = &perf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(&p->o, argc, argv);
	cmt = p->o.json ? stderr : stdout;
	p->nqps = p->o.nqps;
	if (p->o.server)
		server(p);
	else
		client(p);
	perf_cleanup(p);
	if (p->failed)
		fprintf(cmt, "# FAIL: errors, corrupt, duplicate or missing messages (see above)\n");
	return p->failed ? 1 : 0;
}
