#!/usr/bin/env bash
# CTest contrib_prometheus_rules: the shipped alert rules and dashboard are valid.
#  1. `promtool check rules` on contrib/prometheus/reverify.rules.yml;
#  2. `promtool test rules` on its unit tests (a firing and a quiet case for every alert; the
#     test file's own coverage is checked too: every alert of the rules file is tested);
#  3. every query of contrib/grafana/reverify-dashboard.json parses as PromQL (each is checked
#     as a recording rule by promtool).
# That every metric name both use is one reverifyd really exposes is checked against a running
# daemon by daemon_operations_itest. Fails (never skips) when promtool is missing:
# scripts/setup.sh installs it (Debian's prometheus package).
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
command -v promtool >/dev/null || { echo "FAIL: promtool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
rules="$src/contrib/prometheus/reverify.rules.yml"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT

promtool check rules "$rules"
(cd "$src/contrib/prometheus" && promtool test rules reverify.rules.test.yml)

/usr/bin/python3 - "$rules" "$src/contrib/prometheus/reverify.rules.test.yml" \
  "$src/contrib/grafana/reverify-dashboard.json" "$t/dashboard.rules.yml" <<'PY'
import json, re, sys
rules, tests, dashboard, out = sys.argv[1:]
alerts = set(re.findall(r"^\s*- alert: (\w+)", open(rules).read(), re.M))
tested = set(re.findall(r"alertname: (\w+)", open(tests).read()))
missing = sorted(alerts - tested)
if missing:
    sys.exit(f"FAIL: alerts without a promtool test: {missing}")
print(f"ok: all {len(alerts)} alerts have promtool tests")
exprs = []
def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            exprs.append(node["expr"])
        for value in node.values():
            walk(value)
    elif isinstance(node, list):
        for value in node:
            walk(value)
walk(json.load(open(dashboard)))
if not exprs:
    sys.exit("FAIL: the dashboard has no queries")
with open(out, "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, expr in enumerate(exprs):
        f.write(f"      - record: dashboard:query_{i}\n        expr: {json.dumps(expr)}\n")
print(f"ok: {len(exprs)} dashboard queries written for promtool")
PY
promtool check rules "$t/dashboard.rules.yml"
echo "ok: rules checked and tested; dashboard queries parse"
