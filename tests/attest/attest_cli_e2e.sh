#!/usr/bin/env bash
# Signed verification summaries end to end from a CLI run (`reverify run --config`), checked by
# `reverify attest verify` and by the second implementation (dsse_reference.py, Python +
# python3-cryptography, no code shared):
#  1. the released digits-mlp@2026.11.1 verified with attestation on -> a PASSED summary recorded
#     with its verdict; exported; verified by both implementations, against the released weights;
#  2. its policy document hashes to the summary's policy digest;
#  3. tampered payload, swapped subject, truncated base64, wrong key, another predicate type:
#     each exit 2 with its reason; another model version, other weights, stale: exit 1;
#  4. an envelope the second implementation signed verifies with `reverify attest verify`;
#  5. a drifted dataset -> failed:input-drift -> a FAILED summary: exit 1;
#  6. key rotation: a new key file signs the next summary; the old one still verifies with the
#     old public key, the new one only with the new key (a bundle of both verifies either).
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
py=(/usr/bin/python3 "$src/tests/attest/dsse_reference.py")
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
url="https://git.example/vision/digits-trainer.git"
release="$src/examples/registry/digits-mlp/2026.11.1"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null

fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # STATUS OUTPUT_FILE COMMAND...: runs COMMAND, output to the file, checks the status
  local want="$1" out="$2" got=0
  shift 2
  "$@" >"$out" 2>&1 || got=$?
  cat "$out"
  [[ "$got" == "$want" ]] || fail "expected exit status $want, got $got: $*"
}

umask 077
openssl genpkey -algorithm ed25519 -out "$t/key.pem"
openssl pkey -in "$t/key.pem" -pubout -out "$t/key.pub"
write_config() {  # KEY_FILE REGISTRY
  cat >"$t/reverify.yaml" <<YAML
state_dir: state
sources: [{name: examples, kind: directory, root: $2}]
runner: {kind: process, process: {path_env: /usr/bin:/bin}}
models: {default: {timeout: 10m}}
attestation:
  key_file: $1
  verifier_id: https://reverify.example/ci
YAML
}
write_config key.pem "$release/../.."
run() {  # STATUS OUTPUT [ARGS...]
  local want="$1" out="$2"
  shift 2
  expect "$want" "$out" "$cli" run digits-mlp@2026.11.1 --config "$t/reverify.yaml" \
    --code-mirror "$url=$t/trainer" --work-dir "$t/work" "$@"
}

echo "== 1. a CLI run records a PASSED summary with its verdict"
run 0 "$t/run.txt"
grep -q "^signed summary: PASSED, key " "$t/run.txt" || fail "the run reports no signed summary"
expect 0 "$t/export.txt" "$cli" attest export digits-mlp@2026.11.1 --config "$t/reverify.yaml" \
  --out "$t/summary.json" --policy "$t/policy.json"
expect 0 "$t/verify.txt" "$cli" attest verify "$t/summary.json" --key "$t/key.pub" \
  --model digits-mlp@2026.11.1 --max-age 1d --weights "$release/model.safetensors" \
  --verifier-id https://reverify.example/ci --level REVERIFY_EQUIVALENT_V1
grep -q "^VERIFIED$" "$t/verify.txt" || fail "not VERIFIED"
grep -q 'the weights match subject "model.safetensors" by sha256' "$t/verify.txt" ||
  fail "the weights were not matched"
grep -q "primary:accuracy passed: .* in \[.*, .*\] (margin .*); catches shifts of" "$t/verify.txt" ||
  fail "no per-check summary"
expect 0 "$t/python.txt" "${py[@]}" verify "$t/summary.json" "$t/key.pub"
expect 0 "$t/json.txt" "$cli" attest verify "$t/summary.json" --key "$t/key.pub" --json

