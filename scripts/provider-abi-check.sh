#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# libsrd for every rdma-core release it supports, without those releases:
#
#   scripts/provider-abi-check.sh layout   verbs_context_ops as
#        provider/ibverbs_private.h lays it out for each release, against
#        provider/abi/verbs_context_ops.txt (read from rdma-core's tags)
#   scripts/provider-abi-check.sh link     libsrd built for each ABI and
#        linked against a stub libibverbs.so.1 that exports exactly
#        provider/abi/libibverbs-imports.txt at that ABI's version nodes:
#        every import bound where that release's libibverbs has it
#
# Both compile against the installed rdma-core's public headers (44 on
# Debian 12): only the private ABI varies.  Prints what it checks; exits
# non-zero on the first difference.

set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ops=$TOP/provider/abi/verbs_context_ops.txt
imports=$TOP/provider/abi/libibverbs-imports.txt
# (ABI release) pairs: each end of every supported range, and v62, where
# verbs_context_ops grew under ABI 59.
PAIRS="34:36 34:44 34:56 57:57 57:58 59:59 59:61 59:62 59:63 64:64 65:65"
IBV_CFLAGS=$(pkg-config --cflags libibverbs)

layout() {
	local pair pabi rc n
	for pair in $PAIRS; do
		pabi=${pair%:*} rc=${pair#*:}
		{
			echo '#include <stdio.h>'
			echo '#include "ibverbs_private.h"'
			echo 'int main(void) {'
			echo '	unsigned int i = 0, bad = 0;'
			awk -v rc="$rc" '!/^#/ && NF == 2 && $2 <= rc {
				printf "\tif (offsetof(struct verbs_context_ops, %s) != i++ * sizeof(void *)) {\n", $1
				printf "\t\tprintf(\"%s is not op %%u\\n\", i - 1);\n\t\tbad++;\n\t}\n", $1
			}' "$ops"
			cat <<-'END'
				if (sizeof(struct verbs_context_ops) != i * sizeof(void *)) {
					printf("%zu ops, not %u\n", sizeof(struct verbs_context_ops) / sizeof(void *), i);
					bad++;
				}
				return bad != 0;
			}
			END
		} >"$tmp/l.c"
		n=$(awk -v rc="$rc" '!/^#/ && NF == 2 && $2 <= rc' "$ops" | wc -l)
		# shellcheck disable=SC2086 # pkg-config's flags are words
		gcc -std=gnu11 -Wall -Wextra -Werror -DSRD_PABI="$pabi" -DSRD_RC="$rc" \
			-I"$TOP/provider" -I"$TOP/uapi" $IBV_CFLAGS -o "$tmp/l" "$tmp/l.c" ||
			{ echo "ABI $pabi, rdma-core $rc: ibverbs_private.h does not compile"; return 1; }
		"$tmp/l" || { echo "ABI $pabi, rdma-core $rc: verbs_context_ops differs"; return 1; }
		echo "ABI $pabi, rdma-core $rc: verbs_context_ops has rdma-core's $n ops in its order"
	done
}

link() {
	local pabi rc f objs want got
	for pair in $PAIRS; do
		pabi=${pair%:*} rc=${pair#*:}
		rm -rf "$tmp/stub" "$tmp/obj"
		mkdir -p "$tmp/stub" "$tmp/obj"
		# The stub: every import a function of its node.
		awk -v p="$pabi" '!/^#/ && NF == 2 {
			n = $2; if (n == "verbs_register_driver_") n = n p
			printf "void %s(void);\nvoid %s(void) {}\n", n, n
		}' "$imports" >"$tmp/stub/stub.c"
		awk -v p="$pabi" '!/^#/ && NF == 2 {
			v = $1 == "PRIVATE" ? "IBVERBS_PRIVATE_" p : $1
			n = $2; if (n == "verbs_register_driver_") n = n p
			s[v] = s[v] "\t\t" n ";\n"
		} END {
			printf "IBVERBS_1.0 {\n\tglobal:\n%s\tlocal: *;\n};\n", s["IBVERBS_1.0"]
			printf "IBVERBS_1.1 {\n\tglobal:\n%s} IBVERBS_1.0;\n", s["IBVERBS_1.1"]
			printf "IBVERBS_PRIVATE_%s {\n\tglobal:\n%s};\n", p, s["IBVERBS_PRIVATE_" p]
		}' "$imports" >"$tmp/stub/stub.map"
		gcc -shared -fPIC -Wl,-soname,libibverbs.so.1 \
			-Wl,--version-script="$tmp/stub/stub.map" \
			-o "$tmp/stub/libibverbs.so.1" "$tmp/stub/stub.c"
		ln -s libibverbs.so.1 "$tmp/stub/libibverbs.so"
		objs=()
		# The provider's sources as its Makefile lists them.
		read -ra srcs < <(sed -n 's/^SRCS := //p' "$TOP/provider/Makefile" | sed 's/\.c\b//g')
		for f in "${srcs[@]}"; do
			# shellcheck disable=SC2086
			gcc -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
				-DSRD_PABI="$pabi" -DSRD_RC="$rc" -I"$TOP/uapi" $IBV_CFLAGS \
				-c -o "$tmp/obj/$f.o" "$TOP/provider/$f.c" ||
				{ echo "ABI $pabi, rdma-core $rc: provider/$f.c does not compile"; return 1; }
			objs+=("$tmp/obj/$f.o")
		done
		gcc -shared -Wl,-soname,libsrd.so.1 -Wl,--no-undefined \
			-Wl,--version-script="$TOP/provider/libsrd.map" \
			-o "$tmp/obj/libsrd.so.1" "${objs[@]}" -L"$tmp/stub" -libverbs ||
			{ echo "ABI $pabi, rdma-core $rc: libsrd does not link against the ABI's symbols"; return 1; }
		want=$(awk -v p="$pabi" '!/^#/ && NF == 2 {
			v = $1 == "PRIVATE" ? "IBVERBS_PRIVATE_" p : $1
			n = $2; if (n == "verbs_register_driver_") n = n p
			print "(" v ") " n
		}' "$imports" | sort)
		got=$(objdump -T "$tmp/obj/libsrd.so.1" | awk '/IBVERBS/ { print $(NF - 1), $NF }' | sort)
		if [ "$want" != "$got" ]; then
			echo "ABI $pabi, rdma-core $rc: libsrd's imports differ from the list:"
			diff <(echo "$want") <(echo "$got") || true
			return 1
		fi
		echo "ABI $pabi, rdma-core $rc: libsrd links; its $(wc -l <<<"$got") imports bound at IBVERBS_1.0, 1.1 and IBVERBS_PRIVATE_$pabi"
	done
}

case "${1:-}" in
layout) layout ;;
link) link ;;
*) echo "usage: $0 layout|link" >&2; exit 2 ;;
esac
