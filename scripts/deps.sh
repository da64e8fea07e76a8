#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing GRIM needs, on Debian 12 or 13.
#
# Kernels: GRIM is tested on Debian 12's 6.1 and Debian 13's 6.12.  On
# Debian 12 the 6.12 kernel and its headers come from bookworm-backports
# (added to apt's sources if missing, and said so); on Debian 13 the
# native 6.12 is used.  Idempotent: when everything is present it only
# checks and returns, without touching the network.
#
#   scripts/deps.sh            everything for build, check, demo and bench
#   K=6.1 scripts/deps.sh      ... with only that kernel series
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: not root and no sudo" >&2; exit 1; }
	SUDO="sudo -E"
fi

. /etc/os-release
case "${VERSION_CODENAME:-}" in
bookworm) series_all="6.1 6.12" ;;
*) series_all="6.12" ;;	# trixie and later: the distribution's own kernel
esac
series=${K:-$series_all}

PKGS="qemu-system-x86 sparse ethtool sockperf libmnl-dev libmnl0 pkg-config
      busybox-static kmod iproute2 gcc make python3 xz-utils iputils-ping socat
      iperf3 redis-server redis-tools python3-docutils libseccomp-dev
      libcap-ng-dev"
# virtiofsd (the Rust one, from crates.io): vng then shares the host's
# root with the guest over virtio-fs, with the guest's page cache, instead
# of 9p without one.  Under TCG a program starts in half the time, and
# the selftests start thousands.  Without it vng falls back to 9p.
VIRTIOFSD_VERSION=1.14.0

installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

updated=
apt_update() {
	[ -z "$updated" ] || return 0
	$SUDO apt-get update -q
	updated=1
}
apt_install() {
	[ $# -gt 0 ] || return 0
	echo "deps: installing $*"
	apt_update
	$SUDO apt-get install -y -q --no-install-recommends "$@"
}

# A series' kernel is there when an image and its build dir are.
have_series() {
	local d v
	for d in /lib/modules/*/build; do
		[ -d "$d" ] || continue
		v=${d#/lib/modules/}; v=${v%/build}
		case "$v" in "$1".[0-9]*|"$1"-*|"$1"+*) ;; *) continue ;; esac
		[ -e "/boot/vmlinuz-$v" ] && return 0
	done
	return 1
}

# The versioned image/headers package that a meta package depends on in
# the named suite (bookworm's 6.1, bookworm-backports' 6.12).
versioned() {	# META SUITE
	local v
	v=$(apt-cache madison "$1" | awk -F' [|] ' -v s=" $2/" 'index($3, s) { gsub(/ /, "", $2); print $2; exit }')
	[ -n "$v" ] || return 1
	apt-cache show "$1=$v" | sed -n 's/^Depends: //p' | head -n 1 |
		tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep '^linux-' | head -n 1
}

backports_source() {
	grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	echo "deps: adding bookworm-backports to apt's sources" \
	     "(/etc/apt/sources.list.d/grim-bookworm-backports.sources) for the 6.12 kernel"
	$SUDO tee /etc/apt/sources.list.d/grim-bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	updated=
}

missing=()
for p in $PKGS; do
	installed "$p" || missing+=("$p")
done
# checkpatch.pl comes from the newest kernel source GRIM supports.
ls /usr/src/linux-source-6.12.tar.xz >/dev/null 2>&1 || missing+=(linux-source-6.12)
# virtme-ng comes from PyPI; pip is only needed if vng is missing.
export PATH="$PATH:$HOME/.local/bin:/usr/local/bin"
if ! command -v vng >/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
	installed python3-pip || missing+=(python3-pip)
fi

kpkgs=()
for s in $series; do
	have_series "$s" && continue
	case "$s/${VERSION_CODENAME:-}" in
	6.12/bookworm)
		backports_source
		apt_update
		for m in linux-image-amd64 linux-headers-amd64; do
			kpkgs+=("$(versioned $m bookworm-backports)") ||
				{ echo "deps: no $m in bookworm-backports" >&2; exit 1; }
		done ;;
	6.1/bookworm)
		apt_update
		for m in linux-image-amd64 linux-headers-amd64; do
			# bookworm-security carries the newest 6.1 when there is one.
			p=$(versioned $m bookworm-security || versioned $m bookworm) ||
				{ echo "deps: no $m in bookworm" >&2; exit 1; }
			kpkgs+=("$p")
		done ;;
	*)
		kpkgs+=(linux-image-amd64 linux-headers-amd64) ;;
	esac
done
# The versioned kernel packages are installed by name (not through the
# meta package), so that 6.1 and 6.12 stay installed side by side.
if [ ${#missing[@]} -gt 0 ] || [ ${#kpkgs[@]} -gt 0 ]; then
	apt_install "${missing[@]}" "${kpkgs[@]}"
	[ ${#kpkgs[@]} -eq 0 ] || $SUDO apt-mark manual "${kpkgs[@]}" >/dev/null
fi

for s in $series; do
	have_series "$s" || { echo "deps: kernel $s is still missing" >&2; exit 1; }
done

if ! command -v vng >/dev/null; then
	echo "deps: installing virtme-ng from PyPI"
	pipargs=(install --quiet)
	[ "$(id -u)" -ne 0 ] && pipargs+=(--user)
	python3 -m pip "${pipargs[@]}" virtme-ng ||
		python3 -m pip "${pipargs[@]}" --break-system-packages virtme-ng
	command -v vng >/dev/null || { echo "deps: vng not on PATH after install" >&2; exit 1; }
fi

# virtiofsd: on PATH, where vng looks first.  Built once per machine.
vfs_root=/usr/local
[ "$(id -u)" -eq 0 ] || vfs_root=$HOME/.local
export PATH="$PATH:$HOME/.cargo/bin"
if ! "$vfs_root/bin/virtiofsd" --version 2>/dev/null | grep -qF " $VIRTIOFSD_VERSION"; then
	if command -v cargo >/dev/null; then
		echo "deps: building virtiofsd $VIRTIOFSD_VERSION from crates.io into $vfs_root/bin"
		cargo install --quiet --locked --version "$VIRTIOFSD_VERSION" \
			--root "$vfs_root" virtiofsd ||
			echo "deps: warning: virtiofsd did not build; the VMs use 9p (slower)" >&2
	else
		echo "deps: warning: no cargo to build virtiofsd; the VMs use 9p (slower)" >&2
	fi
fi

echo "deps: ok (kernels: $(K="$series" "$(dirname "$0")/kernels.sh" | tr '\n' ' ')vng $(command -v vng), virtiofsd $("$vfs_root/bin/virtiofsd" --version 2>/dev/null | awk '{ print $2 }' || echo none))"
