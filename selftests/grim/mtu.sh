#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lower devices' MTU goes from 1500 to 1280 and back under traffic.
#
# Frames already cut for 1500 bytes would be dropped by the switch on
# every retransmission.  The NI cuts again what it has not sent; when it
# has sent frames that no longer fit, it first asks the receiver to give
# up what it has not taken of them (ABORT), then cuts again and sends
# anew every message not delivered.  Every message is delivered exactly
# once, in order (a message reported failed, which the NI does only when
# it cannot cut it again, is never delivered); nothing hangs.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim

N=1500
sw=$SWITCH_NS

# mtu_all MTU: every link of the segment to MTU: the switch ports first
# when it goes up, last when it goes down, so that no frame cut for the
# hosts' MTU meets a smaller one on the way.
mtu_all() {
	local i dev
	if [ "$1" -gt "$(ip -n "$(host 1)" -o link show eth0 | sed 's/.* mtu \([0-9]*\).*/\1/')" ]; then
		for i in 1 2; do ip -n "$sw" link set "p$i" mtu "$1" || fail "mtu p$i"; done
		for i in 1 2; do ip -n "$(host "$i")" link set eth0 mtu "$1" || fail "mtu host $i"; done
	else
		for i in 1 2; do ip -n "$(host "$i")" link set eth0 mtu "$1" || fail "mtu host $i"; done
		for i in 1 2; do ip -n "$sw" link set "p$i" mtu "$1" || fail "mtu p$i"; done
	fi
}

pretty "" "2 hosts, a bottleneck to host 2; host 1 sends $N messages of 0..64572 bytes to it"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
# A bottleneck, so that frames are in flight when the MTU changes, and a
# window of 8 frames on host 1, so that frames of its messages wait to
# be sent then too, however fast or slow the kernel sends.  A debug
# kernel (SLOW 5) sends at about 4 Mbit/s, and its messages would not
# queue up at all: the bottleneck is 50 / SLOW^2 Mbit/s (2 there), and
# the receiver waits SLOW times longer.
require_mod sch_netem
rate=$((50000 / SLOW / SLOW))
log "bottleneck: $rate kbit/s"
tc -n "$sw" qdisc add dev p2 root netem rate ${rate}kbit limit 5000 ||
	fail "netem rate"
nsx 1 ethtool -G grim0 tx 8 || fail "ethtool -G grim0 tx 8"
at_exit "tc -n $sw qdisc del dev p2 root 2>/dev/null"
snd=$(mktemp) rcv=$(mktemp)
at_exit "rm -f $snd $rcv"
bg nsx 2 "$RDM" recv -p 100 -n $N -t $((150 * SLOW)) -g >"$rcv"
rpid=$!
wait_bound 2 100
nsx 1 "$RDM" errq -d 2 -p 100 -n $N -m 0 -M 64572 -w 8000 >"$snd" &
spid=$!

pretty "" "the MTU goes down to 1280 and up again, twice, while they flow"
for round in 1 2; do
	sleep 1
	mtu_all 1280
	log "round $round: MTU 1280 ($(grep -c '^failed ' "$snd") failed so far)"
	sleep 1
	mtu_all 1500
	log "round $round: MTU 1500"
done
wait $spid || fail "sender: $(tail -n 3 "$snd")"
wait $rpid || fail "receiver: $(grep -v '^missing' "$rcv" | tail -n 5)"
log "$(grep '^errq: sent' "$snd")"
log "$(tail -n 3 "$rcv" | grep -v '^missing')"

pretty "" "delivered once or reported failed (EMSGSIZE), never both"
failed=$(grep '^failed ' "$snd" | awk '{ print $2 }' | sort)
missing=$(grep '^missing ' "$rcv" | awk '{ print $2 }' | sort)
nf=$(grep -c '^failed ' "$snd")
log "$nf failed, $(stat 1 tx_msgs_recut) cut again, $(stat 1 tx_aborts) ABORTs sent"
[ "$(stat 1 tx_msgs_recut)" -gt 0 ] || fail "no message was cut again: the MTU change missed the traffic"
check_eq "$nf" 0 "messages that failed (each could be cut again)"
[ "$failed" = "$missing" ] ||
	fail "the messages reported failed are not those host 2 missed: failed [$failed] missing [$missing]"
check_eq "$(stat 2 rx_msgs)" $((N - nf)) "messages delivered"
check_dmesg
exit 0
