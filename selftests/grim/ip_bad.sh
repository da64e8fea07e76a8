#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input to IP over GRIM: a counted drop or an ICMP error, nothing
# else; the links keep working.
#
# 1. While host 1 pings host 2 over grim0, grim_inject -m ipjunk puts on
#    host 1's eth0 one-frame messages to IP's endpoint (channel 1) on
#    host 2, good as far as GRIM goes (session, CRC, a fresh stream
#    each), 10 of each class: random bytes as IPv4, as IPv6 and as ARP;
#    random bytes of EtherTypes IP does not carry; empty packets; a UDP
#    datagram to a closed port flagged broadcast (the message's arg[0]
#    bit 0), though it went to one node; the same datagram unflagged;
#    the same datagram, or ARP, flagged with its checksum still to fill
#    in (arg[0] bit 1) at a place (arg[1]) outside its transport header.
#    On host 2:
#      - every message reaches IP's endpoint (rx_msgs);
#      - the other EtherTypes, the empty packets and the checksums out
#        of place are counted in grim0's rx_dropped;
#      - the IPv4 and IPv6 garbage is dropped by IP's header checks, and
#        counted there (IpInHdrErrors, Ip6InHdrErrors, the truncated
#        packets...);
#      - the ARP garbage teaches it no neighbour (arp_rcv() drops it
#        without a counter: the kernel has none for ARP);
#      - every datagram counts in UdpNoPorts; only the unflagged ones
#        get an ICMP port unreachable (no ICMP error answers a
#        link-layer broadcast, RFC 1122 3.2.2), which reaches host 1;
#    the ping loses nothing; then ping and ping -6 work both ways, a TCP
#    transfer arrives intact (sha256), and the kernel logs no splat.
# 2. Packets larger than the MTU, host 1's grim0 at MTU 1500:
#    a. a packet socket (SOCK_DGRAM, bound to grim0) cannot send more
#       than the MTU, not even the 4 bytes a VLAN tag would get on
#       Ethernet (EMSGSIZE), nor an empty packet (EINVAL); an MTU-sized
#       IPv4 packet goes, and so does one of an EtherType IP does not
#       carry, which grim0 then drops and counts (tx_dropped);
#    b. ping -s 3000 -M do fails at once (message too long); without DF
#       the request is fragmented and the ping works;
#    c. host 1 at MTU 9000, host 2 at 1500: host 1's 9000-byte packets
#       reach host 2 whole and are taken (see there why).
# Neighbours that name a node the link does not know: ip.sh.
source "$(dirname "$0")/lib.sh"
require_root
require_cmd ping socat sha256sum nstat ethtool ss python3
require_grim

INJECT=$_TESTDIR/grim_inject
[ -x "$INJECT" ] || skip "grim_inject not built"
N_EACH=10			# messages of each of the classes
N_CLASS=8
PORT=$((0xff01))		# IP's channel 1 (GRIM_PORT_IP + 1)
MB=4
tmp=$(mktemp -d)
at_exit "rm -rf $tmp"

setup_hosts 2
ip_ipv6_on
grim_cluster 2
wait_peer_up 1 2
ip_addrs 2
# ICMP errors counted exactly: host 2 limits the rate of none.
nsx 2 sysctl -qw net.ipv4.icmp_ratemask=0 || fail "icmp_ratemask on host 2"
check_ok nsx 1 ping -c 1 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
dmesg_mark

