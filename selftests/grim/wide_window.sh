#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (a long path, timed by its round trips)
#
# Windows that fill the pipe.  One stream of 64000-byte messages over a
# path with a 50 ms round trip, its socket's send buffer large enough for
# the path: the frames it has in flight must grow past the 64 that once
# capped every stream (the receiver held no more than 64 frames past a
# gap, so the sender could not have more out).  With 2% of the sender's
# frames lost, the receiver holds up to 1024 frames past each gap and
# names them all in its reports: the sender resends the lost frames, not
# the window behind them, and no frame comes further past a gap than a
# report reaches (rx_drop_past_reach).  A window set past that reach
# (ethtool -G grim0 tx 4096) still delivers everything: what lies past
# the reach is dropped, counted, and sent again when the stream moves.
#
# The path is slower than rto_ms (20 ms): until its first ACK the sender
# does not know that, and a first timeout of rto_ms once took the whole
# first window for lost, counted it as congestion on a path never timed,
# and ended slow start (the window then grew a frame a round trip, and
# stayed under 100 frames here).  The first reliable messages on the
# path now are the NIs' own, as the link comes up: they wait the initial
# timeout (1 s) for their first ACK.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd tc
require_cmd ethtool
require_grim
require_grim_tool
require_mod sch_netem

DELAY_MS=$((25 * SLOW))	# each way: a slower kernel needs a longer path to fill
N=100		# messages of 64000 bytes: 45 frames each
BUF=$((16 << 20))
FLIGHT_MIN=128	# twice the old cap
WINDOW=1024	# the default window

# path_delay HOST [netem options]: HOST's frames leave DELAY_MS late.
path_delay() {
	local h=$1
	shift
	tc -n "$(host "$h")" qdisc replace dev eth0 root netem limit 100000 \
		delay ${DELAY_MS}ms "$@" || fail "netem on host $h"
}

# transfer PORT SEED: N messages from host 1 to node 2, all received
# in order and intact.  The NI keeps the most frames it had in flight to
# a peer at once (inflight-max): read once the transfer is done, rather
# than sampled while it runs, where a slow kernel's sampler competes with
# the sender for the CPUs and misses the peak.
transfer() {
	local p=$1 r s
	bg nsx 2 "$RDM" recv -p "$p" -n $N -r $BUF -t $((300 * SLOW))
	r=$!
	wait_bound 2 "$p"
	bg nsx 1 "$RDM" send -d 2 -p "$p" -n $N -m 64000 -M 64000 -S "$2" -B $BUF
	s=$!
	wait "$s" || fail "host 1's sender failed"
	wait "$r" || fail "host 2 lost, duplicated or misordered messages"
}

# flight_max: the most frames host 1 has had in flight to node 2 so far.
flight_max() {
	local cwnd inflight srtt max
	read -r cwnd inflight srtt max <<<"$(peer_path 1 2)"
	[ "$cwnd" != missing ] || fail "host 1 has no peer 2"
	echo "$max"
}

pretty "" "2 hosts, ${DELAY_MS} ms each way; one stream, $N messages of 64000 bytes"
setup_hosts 2
# The path is slow before the link comes up: the NIs' own first
# messages (the link group's join, as the link comes up) time it as it
# is.  (A live estimate of a fast path that turns fifty times slower
# costs a spurious timeout and ends slow start: grim.rst, "Congestion".)
path_delay 1
path_delay 2
grim_cluster 2
wait_peer_up 1 2
stats 1
to0=${S[retransmit_timeouts]?} cut0=${S[tx_cwnd_cuts]?} qd0=${S[tx_qdisc_drops]?}
fr0=${S[fast_retransmits]?} pr0=${S[retransmit_probes]?} re0=${S[retransmit_frames]?}
stats 2
ooo0=${S[rx_out_of_order_frames]?}
log "host 1's qdisc drops while the paths were set up: $qd0"
transfer 100 1
stats 1
log "$((S[retransmit_timeouts] - to0)) timeouts, $((S[tx_cwnd_cuts] - cut0)) congestion window cuts, $((S[tx_qdisc_drops] - qd0)) qdisc drops, $((S[fast_retransmits] - fr0)) recoveries, $((S[retransmit_probes] - pr0)) loss probes, $((S[retransmit_frames] - re0)) frames resent"
stats 2
log "host 2 held $((S[rx_out_of_order_frames] - ooo0)) frames past gaps"
log "$(peer_path 1 2 | awk '{ print "host 1 to node 2: cwnd " $1 ", srtt " $3 " us" }')"
max=$(flight_max)
log "most frames in flight: $max"
[ "$max" -ge $FLIGHT_MIN ] ||
	fail "at most $max frames in flight on a $((2 * DELAY_MS)) ms path (want $FLIGHT_MIN or more)"

pretty "" "2% of host 1's frames lost"
path_delay 1 loss 2%
stats 1
tx0=${S[tx_frames]?} re0=${S[retransmit_frames]?} to0=${S[retransmit_timeouts]?}
stats 2
reach0=${S[rx_drop_past_reach]?} ooo0=${S[rx_out_of_order_frames]?}
transfer 101 2
stats 1
tx=$((S[tx_frames] - tx0)) re=$((S[retransmit_frames] - re0))
to=$((S[retransmit_timeouts] - to0))
stats 2
reach=$((S[rx_drop_past_reach] - reach0)) ooo=$((S[rx_out_of_order_frames] - ooo0))
log "$tx frames sent, $re of them resent, $to timeouts"
log "host 2 held $ooo frames past gaps, dropped $reach past the reach"
check_eq "$reach" 0 "frames dropped past the reach with the default window"
# About 2% lost, and a resent frame is lost again at 2%: a resend of
# whole windows (a report that named too little) costs many times that.
# A timeout goes back over every frame the receiver has not reported,
# those still on their way included: up to a window each (grim.rst).
[ $((re * 100)) -le $((tx * 10 + to * WINDOW * 100)) ] ||
	fail "$re of $tx frames resent at 2% loss, with $to timeouts"
[ "$to" -le $((N / 5)) ] || fail "$to retransmission timeouts for $N messages"

pretty "" "a window past the reach: ethtool -G grim0 tx 4096"
nsx 1 ethtool -G grim0 tx 4096 || fail "ethtool -G grim0 tx 4096"
stats 2
reach0=${S[rx_drop_past_reach]?}
transfer 102 3
stats 2
log "most frames in flight so far: $(flight_max); host 2 dropped $((S[rx_drop_past_reach] - reach0)) frames past the reach"
check_dmesg
exit 0
