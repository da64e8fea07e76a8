#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the kernel's checkpatch.pl --strict on the GRIM sources.
# checkpatch.pl and its data files come from the newest linux-source tarball,
# extracted once into .cache/linux-source-<series>.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${LINUX_SOURCE_TARBALL:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)}
cache=$top/.cache/$(basename "${tarball:-linux-source}" .tar.xz)

if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	[ -r "$tarball" ] || { echo "checkpatch: no linux-source tarball (run make deps)" >&2; exit 1; }
	echo "checkpatch: extracting checkpatch.pl from $tarball"
	tmp=$(mktemp -d "$top/.cache.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	base=$(basename "$tarball" .tar.xz)
	tar -C "$tmp" -xJf "$tarball" --wildcards \
		"$base/scripts/checkpatch.pl" \
		"$base/scripts/spelling.txt" \
		"$base/scripts/const_structs.checkpatch"
	mkdir -p "$cache"
	rm -rf "$cache/scripts"
	mv "$tmp/$base/scripts" "$cache/scripts"
fi

cd "$top"
files=$( { ls drivers/net/grim/*.[ch] net/grim/*.[ch] 2>/dev/null || true
	   [ -d include ] && find include -name '*.h' || true; } | sort)
if [ -z "$files" ]; then
	echo "checkpatch: no source files yet"
	exit 0
fi
# shellcheck disable=SC2086
perl "$cache/scripts/checkpatch.pl" --strict --no-tree --show-types \
	-f $files
# The compatibility header exists to test kernel versions; everything
# else of checkpatch applies to it as to the rest.
# shellcheck disable=SC2046
perl "$cache/scripts/checkpatch.pl" --strict --no-tree --show-types \
	--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f $(ls compat/*.h)
