#!/usr/bin/env bash
# The PyTorch example (examples/torch-orientation) released and verified through the `docker`
# runner, on the private dockerd + registry of the CTest fixture `docker`
# ($REVERIFY_SERVICES_DIR/docker.env) or, run by hand without it, its own
# (tests/services/docker_up.sh). The image: the mmdebstrap python3-torch root file system
# (tests/services/torch_base.sh, cached) plus the trainer at /src, pushed to the registry and run
# by digest.
# The release is trained inside that image (release.sh with IMAGE=...), so release and rebuilds
# share one platform.
#  1. full rebuild at level bitwise -> passed (tensor hash equal, every check printed);
#  2. steps mode, first 50 steps -> passed, the steps check exact;
#  3. (process runner) the rebuild with 2 intra-op threads instead of the recorded 1: at level
#     bitwise -> whatever the platform gives (failed naming the tensors if the weights moved), at
#     level equivalent -> passed within the seed-run bands;
#  4. (released and rebuilt on this machine) the variant whose worker_init_fn no
#     longer seeds the dataset's generator: a steps rebuild (first 50 steps) -> failed on the
#     steps check; a full rebuild at level bitwise -> failed on the weights; at level equivalent
#     -> reported as observed.
# Stages 3 and 4 run only with TORCH_TRAPS=1 (by hand, not in the suite): on 2 shared cores the
# 2-thread rebuild oversubscribes them (2 loader workers + 2 OpenMP threads; 725 s measured under
# load against 48.5 s for 1 thread) and the variant needs its own release.
# TORCH_RUNS (default 5, to keep the suite short; release.sh's own default is 10) sets the number
# of seed-only runs of the release.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
svc="${REVERIFY_SERVICES_DIR:-}"
own_services=0
if [[ -z "$svc" || ! -s "$svc/docker.env" ]]; then
  svc="$t/services"
  own_services=1
fi
cleanup() {
  ((own_services == 0)) || bash "$src/tests/services/docker_down.sh" "$svc" >/dev/null 2>&1 || true
  rm -rf "$t"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }

((own_services == 0)) || bash "$src/tests/services/docker_up.sh" "$svc" >/dev/null
# shellcheck disable=SC1091
source "$svc/docker.env"
export DOCKER_HOST="unix://$DOCKER_SOCK"
example="$src/examples/torch-orientation"

stamp "trainer image"
# The image is the base root file system with the trainer (as build_trainer_repo.sh commits it)
# appended at /src, imported in one step: a `docker build` on the vfs driver would copy the 1.2 GB
# root file system once per instruction.
base_tar="$(bash "$src/tests/services/torch_base.sh")"
"$example/build_trainer_repo.sh" "$t/rootfs/src" >/dev/null
rm -rf "$t/rootfs/src/.git"
cp "$base_tar" "$t/image.tar"
tar -C "$t/rootfs" --owner=0 --group=0 -rf "$t/image.tar" ./src
docker import --change "WORKDIR /src" "$t/image.tar" "$REGISTRY/torch-trainer:test" >/dev/null
rm -f "$t/image.tar"
docker push -q "$REGISTRY/torch-trainer:test" >/dev/null
image="$(docker inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' \
  "$REGISTRY/torch-trainer:test" | grep -m1 "^$REGISTRY/torch-trainer@")"
echo "trainer image: $image"

stamp "release (1 + ${TORCH_RUNS:-5} seed-only runs inside the image)"
IMAGE="$image" RUNS="${TORCH_RUNS:-5}" TRAINER_REPO="$t/trainer" \
  "$example/release.sh" "$cli" "$t/registry"
