#!/usr/bin/env bash
# `reverifyd --config config/demo.yaml` verifies the demo's example with no flags: the manifest
# names its code as https://git.example/vision/digits-trainer.git, and only the config's
# code_mirrors says where that is on this machine. The daemon's first cycle must end in `passed`,
# seen by the gate (HTTP and `reverify gate`) and `reverify status`, with no provision error.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
source "$src/tests/services/lib.sh"
t="$(mktemp -d)"
trap 'bash "$src/tests/examples/demo_daemon.sh" stop "$t"; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$t/reverifyd.log" >&2; exit 1; }

bash "$src/tests/examples/demo_daemon.sh" start "$t"
url=$(<"$t/url")
gate_passes() { curl -sf "$url/v1/gate/digits-mlp/2026.11.1" >/dev/null; }
wait_until 240 gate_passes || fail "the gate did not pass within 240 s: $(curl -s "$url/v1/gate/digits-mlp/2026.11.1")"

"$cli" gate digits-mlp@2026.11.1 --max-age 1d --url "$url" || fail "reverify gate did not exit 0"
"$cli" status --url "$url" | tee "$t/status.txt"
grep -Eq "^digits-mlp@2026.11.1 +fresh +passed +[0-9]+ [a-z]+ ago " "$t/status.txt" || fail "status does not show passed"
! grep -q "error:provision" "$t/reverifyd.log" || fail "a provision error was logged"
echo "ok: reverifyd on config/demo.yaml verified digits-mlp@2026.11.1 (passed) with no flags"
