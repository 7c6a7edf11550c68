#!/usr/bin/env bash
# One node's part of the tracegate gate (ci/examples/slurm/README.md): run
# once per node as a job step (`srun --ntasks-per-node=1`), it checks the
# traces this node's ranks recorded, where they recorded them, with as many
# parallel checks as the step has CPUs on the node, and writes one JSON
# result for the node to shared storage. The verdict is the merge's
# (tracegate-gate.sh): this step's own exit status is only printed, so a
# node whose check failed is reported by the merge as missing ranks.
#
# Environment (tracegate-gate.sh sets it):
#   TG_TRACE_DIR     where this node's ranks wrote their traces (node-local is
#                    fine), named rank<N>.sqlite or rank<N>.nsys-rep (nsys:
#                    -o "$TG_TRACE_DIR/rank%q{SLURM_PROCID}")
#   TG_RESULT_DIR    shared directory for the per-node results
#   TG_WORLD_SIZE    ranks of the job (the training step's task count)
#   TG_TRACEGATE     the tracegate binary (default: tracegate on PATH)
#   TG_CHECK_ARGS    more check options, e.g. "--baseline baselines/nightly.yaml"
set -uo pipefail
tg=${TG_TRACEGATE:-tracegate}
node=${SLURMD_NODENAME:-$(hostname -s)}
job=${SLURM_JOB_ID:?tracegate-node.sh runs inside a Slurm job step}
: "${TG_TRACE_DIR:?set TG_TRACE_DIR}" "${TG_RESULT_DIR:?set TG_RESULT_DIR}" "${TG_WORLD_SIZE:?set TG_WORLD_SIZE}"

shopt -s nullglob
# a rank's export, else its report (tracegate exports it with nsys): never both
traces=("$TG_TRACE_DIR"/rank*.sqlite)
for rep in "$TG_TRACE_DIR"/rank*.nsys-rep; do
    [ -e "${rep%.nsys-rep}.sqlite" ] || traces+=("$rep")
done
if [ ${#traces[@]} -eq 0 ]; then
    # no rank ran here (or none wrote its trace): the merge names the ranks
    echo "tracegate-node: $node: no rank*.sqlite or rank*.nsys-rep in $TG_TRACE_DIR" >&2
    exit 0
fi
# as many checks at once as this step has CPUs here, and no more than traces
cpus=${SLURM_CPUS_ON_NODE:-1}
jobs=$(( cpus < ${#traces[@]} ? cpus : ${#traces[@]} ))
[ "$jobs" -gt 256 ] && jobs=256
[ "$jobs" -lt 1 ] && jobs=1

# shellcheck disable=SC2086  # TG_CHECK_ARGS holds shell words
"$tg" check --quiet --jobs "$jobs" \
    --rank-pattern 'rank([0-9]+)\.(sqlite|nsys-rep)$' --world-size "$TG_WORLD_SIZE" \
    --job "$job" --host "$node" ${TG_CHECK_ARGS:-} \
    -o json="$TG_RESULT_DIR/node-$node.json" "${traces[@]}"
status=$?
echo "tracegate-node: $node: ${#traces[@]} traces, --jobs $jobs, check exit $status" >&2
exit 0
