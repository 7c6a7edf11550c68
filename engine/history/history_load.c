/*
** The loads of a history (docs/history.md, "Stores"): its runs, with their
** metrics and work entries, the latest run of every workload, the accepted
** change points. Each load reads one snapshot and runs one query per
** table, whatever the number of runs; the history order (time, then id) is
** sorted here, byte by byte, not by the database's collation, which
** PostgreSQL may take from a locale.
*/
#include "history_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_IN_CHUNK 500          /* ids per IN (...) list */

static double hs_parse_f64(const char *s)
{
    return s ? strtod(s, NULL) : NAN;
}

/* ---------------------------------------------------------------- load */

/* A load of the runs' own rows, without their metrics (append's candidates). */
#define HS_LOAD_RUNS_ONLY 0x100u

typedef struct hs_metric_row {
    size_t run;                 /* index into the loader's runs */
    tg_hist_metric m;
} hs_metric_row;

typedef struct hs_work_row {
    size_t run;
    bool range;                 /* tg_workload.ranges, else ops */
    tg_work_entry e;
} hs_work_row;

/* What a load collects before it lays the runs out in the caller's arena
** (the growing arrays are malloc'd). */
typedef struct hs_loader {
    tg_arena *arena;
    unsigned what;
    tg_hist_run *runs;          /* in id order while loading */
    size_t n, cap;
    hs_metric_row *metrics;
    size_t n_metrics, cap_metrics;
    hs_work_row *work;
    size_t n_work, cap_work;
    int64_t bad_id;             /* a run whose rows do not read back (0: none) */
    const char *bad_what;
} hs_loader;

static void hs_loader_free(hs_loader *ld)
{
    free(ld->runs);
    free(ld->metrics);
    free(ld->work);
}

/* A string of a row in the caller's arena: UTF-8, as every string of a
** run is, whatever a file someone else wrote holds. */
static const char *hs_dup(tg_arena *a, const char *s, bool *ok)
{
    if (!s) return NULL;
    const char *d = tg_utf8_valid(s, strlen(s)) ? tg_arena_strdup(a, s) : tg_utf8_clean(a, s);
    if (!d) *ok = false;
    return d;
}

/* The run of id (binary search: runs are loaded in id order). */
static tg_hist_run *hs_run_of(hs_loader *ld, int64_t id, size_t *index)
{
    size_t lo = 0, hi = ld->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ld->runs[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == ld->n || ld->runs[lo].id != id) return NULL;
    *index = lo;
    return &ld->runs[lo];
}

static void hs_bad(hs_loader *ld, int64_t id, const char *what)
{
    if (!ld->bad_id) {
        ld->bad_id = id ? id : -1;
        ld->bad_what = what;
    }
}

static bool hs_run_row(void *ctx, size_t n, const char *const *c)
{
    hs_loader *ld = ctx;
    if (n != HS_N_RUN_COLS) {
        hs_bad(ld, 0, "row of tg_runs");
        return true;
    }
    tg_hist_run r = {.id = hs_parse_i64(c[0])};
    bool ok = true;
    tg_arena *a = ld->arena;
    const char **strs[] = {&r.workload, &r.workload_name, &r.label, &r.time, &r.branch, &r.gpu, &r.format,
                           &r.marker, &r.nsys_version, &r.schema_version, &r.trace, &r.rules_digest,
                           &r.metrics_digest, &r.tool_version, &r.verdict};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) *strs[i] = hs_dup(a, c[1 + i], &ok);
    r.regressed = hs_parse_i64(c[16]) != 0;
    r.epoch = hs_parse_i64(c[17]);
    /* the workload's scalars now; its entries, when asked for, later */
    if (hs_parse_i64(c[18])) {
        tg_workload *w = tg_arena_alloc(a, sizeof *w);
        if (!w) return false;
        *w = (tg_workload){.steady_iterations = c[19] ? hs_parse_i64(c[19]) : TG_NULL_I64,
                           .gpu_time = hs_parse_f64(c[20]), .period = hs_parse_f64(c[21]),
                           .idle = hs_parse_f64(c[22]), .total = hs_parse_f64(c[23])};
        r.work = w;
    }
    if (ld->n && r.id <= ld->runs[ld->n - 1].id) hs_bad(ld, r.id, "id");
    return ok && TG_PUSH(ld->runs, ld->n, ld->cap, r);
}

