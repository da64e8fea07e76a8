#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM of scripts/check-kselftest.sh, through
# scripts/vm-run.sh --script (which has insmod'ed grim.ko already):
#
#   guest-kselftest.sh OUTDIR TREE MODSTAGE [GRIM_TEST_X=VALUE...]
#
# TREE is a kernel tree with the GRIM selftests built in
# tools/testing/selftests/grim; MODSTAGE the module directory that
# check-kselftest.sh prepared on the host: updates/dkms/grim.ko and the
# modules.* index of this kernel's modules with it (depmod, which takes
# minutes in an emulated guest).  Installing both in /lib/modules/<release>
# is what the grim-dkms package does; then the tests that unload grim load
# it again with modprobe, as on a kernel developer's machine.  The host's
# file system is read-only here: /lib/modules takes the writes in an
# overlay on tmpfs (virtme-ng's own, or one mounted here).
#
# Then, without GRIM_KO in the environment:
#   make -C TREE/tools/testing/selftests TARGETS=grim run_tests
# with its output in OUTDIR/kselftest.log.  The grim tool and ip's
# link_grim.so come from the project's tools/grim (PATH, IP_LIB_DIR).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

out=$1 tree=$2 stage=$3
shift 3
top=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
mods=/lib/modules/$kver

die() {
	echo "guest-kselftest: $*" | tee -a "$out/setup.log" >&2
	echo 1 >"$out/setup.rc"
	exit 1
}

for a; do
	case $a in
	GRIM_TEST_*=*) export "$a" ;;
	*) die "unexpected argument: $a" ;;
	esac
done

# The kselftest runner and the tests are told nothing about grim.ko.
ko=${GRIM_KO:-}
unset GRIM_KO
[ -d /sys/module/grim ] || die "grim is not loaded (insmod $ko failed?)"

if ! touch "$mods/.grim-w" 2>/dev/null; then
	tmp=$(mktemp -d /run/grim-modules.XXXXXX) &&
		mount -t tmpfs grim-modules "$tmp" &&
		mkdir "$tmp/upper" "$tmp/work" &&
		mount -t overlay grim-modules \
			-o "lowerdir=$mods,upperdir=$tmp/upper,workdir=$tmp/work" "$mods" ||
		die "cannot make $mods writable"
fi
rm -f "$mods/.grim-w"
install -D -m 0644 "$stage/updates/dkms/grim.ko" "$mods/updates/dkms/grim.ko" &&
	cp "$stage"/modules.* "$mods/" ||
	die "installing grim.ko in $mods failed"
installed=$(modinfo -n grim 2>&1)
[ "$installed" = "$mods/updates/dkms/grim.ko" ] ||
	die "modinfo -n grim: $installed, expected $mods/updates/dkms/grim.ko"
[ "$(modinfo -F srcversion grim)" = "$(cat /sys/module/grim/srcversion)" ] ||
	die "the grim.ko installed is not the one loaded"
{
	echo "grim.ko installed: $installed (srcversion $(cat /sys/module/grim/srcversion))"
	echo "grim tool, link_grim.so: $top/tools/grim"
} | tee -a "$out/setup.log"
echo 0 >"$out/setup.rc"

# The kselftest runner writes the tests' output to /dev/stdout, its TAP
# lines to its standard output: on any system the same.  virtme-ng points
# /dev/stdout at a console port of its own; point it back.
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr

export PATH=$top/tools/grim:$PATH
export IP_LIB_DIR=$top/tools/grim
cd "$tree" || die "no tree $tree"
# GRIM_TEST_KSELFTEST_PROGS (names separated by colons): the TEST_PROGS
# to run, if not all of them.
progs=()
[ -n "${GRIM_TEST_KSELFTEST_PROGS:-}" ] &&
	progs=("TEST_PROGS=${GRIM_TEST_KSELFTEST_PROGS//:/ }")
# The networking static keys, held for the run (scripts/guest-keys.sh):
# the kselftest runner runs grim's tests two at a time too.
# shellcheck source=scripts/guest-keys.sh
. "$top/scripts/guest-keys.sh"
hold_net_keys
make -C tools/testing/selftests TARGETS=grim "${progs[@]}" run_tests 2>&1 |
	tee "$out/kselftest.log"
echo "${PIPESTATUS[0]}" >"$out/kselftest.rc"
# The tests that unload grim must leave it loaded.
if [ -d /sys/module/grim ]; then echo yes; else echo no; fi >"$out/loaded-after"
exit 0
