#!/usr/bin/env bash
# CTest browser_status_page: the status page as an operator sees it, in Debian's headless
# chromium, from a running reverifyd with real verdicts in its SQLite store.
#  1. reverifyd on the demo config with three extra released versions (demo_daemon.sh --variety):
#     its first cycle ends with one passed, one failed:input-drift, one error:provision (retries
#     queued) and one uncalibrated verdict;
#  2. `reverify run --config` (same state_dir) records a newer error:provision for the version
#     that passed: the daemon must show it within a few seconds (it watches the store for other
#     writers), and the gate must still say verified, because an error says nothing of the model;
#  3. status_page.mjs (puppeteer-core + axe-core, pinned in package-lock.json, installed with
#     `npm ci` into the build folder) asserts what the pages show, then loads each page at 390 px
#     (a phone) and 1280 px, in light and dark colour schemes: no horizontal scroll, no table
#     clipped, axe finds no serious or critical violation and no colour-contrast node it could
#     not judge; it writes screenshots to $REVERIFY_BUILD_DIR/browser-test/.
# Fails (never skips) when chromium, node or npm is missing: scripts/setup.sh installs them.
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
cli="${REVERIFY_CLI:?run through ctest}"
source "$src/tests/services/lib.sh"
source "$src/tests/browser/node_setup.sh"
browser_node_setup status_page.mjs

out="$build/browser-test"
rm -rf "$out" && mkdir -p "$out"
t="$(mktemp -d)"
trap 'bash "$src/tests/examples/demo_daemon.sh" stop "$t"; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; tail -n 40 "$t/reverifyd.log" >&2; exit 1; }

bash "$src/tests/examples/demo_daemon.sh" start "$t" --variety
url=$(<"$t/url")

# The class of the latest verdict of MODEL@VERSION as the daemon serves it ("" if none yet).
latest() {
  curl -sf "$url/v1/models/digits-mlp/versions/$1" |
    /usr/bin/python3 -c 'import json,sys; v=json.load(sys.stdin)["last_verdict"]; print(v["class"] if v else "")'
}
latest_is() { [[ "$(latest "$1")" == "$2" ]]; }
for expected in 2026.11.1:passed 2026.11.3:failed:input-drift 2026.10.2:error:provision \
  2026.10.1:uncalibrated; do
  version=${expected%%:*} class=${expected#*:}
  wait_until 240 latest_is "$version" "$class" ||
    fail "digits-mlp@$version: expected $class, the daemon shows '$(latest "$version")'"
done

# 2. A CLI run beside the daemon, on the same store: its code mirror points nowhere.
status=0
"$cli" run digits-mlp@2026.11.1 --config "$t/tree/config/demo.yaml" \
  --code-mirror "https://git.example/vision/digits-trainer.git=$t/nowhere" >"$t/cli-run.txt" 2>&1 ||
  status=$?
[[ $status == 2 ]] || fail "reverify run: expected exit 2 (error:provision), got $status: $(cat "$t/cli-run.txt")"
SECONDS=0
wait_until 10 latest_is 2026.11.1 error:provision ||
  fail "the daemon did not show the CLI's verdict within 10 s (it shows '$(latest 2026.11.1)')"
echo "the daemon showed the CLI run's verdict after ${SECONDS} s"
curl -sf "$url/v1/gate/digits-mlp/2026.11.1" >/dev/null ||
  fail "an error:provision from the CLI made the gate refuse a verified version"

# `reverify status` leads with the same thing: the failure, then the error, ...; the pass keeps
# its verdict, with the newer error named beside it.
"$cli" status --url "$url" >"$t/status.txt" || fail "reverify status failed"
cat "$t/status.txt"
sed -n 2p "$t/status.txt" | grep -Eq '^digits-mlp@2026.11.3 +failed +failed:input-drift +[0-9]+ [a-z]+ ago ' ||
  fail "reverify status does not lead with the gate-blocking failure"
grep -Eq '^digits-mlp@2026.11.1 +fresh-with-error +passed .* newest attempt error:provision' \
  "$t/status.txt" || fail "reverify status does not show the pass with the newer error beside it"
"$cli" status --url "$url" --state failed >"$t/failed.txt" || fail "reverify status --state failed failed"
[[ $(tail -n +2 "$t/failed.txt" | cut -d' ' -f1) == digits-mlp@2026.11.3 ]] ||
  fail "reverify status --state failed does not list exactly the failing version: $(cat "$t/failed.txt")"

# 3. The pages, in a real browser.
node "$node_dir/status_page.mjs" "$url" "$out" || fail "status_page.mjs failed (screenshots: $out)"
echo "ok: status page checked in chromium; screenshots in $out"
