#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# GRIM demo, run inside the VM by `make demo` (scripts/vm-run.sh --script).
# Three hosts (network namespaces) on one Ethernet switch (a bridge in a
# fourth namespace), a grim NI on each host's eth0.
#
# To extend: write a step_<name> function and add it to STEPS.
RDM=$(cd "$(dirname "$0")/.." && pwd)/selftests/grim/grim_rdm
GRIM_TOOL=$(cd "$(dirname "$0")/.." && pwd)/tools/grim/grim
UDP_SEQ=$(cd "$(dirname "$0")/.." && pwd)/selftests/grim/udp_seq
source "$(dirname "$0")/../selftests/grim/lib.sh"
TEST_NAME=demo
N=${DEMO_HOSTS:-3}

banner() {
	echo
	echo "=============================================================="
	echo "  $*"
	echo "=============================================================="
}

step_topology() {
	banner "1. $N hosts on an Ethernet switch"
	setup_hosts "$N"
	log "switch namespace $SWITCH_NS: bridge br0 with ports p1..p$N"
	for ((i = 1; i <= N; i++)); do
		log "host $i = netns $(host "$i"), eth0 $(host_mac "$i")"
	done
	pp ip -n "$SWITCH_NS" -br link show master br0
}

step_module() {
	banner "2. Load the GRIM module"
	require_grim
	log "\$ modinfo ${GRIM_KO:-grim}"
	modinfo "${GRIM_KO:-grim}" | grep -E '^(filename|description|version|vermagic):' | sed 's/^/    /'
	log "\$ lsmod"
	lsmod | grep -E '^(Module|grim) ' | sed 's/^/    /'
}

step_links() {
	banner "3. A GRIM NI on each host: ip link add link eth0 name grim0 address 00:00:00:0N type grim"
	ip_ipv6_on	# grim0 is an IP interface too (step 12)
	for ((i = 1; i <= N; i++)); do
		pretty "$(host "$i")" "create grim0 (node $i)"
		pp ip -n "$(host "$i")" link add link eth0 name grim0 \
			address "$(printf '00:00:%02x:%02x' $((i >> 8)) $((i & 255)))" type grim ||
			fail "creating grim0 on host $i"
		pp ip -n "$(host "$i")" link set grim0 up || fail "grim0 up on host $i"
	done
}

step_show() {
	banner "4. What the hosts see"
	for ((i = 1; i <= N; i++)); do
		pretty "$(host "$i")" "ip -d link show grim0"
		ip -n "$(host "$i")" -d link show grim0 | sed 's/^/    /'
		log "node address: $(grim_node "$(host "$i")" grim0)"
	done
}

step_messages() {
	banner "5. Reliable messages: hosts 1 and 2 send 2000 messages each (0..64572 B) to host 3"
	log "every message carries its sequence, length and content hash in the"
	log "active-message arguments; the receiver checks each byte and the order"
	wait_peer_up 1 3
	wait_peer_up 2 3
	nsx 3 "$RDM" recv -p 100 -n 4000 -t 300 | sed 's/^/    /' &
	wait_bound 3 100
	nsx 1 "$RDM" send -d 3 -p 100 -n 2000 -M 64572 -L -S 1 | sed 's/^/    [host 1] /' &
	nsx 2 "$RDM" send -d 3 -p 100 -n 2000 -M 64572 -L -S 2 | sed 's/^/    [host 2] /'
	wait
	show_counters 3 'rx_msgs|rx_bytes|tx_acks|tx_nacks'
}

# show_counters HOST REGEX: the matching ethtool -S counters of HOST.
show_counters() {
	log "host $1 \$ ethtool -S grim0 | grep -E '$2'"
	nsx "$1" ethtool -S grim0 | grep -E "$2" | sed 's/^/    /'
}

