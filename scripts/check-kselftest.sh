#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-kselftest: the GRIM selftests as a kernel developer runs them,
# from a kernel tree's kselftest framework, on one kernel: K=6.1 or K=6.12,
# KVER=<release> or KDIR=<build dir> (scripts/kdir.sh); default the newest.
#
#  1. grim.ko for that kernel (scripts/build-module.sh) and the user-space
#     tools (tools/grim: the grim tool and ip's link_grim.so).
#  2. A kernel tree of the same series, .cache/kselftest/linux-source-<series>/,
#     from /usr/src/linux-source-<series>.tar.xz (apt-get installs
#     linux-source-<series> if missing), with only what the tree's
#     `make headers_install` and tools/testing/selftests use.  The
#     project's include/uapi/linux/grim.h goes to the tree's
#     include/uapi/linux/, as in a tree that carries GRIM, and the tree's
#     own `make headers_install` exports it with the rest to usr/include/.
#  3. selftests/grim copied to tools/testing/selftests/grim and built on
#     the host: make -C tools/testing/selftests TARGETS=grim.
#  4. grim.ko installed for the kernel as the grim-dkms package installs it,
#     updates/dkms/grim.ko plus depmod, so that the tests that unload grim
#     load it again with modprobe.  depmod runs here, on a copy of
#     /lib/modules/<release> made of symlinks in
#     .cache/kselftest/modules-<release>/ (in the emulated guest it takes
#     minutes); the guest installs the module and the index in its
#     /lib/modules (scripts/guest-kselftest.sh).  The host's /lib/modules
#     is not touched.
#  5. A VM boots that kernel and loads grim.ko (scripts/vm-run.sh --script),
#     then runs  make -C tools/testing/selftests TARGETS=grim run_tests
#     in the tree, without GRIM_KO in the environment; the kselftest runner
#     takes each test's timeout from selftests/grim/settings.
#  6. From the TAP output: one ok/not ok line per test of TEST_PROGS.  A
#     skip counts as passed and is listed as SKIP, except for the tests
#     that unload the module: they must run, their skip is a failure.  A
#     kernel splat in the guest's log is a failure too.  The last line is
#     "N passed, N failed"; the exit status is non-zero on any failure.
#
#   scripts/check-kselftest.sh [--build]   --build: steps 1-4 only, no VM
#
# GRIM_TEST_* variables (sizes, counts) are passed on to the tests.  This
# run checks the runner, the install and the reload; the loads at scale
# are make check's, on every kernel.  Here the big ones run smaller unless
# set: GRIM_TEST_STREAMS_COUNT 20000 (streams.sh), GRIM_TEST_CHURN 300
# (peer_churn.sh), GRIM_TEST_RESTART_STREAMS 1000 (restart.sh),
# GRIM_TEST_FAULT_MSGS 20000 (faults.sh), GRIM_TEST_MESH_HOSTS 8 (mesh.sh),
# GRIM_TEST_LOSSY_MSGS 20 (reasm_live.sh).
# By default it runs the tests that reload the module and one test of
# each face (GRIM_KSELFTEST_ONLY); make check runs all of them on every
# kernel.  GRIM_KSELFTEST_ONLY= runs all of TEST_PROGS but the seven loads
# at scale (faults, mesh, congestion, streams, restart, probe_hijack,
# auth_flood: GRIM_KSELFTEST_SKIP, empty for none left out).
# Output in .vm-out/kselftest/ (GRIM_VM_OUT=<dir> for another): build
# logs, vm/kselftest.log (the runner's output), vm/dmesg.txt.  The tree
# and the module index in .cache/ are kept; a second run only rebuilds
# what changed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build_only=
case "${1:-}" in
--build) build_only=1 ;;
"") ;;
*) echo "usage: $0 [--build]" >&2; exit 2 ;;
esac
export PATH="$PATH:$HOME/.local/bin:/usr/local/bin"

# The tests that unload grim and load it again: a skip of one of these
# means the reload does not work from a kernel tree.
MUST_RUN="unload.sh inject.sh unload_traffic.sh"
# Kernel log problems, as scripts/vm-run.sh looks for them.
# What counts as a kernel splat: selftests/grim/splats.awk.
splats() { awk -f "$top/selftests/grim/splats.awk" "$1"; }

out=${GRIM_VM_OUT:-$top/.vm-out/kselftest}
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)

