/*
** What an evaluation produces: per trace, per rule, a verdict with its
** numbers and evidence. The reporters (engine/report) and the baseline
** code read only these structs; the JSON reporter maps them one to one onto
** the contract of docs/formats.md. All strings are owned by the result's arena.
*/
#ifndef TG_RESULT_H
#define TG_RESULT_H

#include "../common/common.h"
#include "../common/value.h"
#include "../model/model.h"   /* tg_coverage */

/* tg_severity and tg_verdict: the shared vocabulary (common/vocab.h). */

typedef struct tg_named_value {
    const char *name;          /* "count", "sum_duration_ns", "p50_period_ns", ... */
    tg_value value;            /* strings point into the arena */
} tg_named_value;

/* What an evidence entry's start..end is when it is not the cited row's
** own span (docs/formats.md): X(id, name, what the interval is). */
#define TG_INTERVAL_LIST(X) \
    X(ROW, "row", "the cited row's own span") \
    X(IDLE, "idle", "a device's idle gap, after the cited row") \
    X(DEVICE, "device", "a device's first to last op, the first one cited")
typedef enum tg_interval {
#define X(id, name, doc) TG_INTERVAL_##id,
    TG_INTERVAL_LIST(X)
#undef X
    TG_INTERVAL_COUNT
} tg_interval;
const char *tg_interval_name(tg_interval i);
bool tg_interval_parse(const char *s, tg_interval *out);

typedef struct tg_evidence {
    const char *table;         /* export table name as in the file */
    int64_t rowid;
    int64_t start, end;        /* TG_NULL_I64 when not applicable */
    tg_interval interval;      /* what start..end is */
    int64_t row_start, row_end;/* the cited row's own span, when interval is not ROW */
    const char *next_table;    /* IDLE: the row after the gap; DEVICE: the last op */
    int64_t next_rowid;        /* -1 when none */
    tg_named_value *fields;    /* the rule's evidence columns */
    size_t n_fields;
    int64_t row;               /* index of the cited row in its source; -1: a group */
} tg_evidence;

/* What a failing finding says about its cause (a rule's `cause:`,
** docs/host.md). One item: a thing the host did in a window (cause host),
** a call site (call_site) or a kernel name (launch). */
typedef struct tg_cause_item {
    const char *source;        /* "osrt", "cuda", "nvtx"; "call_site"; "kernel" */
    const char *name;          /* usleep, an NVTX range; a call site's function; a kernel */
    const char *module;        /* call sites: the module's file name, or NULL */
    const char *thread;        /* host: the thread's name, or NULL */
    int64_t tid;               /* host: the thread; -1 */
    bool launch_thread;        /* host: a thread that makes CUDA calls */
    int64_t count;             /* calls, ranges, copies, kernels */
    double time;               /* ns: inside the window (host); of the rows (call
                                  sites); of the kernels (launch) */
    double launch_time;        /* launch: ns of the calls that launched them; NaN */
    double share;              /* of the window; of the finding's rows; of short kernels */
    const char *call_site;     /* host: where its longest cited row was called from */
    const char *call_module;
    const char *table;         /* the cited rows' table */
    int64_t *rowids;
    size_t n_rowids;
    const char **stack;        /* call sites: one cited row's frames, innermost first */
    size_t n_stack;
} tg_cause_item;

typedef struct tg_cause_window {
    size_t evidence;           /* the evidence entry it explains */
    int64_t pid, start, end;
    int64_t accounted;         /* ns the launch threads spent in traced calls in it */
    tg_cause_item *items;
    size_t n_items;
} tg_cause_window;

typedef struct tg_cause {
    tg_cause_kind kind;
    const char *summary;       /* one sentence */
    const char **unknown;      /* what could not be told, and how to record it */
    size_t n_unknown;
    tg_cause_window *windows;  /* host: one per cited row */
    size_t n_windows;
    tg_cause_item *items;      /* call sites, kernels */
    size_t n_items;
    const char *reproduce;     /* SQL (jq for a Kineto trace) giving the numbers */
} tg_cause;

/* What changed, one name of GPU work (a kernel family, a copy kind) or
** NVTX range, per steady iteration, baseline vs now
** (docs/regressions.md). */
#define TG_CONTRIB_STATUS_LIST(X) X(GREW, "grew") X(SHRANK, "shrank") X(NEW, "new") X(GONE, "gone")
typedef enum tg_contrib_status {
#define X(id, name) TG_CONTRIB_##id,
    TG_CONTRIB_STATUS_LIST(X)
#undef X
    TG_CONTRIB_COUNT
} tg_contrib_status;
const char *tg_contrib_status_name(tg_contrib_status s);
bool tg_contrib_status_parse(const char *s, tg_contrib_status *out);

