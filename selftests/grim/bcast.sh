#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Broadcast: the sockets' broadcast group (GRIM_GROUP_ALL) and the
# link's own (GRIM_GROUP_LINK), which IP's broadcasts and multicast take,
# over the tree of every node.  4 hosts.
#
# 1. Every NI is in the link's group as soon as the link is up (IP's
#    endpoint joins it): the root lists every node as a member.
# 2. Loss and reordering on every link.  Sockets on three hosts join the
#    sockets' broadcast group; sockets on two hosts (one of them not a
#    member) broadcast: every member gets every message once, all in one
#    order.  Meanwhile IP resolves its neighbours (ARP and neighbour
#    discovery go through the link's group); no socket is handed an IP
#    packet, and IP is handed none of the sockets' messages.
# 3. A socket that joins the sockets' broadcast group and does not read
#    stops it (a sender floods it until it blocks); IP's group goes on
#    regardless: unmodified UDP multicast over grim0 (standard socket
#    calls only), IPv4 and IPv6, under the same loss, reaches every
#    receiver, every datagram once and in order, and a neighbour
#    resolves again.
# 4. The same datagrams over the bare lower links lose some.
# 5. On a clean link, group messages forged on the other group kind's
#    ports (the link's group on the sockets' groups' ports, and the
#    reverse) are dropped and counted; the link's group still works.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

N=4
ALL=$((0xffffffff))
LINK=$((0xfffffffe))
COUNT=${GRIM_TEST_BCAST_COUNT:-300}
UDP_N=${GRIM_TEST_BCAST_UDP:-1000}
UDP=${_TESTDIR}/udp_seq
INJECT=${_TESTDIR}/grim_inject

work=$(mktemp -d)
at_exit "rm -rf $work"

pretty "" "$N hosts on one bridge, a GRIM link each"
setup_hosts $N
ip_ipv6_on
grim_cluster $N
wait_all_up $N
dmesg_mark

pretty "" "every NI is in the link's own group (IP's)"
for ((t = 0; t < 100 * SLOW; t++)); do
	read -r _ st _ _ m <<<"$(gshow 1 $LINK)"
	[ "$m" = "1,2,3,4" ] && break
	sleep 0.1
done
check_eq "$m" "1,2,3,4" "the link group's members at the root"
for ((i = 2; i <= N; i++)); do
	for ((t = 0; t < 100 * SLOW; t++)); do
		read -r _ st _ _ m <<<"$(gshow $i $LINK)"
		[ "$st" = in-tree ] && break
		sleep 0.1
	done
	check_eq "$st" in-tree "host $i's NI in the link group's tree"
done
check_eq "$(gshow 1 $ALL)" missing "the sockets' broadcast group before any socket joins it"

pretty "" "5% loss and reordering on every link, both ways"
netem_links "loss 5% delay 1ms reorder 25% 50%"

pretty "" "sockets on hosts 2, 3, 4 join the sockets' broadcast group; hosts 1 and 3 broadcast"
for i in 2 3 4; do
	mc_recv "$work" $i -g $ALL
done
mc_joined "$work"
stats 1
tick0=${S[mc_ticketed]?}
declare -A DROP0=()
for i in 2 3 4; do
	DROP0[$i]=$(nsx_sys $i cat /sys/class/net/grim0/statistics/rx_dropped)
done
nsx 1 "$GROUP_TOOL" send -g $ALL -n $COUNT -M 3000 -S 11 >"$work/s1.out" 2>&1 &
s1=$!
nsx 3 "$GROUP_TOOL" send -g $ALL -n $COUNT -M 3000 -S 12 >"$work/s3.out" 2>&1 &
s3=$!
# IP meanwhile: its neighbours resolve through the same tree.
ip_addrs $N
for i in 2 3 4; do
	check_ok nsx 1 ping -c 1 -W $((10 * SLOW)) -q 10.77.0.$i >/dev/null
	check_ok nsx 1 ping -6 -c 1 -W $((10 * SLOW)) -q fd77::$i >/dev/null
done
neigh=$(nsx 1 ip neigh show dev grim0)
for i in 2 3 4; do
	check_match "$neigh" "10\.77\.0\.$i lladdr $(grim_addr $i) " "host $i's IPv4 neighbour"
	check_match "$neigh" "fd77::$i lladdr $(grim_addr $i) " "host $i's IPv6 neighbour"
done
read -r _ st _ _ m <<<"$(gshow 1 $ALL)"
check_eq "$m" "2,3,4" "the sockets' broadcast group's members at the root"
wait $s1 || { cat "$work/s1.out"; fail "host 1's sender failed"; }
wait $s3 || { cat "$work/s3.out"; fail "host 3's sender failed"; }
for i in 2 3 4; do
	wait_lines "$work/h$i.$ALL" $((COUNT * 2))
done
mc_stop "$work" "an IP packet among them?"
for i in 2 3 4; do
	check_eq "$(lines "$work/h$i.$ALL")" $((COUNT * 2)) "broadcasts at host $i"
	[ $i = 2 ] && continue
	cmp -s "$work/h2.$ALL" "$work/h$i.$ALL" || {
		diff "$work/h2.$ALL" "$work/h$i.$ALL" | head -n 5
		fail "hosts 2 and $i saw different orders"
	}
done
# IP is not handed the sockets' broadcasts (it would drop them).
for i in 2 3 4; do
	check_eq "$(nsx_sys $i cat /sys/class/net/grim0/statistics/rx_dropped)" "${DROP0[$i]}" \
		"host $i: packets grim0 dropped while sockets broadcast"
