#!/usr/bin/env bash
# dockerd_start.sh DIR: starts a private Docker engine whose every file lives under DIR (socket
# DIR/docker.sock, pid file DIR/dockerd.pid, log DIR/dockerd.log) exactly as STACK.md describes:
# no iptables, no bridge (containers need NetworkMode none), vfs storage. Returns once the engine
# answers GET /_ping. Reusing a DIR restarts the engine on the same data (it then cleans up the
# containers a killed engine left behind).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
dir=${1:?usage: dockerd_start.sh DIR}
ensure_packages docker.io
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# A unix socket path is limited to 107 bytes.
((${#dir} < 90)) || { echo "dockerd_start: $dir is too long for a socket path" >&2; exit 1; }
setsid dockerd --host "unix://$dir/docker.sock" --data-root "$dir/root" --exec-root "$dir/exec" \
  --pidfile "$dir/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
  --storage-driver=vfs >>"$dir/dockerd.log" 2>&1 </dev/null &
echo $! >"$dir/dockerd.launch.pid"
if ! wait_until 60 curl -sf --unix-socket "$dir/docker.sock" http://localhost/_ping; then
  echo "dockerd_start: engine did not answer within 60 s; log:" >&2
  tail -n 30 "$dir/dockerd.log" >&2
  exit 1
fi
