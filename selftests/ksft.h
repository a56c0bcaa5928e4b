/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal kselftest-style TAP helpers for softsrd's C tests: each check
 * prints one "ok"/"not ok" line; the program exits 0 if all passed, 1 if
 * any failed and 4 (skip) when the test cannot run here.
 */
#ifndef SRD_KSFT_H
#define SRD_KSFT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

static int ksft_n, ksft_failed;

#define ksft_check(cond, fmt, ...)					\
	do {								\
		ksft_n++;						\
		if (cond) {						\
			printf("ok %d " fmt "\n", ksft_n, ##__VA_ARGS__); \
		} else {						\
			ksft_failed++;					\
			printf("not ok %d " fmt " (%s:%d: %s)\n", ksft_n, \
			       ##__VA_ARGS__, __FILE__, __LINE__, #cond); \
		}							\
	} while (0)

/* expected vs seen, for integers */
#define ksft_check_eq(what, exp, seen)					\
	do {								\
		long long e_ = (long long)(exp), s_ = (long long)(seen); \
		ksft_check(e_ == s_, "%s: expected %lld, saw %lld",	\
			   what, e_, s_);				\
	} while (0)

#define ksft_skip(fmt, ...)						\
	do {								\
		printf("SKIP: " fmt "\n", ##__VA_ARGS__);		\
		exit(KSFT_SKIP);					\
	} while (0)

static inline int ksft_exit(void)
{
	printf("# %d checks, %d failed\n", ksft_n, ksft_failed);
	return ksft_failed ? KSFT_FAIL : KSFT_PASS;
}

#endif
