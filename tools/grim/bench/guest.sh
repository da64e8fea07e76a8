#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark proper, run inside the VM by tools/grim/bench/run.sh
# (through tools/grim/bench/vm.sh).  Two hosts (network namespaces)
# joined by one veth pair, netem on both ends; on each: IPv4, a TIPC
# bearer and a GRIM NI on the same eth0.  grim-perf servers run on host 2,
# the clients on host 1, every family side by side for each case.  A
# second pair (eth1) carries only grim1, a GRIM NI with datacrc offload,
# for family grimo of the interleaved cases; a third (eth2) only grim2, a
# GRIM NI with a cluster key, for family grimk of the authenticated cases.
# The cases at scale add three more pairs (eth3..eth5) with grim3..grim5,
# NIs like grim0, on which host 1 keeps 10,000, 100 and 1 streams live.
# The jumbo cases raise eth1's MTU to JUMBO_MTU and give it IPv4
# addresses: grim1 (family grimj, datacrc on like grim0) and TCP (tcpj)
# over jumbo frames, against grim0 and TCP on eth0's 1500 bytes.
# The IP-over-GRIM cases give grim0 IPv4 addresses (10.72.0.x/24, next
# to eth0's 10.71.0.x/24) and, at each loss level, measure over eth0's
# and over grim0's addresses in turn, the order alternating from round
# to round: sockperf ping-pong, 64 B, UDP and TCP, grim-perf's UDP
# ping-pong, and TCP throughput (iperf3); families ip-veth-* and
# ip-grim-* (tests ip-pingpong and ip-stream).
# The group cases (only=mcast, never part of a full run) have a topology
# of their own: 65 hosts on a bridge, each with a TIPC bearer and grim0
# on its eth0.  For each group size N (mcast=2,4,...,64), hosts 1 to N
# are the members (grim-perf member, for GRIM and TIPC) and host 65 the
# sender (grim-perf mcast): one message, and every member answers it
# with a short unicast.  Families grim-group (one sendto() to the group;
# the root is node 1, so the message crosses one hop to it and then the
# tree), grim-unicast (N sendto()s) and tipc-group (TIPC_GROUP_JOIN, one
# send() to the group), in turn, the order rotating every run; tests
# inject (the sender's time in its send calls) and complete (until the
# last answer), the senders column holding N.
#
#   guest.sh [out=DIR] [quick=0|1] [reps=N] [loss=0,1,5] [runs=N]
#            [only=interleaved|auth|scale|jumbo|ip|mcast] [jumbo=MTU]
#            [mcast=N,N...]
#   guest.sh [out=DIR] profile=FAM,FAM:SIZE[:SECONDS[:LOSS[:TEST]]]
#
# Writes DIR/bench.csv (default .vm-out/bench/) (one line per result) and some context
# (link statistics, versions) next to it; DIR/frames.csv has the frames each
# case put on host 1's veth, which shows what crossed the wire.
#
# TIPC between two namespaces of one kernel skips its bearer and hands
# messages straight to the peer namespace's sockets (tipc_lxc_xmit() in
# net/tipc/node.c); it recognises such a peer by a hash in its discovery
# frames.  So that TIPC crosses the veth and netem like every other family
# here, a tc pedit on each veth's ingress zeroes that hash; tipc=local
# keeps the shortcut (and frames.csv then shows next to nothing sent).
#
# Family "grimh" is GRIM with "datacrc off" on both links (the CRC covers
# the frame and message headers; the payload is left to the lower link,
# as TIPC leaves all of it), run at the headline sizes.
source "$(dirname "$0")/../../../selftests/grim/lib.sh"
source "$(dirname "$0")/sockperf.sh"
TEST_NAME=bench
PFX=gb

top=$(cd "$(dirname "$0")/../../.." && pwd)
PERF=$top/tools/grim/bench/grim-perf
out=$top/.vm-out/bench
QUICK=0 REPS=3 LOSSES="0 1 5" TIPC_PATH=wire PROFILE= ILV_RUNS= ONLY=
JUMBO_MTU=9000 IP_DATACRC=on IP_OFFLOAD=0 IP_LOWER_MTU=
for a; do
	case $a in
	out=*) out=${a#out=} ;;
	quick=*) QUICK=${a#quick=} ;;
	reps=*) REPS=${a#reps=} ;;
	runs=*) ILV_RUNS=${a#runs=} ;;
	only=*) ONLY=${a#only=} ;;
	jumbo=*) JUMBO_MTU=${a#jumbo=} ;;
	ipcrc=*) IP_DATACRC=${a#ipcrc=} ;;
	ipoff=*) IP_OFFLOAD=${a#ipoff=} ;;
	iplower=*) IP_LOWER_MTU=${a#iplower=} ;;
	loss=*) LOSSES=${a#loss=} LOSSES=${LOSSES//,/ } ;;
	tipc=*) TIPC_PATH=${a#tipc=} ;;
	profile=*) PROFILE=${a#profile=} ;;
	mcast=*) MC_NS=${a#mcast=} MC_NS=${MC_NS//,/ } ;;
	esac
done
case $ONLY in
""|interleaved|auth|scale|jumbo|ip|mcast) ;;
*) fail "only=interleaved|auth|scale|jumbo|ip|mcast, not only=$ONLY" ;;
esac
mkdir -p "$out"
csv=$out/bench.csv

FAMS="grim tipc udp tcp raw"
PORT=7007
if [ "$QUICK" = 1 ]; then
	[ "$REPS" = 3 ] && REPS=1
	[ "$LOSSES" = "0 1 5" ] && LOSSES="0 5"
	LAT_SIZES="64 4096 64000" BW_SIZES="64 16384 64000"
	LAT_N=200 LAT_T=0.8 BW_T=0.8
else
	LAT_SIZES="8 64 512 4096 16384 64000" BW_SIZES="64 1024 16384 64000"
	LAT_N=300 LAT_T=1.0 BW_T=1.0
	# Under loss, fewer sizes keep a full run well under 20 minutes (TCG).
	LOSS_LAT_SIZES="64 4096 64000" LOSS_BW_SIZES="64 16384 64000"
fi
RATE_SENDERS=4
ILV_SIZE=64 ILV_T=1.5 ILV_BW_SIZES="16384 64000" ILV_BW_T=3
if [ -z "$ILV_RUNS" ]; then
	ILV_RUNS=10
	[ "$QUICK" = 1 ] && ILV_RUNS=3
fi
# At scale: the 64 B message rate with this many sender sockets (one
# process), SCALE_RUNS runs; the live-stream cases on grim3, grim4, grim5
# with the live send streams each keeps on host 1 (SCALE_LIVE, in that
# order), SCALE_CTL runs before the extra streams, ILV_RUNS with them.
SCALE_SOCKS="1 8 64" SCALE_FAMS="grim tipc udp tcp"
SCALE_NIS="3 4 5" SCALE_LIVE="10000 100 1" SCALE_LPORT=7100
SCALE_RUNS=6 SCALE_CTL=6
[ "$QUICK" = 1 ] && SCALE_RUNS=2 SCALE_CTL=2
GRIM=$top/tools/grim/grim
RAW_MAX=1500		# raw frames are single Ethernet frames

