#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The payload CRC is the sender's choice (ip link ... type grim datacrc
# off): its frames then carry a CRC over their headers only, flagged so,
# and a receiver with the default checks each frame by its own flag.
# Messages of every size cross in both directions between a host that
# covers payload and one that does not, every byte verified, with no
# frame dropped for its CRC; corrupting a data frame's payload is then
# left to the lower link, as the setting says (shown with netem).
#
# With datacrc offload and a lower device that computes the Internet
# checksum for any protocol (veth does), a data frame carries that sum
# instead of a payload CRC: frames that stay in software are never summed,
# a bridge port without the offload computes the sum on the way, netem
# computes it before corrupting, and the receiver checks it.  Without the
# offload (ethtool -K eth0 tx-checksum-ip-generic off) CRC32C covers the
# payload again, as it always does with datacrc on.  Every case is shown
# under corruption or with the sum computed on the way, every byte
# checked.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ip tc ethtool
require_mod sch_netem
require_grim

require_ip_grim
require_grim_tool
N=400

pretty "" "2 hosts; host 1 sends without payload CRC, host 2 with it"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
ip -n "$(host 1)" link set grim0 type grim datacrc off || fail "datacrc off"
check_match "$(ip -n "$(host 1)" -d link show grim0)" "datacrc off" "ip -d link show, host 1"
check_match "$(ip -n "$(host 2)" -d link show grim0)" "datacrc on" "ip -d link show, host 2"
check_match "$(nsx 1 "$GRIM" link show dev grim0)" "data-crc off" "grim link show, host 1"
check_fail ip -n "$(host 1)" link set grim0 type grim datacrc maybe
off1=$(stat 1 tx_frames_csum_offload)
off2=$(stat 2 tx_frames_csum_offload)

pretty "" "$N messages of 0..64572 bytes each way, every byte checked"
bg nsx 2 "$RDM" recv -p 100 -n $N -t 240
r2=$!
bg nsx 1 "$RDM" recv -p 100 -n $N -t 240
r1=$!
wait_bound 2 100
wait_bound 1 100
nsx 1 "$RDM" send -d 2 -p 100 -n $N -m 0 -M 64572 -L -S 11 &
s1=$!
nsx 2 "$RDM" send -d 1 -p 100 -n $N -m 0 -M 64572 -L -S 12 &
s2=$!
wait $s1 || fail "sender on host 1 (no payload CRC) failed"
wait $s2 || fail "sender on host 2 (payload CRC) failed"
wait $r2 || fail "host 2 lost, misordered or corrupted messages"
wait $r1 || fail "host 1 lost, misordered or corrupted messages"
check_eq "$(stat 1 rx_drop_bad_checksum)" 0 "CRC drops on host 1"
check_eq "$(stat 2 rx_drop_bad_checksum)" 0 "CRC drops on host 2"
check_eq "$(stat 2 rx_msgs)" $N "messages delivered to host 2"
check_eq "$(stat 1 rx_msgs)" $N "messages delivered to host 1"
check_eq "$(stat 1 tx_frames_csum_offload)" "$off1" \
	"frames host 1 (datacrc off) left to its lower device"
check_eq "$(stat 2 tx_frames_csum_offload)" "$off2" \
	"frames host 2 (datacrc on: CRC32C) left to its lower device"

pretty "" "netem corrupts 10% of host 1's frames: headers are still checked"
ip netns exec "$(host 1)" tc qdisc add dev eth0 root netem corrupt 10% ||
	fail "netem"
before=$(stat 2 rx_drop_bad_checksum)
bg nsx 2 "$RDM" recv -p 101 -n 200 -t 120
r2=$!
wait_bound 2 101
# 64 KB messages: 45 frames each, so nearly every message has a frame
# with a flipped payload bit, which no CRC is there to catch.
# The receiver gives up after ten damaged messages and closes: messages
# after that are refused (ECONNREFUSED on the sender's error queue).
out=$(nsx 1 "$RDM" send -d 2 -p 101 -n 200 -m 64000 -M 64000 -S 13) ||
	check_match "$out" "Connection refused \(errno 111\)" \
		"the sender's error, if any, once the receiver closed"
wait $r2
bad=$?
drops=$(($(stat 2 rx_drop_bad_checksum) - before))
log "host 2 dropped $drops frames for their CRC (a header bit was flipped)"
[ "$drops" -gt 0 ] || fail "no corrupted header was caught"
[ "$bad" -ne 0 ] ||
	fail "every payload arrived intact though 10% of frames were corrupted and the payload was not covered"
log "the receiver saw corrupted payloads, as datacrc off allows"
ip netns exec "$(host 1)" tc qdisc del dev eth0 root

