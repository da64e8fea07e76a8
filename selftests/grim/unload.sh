#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# grim-selftest: alone (unloads the module)
#
# rmmod grim with links in several namespaces removes them all; loading it
# again works: insmod $GRIM_KO when the runner passes the module's path,
# else modprobe grim (lib.sh: require_grim_reload).
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip rmmod insmod
require_mod veth bridge
# Always leaves the module loaded for the tests that follow.
require_grim_reload
dmesg_mark

pretty "" "three hosts with a grim link each"
setup_hosts 3
for i in 1 2 3; do
	check_ok grim_add "$(host "$i")" eth0 grim0 address "00:00:00:0$i"
	ip -n "$(host "$i")" link set grim0 up
done
# and a few unused ones
ns_add "$PFX-x"
ip -n "$PFX-x" link add name veth0 type veth peer name veth1
check_ok grim_add "$PFX-x" veth0 grim0
check_ok grim_add "$PFX-x" veth1 grim1
sleep 1

pretty "" "rmmod grim"
pp rmmod grim || fail "rmmod grim failed"
grim_loaded && fail "/sys/module/grim still present"
for ns in "$(host 1)" "$(host 2)" "$(host 3)" "$PFX-x"; do
	check_eq "$(ip -n "$ns" -o link show type grim 2>/dev/null | wc -l)" 0 "grim links left in $ns"
	check_fail ip -n "$ns" link show grim0
done
check_dmesg

pretty "" "load again and create links"
pp "${GRIM_LOAD[@]}" || fail "${GRIM_LOAD[*]} failed"
for i in 1 2 3; do
	check_ok grim_add "$(host "$i")" eth0 grim0 address "00:00:00:0$i"
done
check_eq "$(grim_node "$(host 2)" grim0)" "00:00:00:02" "node address"

pretty "" "rmmod again, then leave it loaded"
pp rmmod grim || fail "second rmmod failed"
pp "${GRIM_LOAD[@]}" || fail "${GRIM_LOAD[*]} failed"

check_dmesg
echo "ok: $TEST_NAME"
