#!/usr/bin/env bash
# Runs every test from a fresh Debian 12 machine: installs what is missing, checks the layer rule,
# the formatting and the docs (scripts/check_code.sh), builds (preset ci: the dev build as a unity
# build, docs/development.md "CI"), runs the unit and then the integration suite (integration
# tests start and stop their own services: dockerd, a registry, Alertmanager, a Slurm cluster, a
# fake Kubernetes API server, reverifyd instances, git repositories, trainer processes), then
# builds the unit tests with ASan+UBSan (preset asan) and runs them there, and last builds the
# daemon's unit tests with ThreadSanitizer (preset tsan) and runs the in-process loop test
# (daemon_loop_test: the loop, its worker threads, the HTTP snapshot) under it. The tolerance
# simulation is left out of the sanitizer run: it is pure arithmetic over a few vectors, already
# run in the ci build, and takes minutes at -O0 under ASan.
# Each stage's wall time is printed at the end, whether the run passed or not.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_names=()
stage_seconds=()
report_stages() {
  local status=$? i total=0
  echo "test.sh: stage times (wall clock)"
  for i in "${!stage_names[@]}"; do
    printf '  %-34s %5d s\n' "${stage_names[$i]}" "${stage_seconds[$i]}"
    total=$((total + stage_seconds[i]))
  done
  printf '  %-34s %5d s  (%s)\n' "total" "$total" "$([[ $status -eq 0 ]] && echo passed || echo "FAILED, exit $status")"
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
stage "tests: unit" ctest --preset ci -L unit -j"$(nproc)"
stage "tests: integration" ctest --preset ci -L integration -j"$(nproc)"

stage "build (asan, unit tests)" bash -c 'cmake --preset asan >/dev/null && cmake --build --preset asan -j"$(nproc)" --target unit_tests'
stage "tests: unit under asan" ctest --preset asan -L unit -E tolerance_simulation -j"$(nproc)"
stage "build (tsan, daemon tests)" bash -c 'cmake --preset tsan >/dev/null && cmake --build --preset tsan -j"$(nproc)" --target daemon_unit_tests'
stage "tests: daemon loop under tsan" ctest --preset tsan -R '^daemon_loop_test$'

