#!/usr/bin/env bash
# scripts/check_docs.sh on small trees of its own: a clean one passes; a broken link, a link to a
# missing heading, a quoted reference (wrapped over two comment lines) to a missing heading and an
# internal issue number in the docs or a CLI string each fail it, naming the file and line.
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
check="$src/scripts/check_docs.sh"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

tree() {  # a fresh tree in $t/$1 where everything resolves
  local root="$t/$1"
  mkdir -p "$root/docs" "$root/cli" "$root/core"
  cat >"$root/README.md" <<'MD'
# tool
See [the guide](docs/operating.md#one-owner-per-state_dir) and [changes](CHANGELOG.md).
```sh
echo "[x](missing.md) in a code block is not a link"
```
MD
  cat >"$root/CHANGELOG.md" <<'MD'
# Changelog
## 2026-12-02
- Docs (PKCS#8 keys, `&#39;` and a colour #123456 are not issue numbers).
MD
  cat >"$root/docs/operating.md" <<'MD'
# Guide
## One owner per state_dir
## What a PASSED summary promises, and what it does not
Back to [the top](../README.md#tool), [below](#what-a-passed-summary-promises-and-what-it-does-not).
MD
  printf '%s\n' '// The rule (docs/operating.md' '// "One owner per state_dir").' >"$root/core/a.hpp"
  printf '%s\n' 'const char* help = "see docs/operating.md \"One owner per state_dir\"";' \
    '// issue #7 in a comment is not a user-facing string' >"$root/cli/a.cpp"
  echo "$root"
}

expect_failure() {  # ROOT WHAT PATTERN: the check fails and names PATTERN
  local out
  if out=$(bash "$check" "$1" 2>&1); then fail "$2: passed"; fi
  grep -q -- "$3" <<<"$out" || { echo "$out" >&2; fail "$2: the output does not name $3"; }
}

root=$(tree clean)
out=$(bash "$check" "$root" 2>&1) || { echo "$out" >&2; fail "a clean tree failed"; }

root=$(tree missing_file)
sed -i 's|(CHANGELOG.md)|(CHANGES.md)|' "$root/README.md"
expect_failure "$root" "a link to a missing file" "README.md:2: link to CHANGES.md"

root=$(tree missing_anchor)
sed -i 's|#one-owner-per-state_dir|#one-owner-per-state-dir|' "$root/README.md"
expect_failure "$root" "a link to a missing heading" "README.md:2: .*#one-owner-per-state-dir"

root=$(tree missing_heading)
sed -i 's|^## One owner per state_dir|## One owner per state directory|' "$root/docs/operating.md"
expect_failure "$root" "a wrapped reference to a renamed heading" 'core/a.hpp:1: reference to docs/operating.md "One owner per state_dir"'
expect_failure "$root" "a string's reference to a renamed heading" 'cli/a.cpp:1: reference to docs/operating.md'

root=$(tree issue_in_docs)
echo "- Built (#22)." >>"$root/CHANGELOG.md"
expect_failure "$root" "an issue number in the changelog" 'CHANGELOG.md:4: internal issue number "#22"'

root=$(tree issue_in_cli)
echo 'const char* more = "fixed by issue 28";' >>"$root/cli/a.cpp"
expect_failure "$root" "an issue number in a CLI string" 'cli/a.cpp:3: internal issue number "issue 28"'

echo "check_docs: clean tree passes; each broken link, reference and issue number is named"
