/*
** `tracegate info [--format text|json] TRACE...`: what each export holds
** (engine/check/facts.c reads the trace, engine/report/info.c builds the
** document). Text prints one block per trace; JSON prints one object
** {"tool", "version", "schema", "traces"} whose entries are info
** documents, or {"file", "error"} for a trace that could not be read. A
** bad trace also gets one line on stderr and makes the command exit 3
** once every trace has been reported.
*/
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../report/info.h"

int tg_cmd_info(const tg_cli_args *a)
{
    bool json = tg_cli_choice(a, TG_CLI_OPT_FORMAT_DOC, 0) == 1;
    const char *pattern = tg_cli_value(a, TG_CLI_OPT_PATTERN);
    tg_facts_plan plan = {.max_memory = tg_cli_size(a, TG_CLI_OPT_MAX_MEMORY), .threads = tg_cli_cores()};
    int status = TG_OK;
    json_t *traces = json ? json_array() : NULL;
    if (json && !traces) return TG_EINTERNAL;
    for (size_t i = 0; i < a->n_operands; i++) {
        const char *path = a->operands[i];
        tg_diag diag;
        tg_diag_init(&diag);
        tg_coverage cov;
        tg_trace *t = tg_check_open_info_with(&plan, path, &cov, &diag);
        int rc = tg_cli_report_diag(&diag, TG_OK);   /* errors and load warnings */
        if (!t) {
            if (status == TG_OK || rc == TG_EINTERNAL) status = rc ? rc : TG_ETRACE;
            if (json)
                json_array_append_new(traces, json_pack("{s:s?, s:s?}", "file", path, "error",
                                                        tg_cli_first_error(&diag)));
            tg_diag_clear(&diag);
            continue;
        }
        tg_diag_clear(&diag);
        if (json) {
            json_t *doc = tg_info_json_with(t, pattern, &cov);
            if (!doc || json_array_append_new(traces, doc) != 0) status = TG_EINTERNAL;
        } else {
            char *text = tg_info_text_with(t, pattern, &cov);
            if (text) {
                fputs(text, stdout);
                if (i + 1 < a->n_operands) fputc('\n', stdout);
                free(text);
            } else {
                status = TG_EINTERNAL;
            }
        }
        tg_trace_close(t);
    }
    return tg_cli_finish_output(json ? traces : NULL, "info", status);
}
