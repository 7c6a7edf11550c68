/*
** Rule tests (tests/rules/README.md): YAML files of cases, each naming a
** rule, an input (an export on disk, or events written inline and
** materialised into a temporary SQLite file in the nsys 2022.4 / schema 3.0.0
** export layout) and the expected verdict, count, aggregate values and cited
** rows. The cases run through the pipeline `tracegate check` runs
** (engine/check: tg_check_plan_for -> tg_check_trace, which plans the load
** from the rules, opens, models and evaluates; then tg_baseline_apply when
** the case gives a baseline), and the comparison is returned as data: this
** module never prints. `tracegate rules test` (engine/cli/cmd_rules.c)
** renders it.
**
** The file format is documented in tests/rules/README.md. The harness is
** its own layer, engine/ruletest, above check (docs/architecture.md): the
** rule-language compiler (engine/rules) knows nothing of it.
**
**   ruletest_load.c    the test file: top level, cases, expectations
**   ruletest_events.c  inline events: the YAML of `input.events`
**   ruletest_sqlite.c  events -> an export-layout SQLite file
**   ruletest_run.c     running a file's cases
**   ruletest_compare.c expectations against a rule result, as a diff
*/
#ifndef TG_RULETEST_RULETEST_H
#define TG_RULETEST_RULETEST_H

#include "../common/common.h"
#include "../common/value.h"
#include "../check/check.h"
#include "../rules/rules.h"

/* Inline events of one case (ruletest_int.h). */
typedef struct tg_rt_events tg_rt_events;

/* `expect.values.NAME`: a number (a literal of the rule language, units
** allowed), null, or a string; numbers may carry a tolerance. */
typedef struct tg_rt_value_expect {
    const char *name;
    tg_pos pos;
    tg_value value;            /* TG_TY_NULL, TG_TY_STRING, or a number (INT/FLOAT) */
    const char *text;          /* as written, for the diff */
    double tolerance;          /* absolute (in the value's base unit), or relative */
    bool relative;             /* tolerance written as a percentage */
} tg_rt_value_expect;

/* One expected evidence row: any of table, rowid, start, end and the
** rule's evidence columns; only the keys given are compared. */
typedef struct tg_rt_evidence_expect {
    tg_pos pos;
    tg_rt_value_expect *keys;
    size_t n_keys;
} tg_rt_evidence_expect;

typedef struct tg_rt_case {
    const char *name;
    tg_pos pos;                /* the case's mapping: "file:line name" */
    const char *rule;
    tg_pos rule_pos;
    /* input: exactly one of these */
    const char *trace;         /* path (relative ones resolved against the file's folder) */
    tg_rt_events *events;
    tg_pos input_pos;
    /* options */
    tg_param_set *sets;        /* params: and set: */
    size_t n_sets;
    tg_pos sets_pos;
    const char *baseline;      /* path, or NULL */
    tg_pos baseline_pos;
    const char *iteration_pattern;  /* NULL: the default */
    tg_missing_mode missing;   /* missing_data: fail (default) or skip */
    /* expect */
    bool has_status;           /* false only when the file lacked it (an error) */
    tg_verdict status;
    bool has_severity;
    tg_severity severity;      /* after overrides */
    bool has_count;
    int64_t count;
    tg_rt_value_expect *values;
    size_t n_values;
    bool has_evidence;         /* evidence: given (an empty list: no rows cited) */
    tg_rt_evidence_expect *evidence;
    size_t n_evidence;
    const char *message;       /* text the rendered message must contain, or NULL */
    /* expect.cause (docs/host.md): null for none, else any of these */
    bool has_cause;
    tg_pos cause_pos;
    bool cause_none;           /* `cause: null`: the result names no cause */
    const char *cause_kind;    /* host, call_site, launch; or NULL */
    const char *cause_summary; /* text the summary must contain, or NULL */
    bool has_cause_unknown;
    const char *cause_unknown; /* text one unknown sentence must contain; NULL: none may be */
    bool has_cause_items;      /* the first window's activity / the sites / the kernels, in order */
    tg_rt_evidence_expect *cause_items;
    size_t n_cause_items;
} tg_rt_case;

