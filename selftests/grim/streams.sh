#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (compares the slab (SUnreclaim) before and after)
#
# Streams that come and go.
#
# Host 2 answers every message on one port (grim_rdm echo).  Host 1 makes
# COUNT sockets, a few at a time, each on an ephemeral port: one request,
# its answer checked byte for byte, close.  Every link loses 2% of its
# frames, both ways.  Every socket's channel pair is a new stream, and the
# ephemeral ports come round again, so the same channels are taken by new
# incarnations of a stream, over and over.
#
# Checks: every round trip completes with the right answer (no ENOBUFS, no
# loss); the NIs closed what they opened (tx_streams and rx_streams back
# near 0 once the streams idled out, opened == closed + live); nothing
# retransmits for ever; and the unreclaimable slab is back within BOUND_KB
# of where it started.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool

# GRIM_TEST_STREAMS_COUNT: fewer for make check-kselftest (a runner check).
COUNT=${GRIM_TEST_STREAMS_COUNT:-100000}
# GRIM_TEST_STREAMS_JOBS: sockets at a time.  Under TCG on 6.12, 100,000
# took 87 s with 4, 73 s with 8 and 80 s with 16.
JOBS=${GRIM_TEST_STREAMS_JOBS:-8}
PORT=300
BOUND_KB=2048


pretty "" "two hosts, grim links 1 and 2"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
wait_peer_up 2 1

pretty "" "2% loss on every link, both ways"
netem_links "loss 2%"

bg nsx 2 "$RDM" echo -p $PORT -t 3000
wait_bound 2 $PORT
# Let the discovery streams idle out, then take the baseline.
sleep 3
slab0=$(slab_kb)
stats 1; fail0=${S[tx_msgs_failed]?}
stats 2; fail1=${S[tx_msgs_failed]?}
log "unreclaimable slab before: $slab0 kB"

pretty "" "$COUNT sockets on host 1, $JOBS at a time: one request and its answer each"
out=$(nsx 1 "$RDM" churn -d 2 -p $PORT -n "$COUNT" -j $JOBS -S $RANDOM -t 60 2>&1)
rc=$?
echo "$out" | tail -5 | sed 's/^/    /'
[ $rc -eq 0 ] || fail "churn failed"
declare -A after=()
for i in 1 2; do
	stats $i
	for c in tx_streams_opened rx_streams_opened tx_msgs_failed rx_drop_no_stream; do
		after[$i.$c]=${S[$c]?}
	done
	log "host $i: live streams (tx rx) $(grim_streams $i)," \
	    "opened tx ${S[tx_streams_opened]?} rx ${S[rx_streams_opened]?}"
	# What recovery cost: the frames resent and what resent them.
	line=
	for c in tx_frames tx_acks retransmit_frames retransmit_timeouts \
		 retransmit_probes fast_retransmits tx_cwnd_cuts; do
		line+="$c: ${S[$c]?} "
	done
	log "host $i: $line"
done
check_eq "$((${after[1.tx_msgs_failed]} - fail0))" 0 "messages that failed on host 1"
check_eq "$((${after[2.tx_msgs_failed]} - fail1))" 0 "messages that failed on host 2"
check_eq "${after[1.rx_drop_no_stream]}" 0 "new streams host 1 had no room for"
check_eq "${after[2.rx_drop_no_stream]}" 0 "new streams host 2 had no room for"
# A socket whose ephemeral port was in use a moment before takes the
# stream that port left, if it did not idle out yet: most do not.
opened=${after[1.tx_streams_opened]}
[ "$opened" -ge $((COUNT / 2)) ] ||
	fail "host 1 opened $opened send streams for $COUNT sockets"

pretty "" "idle streams close (CLOSE, CLOSED): live counts back to 0"
# Within 6 s of the last round trip: before a receiver would forget a
# stream on its own (twice dead_ms, 8 s), so CLOSE did it.
for ((t = 0; t < 12; t++)); do
	[ "$(grim_streams 1)" = "0 0" ] && [ "$(grim_streams 2)" = "0 0" ] && break
	sleep 0.5
done
for i in 1 2; do
	read -r tx rx <<<"$(grim_streams "$i")"
	check_eq "$tx $rx" "0 0" "live streams (tx rx) on host $i"
	stats "$i"
	check_eq "${S[tx_streams_opened]?}" "${S[tx_streams_closed]?}" \
		"host $i: send streams opened = closed"
	check_eq "${S[rx_streams_opened]?}" "${S[rx_streams_closed]?}" \
		"host $i: receive streams opened = closed"
	check_eq "${S[rx_streams_expired]?}" 0 \
		"host $i: receive streams forgotten without a CLOSE"
	log "host $i: CLOSE sent ${S[tx_closes]?}, renumbered" \
	    "${S[stream_renumbers]?}, stale dropped ${S[rx_drop_stale_stream]?}"
done

pretty "" "nothing is still being sent"
f0=$(grim_stream_frames 1)
g0=$(grim_stream_frames 2)
sleep 3
check_eq "$(($(grim_stream_frames 1) - f0))" 0 "data, ACK and CLOSE frames host 1 sent in 3 s of silence"
check_eq "$(($(grim_stream_frames 2) - g0))" 0 "data, ACK and CLOSE frames host 2 sent in 3 s of silence"

pretty "" "memory: the slab is back near where it started"
netem_clear
sleep 2
slab1=$(slab_kb)
log "unreclaimable slab after: $slab1 kB (before: $slab0 kB, bound +$BOUND_KB kB)"
[ $((slab1 - slab0)) -le $BOUND_KB ] ||
	fail "unreclaimable slab grew by $((slab1 - slab0)) kB over $COUNT sockets"

check_dmesg
exit 0
