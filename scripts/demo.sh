#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# GRIM demo, run inside the VM by `make demo` (scripts/vm-run.sh --script).
# Three hosts (network namespaces) on one Ethernet switch (a bridge in a
# fourth namespace), a grim NI on each host's eth0.
#
# To extend: write a step_<name> function and add it to STEPS.
source "$(dirname "$0")/../selftests/grim/lib.sh"
TEST_NAME=demo
N=${DEMO_HOSTS:-3}

banner() {
	echo
	echo "=============================================================="
	echo "  $*"
	echo "=============================================================="
}

step_topology() {
	banner "1. $N hosts on an Ethernet switch"
	setup_hosts "$N"
	log "switch namespace $SWITCH_NS: bridge br0 with ports p1..p$N"
	for ((i = 1; i <= N; i++)); do
		log "host $i = netns $(host "$i"), eth0 $(host_mac "$i")"
	done
	pp ip -n "$SWITCH_NS" -br link show master br0
}

step_module() {
	banner "2. Load the GRIM module"
	require_grim
	log "\$ modinfo ${GRIM_KO:-grim}"
	modinfo "${GRIM_KO:-grim}" | grep -E '^(filename|description|version|vermagic):' | sed 's/^/    /'
	log "\$ lsmod"
	lsmod | grep -E '^(Module|grim) ' | sed 's/^/    /'
}

step_links() {
	banner "3. A GRIM NI on each host: ip link add link eth0 name grim0 address 00:00:00:0N type grim"
	for ((i = 1; i <= N; i++)); do
		pretty "$(host "$i")" "create grim0 (node $i)"
		pp ip -n "$(host "$i")" link add link eth0 name grim0 \
			address "$(printf '00:00:%02x:%02x' $((i >> 8)) $((i & 255)))" type grim ||
			fail "creating grim0 on host $i"
		pp ip -n "$(host "$i")" link set grim0 up || fail "grim0 up on host $i"
	done
}

step_show() {
	banner "4. What the hosts see"
	for ((i = 1; i <= N; i++)); do
		pretty "$(host "$i")" "ip -d link show grim0"
		ip -n "$(host "$i")" -d link show grim0 | sed 's/^/    /'
		log "node address: $(grim_node "$(host "$i")" grim0)"
	done
}

step_kernel_log() {
	banner "5. Kernel log (grim)"
	dmesg | grep -i grim | tail -n 20 | sed 's/^/    /'
	check_dmesg
}

STEPS=(step_topology step_module step_links step_show step_kernel_log)

for s in "${STEPS[@]}"; do
	"$s"
done
banner "demo finished"
