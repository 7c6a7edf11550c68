/*
** `tracegate info [--format text|json] TRACE...`: what each export holds
** (engine/report/info.c builds the document). Text prints one block per
** trace; JSON prints one object {"tool", "version", "schema", "traces"}
** whose entries are info documents, or {"file", "error"} for a trace that
** could not be read. A bad trace also gets one line on stderr and makes
** the command exit 3 once every trace has been reported.
*/
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../report/info.h"

/* The API table, read for what info reports: its row count and the
** processes that made calls. A call is kept as a row only when its process
** is new (a small open-addressing set of pids), so a 15-million-call table
** costs a few rows. */
typedef struct pid_set {
    int32_t *slots;            /* pid + 1; 0 = empty */
    size_t cap, n;
    bool oom;
} pid_set;

static bool pid_add(pid_set *s, int32_t pid)
{
    if (s->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int32_t *slots = calloc(cap, sizeof *slots);
        if (!slots) {
            s->oom = true;
            return true;                 /* keep the row: still right, just bigger */
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slots[i]) continue;
            size_t j = ((uint32_t)s->slots[i] * 2654435761u) & (cap - 1);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    int32_t key = pid + 1;
    size_t j = ((uint32_t)key * 2654435761u) & (s->cap - 1);
    for (; s->slots[j]; j = (j + 1) & (s->cap - 1))
        if (s->slots[j] == key) return false;
    s->slots[j] = key;
    s->n++;
    return true;
}

static int keep_new_process(void *ctx, tg_api *row)
{
    return pid_add(ctx, row->pid) ? 1 : 0;
}

/* Open a trace the lean way (kernels as spans, calls streamed); a table
** that records calls twice (old exports) is read whole. */
static tg_trace *open_for_info(const char *path, int64_t max_memory, tg_diag *diag)
{
    tg_load_opts load = {.defer_api = true, .threads = tg_trace_read_threads(path, tg_cli_cores())};
    if (!tg_trace_fits_with(path, &load, max_memory, diag)) return NULL;
    tg_trace *t = tg_trace_open_with(path, &load, diag);
    if (!t) return NULL;
    pid_set pids = {0};
    tg_api_reader_cb cb = {.visit = keep_new_process, .ctx = &pids};
    tg_stream_status st = tg_trace_stream_apis(t, &cb, diag);
    free(pids.slots);
    bool ok = st == TG_STREAM_DONE || (st == TG_STREAM_STOPPED && tg_trace_load_apis(t, diag));
    if (!ok) {
        tg_trace_close(t);
        return NULL;
    }
    return t;
}

int tg_cmd_info(const tg_cli_args *a)
{
    bool json = tg_cli_choice(a, TG_CLI_OPT_FORMAT_DOC, 0) == 1;
    int64_t max_memory = tg_cli_size(a, TG_CLI_OPT_MAX_MEMORY);
    const char *pattern = tg_cli_value(a, TG_CLI_OPT_PATTERN);
    int status = TG_OK;
    json_t *traces = json ? json_array() : NULL;
    if (json && !traces) return TG_EINTERNAL;
    for (size_t i = 0; i < a->n_operands; i++) {
        const char *path = a->operands[i];
        tg_diag diag;
        tg_diag_init(&diag);
        tg_trace *t = open_for_info(path, max_memory, &diag);
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
            json_t *doc = tg_info_json(t, pattern);
            if (!doc || json_array_append_new(traces, doc) != 0) status = TG_EINTERNAL;
        } else {
            char *text = tg_info_text(t, pattern);
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
