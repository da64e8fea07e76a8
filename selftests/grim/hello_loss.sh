#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (time bounds of a few hundred ms)
#
# Liveness that does not rest on broadcasts.  A switch's broadcast storm
# control drops broadcast frames alone; an NI that heard of a peer only
# through its hellos declared it down after dead_ms of them, while every
# unicast frame got through, and failed its messages with EHOSTUNREACH.
#
# Two hosts drop every broadcast GRIM frame they receive (tc u32 on the
# destination MAC) for three times dead_ms.  Each must keep the
# other up by unicast probes (tx_peer_probes), and a message each way
# must then arrive at once.  Then host 2 drops every GRIM frame from the
# wire: host 1's NI is alive and answers probes, but nothing reaches
# host 2, which must declare it down on time, neither early nor late.
# Then host 2 says hello four times more rarely than host 1: host 1
# must not take each of its hellos for a missed one and probe it.  Last,
# host 2's hellos (every 2000 ms) are all lost at host 1 (dead 4000 ms):
# host 1's probes must come early enough to keep it up.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc
require_grim
require_ip_grim
require_grim_tool
require_mod cls_u32

HELLO_MS=250
DEAD_MS=1000
SILENT_S=3	# three times dead_ms with every hello lost

# down_ms HOST D0: ms until HOST's peer_down_events passes D0 (or -1
# after 10 s, SLOW times more).  The counter, not the peer table: a down
# entry is forgotten after twice dead_ms, and on a debug kernel a poll of
# the table can take longer than that and miss it.
down_ms() {
	local t0 t end
	t0=$(date +%s%N)
	end=$((t0 + 10000000000 * SLOW))
	for ((t = t0; t < end; t = $(date +%s%N))); do
		[ "$(stat "$1" peer_down_events)" -gt "$2" ] && {
			echo $((($(date +%s%N) - t0) / 1000000))
			return
		}
		sleep 0.05
	done
	echo -1
}

# dropped HOST: frames HOST's ingress filters dropped.
dropped() {
	tc -s -n "$(host "$1")" filter show dev eth0 ingress |
		awk '/Sent [0-9]+ bytes [0-9]+ pkt/ { n += $4 } END { print n + 0 }'
}

pretty "" "2 hosts, hello $HELLO_MS ms, dead $DEAD_MS ms"
setup_hosts 2
grim_cluster 2
for i in 1 2; do
	ip -n "$(host $i)" link set grim0 type grim hello $HELLO_MS dead $DEAD_MS ||
		fail "hello and dead on host $i"
done
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 100 -n 1 -t $((60 * SLOW))
r2=$!
bg nsx 1 "$RDM" recv -p 100 -n 1 -t $((60 * SLOW))
r1=$!
wait_bound 2 100
wait_bound 1 100

pretty "" "both hosts drop every broadcast GRIM frame for $SILENT_S s"
for i in 1 2; do
	tc -n "$(host $i)" qdisc add dev eth0 clsact || fail "clsact on host $i"
	# The destination MAC, before the network header: ff:ff:ff:ff:ff:ff.
	tc -n "$(host $i)" filter add dev eth0 ingress protocol 0x88b5 u32 \
		match u16 0xffff 0xffff at -14 \
		match u32 0xffffffff 0xffffffff at -12 action drop || fail "u32 on host $i"
done
d1=$(stat 1 peer_down_events) d2=$(stat 2 peer_down_events)
p1=$(stat 1 tx_peer_probes) p2=$(stat 2 tx_peer_probes)
f1=$(stat 1 tx_msgs_failed) f2=$(stat 2 tx_msgs_failed)
sleep $SILENT_S
dropped=$(dropped 1)
log "host 1 dropped $dropped broadcasts and sent $(($(stat 1 tx_peer_probes) - p1)) probes; host 2 sent $(($(stat 2 tx_peer_probes) - p2))"
# The peer's hellos, 4 a second, met the filter.
[ "$dropped" -ge $((SILENT_S * 1000 / HELLO_MS - 2)) ] ||
	fail "host 1's filter dropped $dropped frames: the hellos did not meet it"
check_eq "$(stat 1 peer_down_events)" "$d1" "peer-down events on host 1"
check_eq "$(stat 2 peer_down_events)" "$d2" "peer-down events on host 2"
grim_peers 1 | grep -qx "2 up" || fail "host 1 does not hold node 2 up"
grim_peers 2 | grep -qx "1 up" || fail "host 2 does not hold node 1 up"
# One side's probes keep both up (the answer proves it alive, the probe
# the prober), so only their sum is known: at least one a second.
probes=$(($(stat 1 tx_peer_probes) - p1 + $(stat 2 tx_peer_probes) - p2))
[ $probes -ge $SILENT_S ] || fail "$probes probes in $SILENT_S s"

