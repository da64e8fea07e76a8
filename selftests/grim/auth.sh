#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Authenticated links: a cluster key set with the grim tool.
#
# 1. Hosts 1 and 2 share a key; host 3 has another one.  1 and 2 talk;
#    host 3's frames are dropped and counted, and no peer 3 comes up.
#    The key is never shown, and only CAP_NET_ADMIN may set one.
# 2. Messages of 0 to 64000 bytes under loss, duplication and reordering
#    arrive exactly once, in order: duplicated frames are replays to the
#    receiver's window, and are dropped as such.
# 3. A key rollover under traffic (add key 2 on both, send with it on
#    one and then the other, remove key 1) loses and repeats nothing.
# 4. Host 2's link restarts (a new run, new nonces): host 1 takes the
#    new run once it answered a challenge, and traffic goes on.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool setpriv od
require_grim
require_grim_tool

keyfile() {	# PATH: 32 random bytes in hex
	od -An -tx1 -N32 /dev/urandom >"$1" || fail "key file"
}
k1=$(mktemp) k2=$(mktemp) kx=$(mktemp)
at_exit "rm -f $k1 $k2 $kx"
keyfile "$k1"
keyfile "$k2"
keyfile "$kx"

pretty "" "3 hosts: 1 and 2 share key 1, host 3 has a key 1 of its own"
setup_hosts 3
for i in 1 2 3; do
	grim_add "$(host $i)" eth0 grim0 address "$(grim_addr $i)" ||
		fail "grim0 on host $i"
	k=$k1
	[ $i = 3 ] && k=$kx
	nsx $i "$GRIM" key add dev grim0 id 1 secret-file "$k" ||
		fail "key on host $i"
	ip -n "$(host $i)" link set grim0 up || fail "grim0 up on host $i"
done
wait_peer_up 1 2
wait_peer_up 2 1
check_match "$(nsx 1 "$GRIM" key show dev grim0)" "grim0: key 1 \(tx\)$" "key show"
check_match "$(nsx 1 "$GRIM" link show dev grim0)" "authenticated: key 1" "link show"
secret=$(tr -d ' \n' <"$k1")
out=$(nsx 1 "$GRIM" -j -s link show dev grim0; nsx 1 "$GRIM" -j key show)
check_nomatch "$out" "$secret" "the key in what the tool shows"
sleep 2
st=$(nsx 1 "$GRIM" -j peer show dev grim0 node 3 2>&1)
check_nomatch "$st" '"state": *"up"' "host 1's peer 3"
[ "$(stat 1 rx_drop_auth)" -gt 0 ] || fail "host 3's hellos were not counted as rx_drop_auth"
log "host 1: rx_drop_auth $(stat 1 rx_drop_auth), from host 3's key"
nopriv=(setpriv --bounding-set=-net_admin --inh-caps=-net_admin)
out=$(nsx 1 "${nopriv[@]}" "$GRIM" key add dev grim0 id 7 secret-file "$k2" 2>&1)
check_match "$out" "Operation not permitted" "key add without CAP_NET_ADMIN"
out=$(nsx 1 "${nopriv[@]}" "$GRIM" key del dev grim0 id 1 2>&1)
check_match "$out" "Operation not permitted" "key del without CAP_NET_ADMIN"
out=$(nsx 1 "$GRIM" key add dev grim0 id 1 secret-file "$k2" 2>&1)
check_match "$out" "exists" "a second key 1"
out=$(nsx 1 "$GRIM" key del dev grim0 id 9 2>&1)
check_match "$out" "no key" "removing a key that is not there"

