/*
** Reading a JSON result of `tracegate check --format json` back into a
** tg_run_result (see json_read.c), and the cross-rank straggler check that
** `tracegate merge` runs over the merged traces.
*/
#ifndef TG_JSON_READ_H
#define TG_JSON_READ_H

#include <jansson.h>
#include "../eval/result.h"

/* Append the traces of the JSON result at path to run (allocated in
** run->arena). TG_EUSAGE with a diag when the file is not a result. */
tg_status tg_result_read_json(const char *path, tg_run_result *run, tg_diag *diag);

/* Cross-rank straggler rule: for every trace with a p50 steady iteration
** period (the iteration-time-regression rule's metric), compare it with
** the median over all traces; a trace more than `threshold` (0.1 = 10%)
** above it gets a failing `rank-straggler` finding, the others a passing
** one. Needs at least two traces with iterations; returns how many traces
** were compared. */
size_t tg_merge_stragglers(tg_run_result *run, double threshold, tg_severity severity);

#endif
