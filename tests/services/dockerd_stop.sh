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
# dockerd bind-mounts its data root onto itself; an engine that was killed leaves that mount
# behind (a restarted one stacks a second). Unmount them, deepest first, before removing DIR.
dir=$(cd "$dir" && pwd)
while read -r target; do
  umount "$target"
done < <(awk -v d="$dir" 'index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r)
rm -rf "$dir"
