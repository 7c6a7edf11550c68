#!/usr/bin/env bash
# The tracegate gate of a Slurm job (ci/examples/slurm/README.md), run in
# the batch script after the training step, inside the same allocation:
# one step with a task per node checks each node's ranks there
# (tracegate-node.sh), then one merge gives the job's verdict. Its exit
# status is the merged verdict (0 pass, 1 fail, 2 usage, 3 a trace or a
# rank missing, 4 internal), so the job's is too when it ends the script.
#
#   TG_TRACE_DIR=/local/scratch/$SLURM_JOB_ID TG_RESULT_DIR=$PWD/tg-$SLURM_JOB_ID \
#   TG_WORLD_SIZE=$SLURM_NTASKS tracegate-gate.sh [merge options...]
#
# Merge options (e.g. --format github, -o junit=FILE, --straggler-threshold
# 15%) are passed on (reports go outside TG_RESULT_DIR: the merge reads
# every *.json in it); TG_TRACEGATE and TG_CHECK_ARGS as for
# tracegate-node.sh. TG_RESULT_DIR must be new (or empty) for each run: an
# earlier run's results there make the gate refuse (exit 2).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tg=${TG_TRACEGATE:-tracegate}
: "${SLURM_JOB_ID:?tracegate-gate.sh runs inside a Slurm job}" "${TG_RESULT_DIR:?set TG_RESULT_DIR}"
export TG_WORLD_SIZE=${TG_WORLD_SIZE:-$SLURM_NTASKS}
export TG_TRACE_DIR TG_RESULT_DIR TG_TRACEGATE TG_CHECK_ARGS
mkdir -p "$TG_RESULT_DIR"
# results already there are an earlier run's: one of them would stand for
# a rank that writes none this time (its node crashed), and the merge
# would pass without it. A fresh directory per run (train-and-gate.sbatch:
# per job and attempt); merging a run's results again is `tracegate merge`.
shopt -s nullglob
stale=("$TG_RESULT_DIR"/*.json)
shopt -u nullglob
if [ ${#stale[@]} -gt 0 ]; then
    echo "tracegate-gate: $TG_RESULT_DIR already holds ${#stale[@]} results (${stale[0]}, ...) of an earlier run:" \
         "they could stand for ranks that write none now; give TG_RESULT_DIR a fresh directory" >&2
    exit 2
fi

# one task per node, with every CPU the job has there: --jobs follows them
nodes=${SLURM_JOB_NUM_NODES:-1}
cpus=${SLURM_CPUS_ON_NODE:-1}
srun --nodes="$nodes" --ntasks="$nodes" --ntasks-per-node=1 --cpus-per-task="$cpus" \
    "$here/tracegate-node.sh"
echo "tracegate-gate: node step exit $?" >&2

"$tg" merge --world-size "$TG_WORLD_SIZE" "$@" "$TG_RESULT_DIR"
