#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build, install, use and purge the Debian packages (make check-packages).
# This installs packages on this machine: run it where that is fine.
#
#   scripts/check-packages.sh
#
# 1. scripts/deb.sh builds grim-dkms, grim-tools and grim-dev (lintian
#    clean) and apt installs them; DKMS must then have built and installed
#    grim.ko for every kernel scripts/kernels.sh lists, with the release
#    from VERSION, and must build it again when a kernel is installed.
# 2. The installed grim tool prints that release; a program builds
#    against the installed <linux/grim.h>.
# 3. For each kernel, a VM (scripts/vm-run.sh, no module given to it)
#    runs this script with --guest: modprobe must find the DKMS module,
#    and the installed ip plugin and grim tool set up a link between two
#    network namespaces that carries AF_GRIM traffic both ways.
# 4. apt purges the packages: DKMS must take the modules away and no
#    file of the packages may be left.
#
# One "ok NAME" or "not ok NAME" line per check, then "N passed, N
# failed"; the exit status is non-zero if anything failed.  Leftovers of
# an earlier run are purged first.  Logs: .cache/check-packages/.
set -uo pipefail
export LC_ALL=C.UTF-8

pkgs=(grim-dkms grim-tools grim-dev)
pass=0 fail=0

# ok NAME / not_ok NAME [WHY]
ok() { echo "ok $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok $1${2:+  # $2}"; fail=$((fail + 1)); }
# check NAME CMD...: ok if CMD succeeds; otherwise not ok and the
# command's last lines of output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
		return 0
	fi
	not_ok "$name"
	printf '%s\n' "$out" | tail -n 30 | sed 's/^/    | /'
	return 1
}
# expect GOT WANT: fail with a message unless equal.
expect() {
	[ "$1" = "$2" ] && return 0
	echo "got '$1', expected '$2'"
	return 1
}
summary() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

# ---- in the VM ------------------------------------------------------------------

