# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest scripts that run tests two at a time.
#
# Turning a networking static key on or off rewrites kernel text while
# the other CPU may be running it, and QEMU's TCG (7.2) may then run a
# stale translation of the patched bytes: the guest dies on a stray int3
# ("Oops: int3" in __netif_receive_skb_core when one test removed its
# clsact qdisc while the other received; in netif_rx_internal when a
# ping turned the receive timestamp key on during TCP traffic; in
# __schedule when trace.sh turned its last trace event off, which stops
# the recording of task names and so takes the tracer off sched_switch).
# Holding the keys on for the whole run leaves nothing to patch: a
# clsact qdisc on lo holds the tc ingress and egress keys, a socket with
# SO_TIMESTAMP the receive timestamp key, an event enabled in a tracing
# instance of our own (module_load, which nothing hot runs) the task
# name recording's hold on the scheduler's tracepoints.  The modules the
# tests load are loaded here too, before two tests run at once.

# hold_net_keys: until the VM powers off.  Letting the keys go at the
# end of the run would patch the text once more, with the other CPU
# idling in __schedule: a CI run died so ("Oops: int3" in __schedule
# when the tracing instance's event was turned off after the last test).
# Says so on stderr when a key could not be held.
hold_net_keys() {
	local t f
	modprobe -a veth sch_ingress cls_u32 act_gact sch_netem sch_tbf macsec 2>/dev/null
	tc qdisc add dev lo clsact 2>/dev/null ||
		echo "guest-keys: no clsact qdisc on lo: the tc keys are not held" >&2
	# SO_TIMESTAMP is 29 on x86; Python's socket module does not name it.
	f=$(mktemp)
	python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMP", 29), 1)
print("held", flush=True)
time.sleep(1e9)' </dev/null >"$f" 2>&1 &
	_net_keys_pid=$!
	for ((t = 0; t < 300; t++)); do
		grep -q held "$f" && break
		kill -0 "$_net_keys_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q held "$f" ||
		echo "guest-keys: the receive timestamp key is not held: $(cat "$f")" >&2
	rm -f "$f"
	mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	_keys_tracing=/sys/kernel/tracing/instances/grim-keys
	if mkdir -p "$_keys_tracing" 2>/dev/null &&
	   echo 1 >"$_keys_tracing/events/module/module_load/enable" 2>/dev/null; then
		:
	else
		echo "guest-keys: no tracing instance: the scheduler's tracepoints are not held" >&2
		rmdir "$_keys_tracing" 2>/dev/null
		_keys_tracing=
	fi
}
