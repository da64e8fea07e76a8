#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (unloads the module; kills grim_rdm by name)
#
# Unloading the module during traffic.  While sockets are open the
# module is busy (rmmod fails cleanly); once the programs exit, messages
# still in flight are delivered or failed, and rmmod succeeds with links,
# timers and retransmissions live.  No splat, and the module loads again.

source "$(dirname "$0")/lib.sh"
require_root
# Always leaves the module loaded for the tests that follow.
require_grim_reload
INJECT=$(dirname "$0")/grim_inject
[ -x "$INJECT" ] || skip "grim_inject not built"

pretty "" "3 hosts with lossy links, traffic in both directions"
setup_hosts 3
grim_cluster 3
wait_peer_up 1 2
wait_peer_up 2 3
wait_peer_up 3 1
netem_links "loss 10% duplicate 5%"
for h in 1 2 3; do
	nsx "$h" "$RDM" recv -p 100 -n 100000000 -t 600 >/dev/null &
done
for h in 1 2 3; do
	wait_bound "$h" 100
done
for h in 1 2 3; do
	nsx "$h" "$RDM" send -d $((h % 3 + 1)) -p 100 -n 100000000 -M 30000 -S $h >/dev/null &
	nsx "$h" "$RDM" send -d $h -p 100 -n 100000000 -M 3000 -S $((h + 10)) >/dev/null &
done
sleep 3

pretty "" "rmmod with sockets open: refused"
check_fail rmmod grim
grim_loaded || fail "module gone while sockets were open"

pretty "" "programs killed mid-transfer, rmmod at once"
pkill -9 -x grim_rdm
wait 2>/dev/null
ok=0
for ((i = 0; i < 100; i++)); do
	if rmmod grim 2>/dev/null; then
		ok=1
		break
	fi
	sleep 0.1
done
if [ $ok != 1 ]; then
	log "module refcount: $(cat /sys/module/grim/refcnt)"
	for h in 1 2 3; do
		log "host $h: $(nsx "$h" ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ')"
	done
	sleep 20
	log "20 s later: refcount $(cat /sys/module/grim/refcnt)"
	for h in 1 2 3; do
		log "host $h: $(nsx "$h" ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ')"
	done
	fail "rmmod still failing 10 s after the sockets closed"
fi
log "unloaded after $((i * 100)) ms"
for h in 1 2 3; do
	ip -n "$(host "$h")" link show grim0 >/dev/null 2>&1 &&
		fail "grim0 survived the unload on host $h"
done
check_dmesg

pretty "" "load again and talk"
"${GRIM_LOAD[@]}" || fail "${GRIM_LOAD[*]} after unload"
netem_clear
grim_cluster 2
wait_peer_up 1 2
check_dmesg

# Every frame that starts a message looks its port up.  The ports go
# with the socket family, so they must outlive the links: a lookup while
# rmmod is between the two walked a freed table.  Port 233 hashes to the
# table's last bucket, where the allocator keeps its free pointer.
pretty "" "rmmod while a stranger sends first fragments to an unbound port"
PORT=233
tmp=$(mktemp -d)
at_exit "rm -rf $tmp"
nsx 1 "$RDM" recv -p 100 -n 100000000 -t 600 >/dev/null &
rpid=$!
wait_bound 1 100
nsx 2 "$RDM" send -d 1 -p 100 -n 100000000 -M 3000 -S 7 >/dev/null &
spid=$!
nsx 2 "$INJECT" -i eth0 -d "$(host_mac 1)" -m reasm -p $PORT -k 60000 \
	-g "$tmp/go" -t 60 >"$tmp/inject" 2>&1 &
ipid=$!
at_exit "pkill -x grim_inject"
# The injector takes its template from the traffic, then waits for go.
for ((i = 0; i < 300; i++)); do
	grep -q '^template:' "$tmp/inject" && break
	sleep 0.1
done
grep -q '^template:' "$tmp/inject" || fail "grim_inject took no template: $(cat "$tmp/inject")"
pkill -9 -x grim_rdm
wait $rpid $spid 2>/dev/null
# What host 2 still had in flight to port 100 is refused too: count
# from when that has stopped.
no_ep() { nsx 1 ethtool -S grim0 | awk '$1 == "rx_drop_no_endpoint:" { print $2 }'; }
d0=$(no_ep)
for ((i = 0; i < 40; i++)); do
	sleep 0.5
	d=$(no_ep)
	[ "$d" = "$d0" ] && break
	d0=$d
done
touch "$tmp/go"
# Some of the flood first, so that the unload happens inside it.
for ((i = 0; i < 100; i++)); do
	d=$(no_ep)
	[ $((d - d0)) -ge 50 ] && break
	sleep 0.1
done
log "first fragments refused before rmmod: $((d - d0))"
if [ $((d - d0)) -lt 50 ]; then
	sed 's/^/    grim_inject: /' "$tmp/inject"
	log "host 1: $(nsx 1 ethtool -S grim0 | grep -v ': 0$' | tr -s ' \n' ' ')"
fi
[ $((d - d0)) -ge 50 ] || fail "the flood did not reach host 1 ($((d - d0)) refused)"
ok=0
for ((i = 0; i < 300; i++)); do
	if rmmod grim 2>"$tmp/rmmod"; then
		ok=1
		break
	fi
	sleep 0.1
done
[ $ok = 1 ] || log "rmmod: $(cat "$tmp/rmmod"); refcount $(cat /sys/module/grim/refcnt)"
log "unloaded after $((i * 100)) ms, $(grep -c . "$tmp/inject") lines from grim_inject"
pgrep -x grim_inject >/dev/null || log "note: the flood ended before rmmod"
pkill -x grim_inject
wait $ipid 2>/dev/null
[ $ok = 1 ] || fail "rmmod failed during the flood"
check_dmesg
"${GRIM_LOAD[@]}" || fail "${GRIM_LOAD[*]} after the flood"
exit 0
