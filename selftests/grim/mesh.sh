#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 32 hosts on one segment, all to all, over links that lose and reorder.
#
# Every host discovers the 31 others from hellos alone, and its peer
# table holds them and no more.  Then every host sends COUNT messages to
# each of the others from one socket, taking destinations in turn, and
# checks what the same socket receives: from each sender exactly COUNT,
# exactly once, in order, every byte as sent.  Every link loses 2% of
# its frames and holds some back (netem reorder), both ways, so that
# every pair's streams recover while 31 others share the NI.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

# GRIM_TEST_MESH_HOSTS: fewer for make check-kselftest (a runner check).
N=${GRIM_TEST_MESH_HOSTS:-32}
COUNT=40
PORT=200

# table HOST: "UP ENTRIES": peers HOST holds up (itself not counted),
# and entries in its peer table (itself included).
table() {
	grim_peers "$1" | awk -v me="$1" '$1 != me && $2 == "up" { u++ } { n++ }
		END { print u + 0, n + 0 }'
}

pretty "" "$N hosts on one bridge, a GRIM link each"
setup_hosts $N
# Each socket takes its 31 destinations in turn: on a slow guest a stream
# waits more than the default 1 s between two messages, and would close
# and open again all through the mesh.  Streams that come and go are
# streams.sh's; here they stay open.
GRIM_OPTS="streamidle 60000" grim_cluster $N
check_match "$(ip -n "$(host $N)" -d link show grim0)" "streamidle 60000ms" \
	"host $N's grim0 options"

pretty "" "every host discovers the $((N - 1)) others"
for ((i = 1; i <= N; i++)); do
	for ((t = 0; t < 300; t++)); do
		read -r u n <<<"$(table $i)"
		[ "$u" = $((N - 1)) ] && break
		sleep 0.2
	done
	[ "$u" = $((N - 1)) ] || fail "host $i has $u peers up of $((N - 1))"
	check_eq "$n" $N "peer table entries on host $i"
done

pretty "" "2% loss and reordering on every link, both ways"
netem_links "loss 2% delay 1ms reorder 10% 50%"

pretty "" "all to all: $COUNT messages of up to 3000 bytes per ordered pair"
go=$(mktemp -u)
outs=$(mktemp -d)
at_exit "rm -rf $go $outs"
pids=()
for ((i = 1; i <= N; i++)); do
	bg nsx $i "$RDM" mesh -p $PORT -N 1-$N -s $i -n $COUNT -m 0 -M 3000 \
		-S $i -t 600 -g "$go" >"$outs/$i" 2>&1
	pids+=($!)
done
for ((i = 1; i <= N; i++)); do
	wait_bound $i $PORT
done
retx0=0
for ((i = 1; i <= N; i++)); do
	retx0=$((retx0 + $(stat $i retransmit_frames)))
done
t0=$(date +%s)
touch "$go"
# Until every host is done, or one fails: its socket closes with it, and
# the others' messages to it fail too, or wait for ever for its own.
bad=() left=$N
declare -A rc=()
while [ $left -gt 0 ] && [ ${#bad[@]} -eq 0 ]; do
	sleep 0.5
	for ((i = 1; i <= N; i++)); do
		[ -z "${rc[$i]:-}" ] && ! kill -0 "${pids[i - 1]}" 2>/dev/null || continue
		wait "${pids[i - 1]}"
		rc[$i]=$?
		left=$((left - 1))
		[ "${rc[$i]}" = 0 ] || bad+=($i)
	done
done
if [ ${#bad[@]} -gt 0 ]; then
	sleep 2
	for ((i = 1; i <= N; i++)); do
		[ "${rc[$i]:-0}" != 0 ] || grep -q failed "$outs/$i" || continue
		echo "host $i (exit ${rc[$i]:-running}):" >&2
		sed 's/^/    /' "$outs/$i" >&2
		nsx $i ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ' >&2
		echo >&2
	done
fi
[ ${#bad[@]} -eq 0 ] || fail "hosts ${bad[*]}: the mesh did not complete"
for ((i = 1; i <= N; i++)); do
	check_match "$(<"$outs/$i")" "recv: $((COUNT * (N - 1))) msgs, [0-9]+ bytes from $((N - 1)) sources in [0-9]+ ms, 0 errors" \
		"host $i's messages received"
done
# What the retransmissions were: timeouts, loss probes, fast recoveries
# and the frames sent in all, summed over the hosts.
read -r retx rto probes fast frames <<<"$(for ((i = 1; i <= N; i++)); do
	nsx $i ethtool -S grim0
done | awk '$1 == "retransmit_frames:" { r += $2 } $1 == "retransmit_timeouts:" { t += $2 }
	$1 == "retransmit_probes:" { p += $2 } $1 == "fast_retransmits:" { f += $2 }
	$1 == "tx_frames:" { n += $2 } END { print r + 0, t + 0, p + 0, f + 0, n + 0 }')"
log "$((COUNT * N * (N - 1))) messages in $(($(date +%s) - t0)) s, $((retx - retx0)) frames retransmitted of $frames sent ($rto timeouts, $probes loss probes, $fast fast recoveries)"
[ $((retx - retx0)) -gt 0 ] || fail "no frame was retransmitted: the links lost nothing"

netem_clear
for ((i = 1; i <= N; i++)); do
	read -r u n <<<"$(table $i)"
	check_eq "$n" $N "peer table entries on host $i after the mesh"
done
check_dmesg
exit 0