# --guest VERSION RDM: runs inside the VM (from scripts/vm-run.sh --script).
# The host's file system is there read-only, with the packages installed.
guest() {
	local version=$1 rdm=$2 kver a b out i path ipdir
	kver=$(uname -r)
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	unset IP_LIB_DIR
	a=gpkg-a b=gpkg-b
	ipdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
			 gcc -print-multiarch)/ip
	# shellcheck disable=SC2064 # the names are fixed now
	trap "ip netns del $a 2>/dev/null; ip netns del $b 2>/dev/null" EXIT

	# The VM runner loads nothing (GRIM_KO=none): the module under test
	# is the packaged one, loaded by name.
	check "$kver: no grim module loaded before modprobe" \
		bash -c '[ ! -d /sys/module/grim ]'
	check "$kver: modprobe grim" modprobe grim
	path=$(modinfo -n grim 2>&1)
	check "$kver: modprobe resolves to the DKMS module" \
		bash -c '[[ $1 =~ ^/lib/modules/"$2"/updates/dkms/grim\.ko(\.[a-z]+)?$ ]] || { echo "modinfo -n grim: $1"; exit 1; }' \
		_ "$path" "$kver"
	check "$kver: loaded module is $version" \
		bash -c 'expect() { [ "$1" = "$2" ] || { echo "got $1, expected $2"; exit 1; }; }
			 expect "$(cat /sys/module/grim/version)" "$1"
			 expect "$(cat /sys/module/grim/srcversion)" "$(modinfo -F srcversion grim)"' \
		_ "$version"

	# Two hosts: network namespaces joined by a veth pair.
	ip netns add $a && ip netns add $b &&
		ip -n $a link set lo up && ip -n $b link set lo up &&
		ip -n $a link add veth0 type veth peer name veth0 netns $b &&
		ip -n $a link set veth0 up && ip -n $b link set veth0 up ||
		{ not_ok "$kver: namespaces and veth"; return; }

	# ip must take link_grim.so from its own plugin directory.
	out=$(LD_DEBUG=files ip -n $a link add link veth0 name grim0 type grim node 1 2>&1)
	check "$kver: ip link add ... type grim node 1 (installed plugin)" \
		bash -c 'grep -q "file=$2/link_grim.so .*dynamically loaded by ip" <<<"$1" ||
			 { grep -v "^ *[0-9]*:" <<<"$1"; echo "link_grim.so not loaded from $2"; exit 1; }
			 ip -n "$3" -d link show grim0 | grep -q "grim node 1 " ||
			 { ip -n "$3" -d link show grim0; exit 1; }' _ "$out" "$ipdir" "$a"
	check "$kver: ip link add ... type grim node 2" \
		ip -n $b link add link veth0 name grim0 type grim node 2
	ip -n $a link set grim0 up
	ip -n $b link set grim0 up

	# Peers are found by hello (1 s by default).
	for ((i = 0; i < 300; i++)); do
		ip netns exec $a /usr/sbin/grim peer list 2>/dev/null | grep -q '^grim0: node 2 up ' &&
			ip netns exec $b /usr/sbin/grim peer list 2>/dev/null | grep -q '^grim0: node 1 up ' &&
			break
		sleep 0.1
	done
	check "$kver: grim peer list shows the peer up" \
		bash -c 'for n in "$1 2" "$2 1"; do set -- $n; o=$(ip netns exec $1 /usr/sbin/grim peer list) || exit 1
			 echo "$1: $o"; grep -q "^grim0: node $2 up " <<<"$o" || exit 1; done' _ "$a" "$b"

	# AF_GRIM traffic both ways: every message checked, exactly once, in
	# order.
	traffic() {	# FROM TO TO_NODE PORT
		local rpid rc
		ip netns exec "$2" "$rdm" recv -p "$4" -n 200 -t 120 &
		rpid=$!
		for ((i = 0; i < 300; i++)); do
			ip netns exec "$2" "$rdm" bound -p "$4" && break
			sleep 0.1
		done
		ip netns exec "$1" "$rdm" send -d "$3" -p "$4" -n 200 -m 0 -M 64572 -S "$4"
		rc=$?
		wait "$rpid" || rc=1
		return $rc
	}
	check "$kver: AF_GRIM messages node 1 -> node 2" traffic $a $b 2 7001
	check "$kver: AF_GRIM messages node 2 -> node 1" traffic $b $a 1 7002

	ip netns del $a
	ip netns del $b
	# Namespaces go away asynchronously, their links with them.
	check "$kver: rmmod grim" bash -c 'for ((i = 0; i < 50; i++)); do
		rmmod grim 2>/dev/null && exit 0; sleep 0.2; done; rmmod grim'
}

if [ "${1:-}" = --guest ]; then
	shift
	guest "$@"
	summary
fi

# ---- on the host ----------------------------------------------------------------

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export DEBIAN_FRONTEND=noninteractive
[ "$(id -u)" -eq 0 ] || { echo "check-packages: installs packages: run as root" >&2; exit 1; }

