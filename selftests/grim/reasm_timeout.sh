#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (a NACK due within dead_ms)
#
# Reassemblies that never complete give their room back.
#
# The receiving NI reserves room in the endpoint for a whole message when
# its first frame arrives.  Forged first frames of 64000-byte messages
# whose other frames never come (grim_inject -m reasm, from a host that
# knows the session) pin the endpoint's receive buffer: a real 64000-byte
# message is refused meanwhile.  After dead_ms without progress the NI
# asks host 1, the sender the frames name, after each reassembly; host 1
# has no such stream and says so, and the NI gives each reassembly up and
# its room back; the real messages then flow, every one of them, in
# order.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_grim_tool
require_ip_grim

INJECT=$(dirname "$0")/grim_inject
FORGED=20
# host 2's dead_ms, the reassembly timeout: twice the default, so that a
# slow kernel has the time to start the real sender before it (SLOW
# times that on a debug kernel).
DEAD_MS=$((8000 * SLOW))
BOUND_MS=$((DEAD_MS + 1000 + 3000))	# + one hello interval + slack

# rxq HOST PORT: bytes the socket bound to PORT on HOST holds, reserved
# for reassemblies included.
rxq() {
	nsx "$1" "$GRIM" -j socket show port "$2" |
		sed -n 's/.*"rx_queue": *\([0-9]*\).*/\1/p'
}

pretty "" "2 hosts; small messages flow from host 1 to a sink on host 2"
setup_hosts 2
grim_cluster 2
ip -n "$(host 2)" link set grim0 type grim dead $DEAD_MS || fail "dead_ms on host 2"
wait_peer_up 1 2
bg nsx 2 "$RDM" recv -p 101 -n 100000000 -t 600
wait_bound 2 101
bg nsx 1 "$RDM" send -d 2 -p 101 -n 100000000 -M 200 -S 7
bg nsx 2 "$RDM" recv -p 100 -n 51 -t $((120 * SLOW))
rpid=$!
wait_bound 2 100
q=$(rxq 2 100)
log "port 100 on host 2 holds $q bytes"
[ -n "$q" ] || fail "no rx_queue for port 100 in grim socket show"

pretty "" "$FORGED forged first frames of 64000-byte messages to port 100"
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m reasm -k $FORGED -p 100 \
	-t 60 2>&1) || fail "grim_inject: $out"
t0=$(date +%s%N)
log "$out"
# Polled: a slow (debug) kernel takes a while to see all of them, but
# well under dead_ms, when they would be given up.
for ((i = 0; i < 30; i++)); do
	q=$(rxq 2 100)
	[ "${q:-0}" -ge $((10 * 64000)) ] && break
	sleep 0.1
done
log "port 100 on host 2 now holds $q bytes"
[ "$q" -ge $((10 * 64000)) ] || fail "the forged frames reserved only $q bytes"

pretty "" "51 real messages of 64000 bytes to port 100: refused until the timeout"
nacks0=$(stat 2 tx_nacks)
out=$(mktemp)
at_exit "rm -f $out"
nsx 1 "$RDM" send -d 2 -p 100 -n 50 -m 64000 -M 64000 -S 3 >"$out" &
spid=$!
# Refused any time before the reassemblies are given up.
until [ "$(stat 2 tx_nacks)" -gt "$nacks0" ]; do
	[ $((($(date +%s%N) - t0) / 1000000)) -lt $((DEAD_MS - 500)) ] || break
	sleep 0.1
done
[ "$(stat 2 tx_nacks)" -gt "$nacks0" ] ||
	fail "a real message was not refused while the room was pinned"
for ((i = 0; i < BOUND_MS / 100; i++)); do
	[ "$(stat 2 rx_reassembly_timeouts)" -ge 10 ] && break
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
n=$(stat 2 rx_reassembly_timeouts)
log "$n reassemblies given up, $ms ms after the injection"
[ "$n" -ge 10 ] || fail "reassemblies still pinned after $ms ms"
[ "$ms" -ge $((DEAD_MS - 500)) ] || fail "reassemblies given up after $ms ms, before dead_ms"
wait $spid || fail "sender: $(cat "$out")"
log "$(cat "$out")"
for ((i = 0; i < 50; i++)); do
	q=$(rxq 2 100)
	[ "$q" = 0 ] && break
	sleep 0.1
done
check_eq "$q" 0 "bytes port 100 holds once the 50 messages were read"
nsx 1 "$RDM" send -d 2 -p 100 -n 1 -m 64000 -M 64000 -S 3 >/dev/null 2>&1 ||
	fail "last message"
wait $rpid || fail "the receiver lost or misordered real messages"
check_dmesg
exit 0
