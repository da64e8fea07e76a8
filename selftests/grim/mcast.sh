#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups: multicast by NI recycling.  8 hosts, loss and reordering on
# every link.  Several groups with members drawn at random, several
# senders per group on different hosts, members or not: every member
# receives every message of its group once, and all members of a group
# in the same order (their logs are compared line by line).  The copies
# the NIs send match the trees exactly: the injecting NI sends each
# message once (to the root), and each NI of a tree at most two copies.
# Then joins and leaves during traffic: members that stay see every
# message, and one that joins and leaves again sees an unbroken run of
# them, in the same order.  Then a member node with children goes dark
# and its link is deleted during traffic: the root sends the NIs below
# it what they lack, and every member left gets every message once, in
# one order, with no ticket skipped.  Bad requests get their documented
# errors.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

N=8
COUNT=${GRIM_TEST_MCAST_COUNT:-300}


pretty "" "$N hosts on one bridge, a GRIM link each"
setup_hosts $N
grim_cluster $N
wait_all_up $N

pretty "" "bad requests"
out=$(nsx 1 "$GROUP_TOOL" bad) || { echo "$out"; fail "bad requests"; }
echo "$out" | sed 's/^/    /'
# Two: to group 7000 and to the sockets' broadcast group, with no member.
check_eq "$(stat 1 mc_no_members)" 2 "host 1 (the root): messages for groups nobody joined"

pretty "" "5% loss and reordering on every link, both ways"
netem_links "loss 5% delay 1ms reorder 25% 50%"

work=$(mktemp -d)
at_exit "rm -rf $work"

# Groups and members: drawn from a seed the log shows.
SEED=${GRIM_TEST_MCAST_SEED:-$((RANDOM % 1000 + 1))}
RANDOM=$SEED
log "seed $SEED (GRIM_TEST_MCAST_SEED)"
GROUPS_=(101 202 303)
SIZES=(5 3 6)
declare -A MEMBERS=() SENDERS=()
for k in 0 1 2; do
	g=${GROUPS_[k]}
	hosts=($(for ((i = 1; i <= N; i++)); do echo "$RANDOM $i"; done | sort -n | awk '{ print $2 }'))
	MEMBERS[$g]="${hosts[*]:0:${SIZES[k]}}"
	# two senders, on hosts drawn afresh: members or not
	hosts=($(for ((i = 1; i <= N; i++)); do echo "$RANDOM $i"; done | sort -n | awk '{ print $2 }'))
	SENDERS[$g]="${hosts[*]:0:2}"
	log "group $g: members ${MEMBERS[$g]}, senders ${SENDERS[$g]}"
done

