/*
** The `metrics` document of one built model: every fact the engine derives
** from a trace (docs/formats.md, "info and metrics"), as JSON (the contract;
** its keys mirror the reference metrics of the shared traces so the two can
** be compared directly) and as text rendered from that same document.
*/
#ifndef TG_METRICS_H
#define TG_METRICS_H

#include <jansson.h>
#include <stdio.h>
#include "../model/model.h"
#include "../rules/rules.h"

/* work_by_name: names listed in JSON, and in text. */
#define TG_METRICS_MAX_NAMES 200
#define TG_METRICS_TEXT_NAMES 15

/* Keys:
**   file, nsys_version, schema_version
**   trace {duration_ns, kernels, memcpys, memsets, api_calls, nvtx_ranges,
**          devices, iterations, steady_iterations, steady_start_ns,
**          steady_end_ns, steady_duration_ns, blocking_calls, blocked_time_ns,
**          duplicate_api_rows}
**   kernels, gaps, gaps_ge_500ms, gaps_ge_500ms_steady, longest_gap_ns
**   busy_frac {device: f}, busy_frac_steady {device: f},
**   nccl_overlap {device: f} (devices with NCCL kernels only)
**   queue_ns_p50 (all kernels with a matched launch, those that started
**     before their call returned at 0, as HTA; null if none),
**     queue_ns_p50_unclamped (those left out, as nsys stats kernexecsum),
**     queue_clamped (how many started before; docs/rules.md, "Queue time")
**   blocking_calls, blocking_calls_steady, blocking_per_iteration (steady
**     blocking calls per steady iteration; null without iterations)
**   sync_memcpy, sync_memcpy_steady (copies by blocking calls, except HtoD
**     up to sync-memcpy's small_htod: 64000 bytes), pageable_async_memcpy,
**     pageable_async_memcpy_steady, sync_memset, sync_memset_steady
**     (blocking memsets on the host_visible kinds: pinned or managed)
**     (the counts' definitions: METRIC_COUNT_LIST in metrics.c)
**   queries {COUNT: the SQL (jq) that reproduces it, or null}: one per count
**     above, gaps_ge_500ms to sync_memset_steady (docs/formats.md)
**   steady_iterations, iteration_duration_ns, iteration_period_ns,
**     iteration_gpu_time_ns {n, p50, mean, cv, max_over_p50, min, max}
**     over steady iterations (null without iterations)
**   iteration_markers: how the iterations were found (iterdoc.h)
**   work_by_name {steady_iterations, total_ns, names [{name, kind (kernel,
**     memcpy, memset), count, total_ns, mean_ns, p50_ns, share (of total_ns),
**     steady_count, per_iteration_ns, launches_per_iteration (over steady
**     iterations; null without)}], more_names}: GPU work by kernel name,
**     copy kind ("[memcpy HtoD]") and "[memset]", by steady time then total
**   devices [{device, name, start_ns, end_ns, span_ns, busy_frac,
**     busy_frac_steady, kernels, kernel_time_ns, nccl_time_ns, nccl_overlap,
**     exposed_nccl_time_ns, queue_p50_ns, gaps_ge_min}]
**   host_side {osrt {...}, libraries [...]}: OS runtime calls by name, cuDNN and
**     cuBLAS API time next to their kernels' time (metrics_host.c); the
**     trace must have been opened with those tables (TG_HOST_OSRT,
**     TG_HOST_LIBRARIES) for them to count
** "Steady" follows the model: inside a steady iteration, or the whole
** trace when it has none. NULL when out of memory. */
typedef struct tg_metrics_defs tg_metrics_defs;
json_t *tg_metrics_json(const tg_model *m, const tg_metrics_defs *defs);

/* The counts' definitions, compiled once for any number of traces: they
** take what the built-in rules define (the small host-to-device exemption
** of sync-memcpy, the host_visible memory kinds) from `builtin`, the loaded
** built-in rule set, which need not outlive them. NULL with an error in
** diag when builtin lacks one (TG_EUSAGE) or memory runs out. */
tg_metrics_defs *tg_metrics_defs_new(const tg_ruleset *builtin, tg_diag *diag);
void tg_metrics_defs_free(tg_metrics_defs *defs);

/* metrics_host.c: the `host_side` member, and its lines in the text. */
json_t *tg_metrics_host_json(const tg_model *m);
void tg_metrics_host_text(FILE *f, const json_t *doc);

/* The document as readable text; malloc'd, NULL when out of memory. */
char *tg_metrics_text(const json_t *doc);

#endif
