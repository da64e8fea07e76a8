#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (the tracing buffer and its filters are global)
#
# The transport's tracepoints (events/grim) fire during a transfer: peer
# state changes, messages sent and delivered, ACKs, NACKs from a full
# endpoint, retransmissions over a lossy link.  Then malformed frames
# reach drop monitors (skb:kfree_skb) with the drop reason their counter
# maps to.

source "$(dirname "$0")/lib.sh"
require_root
require_grim

T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events/grim ] || skip "no tracefs or no grim events"
at_exit "echo 0 > $T/events/grim/enable; echo > $T/trace"
echo > $T/trace
echo 1 > $T/events/grim/enable || fail "enable events/grim"

pretty "" "2 hosts come up, then a lossy transfer to a slow receiver"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
netem_links "loss 5%"
bg nsx 2 "$RDM" recv -p 100 -n 200 -t 120 -s 5000 -r 8192
r=$!
wait_bound 2 100
nsx 1 "$RDM" send -d 2 -p 100 -n 200 -m 1000 -M 20000 -S 1 >/dev/null || fail "send"
wait $r || fail "messages lost"
echo 0 > $T/events/grim/enable

pretty "" "what the trace shows"
for ev in grim_peer_state grim_msg_tx grim_msg_rx grim_ack grim_nack \
	  grim_retransmit grim_timeout; do
	log "$ev: $(grep -c " $ev: " $T/trace)"
done
grep -m1 " grim_msg_tx: " $T/trace | sed 's/^/    /'
grep -m1 " grim_nack: " $T/trace | sed 's/^/    /'
for ev in grim_peer_state grim_msg_tx grim_msg_rx grim_ack grim_nack grim_retransmit; do
	grep -q " $ev: " $T/trace || fail "tracepoint $ev never fired"
done
check_match "$(grep -m1 ' grim_peer_state: ' $T/trace)" "state=up" "peer state event"
# Every message sent (200 of ours, and wait_peer_up's probes) was traced.
n=$(grep " grim_msg_rx: " $T/trace | grep -c "chan=[0-9]*->100 ")
check_eq "$n" 200 "grim_msg_rx events for port 100"

# Drop monitors see why the NI dropped a frame: frames of GRIM's
# EtherType freed by kfree_skb_reason() with the core reason nearest to
# the counter that took them (grim.rst, after the table of counters).
pretty "" "drop reasons in skb:kfree_skb for malformed frames"
INJECT=$(dirname "$0")/grim_inject
[ -x "$INJECT" ] || fail "grim_inject not built"
K=20
ev=$T/events/skb/kfree_skb
[ -d "$ev" ] || fail "no skb:kfree_skb event"
netem_clear
echo > $T/trace
echo "protocol == $(printf %d 0x88b5)" > "$ev/filter" || fail "kfree_skb filter"
at_exit "echo 0 > $ev/enable; echo 0 > $ev/filter"
echo 1 > "$ev/enable" || fail "enable skb:kfree_skb"
# mode and the reason its frames must be dropped with
for mr in badcsum:SKB_CSUM badmagic:INVALID_PROTO badversion:UNHANDLED_PROTO \
	  short:PKT_TOO_SMALL; do
	m=${mr%%:*} want=${mr#*:}
	b=$(grep -c "reason: $want" $T/trace)
	nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m "$m" -k $K -S 7 >/dev/null 2>&1 ||
		fail "grim_inject -m $m"
	sleep 0.5
	a=$(grep -c "reason: $want" $T/trace)
	log "$m: $((a - b)) frames freed with reason $want"
	[ $((a - b)) -ge $K ] || fail "$m: $((a - b)) of $K frames freed with reason $want"
done
echo 0 > "$ev/enable"
n=$(grep -c " kfree_skb: " $T/trace)
u=$(grep " kfree_skb: " $T/trace | grep -c "reason: NOT_SPECIFIED")
log "$n GRIM frames freed as drops in all, $u without a reason"
check_dmesg
exit 0
