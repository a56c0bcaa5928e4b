# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softsrd — top-level build.
#
#   make            rdma_srd.ko for every installed kernel (or KVER=...),
#                   libsrd, softsrd's libefa.so.1 and srd-efa-run,
#                   srd_perf, and the selftests' programs
#   make check      everything, then lint, host tests and VM selftests on every
#                   kernel; ends with "N passed, N failed, N skipped"
#   make check-debug  the VM selftests on a debug 6.12 kernel (KASAN,
#                   lockdep, UBSAN, kmemleak, ...), built and cached once
#   make demo       a guest with two srd devices in two namespaces, and a
#                   UD ping-pong between them
#   make vm-shell   an interactive guest
#   make install    module, provider, srd.driver, headers, pkg-config,
#                   man pages (DESTDIR, PREFIX honoured)
#   make man        the man pages (man/*.md, through pandoc)
#   make sparse     the module under sparse
#   make lint       checkpatch --strict on kernel/ and engine/, shellcheck
#                   on every shell script (scripts/lint.sh)
#   make engine-test  the SRD engine's unit tests and simulator, plain and
#                   under ASan+UBSan (host only; SIM_ARGS="--seeds 50 --scale 4"
#                   for longer runs)
#   make fuzz       libFuzzer on the engine's receive path (FUZZ_SECONDS=300)
#   make bench      raw UDP, rxe and softsrd between two guests (KVER=...,
#                   default 6.1); BENCH_QUICK=1 for the smoke-test subset,
#                   BENCH_ONLY='srd-lat-* *-lat-64' for some rows only,
#                   BENCH_PARAMS='ack_reply_wait_us=0' to set rdma_srd's
#                   module parameters in both guests, BENCH_PIN=0 to run
#                   every program of both guests on their CPU 0
#   make bench-fallback  libfabric's tcp provider and Open MPI over TCP
#                   beside EFA software on softsrd (issue 48): make bench
#                   --only fallback, with the MPI rows make bench leaves out
#
# Targets that need Debian packages install them first
# (scripts/install-deps.sh); NODEPS=1 skips that (DKMS, packaging).
# STRICT=0 lets the module build with warnings (DKMS on future kernels).

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
TOP := $(abspath .)
BUILD := $(TOP)/build
VERSION := 0.1.0
NODEPS ?=
STRICT ?= 1

PREFIX ?= /usr
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
SYSCONFDIR ?= /etc

KSRC := $(notdir $(wildcard $(TOP)/kernel/*.c $(TOP)/kernel/*.h)) Kbuild
# The SRD engine: the module compiles the same files as the host tests.
ESRC := $(notdir $(wildcard $(TOP)/engine/*.c $(TOP)/engine/*.h)) sources.mk
VM_KERNEL := $(or $(KVER),6.1)

.PHONY: all deps build modules provider efa-compat tools selftests man check check-debug demo vm-shell \
	sparse lint install clean engine-test fuzz bench bench-fallback

ifneq ($(NODEPS),1)
# Install packages first, then re-enter make so that the list of target
# kernels is read after their headers are installed.
all check check-debug demo vm-shell sparse lint install modules provider efa-compat tools selftests man engine-test fuzz bench bench-fallback: deps
	@$(MAKE) --no-print-directory NODEPS=1 $@
deps:
	@$(TOP)/scripts/install-deps.sh
else

# Target kernels: every kernel with a kbuild tree, unless KVER is given;
# KVER may be short (6.12 for 6.12.117+deb12-amd64), as vm-run.sh's.
# The debug kernel of check-debug (scripts/debug-kernel.sh) is built for
# only when named (KVER=...-srd-debug).
ALL_KVERS := $(filter-out %-srd-debug,$(notdir $(patsubst %/build,%,$(wildcard /lib/modules/*/build))))
KVERS := $(if $(KVER),$(or $(filter $(KVER),$(ALL_KVERS)),$(firstword \
	$(filter $(KVER).% $(KVER)-% $(KVER)+%,$(ALL_KVERS))),$(KVER)),$(ALL_KVERS))

all: modules provider efa-compat tools selftests man