typedef struct tg_contributor {
    const char *name;
    tg_work_kind kind;
    tg_contrib_status status;
    double then_time, now_time;        /* ns per steady iteration */
    double then_launches, now_launches;
    double delta;              /* now_time - then_time */
    double share;              /* of the total change of GPU time per iteration; NaN without */
    const char *query;         /* SQL (jq on a Kineto trace): this trace's launches (ranges) and
                                  per-iteration total, then the cited rows */
    const int64_t *rows;       /* cited: this trace's longest steady rows of it (at most
                                  TG_WORK_TOP), rowids of `table` (traceEvents indices) */
    size_t n_rows;
    const char *table;
} tg_contributor;

typedef struct tg_baseline_cmp {
    bool present;
    double value;              /* baseline metric (median over runs) */
    double current;
    double change;             /* relative: (current - value) / value */
    double p_value;            /* Mann-Whitney two-sided; NaN if not computed */
    size_t n_baseline, n_current;
    bool regression, improvement;
    bool outside_band;         /* current value outside the band */
    double band_lo, band_hi;   /* median +- K x spread; NaN without a spread */
    bool inconclusive;         /* the change cannot be told from run-to-run noise */
    bool band_measured;        /* the spread comes from 3+ runs (else assumed) */
    double spread;             /* run-to-run spread, relative to the baseline value */
    size_t n_runs;             /* baseline runs with a value */
    double workload_match;     /* share of the baseline's GPU time whose kernels this
                                  trace runs; NaN when not compared */
    double busy_then, busy_now;        /* GPU time per steady iteration; NaN without */
    const char *busy_query;    /* what gives busy_now on this trace (tg_workload_busy_query), or NULL */
    tg_contributor *contributors;      /* what changed most, by |delta| */
    size_t n_contributors;
} tg_baseline_cmp;

typedef struct tg_rule_result {
    const char *rule;          /* id */
    const char *title;
    tg_severity severity;
    tg_verdict verdict;
    int64_t count;             /* rows that passed `where` */
    const char *message;       /* rendered message template (or skip/error reason) */
    const char *advice;
    const char *rule_file;     /* where the rule is defined (SARIF location) */
    int rule_line;
    tg_named_value *values;    /* aggregates used by fail_when / message / metric */
    size_t n_values;
    tg_evidence *evidence;
    size_t n_evidence;
    const char *reproduce;     /* SQL selecting the cited rows */
    const char *metric;        /* metric expression text, or NULL */
    tg_unit metric_unit;       /* its unit (the rule compiler's typing) */
    double metric_value;       /* NaN when none */
    const char *metric_missing; /* why metric_value is NaN (a sentence), or NULL */
    double *samples;           /* per-row values of `samples`, for baselines */
    size_t n_samples;
    tg_baseline_cmp baseline;
    tg_cause *cause;           /* failures of rules with `cause:`; else NULL */
    bool missing_data;         /* skipped/errored because the capture lacks a table */
    /* GPU work the verdict could not time (launch calls without a GPU
    ** record: memsets, or copies) and how much at most it could change
    ** the numbers, one sentence (docs/rules.md, "Untimed GPU work"); NULL
    ** when everything the verdict reads was timed */
    const char *untimed;
    tg_status error_status;    /* an ERROR's exit status class: TG_ETRACE (the trace
                                  lacks what the rule needs), TG_EUSAGE (the trace and
                                  the baseline do not fit), TG_EINTERNAL; TG_OK: from
                                  missing_data (TG_ETRACE) or else TG_EINTERNAL */
    int regression;            /* 0, +1 higher_is_worse, -1 lower_is_worse */
    /* A failing or inconclusive result a suppression accepts
    ** (engine/suppress): still reported, shown as suppressed, never gating. */
    const char *suppressed;    /* the suppression's reason, or NULL */
    const char *suppressed_at; /* where it is written: "FILE:LINE" */
} tg_rule_result;

