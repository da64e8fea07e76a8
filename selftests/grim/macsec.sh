#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# GRIM over MACsec: what grim.rst offers for confidentiality, since a
# cluster key authenticates frames but does not encrypt them.  Each host
# puts an encrypting MACsec device on eth0 and the grim link on that;
# messages arrive exactly once, in order, and their payload never shows
# on eth0 in clear (the same message sent over a plain grim link does,
# which shows that the check can see it).

source "$(dirname "$0")/lib.sh"
require_root
require_cmd python3 od
require_grim
require_mod macsec

key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')

# sniff HOST SECONDS HEX READY: "hits frames": how many of the frames on
# HOST's eth0 in SECONDS carry the bytes HEX; creates READY once it
# listens.
sniff() {
	ip netns exec "$(host "$1")" python3 -c '
import socket, sys, time
pat = bytes.fromhex(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("eth0", 0))
s.settimeout(0.2)
open(sys.argv[3], "w").close()
end, hits, n = time.time() + float(sys.argv[1]), 0, 0
while time.time() < end:
    try:
        f = s.recv(65536)
    except socket.timeout:
        continue
    n += 1
    hits += pat in f
print(hits, n)' "$2" "$3" "$4"
}

# wait_ready FILE
wait_ready() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	fail "the sniffer did not start"
}

pretty "" "2 hosts; macsec0 (encrypting) on each eth0, grim0 on macsec0"
setup_hosts 2
for i in 1 2; do
	h=$(host $i)
	ip -n "$h" link add link eth0 macsec0 type macsec port 1 encrypt on ||
		skip "no MACsec here"
	ip -n "$h" macsec add macsec0 tx sa 0 pn 1 on key 01 "$key" || fail "tx sa"
	o=$((3 - i))
	ip -n "$h" macsec add macsec0 rx port 1 address "$(host_mac $o)" || fail "rx sc"
	ip -n "$h" macsec add macsec0 rx port 1 address "$(host_mac $o)" sa 0 pn 1 on \
		key 01 "$key" || fail "rx sa"
	ip -n "$h" link set macsec0 up
	grim_add "$h" macsec0 grim0 address "$(grim_addr $i)" || fail "grim0 on macsec0"
	ip -n "$h" link set grim0 up
done
wait_peer_up 1 2

pretty "" "200 messages of 1000..8000 bytes over MACsec: exactly once, never in clear"
bg nsx 2 "$RDM" recv -p 100 -n 200 -t 120
r=$!
wait_bound 2 100
# The first 64 payload bytes of message 0 from seed 77.
pat=$("$RDM" pattern -S 77 -n 0 -l 64) || fail "grim_rdm pattern"
out=$(mktemp) ready=$(mktemp -u)
at_exit "rm -f $out $ready"
sniff 1 8 "$pat" "$ready" >"$out" &
sn=$!
wait_ready "$ready"
nsx 1 "$RDM" send -d 2 -p 100 -n 200 -m 1000 -M 8000 -S 77 >/dev/null || fail "sender"
wait $r || fail "messages over MACsec"
wait $sn
read -r hits frames <"$out"
log "eth0 of host 1: $frames frames, $hits with the payload in clear"
[ "$frames" -gt 200 ] || fail "the sniffer saw only $frames frames"
check_eq "$hits" 0 "frames with the payload in clear on eth0"

pretty "" "the same over a plain grim link: the sniffer sees the payload"
for i in 1 2; do
	grim_add "$(host $i)" eth0 grim1 address "$(grim_addr $((i + 10)))" ||
		fail "grim1 on host $i"
	ip -n "$(host $i)" link set grim1 up
done
bg nsx 2 "$RDM" recv -p 101 -n 20 -t 120
r=$!
wait_bound 2 101
wait_peer_up 1 12
rm -f "$ready"
sniff 1 6 "$pat" "$ready" >"$out" &
sn=$!
wait_ready "$ready"
nsx 1 "$RDM" send -d 12 -p 101 -n 20 -m 1000 -M 8000 -S 77 >/dev/null || fail "sender"
wait $r || fail "messages over the plain link"
wait $sn
read -r hits frames <"$out"
log "eth0 of host 1: $frames frames, $hits with the payload in clear"
[ "$hits" -gt 0 ] || fail "the sniffer cannot see a payload in clear"
check_dmesg
exit 0
