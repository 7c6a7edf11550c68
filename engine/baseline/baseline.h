/*
** Baselines (docs/regressions.md, baselines/README.md): what `tracegate
** baseline record` stores about one or more runs of a workload, and how
** `check --baseline` compares a new run with it. A baseline holds, per rule
** that has a `metric` (keyed by rule id): the metric's value on every
** recorded run, their median and MAD, and a bounded, deterministic sample of
** the per-row values behind the metric (iteration periods, GPU times, ...),
** plus the provenance of the runs (trace names, nsys and schema versions, GPU
** names, tool version, date).
**
** The file is YAML with sorted keys and byte-stable number formatting, meant
** to be committed and reviewed; baselines/README.md documents it field by
** field. Statistics live in stats.h; this header is what the CLI uses.
**
** Coupling to the rule set is through tg_baseline_rules, a small lookup
** (params min_change / alpha, a rule's source and samples field): the
** *_with functions take it directly (tests fill it by hand, or pass NULL for
** the defaults), and tg_baseline_record / tg_baseline_apply build it from a
** compiled tg_ruleset (baseline_rules.c).
*/
#ifndef TG_BASELINE_H
#define TG_BASELINE_H

#include <stdio.h>
#include "../common/common.h"
#include "../common/value.h"
#include "../eval/result.h"
#include "../rules/rules.h"

#define TG_BASELINE_FORMAT 2             /* newest format_version understood (1 and 2 are read) */
#define TG_BASELINE_FORMAT_PLAIN 1       /* written when no outlier is kept */
#define TG_BASELINE_FORMAT_OUTLIERS 2    /* written when a metric lists kept_outliers */
#define TG_BASELINE_MAX_SAMPLES 1000     /* per-row values kept per metric */
#define TG_BASELINE_MIN_BAND_RUNS 3      /* runs needed to measure the run-to-run spread */
#define TG_BASELINE_BAND_K 3.0           /* band = median +- K * spread (docs/regressions.md) */
#define TG_BASELINE_OUTLIER_K 6.0        /* a run beyond K spreads of the others is an outlier */
#define TG_BASELINE_MIN_REL_NOISE 0.001  /* a spread is never below 0.1% of the value */
#define TG_BASELINE_DEFAULT_MIN_CHANGE 0.05
#define TG_BASELINE_DEFAULT_ALPHA 0.01
#define TG_BASELINE_DEFAULT_RUN_NOISE 0.10  /* assumed relative run-to-run spread (param run_noise) */
#define TG_BASELINE_MIN_SAMPLES 10       /* per side, for the within-run test */
#define TG_BASELINE_DEFAULT_MIN_MATCH 0.5   /* param min_workload_match */
#define TG_BASELINE_MAX_WORK 200         /* workload names kept (the rest summed as TG_BASELINE_OTHER) */
#define TG_BASELINE_MAX_RANGES 50        /* NVTX range names kept */
#define TG_BASELINE_OTHER TG_WORK_OTHER

/* Provenance of one recorded run (one trace). NULL: not recorded. */
typedef struct tg_baseline_run {
    const char *trace;          /* file name of the export, without directories */
    const char *nsys_version;
    const char *schema_version;
    const char *gpu_names;      /* comma-separated distinct GPU names */
    const char *iteration_marker;  /* markers of its iterations ("ProfilerStep#N";
                                      several joined by ", "), "" when it had
                                      none; NULL: not recorded (older baselines) */
    const char *trace_format;   /* "nsys-sqlite" or "kineto-json"; NULL: not recorded
                                   (baselines older than Kineto support: exports) */
} tg_baseline_run;

/* The format a run was recorded from (NULL reads as an export). */
const char *tg_baseline_run_format(const tg_baseline_run *r);

typedef struct tg_baseline_metric {
    const char *rule;           /* rule id: the key */
    const char *metric;         /* metric expression, e.g. "p50(gpu_time)" */
    const char *samples_field;  /* the rule's `samples` field, or NULL */
    tg_unit unit;               /* of the metric value and samples (display only) */
    int direction;              /* +1 higher_is_worse, -1 lower_is_worse, 0 trend */
    double *runs;               /* one per baseline run, in order; NaN = no value */
    size_t n_runs;              /* finite entries of runs: what median/MAD summarise */
    double median, mad;         /* of the finite per-run values; MAD raw (unscaled) */
    double *samples;            /* sorted ascending, at most TG_BASELINE_MAX_SAMPLES */
    size_t n_samples;           /* kept in samples */
    size_t n_samples_total;     /* finite per-row values pooled over the runs (kept
                                   outliers left out) */
    size_t *kept_outliers;      /* indices into runs of the runs recorded with
                                   --keep-outliers although inconsistent with the
                                   others on this metric; left out of every estimate */
    size_t n_kept_outliers;
    tg_pos pos;                 /* where the entry was loaded from (line 0: recorded) */
} tg_baseline_metric;

