#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A reassembly is given up only when its sender no longer has it.
#
# After dead_ms with no frame of its stream, the receiving NI asks the
# sender after a reassembly; a sender that has no such stream says so,
# and the reassembly is given up (reasm_timeout.sh shows that it is).  A
# sender that is up resends what is not acknowledged at least once a
# second, so a stream whose frames keep coming is alive, even if its
# message makes no progress for longer than dead_ms: on a slow or lossy
# path a hole may take several retransmission timeouts to fill.  Giving
# such a message up fails it at its sender (ETIMEDOUT) while both ends
# are up.
#
# First, forged: the first fragment of a 64000-byte message (grim_inject
# -m reasmlive, from a host that knows the session), then the same frame
# every 500 ms for twice host 2's dead_ms.  The reassembly holds its room
# all that time.  Once the frames stop, host 2 asks host 1, whose
# channels the frame claims, after dead_ms; host 1 has no such stream and
# says so, and the reassembly is given up.  Again with host 1's answers
# (ABORT frames) dropped: host 2 gives it up after 4 times dead_ms.
#
# Then, real: host 1 streams 16000-byte messages (11 frames each) to host
# 2 over a link that loses a third of host 1's frames and delays them
# 300 ms.  Every message arrives, exactly once and in order, and no
# reassembly is given up.  Host 1 says hello four times a second, so that
# it stays up on host 2 through the loss.
#
# Last, streams silent for longer than twice dead_ms with their sender
# up: host 2 drops (u32 filters on the GRIM header) every DATA frame of a
# 64000-byte message but its first, and every DATA frame of the port 101
# stream, for more than twice dead_ms, while hellos and ACKs pass, as a
# loaded path can.  Silence alone is no proof that nothing is coming:
# host 2 asks host 1 (an ACK flagged QUERY, once a hello interval), host
# 1 has both streams and resends, and once the filters go the message
# arrives and the port 101 traffic goes on; nothing is given up,
# forgotten or failed.  Before wire version 7 host 2 gave the message up
# after dead_ms (ETIMEDOUT at host 1), and forgot any stream silent for
# twice dead_ms, whatever it had on the way.  The forged messages of the first
# steps, whose sender has no such stream, are given up because host 1
# says so, or after 4 times dead_ms when its answers are dropped.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc
require_grim
require_grim_tool
require_ip_grim
require_mod sch_netem
require_mod sch_ingress
require_mod cls_u32
require_mod act_gact

INJECT=$(dirname "$0")/grim_inject
# SLOW times that on a debug kernel, where reading the room after the
# forged frames stop can take longer than 3 s: by then the reassembly
# is rightly given up.
DEAD_MS=$((3000 * SLOW))
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
[ "${q:-0}" -ge 64000 ] ||
	fail "the reassembly lost its room while its frames came;" \
	     "host 2: $(nsx 2 ethtool -S grim0 | grep -E 'rx_(frames|drop|reassembl|stale|streams)|quer|session_resets' |
			grep -v ': 0$' | tr -s ' \n' ' ')" \
	     "host 1: tx_stream_denials $(stat 1 tx_stream_denials)"
check_eq "$(stat 2 rx_reassembly_timeouts)" 0 "reassemblies given up while their frames came"
t0=$(date +%s%N)
for ((i = 0; i < (DEAD_MS + 1000 + 3000) / 100; i++)); do
	[ "$(stat 2 rx_reassembly_timeouts)" -ge 1 ] && break
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "$(stat 2 rx_reassembly_timeouts)" 1 "reassemblies given up once the frames stopped"
log "given up $ms ms after the last frame"
[ "$(stat 1 tx_stream_denials)" -ge 1 ] || fail "host 1 did not deny the forged stream"
q=$(rxq 2 100)
check_eq "$q" 0 "bytes port 100 holds after the reassembly was given up"

pretty "" "the same, host 1's answers dropped: given up after $((4 * DEAD_MS)) ms"
tc -n "$(host 1)" qdisc add dev eth0 clsact || fail "clsact on host 1"
tc -n "$(host 1)" filter add dev eth0 egress protocol 0x88b5 \
	u32 match u8 0x06 0xff at 3 action drop || fail "u32 filter on host 1"
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m reasmlive -k 1 -w 500 \
	-p 100 -t 60 2>&1) || fail "grim_inject: $out"
t0=$(date +%s%N)
for ((i = 0; i < (4 * DEAD_MS + 1000 + 4000) / 100; i++)); do
	[ "$(stat 2 rx_reassembly_timeouts)" -ge 2 ] && break
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
# Once seen on 6.1 (one run in eight): never given up within the wait.
# What host 2 did with the forged frames, should it happen again.
[ "$(stat 2 rx_reassembly_timeouts)" -ge 2 ] ||
	log "host 2 after $ms ms: $(nsx 2 ethtool -S grim0 | grep -E 'stale|reassembl|quer|not_ours|unknown|no_ep|drop_frag|drop_msg|limit' | tr -s ' \n' ' ')"