require_root
require_cmd tc ip tipc nsenter
[ -x "$PERF" ] || fail "$PERF not built"

# ---- topology ------------------------------------------------------------------

setup() {
	local i h
	require_mod veth sch_netem tipc
	require_grim
	export IP_LIB_DIR=$top/tools/grim	# ip link ... type grim datacrc
	ns_add "$(host 1)"
	ns_add "$(host 2)"
	ip -n "$(host 1)" link add eth0 type veth peer name eth0 netns "$(host 2)" ||
		fail "veth"
	for i in 1 2; do
		h=$(host "$i")
		ip -n "$h" link set eth0 address "$(host_mac "$i")" up
		ip -n "$h" addr add "10.71.0.$i/24" dev eth0
		[ "$TIPC_PATH" = wire ] && tipc_pedit "$h" eth0
		ip netns exec "$h" tipc node set identity "$i" 2>/dev/null ||
			ip netns exec "$h" tipc node set address "1.1.$i" ||
			fail "tipc node identity on host $i"
		ip netns exec "$h" tipc bearer enable media eth device eth0 ||
			fail "tipc bearer on host $i"
		grim_add "$h" eth0 grim0 address "$(printf '00:00:00:%02x' "$i")" ||
			fail "grim0 on host $i"
		ip -n "$h" link set grim0 up || fail "grim0 up on host $i"
	done
	# A second veth pair, set up like the first, with a GRIM NI that
	# leaves the payload check to the device (datacrc offload): family
	# grimo of the interleaved cases, node 0x10<i>.
	ip -n "$(host 1)" link add eth1 type veth peer name eth1 netns "$(host 2)" ||
		fail "veth eth1"
	for i in 1 2; do
		h=$(host "$i")
		ip -n "$h" link set eth1 up
		[ "$TIPC_PATH" = wire ] && tipc_pedit "$h" eth1
		grim_add "$h" eth1 grim1 address "$(printf '00:00:01:%02x' "$i")" ||
			fail "grim1 on host $i"
		ip -n "$h" link set grim1 type grim datacrc offload &&
			ip -n "$h" link set grim1 up || fail "grim1 on host $i"
	done
	# A third pair with a GRIM NI under a cluster key: family grimk of
	# the authenticated cases, node 0x20<i>.
	od -An -tx1 -N32 /dev/urandom >"$out/grim.key"
	ip -n "$(host 1)" link add eth2 type veth peer name eth2 netns "$(host 2)" ||
		fail "veth eth2"
	for i in 1 2; do
		h=$(host "$i")
		ip -n "$h" link set eth2 up
		[ "$TIPC_PATH" = wire ] && tipc_pedit "$h" eth2
		grim_add "$h" eth2 grim2 address "$(printf '00:00:02:%02x' "$i")" ||
			fail "grim2 on host $i"
		ip netns exec "$h" "$top/tools/grim/grim" key add dev grim2 id 1 \
			secret-file "$out/grim.key" || fail "key on grim2, host $i"
		ip -n "$h" link set grim2 up || fail "grim2 on host $i"
	done
	rm -f "$out/grim.key"
	NUM_HOSTS=2
	for f in $FAMS; do
		bg ip netns exec "$(host 2)" "$PERF" server -f "$f" -p $PORT -i eth0
	done
	SOCKPERF=0
	sockperf_start && SOCKPERF=1
	sleep 2		# GRIM hellos and the TIPC link come up in about 1 s
}

# tipc_pedit NS DEV: zero the peer-namespace hash in TIPC's discovery
# frames coming in on DEV (TIPC user LINK_CONFIG (13) in word 0; word 13,
# byte 52, is the hash), so that TIPC uses its bearer.
tipc_pedit() {
	ip netns exec "$1" tc qdisc add dev "$2" clsact &&
		ip netns exec "$1" tc filter add dev "$2" ingress \
			protocol 0x88ca u32 match u32 0x1a000000 0x1e000000 at 0 \
			action pedit munge offset 52 u32 set 0 ||
		fail "tc pedit for TIPC on $1 $2"
}

set_loss() {
	local i d
	for i in 1 2; do
		for d in eth0 eth1 eth2; do
			ip netns exec "$(host "$i")" tc qdisc replace dev "$d" root \
				netem loss "$1%" ||
				fail "netem loss $1% on host $i $d"
		done
	done
}

dest() {
	case $1 in
	grimk) echo 0x202 ;;
	grim*) echo 2 ;;
	tipc) echo any ;;
	udp|tcp) echo 10.71.0.2 ;;
	raw) host_mac 2 ;;
	esac
}

veth_tx() {
	ip -n "$(host 1)" -s link show eth0 | awk '/TX:/ { getline; print $2 }'
}

# The datacrc mode of a GRIM family: grimh off, grimo offload
# (profiles only), any other on.
fam_crc() {
	case $1 in
	grimh) echo off ;;
	grimo) echo offload ;;
	*) echo on ;;
	esac
}

# datacrc on|off|offload on both GRIM links.
set_datacrc() {
	local i
	for i in 1 2; do
		ip -n "$(host "$i")" link set grim0 type grim datacrc "$1" ||
			fail "datacrc $1 on host $i"
	done
}

