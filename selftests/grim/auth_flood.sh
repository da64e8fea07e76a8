#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An attacker on the segment, without the cluster key.
#
# Hosts 1 and 2 share a key and exchange messages both ways.  Host 3 is
# the attacker: its port on the bridge sees every frame (the bridge
# floods, as a hub would), so it knows the node ids, MACs, generations,
# channels and sequence numbers of the traffic, and it has recorded
# frames of an earlier run of both links too.  It sends 100,000 frames
# to hosts 1 and 2 (grim_inject -m flood): exact replays of recorded
# frames of this run and of the earlier one, replays with a bit flipped
# or a newer generation, hellos, ACKs, NACKs, REJECTs and DATA forged
# with the real fields (half with a good CRC and no tag, half with a
# random tag), hellos from unknown node ids, DATA on unused channels.
#
# Nothing may change: no session reset, no peer down, no MAC re-learned,
# no new peer or stream, no forged message delivered or acknowledged;
# every frame of the flood is dropped and counted; the legitimate
# messages arrive exactly once, in order, and none fails.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool od python3
require_grim
require_grim_tool
require_ip_grim

INJECT=$(dirname "$0")/grim_inject
# Frames to each host.  A fifth on a debug kernel (SLOW 5), where each
# forged frame's check costs thirty times what it does on a stock one:
# the whole flood must pass within the streams' idle time (600 s), or
# streams close that the test compares before and after.
FLOOD=$((50000 / SLOW))
BATCH=300	# legitimate messages per checked batch, each way

key=$(mktemp) cap1=$(mktemp) cap2=$(mktemp) old1=$(mktemp) old2=$(mktemp)
TMP=$(mktemp -d)
at_exit "touch $TMP/stop; kill \$(cat $TMP/pids 2>/dev/null) 2>/dev/null; rm -rf $key $cap1 $cap2 $old1 $old2 $TMP"
od -An -tx1 -N32 /dev/urandom >"$key"

# py HOST EXPR ARGS...: EXPR over d, the JSON of "grim -j ARGS" on HOST.
py() {
	local h=$1 e=$2
	shift 2
	nsx "$h" "$GRIM" -j "$@" | python3 -c "import json,sys; d=json.load(sys.stdin); print($e)"
}
# peers HOST: "node/mac/state/lgen/rgen/tx-streams" of each peer of
# grim0: who it knows, where, which session, how many send streams; then
# "rx RX-STREAMS", the receive streams of all of them.  A receiver
# forgets a stream idle for 5 s (rx_streams_expired) whatever its
# sender's streamidle: the NIs' own streams of the link's group, idle
# once the link came up, go that way while the test runs.
peers() {
	py "$1" "' '.join('%s/%s/%s/%s/%s/%s' % (p['node'], p['mac'], p['state'], p['lgen'], p['rgen'], p['tx_streams']) for p in d) + ' rx %d' % sum(p['rx_streams'] for p in d)" peer show dev grim0
}

pretty "" "hosts 1 and 2 with a cluster key; host 3, the attacker, sees all frames"
setup_hosts 3
ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 0 || fail "hub mode"
for i in 1 2; do
	grim_add "$(host $i)" eth0 grim0 address "$(grim_addr $i)" ||
		fail "grim0 on host $i"
	nsx $i "$GRIM" key add dev grim0 id 1 secret-file "$key" || fail "key"
	# The peers' streams are compared before and after the flood: they
	# must outlive the test (over a minute on a slow guest), not close
	# after 1 s idle.  The longest streamidle there is.
	ip -n "$(host $i)" link set grim0 type grim streamidle 600000 ||
		fail "streamidle on host $i"
	ip -n "$(host $i)" link set grim0 up || fail "grim0 up on host $i"
done
wait_peer_up 1 2
wait_peer_up 2 1

pretty "" "the attacker records frames of this run, then both links restart"
bg nsx 2 "$RDM" recv -p 90 -n 300 -t 120
r=$!
wait_bound 2 90
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m capture -k 400 -f "$old2" -t 60 &
c2=$!
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 1)" -m capture -k 400 -f "$old1" -t 60 &
c1=$!
sleep 0.5
nsx 1 "$RDM" send -d 2 -p 90 -n 300 -m 0 -M 3000 -S 21 -i 5000 >/dev/null ||
	fail "traffic of the first run"
wait $r || fail "traffic of the first run"
wait $c2 || fail "capture of the first run (host 2)"
wait $c1 || fail "capture of the first run (host 1)"
for i in 1 2; do
	ip -n "$(host $i)" link set grim0 down
	ip -n "$(host $i)" link set grim0 up
done
wait_peer_up 1 2
wait_peer_up 2 1