# counters HOST VAR: HOST's SNMP counters (nstat, absolute), its grim0's
# rx_dropped and tx_dropped (the netdev's, as ip -s link shows them) and
# rx_msgs (ethtool), into the associative array VAR.
counters() {
	local -n _c=$2
	local k v
	_c=()
	while read -r k v _; do
		[[ $k == \#* ]] || _c[$k]=$v
	done < <(nsx "$1" nstat -asz)
	{ read -r _c[rx_dropped] && read -r _c[tx_dropped]; } < <(nsx_sys "$1" \
		cat /sys/class/net/grim0/statistics/rx_dropped /sys/class/net/grim0/statistics/tx_dropped) ||
		fail "grim0's statistics on host $1"
	_c[rx_msgs]=$(stat "$1" rx_msgs)
}
# delta OUT BEFORE AFTER NAME...: OUT = the sum of the counters NAME in
# the array AFTER less that in BEFORE.  A counter that is not there ends
# the test (it would count as 0).
delta() {
	local -n _b=$2 _a=$3
	local out=$1 n s=0
	shift 3
	for n; do
		[ -n "${_b[$n]:-}" ] && [ -n "${_a[$n]:-}" ] || fail "no counter $n"
		s=$((s + _a[$n] - _b[$n]))
	done
	printf -v "$out" %d "$s"
}
# grim_counters HOST ARRAY: HOST's grim0 counters (ethtool -S) into ARRAY.
grim_counters() {
	local -n _g=$2
	local k
	stats "$1"
	_g=()
	for k in "${!S[@]}"; do
		_g[$k]=${S[$k]}
	done
}
# grim_changed BEFORE AFTER: the counters that moved, as " name +n".
grim_changed() {
	local -n _b=$1 _a=$2
	local k out=
	for k in $(printf '%s\n' "${!_a[@]}" | sort); do
		[ "${_a[$k]}" = "${_b[$k]:-0}" ] || out+=" $k +$((_a[$k] - ${_b[$k]:-0}))"
	done
	echo "$out"
}

# Where IP counts a packet it drops in its header checks (or, one that
# got past them, in routing).  IpExtInCsumErrors is left out: IPv4
# counts a bad header checksum in IpInHdrErrors as well.
IP4_ERR="IpInHdrErrors IpInAddrErrors IpExtInTruncatedPkts IpExtInNoRoutes IpInUnknownProtos IpInDiscards"
IP6_ERR="Ip6InHdrErrors Ip6InAddrErrors Ip6InTruncatedPkts Ip6InNoRoutes Ip6InUnknownProtos Ip6InDiscards"

pretty "" "junk to IP's endpoint $(printf %#x $PORT) on host 2, while host 1 pings host 2"
declare -A B1 B2 A1 A2 G2B G2A
counters 1 B1
counters 2 B2
grim_counters 2 G2B
bg nsx 1 ping -c $((50 * SLOW)) -i 0.1 -W $((5 * SLOW)) -q 10.77.0.2 >"$tmp/ping" 2>&1
ping_pid=$!
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m ipjunk -k $((N_CLASS * N_EACH)) \
	-p $PORT -S $((RANDOM + 1)) -t $((30 * SLOW)) 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
[ $rc -eq 0 ] || fail "grim_inject -m ipjunk exited $rc"
kill -0 $ping_pid 2>/dev/null || fail "the ping ended before the injection did"
declare -A min=() sent=()
while read -r kind c e; do
	case $kind in
	expect) fail "grim_inject expects $c exactly: not a counter of this test" ;;
	expect-min) min[$c]=$e ;;
	ipjunk) sent[$c]=$e ;;
	esac
done <<<"$out"
for c in ipv4 ipv6 arp other empty udp-bcast udp csum-out; do
	check_eq "${sent[$c]:-}" $N_EACH "messages of class $c sent"
done
check_eq "${min[rx_msgs]:-}" $((N_CLASS * N_EACH)) "grim_inject's expected rx_msgs"
check_eq "${min[rx_dropped]:-}" $((3 * N_EACH)) "grim_inject's expected rx_dropped"
n_udp=${sent[udp]} n_bcast=${sent[udp-bcast]}

# Wait for host 2 to count them all, then a little longer for what
# should not come.
for ((t = 0; t < 50 * SLOW; t++)); do
	counters 2 A2
	counters 1 A1
	delta msgs B2 A2 rx_msgs
	delta drop B2 A2 rx_dropped
	delta e4 B2 A2 $IP4_ERR
	delta e6 B2 A2 $IP6_ERR
	delta noports B2 A2 UdpNoPorts
	delta unreach B2 A2 IcmpOutDestUnreachs
	delta unreach1 B1 A1 IcmpInDestUnreachs
	((msgs >= min[rx_msgs] && drop >= min[rx_dropped] && e4 >= sent[ipv4] &&
	  e6 >= sent[ipv6] && noports >= n_udp + n_bcast && unreach >= n_udp &&
	  unreach1 >= n_udp)) && break
	sleep 0.2
