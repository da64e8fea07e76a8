# SPDX-License-Identifier: GPL-2.0
#
# GRIM for Linux: out-of-tree build and test entry points.
# The kbuild object list is in ./Kbuild.
#
#   make                 build grim.ko and the user-space tools
#   make W=1 C=1         ... with extra warnings and sparse
#   make deps            install build/test dependencies (Debian 12)
#   make check [T=x.sh]  run the selftests in a VM
#   make demo            run scripts/demo.sh in a VM
#   make bench           benchmarks in a VM (BENCH_QUICK=1: ~3 min smoke run)
#   make checkpatch      checkpatch.pl --strict on the sources

KDIR ?= $(shell $(CURDIR)/scripts/kdir.sh)
SELFTESTS := selftests/grim

.PHONY: all modules tools selftests deps check demo bench checkpatch clean

all: modules tools

modules:
	@test -n "$(KDIR)" || { echo "no kernel build dir: run 'make deps' or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(W),W=$(W)) $(if $(C),C=$(C)) modules

tools:
	@if [ -f tools/grim/Makefile ]; then $(MAKE) -C tools/grim; fi

selftests:
	$(MAKE) -C $(SELFTESTS)

deps:
	scripts/deps.sh

# deps runs in its own make so that KDIR is recomputed once headers exist;
# scripts/kdir.sh honours a KDIR given on the command line.
SUBMAKE = $(MAKE) --no-print-directory

check:
	@$(SUBMAKE) deps
	@$(SUBMAKE) all selftests
	@KDIR=$$(scripts/kdir.sh) scripts/vm-run.sh $(T)

demo:
	@$(SUBMAKE) deps
	@$(SUBMAKE) all selftests
	@KDIR=$$(scripts/kdir.sh) scripts/vm-run.sh --script scripts/demo.sh

# AF_GRIM against TIPC, UDP, TCP and raw AF_PACKET: tools/grim/bench/README.md
bench:
	@$(SUBMAKE) deps
	@$(SUBMAKE) all
	@KDIR=$$(scripts/kdir.sh) tools/grim/bench/run.sh

checkpatch:
	scripts/checkpatch.sh

clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	@if [ -f tools/grim/Makefile ]; then $(MAKE) -C tools/grim clean; fi
	$(MAKE) -C $(SELFTESTS) clean
	rm -rf .vm-out
