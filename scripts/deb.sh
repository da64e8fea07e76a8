#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the Debian packages (make deb): grim-dkms, grim-tools and grim-dev,
# with the source package, from a clean copy of the tree, then lintian.
#
#   scripts/deb.sh
#
# The tree's files (tracked and new, not ignored ones; so uncommitted
# changes are in) are copied to .cache/deb/grim-<version>/ and built
# there with dpkg-buildpackage, leaving the tree itself untouched.  The
# results go to GRIM_DEB_OUT (default .build/deb/): the .debs, .dsc,
# source tarball, .buildinfo and .changes.  Exits non-zero when the build
# fails or lintian reports an error.  Installs its build dependencies
# when they are missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${GRIM_DEB_OUT:-$top/.build/deb}
work=$top/.cache/deb

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deb: not root and no sudo" >&2; exit 1; }
	SUDO="sudo -E"
fi

installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
missing=()
# build-essential: dpkg-buildpackage requires it besides Build-Depends.
for p in build-essential dpkg-dev debhelper dh-dkms dkms fakeroot lintian libmnl-dev pkg-config; do
	installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deb: installing ${missing[*]}"
	$SUDO apt-get update -q
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# One release number: VERSION must be the package's version too.
version=$(cat VERSION)
changelog=$(dpkg-parsechangelog -l debian/changelog -S Version)
if [ "$version" != "$changelog" ]; then
	echo "deb: VERSION says $version but debian/changelog is at $changelog" >&2
	exit 1
fi

# The tree as git sees it (without build products), or, outside git, all
# of it but the build and run directories.
src=$work/grim-$version
rm -rf "$work"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -cf - --null --no-recursion -T - | tar -C "$src" -xf -
else
	tar -cf - --exclude=./.git --exclude=./.build --exclude=./.cache \
		--exclude='./.vm-out*' . | tar -C "$src" -xf -
fi

echo "deb: building grim $version in ${work#"$top"/}"
log=$work/build.log
if ! (cd "$src" && dpkg-buildpackage -us -uc -sa) >"$log" 2>&1; then
	tail -n 60 "$log"
	echo "deb: dpkg-buildpackage failed (full log: ${log#"$top"/})" >&2
	exit 1
fi
grep -E '^dpkg-(deb|source): ' "$log" || true

rm -rf "$out"
mkdir -p "$out"
arch=$(dpkg --print-architecture)
changes=grim_${version}_$arch.changes
for f in "$work"/*.deb "$work"/*.ddeb "$work"/*.dsc "$work"/*.tar.* \
	 "$work"/*.buildinfo "$work/$changes"; do
	[ -e "$f" ] && mv "$f" "$out/"
done
rm -rf "$src"

# lintian on everything, through the .changes (the .dsc and every .deb).
# Errors fail the build; warnings are shown.
echo "deb: lintian ${out#"$top"/}/$changes"
lintian_args=(--fail-on error --display-level '>=warning')
if [ "$(id -u)" -eq 0 ] && id -u nobody >/dev/null 2>&1 &&
   runuser -u nobody -- test -r "$out/$changes"; then
	# lintian advises against running as root; nothing here needs it.
	runuser -u nobody -- env HOME=/tmp lintian "${lintian_args[@]}" "$out/$changes"
else
	lintian "${lintian_args[@]}" "$out/$changes"
fi
echo "deb: lintian: no errors"
echo "deb: packages in ${out#"$top"/}:"
(cd "$out" && ls -1 ./*.deb) | sed 's|^\./|    |'
