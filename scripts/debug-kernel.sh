#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build, once, the debug kernel that `make check-debug` runs GRIM on:
# Debian's linux-source-6.12 with Debian's own 6.12 config, plus KASAN
# (generic, inline), lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP,
# kmemleak, debugobjects and SLUB debugging; without debug info, BTF and
# module signing; LOCALVERSION "-grimdebug".  Only the modules are trimmed
# (localmodconfig with the list below: what the selftests, the benchmark
# and virtme-ng load); Debian's built-in configuration stays as it is.
#
#   scripts/debug-kernel.sh            build unless cached; print the build dir
#   scripts/debug-kernel.sh --check    print the build dir if the cached build
#                                      is current, else exit 1 (builds nothing)
#
# The build dir is a kbuild output tree (O=): KDIR for grim.ko
# (KDIR=<it> scripts/build-module.sh <release>), and a kernel directory
# for vng --run (bzImage, vmlinux, .config, modules.order).  Everything
# lives in .cache/debug-kernel/:
#
#   src/        the unpacked source        build/  the build tree (KDIR)
#   root/       modules_install output     lsmod   the module list used
#   build.log   the last build's output    stamp   inputs of the finished build
#
# The build is redone (incrementally, in the same tree) when an input
# changes: the source tarball, the base config, this script's recipe
# (config options, module list) or the compiler.  A first build takes
# 20 minutes to an hour on 2 cores (21 minutes here when the machine was
# not busy) and about 3.2 GB of disk; make runs under nice -n 19 and ionice -c3.
#
# Environment: DEBUG_KERNEL_SOURCE (default /usr/src/linux-source-6.12.tar.xz),
# DEBUG_KERNEL_CONFIG (default: the newest /boot/config-6.12.*),
# DEBUG_KERNEL_JOBS (default: nproc), DEBUG_KERNEL_VERBOSE=1 (make's output
# to stderr as well as to build.log).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/.cache/debug-kernel
series=6.12
tarball=${DEBUG_KERNEL_SOURCE:-/usr/src/linux-source-$series.tar.xz}
jobs=${DEBUG_KERNEL_JOBS:-$(nproc)}
log=$cache/build.log

say() { echo "debug-kernel: $*" >&2; }
die() { echo "debug-kernel: $*" >&2; exit 1; }