# rdm_case PORT SEED N [MIN MAX]: host 1 sends N messages of MIN..MAX
# bytes (default 64000) to host 2, which checks every byte.
rdm_case() {
	local port=$1 seed=$2 n=$3 min=${4:-64000} max=${5:-64000} r

	bg nsx 2 "$RDM" recv -p "$port" -n "$n" -t 240
	r=$!
	wait_bound 2 "$port"
	nsx 1 "$RDM" send -d 2 -p "$port" -n "$n" -m "$min" -M "$max" -S "$seed" ||
		fail "sender on host 1 failed"
	wait $r || fail "host 2 lost, misordered or received damaged messages"
}

pretty "" "datacrc on again: corruption is caught and nothing reaches the socket damaged"
ip -n "$(host 1)" link set grim0 type grim datacrc on || fail "datacrc on"
ip netns exec "$(host 1)" tc qdisc add dev eth0 root netem corrupt 10% ||
	fail "netem"
before=$(stat 2 rx_drop_bad_checksum)
rdm_case 102 14 100
drops=$(($(stat 2 rx_drop_bad_checksum) - before))
log "host 2 dropped $drops frames for their CRC"
[ "$drops" -gt 0 ] || fail "no corrupted frame was caught"

pretty "" "datacrc offload: the sum is left to veth, corruption is still caught"
ip -n "$(host 1)" link set grim0 type grim datacrc offload ||
	fail "datacrc offload"
check_match "$(ip -n "$(host 1)" -d link show grim0)" "datacrc offload" "ip -d link show, host 1"
check_match "$(nsx 1 "$GRIM" link show dev grim0)" "data-crc offload" "grim link show, host 1"
off1=$(stat 1 tx_frames_csum_offload)
local2=$(stat 2 rx_frames_csum_local)
before=$(stat 2 rx_drop_bad_checksum)
rdm_case 103 17 100
# Messages that fit one frame are sent as they are: the same check.
rdm_case 106 18 1000 0 3000
off1=$(($(stat 1 tx_frames_csum_offload) - off1))
local2=$(($(stat 2 rx_frames_csum_local) - local2))
drops=$(($(stat 2 rx_drop_bad_checksum) - before))
log "host 1 left the sum of $off1 frames to veth; host 2 took $local2 unsummed, dropped $drops"
[ "$off1" -gt 0 ] || fail "host 1 did not use veth's checksum offload"
[ "$local2" -gt 0 ] || fail "host 2 summed every frame, even those that never left the host"
[ "$drops" -gt 0 ] || fail "no corrupted frame was caught"
ip netns exec "$(host 1)" tc qdisc del dev eth0 root

pretty "" "a bridge port without checksum offload sums frames on the way"
# The switch forwards to host 2 through p2; without the offload there,
# the bridge computes each frame's sum and host 2 must check it.
ip netns exec "$SWITCH_NS" ethtool -K p2 tx-checksum-ip-generic off ||
	fail "ethtool -K p2"
local2=$(stat 2 rx_frames_csum_local)
off1=$(stat 1 tx_frames_csum_offload)
before=$(stat 2 rx_drop_bad_checksum)
rdm_case 104 15 100
check_eq "$(stat 2 rx_frames_csum_local)" "$local2" \
	"frames host 2 took unsummed though the bridge summed them"
check_eq "$(stat 2 rx_drop_bad_checksum)" "$before" \
	"frames summed by the bridge that host 2 rejected"
[ "$(stat 1 tx_frames_csum_offload)" -gt "$off1" ] ||
	fail "host 1 did not use veth's checksum offload"
ip netns exec "$SWITCH_NS" ethtool -K p2 tx-checksum-ip-generic on

pretty "" "no checksum offload on host 1's eth0: CRC32C covers the payload again"
ip netns exec "$(host 1)" ethtool -K eth0 tx-checksum-ip-generic off ||
	fail "ethtool -K eth0"
ip netns exec "$(host 1)" tc qdisc add dev eth0 root netem corrupt 10% ||
	fail "netem"
off1=$(stat 1 tx_frames_csum_offload)
local2=$(stat 2 rx_frames_csum_local)
before=$(stat 2 rx_drop_bad_checksum)
rdm_case 105 16 100
check_eq "$(stat 1 tx_frames_csum_offload)" "$off1" \
	"frames host 1 left to a lower device without the offload"
check_eq "$(stat 2 rx_frames_csum_local)" "$local2" \
	"frames host 2 took unsummed from a CRC sender"
drops=$(($(stat 2 rx_drop_bad_checksum) - before))
log "host 2 dropped $drops frames for their CRC"
[ "$drops" -gt 0 ] || fail "no corrupted frame was caught"
ip netns exec "$(host 1)" tc qdisc del dev eth0 root
check_dmesg
exit 0
