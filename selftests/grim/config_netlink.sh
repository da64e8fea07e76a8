#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "grim" generic netlink family through the grim tool: every command,
# its errors (errno and extack text), privileges, JSON output against
# ethtool -S and ip -s link, counters that move with traffic, the socket
# dump and the events group.
source "$(dirname "$0")/lib.sh"

require_root
require_cmd ip ethtool python3 setpriv
require_grim
dmesg_mark

here=$(cd "$(dirname "$0")" && pwd)
require_grim_tool
RDM=$here/grim_rdm
[ -x "$RDM" ] || skip "grim_rdm not built"

setup_hosts 2
for i in 1 2; do
	check_ok grim_add "$(host $i)" eth0 grim0 address "00:00:00:0$i"
	nsx $i ip link set grim0 up
done

g() { local n=$1; shift; nsx "$n" "$GRIM" "$@"; }
# jq-like: py N EXPR ARGS...: run grim -j ARGS in host N, print EXPR(d).
py() {
	local n=$1 expr=$2
	shift 2
	g "$n" -j "$@" | python3 -c "import json, sys; d = json.load(sys.stdin); print(($expr))"
}
# expect_err N ERRNO_TEXT EXTACK_REGEX EXIT ARGS...: grim ARGS fails so.
expect_err() {
	local n=$1 etext=$2 re=$3 rc=$4 out got
	shift 4
	out=$(g "$n" "$@" 2>&1)
	got=$?
	log "grim $* -> exit $got: $out"
	[ "$got" = "$rc" ] || fail "grim $*: exit $got, expected $rc"
	check_match "$out" "$etext" "errno of grim $*"
	check_match "$out" "$re" "message of grim $*"
}
wait_peer_up() {	# wait_peer_up HOST NODE
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(py "$1" "[p['state'] for p in d if p['node'] == $2]" peer show 2>/dev/null)" = "['up']" ] &&
			return 0
		sleep 0.2
	done
	fail "peer $2 not up on host $1"
}

pretty "" "help and usage errors"
check_ok "$GRIM" help >/dev/null
expect_err 1 "unknown object" "Try" 2 frobnicate
expect_err 1 "unknown argument" "" 2 node set dev grim0 colour 3
expect_err 1 "invalid node id" "" 2 node set dev grim0 node -1
expect_err 1 "cannot find device" "" 1 node show dev nosuchdev

pretty "$(host 1)" "node and link show"
out=$(check_ok g 1 node show)
echo "$out"
check_match "$out" "^grim0: node 1 cluster 0" "node show"
check_eq "$(py 1 "d[0]['node'], d[0]['cluster']" node show dev grim0)" "(1, 0)" "node show -j"
out=$(check_ok g 1 link show)
echo "$out"
check_match "$out" "grim0: node 1 cluster 0 lower eth0 running" "link show"
check_eq "$(py 1 "d[0]['running'], d[0]['window'], d[0]['hello_ms']" link show dev grim0)" \
	"(True, 1024, 1000)" "link show -j"
check_ok g 1 -p link show -s | python3 -c 'import json, sys; json.load(sys.stdin)'

pretty "$(host 1)" "node set: only while the link is down"
expect_err 1 "Device or resource busy" "only while the link is down" 1 \
	node set dev grim0 node 11
nsx 1 ip link set grim0 down
check_ok g 1 node set dev grim0 node 11 cluster 5
check_eq "$(py 1 "d[0]['node'], d[0]['cluster']" node show dev grim0)" "(11, 5)" "node after set"
check_eq "$(grim_node "$(host 1)" grim0)" "00:00:00:0b" "link address follows the node id"
check_ok g 1 node set dev grim0 node 1 cluster 0
nsx 1 ip link set grim0 up

pretty "$(host 1)" "bad requests get errno and extack"
expect_err 1 "Numerical result out of range" "out of range" 1 node set dev grim0 node 0
expect_err 1 "Numerical result out of range" "out of range" 1 \
	node set dev grim0 node 4294967295
