#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the GRIM selftests (in the style of WireGuard's netns.sh).
# Source it from a test:   source "$(dirname "$0")/lib.sh"
#
# "Hosts" are network namespaces.  setup_hosts N creates N of them, each with
# an eth0 that is one end of a veth pair; the other ends are enslaved to a
# bridge br0 in a "switch" namespace.  Everything created through these
# helpers is removed by the EXIT trap.
#
# Exit codes follow kselftest: 0 pass, 1 fail, 4 skip.

ksft_pass=0
ksft_fail=1
ksft_skip=4

# No basename, dirname or id in what every test runs: under TCG each
# program started costs a fifth of a second.
_self=${0##*/}
TEST_NAME=${TEST_NAME:-${_self%.sh}}
# Unique per test run, short enough for interface-name limits elsewhere.
PFX=${PFX:-g$$}
SWITCH_NS=$PFX-sw
# GRIM_TEST_TRACE=1: every command the test runs, timed, into its log.
PS4='+ ${EPOCHREALTIME} ${BASH_SOURCE##*/}:${LINENO}: '
[ -z "${GRIM_TEST_TRACE:-}" ] || set -x
# trace_on_fail: every command from here on, timed, into a file; if the
# test then fails, its last 40 go to the log, after whatever it said.
# For a test that ended with an error status and no word of why.
_TRACE=
trace_on_fail() {
	[ -z "${GRIM_TEST_TRACE:-}" ] || return 0
	_TRACE=$(mktemp) || return 0
	exec {BASH_XTRACEFD}>"$_TRACE"
	set -x
}
# Time bounds that tell a wait from a delay (never speed targets) are
# multiplied by SLOW: GRIM_TEST_SLOW, or 5 with KSFT_MACHINE_SLOW=yes
# (the kernel's net selftests' name for a debug kernel).  make
# check-debug sets GRIM_TEST_SLOW=5: KASAN, lockdep and kmemleak make
# the emulated kernel about five times slower.
SLOW=${GRIM_TEST_SLOW:-1}
[ -z "${GRIM_TEST_SLOW:-}" ] && [ "${KSFT_MACHINE_SLOW:-}" = yes ] && SLOW=5
[[ $SLOW =~ ^[1-9][0-9]?$ ]] || { echo "GRIM_TEST_SLOW=$SLOW: a whole number, 1 to 99" >&2; exit 1; }
NUM_HOSTS=0
_NETNS=()
_PIDS=()
_CLEANUPS=()

# ---- waiting without starting programs ---------------------------------------

# sleep SECS: as sleep(1), but in the shell: a read that times out on a
# pipe nobody writes to.  The tests poll every 0.1 s; under TCG a program
# started costs 40 ms or more of the guest's CPU, so a poll loop that
# starts sleep(1), and wc(1) in a command substitution, every 0.1 s can
# cost more CPU than it waits, and slows whatever runs beside it.  Programs the tests start (timeout, nsx ...)
# still get sleep(1).
# (A redirection on exec itself stays: { } keeps 2>/dev/null to the
# exec, and stderr stays the test's.)
if { exec {_nap_fd}<> <(:); } 2>/dev/null; then
	sleep() {
		read -r -t "$1" -u "$_nap_fd" _ 2>/dev/null
		return 0
	}
fi

# nlines VAR FILE: the number of whole lines in FILE (0 if there is no
# FILE) into VAR, with no subshell and no program: a line still being
# written, with no newline yet, does not count (as with wc -l).
nlines() {
	local -n _nl_n=$1
	local _nl_l=()
	[ -r "$2" ] && mapfile _nl_l <"$2"
	_nl_n=${#_nl_l[@]}
	[ "$_nl_n" -gt 0 ] && [[ ${_nl_l[_nl_n - 1]} != *$'\n' ]] && _nl_n=$((_nl_n - 1))
	return 0
}
# lines FILE: print the number of whole lines in FILE (0 if none).
lines() { local n; nlines n "$1"; echo "$n"; }
# wait_lines FILE N [SECS]: until FILE has N whole lines or more, SECS
# (default 60) times SLOW at most.  Returns 1 if it did not get there.
wait_lines() {
	local n t
	for ((t = 0; t < ${3:-60} * SLOW * 10; t++)); do
		nlines n "$1"
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_prefix FILE PREFIX [SECS]: until a line of FILE starts with PREFIX,
# SECS (default 10) times SLOW at most.  Returns 1 if none did.
wait_prefix() {
	local t l _l
	for ((t = 0; t < ${3:-10} * SLOW * 10; t++)); do
		if [ -r "$1" ]; then
			mapfile -t _l <"$1"
			for l in "${_l[@]}"; do
				[[ $l == "$2"* ]] && return 0
			done
		fi
		sleep 0.1
	done
	return 1
}

# ---- output -----------------------------------------------------------------

if [ -t 1 ]; then
	_c_on=$'\e[1;32m' _c_err=$'\e[1;31m' _c_off=$'\e[0m'
else
	_c_on='' _c_err='' _c_off=''
fi

# pretty [NS] MESSAGE: a step heading, with the seconds since the test
# started (slow steps show in the logs).
pretty() {
	local where=${1:+[$1] }
	echo "${_c_on}[+] ${where}${2}${_c_off} (${SECONDS}s)"
}
log() { echo "    $*"; }
# pp CMD...: print a command, then run it.
pp() { echo "    \$ $*"; "$@"; }

fail() {
	echo "${_c_err}FAIL: $TEST_NAME: $*${_c_off}" >&2
	exit $ksft_fail
}
skip() {
	echo "SKIP: $TEST_NAME: $*"
	exit $ksft_skip
}

# ---- assertions ---------------------------------------------------------------

# check_ok CMD...: CMD must succeed.
check_ok() {
	local out
	if ! out=$("$@" 2>&1); then
		echo "$out" >&2
		fail "expected success: $*"
	fi
	[ -z "$out" ] || echo "$out"
}
# check_fail CMD...: CMD must fail.
check_fail() {
	local out
	if out=$("$@" 2>&1); then
		echo "$out" >&2
		fail "expected failure: $*"
	fi
	log "failed as expected: $* (${out//$'\n'/ })"
}
# check_eq GOT EXPECTED WHAT
check_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}
# check_same SENT GOT WHAT: file GOT holds what file SENT does (sha256);
# if not, where they first differ and in how many bytes.
check_same() {
	[ "$(sha256sum <"$1")" = "$(sha256sum <"$2")" ] && return
	log "$(cmp "$1" "$2" 2>&1 | head -1); $(cmp -l "$1" "$2" 2>/dev/null | wc -l) bytes differ"
	fail "$3: what arrived differs from what was sent"
}
# check_match TEXT REGEX WHAT
check_match() {
	[[ $1 =~ $2 ]] || { echo "$1" >&2; fail "$3: no match for /$2/"; }
}
# check_nomatch TEXT REGEX WHAT
check_nomatch() {
	[[ ! $1 =~ $2 ]] || { echo "$1" >&2; fail "$3: unexpected match for /$2/"; }
}

# ---- kernel log ---------------------------------------------------------------

# A test sees only the splats logged after its dmesg_mark; lib.sh marks
# when it is sourced, so one test's splat does not fail the next.
# splats.awk says what a splat is, and prints each one whole.
_dmesg_since() {
	dmesg | awk 'END { if (match($0, /^\[ *[0-9]+\.[0-9]+\]/)) {
		s = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", s); print s
	} else print -1 }'
}
dmesg_mark() { _dmesg_mark=$(_dmesg_since); }
# check_dmesg: no kernel splat since the last dmesg_mark.
check_dmesg() {
	local bad
	if ! bad=$(dmesg | awk -v since="$_dmesg_mark" -f "$_TESTDIR/splats.awk"); then
		echo "$bad" >&2
		fail "kernel log shows a splat"
	fi
}
dmesg_mark