pretty "" "a message each way, broadcasts still dropped"
nsx 1 "$RDM" send -d 2 -p 100 -n 1 -M 3000 || fail "send 1 -> 2"
nsx 2 "$RDM" send -d 1 -p 100 -n 1 -M 3000 || fail "send 2 -> 1"
wait $r2 || fail "host 2 did not receive"
wait $r1 || fail "host 1 did not receive"
check_eq "$(stat 1 tx_msgs_failed)" "$f1" "messages failed on host 1"
check_eq "$(stat 2 tx_msgs_failed)" "$f2" "messages failed on host 2"

pretty "" "host 2 drops every GRIM frame: node 1 is down after dead_ms"
# Broadcasts pass again first, so that host 2 has just heard from node 1
# (a hello every 250 ms) when its frames stop.
for i in 1 2; do
	tc -n "$(host $i)" filter del dev eth0 ingress || fail "filter del on host $i"
done
sleep 1
d2=$(stat 2 peer_down_events)
tc -n "$(host 2)" filter add dev eth0 ingress protocol 0x88b5 u32 \
	match u32 0 0 at 0 action drop || fail "u32 (all) on host 2"
ms=$(down_ms 2 "$d2")
log "host 2 declared node 1 down $ms ms after its frames stopped (dead $DEAD_MS ms, hello $HELLO_MS ms)"
[ "$ms" -ge 0 ] || fail "host 2 never declared node 1 down"
# The counter and the peer table agree: node 1 is down (or already
# forgotten), not up.
grim_peers 2 | grep -qx "1 up" && fail "host 2 counted node 1 down, yet holds it up"
# Down no sooner than dead_ms after the last hello heard, which came at
# most a hello interval before the filter; the clock starts once tc has
# returned, up to another interval later under TCG.  At most a hello
# tick late, with slack for a loaded emulated CPU (and for the polling,
# SLOW times slower on a debug kernel).
[ "$ms" -ge $((DEAD_MS - 2 * HELLO_MS)) ] || fail "down after $ms ms: too early"
[ "$ms" -le $((DEAD_MS + HELLO_MS + 2000 * SLOW)) ] || fail "down after $ms ms: too late"

for i in 1 2; do
	tc -n "$(host $i)" qdisc del dev eth0 clsact || fail "clsact del on host $i"
done

pretty "" "host 2 says hello every 1000 ms: host 1 (250 ms) does not probe it between hellos"
# A probe is for a peer that missed a hello; one that says hello less
# often than we do has missed none until 1.5 of its own intervals.
ip -n "$(host 1)" link set grim0 type grim dead 3000 || fail "dead on host 1"
ip -n "$(host 2)" link set grim0 type grim hello 1000 dead 3000 || fail "hello on host 2"
wait_peer_up 1 2
wait_peer_up 2 1
sleep 1.5	# a hello with the new interval has reached host 1
p1=$(stat 1 tx_peer_probes) d1=$(stat 1 peer_down_events)
sleep 4
probes=$(($(stat 1 tx_peer_probes) - p1))
log "host 1 sent $probes probes to host 2 in 4 s"
# Each 1000 ms hello is late to a 250 ms NI; probing it then would cost
# a probe and an answer every 500 ms.  One probe is the slack for a
# hello timer that TCG delays by half an interval.
[ "$probes" -le 1 ] || fail "host 1 sent $probes probes in 4 s to a peer that missed no hello"
check_eq "$(stat 1 peer_down_events)" "$d1" "peer-down events on host 1"
grim_peers 1 | grep -qx "2 up" || fail "host 1 does not hold node 2 up"

pretty "" "host 2 says hello every 2000 ms, and host 1 (1000 ms, dead 4000 ms) gets none: probes keep it up"
# A peer that says hello rarely is still probed in time: 1.5 times its
# interval would be 3000 ms, and host 1's tick after that is the one
# that gives it up; the wait counts only up to dead_ms less two ticks.
ip -n "$(host 1)" link set grim0 type grim hello 1000 dead 4000 || fail "hello on host 1"
ip -n "$(host 2)" link set grim0 type grim hello 2000 dead 8000 || fail "hello on host 2"
sleep 2.5	# a hello with the new interval has reached host 1
tc -n "$(host 1)" qdisc add dev eth0 clsact || fail "clsact on host 1"
tc -n "$(host 1)" filter add dev eth0 ingress protocol 0x88b5 u32 \
	match u16 0xffff 0xffff at -14 \
	match u32 0xffffffff 0xffffffff at -12 action drop || fail "u32 on host 1"
stats 1; d1=${S[peer_down_events]?} p1=${S[tx_peer_probes]?}
sleep 10
stats 1
log "host 1 sent $((S[tx_peer_probes] - p1)) probes in 10 s, dropped $(dropped 1) broadcasts"
check_eq "${S[peer_down_events]?}" "$d1" "peer-down events on host 1"
grim_peers 1 | grep -qx "2 up" || fail "host 1 does not hold node 2 up"
[ $((S[tx_peer_probes] - p1)) -ge 2 ] || fail "host 1 did not probe node 2 every few seconds"
tc -n "$(host 1)" qdisc del dev eth0 clsact || fail "clsact del on host 1"
check_dmesg
exit 0
