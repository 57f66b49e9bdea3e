#!/usr/bin/env bash
# Releases the example model the way a real training pipeline would: builds the trainer's git
# repository (build_trainer_repo.sh), trains digits-mlp once with its recorded seeds, RUNS more
# times seed-only (REVERIFY_SEED_OVERRIDE=1..RUNS) and SAME_SEED_RUNS more times with its own
# seeds, then lets `reverify capture` emit the manifest (hashes, environment, metrics, tolerance
# from the reruns, the owner's declared DETECT) into the registry. Nothing in the manifest is
# written by hand. The seed runs are what the bands are made of: RUNS=40 makes the primary band
# catch a 0.02 drop in accuracy (docs/verdicts.md "Tolerance bands"); the same-seed reruns make the steps-mode band
# (exact on a deterministic platform). The subsample reference (docs/job-guide.md "Subsample mode") is the
# same trainer in subsample mode (SUBSAMPLE_FRACTION of the training records, keyed by record id,
# with SUBSAMPLE_SALT), trained once with the recorded seeds and SUBSAMPLE_RUNS times seed-only.
# The scoring spec (evaluation.scoring) is the eval set's label column, multiclass over 10 digits,
# segmented by label (digit=0..9).
#
# Usage: release.sh REVERIFY_BIN [REGISTRY_DIR]      (REGISTRY_DIR defaults to examples/registry)
# Environment (all optional):
#   MODEL (digits-mlp)  VERSION (2026.11.1)  OWNER (team-vision)  LEVEL (equivalent)  RUNS (40)
#   SAME_SEED_RUNS (3)  DETECT (accuracy=0.02: space-separated CHECK=SHIFT, tolerance.detect)
#   SUBSAMPLE_FRACTION (0.25)  SUBSAMPLE_SALT (digits-subsample-1)  SUBSAMPLE_RUNS (RUNS; 0: no
#   subsample reference)
#   DATA_DIR (examples/digits/data)  EVAL_FILE (examples/digits/eval/digits-eval.csv)
#   PATCH     a patch applied to the trainer (the demo's variant), TRAINER_REPO where to build it
#   REPO_URL  recorded as code.repo (https://git.example/vision/digits-trainer.git)
#   IMAGE     the training image (name@sha256:...) when the job ran in a container
#   CAPTURE_FLAGS  more `reverify capture` flags, space-separated (e.g. a scoring spec:
#             "--task multiclass --labels label --classes 10 --segment-key digit=label")
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reverify="$(realpath "$1")"
registry="$(realpath -m "${2:-$here/../registry}")"
model="${MODEL:-digits-mlp}" version="${VERSION:-2026.11.1}" owner="${OWNER:-team-vision}"
level="${LEVEL:-equivalent}" runs="${RUNS:-40}" same_seed_runs="${SAME_SEED_RUNS:-3}"
fraction="${SUBSAMPLE_FRACTION:-0.25}" subsample_salt="${SUBSAMPLE_SALT:-digits-subsample-1}"
subsample_runs="${SUBSAMPLE_RUNS:-$runs}"
detect=()
for item in ${DETECT-accuracy=0.02}; do detect+=(--detect "$item"); done
data="$(realpath "${DATA_DIR:-$here/data}")"
eval_file="$(realpath "${EVAL_FILE:-$here/eval/digits-eval.csv}")"
repo_url="${REPO_URL:-https://git.example/vision/digits-trainer.git}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="${TRAINER_REPO:-$work/trainer}"
"$here/build_trainer_repo.sh" "$repo" "${PATCH:-}" >/dev/null

# The job's environment: cleared, then the determinism variables and the rebuild contract.
job_env=(env -i PATH=/usr/bin:/bin HOME="$work" OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
         PYTHONHASHSEED=0 SOURCE_DATE_EPOCH=1793491200 REVERIFY_MODE=full
         REVERIFY_DATA="$data" REVERIFY_EVAL="$eval_file"
         REVERIFY_CONFIG="$repo/config.json" REVERIFY_SEEDS="$repo/seeds.json")
train() {  # OUT [SEED_OVERRIDE] [ENV...]
  mkdir -p "$1"
  (cd "$repo" && "${job_env[@]}" REVERIFY_OUT="$1" ${2:+REVERIFY_SEED_OVERRIDE=$2} "${@:3}" \
     /usr/bin/python3 train.py)
}
subsample_env=(REVERIFY_MODE=subsample REVERIFY_SUBSAMPLE_FRACTION="$fraction"
               REVERIFY_SUBSAMPLE_SALT="$subsample_salt")

started_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
t0="$EPOCHREALTIME"
train "$work/out"
duration="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
for seed in $(seq 1 "$runs"); do train "$work/seed-runs/$seed" "$seed"; done
same_seed=()
for i in $(seq 1 "$same_seed_runs"); do train "$work/same-seed-runs/$i"; done
(( same_seed_runs > 0 )) && same_seed=(--same-seed-runs "$work/same-seed-runs")
subsample=()
if (( subsample_runs > 0 )); then
  t0="$EPOCHREALTIME"
  train "$work/subsample" "" "${subsample_env[@]}"
  subsample_duration="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
  for seed in $(seq 1 "$subsample_runs"); do
    train "$work/subsample-seed-runs/$seed" "$seed" "${subsample_env[@]}"
  done
  subsample=(--subsample-out "$work/subsample" --subsample-seed-runs "$work/subsample-seed-runs"
             --subsample-fraction "$fraction" --subsample-salt "$subsample_salt"
             --subsample-key "the training shards' id column (optdigits-NNNN)"
             --subsample-duration-s "$subsample_duration")
fi

out="$registry/$model/$version"
rm -rf "$out"
mkdir -p "$out"
salt="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["split_salt"])' "$repo/config.json")"
(cd "$repo" && "${job_env[@]}" REVERIFY_OUT="$work/out" "$reverify" capture \
  --out "$out" --model "$model" --version "$version" --owner "$owner" --level "$level" \
  --code "$repo" --repo "$repo_url" --ci-runner "release.sh@$(hostname)" \
  --data-uri "$(realpath -m --relative-to="$out" "$data")" \
  --eval-uri "$(realpath -m --relative-to="$out" "$eval_file")" \
  --task multiclass --labels label --classes 10 --segment-key digit=label \
  --split-rule "sha256(id + salt) % 100 < 20" --split-salt "$salt" \
  --lockfile requirements.lock --python /usr/bin/python3 --framework numpy \
  --workdir /src --started-at "$started_at" --duration-s "$duration" \
  ${IMAGE:+--image "$IMAGE"} --seed-runs "$work/seed-runs" \
  "${same_seed[@]}" "${subsample[@]}" "${detect[@]}" ${CAPTURE_FLAGS:-} -- python3 train.py)