typedef struct tg_ruletest_file {
    tg_arena *arena;           /* owns everything of the file */
    const char *path;          /* as given */
    const char **rule_paths;   /* `rules:` resolved; "builtin" kept as is */
    size_t n_rule_paths;       /* 0: the default set (see tg_ruletest_run) */
    tg_pos rules_pos;
    tg_rt_case *cases;
    size_t n_cases;
} tg_ruletest_file;

/* Read a test file. Every problem is reported in diag with file:line:col
** (status TG_EUSAGE); NULL if there was any. */
tg_ruletest_file *tg_ruletest_load(const char *path, tg_diag *diag);
/* The same from memory; `name` is the file name used in positions and to
** resolve relative paths. */
tg_ruletest_file *tg_ruletest_load_text(const char *name, const char *text, size_t len,
                                        tg_diag *diag);
void tg_ruletest_free(tg_ruletest_file *f);

/* Write a case's inline events as an export-layout SQLite file at path (a
** new file). TG_OK, or TG_EINTERNAL with a diag (the file is removed). */
tg_status tg_ruletest_write_events(const tg_rt_events *ev, const char *path, tg_diag *diag);

/* ------------------------------------------------------------- running */

typedef struct tg_rt_opts {
    const char *builtin_rules; /* folder of the built-in rules (the CLI finds it) */
    bool keep;                 /* keep each generated SQLite file (path in the result) */
    const char *tmpdir;        /* NULL: $TMPDIR, else /tmp */
} tg_rt_opts;

/* One difference between what a case expects and what ran. */
typedef struct tg_rt_diff {
    const char *what;          /* "status", "count", "values.cv_period", "evidence[0].rowid", ... */
    const char *expected;
    const char *actual;
} tg_rt_diff;

typedef struct tg_rt_result {
    const tg_rt_case *c;
    bool passed;
    const char *error;         /* the case could not run (unreadable trace, baseline
                                  mismatch, ...): one sentence; the case failed */
    tg_rt_diff *diffs;
    size_t n_diffs;
    /* what ran, for context in reports */
    tg_verdict verdict;
    int64_t count;
    const char *message;
    const char *kept;          /* the generated SQLite file when opts.keep, else NULL */
    bool api_streamed;         /* the case's API table streamed through the launch
                                  join, as `check` loads it (tg_trace_result) */
} tg_rt_result;

typedef struct tg_rt_report {
    tg_arena *arena;           /* owns the results and their strings */
    tg_rt_result *results;     /* one per case, in file order */
    size_t n_results;
    size_t passed, failed;
} tg_rt_report;

/* Run every case of f. The rule set is the file's `rules:` (relative to
** the file; "builtin" names opts->builtin_rules) or, by default, the
** built-in rules plus the rule file next to the test (NAME.yaml beside
** NAME.test.yaml) when there is one. Returns TG_OK when the cases ran
** (verdicts in out), TG_EUSAGE when the file cannot run as written (rules
** that do not load, an unknown rule id or param, a bad baseline file):
** those errors carry the test file's positions. TG_EINTERNAL when out of
** memory. out must be zeroed; free it with tg_rt_report_free. */
tg_status tg_ruletest_run(const tg_ruletest_file *f, const tg_rt_opts *opts, tg_rt_report *out,
                          tg_diag *diag);
void tg_rt_report_free(tg_rt_report *r);

/* Compare one rule result with a case's expectations (the runner's
** comparer, exposed for tests): fills r->diffs and r->passed. Strings go
** to arena. False when out of memory. */
bool tg_ruletest_compare(const tg_rt_case *c, const tg_rule_result *actual, tg_arena *arena,
                         tg_rt_result *r);

#endif
