#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (reloads the module)
#
# Hostile frames on the wire.  While host 1 sends messages of up to the
# GRIM MTU to host 2 (in batches, until the injection is over),
# grim_inject puts on host 1's eth0, one class at a time, malformed frames (random, truncated, bad identifier,
# version, length, CRC or Internet checksum), well-formed foreign ones (other cluster, other
# node, unknown type, unknown peer, stale session), ACKs with truncated or
# stray SACK reports, bogus fragments and
# message headers on fresh streams of the live session, and replays of
# real DATA frames.  Then:
#   - the real traffic arrived exactly once, in order, intact;
#   - after each class, the drop counter that the validation order of
#     grim_rcv() makes responsible rose by exactly the frames sent, and no
#     other drop counter moved; replays count as duplicates;
#   - no kernel splat, and the module unloads once the namespaces are gone.
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip ethtool rmmod insmod
require_mod veth bridge
# Always leaves the module loaded for the tests that follow.
require_grim_reload
dmesg_mark

DIR=$(cd "$(dirname "$0")" && pwd)
INJECT=$DIR/grim_inject
RDM=$DIR/grim_rdm
[ -x "$INJECT" ] && [ -x "$RDM" ] || skip "grim_inject or grim_rdm not built"

K=${INJECT_K:-30}		# frames per class
BATCH=${INJECT_BATCH:-200}	# good messages per batch
PORT=5000
FRAG_PORT=5001		# bound throughout: the good traffic's port is not
MAC2=$(host_mac 2)
TMP=$(mktemp -d)
at_exit "touch $TMP/stop; kill \$(cat $TMP/pids 2>/dev/null) 2>/dev/null; rm -rf $TMP"

# Drop counters that nothing but a broken or hostile sender moves: after
# each class, each must have risen by exactly what grim_inject expects.
EXACT="rx_drop_truncated rx_drop_bad_magic rx_drop_bad_version
       rx_drop_bad_length rx_drop_bad_checksum rx_drop_other_cluster
       rx_drop_not_for_us rx_drop_unknown_peer rx_drop_bad_type
       rx_drop_bad_fragment rx_drop_bad_message"
# Counters the good traffic may move as well: checked as "at least".
OTHER="rx_drop_stale_session rx_drop_no_endpoint rx_duplicate_frames rx_msgs"

# host2_stats VAR: the ethtool -S counters of host 2's grim0, into assoc. array VAR.
host2_stats() {
	local -n _s=$1
	local k v
	_s=()
	while read -r k v; do
		[[ $k == *: ]] && _s[${k%:}]=$v
	done < <(nsx 2 ethtool -S grim0)
	# A replayed frame is a duplicate while its stream lives, and stale
	# once the stream was closed: either way it is not taken.
	_s[rx_dup_or_stale]=$((_s[rx_duplicate_frames] + _s[rx_drop_stale_stream]))
}

