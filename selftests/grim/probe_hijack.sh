#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A forged probe must not take a peer's session for good.
#
# Without a key anyone on the segment can reset a session (grim.rst,
# Trust).  One unicast probe that claims node 1 to host 2 with a newer
# session generation once made host 2 hold that generation for ever:
# node 1's real hellos kept the peer up, node 1's frames all looked older
# than the forged generation, and host 2's messages to node 1 were
# retransmitted without end.  Host 2's probes now tell node 1 which of
# its generations host 2 holds; node 1, finding it newer than its own,
# starts a session past it, and both are back within a hello interval.
# That holds whether the probe came from another MAC or from node 1's
# own; a static peer takes hellos and probes from its own MAC alone.
#
# A hello or probe from another MAC keeps the session: the Ethernet
# header is outside the frame check, and a link that damages frames
# (netem corrupt in faults.sh) once reset sessions with it.  A hello from
# a multicast source is dropped (rx_drop_bad_mac): a bridge drops those
# itself, so they are sent from the switch's port.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim
require_grim_tool

INJECT=$(dirname "$0")/grim_inject
BOUND=20	# seconds for 100 messages once node 1 is back

# back HOST NODE STEP: host HOST's messages to NODE arrive, all of them,
# within BOUND seconds (STEP names the step in a failure).
back() {
	local h=$1 n=$2 p=$((110 + $1)) r out
	out=$(mktemp)
	bg nsx "$n" "$RDM" recv -p $p -n 100 -t $((BOUND + 10))
	r=$!
	wait_bound "$n" $p
	timeout $BOUND ip netns exec "$(host "$h")" "$RDM" send -d "$n" -p $p \
		-n 100 -M 2000 -S $p -R $BOUND >"$out" 2>&1 ||
		fail "$3: host $h's messages to node $n: $(cat "$out") (host $h: $(stat "$h" rx_drop_stale_session) frames of another session dropped)"
	wait $r || fail "$3: node $n lost messages from host $h"
	rm -f "$out"
}

pretty "" "3 hosts; host 3 has node 1 as a static peer; host 1 sends to 2 and 3"
setup_hosts 3
grim_cluster 3
nsx 3 "$GRIM" peer add dev grim0 node 1 mac "$(host_mac 1)" ||
	fail "static peer on host 3"
senders=()
for i in 2 3; do
	wait_peer_up 1 $i
	wait_peer_up $i 1
	bg nsx $i "$RDM" recv -p 101 -n 100000000 -t $((600 * SLOW))
	wait_bound $i 101
	bg nsx 1 "$RDM" send -d $i -p 101 -n 100000000 -M 200 -S 7
	senders+=($!)
done

pretty "" "node 1's own hello and probe, with a bit of the source MAC flipped"
K=16
for i in 2 3; do
	b0=$(stat $i rx_drop_bad_mac)
	out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac $i)" -m macflip -k $K -t 60 \
		-o "$SWITCH_NS:p$i" 2>&1) ||
		fail "grim_inject: $out"
	log "$out"
	sleep 2
	check_eq "$(stat $i peer_session_resets)" 0 "session resets on host $i after frames from damaged MACs"
	check_eq "$(($(stat $i rx_drop_bad_mac) - b0))" $K "hellos from a multicast MAC dropped on host $i"
	back $i 1 "after the damaged frames"
	back 1 $i "after the damaged frames"
done
for p in "${senders[@]}"; do
	kill -0 "$p" 2>/dev/null || fail "a sender of host 1 stopped during the damaged frames"
done

for i in 2 3; do
	pretty "" "a forged probe claims node 1 to host $i, with a newer generation"
	out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac $i)" -m probe -k 1 -t 60 2>&1) ||
		fail "grim_inject: $out"
	log "$out"
	# The forged session, if taken, is over at host $i's next probe.
	sleep 2
	back $i 1 "after the forged probe"
	back 1 $i "after the forged probe"
