#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the kernel matching KDIR in a virtme-ng VM and run the GRIM selftests
# (or, with --script FILE, one script such as the demo) inside it.
#
#   scripts/vm-run.sh [TEST.sh...]          default: TEST_PROGS of selftests/grim
#   scripts/vm-run.sh --script FILE [ARG...]
#
# Environment: KDIR, KVER or K (the kernel, as for scripts/kdir.sh),
# VMLINUZ (kernel image), GRIM_KO (the module to insmod; default: built
# for the kernel by scripts/build-module.sh; GRIM_KO=none loads none), GRIM_VM_KVM=auto|yes|no (default auto: probe once, cached),
# GRIM_VM_MEM (2G), GRIM_VM_CPUS (2), GRIM_VM_APPEND (extra kernel command
# line, e.g. slub_debug=FZP for make check-debug; default none),
# GRIM_VM_LOG_IGNORE (an ERE: kernel-log lines that are no splat, such as a
# debug kernel's banners, dropped before splats.awk; default none).
#
# Results go to .vm-out/ (shared read-write with the guest): tap.txt,
# <test>.log, cost.txt (each test's seconds, guest CPU busy and programs
# started), dmesg.txt, cpu-flags.txt (the guest CPU's check,
# scripts/cpu-flags-probe.c, reported as cpu-flags).  The last line
# printed is "N passed, N failed"; the exit status is non-zero if
# anything failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$PATH:$HOME/.local/bin:/usr/local/bin"

KDIR=${KDIR:-$(scripts/kdir.sh)} || { echo "vm-run: no kernel build dir" >&2; exit 1; }
KVER=$(KDIR=$KDIR scripts/kdir.sh --version)
if [ -z "${VMLINUZ:-}" ]; then
	if [ -f "$KDIR/arch/x86/boot/bzImage" ] && [ -f "$KDIR/vmlinux" ]; then
		VMLINUZ=$KDIR/arch/x86/boot/bzImage
	else
		VMLINUZ=/boot/vmlinuz-$KVER
	fi
fi
[ -r "$VMLINUZ" ] || { echo "vm-run: cannot read kernel image $VMLINUZ" >&2; exit 1; }
if [ -z "${GRIM_KO:-}" ]; then
	GRIM_KO=$top/.build/$KVER/grim.ko
	scripts/build-module.sh "$KVER" >"$top/.build/build-$KVER.log" 2>&1 ||
		{ echo "vm-run: building grim.ko for $KVER failed: see .build/build-$KVER.log" >&2; exit 1; }
