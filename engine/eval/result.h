/*
** What an evaluation produces: per trace, per rule, a verdict with its
** numbers and evidence. The reporters (engine/report) and the baseline
** code read only these structs; the JSON reporter maps them one to one onto
** the contract of DESIGN §5. All strings are owned by the result's arena.
*/
#ifndef TG_RESULT_H
#define TG_RESULT_H

#include "../common/common.h"
#include "../common/value.h"

/* tg_severity and tg_verdict: the shared vocabulary (common/vocab.h). */

typedef struct tg_named_value {
    const char *name;          /* "count", "sum_duration_ns", "p50_period_ns", ... */
    tg_value value;            /* strings point into the arena */
} tg_named_value;

typedef struct tg_evidence {
    const char *table;         /* export table name as in the file */
    int64_t rowid;
    int64_t start, end;        /* TG_NULL_I64 when not applicable */
    tg_named_value *fields;    /* the rule's evidence columns */
    size_t n_fields;
} tg_evidence;

typedef struct tg_baseline_cmp {
    bool present;
    double value;              /* baseline metric (median over runs) */
    double current;
    double change;             /* relative: (current - value) / value */
    double p_value;            /* Mann-Whitney two-sided; NaN if not computed */
    size_t n_baseline, n_current;
    bool regression, improvement;
    bool outside_band;         /* run-to-run band check (3+ runs) */
    double band_lo, band_hi;   /* NaN when fewer than 3 runs */
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
    double metric_value;       /* NaN when none */
    double *samples;           /* per-row values of `samples`, for baselines */
    size_t n_samples;
    tg_baseline_cmp baseline;
    bool missing_data;         /* skipped/errored because the capture lacks a table */
    int regression;            /* 0, +1 higher_is_worse, -1 lower_is_worse */
} tg_rule_result;

typedef struct tg_trace_result {
    const char *file;
    const char *nsys_version;  /* NULL if not recorded */
    const char *schema_version;
    const char *gpu_names;     /* comma-separated distinct GPU names, or NULL */
    const char *iteration_marker;  /* markers of its iterations ("ProfilerStep#N",
                                      several joined by ", "), NULL without */
    tg_status status;          /* TG_OK, or TG_ETRACE when unreadable */
    const char *error;         /* the sentence, when status != TG_OK */
    tg_rule_result *results;
    size_t n_results;
    tg_arena *arena;           /* owned: this trace's strings and arrays, so
                                  traces can be evaluated in parallel; may be
                                  NULL (then run->arena holds them) */
} tg_trace_result;

typedef struct tg_run_result {
    tg_arena *arena;
    tg_trace_result *traces;
    size_t n_traces;
} tg_run_result;

#endif