manifest="$t/registry/digit-orientation-cnn/2026.11.1/manifest.json"
/usr/bin/python3 - "$manifest" "$image" <<'PY' || fail "the release does not record the PyTorch facts"
import json, sys
m = json.load(open(sys.argv[1]))
e = m["environment"]
assert e["image"] == sys.argv[2], e.get("image")
assert e["framework"]["name"] == "torch" and e["framework"]["version"].startswith("1.13"), e["framework"]
assert e["determinism"] == {"deterministic_algorithms": True, "cudnn_deterministic": True,
                            "cudnn_benchmark": False, "tf32": False}, e["determinism"]
assert e["threads"] == {"intra_op": 1, "inter_op": 1, "dataloader_workers": 2}, e["threads"]
assert e["env"]["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8", e["env"]
assert "cuda" not in e.get("accelerator", {}) and "cudnn" not in e.get("accelerator", {}), e
assert m["level"] == "bitwise" and len(m["evaluation"]["steps"]["values"]) == m["config"]["steps"]
print("release records torch", e["framework"]["version"], e["determinism"], e["threads"])
PY
"$cli" lint "$manifest" | tee "$t/lint.txt"
grep -q "readiness score: 100/100" "$t/lint.txt" || fail "lint finds something in the release"

cat >"$t/docker.yaml" <<YAML
state_dir: $t/state
runner:
  kind: docker
  docker: {socket: $DOCKER_SOCK, network_mode: none}
YAML
# verify WANT_STATUS REPORT REGISTRY MODEL@VERSION [ARGS...]
verify() {
  local want="$1" report="$2" registry="$3" id="$4" got=0
  shift 4
  "$cli" run "$id" --config "$t/docker.yaml" --registry "$registry" "$@" >"$report" 2>&1 || got=$?
  cat "$report"
  [[ "$got" == "$want" ]] || fail "$id $*: expected exit status $want, got $got"
}
# derive FROM_DIR TO_DIR VERSION PYTHON_EDIT: a copy of the release in FROM_DIR as VERSION in
# TO_DIR, its manifest edited by PYTHON_EDIT (statements on `m`), relative URIs kept valid.
derive() {
  local from="$1" to="$2"
  mkdir -p "$to"
  cp "$from"/* "$to/"
  /usr/bin/python3 - "$to/manifest.json" "$3" "$(realpath --relative-to="$to" "$from")" "$4" <<'PY'
import json, os, sys
path, version, back, edit = sys.argv[1:]
m = json.load(open(path))
m["version"] = version
for ref in (m["data"]["snapshot"], m["evaluation"]["set"]):
    ref["uri"] = os.path.normpath(os.path.join(back, ref["uri"]))
exec(edit)
json.dump(m, open(path, "w"), indent=2)
PY
}

stamp "1. full rebuild through the docker runner"
verify 0 "$t/full.txt" "$t/registry" digit-orientation-cnn@2026.11.1
grep -q "docker runner" "$t/full.txt" || fail "not run by the docker runner"
grep -q "^verdict: passed" "$t/full.txt" || fail "no passed verdict"
grep -Eq "PASS +weights" "$t/full.txt" || fail "weights check missing"
grep -Eq "PASS +primary:accuracy" "$t/full.txt" || fail "primary check missing"
grep -Eq "PASS +segment:rotation=180:accuracy" "$t/full.txt" || fail "segment check missing"

stamp "2. steps mode, first 50 steps"
verify 0 "$t/steps.txt" "$t/registry" digit-orientation-cnn@2026.11.1 --mode steps --max-steps 50
grep -Eq "PASS +steps" "$t/steps.txt" || fail "steps check missing"
grep -q "first 50 steps" "$t/steps.txt" || fail "steps mode not reported"

# The two traps run on the process runner: this machine's python3-torch is the image's (same
# Debian packages; release and seed runs came out bit-identical here and in the image), and a
# docker rebuild costs a copy of the 1.2 GB root file system (vfs) on top of the training.
# process WANT_STATUS REPORT REGISTRY MODEL@VERSION TRAINER_REPO [ARGS...]
process() {
  local want="$1" report="$2" registry="$3" id="$4" repo="$5" got=0
  shift 5
  "$cli" run "$id" --registry "$registry" --work-dir "$t/work" \
    --code-mirror "https://git.example/vision/digit-orientation.git=$repo" "$@" >"$report" 2>&1 ||
    got=$?
  cat "$report"
  [[ "$got" == "$want" ]] || fail "$id $*: expected exit status $want, got $got"
}
release_dir="$t/registry/digit-orientation-cnn"

if [[ "${TORCH_TRAPS:-0}" != 1 ]]; then
  stamp "all PyTorch example checks passed (stages 3 and 4: TORCH_TRAPS=1)"
  exit 0
fi
stamp "3. rebuild with 2 intra-op threads (recorded: 1), process runner"
derive "$release_dir/2026.11.1" "$t/threads/digit-orientation-cnn/2026.11.2" 2026.11.2 \
  'm["config"]["intra_op_threads"] = 2'
derive "$release_dir/2026.11.1" "$t/threads/digit-orientation-cnn/2026.11.3" 2026.11.3 \
  'm["config"]["intra_op_threads"] = 2; m["level"] = "equivalent"'
status=0
"$cli" run digit-orientation-cnn@2026.11.2 --registry "$t/threads" --work-dir "$t/work" \
  --code-mirror "https://git.example/vision/digit-orientation.git=$t/trainer" \
  >"$t/threads-bitwise.txt" 2>&1 || status=$?
cat "$t/threads-bitwise.txt"
if grep -Eq "FAIL +weights" "$t/threads-bitwise.txt"; then
  [[ "$status" == 1 ]] || fail "weights differ but exit status $status"
  grep -q "^verdict: failed:out-of-tolerance" "$t/threads-bitwise.txt" || fail "no failed verdict"
  grep -q "tensors that differ from the released weights" "$t/threads-bitwise.txt" ||
    fail "the tensors that differ are not named"
  echo "OBSERVED: 2 intra-op threads change the weights (not bitwise-stable on this CPU)"
else
  [[ "$status" == 0 ]] || fail "weights equal but exit status $status"
  echo "OBSERVED: 2 intra-op threads leave the weights bit-identical on this CPU"
fi
process 0 "$t/threads-equivalent.txt" "$t/threads" digit-orientation-cnn@2026.11.3 "$t/trainer"
grep -q "^verdict: passed" "$t/threads-equivalent.txt" || fail "equivalent level did not pass"

stamp "4. the variant with unseeded worker augmentation, released like the real one"
RUNS=3 VERSION=2026.11.9 PATCH="$example/variants/unseeded-workers.patch" \
  TRAINER_REPO="$t/variant-trainer" "$example/release.sh" "$cli" "$t/registry"
process 1 "$t/variant-steps.txt" "$t/registry" digit-orientation-cnn@2026.11.9 \
  "$t/variant-trainer" --mode steps --max-steps 50
grep -Eq "FAIL +steps" "$t/variant-steps.txt" || fail "the steps check did not catch the variant"
process 1 "$t/variant-full.txt" "$t/registry" digit-orientation-cnn@2026.11.9 "$t/variant-trainer"
grep -Eq "FAIL +weights" "$t/variant-full.txt" || fail "the weights check did not catch the variant"
derive "$release_dir/2026.11.9" "$t/variant/digit-orientation-cnn/2026.11.10" 2026.11.10 \
  'm["level"] = "equivalent"'
status=0
"$cli" run digit-orientation-cnn@2026.11.10 --registry "$t/variant" --work-dir "$t/work" \
  --code-mirror "https://git.example/vision/digit-orientation.git=$t/variant-trainer" \
  >"$t/variant-equivalent.txt" 2>&1 || status=$?
cat "$t/variant-equivalent.txt"
echo "OBSERVED: the variant at level equivalent, full rebuild: exit $status," \
  "$(grep '^verdict:' "$t/variant-equivalent.txt")"
stamp "all PyTorch example checks passed"