done
log "host 2: peer_session_resets $(stat 2 peer_session_resets); host 3: $(stat 3 peer_session_resets)"
check_eq "$(stat 3 peer_session_resets)" 0 "session resets on host 3 (static peer)"

for i in 2 3; do
	pretty "" "a forged probe from node 1's own MAC to host $i, with a newer generation"
	# traffic for grim_inject's template of the session
	bg nsx $i "$RDM" recv -p 121 -n 100000000 -t $((600 * SLOW))
	wait_bound $i 121
	bg nsx 1 "$RDM" send -d $i -p 121 -n 100000000 -M 200 -S 7
	r0=$(stat 1 peer_session_resets)
	out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac $i)" -m probe -k 1 -t 60 \
		-M "$(host_mac 1)" 2>&1) || fail "grim_inject: $out"
	log "$out"
	sleep 2
	back $i 1 "after the forged probe from node 1's MAC"
	back 1 $i "after the forged probe from node 1's MAC"
	[ "$(stat 1 peer_session_resets)" -gt "$r0" ] ||
		fail "node 1 did not start a session past the forged one with host $i"
done
# A forged hello of a newer NI run claiming node 1: host 2 takes it as
# node 1's restart and resets its streams with node 1.  It must start a
# session of its own too: node 1 knows of no restart, and its streams,
# mid-sequence in the session host 2 kept, once met host 2's streams
# started over and stalled for good.  Now node 1's frames name host 2's
# old session, host 2's probe tells node 1 of the new one, and node 1
# resets as well.  A sender that was mid-stream ends with ECONNRESET or
# goes on.
pretty "" "a forged hello claims a restart of node 1 while both send"
o1=$(mktemp)
o2=$(mktemp)
at_exit "rm -f $o1 $o2"
bg nsx 2 "$RDM" recv -p 161 -n 100000000 -g -t $((600 * SLOW))
wait_bound 2 161
bg nsx 1 "$RDM" recv -p 162 -n 100000000 -g -t $((600 * SLOW))
wait_bound 1 162
bg nsx 1 "$RDM" send -d 2 -p 161 -n 100000000 -M 200 -S 7 >"$o1" 2>&1
s1=$!
bg nsx 2 "$RDM" send -d 1 -p 162 -n 100000000 -M 200 -S 7 >"$o2" 2>&1
s2=$!
r0=$(stat 2 peer_session_resets)
d0=$(stat 2 peer_down_events)
out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m hello -p 1 -k 1 -t 60 2>&1) ||
	fail "grim_inject: $out"
log "$out"
sleep 4
[ "$(stat 2 peer_session_resets)" -gt "$r0" ] ||
	fail "host 2 did not take the forged hello as node 1's restart"
for d in "1 2 $s1 $o1" "2 1 $s2 $o2"; do
	set -- $d
	if kill -0 "$3" 2>/dev/null; then
		m0=$(stat "$2" rx_msgs)
		sleep 2
		[ "$(stat "$2" rx_msgs)" -gt "$m0" ] ||
			fail "host $1's stream to node $2 stalled after the forged hello"
		log "host $1's stream to node $2 goes on"
	else
		wait "$3"
		check_match "$(cat "$4")" "errno 104" "host $1's stream to node $2 after the forged hello"
		log "host $1's stream to node $2: $(cat "$4")"
	fi
done
# Node 1's broadcast hellos carry an older base than the forged one now:
# host 2 drops them.  They once stopped keeping node 1 alive there, and
# host 2 took node 1 for down after dead_ms without its data.  Host 2
# now answers such a hello with a probe, and node 1's answer keeps it.
for p in $s1 $s2; do	# no traffic from here on
	pkill -P "$p" 2>/dev/null
	kill "$p" 2>/dev/null
done
sleep 6		# dead_ms + hello_ms + slack
check_eq "$(($(stat 2 peer_down_events) - d0))" 0 "host 2's peer-down events after the forged hello, idle"
back 1 2 "after the forged hello"
back 2 1 "after the forged hello"