# run FAM LOSS REP ARGS...: one grim-perf client; a line in the CSV either
# way.  FAM grimh runs the grim family (the links set up by the caller).
run() {
	local f=$1 loss=$2 rep=$3 line label=$1 tx0
	shift 3
	[ "$f" = grimh ] && f=grim
	tx0=$(veth_tx)
	# nsenter enters only the network namespace: much cheaper than
	# ip netns exec (which also remounts /sys) under TCG.
	line=$(timeout -k 5 90 nsenter --net="/run/netns/$(host 1)" "$PERF" client -f "$f" \
		-d "$(dest "$f")" -p $PORT -i eth0 --csv --loss "$loss" --rep "$rep" \
		"$@" 2>>"$out/errors.log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "case failed: $f $* (loss $loss%, rep $rep)" >>"$out/errors.log"
		line="$f,${T:-?},$S,${P:-1},$loss,$rep,timeout,0,0,0,0,0,0,0,0,0,0,0"
	fi
	line="$label,${line#*,}"
	echo "$label,${T:-?},$S,${P:-1},$loss,$rep,$(($(veth_tx) - tx0))" >>"$out/frames.csv"
	echo "$line" >>"$csv"
	echo "    $line"
}

# ---- cases ---------------------------------------------------------------------

# ---- groups (only=mcast) -------------------------------------------------------

MC_NS=${MC_NS:-2 4 8 16 32 64}
MC_SIZES="64 4096" MC_ROUNDS=100 MC_RUNS=6
MC_GROUP=7077
if [ "$QUICK" = 1 ]; then
	[ "$MC_NS" = "2 4 8 16 32 64" ] && MC_NS="2 4 8"
	MC_ROUNDS=50 MC_RUNS=2
fi

# mcast_setup HOSTS: HOSTS hosts on a bridge (lib.sh), each with a TIPC
# bearer (its discovery hash zeroed, so that TIPC crosses the wire) and
# grim0, node id = host number.
mcast_setup() {
	local n=$1 i h
	require_mod veth bridge sch_netem tipc
	require_grim
	setup_hosts "$n"
	grim_cluster "$n"
	for ((i = 1; i <= n; i++)); do
		h=$(host "$i")
		[ "$TIPC_PATH" = wire ] && tipc_pedit "$h" eth0
		nsenter --net="/run/netns/$h" tipc node set identity "$i" 2>/dev/null ||
			nsenter --net="/run/netns/$h" tipc node set address "1.1.$i" ||
			fail "tipc node identity on host $i"
		nsenter --net="/run/netns/$h" tipc bearer enable media eth device eth0 ||
			fail "tipc bearer on host $i"
	done
}

# mcast_members N: members on hosts 1..N (GRIM and TIPC), until each GRIM
# one has joined (it returns once its NI is in the tree).
MC_PIDS=()
mcast_members() {
	local n=$1 i t
	for ((i = 1; i <= n; i++)); do
		nsenter --net="/run/netns/$(host "$i")" "$PERF" member -f grim -p $PORT \
			-g $MC_GROUP >"$out/member-$i.out" 2>>"$out/errors.log" &
		MC_PIDS+=($!)
		nsenter --net="/run/netns/$(host "$i")" "$PERF" member -f tipc -p $PORT \
			>/dev/null 2>>"$out/errors.log" &
		MC_PIDS+=($!)
	done
	for ((i = 1; i <= n; i++)); do
		for ((t = 0; t < 300; t++)); do
			grep -q joined "$out/member-$i.out" 2>/dev/null && break
			sleep 0.1
		done
		grep -q joined "$out/member-$i.out" || fail "grim member on host $i did not join"
	done
}

mcast_stop() {
	kill "${MC_PIDS[@]}" 2>/dev/null
	wait "${MC_PIDS[@]}" 2>/dev/null
	MC_PIDS=()
}

# mc_run FAMILY N SIZE RUN: one run of one family from the sender.
mc_run() {
	local fam=$1 n=$2 size=$3 rrun=$4 line nodes f=grim t=group
	nodes=$(seq -s, 1 "$n")
	case $fam in
	grim-unicast) t=unicast ;;
	tipc-group) f=tipc ;;
	esac
	timeout -k 5 300 nsenter --net="/run/netns/$(host "$MC_SENDER")" "$PERF" mcast \
		-f $f -T $t -d "$nodes" -p $PORT -g $MC_GROUP -s "$size" -n $MC_ROUNDS \
		-w 30 --csv --loss 0 --rep "$rrun" 2>>"$out/errors.log" |
	while read -r line; do
		line="$fam,${line#*,}"
		echo "$line" >>"$csv"
		echo "    $line"
	done
}

mcast_cases() {
	local n s r k fams=(grim-group grim-unicast tipc-group) max=0
	for n in $MC_NS; do
		[ "$n" -gt "$max" ] && max=$n
	done
	MC_SENDER=$((max + 1))
	pretty "" "groups: $MC_SENDER hosts on a bridge, TIPC and GRIM on each"
	mcast_setup $MC_SENDER
	{
		echo "kernel: $(uname -r)"
		echo "cpus: $(nproc)"
		echo "groups: members N = $MC_NS (hosts 1..N), sender host $MC_SENDER;" \
			"sizes $MC_SIZES; $MC_RUNS runs of $MC_ROUNDS rounds per family," \
			"after warm-up; tipc: $TIPC_PATH"
		grep -m1 'model name' /proc/cpuinfo
	} >"$out/context.txt"
	"$PERF" --csv-header >"$csv"
	: >"$out/errors.log"
	sleep 2		# every TIPC link and GRIM peer up
	for n in $MC_NS; do
		pretty "" "groups of $n members"
		mcast_members "$n"
		for s in $MC_SIZES; do
			for ((r = 1; r <= MC_RUNS; r++)); do
				for ((k = 0; k < 3; k++)); do
					mc_run "${fams[(r + k) % 3]}" "$n" "$s" "$r"
				done
			done
		done
		nsenter --net="/run/netns/$(host 1)" ethtool -S grim0 |
			grep -E ' mc_' >"$out/mc-root-$n.txt"
		mcast_stop
	done
}

bench_one() {
	local loss=$1 rep=$2 s f lat_sizes=$LAT_SIZES bw_sizes=$BW_SIZES
	if [ "$loss" != 0 ]; then
		lat_sizes=${LOSS_LAT_SIZES:-$LAT_SIZES}
		bw_sizes=${LOSS_BW_SIZES:-$BW_SIZES}
	fi
	pretty "" "loss $loss%, repetition $rep: ping-pong latency"
	for s in $lat_sizes; do
		for f in $FAMS; do
			[ "$f" = raw ] && [ "$s" -gt $RAW_MAX ] && continue
			T=pingpong S=$s P=1 run "$f" "$loss" "$rep" -T pingpong -s "$s" \
				-n $LAT_N -t $LAT_T
		done
		# Cross-check of the UDP/TCP figures (no loss: sockperf's
		# ping-pong does not recover lost datagrams).
		if [ "$SOCKPERF" = 1 ] && [ "$loss" = 0 ] && [ "$s" -ge 16 ]; then
			sockperf_pingpong udp "$s" "$loss" "$rep" "$LAT_T"
			sockperf_pingpong tcp "$s" "$loss" "$rep" "$LAT_T"
		fi
	done
	pretty "" "loss $loss%, repetition $rep: streaming bandwidth"
	for s in $bw_sizes; do
		for f in $FAMS; do
			[ "$f" = raw ] && continue
			T=stream S=$s P=1 run "$f" "$loss" "$rep" -T stream -s "$s" -t $BW_T
		done
	done
	pretty "" "loss $loss%, repetition $rep: GRIM with datacrc off"
	set_datacrc off
	T=pingpong S=64 P=1 run grimh "$loss" "$rep" -T pingpong -s 64 -n $LAT_N -t $LAT_T
	for s in 16384 64000; do
		T=stream S=$s P=1 run grimh "$loss" "$rep" -T stream -s "$s" -t $BW_T
	done
	set_datacrc on
	pretty "" "loss $loss%, repetition $rep: 64 B message rate, $RATE_SENDERS senders"
	for f in $FAMS; do
		[ "$f" = raw ] && continue
		T=stream S=64 P=$RATE_SENDERS run "$f" "$loss" "$rep" -T stream -s 64 \
			-t $BW_T -P $RATE_SENDERS
	done
}

