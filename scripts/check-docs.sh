#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Parse every reStructuredText file under Documentation/ as the kernel's
# documentation build would, and fail on any warning: a broken list, a
# section title out of level, a table whose columns do not line up.
set -u
cd "$(dirname "$0")/.." || exit 1
# The first python3 with docutils: a python3 of its own first on PATH
# may lack the distribution's python3-docutils.
py=python3
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import docutils' 2>/dev/null; then
		py=$p
		break
	fi
done
"$py" - Documentation/networking/*.rst <<'PY'
import io
import sys
try:
    import docutils.core
except ImportError:
    print("check-docs: python3-docutils is not installed (make deps)")
    sys.exit(2)
bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    err = io.StringIO()
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5,
                            "warning_stream": err})
    out = err.getvalue().strip()
    if out:
        print(out)
        bad += 1
    else:
        print("check-docs: %s: clean" % path)
sys.exit(1 if bad else 0)
PY
