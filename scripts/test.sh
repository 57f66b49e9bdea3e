#!/usr/bin/env bash
# Runs every test from a fresh Debian 12 machine: installs what is missing, builds, and runs the
# unit and integration suites (integration tests start and stop their own services: Alertmanager,
# a fake Kubernetes API server, reverifyd instances, git repositories, trainer processes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$(nproc)"
ctest --preset dev -j"$(nproc)"
