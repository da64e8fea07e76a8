#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build grim.ko for one kernel in a tree of its own, so that modules for
# several kernels can sit side by side:
#
#   scripts/build-module.sh RELEASE [kbuild args, e.g. W=1 C=1]
#
# The module sources are mirrored into .build/RELEASE/ (only changed files
# are copied, so kbuild rebuilds only what changed) and built there
# against /lib/modules/RELEASE/build; the module is .build/RELEASE/grim.ko.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kver=$1
shift
kdir=${KDIR:-/lib/modules/$kver/build}
[ -d "$kdir" ] || { echo "build-module: no kernel build dir $kdir" >&2; exit 1; }
b=$top/.build/$kver
mkdir -p "$b"

# What the module is made of; the DKMS package ships the same list.
src=(Kbuild Kconfig VERSION compat drivers/net/grim net/grim include)
cd "$top"
for f in "${src[@]}"; do
	[ -e "$f" ] || continue
	if [ -d "$f" ]; then
		find "$f" -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \)
	else
		echo "$f"
	fi
done | while read -r f; do
	if [ ! -e "$b/$f" ] || ! cmp -s "$f" "$b/$f"; then
		mkdir -p "$b/$(dirname "$f")"
		cp -p "$f" "$b/$f"
	fi
done
# Files removed from the tree go from the mirror too.
(cd "$b" && find compat drivers net include -type f -name '*.[ch]' 2>/dev/null) |
	while read -r f; do [ -e "$top/$f" ] || rm -f "$b/$f"; done

make -C "$kdir" M="$b" "$@" modules