# A generation about 2^31 past the clock is newer than a young session's
# (node 1's is well ahead of the clock after the steps above), yet the
# clock is past it in sequence order.  Node 1, finding that host 2 holds
# it, must start past it in one step: its next generation was once the
# clock's plus a random step, which mostly fell before the forged one
# again, and node 1 started over at every probe of host 2 (one each
# 50 ms) until the clock got past the forged generation.
pretty "" "a forged probe from node 1's MAC, half the ring past the clock"
for k in 1 2; do
	# a sender to sniff: the first forged probe ends it with ECONNRESET
	bg nsx 2 "$RDM" recv -p $((150 + k)) -n 100000000 -g -t $((600 * SLOW))
	wait_bound 2 $((150 + k))
	bg nsx 1 "$RDM" send -d 2 -p $((150 + k)) -n 100000000 -M 200 -S 7
	r0=$(stat 1 peer_session_resets)
	if [ $k = 1 ]; then	# a newer session for node 1, far past the clock
		gen=()
	else
		gen=(-G $((0x80000000 + 2000)))
	fi
	out=$(nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m probe -k 1 -t 60 \
		-M "$(host_mac 1)" "${gen[@]}" 2>&1) || fail "grim_inject: $out"
	log "$out"
	# node 1 hears of it at host 2's next probe; then two seconds more
	# for a node that would start over at every probe (one each 50 ms)
	for ((t = 0; t < 100 * SLOW; t++)); do
		[ "$(stat 1 peer_session_resets)" -gt "$r0" ] && break
		sleep 0.1
	done
	sleep 2
	r=$(($(stat 1 peer_session_resets) - r0))
	log "node 1 started over $r times"
	[ $r -ge 1 ] || fail "node 1 did not start past the forged session ($k)"
	[ $r -le 2 ] || fail "node 1 started over $r times after one forged probe ($k)"
done
back 2 1 "after the forged probe half the ring past the clock"
back 1 2 "after the forged probe half the ring past the clock"

# Both sides forged at once, each holding a generation of the other's
# that never was: neither takes the other's frames, until one finds the
# other's view of it newer than its own.
pretty "" "forged probes to hosts 1 and 2 at once, each claiming the other"
p1=$(mktemp)
p2=$(mktemp)
go=$(mktemp -u)
at_exit "rm -f $p1 $p2 $go"
bg nsx 1 "$INJECT" -i eth0 -d "$(host_mac 2)" -m probe -k 1 -t 60 -g "$go" >"$p1" 2>&1
i1=$!
bg nsx 2 "$INJECT" -i eth0 -d "$(host_mac 1)" -m probe -k 1 -t 60 -g "$go" >"$p2" 2>&1
i2=$!
# a little traffic each way for the templates; idle when the probes go
for d in "1 2" "2 1"; do
	set -- $d
	bg nsx "$2" "$RDM" recv -p 131 -n 50 -t 60
	wait_bound "$2" 131
	nsx "$1" "$RDM" send -d "$2" -p 131 -n 50 -M 200 -S 3 >/dev/null ||
		fail "host $1's traffic for the template"
done
touch "$go"
wait $i1 || fail "grim_inject on host 1: $(cat "$p1")"
wait $i2 || fail "grim_inject on host 2: $(cat "$p2")"
log "$(cat "$p1" "$p2")"
# Both sides are up in the forged sessions and idle: the first frame
# each way shows the forgery, and the sessions start over.  The message
# it carried may fail with ECONNRESET, and in no other way.
for d in "1 2" "2 1"; do
	set -- $d
	bg nsx "$2" "$RDM" recv -p 141 -n 1 -t 60
	wait_bound "$2" 141
	out=$(timeout 30 ip netns exec "$(host "$1")" "$RDM" send -d "$2" \
		-p 141 -n 1 -M 100 2>&1) ||
		check_match "$out" "errno 104" "host $1's first message after the forged probes"
	log "host $1's first message: $out"
done
sleep 2
back 2 1 "after forged probes to both sides"
back 1 2 "after forged probes to both sides"
check_dmesg
exit 0
