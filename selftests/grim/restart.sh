#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (echo gaps bounded in ms; busy on its own)
#
# A peer restarts under 5,000 live streams.
#
# Host 1 keeps 5,000 sockets talking to an echo server on host 2 (grim_rdm
# fan: one request out per socket, the next when its echo or its failure
# report comes), over links that delay every frame, so that frames are on
# the wire at any time.  The links keep a send stream 10 s after its last
# message (streamidle), so that every socket's streams stay live between
# its requests however slow the machine.  With 5,000 streams live each
# way, host 2's grim link is deleted and made again: a restart of its NI.
#
# Checks: host 1 fails what the old NI had not acknowledged (ECONNRESET,
# each reported once), echoes stop for at most 3 s (SLOW times that) at
# the restart and go on over new streams, no request is echoed twice and
# none out of order (fan checks every echo),
# every socket keeps going, and once the traffic stops both NIs forget
# their streams and send nothing more: nothing retransmits for ever.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

# make check-debug runs it with fewer (GRIM_TEST_RESTART_STREAMS): its
# kernel checks every allocation and lock, and is not for scale.
N=${GRIM_TEST_RESTART_STREAMS:-5000}
PORT=400
# The traffic's length: the restart comes about 6 s in, and a request
# the old NI took is given up 15 s after it was sent (fan -G).  A socket
# whose next answer is lost too (the echo server drops an answer its
# sendto or its error queue reports failed) waits 15 s more.  fan stops
# 3 s after every socket has had an echo since the restart (-E), or
# after SECS.
SECS=$((SLOW > 1 ? 90 : 60))
# A restart is a new NI heard from before the old one is declared dead
# (dead_ms): then what the old one took fails with ECONNRESET.  Deleting
# a link with thousands of streams and making a new one takes seconds on
# a debug kernel (SLOW 5), where dead_ms and the gap bound stretch with
# it; a restart slower than dead_ms is a peer that went down
# (EHOSTUNREACH, peer_down.sh).
DEAD_MS=$((4000 * SLOW))
GAP_MS=$((3000 * SLOW))


pretty "" "two hosts, grim links 1 and 2, 5 ms more on every link"
setup_hosts 2
grim_cluster 2
for i in 1 2; do
	ip -n "$(host $i)" link set grim0 type grim streamidle 10000 dead $DEAD_MS ||
		fail "streamidle and dead_ms on host $i"
done
check_match "$(ip -n "$(host 1)" -d link show grim0)" "streamidle 10000ms" \
	"ip -d link shows streamidle"
netem_links "delay 5ms"
wait_peer_up 1 2
wait_peer_up 2 1

# Room for a request of every socket: the echo is not the bottleneck.
bg nsx 2 "$RDM" echo -p $PORT -t 600 -r $((N * 4096))
wait_bound 2 $PORT
out=$(mktemp)
at_exit "rm -f $out"
failed0=$(stat 1 tx_msgs_failed)

pretty "" "$N sockets on host 1, each with a request out to host 2 at a time"
ulimit -n $((N + 100)) || fail "cannot have $N sockets open"
# A request waits behind every other socket's, N over the echo server's
# rate: 2 to 8 s under TCG for 5,000.  fan takes one for lost after 15 s;
# given up sooner, requests that were only slow come back as more load.
nsx 1 "$RDM" fan -d 2 -p $PORT -n $N -T $SECS -G 15000 -E 3000 >"$out" 2>&1 &
fan=$!
_PIDS+=($fan)
for ((t = 0; t < 100; t++)); do
	read -r tx rx <<<"$(grim_streams 1)"
	[ "$tx" -ge $N ] && [ "$rx" -ge $((N * 9 / 10)) ] && break
	sleep 0.2
done
log "host 1 holds $tx send and $rx receive streams" \
    "(opened $(stat 1 tx_streams_opened) and $(stat 1 rx_streams_opened)," \
    "closed $(stat 1 tx_streams_closed) and $(stat 1 rx_streams_closed))"
