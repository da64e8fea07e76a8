#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Streams both ways on one socket pair.  Each data frame also carries an
# ACK for the reverse stream, so the two directions' sequence state meet
# in every frame: a piggybacked ACK must never count as a duplicate ACK
# (that would roll the stream back for nothing), and each side must keep
# receiving while its own sends wait for room.
#
# 1. Clean link: GRIM_TEST_DUPLEX_MSGS (default 600, 6000 under
#    `make check-full`) messages of 0..64572
#    bytes each way, every byte checked; no fast retransmit without frames
#    out of sequence.
# 2. The same under netem loss 10%, duplication 5%, reordering 25% and
#    corruption 1% on every link: exactly once and in order both ways.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd tc ethtool
require_grim

N=${GRIM_TEST_DUPLEX_MSGS:-$([ -n "${GRIM_TEST_FULL:-}" ] && echo 6000 || echo 600)}
# Each side's deadline grows with the load (300 s per 600 messages).
T=$((N > 600 ? N / 2 : 300))

# duplex PORT SEED: host 1 port PORT <-> host 2 port PORT+1, N messages
# each way; prints what both ends report.
duplex() {
	local p=$1 seed=$2 a b
	bg nsx 2 "$RDM" duplex -d 1 -p $((p + 1)) -P "$p" -n "$N" -m 0 -M 64572 \
		-S $((seed + 1)) -t "$T" -g "$tmp/go$p" >"$tmp/b" 2>&1
	b=$!
	bg nsx 1 "$RDM" duplex -d 2 -p "$p" -P $((p + 1)) -n "$N" -m 0 -M 64572 \
		-S "$seed" -t "$T" -g "$tmp/go$p" >"$tmp/a" 2>&1
	a=$!
	wait_bound 2 $((p + 1))
	wait_bound 1 "$p"
	touch "$tmp/go$p"
	wait $a
	a=$?
	wait $b
	b=$?
	sed 's/^/    host 1: /' "$tmp/a"
	sed 's/^/    host 2: /' "$tmp/b"
	[ $a -eq 0 ] || fail "host 1 saw loss, duplication, reordering or corruption"
	[ $b -eq 0 ] || fail "host 2 saw loss, duplication, reordering or corruption"
}

tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
wait_peer_up 2 1
# wait_peer_up's probe was rejected (port 9): count only what follows.
fail1=$(stat 1 tx_msgs_failed) fail2=$(stat 2 tx_msgs_failed)
dmesg_mark

pretty "" "clean link: $N messages of 0..64572 bytes each way on one socket pair"
names="retransmit_frames fast_retransmits rx_out_of_order_frames rx_duplicate_frames tx_nacks"
declare -A c0
for h in 1 2; do
	for k in $names; do c0[$h.$k]=$(stat $h $k); done
done
duplex 100 1
declare -A c
for h in 1 2; do
	for k in $names; do c[$h.$k]=$(($(stat $h $k) - c0[$h.$k])); done
	log "host $h: ${c[$h.retransmit_frames]} frames retransmitted," \
	    "${c[$h.fast_retransmits]} fast retransmits, ${c[$h.tx_nacks]} NACKs sent," \
	    "${c[$h.rx_out_of_order_frames]} frames out of order," \
	    "${c[$h.rx_duplicate_frames]} duplicates"
done
# Nothing is lost on this link, but the two vCPUs may reorder frames and
# a full receive queue NACKs (rollbacks are retransmissions too).  A
# duplicate ACK, though, comes only from a frame out of sequence at the
# receiver: three of them per fast retransmit.  Piggybacked ACKs counted
# as duplicates would trigger fast retransmits without any.
for h in 1 2; do
	o=$((3 - h))
	dups=$((c[$o.rx_out_of_order_frames] + c[$o.rx_duplicate_frames]))
	[ $((c[$h.fast_retransmits] * 3)) -le "$dups" ] ||
		fail "host $h: ${c[$h.fast_retransmits]} fast retransmits, but host $o" \
		     "saw only $dups frames out of sequence"
done

pretty "" "faulty links: $N messages each way under loss, duplication, reordering, corruption"
netem_links "delay 1ms reorder 25% 50% loss 10% duplicate 5% corrupt 1%"
r1=$(($(stat 1 retransmit_frames) + $(stat 2 retransmit_frames)))
duplex 200 11
r=$(($(stat 1 retransmit_frames) + $(stat 2 retransmit_frames) - r1))
log "both hosts: $r frames retransmitted"
for h in 1 2; do
	log "host $h: $(nsx $h ethtool -S grim0 |
		grep -E 'tx_frames|retransmit|fast|rx_(dup|out)' | tr -s ' \n' ' ')"
done
[ "$r" -gt 0 ] || fail "no retransmissions under 10% loss"
netem_clear
check_eq "$(($(stat 1 tx_msgs_failed) - fail1))" 0 "failed messages on host 1"
check_eq "$(($(stat 2 tx_msgs_failed) - fail2))" 0 "failed messages on host 2"
check_dmesg
exit 0
