#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (the deletion bounded in ms; RTNL)
#
# The lower device of a grim link is deleted while a sender uses it.
#
# 1. A sender blocked in sendmsg(): its send buffer is full of messages
#    to a receiver that does not read, on one NI, and it waits to send to
#    a node that a second NI of the host reaches.  That second NI's lower
#    device is deleted.  The deletion must not wait for the sender (it
#    holds RTNL while it waits), the grim link goes at once, and when
#    the sender wakes its send fails with a clear errno.
# 2. The same under bulk traffic: 64000-byte messages stream to a
#    receiver when the sender's lower device is deleted.  The sender stops
#    with ENETDOWN or EHOSTUNREACH, and the grim link is gone.
#
# On a debug kernel (make check-debug) KASAN watches for any use of the
# lower device after it was freed.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool timeout
require_grim

DEL_MS=$((3000 * SLOW))	# what a deletion may take here, slack for an emulator

# del_timed NS DEV: delete DEV in NS; prints the milliseconds it took, or
# "hung" when it did not finish in 20 s.  The ip command then runs on in
# the background and ends when whatever held the device lets go.
del_timed() {
	local t0 t1 pid i
	t0=$(date +%s%N)
	# Not on our stdout: the caller's $(...) would wait for it.
	ip -n "$1" link del "$2" >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid || fail "ip link del $2 failed"
			t1=$(date +%s%N)
			echo $(((t1 - t0) / 1000000))
			return 0
		fi
		sleep 0.1
	done
	echo hung
}

pretty "" "host 1 has two NIs: grim0 to hosts 1-2, grim1 on a second link to host 3"
setup_hosts 3
grim_cluster 2
h1=$(host 1) h3=$(host 3)
ip -n "$h1" link add x1 type veth peer name x3 netns "$h3" || fail "veth x1-x3"
ip -n "$h1" link set x1 up
ip -n "$h3" link set x3 up
grim_add "$h1" x1 grim1 address "$(grim_addr 11)" || fail "grim1 on host 1"
grim_add "$h3" x3 grim0 address "$(grim_addr 3)" || fail "grim0 on host 3"
ip -n "$h1" link set grim1 up
ip -n "$h3" link set grim0 up
wait_peer_up 1 2
wait_peer_up 1 3

pretty "" "a sender blocked in sendmsg() toward node 3, its buffer full of messages to node 2"
# Host 2 binds port 100 with a small buffer and never reads.
bg nsx 2 "$RDM" recv -p 100 -n 1000000 -t 600 -s 600000000 -r 4096
rpid=$!
wait_bound 2 100
out=$(mktemp)
at_exit "rm -f $out"
nsx 1 "$RDM" wedge -d 2 -p 100 -e 3 >"$out" &
wpid=$!
for ((i = 0; i < 100; i++)); do
	grep -q wedged "$out" && break
	sleep 0.1
done
grep -q wedged "$out" || fail "the sender never filled its buffer: $(cat "$out")"
sleep 1
kill -0 $wpid 2>/dev/null || fail "the sender did not block: $(cat "$out")"
log "$(head -n 1 "$out")"

pretty "" "grim1's lower device is deleted under the blocked sender"
ms=$(del_timed "$h1" x1)
if [ "$ms" = hung ]; then
	# Let the sender go (its receiver closes), so the VM recovers.
	kill $rpid 2>/dev/null
	pkill -P $rpid 2>/dev/null
	fail "deleting the lower device waited for the blocked sender"
fi
log "the deletion took $ms ms"
[ "$ms" -le $DEL_MS ] || fail "the deletion took $ms ms (at most $DEL_MS)"
ip -n "$h1" link show grim1 >/dev/null 2>&1 && fail "grim1 is still there"
kill -0 $wpid 2>/dev/null || fail "the sender woke before its buffer drained: $(cat "$out")"

pretty "" "the receiver on host 2 goes; the sender wakes and learns node 3 is gone"
pkill -P $rpid 2>/dev/null
kill $rpid 2>/dev/null
wait $rpid 2>/dev/null
for ((i = 0; i < 100; i++)); do
	kill -0 $wpid 2>/dev/null || break
	sleep 0.1
done
kill -0 $wpid 2>/dev/null && fail "the sender is still blocked: $(cat "$out")"
wait $wpid || fail "wedge failed: $(cat "$out")"
log "$(tail -n 1 "$out")"
check_match "$(tail -n 1 "$out")" "errno (113|100)\)" "the blocked send's errno (EHOSTUNREACH or ENETDOWN)"

pretty "" "bulk traffic from host 1 to host 2 when host 1's eth0 is deleted"
bg nsx 2 "$RDM" recv -p 101 -n 100000000 -t 600
wait_bound 2 101
nsx 1 "$RDM" send -d 2 -p 101 -m 64000 -M 64000 -E >"$out" &
spid=$!
sleep 2
kill -0 $spid 2>/dev/null || fail "sender stopped early: $(cat "$out")"
before=$(stat 2 rx_msgs)
[ "$before" -gt 0 ] || fail "no bulk traffic reached host 2"
ms=$(del_timed "$h1" eth0)
[ "$ms" = hung ] && fail "deleting eth0 under bulk traffic hung"
log "host 2 had $before messages; the deletion took $ms ms"
[ "$ms" -le $DEL_MS ] || fail "the deletion took $ms ms (at most $DEL_MS)"
ip -n "$h1" link show grim0 >/dev/null 2>&1 && fail "grim0 is still there"
for ((i = 0; i < 100; i++)); do
	kill -0 $spid 2>/dev/null || break
	sleep 0.1
done
kill -0 $spid 2>/dev/null && fail "the sender did not stop: $(cat "$out")"
rc=0
wait $spid || rc=$?
log "$(cat "$out")"
check_eq "$rc" 3 "sender exit (3: a send failed)"
check_match "$(cat "$out")" "errno (113|100)\)" "the sender's errno (EHOSTUNREACH or ENETDOWN)"
check_dmesg
exit 0
