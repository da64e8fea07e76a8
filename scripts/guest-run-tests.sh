#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM started by scripts/vm-run.sh.
#
#   guest-run-tests.sh OUTDIR KO TESTDIR TEST...      run selftests, TAP to OUTDIR/tap.txt
#   guest-run-tests.sh OUTDIR KO --script FILE [ARG...]  run one script (the demo)
#
# KO is the grim.ko to insmod ("none" for none).  OUTDIR is shared read-write
# with the host; everything else of the host file system is read-only.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

out=$1 ko=$2
shift 2
[ "$ko" = none ] && ko=
export GRIM_KO=$ko
mkdir -p "$out"

# No address space randomization for the guest's programs: QEMU 7.2's
# TCG keys the code it translated by virtual address, so a library
# mapped somewhere new in every process is translated anew in every
# process.  Without it, a dynamically linked program starts about 1.7
# times faster and python3 3 times faster; the tests start thousands.
# The guest kernel's own layout (KASLR) is left as it is.
echo 0 >/proc/sys/kernel/randomize_va_space
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# Keep the full kernel log, also if the guest dies half way.
dmesg -w >"$out/dmesg.txt" 2>&1 &
dmesg_pid=$!

finish() {
	sleep 1
	kill "$dmesg_pid" 2>/dev/null
	wait "$dmesg_pid" 2>/dev/null
	dmesg >"$out/dmesg.txt"
	echo "$1" >"$out/done"
	sync
}

load_grim() {
	[ -n "$ko" ] || return 0
	[ -d /sys/module/grim ] && return 0
	# insmod does not load what grim.ko needs (the library Poly1305).
	modprobe -a $(modinfo -F depends "$ko" | tr , ' ') || return
	insmod "$ko"
}

# make check-debug (GRIM_TEST_KMEMLEAK=1): kmemleak over the whole run.
kmemleak() { [ -z "${GRIM_TEST_KMEMLEAK:-}" ] || bash "$(dirname "$0")/guest-kmemleak.sh" "$1" "$out"; }
kmemleak start

if ! load_grim >"$out/insmod.log" 2>&1; then
	echo "insmod $ko failed:"
	sed 's/^/    /' "$out/insmod.log"
	echo 1 >"$out/insmod.rc"
fi

# The emulated CPU's flags across CMPXCHG16B (scripts/tcg-cpu.sh), when
# vm-run.sh built the probe.
if [ -x "$out/cpu-flags-probe" ]; then
	"$out/cpu-flags-probe" >"$out/cpu-flags.txt" 2>&1
	echo $? >"$out/cpu-flags.rc"
fi

if [ "${1:-}" = --script ]; then
	shift
	script=$1
	shift
	bash "$script" "$@" 2>&1 | tee "$out/script.log"
	rc=${PIPESTATUS[0]}
	finish "$rc"
	exit 0
fi

testdir=$1
shift
cd "$testdir" || exit 1
timeout=300
if [ -r settings ]; then
	t=$(sed -n 's/^timeout=\([0-9]\+\).*/\1/p' settings)
	[ -n "$t" ] && timeout=$t
fi
# make check-full gives soak-sized tests longer.
timeout=${GRIM_TEST_TIMEOUT:-$timeout}

# cpu_forks: "BUSY IDLE FORKS", the guest's CPU time busy and idle (in
# clock ticks, all CPUs) and the processes started since boot: where a
# test's wall time goes, in $out/cost.txt.
cpu_forks() {
	local cpu us ni sy idle io irq sirq st k v forks=0
	while read -r k v; do
		[ "$k" = processes ] && forks=$v
	done </proc/stat
	read -r cpu us ni sy idle io irq sirq st _ </proc/stat
	echo "$((us + ni + sy + irq + sirq + st)) $((idle + io)) $forks"
}
cost=$out/cost.txt
echo "# test seconds busy% forks (busy: the guest's CPUs, all of them, with" \
	"the test's neighbour in its lane, if any)" >"$cost"

# Each test once: results and logs go by the test's name.
declare -A seen=()
tests=()
for t in "$@"; do
	[ -n "${seen[$t]:-}" ] || tests+=("$t")
	seen[$t]=1
done
tap=$out/tap.txt
emit() { echo "$*" >>"$tap"; echo "$*"; }
: >"$tap"
emit "TAP version 13"
emit "1..${#tests[@]}"

