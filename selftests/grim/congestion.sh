#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (goodput and fairness bounds)
#
# Many senders, one slow bottleneck: goodput near the bottleneck's rate,
# shared fairly, nothing lost or doubled.
#
# 8 senders on 4 hosts, each host with a round-trip estimate from traffic
# before, stream 4000-byte messages to one socket on host 5,
# whose switch port is a token bucket (tc tbf) at RATE, a tenth or less of
# what each sender's own link carries, with a short queue: frames beyond
# it are dropped, as a switch port's would be.  Over SECS seconds the
# receiver must get at least 80% of RATE in payload, every sender's
# messages exactly once and in order (by content), and no sender starved:
# Jain's fairness index over the senders' bytes at least 0.9.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd python3 tc
require_grim
require_grim_tool
require_mod sch_tbf

RATE_BIT=4000000	# 4 Mbit/s: 500,000 bytes a second
SECS=20
SIZE=4000

pretty "" "4 sending hosts and a receiver behind a ${RATE_BIT} bit/s token bucket"
setup_hosts 5
grim_cluster 5
for i in 1 2 3 4; do
	wait_peer_up $i 5
done

# Each sender first talks to host 5 over the open port, so that its peer
# has a round-trip estimate from before the bottleneck: a queue must be
# found as one even by a sender that timed the path when it was empty.
pretty "" "each sending host sends 200 messages to host 5 before the bucket"
bg nsx 5 "$RDM" recv -p 99 -n 800 -t 60
w=$!
wait_bound 5 99
for i in 1 2 3 4; do
	nsx $i "$RDM" send -d 5 -p 99 -n 200 -m $SIZE -M $SIZE -S $i >/dev/null ||
		fail "warm-up sender on host $i"
done
wait $w || fail "warm-up receiver"
for i in 1 2 3 4; do
	read -r cwnd inflight srtt _ <<<"$(peer_path $i 5)"
	[ "$srtt" -gt 0 ] || fail "host $i has no round trip to host 5 after the warm-up"
done

tc -n "$SWITCH_NS" qdisc add dev p5 root tbf rate "${RATE_BIT}bit" \
	burst 16kb latency 50ms || fail "tbf"

out=$(mktemp)
at_exit "rm -f $out"
bg nsx 5 "$RDM" recv -p 100 -n 100000000 -T $SECS -t 120 >"$out" 2>&1
r=$!
wait_bound 5 100
for i in 1 2 3 4; do
	for k in 1 2; do
		bg nsx $i "$RDM" send -d 5 -p 100 -n 100000000 -m $SIZE -M $SIZE \
			-S $((10 * i + k)) -E
	done
done
wait $r || {
	cat "$out" >&2
	fail "the receiver found messages lost, doubled or damaged"
}
log "$(grep -v '^recv: listening' "$out")"
log "host 5's port: $(tc -s -n "$SWITCH_NS" qdisc show dev p5 | grep -o 'dropped [0-9]*')"
for i in 1 2 3 4; do
	log "host $i: $(nsx $i ethtool -S grim0 | grep -E 'tx_cwnd_cuts|retransmit_frames|retransmit_timeouts|retransmit_probes|fast_retransmits' | tr -s ' \n' ' ')"
done
res=$(python3 - "$out" $RATE_BIT $SECS <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
rate = int(sys.argv[2]) / 8
secs = int(sys.argv[3])
b = [int(x) for x in re.findall(r"source \d+:\d+: \d+ msgs in order, (\d+) bytes", text)]
if len(b) != 8:
    print("senders %d" % len(b))
    sys.exit(0)
good = sum(b) / secs / rate
jain = sum(b) ** 2 / (len(b) * sum(x * x for x in b)) if sum(b) else 0
print("goodput %.3f jain %.3f" % (good, jain))
EOF
)
log "$res (goodput as a share of the bucket's rate)"

# The senders stop at their first failure, once the receiver's socket is
# gone: then nothing is in flight, and every sender's count of frames in
# flight to host 5, kept across its streams, is back to 0.
for i in 1 2 3 4; do
	for ((t = 0; t < 100; t++)); do
		read -r cwnd inflight srtt _ <<<"$(peer_path $i 5)"
		[ "$inflight" = 0 ] && break
		sleep 0.1
	done
	log "host $i, peer 5: cwnd $cwnd, inflight $inflight, srtt ${srtt}us"
	check_eq "$inflight" 0 "frames in flight from host $i once its senders stopped"
	[ "$cwnd" -ge 4 ] || fail "host $i's window to host 5 is $cwnd frames, below 4"
done
set -- $res
[ "$1" = goodput ] || fail "not every sender was heard: $res"
python3 -c "import sys; sys.exit(0 if $2 >= 0.8 else 1)" ||
	fail "goodput $2 of the bucket's rate, below 0.8"
python3 -c "import sys; sys.exit(0 if $4 >= 0.9 else 1)" ||
	fail "Jain's fairness index $4, below 0.9"
check_dmesg
exit 0
