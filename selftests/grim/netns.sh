#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# grim links and network namespaces: netns teardown with a live link, and
# moving the lower device to another namespace.
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip
require_mod veth
require_grim
dmesg_mark

A=$PFX-a
B=$PFX-b
C=$PFX-c

pretty "$A" "grim link in a namespace, then delete the namespace"
ns_add "$A"
ip -n "$A" link add name veth0 type veth peer name veth1
ip -n "$A" link set veth0 up
check_ok grim_add "$A" veth0 grim0 address 00:00:00:01
ip -n "$A" link set grim0 up
check_ok ip -n "$A" -d link show grim0
pp ns_del "$A"
# netns cleanup runs asynchronously; give it a moment.
sleep 2
check_dmesg

pretty "$B" "the module is still usable afterwards"
ns_add "$B"
ip -n "$B" link add name veth0 type veth peer name veth1
check_ok grim_add "$B" veth0 grim0 address 00:00:00:02
check_eq "$(ip netns exec "$B" cat /sys/class/net/grim0/address)" "00:00:00:02" "node address"

pretty "$B" "the grim link itself cannot change namespace"
ns_add "$C"
check_fail ip -n "$B" link set grim0 netns "$C"
check_ok ip -n "$B" link show grim0 >/dev/null
check_eq "$(ip -n "$C" -o link show type grim | wc -l)" 0 "grim links in $C"

pretty "$B" "move the lower device to another namespace"
pp ip -n "$B" link set veth0 netns "$C"
# Either the grim link followed its lower device away (gone from B) or it
# stayed in B; both are acceptable, but it must remain deletable and consistent.
if ip -n "$B" link show grim0 >/dev/null 2>&1; then
	log "grim0 stayed in $B"
	check_ok ip -n "$B" -d link show grim0
	pp ip -n "$B" link set grim0 up || true
	check_ok ip -n "$B" link del grim0
else
	log "grim0 went away with its lower device"
fi
check_ok ip -n "$C" link show veth0 >/dev/null
check_eq "$(ip -n "$C" -o link show type grim | wc -l)" 0 "grim links in $C"

pretty "$C" "the moved lower device can carry a new grim link"
check_ok grim_add "$C" veth0 grim0 address 00:00:00:03
pp ns_del "$C"
pp ns_del "$B"
sleep 2

pretty "" "kernel log is clean"
check_dmesg
echo "ok: $TEST_NAME"
