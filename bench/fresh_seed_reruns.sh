#!/usr/bin/env bash
# docs/design.md property 1, measured end to end: RUNS fresh-seed reruns of the released example
# digits-mlp@2026.11.1 (or MODEL in REGISTRY), each judged by `reverify run --seed-override S`
# against the released calibration (the manifest's seed runs), exactly as a rebuild is judged. A rerun with a seed
# the calibration never used is an honest draw from the distribution the bands describe, so every
# verdict other than `passed` is a false page. At false_page_rate 0.01 the expected count is at
# most 1 in 100; the script fails when more than MAX_PAGES paged: by default the smallest k with
# P(X > k) < 0.02 for X ~ Binomial(RUNS, 0.01) (3 for 100 runs, 3 for 60). It prints every page (which check, by how much) and the counts.
# Not a timing test: the wall time is printed for docs/examples.md, not asserted.
#
# Usage: bench/fresh_seed_reruns.sh REVERIFY_BIN [RUNS (100)] [FIRST_SEED (1001)]
# Environment: MAX_PAGES (3), JOBS (2: reruns at once), WORK (a temp folder); another release of
# the digits trainer (e.g. the no-count variant, docs/verdicts.md "Measured on a trainer that reports no counts"): REGISTRY (examples/registry),
# MODEL (digits-mlp@2026.11.1) and PATCH (the variant patch it was released with, none).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
cli="$(realpath "$1")"
runs="${2:-100}" first="${3:-1001}" jobs="${JOBS:-2}"
max_pages="${MAX_PAGES:-$(/usr/bin/python3 -c 'import sys; from scipy.stats import binom
n = int(sys.argv[1]); print(next(k for k in range(n + 1) if binom.sf(k, n, 0.01) < 0.02))' "$runs")}"
work="${WORK:-$(mktemp -d)}"
[[ -n "${WORK:-}" ]] || trap 'rm -rf "$work"' EXIT
url="https://git.example/vision/digits-trainer.git"
registry="$(realpath "${REGISTRY:-$src/examples/registry}")" model="${MODEL:-digits-mlp@2026.11.1}"
"$src/examples/digits/build_trainer_repo.sh" "$work/trainer" ${PATCH:+"$(realpath "$PATCH")"} >/dev/null
mkdir -p "$work/verdicts"

one() {  # SEED
  local seed="$1" status=0
  "$cli" run "$model" --registry "$registry" \
    --code-mirror "$url=$work/trainer" --work-dir "$work/runs/$seed" --seed-override "$seed" \
    --json >"$work/verdicts/$seed.json" 2>"$work/verdicts/$seed.err" || status=$?
  rm -rf "$work/runs/$seed"
  echo "$status" >"$work/verdicts/$seed.status"
}
export -f one
export cli src work url registry model

started="$EPOCHREALTIME"
seq "$first" $((first + runs - 1)) | xargs -P "$jobs" -I{} bash -c 'one {}'
elapsed="$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"

/usr/bin/python3 - "$work/verdicts" "$runs" "$max_pages" "$elapsed" "$jobs" <<'PY'
import collections, json, pathlib, sys
folder, runs, max_pages, elapsed, jobs = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
classes, pages, primary = collections.Counter(), [], []
for path in sorted(folder.glob("*.json"), key=lambda p: int(p.stem)):
    text = path.read_text()
    if not text.strip():
        sys.exit(f"seed {path.stem}: no JSON on stdout; stderr: {path.with_suffix('.err').read_text()[-2000:]}")
    doc = json.loads(text)  # stdout holds the JSON document only
    verdict = doc["verdict"]
    classes[verdict["class"]] += 1
    for c in verdict["checks"]:
        if c["name"].startswith("primary:") and c["observed"] is not None:
            primary.append(c["observed"])
    if verdict["class"] != "passed":
        failed = [f'{c["name"]} {c["observed"]} outside {c["band"]}' for c in verdict["checks"]
                  if c["outcome"] != "passed" and not c.get("informational")]
        pages.append((path.stem, verdict["class"], failed or [verdict["explanation"]]))
judged = sum(classes.values())
if judged != runs:
    sys.exit(f"{judged} of {runs} reruns produced a verdict")
errors = sum(n for cls, n in classes.items() if cls.startswith("error:") or cls == "uncalibrated")
for seed, cls, failed in pages:
    print(f"  seed {seed}: {cls}: " + "; ".join(failed))
mean = sum(primary) / len(primary)
print(f"{runs} fresh-seed reruns ({jobs} at a time, {elapsed} s wall): "
      f"{len(pages)} paged ({len(pages) / runs:.3f}; limit {max_pages}), verdicts {dict(classes)}; "
      f"primary mean {mean:.4f}, min {min(primary):.4f}, max {max(primary):.4f}")
if errors:
    sys.exit(f"{errors} reruns ended in error or uncalibrated: not a measurement")
if len(pages) > max_pages:
    sys.exit(f"FAIL: {len(pages)} false pages > {max_pages}")
print("PASS: false pages within the stated rate")
PY
