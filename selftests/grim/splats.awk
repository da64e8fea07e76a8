# SPDX-License-Identifier: GPL-2.0
#
# splats.awk: find kernel splats in a kernel log (dmesg output).
#
#   awk -v since=SECONDS -f splats.awk LOG
#
# Prints every splat to standard output, whole: from its "cut here" or
# first line to its "end trace" (at most 80 lines), so a failure shows
# its call trace.  Exits 1 when there was one, 0 when there was none.
# Only lines stamped after "since" (seconds since boot, as dmesg
# prints them) count, so a test sees its own splats and not those of
# the tests before it.
#
# A debug exception in kernel mode with DR_STEP set (the WARNING in
# exc_debug_kernel) is a splat like any other.  QEMU 7.2's TCG used to
# cause it (scripts/tcg-cpu.sh); the VMs now run without what triggered
# it, so one that comes is worth a look.

function stamp(line,    s) {
	if (match(line, /^\[ *[0-9]+\.[0-9]+\]/)) {
		s = substr(line, RSTART + 1, RLENGTH - 2)
		gsub(/ /, "", s)
		return s + 0
	}
	return -1
}

function flush() {
	if (nblk == 0)
		return
	out = ""
	for (i = 1; i <= nblk; i++)
		out = out blk[i] "\n"
	printf "%s", out
	found = 1
	nblk = 0
	inblk = 0
}

BEGIN {
	if (since == "")
		since = -1
	# Not a bare "lockdep": a debug kernel's boot banner says "RCU
	# lockdep checking is enabled".  Lockdep's reports are WARNINGs.
	re = "Oops|BUG:|WARNING:|UBSAN:|refcount_t|suspected memory leak|possible circular locking|INFO: task .* blocked|general protection fault|Call Trace|cut here"
}

{
	t = stamp($0)
	if (t >= 0 && t <= since + 0)
		next
	if (inblk) {
		# A new "cut here" starts another splat.
		if ($0 ~ /cut here/) {
			flush()
		} else {
			blk[++nblk] = $0
			if ($0 ~ /---\[ end trace/ || nblk >= 80)
				flush()
			next
		}
	}
	if ($0 ~ re) {
		inblk = 1
		nblk = 1
		blk[1] = $0
	}
}

END {
	flush()
	exit found
}
