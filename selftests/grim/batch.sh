#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Batches: frames to one peer that are ready together go to the lower
# device as one packet (a GSO packet whose frag_list holds the frames),
# the way TCP hands a veth 64 KB segments.
#
# 1. Over veths and a bridge, which carry such packets whole, batches
#    reach the receiver whole (a raw socket on its eth0 sees packets
#    longer than any frame) and its NI takes them apart (rx_batches).
#    The raw socket shares every packet with the NI, as a packet tap
#    does: the NI must take apart a batch it does not own alone.
# 2. A device that cannot carry them (tx-gso-list off on the sender's
#    eth0): the core splits each batch before the device's driver, and
#    the frames arrive one by one.
# 3. netem corrupting packets splits batches too (it corrupts one frame
#    of a batch): the corrupted frames are dropped and sent again.
# In every step each message arrives exactly once, in order and intact.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool tc python3
require_grim
require_mod sch_netem

N=40		# messages of 64000 bytes: 45 frames each
FRAME_MAX=1514	# the longest frame on a 1500-byte Ethernet

# tap_start HOST: a raw socket on HOST's eth0 for GRIM's EtherType, which
# counts what it receives until tap_stop sets TAP_N (packets) and
# TAP_MAX (the longest).
tap_start() {
	TAP_OUT=$(mktemp -d)
	at_exit "rm -rf $TAP_OUT"
	bg nsx "$1" python3 -c '
import os, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
s.bind(("eth0", 0))
s.settimeout(0.2)
n = m = 0
open(d + "/up", "w").close()
while not os.path.exists(d + "/stop"):
    try:
        p = s.recv(1 << 18)
    except socket.timeout:
        continue
    n += 1
    m = max(m, len(p))
with open(d + "/out", "w") as f:
    print(n, m, file=f)' "$TAP_OUT"
	TAP=$!
	for ((i = 0; i < 100 * SLOW; i++)); do
		[ -e "$TAP_OUT/up" ] && return
		sleep 0.1
	done
	fail "the raw socket on host $1 did not start"
}
tap_stop() {
	touch "$TAP_OUT/stop"
	wait "$TAP" || fail "the raw socket on host 2 failed"
	read -r TAP_N TAP_MAX <"$TAP_OUT/out"
}

# transfer PORT SEED: N messages from host 1 to node 2, each checked.
transfer() {
	local r
	bg nsx 2 "$RDM" recv -p "$1" -n $N -t $((120 * SLOW))
	r=$!
	wait_bound 2 "$1"
	nsx 1 "$RDM" send -d 2 -p "$1" -n $N -m 64000 -M 64000 -S "$2" >/dev/null ||
		fail "host 1's sender failed"
	wait "$r" || fail "host 2 lost, duplicated, misordered or damaged messages"
}

setup_hosts 2
grim_cluster 2
wait_peer_up 1 2

pretty "" "veths and a bridge carry batches whole; a raw socket shares them"
tx0=$(stat 1 tx_batches) f0=$(stat 1 tx_frames) rx0=$(stat 2 rx_batches)
tap_start 2
transfer 100 1
tap_stop
tx=$(($(stat 1 tx_batches) - tx0)) f=$(($(stat 1 tx_frames) - f0))
rx=$(($(stat 2 rx_batches) - rx0))
log "host 1 sent $f frames in $tx batches (and single frames); host 2 took $rx batches apart"
log "the raw socket on host 2 saw $TAP_N packets, the longest $TAP_MAX bytes"
[ "$tx" -gt 0 ] || fail "host 1 sent no batch"
[ "$rx" -gt 0 ] || fail "host 2 received no batch"
[ "$TAP_MAX" -gt $FRAME_MAX ] ||
	fail "no packet longer than a frame reached host 2 ($TAP_MAX bytes at most)"

pretty "" "a device that cannot carry a batch: tx-gso-list off"
nsx 1 ethtool -K eth0 tx-gso-list off || fail "ethtool -K eth0 tx-gso-list off"
at_exit "nsx 1 ethtool -K eth0 tx-gso-list on"
nsx 1 ethtool -k eth0 | grep -q '^tx-gso-list: off' || fail "tx-gso-list is still on"
tx0=$(stat 1 tx_batches) rx0=$(stat 2 rx_batches)
transfer 101 2
tx=$(($(stat 1 tx_batches) - tx0)) rx=$(($(stat 2 rx_batches) - rx0))
log "host 1 made $tx batches; host 2 received $rx"
[ "$tx" -gt 0 ] || fail "host 1 made no batch"
check_eq "$rx" 0 "batches that reached host 2 through a device without tx-gso-list"
nsx 1 ethtool -K eth0 tx-gso-list on || fail "ethtool -K eth0 tx-gso-list on"

pretty "" "netem corrupts 10% of host 1's packets (one frame of a batch each)"
tc -n "$(host 1)" qdisc replace dev eth0 root netem corrupt 10% ||
	fail "netem on host 1"
stats 1; re0=${S[retransmit_frames]?}
stats 2; bad0=$((S[rx_drop_bad_checksum] + S[rx_drop_not_for_us]))
transfer 102 3
stats 1; re=$((S[retransmit_frames] - re0))
stats 2; bad=$((S[rx_drop_bad_checksum] + S[rx_drop_not_for_us] - bad0))
log "host 2 dropped $bad damaged frames; host 1 resent $re frames"
[ "$re" -gt 0 ] || fail "nothing resent with 10% of the packets corrupted"
check_dmesg
exit 0
