#!/usr/bin/env bash
# examples/loan-default/README.md is the job author's guide followed for a new model: every ```sh
# block of it, in order, as printed, in one bash session from the repository root with the built
# `reverify` on the PATH (readme_session.sh). The blocks end with the three rebuilds (full, steps,
# subsample), each of which exits 0 only when it passed; `set -e` stops at the first command that
# fails.
set -euo pipefail
source "$(dirname "$0")/readme_session.sh"
script="$(mktemp)" out="$(mktemp)"
readme_blocks "$REVERIFY_SOURCE_DIR/examples/loan-default/README.md" >"$script"
grep -c "reverify run" "$script" | grep -qx 3 || { echo "FAIL: the README lost a rebuild" >&2; exit 1; }
run_readme "$script" "$out"
for mode in "" "first 20 steps" "subsample rebuild of 0.25"; do
  [[ -z "$mode" ]] || grep -q "$mode" "$out" || { echo "FAIL: no rebuild reported: $mode" >&2; exit 1; }
done
[[ "$(grep -c '^verdict: passed' "$out")" == 3 ]] || { echo "FAIL: not three passed verdicts" >&2; exit 1; }
grep -q "input:subsample-draw" "$out" || { echo "FAIL: no subsample draw check" >&2; exit 1; }
echo "the guide's steps, as printed, release and verify loan-default-sgd in three modes"
