#!/usr/bin/env bash
# A reverifyd running the demo's own config (config/demo.yaml, unchanged but for a free port) on
# a copy of the repository's config/ and examples/ under DIR, so every relative path in the config
# resolves exactly as in the demo. As scripts/demo.sh does, the trainer repository is rebuilt
# where demo.yaml's code_mirrors points (out/demo/trainer; nothing else tells the daemon where the
# code is) and the attestation key is written to out/demo/attest.
#
#   demo_daemon.sh start DIR [--variety|--failed-variant]   # writes DIR/url, DIR/reverifyd.pid
#   demo_daemon.sh stop DIR                # SIGTERM (then SIGKILL), by the recorded pid
#
# --variety adds three released versions beside the example, so the daemon's first cycle ends
# with one verdict of each kind an operator must tell apart:
#   digits-mlp@2026.11.1  the example as released                    -> passed
#   digits-mlp@2026.11.3  its dataset hash recorded wrong (backfill)  -> failed:input-drift
#   digits-mlp@2026.10.2  code.repo on a host nobody mirrors          -> error:provision
#   digits-mlp@2026.10.1  released without seed runs                  -> uncalibrated
# --failed-variant adds the demo's failed variant (scripts/demo.sh step 4) beside the example, and
# the example released without seed runs:
#   digits-mlp@2026.11.2  trainer with one unpinned seed, level bitwise -> failed:out-of-tolerance
#   digits-mlp@2026.10.1  released without seed runs                  -> uncalibrated
# released by examples/digits/release.sh with VARIANT_RUNS seed runs (5 unless set); its trainer
# commit sits on top of the example's in the mirrored repository, so the daemon rebuilds both.
# Logs: DIR/reverifyd.log (the daemon's stderr).
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
source "$src/tests/services/lib.sh"

cmd=${1:?usage: demo_daemon.sh start|stop DIR [--variety]}
dir=${2:?usage: demo_daemon.sh start|stop DIR [--variety]}

if [[ $cmd == stop ]]; then
  stop_pid "$dir/reverifyd.pid" 30
  exit 0
fi

tree="$dir/tree"
mkdir -p "$tree"
cp -r "$src/config" "$src/examples" "$tree/"
if [[ ${3:-} == --failed-variant ]]; then
  PATCH="$src/examples/digits/variants/unpinned-init.patch" LEVEL=bitwise VERSION=2026.11.2 \
    RUNS="${VARIANT_RUNS:-5}" TRAINER_REPO="$tree/out/demo/trainer" \
    "$src/examples/digits/release.sh" "$build/cli/reverify" "$tree/examples/registry" >/dev/null
else
  "$src/examples/digits/build_trainer_repo.sh" "$tree/out/demo/trainer" >/dev/null
fi
# The demo config signs each verdict's summary with the key scripts/demo.sh writes.
mkdir -p "$tree/out/demo/attest"
(umask 077 && openssl genpkey -algorithm ed25519 -out "$tree/out/demo/attest/ed25519.pem")

if [[ ${3:-} == --variety || ${3:-} == --failed-variant ]]; then
  /usr/bin/python3 - "$tree/examples/registry/digits-mlp" "$3" <<'PY'
import json, os, shutil, sys
root = sys.argv[1]
released = os.path.join(root, "2026.11.1")
def variant(version, edit):
    dest = os.path.join(root, version)
    shutil.copytree(released, dest)
    path = os.path.join(dest, "manifest.json")
    manifest = json.load(open(path))
    manifest["version"] = version
    edit(manifest)
    json.dump(manifest, open(path, "w"), indent=2)
def drifted(m):
    digest = m["data"]["snapshot"]["sha256"]
    m["data"]["snapshot"]["sha256"] = ("0" if digest[0] != "0" else "1") + digest[1:]
if sys.argv[2] == "--variety":
    variant("2026.11.3", drifted)
    variant("2026.10.2", lambda m: m["code"].update(repo="https://git.example/vision/retired-trainer.git"))
variant("2026.10.1", lambda m: m.pop("tolerance"))
PY
fi

port=$(free_port)
printf '\napi: {port: %s}   # added by tests/examples/demo_daemon.sh\n' "$port" >>"$tree/config/demo.yaml"
echo "http://127.0.0.1:$port" >"$dir/url"
"$build/daemon/reverifyd" --config "$tree/config/demo.yaml" 2>"$dir/reverifyd.log" &
echo $! >"$dir/reverifyd.pid"
if ! wait_until 30 curl -sf "http://127.0.0.1:$port/healthz"; then
  cat "$dir/reverifyd.log" >&2
  stop_pid "$dir/reverifyd.pid"
  echo "demo_daemon.sh: reverifyd did not answer /healthz within 30 s" >&2
  exit 1
fi
