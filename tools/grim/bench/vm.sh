#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the VM the way scripts/vm-run.sh does and run guest.sh in it, but
# with the run's own results directory as the guest's writable share
# (scripts/vm-run.sh empties .vm-out/ on every start, and other test runs
# in the same tree would wipe a benchmark half way).
#
#   vm.sh OUTDIR [guest.sh ARG...]
#
# Environment as for scripts/vm-run.sh: KDIR, VMLINUZ, GRIM_KO,
# GRIM_VM_KVM=auto|yes|no, GRIM_VM_MEM, GRIM_VM_CPUS, GRIM_VM_TIMEOUT.
set -uo pipefail

top=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$top"
export PATH="$PATH:$HOME/.local/bin:/usr/local/bin"
out=$1
shift
mkdir -p "$out" "$top/.cache"
out=$(cd "$out" && pwd)

KDIR=${KDIR:-$(scripts/kdir.sh)} || { echo "bench: no kernel build dir" >&2; exit 1; }
KVER=$(KDIR=$KDIR scripts/kdir.sh --version)
if [ -z "${VMLINUZ:-}" ]; then
	if [ -f "$KDIR/arch/x86/boot/bzImage" ] && [ -f "$KDIR/vmlinux" ]; then
		VMLINUZ=$KDIR/arch/x86/boot/bzImage
	else
		VMLINUZ=/boot/vmlinuz-$KVER
	fi
fi
if [ -z "${GRIM_KO:-}" ]; then
	GRIM_KO=$top/.build/$KVER/grim.ko
	scripts/build-module.sh "$KVER" >/dev/null || { echo "bench: building grim.ko for $KVER failed" >&2; exit 1; }
fi
case "$GRIM_KO" in /*) ;; *) GRIM_KO=$top/$GRIM_KO ;; esac
command -v vng >/dev/null || { echo "bench: vng not found (make deps)" >&2; exit 1; }

vng_base=(vng --run "$VMLINUZ" --disable-microvm
	  --memory "${GRIM_VM_MEM:-2G}" --cpus "${GRIM_VM_CPUS:-2}"
	  --rwdir="$out" --cwd "$top")

# Same KVM probe and cache as scripts/vm-run.sh.
kvm=(--disable-kvm)
accel=TCG
case "${GRIM_VM_KVM:-auto}" in
yes|1) kvm=() accel=KVM ;;
no|0) ;;
*)
	cache=$top/.cache/kvm-$KVER
	if [ ! -f "$cache" ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		echo "bench: probing KVM (once)..."
		if timeout -k 5 60 "${vng_base[@]}" --exec true </dev/null >/dev/null 2>&1; then
			echo yes >"$cache"
		else
			echo no >"$cache"
		fi
	fi
	[ "$(cat "$cache" 2>/dev/null)" = yes ] && kvm=() accel=KVM
	;;
esac
# No CMPXCHG16B on QEMU 7.2: see scripts/tcg-cpu.sh.
if [ "$accel" = TCG ]; then
	source "$top/scripts/tcg-cpu.sh"
	cpu_opt=$(tcg_cpu_opts)
	[ -n "$cpu_opt" ] && kvm+=("$cpu_opt")
fi

echo "bench: booting $KVER ($accel); results in ${out#"$top"/}"
echo "$accel" >"$out/accel.txt"
start=$(date +%s)
timeout -k 10 "${GRIM_VM_TIMEOUT:-3600}" "${vng_base[@]}" "${kvm[@]}" \
	--exec "$top/scripts/guest-run-tests.sh $out $GRIM_KO --script $top/tools/grim/bench/guest.sh out=$out $*" \
	</dev/null
vm_rc=$?
echo "bench: VM exited after $(($(date +%s) - start))s"
rc=1
[ -f "$out/done" ] && rc=$(cat "$out/done")
[ -f "$out/done" ] || echo "bench: the VM did not finish (exit $vm_rc)"
SPLAT_RE='Oops|BUG:|WARNING:|refcount_t|lockdep|possible circular locking|INFO: task .* blocked|general protection fault|Call Trace'
if bad=$(grep -E "$SPLAT_RE" "$out/dmesg.txt" 2>/dev/null); then
	echo "bench: kernel log problems (see $out/dmesg.txt):"
	echo "$bad" | head -n 40 | sed 's/^/    /'
	rc=1
fi
exit "$rc"