done
sleep 0.5
counters 2 A2
counters 1 A1
delta msgs B2 A2 rx_msgs
delta drop B2 A2 rx_dropped
delta e4 B2 A2 $IP4_ERR
delta e6 B2 A2 $IP6_ERR
delta noports B2 A2 UdpNoPorts
delta unreach B2 A2 IcmpOutDestUnreachs
delta unreach1 B1 A1 IcmpInDestUnreachs
log "host 2: rx_msgs +$msgs (at least $((N_CLASS * N_EACH))), rx_dropped +$drop (at least $((3 * N_EACH)): other EtherTypes, empty packets, checksums out of place)"
for n in IpInReceives $IP4_ERR IpExtInCsumErrors Ip6InReceives $IP6_ERR UdpNoPorts IcmpOutDestUnreachs; do
	delta d B2 A2 $n
	[ "$d" = 0 ] || log "host 2: $n +$d"
done
log "host 1: IcmpInDestUnreachs +$unreach1"
# Where a message went, should one be missing below.
grim_counters 2 G2A
log "host 2 grim0:$(grim_changed G2B G2A)"

[ "$msgs" -ge $((N_CLASS * N_EACH)) ] ||
	fail "host 2's grim0 delivered $msgs messages, not all $((N_CLASS * N_EACH))"
[ "$drop" -ge $((3 * N_EACH)) ] ||
	fail "host 2's grim0 counted $drop dropped, not the $((3 * N_EACH)) of other EtherTypes, empty or checksums out of place"
# Random bytes fail IP's header checks (version, header length,
# checksum; IPv6: version, addresses, payload length): every packet is
# counted there, or, in the unlikely case that one passes them all, in
# routing (no route: random addresses).  The healthy traffic counts in
# none of these.
[ "$e4" -ge "${sent[ipv4]}" ] ||
	fail "host 2 counted $e4 IPv4 errors for ${sent[ipv4]} garbage IPv4 packets"
[ "$e6" -ge "${sent[ipv6]}" ] ||
	fail "host 2 counted $e6 IPv6 errors for ${sent[ipv6]} garbage IPv6 packets"
# Nothing else sends to a closed UDP port, and host 2 limits no ICMP;
# the datagrams with a checksum out of place never reached UDP.
check_eq "$noports" $((n_udp + n_bcast)) "host 2's UdpNoPorts rose by"
check_eq "$unreach" "$n_udp" "host 2's ICMP destination unreachables (none for the broadcast-flagged)"
check_eq "$unreach1" "$n_udp" "host 1's ICMP destination unreachables received"
# The ARP garbage made no neighbour: host 2 knows host 1 only.
neigh=$(nsx 2 ip neigh show dev grim0)
echo "$neigh" | sed 's/^/    host 2: /'
bad=$(awk '!/ lladdr 00:00:00:01 /' <<<"$neigh")
check_eq "$bad" "" "host 2's neighbours other than host 1's node"

pretty "" "the ping during the injection lost nothing"
wait $ping_pid
rc=$?
sed 's/^/    /' "$tmp/ping"
[ $rc -eq 0 ] || fail "the ping during the injection exited $rc"
check_match "$(cat "$tmp/ping")" " 0% packet loss" "the ping during the injection"
check_dmesg

pretty "" "ping and ping -6 both ways, then TCP: $MB MB from host 1 to host 2, checked by sha256"
check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q 10.77.0.2 >/dev/null
check_ok nsx 2 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q 10.77.0.1 >/dev/null
check_ok nsx 1 ping -6 -c 2 -i 0.2 -W $((5 * SLOW)) -q fd77::2 >/dev/null
check_ok nsx 2 ping -6 -c 2 -i 0.2 -W $((5 * SLOW)) -q fd77::1 >/dev/null
head -c $((MB << 20)) /dev/urandom >"$tmp/in"
tcp_sink 2 5001 "$tmp/out"
check_ok nsx 1 timeout $((120 * SLOW)) socat -u OPEN:"$tmp/in" TCP:10.77.0.2:5001
sink_done "$tmp/out" $((MB << 20)) "TCP to host 2"
check_same "$tmp/in" "$tmp/out" "TCP to host 2"

