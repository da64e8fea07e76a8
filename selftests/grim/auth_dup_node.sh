#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two links with the same node id on a segment whose links have a key.
#
# With a key a hello that claims an NI's node id counts only when it
# echoes that NI's run id, which an NI that holds the node id does when
# it answers: the newcomer's tentative hellos are answered so, and the
# newcomer yields (as without a key, dup_node.sh), while the NI that
# holds the node id and its peers notice nothing.  Then the NI that holds
# it restarts while an attacker replays hellos of its last run to it,
# its own among them: it takes none of them for a conflict, and comes up.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool od
require_grim
require_grim_tool

INJECT=$(dirname "$0")/grim_inject
key=$(mktemp) cap=$(mktemp) rh=$(mktemp)
at_exit "rm -f $key $cap $rh"
od -An -tx1 -N32 /dev/urandom >"$key"
# keyed_link HOST NODE
keyed_link() {
	grim_add "$(host "$1")" eth0 grim0 address "$(grim_addr "$2")" ||
		fail "grim0 on host $1"
	nsx "$1" "$GRIM" key add dev grim0 id 1 secret-file "$key" ||
		fail "key on host $1"
	ip -n "$(host "$1")" link set grim0 up || fail "grim0 up on host $1"
}

pretty "" "hosts 1 and 2 talk under a key; host 3 comes up with node id 2 and the key"
setup_hosts 3
# The attacker of the last step sees every frame, as on a hub.
ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 0 || fail "hub mode"
keyed_link 1 1
keyed_link 2 2
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 100 -n 2000 -t 120
rpid=$!
wait_bound 2 100
out=$(mktemp)
at_exit "rm -f $out"
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m capture -k 1500 -f "$cap" -t 60 &
cpid=$!
sleep 0.5
nsx 1 "$RDM" send -d 2 -p 100 -n 2000 -m 0 -M 3000 -S 5 -i 1000 >"$out" &
spid=$!
wait $cpid || fail "capture of host 2's frames"
resets0=$(stat 1 peer_session_resets)
keyed_link 3 2
wait_carrier 3 grim0 0
check_eq "$(carrier 3 grim0)" 0 "host 3's carrier (the newcomer yields)"
check_eq "$(carrier 2 grim0)" 1 "host 2's carrier"
[ "$(stat 3 rx_node_id_conflicts)" -ge 1 ] || fail "host 3 did not count the conflict"
[ "$(stat 2 tx_auth_challenges)" -ge 1 ] ||
	fail "host 2 did not answer the newcomer's hello with its run id"
log "host 2: rx_drop_unproven $(stat 2 rx_drop_unproven), tx_auth_challenges $(stat 2 tx_auth_challenges)"

pretty "" "host 1's traffic to node 2 went on, exactly once, in order"
wait $spid || fail "sender: $(cat "$out")"
wait $rpid || fail "the receiver on host 2 lost or misordered messages"
check_eq "$(($(stat 1 peer_session_resets) - resets0))" 0 "session resets on host 1"
check_eq "$(stat 3 rx_msgs)" 0 "messages host 3 took for node 2"

pretty "" "host 3 takes another node id: it comes up"
ip -n "$(host 3)" link set grim0 down
ip -n "$(host 3)" link set grim0 address "$(grim_addr 3)" || fail "node id 3"
ip -n "$(host 3)" link set grim0 up
check_eq "$(carrier 3 grim0)" 1 "host 3's carrier with node id 3"
wait_peer_up 1 3

pretty "" "host 2 restarts while its hellos of the last run are replayed to it"
conf0=$(stat 2 rx_node_id_conflicts)
rx0=$(nsx_sys 2 cat /sys/class/net/eth0/statistics/rx_packets)
ip -n "$(host 2)" link set grim0 down
# 200 hellos, one every 5 ms: before, through and after the tentative
# hellos of host 2's new run.
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m rehello -k 200 -w 5 -f "$cap" >"$rh" 2>&1 &
ipid=$!
sleep 0.2
ip -n "$(host 2)" link set grim0 up
wait $ipid || fail "replay of hellos: $(cat "$rh")"
log "$(cat "$rh")"
grep -q "[1-9][0-9]* of them the target's own" "$rh" ||
	fail "no hello of host 2's own among those replayed"
[ $(($(nsx_sys 2 cat /sys/class/net/eth0/statistics/rx_packets) - rx0)) -ge 200 ] ||
	fail "host 2 did not receive the replayed hellos"
check_eq "$(carrier 2 grim0)" 1 "host 2's carrier"
check_eq "$(($(stat 2 rx_node_id_conflicts) - conf0))" 0 "conflicts host 2 counted"
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 100 -n 200 -t 60
rpid=$!
wait_bound 2 100
nsx 1 "$RDM" send -d 2 -p 100 -n 200 -m 0 -M 3000 -S 6 >"$out" ||
	fail "sender after the restart: $(cat "$out")"
wait $rpid || fail "the receiver on host 2 after the restart"
check_dmesg
exit 0
