#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (counts timeouts against loss probes on a timed path)
#
# A lost last frame costs a loss probe, not a retransmission timeout.
# Host 1 sends one-frame messages one at a time over a path with a 20 ms
# round trip, where a fifth of host 1's frames are lost and none of host
# 2's: every loss is a tail loss, with nothing behind it to show the
# hole.  The probe (two round trips, or the retransmission timeout if
# that is sooner) resends the frame; its ACK comes back a round trip
# later, and the timeout, which counts from the probe, must not fire
# meanwhile.  So timeouts come only from probes lost in turn (a fifth),
# where a probe never sent, or a timeout counted from before the probe,
# would make most losses cost a timeout.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd tc
require_grim
require_mod sch_netem

N=200
GAP_US=60000	# 3 round trips: each message alone in flight

pretty "" "2 hosts, 10 ms each way, a round-trip estimate from 50 messages"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
tc -n "$(host 1)" qdisc replace dev eth0 root netem limit 10000 delay 10ms ||
	fail "netem on host 1"
tc -n "$(host 2)" qdisc replace dev eth0 root netem limit 10000 delay 10ms ||
	fail "netem on host 2"
bg nsx 2 "$RDM" recv -p 100 -n $((N + 50)) -t 120
r=$!
wait_bound 2 100
nsx 1 "$RDM" send -d 2 -p 100 -n 50 -m 100 -M 100 -S 1 -i $GAP_US >/dev/null ||
	fail "warm-up sender"

pretty "" "$N messages, one at a time, 20% of host 1's frames lost"
tc -n "$(host 1)" qdisc replace dev eth0 root netem limit 10000 delay 10ms loss 20% ||
	fail "netem loss on host 1"
stats 1
probes0=${S[retransmit_probes]?}
rto0=${S[retransmit_timeouts]?}
out=$(nsx 1 "$RDM" send -d 2 -p 100 -n $N -m 100 -M 100 -S 2 -i $GAP_US) ||
	fail "sender: $out"
wait $r || fail "host 2 did not get every message in order"
stats 1
probes=$((S[retransmit_probes] - probes0))
rto=$((S[retransmit_timeouts] - rto0))
log "host 1: $probes loss probes, $rto retransmission timeouts"
[ "$probes" -ge $((N / 20)) ] ||
	fail "$probes loss probes for about $((N / 5)) lost frames"
[ $((2 * rto)) -le "$probes" ] ||
	fail "$rto timeouts against $probes probes: losses cost timeouts"
pretty "" "ok"
