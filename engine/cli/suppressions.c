/*
** --suppress for check, merge and `rules lint` (engine/suppress,
** docs/suppressions.md): loading the files, checking the rule ids they
** name, applying them to a run and saying which suppressions need a look
** (unused, expired, exceeded) as warnings on stderr, at their line.
*/
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../suppress/suppress.h"

void tg_cli_today(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(buf, size, "%Y-%m-%d", &tm)) snprintf(buf, size, "9999-12-31");
}

int tg_cli_load_suppressions(const tg_cli_args *a, const char *const *ids, size_t n_ids, bool lint,
                             tg_suppressions **out)
{
    *out = NULL;
    size_t n = a->n_values[TG_CLI_OPT_SUPPRESS];
    if (!n) return TG_OK;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_suppressions *s = tg_suppress_load(a->values[TG_CLI_OPT_SUPPRESS], n, &diag);
    char today[16];
    tg_cli_today(today, sizeof today);
    int st = s ? (int)tg_suppress_check_rules(s, ids, n_ids, today, lint, &diag) : TG_OK;
    int reported = tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    if (!s || st != TG_OK) {
        tg_suppress_free(s);
        return reported != TG_OK ? reported : TG_EUSAGE;
    }
    *out = s;
    return TG_OK;
}

const char **tg_cli_rule_ids(const tg_ruleset *rs, size_t *n)
{
    *n = tg_rules_count(rs);
    const char **ids = calloc(*n + 1, sizeof *ids);
    for (size_t i = 0; ids && i < *n; i++) ids[i] = tg_rules_info(rs, i)->id;
    return ids;
}

int tg_cli_apply_suppressions(const tg_suppressions *s, tg_run_result *run)
{
    if (!s) return TG_OK;
    char today[16];
    tg_cli_today(today, sizeof today);
    if (!tg_suppress_apply(s, run, today)) {
        tg_cli_say("out of memory while applying the suppressions");
        return TG_EINTERNAL;
    }
    tg_diag diag;
    tg_diag_init(&diag);
    tg_suppress_warn(s, run, &diag);
    tg_cli_report_diag(&diag, TG_OK);
    tg_diag_clear(&diag);
    return TG_OK;
}
