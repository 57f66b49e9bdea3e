#!/usr/bin/env bash
# dockerd_start.sh DIR: starts a private Docker engine whose every file lives under DIR (socket
# DIR/docker.sock, pid file DIR/dockerd.pid, log DIR/dockerd.log) as docs/design.md, "Stack notes" describes:
# no iptables, no bridge (containers need NetworkMode none). Storage: overlay2 where the file
# system supports it (a container of the 1.2 GB PyTorch image then starts at once; vfs copies the
# whole root file system into every container), else vfs as docs/design.md, "Stack notes" describes. Returns once the
# engine answers GET /_ping. Reusing a DIR restarts the engine on the same data and driver (it
# then cleans up the containers a killed engine left behind).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
dir=${1:?usage: dockerd_start.sh DIR}
ensure_packages docker.io
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# A unix socket path is limited to 107 bytes.
((${#dir} < 90)) || { echo "dockerd_start: $dir is too long for a socket path" >&2; exit 1; }
start_engine() {  # DRIVER
  setsid dockerd --host "unix://$dir/docker.sock" --data-root "$dir/root" --exec-root "$dir/exec" \
    --pidfile "$dir/dockerd.pid" --iptables=false --ip6tables=false --bridge=none \
    --storage-driver="$1" >>"$dir/dockerd.log" 2>&1 </dev/null &
  local pid=$! deadline=$((SECONDS + 60))
  echo "$pid" >"$dir/dockerd.launch.pid"
  until curl -sf --unix-socket "$dir/docker.sock" http://localhost/_ping >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || return 1  # it exited: e.g. the driver is not supported here
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
# A data root keeps the driver it was made with.
if [[ -d "$dir/root/vfs" ]]; then
  drivers=(vfs)
else
  drivers=(overlay2 vfs)
fi
started=""
for driver in "${drivers[@]}"; do
  if start_engine "$driver"; then
    started=$driver
    break
  fi
  echo "dockerd_start: the $driver storage driver did not start; log:" >&2
  tail -n 5 "$dir/dockerd.log" >&2
  kill "$(cat "$dir/dockerd.launch.pid")" 2>/dev/null || true
  wait_until 30 bash -c '! kill -0 "$(cat "$1")" 2>/dev/null' _ "$dir/dockerd.launch.pid" || true
done
if [[ -z "$started" ]]; then
  echo "dockerd_start: engine did not answer within 60 s; log:" >&2
  tail -n 30 "$dir/dockerd.log" >&2
  exit 1
fi
echo "dockerd_start: engine ready ($started storage)"
