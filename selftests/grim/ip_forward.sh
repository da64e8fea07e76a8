#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (measures the machine's free memory)
#
# A router's grim0 bounds what it holds for packets no socket owns.
#
# Host 2 routes between host 1 and host 3, all three on one grim link
# (10.78.3.3 is behind host 3; host 1 reaches it through host 2).  Host
# 3's switch port sends it 1 Mbit/s (tbf), host 1 floods UDP at host 3
# much faster.  What host 2 forwards has no socket behind it, so no send
# buffer bounds it while host 2's NI holds it: grim0's txqueuelen does
# (set to 100 here).
# Over the bound, host 2 drops and counts (tx_dropped), and the machine's
# available memory falls by a few megabytes at most.  Then the flood
# stops, and a forwarded TCP transfer arrives intact (sha256).
source "$(dirname "$0")/lib.sh"
require_root
require_cmd socat sha256sum tc nstat
require_grim

tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 3
grim_cluster 3
for i in 2 3; do
	wait_peer_up 1 $i
done
wait_peer_up 2 3
for i in 1 2 3; do
	ip -n "$(host "$i")" addr add "10.77.0.$i/24" dev grim0 || fail "address on host $i"
done
ip -n "$(host 3)" addr add 10.78.3.3/32 dev lo || fail "10.78.3.3 on host 3"
ip -n "$(host 1)" route add 10.78.3.0/24 via 10.77.0.2 || fail "route on host 1"
nsx 2 sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 \
	net.ipv4.conf.grim0.send_redirects=0 || fail "forwarding on host 2"
ip -n "$(host 2)" route add 10.78.3.0/24 via 10.77.0.3 || fail "route on host 2"
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.78.3.3 >/dev/null
dmesg_mark

# A small bound, so that a slow machine (a debug kernel's) overruns it
# too: at 1 Mbit/s host 3 takes 125 of these datagrams in 8 s.
ip -n "$(host 2)" link set grim0 txqueuelen 100 || fail "txqueuelen on host 2"
qlen=$(nsx_sys 2 cat /sys/class/net/grim0/tx_queue_len)
pretty "" "UDP flood through host 2, host 3 reached at 1 Mbit/s (grim0 txqueuelen $qlen)"
tc -n "$SWITCH_NS" qdisc replace dev p3 root tbf rate 1mbit burst 32k latency 50ms ||
	fail "tbf toward host 3"
bg nsx 3 socat -u UDP-RECV:5003 OPEN:/dev/null
sleep 0.5
drop0=$(nsx_sys 2 cat /sys/class/net/grim0/statistics/tx_dropped)
sync
mem0=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
nsx 1 timeout 8 socat -u -b 8000 /dev/zero UDP:10.78.3.3:5003 >"$tmp/flood" 2>&1
mem1=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
drop1=$(nsx_sys 2 cat /sys/class/net/grim0/statistics/tx_dropped)
fwd=$(nsx 2 nstat -asz IpForwDatagrams | awk '$1 == "IpForwDatagrams" { print $2 }')
sed 's/^/    socat: /' "$tmp/flood"
log "host 2 forwarded $fwd datagrams, dropped $((drop1 - drop0)) on grim0"
log "available memory: $((mem0 / 1024)) MB before, $((mem1 / 1024)) MB at the end of the flood"
[ $((drop1 - drop0)) -gt 0 ] || fail "host 2 dropped nothing: its queue for host 3 grew without bound"
[ $((mem0 - mem1)) -lt $((64 << 10)) ] ||
	fail "available memory fell by $(((mem0 - mem1) / 1024)) MB during the flood"

pretty "" "after the flood: a forwarded TCP transfer"
tc -n "$SWITCH_NS" qdisc del dev p3 root
# What host 2 still holds drains at the lower link's rate: let it go.
sleep 2
head -c $((16 << 20)) /dev/urandom >"$tmp/in"
tcp_sink 3 5002 "$tmp/out" TCP-LISTEN:5002,bind=10.78.3.3,reuseaddr
check_ok nsx 1 timeout $((120 * SLOW)) socat -u OPEN:"$tmp/in" TCP:10.78.3.3:5002
sink_done "$tmp/out" $((16 << 20)) "forwarded TCP to host 3"
check_same "$tmp/in" "$tmp/out" "forwarded TCP to host 3"
check_dmesg
exit $ksft_pass
