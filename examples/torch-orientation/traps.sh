#!/usr/bin/env bash
# The two PyTorch traps, each released and rebuilt with `reverify run` on the process runner (this
# machine's /usr/bin/python3 with Debian's python3-torch; no docker), printing the verdict
# reverify gives. Every report stays in WORK_DIR/reports/ (NAME.txt, and NAME.exit holding the
# exit status):
#  A. the variant whose worker_init_fn no longer seeds the dataset's generator
#     (variants/unseeded-workers.patch), released like the real one (release.sh, RUNS seed-only
#     runs), then rebuilt from its own manifest:
#       variant-steps       steps mode, the first STEPS steps
#       variant-bitwise     full rebuild at the release's level, bitwise
#       variant-equivalent  full rebuild, the same release at level equivalent
#  B. the real example (released here the same way) rebuilt with 2 intra-op threads instead of
#     the recorded 1, as on a machine whose thread count differs (the manifest's config edited):
#       threads-steps       steps mode, the first STEPS steps
#       threads-bitwise     full rebuild at level bitwise
#       threads-equivalent  full rebuild at level equivalent
#     The 2-thread rebuilds also run with OMP_WAIT_POLICY=PASSIVE: on a machine with fewer free
#     cores than threads, OpenMP's spinning barrier made 150 steps take 38.2 s instead of 4.9 s;
#     the results were bit-identical (the wait policy decides how idle threads wait, not the
#     order of any sum).
# The traps' own verdicts are facts to read, not failures: this script exits 0 when every rebuild
# got a verdict (exit status 0 passed, 1 failed:*, 3 uncalibrated), non-zero when reverify could
# not judge one (2 error:*).
#
# Usage: traps.sh REVERIFY_BIN [WORK_DIR]   (WORK_DIR defaults to a new temporary folder, kept)
# Environment: RUNS (3) seed-only runs per release (the bands of level equivalent), STEPS (50),
#              TRAPS (A B) which traps to run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="$(realpath "$1")"
work="$(realpath -m "${2:-$(mktemp -d)}")"
runs="${RUNS:-3}" steps="${STEPS:-50}" traps="${TRAPS:-A B}"
model=digit-orientation-cnn
repo_url=https://git.example/vision/digit-orientation.git
mkdir -p "$work/reports"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }

# derive REGISTRY VERSION NEW_REGISTRY NEW_VERSION PYTHON_EDIT: a copy of a release under another
# version, its manifest edited by PYTHON_EDIT (statements on `m`), relative URIs kept valid.
derive() {
  local from="$1/$model/$2" to="$3/$model/$4"
  rm -rf "$to"
  mkdir -p "$to"
  cp "$from"/* "$to/"
  /usr/bin/python3 - "$to/manifest.json" "$4" "$(realpath --relative-to="$to" "$from")" "$5" <<'PY'
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

# rebuild NAME REGISTRY VERSION TRAINER_REPO [RUN_ARGS...]: one `reverify run` on the process
# runner, its report in reports/NAME.txt and its exit status in reports/NAME.exit.
rebuild() {
  local name="$1" registry="$2" version="$3" trainer="$4" status=0
  shift 4
  stamp "$name: reverify run $model@$version $*"
  "$cli" run "$model@$version" --registry "$registry" --work-dir "$work/run" \
    --code-mirror "$repo_url=$trainer" "$@" >"$work/reports/$name.txt" 2>&1 || status=$?
  echo "$status" >"$work/reports/$name.exit"
  cat "$work/reports/$name.txt"
  if ((status == 2 || status > 3)); then
    echo "$name: reverify gave no verdict (exit status $status)" >&2
    return 1
  fi
}

# release NAME VERSION [PATCH]: release.sh on this machine into $work/NAME, trainer in
# $work/NAME-trainer. No subsample reference: the traps are rebuilt in full and steps mode only.
release() {
  stamp "release $1 ($model@$2, 1 + $runs seed-only runs${3:+, $(basename "$3")})"
  SUBSAMPLE_RUNS=0 RUNS="$runs" VERSION="$2" PATCH="${3:-}" TRAINER_REPO="$work/$1-trainer" \
    "$here/release.sh" "$cli" "$work/$1"
}

for trap_name in $traps; do
  case "$trap_name" in
    A)
      release variant 2026.11.9 "$here/variants/unseeded-workers.patch"
      derive "$work/variant" 2026.11.9 "$work/variant" 2026.11.10 'm["level"] = "equivalent"'
      rebuild variant-steps "$work/variant" 2026.11.9 "$work/variant-trainer" \
        --mode steps --max-steps "$steps"
      rebuild variant-bitwise "$work/variant" 2026.11.9 "$work/variant-trainer"
      rebuild variant-equivalent "$work/variant" 2026.11.10 "$work/variant-trainer"
      ;;
    B)
      release released 2026.11.1
      threads='m["config"]["intra_op_threads"] = 2; m["environment"]["env"]["OMP_WAIT_POLICY"] = "PASSIVE"'
      derive "$work/released" 2026.11.1 "$work/threads" 2026.11.2 "$threads"
      derive "$work/released" 2026.11.1 "$work/threads" 2026.11.3 "$threads; m[\"level\"] = \"equivalent\""
      rebuild threads-steps "$work/threads" 2026.11.2 "$work/released-trainer" \
        --mode steps --max-steps "$steps"
      rebuild threads-bitwise "$work/threads" 2026.11.2 "$work/released-trainer"
      rebuild threads-equivalent "$work/threads" 2026.11.3 "$work/released-trainer"
      ;;
    *) echo "TRAPS: unknown trap $trap_name (A or B)" >&2; exit 2 ;;
  esac
done

stamp "verdicts (reports in $work/reports)"
for report in "$work"/reports/*.txt; do
  printf '%-20s exit %s  %s\n' "$(basename "$report" .txt)" "$(cat "${report%.txt}.exit")" \
    "$(grep -m1 '^verdict:' "$report" || echo 'no verdict line')"
done