done
stats 1
tick=$((S[mc_ticketed] - tick0))
log "the root stamped $tick messages: $((COUNT * 2)) of the sockets', $((tick - COUNT * 2)) of IP's (ARP, neighbour discovery)"
[ $tick -gt $((COUNT * 2)) ] || fail "IP's neighbour discovery did not go through the broadcast group"

pretty "" "host 4 joins the sockets' broadcast group and does not read; host 1 floods it"
(nsrun 4 "$GROUP_TOOL" recv -g $ALL -o "$work/stuck" -s 100000000 -T $((600 * SLOW)) \
	>"$work/stuck.out" 2>&1) &
_PIDS+=($!)
wait_prefix "$work/stuck.out" joined || fail "host 4 did not join"
ref0=$(stat 1 mc_refused)
nsx 1 "$GROUP_TOOL" send -g $ALL -n 1000000 -m 60000 -M 60000 -S 13 >"$work/flood.out" 2>&1 &
flood=$!
_PIDS+=($flood)
# Until the root refuses the flood: the group is stopped.
for ((t = 0; t < 300 * SLOW; t++)); do
	[ "$(stat 1 mc_refused)" -gt "$ref0" ] && break
	sleep 0.1
done
[ "$(stat 1 mc_refused)" -gt "$ref0" ] || fail "the flood never filled the sockets' groups' room"
log "the root refuses the flood: mc_refused $ref0 -> $(stat 1 mc_refused)"

pretty "" "meanwhile UDP multicast over grim0, IPv4 and IPv6: every datagram, in order, at every receiver"
udp_mc() {	# GROUP: UDP_N datagrams from host 1 to receivers on hosts 2..4
	local g=$1 i rp=() t0
	t0=$(stat 1 mc_ticketed)
	for i in 2 3 4; do
		nsx $i "$UDP" recv -p 5300 -n $UDP_N -t $((120 * SLOW)) -g "$g" -M grim0 \
			>"$work/u$i.$g.out" 2>&1 &
		rp+=($!)
		wait_prefix "$work/u$i.$g.out" listening || fail "host $i's UDP receiver"
	done
	check_ok nsx 1 "$UDP" send -a "$g" -p 5300 -n $UDP_N -s 1200 -M grim0
	for i in 2 3 4; do
		wait "${rp[i - 2]}" || { cat "$work/u$i.$g.out"; fail "host $i: multicast to $g lost, doubled or reordered"; }
		log "host $i: $(tail -n 1 "$work/u$i.$g.out")"
	done
	# Each datagram once through the root (IGMP or MLD reports too).
	t0=$(($(stat 1 mc_ticketed) - t0))
	[ $t0 -ge $UDP_N ] || fail "$g: the root stamped $t0 messages for $UDP_N datagrams"
	log "$g: the root stamped $t0 broadcasts"
}
udp_mc 239.1.2.3
udp_mc ff15::4242
nsx 1 ip neigh flush dev grim0
check_ok nsx 1 ping -c 1 -W $((10 * SLOW)) -q 10.77.0.4 >/dev/null
check_match "$(nsx 1 ip neigh show dev grim0)" "10\.77\.0\.4 lladdr $(grim_addr 4) " "host 4's IPv4 neighbour, resolved again"
kill -0 $flood 2>/dev/null || { cat "$work/flood.out"; fail "the flood's sender finished: the group was not stopped"; }
kill $flood

pretty "" "the same over the bare lower links loses datagrams"
for i in 1 2; do
	ip -n "$(host $i)" addr add 10.88.0.$i/24 dev eth0 || fail "eth0 address on host $i"
done
nsx 2 "$UDP" recv -p 5301 -n $UDP_N -t $((10 * SLOW)) -g 239.1.2.4 -M eth0 \
	>"$work/bare.out" 2>&1 &
rp=$!
wait_prefix "$work/bare.out" listening || fail "host 2's UDP receiver on eth0"
check_ok nsx 1 "$UDP" send -a 239.1.2.4 -p 5301 -n $UDP_N -s 1200 -M eth0
wait $rp && fail "multicast over the lossy bare link lost nothing: the faults did not apply"
log "host 2 over eth0: $(tail -n 1 "$work/bare.out")"

pretty "" "a clean link: group messages on the other group kind's ports are dropped and counted"
netem_clear
FORGED=40
# The forged frames copy the session of host 1's IPv4 to host 2.
nsx 1 ping -i 0.2 -c $((50 * SLOW)) -q 10.77.0.2 >/dev/null 2>&1 &
pingp=$!
_PIDS+=($pingp)
bad0=$(stat 2 rx_drop_bad_message)
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m mcport -k $FORGED -t $((10 * SLOW))) ||
	{ echo "$out"; fail "grim_inject -m mcport"; }
echo "$out" | sed 's/^/    /'
check_match "$out" "expect rx_drop_bad_message $FORGED" "frames sent"
for ((t = 0; t < 50 * SLOW; t++)); do
	[ $(($(stat 2 rx_drop_bad_message) - bad0)) -ge $FORGED ] && break
	sleep 0.1
done
check_eq $(($(stat 2 rx_drop_bad_message) - bad0)) $FORGED "host 2: group messages dropped for their ports"
kill $pingp 2>/dev/null
nsx 1 ip neigh flush dev grim0
check_ok nsx 1 ping -c 1 -W $((10 * SLOW)) -q 10.77.0.3 >/dev/null
read -r _ st _ _ m <<<"$(gshow 1 $LINK)"
check_eq "$m" "1,2,3,4" "the link group's members at the root, after"
check_dmesg
exit 0
