/*
** The report options `check` and `merge` share: --format, -o FORMAT=FILE,
** --fail-on, --color, --quiet; and writing every requested report.
*/
#ifndef TG_CLI_OUTPUTS_H
#define TG_CLI_OUTPUTS_H

#include "../report/report.h"
#include "outfile.h"
#include "options.h"

#define TG_CLI_MAX_OUTPUTS 16

typedef struct tg_cli_outputs {
    struct {
        tg_format format;
        const char *path;      /* NULL: stdout */
    } out[TG_CLI_MAX_OUTPUTS];
    size_t n;
    tg_severity fail_on;
    bool fail_never;
    int color;                 /* -1 auto, 0 never, 1 always */
    bool quiet;
    bool reproduce;            /* --reproduce */
    bool inconclusive_fail;    /* --inconclusive fail */
    const char *rules_digest;  /* tg_report_opts's: set by check */
    const char *const *notes;  /* tg_report_opts's: set by merge */
    size_t n_notes;
    const char *ranks_not_compared;  /* tg_report_opts's: set by merge */
} tg_cli_outputs;

void tg_cli_outputs_init(tg_cli_outputs *o);

/* The report options of a parsed command line (--format, -o, --fail-on,
** --inconclusive, --color, --quiet); TG_EUSAGE after printing. */
int tg_cli_outputs_read(tg_cli_outputs *o, const tg_cli_args *a);

/* Is one of the reports HTML (the check must keep each trace's timeline)? */
bool tg_cli_outputs_want_timeline(const tg_cli_outputs *o);

/* What decides the gate (fail_on, fail_never, inconclusive_fail). */
tg_report_opts tg_cli_outputs_gate(const tg_cli_outputs *o);

/* Before anything is read or written: refuse (TG_EUSAGE, after printing
** why) reports that would land on a file the command reads, on another
** report, or on a directory (outfile.h); also the GitHub job summary. */
int tg_cli_outputs_check(const tg_cli_outputs *o, const tg_cli_reads *reads);

/* Write every report, each whole or not at all (outfile.h). Returns TG_OK,
** or TG_EINTERNAL when one could not be written (after saying why). */
int tg_cli_outputs_write(const tg_cli_outputs *o, const tg_run_result *run, const tg_ruleset *rs);

#endif