# ---- requirements -------------------------------------------------------------

require_root() { [ "$EUID" -eq 0 ] || skip "must run as root"; }
require_cmd() {
	local c
	for c; do command -v "$c" >/dev/null || skip "$c not found"; done
}
require_mod() {
	local m
	for m; do [ -d "/sys/module/$m" ] || modprobe -q "$m" 2>/dev/null ||
		skip "module $m not available"; done
}

# The tests' directory: in the GRIM project, selftests/grim, with the
# user-space tools in ../../tools/grim; in a kernel tree, its
# tools/testing/selftests/grim, the tools installed or found through
# IP_LIB_DIR and PATH.
_TESTDIR=${BASH_SOURCE[0]%/*}
[ "$_TESTDIR" = "${BASH_SOURCE[0]}" ] && _TESTDIR=.
_TESTDIR=$(cd "$_TESTDIR" && pwd)
# require_ip_grim: ip(8) knows "type grim" options (link_grim.so): in
# IP_LIB_DIR if set, else in the project's tools/grim (exported as
# IP_LIB_DIR), else where ip looks by default (the plugin installed).
require_ip_grim() {
	local d=$_TESTDIR/../../tools/grim
	if [ -n "${IP_LIB_DIR:-}" ]; then
		[ -f "$IP_LIB_DIR/link_grim.so" ] || skip "no link_grim.so in IP_LIB_DIR=$IP_LIB_DIR"
	elif [ -f "$d/link_grim.so" ]; then
		export IP_LIB_DIR=$(cd "$d" && pwd)
	else
		ip link help grim 2>&1 | grep -q 'grim \[ node' ||
			skip "link_grim.so not built or installed (IP_LIB_DIR=<its dir>)"
	fi
}
# require_grim_tool: GRIM is the grim(8) tool: GRIM if set, else the
# project's tools/grim/grim, else grim on PATH.
require_grim_tool() {
	GRIM=${GRIM:-$_TESTDIR/../../tools/grim/grim}
	[ -x "$GRIM" ] || GRIM=$(command -v grim) || skip "grim tool not built or installed"
}

# ---- loading grim -------------------------------------------------------------
#
# How grim is loaded, by require_grim and again by the tests that unload it:
#   GRIM_KO set (the project's runner, scripts/vm-run.sh): insmod "$GRIM_KO",
#   after modprobe of the modules it depends on;
#   otherwise, as in a kernel tree's kselftest run: modprobe grim, the module
#   installed for the running kernel (make modules_install, DKMS).
grim_insmod() {
	modprobe -a $(modinfo -F depends "$1" | tr , ' ') && insmod "$1"
}
if [ -n "${GRIM_KO:-}" ]; then
	GRIM_LOAD=(grim_insmod "$GRIM_KO")
else
	GRIM_LOAD=(modprobe grim)
fi

grim_loaded() { [ -d /sys/module/grim ]; }
# require_grim: the grim module is loaded (with GRIM_LOAD if not).
require_grim() {
	grim_loaded && return 0
	"${GRIM_LOAD[@]}" || fail "grim module not loaded and ${GRIM_LOAD[*]} failed"
}
# require_grim_reload: for a test that unloads grim.  grim is loaded, it
# can be loaded again with GRIM_LOAD, and it is loaded again at exit
# whatever happens, so that the tests after this one find it.  The kernel
# does not record which file a module came from: without GRIM_KO, the
# module installed for this kernel must be the one loaded (same
# srcversion), or the test skips.
require_grim_reload() {
	local file have want
	require_grim
	if [ -z "${GRIM_KO:-}" ]; then
		require_cmd modprobe modinfo
		file=$(modinfo -n grim 2>/dev/null) ||
			skip "GRIM_KO not set and no grim installed for $(uname -r) to load again"
		have=$(cat /sys/module/grim/srcversion 2>/dev/null)
		want=$(modinfo -F srcversion grim 2>/dev/null)
		[ "$have" = "$want" ] ||
			skip "GRIM_KO not set and the grim loaded (srcversion $have) is not the one installed, $file ($want)"
		log "grim loads again with: ${GRIM_LOAD[*]} ($file)"
	fi
	at_exit 'grim_loaded || "${GRIM_LOAD[@]}"'
}

# ---- namespaces and hosts -----------------------------------------------------

# ns_add NAME: create a netns removed at exit, with lo up.
ns_add() {
	ip netns add "$1" || fail "ip netns add $1"
	_NETNS+=("$1")
	ip -n "$1" link set lo up
}
ns_del() {
	local i
	ip netns del "$1" 2>/dev/null
	for i in "${!_NETNS[@]}"; do
		[ "${_NETNS[$i]}" = "$1" ] && unset '_NETNS[i]'
	done
	return 0
}
# host N: namespace name of host N (1-based).
host() { echo "$PFX-h$1"; }
# nsx N CMD...: run CMD in host N's network namespace.  nsenter joins
# that namespace and nothing else: ip netns exec also makes a mount
# namespace and mounts the netns's sysfs, which under TCG costs more
# than the program it runs.  For /sys/class/net of a host, use nsx_sys.
nsx() { local n=$1; shift; nsenter --net="/run/netns/$PFX-h$n" "$@"; }
# nsx_sys N CMD...: as nsx, with host N's own sysfs.
nsx_sys() { local n=$1; shift; ip netns exec "$PFX-h$n" "$@"; }
# nsrun N CMD...: CMD in host N's namespace as this process (exec): in a
# subshell started with &, $! is then CMD itself, which a kill reaches.
nsrun() { local n=$1; shift; exec nsenter --net="/run/netns/$PFX-h$n" "$@"; }
# host_mac N: the deterministic MAC of host N's eth0.
host_mac() { printf '02:00:00:00:%02x:%02x\n' $(($1 >> 8)) $(($1 & 255)); }
# carrier HOST DEV: 1 with carrier, 0 without.
carrier() { nsx_sys "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null; }
# wait_carrier HOST DEV 0|1: up to 5 s for DEV's carrier to be that.
wait_carrier() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(carrier "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# setup_hosts N: hosts 1..N, eth0 each, all on bridge br0 in $SWITCH_NS.
setup_hosts() {
	local n=$1 i h sw=() hs=()
	require_mod veth bridge
	# Batches: under TCG every ip(8) started costs a fifth of a second.
	for ((i = 1; i <= n; i++)); do
		hs+=("$(host "$i")")
	done
	printf 'netns add %s\n' "$SWITCH_NS" "${hs[@]}" | ip -b - ||
		fail "ip netns add"
	_NETNS+=("$SWITCH_NS" "${hs[@]}")
	sw=("link set lo up" "link add name br0 type bridge" "link set br0 up")
	for ((i = 1; i <= n; i++)); do
		sw+=("link add name p$i type veth peer name eth0 address $(host_mac "$i") netns ${hs[i - 1]}"
		     "link set p$i master br0 up")
	done
	printf '%s\n' "${sw[@]}" | ip -n "$SWITCH_NS" -b - || fail "bridge and veths"
	for h in "${hs[@]}"; do
		printf '%s\n' "link set lo up" "link set eth0 up" | ip -n "$h" -b - ||
			fail "links up in $h"
		# A grim link is an IP interface, and IPv6 configures itself
		# on it: neighbour and router solicitations and MLD reports
		# go to every peer as GRIM messages, which the tests that
		# count messages exactly would count too.  Those tests are
		# about the transport: IPv6 is off on the links they make
		# (ip_ipv6_on turns it back on).
		nsenter --net="/run/netns/$h" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 ||
			fail "IPv6 off in $h"
	done
	NUM_HOSTS=$n
}

# ip_ipv6_on: links made from now on in every host run IPv6.
ip_ipv6_on() {
	local i
	for ((i = 1; i <= NUM_HOSTS; i++)); do
		nsx "$i" sysctl -qw net.ipv6.conf.default.disable_ipv6=0 ||
			fail "IPv6 on in host $i"
	done
}

# ip_addrs N [eth]: addresses on grim0 of hosts 1..N, 10.77.0.I/24 and,
# if IPv6 runs there, fd77::I/64; with "eth", 10.88.0.I/24 on eth0 too,
# to compare with the bare lower link.
ip_addrs() {
	local i v6 cmds
	for ((i = 1; i <= $1; i++)); do
		cmds=("addr add 10.77.0.$i/24 dev grim0")
		v6=$(nsx_sys "$i" cat /proc/sys/net/ipv6/conf/grim0/disable_ipv6 2>/dev/null)
		[ "$v6" = 0 ] && cmds+=("addr add fd77::$i/64 dev grim0 nodad")
		[ "${2:-}" = eth ] && cmds+=("addr add 10.88.0.$i/24 dev eth0")
		printf '%s\n' "${cmds[@]}" | ip -n "$(host "$i")" -b - ||
			fail "addresses on host $i"
	done
}

# wait_listen HOST PORT: until something listens on TCP PORT there.
wait_listen() {
	local t
	for ((t = 0; t < 100 * SLOW; t++)); do
		nsx "$1" ss -Hltn "sport = :$2" | grep -q . && return
		sleep 0.1
	done
	fail "nothing listens on TCP port $2 of host $1"
}

# tcp_sink HOST PORT FILE [LISTEN]: a socat on HOST writes what one
# connection to TCP PORT brings into FILE (LISTEN: socat's listening
# address, TCP-LISTEN or TCP6-LISTEN and options; reuseaddr by default),
# for at most 300 s times SLOW.  Returns once it listens.
tcp_sink() {
	rm -f "$3"
	nsx "$1" timeout $((300 * SLOW)) socat -u \
		"${4:-TCP-LISTEN:$2,reuseaddr}" OPEN:"$3",creat,trunc &
	_SINK=$!
	_PIDS+=($_SINK)
	wait_listen "$1" "$2"
}
# sink_done FILE SIZE WHAT: the connection tcp_sink took has ended and
# FILE holds SIZE bytes.  The sender's close is not the end: what it
# wrote last may still be on its way, resent after a loss.
sink_done() {
	local rc
	wait "$_SINK"
	rc=$?
	[ $rc -eq 0 ] || fail "$3: the receiving socat exited $rc (124: the connection never ended)"
	check_eq "$(wc -c <"$1")" "$2" "bytes of $3"
}

# grim_add NS LOWER NAME [ARGS...]:
#   ip -n NS link add link LOWER name NAME ARGS type grim
# (ARGS are generic ip-link options such as "address 00:00:00:07")
grim_add() {
	local ns=$1 lower=$2 name=$3
	shift 3
	ip -n "$ns" link add link "$lower" name "$name" "$@" type grim
}
# grim_node NS DEV: the node id of DEV as shown in its address.
grim_node() { ip netns exec "$1" cat "/sys/class/net/$2/address"; }

# at_exit CMD: run CMD (a string) at cleanup, before namespaces go.
at_exit() { _CLEANUPS+=("$1"); }
# bg CMD...: start CMD in the background, killed at cleanup.
bg() { "$@" & _PIDS+=($!); }

cleanup() {
	local rc=$? c p ns
	{ set +x; } 2>/dev/null
	set +e
	if [ -n "$_TRACE" ]; then
		if [ "$rc" -ne 0 ]; then
			echo "--- $TEST_NAME ended with status $rc; its last commands:" >&2
			tail -n 40 "$_TRACE" >&2
		fi
		rm -f "$_TRACE"
	fi
	for c in "${_CLEANUPS[@]}"; do eval "$c"; done
	# bg runs a function such as nsx in a subshell: the command that it
	# starts is the subshell's child and outlives a kill of the subshell,
	# holding the test's output open (the kselftest runner waits for it).
	# One pkill and one kill for all of them (pkill -P takes a list).
	if [ ${#_PIDS[@]} -gt 0 ]; then
		p=${_PIDS[*]}
		pkill -P "${p// /,}" 2>/dev/null
		kill "${_PIDS[@]}" 2>/dev/null
		for p in "${_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	fi
	# What was started with a plain & (nsx ... &) is not in _PIDS: kill
	# what runs in this test's namespaces, and nothing of a test that
	# runs beside it (guest-run-tests.sh's lanes).  One ip for every
	# namespace; -force goes on past one that is gone.
	if [ ${#_NETNS[@]} -gt 0 ]; then
		p=$(printf 'netns pids %s\n' "${_NETNS[@]}" | ip -force -b - 2>/dev/null)
		[ -n "$p" ] && kill -9 $p 2>/dev/null
		printf 'netns del %s\n' "${_NETNS[@]}" | ip -force -b - 2>/dev/null
	fi
	exit $rc
}
trap cleanup EXIT
# A signal that ends the test says so: a test killed from outside (or
# by stat, which prints why first) must not end without a word.
trap 'echo "${_c_err}FAIL: $TEST_NAME: ended by SIGTERM${_c_off}" >&2; exit 1' TERM
trap 'echo "${_c_err}FAIL: $TEST_NAME: ended by SIGINT${_c_off}" >&2; exit 1' INT

# ---- GRIM clusters --------------------------------------------------------------

# grim_cluster N [LINKARGS...]: a grim0 on eth0 of hosts 1..N, node id i,
# brought up.  LINKARGS go before "type grim" (generic ip-link options);
# GRIM_OPTS, if set, after it (grim options: "streamidle 60000").
grim_cluster() {
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		printf '%s\n' "link add link eth0 name grim0 address $(grim_addr "$i") $* type grim ${GRIM_OPTS:-}" \
			"link set grim0 up" | ip -n "$(host "$i")" -b - ||
			fail "grim0 on host $i"
	done
}
# grim_addr N: the link address for node id N (4 bytes).
grim_addr() {
	printf '%02x:%02x:%02x:%02x\n' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
		$(($1 >> 8 & 255)) $(($1 & 255))
}
# netem_links SPEC: netem SPEC on both directions of every host's link.
netem_links() {
	local i
	require_mod sch_netem
	for ((i = 1; i <= NUM_HOSTS; i++)); do
		tc -n "$(host "$i")" qdisc replace dev eth0 root netem limit 10000 $1 ||
			fail "netem on host $i"
	done
	for ((i = 1; i <= NUM_HOSTS; i++)); do
		echo "qdisc replace dev p$i root netem limit 10000 $1"
	done | tc -n "$SWITCH_NS" -b - || fail "netem on the switch ports"
}
netem_clear() {
	local i
	for ((i = 1; i <= NUM_HOSTS; i++)); do
		tc -n "$(host "$i")" qdisc del dev eth0 root 2>/dev/null
	done
	for ((i = 1; i <= NUM_HOSTS; i++)); do
		echo "qdisc del dev p$i root"
	done | tc -force -n "$SWITCH_NS" -b - 2>/dev/null
	return 0
}
# stat HOST NAME: a grim0 ethtool counter of host HOST.
stat() {
	local out k v
	out=$(nsx "$1" ethtool -S grim0)
	while read -r k v; do
		[ "$k" = "$2:" ] && { echo "$v"; return; }
	done <<<"$out"
	# A counter that is not there (renamed, or no grim0) must not read
	# as 0 in arithmetic, where a check of "no change" would pass: the
	# test ends here (stat runs in a subshell; $$ is the test).
	echo "FAIL: $TEST_NAME: host $1's grim0 has no counter $2" >&2
	kill -TERM $$
	echo missing
}
# stats HOST: every grim0 ethtool counter of HOST at one moment, into the
# associative array S (S[name]=value), from one ethtool started instead
# of one per counter.  Read them as ${S[name]?}: a counter that is not
# there ends the test, where ${S[name]-x} would count as 0 in arithmetic.
declare -A S=()
stats() {
	local out k v
	out=$(nsx "$1" ethtool -S grim0) || fail "ethtool -S grim0 on host $1"
	S=()
	while read -r k v; do
		[[ $k == *: ]] && S[${k%:}]=$v
	done <<<"$out"
}
# grim_streams HOST: "TX RX", the live streams of HOST's grim0 (grim tool).
# The tool's plain output, read with awk: the tests poll these, and a
# python3 start costs a second under TCG.
grim_streams() {
	nsx "$1" "$GRIM" link show dev grim0 |
		awk '$1 == "streams:" { print $3, $5 + 0; f = 1 } END { if (!f) print "missing" }'
}
# Group receivers (grim_group recv), one per host, their pids in
# RPID[HOST].  mc_recv DIR HOST ARGS... starts one in the background: it
# logs each group's messages to DIR/hHOST.GROUP, its output to
# DIR/rHOST.out and DIR/rHOST.err.  mc_joined DIR: until every one
# started has joined.  mc_stop DIR [WHY]: stop them all; fail if one
# found errors (WHY: what those might be).
declare -A RPID=()
mc_recv() {
	local d=$1 h=$2
	shift 2
	(nsrun "$h" "$GROUP_TOOL" recv "$@" -o "$d/h$h" -T $((600 * SLOW)) \
		>"$d/r$h.out" 2>"$d/r$h.err") &
	RPID[$h]=$!
	_PIDS+=($!)
}
mc_joined() {
	local i
	for i in "${!RPID[@]}"; do
		wait_prefix "$1/r$i.out" joined || { cat "$1/r$i.err"; fail "host $i did not join"; }
	done
}
mc_stop() {
	local i
	for i in "${!RPID[@]}"; do
		kill -TERM "${RPID[$i]}"
		wait "${RPID[$i]}" ||
			{ cat "$1/r$i.err"; fail "host $i's receiver found errors${2:+ ($2)}"; }
		unset "RPID[$i]"
	done
}
# gshow HOST GROUP: "ROOT STATE PARENT CHILDREN MEMBERS" of GROUP at HOST
# (grim group show), the lists comma-separated ("-" for none); "missing"
# if HOST's NI does not know GROUP.
gshow() {
	nsx "$1" "$GRIM" group show dev grim0 | awk -v g="$2" '
		$2 == "group" && $3 == g {
			for (i = 4; i <= NF; i++) {
				if ($i == "root") root = $(i + 1)
				if ($i == "in-tree" || $i == "out") st = $i
				if ($i == "parent") par = $(i + 1)
				if ($i == "children" || $i == "members") { k = $i; continue }
				if ($i == "local") k = ""
				if (k != "" && $i != "-") v[k] = v[k] (v[k] == "" ? "" : ",") $i
			}
			print root, st, par, (v["children"] == "" ? "-" : v["children"]),
			      (v["members"] == "" ? "-" : v["members"]); f = 1 }
		END { if (!f) print "missing" }'
}
# grim_peers HOST: "NODE STATE" for each entry of HOST's grim0 peer table.
grim_peers() {
	nsx "$1" "$GRIM" peer show dev grim0 | awk '$2 == "node" { print $3, $4 }'
}
# slab_kb: the unreclaimable slab (SUnreclaim), KiB, with every slab cache
# shrunk first: empty slabs go back to the page allocator, and a KASAN
# kernel's quarantine of freed objects (make check-debug) is drained, so
# that what is left is what is allocated.
slab_kb() {
	local f
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null
	done
	awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo
}
# peer_path HOST NODE: "CWND INFLIGHT SRTT_US INFLIGHT_MAX" of HOST's peer
# NODE (grim tool).
peer_path() {
	nsx "$1" "$GRIM" peer show dev grim0 | awk -v n="$2" '$2 == "node" && $3 == n {
		for (i = 4; i < NF; i++) v[$i] = $(i + 1) + 0
		print v["cwnd"], v["inflight"], v["srtt"], v["inflight-max"]; f = 1 }
		END { if (!f) print "missing" }'
}
# grim_stream_frames HOST: data, ACK and CLOSE frames HOST's grim0 sent.
grim_stream_frames() {
	echo $(($(stat "$1" tx_frames) + $(stat "$1" tx_acks) + $(stat "$1" tx_closes)))
}
# peers_up HOST: how many peers HOST's grim0 holds up, itself not counted.
peers_up() {
	grim_peers "$1" | awk -v me="$1" '$1 != me && $2 == "up" { u++ }
		END { print u + 0 }'
}
# wait_all_up N: until each of hosts 1..N holds the N - 1 others up (30 s
# each, SLOW times that, at most); fails if one does not.
wait_all_up() {
	local i t
	for ((i = 1; i <= $1; i++)); do
		for ((t = 0; t < 150 * SLOW; t++)); do
			[ "$(peers_up $i)" = $(($1 - 1)) ] && continue 2
			sleep 0.2
		done
		fail "host $i does not see every peer up"
	done
}
# wait_peer_up HOST NODE: wait until HOST can send to NODE (hello discovery).
# The probe goes to port 9, where nobody listens: NODE's NI answers with a
# REJECT, which comes back to the probe as its ECONNREFUSED report.
wait_peer_up() {
	local i
	for ((i = 0; i < 100; i++)); do
		nsx "$1" "$RDM" errq -d "$2" -p 9 -n 1 -M 0 -x 1 -w 3000 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "host $1 never reached node $2"
}
# wait_bound HOST PORT: wait until a receiver on HOST has bound PORT
# (messages to an unbound port are dropped, as datagrams to a closed one).
wait_bound() {
	local i
	for ((i = 0; i < 300; i++)); do
		nsx "$1" "$RDM" bound -p "$2" && return 0
		sleep 0.1
	done
	fail "nothing bound port $2 on host $1"
}
RDM=${RDM:-${_TESTDIR}/grim_rdm}
GROUP_TOOL=${GROUP_TOOL:-${_TESTDIR}/grim_group}

# ---- checked traffic in batches ------------------------------------------------
#
# rdm_batches DIR SRC DST PORT BATCH [grim_rdm send options...]: batches of
# BATCH messages from host SRC to port PORT of host DST, each checked
# (content, order, exactly once) by its own grim_rdm recv, until DIR/stop
# exists: traffic that outlasts whatever runs beside it, however slow the
# kernel.  Run it in the background.  Batch b sends with seed
# SRC * 1000 + b; its outputs are DIR/send.SRC.b and DIR/recv.SRC.b, its
# PIDs go to DIR/pids, and a line "b send-rc recv-rc" to DIR/batches.SRC.
rdm_batches() {
	local dir=$1 src=$2 dst=$3 port=$4 n=$5 b=0 rpid spid s r
	shift 5
	trap - EXIT
	while [ ! -e "$dir/stop" ]; do
		b=$((b + 1))
		nsx "$dst" "$RDM" recv -p "$port" -n "$n" -t 300 >"$dir/recv.$src.$b" 2>&1 &
		rpid=$!
		echo $rpid >>"$dir/pids"
		wait_prefix "$dir/recv.$src.$b" "recv: listening" 10
		nsx "$src" "$RDM" send -d "$dst" -p "$port" -n "$n" \
			-S $((src * 1000 + b)) "$@" >"$dir/send.$src.$b" 2>&1 &
		spid=$!
		echo $spid >>"$dir/pids"
		wait $spid
		s=$?
		wait $rpid
		r=$?
		echo "$b $s $r" >>"$dir/batches.$src"
		[ $s -eq 0 ] && [ $r -eq 0 ] || break
	done
}

# rdm_batches_ok DIR SRC: fails unless every batch from host SRC passed;
# prints how many there were.
rdm_batches_ok() {
	local dir=$1 src=$2 b s r n=0
	[ -s "$dir/batches.$src" ] || fail "no batch of traffic from host $src completed"
	while read -r b s r; do
		[ "$s" = 0 ] || fail "host $src, batch $b: grim_rdm send: $(cat "$dir/send.$src.$b")"
		[ "$r" = 0 ] || fail "host $src, batch $b: grim_rdm recv: $(cat "$dir/recv.$src.$b")"
		n=$b
	done <"$dir/batches.$src"
	echo "$n"
}
