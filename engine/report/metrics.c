/*
** `tracegate metrics`: tg_metrics_json gathers the facts of a built model
** into one document, tg_metrics_text renders that document for a terminal.
**
** The row counts (sync_memcpy, blocking_calls, gaps_ge_500ms, ...) are
** written in the rule language (METRIC_COUNT_LIST below) and counted by the
** evaluator like any rule's rows, each with the SQL that reproduces it
** (`queries`); what the built-in rules define (sync-memcpy's small_htod,
** the host_visible list) is taken from the loaded built-in rule set
** (tg_metrics_defs_new), not restated in C. Iteration series are
** summarized over steady iterations with the statistics of
** engine/common/stats.h.
*/
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iterdoc.h"
#include "report_int.h"
#include "../eval/eval.h"
#include "../rules/rules.h"
#include "../common/units.h"
#include "../common/text.h"
#include "../common/stats.h"

/* The counted metrics: X(key, source, its steady-state field, borrowed,
** where), each reported as KEY (every row `where` admits) and KEY_steady
** (those in steady state too). These are the reference metrics'
** definitions (docs/formats.md, "info and metrics"), NVIDIA's expert-rule
** defaults where the two coincide: a blocking copy, small host-to-device
** ones exempt as in cuda_memcpy_sync; every asynchronous copy touching
** pageable memory (the built-in rule counts only steady ones of 64 KB or
** more); a blocking memset of memory the host sees; a synchronize-family
** call; an idle gap of 500 ms or more (the gpu-idle-gap default).
**
** What the built-in rules define is not restated here but borrowed from
** the loaded built-in rule set, so that editing rules.d/10-host-sync.yaml
** changes metrics too: `borrowed` names a param (RULE.PARAM) or a list
** of that set, and its value is written where `where` has an @. */
#define METRIC_COUNT_LIST(X) \
    X(sync_memcpy, "memcpy", "steady", "sync-memcpy.small_htod", "api_sync and not (kind == 'HtoD' and bytes <= @)") \
    X(pageable_async_memcpy, "memcpy", "steady", NULL, "api_async and (src_kind == 'pageable' or dst_kind == 'pageable')") \
    X(sync_memset, "memset", "steady", "host_visible", "api_sync and mem_kind in @") \
    X(blocking_calls, "api", "steady", NULL, "blocking") \
    X(gaps_ge_500ms, "gap", "in_steady_state", NULL, "duration >= 500ms")

/* The queue-time medians (docs/rules.md, "Queue time"): X(key, where),
** each the p50 of kernel.queue over the kernels `where` admits.
** queue_ns_p50 is tracegate's (a kernel that started before its launching
** call returned counts 0, as HTA's launch delay does);
** queue_ns_p50_unclamped leaves those kernels out, as nsys stats
** kernexecsum does; queue_clamped (the count of its query) counts the
** kernels between the two. The values come from the model's kernel spans
** (queue_medians: metrics loads no kernel rows), their queries from these
** rules (the evaluator writes a rule's query whatever rows it saw), and a
** corpus test runs each query against the value. */
#define METRIC_QUEUE_LIST(X) \
    X(queue_ns_p50, "queue != null") \
    X(queue_ns_p50_unclamped, "queue != null and start >= launch_end") \
    X(queue_clamped, "queue != null and start < launch_end")

enum {
#define X(key, where) Q_##key,
    METRIC_QUEUE_LIST(X)
#undef X
    Q_COUNT
};

static const char *const queue_keys[Q_COUNT] = {
#define X(key, where) #key,
    METRIC_QUEUE_LIST(X)
#undef X
};

enum {
#define X(key, source, steady, borrowed, where) M_##key, M_##key##_steady,
    METRIC_COUNT_LIST(X)
#undef X
    M_COUNT
};

static const char *const metric_keys[M_COUNT] = {
#define X(key, source, steady, borrowed, where) #key, #key "_steady",
    METRIC_COUNT_LIST(X)
#undef X
};

/* ---------------------------------------------------------------- builders */

typedef struct doc {
    json_t *root;
    bool ok;
} doc;

static void put(doc *d, json_t *obj, const char *key, json_t *value)
{
    if (!value || !obj || json_object_set_new(obj, key, value) != 0) d->ok = false;
}

