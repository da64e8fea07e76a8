# SPDX-License-Identifier: GPL-2.0
#
# GRIM for Linux: out-of-tree build and test entry points.
# The kbuild object list is in ./Kbuild.
#
#   make                 build grim.ko and the user-space tools
#   make W=1 C=1         ... with extra warnings and sparse
#   make deps            install build/test dependencies (Debian 12 or 13)
#   make check [T=x.sh]  on every supported kernel: build (W=1 C=1) and run
#                        the selftests in a VM; checkpatch --strict
#   make check-full      make check with soak-sized loads (not run by CI)
#   make debug-kernel    build (once, cached in .cache/debug-kernel/) Debian's
#                        6.12 with KASAN, lockdep, kmemleak, debugobjects and
#                        SLUB debugging; 20-60 minutes on 2 cores
#   make check-debug [T=x.sh]  the selftests on that kernel, then a kmemleak
#                        scan; fails on splats and on leaks in GRIM (not CI)
#   make check-kselftest the selftests from a kernel tree's kselftest runner
#   make deb             grim-dkms, grim-tools and grim-dev .debs in .build/deb/
#   make check-packages  build, install, use and purge the .debs (installs
#                        packages on this machine)
#   make demo            run scripts/demo.sh in a VM
#   make bench           benchmarks in a VM (BENCH_QUICK=1: ~3 min smoke run)
#   make checkpatch      checkpatch.pl --strict on the sources
#
# Kernel selection, for every target: K=6.1 or K=6.12 (the newest
# installed kernel of that series), KVER=<uname -r>, or KDIR=<build dir>.
# Without any, `make` builds for the newest installed kernel and
# `make check` runs on each supported kernel in turn.

# Pass a kernel selection on to the scripts only when one was given.
$(foreach v,K KVER KDIR,$(if $(filter command line environment,$(origin $(v))),$(eval export $(v))))

KDIR ?= $(shell K="$(K)" KVER="$(KVER)" $(CURDIR)/scripts/kdir.sh)
SELFTESTS := selftests/grim

.PHONY: all modules tools selftests deps check check-full debug-kernel \
	check-debug check-kselftest deb check-packages demo bench checkpatch clean

all: modules tools

modules:
	@test -n "$(KDIR)" || { echo "no kernel build dir: run 'make deps' or set K=, KVER= or KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(W),W=$(W)) $(if $(C),C=$(C)) modules

tools:
	@if [ -f tools/grim/Makefile ]; then $(MAKE) -C tools/grim; fi

selftests:
	$(MAKE) -C $(SELFTESTS)

deps:
	scripts/deps.sh

# deps runs in its own make so that the kernels are looked up once their
# headers exist.
SUBMAKE = $(MAKE) --no-print-directory

check:
	@$(SUBMAKE) deps
	@$(SUBMAKE) tools selftests
	@scripts/check.sh $(T)

check-full:
	@$(SUBMAKE) deps
	@$(SUBMAKE) tools selftests
	@GRIM_TEST_FULL=1 GRIM_TEST_TIMEOUT=7200 scripts/check.sh $(T)

# The debug kernel is built from linux-source-6.12 with the installed 6.12
# kernel's config, so only that series' dependencies are needed.
debug-kernel:
	@K=6.12 scripts/deps.sh
	@scripts/debug-kernel.sh >/dev/null

check-debug:
	@K=6.12 scripts/deps.sh
	@$(SUBMAKE) tools selftests
	@scripts/check-debug.sh $(T)

check-kselftest:
	@$(SUBMAKE) deps
	@scripts/check-kselftest.sh

deb:
	@scripts/deb.sh

check-packages:
	@$(SUBMAKE) deps
	@scripts/check-packages.sh

demo:
	@$(SUBMAKE) deps
	@$(SUBMAKE) tools selftests
	@kv=$$(scripts/kdir.sh --version) && scripts/build-module.sh $$kv >/dev/null && \
		GRIM_KO=$(CURDIR)/.build/$$kv/grim.ko KVER=$$kv scripts/vm-run.sh --script scripts/demo.sh

# AF_GRIM against TIPC, UDP, TCP and raw AF_PACKET: tools/grim/bench/README.md
# On 6.1 unless K=, KVER= or KDIR= says otherwise.
bench:
	@$(SUBMAKE) deps
	@$(SUBMAKE) tools
	@kv=$$(K=$${K:-6.1} scripts/kdir.sh --version) && scripts/build-module.sh $$kv >/dev/null && \
		GRIM_KO=$(CURDIR)/.build/$$kv/grim.ko KVER=$$kv tools/grim/bench/run.sh

checkpatch:
	scripts/checkpatch.sh

clean:
	@if [ -n "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	@if [ -f tools/grim/Makefile ]; then $(MAKE) -C tools/grim clean; fi
	$(MAKE) -C $(SELFTESTS) clean
	rm -rf .vm-out .build
