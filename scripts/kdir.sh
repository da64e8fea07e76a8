#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the kbuild directory of the newest installed kernel that has one
# (/lib/modules/<version>/build), preferring kernels with a bootable
# /boot/vmlinuz-<version>.  With --version, print only <version>.
# With KDIR set in the environment, use that.
set -u

newest() {
	local d v
	for d in /lib/modules/*/build; do
		[ -d "$d" ] || continue
		v=${d#/lib/modules/}
		v=${v%/build}
		[ "${1:-}" = boot ] && [ ! -e "/boot/vmlinuz-$v" ] && continue
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
else
	ver=$(newest boot)
	[ -n "$ver" ] || ver=$(newest)
	[ -n "$ver" ] || exit 1
	kdir=/lib/modules/$ver/build
fi

if [ "${1:-}" = --version ]; then
	echo "$ver"
else
	echo "$kdir"
fi