echo "== 2. the statement's subjects and policy digest, recomputed independently"
/usr/bin/python3 - "$t/python.txt" "$release" "$t/policy.json" "$t/key.pub" <<'PY'
import hashlib, json, subprocess, sys
gist = json.load(open(sys.argv[1]))
release, policy, pub = sys.argv[2], sys.argv[3], sys.argv[4]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
subjects = {s["name"]: s["digest"] for s in gist["subject"]}
assert subjects["model.safetensors"]["sha256"] == sha(release + "/model.safetensors"), subjects
assert subjects["manifest.json"]["sha256"] == sha(release + "/manifest.json"), subjects
manifest = json.load(open(release + "/manifest.json"))
assert subjects["model.safetensors"]["reverify-tensor-sha256"] == manifest["weights"]["tensor_sha256"]
assert gist["policy"]["digest"]["sha256"] == sha(policy), "policy digest"
assert gist["policy"]["uri"] == "reverify:tolerance-policy/digits-mlp@2026.11.1"
assert gist["verificationResult"] == "PASSED" and gist["verifiedLevels"] == ["REVERIFY_EQUIVALENT_V1"]
assert gist["resourceUri"] == "reverify:digits-mlp@2026.11.1"
der = subprocess.run(["openssl", "pkey", "-pubin", "-in", pub, "-outform", "DER"],
                     capture_output=True, check=True).stdout
assert gist["keyid"] == hashlib.sha256(der).hexdigest(), "key id"
print("subjects, policy digest and key id recomputed: all equal")
PY

echo "== 3. rejected: each with its reason"
for kind in payload subject truncate; do
  "${py[@]}" tamper "$kind" "$t/summary.json" "$t/bad-$kind.json"
done
expect 2 "$t/r.txt" "$cli" attest verify "$t/bad-payload.json" --key "$t/key.pub"
grep -q "INVALID: bad signature" "$t/r.txt" || fail "tampered payload: no reason"
expect 2 "$t/r.txt" "$cli" attest verify "$t/bad-subject.json" --key "$t/key.pub"
grep -q "INVALID: bad signature" "$t/r.txt" || fail "swapped subject: no reason"
expect 2 "$t/r.txt" "$cli" attest verify "$t/bad-truncate.json" --key "$t/key.pub"
grep -q "INVALID: DSSE envelope: payload: not valid base64" "$t/r.txt" || fail "truncated: no reason"
"${py[@]}" keygen "$t/other.pem" "$t/other.pub"
expect 2 "$t/r.txt" "$cli" attest verify "$t/summary.json" --key "$t/other.pub"
grep -q "INVALID: wrong key" "$t/r.txt" || fail "wrong key: no reason"
/usr/bin/python3 - "$t/summary.json" "$t/provenance.json" <<'PY'
import base64, json, sys
statement = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))
statement["predicateType"] = "https://slsa.dev/provenance/v1"
json.dump(statement, open(sys.argv[2], "w"))
PY
"${py[@]}" sign "$t/provenance.json" "$t/other.pem" "$t/bad-type.json"
expect 2 "$t/r.txt" "$cli" attest verify "$t/bad-type.json" --key "$t/other.pub"
grep -q 'predicateType: is "https://slsa.dev/provenance/v1"' "$t/r.txt" || fail "type: no reason"
expect 1 "$t/r.txt" "$cli" attest verify "$t/summary.json" --key "$t/key.pub" \
  --model digits-mlp@2026.11.2
grep -q "NOT ACCEPTED: another model version" "$t/r.txt" || fail "model: no reason"
expect 1 "$t/r.txt" "$cli" attest verify "$t/summary.json" --key "$t/key.pub" \
  --weights "$release/predictions.npy"
grep -q "NOT ACCEPTED: another subject" "$t/r.txt" || fail "weights: no reason"
# Ages are whole seconds: in the second the summary was signed it is 0 s old, which --max-age 0s
# accepts. A second later it is stale (this raced on a fast run: the test took 1.4 s in all).
sleep 1.1
expect 1 "$t/r.txt" "$cli" attest verify "$t/summary.json" --key "$t/key.pub" --max-age 0s
grep -q "NOT ACCEPTED: stale" "$t/r.txt" || fail "age: no reason"