/* GPU work of one name per steady iteration (the workload a baseline keeps). */
typedef struct tg_work_entry {
    const char *name;          /* kernel family, "[memcpy HtoD]", "[memset]", NVTX name */
    tg_work_kind kind;
    int64_t count;             /* whole trace */
    double total;              /* ns, whole trace */
    double time, launches;     /* per steady iteration; NaN without iterations */
    /* this trace's longest steady rows of it (tg_work_name.top_rowid), in
    ** table `table`; none for an entry read from a baseline file */
    const int64_t *rows;
    size_t n_rows;
    const char *table;
} tg_work_entry;

/* What a workload list keeps beside its top names: the rest, summed. */
#define TG_WORK_OTHER "(other)"

typedef struct tg_workload {
    int64_t steady_iterations;
    double gpu_time;           /* GPU work per steady iteration (ops summed); NaN without */
    double period;             /* p50 period of the steady iterations (ns); NaN without */
    double idle;               /* time the devices had no GPU op in the steady window,
                                  summed over devices, per steady iteration; NaN without */
    double total;              /* GPU work over the whole trace (ns) */
    tg_work_entry *ops;        /* by time per iteration (else total), descending */
    size_t n_ops;
    tg_work_entry *ranges;     /* NVTX ranges in steady iterations, not the markers */
    size_t n_ranges;
    /* SQL pieces that reproduce an entry's per-iteration total from the
    ** export (tg_workload_query): the steady iterations as a CTE body,
    ** the tables as named in the file. */
    const char *sql_steady;
    const char *table_kernel, *table_memcpy, *table_memset, *table_runtime, *table_nvtx;
    const char *sql_nvtx_name;  /* an NVTX row's name in that file's layout */
    /* for a Kineto trace, the jq views the entries' programs read
    ** (engine/model/model_jq.c), instead of the SQL pieces */
    const char *jq_views;
} tg_workload;

/* What the HTML report draws of a trace (eval_timeline.c), made only when
** a run asks for it (tg_check_plan.timeline); not part of the JSON. */
typedef struct tg_iter_point {
    int64_t rowid;             /* the iteration's NVTX row (traceEvents index for Kineto) */
    int32_t index;
    int64_t start, duration;
    int64_t period;            /* TG_NULL_I64 for the first */
    int64_t gpu_time;          /* TG_NULL_I64 without GPU work */
    bool steady;
} tg_iter_point;

typedef struct tg_timeline_gap {
    int32_t device;
    int64_t start, end;
    const char *table;         /* the op before the gap, as evidence cites it */
    int64_t rowid;
} tg_timeline_gap;

#define TG_TIMELINE_BINS 240
#define TG_TIMELINE_MAX_GAPS 200
#define TG_TIMELINE_MAX_POINTS 5000

typedef struct tg_timeline {
    int64_t from, to;          /* the span drawn: first op to last op (ns) */
    size_t n_bins;
    size_t n_devices;
    int32_t *devices;          /* device ids */
    const char **device_names; /* GPU names, or NULL */
    double *busy;              /* n_devices rows of n_bins: the share of each slice busy */
    int64_t steady_start, steady_end;
    bool has_iterations;
    tg_timeline_gap *gaps;     /* the gap rows the model kept, longest first */
    size_t n_gaps;
    int32_t iter_pid;          /* the process whose iterations are drawn */
    const char *iter_table;    /* table of the iterations' rows */
    tg_iter_point *iterations; /* its iterations in order, at most TG_TIMELINE_MAX_POINTS */
    size_t n_iterations;
} tg_timeline;

/* One rank of a trace that holds several (docs/iterations.md, "Ranks
** within one export"): a process that drives its own GPUs. Its numbers
** over its own steady iterations, each with the query that reproduces it
** (SQL for an export, jq for a Kineto trace); NaN where it has none. */
/* The cross-rank rule merge and check add (eval_straggler.c). */
#define TG_STRAGGLER_RULE "rank-straggler"

typedef struct tg_rank_result {
    int64_t rank;              /* numbered by device order within the trace */
    int32_t pid;
    int32_t device;            /* its lowest device id */
    int32_t n_devices;         /* the devices it drives (each its own) */
    int64_t steady_iterations;
    double period;             /* p50 period of its steady iterations (ns) */
    double gpu_time;           /* p50 GPU time of its steady iterations (ns) */
    double idle_frac;          /* share of the steady window its devices ran nothing (mean) */
    double idle;               /* idle_frac x period: its idle time per iteration (ns) */
    const char *period_query, *gpu_time_query, *idle_query;
} tg_rank_result;

