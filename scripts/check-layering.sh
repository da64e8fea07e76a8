#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The layering rule of include/net/grim.h, checked on the objects of a
# built module: nothing in drivers/net/grim names a symbol that net/grim
# defines, net/grim names of the driver only what include/net/grim.h
# declares, and neither includes the other's headers.
#
#   scripts/check-layering.sh BUILD_DIR   (a tree of scripts/build-module.sh)
#   scripts/check-layering.sh --self-test (a bad pair of objects must fail)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

defined() { nm --defined-only -g "$@" | awk 'NF == 3 { print $3 }' | sort -u; }
undefined() { nm -u "$@" | awk '{ print $NF }' | sort -u; }
# Functions and variables a header declares (a name before "(" or ";").
declared() {
	sed -e 's:/\*.*\*/::' "$1" |
		grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[(;]' |
		sed -E 's/[[:space:]]*[(;]$//' | sort -u
}

# layering HEADER DRIVER_OBJ... -- FAMILY_OBJ...: print each breach.
layering() {
	local header=$1 drv=() fam=() bad=0 s
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do drv+=("$1"); shift; done
	shift
	fam=("$@")
	for s in $(comm -12 <(undefined "${drv[@]}") <(defined "${fam[@]}")); do
		echo "layering: the driver names $s, defined by the family"
		bad=1
	done
	for s in $(comm -12 <(undefined "${fam[@]}") <(defined "${drv[@]}") |
		   comm -23 - <(declared "$header")); do
		echo "layering: the family names $s, which ${header##*/} does not declare"
		bad=1
	done
	return $bad
}

if [ "${1:-}" = --self-test ]; then
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	cat >"$t/api.h" <<'H'
int drv_api(void);
H
	cat >"$t/drv.c" <<'C'
int fam_up(void);
int drv_api(void) { return 1; }
int drv_private(void) { return 2; }
int drv_calls_up(void) { return fam_up(); }
C
	cat >"$t/fam.c" <<'C'
int drv_api(void);
int drv_private(void);
int fam_up(void) { return drv_api() + drv_private(); }
C
	cat >"$t/drv_ok.c" <<'C'
int drv_api(void) { return 1; }
int drv_private(void) { return 2; }
C
	cat >"$t/fam_ok.c" <<'C'
int drv_api(void);
int fam_up(void) { return drv_api(); }
C
	for c in drv fam drv_ok fam_ok; do
		gcc -c -o "$t/$c.o" "$t/$c.c" || exit 1
	done
	out=$(layering "$t/api.h" "$t/drv.o" -- "$t/fam.o") && {
		echo "layering self-test: a breach passed"; exit 1; }
	grep -q 'driver names fam_up' <<<"$out" &&
		grep -q 'family names drv_private' <<<"$out" &&
		! grep -q drv_api <<<"$out" || {
		echo "layering self-test: wrong findings: $out"; exit 1; }
	layering "$t/api.h" "$t/drv_ok.o" -- "$t/fam_ok.o" || {
		echo "layering self-test: a clean pair failed"; exit 1; }
	exit 0
fi

b=${1:?usage: check-layering.sh BUILD_DIR | --self-test}
# The objects the module is made of, as Kbuild lists them.
objs=$(grep -oE '(drivers/net|net)/grim/[a-z_0-9]+\.o' "$top/Kbuild")
drv=() fam=()
for o in $objs; do
	[ -f "$b/$o" ] || { echo "layering: $b/$o not built"; exit 1; }
	case $o in
	drivers/*) drv+=("$b/$o") ;;
	*) fam+=("$b/$o") ;;
	esac
done
[ ${#drv[@]} -gt 0 ] && [ ${#fam[@]} -gt 0 ] || { echo "layering: no objects in Kbuild"; exit 1; }
bad=0
layering "$top/include/net/grim.h" "${drv[@]}" -- "${fam[@]}" || bad=1
if grep -n '#include.*net/grim/' "$top"/drivers/net/grim/*.[ch] | grep -v '<net/grim.h>'; then
	echo "layering: the driver includes a header of net/grim"
	bad=1
fi
if grep -n '#include.*drivers/net/grim' "$top"/net/grim/*.[ch]; then
	echo "layering: the family includes a header of the driver"
	bad=1
fi
exit $bad
