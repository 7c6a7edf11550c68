/*
** One trace through the check pipeline (docs/architecture.md): plan what
** to load from the rule set, open the trace, build the model, evaluate the
** rules into a tg_trace_result. `check`, `baseline record`, the rule-test
** runner and the fuzz oracle all take this path, so a rule test exercises
** exactly what a CI check does. The baseline comparison, which needs every
** trace of a run, stays a separate step (tg_baseline_apply). `info` and
** `metrics` read their traces here too (facts.c), so that every command's
** load is planned in this layer and engine/cli keeps threads, arguments
** and output.
*/
#ifndef TG_CHECK_H
#define TG_CHECK_H

#include "../baseline/baseline.h"
#include "../eval/eval.h"
#include "../model/model.h"
#include "../rules/rules.h"
#include "../trace/trace.h"

/* What every trace of a run is checked with. */
typedef struct tg_check_plan {
    const tg_ruleset *rs;
    tg_eval_opts eval;             /* missing-data mode, has_baseline, baseline stats */
    const char *iteration_pattern; /* NULL: the default */
    bool load_all;                 /* --load all: every row of every table */
    int64_t gap_rows_min_ns;       /* gap rows some rule can see (pushed down from rs) */
    bool timeline;                 /* also fill tg_trace_result.timeline (the HTML report) */
    bool straggler;                /* a trace holding several ranks gets rank-straggler
                                      (tg_eval_ranks; check, not baseline record) */
    int threads;                   /* cores one trace may be read with (tg_trace_read_threads) */
    int64_t max_memory;            /* --max-memory, also while reading (tg_load_opts) */
} tg_check_plan;

/* A plan for rs with default options (the gap pushdown computed). */
tg_check_plan tg_check_plan_for(const tg_ruleset *rs);

/* How a trace is opened for the plan: kernel rows only when a rule reads
** the `kernel` source, the API table streamed (docs/architecture.md);
** everything with load_all. --max-memory estimates this. */
tg_load_opts tg_check_load_opts(const tg_check_plan *plan);

/* Check one trace into out (zeroed; out->arena is created here and owns
** the strings): on a trace that cannot be read or modelled, out->status
** and out->error say why. Returns out->status; messages (load warnings
** included) go to diag. */
tg_status tg_check_trace(const tg_check_plan *plan, const char *path, tg_trace_result *out, tg_diag *diag);

/* ------------------------------------------------------------- facts */

/* How `info` and `metrics` read a trace (facts.c): no rule set plans
** their load, what they report does (docs/formats.md, "info and
** metrics"). */
typedef struct tg_facts_plan {
    const char *iteration_pattern; /* metrics' model; NULL: the default */
    int64_t max_memory;            /* --max-memory: refuse a trace whose load
                                      would need more, before reading it; 0: none */
    int threads;                   /* cores one trace may be read with (tg_trace_read_threads) */
} tg_facts_plan;

/* What info reports on: the trace opened the lean way, its API table
** streamed for the row count and the processes that made calls. NULL with
** the reason in diag (load warnings there too). */
tg_trace *tg_check_open_info(const tg_facts_plan *plan, const char *path, tg_diag *diag);
/* The same, building the model check builds (the API table streamed, one
** row per process kept) for what the CUDA activity covers, into *cov
** (NULL: tg_check_open_info). NULL with a diag when it cannot. */
tg_trace *tg_check_open_info_with(const tg_facts_plan *plan, const char *path, tg_coverage *cov, tg_diag *diag);

/* What metrics reports on, in two steps so that each one's messages can
** be told apart: the trace opened as check opens it, with the host side
** (OS runtime calls, cuDNN, cuBLAS); then its model, the streamed API
** table keeping only blocking calls. NULL with the reason in diag. */
tg_trace *tg_check_open_metrics(const tg_facts_plan *plan, const char *path, tg_diag *diag);
tg_model *tg_check_model_metrics(const tg_facts_plan *plan, tg_trace *t, tg_diag *diag);

/* ------------------------------------------------------------ origin */

/* What check's options say about where its traces were recorded
** (docs/formats.md, "Where a result comes from"); they replace what a
** trace says, with a warning when the two differ. */
typedef struct tg_origin_opts {
    int64_t rank;              /* --rank N (one trace only), -1 without */
    int64_t world_size;        /* --world-size W, -1 without */
    const char *rank_pattern;  /* --rank-pattern RE: group 1 of RE in each trace path */
    const char *job;           /* --job ID */
    const char *host;          /* --host NAME */
} tg_origin_opts;

#define TG_ORIGIN_OPTS_NONE ((tg_origin_opts){.rank = -1, .world_size = -1})

/* Before any trace is read: the options fit each other and the traces
** (--rank with one trace, a rank below the world size, a pattern that
** compiles and gives every path a rank). TG_OK, or TG_EUSAGE with a diag. */
tg_status tg_origin_opts_check(const tg_origin_opts *o, const char *const *paths, size_t n, tg_diag *diag);

/* Apply the options to the origin of r, checked from `path` as given on
** the command line (what --rank-pattern reads), its strings in a;
** warnings in diag where an option replaces what the trace recorded.
** False when out of memory. */
bool tg_origin_apply(const tg_origin_opts *o, tg_trace_result *r, const char *path, tg_arena *a, tg_diag *diag);

#endif