step_faults() {
	banner "6. The same over a hostile network: loss 10%, duplication 5%, reordering 25%, corruption 1% on every link"
	netem_links "delay 1ms reorder 25% 50% loss 10% duplicate 5% corrupt 1%"
	pp tc -n "$(host 1)" qdisc show dev eth0
	nsx 3 "$RDM" recv -p 101 -n 2000 -t 300 | sed 's/^/    /' &
	wait_bound 3 101
	nsx 1 "$RDM" send -d 3 -p 101 -n 1000 -M 64572 -L -S 3 | sed 's/^/    [host 1] /' &
	nsx 2 "$RDM" send -d 3 -p 101 -n 1000 -M 64572 -L -S 4 | sed 's/^/    [host 2] /'
	wait
	log "what the NIs repaired (and tx_batches/rx_batches: runs of frames that"
	log " crossed the veths as one packet, taken apart again by the receiver):"
	show_counters 1 'retransmit|fast_retransmits|tx_frames|tx_batches'
	show_counters 3 'rx_duplicate|rx_out_of_order|bad_checksum|bad_magic|rx_batches'
	netem_clear
}

step_slow_receiver() {
	banner "7. A slow receiver: the receiving NI NACKs, the sender backs off, nothing is lost"
	nsx 3 "$RDM" recv -p 102 -n 100 -t 120 -s 20000 -r 16384 | sed 's/^/    /' &
	wait_bound 3 102
	nsx 1 "$RDM" send -d 3 -p 102 -n 100 -m 4000 -M 16000 -S 5 | sed 's/^/    [host 1] /'
	wait
	show_counters 3 'tx_nacks|rx_drop_stream_refused'
	show_counters 1 'rx_nacks'
}

step_errqueue() {
	banner "8. Messages nobody can take: their sender learns which, and why"
	log "(host 1 sends 6 messages, alternating between port 104, where host 3"
	log " listens, and port 555, where nobody does; host 3's NI refuses those"
	log " on the wire, and each comes back on host 1's socket error queue)"
	nsx 3 "$RDM" recv -p 104 -n 3 -t 60 | sed 's/^/    [host 3] /' &
	wait_bound 3 104
	nsx 1 "$RDM" errq -d 3 -p 555 -q 104 -n 6 -M 1000 -x 3 | sed 's/^/    [host 1] /'
	wait
	show_counters 3 'tx_rejects'
	show_counters 1 'rx_rejects|tx_msgs_failed'
}

step_tool() {
	[ -x "$GRIM_TOOL" ] || return 0
	banner "9. The grim tool: peers and links as host 1 sees them"
	pp nsx 1 "$GRIM_TOOL" peer show
	pp nsx 1 "$GRIM_TOOL" link show
}

step_auth() {
	[ -x "$GRIM_TOOL" ] || return 0
	local key inject cap
	banner "10. A cluster key: every frame authenticated, a forger on the wire harmless"
	key=$(mktemp) cap=$(mktemp)
	inject=$(dirname "$RDM")/grim_inject
	od -An -tx1 -N32 /dev/urandom >"$key"
	for ((i = 1; i <= N; i++)); do
		pp nsx "$i" "$GRIM_TOOL" key add dev grim0 id 1 secret-file "$key" ||
			fail "key on host $i"
	done
	wait_peer_up 1 3
	pp nsx 1 "$GRIM_TOOL" key show
	log "(the switch now floods every frame, so that host 2 sees the traffic"
	log " from host 1 to host 3; host 2 records it, then sends host 3 20000"
	log " replayed and forged frames while the messages flow)"
	ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 0
	nsx 3 "$RDM" recv -p 105 -n 1000 -t 300 | sed 's/^/    [host 3] /' &
	wait_bound 3 105
	nsx 1 "$RDM" send -d 3 -p 105 -n 1000 -M 64572 -L -S 6 -i 5000 | sed 's/^/    [host 1] /' &
	nsx 2 "$inject" -i eth0 -d "$(host_mac 3)" -m capture -k 200 -f "$cap" >/dev/null &&
		nsx 2 "$inject" -i eth0 -d "$(host_mac 3)" -m flood -k 20000 -f "$cap" |
		grep '^flood: [0-9]' | sed 's/^/    [host 2] /'
	wait
	ip -n "$SWITCH_NS" link set br0 type bridge ageing_time 30000
	show_counters 3 'rx_drop_auth|rx_drop_replay|rx_drop_unproven|peer_session_resets'
	rm -f "$key" "$cap"
}

