#!/usr/bin/env bash
# CTest k8s_job_schema: dumps the Jobs the kubernetes runner generates and validates them with
# kubernetes-models (official OpenAPI schema), installed with `npm ci` from the committed
# package-lock.json into the build folder. Fails (never skips) when node or npm is missing.
#   run_schema_check.sh DUMP_EXE SOURCE_DIR(tests/k8s) WORK_DIR
set -euo pipefail
dump=$1 src=$2 work=$3
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "k8s_job_schema: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done
mkdir -p "$work"
# Reinstall only when the lockfile changed.
if ! cmp -s "$src/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules/kubernetes-models" ]; then
  cp "$src/package.json" "$src/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
rm -rf "$work/jobs" && mkdir -p "$work/jobs"
"$dump" "$work/jobs"
cp "$src/validate_job.mjs" "$work/"
node "$work/validate_job.mjs" "$work/jobs" "$src/broken_job.json"
