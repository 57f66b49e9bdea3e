#!/usr/bin/env bash
# hostile_unit.sh: a hostile job (tests/runners/fixtures/hostile_job.py) against reverifyd run as
# systemd/reverifyd.service runs it, with the unit's settings reproduced by hand (this machine has
# no systemd PID 1). Every attempt on the verifier must fail; the test asserts each one.
#   Usage (as root): hostile_unit.sh REVERIFYD_BINARY
#
# Reproduced from the unit:
#   User=/Group=            a system user made for the test (reverify-hostile), no other groups
#   NoNewPrivileges=yes, CapabilityBoundingSet=, AmbientCapabilities=
#                           setpriv --no-new-privs --bounding-set=-all --inh-caps=-all
#   UMask=0027, WorkingDirectory=, a clean environment
#   StateDirectory= (0750)  the state folder owned by that user, mode 0750
#   ConfigurationDirectory= the config folder root:user 0750, config 0640, every secret file (API
#                           token, PagerDuty key, webhook and Alertmanager tokens, Slack URL,
#                           attestation key) 0600 owned by the user
#   ProtectSystem=strict    every mount read-only in the daemon's mount namespace except /proc,
#                           /dev, /sys and the state folder
#   ProtectHome=yes         empty read-only /home, /root and /run/user
#   PrivateTmp=yes          a /tmp and /var/tmp of its own
#   Delegate=yes            run 1: a cgroup v2 folder handed to the user, the daemon inside it
#   (no cgroups)            run 2: every cgroup file system read-only (as ProtectControlGroups=yes
#                           or a host without delegation gives): the sandbox must hold alone
# Not reproduced (they need systemd's seccomp filters and namespaces): RestrictNamespaces=,
# SystemCallFilter=, RestrictAddressFamilies=, ProtectKernelModules=, ProtectClock=,
# ProtectHostname=, LockPersonality=, RestrictRealtime=, RestrictSUIDSGID=,
# SystemCallArchitectures=; tests/daemon/systemd_verify.sh checks the unit allows what the sandbox
# needs (the namespaces, @mount, AF_NETLINK) and mounts nothing over /proc.
set -euo pipefail
daemon=${1:?usage: hostile_unit.sh REVERIFYD_BINARY}
source_dir=${REVERIFY_SOURCE_DIR:?run through ctest}
user=reverify-hostile
[[ $(id -u) == 0 ]] || { echo "hostile_unit.sh: needs root (it makes a user and mounts)"; exit 1; }
command -v bwrap >/dev/null || { echo "hostile_unit.sh: bubblewrap is missing (scripts/setup.sh)"; exit 1; }
id "$user" >/dev/null 2>&1 ||
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
uid=$(id -u "$user") gid=$(id -g "$user")

