#!/usr/bin/env bash
# `cmake --install` as a packager runs it (DESTDIR, prefix /usr): the binaries start from where
# they were installed (their own libraries found through the RPATH), the unit names them and
# passes `systemd-analyze verify`, sysusers/tmpfiles/docker drop-in/docs/template are in place,
# the template reaches /etc/reverify only when no config is there, and the installed daemon
# accepts the installed config (--check-config).
set -euo pipefail
build="${REVERIFY_BUILD_DIR:?run through ctest}"
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
root="$t/root"
fail() { echo "FAIL: $*" >&2; exit 1; }

DESTDIR="$root" cmake --install "$build" --prefix /usr >"$t/install.log" || {
  cat "$t/install.log"; fail "cmake --install failed"; }

for f in usr/bin/reverify usr/bin/reverifyd usr/lib/systemd/system/reverifyd.service \
         usr/lib/sysusers.d/reverify.conf usr/lib/tmpfiles.d/reverify.conf \
         usr/share/reverify/reverify.yaml usr/share/reverify/reverifyd-docker.conf \
         usr/share/reverify/prometheus/reverify.rules.yml \
         usr/share/reverify/grafana/reverify-dashboard.json \
         usr/share/bash-completion/completions/reverify \
         usr/share/doc/reverify/README.md usr/share/doc/reverify/CHANGELOG.md \
         usr/share/doc/reverify/docs/operating.md usr/share/doc/reverify/docs/status-page.webp \
         etc/reverify/reverify.yaml; do
  [[ -e "$root/$f" ]] || fail "$f was not installed"
done
cmp -s "$src/config/production.yaml" "$root/etc/reverify/reverify.yaml" ||
  fail "/etc/reverify/reverify.yaml is not the template"

# The installed binaries run from the install tree, without the build tree.
version=$("$root/usr/bin/reverify" --version)
[[ "$version" == "reverify $("$build/cli/reverify" --version | cut -d' ' -f2)" ]] ||
  fail "installed reverify --version says: $version"
[[ "$(ldd "$root/usr/bin/reverifyd")" != *"$build"* ]] || fail "reverifyd links into the build tree"
"$root/usr/bin/reverifyd" --version >/dev/null || fail "installed reverifyd does not start"

unit="$root/usr/lib/systemd/system/reverifyd.service"
grep -qx "ExecStart=/usr/bin/reverifyd --config /etc/reverify/reverify.yaml" "$unit" ||
  fail "ExecStart does not name the installed binary and config"
grep -qx "Documentation=file:/usr/share/doc/reverify/README.md file:/usr/share/doc/reverify/docs/operating.md" \
  "$unit" || fail "Documentation= does not name the installed README and operating guide"
! grep -q "^SupplementaryGroups=docker" "$unit" || fail "the docker group is not opt-in"
grep -qx "SupplementaryGroups=docker" "$root/usr/share/reverify/reverifyd-docker.conf" ||
  fail "the docker drop-in does not add the docker group"
# verify needs ExecStart's binary at its path: point it into DESTDIR for the check only.
sed "s#^ExecStart=/usr/bin/reverifyd#ExecStart=$root/usr/bin/reverifyd#" "$unit" >"$t/reverifyd.service"
out=$(systemd-analyze verify "$t/reverifyd.service" 2>&1) || { echo "$out"; fail "systemd-analyze verify"; }
! grep -q "reverifyd.service" <<<"$out" || { echo "$out"; fail "systemd-analyze verify warned"; }

# The installed config (every key at its default) passes the installed daemon's check, once its
# state_dir and its one source's folder are ones this test may use.
mkdir "$t/models"
sed -e "s#^state_dir: /var/lib/reverify #state_dir: $t/state #" \
  -e "s#root: /srv/models}#root: $t/models}#" "$root/etc/reverify/reverify.yaml" >"$t/reverify.yaml"
"$root/usr/bin/reverifyd" --config "$t/reverify.yaml" --check-config ||
  fail "the installed template fails --check-config"

# A second install keeps the operator's config and says where the new template is.
echo "# edited by the operator" >>"$root/etc/reverify/reverify.yaml"
DESTDIR="$root" cmake --install "$build" --prefix /usr >"$t/install2.log"
grep -q "edited by the operator" "$root/etc/reverify/reverify.yaml" || fail "the config was overwritten"
grep -q "Keeping: $root/etc/reverify/reverify.yaml" "$t/install2.log" || fail "no 'Keeping:' line"
echo "install OK"
