#!/usr/bin/env bash
# examples/loan-default/README.md is the job author's guide followed for a new model: every ```sh
# block of it, in order, as printed, in one bash session from the repository root with the built
# `reverify` on the PATH. The blocks end with the three rebuilds (full, steps, subsample), each
# of which exits 0 only when it passed; `set -e` stops at the first command that fails.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
readme="$src/examples/loan-default/README.md"
script="$(mktemp)" out="$(mktemp)"
# $W is the README's own temporary folder: found in the trace (set -x) to remove it.
cleanup() {
  local w
  w="$(sed -n 's/^+ export W=//p' "$out" | head -1)"
  [[ "$w" == /tmp/* ]] && rm -rf "$w"
  rm -f "$script" "$out"
}
trap cleanup EXIT
{
  echo "set -euo pipefail -x"
  awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0; next } on' "$readme"
} >"$script"
grep -c "reverify run" "$script" | grep -qx 3 || { echo "FAIL: the README lost a rebuild" >&2; exit 1; }
cd "$src"
# Debian's python3 (with python3-sklearn) first, as on a fresh Debian machine.
PATH="$(dirname "$REVERIFY_CLI"):/usr/bin:$PATH" bash "$script" 2>&1 | tee "$out"
for mode in "" "first 20 steps" "subsample rebuild of 0.25"; do
  [[ -z "$mode" ]] || grep -q "$mode" "$out" || { echo "FAIL: no rebuild reported: $mode" >&2; exit 1; }
done
[[ "$(grep -c '^verdict: passed' "$out")" == 3 ]] || { echo "FAIL: not three passed verdicts" >&2; exit 1; }
grep -q "input:subsample-draw" "$out" || { echo "FAIL: no subsample draw check" >&2; exit 1; }
echo "the guide's steps, as printed, release and verify loan-default-sgd in three modes"