check_eq "$(stat 2 rx_reassembly_timeouts)" 2 "reassemblies given up with no answer"
[ $ms -ge $((4 * DEAD_MS - 500)) ] || fail "given up after $ms ms, before 4 times dead_ms"
log "given up $ms ms after the frame, $(stat 2 rx_stream_queries) queries in all"
check_eq "$(rxq 2 100)" 0 "bytes port 100 holds after the reassembly was given up"
tc -n "$(host 1)" qdisc del dev eth0 clsact || fail "clsact del on host 1"

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
check_eq "$(stat 2 rx_reassembly_timeouts)" 2 "reassemblies given up on host 2 (the forged ones)"
check_eq $(($(stat 1 tx_msgs_failed) - failed0)) 0 "messages failed on host 1"
[ "$(stat 1 retransmit_timeouts)" -gt 0 ] ||
	fail "no retransmission timeout: the link lost too little to test"
tc -n "$(host 1)" qdisc del dev eth0 root

BLOCK_S=$((2 * DEAD_MS / 1000 + 2))
pretty "" "host 2 drops DATA frames of a message after its first, and of the port 101 stream, for $BLOCK_S s"
# u32 on the GRIM header: type (byte 3) DATA, flags (byte 4) without
# FIRST, dst_chan (bytes 34-35).  Hellos, ACKs and first frames pass.
rout=$(mktemp)
at_exit "rm -f $rout"
bg nsx 2 "$RDM" recv -p 102 -n 1 -t 120 >"$rout" 2>&1
rpid=$!
wait_bound 2 102
queries0=$(stat 2 rx_stream_queries)
given0=$(stat 2 rx_reassembly_timeouts)
failed0=$(stat 1 tx_msgs_failed)
down0=$(($(stat 1 peer_down_events) + $(stat 2 peer_down_events)))
tc -n "$(host 2)" qdisc add dev eth0 clsact || fail "clsact on host 2"
tc -n "$(host 2)" filter add dev eth0 ingress protocol 0x88b5 u32 \
	match u8 0x01 0xff at 3 match u8 0x00 0x01 at 4 \
	match u16 102 0xffff at 34 action drop || fail "u32 filter (port 102)"
tc -n "$(host 2)" filter add dev eth0 ingress protocol 0x88b5 u32 \
	match u8 0x01 0xff at 3 match u16 101 0xffff at 34 action drop ||
	fail "u32 filter (port 101)"
nsx 1 "$RDM" send -d 2 -p 102 -n 1 -m 64000 -M 64000 -S 11 >/dev/null ||
	fail "the send failed"
for ((i = 0; i < 100; i++)); do
	[ "$(rxq 2 102)" -ge 64000 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(rxq 2 102)" -ge 64000 ] || fail "the message's first frame did not reach host 2"
# Host 2 gives the reassembly up after 4 times dead_ms of silence if its
# queries go unanswered (here they are answered, but the answers are
# dropped too): the filters must go well before that.  So nothing but
# one look at the room between the sleep and their removal; the counters
# are read once the message is in.
sleep $BLOCK_S
q=$(rxq 2 102)
tc -n "$(host 2)" qdisc del dev eth0 clsact || fail "clsact del on host 2"
[ "${q:-0}" -ge 64000 ] || fail "the reassembly lost its room while its sender was up" \
	"($q bytes; $(stat 2 rx_stream_queries) queries," \
	"$(stat 2 rx_reassembly_timeouts) given up)"
wait $rpid || fail "the message did not arrive whole once the frames passed again:" \
	"$(tail -2 "$rout"); host 1: $(nsx 1 ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ');" \
	"host 2: $(nsx 2 ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ')"
queries=$(($(stat 2 rx_stream_queries) - queries0))
[ $queries -ge 2 ] || fail "host 2 did not ask after both silent streams ($queries queries)"
check_eq $(($(stat 2 rx_reassembly_timeouts) - given0)) 0 \
	"reassemblies given up while their sender was up"
check_eq $(($(stat 1 peer_down_events) + $(stat 2 peer_down_events) - down0)) 0 \
	"peer-down events while DATA frames were dropped"
# A port 101 stream forgotten with frames on the way fails them.
check_eq $(($(stat 1 tx_msgs_failed) - failed0)) 0 "messages failed on host 1"
log "$queries queries in $BLOCK_S s of silence; the room was held, the message came"
check_dmesg
exit 0
