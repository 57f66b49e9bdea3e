#!/usr/bin/env bash
# The job kit installs with pip from the repository, without a package index (PyPI may be out of
# reach, as on CI): a virtual environment over Debian's python3, `pip install --no-build-isolation
# ./python` (setuptools from python3-setuptools), then the installed module against the subsample
# vectors, and its command line.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$t/venv"
# From a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
cp -r "$src/python" "$t/python"
"$t/venv/bin/pip" install --quiet --no-index --no-build-isolation "$t/python"
cd "$t"  # not the source tree: the installed module must be the one imported
"$t/venv/bin/python" - "$src/docs/subsample-vectors.json" <<'PY'
import json, sys
import reverify_job
assert "site-packages" in reverify_job.__file__, reverify_job.__file__
vectors = json.load(open(sys.argv[1]))
for case in vectors["membership"]:
    assert reverify_job.in_subsample(case["key"], case["salt"], case["fraction"]) == case["member"], case
print("installed", reverify_job.__version__, "at", reverify_job.__file__, "agrees with",
      len(vectors["membership"]), "vectors")
PY
"$t/venv/bin/python" -m reverify_job --fraction 0.25 --salt s optdigits-0001 | tee "$t/cli.txt"
grep -q "^fraction 0.25: members are the keys with h < 4611686018427387904$" "$t/cli.txt"