# inject MODE [ARGS...]: one class of frames from host 1 to host 2, then
# compare host 2's counters before and after.
inject() {
	local mode=$1 out kind c e d t ok
	local -A before after want min
	shift

	# The seed is logged: GRIM_TEST_INJECT_SEED=N replays a run's frames.
	local seed=${GRIM_TEST_INJECT_SEED:-$((RANDOM + 1))}
	pretty "$(host 1)" "inject: $mode (seed $seed)"
	host2_stats before
	out=$(nsx 1 "$INJECT" -i eth0 -d "$MAC2" -m "$mode" -k "$K" \
		-S "$seed" "$@" 2>&1)
	local rc=$?
	echo "$out" | sed 's/^/    /'
	[ $rc -eq 0 ] || fail "grim_inject -m $mode exited $rc"
	while read -r kind c e; do
		case $kind in
		expect) want[$c]=$e ;;
		expect-min) min[$c]=$e ;;
		esac
	done <<<"$out"
	[ $((${#want[@]} + ${#min[@]})) -gt 0 ] || fail "$mode: grim_inject expects nothing"
	for c in "${!want[@]}" "${!min[@]}"; do
		[ -n "${before[$c]:-}" ] || fail "$mode: no counter $c in ethtool -S"
	done

	# The frames go through the bridge and host 2's backlog: wait for
	# them, then a little longer for anything that should not come.
	for ((t = 0; t < 100; t++)); do
		host2_stats after
		ok=1
		for c in "${!want[@]}" "${!min[@]}"; do
			e=${want[$c]:-${min[$c]}}
			((after[$c] - before[$c] >= e)) || ok=0
		done
		[ $ok = 1 ] && break
		sleep 0.2
	done
	sleep 0.5
	host2_stats after

	for c in $EXACT; do
		d=$((after[$c] - before[$c]))
		e=${want[$c]:-0}
		check_eq "$d" "$e" "$mode: $c rose by"
		[ "$d" = 0 ] || log "$c: ${before[$c]} -> ${after[$c]} (+$d, expected +$e)"
	done
	for c in "${!min[@]}"; do
		d=$((after[$c] - before[$c]))
		((d >= min[$c])) || fail "$mode: $c rose by $d, expected at least ${min[$c]}"
		log "$c: ${before[$c]} -> ${after[$c]} (+$d, expected at least +${min[$c]})"
	done
	INJECTED=$((INJECTED + ${#want[@]} + ${#min[@]}))
}

pretty "" "two hosts, grim links 00:00:00:01 and 00:00:00:02"
setup_hosts 2
for i in 1 2; do
	check_ok grim_add "$(host "$i")" eth0 grim0 address "00:00:00:0$i"
	ip -n "$(host "$i")" link set grim0 up || fail "grim0 up on host $i"
done

declare -A S0 S1
host2_stats S0
for c in $EXACT $OTHER; do
	[ -n "${S0[$c]:-}" ] || fail "no counter $c in ethtool -S grim0"
done

pretty "" "good traffic: batches of $BATCH messages of 0..64572 bytes, host 1 -> host 2"
# The first batch retries its first message until the peers met.
rdm_batches "$TMP" 1 2 $PORT "$BATCH" -m 0 -M 64572 -R 60 &
traffic_pid=$!
_PIDS+=($traffic_pid)

# Classes that take a real frame first (and so run while DATA flows):
# the replay, bogus fragments, and every well-formed but foreign frame.
INJECTED=0
inject replay -n 64 -w 1000 -t 90
# Frames of a new stream to a port nobody is bound to make no state (the
# NI refuses the whole stream), and between batches nobody is bound to
# PORT: the bogus fragments go to a port bound all along.
nsx 2 "$RDM" recv -p $FRAG_PORT -n 1 -t 600 >/dev/null &
frag_rx=$!
wait_bound 2 $FRAG_PORT
inject frag -p $FRAG_PORT -t 60
# With seed 23860 frag's port "nobody is bound to" was once 0xff00, the
# port of grim0's first IP channel: the message was taken there, and its
# bogus fragments counted twice as bad.  Whatever the seed, the port
# lies below the device endpoints'.  grim_inject numbers its streams'
# incarnations from the clock's second (fresh_inc()): 3 s on, this run's
# are past the last run's, as they must be to make new streams.
sleep 3
GRIM_TEST_INJECT_SEED=23860 inject frag -p $FRAG_PORT -t 60
# One real message, and the receiver is done (its socket must be gone
# before the module can go).
nsx 1 "$RDM" send -d 2 -p $FRAG_PORT -n 1 >/dev/null || fail "send to port $FRAG_PORT"
wait $frag_rx || fail "the receiver on port $FRAG_PORT"

inject stale -t 60
inject cluster -t 60
inject notours -t 60
inject badtype -t 60
inject unknownpeer -t 60
inject sack -t 60
# Malformed frames.
inject random
inject short
inject badmagic
inject badversion
inject badlen
inject badcsum
inject hdrcrc
inject badicsum

pretty "" "the good traffic arrived exactly once, in order"
overlap=yes
kill -0 $traffic_pid 2>/dev/null || overlap=no
touch "$TMP/stop"
wait $traffic_pid
for f in "$TMP"/send.* "$TMP"/recv.*; do
	sed 's/^/    /' "$f"
done
nbatch=$(rdm_batches_ok "$TMP" 1) || exit 1
[ $overlap = yes ] || fail "the good traffic stopped before the injection ended"
log "$nbatch batches of $BATCH messages verified, $INJECTED counters checked"
host2_stats S1
# ... and the one message that ended the receiver of the bogus fragments.
check_eq "$((S1[rx_msgs] - S0[rx_msgs]))" "$((nbatch * BATCH + 1))" "messages delivered on host 2"
for c in $EXACT $OTHER; do
	log "$c: +$((S1[$c] - S0[$c]))"
done
check_dmesg

pretty "" "remove the namespaces, rmmod grim"
for i in 1 2; do ns_del "$(host "$i")"; done
ns_del "$SWITCH_NS"
# netns cleanup runs asynchronously: the links go away a little later.
for ((t = 0; t < 20; t++)); do
	rmmod grim 2>"$TMP/rmmod.err" && break
	sleep 0.5
done
grim_loaded && { cat "$TMP/rmmod.err"; fail "rmmod grim failed"; }
log "rmmod grim: ok"
check_dmesg
pp "${GRIM_LOAD[@]}" || fail "${GRIM_LOAD[*]} failed"

echo "ok: $TEST_NAME"
