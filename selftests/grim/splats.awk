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
# One kind of report is not a splat of the kernel under test: a debug
# exception taken in kernel mode with DR_STEP set, which the kernel
# warns about in exc_debug_kernel().  The kernel uses no single-step
# outside kprobes and kgdb (the tests use neither; GRIM sets no debug
# registers and no trap flag), and the warning's own comment names an
# emulator leaking #DB into the guest as its known cause.  Under
# QEMU's TCG it comes rarely, at random, on any workload.  Such a
# block is printed to standard error as a note, and does not fail.

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
	if (emul) {
		printf "note: an emulator debug trap, not a kernel fault:\n%s", out > "/dev/stderr"
	} else {
		printf "%s", out
		found = 1
	}
	nblk = 0
	emul = 0
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
			if ($0 ~ /WARNING:.*exc_debug_kernel/)
				emul = 1
			if ($0 ~ /---\[ end trace/ || nblk >= 80)
				flush()
			next
		}
	}
	if ($0 ~ re) {
		inblk = 1
		nblk = 1
		blk[1] = $0
		emul = ($0 ~ /WARNING:.*exc_debug_kernel/)
	}
}

END {
	flush()
	exit found
}
