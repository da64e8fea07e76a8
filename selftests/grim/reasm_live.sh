#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A reassembly is given up only when its sender no longer has it.
#
# The receiving NI gives a reassembly up after dead_ms with no frame of
# its stream (reasm_timeout.sh shows that it does).  A sender that is up
# resends what is not acknowledged at least once a second, so a stream
# whose frames keep coming is alive, even if its message makes no
# progress for longer than dead_ms: on a slow or lossy path a hole may
# take several retransmission timeouts to fill.  Giving such a message
# up fails it at its sender (ETIMEDOUT) while both ends are up.
#
# First, forged: the first fragment of a 64000-byte message (grim_inject
# -m reasmlive, from a host that knows the session), then the same frame
# every 500 ms for twice host 2's dead_ms.  The reassembly holds its room
# all that time, and is given up within dead_ms once the frames stop.
#
# Then, real: host 1 streams 16000-byte messages (11 frames each) to host
# 2 over a link that loses a third of host 1's frames and delays them
# 300 ms.  Every message arrives, exactly once and in order, and no
# reassembly is given up.  Host 1 says hello four times a second, so that
# it stays up on host 2 through the loss.
#
# Last, a stream silent for longer than dead_ms with its sender up: host
# 2 drops every DATA frame it receives (a u32 filter on the frame type)
# in the middle of a 64000-byte message, for more than twice dead_ms,
# while hellos and ACKs pass, as a loaded path can.  Silence alone is no
# proof that the message is not coming: host 2 asks host 1 (an ACK
# flagged QUERY, once a hello interval), host 1 has the stream and
# resends, and the message arrives once the filter goes; none is given
# up or failed.  Before wire version 7 host 2 gave it up after dead_ms,
# and host 1 saw ETIMEDOUT.  The forged message of the first step, whose
# sender has no such stream, is given up because host 1 says so.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc
require_grim
require_grim_tool
require_ip_grim
require_mod sch_netem
require_mod sch_tbf
require_mod sch_ingress
require_mod cls_u32
require_mod act_gact

INJECT=$(dirname "$0")/grim_inject
DEAD_MS=3000
COUNT=${GRIM_TEST_LOSSY_MSGS:-40}
LOSS=35

# rxq HOST PORT: bytes the socket bound to PORT on HOST holds, reserved
# for reassemblies included.
rxq() {
	nsx "$1" "$GRIM" -j socket show port "$2" |
		sed -n 's/.*"rx_queue": *\([0-9]*\).*/\1/p'
}

pretty "" "2 hosts; host 2 asks after reassemblies silent for $DEAD_MS ms"
setup_hosts 2
grim_cluster 2
ip -n "$(host 1)" link set grim0 type grim hello 250 || fail "hello_ms on host 1"
ip -n "$(host 2)" link set grim0 type grim dead $DEAD_MS || fail "dead_ms on host 2"
wait_peer_up 1 2
# Traffic from host 1 for grim_inject to learn the session from.
bg nsx 2 "$RDM" recv -p 101 -n 100000000 -t 600
wait_bound 2 101
bg nsx 1 "$RDM" send -d 2 -p 101 -n 100000000 -M 200 -S 7 -i 20000
bg nsx 2 "$RDM" recv -p 100 -n "$COUNT" -t 600 >/dev/null
rpid=$!
wait_bound 2 100

pretty "" "a message whose first fragment comes again every 500 ms for $((2 * DEAD_MS)) ms"
n=$((2 * DEAD_MS / 500))
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m reasmlive -k $n -w 500 \
	-p 100 -t 60 2>&1) || fail "grim_inject: $out"
log "$out"
q=$(rxq 2 100)
log "port 100 on host 2 holds $q bytes"
[ "${q:-0}" -ge 64000 ] || fail "the reassembly lost its room while its frames came"
check_eq "$(stat 2 rx_reassembly_timeouts)" 0 "reassemblies given up while their frames came"
t0=$(date +%s%N)
for ((i = 0; i < (DEAD_MS + 1000 + 3000) / 100; i++)); do
	[ "$(stat 2 rx_reassembly_timeouts)" -ge 1 ] && break
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "$(stat 2 rx_reassembly_timeouts)" 1 "reassemblies given up once the frames stopped"
log "given up $ms ms after the last frame"
q=$(rxq 2 100)
check_eq "$q" 0 "bytes port 100 holds after the reassembly was given up"

