#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (unloads the module; deletes links under traffic)
#
# IP over GRIM while the configuration changes under traffic.  Four
# hosts, IPv4 and IPv6 on grim0.
#
# 1. MTU changes on both ends during a TCP transfer: it completes, and
#    its sha256 is right.
# 2. grim0 down and up on the receiver, then the lower eth0 down and up
#    on the sender, each during a TCP transfer: TCP carries on once the
#    link is back, and the sha256 is right.
# 3. The lower device of host 3 is deleted while TCP streams to it: its
#    grim0 goes with it, host 1's sender fails cleanly (a TCP timeout,
#    bounded here by TCP_USER_TIMEOUT), and hosts 1 and 2 carry on.
# 4. Host 4's namespace is deleted with TCP connections open in both
#    directions: it is torn down (no "waiting for grim0 to become free"),
#    and host 1's side of the connections fails cleanly.
# 5. rmmod with addresses configured and TCP running over grim0: it
#    succeeds, the sender fails cleanly (its user timeout: the route
#    went with grim0), and the module loads again.
# No splat in the kernel log at any point.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd socat sha256sum ss timeout
require_grim_reload

MB=64
tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 4
ip_ipv6_on
grim_cluster 4
for i in 2 3 4; do
	wait_peer_up 1 $i
done
ip_addrs 4
for i in 2 3 4; do
	check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.$i >/dev/null
done
dmesg_mark
head -c $((MB << 20)) /dev/urandom >"$tmp/in"
want=$(sha256sum <"$tmp/in")

# transfer_during PORT ADDR CMD...: the file from host 1 to host 2 over
# TCP to ADDR:PORT while CMD runs (in the background, from when the
# transfer starts); CMD must succeed, and the sha256 must be right.
transfer_during() {
	local port=$1 addr=$2 rc crc
	shift 2
	rm -f "$tmp/done"
	tcp_sink 2 "$port" "$tmp/out" TCP6-LISTEN:"$port",reuseaddr
	"$@" &
	local cpid=$!
	nsx 1 timeout $((120 * SLOW)) socat -u OPEN:"$tmp/in" TCP:"$addr":"$port"
	rc=$?
	touch "$tmp/done"
	wait $cpid
	crc=$?
	[ $rc -eq 0 ] || fail "the transfer to $addr:$port failed (exit $rc)"
	[ $crc -eq 0 ] || fail "$1 during the transfer failed (exit $crc)"
	sink_done "$tmp/out" $((MB << 20)) "TCP to $addr during $1"
	check_eq "$(sha256sum <"$tmp/out")" "$want" "sha256 of what host 2 received"
}

# mtu_churn: both ends' MTUs change every 0.2 s until the transfer is
# done; at least 3 changes must fall within it.
mtu_churn() {
	local m n=0
	while [ ! -e "$tmp/done" ]; do
		for m in 1280 9000 1500 64000 2000 64572 4000; do
			[ -e "$tmp/done" ] && break
			ip -n "$(host 1)" link set grim0 mtu $m ||
				fail "host 1: mtu $m refused"
			ip -n "$(host 2)" link set grim0 mtu $((m == 1280 ? 9000 : 1280)) ||
				fail "host 2: mtu refused"
			n=$((n + 1))
			sleep 0.2
		done
	done
	ip -n "$(host 1)" link set grim0 mtu 64572
	ip -n "$(host 2)" link set grim0 mtu 64572
	log "$n MTU changes on each end during the transfer"
	[ $n -ge 3 ] || fail "only $n MTU changes during the transfer"
}
pretty "" "MTU changes on both ends during a $MB MB TCP transfer (IPv4, then IPv6)"
transfer_during 5001 10.77.0.2 mtu_churn
transfer_during 5002 "[fd77::2]" mtu_churn
log "host 1 grim0: $(nsx 1 ip -s link show dev grim0 | tr -s ' \n' ' ')"

