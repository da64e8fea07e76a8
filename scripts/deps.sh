#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing GRIM needs on Debian 12.
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: not root and no sudo" >&2; exit 1; }
	SUDO="sudo -E"
fi

PKGS="qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
      sparse ethtool sockperf libmnl-dev busybox-static kmod iproute2
      gcc make python3"

installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

updated=
apt_install() {
	[ $# -gt 0 ] || return 0
	echo "deps: installing $*"
	if [ -z "$updated" ]; then
		$SUDO apt-get update -q
		updated=1
	fi
	$SUDO apt-get install -y -q --no-install-recommends "$@"
}

missing=()
for p in $PKGS; do
	installed "$p" || missing+=("$p")
done
# virtme-ng comes from PyPI; pip is only needed if vng is missing.
export PATH="$PATH:$HOME/.local/bin:/usr/local/bin"
if ! command -v vng >/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
	installed python3-pip || missing+=(python3-pip)
fi
apt_install "${missing[@]}"

# Headers must match a bootable installed kernel: pick the newest
# /boot/vmlinuz-<ver> and make sure /lib/modules/<ver>/build exists.
newest_image=$(cd /boot && ls vmlinuz-* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n 1)
if [ -n "$newest_image" ] && [ ! -d "/lib/modules/$newest_image/build" ]; then
	apt_install "linux-headers-$newest_image"
fi
kver=$("$(dirname "$0")/kdir.sh" --version) || { echo "deps: no kernel build dir found" >&2; exit 1; }
if [ ! -r "/boot/vmlinuz-$kver" ]; then
	echo "deps: /boot/vmlinuz-$kver is missing or unreadable" >&2
	exit 1
fi

if ! command -v vng >/dev/null; then
	echo "deps: installing virtme-ng from PyPI"
	pipargs=(install --quiet)
	[ "$(id -u)" -ne 0 ] && pipargs+=(--user)
	python3 -m pip "${pipargs[@]}" virtme-ng ||
		python3 -m pip "${pipargs[@]}" --break-system-packages virtme-ng
	command -v vng >/dev/null || { echo "deps: vng not on PATH after install" >&2; exit 1; }
fi

echo "deps: ok (kernel $kver, $(command -v vng))"
