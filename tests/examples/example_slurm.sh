#!/usr/bin/env bash
# The example digits-mlp verified end to end through the `slurm` runner, on the one-node cluster
# of the CTest fixture `slurm` ($REVERIFY_SERVICES_DIR/slurm.env) or, run by hand without it, one
# of its own (tests/services/slurm_up.sh, stopped on exit):
#  1. `reverify run --config slurm.yaml`: the rebuild is a Slurm batch job (its queue lines name
#     the partition and the node) and reaches `passed`;
#  2. reverifyd on the same config, with the node taken by another job: the cycle's verification
#     waits in Slurm's queue, and the status page and `reverify plan` say "pending in partition
#     debug (Resources)";
#  3. reverifyd killed (SIGKILL) while the job waits, then started again: it reattaches to the job
#     by its rebuild id, the node is freed, and the verification passes, not error:runner-lost;
#  4. nothing is left in squeue.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
source "$src/tests/services/lib.sh"
t="$(mktemp -d)"
svc="${REVERIFY_SERVICES_DIR:-}"
own_services=0
if [[ -z "$svc" || ! -s "$svc/slurm.env" ]]; then
  svc="$t/services"
  own_services=1
fi
blocker=""
cleanup() {
  stop_pid "$t/reverifyd.pid" 30 || true
  [[ -z $blocker ]] || scancel "$blocker" 2>/dev/null || true
  ((own_services == 0)) || bash "$src/tests/services/slurm_down.sh" "$svc" >/dev/null 2>&1 || true
  rm -rf "$t"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ ! -e $t/reverifyd.log ]] || tail -n 40 "$t/reverifyd.log" >&2; exit 1; }

((own_services == 0)) || bash "$src/tests/services/slurm_up.sh" "$svc" >/dev/null
# shellcheck disable=SC1091
source "$svc/slurm.env"
export SLURM_CONF

mkdir -p "$t/examples"  # the manifest's data and eval URIs are relative to the registry
cp -r "$src/examples/registry" "$src/examples/digits" "$t/examples/"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null
port=$(free_port)
url="http://127.0.0.1:$port"
write_config() {  # FILE STATE_DIR
  cat >"$1" <<EOF
state_dir: $2
sources: [{name: local, kind: directory, root: examples/registry}]
code_mirrors: {https://git.example/vision/digits-trainer.git: trainer}
runner:
  kind: slurm
  trust_job_code: true           # the one-node cluster runs jobs as this machine's root
  slurm:
    slurm_conf: $SLURM_CONF
    shared_root: $t/shared       # the node is this machine: any folder is shared
    partition: $SLURM_PARTITION
    memory: 1G
    poll_interval: 1s
schedule: {jitter: 0s}
models: {default: {timeout: 10m}}
api: {port: $port}
EOF
}
# `reverify run` and reverifyd keep stores of their own: the daemon's cycle must not find the
# version verified already.
write_config "$t/slurm.yaml" state
write_config "$t/daemon.yaml" daemon-state

echo "== 1. reverify run through Slurm"
status=0
"$cli" run digits-mlp@2026.11.1 --config "$t/slurm.yaml" --registry "$t/examples/registry" \
  >"$t/run.txt" 2>&1 || status=$?
cat "$t/run.txt"
[[ $status == 0 ]] || fail "expected passed (exit 0), got exit $status"
grep -q "^verdict: passed" "$t/run.txt" || fail "no passed verdict"
grep -q "slurm runner" "$t/run.txt" || fail "not run by the slurm runner"
grep -Eq "queue: slurm job [0-9]+ running in partition $SLURM_PARTITION on $SLURM_NODE" "$t/run.txt" ||
  fail "no queue line naming the partition and the node"
[[ -z $(squeue --noheader --format=%j | grep "^reverify-") ]] || fail "a job is left in squeue: $(squeue)"

echo "== 2. reverifyd: the verification waits in Slurm's queue, and says why"
blocker=$(sbatch --parsable --job-name=example-blocker --cpus-per-task=2 --mem=64M \
  --output=/dev/null --wrap="sleep 600")
blocker=${blocker%%;*}
blocker_runs() { [[ $(squeue --noheader --jobs="$blocker" --format=%T) == RUNNING ]]; }
wait_until 30 blocker_runs || fail "the blocking job did not start"
start_daemon() {
  "$build/daemon/reverifyd" --config "$t/daemon.yaml" 2>>"$t/reverifyd.log" &
  echo $! >"$t/reverifyd.pid"
  wait_until 30 curl -sf "$url/healthz" >/dev/null || fail "reverifyd did not answer /healthz"
}
start_daemon
pending_shown() {
  curl -sf "$url/" >"$t/status.html" &&
    grep -q "pending in partition $SLURM_PARTITION (Resources)" "$t/status.html"
}
wait_until 120 pending_shown || fail "the status page never showed the pending job: $(grep -o 'slurm [^<]*' "$t/status.html")"
grep -o "slurm [0-9]*: pending in partition [^<]*" "$t/status.html"
"$cli" plan --config "$t/daemon.yaml" >"$t/plan.txt"
cat "$t/plan.txt"
grep -Eq "^  running digits-mlp@2026.11.1 +full +verification [0-9]+ +slurm job [0-9]+: pending in partition $SLURM_PARTITION \(Resources\)$" \
  "$t/plan.txt" || fail "reverify plan does not show the pending job with its partition and reason"
job=$(squeue --noheader --format='%i %j' | awk '$2 ~ /^reverify-verification-/ {print $1}')
[[ -n $job ]] || fail "no reverify job in squeue"

echo "== 3. reverifyd killed while the job waits; started again, it reattaches"
kill -KILL "$(<"$t/reverifyd.pid")"
wait_until 10 bash -c "! kill -0 $(<"$t/reverifyd.pid") 2>/dev/null" || fail "reverifyd did not die"
[[ $(squeue --noheader --jobs="$job" --format=%T) == PENDING ]] || fail "job $job is no longer pending"
start_daemon
scancel "$blocker"
blocker=""
passed() { curl -s "$url/v1/gate/digits-mlp/2026.11.1" >"$t/gate.json" && grep -Eq '"ok": ?true' "$t/gate.json"; }
wait_until 300 passed || fail "the verification did not pass after the restart: $(cat "$t/gate.json")"
curl -sf "$url/v1/verifications" >"$t/verifications.json" || fail "GET /v1/verifications failed"
if grep -q "error:runner-lost" "$t/verifications.json"; then fail "a verification was lost"; fi
id=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["verifications"][0]["id"])' \
  <"$t/verifications.json")
curl -sf "$url/v1/verifications/$id" >"$t/verification.json"
grep -Eq "\"resumed\": ?\"reattached to slurm job $job" "$t/verification.json" ||
  fail "the restarted daemon did not reattach to job $job: $(head -c 2000 "$t/verification.json")"
curl -sf "$url/verifications/$id" | grep -q "slurm $job: ran in partition $SLURM_PARTITION on $SLURM_NODE" ||
  fail "the verification page does not say where the job ran"

echo "== 4. nothing left in squeue"
wait_until 30 bash -c '[[ -z $(squeue --noheader --format=%j | grep "^reverify-") ]]' ||
  fail "jobs left in squeue: $(squeue)"
echo "ok: the example passed through Slurm (reverify run and reverifyd, across a restart)"
