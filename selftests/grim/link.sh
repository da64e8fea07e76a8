#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rtnetlink life cycle of a grim link:
#   ip link add link LOWER name grim0 type grim [address NODE]
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip
require_mod veth
require_grim
dmesg_mark

NS=$PFX-link
ns_add "$NS"
ipn() { ip -n "$NS" "$@"; }
ipn link add name veth0 address 02:11:22:33:44:55 type veth peer name veth1
ipn link set veth0 up
ipn link set veth1 up

pretty "$NS" "create a grim link on veth0"
check_ok grim_add "$NS" veth0 grim0
out=$(check_ok ipn -d link show grim0)
echo "$out"
check_match "$out" $'\n'"[[:space:]]+grim( |$)" "ip -d link show grim0 shows link kind grim"

pretty "$NS" "node id derived from the lower MAC (low 32 bits)"
check_eq "$(ip netns exec "$NS" cat /sys/class/net/grim0/address)" "22:33:44:55" "node address"
pp ipn link del grim0
check_fail ipn link show grim0

pretty "$NS" "explicit node id: address 00:00:00:07"
check_ok grim_add "$NS" veth0 grim0 address 00:00:00:07
check_eq "$(ip netns exec "$NS" cat /sys/class/net/grim0/address)" "00:00:00:07" "node address"

pretty "$NS" "a second grim link on the same lower device fails"
check_fail grim_add "$NS" veth0 grim1 address 00:00:00:08
check_fail ipn link show grim1

pretty "$NS" "ip link del removes the link"
pp ipn link del grim0
check_fail ipn link show grim0

pretty "$NS" "creating without a lower device fails"
check_fail ipn link add name grim0 type grim
check_fail ipn link show grim0

pretty "$NS" "creating on a non-Ethernet lower device (lo) fails"
check_fail grim_add "$NS" lo grim0
check_fail ipn link show grim0

pretty "$NS" "deleting the lower device removes the grim link"
check_ok grim_add "$NS" veth0 grim0 address 00:00:00:09
check_ok ipn link show grim0 >/dev/null
pp ipn link del veth0
check_fail ipn link show grim0
check_eq "$(ipn -o link show type grim | wc -l)" 0 "grim links left"

pretty "" "kernel log is clean"
check_dmesg
echo "ok: $TEST_NAME"
