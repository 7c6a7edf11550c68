/*
** Evaluation: runs a compiled rule set over a built model and fills one
** tg_trace_result (verdicts, aggregates, evidence, reproduce SQL, metric
** values and samples). Rules that share a source are evaluated in one pass
** over it. Regression verdicts are decided later by engine/baseline.
*/
#ifndef TG_EVAL_H
#define TG_EVAL_H

#include <stdio.h>

#include "../model/source.h"
#include "../rules/rules.h"
#include "result.h"

typedef enum tg_missing_mode { TG_MISSING_FAIL, TG_MISSING_SKIP } tg_missing_mode;

typedef struct tg_eval_opts {
    tg_missing_mode missing;   /* rule needs a table the capture lacks */
    bool has_baseline;         /* false: regression rules are skipped ("no baseline") */
    size_t evidence_limit;     /* cap on evidence rows per rule when the rule gives none; 0 = 10 */
    /* Stored-baseline comparisons, one per rule of the set (index as in
    ** tg_rules_info), read by baseline.STAT and copied into each result;
    ** NULL when there is no baseline. */
    const tg_baseline_cmp *baselines;
} tg_eval_opts;

/* Evaluate every enabled rule. Allocations go to `arena` (the run's).
** Returns TG_OK, or TG_EINTERNAL with a diag. Missing data is reported per
** rule (verdict SKIP + missing_data, or ERROR + missing_data in FAIL mode). */
tg_status tg_eval_model(const tg_ruleset *rs, const tg_model *m, const tg_eval_opts *opts,
                        tg_arena *arena, tg_trace_result *out, tg_diag *diag);

/* The causes of the failures whose rules ask for one (`cause:`,
** eval_cause.c, docs/host.md): reads the host-side tables they need
** (tg_model_host_load: m changes), then fills each such result's `cause`.
** A table that is absent or cannot be read makes a cause unknown (a
** warning in diag), never the run fail; TG_EINTERNAL only when memory runs
** out. */
tg_status tg_eval_causes(const tg_ruleset *rs, tg_model *m, const tg_eval_opts *opts, tg_arena *arena,
                         tg_trace_result *out, tg_diag *diag);

/* The workload of a built model (eval_workload.c), in arena; NULL when out
** of memory. tg_eval_model fills tg_trace_result.workload with it when an
** enabled rule has `regression`; engine/check's pipeline always does. */
tg_workload *tg_eval_workload(const tg_model *m, tg_arena *arena);

/* What the HTML report draws of a built model (eval_timeline.c): device
** utilization over time, gaps, the steady window and the iterations of
** one process; in arena, NULL when out of memory. */
tg_timeline *tg_eval_timeline(const tg_model *m, tg_arena *arena);

/* The query that gives entry e's launches (for NVTX, ranges) and per-
** iteration total over the steady iterations, then lists its cited rows
** (e->rows), from the trace w came from: SQL on an export, jq on a Kineto
** trace (docs/regressions.md); NULL without iterations, or out of memory. */
const char *tg_workload_query(const tg_workload *w, const tg_work_entry *e, tg_arena *arena);
/* The query that gives w's GPU busy time per steady iteration (every
** kernel, copy and set launched in one; launches, time, time per
** iteration): with the iteration rule's own query, which gives the
** period, it splits a period's change into busy and waiting
** (docs/regressions.md); NULL without iterations or GPU work. */
const char *tg_workload_busy_query(const tg_workload *w, tg_arena *arena);

/* What changed from workload `then` to `now` (eval_contrib.c): the GPU
** work names (and, with ranges, the NVTX ranges) whose time per steady
** iteration moved, by |delta|, kept while they move at least 2% of the
** change they are part of (GPU work: of gpu_time's; ranges: of
** metric_change), at most TG_CONTRIB_MAX_OPS and TG_CONTRIB_MAX_RANGES,
** each with the SQL that reproduces it on now's export; into
** c->contributors, c->busy_then and c->busy_now. False when out of memory. */
#define TG_CONTRIB_MAX_OPS 8
#define TG_CONTRIB_MAX_RANGES 4
bool tg_workload_attribute(const tg_workload *then, const tg_workload *now, double metric_change, bool ranges,
                           tg_baseline_cmp *c, tg_arena *arena);
