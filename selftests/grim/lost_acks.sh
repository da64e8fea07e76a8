#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (reads a round-trip estimate)
#
# Lost ACKs must not pass for a long round trip.  Host 1 sends a message
# while everything host 2 sends is dropped for half a second: host 2
# takes the message, its ACKs are lost, and host 1 resends (loss probe,
# timeouts).  Once the drop ends, a resent copy reaches host 2 as a
# duplicate, and its ACK must echo that copy's send time (RFC 7323, 4.3),
# not the first copy's: host 1's round-trip estimate stays where it was,
# where an echo of the first copy would time the whole wait (half a
# second and more) as one round trip and lift the smoothed estimate by
# an eighth of that.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd tc
require_grim
require_grim_tool
require_ip_grim
require_mod sch_netem

DROP_MS=500	# well under the 1 s a send time is good for (grim.rst)
RISE_MAX_US=40000	# the echo of the first copy: 60 ms and more

# rto 100: the resends at about 100, 300 and 700 ms after the first
# copy, so the first one after the drop comes within that second.
GRIM_OPTS="rto 100"
pretty "" "2 hosts, a round-trip estimate from 200 messages"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
bg nsx 2 "$RDM" recv -p 100 -n 201 -t 60
r=$!
wait_bound 2 100
nsx 1 "$RDM" send -d 2 -p 100 -n 200 -m 100 -M 100 -S 1 >/dev/null ||
	fail "warm-up sender"

# settled: no frame of host 1's in flight to node 2
settled() {
	local i cwnd inflight srtt
	for ((i = 0; i < 100; i++)); do
		read -r cwnd inflight srtt _ <<<"$(peer_path 1 2)"
		[ "$cwnd" != missing ] || fail "host 1 has no peer 2"
		[ "$inflight" = 0 ] && { echo "$srtt"; return; }
		sleep 0.1
	done
	fail "host 1 still has $inflight frames in flight to node 2"
}
srtt0=$(settled)
[ "$srtt0" -gt 0 ] || fail "no round-trip estimate after 200 messages"
log "host 1's estimate of the round trip to node 2: $srtt0 us"

pretty "" "host 2's frames dropped for $DROP_MS ms while host 1 sends one message"
stats 1
resent0=${S[retransmit_frames]?}
stats 2
dup0=${S[rx_duplicate_frames]?}
tc -n "$(host 2)" qdisc replace dev eth0 root netem loss 100% ||
	fail "netem on host 2"
nsx 1 "$RDM" send -d 2 -p 100 -n 1 -m 100 -M 100 -S 2 >/dev/null ||
	fail "sender"
wait $r || fail "host 2 did not get the message"
sleep "$(printf '0.%03d' "$DROP_MS")"
tc -n "$(host 2)" qdisc del dev eth0 root || fail "netem off"
srtt1=$(settled)

stats 1
resent=$((S[retransmit_frames] - resent0))
stats 2
dup=$((S[rx_duplicate_frames] - dup0))
log "host 1 resent $resent frames; host 2 took $dup of them as duplicates"
log "the estimate now: $srtt1 us (it was $srtt0 us; at most $RISE_MAX_US us more allowed)"
[ "$resent" -ge 2 ] || fail "host 1 resent $resent frames: the ACKs were not lost"
[ "$dup" -ge 2 ] || fail "host 2 saw $dup duplicates"
[ $((srtt1 - srtt0)) -le $RISE_MAX_US ] ||
	fail "the round-trip estimate rose by $((srtt1 - srtt0)) us: the wait for a lost ACK was timed as a round trip"
pretty "" "ok"
