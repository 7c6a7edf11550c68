/*
** Reporters: render a tg_run_result in the formats of docs/formats.md (text,
** json, junit, sarif, github, markdown). They only read the result and the
** rule set; they write to a FILE the CLI opened, and never exit.
*/
#ifndef TG_REPORT_H
#define TG_REPORT_H

#include <stdio.h>
#include "../eval/result.h"
#include "../rules/rules.h"

typedef enum tg_format {
    TG_FMT_TEXT, TG_FMT_JSON, TG_FMT_JUNIT, TG_FMT_SARIF, TG_FMT_GITHUB, TG_FMT_MARKDOWN,
    TG_FMT_COUNT
} tg_format;

/* "text" -> TG_FMT_TEXT; -1 when unknown. */
int tg_format_parse(const char *name);
const char *tg_format_name(tg_format f);

typedef struct tg_report_opts {
    bool color;                /* text: ANSI colours */
    bool quiet;                /* text: only failures and the verdict line */
    tg_severity fail_on;       /* for the overall verdict */
    bool fail_never;           /* --fail-on never */
    bool inconclusive_fail;    /* --inconclusive=fail: an inconclusive result fails the run */
    const char *tool_version;
    /* github: append the markdown summary to this file (the CLI passes
    ** $GITHUB_STEP_SUMMARY); NULL = no summary. */
    const char *step_summary_path;
} tg_report_opts;

/* Overall status of a run for a fail-on level: "pass", "fail" or "error".
** "error": a trace failed to load (status != TG_OK) or a rule result is
** ERROR. "fail": a FAIL at or above opts->fail_on, or a FAIL of a
** regression rule whatever its severity, or (opts->inconclusive_fail) an
** INCONCLUSIVE result; never with opts->fail_never. "pass" otherwise.
** opts may be NULL (fail_on error). */
const char *tg_run_status(const tg_run_result *run, const tg_report_opts *opts);

/* True when this result makes the run fail under opts (see tg_run_status). */
bool tg_report_gates(const tg_rule_result *r, const tg_report_opts *opts);

/* What a run contains, counted the same way by every format. */
typedef struct tg_report_tally {
    size_t traces, traces_unreadable;
    size_t results;                /* rule results over all traces */
    size_t passed, failed, skipped, errors, inconclusive;
    size_t failed_by_severity[3];  /* FAIL results, indexed by tg_severity */
    size_t gating;                 /* results that make the run fail */
    size_t regressions, improvements;  /* baseline comparisons */
} tg_report_tally;

void tg_report_tally_run(const tg_run_result *run, const tg_report_opts *opts,
                         tg_report_tally *out);

/* One line saying the verdict and what it rests on, without a newline:
** "FAIL — 2 errors, 1 warning in 3 traces". Returns buf. */
char *tg_report_verdict_line(const tg_run_result *run, const tg_report_opts *opts,
                             char *buf, size_t size);

/* GitHub drops a job summary larger than this whole; the markdown report
** never exceeds it (docs/formats.md, "markdown"). */
#define TG_REPORT_MARKDOWN_MAX ((size_t)1 << 20)

/* Write the run in one format. rs may be NULL (rules then described from the
** results alone). Returns TG_OK or TG_EINTERNAL (write error). */
tg_status tg_report_write(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                          const tg_report_opts *opts, FILE *out);

#endif
