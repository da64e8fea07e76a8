#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups on a link with a cluster key, and an attacker on the segment.
#
# Hosts 1 to 4 share a key; hosts 2, 3 and 4 are members of group 77,
# whose tree is 1 (the root), then 2 and 3, and 4 below 2.  Host 5 sees
# every frame (the bridge floods, as a hub would): it records the group's
# traffic to host 4 (tree messages from its parent) and to host 1
# (messages to the root), then, while two members send to the group,
# floods hosts 4, 1 and 2 in turn with group messages forged from what it saw
# (grim_inject -m mcforge): DATA with the next tickets, TREE updates,
# SKIPs far ahead, and joins, leaves, reports, repair requests and relays
# to the root, with the real node ids, streams, group, root and term.
#
# Every forged frame is dropped and counted before it reaches the
# groups: no session reset, no peer down; the group's order is unharmed
# (every member has every message once, all in one order, no ticket
# skipped, nothing taken from an NI that is not the parent).

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool od
require_grim
require_grim_tool
require_ip_grim

INJECT=$(dirname "$0")/grim_inject
FLOOD=$((6000 / SLOW))
BATCH=50
G=77

key=$(mktemp) work=$(mktemp -d)
at_exit "rm -rf $key $work"
od -An -tx1 -N32 /dev/urandom >"$key"


pretty "" "hosts 1 to 4 with a cluster key; host 5, the attacker, sees all frames"
setup_hosts 5
ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 0 || fail "hub mode"
for i in 1 2 3 4; do
	grim_add "$(host $i)" eth0 grim0 address "$(grim_addr $i)" ||
		fail "grim0 on host $i"
	nsx $i "$GRIM" key add dev grim0 id 1 secret-file "$key" || fail "key"
	ip -n "$(host $i)" link set grim0 up || fail "grim0 up on host $i"
done
for i in 1 2 3 4; do
	for j in 1 2 3 4; do
		[ $i = $j ] || wait_peer_up $i $j
	done
done

pretty "" "hosts 2, 3 and 4 join group $G"
for i in 2 3 4; do
	mc_recv "$work" $i -g $G
done
mc_joined "$work"

pretty "" "the attacker records the group's traffic to hosts 4, 1 and 2"
for i in 4 1 2; do
	nsx 5 "$INJECT" -i eth0 -d "$(host_mac $i)" -m capture -k 200 -f "$work/cap$i" -t 60 \
		>"$work/cap$i.out" 2>&1 &
	cpid[$i]=$!
done
sleep 0.5
nsx 3 "$GROUP_TOOL" send -g $G -n 200 -M 1500 -i 5000 -S 70 >"$work/s0.out" 2>&1 ||
	{ cat "$work/s0.out"; fail "the first messages"; }
for i in 4 1 2; do
	wait ${cpid[$i]} || { cat "$work/cap$i.out"; fail "capture of the traffic to host $i"; }
done
SENT=200

declare -A B=()
snap() {	# snap TAG: the counters of hosts 1 to 4
	local i c
	for i in 1 2 3 4; do
		stats $i
		for c in peer_session_resets peer_down_events tx_msgs_failed \
			 rx_drop_auth rx_drop_replay rx_drop_unproven rx_drop_not_for_us \
			 mc_skipped mc_not_parent mc_dups mc_delivered mc_ticketed mc_repaired; do
			B[$1.$i.$c]=${S[$c]?}
		done
	done
}
snap before

# sendloop HOST SEED: batches of $BATCH messages to the group from HOST
# until $work/stop exists (one at least); then the number of batches in
# $work/bHOST.
sendloop() {
	local h=$1 b=0
	while [ $b = 0 ] || [ ! -e "$work/stop" ]; do
		nsx "$h" "$GROUP_TOOL" send -g $G -n $BATCH -M 1500 -i 10000 -S $(($2 * 1000 + b)) \
			>"$work/s$h.out" 2>&1 || { cat "$work/s$h.out"; return 1; }
		b=$((b + 1))
	done
	echo $b >"$work/b$h"
}