pretty "" "500 messages of 0..64000 bytes each way under 2% loss, 2% duplication, reordering"
netem_links "loss 2% duplicate 2% delay 1ms reorder 10% 50%"
bg nsx 2 "$RDM" recv -p 100 -n 500 -t 300
r2=$!
bg nsx 1 "$RDM" recv -p 100 -n 500 -t 300
r1=$!
wait_bound 2 100
wait_bound 1 100
f1=$(stat 1 tx_msgs_failed)
f2=$(stat 2 tx_msgs_failed)
o1=$(mktemp) o2=$(mktemp)
at_exit "rm -f $o1 $o2"
nsx 1 "$RDM" send -d 2 -p 100 -n 500 -m 0 -M 64000 -L -S 11 >"$o1" 2>&1 &
s1=$!
nsx 2 "$RDM" send -d 1 -p 100 -n 500 -m 0 -M 64000 -L -S 12 >"$o2" 2>&1 &
s2=$!
wait $s1 || fail "sender on host 1: $(cat "$o1")"
wait $s2 || fail "sender on host 2: $(cat "$o2")"
wait $r2 || fail "host 2 did not get the 500 messages exactly once, in order"
wait $r1 || fail "host 1 did not get the 500 messages exactly once, in order"
netem_clear
check_eq "$(stat 1 tx_msgs_failed)" "$f1" "messages failed on host 1"
check_eq "$(stat 2 tx_msgs_failed)" "$f2" "messages failed on host 2"
[ "$(stat 2 rx_drop_replay)" -gt 0 ] ||
	fail "no duplicated frame was dropped as a replay on host 2"
log "host 2: rx_drop_replay $(stat 2 rx_drop_replay) (netem's duplicates), rx_drop_auth $(stat 2 rx_drop_auth)"

ip -n "$(host 3)" link del grim0	# its hellos count as rx_drop_auth

pretty "" "key rollover under traffic: 4000 messages from host 1 to host 2"
bg nsx 2 "$RDM" recv -p 101 -n 4000 -t 300
r=$!
wait_bound 2 101
out=$(mktemp)
at_exit "rm -f $out"
nsx 1 "$RDM" send -d 2 -p 101 -n 4000 -m 0 -M 4000 -S 13 -i 2000 >"$out" &
s=$!
a2=$(stat 2 rx_drop_auth)
sleep 1
pp nsx 1 "$GRIM" key add dev grim0 id 2 secret-file "$k2" || fail "key 2 on host 1"
pp nsx 2 "$GRIM" key add dev grim0 id 2 secret-file "$k2" || fail "key 2 on host 2"
sleep 0.5
pp nsx 1 "$GRIM" key use dev grim0 id 2 || fail "host 1 sends with key 2"
sleep 0.5
pp nsx 2 "$GRIM" key use dev grim0 id 2 || fail "host 2 sends with key 2"
sleep 0.5
pp nsx 1 "$GRIM" key del dev grim0 id 1 || fail "key 1 off host 1"
pp nsx 2 "$GRIM" key del dev grim0 id 1 || fail "key 1 off host 2"
kill -0 $s 2>/dev/null || fail "the sender was done before the rollover ended: $(cat "$out")"
wait $s || fail "sender: $(cat "$out")"
wait $r || fail "host 2 lost or repeated messages over the rollover"
check_eq "$(stat 1 tx_msgs_failed)" "$f1" "messages failed on host 1"
check_eq "$(stat 2 rx_drop_auth)" "$a2" "frames host 2 dropped over the rollover"
check_match "$(nsx 2 "$GRIM" key show dev grim0)" "grim0: key 2 \(tx\)$" "host 2's keys after"
out2=$(nsx 2 "$GRIM" key del dev grim0 id 2 2>&1)
check_eq "$?" 0 "removing the last key: $out2"
nsx 2 "$GRIM" key add dev grim0 id 2 secret-file "$k2" || fail "key 2 back on host 2"

pretty "" "host 2's link restarts: a new run, taken by host 1 after a challenge"
n0=$(stat 1 rx_auth_new_runs)
ip -n "$(host 2)" link set grim0 down
ip -n "$(host 2)" link set grim0 up
wait_peer_up 1 2
wait_peer_up 2 1
[ "$(stat 1 rx_auth_new_runs)" -gt "$n0" ] || fail "host 1 took no new run of host 2"
bg nsx 2 "$RDM" recv -p 102 -n 100 -t 60
r=$!
wait_bound 2 102
out=$(nsx 1 "$RDM" send -d 2 -p 102 -n 100 -m 0 -M 64000 -S 14 2>&1) ||
	fail "sender after the restart: $out"
wait $r || fail "messages after the restart"
log "host 1: rx_auth_new_runs $(stat 1 rx_auth_new_runs), tx_auth_challenges $(stat 1 tx_auth_challenges), rx_drop_unproven $(stat 1 rx_drop_unproven)"
check_dmesg
exit 0
