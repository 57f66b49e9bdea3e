#!/usr/bin/env bash
# Installs every build, test and demo dependency from Debian 12 packages, only when missing.
# Idempotent: a second run installs nothing and exits quickly.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libboost-dev libboost-filesystem-dev libyaml-cpp-dev nlohmann-json3-dev
  libcurl4-openssl-dev libsqlite3-dev libssl-dev doctest-dev libcli11-dev
  clang-14 libclang-rt-14-dev clang-format
  python3 python3-numpy python3-scipy python3-sklearn python3-cryptography python3-torch
  python3-venv python3-setuptools python3-pip strace
  docker.io docker-registry
  slurm-wlm munge podman runc
  prometheus-alertmanager prometheus
  nginx-light wrk systemd coreutils curl procps openssl
  chromium
  bubblewrap util-linux jq
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# The Kubernetes schema test and the status page's browser test (chromium, above) need node + npm; this machine kind ships NodeSource's nodejs (which
# bundles npm and conflicts with Debian's npm package), so only ask Debian for npm when none exists.
command -v npm >/dev/null || missing+=(npm)

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends keeps prometheus from pulling in a web stack and starting services.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's packaging starts these services on install; tests start their own private instances.
for svc in docker containerd prometheus prometheus-alertmanager nginx docker-registry \
  munge slurmctld slurmd; do
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done
echo "setup: all dependencies present"
