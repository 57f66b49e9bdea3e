# Sourced by the tests that run an example's README as printed (loan_default_readme.sh,
# search_ranking_readme.sh).
#   readme_blocks README    prints every ```sh block of README, in order, as one bash script that
#                           stops at the first command that fails and traces each (set -x)
#   run_readme SCRIPT OUT   runs SCRIPT in one bash session from the repository root, with the
#                           built `reverify` and Debian's python3 (its numpy, scikit-learn) first
#                           on the PATH, as on a fresh Debian machine; its trace and output go to
#                           stdout and OUT. At exit SCRIPT, OUT and the README's own temporary
#                           folder $W (found in the trace) are removed.
readme_blocks() {
  echo "set -euo pipefail -x"
  awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0; next } on' "$1"
}

run_readme() {
  readme_files=("$1" "$2")
  trap readme_cleanup EXIT
  (cd "$REVERIFY_SOURCE_DIR" && PATH="$(dirname "$REVERIFY_CLI"):/usr/bin:$PATH" bash "$1") 2>&1 |
    tee "$2"
}

readme_cleanup() {
  local w
  w="$(sed -n 's/^+ export W=\([^ ]*\).*/\1/p' "${readme_files[1]}" | head -1)"
  [[ "$w" == /tmp/* ]] && rm -rf "$w"
  rm -f "${readme_files[@]}"
}
