#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: build grim-perf, make sure the plotting tools are there,
# run tools/grim/bench/guest.sh in the VM (tools/grim/bench/vm.sh),
# then turn the CSV into the ratio table and the plots.
#
#   tools/grim/bench/run.sh            full run (3 repetitions, loss 0/1/5 %)
#   BENCH_QUICK=1 tools/grim/bench/run.sh   smoke run (~3 minutes)
#   BENCH_REPS=N BENCH_LOSS="0 5"       override repetitions / loss levels
#   BENCH_RUNS=N                        runs of the interleaved cases
#   BENCH_ONLY=interleaved              only those (latency and streams, ~4 minutes)
#   BENCH_ONLY=auth                     only the authenticated cases (~3 minutes)
#   BENCH_ONLY=scale                    only the cases at scale (~8 minutes)
#   BENCH_ONLY=jumbo                    only GRIM and TCP over jumbo frames
#   BENCH_ONLY=ip                       only IP over grim0 against IP over the veth
#                                       (sockperf, iperf3; BENCH_RUNS rounds per loss)
#   BENCH_ONLY=mcast                    only the groups: one message to N members
#                                       (GRIM group, N GRIM unicasts, TIPC group)
#   BENCH_MCAST=N,N...                  their group sizes (default 2,4,8,16,32,64;
#                                       BENCH_QUICK=1: 2,4,8)
#   BENCH_JUMBO=MTU                     their lower MTU (default 9000)
#   BENCH_IP_DATACRC=on|offload|off     grim0's datacrc in the IP cases (default on)
#   BENCH_IP_OFFLOAD=1                  grim0's sg and checksum offload on (default off)
#   BENCH_IP_LOWER_MTU=MTU              eth0's MTU in the IP cases, under grim0 and
#                                       the bare veth's IP alike (default 1500)
#   BENCH_CPUS=N                        guest vCPUs (default 1)
#   BENCH_TIPC=local                    let TIPC skip the veth (see guest.sh)
#   BENCH_REPORT_ONLY=DIR               only redo the report of a run dir
#   BENCH_PROFILE=FAMS:SIZE[:SECS[:LOSS[:TEST]]]  perf profiles of one case
#                                       instead (e.g. grim,tipc:64000:5:0;
#                                       ipgrim,ipveth:64:5:0:pingpong: UDP over
#                                       grim0 and over the bare veth;
#                                       tcpgrim,tcpveth:0:5: iperf3's TCP)
#
# Results: tools/grim/bench/results/<date>/ (bench.csv, ratios.md, *.png),
# with results/latest pointing at the newest.
set -uo pipefail

bench=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$bench/../../.." && pwd)
if [ -n "${BENCH_REPORT_ONLY:-}" ]; then
	BENCH_REPORT_ONLY=$(cd "$BENCH_REPORT_ONLY" && pwd) || exit 1
fi
cd "$top"
results=$bench/results

if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	make -s -C "$bench" || exit 1
	make -s -C "$top/tools/grim" || exit 1	# the ip plugin, for datacrc
fi
"$bench/deps.sh" || exit 1
py=$top/.cache/bench-venv/bin/python3

if [ -n "${BENCH_REPORT_ONLY:-}" ]; then
	"$py" "$bench/report.py" "$BENCH_REPORT_ONLY"
	exit
fi

run=$results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
ln -sfn "$(basename "$run")" "$results/latest"
args=("quick=${BENCH_QUICK:-0}")
[ -n "${BENCH_REPS:-}" ] && args+=("reps=$BENCH_REPS")
[ -n "${BENCH_LOSS:-}" ] && args+=("loss=${BENCH_LOSS// /,}")
[ -n "${BENCH_TIPC:-}" ] && args+=("tipc=$BENCH_TIPC")
[ -n "${BENCH_RUNS:-}" ] && args+=("runs=$BENCH_RUNS")
[ -n "${BENCH_ONLY:-}" ] && args+=("only=$BENCH_ONLY")
[ -n "${BENCH_MCAST:-}" ] && args+=("mcast=$BENCH_MCAST")
[ -n "${BENCH_JUMBO:-}" ] && args+=("jumbo=$BENCH_JUMBO")
[ -n "${BENCH_IP_DATACRC:-}" ] && args+=("ipcrc=$BENCH_IP_DATACRC")
[ -n "${BENCH_IP_OFFLOAD:-}" ] && args+=("ipoff=$BENCH_IP_OFFLOAD")
[ -n "${BENCH_IP_LOWER_MTU:-}" ] && args+=("iplower=$BENCH_IP_LOWER_MTU")
# One vCPU by default: under TCG on a shared host, wakeups across vCPUs
# land on the guest's timer tick whenever the host is busy, and the
# medians of every family then measure the host, not the protocol.
if [ -n "${BENCH_PROFILE:-}" ]; then
	command -v perf >/dev/null || apt-get install -y -q linux-perf || exit 1
	GRIM_VM_CPUS=${BENCH_CPUS:-1} "$bench/vm.sh" "$run" "profile=$BENCH_PROFILE"
	vm_rc=$?
	head -n 25 "$run"/flat-*.txt
	echo "bench: profiles in ${run#"$top"/}/ (flat-*.txt, profile-*.txt with callers)"
	exit $vm_rc
fi
GRIM_VM_CPUS=${BENCH_CPUS:-1} "$bench/vm.sh" "$run" "${args[@]}"
vm_rc=$?
if [ ! -s "$run/bench.csv" ]; then
	echo "bench: no results (see $run/script.log)" >&2
	exit 1
fi
"$py" "$bench/report.py" "$run" || exit 1
echo
echo "bench: results in ${run#"$top"/}/ (ratios.md, bench.csv, *.png)"
[ "$vm_rc" = 0 ] || { echo "bench: the VM run reported a problem (exit $vm_rc)" >&2; exit 1; }
