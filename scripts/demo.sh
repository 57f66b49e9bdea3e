#!/usr/bin/env bash
# README command 1: the whole loop on a real (small) model, with the `process` runner.
#   1. installs what is missing and builds the `reverify` CLI;
#   2. verifies the released example digits-mlp@2026.11.1 -> a report of every check, `passed`,
#      and prints its signed summary (SLSA VSA in a DSSE envelope, Ed25519), verified offline
#      against the demo's public key and the released weights;
#   3. a backfilled dataset (one shard rewritten after release) -> failed:input-drift, caught in
#      preflight before any training, naming the changed file (a copy of the release: printed,
#      not recorded in the demo's state);
#   4. a variant whose trainer lost one seed (weights initialised from an unseeded generator),
#      released at level `bitwise` -> the weights check fails, naming the tensors that differ;
#   5. shows the pages the variant's failure delivered to the local sink (out/demo/pages.jsonl).
# Everything it writes is under out/demo/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

if [[ -n "${REVERIFY_CLI:-}" ]]; then  # the test suite (tests/examples/walkthrough_clean.sh): built
  reverify="$REVERIFY_CLI"
else
  bash scripts/setup.sh
  cmake --preset dev >/dev/null
  cmake --build --preset dev --target reverify
  reverify="$root/build/dev/cli/reverify"
fi

demo="$root/out/demo"
rm -rf "$demo"
mkdir -p "$demo"
start=$SECONDS
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
expect() {  # STATUS COMMAND...: runs COMMAND, fails the demo unless it exits with STATUS
  local want="$1" got=0
  shift
  "$@" || got=$?
  if [[ "$got" != "$want" ]]; then
    echo "demo: expected exit status $want, got $got" >&2
    exit 1
  fi
}

# The released manifest names its code as https://git.example/vision/digits-trainer.git at a
# fixed commit; the demo rebuilds that repository locally (same commit hash), where
# config/demo.yaml's code_mirrors points.
url="https://git.example/vision/digits-trainer.git"
examples/digits/build_trainer_repo.sh "$demo/trainer" >/dev/null

# Every passed or failed verdict gets a signed summary (config/demo.yaml, attestation): the demo's
# own Ed25519 key, readable by its owner only, and the public key a release gate would trust.
mkdir -p "$demo/attest"
(umask 077 && openssl genpkey -algorithm ed25519 -out "$demo/attest/ed25519.pem")
openssl pkey -in "$demo/attest/ed25519.pem" -pubout -out "$demo/attest/ed25519.pub"

step "1/4 verify the released example (expect: passed)"
expect 0 "$reverify" run digits-mlp@2026.11.1 --config config/demo.yaml

step "2/4 its signed summary, exported and verified offline (expect: VERIFIED)"
"$reverify" attest export digits-mlp@2026.11.1 --config config/demo.yaml \
  --out "$demo/attest/digits-mlp@2026.11.1.json"
expect 0 "$reverify" attest verify "$demo/attest/digits-mlp@2026.11.1.json" \
  --key "$demo/attest/ed25519.pub" --model digits-mlp@2026.11.1 --max-age 1d \
  --weights examples/registry/digits-mlp/2026.11.1/model.safetensors

# A copy of the release with its data backfilled is not the release: its verdict is printed, not
# recorded in the demo's state (no --config), so the status page keeps saying what the release
# itself gets.
step "3/4 a backfilled dataset: one shard rewritten after release (expect: failed:input-drift)"
mkdir -p "$demo/backfill/examples"
cp -r examples/registry examples/digits "$demo/backfill/examples/"
# The backfill relabels two records and appends a late-arriving one to shard-03.csv.
/usr/bin/python3 - "$demo/backfill/examples/digits/data/shard-03.csv" <<'PY'
import sys
path = sys.argv[1]
lines = open(path).read().splitlines()
for i in (5, 9):
    fields = lines[i].split(",")
    fields[1] = str((int(fields[1]) + 1) % 10)
    lines[i] = ",".join(fields)
lines.append(lines[-1].replace(lines[-1].split(",")[0], "optdigits-9999", 1))
open(path, "w").write("\n".join(lines) + "\n")
PY
expect 1 "$reverify" run digits-mlp@2026.11.1 --registry "$demo/backfill/examples/registry" \
  --code-mirror "$url=$demo/trainer"

step "4/4 a variant trainer with one unpinned seed, released as bitwise (expect: a failure)"
PATCH="$root/examples/digits/variants/unpinned-init.patch" LEVEL=bitwise VERSION=2026.11.2 \
  TRAINER_REPO="$demo/variant-trainer" \
  examples/digits/release.sh "$reverify" "$demo/variant/registry"
# The variant's trainer lives elsewhere: --code-mirror adds to the config's mirrors.
expect 1 "$reverify" run digits-mlp@2026.11.2 --config config/demo.yaml \
  --registry "$demo/variant/registry" --code-mirror "$url=$demo/variant-trainer"

step "pages delivered to the local sink ($demo/pages.jsonl)"
/usr/bin/python3 - "$demo/pages.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    page = json.loads(line)
    print(f"- {page['action']:8} {page['dedup_key']}  [{page.get('severity', '')}]")
    print(f"  {page['summary']}")
PY
echo
echo "demo finished in $((SECONDS - start)) s after set-up and build"