expect_err 1 "Invalid argument" "nothing to set" 1 node set dev grim0
expect_err 1 "Invalid argument" "missing required attribute mac" 1 \
	peer add dev grim0 node 9
expect_err 1 "Invalid argument" "missing required attribute node" 1 \
	peer del dev grim0
expect_err 1 "Invalid argument" "Unknown attribute type" 1 \
	--raw-attr 40:1 node show dev grim0
expect_err 1 "Invalid argument" "Unsupported attribute" 1 \
	--raw-attr 3:1 node set dev grim0 cluster 1
expect_err 1 "No such device" "no GRIM link with this ifindex" 1 \
	peer show dev eth0 node 2
expect_err 1 "Invalid argument" "unicast" 1 \
	peer add dev grim0 node 9 mac 01:00:5e:00:00:01

pretty "" "peers are discovered by hello"
wait_peer_up 1 2
wait_peer_up 2 1
out=$(check_ok g 1 peer show)
echo "$out"
check_match "$out" "grim0: node 2 up mac $(host_mac 2)" "peer show"
check_eq "$(py 1 "d[0]['mac'], d[0]['static'], d[0]['rgen'] > 0" peer show dev grim0 node 2)" \
	"('$(host_mac 2)', False, True)" "peer show node 2 -j"
expect_err 1 "No such file or directory" "no such peer" 1 peer show dev grim0 node 77

pretty "$(host 1)" "static peers: add, show, duplicate, delete"
check_ok g 1 peer add dev grim0 node 9 mac 02:00:00:00:00:99
# Nobody answers at that MAC: new, then down after dead_ms.
check_eq "$(py 1 "d[0]['state'] in ('new', 'down'), d[0]['static'], d[0]['mac']" peer show dev grim0 node 9)" \
	"(True, True, '02:00:00:00:00:99')" "static peer"
check_match "$(g 1 peer show)" "node 9 (new|down) mac 02:00:00:00:00:99 static" "static in text"
expect_err 1 "File exists" "already configured" 1 peer add dev grim0 node 9 mac 02:00:00:00:00:99
expect_err 1 "Invalid argument" "own" 1 peer add dev grim0 node 1 mac 02:00:00:00:00:99
check_ok g 1 peer del dev grim0 node 9
expect_err 1 "No such file or directory" "no such peer" 1 peer del dev grim0 node 9
check_eq "$(py 1 "len([p for p in d if p['node'] == 9])" peer show)" 0 "peer 9 gone"

pretty "" "a static peer comes up without waiting for discovery"
check_ok g 2 peer del dev grim0 node 1
check_ok g 2 peer add dev grim0 node 1 mac "$(host_mac 1)"
wait_peer_up 2 1
check_eq "$(py 2 "d[0]['static']" peer show dev grim0 node 1)" True "static peer up"

pretty "" "a deleted discovered peer is rediscovered"
check_ok g 1 peer del dev grim0 node 2
wait_peer_up 1 2

pretty "" "peers of a down link"
nsx 2 ip link set grim0 down
expect_err 2 "Network is down" "link is down" 1 peer add dev grim0 node 5 mac 02:00:00:00:00:05
check_eq "$(py 2 "len(d)" peer show)" 0 "no peers while down"
nsx 2 ip link set grim0 up
wait_peer_up 1 2