/* Where a trace was recorded (docs/formats.md, "Where a result comes
** from"): the rank of its job and the job, told by check's options or read
** from the trace, and the host and processes that recorded it. Unknown is
** NULL; the rank is known only with rank_from set (a zeroed origin knows
** nothing), the world size only when > 0. */
typedef struct tg_origin {
    int64_t rank;
    int64_t world_size;
    const char *rank_from;     /* "--rank", "--rank-pattern", "env RANK", ... */
    const char *job;           /* job id: --job, or SLURM_JOB_ID, ... */
    const char *host;
    int32_t *pids;             /* processes that did GPU work, sorted */
    size_t n_pids;
} tg_origin;

static inline bool tg_origin_has_rank(const tg_origin *o)
{
    return o->rank_from != NULL && o->rank >= 0;
}

typedef struct tg_trace_result {
    const char *file;
    const char *nsys_version;  /* NULL if not recorded */
    const char *schema_version;
    const char *gpu_names;     /* comma-separated distinct GPU names, or NULL */
    const char *iteration_marker;  /* markers of its iterations ("ProfilerStep#N",
                                      several joined by ", "), NULL without */
    const char *trace_format;  /* tg_trace_format_names[]: "nsys-sqlite", "kineto-json" */
    tg_origin origin;
    const char *source;        /* merge: the result file it was read from; NULL */
    int64_t *missing_ranks;    /* merge's entry for the ranks of a job without a
                                  result (status TG_ETRACE): those ranks, as
                                  runs: [2k] to [2k + 1], first and last */
    size_t n_missing_ranks;    /* runs */
    tg_rank_result *ranks;     /* the ranks it holds when several (tg_eval_ranks), else NULL */
    size_t n_ranks;
    tg_workload *workload;     /* what ran (every trace engine/check read has one);
                                  NULL when unreadable, or read from a result without */
    tg_timeline *timeline;     /* when the run asked for one (the HTML report); NULL otherwise */
    tg_coverage coverage;      /* what its CUDA activity covers (docs/formats.md,
                                  "coverage"); set false when not computed */
    /* a result read back (merge): its coverage's run_first_ns, the origin
    ** of the times people read (docs/formats.md, "Times"); the coverage
    ** itself is not read back */
    int64_t read_origin;
    bool read_origin_set;
    bool api_streamed;         /* the API table streamed through the launch join,
                                  only the calls a rule admits kept (the lean load) */
    tg_status status;          /* TG_OK, or TG_ETRACE when unreadable */
    const char *error;         /* the sentence, when status != TG_OK */
    tg_rule_result *results;
    size_t n_results;
    tg_arena *arena;           /* owned: this trace's strings and arrays, so
                                  traces can be evaluated in parallel; may be
                                  NULL (then run->arena holds them) */
} tg_trace_result;

/* What a suppression did in a run (docs/suppressions.md). X(ID, name).
** used: it accepted at least one finding; unused: it matched none;
** expired: past its date, so it accepted nothing; exceeded: a finding it
** names counts more than its max_count, so that one gates. */
#define TG_SUPPRESSION_STATUS_LIST(X) \
    X(USED, "used") X(UNUSED, "unused") X(EXPIRED, "expired") X(EXCEEDED, "exceeded")
typedef enum tg_suppression_status {
#define X(id, name) TG_SUPPRESSION_##id,
    TG_SUPPRESSION_STATUS_LIST(X)
#undef X
    TG_SUPPRESSION_STATUS_COUNT
} tg_suppression_status;
const char *tg_suppression_status_name(tg_suppression_status s);

typedef struct tg_suppression_use {
    const char *rule, *reason;
    const char *trace;         /* its glob, or NULL */
    int64_t max_count;         /* -1: none */
    const char *expires;       /* or NULL */
    const char *file;
    int line;
    tg_suppression_status status;
    size_t matched;            /* findings it names (accepted, or not for
                                  expired and exceeded) */
} tg_suppression_use;

/* What a suppression that did not simply apply means, one sentence for
** every format and the CLI ("the suppression of R matched no finding in
** this run; remove it if the finding is gone"); "" for a used one. */
const char *tg_suppression_sentence(const tg_suppression_use *u, char *buf, size_t size);

typedef struct tg_run_result {
    tg_arena *arena;
    tg_trace_result *traces;
    size_t n_traces;
    tg_suppression_use *suppressions;  /* --suppress: one per suppression */
    size_t n_suppressions;
} tg_run_result;

#endif
