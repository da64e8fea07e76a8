#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host-side test of selftests/grim/splats.awk, the filter that decides
# what in a guest's kernel log fails a run: real splats must fail it
# (whole, from "cut here" to "end trace"), only those after the mark
# count, and a debug exception in kernel mode (once blamed on the
# emulator, see scripts/tcg-cpu.sh) fails like the rest.
set -u
cd "$(dirname "$0")/.."
awkf=selftests/grim/splats.awk
d=scripts/testdata
bad=0
t() {	# NAME EXPECTED_RC EXPECTED_LINES SINCE LOG...
	local name=$1 want=$2 lines=$3 since=$4 out rc
	shift 4
	out=$(awk -v since="$since" -f "$awkf" "$@" 2>/dev/null)
	rc=$?
	if [ "$rc" != "$want" ] || [ "$(printf '%s' "$out" | grep -c .)" != "$lines" ]; then
		echo "test-splats: $name: rc $rc (want $want), $(printf '%s' "$out" | grep -c .) lines (want $lines)"
		bad=1
	fi
}
t "warning in grim fails, whole"       1 7 "" "$d/dmesg-grim-warn.txt"
t "only after the mark"                1 1 55 "$d/dmesg-grim-warn.txt"
t "nothing after the mark"             0 0 61 "$d/dmesg-grim-warn.txt"
t "a kernel-mode #DB fails, whole"     1 8 "" "$d/dmesg-emulator-db.txt"
t "both fail"                          1 15 "" "$d/dmesg-emulator-db.txt" "$d/dmesg-grim-warn.txt"
t "a debug kernel's boot banners"      0 0 "" "$d/dmesg-debug-boot.txt"
t "lockdep, KASAN, UBSAN, kmemleak"    1 9 "" "$d/dmesg-debug-splats.txt"
exit $bad
