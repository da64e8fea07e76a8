#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# grim0's scatter-gather and checksum offload (NETIF_F_SG, NETIF_F_HW_CSUM).
#
# 1. Both off by default, on with ethtool -K (grim.rst says why).  On,
#    under netem loss 5% and corruption 1% on every lower link, TCP over
#    IPv4 and IPv6 arrives intact (sha256): the transport checksum
#    travels still to fill in, and the NI's CRC32C covers the bytes.
# 2. Host 1 with datacrc off and scatter-gather off: its NI covers the
#    frame headers only, so grim0 fills TCP's checksum in before the
#    packet leaves.  netem corrupts payload on the way (one bit in a
#    frame, one segment in a frame); host 2's TCP finds it
#    (TcpInCsumErrors rises) and the data still arrives intact.
#    Had the sum travelled unfilled, corrupted data would have been
#    taken as good.
# 3. ethtool -K grim0 tx-checksum-ip-generic off sg off on both hosts:
#    shown off, and TCP still arrives intact under the same loss.
# 4. sendfile() from a file that another process keeps rewriting, under
#    loss 5%: TCP sends page-cache pages by reference, which the NI
#    would keep and resend after its CRC was computed.  grim0 copies
#    such pages first, so no frame fails its CRC at host 2
#    (rx_drop_bad_checksum stays 0) and the transfer ends.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool nstat socat sha256sum python3 tc
require_mod sch_netem
require_grim
require_ip_grim

MB=8
SF_MB=24
tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
shm=$(mktemp -d /dev/shm/grim-offload.XXXXXX)
at_exit "rm -rf $shm"

setup_hosts 2
ip_ipv6_on
grim_cluster 2
wait_peer_up 1 2
ip_addrs 2
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
dmesg_mark
head -c $((MB << 20)) /dev/urandom >"$tmp/in"

# nstat_get HOST NAME: the absolute SNMP counter NAME on HOST.
nstat_get() {
	local v
	v=$(nsx "$1" nstat -asz "$2" | awk -v n="$2" '$1 == n { print $2 }')
	[ -n "$v" ] || fail "no counter $2 on host $1"
	echo "$v"
}

# tcp_copy PORT ADDR WHAT: $tmp/in from host 1 to host 2's ADDR (socat's
# TCP:a.b.c.d or TCP6:[a::b]) over TCP, checked by sha256.
tcp_copy() {
	local port=$1 addr=$2 what=$3
	tcp_sink 2 "$port" "$tmp/out" "${addr%%:*}-LISTEN:$port,reuseaddr"
	check_ok nsx 1 timeout $((240 * SLOW)) socat -u OPEN:"$tmp/in" "$addr:$port"
	sink_done "$tmp/out" $((MB << 20)) "$what"
	check_same "$tmp/in" "$tmp/out" "$what"
}

# offloads HOST on|off: grim0's scatter-gather and checksum offload,
# set and shown so.
offloads() {
	local k
	check_ok nsx "$1" ethtool -K grim0 tx-checksum-ip-generic "$2" sg "$2" >/dev/null
	k=$(nsx "$1" ethtool -k grim0)
	check_match "$k" "scatter-gather: $2" "ethtool -k grim0 on host $1"
	check_match "$k" "tx-checksum-ip-generic: $2" "ethtool -k grim0 on host $1"
}

pretty "" "scatter-gather and checksum offload: off by default, on with ethtool -K"
for h in 1 2; do
	k=$(nsx "$h" ethtool -k grim0)
	check_match "$k" "scatter-gather: off" "ethtool -k grim0 on host $h"
	check_match "$k" "tx-checksum-ip-generic: off" "ethtool -k grim0 on host $h"
	offloads "$h" on
done

pretty "" "loss 5%, corruption 1%: $MB MB over IPv4 and over IPv6, intact"
netem_links "loss 5% corrupt 1%"
tcp_copy 5001 TCP:10.77.0.2 "TCP over IPv4"
tcp_copy 5002 "TCP6:[fd77::2]" "TCP over IPv6"
netem_clear

