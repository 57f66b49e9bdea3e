# Sourced by the browser tests (with src and build set): fails (never skips) when chromium, node
# or npm is missing (scripts/setup.sh installs them), installs the pinned puppeteer-core and
# axe-core (package-lock.json) with `npm ci` into $build/browser-node, again only when the
# lockfile changes, and copies the test's own scripts there. Usage: browser_node_setup FILE.mjs...
# Sets node_dir.
browser_node_setup() {
  local tool
  for tool in chromium node npm; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
  done
  node_dir="$build/browser-node"
  mkdir -p "$node_dir"
  if ! cmp -s "$src/tests/browser/package-lock.json" "$node_dir/package-lock.json" ||
    [[ ! -d "$node_dir/node_modules/puppeteer-core" ]]; then
    cp "$src/tests/browser/package.json" "$src/tests/browser/package-lock.json" "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  local script
  for script in "$@"; do cp "$src/tests/browser/$script" "$node_dir/"; done
}
