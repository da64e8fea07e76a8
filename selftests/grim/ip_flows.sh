#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (compares rates and round trips)
#
# Flows over grim0 do not hold each other up.
#
# 1. Two TCP flows from host 1 to host 2 over grim0.  The receiver of
#    one stops reading (SIGSTOP): the other keeps its rate.  Its bytes
#    received are sampled with ss(8) before and after the stop.  Once on
#    grim0's 4 channels, once with both flows on one channel.
# 2. No bufferbloat: ping from host 1 to host 2 over grim0 while a bulk
#    TCP transfer runs the same way stays within twice its idle round
#    trip plus what the lower link's own queue adds (ping over the bare
#    veth, idle and during the same transfer), plus 1 ms for the
#    scheduling noise of an emulated machine.  1 MB queued ahead of the
#    ping would add 25 ms at the transfer's rate under TCG.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd socat ss ping awk
require_grim

setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
ip_addrs 2 eth
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.88.0.2 >/dev/null
dmesg_mark

# listen PORT SINK: a TCP receiver on host 2 writing into SINK; waits
# until it listens.
listen() {
	nsx 2 socat -u TCP-LISTEN:"$1",reuseaddr OPEN:"$2" &
	_PIDS+=($!)
	wait_listen 2 "$1"
}
# rx_bytes PORT: bytes received so far on host 2's connection to PORT.
rx_bytes() {
	nsx 2 ss -Htin state established "sport = :$1" |
		sed -n 's/.*bytes_received:\([0-9]*\).*/\1/p' | head -n 1
}
# rate PORT SECONDS: kB/s received on PORT over SECONDS.
rate() {
	local b0 b1 t0 t1
	b0=$(rx_bytes "$1")
	t0=$(date +%s%N)
	sleep "$2"
	b1=$(rx_bytes "$1")
	t1=$(date +%s%N)
	[ -n "$b0" ] && [ -n "$b1" ] || fail "no connection on port $1"
	echo $(((b1 - b0) * 1000000 / (t1 - t0)))
}

# two_flows CHANNELS: the two flows with grim0's IP on CHANNELS channels
# (with 1, both flows share one channel to host 2).
two_flows() {
	local slow_pid both other alone stalled
	nsx 1 ethtool -L grim0 combined "$1" || fail "ethtool -L grim0 combined $1"
	listen 5001 /dev/null
	slow_pid=$(pgrep -n -f "TCP-LISTEN:5001")
	[ -n "$slow_pid" ] || fail "no socat on port 5001"
	listen 5002 /dev/null
	bg nsx 1 socat -u /dev/zero TCP:10.77.0.2:5001
	bg nsx 1 socat -u /dev/zero TCP:10.77.0.2:5002
	sleep 2
	both=$(rate 5002 3)
	other=$(rate 5001 3)
	log "both reading: port 5002 $both kB/s, port 5001 $other kB/s"
	[ "$both" -gt 0 ] && [ "$other" -gt 0 ] || fail "a flow did not move"
	kill -STOP "$slow_pid" || fail "stopping the receiver on port 5001"
	sleep 2
	alone=$(rate 5002 3)
	stalled=$(rate 5001 3)
	log "port 5001 stopped: port 5002 $alone kB/s, port 5001 $stalled kB/s"
	kill -CONT "$slow_pid"
	# The stopped flow's window closes: TCP sends it a probe now and
	# then, nothing more.
	[ "$stalled" -lt $((other / 20 + 64)) ] ||
		fail "the stopped receiver still takes $stalled kB/s"
	# The other flow has the path to itself now: it must not slow down.
	[ "$alone" -ge $((both * 8 / 10)) ] ||
		fail "port 5002 fell from $both to $alone kB/s when port 5001's receiver stopped"
	pkill -f "TCP:10.77.0.2:500[12]"
	pkill -f "TCP-LISTEN:500[12]"
	sleep 1
}

pretty "" "two TCP flows from host 1 to host 2; one receiver stops reading"
two_flows 4
pretty "" "the same, both flows on one channel"
two_flows 1
nsx 1 ethtool -L grim0 combined 4 || fail "ethtool -L grim0 combined 4"

# ping_median HOST ADDR COUNT: the median round trip in microseconds.
ping_median() {
	nsx "$1" ping -n -c "$3" -i 0.1 -W $((5 * SLOW)) "$2" |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | sort -n |
		awk '{ v[NR] = $1 * 1000 } END { print NR ? int(v[int((NR + 1) / 2)]) : -1 }'
}

pretty "" "ping over grim0 during a bulk TCP transfer over grim0"
idle_grim=$(ping_median 1 10.77.0.2 30)
idle_veth=$(ping_median 1 10.88.0.2 30)
log "idle: grim0 $idle_grim us, bare veth $idle_veth us"
listen 5003 /dev/null
bg nsx 1 socat -u /dev/zero TCP:10.77.0.2:5003
sleep 2
busy_grim=$(ping_median 1 10.77.0.2 30)
busy_veth=$(ping_median 1 10.88.0.2 30)
busy=$(rate 5003 2)
log "during $busy kB/s of TCP over grim0: grim0 $busy_grim us, bare veth $busy_veth us"
[ "$idle_grim" -gt 0 ] && [ "$busy_grim" -gt 0 ] && [ "$busy_veth" -gt 0 ] || fail "a ping got no answer"
lower=$((busy_veth > idle_veth ? busy_veth - idle_veth : 0))
bound=$((2 * idle_grim + lower + 1000))
log "bound: 2 x $idle_grim + $lower (the lower link's queueing) + 1000 = $bound us"
[ "$busy_grim" -le "$bound" ] ||
	fail "ping over grim0 took $busy_grim us during bulk TCP (bound $bound us)"
pkill -f "TCP:10.77.0.2:5003"
check_dmesg
exit $ksft_pass