/* "v v v": the samples as stored; false when they do not read back. */
static bool hs_parse_samples(tg_arena *a, const char *text, double **out, size_t *n, bool *oom)
{
    size_t count = 1;
    for (const char *p = text; *p; p++) count += *p == ' ';
    double *v = tg_arena_alloc(a, count * sizeof *v);
    if (!v) return !(*oom = true);
    const char *p = text;
    for (size_t i = 0; i < count; i++) {
        char *end;
        v[i] = strtod(p, &end);
        if (end == p || (*end != ' ' && *end != 0)) return false;
        p = *end ? end + 1 : end;
    }
    *out = v;
    *n = count;
    return true;
}

static bool hs_metric_row_fn(void *ctx, size_t n, const char *const *c)
{
    hs_loader *ld = ctx;
    size_t run;
    int64_t id = n ? hs_parse_i64(c[0]) : 0;
    if (n != HS_N_METRIC_COLS || !hs_run_of(ld, id, &run)) {
        hs_bad(ld, id, "metrics");
        return true;
    }
    hs_metric_row r = {.run = run};
    tg_hist_metric *m = &r.m;
    bool ok = true, oom = false;
    m->rule = hs_dup(ld->arena, c[1], &ok);
    m->metric = hs_dup(ld->arena, c[2], &ok);
    m->samples_field = hs_dup(ld->arena, c[3], &ok);
    if (!c[1] || !c[4] || !tg_unit_parse_key(c[4], &m->unit)) hs_bad(ld, id, "metrics");
    m->direction = (int)hs_parse_i64(c[5]);
    m->value = hs_parse_f64(c[6]);
    m->verdict = hs_dup(ld->arena, c[7], &ok);
    if (c[8] && *c[8] && !hs_parse_samples(ld->arena, c[8], &m->samples, &m->n_samples, &oom) && !oom)
        hs_bad(ld, id, "samples");
    return ok && !oom && TG_PUSH(ld->metrics, ld->n_metrics, ld->cap_metrics, r);
}

static bool hs_work_row_fn(void *ctx, size_t n, const char *const *c)
{
    hs_loader *ld = ctx;
    size_t run;
    int64_t id = n ? hs_parse_i64(c[0]) : 0;
    if (n != HS_N_WORK_COLS || !hs_run_of(ld, id, &run) || !ld->runs[run].work) {
        hs_bad(ld, id, "work");
        return true;
    }
    hs_work_row r = {.run = run, .range = c[1] && strcmp(c[1], "ranges") == 0};
    bool ok = true;
    if (!c[1] || (!r.range && strcmp(c[1], "ops") != 0) || !c[2] || !tg_work_kind_parse(c[2], &r.e.kind))
        hs_bad(ld, id, "work");
    r.e.name = hs_dup(ld->arena, c[3] ? c[3] : "", &ok);
    r.e.count = hs_parse_i64(c[4]);
    r.e.total = hs_parse_f64(c[5]);
    r.e.time = hs_parse_f64(c[6]);
    r.e.launches = hs_parse_f64(c[7]);
    return ok && TG_PUSH(ld->work, ld->n_work, ld->cap_work, r);
}

/* The latest TG_HISTORY_RECENT runs of the workload ($1), for
** TG_HIST_LOAD_RECENT: a check reads those, not the whole history. */
#define HS_RECENT_IDS "(SELECT id FROM tg_runs WHERE workload = $1 ORDER BY time DESC, id DESC LIMIT %d)"

/* What narrows a query of rows x of runs to one workload's (and to its
** recent runs). */
static const char *hs_where_workload(const char *workload, unsigned what, tg_arena *scratch)
{
    if (!workload) return "";
    if (!(what & TG_HIST_LOAD_RECENT)) return " JOIN tg_runs r ON r.id = x.run_id WHERE r.workload = $1";
    return tg_arena_printf(scratch, " JOIN tg_runs r ON r.id = x.run_id WHERE r.workload = $1 AND r.id IN "
                           HS_RECENT_IDS, TG_HISTORY_RECENT);
}