pretty "" "host 1: datacrc off, sg off; corruption 1%: TCP's own checksum catches it"
check_ok ip -n "$(host 1)" link set grim0 type grim datacrc off
check_ok nsx 1 ethtool -K grim0 sg off >/dev/null
check_match "$(nsx 1 ethtool -k grim0)" "tx-checksum-ip-generic: on" "host 1's checksum offload"
# The Internet checksum finds every single flipped bit, but two flips in
# one segment cancel about once in 32.  So each TCP segment here rides in
# one frame (MTU 1280) and only host 1's eth0 corrupts (netem flips one
# bit of a frame it picks): every damaged segment must be refused.  At
# the default MTU a 64 KB segment spans some 44 frames on two corrupting
# hops.
for h in 1 2; do
	check_ok ip -n "$(host "$h")" link set grim0 mtu 1280
done
check_ok tc -n "$(host 1)" qdisc replace dev eth0 root netem limit 10000 corrupt 1%
e0=$(nstat_get 2 TcpInCsumErrors)
tcp_copy 5003 TCP:10.77.0.2 "TCP from host 1 without payload CRC"
e1=$(nstat_get 2 TcpInCsumErrors)
log "host 2: TcpInCsumErrors +$((e1 - e0))"
[ $((e1 - e0)) -gt 0 ] ||
	fail "host 2's TCP found no bad checksum in $MB MB with 1% of frames corrupted and no payload CRC"
netem_clear
for h in 1 2; do
	check_ok ip -n "$(host "$h")" link set grim0 mtu 64572
done
check_ok ip -n "$(host 1)" link set grim0 type grim datacrc on

pretty "" "ethtool -K grim0 tx-checksum-ip-generic off sg off, both hosts; loss 5%, corruption 1%"
for h in 1 2; do
	offloads "$h" off
done
netem_links "loss 5% corrupt 1%"
tcp_copy 5004 TCP:10.77.0.2 "TCP with no offloads"
netem_clear
for h in 1 2; do
	offloads "$h" on
done

pretty "" "sendfile() of a file rewritten meanwhile, loss 5%: $SF_MB MB, no CRC drop"
head -c $((1 << 20)) /dev/urandom >"$shm/file"
netem_links "loss 5%"
bad0=$(stat 2 rx_drop_bad_checksum)
tcp_sink 2 5005 "$tmp/sf"
# The writer rewrites random 4 KiB blocks of the file until told to stop.
cat >"$tmp/writer.py" <<-'EOF'
	import os, random, sys
	fd = os.open(sys.argv[1], os.O_WRONLY)
	size = os.fstat(fd).st_size
	while not os.path.exists(sys.argv[2]):
	    os.pwrite(fd, os.urandom(4096), random.randrange(size // 4096) * 4096)
	EOF
bg python3 "$tmp/writer.py" "$shm/file" "$tmp/stop"
out=$(nsx 1 timeout $((240 * SLOW)) python3 - "$shm/file" 10.77.0.2 5005 $((SF_MB << 20)) <<-'EOF' 2>&1
	import os, socket, sys
	path, addr, port, total = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
	fd = os.open(path, os.O_RDONLY)
	size = os.fstat(fd).st_size
	s = socket.create_connection((addr, port))
	sent = 0
	while sent < total:
	    off = sent % size
	    sent += os.sendfile(s.fileno(), fd, off, min(size - off, total - sent))
	s.shutdown(socket.SHUT_WR)
	s.recv(1)
	print("sent", sent)
	EOF
)
rc=$?
touch "$tmp/stop"
log "$out"
[ $rc -eq 0 ] || fail "sendfile of $SF_MB MB over grim0 exited $rc (124: it stalled)"
sink_done "$tmp/sf" $((SF_MB << 20)) "sendfile over grim0"
bad1=$(stat 2 rx_drop_bad_checksum)
check_eq "$((bad1 - bad0))" 0 "frames host 2 dropped for a bad CRC (no corruption on the links)"
netem_clear
check_dmesg
exit $ksft_pass