# Outside /tmp: the daemon gets a /tmp of its own.
base=${REVERIFY_BUILD_DIR:?run through ctest}
case $(realpath -m "$base")/ in
  /tmp/* | /var/tmp/*)
    echo "hostile_unit: the build folder $base is under /tmp or /var/tmp, which the unit's" \
      "PrivateTmp= hides from reverifyd (its binary and state folder with it): build elsewhere" >&2
    exit 1
    ;;
esac
t=$(mktemp -d "$base/hostile-unit.XXXXXX")
chmod 0755 "$t"
daemon_pid=
cgroup=
cleanup() {
  [[ -z $daemon_pid ]] || kill -9 "$daemon_pid" 2>/dev/null || true
  [[ -z $daemon_pid ]] || wait "$daemon_pid" 2>/dev/null || true
  [[ -z $cgroup ]] || rmdir "$cgroup" 2>/dev/null || true
  rm -rf "$t"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
secret() { openssl rand -hex 32; }

fail=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "  ok      $name"; else echo "  FAILED  $name"; fail=1; fi
}

# One daemon, one hostile verification; $1 = delegate | readonly (cgroups).
run_once() {
  local mode=$1 etc=$t/$1/etc/reverify state=$t/$1/state port
  port=$(free_port)
  mkdir -p "$etc" "$state/attest" "$t/$1/registry/hostile/1" "$t/$1/repo"
  local -A files=(
    ["read api.token"]=$etc/api.token
    ["read the PagerDuty routing key"]=$etc/pagerduty.key
    ["read the webhook token"]=$etc/webhook.token
    ["read the Alertmanager token"]=$etc/alertmanager.token
    ["read the Slack URL"]=$etc/slack.url
  )
  for name in "${!files[@]}"; do secret >"${files[$name]}"; done
  echo "https://hooks.slack.invalid/$(secret)" >"$etc/slack.url"
  openssl genpkey -algorithm ed25519 -out "$state/attest/ed25519.pem" 2>/dev/null
  files["read the attestation key"]=$state/attest/ed25519.pem
  local token; token=$(cat "$etc/api.token")
  cat >"$etc/reverify.yaml" <<YAML
state_dir: $state
sync_interval: 1s
api: {address: 127.0.0.1, port: $port, token_file: $etc/api.token}
sources: [{name: reg, kind: directory, root: $t/$1/registry}]
models: {default: {timeout: 2m}}
runner: {kind: process, process: {path_env: /usr/bin:/bin, kill_grace: 1s}}
attestation: {key_file: $state/attest/ed25519.pem, verifier_id: "https://reverify.test/hostile"}
pager:
  retry: {initial: 1h}
  senders:
    pd: {kind: pagerduty, routing_key_file: $etc/pagerduty.key, url: "http://127.0.0.1:9/pd"}
    hook: {kind: webhook, url: "http://127.0.0.1:9/hook", token_file: $etc/webhook.token}
    am: {kind: alertmanager, url: "http://127.0.0.1:9", token_file: $etc/alertmanager.token}
    chat: {kind: slack, url_file: $etc/slack.url}
  routes: [{owner: "*", senders: [pd, hook, am, chat]}]
YAML
  files["read the config"]=$etc/reverify.yaml
  chown -R root:"$gid" "$t/$1/etc" && chmod 0750 "$t/$1/etc" "$etc" && chmod 0640 "$etc/reverify.yaml"
  for name in "${!files[@]}"; do
    [[ $name == "read the config" ]] || { chown "$uid:$gid" "${files[$name]}"; chmod 0600 "${files[$name]}"; }
  done
  chown -R "$uid:$gid" "$state" && chmod 0750 "$state"

  cp "$source_dir/tests/runners/fixtures/hostile_job.py" "$t/$1/repo/train.py"
  git -C "$t/$1/repo" init -q && git -C "$t/$1/repo" add train.py &&
    git -C "$t/$1/repo" -c user.name=t -c user.email=t@t commit -q -m hostile
  local commit; commit=$(git -C "$t/$1/repo" rev-parse HEAD)

  local marker="REVERIFY_DAEMON_MARKER=$(secret)"
  local cgroup_setup=""
  if [[ $mode == delegate ]]; then
    local v2; v2=$(findmnt -rn -t cgroup2 -o TARGET | head -n1)
    cgroup=$v2/reverify-hostile-$$
    mkdir "$cgroup" && chown -R "$uid:$gid" "$cgroup"
    cgroup_setup="echo \$\$ > $cgroup/cgroup.procs"
  else
    cgroup_setup='for m in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do mount -o remount,bind,ro "$m"; done'
  fi
  # The unit's mount namespace, then the unit's user, privileges and environment.
  unshare --mount --propagation private -- bash -c "
    set -e
    $cgroup_setup
    mount --bind '$state' '$state'
    for m in \$(findmnt -rn -o TARGET | grep -vE '^/(proc|sys|dev)(/|\$)' | grep -vx '$state'); do
      mount -o remount,bind,ro \"\$m\" 2>/dev/null || true
    done
    for d in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs \$d; done
    for d in /home /root /run/user; do [ ! -d \$d ] || mount -t tmpfs -o ro,mode=0755 tmpfs \$d; done
    cd '$state'
    umask 0027
    exec setpriv --reuid=$uid --regid=$gid --clear-groups --no-new-privs --bounding-set=-all \
      --inh-caps=-all -- env -i PATH=/usr/bin:/bin '$marker' '$daemon' --config '$etc/reverify.yaml'
  " >"$t/$1/daemon.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$t/$1/daemon.log"; exit 1; }

  # What the job is told to try; the daemon's pid is known now, so the manifest comes now.
  local targets
  targets=$(jq -cn --argjson pid "$daemon_pid" --arg marker "$marker" --arg port "$port" \
    --arg token "$token" --arg db "$state/reverify.db" --arg state "$state" \
    --arg hosttmp "/tmp/reverify-hostile-$$-$1" --arg ip "$(hostname -I | awk '{print $1}')" \
    --arg sock "$t/$1/engine.sock" --argjson reads "$(for n in "${!files[@]}"; do
        jq -cn --arg n "$n" --arg p "${files[$n]}" '{($n): $p}'; done | jq -cs add)" '{
      read: $reads,
      open_rw: {"open the store read-write": $db},
      environ: {"read the verifier'"'"'s /proc/<pid>/environ": [$pid, $marker]},
      signal: {"signal the verifier (kill -0)": $pid},
      http: {"POST /v1/verifications without a token": ["127.0.0.1", ($port|tonumber), null],
             "POST /v1/verifications with the token": ["127.0.0.1", ($port|tonumber), $token]},
      connect: ({"connect to the verifier'"'"'s port on 127.0.0.1": ["127.0.0.1", ($port|tonumber)]}
                + (if $ip == "" then {} else {"connect to an outside address": [$ip, ($port|tonumber)]} end)),
      unix: {"connect to a container engine'"'"'s socket": $sock},
      write: {"write beside the out folder (the scratch records)": "@out_parent/forged_exit_status",
              "write into the state folder": ($state + "/forged"),
              "write into the host'"'"'s /tmp": $hosttmp}}')
  /usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); import time; time.sleep(600)' \
    "$t/$1/engine.sock" & local engine=$!
  sleep 0.2; chmod 0666 "$t/$1/engine.sock"
  jq -n --arg repo "$t/$1/repo" --arg commit "$commit" --arg targets "$targets" '{
    schema: "reverify.manifest/v1", model: "hostile", version: "1", owner: "team-test",
    level: "rerunnable", code: {repo: $repo, commit: $commit, dirty: false},
    environment: {env: {HOSTILE_TARGETS: $targets}},
    run: {entrypoint: ["python3", "train.py"], started_at: "2026-01-01T00:00:00Z", runner: "t"},
    evaluation: {primary: {name: "accuracy", value: 0.9, higher_is_better: true}}}' \
    >"$t/$1/registry/hostile/1/manifest.json"
  chmod -R a+rX "$t/$1/registry" && chown -R "$uid:$gid" "$t/$1/repo"  # git: a repository of its own

  # Listed, then verified (a release seen after the first listing is verified promptly; the
  # trigger makes sure).
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/v1/models/hostile/versions/1" >/dev/null && break; sleep 0.1
  done
  local answer
  answer=$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $token" \
    -H "Content-Type: application/json" -d '{"model": "hostile", "version": "1"}' \
    "http://127.0.0.1:$port/v1/verifications")
  [[ $answer == *" 202" || $answer == *" 409" ]] || { echo "trigger: $answer"; cat "$t/$1/daemon.log"; exit 1; }
  local row=""
  for _ in $(seq 600); do
    row=$(curl -sf "http://127.0.0.1:$port/v1/verifications" |
      jq -c '[.verifications[] | select(.model == "hostile" and .class != null)] | first // empty')
    [[ -n $row ]] && break
    sleep 0.2
  done
  kill "$engine" 2>/dev/null || true
  [[ -n $row ]] || {
    echo "no verdict"; curl -s "http://127.0.0.1:$port/v1/verifications"; cat "$t/$1/daemon.log"; exit 1
  }
  local id; id=$(jq -r '.id' <<<"$row")
  local detail; detail=$(curl -sf "http://127.0.0.1:$port/v1/verifications/$id")
  local log; log=$(jq -r '.log_tail' <<<"$detail")
  echo "== $mode: verdict $(jq -r '.class' <<<"$detail"); the job's attempts:"
  jq -r '"    explanation: " + .explanation' <<<"$detail"
  grep '^\[reverify\]' <<<"$log" | sed 's/^/    /' || true
  grep '^HOSTILE ' <<<"$log" | sed 's/^/    /'
  local names; names=$(jq -r '[.[] | keys[]] | .[]' <<<"$targets")
  while IFS= read -r name; do
    check "$mode: $name: attempted" grep -qF "HOSTILE $name: " <<<"$log"
    case $name in
      "write into the host's /tmp")
        check "$mode: $name: not on the host" test ! -e "/tmp/reverify-hostile-$$-$1" ;;
      *) check "$mode: $name: blocked" grep -qF "HOSTILE $name: blocked" <<<"$log" ;;
    esac
  done <<<"$names"
  check "$mode: the state folder holds no forged file" test ! -e "$state/forged"
  check "$mode: the job ran in its sandbox" bash -c "! grep -q 'trust_job_code is true' <<<\"\$0\"" "$log"
  # No secret in what the daemon wrote or answered.
  for name in "${!files[@]}"; do
    [[ $name == "read the config" || $name == "read the attestation key" ]] && continue
    local value; value=$(cat "${files[$name]}")
    check "$mode: $name: its value is in no log, response or store" bash -c \
      '! grep -rqF -- "$0" "$1" "$2/reverify.db" <<<"" && ! grep -qF -- "$0" <<<"$3"' \
      "$value" "$t/$1/daemon.log" "$state" "$detail"
  done
  kill -TERM "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=
  [[ -z $cgroup ]] || { rmdir "$cgroup" 2>/dev/null || true; cgroup=; }
}

run_once delegate
run_once readonly
[[ $fail == 0 ]] && echo "hostile_unit: every attempt blocked, under both cgroup setups"
exit $fail