echo "== 4. an envelope signed by the second implementation verifies"
sha() { sha256sum "$1" | cut -d' ' -f1; }
tensor=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["weights"]["tensor_sha256"])' "$release/manifest.json")
"${py[@]}" statement "$t/py-statement.json" digits-mlp 2026.11.1 "$(sha "$release/model.safetensors")" \
  "$tensor" "$(sha "$release/manifest.json")" PASSED "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
"${py[@]}" sign "$t/py-statement.json" "$t/other.pem" "$t/py-envelope.json"
expect 0 "$t/r.txt" "$cli" attest verify "$t/py-envelope.json" --key "$t/other.pub" \
  --model digits-mlp@2026.11.1 --max-age 1h --weights "$release/model.safetensors"
"${py[@]}" statement "$t/py-failed.json" digits-mlp 2026.11.1 "$(sha "$release/model.safetensors")" \
  "$tensor" "$(sha "$release/manifest.json")" FAILED "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
"${py[@]}" sign "$t/py-failed.json" "$t/other.pem" "$t/py-failed-envelope.json"
expect 1 "$t/r.txt" "$cli" attest verify "$t/py-failed-envelope.json" --key "$t/other.pub"
grep -q "NOT ACCEPTED: verificationResult is FAILED" "$t/r.txt" || fail "FAILED: no reason"

echo "== 5. a drifted dataset: a FAILED summary"
mkdir -p "$t/copy/examples"
cp -r "$src/examples/registry" "$src/examples/digits" "$t/copy/examples/"
sed -i '2s/^\(optdigits-[0-9]*\),[0-9]*,/\1,7,/' "$t/copy/examples/digits/data/shard-05.csv"
run 1 "$t/drift.txt" --registry "$t/copy/examples/registry"
grep -q "^signed summary: FAILED" "$t/drift.txt" || fail "no FAILED summary"
expect 0 "$t/r.txt" "$cli" attest export digits-mlp@2026.11.1 --config "$t/reverify.yaml" \
  --out "$t/failed.json"
expect 1 "$t/r.txt" "$cli" attest verify "$t/failed.json" --key "$t/key.pub"
grep -q "verificationResult is FAILED (failed:input-drift" "$t/r.txt" || fail "no drift reason"
# The passed one is still there by its verification id.
first=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["statement"]["predicate"]["reverify:verification/v1"]["verificationId"])' <"$t/json.txt")
expect 0 "$t/r.txt" "$cli" attest export digits-mlp@2026.11.1 --config "$t/reverify.yaml" \
  --verification "$first" --out "$t/again.json"
cmp "$t/summary.json" "$t/again.json" || fail "the stored summary changed"

echo "== 6. key rotation"
openssl genpkey -algorithm ed25519 -out "$t/key2.pem"
openssl pkey -in "$t/key2.pem" -pubout -out "$t/key2.pub"
write_config key2.pem "$release/../.."
run 0 "$t/run2.txt"
expect 0 "$t/r.txt" "$cli" attest export digits-mlp@2026.11.1 --config "$t/reverify.yaml" \
  --out "$t/rotated.json"
cat "$t/key.pub" "$t/key2.pub" >"$t/bundle.pub"
expect 0 "$t/r.txt" "$cli" attest verify "$t/rotated.json" --key "$t/key2.pub"
expect 2 "$t/r.txt" "$cli" attest verify "$t/rotated.json" --key "$t/key.pub"
expect 0 "$t/r.txt" "$cli" attest verify "$t/rotated.json" --key "$t/bundle.pub"
expect 0 "$t/r.txt" "$cli" attest verify "$t/summary.json" --key "$t/bundle.pub"
chmod 644 "$t/key2.pem"
expect 2 "$t/r.txt" "$cli" run digits-mlp@2026.11.1 --config "$t/reverify.yaml"
grep -q "attestation.key_file: .*permissions 0644 are too open" "$t/r.txt" ||
  fail "a readable key was not refused"
echo "PASS"
