#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the selftests on a debug kernel.  Builds (once, cached:
# scripts/debug-kernel.sh) Debian's 6.12 with KASAN, lockdep, kmemleak,
# debugobjects and SLUB debugging, builds grim.ko against it, boots it in
# a VM (slub_debug on its command line) and runs the same tests as
# make check, then has kmemleak scan the guest.  Fails on any failed test,
# any kernel splat in the guest's log (selftests/grim/splats.awk, plus the
# debug reports it does not know: SLUB's "BUG <cache>", netdev refcount
# leaks, kmemleak switching itself off, a panic) and any leak that kmemleak
# finds in GRIM; other leaks are printed as notes.  GRIM's frames in
# reports are decoded to file:line (grim.ko is built with -g).  Not in CI:
# the kernel build takes 20 minutes to an hour, a run about an hour under
# TCG (faults.sh alone ~25 minutes).
#
#   scripts/check-debug.sh [TEST.sh...]
#   scripts/check-debug.sh --report DIR [KO]   only the debug checks, on the
#                                    results dir of an earlier run
#
# Environment: GRIM_TEST_TIMEOUT (per test, default 3600 s),
# GRIM_TEST_RESTART_STREAMS (restart.sh's sockets, default 1000),
# GRIM_TEST_FAULT_MSGS (faults.sh's messages, default 20000),
# GRIM_TEST_STREAMS_COUNT (streams.sh's sockets, default 20000),
# GRIM_TEST_MESH_HOSTS (mesh.sh's hosts, default 8): the kernel checks
# every allocation and lock, and is not for scale (at the counts of make
# check, faults.sh did not end in its 25 minutes beside mesh.sh,
# streams.sh took 15 minutes, and mesh.sh's 32 hosts sent 7 of their 40
# messages per peer in its 10 minutes),
# GRIM_TEST_SLOW (what the tests' time bounds are multiplied by, default
# 5: the debug kernel runs about five times slower under TCG),
# GRIM_VM_TIMEOUT (the whole VM, default 18000 s), GRIM_VM_MEM (3G),
# GRIM_DEBUG_APPEND (kernel command line, default slub_debug=FZP), and
# what scripts/vm-run.sh takes.  Results in .vm-out/<release>/ as for
# make check, plus kmemleak.txt (the leaks), kmemleak-boot.txt (what boot
# leaked, not counted), debug-state-{start,end}.txt and splats.txt.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p .vm-out