pass=0 fail=0
result() {	# ok|not-ok NAME [DETAIL]
	if [ "$1" = ok ]; then
		echo "ok $2${3:+  $3}"
		pass=$((pass + 1))
	else
		echo "not ok $2${3:+  $3}"
		fail=$((fail + 1))
	fi
}
finish() {
	echo "check-kselftest: wall time $(($(date +%s) - start))s"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
# abort NAME LOG DETAIL: a step failed, nothing after it can run.
abort() {
	[ -f "$2" ] && tail -n 30 "$2" | sed 's/^/    | /'
	result not-ok "$1" "$3"
	finish
}

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO="sudo -E"
# need_pkg PACKAGE...: apt-get install what is missing.
need_pkg() {
	local p missing=()
	for p; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "check-kselftest: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >>"$out/packages.log" 2>&1 || {
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -q >>"$out/packages.log" 2>&1 &&
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >>"$out/packages.log" 2>&1
	}
}

# ---- kernel, module, tools ------------------------------------------------------
kver=$(scripts/kdir.sh --version) || abort kernel "" "no kernel (K=, KVER=, make deps)"
series=$(echo "$kver" | grep -oE '^[0-9]+\.[0-9]+')
echo "check-kselftest: kernel $kver, kselftest from linux-source-$series"

scripts/build-module.sh "$kver" >"$out/module.log" 2>&1 ||
	abort "build grim.ko" "$out/module.log" "see $out/module.log"
ko=$top/.build/$kver/grim.ko
make -C tools/grim >"$out/tools.log" 2>&1 ||
	abort "build tools/grim" "$out/tools.log" "see $out/tools.log"
[ -f tools/grim/link_grim.so ] && [ -x tools/grim/grim ] ||
	abort "build tools/grim" "$out/tools.log" "no tools/grim/grim or link_grim.so"

# ---- the kernel tree ------------------------------------------------------------
# headers_install needs rsync; the tree's source comes from linux-source-<series>.
need_pkg rsync xz-utils "linux-source-$series" ||
	abort packages "$out/packages.log" "apt-get install failed, see $out/packages.log"
tarball=/usr/src/linux-source-$series.tar.xz
[ -r "$tarball" ] || abort tree "" "no $tarball"
base=linux-source-$series
tree=$top/.cache/kselftest/$base
# What headers_install (top Makefile, scripts/, the UAPI headers, the x86
# syscall tables and relocs tool that archheaders/archscripts build) and
# tools/testing/selftests (its lib.mk, tools/include) use.
parts="Makefile scripts include/uapi arch/x86/Makefile arch/x86/Makefile_32.cpu
       arch/x86/include/uapi arch/x86/entry/syscalls arch/x86/tools
       tools/testing/selftests tools/include tools/scripts"
stamp="$(stat -c '%s %Y' "$tarball") $(echo $parts)"
if [ "$(cat "$tree/.grim-kselftest" 2>/dev/null)" != "$stamp" ]; then
	echo "check-kselftest: extracting the kernel tree from $tarball"
	rm -rf "$tree" "$tree.tmp"
	mkdir -p "$tree.tmp"
	# shellcheck disable=SC2046
	tar -C "$tree.tmp" -xJf "$tarball" --strip-components=1 \
		$(printf "$base/%s " $parts) >"$out/tree.log" 2>&1 ||
		abort tree "$out/tree.log" "extracting from $tarball failed"
	echo "$stamp" >"$tree.tmp/.grim-kselftest"
	mv "$tree.tmp" "$tree"
fi
# GRIM's UAPI header in the tree, exported by the tree's headers_install
# to usr/include/linux/grim.h, where lib.mk's KHDR_INCLUDES finds it.
cmp -s include/uapi/linux/grim.h "$tree/include/uapi/linux/grim.h" ||
	cp include/uapi/linux/grim.h "$tree/include/uapi/linux/grim.h"
make -C "$tree" headers_install >>"$out/tree.log" 2>&1 ||
	abort "tree headers_install" "$out/tree.log" "see $out/tree.log"
[ -f "$tree/usr/include/linux/grim.h" ] ||
	abort "tree headers_install" "$out/tree.log" "no usr/include/linux/grim.h"

# ---- the selftests in the tree --------------------------------------------------
st=$tree/tools/testing/selftests
# The sources only: what the standalone build made in selftests/grim
# (TEST_GEN_FILES) is built again by the tree's lib.mk.
gen=$(make -s -C selftests/grim --eval 'print-gen: ; @echo $(TEST_GEN_FILES)' print-gen)
excl=()
for f in $gen; do excl+=(--exclude="/$f"); done
rsync -a --delete "${excl[@]}" selftests/grim/ "$st/grim/" ||
	abort "copy selftests" "" "rsync selftests/grim/ to $st/grim/ failed"
make -C "$st" TARGETS=grim >"$out/selftests-build.log" 2>&1 ||
	abort "build selftests" "$out/selftests-build.log" "make -C tools/testing/selftests TARGETS=grim failed"
for f in $gen; do
	[ -x "$st/grim/$f" ] || abort "build selftests" "$out/selftests-build.log" "no $f built"