pretty "" "$LOSS% of host 1's frames lost, 300 ms late; $COUNT messages of 16000 bytes"
tc -n "$(host 1)" qdisc replace dev eth0 root netem limit 10000 \
	delay 300ms loss $LOSS% || fail "netem on host 1"
failed0=$(stat 1 tx_msgs_failed)
t0=$(date +%s)
out=$(nsx 1 "$RDM" send -d 2 -p 100 -n "$COUNT" -m 16000 -M 16000 -S 9 2>&1) ||
	fail "the sender failed: $out; host 1: $(stat 1 retransmit_timeouts) timeouts," \
	     "$(stat 1 tx_cwnd_cuts) window cuts, $(stat 1 peer_session_resets) resets;" \
	     "host 2: $(stat 2 rx_reassembly_timeouts) reassemblies given up," \
	     "$(stat 2 peer_down_events) peer-down events"
wait $rpid || fail "the receiver found a message lost, doubled or damaged"
log "in $(($(date +%s) - t0)) s: $(stat 1 retransmit_frames) frames resent," \
	"$(stat 1 retransmit_timeouts) timeouts"
check_eq "$(stat 2 rx_reassembly_timeouts)" 1 "reassemblies given up on host 2 (the forged one)"
check_eq $(($(stat 1 tx_msgs_failed) - failed0)) 0 "messages failed on host 1"
[ "$(stat 1 retransmit_timeouts)" -gt 0 ] ||
	fail "no retransmission timeout: the link lost too little to test"
tc -n "$(host 1)" qdisc del dev eth0 root

BLOCK_S=$((2 * DEAD_MS / 1000 + 2))
pretty "" "every DATA frame to host 2 dropped for $BLOCK_S s in the middle of a message"
# Slow enough that the message is still on its way once its first frame
# has reserved its room: 64000 bytes at 64 kbit/s take 8 s.
tc -n "$(host 1)" qdisc replace dev eth0 root tbf rate 64kbit burst 4000 \
	latency 20s || fail "tbf on host 1"
bg nsx 2 "$RDM" recv -p 102 -n 1 -t 120 >/dev/null
rpid=$!
wait_bound 2 102
queries0=$(stat 2 rx_reassembly_queries)
given0=$(stat 2 rx_reassembly_timeouts)
failed0=$(stat 1 tx_msgs_failed)
down0=$(($(stat 1 peer_down_events) + $(stat 2 peer_down_events)))
nsx 1 "$RDM" send -d 2 -p 102 -n 1 -m 64000 -M 64000 -S 11 >/dev/null ||
	fail "the send failed"
for ((i = 0; i < 200; i++)); do
	[ "$(rxq 2 102)" -ge 64000 ] 2>/dev/null && break
	sleep 0.05
done
[ "$(rxq 2 102)" -ge 64000 ] || fail "the message's first frame did not reach host 2"
tc -n "$(host 2)" qdisc add dev eth0 clsact || fail "clsact on host 2"
tc -n "$(host 2)" filter add dev eth0 ingress protocol 0x88b5 \
	u32 match u8 0x01 0xff at 3 action drop || fail "u32 filter on host 2"
kill -0 $rpid 2>/dev/null || fail "the message arrived before its frames were dropped: too fast to test"
sleep $BLOCK_S
q=$(rxq 2 102)
[ "${q:-0}" -ge 64000 ] || fail "the reassembly lost its room while its sender was up" \
	"($q bytes; $(stat 2 rx_reassembly_queries) queries," \
	"$(stat 2 rx_reassembly_timeouts) given up)"
queries=$(($(stat 2 rx_reassembly_queries) - queries0))
[ $queries -ge 1 ] || fail "host 2 did not ask after the silent reassembly"
check_eq $(($(stat 2 rx_reassembly_timeouts) - given0)) 0 \
	"reassemblies given up while their sender was up"
check_eq $(($(stat 1 peer_down_events) + $(stat 2 peer_down_events) - down0)) 0 \
	"peer-down events while DATA frames were dropped"
log "$queries queries in $BLOCK_S s of silence; the room is still held"
tc -n "$(host 1)" qdisc del dev eth0 root
tc -n "$(host 2)" qdisc del dev eth0 clsact || fail "clsact del on host 2"
wait $rpid || fail "the message did not arrive whole once the frames passed again"
check_eq $(($(stat 1 tx_msgs_failed) - failed0)) 0 "messages failed on host 1"
check_dmesg
exit 0
