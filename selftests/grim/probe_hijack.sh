#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A forged probe must not take a peer's session for good.
#
# Without a key anyone on the segment can reset a session (grim.rst,
# Trust).  One unicast probe that claims node 1 to host 2, from another
# MAC and with a newer session generation, once made host 2 hold that
# generation for ever: node 1's real hellos kept the peer up, node 1's
# frames all looked older than the forged generation, and host 2's
# messages to node 1 were retransmitted without end.  A hello from the
# NI the session is not with now starts the session over, so node 1 is
# back within a hello interval; a static peer takes hellos and probes
# from its own MAC alone.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_grim_tool

INJECT=$(dirname "$0")/grim_inject
BOUND=20	# seconds for 100 messages once node 1 is back

# back HOST NODE STEP: host HOST's messages to NODE arrive, all of them,
# within BOUND seconds (STEP names the step in a failure).
back() {
	local h=$1 n=$2 p=$((110 + $1)) r out
	out=$(mktemp)
	bg nsx "$n" "$RDM" recv -p $p -n 100 -t $((BOUND + 10))
	r=$!
	wait_bound "$n" $p
	timeout $BOUND ip netns exec "$(host "$h")" "$RDM" send -d "$n" -p $p \
		-n 100 -M 2000 -S $p -R $BOUND >"$out" 2>&1 ||
		fail "$3: host $h's messages to node $n: $(cat "$out") (host $h: $(stat "$h" rx_drop_stale_session) frames of another session dropped)"
	wait $r || fail "$3: node $n lost messages from host $h"
	rm -f "$out"
}

pretty "" "3 hosts; host 3 has node 1 as a static peer; host 1 sends to 2 and 3"
setup_hosts 3
grim_cluster 3
nsx 3 "$GRIM" peer add dev grim0 node 1 mac "$(host_mac 1)" ||
	fail "static peer on host 3"
for i in 2 3; do
	wait_peer_up 1 $i
	wait_peer_up $i 1
	bg nsx $i "$RDM" recv -p 101 -n 100000000 -t 600
	wait_bound $i 101
	bg nsx 1 "$RDM" send -d $i -p 101 -n 100000000 -M 200 -S 7
done

for i in 2 3; do
	pretty "" "a forged probe claims node 1 to host $i, with a newer generation"
	out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac $i)" -m probe -k 1 -t 60 2>&1) ||
		fail "grim_inject: $out"
	log "$out"
	# The forged session, if taken, is over at node 1's next hello.
	sleep 2
	back $i 1 "after the forged probe"
	back 1 $i "after the forged probe"
done
log "host 2: peer_session_resets $(stat 2 peer_session_resets); host 3: $(stat 3 peer_session_resets)"
check_eq "$(stat 3 peer_session_resets)" 0 "session resets on host 3 (static peer)"
check_dmesg
exit 0