static json_t *real_or_null(double x) { return isnan(x) || isinf(x) ? json_null() : json_real(x); }
static json_t *int_or_null(int64_t x) { return x == TG_NULL_I64 ? json_null() : json_integer(x); }

/* Names come from the profiled program; JSON needs UTF-8 (U+FFFD per bad byte). */
static json_t *str_or_null(const char *s) { return tg_report_json_str(s); }

static json_t *summary_json(int64_t *v, size_t n)
{
    tg_summary s = tg_stats_summarize_i64(v, n);
    json_t *o = json_object();
    if (!o) return NULL;
    doc d = {o, true};
    put(&d, o, "n", json_integer((json_int_t)s.n));
    put(&d, o, "p50", real_or_null(s.p50));
    put(&d, o, "mean", real_or_null(s.mean));
    put(&d, o, "cv", real_or_null(s.cv));
    put(&d, o, "max_over_p50", real_or_null(s.max_over_p50));
    put(&d, o, "min", real_or_null(s.min));
    put(&d, o, "max", real_or_null(s.max));
    if (!d.ok) { json_decref(o); return NULL; }
    return o;
}

/* ---------------------------------------------------------------- facts */

typedef struct counts {
    int64_t n[M_COUNT];
    const char *query[M_COUNT];  /* the SQL (jq) that reproduces n[i], or NULL */
    double queue[Q_COUNT];       /* METRIC_QUEUE_LIST (queue_clamped: a count); NaN without kernels */
    const char *queue_query[Q_COUNT];
    int64_t duplicate_api_rows, longest_gap;
} counts;

struct tg_metrics_defs {
    tg_ruleset *counts;        /* METRIC_COUNT_LIST compiled */
};

/* v as rule-language text: a number with its unit's base suffix, a
** quoted string, true or false. */
static void put_literal(FILE *f, tg_value v)
{
    const char *suffix = v.unit == TG_UNIT_NS ? "ns" : v.unit == TG_UNIT_BYTES ? "B" : "";
    switch (v.type) {
    case TG_TY_INT: fprintf(f, "%lld%s", (long long)v.u.i, suffix); break;
    case TG_TY_FLOAT: fprintf(f, "%.17g%s", v.u.f, suffix); break;
    case TG_TY_BOOL: fputs(v.u.b ? "true" : "false", f); break;
    case TG_TY_STRING:
        fputc('\'', f);
        for (const char *c = v.u.s ? v.u.s : ""; *c; c++) {
            if (*c == '\\' || *c == '\'') fputc('\\', f);
            fputc(*c, f);
        }
        fputc('\'', f);
        break;
    default: fputs("null", f); break;
    }
}

/* The rule-language text of what count `key` borrows from the built-in
** rules (a param's value, or a list as [a, b]), malloc'd; NULL with an
** error when they do not define it. */
static char *borrowed_text(const tg_ruleset *builtin, const char *key, const char *name, tg_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    const char *dot = strchr(name, '.');
    bool found = false;
    if (dot) {
        char rule[64];
        snprintf(rule, sizeof rule, "%.*s", (int)(dot - name), name);
        tg_value v;
        if ((found = tg_rules_param_value(builtin, rule, dot + 1, &v))) put_literal(f, v);
    } else {
        size_t n = 0;
        const tg_value *items = tg_rules_list(builtin, name, &n);
        if ((found = items != NULL)) {
            fputc('[', f);
            for (size_t i = 0; i < n; i++) {
                if (i) fputs(", ", f);
                put_literal(f, items[i]);
            }
            fputc(']', f);
        }
    }
    if (fclose(f) != 0 || !found) {
        if (!found)
            tg_diag_error(diag, TG_EUSAGE, "metrics counts %s with the %s %s of the built-in rules, which they do "
                          "not define (docs/formats.md, \"info and metrics\")", key, dot ? "param" : "list", name);
        free(text);
        return NULL;
    }
    return text;
}

/* where as the text of a YAML double-quoted scalar, borrowed in place of
** its @. */
static void put_where(FILE *f, const char *where, const char *borrowed)
{
    for (const char *c = where; *c; c++) {
        if (*c == '@' && borrowed) {
            put_where(f, borrowed, NULL);
            continue;
        }
        if (*c == '"' || *c == '\\') fputc('\\', f);
        fputc(*c, f);
    }
}

