#!/usr/bin/env bash
# Releases the PyTorch example the way a real training pipeline would: builds the trainer's git
# repository (build_trainer_repo.sh), trains digit-orientation-cnn once with its recorded seeds and
# RUNS more times seed-only (REVERIFY_SEED_OVERRIDE=1..RUNS), then lets `reverify capture` emit
# the manifest (hashes, environment, the job's own PyTorch facts from result.json, metrics,
# tolerance from the seed-only runs) into the registry. Nothing in the manifest is written by hand.
#
# Usage: release.sh REVERIFY_BIN [REGISTRY_DIR]      (REGISTRY_DIR defaults to examples/registry)
# Environment (all optional):
#   MODEL (digit-orientation-cnn)  VERSION (2026.11.1)  OWNER (team-vision)  LEVEL (bitwise)
#   RUNS (10)  the number of seed-only runs behind the tolerance bands
#   DETECT (accuracy=0.02)  space-separated CHECK=SHIFT, the owner's tolerance.detect: a verdict
#             says "underpowered" (and how many seed runs would do) when a band cannot catch it
#   DATA_DIR (examples/digits/data)  EVAL_FILE (examples/digits/eval/digits-eval.csv)
#   PATCH     a patch applied to the trainer (a variant), TRAINER_REPO where to build it
#   REPO_URL  recorded as code.repo (https://git.example/vision/digit-orientation.git)
#   IMAGE     train inside this image (name@sha256:..., the trainer at /src) instead of on this
#             machine, with the docker CLI on $DOCKER_HOST the way the docker runner runs a
#             rebuild (no network, no capabilities, read-only data); the image is recorded. All
#             runs of one release share one container.
#   WORKDIR   where the trainer is inside IMAGE (/src); recorded as run.workdir
#   SUBSAMPLE_FRACTION (0.25)  SUBSAMPLE_SALT (orientation-subsample-1)  SUBSAMPLE_RUNS (RUNS):
#             the subsample reference (docs/job-guide.md "Subsample mode"): the trainer once in subsample
#             mode with the recorded seeds and SUBSAMPLE_RUNS times seed-only (0: none recorded)
# The scoring spec (evaluation.scoring): an eval record is an eval image at one of the 4 turns
# (file order, then turn order), so its label (the turn) and segment keys (rotation, digit) are
# written per record into eval-records.csv, which the release keeps beside the manifest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reverify="$(realpath "$1")"
registry="$(realpath -m "${2:-$here/../registry}")"
model="${MODEL:-digit-orientation-cnn}" version="${VERSION:-2026.11.1}" owner="${OWNER:-team-vision}"
level="${LEVEL:-bitwise}" runs="${RUNS:-10}" workdir="${WORKDIR:-/src}"
fraction="${SUBSAMPLE_FRACTION:-0.25}" subsample_salt="${SUBSAMPLE_SALT:-orientation-subsample-1}"
subsample_runs="${SUBSAMPLE_RUNS:-$runs}"
detect=()
for item in ${DETECT-accuracy=0.02}; do detect+=(--detect "$item"); done
data="$(realpath "${DATA_DIR:-$here/../digits/data}")"
eval_file="$(realpath "${EVAL_FILE:-$here/../digits/eval/digits-eval.csv}")"
repo_url="${REPO_URL:-https://git.example/vision/digit-orientation.git}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="${TRAINER_REPO:-$work/trainer}"
"$here/build_trainer_repo.sh" "$repo" "${PATCH:-}" >/dev/null

# The job's environment: cleared, then the determinism variables and the rebuild contract (the
# thread counts are the config's: the helper pins them).
contract=(PYTHONHASHSEED=0 CUBLAS_WORKSPACE_CONFIG=:4096:8 SOURCE_DATE_EPOCH=1793491200)
subsample_env=(REVERIFY_SUBSAMPLE_FRACTION="$fraction" REVERIFY_SUBSAMPLE_SALT="$subsample_salt")
# train_all OUT_ROOT MODE RUNS: OUT_ROOT/out with the recorded seeds, OUT_ROOT/seed-runs/N with
# seed N, in REVERIFY_MODE=MODE.
if [[ -z "${IMAGE:-}" ]]; then
  train() {  # MODE OUT [SEED_OVERRIDE]
    mkdir -p "$2"
    (cd "$repo" && env -i PATH=/usr/bin:/bin HOME="$work" "${contract[@]}" "${subsample_env[@]}" \
       REVERIFY_MODE="$1" REVERIFY_DATA="$data" REVERIFY_EVAL="$eval_file" \
       REVERIFY_CONFIG="$repo/config.json" REVERIFY_SEEDS="$repo/seeds.json" REVERIFY_OUT="$2" \
       ${3:+REVERIFY_SEED_OVERRIDE=$3} /usr/bin/python3 train.py)
  }
  train_all() {
    local t0="$EPOCHREALTIME"
    train "$2" "$1/out"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }' >"$1/duration"
    for seed in $(seq 1 "$3"); do train "$2" "$1/seed-runs/$seed" "$seed"; done
  }