pass=0 fail=0
result() {	# ok|not-ok NAME [DETAIL]
	if [ "$1" = ok ]; then
		echo "ok $2${3:+  ($3)}"
		pass=$((pass + 1))
	else
		echo "not ok $2${3:+  ($3)}"
		fail=$((fail + 1))
	fi
}
finish() {
	echo
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

# ---- the debug checks, on a results dir: $out, $ko, $kv, $srcdir -------------
debug_checks() {
	# GRIM's frames in a report, decoded: "grim_x+0x1/0x2 [grim]" -> file:line.
	# Without the size: kallsyms' sizes include padding, ELF's do not.
	decode() {	# FILE...
		local f=$srcdir/scripts/faddr2line fr
		[ -x "$f" ] && [ -f "$ko" ] || return 0
		grep -ohE '[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[grim\]' "$@" 2>/dev/null |
			sed 's:/0x[0-9a-f]* \[grim\]$::' | grep -v '^__pfx_' | sort -u | head -n 40 |
			while read -r fr; do
				"$f" "$ko" "$fr" 2>/dev/null | grep -v -e '^$' -e '^skipping' | sed 's/^/    /'
			done
	}
	# kmemleak's reports, one per distinct backtrace, with a count.
	distinct() {	# FILE
		awk '
			function flush() {
				if (blk == "") return
				if (!(key in seen)) { order[++n] = key; text[key] = blk }
				seen[key]++
				blk = ""; key = ""
			}
			/^unreferenced object/ { flush() }
			/^  backtrace/ { key = $0 }
			{ blk = blk $0 "\n"; if (key != "" && $0 !~ /^  backtrace/) key = key "|" $0 }
			END {
				flush()
				for (i = 1; i <= n; i++)
					printf "%s(%d object(s) with this backtrace)\n", text[order[i]], seen[order[i]]
			}
		' "$1"
	}

	# The debug features really were on.
	st=$out/debug-state-start.txt
	en=$out/debug-state-end.txt
	if [ ! -f "$st" ]; then
		result not-ok debug-features "no $st: the guest did not start the run"
	else
		miss=()
		grep -qx "uname: $kv" "$st" || miss+=("kernel $(sed -n 's/^uname: //p' "$st")")
		grep -qx 'kasan: on' "$st" || miss+=(KASAN)
		grep -qx 'lockdep: 1' "$st" || miss+=(lockdep)
		grep -qx 'kmemleak: present' "$st" || miss+=(kmemleak)
		if [ -n "${GRIM_DEBUG_APPEND-slub_debug=FZP}" ]; then
			grep -q '^cmdline:.*slub_debug' "$st" && grep -qx 'slub_debug: 1' "$st" ||
				miss+=(slub_debug)
		fi
		if [ ${#miss[@]} -eq 0 ]; then
			result ok debug-features "KASAN, lockdep, kmemleak, slub_debug on in $kv"
		else
			result not-ok debug-features "not on: ${miss[*]}"
		fi
		if [ -f "$en" ] && ! grep -qx 'lockdep: 1' "$en"; then
			echo "note: lockdep was off at the end of the run (switched off by an earlier" \
			     "report or taint: $(sed -n 's/^tainted: //p' "$en")); later lock bugs went unseen"
		fi
	fi

	# Debug reports that splats.awk (which vm-run.sh applied) does not start
	# a block on: SLUB's "BUG kmalloc-64 (...): Redzone overwritten", netdev
	# and netns refcount leaks, kmemleak giving up, a panic.
	dmesg=$out/dmesg.txt
	splats=$out/splats.txt
	: >"$splats"
	if [ -s "$dmesg" ]; then
		{ grep -vE "$log_ignore" "$dmesg" || true; } | awk -f selftests/grim/splats.awk >"$splats" 2>/dev/null
		extra=$(awk '
			/BUG [^ :]+ \(.*\): |unregister_netdevice: waiting for|ref_tracker: .*(leaked|has [0-9]+\/[0-9]+ users)|Kernel panic|kmemleak: .*([Dd]isabl|[Cc]annot|[Ff]ail)/ {
				if (n <= 0) print "----"
				n = 40
			}
			n > 0 { print; n-- }
		' "$dmesg")
		if [ -n "$extra" ]; then
			printf '%s\n' "$extra" >>"$splats"
			result not-ok debug-reports "SLUB, refcount, kmemleak or panic reports in the guest's log:"
			printf '%s\n' "$extra" | head -n 200 | sed 's/^/    | /'
		else
			result ok debug-reports "no SLUB, refcount, kmemleak or panic reports"
		fi
		if [ -s "$splats" ]; then
			echo "    kernel splats, whole: ${splats#"$top"/} ($(grep -c . "$splats") lines)"
			d=$(decode "$splats")
			[ -n "$d" ] && { echo "    GRIM's frames in them:"; echo "$d"; }
		fi
	fi

	# kmemleak: the leaks GRIM made fail; the rest are notes.  A leak traced
	# to a bare module address (no symbol) is counted as GRIM's too: the
	# module was unloaded since (unload.sh and others reload grim; no other
	# module is unloaded by the tests).
	kml=$out/kmemleak.txt
	if [ ! -f "$kml" ]; then
		result not-ok kmemleak "no report: the run did not finish, or kmemleak is off"
	else
		awk -v g="$out/kmemleak-grim.txt" -v o="$out/kmemleak-other.txt" '
			function flush() {
				if (blk == "") return
				if (blk ~ /\[grim\]/ || blk ~ /\n +0xffffffff[0-9a-f]+\n/) { printf "%s", blk > g; ng++ }
				else { printf "%s", blk > o; no++ }
				blk = ""
			}
			/^unreferenced object/ { flush() }
			{ blk = blk $0 "\n" }
			END { flush(); printf "" > g; printf "" > o; print ng + 0, no + 0 }
		' "$kml" >"$out/kmemleak-counts"
		read -r ng no <"$out/kmemleak-counts"
		rm -f "$out/kmemleak-counts"
		if [ "$ng" -gt 0 ]; then
			result not-ok kmemleak "$ng leak(s) in GRIM (or in an unloaded module), ${kml#"$top"/}:"
			distinct "$out/kmemleak-grim.txt" | head -n 400 | sed 's/^/    | /'
			d=$(decode "$out/kmemleak-grim.txt")
			[ -n "$d" ] && { echo "    GRIM's frames in them:"; echo "$d"; }
		else
			result ok kmemleak "no leak in GRIM"
		fi
		if [ "$no" -gt 0 ]; then
			echo "note: kmemleak: $no suspected leak(s) elsewhere in the kernel (not GRIM's;" \
			     "${out#"$top"/}/kmemleak-other.txt):"
			distinct "$out/kmemleak-other.txt" | head -n 120 | sed 's/^/    | /'
		fi
		nb=$(grep -c '^unreferenced object' "$out/kmemleak-boot.txt" 2>/dev/null)
		[ "${nb:-0}" -gt 0 ] && echo "note: kmemleak: $nb suspected leak(s) from boot, before the tests (not counted; kmemleak-boot.txt)"
	fi
}

# Kernel-log lines of a debug kernel that splats.awk would take for one
# (its pattern "lockdep" matches RCU's boot banner); vm-run.sh drops them.
log_ignore='^\[ *[0-9.]+\] rcu:[[:space:]]+RCU lockdep checking is enabled\.$'

# --report DIR [KO]: only the debug checks, on the results of an earlier run.
if [ "${1:-}" = --report ]; then
	out=$(cd "${2:?--report DIR}" && pwd)
	kv=$(sed -n 's/^uname: //p' "$out/debug-state-start.txt" 2>/dev/null)
	ko=${3:-$top/.build/$kv/grim.ko}
	srcdir=$top/.cache/debug-kernel/src
	echo "=== debug checks (${kv:-unknown kernel}, $out)"
	debug_checks
	# vm-run.sh applied splats.awk in the run itself; here it counts too.
	if [ -s "$out/splats.txt" ]; then
		result not-ok kernel-log "splats in ${out}/dmesg.txt (above)"
	elif [ -s "$out/dmesg.txt" ]; then
		result ok kernel-log
	fi
	finish
fi

# ---- the debug kernel ---------------------------------------------------------
if kdir=$(scripts/debug-kernel.sh --check); then
	result ok debug-kernel "cached: $(cat .cache/debug-kernel/built 2>/dev/null)"
else
	echo "check-debug: building the debug kernel (scripts/debug-kernel.sh), 20 minutes to an hour"
	if ! kdir=$(scripts/debug-kernel.sh); then
		result not-ok debug-kernel "build failed, see .cache/debug-kernel/build.log"
		finish
	fi
	result ok debug-kernel "$(cat .cache/debug-kernel/built 2>/dev/null)"
fi
kv=$(cat "$kdir/include/config/kernel.release")
srcdir=$(dirname "$kdir")/src

# ---- grim.ko against it ---------------------------------------------------------
# -g: the kernel has no debug info, but GRIM's frames are decoded to lines.
blog=.vm-out/build-$kv.log
ko=$top/.build/$kv/grim.ko
kcflags=-g
if KDIR=$kdir scripts/build-module.sh "$kv" KCFLAGS="$kcflags" >"$blog" 2>&1 && [ -f "$ko" ]; then
	n=$(grep -c 'warning:' "$blog")
	w=
	[ "${n:-0}" -gt 0 ] && w=", $n warning(s) in $blog"
	result ok "build $kv" "grim.ko against ${kdir#"$top"/}$w"
else
	grep -E 'warning:|error:' "$blog" | head -n 20 | sed 's/^/    | /'
	result not-ok "build $kv" "failed, see $blog"
	finish
fi

# ---- the selftests in the VM ------------------------------------------------------
out=$top/.vm-out/$kv
vlog=.vm-out/vm-$kv.log
echo
echo "=== debug kernel $kv"
vstart=$(date +%s)
KDIR=$kdir GRIM_KO=$ko GRIM_VM_OUT=$out \
GRIM_VM_MEM=${GRIM_VM_MEM:-3G} \
GRIM_VM_APPEND=${GRIM_DEBUG_APPEND-slub_debug=FZP} \
GRIM_TEST_TIMEOUT=${GRIM_TEST_TIMEOUT:-3600} \
GRIM_VM_TIMEOUT=${GRIM_VM_TIMEOUT:-18000} \
GRIM_TEST_RESTART_STREAMS=${GRIM_TEST_RESTART_STREAMS:-1000} \
GRIM_TEST_FAULT_MSGS=${GRIM_TEST_FAULT_MSGS:-20000} \
GRIM_TEST_STREAMS_COUNT=${GRIM_TEST_STREAMS_COUNT:-20000} \
GRIM_TEST_MESH_HOSTS=${GRIM_TEST_MESH_HOSTS:-8} \
GRIM_TEST_SLOW=${GRIM_TEST_SLOW:-5} \
GRIM_TEST_KMEMLEAK=1 GRIM_VM_LOG_IGNORE="$log_ignore" \
	scripts/vm-run.sh "$@" 2>&1 | tee "$vlog" |
	sed -u "s/^\([0-9]\+ passed, [0-9]\+ failed\)$/kernel $kv: \1/"
wall=$(($(date +%s) - vstart))
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$vlog" | tail -n 1)
if [ -z "$line" ]; then
	result not-ok "selftests $kv" "no result line, see $vlog"
else
	p=${line%% passed*}
	f=${line#*passed, }; f=${f%% failed*}
	pass=$((pass + p)); fail=$((fail + f))
fi
echo
echo "=== debug checks ($kv, VM ran ${wall}s)"

debug_checks

echo
echo "check-debug: VM wall time ${wall}s; results in ${out#"$top"/}/"
finish