step_congestion() {
	banner "11. A congested switch port: host 3's port is a 4 Mbit/s token bucket"
	log "(hosts 1 and 2 stream 4000-byte messages to host 3 for 10 s; cwnd in"
	log " grim peer show is what all of a host's streams to a peer may have in"
	log " flight, tx_cwnd_cuts counts its cuts, and the port's qdisc counts what"
	log " it dropped)"
	pp tc -n "$SWITCH_NS" qdisc add dev p3 root tbf rate 4mbit burst 16kb latency 50ms
	nsx 3 "$RDM" recv -p 106 -n 100000000 -T 10 -t 60 | sed 's/^/    [host 3] /' &
	local r=$!
	wait_bound 3 106
	nsx 1 "$RDM" send -d 3 -p 106 -n 100000000 -m 4000 -M 4000 -S 7 -E >/dev/null &
	nsx 2 "$RDM" send -d 3 -p 106 -n 100000000 -m 4000 -M 4000 -S 8 -E >/dev/null &
	sleep 8
	log "host 1's peers while it sends: cwnd is its window to each, in frames"
	pp nsx 1 "$GRIM_TOOL" peer show dev grim0
	wait $r
	sleep 2		# the senders stop at their first refused message
	pkill -x grim_rdm
	wait
	log "(4 Mbit/s is 500,000 bytes a second: the receiver's rate above is"
	log " the share of it that arrived as payload)"
	pp tc -s -n "$SWITCH_NS" qdisc show dev p3
	show_counters 1 'tx_cwnd_cuts|retransmit_frames|retransmit_timeouts'
	tc -n "$SWITCH_NS" qdisc del dev p3 root
}

step_ip() {
	banner "12. IP over GRIM: grim0 is an IP interface; TCP and redis under 5% loss and 1% corruption"
	local i f l
	for ((i = 1; i <= N; i++)); do
		printf '%s\n' "addr add 10.77.0.$i/24 dev grim0" \
			"addr add fd77::$i/64 dev grim0 nodad" | ip -n "$(host "$i")" -b -
	done
	pp nsx 1 ping -c 3 -i 0.2 10.77.0.2 | sed 's/^/    /'
	pp nsx 1 ping -6 -c 3 -i 0.2 fd77::3 | sed 's/^/    /'
	log "neighbours resolve to node ids:"
	pp nsx 1 ip neigh show dev grim0 | sed 's/^/    /'
	log "scatter-gather and checksum offload, off by default (ethtool -K grim0 sg on tx-checksum-ip-generic on):"
	pp nsx 1 ethtool -k grim0 | grep -E '^(scatter-gather|tx-checksum-ip-generic):' |
		sed 's/^/    /'
	netem_links "loss 5% corrupt 1%"
	log "16 MB by TCP (socat) from host 1 to host 2, every link losing 5%:"
	f=$(mktemp)
	head -c 16M /dev/urandom >"$f"
	nsx 2 socat -u TCP-LISTEN:5001,reuseaddr OPEN:"$f.out",creat,trunc &
	l=$!
	for ((i = 0; i < 50; i++)); do
		nsx 2 ss -Hltn 'sport = :5001' | grep -q . && break
		sleep 0.1
	done
	nsx 1 socat -u OPEN:"$f" TCP:10.77.0.2:5001
	wait $l
	log "sha256 sent:     $(sha256sum <"$f" | cut -c1-16)..."
	log "sha256 received: $(sha256sum <"$f.out" | cut -c1-16)..."
	log "TCP's own retransmissions (GRIM recovered the losses underneath):"
	nsx 1 nstat -asz TcpOutSegs TcpRetransSegs | sed 's/^/    /'
	show_counters 1 'retransmit_frames|^ *tx_frames'
	log "redis-server on host 2, redis-benchmark from host 1, over grim0, same loss:"
	nsx 2 redis-server --bind 10.77.0.2 --port 6379 --protected-mode no \
		--save "" --appendonly no --dir /tmp --logfile "$f.redis" &
	l=$!
	for ((i = 0; i < 50; i++)); do
		nsx 2 ss -Hltn 'sport = :6379' | grep -q . && break
		sleep 0.1
	done
	nsx 1 redis-benchmark -h 10.77.0.2 -c 10 -n 2000 -t set,get -q 2>&1 |
		tr '\r' '\n' | grep "requests per second" | sed 's/^/    /'
	pp nsx 1 redis-cli -h 10.77.0.2 dbsize | sed 's/^/    /'
	kill $l 2>/dev/null
	wait $l 2>/dev/null
	netem_clear
	rm -f "$f" "$f.out" "$f.redis"
}

