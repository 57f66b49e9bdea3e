#!/usr/bin/env bash
# The PyTorch example's two traps as docs/examples.md "The PyTorch example" runs them (examples/torch-orientation/traps.sh,
# process runner, this machine's python3-torch), with what reverify must say about each:
#  - the variant whose worker_init_fn leaves the dataset's generator unseeded: steps mode (first
#    50 steps) fails on the exact steps check, the full rebuild at level bitwise fails on the
#    weights and names the tensors; at level equivalent: any verdict, reported;
#  - 2 intra-op threads instead of the recorded 1: at level bitwise, failed naming the tensors
#    when the weights moved (passed when they did not: some CPUs may be stable); at level
#    equivalent, passed within the seed-run bands.
# TORCH_TRAPS_RUNS (default 3) seed-only runs per release.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

RUNS="${TORCH_TRAPS_RUNS:-3}" STEPS=50 "$src/examples/torch-orientation/traps.sh" "$cli" "$t"
r="$t/reports"
# expect NAME EXIT_STATUS PATTERN...: the report's exit status and lines (extended regexps).
expect() {
  local name="$1" want="$2" pattern
  shift 2
  [[ "$(cat "$r/$name.exit")" == "$want" ]] || fail "$name: exit status $(cat "$r/$name.exit"), expected $want"
  for pattern in "$@"; do
    grep -Eq "$pattern" "$r/$name.txt" || fail "$name: no line matching '$pattern'"
  done
}
tensors='tensors that differ from the released weights: \[.*"0\.weight"'

expect variant-steps 1 "^verdict: failed:out-of-tolerance" "FAIL +steps:loss" "first 50 steps"
expect variant-bitwise 1 "^verdict: failed:out-of-tolerance" "FAIL +weights" "$tensors"
grep -q "^verdict:" "$r/variant-equivalent.txt" || fail "variant-equivalent: no verdict"

if grep -Eq "FAIL +weights" "$r/threads-bitwise.txt"; then
  expect threads-bitwise 1 "^verdict: failed:out-of-tolerance" "$tensors"
else
  expect threads-bitwise 0 "^verdict: passed"
fi
if grep -Eq "FAIL +steps:loss" "$r/threads-steps.txt"; then
  expect threads-steps 1 "^verdict: failed:out-of-tolerance"
else
  expect threads-steps 0 "^verdict: passed"
fi
expect threads-equivalent 0 "^verdict: passed" "PASS +primary:accuracy"
echo "the PyTorch traps gave the verdicts docs/examples.md describes"