typedef struct tg_baseline {
    tg_arena *arena;            /* owns everything below */
    int format_version;
    const char *path;           /* file it was loaded from, or NULL */
    const char *tool_version;   /* tracegate version that recorded it */
    const char *date;           /* YYYY-MM-DD, from the caller */
    tg_baseline_run *runs;
    size_t n_runs;
    tg_baseline_metric *metrics;   /* sorted by rule id (strcmp) */
    size_t n_metrics;
    tg_workload *workload;      /* what ran, pooled over the runs (docs/regressions.md);
                                   NULL in baselines recorded before it was kept */
} tg_baseline;

/* What baselines need to know about rules. Any member may be NULL. */
typedef struct tg_baseline_rules {
    const void *ctx;
    /* A numeric param of a rule (min_change, alpha as fractions), or dflt. */
    double (*param)(const void *ctx, const char *rule, const char *param, double dflt);
    /* The rule's samples field ("gpu_time"), NULL when it has none or the
    ** rule is unknown. */
    const char *(*samples)(const void *ctx, const char *rule);
} tg_baseline_rules;

/* --------------------------------------------------------------- record */

/* Build a baseline from an evaluated run (one trace per recorded run; every
** trace must have status TG_OK): per rule result with a metric, its value on
** each trace, median and MAD over the finite ones, and the pooled per-row
** samples thinned to TG_BASELINE_MAX_SAMPLES (see baselines/README.md).
** A metric without a value on any trace is left out with a warning.
** `date` and `tool_version` come from the caller so that output is
** reproducible. NULL with a diag on error. */
tg_baseline *tg_baseline_record(const tg_run_result *run, const tg_ruleset *rs,
                                const char *tool_version, const char *date, tg_diag *diag);
tg_baseline *tg_baseline_record_with(const tg_run_result *run, const tg_baseline_rules *rules,
                                     const char *tool_version, const char *date,
                                     tg_diag *diag);
/* The same, with the outlier guard's choice (docs/regressions.md, "Outlier
** runs"): with 2 or more runs, a run inconsistent with the others on a
** regression metric (beyond TG_BASELINE_OUTLIER_K spreads of the rest) is
** an error (TG_EUSAGE) naming the run, the metric, its value and the
** others' band; keep_outliers records it anyway, listed in the metric's
** kept_outliers and left out of the estimates (a warning says so). */
tg_baseline *tg_baseline_record_opts(const tg_run_result *run, const tg_baseline_rules *rules,
                                     const char *tool_version, const char *date, bool keep_outliers,
                                     tg_diag *diag);
tg_baseline *tg_baseline_record_keep(const tg_run_result *run, const tg_ruleset *rs,
                                     const char *tool_version, const char *date, bool keep_outliers,
                                     tg_diag *diag);

/* Is run i one of m's kept outliers? */
bool tg_baseline_is_outlier(const tg_baseline_metric *m, size_t run);

/* The recorded runs must come from one GPU model, one export schema major
** version and one iteration marker: otherwise an error (TG_EUSAGE) naming
** both, or only a warning when allow_mismatch. Returns TG_OK or TG_EUSAGE. */
tg_status tg_baseline_check_runs(const tg_baseline *b, bool allow_mismatch, tg_diag *diag);
/* The same on the traces of a run, before recording (a mismatch is said
** before what else may be wrong with them). */
tg_status tg_baseline_check_results(const tg_run_result *run, bool allow_mismatch, tg_diag *diag);

/* ------------------------------------------------------------- file I/O */

/* Write as YAML (sorted keys, shortest round-trip numbers, no timestamps of
** its own): the same baseline gives the same bytes. TG_OK or TG_EINTERNAL. */
tg_status tg_baseline_write(const tg_baseline *b, FILE *out);

/* The baseline must fit the rule set a check runs: an entry for every
** enabled regression rule, recorded for the rule's current definition
** (metric, samples field, unit, direction), with samples where the rule
** compares them. Each problem is one error (TG_EUSAGE, with the entry's
** position); TG_OK when none. */
tg_status tg_baseline_validate(const tg_baseline *b, const tg_ruleset *rs, tg_diag *diag);

/* Read a baseline file. Every problem is one sentence with file:line:col
** (status TG_EUSAGE); the path must outlive diag (positions point at it).
** NULL on error. */
tg_baseline *tg_baseline_load(const char *path, tg_diag *diag);
/* The same from memory; `name` is used in positions. */
tg_baseline *tg_baseline_load_string(const char *text, size_t len, const char *name,
                                     tg_diag *diag);