pretty "" "unprivileged: reads work, changes get EPERM"
nopriv=(setpriv --bounding-set=-net_admin --inh-caps=-net_admin)
check_ok nsx 1 "${nopriv[@]}" "$GRIM" link show >/dev/null
check_ok nsx 1 "${nopriv[@]}" "$GRIM" peer show >/dev/null
out=$(nsx 1 "${nopriv[@]}" "$GRIM" peer del dev grim0 node 2 2>&1)
check_eq "$?" 1 "exit of unprivileged peer del"
check_match "$out" "Operation not permitted" "unprivileged peer del"
out=$(nsx 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$GRIM" node set dev grim0 cluster 3 2>&1)
check_match "$out" "Operation not permitted" "nobody: node set"
check_ok nsx 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$GRIM" -j node show >/dev/null
wait_peer_up 1 2

pretty "" "sockets and counters with traffic"
before=$(py 2 "d[0]['stats']['rx_msgs']" link show dev grim0 -s)
bg nsx 2 "$RDM" recv -p 100 -n 200 -t 60
rpid=${_PIDS[-1]}
for ((i = 0; i < 50; i++)); do
	[ "$(py 2 "[s['port'] for s in d]" socket)" = "[100]" ] && break
	sleep 0.1
done
out=$(check_ok g 2 socket)
echo "$out"
check_match "$out" "rdm +0 +0 +2:100 +\*" "socket show"
check_eq "$(py 2 "d[0]['node'], d[0]['port'], d[0]['type']" socket show port 100)" \
	"(2, 100, 'rdm')" "socket -j"
check_eq "$(py 2 "len(d)" socket port 101)" 0 "socket port filter"
check_ok nsx 1 "$RDM" send -d 2 -p 100 -n 200 -m 1 -M 3000
wait "$rpid" || fail "receiver failed"
after=$(py 2 "d[0]['stats']['rx_msgs']" link show dev grim0 -s)
log "rx_msgs on host 2: $before -> $after"
[ $((after - before)) -ge 200 ] || fail "rx_msgs moved by $((after - before)), expected 200"
check_eq "$(py 1 "d[0]['stats']['tx_msgs'] >= 200" peer show dev grim0 node 2 -s)" True \
	"per-peer tx_msgs"

pretty "" "JSON counters agree with ethtool -S and ip -s link"
for n in 1 2; do
	e1=$(nsx $n ethtool -S grim0)
	j=$(g $n -j link show dev grim0 -s)
	l=$(nsx $n ip -j -s link show grim0)
	e2=$(nsx $n ethtool -S grim0)
	python3 - "$e1" "$j" "$e2" "$l" <<-'EOF' || fail "host $n: counters disagree"
	import json, sys
	def eth(t):
	    return {k.strip(): int(v) for k, v in
	            (l.split(':') for l in t.splitlines()[1:])}
	a, b = eth(sys.argv[1]), eth(sys.argv[3])
	j = json.loads(sys.argv[2])[0]['stats']
	assert set(j) == set(a), set(j) ^ set(a)
	for k in j:
	    assert a[k] <= j[k] <= b[k], (k, a[k], j[k], b[k])
	s = json.loads(sys.argv[4])[0]['stats64']
	assert a['tx_msgs'] <= s['tx']['packets'] <= b['tx_msgs']
	assert a['rx_msgs'] <= s['rx']['packets'] <= b['rx_msgs']
	assert a['rx_bytes'] <= s['rx']['bytes'] <= b['rx_bytes']
	print("    %d counters agree; tx_msgs %d rx_msgs %d" %
	      (len(j), j['tx_msgs'], j['rx_msgs']))
	EOF
done

pretty "$(host 1)" "monitor: link and peer events"
mon=$(mktemp)
at_exit "rm -f $mon"
bg nsx 1 "$GRIM" -j monitor >"$mon"
sleep 0.5
nsx 1 ip link add name v1 type veth peer name v2
check_ok grim_add "$(host 1)" v1 grimx address 00:00:00:42
nsx 1 ip link del grimx
check_ok g 1 peer del dev grim0 node 2
wait_peer_up 1 2
sleep 0.3
cat "$mon"
python3 - "$mon" <<-'EOF' || fail "monitor events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
kinds = [(e['event'], e['node']) for e in ev]
assert ('link-new', 0x42) in kinds, kinds
assert ('link-del', 0x42) in kinds, kinds
assert any(e['event'] == 'peer' and e['node'] == 2 and e['state'] == 'up'
           for e in ev), kinds
EOF

pretty "" "kernel log is clean"
check_dmesg
echo "ok: $TEST_NAME"
