#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Plotting for `make bench`: matplotlib from PyPI in a private venv under
# .cache/bench-venv (the system Python is left alone).  Idempotent.
set -euo pipefail

top=$(cd "$(dirname "$0")/../../.." && pwd)
venv=$top/.cache/bench-venv
if "$venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
	exit 0
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
	echo "bench-deps: installing python3-venv"
	apt-get update -q && apt-get install -y -q --no-install-recommends python3-venv
fi
echo "bench-deps: installing matplotlib into ${venv#"$top"/}"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check matplotlib
"$venv/bin/python3" -c 'import matplotlib' || { echo "bench-deps: matplotlib failed" >&2; exit 1; }
