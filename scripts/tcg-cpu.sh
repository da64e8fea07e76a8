#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by scripts/vm-run.sh and tools/grim/bench/vm.sh: tcg_cpu_opts
# prints the vng option that the CPU of a TCG guest needs, if any.
#
# QEMU before 8.0 (Debian 12's 7.2) gets RFLAGS wrong after CMPXCHG16B
# under TCG: right after a POPF or an IRET, whatever the last ADD or SUB
# left in QEMU's flags record (an operand, often a pointer) becomes the
# flags, trap and direction flags included.  A guest kernel runs
# CMPXCHG16B in SLUB's fast path all the time; the next interrupt saves
# those flags and IRET loads them: a spurious single step (WARNING in
# exc_debug_kernel, DR_STEP), string copies that run backwards, a
# double fault.  scripts/cpu-flags-probe.c shows it from user space.
# Without CX16 the guest never runs the instruction (SLUB takes its
# locked path).  vng passes "-cpu max"; QEMU takes the last -cpu.
tcg_cpu_opts() {
	local v
	v=$(qemu-system-x86_64 --version 2>/dev/null | grep -oE 'version [0-9]+' | grep -oE '[0-9]+$')
	if [ -n "$v" ] && [ "$v" -lt 8 ]; then
		echo "--qemu-opts=-cpu max,-cx16"
	fi
}
