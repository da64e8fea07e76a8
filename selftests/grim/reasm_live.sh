#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A reassembly is given up only when its stream goes silent.
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

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc
require_grim
require_grim_tool
require_ip_grim
require_mod sch_netem

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

pretty "" "2 hosts; host 2 gives reassemblies up after $DEAD_MS ms of silence"
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
check_dmesg
exit 0
