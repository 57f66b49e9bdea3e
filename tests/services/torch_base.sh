#!/usr/bin/env bash
# torch_base.sh: prints the path of the PyTorch trainer root file system (a tar of Debian 12 with
# python3, numpy and python3-torch, built with mmdebstrap), building it first when the cache has
# none for this recipe and these apt sources. About 6-7 min and 1.15 GB the first time, then
# cached like docker_up.sh's numpy base ($REVERIFY_CACHE_DIR, default /var/cache/reverify-tests).
# Docs, man pages, locales and libtorch's C++ test binaries are left out (dpkg path-exclude).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ensure_packages mmdebstrap

cache=${REVERIFY_CACHE_DIR:-/var/cache/reverify-tests}
mkdir -p "$cache"
debstrap=(mmdebstrap --variant=apt --include=python3-minimal,python3-numpy,python3-torch
  --dpkgopt=force-unsafe-io
  "--dpkgopt=path-exclude=/usr/share/doc/*" "--dpkgopt=path-exclude=/usr/share/man/*"
  "--dpkgopt=path-exclude=/usr/share/locale/*" "--dpkgopt=path-exclude=/usr/lib/libtorch-test/*"
  bookworm)
key=$( { echo "${debstrap[*]}"; cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null || true; } |
  sha256sum | cut -c1-16)
base_tar=$cache/torch-base-$key.tar
(
  flock 9
  if [[ ! -s $base_tar ]]; then
    echo "services: building $base_tar (mmdebstrap with python3-torch, several minutes)" >&2
    log=$(mktemp)
    # mmdebstrap picks the output format from the name: keep ".tar" at the end.
    partial=$cache/partial-torch-$key.tar
    "${debstrap[@]}" "$partial" >"$log" 2>&1 || { tail -n 30 "$log" >&2; rm -f "$log" "$partial"; exit 1; }
    rm -f "$log"
    mv "$partial" "$base_tar"
  fi
) 9>"$cache/.lock"
echo "$base_tar"
