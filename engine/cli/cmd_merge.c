/*
** `tracegate merge`: combine the JSON results of separate `check` runs (one
** per rank, spread over machines by a scheduler) into one verdict, and run
** the cross-rank straggler check over them. Any report format can be
** written from the merged result; the exit status is that of `check`.
*/
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "../report/json_read.h"
#include "outputs.h"
#include "../suppress/suppress.h"

/* The distinct rule ids of a run's results (malloc'd, borrowed strings). */
static const char **result_rule_ids(const tg_run_result *run, size_t *n)
{
    size_t cap = 1;
    for (size_t t = 0; t < run->n_traces; t++) cap += run->traces[t].n_results;
    const char **ids = calloc(cap, sizeof *ids);
    *n = 0;
    for (size_t t = 0; ids && t < run->n_traces; t++)
        for (size_t i = 0; i < run->traces[t].n_results; i++) {
            const char *id = run->traces[t].results[i].rule;
            bool seen = !id;
            for (size_t k = 0; k < *n && !seen; k++) seen = !strcmp(ids[k], id);
            if (!seen) ids[(*n)++] = id;
        }
    return ids;
}

int tg_cmd_merge(const tg_cli_args *a)
{
    tg_cli_outputs out;
    tg_cli_outputs_init(&out);
    if (tg_cli_outputs_read(&out, a) != TG_OK) return TG_EUSAGE;
    double threshold = tg_cli_ratio(a, TG_CLI_OPT_THRESHOLD, 0.10);
    tg_severity severity = (tg_severity)tg_cli_choice(a, TG_CLI_OPT_STRAGGLER_SEVERITY, TG_SEV_WARNING);
    int argc = (int)a->n_operands;
    const char *const *argv = a->operands;

    /* no report over a result it merges (engine/cli/outfile.h) */
    tg_cli_reads reads = {0};
    int st = TG_OK;
    for (int i = 0; i < argc && st == TG_OK; i++)
        if (!tg_cli_reads_add(&reads, argv[i], "result")) st = TG_EINTERNAL;
    for (size_t i = 0; st == TG_OK && i < a->n_values[TG_CLI_OPT_SUPPRESS]; i++)
        if (!tg_cli_reads_add(&reads, a->values[TG_CLI_OPT_SUPPRESS][i], "suppression file")) st = TG_EINTERNAL;
    if (st == TG_OK) st = tg_cli_outputs_check(&out, &reads);
    tg_cli_reads_free(&reads);
    if (st != TG_OK) return st;

    tg_run_result run = {.arena = tg_arena_new()};
    if (!run.arena) return TG_EINTERNAL;
    tg_diag diag;
    tg_diag_init(&diag);
    for (int i = 0; i < argc && st == TG_OK; i++) st = tg_result_read_json(argv[i], &run, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    tg_suppressions *suppressions = NULL;
    if (st == TG_OK) {
        tg_merge_stragglers(&run, threshold, severity);
        /* --suppress names the rules of the merged results */
        size_t n_ids = 0;
        const char **ids = result_rule_ids(&run, &n_ids);
        st = ids ? tg_cli_load_suppressions(a, ids, n_ids, false, &suppressions) : TG_EINTERNAL;
        free(ids);
    }
    if (st == TG_OK && tg_cli_apply_suppressions(suppressions, &run) != TG_OK) st = TG_EINTERNAL;
    if (st == TG_OK) {
        tg_report_opts gate = tg_cli_outputs_gate(&out);
        st = tg_cli_exit_status(&run, &gate, TG_OK);
        int wst = tg_cli_outputs_write(&out, &run, NULL);
        if (wst != TG_OK) st = wst;   /* exit 4 whatever the verdict */
    }
    tg_suppress_free(suppressions);
    tg_arena_free(run.arena);
    return st;
}