# ilv_run RUN TEST SIZE SECONDS: one run of grim-perf -T TEST (interleaved
# or interleaved-stream) with GRIM (grim0), GRIM with datacrc offload
# (grimo, on grim1), TIPC, UDP and TCP in turn from one process, no
# loss; its lines go to the CSV.
ilv_run() {
	local line
	nsenter --net="/run/netns/$(host 1)" timeout -k 5 120 "$PERF" client \
		-f grim,grimo,tipc,udp,tcp -d 2,0x102,any,10.71.0.2,10.71.0.2 \
		-p $PORT -i eth0 -T "$2" -s "$3" -n 1000000 -t "$4" \
		--csv --loss 0 --rep "$1" \
		2>>"$out/errors.log" >"$out/ilv.tmp" ||
		echo "case failed: $2 $3 B run $1" >>"$out/errors.log"
	while read -r line; do
		echo "$line" >>"$csv"
		echo "    $line"
	done <"$out/ilv.tmp"
	rm -f "$out/ilv.tmp"
}

# The interleaved cases: ILV_RUNS runs of ILV_T seconds of ILV_SIZE-byte
# round trips, and of ILV_BW_T seconds of ~1 MiB bursts of each of
# ILV_BW_SIZES.  The host's drift under TCG moves the repetitions above
# more than the families differ; here it falls on every family alike.
# One line per family and run in the CSV.
interleaved() {
	local r s
	pretty "" "interleaved: $ILV_SIZE B latency, $ILV_BW_SIZES B streams, $ILV_RUNS runs"
	set_loss 0
	for ((r = 1; r <= ILV_RUNS; r++)); do
		ilv_run "$r" interleaved "$ILV_SIZE" "$ILV_T"
		for s in $ILV_BW_SIZES; do
			ilv_run "$r" interleaved-stream "$s" "$ILV_BW_T"
		done
	done
}

# tipc_clear HOST: whether TIPC's frames on HOST's eth0 carry grim-perf's
# payload (bytes 0xa5) in clear during a short ping-pong: "clear" or
# "encrypted".
tipc_clear() {
	local py='
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88ca))
s.bind(("eth0", 0))
s.settimeout(0.2)
end, seen, n = time.time() + 2, False, 0
while time.time() < end:
    try:
        f = s.recv(65536)
    except socket.timeout:
        continue
    n += 1
    seen = seen or b"\xa5" * 48 in f
print("clear" if seen else "encrypted" if n else "none")'
	ip netns exec "$(host "$1")" python3 -c "$py" &
	local p=$!
	sleep 0.3
	nsenter --net="/run/netns/$(host 1)" "$PERF" client -f tipc -d any \
		-p $PORT -T pingpong -s 512 -t 1 >/dev/null 2>&1
	wait $p
}

# The authenticated cases: GRIM with a cluster key (grimk, on grim2)
# against GRIM without (grim0) and TIPC with its cluster key (AEAD,
# gcm(aes): tipc node set key), interleaved in one process as above:
# 64 B round trips and 64000 B streams.  TIPC's lines are renamed tipck,
# the tests auth-interleaved and auth-interleaved-stream.
auth_cases() {
	local r i key line
	pretty "" "authenticated: grim with a key, grim without, TIPC with its key; $ILV_RUNS runs"
	set_loss 0
	key=0x$(od -An -tx1 -N36 /dev/urandom | tr -d ' \n')
	for i in 1 2; do
		ip netns exec "$(host "$i")" tipc node set key "$key" ||
			fail "TIPC cluster key on host $i"
	done
	sleep 3		# TIPC takes a new cluster key after a grace period
	echo "tipc frames with a key: $(tipc_clear 2)" | tee -a "$out/context.txt"
	for ((r = 1; r <= ILV_RUNS; r++)); do
		for t in "interleaved 64 $ILV_T" "interleaved-stream 64000 $ILV_BW_T"; do
			set -- $t
			nsenter --net="/run/netns/$(host 1)" timeout -k 5 120 "$PERF" client \
				-f grim,grimk,tipc -d 2,0x202,any \
				-p $PORT -i eth0 -T "$1" -s "$2" -n 1000000 -t "$3" \
				--csv --loss 0 --rep "$r" \
				2>>"$out/errors.log" >"$out/ilv.tmp" ||
				echo "case failed: auth $1 $2 B run $r" >>"$out/errors.log"
			while read -r line; do
				line=$(echo "$line" | sed -e 's/^tipc,/tipck,/' -e "s/,$1,/,auth-$1,/")
				echo "$line" >>"$csv"
				echo "    $line"
			done <"$out/ilv.tmp"
			rm -f "$out/ilv.tmp"
		done
	done
	for i in 1 2; do
		ip netns exec "$(host "$i")" tipc node flush key
		ip netns exec "$(host "$i")" ethtool -S grim2 >>"$out/linkstats.txt"
	done
}

# ---- jumbo frames --------------------------------------------------------------

