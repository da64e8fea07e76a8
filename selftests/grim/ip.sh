#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (TCP's timers against GRIM's recovery: counts TCP's retransmissions)
#
# IP over GRIM: grim0 is an IP interface whose link-layer addresses are
# node ids.
#
# 1. Four hosts, IPv4 and IPv6 addresses on grim0: ping and ping -6 from
#    host 1 to every other; the neighbours resolve (ARP, neighbour
#    discovery over the link's broadcast) to the hosts' node ids.
# 2. Static neighbours are obeyed: one that names the wrong node gets no
#    answer, the right one does; one that names a node the link does not
#    know is a counted drop (tx_dropped).
# 3. Pings on the clean link cost no loss probe: the receiver's ACK
#    waits for the answer, and the probe waits for that ACK.
# 4. Every lower link loses 5% and corrupts 1%: a TCP transfer over grim0
#    arrives intact (sha256) with next to no TCP retransmission (GRIM
#    recovers underneath; the bound is below), and UDP datagrams all
#    arrive, in order.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ping socat sha256sum nstat tc
require_grim

MB=${GRIM_TEST_IP_MB:-$([ -n "${GRIM_TEST_FULL:-}" ] && echo 200 || echo 16)}
UDP_N=2000
UDP=${_TESTDIR}/udp_seq

tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
setup_hosts 4
ip_ipv6_on
grim_cluster 4
for i in 2 3 4; do
	wait_peer_up 1 $i
done
ip_addrs 4
dmesg_mark

pretty "" "ping and ping -6 from host 1 to hosts 2, 3 and 4 over grim0"
for i in 2 3 4; do
	check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q 10.77.0.$i >/dev/null
	check_ok nsx 1 ping -6 -c 2 -i 0.2 -W $((5 * SLOW)) -q fd77::$i >/dev/null
done
neigh=$(nsx 1 ip neigh show dev grim0)
echo "$neigh" | sed 's/^/    /'
for i in 2 3 4; do
	check_match "$neigh" "10\.77\.0\.$i lladdr $(grim_addr $i) " "host $i's IPv4 neighbour"
	check_match "$neigh" "fd77::$i lladdr $(grim_addr $i) " "host $i's IPv6 neighbour"
done

pretty "" "channels: ethtool -l shows IP's, ethtool -L sets them"
check_match "$(nsx 1 ethtool -l grim0)" "Combined:[[:space:]]+4" "IP's channels by default"
check_ok nsx 1 ethtool -L grim0 combined 8
check_match "$(nsx 1 ethtool -l grim0)" "Combined:[[:space:]]+8" "IP's channels after ethtool -L"
check_fail nsx 1 ethtool -L grim0 combined 17
# IP's ports belong to the link: no socket takes IP's traffic.
out=$(nsx 1 "$RDM" recv -p $((0xff00)) -n 1 -t 1 2>&1) && fail "a socket bound IP's port 0xff00"
check_match "$out" "bind: Cannot assign requested address" "binding IP's port"
check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null

pretty "" "static neighbours: the node they name is the one that gets the packets"
nsx 1 ip neigh flush dev grim0 to 10.77.0.3
check_ok nsx 1 ip neigh replace 10.77.0.3 lladdr "$(grim_addr 4)" nud permanent dev grim0
check_fail nsx 1 ping -c 1 -W $((2 * SLOW)) -q 10.77.0.3
check_ok nsx 1 ip neigh replace 10.77.0.3 lladdr "$(grim_addr 3)" nud permanent dev grim0
check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q 10.77.0.3 >/dev/null
drop0=$(nsx_sys 1 cat /sys/class/net/grim0/statistics/tx_dropped)
check_ok nsx 1 ip neigh replace 10.77.0.99 lladdr 00:00:00:63 nud permanent dev grim0
check_fail nsx 1 ping -c 3 -i 0.2 -W $((2 * SLOW)) -q 10.77.0.99
drop1=$(nsx_sys 1 cat /sys/class/net/grim0/statistics/tx_dropped)
log "tx_dropped $drop0 -> $drop1 for 3 packets to node 00:00:00:63"
[ $((drop1 - drop0)) -ge 3 ] || fail "packets to an unknown node not counted as dropped"

