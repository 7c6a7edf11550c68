/*
** Nightly history (docs/history.md): every run of a workload a CI stores,
** the baselines `check --history` draws from it, and the change points
** `history show` and `history report` find over it.
**
** A history is a database: an SQLite file (the default), or PostgreSQL
** when the name is a postgresql:// URI. The two are rows of one table of
** functions (store.h); everything above it is written once, in portable
** SQL. What is kept per run (tg_hist_run) is what a baseline keeps per
** recorded run: the value of every rule that has a metric and a bounded
** sample of the per-row values behind it, what ran (the kernels and NVTX
** ranges with their GPU time per iteration), where it ran, and what the user
** says of it (label, time, branch). A baseline built from runs of the
** history is a baseline recorded from those runs (tg_history_baseline), so
** a check against a history and one against a file agree.
**
** Layer: history sits above baseline and report (ci/layers.sh).
*/
#ifndef TG_HISTORY_H
#define TG_HISTORY_H

#include "../baseline/baseline.h"
#include "../common/common.h"
#include "../eval/result.h"
#include "../rules/rules.h"

#define TG_HISTORY_SCHEMA 1          /* schema_version the store writes and reads */
#define TG_HISTORY_SAMPLES 250       /* per-row values kept per metric and run */
#define TG_HISTORY_BASELINE_MAX 10   /* runs a baseline draws at most */
#define TG_HISTORY_BASELINE_MIN 3    /* runs a baseline needs */
#define TG_HISTORY_CHANGE_WINDOW 100 /* usable runs whose change points bound a baseline */

/* One rule with a metric, on one run. */
typedef struct tg_hist_metric {
    const char *rule;           /* rule id */
    const char *metric;         /* its metric expression */
    const char *samples_field;  /* the rule's samples field, or NULL */
    tg_unit unit;
    int direction;              /* +1 higher_is_worse, -1 lower_is_worse, 0 trend */
    double value;               /* NaN: no value on this run */
    const char *verdict;        /* the rule's verdict on the run (a tg_verdict_names word) */
    double *samples;            /* sorted, at most TG_HISTORY_SAMPLES; NULL when none
                                   (or not loaded) */
    size_t n_samples;
} tg_hist_metric;

/* One run of the history. Strings are UTF-8; NULL: not recorded. */
typedef struct tg_hist_run {
    int64_t id;                 /* the store's order of appending (1, 2, ...); 0 before */
    const char *label;          /* --label (a commit id), unique per workload; never NULL
                                   once stored (default: the trace's file name) */
    const char *time;           /* --time, ISO 8601 UTC "2026-12-07T03:00:00Z"; default: now */
    const char *branch;         /* --branch, or NULL */
    const char *workload;       /* the workload key (tg_history_match); NULL before stored:
                                   the store assigns it */
    const char *workload_name;  /* what people read: the top kernel of its first run */
    const char *gpu;            /* comma-separated GPU names */
    const char *format;         /* "nsys-sqlite", "kineto-json" */
    const char *marker;         /* iteration marker, "" without */
    const char *nsys_version, *schema_version;
    const char *trace;          /* file name of the trace, without directories */
    const char *rules_digest;   /* "sha256:..." of the rule set that judged it */
    const char *metrics_digest; /* "sha256:..." of the regression metrics' definitions
                                   (tg_history_metrics_digest): runs with another one are
                                   never pooled into a baseline of this one */
    const char *tool_version;
    const char *verdict;        /* the run's status (a TG_RUN_STATE_LIST name, common/vocab.h: pass,
                                   fail, error), as the check's exit status gave it */
    bool regressed;             /* a regression rule failed against the history */
    int64_t epoch;              /* the id of the run the baseline that judged it started
                                   at (an accepted change point); 0: none */
    tg_hist_metric *metrics;    /* sorted by rule id */
    size_t n_metrics;
    tg_workload *work;          /* what ran (ops and ranges, no rows); NULL when not
                                   recorded or not loaded */
} tg_hist_run;

/* An accepted change point: the run at `label` of `workload` starts the
** new normal (history accept). */
typedef struct tg_hist_accept {
    const char *workload;
    const char *label;
    int64_t run_id;
    const char *reason;
    const char *time;           /* when it was accepted (ISO 8601 UTC) */
} tg_hist_accept;

/* ---------------------------------------------------------------- store */

typedef struct tg_history tg_history;

typedef enum tg_history_mode {
    TG_HISTORY_READ,            /* must exist and be a history; nothing is written */
    TG_HISTORY_WRITE            /* created (schema included) when absent */
} tg_history_mode;