# What a larger lower MTU gives: eth1 goes to JUMBO_MTU on both hosts and
# gets IPv4 addresses (10.71.1.<i>), and grim1 checks its payload as
# grim0 does (datacrc on).  One process streams 64000-byte messages over
# GRIM and TCP on eth0 (MTU 1500) and over GRIM (grimj) and TCP (tcpj)
# on eth1 in turn, as in the interleaved cases, and 64 B round trips
# the same way: a frame that carries 6 times more costs no more per
# frame, and a round trip gains nothing.  Test names jumbo-interleaved
# and jumbo-interleaved-stream.
jumbo_cases() {
	local r i h line mtu
	pretty "" "jumbo frames: GRIM and TCP at MTU $JUMBO_MTU (eth1) and 1500 (eth0); $ILV_RUNS runs"
	set_loss 0
	for i in 1 2; do
		h=$(host "$i")
		ip -n "$h" link set eth1 mtu "$JUMBO_MTU" ||
			fail "MTU $JUMBO_MTU on host $i eth1"
		ip -n "$h" addr add "10.71.1.$i/24" dev eth1 ||
			fail "address on host $i eth1"
		ip -n "$h" link set grim1 type grim datacrc on ||
			fail "datacrc on grim1, host $i"
	done
	mtu=$(ip -n "$(host 1)" -o link show eth1 | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
	[ "$mtu" = "$JUMBO_MTU" ] || fail "eth1's MTU is $mtu, not $JUMBO_MTU"
	sleep 1
	echo "jumbo: eth1 MTU $mtu" | tee -a "$out/context.txt"
	for ((r = 1; r <= ILV_RUNS; r++)); do
		for t in "interleaved 64 $ILV_T" "interleaved-stream 64000 $ILV_BW_T"; do
			set -- $t
			nsenter --net="/run/netns/$(host 1)" timeout -k 5 120 "$PERF" client \
				-f grim,grimj,tcp,tcpj -d 2,0x102,10.71.0.2,10.71.1.2 \
				-p $PORT -i eth0 -T "$1" -s "$2" -n 1000000 -t "$3" \
				--csv --loss 0 --rep "$r" \
				2>>"$out/errors.log" >"$out/ilv.tmp" ||
				echo "case failed: jumbo $1 $2 B run $r" >>"$out/errors.log"
			while read -r line; do
				line=$(echo "$line" | sed -e "s/,$1,/,jumbo-$1,/")
				echo "$line" >>"$csv"
				echo "    $line"
			done <"$out/ilv.tmp"
			rm -f "$out/ilv.tmp"
		done
	done
	for i in 1 2; do
		h=$(host "$i")
		ip netns exec "$h" ethtool -S grim1 >>"$out/linkstats.txt"
		ip -n "$h" addr del "10.71.1.$i/24" dev eth1
		ip -n "$h" link set eth1 mtu 1500
		ip -n "$h" link set grim1 type grim datacrc offload
	done
}

# ---- IP over GRIM --------------------------------------------------------------

# IP over grim0 against IP over the bare veth under it: grim0 gets IPv4
# addresses (10.72.0.<i>/24; eth0 has 10.71.0.<i>/24), one ping resolves
# ARP over it, sockperf servers listen at 10.72.0.2 as at 10.71.0.2 and
# one iperf3 server at any address of host 2.  For each loss level of
# LOSSES (netem on eth0, under grim0 as under the bare veth's IP),
# ILV_RUNS rounds; in each, over the veth and over grim0 in turn, the
# order alternating from round to round so that the emulated CPU's
# drift falls on both alike: a sockperf ping-pong of IP_SIZE bytes over
# UDP, one over TCP (IP_LAT_T s each), grim-perf's UDP ping-pong
# (IP_LAT_T s; sockperf's UDP ping-pong waits for a lost datagram until
# its run ends, so over the lossy bare veth only grim-perf's gives a
# figure) and IP_TPUT_T s of iperf3 TCP.
# Lines in the CSV: test ip-pingpong, families ip-veth-udp, ip-grim-udp,
# ip-veth-tcp, ip-grim-tcp (sockperf), ip-veth-udp-gp, ip-grim-udp-gp
# (grim-perf); test ip-stream (size = iperf3's 128 KiB writes),
# families ip-veth-tput, ip-grim-tput, mbps = what the iperf3 receiver
# counted; rep = round.  iperf3.txt has each iperf3 run's bytes and TCP
# retransmits.
IP_SIZE=64 IP_LAT_T=1 IP_TPUT_T=3 IP_PORT=5201 IP_LEN=131072
[ "$QUICK" = 1 ] && IP_TPUT_T=2

# ip_addr veth|grim HOST: the IPv4 address of HOST on eth0 or grim0.
ip_addr() {
	case $1 in
	veth) echo "10.71.0.$2" ;;
	grim) echo "10.72.0.$2" ;;
	esac
}

# ip_tput veth|grim LOSS ROUND: iperf3 -c from host 1 to host 2 over the
# veth or grim0, a line in the CSV either way.
ip_tput() {
	local side=$1 loss=$2 r=$3 json=$out/iperf3.json line py='
import json, sys
path, fam, loss, rep, log, size = sys.argv[1:7]
head = "%s,ip-stream,%s,1,%s,%s" % (fam, size, loss, rep)
try:
    with open(path) as f:
        j = json.load(f)
except (OSError, ValueError) as err:
    j = {"error": str(err)}
try:
    rx, tx = j["end"]["sum_received"], j["end"]["sum_sent"]
    bps, got, sent, secs = (rx["bits_per_second"], rx["bytes"], tx["bytes"],
                            rx["seconds"])
except (KeyError, TypeError):
    print("%s loss %s%% round %s: no result: %s"
          % (fam, loss, rep, j.get("error", "no end in the JSON")), file=sys.stderr)
    print(head + ",fail,0,0,0,0,0,0,0,0,0,0,0")
    sys.exit(0)
with open(log, "a") as f:
    print("%s loss %s%% round %s: sent %d B, received %d B in %.2f s, %.3f MB/s, "
          "retransmits %s" % (fam, loss, rep, sent, got, secs, bps / 8e6,
                              tx.get("retransmits", "?")), file=f)
print(head + ",%s,0,0,0,0,0,%.3f,0,%d,%d,0,%.3f"
      % ("ok" if got > 0 else "fail", bps / 8e6, sent, got, secs))'
	timeout -k 5 $((IP_TPUT_T + 90)) nsenter --net="/run/netns/$(host 1)" \
		iperf3 -c "$(ip_addr "$side" 2)" -p $IP_PORT -t "$IP_TPUT_T" -J \
		--connect-timeout 15000 >"$json" 2>>"$out/errors.log" ||
		echo "case failed: iperf3 over $side (loss $loss%, round $r)" >>"$out/errors.log"
	line=$(python3 -c "$py" "$json" "ip-$side-tput" "$loss" "$r" "$out/iperf3.txt" \
		$IP_LEN 2>>"$out/errors.log")
	[ -n "$line" ] ||
		line="ip-$side-tput,ip-stream,$IP_LEN,1,$loss,$r,fail,0,0,0,0,0,0,0,0,0,0,0"
	rm -f "$json"
	echo "$line" >>"$csv"
	echo "    $line"
}

