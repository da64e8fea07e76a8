#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (no retransmission timeout allowed)
#
# A window smaller than the receiver's ACK interval: the sender flags the
# frame that fills its window (ACKREQ) and the receiver ACKs it at once,
# so long messages flow without waiting for the retransmission timer.
# Then a window of one frame, the smallest ethtool -G allows.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim

N=40

setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
for w in 4 1; do
	pretty "" "window $w: $N messages of 64000 bytes (45 frames each)"
	nsx 1 ethtool -G grim0 tx $w || fail "ethtool -G grim0 tx $w"
	rto0=$(stat 1 retransmit_timeouts)
	acks0=$(stat 1 rx_acks)
	frames0=$(stat 1 tx_frames)
	bg nsx 2 "$RDM" recv -p $((100 + w)) -n $N -t 120
	r=$!
	wait_bound 2 $((100 + w))
	out=$(nsx 1 "$RDM" send -d 2 -p $((100 + w)) -n $N -m 64000 -M 64000 -S $w) ||
		fail "sender failed: $out"
	log "$out"
	wait $r || fail "receiver lost or misordered messages"
	rto=$(($(stat 1 retransmit_timeouts) - rto0))
	acks=$(($(stat 1 rx_acks) - acks0))
	frames=$(($(stat 1 tx_frames) - frames0))
	log "window $w: $frames frames, $acks ACKs, $rto retransmission timeouts"
	check_eq "$rto" 0 "retransmission timeouts with window $w"
	# Every window's worth of frames drew its own ACK.
	[ "$acks" -ge $((N * 45 / w)) ] ||
		fail "only $acks ACKs for $frames frames in windows of $w"
done
check_dmesg
exit 0
