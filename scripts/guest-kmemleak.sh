#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM, from scripts/guest-run-tests.sh when make check-debug
# sets GRIM_TEST_KMEMLEAK=1 (on the debug kernel of scripts/debug-kernel.sh).
#
#   guest-kmemleak.sh start OUTDIR   before the tests: scan, then forget what
#                                    the boot leaked (so only the run counts)
#   guest-kmemleak.sh end OUTDIR     after the tests: scan twice, a pause
#                                    apart; the report to OUTDIR/kmemleak.txt
#
# Also records, in OUTDIR/debug-state-{start,end}.txt, what the host checks
# afterwards: the kernel, its command line, whether KASAN, lockdep and
# kmemleak are on (lockdep switches itself off after its first report or
# on some taints), the taint flags and the loaded modules with their
# addresses (so that a leak's bare module address can be placed).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

what=$1 out=$2
kml=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

state() {
	echo "uname: $(uname -r)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "tainted: $(cat /proc/sys/kernel/tainted)"
	if [ -r /proc/lockdep_stats ]; then
		echo "lockdep: $(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)"
	else
		echo "lockdep: absent"
	fi
	if [ -e "$kml" ]; then echo "kmemleak: present"; else echo "kmemleak: absent"; fi
	if grep -q 'KernelAddressSanitizer initialized' <(dmesg); then
		echo "kasan: on"
	else
		echo "kasan: absent"
	fi
	echo "slub_debug: $(cat /sys/kernel/slab/kmalloc-64/sanity_checks 2>/dev/null || echo '?')"
	echo "modules:"
	sed 's/^/  /' /proc/modules
}

scan() {
	local t=$SECONDS
	echo scan >"$kml" 2>/dev/null || return 1
	echo "guest-kmemleak: scan took $((SECONDS - t))s"
}

case $what in
start)
	state >"$out/debug-state-start.txt" 2>&1
	[ -e "$kml" ] || exit 0
	# What boot left is not GRIM's: report it separately, then clear it.
	scan
	cat "$kml" >"$out/kmemleak-boot.txt" 2>&1
	echo clear >"$kml"
	;;
end)
	[ -e "$kml" ] || { state >"$out/debug-state-end.txt" 2>&1; exit 0; }
	# Objects must be unreferenced in two scans (and older than 5 s)
	# to be reported; RCU and deferred frees get the pause to finish.
	sleep 5
	scan
	sleep 10
	scan
	cat "$kml" >"$out/kmemleak.txt" 2>&1
	echo "guest-kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.txt") suspected leak(s)"
	state >"$out/debug-state-end.txt" 2>&1
	;;
esac
exit 0