/* The sentence after a verdict that names them ("; GPU busy per iteration
** 11.5 ms -> 12.7 ms, the rest of the change (+16 ms) is time the GPU
** waited ...; GPU work that changed most: ..."), from c->value to
** c->current; wall_time: the metric is a period, not GPU time. */
void tg_workload_put_changes(FILE *f, const tg_baseline_cmp *c, bool wall_time);

/* The cross-rank straggler rule (eval_straggler.c, docs/formats.md
** "merge"), one code for merge's comparison across results and check's
** within one export. A rank compared: its p50 steady period (finite,
** > 0), GPU and idle time per iteration (NaN unknown), its workload (for
** naming what the slowest ran differently; NULL: not named), how a
** message names it, the arena for its result's strings, and `order`,
** which breaks ties between equal periods. */
#define TG_STRAGGLER_THRESHOLD 0.10
#define TG_STRAGGLER_SEVERITY TG_SEV_WARNING
typedef struct tg_straggler_rank {
    double period, gpu_time, idle;
    const tg_workload *workload;
    const char *who;           /* "rank 5 on nid001608" */
    tg_arena *arena;
    size_t order;
} tg_straggler_rank;
/* Compares ranks r[0..n) with the median rank: out[k] becomes r[k]'s
** rank-straggler result (failing when its period is more than threshold
** above the median's). Nothing is written with fewer than two ranks.
** False when out of memory. */
bool tg_straggler_compare(const tg_straggler_rank *r, size_t n, double threshold, tg_severity severity,
                          tg_rule_result *out);

/* "rank 1 (pid 1732, device 1)", with " in FILE" when in is given. */
const char *tg_rank_who(tg_arena *a, const tg_rank_result *x, const char *in);
/* The one rank-straggler result of a trace whose ranks were compared:
** rs[0..n), its ranks' results; the slowest rank's, counting every
** failing rank of the trace. */
void tg_straggler_keep(tg_rule_result *dst, const tg_rule_result *rs, size_t n, tg_arena *a);

/* The ranks of a trace that holds several (eval_ranks.c, docs/iterations.md
** "Ranks within one export"): out->ranks and n_ranks, each number with its
** reproduce query, and, with straggler and two or more ranks that have a
** period, one rank-straggler result appended to out->results (room for it
** is made here). False when out of memory. */
bool tg_eval_ranks(const tg_model *m, bool straggler, tg_arena *arena, tg_trace_result *out);

/* Which rows of source src can count for some enabled rule of rs (its
** `where` holds): for a table that streams by, the rows worth keeping.
** NULL with *all set when every row may count (a rule on src without
** `where`, or whose `where` reads trace.* or a baseline); NULL without it
** on OOM. A filter with no rule on src passes nothing. Not thread-safe:
** one per model build. */
typedef struct tg_row_filter tg_row_filter;
tg_row_filter *tg_row_filter_new(const tg_ruleset *rs, tg_source_id src, const tg_model *m, bool *all);
/* True when every row of src may count (tg_row_filter_new would say *all). */
bool tg_row_filter_keeps_all(const tg_ruleset *rs, tg_source_id src);

/* tg_model_params.keep_api for a streamed API table: keeps the calls some
** rule of rs can count. ctx is a zeroed tg_row_keeper with rs set (one per
** model build; the filter is made on the first call, when the model
** exists); free k.filter with tg_row_filter_free after the build. */
typedef struct tg_row_keeper {
    const tg_ruleset *rs;
    tg_row_filter *filter;
    bool made, all;
} tg_row_keeper;
bool tg_row_keep_api(void *ctx, const tg_model *m, const tg_api *row);
bool tg_row_filter_pass(tg_row_filter *f, const char *row);
void tg_row_filter_free(tg_row_filter *f);

#endif