done
read -r -a tests <<<"$(make -s -C "$st/grim" list-tests)"
[ ${#tests[@]} -gt 0 ] || abort "list tests" "" "no TEST_PROGS"
# make check runs every test on every kernel; this run checks what only a
# kernel tree's runner shows: that the tests build and run from the tree,
# that the module installed as DKMS installs it reloads with modprobe, and
# that the tools from PATH work.  It runs those that reload the module and
# one test of each face (GRIM_KSELFTEST_ONLY, names separated by spaces;
# empty for all of TEST_PROGS but the loads at scale in
# GRIM_KSELFTEST_SKIP, which make check runs on every kernel).
only=${GRIM_KSELFTEST_ONLY-$MUST_RUN link.sh netns.sh config_tools.sh trace.sh errqueue.sh ip.sh mcast.sh}
skip=${GRIM_KSELFTEST_SKIP-faults.sh mesh.sh congestion.sh streams.sh restart.sh probe_hijack.sh auth_flood.sh}
keep=()
for t in "${tests[@]}"; do
	if [ -n "$only" ]; then
		[[ " $only " == *" $t "* ]] && keep+=("$t")
	elif [[ " $skip " != *" $t "* ]]; then
		keep+=("$t")
	fi
done
for t in $only; do
	[[ " ${tests[*]} " == *" $t "* ]] ||
		abort "list tests" "" "GRIM_KSELFTEST_ONLY names $t, not in TEST_PROGS"
done
if [ -n "$only" ]; then
	echo "check-kselftest: running $only (GRIM_KSELFTEST_ONLY= for all)"
else
	echo "check-kselftest: leaving out the loads make check runs: $skip"
fi
tests=("${keep[@]}")
[ ${#tests[@]} -gt 0 ] || abort "list tests" "" "no test left to run"
progs=$(IFS=:; echo "${tests[*]}")
echo "check-kselftest: tree $tree ready: ${#tests[@]} tests, helpers built ($gen)"

# ---- grim.ko installed, the module index ----------------------------------------
mstage=$top/.cache/kselftest/modules-$kver
if ! cmp -s "$ko" "$mstage/updates/dkms/grim.ko" ||
   [ "/lib/modules/$kver/modules.dep" -nt "$mstage/modules.dep" ] ||
   [ ! -f "$mstage/modules.dep.bin" ]; then
	echo "check-kselftest: depmod for $kver with updates/dkms/grim.ko"
	rm -rf "$mstage" "$top/.cache/kselftest/modroot"
	root=$top/.cache/kselftest/modroot
	mkdir -p "$root/lib/modules/$kver"
	(
		set -e
		cd "/lib/modules/$kver"
		for f in kernel updates extra; do
			if [ -d "$f" ]; then cp -as "/lib/modules/$kver/$f" "$root/lib/modules/$kver/"; fi
		done
		cp -p modules.order modules.builtin modules.builtin.modinfo "$root/lib/modules/$kver/"
		rm -f "$root/lib/modules/$kver/updates/dkms/grim.ko"*
		install -D -m 0644 "$ko" "$root/lib/modules/$kver/updates/dkms/grim.ko"
		depmod -b "$root" "$kver"
		mkdir -p "$mstage/updates/dkms"
		cp -p "$root/lib/modules/$kver"/modules.* "$mstage/"
		cp -p "$ko" "$mstage/updates/dkms/grim.ko"
	) >"$out/depmod.log" 2>&1 || abort depmod "$out/depmod.log" "see $out/depmod.log"
	rm -rf "$root"
	grep -q '^updates/dkms/grim.ko:' "$mstage/modules.dep" ||
		abort depmod "" "grim.ko not in $mstage/modules.dep"
fi

if [ -n "$build_only" ]; then
	result ok build "grim.ko, tools, $base tree, selftests, module index"
	finish
fi

# ---- the VM -----------------------------------------------------------------------
per_test=$(sed -n 's/^timeout=\([0-9]\+\).*/\1/p' selftests/grim/settings 2>/dev/null)
per_test=${per_test:-45}
vm_timeout=$((300 + (per_test + 15) * ${#tests[@]}))
[ $vm_timeout -gt 2700 ] && vm_timeout=2700
export GRIM_TEST_STREAMS_COUNT=${GRIM_TEST_STREAMS_COUNT:-20000}
export GRIM_TEST_CHURN=${GRIM_TEST_CHURN:-300}
export GRIM_TEST_RESTART_STREAMS=${GRIM_TEST_RESTART_STREAMS:-1000}
export GRIM_TEST_FAULT_MSGS=${GRIM_TEST_FAULT_MSGS:-20000}
export GRIM_TEST_MESH_HOSTS=${GRIM_TEST_MESH_HOSTS:-8}
export GRIM_TEST_LOSSY_MSGS=${GRIM_TEST_LOSSY_MSGS:-20}
export GRIM_TEST_KSELFTEST_PROGS=$progs
fwd=$(env | grep -E '^GRIM_TEST_[A-Z0-9_]+=[A-Za-z0-9_.:-]*$' | tr '\n' ' ')
vmout=$out/vm
echo "check-kselftest: running make -C tools/testing/selftests TARGETS=grim run_tests in a VM"
vm_start=$(date +%s)
# shellcheck disable=SC2086
KVER=$kver GRIM_KO=$ko GRIM_VM_OUT=$vmout GRIM_VM_TIMEOUT=${GRIM_VM_TIMEOUT:-$vm_timeout} \
	scripts/vm-run.sh --script scripts/guest-kselftest.sh "$vmout" "$tree" "$mstage" $fwd \
	</dev/null 2>&1 | sed -u 's/\r//g' | tee "$out/vm.log" |
	grep --line-buffered -oE '(not )?ok [0-9]+ selftests: grim: .*' | sed -u 's/^/  | /'
echo "check-kselftest: VM exited after $(($(date +%s) - vm_start))s"

# ---- results ----------------------------------------------------------------------
echo
echo "Results (kernel $kver, $base kselftest):"
if [ ! -f "$vmout/done" ]; then
	result not-ok vm "the VM did not come up or did not finish, see $out/vm.log"
	echo "    --- last lines of $out/vm.log (kernel console included):"
	grep -v -e '^    ' "$out/vm.log" | tail -n 60 | sed 's/^/    | /'
fi
if [ -f "$vmout/insmod.rc" ]; then
	result not-ok module-load "insmod $ko"
	sed 's/^/    | /' "$vmout/insmod.log"
fi
if [ "$(cat "$vmout/setup.rc" 2>/dev/null)" != 0 ]; then
	result not-ok module-install "see $vmout/setup.log"
	[ -f "$vmout/setup.log" ] && sed 's/^/    | /' "$vmout/setup.log"
fi
log=$vmout/kselftest.log
# The runner prints a result as soon as a test's exit status is known,
# sometimes before the end of the test's output: a result is not always
# at the start of a line.
tap=$(grep -oE '(not )?ok [0-9]+ selftests: grim: .*' "$log" 2>/dev/null)
# test_output TEST: the test's own output (the "# " lines after its header).
test_output() {
	awk -v h="# selftests: grim: $1" '
		!f && index($0, h) { f = 1; next }
		f && /# selftests: grim: / { exit }
		f' "$log" | sed -E 's/(not )?ok [0-9]+ selftests: grim: .*//' | grep -v '^$'
}
for t in "${tests[@]}"; do
	line=$(grep -E "^(not )?ok [0-9]+ selftests: grim: $t( |$)" <<<"$tap" | head -n 1)
	case "$line" in
	ok*"# SKIP"*)
		why=$(test_output "$t" | grep -m1 -oE 'SKIP: .*' | sed 's/^SKIP: [^:]*: //')
		if [[ " $MUST_RUN " == *" $t "* ]]; then
			result not-ok "$t" "# SKIP, but it must run from a kernel tree: $why"
		else
			echo "ok $t # SKIP $why"
			pass=$((pass + 1))
		fi
		continue ;;
	ok*)
		result ok "$t"
		continue ;;
	"")
		result not-ok "$t" "# did not run" ;;
	*)
		detail=${line##*"$t"}
		result not-ok "$t" "${detail# }" ;;
	esac
	output=$(test_output "$t" 2>/dev/null | tail -n 40)
	if [ -n "$output" ]; then
		echo "    --- last lines of $t in $log:"
		echo "$output" | sed 's/^/    | /'
	fi
done
# Anything else the runner ran (the helper programs once were) is wrong.
while read -r line; do
	[ -n "$line" ] || continue
	name=${line#*selftests: grim: }
	name=${name%% *}
	[[ " ${tests[*]} " == *" $name "* ]] || result not-ok "$name" "run as a test, but not in TEST_PROGS"
done <<<"$tap"
if [ -f "$vmout/loaded-after" ]; then
	if [ "$(cat "$vmout/loaded-after")" = yes ]; then
		result ok module-loaded-after "grim still loaded after the run"
	else
		result not-ok module-loaded-after "grim not loaded after the run"
	fi
fi
if [ ! -s "$vmout/dmesg.txt" ]; then
	result not-ok kernel-log "no dmesg captured"
elif ! bad=$(splats "$vmout/dmesg.txt"); then
	result not-ok kernel-log "see $vmout/dmesg.txt"
	echo "$bad" | head -n 60 | sed 's/^/    | /'
else
	result ok kernel-log
fi
finish
