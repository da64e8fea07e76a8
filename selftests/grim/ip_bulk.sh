#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (TCP's timers against GRIM's recovery: counts TCP's retransmissions)
#
# TCP in bulk over grim0 on a lossy link, against TCP on the bare link.
#
# Two hosts; every lower link (both directions of each veth) loses 5%
# and corrupts 1% of its frames.
# 1. 200 MB from host 1 to host 2 over grim0, checked by sha256: GRIM
#    recovers every loss below IP, so TCP retransmits next to nothing
#    (the bound is below).
# 2. The same 200 MB over the bare veths, between the same hosts: TCP
#    meets every loss itself and retransmits heavily (at least 1% of its
#    segments).  It gets 12 s (times SLOW), not the whole file: under TCG
#    it moves about a sixth of a megabyte a second on these links (3,617
#    segments in 30 s, 470 of them resent, measured), where grim0 moves
#    200 MB in under 20 s.  What it moved, its rate and its
#    retransmissions are logged and compared.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd socat sha256sum nstat tc ss
require_grim

MB=${GRIM_TEST_IP_BULK_MB:-200}
tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
ip_addrs 2 eth
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.88.0.2 >/dev/null
dmesg_mark
head -c $((MB << 20)) /dev/urandom >"$tmp/in"
want=$(sha256sum <"$tmp/in")

# tcp_counters: "OutSegs RetransSegs" of host 1, absolute.
tcp_counters() {
	nsx 1 nstat -asz TcpOutSegs TcpRetransSegs |
		awk '{ v[$1] = $2 } END { print v["TcpOutSegs"] + 0, v["TcpRetransSegs"] + 0 }'
}
# transfer ADDR PORT LIMIT: send the file to ADDR:PORT; sets SEGS RETRANS
# SECS GOT (bytes that arrived).
transfer() {
	local addr=$1 port=$2 limit=$3 s0 r0
	tcp_sink 2 "$port" "$tmp/out"
	read -r s0 r0 < <(tcp_counters)
	SECS=$SECONDS
	nsx 1 timeout "$limit" socat -u OPEN:"$tmp/in" TCP:"$addr:$port"
	XRC=$?
	SECS=$((SECONDS - SECS))
	# What the sender wrote before it was stopped may still be on its
	# way; that is not waited for (the bare veths' run is cut short).
	[ $XRC -ne 0 ] || sink_done "$tmp/out" $((MB << 20)) "TCP to $addr"
	read -r SEGS RETRANS < <(tcp_counters)
	SEGS=$((SEGS - s0))
	RETRANS=$((RETRANS - r0))
	GOT=$(wc -c <"$tmp/out" 2>/dev/null || echo 0)
}

netem_links "loss 5% corrupt 1%"

pretty "" "TCP: $MB MB from host 1 to host 2 over grim0, 5% loss and 1% corruption below"
transfer 10.77.0.2 5001 $((600 * SLOW))
[ $XRC -eq 0 ] || fail "the sender over grim0 failed (exit $XRC)"
log "$((GOT >> 20)) MB in $SECS s; TCP sent $SEGS segments, retransmitted $RETRANS"
stats 1
log "host 1 grim0: retransmit_frames ${S[retransmit_frames]?} tx_frames ${S[tx_frames]?}"
check_eq "$(sha256sum <"$tmp/out")" "$want" "sha256 of what host 2 received over grim0"
# GRIM resends what the veths lose; TCP sees a loss only when a segment
# waits past TCP's own timers (a tail loss probe, now and then).
[ "$RETRANS" -le $((SEGS / 200 + 4)) ] ||
	fail "TCP over grim0 retransmitted $RETRANS of $SEGS segments (bound: 0.5% + 4)"
grim_segs=$SEGS grim_retrans=$RETRANS grim_secs=$SECS

pretty "" "TCP: the same over the bare veths, with the same loss"
transfer 10.88.0.2 5002 $((12 * SLOW))
log "$((GOT >> 20)) of $MB MB in $SECS s (exit $XRC); TCP sent $SEGS segments, retransmitted $RETRANS"
[ "$SEGS" -gt 100 ] || fail "TCP over the bare veths sent only $SEGS segments"
[ "$RETRANS" -ge $((SEGS / 100)) ] ||
	fail "TCP over the bare veths retransmitted only $RETRANS of $SEGS segments"
log "retransmitted per 1000 segments: grim0 $((grim_retrans * 1000 / grim_segs)), bare veth $((RETRANS * 1000 / SEGS))"
log "kB/s: grim0 $((MB * 1024 / (grim_secs > 0 ? grim_secs : 1))), bare veth $((GOT / 1024 / (SECS > 0 ? SECS : 1)))"
if [ $XRC -eq 0 ]; then
	check_eq "$(sha256sum <"$tmp/out")" "$want" "sha256 of what host 2 received over the veths"
fi
netem_clear
check_dmesg
exit $ksft_pass
