/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The case runner of softsrd's C selftests that are tables of cases
 * (srd_rdma, srd_srd_qp): one TAP line a case, its checks "# " lines.
 *
 *	static const struct srd_case cases[] = {
 *		{ "what case 1 shows", case_one, NULL },
 *		{ "a case never run here", NULL, "why" },
 *	};
 *	static struct srd_runner run = {
 *		.cases = cases, .n = SRD_NCASES(cases), .nargs = 4,
 *		.usage = "[-c CASE[,CASE...]] DEV_A IP_A DEV_B IP_B",
 *	};
 *	...
 *	i = srd_cases_args(&run, argc, argv);	(the operands at argv + i)
 *	...set up...
 *	rc = srd_cases_run(&run);
 *
 * -c CASE[,CASE...] chooses the cases that run (1..n, or a.. too with
 * .letters); the others print "ok N NAME # SKIP not chosen with -c".
 * .opts names more getopt letters, each given to .opt.  .before runs before
 * each case that runs, .failed after one with a failed check.  A case can
 * say it cannot run here with srd_case_skip.  srd_cases_run prints the
 * plan, one line a case, and how many failed; KSFT_PASS or KSFT_FAIL.
 *
 * A check is expect() (reported either way) or must() (reported only when
 * it fails): a "#   ok: " or "#   FAIL: " line, counted in ksft_n, and
 * the failures of the case in srd_case_fails.
 */
#ifndef SRD_CASE_H
#define SRD_CASE_H

#include <stdarg.h>

#include "srd_test.h"

#define SRD_NCASES(cases)	((int)(sizeof(cases) / sizeof((cases)[0])))

struct srd_case {
	const char *name;
	void (*run)(void);
	const char *skip;		/* with run NULL: why it never runs */
};

struct srd_runner {
	const struct srd_case *cases;
	int n;				/* at most 64 */
	bool letters;			/* CASE is 1..n or a..; "# case N (x): " */
	int nargs;			/* the operands after the options */
	const char *usage;		/* what follows the program's name */
	const char *opts;		/* getopt letters besides "c:" */
	void (*opt)(int c, const char *arg);
	void (*before)(int i);		/* cases[i] is about to run */
	void (*failed)(void);		/* a case had a failed check */
	unsigned long long chosen;	/* bit i: cases[i] runs */
};

static int srd_case_fails;		/* failed checks of the running case */
static const char *srd_case_skip;	/* set by a case that cannot run here */
static const char *srd_check_who = "";	/* before each check's report */

static inline bool __attribute__((format(printf, 4, 5)))
check_at(bool ok, bool loud, int line, const char *fmt, ...)
{
	va_list ap;

	ksft_n++;		/* every check, for the summary line */
	if (!ok)
		srd_case_fails++;
	if (ok && !loud)
		return true;
	printf(ok ? "#   %sok: " : "#   %sFAIL: ", srd_check_who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (ok)
		printf("\n");
	else
		printf(" (line %d)\n", line);
	return ok;
}

/* expect: reported either way; must: reported only when it fails. */
#define expect(cond, ...) check_at(!!(cond), true, __LINE__, __VA_ARGS__)
#define must(cond, ...) check_at(!!(cond), false, __LINE__, __VA_ARGS__)
#define expect_eq(what, exp, seen)					\
	check_eq_at(what, (long long)(exp), (long long)(seen), __LINE__)

static inline bool check_eq_at(const char *what, long long exp, long long seen, int line)
{
	return check_at(exp == seen, true, line, "%s: expected %lld, saw %lld",
			what, exp, seen);
}

/* The next completion on cq; false and a failed check when none came. */
static inline bool next_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms, const char *what)
{
	int rc = srd_poll(cq, wc, ms);

	return must(rc == 1, "%s: expected a completion within %d ms, %s", what, ms,
		    rc ? "ibv_poll_cq failed" : "saw none");
}

/* One -c argument into r->chosen; false after saying what is wrong. */
static inline bool srd_cases_choose(struct srd_runner *r, const char *s)
{
	char *end;
	long c;

	r->chosen = 0;
	for (;;) {
		if (r->letters && *s >= 'a' && *s < 'a' + r->n) {
			c = *s - 'a' + 1;
			end = (char *)s + 1;
		} else {
			c = strtol(s, &end, 10);
		}
		if (end == s || c < 1 || c > r->n) {
			if (r->letters)
				fprintf(stderr, "-c: cases are 1..%d or a..%c\n", r->n,
					'a' + r->n - 1);
			else
				fprintf(stderr, "-c: cases are 1..%d\n", r->n);
			return false;
		}
		r->chosen |= 1ull << (c - 1);
		if (*end != ',')
			return true;
		s = end + 1;
	}
}

/*
 * The options: -c, and r->opts' letters through r->opt.  The index in argv
 * of the first of r->nargs operands, or -1 after saying what is wrong.
 */
static inline int srd_cases_args(struct srd_runner *r, int argc, char **argv)
{
	char optstr[32];
	int opt;

	snprintf(optstr, sizeof(optstr), "c:%s", r->opts ? r->opts : "");
	r->chosen = r->n < 64 ? (1ull << r->n) - 1 : ~0ull;
	while ((opt = getopt(argc, argv, optstr)) != -1) {
		if (opt == 'c') {
			if (!srd_cases_choose(r, optarg))
				return -1;
		} else if (opt != '?' && opt != ':' && r->opt) {
			r->opt(opt, optarg);
		} else {
			return -1;
		}
	}
	if (argc - optind != r->nargs) {
		fprintf(stderr, "usage: %s %s\n", argv[0], r->usage);
		return -1;
	}
	return optind;
}

/* The chosen cases, one TAP line each; KSFT_PASS when none failed. */
static inline int srd_cases_run(const struct srd_runner *r)
{
	int i, failed = 0;

	printf("1..%d\n", r->n);
	for (i = 0; i < r->n; i++) {
		const struct srd_case *c = &r->cases[i];
		long long t0 = srd_now_ms();

		if (!(r->chosen & (1ull << i)) || !c->run) {
			printf("ok %d %s # SKIP %s\n", i + 1, c->name,
			       c->run ? "not chosen with -c" : c->skip);
			continue;
		}
		if (r->letters)
			printf("# case %d (%c): %s\n", i + 1, 'a' + i, c->name);
		else
			printf("# case %d: %s\n", i + 1, c->name);
		if (r->before)
			r->before(i);
		srd_case_fails = 0;
		srd_case_skip = NULL;
		c->run();
		if (srd_case_fails) {
			failed++;
			ksft_failed++;
			if (r->failed)
				r->failed();
		}
		if (srd_case_skip && !srd_case_fails)
			printf("ok %d %s # SKIP %s\n", i + 1, c->name, srd_case_skip);
		else
			printf("%sok %d %s # %lld ms\n", srd_case_fails ? "not " : "", i + 1,
			       c->name, srd_now_ms() - t0);
	}
	printf("# %d of the chosen cases failed (%d checks)\n", failed, ksft_n);
	return failed ? KSFT_FAIL : KSFT_PASS;
}

#endif