/* METRIC_COUNT_LIST as a rule file: two rules per count, their ids the
** keys; each fails on every trace, so that a count of 0 has its query too.
** NULL (with an error, when the built-in rules lack what a count borrows). */
static char *count_rules(const tg_ruleset *builtin, tg_diag *diag)
{
    char *text = NULL, *b = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    bool ok = true;
    fputs("version: 1\nrules:\n", f);
#define X(key, source, steady, borrowed, where)                                                               \
    b = borrowed ? borrowed_text(builtin, #key, borrowed ? borrowed : "", diag) : NULL;                       \
    ok &= !borrowed || b;                                                                                     \
    fprintf(f, "  - {id: %s, title: %s, severity: info, source: %s, fail_when: count >= 0, where: \"", #key, \
            #key, source);                                                                                    \
    put_where(f, where, b);                                                                                   \
    fprintf(f, "\"}\n  - {id: %s_steady, title: %s_steady, severity: info, source: %s, fail_when: count >= 0, " \
               "where: \"(", #key, #key, source);                                                             \
    put_where(f, where, b);                                                                                   \
    fprintf(f, ") and %s\"}\n", steady);                                                                       \
    free(b);
    METRIC_COUNT_LIST(X)
#undef X
#define X(key, where)                                                                                         \
    fprintf(f, "  - {id: %s, title: %s, severity: info, source: kernel, fail_when: count >= 0, where: \"", #key, \
            #key);                                                                                            \
    put_where(f, where, NULL);                                                                                \
    fputs("\", metric: p50(queue)}\n", f);
    METRIC_QUEUE_LIST(X)
#undef X
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}

tg_metrics_defs *tg_metrics_defs_new(const tg_ruleset *builtin, tg_diag *diag)
{
    char *text = count_rules(builtin, diag);
    if (!text) {
        if (!diag->n_errors) tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    tg_metrics_defs *d = calloc(1, sizeof *d);
    tg_rules_text file = {"(metrics)", text};
    if (d) d->counts = tg_rules_load_texts(&file, 1, NULL, 0, diag);
    free(text);
    if (!d || !d->counts) {
        if (!d) tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        free(d);
        return NULL;
    }
    return d;
}

void tg_metrics_defs_free(tg_metrics_defs *d)
{
    if (!d) return;
    tg_rules_free(d->counts);
    free(d);
}

/* The medians of METRIC_QUEUE_LIST and the clamped kernels' count, over
** the kernels with a launching call (their spans: tg_model_kernel). */
static bool queue_medians(const tg_model *m, counts *c)
{
    const tg_trace *t = m->trace;
    int64_t *all = malloc((t->n_kernels ? t->n_kernels : 1) * sizeof *all);
    int64_t *after = malloc((t->n_kernels ? t->n_kernels : 1) * sizeof *after);
    bool ok = all && after;
    size_t n = 0, n_after = 0;
    int64_t clamped = 0;
    for (size_t i = 0; ok && i < t->n_kernels; i++) {
        const tg_kspan *k = tg_model_kernel(m, i);
        if (k->queue == TG_NULL_I64) continue;
        all[n++] = k->queue;
        if (k->queue_clamped) clamped++;
        else after[n_after++] = k->queue;
    }
    if (ok) {
        c->queue[Q_queue_ns_p50] = tg_stats_median_i64(all, n);
        c->queue[Q_queue_ns_p50_unclamped] = tg_stats_median_i64(after, n_after);
        c->queue[Q_queue_clamped] = (double)clamped;
    }
    free(all);
    free(after);
    return ok;
}

/* Every count of METRIC_COUNT_LIST by the evaluator, and what evaluating
** cannot give (duplicate API rows, the longest gap). A table the capture
** lacks counts 0 rows, without a query. False when memory runs out. */
static bool count_rows(const tg_model *m, const tg_metrics_defs *defs, tg_arena *arena, counts *c)
{
    const tg_trace *t = m->trace;
    *c = (counts){.longest_gap = TG_NULL_I64};
    for (int k = 0; k < Q_COUNT; k++) c->queue[k] = NAN;
    c->duplicate_api_rows = (int64_t)t->n_api_twins;   /* dropped by the model (model_join.c) */
    for (size_t i = 0; i < m->n_gaps; i++)
        if (c->longest_gap == TG_NULL_I64 || m->gaps[i].duration > c->longest_gap) c->longest_gap = m->gaps[i].duration;
    const tg_ruleset *rs = defs->counts;
    tg_diag diag;
    tg_diag_init(&diag);
    tg_trace_result res = {0};
    /* the query (SQL, or jq on a JSON trace) recounts every row and
    ** lists ten of them (docs/formats.md) */
    tg_eval_opts opts = {.missing = TG_MISSING_SKIP};
    bool ok = tg_eval_model(rs, m, &opts, arena, &res, &diag) == TG_OK;
    for (size_t i = 0; ok && i < res.n_results; i++) {
        const tg_rule_result *r = &res.results[i];
        for (int k = 0; k < M_COUNT; k++) {
            if (strcmp(r->rule, metric_keys[k]) != 0) continue;
            c->n[k] = r->missing_data ? 0 : r->count;
            c->query[k] = r->missing_data ? NULL : r->reproduce;
        }
        for (int k = 0; k < Q_COUNT; k++)
            if (!strcmp(r->rule, queue_keys[k]) && !r->missing_data) c->queue_query[k] = r->reproduce;
    }
    tg_diag_clear(&diag);
    return ok && queue_medians(m, c);
}

static void put_trace(doc *d, const tg_model *m, const counts *c)
{
    const tg_trace_facts *f = &m->facts;
    json_t *o = json_object();
    put(d, d->root, "trace", o);
    if (!o) return;
    put(d, o, "duration_ns", json_integer(f->duration));
    put(d, o, "kernels", json_integer(f->kernels));
    put(d, o, "memcpys", json_integer(f->memcpys));
    put(d, o, "memsets", json_integer(f->memsets));
    put(d, o, "api_calls", json_integer(f->api_calls));
    put(d, o, "nvtx_ranges", json_integer(f->nvtx_ranges));
    put(d, o, "devices", json_integer(f->devices));
    put(d, o, "iterations", json_integer(f->iterations));
    put(d, o, "steady_iterations", json_integer(f->steady_iterations));
    put(d, o, "steady_start_ns", json_integer(m->steady_start));
    put(d, o, "steady_end_ns", json_integer(m->steady_end));
    put(d, o, "steady_duration_ns", json_integer(f->steady_duration));
    put(d, o, "blocking_calls", json_integer(f->blocking_calls));
    put(d, o, "blocked_time_ns", json_integer(f->blocked_time));
    put(d, o, "duplicate_api_rows", json_integer(c->duplicate_api_rows));
}

static void put_devices(doc *d, const tg_model *m)
{
    const tg_trace *t = m->trace;
    json_t *busy = json_object(), *steady = json_object(), *nccl = json_object(), *list = json_array();
    put(d, d->root, "busy_frac", busy);
    put(d, d->root, "busy_frac_steady", steady);
    put(d, d->root, "nccl_overlap", nccl);
    put(d, d->root, "devices", list);
    if (!busy || !steady || !nccl || !list) return;
    for (size_t i = 0; i < m->n_devices; i++) {
        const tg_device *dv = &m->devices[i];
        char key[16];
        snprintf(key, sizeof key, "%d", (int)dv->device);
        put(d, busy, key, real_or_null(dv->busy_frac));
        put(d, steady, key, real_or_null(dv->busy_frac_steady));
        if (!isnan(dv->nccl_overlap)) put(d, nccl, key, json_real(dv->nccl_overlap));
        json_t *o = json_object();
        if (!o || json_array_append_new(list, o) != 0) { d->ok = false; return; }
        put(d, o, "device", json_integer(dv->device));
        put(d, o, "name", str_or_null(tg_trace_str(t, dv->name)));
        put(d, o, "start_ns", json_integer(dv->start));
        put(d, o, "end_ns", json_integer(dv->end));
        put(d, o, "span_ns", json_integer(dv->span));
        put(d, o, "busy_frac", real_or_null(dv->busy_frac));
        put(d, o, "busy_frac_steady", real_or_null(dv->busy_frac_steady));
        put(d, o, "kernels", json_integer(dv->kernels));
        put(d, o, "kernel_time_ns", json_integer(dv->kernel_time));
        put(d, o, "nccl_time_ns", json_integer(dv->nccl_time));
        put(d, o, "nccl_overlap", real_or_null(dv->nccl_overlap));
        put(d, o, "exposed_nccl_time_ns", json_integer(dv->exposed_nccl_time));
        put(d, o, "queue_p50_ns", int_or_null(dv->queue_p50));
        put(d, o, "queue_kernels", json_integer(dv->queue_kernels));
        put(d, o, "queue_clamped", json_integer(dv->queue_clamped));
        put(d, o, "gaps_ge_min", json_integer(dv->gaps));
        put(d, o, "busy_time_steady_ns", json_integer(dv->busy_time_steady));
        put(d, o, "copy_time_steady_ns", json_integer(dv->copy_time_steady));
        put(d, o, "copy_frac_steady", real_or_null(dv->copy_frac_steady));
    }
}

/* Summaries of the steady iterations' duration, period and gpu_time. */
static void put_iterations(doc *d, const tg_model *m, const counts *c)
{
    int64_t steady = m->facts.steady_iterations;
    put(d, d->root, "steady_iterations", json_integer(steady));
    put(d, d->root, "blocking_per_iteration",
        m->has_iterations && steady > 0 ? json_real((double)c->n[M_blocking_calls_steady] / (double)steady) : json_null());
    if (!m->has_iterations) {
        put(d, d->root, "iteration_duration_ns", json_null());
        put(d, d->root, "iteration_period_ns", json_null());
        put(d, d->root, "iteration_gpu_time_ns", json_null());
        return;
    }
    int64_t *v = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *v);
    if (!v) { d->ok = false; return; }
    static const char *const keys[] = {"iteration_duration_ns", "iteration_period_ns", "iteration_gpu_time_ns"};
    for (int which = 0; which < 3; which++) {
        size_t n = 0;
        for (size_t i = 0; i < m->n_iterations; i++) {
            const tg_iteration *it = &m->iterations[i];
            if (!it->steady) continue;
            int64_t x = which == 0 ? it->duration : which == 1 ? it->period : it->gpu_time;
            if (x != TG_NULL_I64) v[n++] = x;
        }
        put(d, d->root, keys[which], summary_json(v, n));
    }
    free(v);
}


/* One name's line of the per-name view. */
static json_t *work_json(const tg_work_name *w, const tg_work_summary *s, int64_t total)
{
    doc d = {json_object(), true};
    if (!d.root) return NULL;
    put(&d, d.root, "name", str_or_null(w->name));
    put(&d, d.root, "kind", json_string(tg_work_kind_name(w->kind)));
    put(&d, d.root, "count", json_integer(w->count));
    put(&d, d.root, "total_ns", json_integer(w->time));
    put(&d, d.root, "mean_ns", real_or_null(w->count ? (double)w->time / (double)w->count : NAN));
    put(&d, d.root, "p50_ns", int_or_null(w->p50));
    put(&d, d.root, "share", real_or_null(total > 0 ? (double)w->time / (double)total : NAN));
    bool it = s->steady_iterations > 0;
    put(&d, d.root, "steady_count", json_integer(w->steady_count));
    put(&d, d.root, "per_iteration_ns", real_or_null(it ? (double)w->steady_time / (double)s->steady_iterations : NAN));
    put(&d, d.root, "launches_per_iteration",
        real_or_null(it ? (double)w->steady_count / (double)s->steady_iterations : NAN));
    if (!d.ok) {
        json_decref(d.root);
        return NULL;
    }
    return d.root;
}

/* work_by_name: GPU work (kernels by name, copies by kind, memsets), by
** total time; at most TG_METRICS_MAX_NAMES of them. */
static void put_work(doc *d, const tg_model *m)
{
    tg_work_summary s;
    if (!tg_model_work_summary(m, true, &s)) {
        d->ok = false;
        return;
    }
    /* by total time for this view (the summary orders by steady time) */
    json_t *o = json_object(), *list = json_array();
    put(d, d->root, "work_by_name", o);
    put(d, o, "steady_iterations", json_integer(s.steady_iterations));
    put(d, o, "total_ns", json_integer(s.time));
    put(d, o, "names", list);
    size_t shown = s.n_names < TG_METRICS_MAX_NAMES ? s.n_names : TG_METRICS_MAX_NAMES;
    for (size_t i = 0; list && i < shown; i++)
        if (json_array_append_new(list, work_json(&s.names[i], &s, s.time)) != 0) d->ok = false;
    put(d, o, "more_names", json_integer((json_int_t)(s.n_names - shown)));
    tg_work_summary_free(&s);
}

json_t *tg_metrics_json(const tg_model *m, const tg_metrics_defs *defs)
{
    const tg_trace *t = m->trace;
    doc d = {json_object(), true};
    if (!d.root) return NULL;
    tg_arena *arena = tg_arena_new();
    counts c;
    if (!arena || !count_rows(m, defs, arena, &c)) {
        tg_arena_free(arena);
        json_decref(d.root);
        return NULL;
    }
    put(&d, d.root, "file", str_or_null(t->path));
    put(&d, d.root, "nsys_version", str_or_null(t->nsys_version));
    put(&d, d.root, "schema_version", str_or_null(t->schema_version));
    put_trace(&d, m, &c);
    put(&d, d.root, "kernels", json_integer((json_int_t)t->n_kernels));
    put(&d, d.root, "gaps", json_integer((json_int_t)m->n_gaps));
    put(&d, d.root, "gaps_ge_500ms", json_integer(c.n[M_gaps_ge_500ms]));
    put(&d, d.root, "gaps_ge_500ms_steady", json_integer(c.n[M_gaps_ge_500ms_steady]));
    put(&d, d.root, "longest_gap_ns", int_or_null(c.longest_gap));
    put_devices(&d, m);
    put(&d, d.root, "queue_ns_p50", real_or_null(c.queue[Q_queue_ns_p50]));
    put(&d, d.root, "queue_ns_p50_unclamped", real_or_null(c.queue[Q_queue_ns_p50_unclamped]));
    put(&d, d.root, "queue_clamped", json_integer((json_int_t)c.queue[Q_queue_clamped]));
    static const int listed[] = {M_blocking_calls, M_blocking_calls_steady, M_sync_memcpy, M_sync_memcpy_steady,
                                 M_pageable_async_memcpy, M_pageable_async_memcpy_steady, M_sync_memset,
                                 M_sync_memset_steady};
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
        put(&d, d.root, metric_keys[listed[i]], json_integer(c.n[listed[i]]));
    json_t *queries = json_object();
    put(&d, d.root, "queries", queries);
    for (int k = 0; queries && k < M_COUNT; k++) put(&d, queries, metric_keys[k], str_or_null(c.query[k]));
    for (int k = 0; queries && k < Q_COUNT; k++) put(&d, queries, queue_keys[k], str_or_null(c.queue_query[k]));
    put_iterations(&d, m, &c);
    put(&d, d.root, "iteration_markers", tg_iterdoc_json(m->selection));
    put_work(&d, m);
    put(&d, d.root, "host_side", tg_metrics_host_json(m));
    tg_arena_free(arena);
    if (!d.ok) {
        json_decref(d.root);
        return NULL;
    }
    return d.root;
}

/* ---------------------------------------------------------------- text */

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *dur(char *buf, double ns)
{
    return isnan(ns) ? "-" : tg_fmt_num(buf, TG_FMT_BUF, ns, TG_UNIT_NS);
}

/* A string from the export (file, versions, device names) in the text:
** tg_text_escape (engine/common/text.h, docs/formats.md) shows controls,
** C1, invalid UTF-8 and newlines escaped and cuts it at max bytes with
** "…(N bytes)"; then spaces up to width characters. Every such string of
** the text goes through here. */
static void print_name(FILE *f, const char *s, size_t max, int width)
{
    char *clean = tg_text_dup(s ? s : "-", max, 0);
    int chars = 0;
    for (const char *p = clean ? clean : "?"; *p; p++) chars += ((unsigned char)*p & 0xC0) != 0x80;
    fputs(clean ? clean : "?", f);
    for (; chars < width; chars++) fputc(' ', f);
    free(clean);
}

static const char *pct(char *buf, double r)
{
    return isnan(r) ? "-" : tg_fmt_num(buf, TG_FMT_BUF, r, TG_UNIT_RATIO);
}

static void text_devices(FILE *f, const json_t *doc)
{
    const json_t *list = json_object_get(doc, "devices");
    fprintf(f, "devices\n");
    if (json_array_size(list) == 0) {
        fprintf(f, "  (no GPU work)\n");
        return;
    }
    fprintf(f, "  %-6s %-24s %10s %8s %8s %8s %8s %10s %8s %8s\n", "device", "name", "span", "busy",
            "steady", "copies", "kernels", "queue p50", "nccl ov", "gaps");
    size_t i;
    const json_t *d;
    json_array_foreach(list, i, d) {
        char a[TG_FMT_BUF], b[TG_FMT_BUF], c[TG_FMT_BUF], cp[TG_FMT_BUF], e[TG_FMT_BUF], g[TG_FMT_BUF];
        const char *name = json_string_value(json_object_get(d, "name"));
        fprintf(f, "  %-6d ", (int)num(d, "device"));
        print_name(f, name ? name : "-", TG_TEXT_CAP_NAME, 24);
        fprintf(f, " %10s %8s %8s %8s %8.0f %10s %8s %8.0f\n", dur(a, num(d, "span_ns")),
                pct(b, num(d, "busy_frac")), pct(c, num(d, "busy_frac_steady")), pct(cp, num(d, "copy_frac_steady")),
                num(d, "kernels"),
                dur(e, num(d, "queue_p50_ns")), pct(g, num(d, "nccl_overlap")), num(d, "gaps_ge_min"));
    }
}

static void text_series(FILE *f, const char *label, const json_t *s)
{
    char a[TG_FMT_BUF], b[TG_FMT_BUF], c[TG_FMT_BUF];
    fprintf(f, "  %-10s %6.0f %12s %12s %10.4g %10.4g %12s\n", label, num(s, "n"),
            dur(a, num(s, "p50")), dur(b, num(s, "mean")), num(s, "cv"), num(s, "max_over_p50"),
            dur(c, num(s, "max")));
}

static void text_iterations(FILE *f, const json_t *doc)
{
    const json_t *tr = json_object_get(doc, "trace");
    if (num(tr, "iterations") == 0) {
        fprintf(f, "iterations: none (the whole trace is the steady state)\n");
        tg_iterdoc_text(f, json_object_get(doc, "iteration_markers"), "  markers: ", "           ");
        return;
    }
    fprintf(f, "iterations: %.0f (%.0f steady)\n", num(tr, "iterations"), num(tr, "steady_iterations"));
    tg_iterdoc_text(f, json_object_get(doc, "iteration_markers"), "  markers: ", "           ");
    if (!json_is_object(json_object_get(doc, "iteration_duration_ns"))) return;
    fprintf(f, "  %-10s %6s %12s %12s %10s %10s %12s\n", "steady", "n", "p50", "mean", "cv",
            "max/p50", "max");
    text_series(f, "duration", json_object_get(doc, "iteration_duration_ns"));
    text_series(f, "period", json_object_get(doc, "iteration_period_ns"));
    text_series(f, "gpu_time", json_object_get(doc, "iteration_gpu_time_ns"));
}

/* The heaviest names of work_by_name, one line each. */
static void text_work(FILE *f, const json_t *doc)
{
    const json_t *w = json_object_get(doc, "work_by_name"), *list = json_object_get(w, "names");
    if (json_array_size(list) == 0) return;
    bool per_it = num(w, "steady_iterations") > 0;
    fprintf(f, "GPU work by name (of %s in all)\n", dur((char[TG_FMT_BUF]){0}, num(w, "total_ns")));
    fprintf(f, "  %8s %10s %10s %10s %7s %12s %9s  %s\n", "count", "total", "mean", "p50", "share",
            per_it ? "per iter" : "", per_it ? "launches" : "", "name");
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) {
        if (i == TG_METRICS_TEXT_NAMES) break;
        char a[TG_FMT_BUF], b[TG_FMT_BUF], c[TG_FMT_BUF], g[TG_FMT_BUF], h[TG_FMT_BUF];
        const char *name = json_string_value(json_object_get(e, "name"));
        fprintf(f, "  %8.0f %10s %10s %10s %7s %12s", num(e, "count"), dur(a, num(e, "total_ns")),
                dur(b, num(e, "mean_ns")), dur(c, num(e, "p50_ns")), pct(g, num(e, "share")),
                per_it ? dur(h, num(e, "per_iteration_ns")) : "");
        if (per_it) fprintf(f, " %9.3g", num(e, "launches_per_iteration"));
        else fprintf(f, " %9s", "");
        fputs("  ", f);
        print_name(f, name ? name : "-", TG_TEXT_CAP_NAME, 0);
        fputc('\n', f);
    }
    size_t more = json_array_size(list) - i + (size_t)num(w, "more_names");
    if (more) fprintf(f, "  ... and %zu more names (--format json lists up to %d)\n", more, TG_METRICS_MAX_NAMES);
}

char *tg_metrics_text(const json_t *doc)
{
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    if (!f) return NULL;
    const json_t *tr = json_object_get(doc, "trace");
    const char *file = json_string_value(json_object_get(doc, "file"));
    const char *nsys = json_string_value(json_object_get(doc, "nsys_version"));
    const char *schema = json_string_value(json_object_get(doc, "schema_version"));
    char a[TG_FMT_BUF], b[TG_FMT_BUF], b2[TG_FMT_BUF], c[TG_FMT_BUF];
    print_name(f, file ? file : "-", TG_TEXT_CAP_TEXT, 0);
    fputs(" (nsys ", f);
    print_name(f, nsys ? nsys : "unknown", TG_TEXT_CAP_NAME, 0);
    fputs(", schema ", f);
    print_name(f, schema ? schema : "unknown", TG_TEXT_CAP_NAME, 0);
    fputs(")\n", f);
    fprintf(f, "  duration %s, %.0f kernels, %.0f copies, %.0f memsets, %.0f API calls, %.0f NVTX ranges\n",
            dur(a, num(tr, "duration_ns")), num(tr, "kernels"), num(tr, "memcpys"), num(tr, "memsets"),
            num(tr, "api_calls"), num(tr, "nvtx_ranges"));
    if (num(tr, "duplicate_api_rows") > 0)
        fprintf(f, "  %.0f API rows are outer twins of calls recorded twice (old export): each call counts once\n",
                num(tr, "duplicate_api_rows"));
    text_devices(f, doc);
    fprintf(f, "  gaps: %.0f, >= 500 ms: %.0f (%.0f in steady state), longest %s; queue p50 %s",
            num(doc, "gaps"), num(doc, "gaps_ge_500ms"), num(doc, "gaps_ge_500ms_steady"),
            dur(a, num(doc, "longest_gap_ns")), dur(b, num(doc, "queue_ns_p50")));
    double clamped = num(doc, "queue_clamped");
    if (clamped > 0)
        fprintf(f, " (%.0f %s before %s launching call returned, counted 0, as HTA does; without %s, as nsys "
                   "stats kernexecsum: %s)", clamped, clamped == 1 ? "kernel started" : "kernels started",
                clamped == 1 ? "its" : "their", clamped == 1 ? "it" : "them",
                dur(b2, num(doc, "queue_ns_p50_unclamped")));
    fputc('\n', f);
    text_iterations(f, doc);
    text_work(f, doc);
    double per_it = num(doc, "blocking_per_iteration");
    fprintf(f, "host sync\n");
    fprintf(f, "  blocking synchronize calls %.0f (%.0f in steady state", num(doc, "blocking_calls"),
            num(doc, "blocking_calls_steady"));
    if (!isnan(per_it)) fprintf(f, ", %.3g per steady iteration", per_it);
    fprintf(f, "), blocked %s\n", dur(c, num(tr, "blocked_time_ns")));
    fprintf(f, "  synchronous copies %.0f (%.0f steady), pageable async copies %.0f (%.0f steady), "
               "blocking memsets on host memory %.0f (%.0f steady)\n",
            num(doc, "sync_memcpy"), num(doc, "sync_memcpy_steady"), num(doc, "pageable_async_memcpy"),
            num(doc, "pageable_async_memcpy_steady"), num(doc, "sync_memset"), num(doc, "sync_memset_steady"));
    tg_metrics_host_text(f, doc);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