# ip_udp_gp veth|grim LOSS ROUND: grim-perf's UDP ping-pong of IP_SIZE
# bytes for IP_LAT_T s from host 1 to host 2's grim-perf server over the
# veth or grim0, a line in the CSV either way (family ip-veth-udp-gp or
# ip-grim-udp-gp).  Unlike sockperf's, it gives a lost round trip up
# after 50 ms and goes on, so it measures the bare veth under loss too
# (the round trips that were answered, rcvd of sent in the CSV).
ip_udp_gp() {
	local side=$1 loss=$2 r=$3 fam=ip-$1-udp-gp line
	line=$(timeout -k 5 90 nsenter --net="/run/netns/$(host 1)" "$PERF" client -f udp \
		-d "$(ip_addr "$side" 2)" -p $PORT -T pingpong -s $IP_SIZE -n 1000000 \
		-t $IP_LAT_T --csv --loss "$loss" --rep "$r" 2>>"$out/errors.log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "case failed: grim-perf udp over $side (loss $loss%, round $r)" >>"$out/errors.log"
		line="$fam,ip-pingpong,$IP_SIZE,1,$loss,$r,timeout,0,0,0,0,0,0,0,0,0,0,0"
	else
		line=$(echo "$line" | cut -d, -f3-)
		line="$fam,ip-pingpong,$line"
	fi
	echo "$line" >>"$csv"
	echo "    $line"
}

# ip_setup: grim0 and eth0 of hosts 1 and 2 get their IPv4 addresses and
# grim0 its datacrc and offloads; one ping each way resolves ARP (over
# grim0: the link's reliable path; over eth0: ordinary ARP).
# iperf3_server: iperf3's server on host 2, port IP_PORT; returns once it
# listens.
iperf3_server() {
	local t
	bg nsx 2 iperf3 -s -p $IP_PORT --rcv-timeout 30000 >/dev/null 2>&1
	for ((t = 0; t < 100; t++)); do
		nsx 2 ss -Hltn "sport = :$IP_PORT" | grep -q . && break
		sleep 0.1
	done
}

ip_setup() {
	local i h t side offl=off
	[ "$IP_OFFLOAD" = 1 ] && offl=on
	for i in 1 2; do
		h=$(host "$i")
		# The bare veth's IP and grim0's frames alike.
		if [ -n "$IP_LOWER_MTU" ]; then
			ip -n "$h" link set eth0 mtu "$IP_LOWER_MTU" ||
				fail "eth0 MTU $IP_LOWER_MTU on host $i"
		fi
		ip -n "$h" addr add "$(ip_addr grim "$i")/24" dev grim0 ||
			fail "IPv4 address on host $i grim0"
		ip -n "$h" link set grim0 type grim datacrc "$IP_DATACRC" ||
			fail "datacrc $IP_DATACRC on host $i grim0"
		nsx "$i" ethtool -K grim0 sg $offl tx-checksum-ip-generic $offl ||
			fail "grim0 offloads $offl on host $i"
	done
	for side in grim veth; do
		for ((t = 0; t < 5; t++)); do
			nsx 1 ping -c 1 -W 5 -q "$(ip_addr "$side" 2)" >/dev/null && break
		done
		[ "$t" -lt 5 ] || fail "no ping over $side to $(ip_addr "$side" 2)"
	done
}

ip_cases() {
	local i t loss r side sides
	local offl=off
	[ "$IP_OFFLOAD" = 1 ] && offl=on
	pretty "" "IP over GRIM: grim0 (datacrc $IP_DATACRC, sg and checksum offload $offl${IP_LOWER_MTU:+, lower MTU $IP_LOWER_MTU}) against the bare veth, loss $LOSSES %, $ILV_RUNS rounds each"
	set_loss 0
	ip_setup
	{
		echo "ip over grim: $(ip -n "$(host 1)" -o link show grim0 |
			sed -n 's/.* mtu \([0-9]*\) .*/grim0 mtu \1/p') datacrc $IP_DATACRC," \
			"sg and tx checksum $offl," \
			"$(ip -n "$(host 1)" -o link show eth0 |
			sed -n 's/.* mtu \([0-9]*\) .*/eth0 mtu \1/p')"
		echo "ip over grim: host 1 neighbours on grim0: $(ip -n "$(host 1)" neigh show dev grim0 | tr '\n' ';')"
	} | tee -a "$out/context.txt"
	if ! command -v sockperf >/dev/null; then
		echo "case failed: sockperf not installed: no IP latency cases" >>"$out/errors.log"
	else
		sockperf_start "$(ip_addr grim 2)"	# setup() started 10.71.0.2's
	fi
	if ! command -v iperf3 >/dev/null; then
		echo "case failed: iperf3 not installed: no IP throughput cases" >>"$out/errors.log"
	else
		iperf3_server
	fi
	: >"$out/iperf3.txt"
	for loss in $LOSSES; do
		set_loss "$loss"
		for ((r = 1; r <= ILV_RUNS; r++)); do
			sides="veth grim"
			((r % 2)) || sides="grim veth"
			pretty "" "IP over GRIM: loss $loss%, round $r ($sides)"
			if command -v sockperf >/dev/null; then
				for t in udp tcp; do
					for side in $sides; do
						sockperf_pingpong "$t" $IP_SIZE "$loss" "$r" $IP_LAT_T \
							"$(ip_addr "$side" 2)" "ip-$side-$t" ip-pingpong
					done
				done
			fi
			for side in $sides; do
				ip_udp_gp "$side" "$loss" "$r"
			done
			if command -v iperf3 >/dev/null; then
				for side in $sides; do
					ip_tput "$side" "$loss" "$r"
				done
			fi
		done
		for i in 1 2; do
			{
				echo "== host $i after the IP-over-GRIM cases at loss $loss%"
				nsx "$i" ethtool -S grim0 2>&1
			} >>"$out/linkstats.txt"
		done
	done
	set_loss 0
	for i in 1 2; do
		ip -n "$(host "$i")" link set grim0 type grim datacrc on
		nsx "$i" ethtool -K grim0 sg off tx-checksum-ip-generic off
		[ -z "$IP_LOWER_MTU" ] || ip -n "$(host "$i")" link set eth0 mtu 1500
	done
}

# ---- at scale ------------------------------------------------------------------

