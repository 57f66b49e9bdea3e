#!/usr/bin/env bash
# slurm_down.sh OUT_DIR: stops what slurm_up.sh OUT_DIR started and removes its files. Jobs the
# tests left behind are cancelled first (their slurmstepd outlives slurmd otherwise); then
# slurmd, slurmctld and munged are stopped by the pids they recorded, never by name.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: slurm_down.sh OUT_DIR}
[[ -s $out/slurm.env ]] || exit 0
t=$(sed -n 's/^SLURM_TMP=//p' "$out/slurm.env")
if [[ -n $t && -d $t ]]; then
  export SLURM_CONF=$t/slurm.conf
  alive() { [[ -s $1 ]] && kill -0 "$(<"$1")" 2>/dev/null; }
  if alive "$t/slurmctld.pid"; then
    left=$(squeue -h -o %i 2>/dev/null || true)
    if [[ -n $left ]]; then
      echo "slurm_down: cancelling jobs left behind: $(echo $left)" >&2
      # shellcheck disable=SC2086
      scancel $left || true
      wait_until 30 bash -c '[[ -z $(squeue -h -o %i) ]]' || echo "slurm_down: jobs still listed" >&2
    fi
  fi
  stop_pid "$t/slurmd.pid" 20
  stop_pid "$t/slurmctld.pid" 20
  stop_pid "$t/munge/munged.pid" 20
  rm -rf "$t"
fi
rm -f "$out/slurm.env"
