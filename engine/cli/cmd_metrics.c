/*
** `tracegate metrics [--format text|json] [--iteration-pattern RE] TRACE...`:
** every fact the engine derives from each export (docs/formats.md, "info and
** metrics"), the numbers behind the built-in rules' verdicts.
** engine/report/metrics.c builds the document. Text prints one block per
** trace; JSON prints one object {"tool", "version", "schema", "traces"} whose
** entries are metrics documents, or {"file", "error"} for a trace that could
** not be read. Exit status: 0, 2 for usage errors (a bad pattern), 3 when a
** trace could not be read (after every trace has been reported).
*/
#include "cli.h"

#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../report/metrics.h"

static void metrics_usage(FILE *f)
{
    fprintf(f, "usage: tracegate metrics [--format text|json] [--iteration-pattern RE] [--max-memory SIZE] TRACE...\n"
               "  every fact derived from each nsys SQLite export: devices (busy fraction,\n"
               "  NCCL overlap, queue time, idle gaps), iterations (host duration, period,\n"
               "  GPU time over steady iterations), blocking calls and copies\n"
               "  --iteration-pattern RE  NVTX range names that mark iterations (POSIX ERE;\n"
               "                          default %s)\n"
               "  --max-memory SIZE       refuse (exit 3) a trace that would need more than SIZE\n",
               TG_DEFAULT_ITERATION_PATTERN);
}

static const char *first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    return "unreadable trace";
}

typedef struct metrics_opts {
    bool json;
    const char *pattern;
    int64_t max_memory;        /* --max-memory, 0 = none */
    int first;                 /* index of the first trace argument */
} metrics_opts;

/* Value of an option given as "--opt VALUE" or "--opt=VALUE"; NULL if a is
** not that option. *i moves past a separate value. */
static const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != 0) return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, metrics_opts *o)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (a[0] != '-' || !a[1]) break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            metrics_usage(stdout);
            return -1;
        }
        bool missing = false;
        const char *fmt = option_value(argc, argv, &i, "--format", &missing);
        if (!fmt && !missing) fmt = option_value(argc, argv, &i, "-f", &missing);
        const char *pattern = fmt || missing ? NULL : option_value(argc, argv, &i, "--iteration-pattern", &missing);
        const char *max_memory = fmt || pattern || missing ? NULL : option_value(argc, argv, &i, "--max-memory", &missing);
        if (missing) {
            tg_cli_say("metrics: %s needs a value", a);
            return TG_EUSAGE;
        }
        if (fmt) {
            if (!strcmp(fmt, "json")) o->json = true;
            else if (!strcmp(fmt, "text")) o->json = false;
            else {
                tg_cli_say("metrics: unknown format '%s' (text or json)", fmt);
                return TG_EUSAGE;
            }
        } else if (max_memory) {
            if (!tg_parse_size(max_memory, &o->max_memory)) {
                tg_cli_say("metrics: --max-memory wants a size such as 512MiB, not '%s'",
                           max_memory);
                return TG_EUSAGE;
            }
        } else if (pattern) {
            regex_t re;   /* checked here, so a bad pattern is a usage error before any trace */
            const char *refused = tg_regex_refuse(pattern);
            if (refused) {
                tg_cli_say("metrics: --iteration-pattern %.80s%s %s", pattern,
                           strlen(pattern) > 80 ? "..." : "", refused);
                return TG_EUSAGE;
            }
            int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
            if (rc != 0) {
                char why[256];
                regerror(rc, &re, why, sizeof why);
                tg_cli_say("metrics: invalid --iteration-pattern \"%s\": %s", pattern, why);
                return TG_EUSAGE;
            }
            regfree(&re);
            o->pattern = pattern;
        } else {
            tg_cli_say("metrics: unknown option '%s'", a);
            metrics_usage(stderr);
            return TG_EUSAGE;
        }
    }
    if (i >= argc) {
        tg_cli_say("metrics: no trace given");
        metrics_usage(stderr);
        return TG_EUSAGE;
    }
    o->first = i;
    return TG_OK;
}

/* The calls metrics counts as rows: blocking ones (the rest it reads from
** the model's facts and the ops' derived fields). */
static bool keep_blocking(void *ctx, const tg_model *m, const tg_api *row)
{
    (void)ctx;
    (void)m;
    return row->blocking;
}

/* Metrics of one trace: appended to traces (JSON) or printed (text). */
static int one_trace(const char *path, const metrics_opts *o, json_t *traces, bool separator)
{
    tg_diag diag;
    tg_diag_init(&diag);
    /* loaded as check loads it: kernels as spans, the API table streamed */
    tg_load_opts load = {.defer_api = true};
    tg_trace *t = tg_trace_fits_with(path, &load, o->max_memory, &diag) ? tg_trace_open_with(path, &load, &diag)
                                                                         : NULL;
    int rc = tg_cli_report_diag(&diag, TG_OK);
    if (!t) {
        if (traces)
            json_array_append_new(traces, json_pack("{s:s?, s:s?}", "file", path, "error", first_error(&diag)));
        tg_diag_clear(&diag);
        return rc ? rc : TG_ETRACE;
    }
    tg_diag_clear(&diag);
    tg_model_params params = {.iteration_pattern = o->pattern, .keep_api = keep_blocking, .skip_nvtx_gpu = true};
    tg_model *m = tg_model_build(t, &params, &diag);
    int status = TG_OK;
    if (!m) {
        status = tg_cli_report_diag(&diag, TG_EINTERNAL);
        tg_diag_clear(&diag);
        tg_trace_close(t);
        return status;
    }
    tg_cli_report_diag(&diag, TG_OK);   /* the streamed API table's row warnings */
    tg_diag_clear(&diag);
    json_t *doc = tg_metrics_json(m);
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

int tg_cmd_metrics(int argc, char **argv)
{
    metrics_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) return TG_OK;
    if (rc != TG_OK) return rc;

    int status = TG_OK;
    json_t *traces = o.json ? json_array() : NULL;
    if (o.json && !traces) return TG_EINTERNAL;
    for (int i = o.first; i < argc; i++) {
        rc = one_trace(argv[i], &o, traces, i > o.first);
        if (rc == TG_EUSAGE) {          /* a bad pattern fails every trace alike */
            json_decref(traces);
            return rc;
        }
        if (rc != TG_OK && (status == TG_OK || rc == TG_EINTERNAL)) status = rc;
    }
    return tg_cli_finish_output(traces, "metrics", status);
}