step_groups() {
	banner "13. A group: hosts 2 and 3 join group 42; hosts 1 and 2 send to it"
	local w i t
	w=$(mktemp -d)
	for i in 2 3; do
		nsx $i "$GROUP_TOOL" recv -g 42 -o "$w/h$i" -T 120 >"$w/r$i" 2>&1 &
	done
	for i in 2 3; do
		wait_prefix "$w/r$i" joined
	done
	log "(each message goes once to the root, node 1, which stamps it with a"
	log " ticket and sends it down the tree: both members see one order)"
	nsx 1 "$GROUP_TOOL" send -g 42 -n 20 -M 3000 -S 1 | sed 's/^/    [host 1] /' &
	local s1=$!
	nsx 2 "$GROUP_TOOL" send -g 42 -n 20 -M 3000 -S 2 | sed 's/^/    [host 2] /'
	wait $s1
	for ((t = 0; t < 100; t++)); do
		[ "$(cat "$w/h2.42" "$w/h3.42" 2>/dev/null | wc -l)" -ge 80 ] && break
		sleep 0.1
	done
	log "(the tree of group 42 as each node sees it: root 1, members 2 and 3)"
	for i in 1 2 3; do
		pp nsx $i "$GRIM_TOOL" group show dev grim0
	done
	pkill -x grim_group
	sleep 0.5
	for i in 2 3; do
		log "host $i received $(wc -l <"$w/h$i.42") messages; the first five (node:port:seq):"
		head -n 5 "$w/h$i.42" | sed 's/^/      /'
	done
	if cmp -s "$w/h2.42" "$w/h3.42"; then
		log "hosts 2 and 3 saw the same order"
	else
		fail "hosts 2 and 3 saw different orders"
	fi
	show_counters 1 'mc_injected|mc_ticketed|mc_tx_copies'
	rm -rf "$w"
	log "(the members have left: once the group has been idle twice dead_ms,"
	log " 8 s, every NI forgets it; the link's own group, 4294967294, stays)"
	for ((t = 0; t < 200; t++)); do
		for i in 1 2 3; do
			nsx $i "$GRIM_TOOL" group show dev grim0
		done | grep -q "group 42 " || break
		sleep 0.1
	done
	for i in 1 2 3; do
		pp nsx $i "$GRIM_TOOL" group show dev grim0
	done
	show_counters 1 'mc_forgotten'
}

