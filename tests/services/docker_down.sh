#!/usr/bin/env bash
# docker_down.sh OUT_DIR: stops what docker_up.sh OUT_DIR started (by pid) and removes its files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: docker_down.sh OUT_DIR}
[[ -s $out/docker.env ]] || exit 0
t=$(sed -n 's/^DOCKER_TMP=//p' "$out/docker.env")
if [[ -n $t && -d $t ]]; then
  bash "$here/dockerd_stop.sh" "$t/engine"
  stop_pid "$t/registry.pid" 20
  rm -rf "$t"
fi
rm -f "$out/docker.env"