pretty "" "host 1's grim0 at MTU 1500: a packet socket cannot send more"
check_ok ip -n "$(host 1)" link set grim0 mtu 1500
counters 1 B1
counters 2 B2
# Sizes past the MTU (by 1, by the 4 bytes of a VLAN tag, which packet
# sockets allow on Ethernet only, by far), nothing (an empty packet
# never reaches grim0), the MTU; then the MTU with an EtherType IP does
# not carry; all to node 2.
out=$(nsx 1 python3 - 1500 00000002 <<-'EOF' 2>&1
	import errno, socket, sys
	mtu, node = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
	s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
	s.bind(("grim0", 0))
	def send(n, proto=0x0800):
	    try:
	        return str(s.sendto(bytes(n), ("grim0", proto, 0, 0, node)))
	    except OSError as e:
	        return errno.errorcode[e.errno]
	print(*(send(n) for n in (mtu + 1, mtu + 4, 4 * mtu, 0, mtu)), send(mtu, 0x88b5))
	EOF
)
log "sendto of 1501, 1504, 6000, 0, 1500 bytes; 1500 bytes of EtherType 0x88b5: $out"
check_eq "$out" "EMSGSIZE EMSGSIZE EMSGSIZE EINVAL 1500 1500" "a packet socket's sends on grim0"
# The IPv4 packet of 1500 zeros went to host 2 (version 0: a header
# error there); the packet of EtherType 0x88b5 never left host 1.
for ((t = 0; t < 50 * SLOW; t++)); do
	counters 1 A1
	counters 2 A2
	delta txdrop B1 A1 tx_dropped
	delta hdr B2 A2 IpInHdrErrors
	((txdrop >= 1 && hdr >= 1)) && break
	sleep 0.2
done
log "host 1: tx_dropped +$txdrop; host 2: IpInHdrErrors +$hdr"
[ "$txdrop" -ge 1 ] || fail "host 1's grim0 did not count the packet of EtherType 0x88b5 dropped"
[ "$hdr" -ge 1 ] || fail "host 2 did not count the packet socket's IPv4 packet a header error"

pretty "" "host 1 at MTU 1500: ping -s 3000 -M do fails, without DF it is fragmented"
out=$(nsx 1 ping -c 1 -W $((5 * SLOW)) -s 3000 -M do 10.77.0.2 2>&1) &&
	{ echo "$out"; fail "ping -s 3000 -M do worked at MTU 1500"; }
log "$(grep -im1 'too long' <<<"$out")"
check_match "$out" "[Mm]essage too long" "ping -s 3000 -M do at MTU 1500"
counters 1 B1
check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q -s 3000 -M dont 10.77.0.2 >/dev/null
counters 1 A1
delta frags B1 A1 IpFragCreates
log "host 1: IpFragCreates +$frags"
[ "$frags" -ge 6 ] || fail "host 1 made $frags fragments of 2 pings of 3028 bytes at MTU 1500"

# A packet larger than the receiver's MTU is taken: grim_ip_deliver()
# does not look at the MTU.  That is the intended behaviour: the MTU
# bounds what a link sends, not what it takes (IP itself never checks a
# received packet against it, and most Ethernet drivers take what fits
# their buffers); the message came whole and acknowledged over the
# reliable transport, whose own bound (GRIM_MAX_PAYLOAD) the receiving
# NI enforces; and dropping it would lose every large packet between two
# hosts whose MTUs differ, when IP has nothing (no ICMP "too big" for
# the receiver) to tell the sender.
pretty "" "host 1 at MTU 9000, host 2 at 1500: host 1's 9000-byte packets reach host 2 whole"
check_ok ip -n "$(host 1)" link set grim0 mtu 9000
check_ok ip -n "$(host 2)" link set grim0 mtu 1500
counters 1 B1
counters 2 B2
check_ok nsx 1 ping -c 2 -i 0.2 -W $((5 * SLOW)) -q -s 8972 -M do 10.77.0.2 >/dev/null
counters 1 A1
counters 2 A2
delta echos B2 A2 IcmpInEchos
delta reasm2 B2 A2 IpReasmReqds
delta frag2 B2 A2 IpFragCreates
delta reasm1 B1 A1 IpReasmOKs
log "host 2: IcmpInEchos +$echos IpReasmReqds +$reasm2 IpFragCreates +$frag2; host 1: IpReasmOKs +$reasm1"
# The requests (DF set) came whole; the replies were cut to host 2's MTU.
check_eq "$echos" 2 "echo requests of 9000 bytes taken by host 2"
check_eq "$reasm2" 0 "fragments host 2 reassembled"
[ "$frag2" -ge 14 ] || fail "host 2 made $frag2 fragments of 2 replies of 9000 bytes at MTU 1500"
check_eq "$reasm1" 2 "replies host 1 reassembled"
check_dmesg
exit $ksft_pass
