#!/usr/bin/env bash
# examples/search-ranking/README.md is the job author's guide followed for a ranking model: every
# ```sh block of it, in order, as printed, in one bash session from the repository root with the
# built `reverify` on the PATH (readme_session.sh; `set -e` stops at the first command that
# fails). Then what the page promises: check-job passed; the release's rebuild passed and its
# explanation leaves the flip rate out in one line; `reverify compare` on a seed run passed and
# printed no flip-rate row, only that line; the rebuild of 1.0.1, released with an environment
# variable the rebuild does not get, failed with a headline that counts market jp's queries and
# names k.
set -euo pipefail
source "$(dirname "$0")/readme_session.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
script="$(mktemp)" out="$(mktemp)"
readme_blocks "$REVERIFY_SOURCE_DIR/examples/search-ranking/README.md" >"$script"
grep -c "^reverify run" "$script" | grep -qx 2 || fail "the README lost a rebuild"
run_readme "$script" "$out"
grep -qx "0 failed, 0 warning(s)" "$out" || fail "check-job named a problem"
passed="$(grep -c '^verdict: passed' "$out" || true)" failed="$(grep -c '^verdict: failed' "$out" || true)"
[[ "$passed/$failed" == 1/1 ]] ||
  fail "$passed passed and $failed failed verdicts: expected the release's to pass, the boosted one to fail"
grep -qx 'exit status 1' "$out" || fail "the boosted rebuild's exit status is not 1"
left_out="distribution:flip_rate left out: it counts records whose decision flips"
[[ "$(grep -c "$left_out" "$out")" -ge 3 ]] ||
  fail "the two rebuilds and compare do not each say why the flip rate is left out"
! grep -q "^distribution:flip_rate  " "$out" || fail "compare printed a flip rate row for a ranking"
grep -Eq "^verdict: failed:out-of-tolerance: [0-9]+ of 48 queries of market=jp have another \
top-10 (order|set) than the release's" "$out" ||
  fail "no headline counting market jp's queries and naming k"
echo "the guide's steps, as printed, release and verify search-ranking-pairwise; the boost is caught"