static tg_status hs_load_rows(tg_history *h, hs_loader *ld, const char *workload, tg_arena *scratch,
                              tg_diag *diag)
{
    const char *const params[] = {workload};
    size_t np = workload ? 1 : 0;
    const char *recent = workload && (ld->what & TG_HIST_LOAD_RECENT)
                             ? tg_arena_printf(scratch, " AND id IN " HS_RECENT_IDS, TG_HISTORY_RECENT) : "";
    const char *where = recent ? tg_arena_printf(scratch, "%s%s", workload ? " WHERE workload = $1" : "", recent) : NULL;
    const char *x_where = hs_where_workload(workload, ld->what, scratch);
    if (!where || !x_where) return hs_oom(h, diag);
    const char *sql = tg_arena_printf(scratch, "SELECT " HS_RUN_COLS " FROM tg_runs%s ORDER BY id", where);
    if (!sql) return hs_oom(h, diag);
    tg_status st = hs_exec(h, sql, params, np, hs_run_row, ld, diag);
    if (st != TG_OK || !ld->n || (ld->what & HS_LOAD_RUNS_ONLY)) return st;
    sql = tg_arena_printf(scratch,
                          "SELECT x.run_id, x.rule, x.metric, x.samples_field, x.unit, x.direction, x.value,"
                          " x.verdict, %s FROM tg_metrics x%s ORDER BY x.run_id, x.seq",
                          ld->what & TG_HIST_LOAD_SAMPLES ? "x.samples" : "NULL", x_where);
    if (!sql) return hs_oom(h, diag);
    return hs_exec(h, sql, params, np, hs_metric_row_fn, ld, diag);
}

#define HS_WORK_COLS "x.run_id, x.list, x.kind, x.name, x.count, x.total, x.time, x.launches"

/* The work entries of the workload's runs, or of the runs ids only. */
static tg_status hs_load_work(tg_history *h, hs_loader *ld, const char *workload, const int64_t *ids, size_t n_ids,
                              tg_arena *scratch, tg_diag *diag)
{
    if (!ids) {
        const char *const params[] = {workload};
        const char *where = hs_where_workload(workload, ld->what, scratch);
        const char *sql = where ? tg_arena_printf(scratch, "SELECT " HS_WORK_COLS " FROM tg_work x%s ORDER BY "
                                                  "x.run_id, x.seq", where) : NULL;
        return sql ? hs_exec(h, sql, params, workload ? 1 : 0, hs_work_row_fn, ld, diag) : hs_oom(h, diag);
    }
    tg_status st = TG_OK;
    for (size_t from = 0; from < n_ids && st == TG_OK; from += HS_IN_CHUNK) {
        size_t k = n_ids - from < HS_IN_CHUNK ? n_ids - from : HS_IN_CHUNK;
        const char **params = tg_arena_alloc(scratch, k * sizeof *params);
        char *list = tg_arena_alloc(scratch, k * 8 + 1);
        if (!params || !list) return hs_oom(h, diag);
        char *p = list;
        for (size_t i = 0; i < k; i++) {
            p += sprintf(p, "%s$%zu", i ? "," : "", i + 1);
            if (!(params[i] = hs_i64(scratch, ids[from + i]))) return hs_oom(h, diag);
        }
        const char *sql = tg_arena_printf(
            scratch, "SELECT " HS_WORK_COLS " FROM tg_work x WHERE x.run_id IN (%s) ORDER BY x.run_id, x.seq", list);
        st = sql ? hs_exec(h, sql, params, k, hs_work_row_fn, ld, diag) : hs_oom(h, diag);
    }
    return st;
}

