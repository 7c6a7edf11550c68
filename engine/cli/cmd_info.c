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
    fprintf(f, "usage: tracegate info [--format text|json] [--max-memory SIZE] TRACE...\n"
               "  what each nsys SQLite export holds: versions, GPUs, processes, row counts,\n"
               "  NVTX range names and the data the capture did not record\n"
               "  --max-memory SIZE  refuse (exit 3) a trace that would need more than SIZE\n");
}

/* First error message of a diag, for the JSON error entry. */
static const char *first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    return "unreadable trace";
}

int tg_cmd_info(int argc, char **argv)
{
    bool json = false;
    int64_t max_memory = 0;
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
        if (!strcmp(a, "--max-memory") || !strncmp(a, "--max-memory=", 13)) {
            const char *v = a[12] == '=' ? a + 13 : first + 1 < argc ? argv[++first] : NULL;
            if (!v || !tg_parse_size(v, &max_memory)) {
                fprintf(stderr, "tracegate: info: --max-memory wants a size such as 512MiB, not '%s'\n",
                        v ? v : "");
                return TG_EUSAGE;
            }
            continue;
        }
        if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
            if (first + 1 >= argc) {
                fprintf(stderr, "tracegate: info: %s needs a value (text or json)\n", a);
                return TG_EUSAGE;
            }
            fmt = argv[++first];
        } else if (!strncmp(a, "--format=", 9)) {
            fmt = a + 9;
        } else {
            fprintf(stderr, "tracegate: info: unknown option '%s'\n", a);
            info_usage(stderr);
            return TG_EUSAGE;
        }
        if (!strcmp(fmt, "json")) json = true;
        else if (!strcmp(fmt, "text")) json = false;
        else {
            fprintf(stderr, "tracegate: info: unknown format '%s' (text or json)\n", fmt);
            return TG_EUSAGE;
        }
    }
    if (first >= argc) {
        fprintf(stderr, "tracegate: info: no trace given\n");
        info_usage(stderr);
        return TG_EUSAGE;
    }

    int status = TG_OK;
    json_t *traces = json ? json_array() : NULL;
    if (json && !traces) return TG_EINTERNAL;
    for (int i = first; i < argc; i++) {
        tg_diag diag;
        tg_diag_init(&diag);
        tg_trace *t = tg_trace_fits(argv[i], max_memory, &diag) ? tg_trace_open(argv[i], &diag) : NULL;
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
            json_t *doc = tg_info_json(t);
            if (!doc || json_array_append_new(traces, doc) != 0) status = TG_EINTERNAL;
        } else {
            char *text = tg_info_text(t);
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
