#!/usr/bin/env bash
# `systemd-analyze verify` on systemd/reverifyd.service, with ExecStart pointed at the built
# reverifyd (verify requires the binary to exist), the settings the job sandbox needs, plus syntax
# checks of the sysusers and tmpfiles snippets. Usage: systemd_verify.sh SOURCE_DIR REVERIFYD_BINARY
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
# What the process runner's job sandbox (bubblewrap) needs from the unit: a cgroup subtree of its
# own, the namespaces it makes, mount(2) in them, netlink for the job's loopback, and no mount
# over /proc (the kernel then refuses a fresh /proc to a user namespace).
for key in Delegate=yes "RestrictNamespaces=user mnt pid net ipc uts cgroup" \
           "SystemCallFilter=@system-service @mount" \
           "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK"; do
  grep -qx "${key}" "$tmp/reverifyd.service" || { echo "missing ${key}"; exit 1; }
done
for key in ProtectKernelTunables=yes ProtectKernelLogs=yes ProtectControlGroups=yes \
            RestrictNamespaces=yes; do
  if grep -qx "${key}" "$tmp/reverifyd.service"; then echo "${key} breaks the job sandbox"; exit 1; fi
done
# sysusers/tmpfiles: every non-comment line has the expected number of fields.
awk '!/^#/ && NF && NF < 3 { print "sysusers: " $0; bad=1 } END { exit bad }' \
  "$source_dir/systemd/reverify.sysusers.conf"
awk '!/^#/ && NF && NF < 6 { print "tmpfiles: " $0; bad=1 } END { exit bad }' \
  "$source_dir/systemd/reverify.tmpfiles.conf"
echo "systemd units OK"
