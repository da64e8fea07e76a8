#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Messages that cannot be delivered are reported to their sender, each
# one once, on the socket's error queue (MSG_ERRQUEUE), with the errno
# of the reason; nothing else the socket does is affected.
#
# 1. To a port nobody bound: the receiving NI rejects the message on the
#    wire (REJECT) and the sender learns ECONNREFUSED for exactly that
#    message, one frame long or many; the messages to a bound port in
#    between, from the same socket, are delivered in order.
# 2. A sender that closes its socket while the receiver refuses its
#    messages: they are given up after dead_ms, not retried for ever.
# 3. A peer that dies (its link cut) with 100 messages queued to it:
#    after dead_ms, exactly those 100 are reported, EHOSTUNREACH.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim

pretty "" "2 hosts; host 2 has a receiver on port 100, nothing on port 555"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
out=$(mktemp)
at_exit "rm -f $out"

# errq_check OUT N ERRNO: OUT reports exactly N failures, all with ERRNO.
errq_check() {
	local n bad
	n=$(grep -c '^failed ' "$1")
	bad=$(grep '^failed ' "$1" | grep -vc "errno $3 ")
	if [ "$n" != "$2" ]; then
		# Which case: reports dropped (SO_ERROR ENOBUFS, tx_msgs_failed
		# at N) or messages not failed (SIOCOUTQ above 0).
		grep '^errq:' "$1" >&2
		nsx 1 ethtool -S grim0 | grep -E 'tx_msgs_failed|rejects|renumbers|stale_stream|streams_' >&2
	fi
	check_eq "$n" "$2" "messages reported failed"
	check_eq "$bad" 0 "reports with another errno than $3"
}

pretty "" "one-frame messages alternate between port 555 (unbound) and port 100"
bg nsx 2 "$RDM" recv -p 100 -n 20 -t 60
r=$!
wait_bound 2 100
rej0=$(stat 1 rx_rejects)
nsx 1 "$RDM" errq -d 2 -p 555 -q 100 -n 40 -m 0 -M 1000 -x 20 >"$out" ||
	fail "errq: $(cat "$out")"
wait $r || fail "the messages to port 100 did not all arrive, in order"
log "$(tail -n 1 "$out")"
errq_check "$out" 20 111
check_eq "$(grep '^failed ' "$out" | grep -vc '^failed 555:')" 0 "reports naming port 100"
[ "$(stat 2 tx_rejects)" -ge 20 ] || fail "host 2 sent no REJECTs"
check_eq "$(($(stat 1 rx_rejects) - rej0))" 20 "REJECTs host 1 acted on"

pretty "" "the same with 64000-byte messages (45 frames each)"
bg nsx 2 "$RDM" recv -p 101 -n 5 -t 60
r=$!
wait_bound 2 101
nsx 1 "$RDM" errq -d 2 -p 556 -q 101 -n 10 -m 64000 -M 64000 -x 5 >"$out" ||
	fail "errq: $(cat "$out")"
wait $r || fail "the messages to port 101 did not all arrive, in order"
log "$(tail -n 1 "$out")"
errq_check "$out" 5 111
check_eq "$(grep -c 'len 64000$' "$out")" 5 "reports giving the message length"

pretty "" "under 10% loss and reordering, 200 messages, half to an unbound port"
netem_links "loss 10% delay 1ms reorder 25% 50%"
bg nsx 2 "$RDM" recv -p 102 -n 100 -t 120
r=$!
wait_bound 2 102
nsx 1 "$RDM" errq -d 2 -p 557 -q 102 -n 200 -m 0 -M 3000 -x 100 -w 30000 >"$out" ||
	fail "errq: $(cat "$out")"
wait $r || fail "the messages to port 102 did not all arrive, in order"
log "$(tail -n 1 "$out")"
errq_check "$out" 100 111
netem_clear

pretty "" "a sender closes while host 2 refuses its messages: given up after dead_ms"
bg nsx 2 "$RDM" recv -p 104 -n 1000 -t 120 -s 600000000 -r 4096
wait_bound 2 104
f0=$(stat 1 tx_msgs_failed)
m0=$(stat 2 rx_msgs)
nsx 1 "$RDM" send -d 2 -p 104 -n 8 -m 16000 -M 16000 -S 9 >"$out" ||
	fail "send: $(cat "$out")"
sleep 1
[ "$(stat 1 rx_nacks)" -gt 0 ] || fail "host 2 did not refuse the messages"
for ((i = 0; i < 80; i++)); do
	n=$((($(stat 1 tx_msgs_failed) - f0) + ($(stat 2 rx_msgs) - m0)))
	[ "$n" -ge 8 ] && break
	sleep 0.1
done
failed=$(($(stat 1 tx_msgs_failed) - f0))
got=$(($(stat 2 rx_msgs) - m0))
log "$got delivered, $failed given up"
check_eq "$((failed + got))" 8 "messages delivered or given up"
[ "$failed" -ge 1 ] || fail "no message was given up"
n1=$(stat 2 tx_nacks)
sleep 1
check_eq "$(stat 2 tx_nacks)" "$n1" "NACKs after the messages were given up"
f0=$((f0 + failed))

pretty "" "host 2 falls silent with 100 messages queued to it"
bg nsx 2 "$RDM" recv -p 103 -n 1000 -t 120
r=$!
wait_bound 2 103
ip -n "$(host 2)" link set eth0 down
nsx 1 "$RDM" errq -d 2 -p 103 -n 100 -m 100 -M 1000 -x 100 -w 15000 >"$out" ||
	fail "errq: $(cat "$out")"
log "$(tail -n 1 "$out")"
errq_check "$out" 100 113
[ "$(stat 1 peer_down_events)" -ge 1 ] || fail "the peer was not declared down"
check_eq "$(($(stat 1 tx_msgs_failed) - f0))" 100 "messages failed at host 1 since"
check_dmesg
exit 0
