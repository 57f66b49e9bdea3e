#!/usr/bin/env bash
# dockerd_stop.sh DIR: stops the engine started by dockerd_start.sh DIR (its containers and its
# containerd with it) and deletes DIR. An engine killed earlier is first restarted on the same
# data so that it stops the containers and the containerd it left running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
dir=${1:?usage: dockerd_stop.sh DIR}
[[ -d $dir ]] || exit 0
containerd_pid=$dir/exec/containerd/containerd.pid
alive() { [[ -s $1 ]] && kill -0 "$(<"$1")" 2>/dev/null; }
if ! alive "$dir/dockerd.pid" && alive "$containerd_pid"; then
  bash "$here/dockerd_start.sh" "$dir"
fi
stop_pid "$dir/dockerd.pid" 60
stop_pid "$containerd_pid" 20
# vfs layers can hold read-only files; the engine is gone, so plain removal is safe now.
rm -rf "$dir"
