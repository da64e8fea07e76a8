#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# GRIM through the tools operators already have: ip with the link_grim.so
# plugin (create with and without GRIM attributes, ip -d link show) and
# ethtool (-i, -g/-G for the NI queues, -l for logical channels).
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip ethtool python3
require_mod veth
require_grim
dmesg_mark

require_ip_grim
require_grim_tool

NS=$PFX-tools
ns_add "$NS"
ipn() { ip -n "$NS" "$@"; }
ipn link add name veth0 address 02:11:22:33:44:55 type veth peer name veth1
ipn link set veth0 up
ipn link set veth1 up

pretty "$NS" "ip link add ... type grim with GRIM attributes"
check_ok ipn link add link veth0 name grim0 type grim node 7 cluster 3 \
	hello 200 dead 1000 rto 5 window 32
out=$(check_ok ipn -d link show grim0)
echo "$out"
check_match "$out" "grim node 7 cluster 3 hello 200ms dead 1000ms rto 5ms window 32" \
	"ip -d link show prints the GRIM attributes"
check_eq "$(ip netns exec "$NS" cat /sys/class/net/grim0/address)" "00:00:00:07" "node address"
check_eq "$(ipn -j -d link show grim0 | python3 -c 'import json, sys
d = json.load(sys.stdin)[0]["linkinfo"]["info_data"]
print(d["node"], d["cluster"], d["hello"], d["dead"], d["rto"], d["window"])')" \
	"7 3 200 1000 5 32" "ip -j -d link show"

pretty "$NS" "ip link set ... type grim changes tunables; node only while down"
check_ok ipn link set grim0 type grim window 128 rto 10
check_match "$(ipn -d link show grim0)" "rto 10ms window 128" "changed tunables"
check_ok ipn link set grim0 type grim peerrate 200
check_match "$(ipn -d link show grim0)" "streamidle 1000ms peerrate 200 " "peerrate"
check_match "$(ip netns exec "$NS" "$GRIM" link show dev grim0)" \
	"new peers from hellos: 200 a second" "grim link show: peerrate"
ipn link set grim0 up
check_fail ipn link set grim0 type grim cluster 4
ipn link set grim0 down
check_ok ipn link set grim0 type grim cluster 4
check_match "$(ipn -d link show grim0)" "cluster 4 " "cluster after change"

pretty "$NS" "bad values are refused by the plugin and by the kernel"
check_fail ipn link set grim0 type grim window 0
check_fail ipn link set grim0 type grim window 5000
check_fail ipn link set grim0 type grim peerrate 0
check_fail ipn link set grim0 type grim peerrate 1025
check_fail ipn link set grim0 type grim colour 3
check_fail ipn link set grim0 type grim node
out=$(ipn link set grim0 type grim hello 1000 dead 1000 2>&1)
check_match "$out" "dead time must be at least 3 hello intervals" "extack of dead < 3 hello"
pp ipn link del grim0

pretty "$NS" "ip link add ... type grim without GRIM attributes"
check_ok ipn link add link veth0 name grim0 type grim
out=$(check_ok ipn -d link show grim0)
echo "$out"
check_match "$out" "grim node 573785173 cluster 0 hello 1000ms dead 4000ms rto 20ms window 1024 streamidle 1000ms peerrate 16 datacrc on" \
	"defaults (node from the lower MAC 22:33:44:55)"

pretty "$NS" "ethtool -i"
out=$(check_ok ip netns exec "$NS" ethtool -i grim0)
echo "$out"
check_match "$out" "driver: grim" "driver"
check_match "$out" "firmware-version: grim-wire-8" "firmware version"
check_match "$out" "bus-info: veth0" "bus-info is the lower device"

pretty "$NS" "ethtool -g/-G: the TX window and the RX hold"
out=$(check_ok ip netns exec "$NS" ethtool -g grim0)
echo "$out"
check_match "$out" "TX:[[:space:]]+4096" "max TX window"
check_match "$out" "RX:[[:space:]]+1024" "frames held past a gap"
check_ok ip netns exec "$NS" ethtool -G grim0 tx 256
check_match "$(ipn -d link show grim0)" "window 256" "window after ethtool -G"
check_match "$(ip netns exec "$NS" ethtool -g grim0 | sed -n '/Current/,$p')" \
	"TX:[[:space:]]+256" "current TX"
check_fail ip netns exec "$NS" ethtool -G grim0 tx 5000
check_fail ip netns exec "$NS" ethtool -G grim0 tx 0
check_fail ip netns exec "$NS" ethtool -G grim0 rx 1

pretty "$NS" "ethtool -l: logical channels"
out=$(check_ok ip netns exec "$NS" ethtool -l grim0)
echo "$out"
check_match "$out" "Other:[[:space:]]+65535" "max logical channels"
check_fail ip netns exec "$NS" ethtool -L grim0 other 2

pretty "$NS" "ethtool -S names every counter"
out=$(ip netns exec "$NS" ethtool -S grim0)
check_match "$out" "tx_msgs: 0" "tx_msgs"
check_match "$out" "retransmit_frames: 0" "retransmit_frames"

pretty "" "kernel log is clean"
check_dmesg
echo "ok: $TEST_NAME"
