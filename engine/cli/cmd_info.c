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

static void info_usage(FILE *f)
{
    fprintf(f, "usage: tracegate info [--format text|json] [--iteration-pattern RE] [--max-memory SIZE] TRACE...\n"
               "  what each nsys SQLite export holds: versions, GPUs, processes, row counts,\n"
               "  NVTX range names, how iterations are found and the data the capture did not record\n"
               "  --iteration-pattern RE  NVTX range names that mark iterations (POSIX ERE;\n"
               "                          default %s)\n"
               "  --max-memory SIZE  refuse (exit 3) a trace that would need more than SIZE\n",
            TG_DEFAULT_ITERATION_PATTERN);
}

/* First error message of a diag, for the JSON error entry. */
static const char *first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    return "unreadable trace";
}

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
    tg_load_opts load = {.defer_api = true};
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

int tg_cmd_info(int argc, char **argv)
{
    bool json = false;
    int64_t max_memory = 0;
    const char *pattern = NULL;
    int first = 1;
    for (; first < argc; first++) {
        const char *a = argv[first];
        if (!strcmp(a, "--")) {
            first++;
            break;
        }
        if (a[0] != '-' || !a[1]) break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            info_usage(stdout);
            return TG_OK;
        }
        const char *fmt = NULL;
        if (!strcmp(a, "--iteration-pattern") || !strncmp(a, "--iteration-pattern=", 20)) {
            pattern = a[19] == '=' ? a + 20 : first + 1 < argc ? argv[++first] : NULL;
            tg_diag d;
            tg_diag_init(&d);
            bool ok = pattern && tg_model_pattern_ok(pattern, &d);
            if (!pattern) tg_cli_say("info: --iteration-pattern needs a value");
            else if (!ok) tg_cli_say("info: %s", d.n ? d.msgs[0].text : "bad pattern");
            tg_diag_clear(&d);
            if (!ok) return TG_EUSAGE;
            continue;
        }
        if (!strcmp(a, "--max-memory") || !strncmp(a, "--max-memory=", 13)) {
            const char *v = a[12] == '=' ? a + 13 : first + 1 < argc ? argv[++first] : NULL;
            if (!v || !tg_parse_size(v, &max_memory)) {
                tg_cli_say("info: --max-memory wants a size such as 512MiB, not '%s'",
                           v ? v : "");
                return TG_EUSAGE;
            }
            continue;
        }
        if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
            if (first + 1 >= argc) {
                tg_cli_say("info: %s needs a value (text or json)", a);
                return TG_EUSAGE;
            }
            fmt = argv[++first];
        } else if (!strncmp(a, "--format=", 9)) {
            fmt = a + 9;
        } else {
            tg_cli_say("info: unknown option '%s'", a);
            info_usage(stderr);
            return TG_EUSAGE;
        }
        if (!strcmp(fmt, "json")) json = true;
        else if (!strcmp(fmt, "text")) json = false;
        else {
            tg_cli_say("info: unknown format '%s' (text or json)", fmt);
            return TG_EUSAGE;
        }
    }
    if (first >= argc) {
        tg_cli_say("info: no trace given");
        info_usage(stderr);
        return TG_EUSAGE;
    }

    int status = TG_OK;
    json_t *traces = json ? json_array() : NULL;
    if (json && !traces) return TG_EINTERNAL;
    for (int i = first; i < argc; i++) {
        tg_diag diag;
        tg_diag_init(&diag);
        tg_trace *t = open_for_info(argv[i], max_memory, &diag);
        int rc = tg_cli_report_diag(&diag, TG_OK);   /* errors and load warnings */
        if (!t) {
            if (status == TG_OK || rc == TG_EINTERNAL) status = rc ? rc : TG_ETRACE;
            if (json)
                json_array_append_new(traces, json_pack("{s:s?, s:s?}", "file", argv[i], "error",
                                                        first_error(&diag)));
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
                if (i + 1 < argc) fputc('\n', stdout);
                free(text);
            } else {
                status = TG_EINTERNAL;
            }
        }
        tg_trace_close(t);
    }
    return tg_cli_finish_output(json ? traces : NULL, "info", status);
}
