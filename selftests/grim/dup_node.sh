#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (a kernel log line under the shared rate limit)
#
# Two links with the same node id on one segment.
#
# An NI checks that its node id is free before it says anything else: it
# sends tentative hellos, which nobody learns from, and an NI that holds
# the node id answers them.  The newcomer then loses its carrier and stays
# silent until its node id changes; the NI that held the node id and its
# peers notice nothing but a counter.  Two NIs that were both running
# (two segments joined) keep the node id for the one that ran longer.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_ip_grim


pretty "" "hosts 1 and 2 talk; host 3 comes up with node id 2"
setup_hosts 3
grim_cluster 2
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 100 -n 3000 -t 120
rpid=$!
wait_bound 2 100
out=$(mktemp)
at_exit "rm -f $out"
nsx 1 "$RDM" send -d 2 -p 100 -n 3000 -m 0 -M 3000 -S 5 >"$out" &
spid=$!
sleep 1
resets0=$(stat 1 peer_session_resets)
grim_add "$(host 3)" eth0 grim0 address "$(grim_addr 2)" || fail "grim0 on host 3"
ip -n "$(host 3)" link set grim0 up || fail "grim0 up on host 3"
wait_carrier 3 grim0 0
check_eq "$(carrier 3 grim0)" 0 "host 3's carrier (the newcomer yields)"
check_eq "$(carrier 2 grim0)" 1 "host 2's carrier"
[ "$(stat 3 rx_node_id_conflicts)" -ge 1 ] || fail "host 3 did not count the conflict"
[ "$(stat 2 rx_node_id_conflicts)" -ge 1 ] || fail "host 2 did not count the conflict"
dmesg | grep -q "node id 2 is in use by" || fail "no log line for the conflict"

pretty "" "host 1's traffic to node 2 went on, exactly once, in order"
wait $spid || fail "sender: $(cat "$out")"
wait $rpid || fail "the receiver on host 2 lost or misordered messages"
log "$(cat "$out")"
check_eq "$(($(stat 1 peer_session_resets) - resets0))" 0 "session resets on host 1"
# Host 3 is silent: nothing for node 2 ever went to it.
check_eq "$(stat 3 rx_msgs)" 0 "messages host 3 took for node 2"
nsx 3 "$RDM" send -d 1 -p 100 -n 1 -M 10 -R 0 >"$out" 2>&1 &&
	fail "host 3 could still send: $(cat "$out")"
log "host 3 sending: $(cat "$out")"

pretty "" "host 3 takes another node id: it comes up"
ip -n "$(host 3)" link set grim0 down
ip -n "$(host 3)" link set grim0 address "$(grim_addr 3)" || fail "node id 3"
ip -n "$(host 3)" link set grim0 up
check_eq "$(carrier 3 grim0)" 1 "host 3's carrier with node id 3"
wait_peer_up 1 3

pretty "" "two running NIs with one node id meet (a segment joined): the older keeps it"
# Host 3's link to the switch drops everything while it takes node id 1,
# so it has run for less time than host 1 when the link heals.
tc -n "$SWITCH_NS" qdisc add dev p3 root netem loss 100% || fail "netem p3"
tc -n "$(host 3)" qdisc add dev eth0 root netem loss 100% || fail "netem host 3"
ip -n "$(host 3)" link set grim0 down
ip -n "$(host 3)" link set grim0 address "$(grim_addr 1)"
ip -n "$(host 3)" link set grim0 up
sleep 1
check_eq "$(carrier 3 grim0)" 1 "host 3's carrier, cut off from the segment"
c3=$(stat 3 rx_node_id_conflicts)
tc -n "$SWITCH_NS" qdisc del dev p3 root
tc -n "$(host 3)" qdisc del dev eth0 root
wait_carrier 3 grim0 0
check_eq "$(carrier 3 grim0)" 0 "host 3's carrier (it ran for less time)"
check_eq "$(carrier 1 grim0)" 1 "host 1's carrier"
# Host 3 heard host 1 (host 1 hears host 3 only if host 3 spoke first).
[ "$(stat 3 rx_node_id_conflicts)" -gt "$c3" ] || fail "host 3 did not count the conflict"
# Host 2 may have taken host 3's hellos for node 1 restarting: it gets
# back to host 1 as to any peer that came back (dead_ms + hello_ms).
sleep 5
wait_peer_up 2 1
bg nsx 1 "$RDM" recv -p 101 -n 200 -t 60
r=$!
wait_bound 1 101
nsx 2 "$RDM" send -d 1 -p 101 -n 200 -M 2000 -S 8 -R 10 >"$out" ||
	fail "host 2 to node 1: $(cat "$out")"
wait $r || fail "host 1 lost messages after the conflict"

pretty "" "host 2 says hello every 10 ms; host 3 comes up with node id 2, ten times: host 2 counts each"
# A newcomer that heard the holder's hello before it had said a word
# yielded in silence, and the holder never knew; one that heard it while
# the link was coming up got its carrier back from the lower device.
ip -n "$(host 2)" link set grim0 type grim hello 10 || fail "hello 10 ms on host 2"
ip -n "$(host 3)" link set grim0 down
ip -n "$(host 3)" link set grim0 address "$(grim_addr 2)" || fail "node id 2 on host 3"
for ((i = 1; i <= 10; i++)); do
	c2=$(stat 2 rx_node_id_conflicts)
	ip -n "$(host 3)" link set grim0 up || fail "round $i: host 3's link up"
	wait_carrier 3 grim0 0 || fail "round $i: host 3 kept its carrier with node id 2"
	[ "$(stat 2 rx_node_id_conflicts)" -gt "$c2" ] ||
		fail "round $i: host 3 yielded, and host 2 did not count the conflict"
	ip -n "$(host 3)" link set grim0 down
done
ip -n "$(host 2)" link set grim0 type grim hello 1000 || fail "hello 1000 ms on host 2"
check_eq "$(carrier 2 grim0)" 1 "host 2's carrier"
check_dmesg
exit 0
