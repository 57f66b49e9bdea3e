#!/usr/bin/env bash
# examples/search-ranking/README.md is the job author's guide followed for a ranking model: every
# ```sh block of it, in order, as printed, in one bash session from the repository root with the
# built `reverify` on the PATH (`set -e` stops at the first command that fails). Then what the
# page promises: check-job passed; the release's rebuild passed and its explanation leaves the
# flip rate out in one line; `reverify compare` on a seed run passed and printed no flip rate;
# the rebuild of 1.0.1 after the boost file appeared failed with a headline that counts market
# jp's queries and names k.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
readme="$src/examples/search-ranking/README.md"
script="$(mktemp)" out="$(mktemp)"
# $W is the README's own temporary folder: found in the trace (set -x) to remove it.
cleanup() {
  local w
  w="$(sed -n 's/^+ export W=\([^ ]*\) .*/\1/p' "$out" | head -1)"
  [[ "$w" == /tmp/* ]] && rm -rf "$w"
  rm -f "$script" "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
{
  echo "set -euo pipefail -x"
  awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0; next } on' "$readme"
} >"$script"
grep -c "^reverify run" "$script" | grep -qx 2 || fail "the README lost a rebuild"
cd "$src"
# Debian's python3 (with numpy) first, as on a fresh Debian machine.
PATH="$(dirname "$REVERIFY_CLI"):/usr/bin:$PATH" bash "$script" 2>&1 | tee "$out"
grep -qx "0 failed, 0 warning(s)" "$out" || fail "check-job named a problem"
[[ "$(grep -c '^verdict: passed' "$out")" == 1 ]] || fail "the release's rebuild did not pass"
[[ "$(grep -c '^verdict: failed' "$out")" == 1 ]] || fail "the boosted rebuild did not fail"
grep -q '^+ echo .exit status 1.$\|^exit status 1$' "$out" || fail "the boosted rebuild's exit status is not 1"
left_out="distribution:flip_rate left out: it counts records whose decision flips"
[[ "$(grep -c "$left_out" "$out")" -ge 2 ]] ||
  fail "the rebuild and compare do not both say once why the flip rate is left out"
! grep -q "^distribution:flip_rate  " "$out" || fail "compare printed a flip rate row for a ranking"
grep -Eq "[0-9]+ of [0-9]+ queries of market=jp have another top-10 (order|set)" "$out" ||
  fail "no headline counting market jp's queries and naming k"
echo "the guide's steps, as printed, release and verify search-ranking-pairwise; the boost is caught"
