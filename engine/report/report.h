/*
** Reporters: render a tg_run_result in the formats of DESIGN §5 (text,
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
    const char *tool_version;
} tg_report_opts;

/* Overall status of a run for a fail-on level: "pass", "fail" or "error". */
const char *tg_run_status(const tg_run_result *run, const tg_report_opts *opts);

/* Write the run in one format. rs may be NULL (rules then described from the
** results alone). Returns TG_OK or TG_EINTERNAL (write error). */
tg_status tg_report_write(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                          const tg_report_opts *opts, FILE *out);

#endif