# ---- the recipe ---------------------------------------------------------------
# Options set on top of Debian's config (after localmodconfig), each
# checked afterwards.  VALUE y/n/number/"string"; n also passes when the
# option is absent (its dependencies are off), and so does "" for strings.
debug_opts=(
	# KASAN, generic, inline; KASAN_VMALLOC keeps Debian's VMAP_STACK.
	KASAN=y KASAN_GENERIC=y KASAN_INLINE=y KASAN_OUTLINE=n KASAN_VMALLOC=y
	# lockdep, and "sleeping function called from invalid context".
	PROVE_LOCKING=y DEBUG_ATOMIC_SLEEP=y
	# kmemleak, on from boot; scanned on demand by check-debug (no
	# periodic scan competing with the tests for the emulated CPUs).
	DEBUG_KMEMLEAK=y DEBUG_KMEMLEAK_DEFAULT_OFF=n
	DEBUG_KMEMLEAK_MEM_POOL_SIZE=64000 DEBUG_KMEMLEAK_AUTO_SCAN=n
	# debugobjects: timers, work items, RCU heads, frees of live objects.
	DEBUG_OBJECTS=y DEBUG_OBJECTS_TIMERS=y DEBUG_OBJECTS_WORK=y
	DEBUG_OBJECTS_FREE=y DEBUG_OBJECTS_RCU_HEAD=y DEBUG_OBJECTS_ENABLE_DEFAULT=1
	# SLUB debugging compiled in; check-debug turns it on with slub_debug=.
	SLUB_DEBUG=y
	# Slab fault injection with /proc/<tid>/fail-nth, so init_fail.sh can
	# fail each allocation of grim.ko's load in turn and watch it unwind.
	FAULT_INJECTION=y FAILSLAB=y FAULT_INJECTION_DEBUG_FS=y
	# Networking's own debug checks and netdev/netns reference trackers.
	DEBUG_NET=y NET_DEV_REFCNT_TRACKER=y NET_NS_REFCNT_TRACKER=y
	# Lockdep tables big enough for many network namespaces.
	LOCKDEP_BITS=16 LOCKDEP_CHAINS_BITS=18 LOCKDEP_STACK_TRACE_BITS=20
	LOCKDEP_STACK_TRACE_HASH_BITS=16
	# No debug info, no BTF: a smaller, faster build.
	DEBUG_INFO_NONE=y DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n DEBUG_INFO_DWARF4=n
	DEBUG_INFO_DWARF5=n DEBUG_INFO_BTF=n DEBUG_INFO_BTF_MODULES=n
	# No module signing and none of Debian's certificates.  MODULE_SIG
	# itself stays (Debian's LOCK_DOWN_IN_EFI_SECURE_BOOT selects it), but
	# nothing is signed and nothing is enforced: unsigned modules load (and
	# taint the kernel with E, which leaves lockdep on).
	MODULE_SIG_ALL=n MODULE_SIG_KEY='""' MODULE_SIG_FORCE=n
	SYSTEM_TRUSTED_KEYS='""' SYSTEM_REVOCATION_KEYS='""'
	LOCALVERSION='"-grimdebug"' LOCALVERSION_AUTO=n
	# What virtme-ng needs to boot (virtme/commands/configkernel.py),
	# built in rather than found in an initramfs (virtio-scsi stays a
	# module: Debian's SCSI is one).
	VIRTIO=y VIRTIO_PCI=y VIRTIO_NET=y VIRTIO_CONSOLE=y VIRTIO_BLK=y
	VIRTIO_BALLOON=y NETFS_SUPPORT=y NET_9P=y NET_9P_VIRTIO=y
	9P_FS=y FUSE_FS=y VIRTIO_FS=y OVERLAY_FS=y VSOCKETS=y VIRTIO_VSOCKETS=y
	UNIX=y PACKET=y INET=y DEVTMPFS=y TMPFS=y SHMEM=y BINFMT_SCRIPT=y
	INOTIFY_USER=y UNIX98_PTYS=y CMDLINE_OVERRIDE=n
	# What the selftests' config (selftests/grim/config) asks to be built in.
	NET_NS=y IPV6=y NET_SCHED=y DEBUG_FS=y FTRACE=y MODULE_UNLOAD=y
)

# Modules to keep (localmodconfig); their dependencies (from the installed
# Debian 6.12 kernel's modules.dep) are added.  The selftests' modprobes
# and requests (selftests/grim/*.sh, lib.sh, config), the benchmark's
# (tools/grim/bench), grim.ko's softdep (crc32c), the AEAD of cluster keys
# (loaded by name, so no modules.dep lists it), virtme-ng's drivers.
keep_mods=(
	veth bridge stp llc dummy 8021q garp mrp tipc tipc_diag udp_tunnel
	ip6_udp_tunnel sch_netem sch_ingress sch_tbf sch_prio sch_htb cls_u32
	cls_matchall act_pedit act_gact act_mirred ifb
	inet_diag tcp_diag udp_diag raw_diag unix_diag af_packet_diag netlink_diag
	crc32c_generic crc32c_intel libcrc32c crc32_pclmul
	chacha20poly1305 chacha_generic poly1305_generic chacha_x86_64
	poly1305_x86_64 libchacha libpoly1305 macsec
	virtio_net net_failover failover virtio_blk virtio_scsi virtio_balloon
	virtio_rng virtio_mmio 9p 9pnet 9pnet_virtio netfs overlay fuse virtiofs vsock
	vmw_vsock_virtio_transport vmw_vsock_virtio_transport_common
	vsock_loopback i6300esb binfmt_misc
)