step_bcast() {
	banner "14. Broadcast: every NI is in the link's own group; UDP multicast over grim0 under 5% loss"
	local w i p=()
	w=$(mktemp -d)
	log "(IP's endpoint on every node joins the link's own group, 4294967294, as"
	log " the link comes up: ARP, neighbour discovery and IP multicast go down"
	log " its tree, on streams and in room of their own)"
	pp nsx 1 "$GRIM_TOOL" group show dev grim0
	netem_links "loss 5% delay 1ms reorder 25% 50%"
	log "hosts 2 and 3 join 239.1.2.3 on grim0 (IP_ADD_MEMBERSHIP); host 1 sends"
	log "2000 numbered datagrams to it (IP_MULTICAST_IF grim0), every link losing 5%:"
	for i in 2 3; do
		nsx $i "$UDP_SEQ" recv -p 5400 -n 2000 -t 120 -g 239.1.2.3 -M grim0 >"$w/u$i" 2>&1 &
		p+=($!)
	done
	for i in 2 3; do
		wait_prefix "$w/u$i" listening
	done
	nsx 1 "$UDP_SEQ" send -a 239.1.2.3 -p 5400 -n 2000 -s 1200 -M grim0 | sed 's/^/    [host 1] /'
	wait "${p[@]}"
	for i in 2 3; do
		log "host $i: $(tail -n 1 "$w/u$i")"
	done
	log "the same to 239.1.2.4 over the bare eth0 (addresses 10.88.0.x):"
	for i in 1 2; do
		ip -n "$(host $i)" addr add 10.88.0.$i/24 dev eth0
	done
	nsx 2 "$UDP_SEQ" recv -p 5401 -n 2000 -t 10 -g 239.1.2.4 -M eth0 >"$w/bare" 2>&1 &
	p=($!)
	wait_prefix "$w/bare" listening
	nsx 1 "$UDP_SEQ" send -a 239.1.2.4 -p 5401 -n 2000 -s 1200 -M eth0 >/dev/null
	wait "${p[@]}"
	log "host 2 over eth0: $(tail -n 1 "$w/bare")"
	netem_clear
	show_counters 1 'mc_ticketed|mc_tx_copies'
	rm -rf "$w"
}

step_peer_down() {
	banner "15. A peer vanishes: host 3's link is deleted while host 1 streams to it"
	nsx 3 "$RDM" recv -p 103 -n 100000000 -t 300 >/dev/null &
	wait_bound 3 103
	nsx 1 "$RDM" send -d 3 -p 103 -M 2000 -E | sed 's/^/    [host 1] /' &
	local s=$!
	sleep 2
	pp ip -n "$(host 3)" link del grim0
	log "(the sender learns within dead_ms + hello_ms = 5 s)"
	wait $s
	pkill -x grim_rdm
	show_counters 1 'peer_down_events|tx_msgs_failed'
}

step_streams() {
	banner "16. Short-lived sockets: 3000 of them, one request each; their streams come and go"
	nsx 2 "$RDM" echo -p 105 -t 120 >/dev/null &
	local e=$!
	wait_bound 2 105
	nsx 1 "$RDM" churn -d 2 -p 105 -n 3000 -j 4 | sed 's/^/    [host 1] /'
	pp nsx 1 "$GRIM_TOOL" link show dev grim0
	log "(a send stream idle for a second is closed: CLOSE, then CLOSED)"
	sleep 3
	pp nsx 1 "$GRIM_TOOL" link show dev grim0
	kill $e 2>/dev/null
	show_counters 1 'tx_streams_opened|tx_streams_closed|tx_closes'
}

step_kernel_log() {
	banner "17. Kernel log (grim)"
	dmesg | grep -i grim | tail -n 20 | sed 's/^/    /'
	check_dmesg
}

STEPS=(step_topology step_module step_links step_show step_messages step_faults
       step_slow_receiver step_errqueue step_tool step_auth step_congestion
       step_ip step_groups step_bcast step_peer_down step_streams step_kernel_log)

for s in "${STEPS[@]}"; do
	"$s"
done
banner "demo finished"
