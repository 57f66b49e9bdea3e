#!/usr/bin/env bash
# slurm_up.sh OUT_DIR: a one-node Slurm cluster on loopback for the tests, as a CTest
# FIXTURES_SETUP (tests/runners/tests.cmake). Everything lives under a fresh temp folder: its own
# munged on a private socket and key (so it never meets a system munged), slurmctld and slurmd on
# free 127.0.0.1 ports, state, spool, logs, and two fake GPUs (character devices aliasing
# /dev/null) declared as GRES type vgpu. Writes what other tests read:
#   OUT_DIR/slurm.env: SLURM_TMP=<temp folder, for slurm_down.sh>  SLURM_CONF=<slurm.conf>
#     SLURM_PARTITION=debug (default)  SLURM_URGENT_PARTITION=urgent (preempts debug)
#     SLURM_GPU_TYPE=vgpu  SLURM_GPUS=2  SLURM_NODE=localhost
#     SLURM_FAULTS=<folder: a file short-gpu-<job name> there makes that job's TaskProlog hide
#     one of its GPUs (a node handing out fewer devices than Slurm allocated)>
# Jobs run as root on this machine (SlurmdUser=root). Memory limits are enforced without cgroups:
# jobacct_gather/linux samples every second and OverMemoryKill ends a job over its --mem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: slurm_up.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ ! -e $out/slurm.env ]] || bash "$here/slurm_down.sh" "$out"
ensure_packages slurm-wlm munge

started=$SECONDS
t=$(mktemp -d /tmp/reverify-slurm.XXXXXX)
chmod 755 "$t"  # munged wants every folder above its socket searchable by all
echo "SLURM_TMP=$t" >"$out/slurm.env"  # lets slurm_down.sh clean up even if we fail below
mkdir -p "$t/munge" "$t/munge-key" "$t/state" "$t/spool" "$t/log" "$t/dev" "$t/faults"
chmod 700 "$t/munge-key"
mungekey -c -f -k "$t/munge-key/munge.key"
munged --socket="$t/munge/munge.sock" --key-file="$t/munge-key/munge.key" \
  --pid-file="$t/munge/munged.pid" --log-file="$t/munge/munged.log" \
  --seed-file="$t/munge/munged.seed"

mknod "$t/dev/gpu0" c 1 3
mknod "$t/dev/gpu1" c 1 3
cat >"$t/task_prolog.sh" <<SH
#!/bin/sh
# A test fault: the job loses one of its two GPUs between the allocation and its start.
if [ -e "$t/faults/short-gpu-\$SLURM_JOB_NAME" ]; then echo "export CUDA_VISIBLE_DEVICES=0"; fi
SH
chmod 755 "$t/task_prolog.sh"

ctld_port=$(free_port)
slurmd_port=$(free_port)
while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(free_port); done
cat >"$t/slurm.conf" <<CONF
ClusterName=reverifytest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$t/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/log/slurmctld.log
SlurmdLogFile=$t/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
TaskProlog=$t/task_prolog.sh
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=task=1
MpiDefault=none
MinJobAge=900
KillWait=2
InactiveLimit=0
SchedulerType=sched/backfill
# Schedule a submitted job at once (the defaults wait up to 3 s, for high submission rates).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
GresTypes=gpu
NodeName=localhost CPUs=2 RealMemory=3072 Gres=gpu:vgpu:2 Feature=fakegpu State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=2
CONF
cat >"$t/gres.conf" <<CONF
NodeName=localhost Name=gpu Type=vgpu File=$t/dev/gpu[0-1]
CONF

export SLURM_CONF=$t/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
node_idle() { sinfo -h -n localhost -o %T | grep -qx idle; }
if ! wait_until 60 node_idle; then
  echo "slurm_up: the node did not come up within 60 s; logs:" >&2
  tail -n 20 "$t/log/slurmctld.log" "$t/log/slurmd.log" >&2 || true
  exit 1
fi

cat >"$out/slurm.env" <<ENV
SLURM_TMP=$t
SLURM_CONF=$t/slurm.conf
SLURM_PARTITION=debug
SLURM_URGENT_PARTITION=urgent
SLURM_GPU_TYPE=vgpu
SLURM_GPUS=2
SLURM_NODE=localhost
SLURM_FAULTS=$t/faults
ENV
cat "$out/slurm.env"
echo "slurm_up: cluster ready in $((SECONDS - started)) s"