# transfer_started: until host 2 has some of the file.  A link taken
# down before TCP connected tests the connect (the neighbour goes with
# the carrier: "No route to host"), not the transfer: on the debug
# kernel socat took longer to connect than the 0.3 s the flaps once
# waited.
transfer_started() {
	local t
	for ((t = 0; t < 300 * SLOW; t++)); do
		[ -s "$tmp/out" ] && return 0
		[ -e "$tmp/done" ] && break
		sleep 0.1
	done
	fail "the transfer did not start"
}
# link_flap HOST DEV: DEV of HOST down for a second, once the transfer
# runs.
link_flap() {
	transfer_started
	sleep 0.3
	[ -e "$tmp/done" ] && fail "the transfer ended before $2 went down"
	ip -n "$(host "$1")" link set "$2" down || fail "$2 down on host $1"
	sleep 1
	ip -n "$(host "$1")" link set "$2" up || fail "$2 up on host $1"
}
pretty "" "grim0 down and up on host 2 during a transfer"
transfer_during 5003 10.77.0.2 link_flap 2 grim0
# Down takes the IPv6 addresses (not the nodad ones kept below); put
# back what the tests after need.
ip -n "$(host 2)" addr replace fd77::2/64 dev grim0 nodad
pretty "" "eth0 down and up on host 1 during a transfer"
transfer_during 5004 10.77.0.2 link_flap 1 eth0

pretty "" "host 3's lower device deleted while TCP streams to it"
bg nsx 3 socat -u TCP-LISTEN:5005,reuseaddr OPEN:/dev/null
wait_listen 3 5005
# The sender gives up 5 s after what it sent stopped being acknowledged.
nsx 1 timeout $((60 * SLOW)) socat -u /dev/zero \
	TCP:10.77.0.3:5005,setsockopt-int=6:18:$((5000 * SLOW)) 2>"$tmp/err3" &
spid=$!
sleep 1
ip -n "$(host 3)" link del eth0 || fail "deleting host 3's eth0"
ip -n "$(host 3)" link show grim0 >/dev/null 2>&1 && fail "host 3's grim0 outlived its lower device"
wait $spid
rc=$?
log "host 1's sender: exit $rc: $(tr '\n' ' ' <"$tmp/err3")"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "host 1's sender to host 3 did not fail by itself (exit $rc)"
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null

pretty "" "host 4's namespace deleted with TCP connections open both ways"
bg nsx 4 socat -u TCP-LISTEN:5006,reuseaddr OPEN:/dev/null
bg nsx 1 socat -u TCP-LISTEN:5007,reuseaddr OPEN:/dev/null
wait_listen 4 5006
wait_listen 1 5007
nsx 1 timeout $((60 * SLOW)) socat -u /dev/zero \
	TCP:10.77.0.4:5006,setsockopt-int=6:18:$((5000 * SLOW)) 2>"$tmp/err4" &
spid=$!
nsx 4 socat -u /dev/zero TCP:10.77.0.1:5007 2>/dev/null &
sleep 1
nsx 4 ss -Htn state established | grep -q . || fail "no TCP connection on host 4"
# Nothing may keep the namespace: kill what runs in it, then delete it.
for p in $(ip netns pids "$(host 4)"); do
	kill -9 "$p" 2>/dev/null
done
ns_del "$(host 4)"
ip netns list | grep -q "^$(host 4)\b" && fail "host 4's namespace still named"
wait $spid
rc=$?
log "host 1's sender: exit $rc: $(tr '\n' ' ' <"$tmp/err4")"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "host 1's sender to host 4 did not fail by itself (exit $rc)"
# The namespace's teardown runs in a work queue; a link that cannot go
# makes it print "waiting for grim0 to become free" after 10 s.
sleep 12
check_nomatch "$(dmesg | tail -n 50)" "waiting for .* to become free" "kernel log after host 4 went"
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null

pretty "" "rmmod with addresses configured and TCP over grim0"
bg nsx 2 socat -u TCP-LISTEN:5008,reuseaddr OPEN:/dev/null
wait_listen 2 5008
# With grim0 gone, TCP has no route and keeps trying, as over any link
# that goes away: it gives up after its user timeout.
nsx 1 timeout $((60 * SLOW)) socat -u /dev/zero \
	TCP:10.77.0.2:5008,setsockopt-int=6:18:$((5000 * SLOW)) 2>"$tmp/err5" &
spid=$!
sleep 1
check_ok timeout $((30 * SLOW)) rmmod grim
grim_loaded && fail "grim still loaded"
for i in 1 2; do
	ip -n "$(host "$i")" link show grim0 >/dev/null 2>&1 && fail "host $i's grim0 outlived rmmod"
done
wait $spid
rc=$?
log "host 1's sender: exit $rc: $(tr '\n' ' ' <"$tmp/err5")"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "host 1's sender did not fail by itself (exit $rc)"
"${GRIM_LOAD[@]}" || fail "grim does not load again"
check_dmesg
exit $ksft_pass
