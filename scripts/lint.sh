#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make lint: checkpatch --strict on the module's C (kernel/, kernel/probes/)
# and the engine's (engine/), and shellcheck on every shell script of the
# tree.  TAP output, one result per check, each finding as a "# " line;
# exits non-zero on any finding or when a checker is missing.
#
# checkpatch.pl comes from Debian's linux-source-6.12 (scripts/install-deps.sh
# installs it): the script and the two files it reads beside it,
# spelling.txt and const_structs.checkpatch, are extracted from its tarball
# into build/checkpatch/, when missing or older than the tarball.
#
#   scripts/lint.sh

set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SRD_BUILD:-$TOP/build}
SRC_PKG=linux-source-6.12
TARBALL=/usr/src/$SRC_PKG.tar.xz
CPDIR=$BUILD/checkpatch
CP=$CPDIR/checkpatch.pl
CP_FILES=(checkpatch.pl spelling.txt const_structs.checkpatch)

# Ignored checkpatch types, each with its reason.  Per directory:
declare -A DIR_IGNORE=(
	# The engine is portable C without kernel headers, compiled into the
	# module and into the host tests, simulator and fuzzer: it has no
	# u8/u16/u32/u64 (it uses <stdint.h>'s) and no BIT()/BIT_ULL().
	[engine]="PREFER_KERNEL_TYPES,BIT_MACRO"
	# Each probe is a translation unit built only to see whether it
	# compiles (scripts/kernel-probes.sh): its function is declared before
	# its definition, as -Wmissing-prototypes wants of a non-static one
	# (static, it would be unused).
	[kernel/probes]=AVOID_EXTERNS
)
# Per file, for what is right there and wrong for checkpatch:
declare -A FILE_IGNORE=(
	# srd_bus_type is const wherever the kernel allows (HAVE_BUS_TYPE_CONST);
	# 6.1's bus_register() writes into it.
	[kernel/bus.c]=CONST_STRUCT
	# TRACE_EVENT()'s layout, as in include/trace/events/: each TP_*
	# section opens a line and its arguments are indented by one tab.
	[kernel/trace.h]="OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT"
	# SRD_TUNABLE()'s name is an identifier (a parameter's name, pasted
	# into its variable's), never an expression: no side effect to repeat.
	[kernel/tunables.c]=MACRO_ARG_REUSE
	# C11's _Static_assert: the freestanding engine build has no
	# <assert.h> for static_assert.
	[engine/srd_os.h]=CAMELCASE
	# The X-macro lists (SRD_COMP_STATUSES, SRD_PATH_STATES, issue 47
	# item 3): a list expands to a comma-separated list, which no
	# parentheses may enclose, through its separator SRD_LIST_COMMA()
	# (a lone ','); its X and SEP are macro names, applied once per entry;
	# a column macro such as SRD_PATH_ENUM(n, name) uses some columns only;
	# SRD_LIST_SEMI() is a lone ';', the separator of a list whose columns
	# make statements or cases (SRD_WIRE_OPS, issue 47 item 1).
	[engine/srd_engine.h]="COMPLEX_MACRO,MACRO_ARG_REUSE,MACRO_ARG_UNUSED,SPACING,MULTISTATEMENT_MACRO_USE_DO_WHILE,TRAILING_SEMICOLON"
	# A column macro of SRD_WIRE_OPS (issue 47 item 1) takes every column
	# and uses those it needs; its value column is a literal, never an
	# expression with a side effect.
	[engine/wire.c]="MACRO_ARG_UNUSED,MACRO_ARG_REUSE"
	[engine/msg.c]=MACRO_ARG_UNUSED
	# A list's name table: SRD_COMP_NAME(n) is a designated initializer,
	# '[SRD_COMP_OK] = "OK"', not a subscript of the macro's call.
	[engine/peer.c]=BRACKET_SPACE
)

n=0
rc=0
result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		rc=1
	fi
}