/* Open the history named db: a path (SQLite) or a postgresql:// or
** postgres:// URI. Something that is not a history (a trace, another
** database, a directory, a random file), a history of a newer schema, a
** corrupt, locked or read-only one for WRITE: one sentence naming db in
** diag (TG_EUSAGE, or TG_ETRACE for a file that cannot be read), NULL, and
** nothing written. */
tg_history *tg_history_open(const char *db, tg_history_mode mode, tg_diag *diag);
void tg_history_close(tg_history *h);
/* "sqlite" or "postgresql". */
const char *tg_history_kind(const tg_history *h);
/* The history's name as messages give it: a URI's password masked. */
const char *tg_history_name(const tg_history *h);

/* Append runs in one transaction: all of them or, on any error, none (a
** crash mid-append leaves the history as it was). A run without a
** workload key gets one (tg_history_match against the runs stored, in the
** same transaction); ids are set. A label already stored for the run's
** workload is refused (TG_EUSAGE, naming it) unless replace, which deletes
** that run first. */
tg_status tg_history_append(tg_history *h, tg_hist_run *runs, size_t n, bool replace, tg_diag *diag);

/* What tg_history_load reads besides the run's fields and metric values. */
#define TG_HIST_LOAD_SAMPLES 1u
#define TG_HIST_LOAD_WORK 2u
/* Only the workload's latest TG_HISTORY_RECENT runs (with a workload):
** what a check reads (its baseline is drawn from the last
** TG_HISTORY_CHANGE_WINDOW usable ones), so that its cost does not grow
** with the history. */
#define TG_HIST_LOAD_RECENT 4u
#define TG_HISTORY_RECENT (3 * TG_HISTORY_CHANGE_WINDOW)

/* The runs of one workload (all when workload is NULL), in history order:
** by time, then id. Everything in arena. */
tg_status tg_history_load(tg_history *h, const char *workload, unsigned what, tg_arena *arena, tg_hist_run **runs,
                          size_t *n, tg_diag *diag);

/* The most recent run of every workload key (loaded with work), in history
** order: what a new run is matched against (tg_history_match). */
tg_status tg_history_latest(tg_history *h, tg_arena *arena, tg_hist_run **runs, size_t *n, tg_diag *diag);

/* The accepted change points, in order of acceptance. */
tg_status tg_history_accepts(tg_history *h, tg_arena *arena, tg_hist_accept **out, size_t *n, tg_diag *diag);

/* Accept the run labelled label as the start of the new normal of its
** workload(s) (every workload holding that label; none: TG_EUSAGE). */
tg_status tg_history_accept(tg_history *h, const char *label, const char *reason, const char *time,
                            tg_diag *diag);

/* -------------------------------------------------------------- runs */

/* Who the user says a run is (history add, check --history). */
typedef struct tg_hist_meta {
    const char *label, *time, *branch;
    const char *workload;       /* --workload: the key, instead of matching; NULL */
    const char *rules_digest, *tool_version;
    const char *verdict;        /* the run's status as the check's gate judged it */
    bool regressed;             /* a regression rule failed against the history */
    int64_t epoch;              /* tg_hist_run.epoch */
} tg_hist_meta;

/* The history's record of an evaluated trace (status TG_OK): its metrics
** (samples thinned to TG_HISTORY_SAMPLES), its workload without rows, its
** provenance, the verdicts; strings in arena. rs gives the samples fields
** and the metrics digest. False when out of memory. */
bool tg_history_run_of(const tg_trace_result *tr, const tg_ruleset *rs, const tg_hist_meta *meta,
                       tg_arena *arena, tg_hist_run *out);

/* The metric of rule on run r, or NULL. */
const tg_hist_metric *tg_history_metric(const tg_hist_run *r, const char *rule);

/* A time as the history keeps it (history order compares them as text):
** ISO 8601 UTC to the second, "2026-12-07T03:00:00Z", from a date, or a
** date and time with Z or an offset and any fraction (dropped), into out.
** False when t is no such time (February 30 included). */
bool tg_history_time(const char *t, char out[32]);

/* "sha256:..." over the regression rules' definitions (rule id, metric,
** samples field, unit, direction), in arena. */
const char *tg_history_metrics_digest(const tg_ruleset *rs, tg_arena *arena);

/* The workload key a run belongs to among runs (the latest run of each
** key is its fingerprint): the key of the most recent run of the same GPU,
** format and iteration marker whose kernels this run covers for at least
** min_match (TG_BASELINE_DEFAULT_MIN_MATCH) of that run's GPU time, and
** whose kernels it covers in turn; NULL when none (a new workload: the
** store names it "w" and the first 12 hex digits of the SHA-256 of the run's
** GPU, format, marker and top kernel names). */
const char *tg_history_match(const tg_hist_run *run, const tg_hist_run *runs, size_t n, double min_match);

/* -------------------------------------------------------- baselines */

