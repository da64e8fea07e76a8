#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified programs from the distribution over grim0, with every lower
# link losing 5% and corrupting 1% of its frames.
#
# 1. iperf3 over TCP, both ways (-R): it completes, and the receiver
#    counts what the sender sent, less what was still on its way at the
#    end (its sockets' buffers).
# 2. iperf3 over UDP at a fixed rate: the receiver reports no datagram
#    lost and none out of order (GRIM recovers the veths' losses).
# 3. redis-server on host 2: 10,000 keys loaded by redis-cli --pipe from
#    host 1 are all there and read back right; a 1 MB value read back
#    matches by sha256; redis-benchmark (SET, GET, LPUSH, LRANGE) with 20
#    clients runs to completion.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd iperf3 redis-server redis-cli redis-benchmark python3 sha256sum
require_grim

tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
for i in 1 2; do
	ip -n "$(host "$i")" addr add "10.77.0.$i/24" dev grim0 || fail "address on host $i"
done
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
dmesg_mark
netem_links "loss 5% corrupt 1%"


bg nsx 2 iperf3 -s -B 10.77.0.2 -p 5201 >"$tmp/iperf3-server" 2>&1
wait_listen 2 5201

# iperf_json FILE EXPR: a value from iperf3's JSON report.
iperf_json() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {}, {"r": r}))' "$1" "$2"
}

for dir in "" -R; do
	pretty "" "iperf3 TCP ${dir:+(-R, host 2 sends) }over grim0, 5 s"
	nsx 1 timeout $((60 * SLOW)) iperf3 -c 10.77.0.2 -p 5201 -t 5 -J $dir >"$tmp/tcp.json" ||
		{ tail -n 20 "$tmp/tcp.json"; fail "iperf3 TCP $dir failed"; }
	sent=$(iperf_json "$tmp/tcp.json" 'r["end"]["sum_sent"]["bytes"]')
	rcvd=$(iperf_json "$tmp/tcp.json" 'r["end"]["sum_received"]["bytes"]')
	rtx=$(iperf_json "$tmp/tcp.json" 'r["end"]["sum_sent"].get("retransmits", 0)')
	bps=$(iperf_json "$tmp/tcp.json" 'int(r["end"]["sum_received"]["bits_per_second"])')
	log "sent $sent bytes, received $rcvd, $((bps / 1000000)) Mbit/s, TCP retransmits $rtx"
	[ "$rcvd" -gt 0 ] || fail "iperf3 TCP moved nothing"
	# When the time is up the receiver stops counting: what is still
	# in the sender's socket and on its way (a few MB) is not counted.
	[ "$rcvd" -le "$sent" ] && [ "$rcvd" -ge $((sent - (16 << 20))) ] ||
		fail "iperf3 received $rcvd of $sent bytes"
done

# A datagram that reaches host 2 while its receiver is not scheduled (a
# test beside this one, the emulated CPU) waits in the socket's buffer:
# 4 MB of it, a second and a half at this rate, so that what is measured
# is the link (iperf3's -w sets both sockets' buffers, up to rmem_max and
# wmem_max, and fails when it cannot).
pretty "" "iperf3 UDP over grim0 at 20 Mbit/s, 5 s"
for m in rmem_max wmem_max; do
	v=$(sysctl -n net.core.$m) || fail "net.core.$m"
	[ "$v" -ge $((4 << 20)) ] && continue
	at_exit "sysctl -qw net.core.$m=$v"
	sysctl -qw net.core.$m=$((4 << 20)) || fail "net.core.$m"
done
rcvbuf0=$(nsx 2 nstat -asz UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }')
nsx 1 timeout $((60 * SLOW)) iperf3 -c 10.77.0.2 -p 5201 -u -b 20M -l 1400 -t 5 -w 4M -J >"$tmp/udp.json" ||
	{ tail -n 20 "$tmp/udp.json"; fail "iperf3 UDP failed"; }
rcvbuf1=$(nsx 2 nstat -asz UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }')
pkts=$(iperf_json "$tmp/udp.json" 'r["end"]["sum"]["packets"]')
lost=$(iperf_json "$tmp/udp.json" 'r["end"]["sum"]["lost_packets"]')
ooo=$(iperf_json "$tmp/udp.json" 'r["end"]["sum"].get("out_of_order", 0)')
log "$pkts datagrams, $lost lost, $ooo out of order (as the receiver counts them); host 2: UdpRcvbufErrors +$((rcvbuf1 - rcvbuf0))"
[ "$pkts" -gt 1000 ] || fail "iperf3 UDP sent only $pkts datagrams"
check_eq "$lost" 0 "datagrams iperf3 lost"
check_eq "$ooo" 0 "datagrams iperf3 received out of order"

pretty "" "redis-server on host 2, redis-cli and redis-benchmark from host 1"
bg nsx 2 redis-server --bind 10.77.0.2 --port 6379 --protected-mode no \
	--save "" --appendonly no --dir "$tmp" --logfile "$tmp/redis.log"
wait_listen 2 6379
R="nsx 1 redis-cli -h 10.77.0.2 -p 6379"
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "SET key:%d value-%d-%d\r\n", i, i, i * 7919 }' |
	$R --pipe >"$tmp/pipe" 2>&1 || { cat "$tmp/pipe"; fail "redis-cli --pipe"; }
log "$(tail -n 1 "$tmp/pipe")"
check_match "$(cat "$tmp/pipe")" "errors: 0, replies: 10000" "redis-cli --pipe's replies"
check_eq "$($R DBSIZE)" 10000 "keys in redis"
for i in 0 4711 9999; do
	check_eq "$($R GET key:$i)" "value-$i-$((i * 7919))" "key:$i"
done
head -c $((1 << 20)) /dev/urandom | base64 -w 0 >"$tmp/big"
$R -x SET big <"$tmp/big" >/dev/null || fail "SET of a 1 MB value"
# redis-cli ends what it prints with a newline; the value has none.
check_eq "$($R GET big | tr -d '\n' | sha256sum)" "$(sha256sum <"$tmp/big")" "the 1 MB value read back"
nsx 1 timeout $((300 * SLOW)) redis-benchmark -h 10.77.0.2 -p 6379 -c 20 -n 4000 \
	-t set,get,lpush,lrange_100 -q >"$tmp/bench" 2>&1 ||
	{ cat "$tmp/bench"; fail "redis-benchmark failed"; }
tr '\r' '\n' <"$tmp/bench" | grep "requests per second" | sed 's/^/    /'
for t in SET GET LPUSH "LRANGE_100"; do
	tr '\r' '\n' <"$tmp/bench" | grep -q "^$t.*requests per second" ||
		fail "redis-benchmark did not finish $t"
done
netem_clear
check_dmesg
exit $ksft_pass
