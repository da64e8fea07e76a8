#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (compares the slab (SUnreclaim) before and after)
#
# The attacker of auth_flood.sh against links without a key.
#
# Without a key every host on the segment is trusted (grim.rst, Trust):
# its forged frames can reset sessions and deliver messages.  What it
# cannot do is make an NI keep more than the documented limits: new
# peers from hellos at most GRIM_PEER_BURST (64) at once and 16 a second
# after, at most 1024 in all; rx streams at most 16384 per NI; and
# every peer it made up is reclaimed once silent for 2 * dead_ms, with
# its memory.  After the flood the two hosts talk again.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_grim_tool

INJECT=$(dirname "$0")/grim_inject
FLOOD=50000
DEAD_MS=4000

# peer_table HOST: "ENTRIES RX_STREAMS", the entries of HOST's grim0 peer
# table and their receive streams summed, from the tool's plain output
# read by the shell: the flood is sampled every half second, and a
# python3 start costs about a second under TCG.  Output it cannot read
# ends the test (this runs in a subshell; $$ is the test).
peer_table() {
	local out l n=0 rx=0 s
	out=$(nsx "$1" "$GRIM" peer show dev grim0) || {
		echo "FAIL: $TEST_NAME: grim peer show on host $1" >&2
		kill -TERM $$
	}
	while read -r l; do
		[ -n "$l" ] || continue
		s=${l#* streams }
		s=${s%% *}
		if [[ $l != *": node "* || ! $s =~ ^[0-9]+/[0-9]+$ ]]; then
			echo "FAIL: $TEST_NAME: host $1: a peer line without its streams: $l" >&2
			kill -TERM $$
		fi
		n=$((n + 1))
		rx=$((rx + ${s#*/}))
	done <<<"$out"
	echo "$n $rx"
}
npeers() { local t; t=$(peer_table "$1"); echo "${t% *}"; }
nrxs() { local t; t=$(peer_table "$1"); echo "${t#* }"; }

cap1=$(mktemp) cap2=$(mktemp)
at_exit "rm -f $cap1 $cap2 $cap1.out $cap2.out"

pretty "" "hosts 1 and 2 without a key; host 3, the attacker, sees all frames"
setup_hosts 3
ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 0 || fail "hub mode"
grim_cluster 2
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 100 -n 100000000 -t 600
bg nsx 1 "$RDM" recv -p 100 -n 100000000 -t 600
wait_bound 2 100
wait_bound 1 100
bg nsx 1 "$RDM" send -d 2 -p 100 -n 100000000 -m 0 -M 64000 -L -S 31 -i 3000 -E
bg nsx 2 "$RDM" send -d 1 -p 100 -n 100000000 -m 0 -M 64000 -L -S 32 -i 3000 -E
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m capture -k 200 -f "$cap2" -t 60 >/dev/null ||
	fail "capture (host 2)"
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 1)" -m capture -k 200 -f "$cap1" -t 60 >/dev/null ||
	fail "capture (host 1)"
p0_1=$(npeers 1) p0_2=$(npeers 2)
lim0_1=$(stat 1 rx_drop_table_full) lim0_2=$(stat 2 rx_drop_table_full)
slab0=$(slab_kb)
log "peers: host 1 $p0_1, host 2 $p0_2; unreclaimable slab $slab0 KiB"

pretty "" "the flood: $FLOOD frames to each host"
t0=$(date +%s)
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m flood -k $FLOOD -f "$cap2" -S 7 >"$cap2.out" 2>&1 &
f2=$!
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 1)" -m flood -k $FLOOD -f "$cap1" -S 8 >"$cap1.out" 2>&1 &
f1=$!
max1=0 max2=0
while kill -0 $f1 2>/dev/null || kill -0 $f2 2>/dev/null; do
	n=$(npeers 1); [ "$n" -gt $max1 ] && max1=$n
	n=$(npeers 2); [ "$n" -gt $max2 ] && max2=$n
	sleep 0.5
done
wait $f2 || fail "flood to host 2: $(cat "$cap2.out")"
wait $f1 || fail "flood to host 1: $(cat "$cap1.out")"
secs=$(($(date +%s) - t0 + 1))
log "$(cat "$cap2.out")"
slab1=$(slab_kb)
for i in 1 2; do
	n=$(npeers $i)
	m=max$i
	[ "$n" -gt "${!m}" ] && eval "max$i=$n"
	r=$(nrxs $i)
	lim=lim0_$i
	log "host $i: at most ${!m} peers during the flood, $n after it; $r rx streams; rx_drop_table_full +$(($(stat $i rx_drop_table_full) - ${!lim}))"
	# The budget: a burst, then GRIM_PEER_RATE a second (and the
	# first few peers that were there).
	bound=$((64 + 16 * secs + 4))
	[ "${!m}" -le $bound ] || fail "host $i kept ${!m} peers, more than $bound in $secs s"
	[ "$r" -le 16384 ] || fail "host $i has $r rx streams"
done
log "unreclaimable slab: $slab0 KiB before, $slab1 KiB after the flood"

pretty "" "the made-up peers are reclaimed after 2 * dead_ms"
for ((i = 0; i < 40; i++)); do
	[ "$(npeers 1)" -le "$p0_1" ] && [ "$(npeers 2)" -le "$p0_2" ] && break
	sleep 0.5
done
check_eq "$(npeers 1)" "$p0_1" "host 1's peers, $((i / 2)) s later"
check_eq "$(npeers 2)" "$p0_2" "host 2's peers"
sleep 1
slab2=$(slab_kb)
log "unreclaimable slab: $slab2 KiB after the reclaim"
if dmesg | grep -q "KernelAddressSanitizer initialized"; then
	# Freed objects wait in KASAN's quarantine: make check-debug's
	# kmemleak scan looks for leaks there instead.
	log "(a KASAN kernel: freed memory sits in its quarantine, not checked)"
else
	[ $((slab2 - slab0)) -lt 4096 ] ||
		fail "unreclaimable slab grew by $((slab2 - slab0)) KiB and stayed"
fi

pretty "" "hosts 1 and 2 talk again"
wait_peer_up 1 2
wait_peer_up 2 1
bg nsx 2 "$RDM" recv -p 101 -n 200 -t 120
r=$!
wait_bound 2 101
nsx 1 "$RDM" send -d 2 -p 101 -n 200 -m 0 -M 64000 -S 33 >/dev/null || fail "sender"
wait $r || fail "the 200 messages after the flood"
check_dmesg
exit 0
