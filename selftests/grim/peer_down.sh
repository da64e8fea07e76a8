#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (sets the clock back an hour)
#
# A peer that vanishes: its link is deleted while a sender streams to it.
# The sender gets EHOSTUNREACH within the documented bound (dead_ms plus
# one hello interval: 5 s with the defaults).  When the peer comes back
# (a new NI, a new session), traffic flows again, and the new session
# outlives an idle spell, also when the peer's NI restarted with the wall
# clock set back.

source "$(dirname "$0")/lib.sh"
require_root
require_cmd ethtool
require_grim

BOUND_MS=6000	# dead 4000 + hello 1000 + scheduling slack

pretty "" "2 hosts, host 1 streams to host 2"
setup_hosts 2
grim_cluster 2
wait_peer_up 1 2
bg nsx 2 "$RDM" recv -p 100 -n 100000000 -t 600
wait_bound 2 100
out=$(mktemp)
at_exit "rm -f $out"
nsx 1 "$RDM" send -d 2 -p 100 -M 2000 -E >"$out" &
spid=$!
sleep 2
kill -0 $spid 2>/dev/null || fail "sender stopped early: $(cat "$out")"

pretty "" "host 2's grim link disappears"
ip -n "$(host 2)" link del grim0 || fail "link del"
t0=$(date +%s%N)
rc=0
wait $spid || rc=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
log "$(cat "$out")"
log "sender stopped $ms ms after the peer vanished (bound $BOUND_MS ms)"
check_eq "$rc" 3 "sender exit (3: a send failed)"
check_match "$(cat "$out")" "No route to host|errno 113" "error reported"
[ "$ms" -le $BOUND_MS ] || fail "error took $ms ms, bound is $BOUND_MS ms"
[ "$(stat 1 peer_down_events)" -ge 1 ] || fail "peer down not counted"

pretty "" "host 2 returns with a new NI; traffic resumes"
grim_add "$(host 2)" eth0 grim0 address "$(grim_addr 2)" || fail "re-add"
ip -n "$(host 2)" link set grim0 up
wait_peer_up 1 2
bg nsx 2 "$RDM" recv -p 101 -n 500 -t 60
r=$!
wait_bound 2 101
nsx 1 "$RDM" send -d 2 -p 101 -n 500 -M 8000 -S 5 || fail "send after return"
wait $r || fail "messages lost after the peer returned"
[ "$(stat 1 peer_up_events)" -ge 2 ] || fail "peer did not come up again"

# Host 1 moved to a new session generation when it declared host 2 down;
# its broadcast hellos still carry the NI's own.  They must keep the new
# session alive on an idle link: no traffic for longer than dead_ms.
pretty "" "the returned peer stays up on an idle link"
d1=$(stat 1 peer_down_events)
d2=$(stat 2 peer_down_events)
sleep 6
check_eq "$(stat 1 peer_down_events) $(stat 2 peer_down_events)" "$d1 $d2" \
	"peer down events after 6 s idle (host 1, host 2)"
bg nsx 2 "$RDM" recv -p 102 -n 100 -t 60
r=$!
wait_bound 2 102
nsx 1 "$RDM" send -d 2 -p 102 -n 100 -M 2000 || fail "send after idle"
wait $r || fail "messages lost after idle"

# Session generations come from the wall clock.  An NI that restarts
# with the clock set back starts with older ones than host 1 holds, and
# its frames are stale to host 1.  Host 1's frames name a generation of
# host 2's newer than host 2's own: host 2 starts a session past it, with
# no wait for dead_ms, and from then on it must be taken as it is,
# broadcast hellos included.
pretty "" "host 2's NI restarts with the wall clock an hour behind"
clock_back=0
restore_clock() {
	[ "$clock_back" = 1 ] && date -s "@$(($(date +%s) + 3600))" >/dev/null
	clock_back=0
}
at_exit restore_clock
date -s "@$(($(date +%s) - 3600))" >/dev/null || fail "date -s"
clock_back=1
u1=$(stat 1 peer_up_events)
d1=$(stat 1 peer_down_events)
ip -n "$(host 2)" link del grim0 || fail "link del"
grim_add "$(host 2)" eth0 grim0 address "$(grim_addr 2)" || fail "re-add"
ip -n "$(host 2)" link set grim0 up
# Host 1 takes host 2's session past the old one, without declaring
# host 2 down first.
for ((i = 0; i < 150; i++)); do
	[ "$(stat 1 peer_up_events)" -gt "$u1" ] && break
	sleep 0.1
done
[ "$i" -lt 150 ] || fail "host 1 never took host 2 back"
log "host 1 took host 2 back after $((i / 10)).$((i % 10)) s" \
	"($(($(stat 1 peer_down_events) - d1)) peer down event)"
check_eq "$(($(stat 1 peer_down_events) - d1))" 0 \
	"peer down events on host 1 before it took host 2's new session"
bg nsx 2 "$RDM" recv -p 103 -n 200 -t 60
r=$!
wait_bound 2 103
nsx 1 "$RDM" send -d 2 -p 103 -n 200 -M 8000 -S 6 || fail "send after restart"
wait $r || fail "messages lost after the restart"
d1=$(stat 1 peer_down_events)
d2=$(stat 2 peer_down_events)
sleep 6
check_eq "$(stat 1 peer_down_events) $(stat 2 peer_down_events)" "$d1 $d2" \
	"peer down events after 6 s idle (host 1, host 2)"
restore_clock
check_dmesg
exit 0
