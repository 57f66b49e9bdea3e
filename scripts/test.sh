#!/usr/bin/env bash
# Runs every test from a fresh Debian 12 machine: installs what is missing, checks the layer rule
# and the formatting (scripts/check_code.sh), builds, runs the unit and integration suites
# (integration tests start and stop their own services: dockerd, a registry, Alertmanager, a fake
# Kubernetes API server, reverifyd instances, git repositories, trainer processes), then builds the
# unit tests with ASan+UBSan (preset asan) and runs them there. The tolerance simulation is left
# out of the sanitizer run: it is pure arithmetic over a few vectors, already run in the dev build,
# and takes minutes at -O0 under ASan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check_code.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$(nproc)"
ctest --preset dev -j"$(nproc)"

unit_targets=()
for test in tests/*/*_test.cpp; do
  area=$(basename "$(dirname "$test")")
  unit_targets+=("${area}_$(basename "$test" .cpp)")
done
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)" --target "${unit_targets[@]}"
ctest --preset asan -L unit -E tolerance_simulation -j"$(nproc)"