else
  train_all() {
    mkdir -p "$1"
    local envs=() kv
    for kv in "${contract[@]}" "${subsample_env[@]}"; do envs+=(-e "$kv"); done
    # The image's config.json and seeds.json are the trainer's (same commit as $repo).
    docker run --rm --network none --cap-drop ALL --security-opt no-new-privileges \
      --user "$(id -u):$(id -g)" "${envs[@]}" -e REVERIFY_MODE="$2" -e RUNS="$3" \
      -e REVERIFY_DATA=/reverify/data -e REVERIFY_EVAL="/reverify/eval/$(basename "$eval_file")" \
      -e REVERIFY_CONFIG="$workdir/config.json" -e REVERIFY_SEEDS="$workdir/seeds.json" \
      -v "$data:/reverify/data:ro" -v "$eval_file:/reverify/eval/$(basename "$eval_file"):ro" \
      -v "$1:/reverify/release" -w "$workdir" --entrypoint bash "$IMAGE" -c '
        set -e
        t0=$(date +%s.%N)
        REVERIFY_OUT=/reverify/release/out python3 train.py
        echo "$(date +%s.%N) $t0" | awk "{ printf \"%.3f\", \$1 - \$2 }" >/reverify/release/duration
        for seed in $(seq 1 "$RUNS"); do
          REVERIFY_OUT=/reverify/release/seed-runs/$seed REVERIFY_SEED_OVERRIDE=$seed python3 train.py
        done'
  }
fi

started_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
train_all "$work/release" full "$runs"
subsample=()
if (( subsample_runs > 0 )); then
  train_all "$work/subsample" subsample "$subsample_runs"
  subsample=(--subsample-out "$work/subsample/out" --subsample-seed-runs "$work/subsample/seed-runs"
             --subsample-fraction "$fraction" --subsample-salt "$subsample_salt"
             --subsample-key "the training shards' id column (optdigits-NNNN)"
             --subsample-duration-s "$(cat "$work/subsample/duration")")
fi
# One row per eval record: the eval images in file order, each at turns 0..3.
/usr/bin/python3 - "$eval_file" "$work/eval-records.csv" <<'PY'
import sys
rows = [line.split(",")[1] for line in open(sys.argv[1]).read().splitlines()[1:]]
with open(sys.argv[2], "w") as out:
    out.write("turn,rotation,digit\n")
    for digit in rows:
        for turn in range(4):
            out.write(f"{turn},{90 * turn},{digit}\n")
PY
records="$work/eval-records.csv"

out="$registry/$model/$version"
rm -rf "$out"
mkdir -p "$out"
read -r salt percent < <(/usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); print(c["split_salt"], c["split_percent"])' "$repo/config.json")
(cd "$repo" && env -i PATH=/usr/bin:/bin HOME="$work" "${contract[@]}" \
  REVERIFY_DATA="$data" REVERIFY_EVAL="$eval_file" REVERIFY_CONFIG="$repo/config.json" \
  REVERIFY_SEEDS="$repo/seeds.json" REVERIFY_OUT="$work/release/out" "$reverify" capture \
  --out "$out" --model "$model" --version "$version" --owner "$owner" --level "$level" \
  --code "$repo" --repo "$repo_url" --ci-runner "release.sh@$(hostname)" \
  --data-uri "$(realpath -m --relative-to="$out" "$data")" \
  --eval-uri "$(realpath -m --relative-to="$out" "$eval_file")" \
  --split-rule "sha256(id + salt) % 100 < $percent" --split-salt "$salt" \
  --lockfile requirements.lock --python /usr/bin/python3 \
  --workdir "$workdir" --started-at "$started_at" --duration-s "$(cat "$work/release/duration")" \
  --task multiclass --labels "$records:turn" --classes 4 \
  --segment-key "rotation=$records:rotation" --segment-key "digit=$records:digit" \
  ${IMAGE:+--image "$IMAGE"} --seed-runs "$work/release/seed-runs" "${subsample[@]}" \
  "${detect[@]}" -- python3 train.py)