# checkpatch_tool: extract checkpatch.pl and its two data files into
# build/checkpatch/ when missing or older than the tarball.
checkpatch_tool() {
	local f stale=
	if [ ! -f "$TARBALL" ]; then
		echo "# $TARBALL is missing: install Debian's $SRC_PKG (scripts/install-deps.sh)"
		echo "lint: $TARBALL is missing: install $SRC_PKG" >&2
		return 1
	fi
	for f in "${CP_FILES[@]}"; do
		[ "$CPDIR/$f" -nt "$TARBALL" ] || stale=1
	done
	[ -z "$stale" ] && return 0
	mkdir -p "$CPDIR"
	# -m: the files get the time of extraction, so they are newer than the
	# tarball until a new one is installed.
	tar -xJmf "$TARBALL" -C "$CPDIR" --strip-components=2 \
		"${CP_FILES[@]/#/$SRC_PKG/scripts/}" || {
		echo "# extracting checkpatch.pl from $TARBALL failed"
		return 1
	}
}

# run_checkpatch [IGNORES] FILE...: checkpatch --strict on FILEs
# (relative to TOP); prints the findings.  It runs in build/checkpatch/,
# its --root, where it keeps its cache of CamelCase names (in a git
# checkout it would leave it in the tree) and finds no include/ of a
# kernel to seed it from.
run_checkpatch() {
	local ignore=$1
	shift
	mkdir -p "$CPDIR/include"
	(cd "$CPDIR" && "$CP" --no-tree --root="$CPDIR" --strict --terse --show-types \
		--no-summary ${ignore:+--ignore "$ignore"} -f "${@/#/$TOP/}" 2>&1) |
		sed "s|^$TOP/||"
}

# checkpatch DIR: checkpatch --strict on DIR's *.c and *.h, with DIR's
# ignores, and each file's own on top.
checkpatch() {
	local dir=$1 f out ignore=${DIR_IGNORE[$1]:-} files=() plain=()
	for f in "$TOP/$dir"/*.[ch]; do
		[ -e "$f" ] && files+=("${f#"$TOP"/}")
	done
	[ ${#files[@]} -gt 0 ] || { echo "# no C in $dir"; return 1; }
	out=$(for f in "${files[@]}"; do
			[ -n "${FILE_IGNORE[$f]:-}" ] &&
				run_checkpatch "${ignore:+$ignore,}${FILE_IGNORE[$f]}" "$f"
		done
		for f in "${files[@]}"; do
			[ -z "${FILE_IGNORE[$f]:-}" ] && plain+=("$f")
		done
		[ ${#plain[@]} -eq 0 ] || run_checkpatch "$ignore" "${plain[@]}")
	[ -z "$out" ] && return 0
	sed 's/^/# /' <<<"$out"
	return 1
}

# shell_scripts: every shell script the tree keeps: *.sh and any file whose
# first line names a shell.
shell_scripts() {
	local f first
	(cd "$TOP" && git ls-files 2>/dev/null || find . -path ./build -prune -o -type f -print | sed 's|^\./||') |
		while IFS= read -r f; do
			[ -f "$TOP/$f" ] || continue
			case $f in
			*.sh) echo "$f"; continue ;;
			esac
			IFS= read -r first <"$TOP/$f" || continue
			[[ $first =~ ^\#!.*[/\ ](ba|da)?sh([\ ]|$) ]] && echo "$f"
		done
}

echo "TAP version 13"
echo "1..4"

if checkpatch_tool; then
	for d in kernel kernel/probes engine; do
		checkpatch "$d"
		result $? "checkpatch --strict $d/"
	done
else
	for d in kernel kernel/probes engine; do
		result 1 "checkpatch --strict $d/"
	done
fi

# The settings are in .shellcheckrc, at the top of the tree.
if command -v shellcheck >/dev/null; then
	mapfile -t scripts < <(shell_scripts)
	out=$(cd "$TOP" && shellcheck -f gcc "${scripts[@]}" 2>&1)
	s=$?
	[ -z "$out" ] || sed 's/^/# /' <<<"$out"
	[ ${#scripts[@]} -gt 0 ] || { echo "# no shell scripts found"; s=1; }
	result $s "shellcheck on ${#scripts[@]} shell scripts"
else
	echo "# shellcheck is not installed: install Debian's shellcheck (scripts/install-deps.sh)"
	echo "lint: shellcheck is missing: install shellcheck" >&2
	result 1 "shellcheck"
fi
exit $rc