pretty "" "request and answer on a clean link: no tail loss probe"
# One frame out, its ACK waiting for the answer that carries it: GRIM's
# probe must wait that long too, or every answer costs a resend (100 to
# 200 probes here).  A machine that stalls the VM for longer than a
# probe's wait costs one now and then: a busy TCG host, a few in 100.
PINGS=100
stats 1; p1=${S[retransmit_probes]?}
stats 2; p2=${S[retransmit_probes]?}
check_ok nsx 1 ping -c $PINGS -i 0.05 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
stats 1; p1=$((${S[retransmit_probes]?} - p1))
stats 2; p2=$((${S[retransmit_probes]?} - p2))
log "$PINGS pings: retransmit_probes host 1 +$p1, host 2 +$p2"
[ $((p1 + p2)) -le $((PINGS / 5)) ] ||
	fail "$((p1 + p2)) loss probes for $PINGS pings on a link that lost nothing (bound: $((PINGS / 5)))"

pretty "" "netem loss 5% and corruption 1% on every lower link"
netem_links "loss 5% corrupt 1%"

pretty "" "TCP: $MB MB from host 1 to host 2 over grim0, checked by sha256"
head -c $((MB << 20)) /dev/urandom >"$tmp/in"
tcp_sink 2 5001 "$tmp/out"
start=$SECONDS
check_ok nsx 1 timeout $((300 * SLOW)) socat -u OPEN:"$tmp/in" TCP:10.77.0.2:5001
sink_done "$tmp/out" $((MB << 20)) "TCP over grim0"
# The namespace is new: its TCP counters are this transfer's.
read -r segs retrans < <(nsx 1 nstat -asz TcpOutSegs TcpRetransSegs |
	awk '{ v[$1] = $2 } END { print v["TcpOutSegs"] + 0, v["TcpRetransSegs"] + 0 }')
log "$MB MB in $((SECONDS - start)) s; TCP sent $segs segments, retransmitted $retrans"
nsx 1 nstat -asz 'Tcp*' 2>/dev/null | awk '$2 > 0 && $1 ~ /Retrans|Loss|Timeout|Spurious|DSACK|Probe|Recovery/ { printf "    host 1: %s %s\n", $1, $2 }'
nsx 2 nstat -asz 2>/dev/null | awk '$2 > 0 && $1 ~ /Csum|OFO|Discard|Drop|InErr|Prune|Collapse|Backlog/ { printf "    host 2: %s %s\n", $1, $2 }'
for h in 1 2; do
	log "host $h grim0: $(nsx $h ip -s link show dev grim0 | tr -s ' \n' ' ')"
done
stats 1
log "host 1 grim0: retransmit_frames ${S[retransmit_frames]?} retransmit_timeouts ${S[retransmit_timeouts]?} retransmit_probes ${S[retransmit_probes]?} fast_retransmits ${S[fast_retransmits]?} tx_frames ${S[tx_frames]?}"
check_eq "$(sha256sum <"$tmp/out")" "$(sha256sum <"$tmp/in")" "sha256 of what host 2 received"
# The lower links lose one frame in 20; GRIM resends those, and TCP sees
# a loss only when a segment waits past TCP's own timer.  Allow 1%.
[ "$retrans" -le $((segs / 100 + 2)) ] ||
	fail "TCP retransmitted $retrans of $segs segments over grim0"

pretty "" "UDP: $UDP_N datagrams of 1000 bytes from host 3 to host 4, all in order"
bg nsx 4 "$UDP" recv -p 5002 -n $UDP_N -t $((120 * SLOW)) >"$tmp/udp" 2>&1
rpid=$!
for ((t = 0; t < 50 * SLOW; t++)); do
	grep -qs listening "$tmp/udp" && break
	sleep 0.1
done
grep -qs listening "$tmp/udp" || fail "UDP receiver on host 4 not listening"
# Resolve host 4 first: while ARP is unresolved, IP keeps only the newest
# datagrams (neigh unres_qlen_bytes) and drops older ones, on any link.
check_ok nsx 3 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.4 >/dev/null
if ! out=$(nsx 3 "$UDP" send -a 10.77.0.4 -p 5002 -n $UDP_N -s 1000 2>&1); then
	log "host 3: $out"
	sleep 1
	sed 's/^/    host 4: /' "$tmp/udp"
	fail "UDP sender on host 3 failed"
fi
wait $rpid
rc=$?
sed 's/^/    host 4: /' "$tmp/udp"
[ $rc -eq 0 ] || fail "UDP datagrams over grim0 lost or out of order"
netem_clear
check_dmesg
exit $ksft_pass
