#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Groups an NI no longer needs are forgotten, and a forgotten group can
# live again.  Three hosts; host 1 is the root.
#
# 1. Host 2 joins and leaves 100 groups, one after the other, while host
#    3 stays in another group: within twice the dead time (and a few
#    hellos) neither host 2's NI nor the root lists any of the 100, and
#    the group that kept its member still carries every message.
# 2. A group the root forgot while its former member still held it:
#    host 3's dead time is five times the root's, so it forgets last.
#    Host 3 joins the group again: its NI is in the new tree at once
#    (the root's new life of the group is not taken for the old one's
#    duplicates) and every message sent afterwards arrives.
# 3. An NI knows 4096 groups at most: past that, a join is refused with
#    ENOBUFS (not taken and left to wait).  While the root is full, a
#    member's join of a new group is counted as dropped at the root, and
#    the member is not in its tree; once the root's sockets are closed it
#    forgets those groups, the member's join (asked again every hello)
#    is taken, and the group carries every message.

source "$(dirname "$0")/lib.sh"
require_root
require_grim
require_grim_tool
require_ip_grim

CHURN=100
FIRST=10001
LIVE=77
AGAIN=88

work=$(mktemp -d)
at_exit "rm -rf $work"

pretty "" "3 hosts on one bridge, a GRIM link each"
setup_hosts 3
grim_cluster 3
wait_all_up 3

# groups HOST: the ids of the groups HOST's NI lists, one per line, but
# the link's own (4294967294: every NI is in it while the link is up).
groups() {
	nsx "$1" "$GRIM" group show dev grim0 |
		awk '$2 == "group" && $3 != 4294967294 { print $3 }'
}
# churned HOST: how many of the churned groups HOST's NI still lists.
churned() {
	groups "$1" | awk -v a=$FIRST -v b=$((FIRST + CHURN)) \
		'$1 >= a && $1 < b { n++ } END { print n + 0 }'
}
# forgot HOST SINCE N: until HOST's NI has forgotten N groups more than
# SINCE (its mc_forgotten), 30 s at most (twice the dead time and the
# next hello's sweep take 10 s); the count reached.
forgot() {
	local t n
	for ((t = 0; t < 300 * SLOW; t++)); do
		n=$(stat "$1" mc_forgotten)
		[ $((n - $2)) -ge "$3" ] && break
		sleep 0.1
	done
	echo $((n - $2))
}
# state HOST GROUP: in-tree, out, or missing.
state() {
	nsx "$1" "$GRIM" group show dev grim0 | awk -v g="$2" '
		$2 == "group" && $3 == g {
			for (i = 4; i <= NF; i++)
				if ($i == "in-tree" || $i == "out") st = $i
			print st; f = 1 }
		END { if (!f) print "missing" }'
}

pretty "" "host 3 joins group $LIVE; host 2 joins and leaves $CHURN groups"
(nsrun 3 "$GROUP_TOOL" recv -g $LIVE -o "$work/live" -T $((600 * SLOW)) \
	>"$work/live.out" 2>"$work/live.err") &
live=$!
_PIDS+=($live)
wait_prefix "$work/live.out" joined || { cat "$work/live.err"; fail "host 3 did not join group $LIVE"; }
f1=$(stat 1 mc_forgotten)
f2=$(stat 2 mc_forgotten)
start=$SECONDS
out=$(nsx 2 timeout $((300 * SLOW)) "$GROUP_TOOL" churn -g $FIRST -n $CHURN) ||
	fail "the churn failed: $out"
log "$out in $((SECONDS - start)) s; the root lists $(churned 1) of them now"

pretty "" "both NIs forget the $CHURN groups"
start=$SECONDS
n1=$(forgot 1 $f1 $CHURN)
n2=$(forgot 2 $f2 $CHURN)
log "in $((SECONDS - start)) s: host 1 forgot $n1 groups, host 2 $n2"
check_eq "$(churned 1)" 0 "churned groups the root still lists"
check_eq "$(churned 2)" 0 "churned groups host 2 still lists"
check_match "$(nsx 1 "$GRIM" group show dev grim0 | grep "group $LIVE ")" "members 3\$" \
	"group $LIVE at the root, which kept its member"
check_eq "$(state 3 $LIVE)" in-tree "group $LIVE at host 3"

out=$(nsx 2 "$GROUP_TOOL" send -g $LIVE -n 20 -S 7) || fail "send to group $LIVE: $out"
wait_lines "$work/live.$LIVE" 20
check_eq "$(lines "$work/live.$LIVE")" 20 "messages of group $LIVE at host 3"
kill -TERM $live
wait $live || { cat "$work/live.err"; fail "host 3's receiver found errors"; }

