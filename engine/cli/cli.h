/*
** The `tracegate` command: a thin client of libtracegate. Each subcommand
** lives in its own file and returns the exit status of DESIGN §5; only this
** folder prints to stdout/stderr or decides exit codes.
*/
#ifndef TG_CLI_H
#define TG_CLI_H

#include <stdio.h>
#include "../common/common.h"

int tg_cmd_info(int argc, char **argv);      /* cmd_info.c */
int tg_cmd_metrics(int argc, char **argv);   /* cmd_metrics.c */
int tg_cmd_check(int argc, char **argv);     /* cmd_check.c */
int tg_cmd_rules(int argc, char **argv);     /* cmd_rules.c: list, lint, test */
int tg_cmd_explain(int argc, char **argv);   /* cmd_rules.c */
int tg_cmd_baseline(int argc, char **argv);  /* cmd_baseline.c: record, show */

/* Print every message of diag to stderr like a compiler; returns diag->status
** (or fallback when there was no error). */
int tg_cli_report_diag(const tg_diag *diag, int fallback);

/* Resolve "builtin" (and the default rule set): rules.d next to the binary,
** in the source tree, or at the install prefix. Returns a static path or NULL. */
const char *tg_cli_builtin_rules(void);

/* True when stderr/stdout is a terminal and NO_COLOR is unset. */
bool tg_cli_color(FILE *f);

#endif
