#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernels GRIM is built and tested on: one release per supported
# series, the newest installed of each, oldest series first.  With K set
# (6.1 or 6.12), only that series; with KVER or KDIR, only that kernel.
set -u
SERIES="6.1 6.12"
here=$(dirname "$0")

if [ -n "${KDIR:-}" ] || [ -n "${KVER:-}" ]; then
	"$here/kdir.sh" --version
	exit
fi
found=0
for s in ${K:-$SERIES}; do
	v=$(K=$s "$here/kdir.sh" --version 2>/dev/null) || {
		echo "kernels: no $s kernel with headers installed (make deps)" >&2
		continue
	}
	echo "$v"
	found=$((found + 1))
done
[ $found -gt 0 ]
