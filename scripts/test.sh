#!/usr/bin/env bash
# Runs every test from a fresh Debian 12 machine: installs what is missing, checks the layer rule,
# the formatting and the docs (scripts/check_code.sh), builds (preset ci: the dev build as a unity
# build, docs/development.md "CI"), runs the unit and then the integration suite (integration
# tests start and stop their own services: dockerd, a registry, Alertmanager, a Slurm cluster, a
# fake Kubernetes API server, reverifyd instances, git repositories, trainer processes). Beside the
# two suites, at the lowest CPU priority, it builds the unit tests with ASan+UBSan (preset asan)
# and the daemon's and the HTTP layer's tests with ThreadSanitizer (preset tsan): the tests leave
# some CPU idle, waiting on services and trainer processes, and a niced build takes only that.
# Then it runs the unit tests under ASan+UBSan and, under TSan, the tests whose threads share
# state: the in-process loop test (daemon_loop_test: the loop, its worker threads, the HTTP
# snapshot), the HTTP API's handlers and the HTTP server's worker threads. The tolerance
# simulation is left out of the sanitizer run: it is pure arithmetic over a few vectors, already
# run in the ci build, and takes minutes at -O0 under ASan.
# Each stage's wall time is printed at the end, whether the run passed or not; the sanitizer
# builds overlap the two suites, so the total is the script's own wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_names=()
stage_seconds=()
sanitizer_log=build/sanitizer-builds.log
sanitizer_seconds_file=build/sanitizer-builds.seconds
sanitizer_pid=
rm -f "$sanitizer_seconds_file"  # a figure from an earlier run is not this run's
report_stages() {
  local status=$? i
  [[ -n $sanitizer_pid ]] && kill -- "-$sanitizer_pid" 2>/dev/null
  echo "test.sh: stage times (wall clock)"
  for i in "${!stage_names[@]}"; do
    printf '  %-40s %5d s\n' "${stage_names[$i]}" "${stage_seconds[$i]}"
  done
  if [[ -s $sanitizer_seconds_file ]]; then
    printf '  %-40s %5d s\n' "(sanitizer builds, beside the suites)" "$(cat "$sanitizer_seconds_file")"
  fi
  printf '  %-40s %5d s  (%s)\n' "total" "$SECONDS" "$([[ $status -eq 0 ]] && echo passed || echo "FAILED, exit $status")"
}
trap report_stages EXIT

# stage NAME COMMAND...: runs COMMAND and records its wall time under NAME.
stage() {
  local name=$1 start=$SECONDS
  shift
  stage_names+=("$name")
  stage_seconds+=(0)
  "$@" || { stage_seconds[-1]=$((SECONDS - start)); return 1; }
  stage_seconds[-1]=$((SECONDS - start))
}

stage "setup (packages)" bash scripts/setup.sh
stage "check (layers, format, docs)" bash scripts/check_code.sh
stage "configure + build (ci)" bash -c 'cmake --preset ci >/dev/null && cmake --build --preset ci -j"$(nproc)"'
# The sanitizer builds run in their own session (setsid), so that a failing run stops the
# compilers too (one process group), at the lowest priority, so that a test that needs the CPU
# gets it. Where the kernel groups processes by session for scheduling (autogroup, on in Debian's
# kernel) a process's nice value only ranks it inside its own session, so the builds' session gets
# nice 19 as a whole too: with nice alone a new session's builds took half the CPU from the tests.
build_sanitizer_tests() {
  local start=$SECONDS
  { echo 19 >/proc/self/autogroup; } 2>/dev/null || true
  cmake --preset asan >/dev/null && cmake --build --preset asan -j"$(nproc)" --target unit_tests &&
    cmake --preset tsan >/dev/null && cmake --build --preset tsan -j"$(nproc)" \
      --target daemon_unit_tests api_unit_tests api_integration_tests
  local status=$?
  echo $((SECONDS - start)) >"$sanitizer_seconds_file"
  return $status
}
# wait_for_sanitizer_builds: the builds' exit status; their log is shown when they failed.
wait_for_sanitizer_builds() {
  local status=0
  wait "$sanitizer_pid" || status=$?
  sanitizer_pid=
  if [[ $status -ne 0 ]]; then
    tail -n 100 "$sanitizer_log"
    echo "test.sh: the sanitizer builds failed (exit $status); their whole log: $sanitizer_log" >&2
  fi
  return $status
}
export -f build_sanitizer_tests
export sanitizer_seconds_file
setsid nice -n 19 bash -c build_sanitizer_tests >"$sanitizer_log" 2>&1 &
sanitizer_pid=$!

stage "tests: unit" ctest --preset ci -L unit -j"$(nproc)"
stage "tests: integration" ctest --preset ci -L integration -j"$(nproc)"
stage "sanitizer builds (after integration)" wait_for_sanitizer_builds
stage "tests: unit under asan" ctest --preset asan -L unit -E tolerance_simulation -j"$(nproc)"
stage "tests: threads under tsan" ctest --preset tsan -j"$(nproc)" -R '^(daemon_loop_test|api_http_api_test|api_http_server_itest)$'
