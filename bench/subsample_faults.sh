#!/usr/bin/env bash
# What each rebuild mode catches on the digits example's faults, and what it costs (docs/job-guide.md
# "Subsample mode"): steps (first 100 steps), subsample and full rebuilds, side by side, of
#   clean        the committed release digits-mlp@2026.11.1 as it is;
#   backfill     a copy of it with one data shard rewritten after release;
#   hidden input the hidden-input variant (examples/digits/variants/hidden-input.patch) released
#                like the example (RUNS seed runs for both references, 3 same-seed reruns), then
#                3% of its training labels changed through a file no hash covers;
#   unpinned     the unpinned-init variant (weights from an unseeded generator) released the same
#                way at level bitwise, as the demo releases it.
# One row per fault and mode: the verdict and the job's seconds (the `run` stage of the
# verification's durations; 0 when preflight stopped it). The baseline is the full rebuild: each
# mode's job seconds are also printed as a ratio of the full rebuild's on the same fault. Not a
# timing test: nothing is asserted.
#
# Usage: bench/subsample_faults.sh REVERIFY_BIN     Environment: RUNS (40), WORK (a temp folder)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
cli="$(realpath "$1")"
runs="${RUNS:-40}"
work="${WORK:-$(mktemp -d)}"
[[ -n "${WORK:-}" ]] || trap 'rm -rf "$work" /tmp/reverify-digits-label-fixes.csv' EXIT
hidden=/tmp/reverify-digits-label-fixes.csv
exec 9>"$hidden.lock"
flock 9  # the variant reads a fixed path: one user at a time
rm -f "$hidden"
url="https://git.example/vision/digits-trainer.git"
digits="$src/examples/digits"
"$digits/build_trainer_repo.sh" "$work/trainer" >/dev/null
mkdir -p "$work/copy/examples"
cp -r "$src/examples/registry" "$digits" "$work/copy/examples/"
sed -i '2s/^\(optdigits-[0-9]*\),[0-9]*,/\1,7,/' "$work/copy/examples/digits/data/shard-05.csv"
for variant in hidden-input unpinned-init; do
  level=equivalent
  [[ "$variant" == unpinned-init ]] && level=bitwise
  PATCH="$digits/variants/$variant.patch" VERSION="2026.11.$variant" LEVEL="$level" RUNS="$runs" \
    TRAINER_REPO="$work/$variant" "$digits/release.sh" "$cli" "$work/registry" >/dev/null
done
/usr/bin/python3 "$src/examples/digits/variants/hidden_label_fixes.py" "$digits/data" "$work/label-fixes.csv" >/dev/null

judge() {  # FAULT REGISTRY VERSION TRAINER
  local fault="$1" registry="$2" version="$3" trainer="$4" mode
  for mode in steps subsample full; do
    local args=(--mode "$mode") out="$work/$fault-$mode.json"
    [[ "$mode" == steps ]] && args+=(--max-steps 100)
    "$cli" run "digits-mlp@$version" --registry "$registry" --code-mirror "$url=$trainer" \
      --work-dir "$work/runs" --json "${args[@]}" >"$out" 2>/dev/null || true
    /usr/bin/python3 - "$out" "$fault" "$mode" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
verdict = doc.get("verdict", {})
cls = verdict.get("class", "?")
seconds = doc.get("evidence", {}).get("durations", {}).get("run", 0.0)
failed = [c["name"] for c in verdict.get("checks", []) if c.get("outcome") == "failed"]
print(f"{sys.argv[2]:<13} {sys.argv[3]:<10} {cls:<26} {seconds:6.2f} s  "
      + (", ".join(failed[:4]) + (" ..." if len(failed) > 4 else "")))
PY
  done
}
echo "fault         mode       verdict                    job s    failed checks"
judge clean "$src/examples/registry" 2026.11.1 "$work/trainer"
judge backfill "$work/copy/examples/registry" 2026.11.1 "$work/trainer"
cp "$work/label-fixes.csv" "$hidden"
judge hidden-input "$work/registry" 2026.11.hidden-input "$work/hidden-input"
rm -f "$hidden"
judge unpinned "$work/registry" 2026.11.unpinned-init "$work/unpinned-init"