# Two tests at a time: most of a test's time is spent waiting (timers,
# the 9p root file system); cost.txt showed the guest's CPUs 41% busy
# over a serial run.  A test that says "# grim-selftest: alone" in its
# first lines runs with no other: it reloads the module, reads global
# state (tracing, SUnreclaim, the clock, the kernel log's rate limit) or
# has time bounds that a neighbour's load would break.  The others run
# side by side, in the order given, in GRIM_TEST_LANES lanes (default 2;
# 1 runs every test alone, in the order given, as the kselftest runner
# does).  Results are numbered in the order the tests finish.
lanes=${GRIM_TEST_LANES:-2}
[[ $lanes =~ ^[1-9]$ ]] || lanes=2
res=$out/.results
rm -rf "$res"
mkdir -p "$res"
# The networking static keys, held while two tests run at once.
# shellcheck source=scripts/guest-keys.sh
. "$(dirname "$0")/guest-keys.sh"
[ "$lanes" -gt 1 ] && hold_net_keys
# Read once per test, in the shell: a program start costs under TCG.
declare -A alone_=()
alone() {
	local l
	if [ -z "${alone_[$1]:-}" ]; then
		alone_[$1]=no
		if [ "$lanes" = 1 ]; then
			alone_[$1]=yes
		elif [ -r "$1" ]; then
			mapfile -t -n 30 l <"$1"
			for l in "${l[@]}"; do
				[[ $l == "# grim-selftest: alone"* ]] && alone_[$1]=yes
			done
		fi
	fi
	[ "${alone_[$1]}" = yes ]
}

# run_test T: one test, its log and "RC SECS" in $res/T.
run_test() {
	local t=$1 log=$out/${1%.sh}.log start rc b0 i0 f0 b1 i1 f1
	start=$(date +%s)
	read -r b0 i0 f0 <<<"$(cpu_forks)"
	if [ -x "$t" ]; then
		timeout -k 10 "$timeout" "./$t" >"$log" 2>&1 </dev/null
	else
		timeout -k 10 "$timeout" bash "./$t" >"$log" 2>&1 </dev/null
	fi
	rc=$?
	secs=$(($(date +%s) - start))
	read -r b1 i1 f1 <<<"$(cpu_forks)"
	echo "$t $secs $(((b1 - b0) * 100 / (b1 - b0 + i1 - i0 + 1))) $((f1 - f0))" >>"$cost"
	echo "$rc $secs" >"$res/$t.tmp"
	mv "$res/$t.tmp" "$res/$t"
}

# report: TAP for every test that finished since the last call.
n=0
report() {
	local t rc secs
	for t in "${started[@]}"; do
		[ -f "$res/$t" ] && [ -z "${done_[$t]:-}" ] || continue
		done_[$t]=1
		read -r rc secs <"$res/$t"
		n=$((n + 1))
		emit "# selftests: grim: $t"
		sed 's/^/# /' "$out/${t%.sh}.log" >>"$tap"
		case $rc in
		0) emit "ok $n selftests: grim: $t # ${secs}s" ;;
		4) emit "ok $n selftests: grim: $t # SKIP" ;;
		124|137) emit "not ok $n selftests: grim: $t # TIMEOUT $timeout seconds" ;;
		*) emit "not ok $n selftests: grim: $t # exit=$rc" ;;
		esac
	done
}

# The tests that run alone go first, in the order given, then the others
# in lanes: an alone test between two others would leave one lane idle
# while the longer of those finished.
order=()
for t in "${tests[@]}"; do
	alone "$t" && order+=("$t")
done
for t in "${tests[@]}"; do
	alone "$t" || order+=("$t")
done

# The lanes' jobs by pid: a bare wait would wait for dmesg -w too.
declare -A done_=()
started=()
pids=()
for t in "${order[@]}"; do
	if alone "$t"; then
		[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
		pids=()
		report
		started+=("$t")
		run_test "$t"
		report
		# A test may have unloaded the module; later tests expect it
		# loaded.
		load_grim >>"$out/insmod.log" 2>&1
		continue
	fi
	while [ ${#pids[@]} -ge "$lanes" ]; do
		wait -n "${pids[@]}"
		live=()
		for p in "${pids[@]}"; do
			kill -0 "$p" 2>/dev/null && live+=("$p")
		done
		pids=("${live[@]}")
		report
	done
	started+=("$t")
	run_test "$t" &
	pids+=($!)
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
report

kmemleak end
finish 0
exit 0