void tg_baseline_free(tg_baseline *b);

/* Metric entry of a rule, or NULL. */
const tg_baseline_metric *tg_baseline_find(const tg_baseline *b, const char *rule);

/* ----------------------------------------------------------- comparison */

/* Compare a run with the baseline, rule by rule (docs/regressions.md):
** - first, every readable trace must match the baseline's GPU model(s),
**   export schema major version and, when both have iterations, iteration
**   marker (docs/iterations.md); otherwise TG_EUSAGE (nothing is changed),
**   or a warning when allow_mismatch;
** - each regression rule (result.regression != 0) with a baseline entry
**   gets result.baseline filled and its verdict decided: FAIL only when the
**   change in the worse direction exceeds param min_change (default 5%),
**   the Mann-Whitney p-value of baseline vs current samples is below param
**   alpha (default 0.01), and, with 3+ recorded runs, the current value lies
**   outside median +- 3 * 1.4826 * MAD of the per-run values; the same in
**   the better direction is an improvement (reported, PASS). The message
**   is rewritten with the numbers. Without an entry: SKIP "not in the
**   baseline". Results already ERROR (missing data) are left alone;
** - other rules with a metric get result.baseline filled (trend only).
** Strings go to the trace's arena (run->arena when it has none).
** Returns TG_OK, TG_EUSAGE or TG_EINTERNAL. */
tg_status tg_baseline_apply(const tg_baseline *b, const tg_ruleset *rs, tg_run_result *run,
                            bool allow_mismatch, tg_diag *diag);
tg_status tg_baseline_apply_with(const tg_baseline *b, const tg_baseline_rules *rules,
                                 tg_run_result *run, bool allow_mismatch, tg_diag *diag);

/* What `baseline.STAT` in rule expressions reads while a trace is being
** evaluated (tg_eval_opts.baselines): one entry per rule of rs, in the
** order of tg_rules_info; for rules with a baseline entry present, value
** (median of the runs), n_baseline (samples kept) and the band (3+ runs),
** the rest NaN until tg_baseline_apply compares. Allocated in arena; NULL
** when out of memory. */
tg_baseline_cmp *tg_baseline_rule_stats(const tg_baseline *b, const tg_ruleset *rs,
                                        tg_arena *arena);

/* ------------------------------------------------------- run-to-run spread */

/* How far the metric moves between runs of unchanged code
** (docs/regressions.md, "The spread"), from the runs not kept as outliers:
** measured with 3+ such runs (tg_stats_spread), else assumed: run_noise x
** |value| (the rule's param; NaN: TG_BASELINE_DEFAULT_RUN_NOISE), or the
** sd of 2 runs when that is larger. Never below the floor (the standard
** error of one run's median from the samples, TG_BASELINE_MIN_REL_NOISE
** x |value|), never above |outlier - value| / TG_BASELINE_OUTLIER_K for a
** kept outlier. value is the median of those runs. The band is value +-
** TG_BASELINE_BAND_K x spread, its low end clamped at 0 for a time, size,
** rate or ratio (clamped says so). */
typedef struct tg_spread {
    double value;              /* median of the runs used */
    double spread;             /* in the metric's unit */
    double rel;                /* spread / |value| */
    bool measured;             /* from 3+ runs */
    bool clamped;              /* lo raised to 0 */
    size_t n_runs;             /* runs with a value, kept outliers left out */
    size_t n_outliers;         /* kept outliers left out */
    double lo, hi;             /* the band */
} tg_spread;

bool tg_baseline_spread(const tg_baseline *b, const tg_baseline_metric *m, double run_noise, tg_spread *out);

/* ------------------------------------------------------------- helpers */

const char *tg_baseline_direction_name(int direction);  /* higher_is_worse, ... */

/* Two comma-separated GPU name lists name the same set (order, repeats and
** blanks around names ignored). */
bool tg_baseline_same_names(const char *a, const char *b);

/* Major version of "3.25.0", or -1 when absent or not a number. */
int tg_baseline_schema_major(const char *version);

/* Units whose values are never below 0 (a band's low end is clamped). */
bool tg_baseline_nonnegative(tg_unit unit);

/* Share of base's GPU time (its listed names, TG_BASELINE_OTHER aside)
** whose names cur runs at all: the workload fingerprint's measure
** (docs/regressions.md, "The workload"). NaN when either has no GPU work. */
double tg_baseline_workload_match(const tg_workload *base, const tg_workload *cur);

#endif
