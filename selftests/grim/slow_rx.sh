#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A receiver that reads slowly: the receiving NI NACKs what the endpoint
# has no room for, senders roll back and wait (a blocking sender blocks,
# a non-blocking one gets EAGAIN), and not one message is lost.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim

N=150		# per sender
SLOW_US=20000	# the receiver sleeps this long after every message

pretty "" "2 hosts; host 2 reads one message per $((SLOW_US / 1000)) ms into a 32 KB buffer"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
# wait_peer_up's probe was rejected (port 9): count only what follows.
fail1=$(stat 1 tx_msgs_failed) fail2=$(stat 2 tx_msgs_failed)
bg nsx 2 "$RDM" recv -p 100 -n $((2 * N)) -t 200 -s $SLOW_US -r 16384
rpid=$!
wait_bound 2 100

pretty "" "a blocking and a non-blocking sender, $N messages of up to 16 KB each"
out1=$(mktemp) out2=$(mktemp)
at_exit "rm -f $out1 $out2"
nsx 1 "$RDM" send -d 2 -p 100 -n $N -m 2000 -M 16384 -S 1 >"$out1" &
p1=$!
nsx 1 "$RDM" send -d 2 -p 100 -n $N -m 2000 -M 16384 -S 2 -D >"$out2" &
p2=$!
wait $p1 || fail "blocking sender failed: $(cat "$out1")"
wait $p2 || fail "non-blocking sender failed: $(cat "$out2")"
wait $rpid || fail "the slow receiver lost or misordered messages"
log "$(cat "$out1")"
log "$(cat "$out2")"

pretty "" "NACKs rose, senders waited, nothing was dropped"
nacks_tx=$(stat 2 tx_nacks)
nacks_rx=$(stat 1 rx_nacks)
log "host 2 sent $nacks_tx NACKs, host 1 received $nacks_rx"
[ "$nacks_tx" -gt 0 ] || fail "the receiving NI never refused a message"
[ "$nacks_rx" -gt 0 ] || fail "the sending NI never saw a NACK"
[ "$(stat 2 rx_drop_stream_refused)" -ge 0 ] || fail "counter missing"
ms=$(sed -n 's/.* in \([0-9]*\) ms.*/\1/p' "$out1")
# The receiver needs N*2*SLOW_US to drain both senders.  A send returns
# once its message is in the socket's send buffer, and the receiver
# takes this sender's messages first when the other one backs off, so a
# sender that blocked correctly may finish after only about N - (what
# the send and receive buffers hold) of its messages were read: well
# under N*SLOW_US.  A sender that did not block finishes in tens of ms.
[ "$ms" -ge $((N * SLOW_US / 2000)) ] ||
	fail "blocking sender finished in $ms ms: it did not wait for the receiver"
eagain=$(sed -n 's/.*, \([0-9]*\) EAGAIN.*/\1/p' "$out2")
[ "$eagain" -gt 0 ] || fail "non-blocking sender never saw EAGAIN"
check_eq "$(stat 2 rx_msgs)" $((2 * N)) "messages delivered"
check_eq "$(($(stat 1 tx_msgs_failed) - fail1))" 0 "failed messages"
check_dmesg
exit 0
