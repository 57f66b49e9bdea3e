#!/usr/bin/env bash
# The PyTorch example (examples/torch-orientation) released and verified through the `docker`
# runner, on the private dockerd + registry of the CTest fixture `docker`
# ($REVERIFY_SERVICES_DIR/docker.env) or, run by hand without it, its own
# (tests/services/docker_up.sh). The image: the python3-torch root file system copied from the installed packages
# (tests/services/torch_base.sh, cached) plus the trainer at /src, pushed to the registry and run
# by digest.
# The release is trained inside that image (release.sh with IMAGE=...), so release and rebuilds
# share one platform.
#  1. full rebuild at level bitwise -> passed (tensor hash equal, every check printed);
#  2. steps mode, first 50 steps -> passed, the steps check exact.
# The two traps (unseeded worker augmentation, another intra-op thread count) run on the process
# runner: examples/torch-orientation/traps.sh, tested by torch_traps.sh.
# TORCH_RUNS (default 5, to keep the suite short; release.sh's own default is 10) sets the number
# of seed-only runs of the release.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
# shellcheck source=tests/examples/docker_fixture.sh
source "$src/tests/examples/docker_fixture.sh"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
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
# k, the eval records each accuracy counts over: 391 images at 4 turns; 391 per turn.
ev = m["evaluation"]
assert ev["primary"]["examples"] == 1564, ev["primary"]
assert ev["segment_examples"]["rotation=90"] == 391 and len(ev["segment_examples"]) == 14, ev
assert sum(ev["segment_examples"][f"digit={d}"] for d in range(10)) == 1564, ev["segment_examples"]
assert m["tolerance"]["detect"] == {"accuracy": 0.02}, m["tolerance"]
print("release records torch", e["framework"]["version"], e["determinism"], e["threads"])
PY
"$cli" lint "$manifest" | tee "$t/lint.txt"
grep -q "readiness score: 100/100" "$t/lint.txt" || fail "lint finds something in the release"

# verify WANT_STATUS REPORT REGISTRY MODEL@VERSION [ARGS...]
verify() {
  local want="$1" report="$2" registry="$3" id="$4" got=0
  shift 4
  "$cli" run "$id" --config "$t/docker.yaml" --registry "$registry" "$@" >"$report" 2>&1 || got=$?
  cat "$report"
  [[ "$got" == "$want" ]] || fail "$id $*: expected exit status $want, got $got"
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

stamp "all PyTorch example checks passed"
