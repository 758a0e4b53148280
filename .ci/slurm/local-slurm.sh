#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, with fake GPUs: the cluster that
# tests/test_slurm_cluster.py submits the quick preset to, and a recipe for trying profiles/slurm.
#
#   .ci/slurm/local-slurm.sh start DIR   install the Debian packages if missing, write the config, start
#                                        munged (unless one runs already), slurmctld and slurmd
#   sinfo; squeue; sbatch ...            the usual client commands then talk to this cluster
#   .ci/slurm/local-slurm.sh stop DIR    cancel its jobs, stop the daemons that `start` started (by the PIDs
#                                        recorded under DIR/run), remove the config files it wrote
#
# Needs root and apt-get (tested on Debian 12: Slurm 22.05, munge 0.5; no systemd needed). State, logs
# and PID files live under DIR (keep its path short: slurmd puts sockets there). The config goes to the
# default path /etc/slurm/{slurm,gres}.conf, as on a real cluster: the plugin's job step removes every
# SLURM_* variable (SLURM_CONF included) before its nested `srun`, so a config elsewhere is not found
# inside jobs. An existing /etc/slurm/slurm.conf not written by this script is never overwritten.
# Exit status 3: the packages are missing and cannot be installed (the test then skips, saying so).
#
# No accounting database (no slurmdbd): `sacct` does not work, so Snakemake's SLURM plugin must poll with
# `--slurm-status-command squeue` (.ci/slurm/profile). Every finished job is logged instead to
# DIR/log/jobcomp.log (jobcomp/filetxt): one line per job with its id, name, state and node.
# MinJobAge=3600 keeps finished jobs visible to squeue/scontrol for an hour: the squeue polling needs
# that (at least 3x the first-check delay), and the test reads each job back with scontrol.
#
# The node is declared larger than the machine (NODE_CPUS=16, NODE_MEM_MB=131072, NODE_GPUS=4 unless set;
# accepted through SlurmdParameters=config_overrides and not enforced without cgroups) so that the production
# requests of the rules (up to 4 CPUs and 50 GB per job, rules/common.smk) schedule unchanged, four at a time. The GPUs are
# fake (gres.conf, device files that are links to /dev/null): `--gpus=1` and `--gres=gpu:1` schedule against
# them, and SLURM sets CUDA_VISIBLE_DEVICES in the job as on a real GPU node (no CUDA here: torch uses the CPU).
# Four, not one, so that the quick preset's ~35 one-GPU training jobs do not queue behind each other.
set -euo pipefail

cmd=${1:-}; DIR=${2:-}
if [ -z "$cmd" ] || [ -z "$DIR" ]; then echo "usage: $0 start|stop DIR" >&2; exit 2; fi
mkdir -p "$DIR"; DIR=$(cd "$DIR" && pwd)
CONF=/etc/slurm/slurm.conf GRES=/etc/slurm/gres.conf
MARK="# written by isonorm .ci/slurm/local-slurm.sh for $DIR"

# Stop one daemon by the PID in its PID file, if that PID is still the daemon we started.
stop_pid() {  # name pidfile
  local name=$1 file=$2 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
    echo "stopped $name (PID $pid)"
  fi
  rm -f "$file"
}

if [ "$cmd" = stop ]; then
  if [ -s "$DIR/run/slurmctld.pid" ]; then
    scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  stop_pid slurmd "$DIR/run/slurmd.pid"
  stop_pid slurmctld "$DIR/run/slurmctld.pid"
  stop_pid munged "$DIR/run/munged.pid"   # present only when `start` started munged itself
  for f in "$CONF" "$GRES"; do
    if [ -f "$f" ] && [ "$(head -1 "$f")" = "$MARK" ]; then rm -f "$f"; fi
  done
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

# --- 1. packages ----------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "needs root (installs packages, starts slurmctld, slurmd and munged)" >&2; exit 3; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
   || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || { echo "slurm and munge are not installed, and there is no apt-get" >&2; exit 3; }
  export DEBIAN_FRONTEND=noninteractive
  { apt-get -qq -o DPkg::Lock::Timeout=300 update \
    && apt-get -qq -o DPkg::Lock::Timeout=300 install -y --no-install-recommends \
         slurmctld slurmd slurm-client munge >/dev/null; } \
    || { echo "apt-get could not install slurmctld slurmd slurm-client munge" >&2; exit 3; }
fi

# Never touch a SLURM that is already set up or running here.
for d in slurmctld slurmd; do
  if pgrep -x "$d" >/dev/null; then echo "a $d is already running on this machine; stop it first" >&2; exit 1; fi
done
if [ -f "$CONF" ] && ! head -1 "$CONF" | grep -q "^# written by isonorm .ci/slurm/local-slurm.sh"; then
  echo "$CONF exists and was not written by this script; not overwriting it" >&2; exit 1
fi

# From here on, a failed start stops whatever it had started.
trap 'rc=$?; [ $rc = 0 ] || { echo "start failed; stopping what it started" >&2; "$0" stop "$DIR" >&2; }' EXIT

# --- 2. munge: the cluster's authentication (Debian's postinst creates /etc/munge/munge.key) --------
mkdir -p "$DIR"/{run,log,state/ctld,state/d} /etc/slurm
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || mungekey --create
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge /var/log/munge /var/lib/munge
  su -s /bin/sh munge -c "/usr/sbin/munged --pid-file=/run/munge/munged.pid"
  for _ in $(seq 25); do [ -s /run/munge/munged.pid ] && break; sleep 0.2; done
  cp /run/munge/munged.pid "$DIR/run/munged.pid"   # ours: `stop` ends it
  munge -n | unmunge >/dev/null
fi

# --- 3. config ------------------------------------------------------------------------------------
H=$(hostname -s)   # NodeName must be the short host name (or start slurmd with -N NAME)
cat > "$CONF" <<CONF
$MARK
ClusterName=localci
SlurmctldHost=${H}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state/ctld
SlurmdSpoolDir=$DIR/state/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MinJobAge=3600
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
GresTypes=gpu
NodeName=${H} NodeAddr=127.0.0.1 CPUs=${NODE_CPUS:-16} RealMemory=${NODE_MEM_MB:-131072} Gres=gpu:${NODE_GPUS:-4} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
mkdir -p "$DIR/gpu"; for i in $(seq 0 $((${NODE_GPUS:-4} - 1))); do ln -sf /dev/null "$DIR/gpu/fake$i"; done
cat > "$GRES" <<CONF
$MARK
AutoDetect=off
NodeName=${H} Name=gpu File=$DIR/gpu/fake[0-$((${NODE_GPUS:-4} - 1))]
CONF

# --- 4. daemons (they fork into the background and write their PID files under DIR/run) ------------
slurmctld
slurmd
for _ in $(seq 60); do sinfo -h -o %t 2>/dev/null | grep -qx idle && break; sleep 0.5; done
if ! sinfo -h -o %t | grep -qx idle; then
  echo "the node did not become idle:" >&2; sinfo >&2 || true; tail -n 20 "$DIR"/log/*.log >&2; exit 1
fi
sinfo -N -o "%N %t %c %m %G"
