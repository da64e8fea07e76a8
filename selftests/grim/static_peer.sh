#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A static peer's MAC is the administrator's: a hello, even a forged one
# from another MAC with a newer generation, never re-points it.  (Without
# a cluster key such a hello still resets the session, as grim.rst says;
# traffic then resumes to the right MAC.)

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_grim_tool

INJECT=$(dirname "$0")/grim_inject

# peer_mac HOST NODE: the MAC HOST has for peer NODE.
peer_mac() {
	nsx "$1" "$GRIM" -j peer show dev grim0 node "$2" |
		sed -n 's/.*"mac": *"\([0-9a-f:]*\)".*/\1/p'
}

pretty "" "2 hosts; host 2 has node 1 as a static peer"
setup_hosts 2
grim_cluster 2
nsx 2 "$GRIM" peer add dev grim0 node 1 mac "$(host_mac 1)" ||
	fail "static peer on host 2"
wait_peer_up 1 2
wait_peer_up 2 1
check_eq "$(peer_mac 2 1)" "$(host_mac 1)" "host 2's MAC for node 1"
bg nsx 2 "$RDM" recv -p 101 -n 100000000 -t 600
wait_bound 2 101
bg nsx 1 "$RDM" send -d 2 -p 101 -n 100000000 -M 200 -S 7

pretty "" "forged hellos claim node 1 from 02:00:00:00:ee:ee"
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m hello -p 1 -k 20 \
	-t 60 2>&1) || fail "grim_inject: $out"
log "$out"
sleep 1
check_eq "$(peer_mac 2 1)" "$(host_mac 1)" "host 2's MAC for its static peer node 1"

pretty "" "messages from host 1 reach host 2 again"
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 102 -n 200 -t 60
r=$!
wait_bound 2 102
nsx 1 "$RDM" send -d 2 -p 102 -n 200 -M 2000 -S 9 -R 10 >/dev/null ||
	fail "host 1 to host 2 after the forged hellos"
wait $r || fail "host 2 lost messages"
check_dmesg
exit 0
