#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: for every kernel GRIM supports (scripts/kernels.sh; K=6.1 or
# K=6.12 for one), build grim.ko with W=1 C=1 and fail on any warning,
# then boot that kernel in a VM and run the selftests with that module.
# checkpatch --strict runs once.  Each kernel's results are printed as
# they come; the last line counts all of them: "N passed, N failed".
#
#   scripts/check.sh [TEST.sh...]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p .vm-out

pass=0 fail=0
result() {	# ok|not-ok NAME [DETAIL]
	if [ "$1" = ok ]; then
		echo "ok $2${3:+  ($3)}"
		pass=$((pass + 1))
	else
		echo "not ok $2${3:+  ($3)}"
		fail=$((fail + 1))
	fi
}

kernels=$(scripts/kernels.sh) || { echo "check: no kernel to test on"; echo "0 passed, 1 failed"; exit 1; }
echo "check: kernels: $(echo $kernels)"

if [ $# -eq 0 ]; then
	if scripts/test-splats.sh; then
		result ok splats-filter "what in a kernel log fails a run"
	else
		result not-ok splats-filter "scripts/test-splats.sh"
	fi
	log=.vm-out/checkpatch.log
	if scripts/checkpatch.sh >"$log" 2>&1 && grep -q '^total:' "$log" &&
	   ! grep '^total:' "$log" | grep -qv 'total: 0 errors, 0 warnings, 0 checks'; then
		result ok checkpatch "--strict, $(grep -c '^total:' "$log") files"
	else
		grep -E '^(ERROR|WARNING|CHECK):' -A3 "$log" | head -n 40 | sed 's/^/    | /'
		result not-ok checkpatch "see $log"
	fi
fi

walls=()
for kv in $kernels; do
	echo
	echo "=== kernel $kv"
	blog=.vm-out/build-$kv.log
	if scripts/build-module.sh "$kv" W=1 C=1 >"$blog" 2>&1; then
		if grep -E 'warning:|error:' "$blog" >/dev/null; then
			grep -E 'warning:|error:' "$blog" | head -n 20 | sed 's/^/    | /'
			result not-ok "build $kv" "W=1 C=1 warnings, see $blog"
		else
			result ok "build $kv" "W=1 C=1, no warnings"
		fi
	else
		grep -E 'warning:|error:' "$blog" | head -n 20 | sed 's/^/    | /'
		result not-ok "build $kv" "failed, see $blog"
		continue
	fi
	vlog=.vm-out/vm-$kv.log
	start=$(date +%s)
	GRIM_KO=$top/.build/$kv/grim.ko GRIM_VM_OUT=$top/.vm-out/$kv KVER=$kv \
		scripts/vm-run.sh "$@" 2>&1 | tee "$vlog" |
		sed -u "s/^\([0-9]\+ passed, [0-9]\+ failed\)$/kernel $kv: \1/"
	walls+=("$kv: $(($(date +%s) - start))s")
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$vlog" | tail -n 1)
	if [ -z "$line" ]; then
		result not-ok "selftests $kv" "no result line, see $vlog"
		continue
	fi
	p=${line%% passed*}
	f=${line#*passed, }; f=${f%% failed*}
	pass=$((pass + p)); fail=$((fail + f))
done

echo
echo "check: wall time per kernel: ${walls[*]:-none}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
