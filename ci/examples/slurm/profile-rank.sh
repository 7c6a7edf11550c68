#!/usr/bin/env bash
# One rank of the training step (ci/examples/slurm/README.md): runs its
# command under the profiler, its trace written to
# $TG_TRACE_DIR/rank$SLURM_PROCID (.nsys-rep and, exported, .sqlite), on
# the node where the rank runs.
#
#   srun profile-rank.sh python train.py
#
# TG_PROFILER replaces the profiler command; it is given -o OUT and the
# rank's command (the CI test gives each rank a recorded trace this way).
set -euo pipefail
: "${TG_TRACE_DIR:?set TG_TRACE_DIR}" "${SLURM_PROCID:?profile-rank.sh runs as a task of an srun step}"
mkdir -p "$TG_TRACE_DIR"
# shellcheck disable=SC2086  # TG_PROFILER holds shell words
exec ${TG_PROFILER:-nsys profile -t cuda,nvtx,osrt --export sqlite --force-overwrite true} \
    -o "$TG_TRACE_DIR/rank$SLURM_PROCID" "$@"