pretty "" "batches of $BATCH messages each way; the attacker records frames of this run"
rx0_1=$(stat 1 rx_msgs)
rx0_2=$(stat 2 rx_msgs)
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m capture -k 200 -f "$cap2" -t 60 &
c2=$!
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 1)" -m capture -k 200 -f "$cap1" -t 60 &
c1=$!
sleep 0.5
# Every batch sends from the same port: the peers' streams stay as they are.
rdm_batches "$TMP" 1 2 100 $BATCH -b 101 -m 0 -M 64000 -L -i 3000 &
t1=$!
rdm_batches "$TMP" 2 1 100 $BATCH -b 102 -m 0 -M 64000 -L -i 3000 &
t2=$!
_PIDS+=($t1 $t2)
wait $c2 || fail "capture (host 2)"
wait $c1 || fail "capture (host 1)"
cat "$old2" >>"$cap2"
cat "$old1" >>"$cap1"

declare -A b
snap() {	# snap TAG: counters and peers of both hosts
	local i c
	for i in 1 2; do
		stats $i
		for c in peer_session_resets peer_down_events rx_msgs tx_msgs_failed \
			 rx_drop_auth rx_drop_replay rx_drop_unproven rx_drop_not_for_us \
			 tx_auth_challenges rx_drop_table_full rx_streams_expired; do
			b[$1.$i.$c]=${S[$c]?}
		done
		b[$1.$i.peers]=$(peers $i)
		# The receive streams the flood found, less those forgotten
		# idle since: the flood made none and ended none.
		b[$1.$i.peers]="${b[$1.$i.peers]% rx *} rx $((${b[$1.$i.peers]##* rx } + b[$1.$i.rx_streams_expired]))"
	done
}
snap before
log "host 1 peers: ${b[before.1.peers]}"
log "host 2 peers: ${b[before.2.peers]}"

pretty "" "the flood: $FLOOD frames to each host"
t0=$(date +%s%N)
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 2)" -m flood -k $FLOOD -f "$cap2" -S 5 >"$cap2.out" 2>&1 &
f2=$!
nsx 3 "$INJECT" -i eth0 -d "$(host_mac 1)" -m flood -k $FLOOD -f "$cap1" -S 6 >"$cap1.out" 2>&1 &
f1=$!
at_exit "rm -f $cap1.out $cap2.out"
wait $f2 || fail "flood to host 2: $(cat "$cap2.out")"
wait $f1 || fail "flood to host 1: $(cat "$cap1.out")"
log "$(cat "$cap2.out")"
log "the flood took $((($(date +%s%N) - t0) / 1000000)) ms"
sleep 1
snap after
overlap=yes
kill -0 $t1 2>/dev/null && kill -0 $t2 2>/dev/null || overlap=no

pretty "" "nothing changed on either host"
for i in 1 2; do
	for c in peer_session_resets peer_down_events tx_msgs_failed rx_drop_table_full; do
		check_eq "${b[after.$i.$c]}" "${b[before.$i.$c]}" "host $i: $c"
	done
	check_eq "${b[after.$i.peers]}" "${b[before.$i.peers]}" "host $i: peers (node/mac/state/streams)"
	d=0
	for c in rx_drop_auth rx_drop_replay rx_drop_unproven rx_drop_not_for_us; do
		n=$((b[after.$i.$c] - b[before.$i.$c]))
		d=$((d + n))
		log "host $i: $c +$n"
	done
	log "host $i: tx_auth_challenges +$((b[after.$i.tx_auth_challenges] - b[before.$i.tx_auth_challenges]))"
	[ $d -ge $((FLOOD * 9 / 10)) ] ||
		fail "host $i counted $d dropped frames of the $FLOOD sent to it"
done

pretty "" "the legitimate messages: all there, once, in order"
touch "$TMP/stop"
wait $t1
wait $t2
for i in 1 2; do
	n=$(rdm_batches_ok "$TMP" $i) || exit 1
	sent[$i]=$((n * BATCH))
	log "host $i sent $n batches of $BATCH messages, all checked"
done
[ $overlap = yes ] || fail "the legitimate traffic stopped before the flood ended"
for i in 1 2; do
	check_eq "$(stat $i tx_msgs_failed)" "${b[before.$i.tx_msgs_failed]}" "host $i: failed messages"
done
# Messages the NIs delivered: the legitimate ones and nothing else.
check_eq "$(($(stat 2 rx_msgs) - rx0_2))" "${sent[1]}" "messages delivered on host 2"
check_eq "$(($(stat 1 rx_msgs) - rx0_1))" "${sent[2]}" "messages delivered on host 1"
check_dmesg
exit 0
