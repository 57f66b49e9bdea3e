#!/usr/bin/env bash
# CTest browser_failed_variant: what the owner of the demo's failed variant sees and can do.
#  1. reverifyd on the demo config with the demo's failed variant released beside the example
#     (demo_daemon.sh --failed-variant: digits-mlp@2026.11.2, one unpinned seed, level bitwise)
#     and the example released without seed runs (digits-mlp@2026.10.1, uncalibrated), all three
#     verified by the daemon's first cycle;
#  2. failed_variant.mjs opens the variant's verification page in headless chromium at 1280x800:
#     the headline, the failing check and its numbers above the fold, failures first, no note
#     styled as a failure, the differing tensors on the page; the status page's cell short and
#     plain; and it collects every command the pages suggest;
#  3. the commands the pages, the delivered pages (the file sink's summaries), `reverify run`'s
#     report of the uncalibrated version, the gate's reasons, `reverify plan` and the daemon's log
#     suggest are run as printed: each must exit 0, or with its documented code (`reverify gate`
#     1 = not verified; `reverify run` 1 failed:*, 3 uncalibrated).
# Screenshot: $REVERIFY_BUILD_DIR/browser-test-variant/failed-variant-1280x800.png.
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
cli="${REVERIFY_CLI:?run through ctest}"
source "$src/tests/services/lib.sh"
source "$src/tests/browser/node_setup.sh"
browser_node_setup failed_variant.mjs

out="$build/browser-test-variant"
rm -rf "$out" && mkdir -p "$out"
t="$(mktemp -d)"
trap 'bash "$src/tests/examples/demo_daemon.sh" stop "$t"; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; tail -n 40 "$t/reverifyd.log" >&2; exit 1; }

bash "$src/tests/examples/demo_daemon.sh" start "$t" --failed-variant
url=$(<"$t/url")
grep -q "pager.public_url is not set: pages link $url" "$t/reverifyd.log" ||
  fail "reverifyd did not say at start that pages link its own loopback address"

latest() {  # the class of the latest verdict of VERSION ("" if none yet)
  curl -sf "$url/v1/models/digits-mlp/versions/$1" |
    /usr/bin/python3 -c 'import json,sys; v=json.load(sys.stdin)["last_verdict"]; print(v["class"] if v else "")'
}
latest_is() { [[ "$(latest "$1")" == "$2" ]]; }
for expected in 2026.11.1:passed 2026.11.2:failed:out-of-tolerance 2026.10.1:uncalibrated; do
  version=${expected%%:*} class=${expected#*:}
  wait_until 300 latest_is "$version" "$class" ||
    fail "digits-mlp@$version: expected $class, the daemon shows '$(latest "$version")'"
done
id=$(curl -sf "$url/v1/models/digits-mlp/versions/2026.11.2" |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["last_verdict"]["id"])')

node "$node_dir/failed_variant.mjs" "$url" "$out" "$id" || fail "failed_variant.mjs failed (screenshot: $out)"

# The pages delivered to the demo's file sink link the verification's HTML page.
pages="$t/tree/out/demo/pages.jsonl"
/usr/bin/python3 - "$pages" "$url" "$id" "$out/commands.txt" <<'PY' || fail "the delivered pages"
import json, re, sys
pages, url, vid, commands = sys.argv[1:]
events = [json.loads(line) for line in open(pages)]
variant = [e for e in events if e.get("dedup_key") == "reverify/digits-mlp/2026.11.2"]
assert variant, "no page for the variant"
links = [l.get("href") for l in variant[-1].get("links", [])]
assert f"{url}/verifications/{vid}" in links, f"the page links {links}, not {url}/verifications/{vid}"
summary = variant[-1]["summary"]
print("variant page summary:", summary)
assert "moved" not in summary.split(":", 2)[-1][:80], "the summary leads with a move, not the cause"
with open(commands, "a") as out:
    for e in events:
        for command in re.findall(r"`(reverify [^`]+)`", e.get("summary", "")):
            out.write(command + "\n")
PY

# `reverify run`'s report suggests commands too: the uncalibrated version's, beside the daemon.
status=0
"$cli" run digits-mlp@2026.10.1 --config "$t/tree/config/demo.yaml" >"$t/run-report.txt" 2>&1 ||
  status=$?
[[ $status == 3 ]] || fail "reverify run of the uncalibrated version: exit $status, not 3: $(tail -n 5 "$t/run-report.txt")"
grep -o '`reverify [^`]*`' "$t/run-report.txt" | tr -d '`' >>"$out/commands.txt" || true

# The gate's reasons, `reverify plan`'s output and the daemon's log suggest commands too.
for version in 2026.11.1 2026.11.2 2026.10.1; do
  curl -s "$url/v1/gate/digits-mlp/$version" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])'
done >"$t/gate-reasons.txt"
"$cli" plan --config "$t/tree/config/demo.yaml" >"$t/plan.txt" || fail "reverify plan failed"
cat "$t/gate-reasons.txt" "$t/plan.txt" "$t/reverifyd.log" | grep -o '`reverify [^`]*`' | tr -d '`' \
  >>"$out/commands.txt" || true

# 3. Every suggested command, run as printed (`reverify` is this build's CLI).
mkdir -p "$t/bin" && ln -sf "$cli" "$t/bin/reverify"
sort -u "$out/commands.txt" >"$t/commands.txt"
ran=0
while IFS= read -r command; do
  case "$command" in
    "reverify gate "*) allowed="0 1" ;;  # 1: not verified (the variant failed), documented
    "reverify run "*) allowed="0 1 3" ;;
    *) allowed="0" ;;
  esac
  echo "running: $command"
  status=0
  PATH="$t/bin:$PATH" timeout 300 bash -c "$command" >"$t/command.out" 2>&1 </dev/null || status=$?
  [[ " $allowed " == *" $status "* ]] ||
    fail "\`$command\` exited $status (allowed: $allowed): $(tail -n 5 "$t/command.out")"
  ran=$((ran + 1))
done <"$t/commands.txt"
grep -q "^reverify gate digits-mlp@2026.11.2 .*--config " "$t/commands.txt" ||
  fail "no page suggested the variant's gate command with its --config"
grep -q "^reverify calibrate digits-mlp@2026.10.1 .*--config " "$t/commands.txt" ||
  fail "no page suggested calibrating the uncalibrated version with its --config"
echo "ok: $ran suggested command(s) ran as printed; screenshot in $out"
