# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softsrd — top-level build.  `make` builds the kernel module for every
# installed target kernel (or KVER=...) and the libsrd provider;
# `make check` runs every test; `make demo` shows the device in a guest.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
TOP := $(abspath .)
BUILD := $(TOP)/build
VERSION := 0.1.0

# Target kernels: every kernel with a kbuild tree, unless KVER is given.
KVERS := $(if $(KVER),$(KVER),$(notdir $(patsubst %/build,%,$(wildcard /lib/modules/*/build))))

PREFIX ?= /usr
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
SYSCONFDIR ?= /etc

KSRC := main.c device.c gid.c link.c netdev.c verbs.c srd.h Kbuild

.PHONY: all deps modules provider check check-host check-vm demo vm-shell \
	sparse checkpatch install clean $(addprefix module-,$(KVERS))

all: modules provider

deps:
	@$(TOP)/scripts/install-deps.sh

modules: $(addprefix module-,$(KVERS))

# Each kernel builds in its own directory of links to kernel/ and uapi/,
# with its own compat.h from the probes.
$(addprefix module-,$(KVERS)): module-%: deps
	@test -d /lib/modules/$*/build || { echo "no kbuild tree for kernel $*: install linux-headers-$*" >&2; exit 1; }
	@mkdir -p $(BUILD)/kernel/$*
	@for f in $(KSRC); do ln -sfn $(TOP)/kernel/$$f $(BUILD)/kernel/$*/$$f; done
	@ln -sfn $(TOP)/uapi $(BUILD)/kernel/$*/uapi
	@$(TOP)/scripts/kernel-probes.sh /lib/modules/$*/build $(BUILD)/kernel/$*
	@echo "  MODULE  rdma_srd.ko for $*"
	@$(MAKE) -s -C /lib/modules/$*/build M=$(BUILD)/kernel/$* W=1 $(if $(C),C=$(C)) modules 2>&1 | tee $(BUILD)/kernel/$*/build.log
	@! grep -q 'warning:' $(BUILD)/kernel/$*/build.log || { echo "warnings building for $*: see above" >&2; exit 1; }

provider: deps
	@$(MAKE) -s -C $(TOP)/provider O=$(BUILD)/provider

# Static checks: sparse over the module for every kernel, checkpatch if a
# kernel source tree with scripts/checkpatch.pl is given (CHECKPATCH=...).
sparse:
	@$(MAKE) -s modules C=2

check: all
	@$(TOP)/scripts/run-checks.sh $(KVERS)

demo: all
	@$(TOP)/scripts/vm-run.sh --kernel $(or $(KVER),6.1) -- $(TOP)/scripts/demo.sh

vm-shell: all
	@$(TOP)/scripts/vm-run.sh --kernel $(or $(KVER),6.1) --interactive

install: all
	@$(TOP)/scripts/install.sh "$(DESTDIR)" "$(PREFIX)" "$(LIBDIR)" "$(SYSCONFDIR)" "$(BUILD)" "$(KVERS)"

clean:
	rm -rf $(BUILD)