# ---- inputs -------------------------------------------------------------------
base_config=${DEBUG_KERNEL_CONFIG:-$(ls /boot/config-$series.* 2>/dev/null | sort -V | tail -n 1)}
[ -n "$base_config" ] && [ -r "$base_config" ] ||
	die "no Debian $series config in /boot (make deps installs linux-image-$series.*)"
base_release=${base_config#*/config-}

# The module list, with each module's dependencies on Debian's kernel.
lsmod_text() {
	local m
	echo "Module                  Size  Used by"
	{
		printf '%s\n' "${keep_mods[@]}"
		if [ -d "/lib/modules/$base_release/kernel" ]; then
			for m in "${keep_mods[@]}"; do
				/sbin/modprobe -S "$base_release" --show-depends "$m" 2>/dev/null |
					sed -n 's:^insmod .*/\([^/]*\)\.ko\(\.[a-z]*\)\? *.*$:\1:p'
			done
		fi
	} | tr - _ | sort -u | awk '{ printf "%-24s 0 0\n", $1 }'
}

inputs() {
	echo "recipe 1"
	sha256sum <"$tarball"
	sha256sum <"$base_config"
	printf '%s\n' "${debug_opts[@]}"
	lsmod_text
	gcc --version | head -n 1
}

if [ "${1:-}" = --check ]; then
	[ -f "$cache/stamp" ] && [ -f "$cache/build/arch/x86/boot/bzImage" ] &&
		[ -r "$tarball" ] && [ "$(inputs | sha256sum)" = "$(cat "$cache/stamp")" ] ||
		exit 1
	echo "$cache/build"
	exit 0
fi

# ---- tools --------------------------------------------------------------------
if [ ! -r "$tarball" ] && [ -z "${DEBUG_KERNEL_SOURCE:-}" ]; then
	say "installing linux-source-$series"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO="sudo -E"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		"linux-source-$series" >&2 ||
		{ $SUDO apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
			$SUDO apt-get install -y -q --no-install-recommends "linux-source-$series" >&2; }
fi
[ -r "$tarball" ] || die "no kernel source $tarball"

need=()
for t in bison:bison flex:flex bc:bc gcc:gcc make:make perl:perl xz:xz-utils \
	 cpio:cpio depmod:kmod; do
	PATH=$PATH:/sbin:/usr/sbin command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
[ -e /usr/include/libelf.h ] || need+=(libelf-dev)
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
	say "installing build tools: ${need[*]}"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO="sudo -E"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		"${need[@]}" >&2 || die "could not install ${need[*]}"
fi

nice_cmd=()
command -v nice >/dev/null && nice_cmd+=(nice -n 19)
command -v ionice >/dev/null && ionice -c3 true 2>/dev/null && nice_cmd+=(ionice -c3)

# ---- cached? ------------------------------------------------------------------
mkdir -p "$cache"
# One build at a time; who waited finds it cached.
exec 9>"$cache/lock"
if ! flock -n 9; then
	say "waiting for another build of the debug kernel to finish"
	flock 9
fi
key=$(inputs | sha256sum)
if [ -f "$cache/stamp" ] && [ "$key" = "$(cat "$cache/stamp")" ] &&
   [ -f "$cache/build/arch/x86/boot/bzImage" ] && [ -f "$cache/build/vmlinux" ]; then
	say "cached: $(cat "$cache/build/include/config/kernel.release") in $cache/build"
	echo "$cache/build"
	exit 0
fi
rm -f "$cache/stamp"

# ---- source -------------------------------------------------------------------
src_key=$(sha256sum <"$tarball")
if [ ! -f "$cache/src/Makefile" ] || [ "$(cat "$cache/src/.grim-tarball" 2>/dev/null)" != "$src_key" ]; then
	say "unpacking $tarball"
	rm -rf "$cache/src" "$cache/build" "$cache/root" "$cache/unpack"
	mkdir -p "$cache/unpack"
	"${nice_cmd[@]}" tar -xf "$tarball" -C "$cache/unpack"
	d=$(find "$cache/unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -n "$d" ] && [ -f "$d/Makefile" ] || die "no kernel tree in $tarball"
	mv "$d" "$cache/src"
	rmdir "$cache/unpack"
	echo "$src_key" >"$cache/src/.grim-tarball"
fi

b=$cache/build
mkdir -p "$b"
: >"$log"
mk() {
	local rc
	echo "+ make $*" >>"$log"
	set +e
	if [ "${DEBUG_KERNEL_VERBOSE:-}" = 1 ]; then
		"${nice_cmd[@]}" make -C "$cache/src" O="$b" "$@" 2>&1 | tee -a "$log" >&2
		rc=${PIPESTATUS[0]}
	else
		"${nice_cmd[@]}" make -C "$cache/src" O="$b" "$@" >>"$log" 2>&1
		rc=$?
	fi
	set -e
	if [ $rc -ne 0 ]; then
		tail -n 40 "$log" | sed 's/^/    | /' >&2
		die "make $* failed (exit $rc): see $log"
	fi
}

# ---- config -------------------------------------------------------------------
cfg=$b/.config
setopts() {
	local o n v args=()
	for o in "${debug_opts[@]}"; do
		n=${o%%=*}; v=${o#*=}
		case "$v" in
		y) args+=(--enable "$n") ;;
		n) args+=(--disable "$n") ;;
		m) args+=(--module "$n") ;;
		\"*) v=${v#\"}; args+=(--set-str "$n" "${v%\"}") ;;
		*) args+=(--set-val "$n" "$v") ;;
		esac
	done
	"$cache/src/scripts/config" --file "$cfg" "${args[@]}"
}
checkopts() {
	local o n v bad=0 line
	for o in "${debug_opts[@]}"; do
		n=CONFIG_${o%%=*}; v=${o#*=}
		line=$(grep -E "^(# )?$n[= ]" "$cfg" || true)
		case "$v" in
		n) [ -z "$line" ] || [ "$line" = "# $n is not set" ] || { echo "  $n: want n, have: $line"; bad=1; } ;;
		'""') [ -z "$line" ] || [ "$line" = "$n=\"\"" ] || { echo "  $n: want \"\", have: $line"; bad=1; } ;;
		*) [ "$line" = "$n=$v" ] || { echo "  $n: want $v, have: ${line:-(absent)}"; bad=1; } ;;
		esac
	done
	return $bad
}

