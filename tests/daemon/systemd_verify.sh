#!/usr/bin/env bash
# `systemd-analyze verify` on systemd/reverifyd.service, with ExecStart pointed at the built
# reverifyd (verify requires the binary to exist), plus syntax checks of the sysusers and
# tmpfiles snippets. Usage: systemd_verify.sh SOURCE_DIR REVERIFYD_BINARY
set -euo pipefail
source_dir=$1
binary=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s#/usr/bin/reverifyd#${binary}#" "$source_dir/systemd/reverifyd.service" > "$tmp/reverifyd.service"
grep -q "^ExecStart=${binary} " "$tmp/reverifyd.service"
out=$(systemd-analyze verify "$tmp/reverifyd.service" 2>&1) || { echo "$out"; exit 1; }
# verify prints warnings without failing; treat any output about our unit as a failure.
if grep -q "reverifyd.service" <<<"$out"; then echo "$out"; exit 1; fi
for key in Type=notify WatchdogSec= Restart=on-failure User=reverify StateDirectory=reverify \
           ProtectSystem=strict NoNewPrivileges=yes PrivateTmp=yes; do
  grep -q "^${key}" "$tmp/reverifyd.service" || { echo "missing ${key}"; exit 1; }
done
# sysusers/tmpfiles: every non-comment line has the expected number of fields.
awk '!/^#/ && NF && NF < 3 { print "sysusers: " $0; bad=1 } END { exit bad }' \
  "$source_dir/systemd/reverify.sysusers.conf"
awk '!/^#/ && NF && NF < 6 { print "tmpfiles: " $0; bad=1 } END { exit bad }' \
  "$source_dir/systemd/reverify.tmpfiles.conf"
echo "systemd units OK"
