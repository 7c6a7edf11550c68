/*
** `tracegate metrics [--format text|json] [--iteration-pattern RE] TRACE...`:
** every fact the engine derives from each export (docs/formats.md, "info and
** metrics"), the numbers behind the built-in rules' verdicts.
** engine/check/facts.c reads the trace and builds its model,
** engine/report/metrics.c the document. Text prints one block per
** trace; JSON prints one object {"tool", "version", "schema", "traces"} whose
** entries are metrics documents, or {"file", "error"} for a trace that could
** not be read. Exit status: 0, 2 for usage errors (a bad pattern; built-in
** rules that cannot be found or lack what the counts take from them), 3
** when a trace could not be read (after every trace has been reported).
*/
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../report/metrics.h"

typedef struct metrics_opts {
    bool json;
    tg_facts_plan plan;        /* the pattern, --max-memory, the cores */
    const tg_metrics_defs *defs;
} metrics_opts;

/* Metrics of one trace: appended to traces (JSON) or printed (text). */
static int one_trace(const char *path, const metrics_opts *o, json_t *traces, bool separator)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_trace *t = tg_check_open_metrics(&o->plan, path, &diag);
    int rc = tg_cli_report_diag(&diag, TG_OK);
    if (!t) {
        if (traces)
            json_array_append_new(traces, json_pack("{s:s?, s:s?}", "file", path, "error", tg_cli_first_error(&diag)));
        tg_diag_clear(&diag);
        return rc ? rc : TG_ETRACE;
    }
    tg_diag_clear(&diag);
    tg_model *m = tg_check_model_metrics(&o->plan, t, &diag);
    int status = TG_OK;
    if (!m) {
        status = tg_cli_report_diag(&diag, TG_EINTERNAL);
        tg_diag_clear(&diag);
        tg_trace_close(t);
        return status;
    }
    tg_cli_report_diag(&diag, TG_OK);   /* the streamed API table's row warnings */
    tg_diag_clear(&diag);
    json_t *doc = tg_metrics_json(m, o->defs);
    if (!doc) {
        status = TG_EINTERNAL;
    } else if (traces) {
        if (json_array_append_new(traces, doc) != 0) status = TG_EINTERNAL;
        doc = NULL;
    } else {
        char *text = tg_metrics_text(doc);
        if (text) {
            if (separator) fputc('\n', stdout);
            fputs(text, stdout);
            free(text);
        } else {
            status = TG_EINTERNAL;
        }
    }
    json_decref(doc);
    tg_model_free(m);
    tg_trace_close(t);
    return status;
}

/* The counts' definitions, from the built-in rules (report/metrics.h):
** NULL after saying why, with the exit status in *status. */
static tg_metrics_defs *load_defs(int *status)
{
    *status = TG_EUSAGE;
    const char *dir = tg_cli_builtin_rules();
    if (!dir) {
        tg_cli_say("the built-in rules (rules.d) were not found; set TRACEGATE_RULES_DIR (metrics takes the "
                   "definitions of its counts from them)");
        return NULL;
    }
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruleset *rs = tg_rules_load(&dir, 1, NULL, 0, &diag);
    tg_metrics_defs *defs = rs ? tg_metrics_defs_new(rs, &diag) : NULL;
    *status = tg_cli_report_diag(&diag, TG_EUSAGE);
    if (!defs && *status == TG_OK) *status = TG_EUSAGE;
    tg_diag_clear(&diag);
    tg_rules_free(rs);
    return defs;
}

int tg_cmd_metrics(const tg_cli_args *a)
{
    metrics_opts o = {.json = tg_cli_choice(a, TG_CLI_OPT_FORMAT_DOC, 0) == 1,
                      .plan = {.iteration_pattern = tg_cli_value(a, TG_CLI_OPT_PATTERN),
                               .max_memory = tg_cli_size(a, TG_CLI_OPT_MAX_MEMORY),
                               .threads = tg_cli_cores()}};
    int status;
    tg_metrics_defs *defs = load_defs(&status);
    if (!defs) return status;
    o.defs = defs;
    status = TG_OK;
    json_t *traces = o.json ? json_array() : NULL;
    if (o.json && !traces) {
        tg_metrics_defs_free(defs);
        return TG_EINTERNAL;
    }
    for (size_t i = 0; i < a->n_operands; i++) {
        int rc = one_trace(a->operands[i], &o, traces, i > 0);
        if (rc == TG_EUSAGE) {          /* a bad pattern fails every trace alike */
            json_decref(traces);
            tg_metrics_defs_free(defs);
            return rc;
        }
        if (rc != TG_OK && (status == TG_OK || rc == TG_EINTERNAL)) status = rc;
    }
    tg_metrics_defs_free(defs);
    return tg_cli_finish_output(traces, "metrics", status);
}