/* What tg_history_baseline chose, for the message and the JSON result. */
typedef struct tg_hist_choice {
    size_t n_usable;            /* runs that may serve (same workload, GPU, format,
                                   marker, metrics digest; after the latest accepted
                                   change point; not a run that regressed, unless it
                                   was judged before that change point was accepted) */
    size_t n_used;              /* of them, the most recent, at most TG_HISTORY_BASELINE_MAX */
    const tg_hist_run **used;   /* in history order */
    size_t n_needed;            /* runs still needed (TG_HISTORY_BASELINE_MIN - n_usable) */
    const tg_hist_accept *since;/* the accepted change point the baseline starts at, or NULL */
    size_t n_other_metrics;     /* runs of the workload left out for another metrics digest */
    const char *cut_label;      /* the first run after an unaccepted regression change
                                   point, where the usable runs end; NULL when none */
} tg_hist_choice;

/* The baseline of a run of workload `workload` from runs (one workload's,
** loaded with samples and work), as `baseline record --keep-outliers` of
** those runs would record it: outliers among them are kept out and named.
** NULL with choice->n_needed > 0 when fewer than TG_HISTORY_BASELINE_MIN
** runs are usable (not an error: the check is inconclusive); NULL with a
** diag on error. */
tg_baseline *tg_history_baseline(const tg_hist_run *runs, size_t n, const tg_hist_accept *accepts, size_t n_accepts,
                                 const tg_hist_run *current, const tg_ruleset *rs, const char *tool_version,
                                 tg_arena *arena, tg_hist_choice *choice, tg_diag *diag);

/* --------------------------------------------------- change points */

/* Change-point detection (changepoint.c, docs/regressions.md "Change
** points"): E-divisive means with a permutation test. */
typedef struct tg_cp_opts {
    double p;                   /* significance (default 0.001) */
    size_t min_segment;         /* runs per segment at least (default 3) */
    size_t permutations;        /* per test (default: enough for p, 1/p * 2 - 1 at least) */
    uint64_t seed;              /* the permutations' generator: the same input gives
                                   the same answer */
} tg_cp_opts;
#define TG_CP_OPTS_DEFAULT ((tg_cp_opts){.p = 0.001, .min_segment = 3, .permutations = 0, .seed = 1})

typedef struct tg_cp {
    size_t index;               /* first point after the change */
    double p;                   /* permutation p-value of the split */
    double before, after;       /* medians of the segments on either side */
} tg_cp;

/* The change points of x[0..n) (finite values), sorted by index, into
** *out (malloc'd, *n_out of them; NULL when none). False when out of
** memory. */
bool tg_changepoints(const double *x, size_t n, const tg_cp_opts *opts, tg_cp **out, size_t *n_out);

/* ------------------------------------------------------------ views */

/* One change point of a series, explained. */
typedef struct tg_hist_change {
    size_t index;               /* into the series: the first run after the change */
    const char *label;          /* that run's label */
    double before, after;       /* medians of the two segments */
    double change;              /* (after - before) / before */
    double p;
    bool regression, improvement;   /* by the rule's direction; neither for a trend */
    tg_baseline_cmp cmp;        /* busy_then/now and contributors: the segment after vs
                                   the one before, as check names them (no queries: the
                                   runs' traces are not at hand) */
    const tg_hist_accept *accepted; /* or NULL */
} tg_hist_change;

/* One metric of one workload over the history. */
typedef struct tg_hist_series {
    const char *workload, *workload_name;
    const char *rule, *metric;
    tg_unit unit;
    int direction;
    size_t n;
    const tg_hist_run **runs;   /* in history order */
    double *values;             /* NaN where the run has no value */
    double *band_lo, *band_hi;  /* the baseline band each run was judged against,
                                   recomputed (NaN: fewer than 3 usable runs before it) */
    tg_hist_change *changes;
    size_t n_changes;
} tg_hist_series;

typedef struct tg_hist_view {
    tg_hist_series *series;     /* by workload, then rule id */
    size_t n_series;
    const tg_hist_accept *accepts;
    size_t n_accepts;
    size_t n_runs;
} tg_hist_view;

/* Run i's record of the series' rule, or NULL. */
const tg_hist_metric *tg_history_series_metric(const tg_hist_series *s, size_t i);
/* Is the series' metric a wall time (iteration periods), not GPU time?
** Its change is then split into GPU busy time and waiting, and the NVTX
** ranges named (the check's attribution, compare.c). */
bool tg_history_series_wall_time(const tg_hist_series *s);

/* The series and change points of runs (all workloads, loaded with work;
** history order), in arena. False when out of memory. */
bool tg_history_view(const tg_hist_run *runs, size_t n, const tg_hist_accept *accepts, size_t n_accepts,
                     const tg_cp_opts *opts, tg_arena *arena, tg_hist_view *out);

/* history show: the view as text, or as JSON (docs/history.md: a
** `workloads` list of series, each with `runs` and `change_points`). */
tg_status tg_history_write_text(FILE *out, const tg_hist_view *v);
tg_status tg_history_write_json(FILE *out, const tg_hist_view *v);
/* history report: one self-contained HTML page (trend_html.c). */
tg_status tg_history_write_html(FILE *out, const tg_hist_view *v, const char *title);

#endif
