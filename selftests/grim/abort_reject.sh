#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An ABORT right after a rejected message is answered, and the stream
# goes on.
#
# A message that meets a closed port is rejected at its last frame: the
# sender fails it and moves past it, while the receiver waits for the next
# frame to say so (GRIM_XF_SKIP).  If that frame is lost and the lower MTU
# then goes down, the sender asks the receiver to give up what it sent
# (ABORT) before the skip was seen: the receiver answers from the
# rejected frame, which the sender had already moved past.  That answer
# must still end the ABORT: the message after the rejected one is cut
# again for the new MTU and delivered, nothing is refused for ever.
#
# Host 1 keeps one stream (source port 700) to port 100 on host 2:
#   message A is delivered; the receiver closes; message B is rejected
#   (ECONNREFUSED); a new receiver binds port 100; host 1's DATA frames
#   are dropped on its own egress while message C (5000 bytes, 4 frames
#   at MTU 1500) goes out, then host 1's MTU goes to 1280 and the drop
#   ends.  C must arrive, once and whole.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc
require_grim
require_ip_grim
require_mod sch_ingress
require_mod cls_u32
require_mod act_gact

SRC=700

# drop_data on|off: host 1's GRIM DATA frames (type 1) dropped at egress.
drop_data() {
	if [ "$1" = on ]; then
		tc -n "$(host 1)" qdisc add dev eth0 clsact || fail "clsact"
		tc -n "$(host 1)" filter add dev eth0 egress protocol 0x88b5 \
			u32 match u8 0x01 0xff at 3 action drop || fail "u32 filter"
	else
		tc -n "$(host 1)" qdisc del dev eth0 clsact || fail "clsact del"
	fi
}

pretty "" "2 hosts; host 1's stream from port $SRC to port 100 stays open"
setup_hosts 2
grim_cluster 2
ip -n "$(host 1)" link set grim0 type grim streamidle 600000 ||
	fail "streamidle on host 1"
wait_peer_up 1 2

pretty "" "message A delivered, then the receiver closes"
nsx 2 "$RDM" recv -p 100 -n 1 -t 30 >/dev/null &
rpid=$!
wait_bound 2 100
nsx 1 "$RDM" send -d 2 -p 100 -b $SRC -n 1 -m 100 -M 100 -S 1 >/dev/null ||
	fail "send A"
wait $rpid || fail "A was not received"

pretty "" "message B meets the closed port"
rej0=$(stat 1 rx_rejects)
out=$(nsx 1 "$RDM" errq -d 2 -p 100 -b $SRC -n 1 -m 100 -M 100 -x 1 -w 5000 2>&1)
log "$out"
check_match "$out" "errno 111" "B reported ECONNREFUSED"
check_eq $(($(stat 1 rx_rejects) - rej0)) 1 "REJECTs host 1 took"

pretty "" "a new receiver; message C sent while host 1's DATA frames are dropped"
out=$(mktemp)
at_exit "rm -f $out"
nsx 2 "$RDM" recv -p 100 -n 1 -t 60 >"$out" 2>&1 &
rpid=$!
wait_bound 2 100
drop_data on
aborts0=$(stat 1 tx_aborts)
bad0=$(stat 1 rx_drop_bad_ack)
nsx 1 "$RDM" send -d 2 -p 100 -b $SRC -n 1 -m 5000 -M 5000 -S 3 >/dev/null ||
	fail "send C"
sleep 1
pretty "" "host 1's MTU to 1280, then its DATA frames go through again"
ip -n "$(host 1)" link set eth0 mtu 1280 || fail "mtu 1280"
sleep 1
drop_data off
wait $rpid || {
	cat "$out" >&2
	log "tx_aborts +$(($(stat 1 tx_aborts) - aborts0))," \
		"rx_drop_bad_ack +$(($(stat 1 rx_drop_bad_ack) - bad0))"
	fail "C never arrived"
}
log "$(cat "$out")"
log "tx_aborts +$(($(stat 1 tx_aborts) - aborts0))," \
	"rx_drop_bad_ack +$(($(stat 1 rx_drop_bad_ack) - bad0))"
[ "$(stat 1 tx_aborts)" -gt "$aborts0" ] || fail "no ABORT was sent: the test missed its case"
check_eq $(($(stat 1 rx_drop_bad_ack) - bad0)) 0 "answers host 1 refused"
check_dmesg
exit 0