say "configuring: $base_config + localmodconfig ($(lsmod_text | tail -n +2 | wc -l) modules) + debug options"
lsmod_text >"$cache/lsmod"
cp "$base_config" "$cfg"
mk olddefconfig
# localmodconfig asks about nothing new after olddefconfig; yes '' just in case.
{ yes '' || true; } | mk LSMOD="$cache/lsmod" localmodconfig
mk olddefconfig
# Twice: some options only appear once the ones they depend on are set.
setopts
mk olddefconfig
setopts
mk olddefconfig
if ! bad=$(checkopts); then
	echo "$bad" >&2
	die "the config did not take these options (see $cfg)"
fi
say "config ok: $(grep -c '=m$' "$cfg") modules, $(grep -c '=y$' "$cfg") built-in options"

# ---- build --------------------------------------------------------------------
start=$(date +%s)
say "building bzImage and modules with -j$jobs (log: $log)"
mk -j"$jobs" bzImage modules
mk headers
rm -rf "$cache/root"
mk INSTALL_MOD_PATH="$cache/root" modules_install
rel=$(cat "$b/include/config/kernel.release")
secs=$(($(date +%s) - start))
echo "$rel built in ${secs}s on $(date -u +%FT%TZ)" >"$cache/built"
echo "$key" >"$cache/stamp"
say "built $rel in $((secs / 60))m$((secs % 60))s: $b"
echo "$b"
