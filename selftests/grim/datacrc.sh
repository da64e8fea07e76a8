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
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ip tc
require_mod sch_netem
require_grim

here=$(cd "$(dirname "$0")" && pwd)
plugin_dir=$here/../../tools/grim
[ -f "$plugin_dir/link_grim.so" ] || skip "link_grim.so not built"
export IP_LIB_DIR=$plugin_dir
GRIM=${GRIM:-$plugin_dir/grim}
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

pretty "" "netem corrupts 10% of host 1's frames: headers are still checked"
ip netns exec "$(host 1)" tc qdisc add dev eth0 root netem corrupt 10% ||
	fail "netem"
before=$(stat 2 rx_drop_bad_checksum)
bg nsx 2 "$RDM" recv -p 101 -n 200 -t 120
r2=$!
wait_bound 2 101
# 64 KB messages: 45 frames each, so nearly every message has a frame
# with a flipped payload bit, which no CRC is there to catch.
nsx 1 "$RDM" send -d 2 -p 101 -n 200 -m 64000 -M 64000 -S 13 ||
	fail "sender failed under corruption"
wait $r2
bad=$?
drops=$(($(stat 2 rx_drop_bad_checksum) - before))
log "host 2 dropped $drops frames for their CRC (a header bit was flipped)"
[ "$drops" -gt 0 ] || fail "no corrupted header was caught"
[ "$bad" -ne 0 ] ||
	fail "every payload arrived intact though 10% of frames were corrupted and the payload was not covered"
log "the receiver saw corrupted payloads, as datacrc off allows"
ip netns exec "$(host 1)" tc qdisc del dev eth0 root

pretty "" "datacrc on again: corruption is caught and nothing reaches the socket damaged"
ip -n "$(host 1)" link set grim0 type grim datacrc on || fail "datacrc on"
ip netns exec "$(host 1)" tc qdisc add dev eth0 root netem corrupt 10% ||
	fail "netem"
bg nsx 2 "$RDM" recv -p 102 -n 100 -t 240
r2=$!
wait_bound 2 102
nsx 1 "$RDM" send -d 2 -p 102 -n 100 -m 64000 -M 64000 -S 14 ||
	fail "sender failed under corruption"
wait $r2 || fail "a corrupted message reached the socket with datacrc on"
check_dmesg
exit 0
