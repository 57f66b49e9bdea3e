# Shared helpers for the service scripts (sourced, not run). Every service is started under a
# folder of its own and stopped by the pid recorded there, never by name.

# Installs the Debian packages given as arguments when any is missing (CI runs as root on a fresh
# clone; scripts/setup.sh normally did this already).
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "services: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Prints a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds or the time is up.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# stop_pid PIDFILE [GRACE_S]: SIGTERM, then SIGKILL after the grace period; waits for the exit.
stop_pid() {
  local pidfile=$1 grace=${2:-20} pid
  [[ -s $pidfile ]] || return 0
  pid=$(<"$pidfile")
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait_until "$grace" bash -c "! kill -0 $pid" || { kill -KILL "$pid" 2>/dev/null || true; wait_until 10 bash -c "! kill -0 $pid"; }
}

# host_rootfs PACKAGE...: prints the path of a root file system tar holding PACKAGES and their
# dependencies, copied from this machine's installed files (rootfs_from_host.py), for `docker
# import`. Cached in $REVERIFY_CACHE_DIR (default /var/cache/reverify-tests), named by the packages
# asked for and a key of the installed versions of everything it holds, so an upgrade builds it
# anew (and the older tar of the same packages goes); concurrent callers wait for one build.
host_rootfs() {
  local here cache name key tar old
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  cache=${REVERIFY_CACHE_DIR:-/var/cache/reverify-tests}
  mkdir -p "$cache"
  name=host-rootfs-$(echo "$*" | sha256sum | cut -c1-8)
  key=$(/usr/bin/python3 "$here/rootfs_from_host.py" --key "$@")
  tar=$cache/$name-$key.tar
  (
    flock 9
    if [[ ! -s $tar ]]; then
      for old in "$cache/$name"-*.tar; do [[ -e $old ]] && rm -f "$old"; done
      /usr/bin/python3 "$here/rootfs_from_host.py" "$tar" "$@" >&2
    fi
  ) 9>"$cache/.lock"
  echo "$tar"
}
