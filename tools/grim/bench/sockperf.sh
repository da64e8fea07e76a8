# SPDX-License-Identifier: GPL-2.0
#
# sockperf cross-check for the UDP and TCP latency numbers, sourced by
# guest.sh.  sockperf cannot open AF_GRIM or AF_TIPC sockets, so every
# family is measured with grim-perf; running sockperf's ping-pong on the
# same veth shows that grim-perf's UDP/TCP figures are not an artefact of
# the tool.  Its results go into bench.csv as families sockperf-udp and
# sockperf-tcp (one-way latency = RTT/2, like grim-perf).  The IP-over-GRIM
# cases (guest.sh, ip_cases) use the same ping-pong over the veth and over
# grim0, as families ip-veth-udp, ip-grim-udp, ip-veth-tcp, ip-grim-tcp.

SP_UDP_PORT=11111
SP_TCP_PORT=11112

# sockperf_start [ADDR...]: a UDP and a TCP sockperf server on host 2 at
# each ADDR (default 10.71.0.2, host 2's eth0), which must be up.
sockperf_start() {
	local a
	command -v sockperf >/dev/null || return 1
	for a in "${@:-10.71.0.2}"; do
		bg nsenter --net="/run/netns/$(host 2)" sockperf server -i "$a" \
			-p $SP_UDP_PORT >/dev/null 2>&1
		bg nsenter --net="/run/netns/$(host 2)" sockperf server --tcp -i "$a" \
			-p $SP_TCP_PORT >/dev/null 2>&1
	done
	sleep 1
}

# sockperf_pingpong udp|tcp SIZE LOSS REP SECONDS [ADDR [FAMILY [TEST]]]:
# one sockperf ping-pong from host 1 to the server at ADDR (default
# 10.71.0.2), a line in the CSV as FAMILY (default sockperf-udp or
# sockperf-tcp) and TEST (default pingpong), status fail if sockperf
# gave no percentiles.  A UDP ping-pong whose datagram (or answer) is
# lost waits for it until the end of the run: on a lossy link, sockperf
# then has no round trip left in its window and the line says fail.
sockperf_pingpong() {
	local proto=$1 size=$2 loss=$3 rep=$4 secs=${5%.*} addr=${6:-10.71.0.2}
	local fam=${7:-sockperf-$1} test=${8:-pingpong} args=() res line
	[ "${secs:-0}" -ge 1 ] || secs=1	# sockperf takes whole seconds
	if [ "$proto" = tcp ]; then
		args=(--tcp -p $SP_TCP_PORT)
	else
		args=(-p $SP_UDP_PORT)
	fi
	res=$(timeout -k 5 $((secs + 30)) nsenter --net="/run/netns/$(host 1)" sockperf ping-pong \
		-i "$addr" "${args[@]}" -m "$size" -t "$secs" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
	line=$(awk -v f="$fam" -v t="$test" -v s="$size" -v l="$loss" -v r="$rep" '
		/percentile 50.000/ { med = $NF }
		/percentile 99.000/ { p99 = $NF }
		/<MIN> observation/ { min = $NF }
		/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); mean = $0 }
		/Valid Duration/ {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^SentMessages=/) { sub(/.*=/, "", $i); sent = $i }
				if ($i ~ /^ReceivedMessages=/) { sub(/.*=/, "", $i); rcvd = $i }
			}
		}
		END {
			if (med == "") exit 1
			lp = sent > 0 ? 100 * (sent - rcvd) / sent : 0
			printf "%s,%s,%s,1,%s,%s,ok,%d,%.2f,%.2f,%.2f,%.2f,0.000,0,%d,%d,%.3f,0.000\n",
			       f, t, s, l, r, rcvd, med, p99, mean, min, sent, rcvd, lp
		}' <<<"$res") || {
		echo "sockperf $proto size $size to $addr ($fam, loss $loss%, rep $rep) failed:" \
			"$(tail -n 3 <<<"$res")" >>"$out/errors.log"
		line="$fam,$test,$size,1,$loss,$rep,fail,0,0,0,0,0,0,0,0,0,0,0"
	}
	echo "$line" >>"$csv"
	echo "    $line"
}