# The 64 B message rate with each of SCALE_SOCKS sender sockets, every
# family of SCALE_FAMS, no loss: grim-perf -T rate, one process that
# sends on all its sockets in turn without blocking (poll() for those
# that would block), so that the count is of sockets with data in
# flight, not of processes taking turns on the CPU.  SCALE_RUNS runs;
# the families' order rotates from run to run.  Test "rate" in the CSV,
# senders = sockets, rep = run.
scale_rates() {
	local r k n f fams=($SCALE_FAMS)
	pretty "" "at scale: 64 B message rate, $SCALE_SOCKS sender sockets, $SCALE_RUNS runs"
	set_loss 0
	for ((r = 1; r <= SCALE_RUNS; r++)); do
		for n in $SCALE_SOCKS; do
			for ((k = 0; k < ${#fams[@]}; k++)); do
				f=${fams[(r + k) % ${#fams[@]}]}
				T=rate S=64 P=$n run "$f" 0 "$r" -T rate -s 64 -t $BW_T -S "$n"
			done
		done
	done
}

# Three more veth pairs, eth3..eth5, each with only a GRIM NI set up
# like grim0 (grim<n>, node 0x<n>0<i>), the same qdisc as the others at
# no loss, and send streams that close after 600 s idle.
scale_setup() {
	local n i h
	for n in $SCALE_NIS; do
		ip -n "$(host 1)" link add "eth$n" type veth peer name "eth$n" \
			netns "$(host 2)" || fail "veth eth$n"
		for i in 1 2; do
			h=$(host "$i")
			ip -n "$h" link set "eth$n" up
			ip netns exec "$h" tc qdisc replace dev "eth$n" root netem loss 0% ||
				fail "netem on host $i eth$n"
			grim_add "$h" "eth$n" "grim$n" \
				address "$(printf '00:00:%02x:%02x' "$n" "$i")" ||
				fail "grim$n on host $i"
			ip -n "$h" link set "grim$n" type grim streamidle 600000 &&
				ip -n "$h" link set "grim$n" up || fail "grim$n on host $i"
		done
	done
}

# The pairs "grimN=LIVE" of SCALE_NIS and SCALE_LIVE.
scale_map() {
	local n live=($SCALE_LIVE) k=0
	for n in $SCALE_NIS; do
		echo -n "grim$n=${live[k++]} "
	done
}

# live_streams PHASE RUN: the live streams (tx, rx) of grim3..grim5 on
# both hosts (grim link show), a line each in streams.csv.
live_streams() {
	local i
	for i in 1 2; do
		nsenter --net="/run/netns/$(host "$i")" "$GRIM" link show |
			awk -v p="$1" -v r="$2" -v h="$i" -v map="$(scale_map)" '
			BEGIN {
				n = split(map, m, " ")
				for (k = 1; k <= n; k++) {
					split(m[k], kv, "=")
					live[kv[1]] = kv[2]
				}
			}
			/^[^ ]/ { dev = $1; sub(/:$/, "", dev) }
			$1 == "streams:" && dev in live {
				print p "," r "," h "," dev "," live[dev] "," $3 "," $5 + 0
			}'
	done >>"$out/streams.csv"
}

# streams_of HOST DEV: "TX RX", the live streams of DEV on HOST.
streams_of() {
	nsenter --net="/run/netns/$(host "$1")" "$GRIM" link show dev "$2" |
		awk '$1 == "streams:" { print $3, $5 + 0 }'
}

# str_run PHASE RUN: one run of the live-stream cases: 64 B round trips,
# then 64 B bursts, on a socket to host 2 over each of grim3..grim5 in
# turn from one process, the order rotating (grim-perf -T interleaved,
# interleaved-stream).  The sockets bind fixed ports (-l), so that every
# run uses the same three streams.  Lines in the CSV as family grim,
# tests streams and streams-rate (PHASE ctl: streams-ctl and
# streams-ctl-rate), senders = the live streams of the NI (SCALE_LIVE).
str_run() {
	local phase=$1 r=$2 t test nis= dests= n
	for n in $SCALE_NIS; do
		nis+=${nis:+,}grim$n
		dests+=${dests:+,}0x${n}02
	done
	for t in "interleaved $ILV_T streams" "interleaved-stream $ILV_BW_T streams-rate"; do
		set -- $t
		test=$3
		[ -n "$phase" ] && test=${3/streams/streams-$phase}
		nsenter --net="/run/netns/$(host 1)" timeout -k 5 120 "$PERF" client \
			-f "$nis" -d "$dests" -l $SCALE_LPORT -p $PORT \
			-T "$1" -s 64 -n 1000000 -t "$2" --csv --loss 0 --rep "$r" \
			2>>"$out/errors.log" >"$out/ilv.tmp" ||
			echo "case failed: $test run $r" >>"$out/errors.log"
		# An NI without a line (no answer): a failed one.
		awk -F, -v OFS=, -v t="$test" -v r="$r" -v map="$(scale_map)" '
			BEGIN {
				n = split(map, m, " ")
				for (k = 1; k <= n; k++) {
					split(m[k], kv, "=")
					live[kv[1]] = kv[2]
				}
			}
			$1 in live {
				seen[$1] = 1
				$4 = live[$1]
				$1 = "grim"
				$2 = t
				print
			}
			END {
				for (d in live)
					if (!(d in seen))
						print "grim", t, 64, live[d], 0, r, "fail",
						      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
			}' "$out/ilv.tmp" | tee -a "$csv" | sed 's/^/    /'
		rm -f "$out/ilv.tmp"
	done
}

# The live-stream cases: GRIM's 64 B latency and message rate with
# 10,000, 100 and 1 live send streams to the peer, side by side.  A
# stream lives in its NI's tables, so each count gets its own NI (grim3,
# grim4, grim5, set up alike on pairs of their own), and one process
# measures all three in turn, as the interleaved cases do, so that the
# emulated CPU's drift falls on all three alike.  First SCALE_CTL runs
# with one stream on each (control: how alike the three NIs are), then
# a grim-perf hold process on host 1 keeps 9,999 more streams live on
# grim3 and 99 on grim4 (one message each to host 2's grim-perf server,
# which ignores it; streamidle 600 s) for ILV_RUNS runs.  Host 2 takes
# at most 8,192 new receive streams from one peer and forgets those
# idle for twice dead_ms (8 s): hold sends again what it had no room
# for, and the runs start once host 2 has forgotten the idle ones, so
# that the streams live during the runs are host 1's send streams.
# streams.csv has the counts grim link show gave after each run.
scale_streams() {
	local r t i n hold_pid line rx live=($SCALE_LIVE) nis=($SCALE_NIS)
	pretty "" "at scale: 64 B latency and rate with $SCALE_LIVE live streams"
	scale_setup
	echo "phase,run,host,dev,nominal,tx_streams,rx_streams" >"$out/streams.csv"
	for ((r = 1; r <= SCALE_CTL; r++)); do
		str_run ctl "$r"
	done
	live_streams ctl "$SCALE_CTL"
	# The first two NIs get the extra streams; the latency socket's
	# own is the last one of each count.
	bg nsenter --net="/run/netns/$(host 1)" "$PERF" hold \
		-d "0x${nis[0]}02,0x${nis[1]}02" \
		-n "$((live[0] - 1)),$((live[1] - 1))" \
		-p $PORT -w 150 -t 3600 >"$out/hold.log" 2>>"$out/errors.log"
	hold_pid=$!
	for ((t = 0; t < 180; t++)); do
		grep -q '^grim-perf: holding' "$out/hold.log" && break
		kill -0 "$hold_pid" 2>/dev/null || break
		sleep 1
	done
	line=$(grep '^grim-perf: holding' "$out/hold.log")
	if [ -z "$line" ]; then
		echo "case failed: hold (no streams held)" >>"$out/errors.log"
		kill "$hold_pid" 2>/dev/null
		return
	fi
	echo "streams: $line after ${t} s" | tee -a "$out/context.txt"
	for ((t = 0; t < 30; t++)); do
		rx=$(streams_of 2 "grim${nis[0]}")
		[ "${rx#* }" -le 10 ] 2>/dev/null && break
		sleep 1
	done
	echo "streams: grim${nis[0]} (tx rx) host 1 $(streams_of 1 "grim${nis[0]}")," \
		"host 2 $(streams_of 2 "grim${nis[0]}") after $t s more" |
		tee -a "$out/context.txt"
	for ((r = 1; r <= ILV_RUNS; r++)); do
		str_run "" "$r"
		live_streams live "$r"
	done
	kill "$hold_pid" 2>/dev/null
	wait "$hold_pid" 2>/dev/null
	for i in 1 2; do
		for n in $SCALE_NIS; do
			echo "== host $i grim$n after the live-stream cases"
			nsenter --net="/run/netns/$(host "$i")" ethtool -S "grim$n" 2>&1
		done
	done >>"$out/linkstats.txt"
}

scale_cases() {
	scale_rates
	scale_streams
}

# profile FAMS SIZE SECONDS TEST: a system-wide perf profile (cpu-clock)
# of a stream (or ping-pong, TEST) of SIZE-byte messages, family by
# family: DIR/profile-FAM-SIZE.txt has the hottest symbols, sender and
# receiver together (they share the VM's CPUs).  Families ipgrim and
# ipveth are grim-perf's UDP over grim0's and over eth0's IPv4 addresses
# (ip_setup; datacrc, offloads and lower MTU as for only=ip); tcpgrim
# and tcpveth are iperf3's TCP stream over them (SIZE and TEST unused).
profile() {
	local f fam size=$2 secs=$3 test=$4 data syms=$out/kallsyms d log cmd
	require_cmd perf
	case ",$1," in *,ip*|*,tcp*) ip_setup ;; esac
	case ",$1," in *,tcp*) require_cmd iperf3; iperf3_server ;; esac
	# perf names kernel and module symbols from kallsyms, which shows
	# zeros while kptr_restrict hides addresses (Debian sets it).
	echo 0 >/proc/sys/kernel/kptr_restrict || fail "kptr_restrict=0"
	cp /proc/kallsyms "$syms" || fail "copy /proc/kallsyms"
	for f in ${1//,/ }; do
		data=$out/perf-$f-$size.data
		fam=${f/grim[hok]/grim}
		d=$(dest "$f")
		case $f in
		ipgrim) fam=udp d=$(ip_addr grim 2) ;;
		ipveth) fam=udp d=$(ip_addr veth 2) ;;
		esac
		[ "$fam" = grim ] && set_datacrc "$(fam_crc "$f")"
		case $f in
		tcpgrim|tcpveth)
			cmd=(iperf3 -c "$(ip_addr "${f#tcp}" 2)" -p $IP_PORT -t "$secs")
			log=$out/iperf3-$f.txt ;;
		*)
			cmd=("$PERF" client -f "$fam" -d "$d" -p $PORT -i eth0
			     -T "$test" -s "$size" -t "$secs" -n 1000000)
			log=/dev/stdout ;;
		esac
		perf record -q -a -g -F 499 -e cpu-clock -o "$data" -- \
			nsenter --net="/run/netns/$(host 1)" "${cmd[@]}" \
			>"$log" 2>>"$out/errors.log" || fail "perf record of $f"
		perf report -q -i "$data" --kallsyms="$syms" --stdio \
			--no-children --sort sym --percent-limit 0.5 -g caller,0.5,callee,function,percent \
			>"$out/profile-$f-$size.txt" 2>/dev/null
		perf report -q -i "$data" --kallsyms="$syms" --stdio \
			--no-children --sort sym -g none --percent-limit 0.1 >"$out/flat-$f-$size.txt" 2>/dev/null
		echo "    $f $size B: $(head -n 3 "$out/flat-$f-$size.txt" | tr -s ' ' | tr '\n' ';')"
		nsx 1 ethtool -S grim0 >"$out/ethtool-$f-$size.txt"
		[ "$fam" = grim ] || continue
		# The transport's tracepoints over a shorter run: what the
		# sender waited for.
		perf record -q -a -e 'grim:*' -o "$data.trace" -- \
			nsenter --net="/run/netns/$(host 1)" "$PERF" client \
			-f grim -d 2 -p $PORT -i eth0 -T "$test" -s "$size" -t 2 \
			>/dev/null 2>>"$out/errors.log" || fail "perf record -e grim:*"
		set_datacrc on
		perf script -i "$data.trace" -F time,event,trace >"$out/trace-$f-$size.txt" 2>/dev/null
	done
}

start=$(date +%s)
[ -n "$ONLY" ] && REPS=0
if [ "$ONLY" = mcast ]; then
	mcast_cases
	echo "bench: $(($(wc -l <"$csv") - 1)) results in $(($(date +%s) - start)) s" |
		tee -a "$out/context.txt"
	check_dmesg
	exit 0
fi
setup
if [ -n "$PROFILE" ]; then
	IFS=: read -r pf ps pt pl pm <<<"$PROFILE"
	set_loss "${pl:-0}"
	profile "$pf" "${ps:-64000}" "${pt:-4}" "${pm:-stream}"
	exit 0
fi
{
	echo "kernel: $(uname -r)"
	echo "cpus: $(nproc)"
	echo "quick: $QUICK reps: $REPS loss: $LOSSES tipc: $TIPC_PATH"
	echo "latency sizes: $LAT_SIZES; bandwidth sizes: $BW_SIZES"
	[ -n "${LOSS_LAT_SIZES:-}" ] &&
		echo "under loss: latency sizes $LOSS_LAT_SIZES; bandwidth sizes $LOSS_BW_SIZES"
	echo "interleaved latency: $ILV_SIZE B, $ILV_RUNS runs of $ILV_T s"
	echo "interleaved streams: $ILV_BW_SIZES B, $ILV_RUNS runs of $ILV_BW_T s"
	echo "ip over grim: $IP_SIZE B ping-pong (sockperf UDP, TCP; grim-perf UDP) of $IP_LAT_T s and" \
		"$IP_TPUT_T s of iperf3 TCP, over eth0 and grim0 in turn, $ILV_RUNS rounds at loss $LOSSES"
	echo "at scale: 64 B rate with $SCALE_SOCKS sender sockets, $SCALE_RUNS runs;" \
		"$SCALE_LIVE live streams on grim${SCALE_NIS// /, grim}, $SCALE_CTL runs without, $ILV_RUNS with"
	grep -m1 'model name' /proc/cpuinfo
} >"$out/context.txt"
"$PERF" --csv-header >"$csv"
echo "family,test,size,senders,loss,rep,veth_tx_frames" >"$out/frames.csv"
: >"$out/errors.log"
for ((rep = 1; rep <= REPS; rep++)); do
	for loss in $LOSSES; do
		set_loss "$loss"
		bench_one "$loss" "$rep"
		for i in 1 2; do
			{
				echo "== host $i after loss $loss% rep $rep"
				ip netns exec "$(host "$i")" ethtool -S grim0 2>&1
				ip netns exec "$(host "$i")" tipc link stat show 2>&1 | head -n 40
			} >>"$out/linkstats.txt"
		done
	done
done
case $ONLY in ""|interleaved) interleaved ;; esac
case $ONLY in ""|auth) auth_cases ;; esac
case $ONLY in ""|jumbo) jumbo_cases ;; esac
case $ONLY in ""|ip) ip_cases ;; esac
# Last: the 10,000 streams stay live for streamidle (600 s).
case $ONLY in ""|scale) scale_cases ;; esac
set_loss 0
echo "bench: $(($(wc -l <"$csv") - 1)) results in $(($(date +%s) - start)) s" |
	tee -a "$out/context.txt"
check_dmesg
