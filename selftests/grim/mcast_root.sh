#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups when their root goes down.  5 hosts; hosts 2 and 3 are members
# of group 606, whose root is host 1 (the smallest node id), and hosts 4
# and 5 send to it.  Host 2's receiver stops reading (host 2 is a leaf of
# the tree), so its NI holds messages of host 1's when host 1 goes dark
# and its link is deleted.  Host 2 becomes the root of
# the link's groups; its receiver goes, every member joins the new root
# again, and the group goes on under it.
#
# Messages the old root had not passed to every member may be lost
# (grim.rst says so); those sent once the new root has the group must
# all arrive, once, in one order, even past what the root's log holds
# (a new root that kept the old root's messages in its log, in front of
# its own, never emptied it and stopped every sender once it was full).

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

N=5
G=606
COUNT=700	# per sender after the change: past the log's 4 MB

work=$(mktemp -d)
at_exit "rm -rf $work"
trace_on_fail

# root HOST: the root of group $G as HOST sees it, and whether it is in
# the tree ("2 in-tree").
root() {
	nsx "$1" "$GRIM" group show dev grim0 | awk -v g=$G '
		$2 == "group" && $3 == g {
			for (i = 4; i <= NF; i++) {
				if ($i == "root") r = $(i + 1)
				if ($i == "in-tree" || $i == "out") s = $i
			}
			print r, s; f = 1 }
		END { if (!f) print "missing" }'
}
# members PREFIX HOST...: start a receiver of group $G on each HOST,
# logging to PREFIX.HOST; wait until each has joined.  Extra receiver
# options in RECV_OPTS_<HOST>.
declare -A RPID=()
members() {
	local p=$1 i o
	shift
	for i; do
		o=RECV_OPTS_$i
		# shellcheck disable=SC2086 # the options are words
		(nsrun "$i" "$GROUP_TOOL" recv -g $G -o "$p.$i" -T $((600 * SLOW)) ${!o:-} \
			>"$p.$i.out" 2>"$p.$i.err") &
		RPID[$p.$i]=$!
		_PIDS+=($!)
	done
	for i; do
		wait_prefix "$p.$i.out" joined || { cat "$p.$i.err"; fail "host $i did not join"; }
	done
}

pretty "" "$N hosts on one bridge, a GRIM link each"
setup_hosts $N
grim_cluster $N
wait_all_up $N

pretty "" "hosts 2 and 3 join group $G; hosts 4 and 5 send 500 each, then host 2 stops reading and they send 100 more each"
RECV_OPTS_2="-r 16384"
members "$work/a" 2 3
check_eq "$(root 3)" "1 in-tree" "host 3: the root of group $G"
# sendpart N SEED MAX: hosts 4 and 5 send N messages each (up to MAX bytes).
sendpart() {
	nsx 4 "$GROUP_TOOL" send -g $G -n "$1" -M "$3" -S "$2" >"$work/sa4.out" 2>&1 &
	s1=$!
	nsx 5 "$GROUP_TOOL" send -g $G -n "$1" -M "$3" -S $(($2 + 1)) >"$work/sa5.out" 2>&1 &
	s2=$!
	wait $s1 || { cat "$work/sa4.out"; fail "sender on host 4"; }
	wait $s2 || { cat "$work/sa5.out"; fail "sender on host 5"; }
}
# waitlines HOST N: until HOST's receiver has N messages.
waitlines() {
	wait_lines "$work/a.$1.$G" "$2"
	check_eq "$(lines "$work/a.$1.$G")" "$2" "group $G: messages at host $1"
}
# Far along the old root's tickets, so that they are ahead of the new
# root's for a while.
sendpart 500 61 200
waitlines 2 1000
waitlines 3 1000
kill -STOP "${RPID[$work/a.2]}"
sendpart 100 63 1500
waitlines 3 1200
stats 2
log "host 2: ${S[mc_rx]?} messages taken from the tree, ${S[mc_delivered]?} delivered to its socket"

pretty "" "host 1, the root, goes dark, then its link is deleted"
# Host 2 declares a peer down twice as late as host 3 does: host 3 joins
# host 2 while host 2 still takes host 1 for the root and drops the join
# as stale, and host 3 is still in host 1's tree meanwhile.  Its NI must
# join again, until the new root's tree has it (CI lost this race).
check_ok ip -n "$(host 2)" link set grim0 type grim dead 8000
tc -n "$(host 1)" qdisc replace dev eth0 root netem loss 100% || fail "host 1 dark"
sleep 0.5
ip -n "$(host 1)" link del grim0 || fail "delete host 1's link"

pretty "" "host 2 is the new root"
# Host 2 takes itself for the root (its NI still holds host 1's
# messages, for a socket that does not read); the receiver goes.
for ((t = 0; t < 300 * SLOW; t++)); do
	[ "$(root 2 | cut -d' ' -f1)" = 2 ] && break
	sleep 0.1
done
check_eq "$(root 2 | cut -d' ' -f1)" 2 "host 2: the root of group $G"
kill -KILL "${RPID[$work/a.2]}"
wait "${RPID[$work/a.2]}" 2>/dev/null
for i in 2 3; do
	for ((t = 0; t < 300 * SLOW; t++)); do
		[ "$(root $i)" = "2 in-tree" ] && break
		sleep 0.1
	done
	check_eq "$(root $i)" "2 in-tree" "host $i: the root of group $G"
done
# The other member of the first part leaves.
for i in 3; do
	kill -TERM "${RPID[$work/a.$i]}"
	wait "${RPID[$work/a.$i]}" || { cat "$work/a.$i.err"; fail "host $i's first receiver found errors"; }
done

pretty "" "under the new root: hosts 4 and 5 send $COUNT messages each"
members "$work/b" 2 3 4 5
declare -A SK0=()
for i in 2 3 4 5; do
	stats $i
	SK0[$i]=${S[mc_skipped]?}
done
nsx 4 "$GROUP_TOOL" send -g $G -n $COUNT -M 1500 -m 1000 -S 63 >"$work/sb4.out" 2>&1 &
s1=$!
nsx 5 "$GROUP_TOOL" send -g $G -n $COUNT -M 1500 -m 1000 -S 64 >"$work/sb5.out" 2>&1 &
s2=$!
for s in $s1 $s2; do
	for ((t = 0; t < 1200 * SLOW; t++)); do
		kill -0 $s 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $s 2>/dev/null && fail "a sender to group $G blocks under the new root"
done
wait $s1 || { cat "$work/sb4.out"; fail "sender on host 4"; }
wait $s2 || { cat "$work/sb5.out"; fail "sender on host 5"; }
for i in 2 3 4 5; do
	wait_lines "$work/b.$i.$G" $((2 * COUNT))
	kill -TERM "${RPID[$work/b.$i]}"
	wait "${RPID[$work/b.$i]}" || { cat "$work/b.$i.err"; fail "host $i's receiver found errors"; }
	check_eq "$(lines "$work/b.$i.$G")" $((2 * COUNT)) "group $G: messages at host $i under the new root"
	cmp -s "$work/b.2.$G" "$work/b.$i.$G" || fail "group $G: hosts 2 and $i saw different orders"
	stats $i
	check_eq "$((${S[mc_skipped]?} - ${SK0[$i]}))" 0 "host $i: tickets skipped under the new root"
done
stats 2
log "host 2 (the new root): ${S[mc_ticketed]?} messages ticketed, ${S[mc_refused]?} refused"
check_dmesg
exit 0