fi
case "$GRIM_KO" in none|/*) ;; *) GRIM_KO=$top/$GRIM_KO ;; esac
command -v vng >/dev/null || { echo "vm-run: vng not found (make deps)" >&2; exit 1; }

# GRIM_VM_OUT: where results land (default .vm-out/); set it to run
# several VMs from one tree at once.
out=${GRIM_VM_OUT:-$top/.vm-out}
mkdir -p "$(dirname "$out")"
rm -rf "$out"
mkdir -p "$out" "$top/.cache"

vng_base=(vng --run "$VMLINUZ" --disable-microvm
	  --memory "${GRIM_VM_MEM:-2G}" --cpus "${GRIM_VM_CPUS:-2}"
	  --rwdir="$out" --cwd "$top")
# The kernel console, errors and worse only, joins the VM's output and
# $out/vm.log: what a guest that dies takes with it (a panic, a stack
# overflow) is there, not in dmesg.txt.
vng_base+=(--verbose --append loglevel=3)
# The guest's clock is its TSC.  6.1 checks at boot that the vCPUs'
# TSCs agree, TCG's scheduling of the vCPU threads fails that check, and
# it falls back to the HPET, an emulated device read at every clock read
# and timer: its timers then fire late, and GRIM's and TCP's timeouts
# with them (faults.sh took 96 s on 6.1 against 56 s on 6.12, 67 s with
# the TSC).  6.12 keeps the TSC on its own.
vng_base+=(--append tsc=reliable)
# The root over virtio-fs (scripts/deps.sh builds virtiofsd) needs the
# guest kernel's virtiofs; a kernel built without it (an older debug
# kernel) gets 9p.
kconfig=$KDIR/.config
[ -r "$kconfig" ] || kconfig=/boot/config-$KVER
grep -qE '^CONFIG_VIRTIO_FS=[ym]' "$kconfig" 2>/dev/null || vng_base+=(--force-9p)
[ -n "${GRIM_VM_APPEND:-}" ] && vng_base+=(--append "$GRIM_VM_APPEND")

source "$top/scripts/tcg-cpu.sh"

# KVM: only if a quick boot proves it works with this kernel (cached).
kvm_ok() {
	local cache=$top/.cache/kvm-$KVER
	case "${GRIM_VM_KVM:-auto}" in
	yes|1) return 0 ;;
	no|0) return 1 ;;
	esac
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	if [ ! -f "$cache" ]; then
		echo "vm-run: probing KVM (once)..."
		if timeout -k 5 60 "${vng_base[@]}" --exec true </dev/null >/dev/null 2>&1; then
			echo yes >"$cache"
		else
			echo no >"$cache"
		fi
	fi
	[ "$(cat "$cache")" = yes ]
}
if kvm_ok; then
	kvm=()
	accel=KVM
else
	# No CMPXCHG16B on QEMU 7.2: see scripts/tcg-cpu.sh.
	kvm=(--disable-kvm)
	cpu_opt=$(tcg_cpu_opts)
	[ -n "$cpu_opt" ] && kvm+=("$cpu_opt")
	accel=TCG
fi

# What counts as a kernel splat: selftests/grim/splats.awk.
splats() {
	if [ -n "${GRIM_VM_LOG_IGNORE:-}" ]; then
		{ grep -vE "$GRIM_VM_LOG_IGNORE" "$1" || true; } | awk -f "$top/selftests/grim/splats.awk"
	else
		awk -f "$top/selftests/grim/splats.awk" "$1"
	fi
}
guest=$top/scripts/guest-run-tests.sh
# The guest kernel died before the guest script started: the first thing
# that script does is start dmesg.txt, and grim.ko loads after that.
# Seen once under TCG on a loaded host: an int3 oops in the kernel's own
# boot-time code patching, with no module loaded.  Not a result of any
# test, so the VM is booted once more; a second death is reported.
boot_panicked() {
	[ ! -e "$out/dmesg.txt" ] && [ -s "$out/vm.log" ] &&
		grep -qE 'Kernel panic|Oops:|BUG:' "$out/vm.log"
}
# The end of what the VM printed, kernel console included, for a VM that
# did not finish.
vm_tail() {
	[ -s "$out/vm.log" ] || return 0
	local first
	# The first oops whole: two CPUs print at once, and the tail alone
	# may miss where it began.
	first=$(tr -d '\r' <"$out/vm.log" | grep -nE 'Oops:|BUG:|general protection|RIP: 0010' |
		head -n 1 | cut -d: -f1)
	if [ -n "$first" ]; then
		echo "    --- the first oops the VM printed ($out/vm.log, line $first):"
		tr -d '\r' <"$out/vm.log" | sed -n "$((first > 10 ? first - 10 : 1)),$((first + 90))p" |
			sed 's/^/    | /'
	fi
	echo "    --- last lines the VM printed ($out/vm.log):"
	tr -d '\r' <"$out/vm.log" | tail -n 60 | sed 's/^/    | /'
}

# ---- demo / single script -----------------------------------------------------
if [ "${1:-}" = --script ]; then
	shift
	script=$1
	shift
	case "$script" in /*) ;; *) script=$top/$script ;; esac
	echo "vm-run: booting $KVER ($accel), running ${script#"$top"/}"
	start=$(date +%s)
	for attempt in 1 2; do
		timeout -k 10 "${GRIM_VM_TIMEOUT:-900}" "${vng_base[@]}" "${kvm[@]}" \
			--exec "$guest $out $GRIM_KO --script $script $*" </dev/null 2>&1 |
			tee "$out/vm.log"
		vm_rc=${PIPESTATUS[0]}
		boot_panicked || break
		[ $attempt = 1 ] && echo "vm-run: the kernel died while booting, before the script started (grim.ko not loaded): booting again"
	done
	echo "vm-run: VM exited after $(($(date +%s) - start))s"
	rc=1
	[ -f "$out/done" ] && rc=$(cat "$out/done")
	[ -f "$out/done" ] || { echo "vm-run: the VM did not finish (exit $vm_rc)"; vm_tail; }
	if [ -f "$out/dmesg.txt" ] && ! bad=$(splats "$out/dmesg.txt"); then
		echo "vm-run: kernel log problems:"
		echo "$bad" | sed 's/^/    /'
		rc=1
	fi
	if [ "$rc" = 0 ]; then echo "demo: ok"; else echo "demo: FAILED"; fi
	[ "$rc" = 0 ]
	exit
fi

# ---- selftests ----------------------------------------------------------------
testdir=$top/selftests/grim
if [ $# -gt 0 ]; then
	tests=("$@")
else
	read -r -a tests <<<"$(make -s -C "$testdir" list-tests)"
fi
for t in "${tests[@]}"; do
	[ -f "$testdir/$t" ] || { echo "vm-run: no such test: $t"; echo "0 passed, 1 failed"; exit 1; }
done
per_test=$(sed -n 's/^timeout=\([0-9]\+\).*/\1/p' "$testdir/settings" 2>/dev/null)
per_test=${GRIM_TEST_TIMEOUT:-${per_test:-300}}
total=$((180 + (per_test + 15) * ${#tests[@]}))
# A VM's whole run is capped, except for make check-full's soak loads:
# 60 min, room for a slow machine's make check on one kernel with one
# vCPU beside another kernel's VM.
[ -z "${GRIM_TEST_FULL:-}" ] && [ $total -gt 3600 ] && total=3600
[ "$GRIM_KO" = none ] || [ -f "$GRIM_KO" ] || echo "vm-run: warning: $GRIM_KO does not exist"

# The guest checks its CPU first (scripts/cpu-flags-probe.c).
gcc -O2 -Wall -mno-red-zone -o "$out/cpu-flags-probe" "$top/scripts/cpu-flags-probe.c" 2>"$out/cpu-flags-build.log" ||
	rm -f "$out/cpu-flags-probe"

# GRIM_TEST_* variables tune tests (sizes, counts); pass them to the guest.
fwd=$(env | grep -E '^GRIM_TEST_[A-Z0-9_]+=[A-Za-z0-9_.:-]*$' | tr '\n' ' ')
echo "vm-run: booting $KVER ($accel), running ${#tests[@]} test(s): ${tests[*]}"
start=$(date +%s)
for attempt in 1 2; do
	timeout -k 10 "${GRIM_VM_TIMEOUT:-$total}" "${vng_base[@]}" "${kvm[@]}" \
		--exec "env $fwd $guest $out $GRIM_KO $testdir ${tests[*]}" </dev/null 2>&1 |
		tee "$out/vm.log" |
		sed -u 's/\r$//; s/^/  | /'
	vm_rc=${PIPESTATUS[0]}
	boot_panicked || break
	[ $attempt = 1 ] && echo "vm-run: the kernel died while booting, before the tests started (grim.ko not loaded): booting again"
done
wall=$(($(date +%s) - start))
echo "vm-run: VM exited after ${wall}s"

pass=0 fail=0 skipped=0
echo
echo "Results:"
if [ ! -f "$out/done" ]; then
	echo "not ok vm  (the VM did not come up or did not finish; vng exit $vm_rc)"
	vm_tail
	fail=$((fail + 1))
fi
if [ -f "$out/insmod.rc" ]; then
	echo "not ok module-load  (insmod $GRIM_KO)"
	sed 's/^/    /' "$out/insmod.log"
	fail=$((fail + 1))
fi
for t in "${tests[@]}"; do
	line=$(grep -E "^(not )?ok [0-9]+ selftests: grim: $t( |$)" "$out/tap.txt" 2>/dev/null | head -n 1)
	log=$out/${t%.sh}.log
	case "$line" in
	ok*SKIP*)
		echo "ok $t # SKIP $(grep -m1 '^SKIP' "$log" 2>/dev/null)"
		pass=$((pass + 1)); skipped=$((skipped + 1)) ;;
	ok*)
		echo "ok $t${line##*"$t"}"
		pass=$((pass + 1)) ;;
	*)
		if [ -n "$line" ]; then
			echo "not ok $t${line##*"$t"}"
		else
			echo "not ok $t # did not run"
		fi
		if [ -s "$log" ]; then
			echo "    --- last lines of .vm-out/${t%.sh}.log:"
			tail -n 40 "$log" | sed 's/^/    | /'
		fi
		fail=$((fail + 1)) ;;
	esac
done

# An emulated CPU that corrupts RFLAGS crashes guests at random.
if [ ! -f "$out/cpu-flags-probe" ]; then
	echo "not ok cpu-flags  (the probe did not build: $(head -n 3 "$out/cpu-flags-build.log"))"
	fail=$((fail + 1))
elif [ "$(cat "$out/cpu-flags.rc" 2>/dev/null)" = 0 ]; then
	echo "ok cpu-flags  $(cat "$out/cpu-flags.txt")"
	pass=$((pass + 1))
elif [ -f "$out/done" ]; then
	echo "not ok cpu-flags  $(cat "$out/cpu-flags.txt" 2>/dev/null) (see scripts/tcg-cpu.sh)"
	fail=$((fail + 1))
fi
if [ ! -s "$out/dmesg.txt" ]; then
	echo "not ok kernel-log  (no dmesg captured)"
	fail=$((fail + 1))
elif ! bad=$(splats "$out/dmesg.txt"); then
	echo "not ok kernel-log  (see .vm-out/dmesg.txt):"
	echo "$bad" | head -n 60 | sed 's/^/    | /'
	fail=$((fail + 1))
else
	echo "ok kernel-log"
fi

[ $skipped -gt 0 ] && echo "($skipped skipped)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