# One receiver per host, in every group the host is a member of.
pretty "" "members join"
for ((i = 1; i <= N; i++)); do
	args=()
	for g in "${GROUPS_[@]}"; do
		[[ " ${MEMBERS[$g]} " == *" $i "* ]] && args+=(-g "$g")
	done
	[ ${#args[@]} -gt 0 ] || continue
	mc_recv "$work" $i "${args[@]}"
done
mc_joined "$work"

declare -A INJ0=() CP0=() RX0=() SK0=()
for ((i = 1; i <= N; i++)); do
	stats $i
	INJ0[$i]=${S[mc_injected]?}
	CP0[$i]=${S[mc_tx_copies]?}
	RX0[$i]=${S[mc_rx]?}
done

pretty "" "$COUNT messages of 1 to 3000 bytes from each sender"
spids=()
declare -A SENT=()
s=0
for g in "${GROUPS_[@]}"; do
	for i in ${SENDERS[$g]}; do
		s=$((s + 1))
		nsx $i "$GROUP_TOOL" send -g $g -n $COUNT -M 3000 -S $((SEED * 10 + s)) \
			>"$work/s$s.out" 2>&1 &
		spids+=($!)
		SENT[$i]=$((${SENT[$i]:-0} + COUNT))
	done
done
for p in "${spids[@]}"; do
	wait "$p" || { cat "$work"/s*.out; fail "a sender failed"; }
done

# Until every member has every message, a minute at most (checked below).
for g in "${GROUPS_[@]}"; do
	for i in ${MEMBERS[$g]}; do
		wait_lines "$work/h$i.$g" $((COUNT * 2))
	done
done
pretty "" "the trees, as grim group show has them (members still in)"
for g in "${GROUPS_[@]}"; do
	want=$(echo ${MEMBERS[$g]} | tr ' ' '\n' | sort -n | paste -sd,)
	read -r root st par kids members <<<"$(gshow 1 $g)"
	check_eq "$members" "$want" "group $g: the members the root lists"
	# the tree: the root, then the members but the root, ascending
	tree=(1 $(echo ${MEMBERS[$g]} | tr ' ' '\n' | sort -n | grep -vx 1))
	for ((j = 0; j < ${#tree[@]}; j++)); do
		h=${tree[j]}
		read -r root st par kids members <<<"$(gshow $h $g)"
		check_eq "$root" 1 "group $g: the root host $h sees"
		wk=$(for c in $((2 * j + 1)) $((2 * j + 2)); do
			[ $c -lt ${#tree[@]} ] && echo ${tree[c]}; done | paste -sd,)
		check_eq "$kids" "${wk:--}" "group $g: host $h's children"
		[ $j -eq 0 ] || check_eq "$par" "${tree[(j - 1) / 2]}" "group $g: host $h's parent"
		[ $h = 1 ] && [[ " ${MEMBERS[$g]} " != *" 1 "* ]] ||
			check_eq "$st" in-tree "group $g: host $h delivers"
	done
	log "group $g: tree ${tree[*]}, each NI with the parent and children of its place"
done

mc_stop "$work"

pretty "" "every member has every message once, all in the same order"
for g in "${GROUPS_[@]}"; do
	first=
	for i in ${MEMBERS[$g]}; do
		n=$(lines "$work/h$i.$g")
		check_eq "$n" $((COUNT * 2)) "group $g: messages at host $i"
		if [ -z "$first" ]; then
			first=$i
		elif ! cmp -s "$work/h$first.$g" "$work/h$i.$g"; then
			diff "$work/h$first.$g" "$work/h$i.$g" | head -n 5
			fail "group $g: hosts $first and $i saw different orders"
		fi
	done
	log "group $g: ${MEMBERS[$g]// /, } each had all $((COUNT * 2)) messages, in one order"
done

pretty "" "copies: once to the root, then the tree's edges"
# The root is node 1 (the smallest id).  A tree of M NIs (the root and
# the members) has M - 1 edges: each message crosses each once.
edges=0
for g in "${GROUPS_[@]}"; do
	m=$(echo ${MEMBERS[$g]} | wc -w)
	[[ " ${MEMBERS[$g]} " == *" 1 "* ]] || m=$((m + 1))
	edges=$((edges + COUNT * 2 * (m - 1)))
done
copies=0
for ((i = 1; i <= N; i++)); do
	stats $i
	inj=$((${S[mc_injected]?} - ${INJ0[$i]}))
	cp=$((${S[mc_tx_copies]?} - ${CP0[$i]}))
	rx=$((${S[mc_rx]?} - ${RX0[$i]}))
	check_eq "$inj" "${SENT[$i]:-0}" "host $i: messages its senders handed the NI"
	[ "$cp" -le $((2 * rx)) ] || fail "host $i sent $cp copies of $rx messages: more than two each"
	check_eq "${S[mc_skipped]?}" 0 "host $i: tickets skipped"
	check_eq "${S[mc_not_parent]?}" 0 "host $i: tree messages from an NI not its parent"
	copies=$((copies + cp))
	log "host $i: injected $inj, took $rx from the tree, sent $cp copies, refused ${S[mc_refused]?}"
done
check_eq "$copies" "$edges" "copies sent over the trees"

pretty "" "joins and leaves during traffic"
# Group 404: hosts 2 and 5 stay members throughout; host 7 joins after
# the traffic started and leaves before it ends; host 8 joins and stays.
G=404
for i in 2 5; do
	(nsrun $i "$GROUP_TOOL" recv -g $G -o "$work/c$i" -T $((600 * SLOW)) \
		>"$work/c$i.out" 2>"$work/c$i.err") &
	RPID[$i]=$!
	_PIDS+=($!)
done
for i in 2 5; do
	wait_prefix "$work/c$i.out" joined || { cat "$work/c$i.err"; fail "host $i did not join group $G"; }
done
C=$((COUNT * 2))
nsx 3 "$GROUP_TOOL" send -g $G -n $C -M 1500 -i 20000 -S 41 >"$work/cs3.out" 2>&1 &
s1=$!
nsx 6 "$GROUP_TOOL" send -g $G -n $C -M 1500 -i 20000 -S 42 >"$work/cs6.out" 2>&1 &
s2=$!
sleep 2
for i in 7 8; do
	(nsrun $i "$GROUP_TOOL" recv -g $G -o "$work/c$i" -T $((600 * SLOW)) \
		>"$work/c$i.out" 2>"$work/c$i.err") &
	RPID[$i]=$!
	_PIDS+=($!)
done
sleep 3
kill -TERM "${RPID[7]}"
wait "${RPID[7]}" || { cat "$work/c7.err"; fail "host 7's receiver found errors"; }
wait $s1 || { cat "$work/cs3.out"; fail "sender on host 3 failed"; }
wait $s2 || { cat "$work/cs6.out"; fail "sender on host 6 failed"; }
for i in 2 5 8; do
	# host 8 joined late: it has fewer, 10 s more at most after 2 and 5
	t=60
	[ $i = 8 ] && t=10
	wait_lines "$work/c$i.$G" $((2 * C)) $t
	kill -TERM "${RPID[$i]}"
	wait "${RPID[$i]}" || { cat "$work/c$i.err"; fail "host $i's receiver found errors"; }
done
for i in 2 5; do
	check_eq "$(lines "$work/c$i.$G")" $((2 * C)) "group $G: messages at host $i (a member throughout)"
done
cmp -s "$work/c2.$G" "$work/c5.$G" || fail "group $G: hosts 2 and 5 saw different orders"
# contiguous FILE: FILE's lines are one unbroken run of host 2's log.
contiguous() {
	local n first at
	n=$(lines "$1")
	[ "$n" -gt 0 ] || return 1
	first=$(head -n 1 "$1")
	at=$(grep -n -x -F "$first" "$work/c2.$G" | head -n 1 | cut -d: -f1)
	[ -n "$at" ] || return 1
	sed -n "${at},$((at + n - 1))p" "$work/c2.$G" | cmp -s - "$1"
}
for i in 7 8; do
	contiguous "$work/c$i.$G" ||
		fail "group $G: host $i's $(lines "$work/c$i.$G") messages are not an unbroken run of the group's order"
	log "host $i: $(lines "$work/c$i.$G") messages, an unbroken run of the group's order"
done
# host 8 joined before the senders were done and stayed: it has the end.
check_eq "$(tail -n 1 "$work/c8.$G")" "$(tail -n 1 "$work/c2.$G")" "group $G: host 8's last message"
stats 1
log "root: ${S[mc_tree_updates]?} tree updates, ${S[mc_ticketed]?} messages ticketed"

pretty "" "a member node removed during traffic"
# Group 505: every host but the root is a member; the tree is 1, then
# 2..8 as a heap, so host 2 is the parent of 4 and 5, and 4 of 8.  Host 2
# goes dark first (everything it sends is lost, so it holds what it took
# and forwards nothing), then its link is deleted.  The root keeps every
# message until each member has it, and sends hosts 4 and 5 again what
# they lack: every member left gets every message once, in one order.
G=505
declare -A DPID=()
for ((i = 2; i <= N; i++)); do
	(nsrun $i "$GROUP_TOOL" recv -g $G -o "$work/d$i" -T $((600 * SLOW)) \
		>"$work/d$i.out" 2>"$work/d$i.err") &
	DPID[$i]=$!
	_PIDS+=($!)
done
for ((i = 2; i <= N; i++)); do
	wait_prefix "$work/d$i.out" joined || { cat "$work/d$i.err"; fail "host $i did not join group $G"; }
done
for ((i = 1; i <= N; i++)); do
	stats $i
	SK0[$i]=${S[mc_skipped]?}
done
stats 1
REP0=${S[mc_repaired]?}
# The tracepoints of tree updates and repairs, from here on.
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
if [ -d $T/events ]; then
	[ -d $T/events/grim/grim_mc_tree ] || fail "no grim_mc_tree tracepoint"
	echo > $T/trace
	echo 1 > $T/events/grim/grim_mc_tree/enable
	echo 1 > $T/events/grim/grim_mc_repair/enable
	at_exit "echo 0 > $T/events/grim/grim_mc_tree/enable; echo 0 > $T/events/grim/grim_mc_repair/enable"
fi
nsx 3 "$GROUP_TOOL" send -g $G -n $COUNT -M 1500 -i 20000 -S 51 >"$work/ds3.out" 2>&1 &
s1=$!
nsx 6 "$GROUP_TOOL" send -g $G -n $COUNT -M 1500 -i 20000 -S 52 >"$work/ds6.out" 2>&1 &
s2=$!
sleep 2
tc -n "$(host 2)" qdisc replace dev eth0 root netem loss 100% || fail "host 2 dark"
sleep 1
ip -n "$(host 2)" link del grim0 || fail "delete host 2's link"
# No sender blocks for good: both end, a few dead_ms at most later.
for s in $s1 $s2; do
	for ((t = 0; t < 600 * SLOW; t++)); do
		kill -0 $s 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $s 2>/dev/null && fail "a sender to group $G still blocks"
done
wait $s1 || { cat "$work/ds3.out"; fail "sender on host 3 failed"; }
wait $s2 || { cat "$work/ds6.out"; fail "sender on host 6 failed"; }
for ((i = 3; i <= N; i++)); do
	wait_lines "$work/d$i.$G" $((2 * COUNT))
done
# The members leave once the root has the tree without host 2 (the
# trees after it, below, are those of their leaves).
for ((t = 0; t < 300 * SLOW; t++)); do
	[ "$(gshow 1 $G | cut -d' ' -f5)" = "3,4,5,6,7,8" ] && break
	sleep 0.1
done
check_eq "$(gshow 1 $G | cut -d' ' -f5)" "3,4,5,6,7,8" "group $G: the members at the root"
for ((i = 3; i <= N; i++)); do
	kill -TERM "${DPID[$i]}"
	wait "${DPID[$i]}" || { cat "$work/d$i.err"; fail "host $i's receiver found errors"; }
	check_eq "$(lines "$work/d$i.$G")" $((2 * COUNT)) "group $G: messages at host $i"
	cmp -s "$work/d3.$G" "$work/d$i.$G" || fail "group $G: hosts 3 and $i saw different orders"
done
kill -TERM "${DPID[2]}" 2>/dev/null
for ((i = 1; i <= N; i++)); do
	[ $i = 2 ] && continue
	stats $i
	check_eq "$((${S[mc_skipped]?} - ${SK0[$i]}))" 0 "host $i: tickets skipped"
	check_eq "${S[mc_not_parent]?}" 0 "host $i: tree messages from an NI not its parent"
done
stats 1
rep=$((${S[mc_repaired]?} - REP0))
[ "$rep" -gt 0 ] || fail "the root sent nothing again: hosts 4 and 5 lacked nothing?"
log "root: sent $rep messages again to the NIs below host 2; every member has all $((2 * COUNT))"
if [ -d $T/events ]; then
	# The tree without host 2: 1, 3, 4, 5, 6, 7, 8; host 4 is the root's
	# child now, with 7 and 8 below it.
	grep -E " grim_mc_tree: node=(1|4) group=$G " $T/trace | sed 's/^.*grim_mc_tree: /    /'
	line=$(grep " grim_mc_tree: node=4 group=$G " $T/trace | grep -m1 "flags=0x1 ")
	check_match "$line" "in_tree=1 parent=1 children=7,8" "host 4's tree without host 2 (tracepoint)"
	n=$(grep " grim_mc_repair: node=1 group=$G " $T/trace | grep -E -c "member=(4|5) .*count=[1-9]")
	[ "$n" -gt 0 ] || fail "no grim_mc_repair event sent hosts 4 or 5 anything"
	log "grim_mc_repair: $n repairs with messages to hosts 4 and 5"
else
	log "no tracefs: the tracepoints are not checked"
fi

check_dmesg
exit 0
