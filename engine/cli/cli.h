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
#include "../common/sha256.h"
#include "../common/text.h"
#include "../eval/eval.h"
#include "../model/model.h"
#include "../report/report.h"
#include "options.h"

/* The subcommands, each given its parsed command line (options.h); the
** table in main.c maps tg_cli_command_id onto them. */
int tg_cmd_info(const tg_cli_args *a);             /* cmd_info.c */
int tg_cmd_metrics(const tg_cli_args *a);          /* cmd_metrics.c */
int tg_cmd_check(const tg_cli_args *a);            /* cmd_check.c */
int tg_cmd_rules_list(const tg_cli_args *a);       /* cmd_rules.c */
int tg_cmd_rules_lint(const tg_cli_args *a);       /* cmd_rules.c */
int tg_cmd_rules_test(const tg_cli_args *a);       /* cmd_rules.c */
int tg_cmd_explain(const tg_cli_args *a);          /* cmd_rules.c */
int tg_cmd_rules_fields(const tg_cli_args *a);     /* cmd_fields.c */
int tg_cmd_baseline_record(const tg_cli_args *a);  /* cmd_baseline.c */
int tg_cmd_baseline_show(const tg_cli_args *a);    /* cmd_baseline.c */
int tg_cmd_merge(const tg_cli_args *a);            /* cmd_merge.c */
int tg_cmd_history_add(const tg_cli_args *a);      /* cmd_history.c */
int tg_cmd_history_show(const tg_cli_args *a);     /* cmd_history.c */
int tg_cmd_history_accept(const tg_cli_args *a);   /* cmd_history.c */
int tg_cmd_history_report(const tg_cli_args *a);   /* cmd_history.c */

/* check --history (cmd_history.c, docs/history.md): open the history
** (to append to it unless !record); judge each trace's regression rules
** against the baseline the history gives its workload (or make them
** inconclusive, saying how many more runs are needed); after the
** suppressions and the gate, append the traces judged as runs, in one
** transaction. Each returns an exit status, having said why. */
typedef struct tg_cli_history tg_cli_history;
struct tg_hist_meta;
int tg_cli_history_open(const char *db, bool record, tg_cli_history **out);
int tg_cli_history_judge(tg_cli_history *h, const tg_ruleset *rs, const struct tg_hist_meta *meta,
                         tg_run_result *run, bool allow_mismatch);
int tg_cli_history_record(tg_cli_history *h, const tg_run_result *run, const tg_report_opts *gate, bool replace);
void tg_cli_history_close(tg_cli_history *h);
/* The sentences every format states: per trace judged, which runs of the
** history judged it (or why none). */
const char *const *tg_cli_history_notes(const tg_cli_history *h, size_t *n);
/* --label, --time (normalised to UTC into time_buf), --branch and
** --workload into meta; a usage error (said) when one is malformed, or
** --label or --time is given with more than one run. */
int tg_cli_history_meta(const tg_cli_args *a, size_t n_runs, struct tg_hist_meta *meta, char time_buf[32]);

/* The identity of what judges a run (docs/formats.md, "Where a result
** comes from"): "sha256:" and the hex of the compiled rules, their params
** and severities, and the suppressions (NULL: none), into out. */
struct tg_suppressions;
int tg_cli_rules_digest(const tg_ruleset *rs, const struct tg_suppressions *s, char out[8 + TG_SHA256_HEX]);   /* pipeline.c */

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

/* Where people read about tracegate's rules, an absolute URI (SARIF's
** informationUri): the meson option homepage when set, else a file:// URI
** of docs/rules.md beside the built-in rules (the source tree's, or the
** one meson install puts in share/doc/tracegate). NULL when neither. */
const char *tg_cli_docs_uri(void);

/* Check each input (inputs.h) with the plan (engine/check:
** tg_check_trace), up to `jobs` in parallel, into run, which must be
** zeroed with run->arena set; each result is named as the input was
** given. A trace that cannot be read, or a report that could not be
** exported, gets status TG_ETRACE and its error sentence in its
** tg_trace_result (also printed to stderr). Returns the worst
** tg_status seen (TG_OK, TG_ETRACE, TG_EUSAGE, TG_EINTERNAL); rule verdicts
** are in run. (pipeline.c) */
struct tg_inputs;
/* The cores this process may run on (its CPU affinity), at least 1: what
** --jobs shares out and one trace may read with (pipeline.c). */
int tg_cli_cores(void);
int tg_cli_evaluate(const struct tg_inputs *in, const tg_check_plan *plan, int jobs, tg_run_result *run);

/* Free what tg_cli_evaluate allocated, including run->arena. */
void tg_cli_run_free(tg_run_result *run);

/* Exit status of a run from its verdicts (tg_report_exit_status: 4, then
** 2, then 1 a result that gates, then 3, else 0) and from what the
** evaluation itself returned (eval_status), ranked the same way. */
int tg_cli_exit_status(const tg_run_result *run, const tg_report_opts *gate, int eval_status);

/* End of `info` / `metrics`: when traces (a JSON array, consumed) is given,
** print it in the versioned envelope {"tool", "version", "schema",
** "traces"}; then flush stdout. Returns status, or TG_EINTERNAL (with a
** message naming cmd) when the output cannot be written. */
int tg_cli_finish_output(json_t *traces, const char *cmd, int status);

/* --suppress (suppressions.c, docs/suppressions.md). Load the files the
** command line names and check the rule ids they name against ids (with
** lint, also warn of expired ones); *out NULL when none are given.
** TG_OK, or TG_EUSAGE / TG_EINTERNAL after printing. */
struct tg_suppressions;
int tg_cli_load_suppressions(const tg_cli_args *a, const char *const *ids, size_t n_ids, bool lint,
                             struct tg_suppressions **out);
/* Apply them to run and warn (stderr) of those to review. */
int tg_cli_apply_suppressions(const struct tg_suppressions *s, tg_run_result *run);
/* The ids of a rule set (malloc'd array of borrowed strings). */
const char **tg_cli_rule_ids(const tg_ruleset *rs, size_t *n);
/* Today in UTC, YYYY-MM-DD (suppressions expire after their day). */
void tg_cli_today(char *buf, size_t size);

/* The first error message of diag, for a JSON {"file", "error"} entry. */
const char *tg_cli_first_error(const tg_diag *d);

/* True when stderr/stdout is a terminal and NO_COLOR is unset. */
bool tg_cli_color(FILE *f);

#endif