static int hs_history_order(const void *pa, const void *pb)
{
    const tg_hist_run *a = pa, *b = pb;
    int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Lay the rows out in the arena: each run's metrics and work entries
** (rows of one run are consecutive: ORDER BY run_id, seq), the runs in
** history order. */
static bool hs_lay_out(hs_loader *ld, tg_hist_run **out)
{
    tg_arena *a = ld->arena;
    for (size_t i = 0, j; i < ld->n_metrics; i = j) {
        for (j = i; j < ld->n_metrics && ld->metrics[j].run == ld->metrics[i].run;) j++;
        tg_hist_run *r = &ld->runs[ld->metrics[i].run];
        if (!(r->metrics = tg_arena_alloc(a, (j - i) * sizeof *r->metrics))) return false;
        for (size_t k = i; k < j; k++) r->metrics[r->n_metrics++] = ld->metrics[k].m;
    }
    for (size_t i = 0, j; i < ld->n_work; i = j) {
        for (j = i; j < ld->n_work && ld->work[j].run == ld->work[i].run;) j++;
        tg_workload *w = ld->runs[ld->work[i].run].work;
        size_t n_ranges = 0;
        for (size_t k = i; k < j; k++) n_ranges += ld->work[k].range;
        w->ops = tg_arena_alloc(a, (j - i - n_ranges) * sizeof *w->ops + 1);
        w->ranges = tg_arena_alloc(a, n_ranges * sizeof *w->ranges + 1);
        if (!w->ops || !w->ranges) return false;
        for (size_t k = i; k < j; k++) {
            if (ld->work[k].range) w->ranges[w->n_ranges++] = ld->work[k].e;
            else w->ops[w->n_ops++] = ld->work[k].e;
        }
    }
    if (ld->n) qsort(ld->runs, ld->n, sizeof *ld->runs, hs_history_order);
    *out = ld->n ? tg_arena_alloc(a, ld->n * sizeof **out) : NULL;
    if (ld->n && !*out) return false;
    if (ld->n) memcpy(*out, ld->runs, ld->n * sizeof **out);
    return true;
}

static tg_status hs_bad_rows(tg_history *h, const hs_loader *ld, tg_diag *diag)
{
    tg_diag_error(diag, TG_EUSAGE, "%s holds rows that do not read back (the %s of run %" PRId64 "): is it damaged?",
                  h->shown, ld->bad_what, ld->bad_id);
    return TG_EUSAGE;
}

/* The runs of workload (all: NULL) with what, inside a transaction. */
static tg_status hs_load(tg_history *h, const char *workload, unsigned what, tg_arena *arena, tg_hist_run **runs,
                         size_t *n, tg_diag *diag)
{
    hs_loader ld = {.arena = arena, .what = what};
    tg_arena *scratch = tg_arena_new();
    tg_status st = scratch ? hs_load_rows(h, &ld, workload, scratch, diag) : hs_oom(h, diag);
    /* HS_LOAD_RUNS_ONLY keeps the workloads' scalars: its caller loads
    ** the entries of the runs it wants (hs_candidates) */
    if (st == TG_OK && ld.n && (what & TG_HIST_LOAD_WORK) && !(what & HS_LOAD_RUNS_ONLY))
        st = hs_load_work(h, &ld, workload, NULL, 0, scratch, diag);
    if (st == TG_OK && !(what & (TG_HIST_LOAD_WORK | HS_LOAD_RUNS_ONLY)))
        for (size_t i = 0; i < ld.n; i++) ld.runs[i].work = NULL;
    if (st == TG_OK && ld.bad_id) st = hs_bad_rows(h, &ld, diag);
    if (st == TG_OK && !hs_lay_out(&ld, runs)) st = hs_oom(h, diag);
    if (st == TG_OK) *n = ld.n;
    hs_loader_free(&ld);
    tg_arena_free(scratch);
    return st;
}

tg_status tg_history_load(tg_history *h, const char *workload, unsigned what, tg_arena *arena, tg_hist_run **runs,
                          size_t *n, tg_diag *diag)
{
    *runs = NULL;
    *n = 0;
    tg_status st = h->ops->begin_read(h->s, diag);
    if (st != TG_OK) return st;
    st = hs_load(h, workload, what, arena, runs, n, diag);
    if (st == TG_OK) st = h->ops->commit(h->s, diag);
    if (st != TG_OK) {
        h->ops->rollback(h->s);
        *runs = NULL;
        *n = 0;
    }
    return st;
}

/* ---------------------------------------------------------------- candidates */

static int hs_cmp_id(const void *pa, const void *pb)
{
    const tg_hist_run *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

tg_status tg_hs_candidates(tg_history *h, bool with_work, tg_arena *arena, hs_cands *out, tg_diag *diag)
{
    tg_hist_run *all;
    size_t n;
    tg_status st = hs_load(h, NULL, HS_LOAD_RUNS_ONLY, arena, &all, &n, diag);
    if (st != TG_OK) return st;
    /* in history order: the last run of a key seen is its latest */
    for (size_t i = n; i-- > 0;) {
        bool seen = false;
        for (size_t j = 0; j < out->n && !seen; j++) seen = strcmp(out->runs[j].workload, all[i].workload) == 0;
        if (!seen && !TG_PUSH(out->runs, out->n, out->cap, all[i])) return hs_oom(h, diag);
    }
    if (!with_work || !out->n) return TG_OK;
    /* their work entries: a loader of these runs alone, in id order */
    hs_loader ld = {.arena = arena, .what = TG_HIST_LOAD_WORK, .runs = malloc(out->n * sizeof *ld.runs),
                    .n = out->n, .cap = out->n};
    int64_t *ids = tg_arena_alloc(arena, out->n * sizeof *ids);
    if (!ld.runs || !ids) {
        hs_loader_free(&ld);
        return hs_oom(h, diag);
    }
    memcpy(ld.runs, out->runs, out->n * sizeof *ld.runs);
    qsort(ld.runs, ld.n, sizeof *ld.runs, hs_cmp_id);
    for (size_t i = 0; i < ld.n; i++) ids[i] = ld.runs[i].id;
    st = hs_load_work(h, &ld, NULL, ids, ld.n, arena, diag);
    tg_hist_run *laid = NULL;
    if (st == TG_OK && ld.bad_id) st = hs_bad_rows(h, &ld, diag);
    if (st == TG_OK && !hs_lay_out(&ld, &laid)) st = hs_oom(h, diag);
    if (st == TG_OK) {
        memcpy(out->runs, laid, ld.n * sizeof *laid);
        out->n = ld.n;
    }
    hs_loader_free(&ld);
    return st;
}

tg_status tg_history_latest(tg_history *h, tg_arena *arena, tg_hist_run **runs, size_t *n, tg_diag *diag)
{
    *runs = NULL;
    *n = 0;
    hs_cands c = {0};
    tg_status st = h->ops->begin_read(h->s, diag);
    if (st != TG_OK) return st;
    st = tg_hs_candidates(h, true, arena, &c, diag);
    if (st == TG_OK) st = h->ops->commit(h->s, diag);
    if (st != TG_OK) h->ops->rollback(h->s);
    tg_hist_run *out = st == TG_OK && c.n ? tg_arena_alloc(arena, c.n * sizeof *out) : NULL;
    if (st == TG_OK && c.n && !out) st = hs_oom(h, diag);
    if (st == TG_OK && c.n) {
        memcpy(out, c.runs, c.n * sizeof *out);
        *runs = out;
        *n = c.n;
    }
    free(c.runs);
    return st;
}

/* ---------------------------------------------------------------- accepts */

typedef struct hs_accepts {
    tg_arena *arena;
    tg_hist_accept *items;
    size_t n, cap;
} hs_accepts;

static bool hs_accept_row(void *ctx, size_t n, const char *const *c)
{
    hs_accepts *l = ctx;
    if (n != 5) return true;
    bool ok = true;
    tg_hist_accept x = {.workload = hs_dup(l->arena, c[0], &ok), .label = hs_dup(l->arena, c[1], &ok),
                        .run_id = hs_parse_i64(c[2]), .reason = hs_dup(l->arena, c[3], &ok),
                        .time = hs_dup(l->arena, c[4], &ok)};
    return ok && TG_PUSH(l->items, l->n, l->cap, x);
}

tg_status tg_history_accepts(tg_history *h, tg_arena *arena, tg_hist_accept **out, size_t *n, tg_diag *diag)
{
    *out = NULL;
    *n = 0;
    hs_accepts l = {.arena = arena};
    tg_status st = hs_exec(h, "SELECT workload, label, run_id, reason, time FROM tg_accepts ORDER BY id", NULL, 0,
                           hs_accept_row, &l, diag);
    if (st == TG_OK && l.n) {
        *out = tg_arena_alloc(arena, l.n * sizeof **out);
        if (!*out) st = hs_oom(h, diag);
        else memcpy(*out, l.items, l.n * sizeof **out);
    }
    if (st == TG_OK) *n = l.n;
    free(l.items);
    return st;
}
