/*
** The `tracegate` command: a thin client of libtracegate. Each subcommand
** lives in its own file and returns the exit status of docs/formats.md; only
** this folder prints to stdout/stderr or decides exit codes.
*/
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stdio.h>
#include <jansson.h>

#include "../check/check.h"
#include "../common/common.h"
#include "../common/text.h"
#include "../eval/eval.h"
#include "../model/model.h"
#include "../report/report.h"

int tg_cmd_info(int argc, char **argv);      /* cmd_info.c */
int tg_cmd_metrics(int argc, char **argv);   /* cmd_metrics.c */
int tg_cmd_check(int argc, char **argv);     /* cmd_check.c */
int tg_cmd_rules(int argc, char **argv);     /* cmd_rules.c: list, lint, test */
int tg_cmd_explain(int argc, char **argv);   /* cmd_rules.c */
int tg_cmd_rules_fields(int argc, char **argv);  /* cmd_fields.c: `rules fields` */
int tg_cmd_baseline(int argc, char **argv);  /* cmd_baseline.c: record, show */

/* One line on stderr: "tracegate: ", the printf-formatted message run
** through tg_text_escape (engine/common/text.h, docs/formats.md) as a
** whole, so that no path, argument or name in it can add a line or a
** control sequence, and a newline. Every message of the CLI goes through
** here or through tg_cli_report_diag. */
void tg_cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print every message of diag to stderr like a compiler; returns diag->status
** (or fallback when there was no error). */
int tg_cli_report_diag(const tg_diag *diag, int fallback);

/* Resolve "builtin" (and the default rule set): rules.d next to the binary,
** in the source tree, or at the install prefix. Returns a static path or NULL. */
const char *tg_cli_builtin_rules(void);

/* Check each trace with the plan (engine/check: tg_check_trace), up to
** `jobs` in parallel, into run, which must be zeroed with run->arena set. A
** trace that cannot be read gets status TG_ETRACE and its error sentence
** in its tg_trace_result (also printed to stderr). Returns the worst
** tg_status seen (TG_OK, TG_ETRACE, TG_EUSAGE, TG_EINTERNAL); rule verdicts
** are in run. (pipeline.c) */
int tg_cli_evaluate(const char *const *traces, size_t n_traces, const tg_check_plan *plan, int jobs,
                    tg_run_result *run);

/* Free what tg_cli_evaluate allocated, including run->arena. */
void tg_cli_run_free(tg_run_result *run);

/* Exit status of a run from its verdicts (docs/formats.md): 4
** internal or rule evaluation error, 2 a trace that does not fit the
** baseline, 3 a trace unreadable or lacking data a rule needs, 1 a result
** that gates under `gate` (tg_report_gates: a failing finding at or above
** fail_on, a failing regression, an inconclusive one with
** inconclusive_fail), else 0. */
int tg_cli_exit_status(const tg_run_result *run, const tg_report_opts *gate, int eval_status);

int tg_cmd_merge(int argc, char **argv);     /* cmd_merge.c */

/* End of `info` / `metrics`: when traces (a JSON array, consumed) is given,
** print it in the versioned envelope {"tool", "version", "schema",
** "traces"}; then flush stdout. Returns status, or TG_EINTERNAL (with a
** message naming cmd) when the output cannot be written. */
int tg_cli_finish_output(json_t *traces, const char *cmd, int status);

/* After getopt_long returned '?' for shortopts: what went wrong, as a
** phrase about the option itself ("unknown option '-x'", "option '-o'
** needs a value", "unknown or incomplete option '--frob'"), in buf. A short
** option inside a group (-qx) is named alone: argv[optind - 1] is then
** the previous argument. */
const char *tg_cli_option_error(const char *shortopts, char **argv, char *buf, size_t size);

/* True when stderr/stdout is a terminal and NO_COLOR is unset. */
bool tg_cli_color(FILE *f);

#endif