# Man pages: man/NAME.SECTION.md through pandoc into the man tree
# build/man/manSECTION/, with ".so" links for the other names a page
# documents (scripts/man.sh).
MAN_SRCS := $(wildcard $(TOP)/man/*.md)
man: $(BUILD)/man/.stamp
$(BUILD)/man/.stamp: $(MAN_SRCS) $(TOP)/scripts/man.sh
	@$(TOP)/scripts/man.sh $(TOP)/man $(BUILD)/man && touch $@

modules: $(addprefix module-,$(KVERS))
	@test -n "$(KVERS)" || { echo "no kernel headers in /lib/modules/*/build: nothing to build for" >&2; exit 1; }

# Each kernel builds in its own directory of links to kernel/ and uapi/,
# with its own compat.h from the probes.
module-%:
	@test -d /lib/modules/$*/build || { echo "no kbuild tree for kernel $*: install linux-headers-$*" >&2; exit 1; }
	@mkdir -p $(BUILD)/kernel/$*
	@for f in $(KSRC); do ln -sfn $(TOP)/kernel/$$f $(BUILD)/kernel/$*/$$f; done
	@ln -sfn $(TOP)/uapi $(BUILD)/kernel/$*/uapi
	@mkdir -p $(BUILD)/kernel/$*/engine
	@for f in $(ESRC); do ln -sfn $(TOP)/engine/$$f $(BUILD)/kernel/$*/engine/$$f; done
	@$(TOP)/scripts/kernel-probes.sh /lib/modules/$*/build $(BUILD)/kernel/$*
	@echo "  MODULE  rdma_srd.ko for $*"
	@log=$(BUILD)/kernel/$*/build.log; \
	$(MAKE) -s -C /lib/modules/$*/build M=$(BUILD)/kernel/$* W=1 $(if $(C),C=$(C)) modules >$$log.raw 2>&1; \
	rc=$$?; grep -v 'Skipping BTF generation' $$log.raw >$$log; cat $$log; \
	if [ $$rc -ne 0 ]; then echo "building rdma_srd.ko for $* failed" >&2; exit 1; fi; \
	if [ "$(STRICT)" = 1 ] && grep -q 'warning:' $$log; then \
		echo "warnings building for $* (STRICT=1): see above" >&2; rm -f $(BUILD)/kernel/$*/rdma_srd.ko; exit 1; fi

provider:
	@$(MAKE) -s -C $(TOP)/provider O=$(BUILD)/provider WERROR=$(STRICT)

# softsrd's libefa.so.1, linked with the libsrd built above.
efa-compat: provider
	@$(MAKE) -s -C $(TOP)/efa-compat O=$(BUILD)/efa-compat PROVIDER_O=$(BUILD)/provider WERROR=$(STRICT)

# Tools: srd_perf (tools/srd_perf, installed); the Wireshark dissector
# (tools/wireshark) needs no build.
tools: provider
	@$(MAKE) -s -C $(TOP)/tools/srd_perf O=$(BUILD)/tools PROVIDER_O=$(BUILD)/provider

selftests: provider efa-compat tools
	@$(MAKE) -s -C $(TOP)/selftests OUTPUT=$(BUILD)/selftests

sparse:
	@$(MAKE) --no-print-directory modules C=2

# checkpatch.pl comes from linux-source-6.12's tarball, extracted into
# build/checkpatch/ (scripts/lint.sh).
lint:
	@$(TOP)/scripts/lint.sh

# The portable SRD engine, built natively (engine/Makefile).
FUZZ_SECONDS ?= 300
SIM_ARGS ?=
engine-test:
	@$(MAKE) -s -C $(TOP)/engine O=$(BUILD)/engine SIM_ARGS="$(SIM_ARGS)" freestanding test test-asan

fuzz:
	@$(MAKE) -s -C $(TOP)/engine O=$(BUILD)/engine FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz

check: all
	@test -n "$(KVERS)" || { echo "no target kernels installed" >&2; exit 1; }
	@$(TOP)/scripts/run-checks.sh $(KVERS)

# The selftests on a 6.12 kernel of our own with KASAN, lockdep, UBSAN,
# kmemleak and friends, built once into a cache (scripts/debug-kernel.sh).
# DEBUG_TESTS=teardown: only the tests of teardown, races and the wire.
DEBUG_TESTS ?= all
check-debug: all
	@kver=$$($(TOP)/scripts/debug-kernel.sh) && \
	$(MAKE) --no-print-directory NODEPS=1 KVER=$$kver modules && \
	$(TOP)/scripts/run-checks.sh --debug $(if $(filter teardown,$(DEBUG_TESTS)),--teardown) $$kver

demo: all
	@$(TOP)/scripts/vm-run.sh --kernel $(VM_KERNEL) -- $(TOP)/scripts/demo.sh

vm-shell: all
	@$(TOP)/scripts/vm-run.sh --kernel $(VM_KERNEL) --interactive

BENCH_QUICK ?=
BENCH_ONLY ?=
BENCH_PARAMS ?=
BENCH_PIN ?=
bench: all
	@$(TOP)/scripts/bench.sh --kernel $(VM_KERNEL) $(if $(filter 1,$(BENCH_QUICK)),--quick) \
		$(if $(BENCH_ONLY),--only '$(BENCH_ONLY)') \
		$(foreach p,$(BENCH_PARAMS),--param $(p)) \
		$(if $(BENCH_PIN),--pin $(BENCH_PIN))

bench-fallback: all
	@$(TOP)/scripts/bench.sh --kernel $(VM_KERNEL) --only 'fallback' \
		$(foreach p,$(BENCH_PARAMS),--param $(p)) \
		$(if $(BENCH_PIN),--pin $(BENCH_PIN))

install: all
	@$(TOP)/scripts/install.sh "$(DESTDIR)" "$(PREFIX)" "$(LIBDIR)" "$(SYSCONFDIR)" "$(BUILD)" "$(KVERS)" "$(VERSION)"

endif

clean:
	rm -rf $(BUILD)