pretty "" "two members send to the group; $FLOOD forged group frames to each of hosts 4, 1 and 2"
sendloop 3 71 &
s1=$!
sendloop 2 72 &
s2=$!
sleep 0.5
# tx_dropped NS DEV: frames DEV (a veth) could not hand its peer, whose
# backlog was full.
tx_dropped() {
	ip -n "$1" -s link show dev "$2" | awk '/TX:/ { getline; print $4; exit }'
}
# One host after the other, so that what a flood loses before the NI is
# that flood's: LOST[host], what the hub's port to the host dropped for a
# full backlog.  (What the attacker's own veth drops, its send fails, and
# grim_inject sends again.)
declare -A LOST=()
for i in 4 1 2; do
	l0=$(tx_dropped "$SWITCH_NS" "p$i")
	nsx 5 "$INJECT" -i eth0 -d "$(host_mac $i)" -m mcforge -k $FLOOD -f "$work/cap$i" -S $i \
		>"$work/f$i.out" 2>&1 || { cat "$work/f$i.out"; fail "forged frames to host $i"; }
	l1=$(tx_dropped "$SWITCH_NS" "p$i")
	LOST[$i]=$((l1 - l0))
	log "to host $i: $(cat "$work/f$i.out"); ${LOST[$i]} dropped at the hub's port"
done
kill -0 $s1 2>/dev/null && kill -0 $s2 2>/dev/null ||
	fail "the group's traffic ended before the forged frames did"
touch "$work/stop"
wait $s1 || fail "sender on host 3"
wait $s2 || fail "sender on host 2"
N3=$(cat "$work/b3") N2=$(cat "$work/b2")
SENT=$((SENT + (N3 + N2) * BATCH))
log "hosts 3 and 2 sent $N3 and $N2 batches of $BATCH messages"

pretty "" "every member has every message once, in one order"
for i in 2 3 4; do
	wait_lines "$work/h$i.$G" $SENT
	kill -TERM "${RPID[$i]}"
	wait "${RPID[$i]}" || { cat "$work/r$i.err"; fail "host $i's receiver found errors"; }
	check_eq "$(lines "$work/h$i.$G")" $SENT "group $G: messages at host $i"
	cmp -s "$work/h2.$G" "$work/h$i.$G" || fail "group $G: hosts 2 and $i saw different orders"
done
sleep 1
snap after

pretty "" "every forged frame dropped and counted; the groups untouched"
for i in 1 2 3 4; do
	for c in peer_session_resets peer_down_events tx_msgs_failed mc_skipped \
		 mc_not_parent mc_dups mc_repaired; do
		check_eq "${B[after.$i.$c]}" "${B[before.$i.$c]}" "host $i: $c"
	done
done
for i in 2 3 4; do
	check_eq "$((B[after.$i.mc_delivered] - B[before.$i.mc_delivered]))" $(((N3 + N2) * BATCH)) \
		"host $i: messages delivered to the member socket"
done
check_eq "$((B[after.1.mc_ticketed] - B[before.1.mc_ticketed]))" $(((N3 + N2) * BATCH)) \
	"host 1 (the root): messages ticketed"
for i in 4 1 2; do
	d=0 why=
	for c in rx_drop_auth rx_drop_replay rx_drop_unproven rx_drop_not_for_us; do
		d=$((d + B[after.$i.$c] - B[before.$i.$c]))
		why+=" $c +$((B[after.$i.$c] - B[before.$i.$c]))"
	done
	log "host $i: $d frames dropped:$why"
	[ $d -ge $(((FLOOD - LOST[$i]) * 9 / 10)) ] ||
		fail "host $i counted $d dropped frames of the $FLOOD forged ones sent to it (${LOST[$i]} lost on the way)"
done
check_dmesg
exit 0