[ "$tx" -ge $N ] && [ "$rx" -ge $((N * 9 / 10)) ] ||
	fail "host 1 never held $N streams to host 2: $(tail -3 "$out")"
log "host 2 holds $(grim_streams 2) (tx rx)"

pretty "" "host 2's link is deleted and made again"
ip -n "$(host 2)" link del grim0 || fail "link del"
check_ok grim_add "$(host 2)" eth0 grim0 address 00:00:00:02
ip -n "$(host 2)" link set grim0 type grim streamidle 10000 dead $DEAD_MS ||
	fail "streamidle and dead_ms"
ip -n "$(host 2)" link set grim0 up || fail "grim0 up on host 2"
pretty "" "the sockets keep going: every echo once, in order"
wait $fan
rc=$?
{ grep -v "no echo since" "$out" | tail -4; grep "no echo since" "$out"; } |
	sed 's/^/    /'
[ $rc -eq 0 ] || fail "fan failed"
last=$(grep "sockets, .* echoes" "$out" | tail -1)
reports=$(sed -n 's/.* \([0-9]*\) reports .*/\1/p' <<<"$last")
resets=$(sed -n 's/.*(\([0-9]*\) ECONNRESET).*/\1/p' <<<"$last")
echoes=$(sed -n 's/.*sockets, \([0-9]*\) echoes.*/\1/p' <<<"$last")
[ -n "$reports" ] && [ -n "$echoes" ] || fail "no summary from fan"
check_eq "$(($(stat 1 tx_msgs_failed) - failed0))" "$reports" \
	"messages failed on host 1 = failure reports its sockets read"
[ "$resets" -gt 0 ] || fail "no request failed with ECONNRESET: was anything out?"
[ "$echoes" -gt $((N * 2)) ] || fail "only $echoes echoes for $N sockets in $SECS s"
after=$(sed -n 's/.* \([0-9]*\) echoes after the first report.*/\1/p' <<<"$last")
given=$(sed -n 's/.* \([0-9]*\) given up.*/\1/p' <<<"$last")
# Requests the old link took whose answers the echo server could not
# send while host 2 had no link: one per socket at most.
[ "$given" -le $N ] || fail "$given requests lost, more than one per socket"
[ "$after" -ge $N ] || fail "only $after echoes after the restart"
socks=$(sed -n 's/.* to \([0-9]*\) sockets,.*/\1/p' <<<"$last")
check_eq "$socks" $N "sockets that had an echo after the restart"
# The restart is the longest time with no echo: the new link must be
# found and its session made.  fan measures it.
gap=$(sed -n 's/.*longest gap \([0-9]*\) ms.*/\1/p' <<<"$last")
log "longest time with no echo at all: $gap ms"
[ "$gap" -le $GAP_MS ] || fail "echoes stopped for $gap ms, more than $GAP_MS ms"
m=$(stat 2 rx_msgs)
[ "$m" -gt 0 ] || fail "the new link on host 2 took no request"
log "the new link took $m requests and answered $(stat 2 tx_msgs)"
log "old-session frames dropped by the new link: $(stat 2 rx_drop_stale_session)"

pretty "" "traffic over: every stream closes, nothing is sent any more"
for ((t = 0; t < 200; t++)); do
	[ "$(grim_streams 1)" = "0 0" ] && [ "$(grim_streams 2)" = "0 0" ] && break
	sleep 0.2
done
check_eq "$(grim_streams 1)" "0 0" "live streams (tx rx) on host 1"
check_eq "$(grim_streams 2)" "0 0" "live streams (tx rx) on host 2"
f0=$(grim_stream_frames 1)
g0=$(grim_stream_frames 2)
sleep 3
check_eq "$(($(grim_stream_frames 1) - f0))" 0 "data, ACK and CLOSE frames host 1 sent in 3 s of silence"
check_eq "$(($(grim_stream_frames 2) - g0))" 0 "data, ACK and CLOSE frames host 2 sent in 3 s of silence"

check_dmesg
exit 0
