#!/usr/bin/env bash
# What review cannot keep by reading: (1) the layer rule, each folder includes only the layers
# below it (docs/development.md "The layer rule"), (2) clang-format, every C++ file as
# .clang-format says, (3) every named enum in the name test, (4) the size rule, no product file
# over 800 lines nor function over 80 (scripts/check_sizes.py), and (5) the docs' links and
# section references (scripts/check_docs.sh).
# Exits 1 naming each offending file and line. Run by scripts/test.sh before it builds.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers a folder may include besides itself. tests/, bench/, fuzz/ and examples/ stand above
# every layer and may include any.
declare -A allowed=(
  [core]=""
  [policies]="core"
  [attest]="core policies"
  [runners]="core"
  [pager]="core policies"
  [settings]="core policies attest pager runners"
  [store]="core policies pager runners"
  [verify]="core policies attest pager runners settings store"
  [api]="core policies attest runners settings store verify"
  [cli]="core policies attest pager runners settings store verify"
  [daemon]="core policies attest pager runners settings store verify api"
)

failed=0
for layer in "${!allowed[@]}"; do
  while IFS=: read -r file line include; do
    target=$(sed -E 's/#include "([a-z_]+)\/.*/\1/' <<<"$include")
    [[ "$target" == "$layer" || " ${allowed[$layer]} " == *" $target "* ]] && continue
    [[ -z "${allowed[$target]+known}" ]] && continue  # not a layer (a system or bench header)
    echo "$file:$line: $layer/ includes $target/ (${include}): $layer/ may include only" \
      "${allowed[$layer]:-nothing but itself}" >&2
    failed=1
  done < <(git ls-files "$layer/*.cpp" "$layer/*.hpp" | xargs -r grep -nE '^#include "[a-z_]+/' || true)
done

unformatted=$(git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run 2>&1 | grep -oE '^[^:]+:[0-9]+' |
  sort -u || true)
if [[ -n "$unformatted" ]]; then
  echo "not as .clang-format says (run clang-format -i on the file):" >&2
  echo "$unformatted" | sed 's/^/  /' >&2
  failed=1
fi

# Every name table in a layer's header has its enum in the name test, which walks the enum's own
# values (tests/daemon/enum_names_test.cpp); tables in a .cpp are private to one command.
while read -r enum; do
  grep -q "CHECK_ENUM_NAMES($enum);" tests/daemon/enum_names_test.cpp && continue
  echo "EnumNames<$enum> has no CHECK_ENUM_NAMES($enum) in tests/daemon/enum_names_test.cpp" >&2
  failed=1
done < <(git ls-files '*.hpp' | grep -vE '^(tests|bench|fuzz|examples)/' | xargs grep -ohE 'struct EnumNames<[A-Za-z]+>' |
  sed -E 's/struct EnumNames<([A-Za-z]+)>/\1/' | sort -u)

/usr/bin/python3 scripts/check_sizes.py || failed=1
bash scripts/check_docs.sh || failed=1

if [[ $failed -ne 0 ]]; then
  echo "check_code: FAILED" >&2
  exit 1
fi
echo "check_code: every include goes down the layers; every C++ file is clang-formatted; no file or function over its size; the docs resolve"