pretty "" "host 3 leaves group $AGAIN; the root forgets it first, then host 3 joins again"
check_ok ip -n "$(host 3)" link set grim0 type grim dead 20000
(nsrun 3 "$GROUP_TOOL" recv -g $AGAIN -o "$work/a1" -T $((600 * SLOW)) \
	>"$work/a1.out" 2>"$work/a1.err") &
r=$!
_PIDS+=($r)
wait_prefix "$work/a1.out" joined || { cat "$work/a1.err"; fail "host 3 did not join group $AGAIN"; }
out=$(nsx 2 "$GROUP_TOOL" send -g $AGAIN -n 30 -S 8) || fail "send to group $AGAIN: $out"
wait_lines "$work/a1.$AGAIN" 30
kill -TERM $r
wait $r || { cat "$work/a1.err"; fail "host 3's receiver found errors"; }
check_eq "$(lines "$work/a1.$AGAIN")" 30 "messages of group $AGAIN's first life at host 3"
start=$SECONDS
for ((t = 0; t < 30 * SLOW; t++)); do
	[ "$(state 1 $AGAIN)" = missing ] && break
	sleep 1
done
check_eq "$(state 1 $AGAIN)" missing "group $AGAIN at the root, a while after its last member left"
check_match "$(state 3 $AGAIN)" "in-tree|out" "group $AGAIN at host 3, which forgets later"
log "the root forgot group $AGAIN in $((SECONDS - start)) s; host 3 still holds it"

(nsrun 3 "$GROUP_TOOL" recv -g $AGAIN -o "$work/a2" -T $((600 * SLOW)) \
	>"$work/a2.out" 2>"$work/a2.err") &
r=$!
_PIDS+=($r)
wait_prefix "$work/a2.out" joined || { cat "$work/a2.err"; fail "host 3 did not join group $AGAIN again"; }
check_eq "$(state 3 $AGAIN)" in-tree "group $AGAIN at host 3 once its join returned"
out=$(nsx 2 "$GROUP_TOOL" send -g $AGAIN -n 30 -S 9) || fail "send to group $AGAIN: $out"
wait_lines "$work/a2.$AGAIN" 30
kill -TERM $r
wait $r || { cat "$work/a2.err"; fail "host 3's receiver found errors"; }
check_eq "$(lines "$work/a2.$AGAIN")" 30 "messages of group $AGAIN's second life at host 3"
log "group $AGAIN's second life: all 30 messages at host 3"

pretty "" "the root's NI knows 4096 groups at most: one more is ENOBUFS"
for ((t = 0; t < 30 * SLOW; t++)); do
	known=$(groups 1 | wc -l)
	[ "$known" = 0 ] && break
	sleep 1
done
check_eq "$known" 0 "groups the root knows, a while after the last member left"
f1=$(stat 1 mc_forgotten)
full1=$(stat 1 rx_drop_table_full)
start=$SECONDS
bg nsx 1 timeout $((300 * SLOW)) "$GROUP_TOOL" fill -g 20001 -n 4200 -H $((15 * SLOW)) >"$work/fill" 2>&1
fill=$!
wait_prefix "$work/fill" holding 120 || { cat "$work/fill"; fail "fill did not finish its joins"; }
out=$(cat "$work/fill")
log "$(echo $out) (in $((SECONDS - start)) s)"
check_eq "$(echo "$out" | head -n 1)" "joined 4096" "groups joined"
check_match "$out" "join 24097: No buffer space available" "the join past the limit"

(nsrun 2 "$GROUP_TOOL" recv -g 40000 -o "$work/late" -T $((600 * SLOW)) \
	>"$work/late.out" 2>"$work/late.err") &
r=$!
_PIDS+=($r)
wait_prefix "$work/late.out" joined 30 || { cat "$work/late.err"; fail "host 2's join of group 40000 did not return"; }
check_eq "$(state 2 40000)" out "group 40000 at host 2 while the root is full"
full=$(($(stat 1 rx_drop_table_full) - full1))
log "the root counted $full joins it had no room for"
[ "$full" -ge 1 ] || fail "the root did not count the join it had no room for"
wait $fill || fail "fill: $(cat "$work/fill")"

n1=$(forgot 1 $f1 4096)
check_eq "$n1" 4096 "groups the root forgot once their sockets closed"
for ((t = 0; t < 30 * SLOW; t++)); do
	[ "$(state 2 40000)" = in-tree ] && break
	sleep 1
done
check_eq "$(state 2 40000)" in-tree "group 40000 at host 2 once the root had room"
log "host 2 joined group 40000 $t s after the root forgot"
out=$(nsx 3 "$GROUP_TOOL" send -g 40000 -n 10 -S 10) || fail "send to group 40000: $out"
wait_lines "$work/late.40000" 10
kill -TERM $r
wait $r || { cat "$work/late.err"; fail "host 2's receiver found errors"; }
check_eq "$(lines "$work/late.40000")" 10 "messages of group 40000 at host 2"
