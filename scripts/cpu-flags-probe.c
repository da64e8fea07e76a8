// SPDX-License-Identifier: GPL-2.0
/*
 * cpu-flags-probe: does this (emulated) CPU keep RFLAGS right across
 * CMPXCHG16B?  Run in the test VM by scripts/guest-run-tests.sh.
 *
 * QEMU 7.2's TCG (Debian 12's qemu-system-x86) computes the flags of
 * CMPXCHG8B/16B from a stale record of which instruction last set them:
 * right after a POPF, the value an earlier ADD left behind (an operand,
 * often a pointer) becomes RFLAGS.  The next interrupt saves it and IRET
 * loads it, trap flag and direction flag included.  In a guest kernel,
 * whose SLUB fast path uses CMPXCHG16B, that is a spurious single step
 * (the exc_debug_kernel DR_STEP warning), string copies run backwards,
 * and a double fault.  QEMU 8.0 computes these flags inline; on 7.2,
 * scripts/vm-run.sh hides CX16 from the emulated CPU.
 *
 * The probe ends a block with POPF, then runs ADD with 0x500 (TF | DF)
 * as its source operand, then CMPXCHG16B, and reads RFLAGS back.
 * Prints one line; exit 0: flags right or no CX16 to test, 1: corrupt.
 * Built with -mno-red-zone: the PUSHes below %rsp must not land on locals.
 */
#include <cpuid.h>
#include <stdalign.h>
#include <stdio.h>

int main(void)
{
	alignas(16) unsigned long mem[2] = { 0, 0 };
	unsigned int a, b, c, d;
	unsigned long flags, junk = 0x500, acc = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B)) {
		printf("no CMPXCHG16B: nothing to probe\n");
		return 0;
	}
	/* MOV leaves the flags alone: ADD is the last to set them. */
	asm volatile("movl $0, %%eax\n\t"
		     "movl $0, %%edx\n\t"
		     "movl $0, %%ebx\n\t"
		     "movl $0, %%ecx\n\t"
		     "pushq $0x202\n\t"
		     "popfq\n\t"
		     "addq %[junk], %[acc]\n\t"
		     "cmpxchg16b %[mem]\n\t"
		     "pushfq\n\t"
		     "popq %[flags]\n\t"
		     "cld\n\t"
		     : [flags] "=r" (flags), [acc] "+r" (acc), [mem] "+m" (mem)
		     : [junk] "r" (junk)
		     : "rax", "rbx", "rcx", "rdx", "cc", "memory");
	if (flags & 0x500) {
		printf("RFLAGS after CMPXCHG16B: %#lx: trap or direction flag set\n",
		       flags);
		return 1;
	}
	printf("RFLAGS after CMPXCHG16B: %#lx: right\n", flags);
	return 0;
}
