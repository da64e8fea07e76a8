#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Exactly-once, in-order delivery under a hostile network: three hosts on
# a switch, every link (both directions) with netem loss 10%, duplication
# 5%, reordering 25% and corruption 1%.  Four sending sockets on two hosts
# send GRIM_TEST_FAULT_MSGS messages in all (default 100000; 500000 under
# `make check-full`, which sets GRIM_TEST_FULL) with sizes from 0 to 64572
# bytes to one receiving socket; the receiver checks every message's
# sequence, length and content per sending socket.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd tc ethtool
require_grim

TOTAL=${GRIM_TEST_FAULT_MSGS:-$([ -n "${GRIM_TEST_FULL:-}" ] && echo 500000 || echo 100000)}
PER=$((TOTAL / 4))
TOTAL=$((PER * 4))
# The receiver's deadline grows with the load (1500 s per 100000).
RECV_T=$((TOTAL > 100000 ? TOTAL * 15 / 1000 : 1500))

pretty "" "3 hosts, grim0 on each, faults on every link"
setup_hosts 3
grim_cluster 3
wait_peer_up 1 3
wait_peer_up 2 3
# wait_peer_up's probe was rejected (port 9): count only what follows.
fail1=$(stat 1 tx_msgs_failed) fail2=$(stat 2 tx_msgs_failed)
netem_links "delay 1ms reorder 25% 50% loss 10% duplicate 5% corrupt 1%"
dmesg_mark

pretty "" "$TOTAL messages of 0..64572 bytes, 4 senders -> host 3"
bg nsx 3 "$RDM" recv -p 100 -n "$TOTAL" -t "$RECV_T"
rpid=$!
wait_bound 3 100
pids=()
for s in 1 2 3 4; do
	h=$(( (s + 1) / 2 ))
	nsx "$h" "$RDM" send -d 3 -p 100 -n "$PER" -m 0 -M 64572 -L -S "$s" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a sender failed"
done
wait "$rpid" || fail "receiver saw loss, duplication, reordering or corruption"

pretty "" "the faults were real and the protocol repaired them"
for h in 1 2; do
	log "host $h: $(nsx "$h" ethtool -S grim0 | grep -E 'retransmit|fast|nacks|tx_frames|cwnd' | tr -s ' \n' ' ')"
done
log "host 3: $(nsx 3 ethtool -S grim0 | grep -E 'rx_(msgs|dup|out|drop_bad_checksum)' | tr -s ' \n' ' ')"
stats 1; r1=${S[retransmit_frames]?} failed1=${S[tx_msgs_failed]?}
stats 2; r2=${S[retransmit_frames]?} failed2=${S[tx_msgs_failed]?}
stats 3
check_eq "${S[rx_msgs]?}" "$TOTAL" "messages delivered"
r=$((r1 + r2))
[ "$r" -gt 0 ] || fail "no retransmissions under 10% loss"
[ "${S[rx_duplicate_frames]-0}" -gt 0 ] || fail "no duplicates seen under 5% duplication"
[ "${S[rx_out_of_order_frames]-0}" -gt 0 ] || fail "no reordering seen"
[ "${S[rx_drop_bad_checksum]-0}" -gt 0 ] || fail "no corrupted frame caught"
check_eq "$((failed1 - fail1))" 0 "failed messages on host 1"
check_eq "$((failed2 - fail2))" 0 "failed messages on host 2"
check_dmesg
exit 0