version=$(cat VERSION)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=$top/.build/deb
work=$top/.cache/check-packages
read -r -a kernels <<<"$(scripts/kernels.sh | tr '\n' ' ')"
[ ${#kernels[@]} -gt 0 ] || { echo "check-packages: no kernels (make deps)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"

pkg_state() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | tr -d ' '; }
purge() {
	local p present=()
	for p in "${pkgs[@]}"; do
		[ -n "$(pkg_state "$p")" ] && [ "$(pkg_state "$p")" != un ] && present+=("$p")
	done
	[ ${#present[@]} -eq 0 ] || apt-get purge -y -q "${present[@]}"
}

# Leftovers of an earlier run.
if ! purge >"$work/purge-leftovers.log" 2>&1; then
	cat "$work/purge-leftovers.log"
	echo "check-packages: could not purge an earlier install" >&2
	exit 1
fi
for v in $(dkms status grim 2>/dev/null | sed -n 's|^grim/\([^,]*\),.*|\1|p' | sort -u); do
	echo "# removing a stale DKMS registration grim/$v"
	dkms remove -m grim -v "$v" --all >>"$work/purge-leftovers.log" 2>&1
done

echo "# kernels: ${kernels[*]}; release $version"

# ---- build ----
if ! check "deb: build and lintian" bash -c 'scripts/deb.sh >"$1" 2>&1 || { cat "$1"; exit 1; }' _ "$work/deb.log"; then
	summary
fi
sed -n 's/^deb: \(lintian: .*\)/# \1/p' "$work/deb.log"
check "deb: package versions are VERSION ($version)" bash -c '
	for p in grim-dkms_$1_all grim-tools_$1_$2 grim-dev_$1_all; do
		v=$(dpkg-deb -f "$3/$p.deb" Version) || exit 1
		[ "$v" = "$1" ] || { echo "$p.deb: version $v"; exit 1; }
	done' _ "$version" "$arch" "$debs"

# ---- install ----
if ! check "apt-get install the three packages" bash -c 'cd "$1" && apt-get install -y -q \
	./grim-dkms_$2_all.deb ./grim-tools_$2_$3.deb ./grim-dev_$2_all.deb >"$4" 2>&1 ||
	{ tail -n 40 "$4"; exit 1; }' _ "$debs" "$version" "$arch" "$work/install.log"; then
	summary
fi
dkms status grim 2>/dev/null | sed 's/^/# dkms status: /'

modcheck() {	# KVER: DKMS has grim.ko for KVER, installed, at VERSION
	local k=$1 st path v
	# (dkms 3.0 lets readelf warn on stderr about the 6.12 headers)
	st=$(dkms status -m grim -v "$version" -k "$k" 2>/dev/null)
	grep -F "grim/$version, $k, " <<<"$st" | grep -q ': installed$' ||
		{ echo "dkms status: ${st:-nothing}"; return 1; }
	path=$(modinfo -k "$k" -n grim 2>&1)
	[[ $path =~ ^/lib/modules/"$k"/updates/dkms/grim\.ko(\.[a-z]+)?$ ]] ||
		{ echo "modinfo -k $k -n grim: $path"; return 1; }
	v=$(modinfo -k "$k" -F version grim)
	expect "$v" "$version"
}
for k in "${kernels[@]}"; do
	check "dkms built and installed grim $version for $k" modcheck "$k"
done

# A kernel installed later gets the module too: take it away from the
# newest kernel and run what the kernel packages run after installing.
k=${kernels[-1]}
check "dkms builds grim again when $k is installed" bash -c '
	dkms remove -m grim -v "$1" -k "$2" >"$3" 2>&1 || { cat "$3"; exit 1; }
	if modinfo -k "$2" -n grim >/dev/null 2>&1; then echo "still there after dkms remove"; exit 1; fi
	/etc/kernel/postinst.d/dkms "$2" >>"$3" 2>&1 || { cat "$3"; exit 1; }' \
	_ "$version" "$k" "$work/autoinstall.log" && check "dkms status after the kernel hook ($k)" modcheck "$k"

# ---- tools and header ----
check "grim --version prints $version" bash -c '
	[ "$(dpkg-query -S /usr/sbin/grim)" = "grim-tools: /usr/sbin/grim" ] || exit 1
	for o in --version -V; do
		out=$(/usr/sbin/grim $o) || exit 1
		echo "grim $o: $out"
		[[ $out =~ ^grim\ "$1"[,\ ] ]] || exit 1
	done' _ "$version"
check "ip finds the installed link_grim.so" bash -c '
	f=/usr/lib/$1/ip/link_grim.so
	[ "$(dpkg-query -S "$f")" = "grim-tools: $f" ] || exit 1
	out=$(env -u IP_LIB_DIR LD_DEBUG=files ip link help grim 2>&1)
	grep -q "file=$f .*dynamically loaded by ip" <<<"$out" || { echo "$out" | tail -n 5; exit 1; }' \
	_ "$multiarch"
check "man grim and its bash completion are installed" bash -c '
	man -w grim | grep -qx /usr/share/man/man8/grim.8.gz &&
	bash -c ". /usr/share/bash-completion/completions/grim && complete -p grim"'

cat >"$work/uapi.c" <<'EOF'
#include <stdio.h>
#include <sys/socket.h>
#include <linux/grim.h>

int main(void)
{
	struct sockaddr_grim sa = { .sgrim_family = AF_GRIM, .sgrim_node = 2 };
	int fd = socket(AF_GRIM, SOCK_RDM, 0);

	printf("AF_GRIM %d, sockaddr_grim %zu bytes, node %u, socket %d\n",
	       AF_GRIM, sizeof(sa), sa.sgrim_node, fd >= 0);
	return GRIM_MAX_PAYLOAD == 64572 ? 0 : 1;
}
EOF
check "a program builds against the installed <linux/grim.h>" bash -c '
	cd "$1" && gcc -Wall -Wextra -Werror -H -o uapi uapi.c 2>hdr.txt || { cat hdr.txt; exit 1; }
	grep -qx ". /usr/include/linux/grim.h" hdr.txt || { echo "linux/grim.h not from /usr/include"; cat hdr.txt; exit 1; }
	./uapi' _ "$work"
# The selftests' traffic generator, against the installed header only.
check "grim_rdm builds against the installed header" \
	gcc -O2 -Wall -Wextra -o "$work/grim_rdm" selftests/grim/grim_rdm.c -lm

# ---- in a VM per kernel: modprobe, link, peers, traffic ----
for k in "${kernels[@]}"; do
	vout=$top/.vm-out-packages/$k
	log=$work/vm-$k.log
	# Appending: the VM's console writes to the same file, at its own
	# offset unless the file is in append mode.
	: >"$log"
	GRIM_KO=none KVER=$k GRIM_VM_OUT=$vout \
		scripts/vm-run.sh --script scripts/check-packages.sh --guest "$version" "$work/grim_rdm" \
		>>"$log" 2>&1
	n=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "vm ${line#ok }"; n=$((n + 1)) ;;
		"not ok "*) not_ok "vm ${line#not ok }"; n=$((n + 1)) ;;
		"    | "*) echo "$line" ;;
		esac
	done < <(sed 's/\r$//' "$vout/script.log" 2>/dev/null)
	# vm-run.sh's verdict also counts the guest's checks; here only
	# whether the VM ran the script to its end and the kernel log.
	if [ -f "$vout/done" ] && [ "$n" -gt 0 ]; then
		ok "vm $k: the guest ran to the end"
	else
		not_ok "vm $k: the guest ran to the end" "see ${log#"$top"/}"
		tail -n 20 "$log" | sed 's/^/    | /'
	fi
	if [ -s "$vout/dmesg.txt" ] && ! grep -q '^vm-run: kernel log problems:' "$log"; then
		ok "vm $k: kernel log clean"
	else
		not_ok "vm $k: kernel log clean" "see ${vout#"$top"/}/dmesg.txt"
		sed -n '/^vm-run: kernel log problems:/,/^[^ ]/p' "$log" | head -n 30 | sed 's/^/    | /'
	fi
done

# ---- purge ----
dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u | while read -r f; do
	[ -f "$f" ] && echo "$f"
done >"$work/files.txt"
check "apt-get purge the three packages" bash -c 'apt-get purge -y -q "${@:2}" >"$1" 2>&1 || { tail -n 40 "$1"; exit 1; }' \
	_ "$work/purge.log" "${pkgs[@]}"
check "purge: DKMS removed grim from every kernel" bash -c '
	st=$(dkms status grim 2>&1); [ -z "$st" ] || { echo "dkms status: $st"; exit 1; }
	[ ! -e /var/lib/dkms/grim ] || { echo "/var/lib/dkms/grim is left"; exit 1; }
	left=$(find /lib/modules/*/updates -name "grim.ko*" 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; exit 1; }
	for k in "$@"; do
		if modinfo -k "$k" -n grim 2>/dev/null; then echo "modinfo still finds grim for $k"; exit 1; fi
	done' _ "${kernels[@]}"
check "purge: no file of the packages is left" bash -c '
	for p in grim-dkms grim-tools grim-dev; do
		s=$(dpkg-query -W -f="\${db:Status-Abbrev}" "$p" 2>/dev/null | tr -d " ")
		[ -z "$s" ] || [ "$s" = un ] || { echo "$p: dpkg state $s"; exit 1; }
	done
	left=$(ls -d /usr/src/grim-* 2>/dev/null; while read -r f; do [ -e "$f" ] && echo "$f"; done <"$1")
	[ -z "$left" ] || { echo "left: $left"; exit 1; }
	[ -s "$1" ] || { echo "no file list recorded"; exit 1; }' _ "$work/files.txt"

summary
