/*
** The `info` document of one loaded trace (docs/formats.md, "info and
** metrics"): what the export holds, which nsys wrote it, its GPUs and
** processes, how many rows each activity table gave, the NVTX range names and
** what was not recorded. Built as JSON (the documented contract) and rendered
** as text from it.
*/
#ifndef TG_INFO_H
#define TG_INFO_H

#include <jansson.h>
#include "../trace/trace.h"
#include "../model/model.h"   /* tg_coverage */

/* At most this many names in `nvtx_ranges` (the most frequent first);
** `nvtx_range_names` always gives the number of distinct names. */
#define TG_INFO_MAX_NVTX_NAMES 1000

/* Keys: file, product, nsys_version, schema_version, start_ns, end_ns,
** span_ns, session_start_ns, gpus [{id, name, sm_count, memory,
** compute_capability}], processes [{pid, name}] (those with activity),
** tables {canonical name: name in this file or null}, counts {kernel,
** memcpy, memset, api, nvtx, nvtx_ranges, nvtx_marks, sync, overhead, gpu,
** process}, nvtx_ranges {name: count}, nvtx_range_names,
** iteration_markers (iterdoc.h: how the iterations are found with the
** iteration pattern, NULL: the default), duplicate_api_calls, api_twin_rows, missing
** [sentence]. NULL when out of memory or with a bad pattern (the CLI checks
** it first with tg_model_pattern_ok). */
json_t *tg_info_json(const tg_trace *t, const char *pattern);

/* The same as readable text, one block; malloc'd, NULL when out of memory. */
char *tg_info_text(const tg_trace *t, const char *pattern);

/* The same, with what the CUDA activity covers as check counts it
** (tg_check_open_info_with): a key `coverage` (the JSON result's object)
** and `lost` [sentence], the account check's errors give. cov NULL or not
** set: neither key. */
json_t *tg_info_json_with(const tg_trace *t, const char *pattern, const tg_coverage *cov);
char *tg_info_text_with(const tg_trace *t, const char *pattern, const tg_coverage *cov);

#endif
