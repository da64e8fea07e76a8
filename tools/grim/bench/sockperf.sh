# SPDX-License-Identifier: GPL-2.0
#
# sockperf cross-check for the UDP and TCP latency numbers, sourced by
# guest.sh.  sockperf cannot open AF_GRIM or AF_TIPC sockets, so every
# family is measured with grim-perf; running sockperf's ping-pong on the
# same veth shows that grim-perf's UDP/TCP figures are not an artefact of
# the tool.  Its results go into bench.csv as families sockperf-udp and
# sockperf-tcp (one-way latency = RTT/2, like grim-perf).

SP_UDP_PORT=11111
SP_TCP_PORT=11112

sockperf_start() {
	command -v sockperf >/dev/null || return 1
	bg nsenter --net="/run/netns/$(host 2)" sockperf server -i 10.71.0.2 \
		-p $SP_UDP_PORT >/dev/null 2>&1
	bg nsenter --net="/run/netns/$(host 2)" sockperf server --tcp -i 10.71.0.2 \
		-p $SP_TCP_PORT >/dev/null 2>&1
	sleep 1
}

# sockperf_pingpong udp|tcp SIZE LOSS REP SECONDS
sockperf_pingpong() {
	local proto=$1 size=$2 loss=$3 rep=$4 secs=${5%.*} args=() res line
	[ "${secs:-0}" -ge 1 ] || secs=1	# sockperf takes whole seconds
	if [ "$proto" = tcp ]; then
		args=(--tcp -p $SP_TCP_PORT)
	else
		args=(-p $SP_UDP_PORT)
	fi
	res=$(timeout -k 5 30 nsenter --net="/run/netns/$(host 1)" sockperf ping-pong \
		-i 10.71.0.2 "${args[@]}" -m "$size" -t "$secs" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
	line=$(awk -v f="sockperf-$proto" -v s="$size" -v l="$loss" -v r="$rep" '
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
			printf "%s,pingpong,%s,1,%s,%s,ok,%d,%.2f,%.2f,%.2f,%.2f,0.000,0,%d,%d,%.3f,0.000\n",
			       f, s, l, r, rcvd, med, p99, mean, min, sent, rcvd, lp
		}' <<<"$res") || {
		echo "sockperf $proto size $size failed: $(tail -n 3 <<<"$res")" >>"$out/errors.log"
		line="sockperf-$proto,pingpong,$size,1,$loss,$rep,fail,0,0,0,0,0,0,0,0,0,0,0"
	}
	echo "$line" >>"$csv"
	echo "    $line"
}
