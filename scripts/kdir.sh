#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the kbuild directory of the kernel to build for; with --version,
# print only its release (uname -r form).  In order of precedence:
#   KDIR=<dir>     that kernel build tree
#   KVER=<release> /lib/modules/<release>/build
#   K=<series>     the newest installed kernel of that series (6.1, 6.12)
#   (none)         the newest installed kernel that has a build dir,
#                  preferring kernels with a bootable /boot/vmlinuz-<release>
# scripts/kernels.sh lists the kernels that `make check` runs on.
set -u

# newest [boot] [SERIES]
newest() {
	local d v
	for d in /lib/modules/*/build; do
		[ -d "$d" ] || continue
		v=${d#/lib/modules/}
		v=${v%/build}
		[ "${1:-}" = boot ] && [ ! -e "/boot/vmlinuz-$v" ] && continue
		if [ -n "${2:-}" ]; then
			case "$v" in "$2".[0-9]*|"$2"-*|"$2"+*) ;; *) continue ;; esac
		fi
		echo "$v"
	done | sort -V | tail -n 1
}

if [ -n "${KDIR:-}" ]; then
	kdir=$KDIR
	case "$kdir" in
	/lib/modules/*/build|/lib/modules/*/build/)
		ver=${kdir#/lib/modules/}; ver=${ver%/}; ver=${ver%/build} ;;
	*)
		ver=$(make -s -C "$kdir" kernelrelease 2>/dev/null) ;;
	esac
elif [ -n "${KVER:-}" ]; then
	ver=$KVER
	kdir=/lib/modules/$ver/build
	[ -d "$kdir" ] || { echo "kdir: no $kdir (KVER=$KVER)" >&2; exit 1; }
else
	ver=$(newest boot "${K:-}")
	[ -n "$ver" ] || ver=$(newest "" "${K:-}")
	[ -n "$ver" ] || { [ -n "${K:-}" ] && echo "kdir: no kernel $K installed (make deps)" >&2; exit 1; }
	kdir=/lib/modules/$ver/build
fi

if [ "${1:-}" = --version ]; then
	echo "$ver"
else
	echo "$kdir"
fi
