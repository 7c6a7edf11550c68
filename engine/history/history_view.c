/*
** What `history show` and `history report` draw from a history
** (docs/history.md): per workload and regression metric, the series of the
** runs' values, the band each run was judged against, and the change
** points over the whole history, each explained by what ran differently in
** the segment after it than in the one before (the contributors a check
** names); and the show command's text and JSON.
*/
#include "history.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stats.h"
#include "../common/text.h"
#include "changepoint.h"
#include "../common/units.h"
#include "../eval/eval.h"
#include "../report/report_int.h"


/* ------------------------------------------------------ pooled work */

typedef struct pool_item {
    const tg_work_entry *e;
    double w;                   /* the run's weight: its steady iterations */
} pool_item;

static int cmp_item(const void *a, const void *b)
{
    const tg_work_entry *x = ((const pool_item *)a)->e, *y = ((const pool_item *)b)->e;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_time_desc(const void *a, const void *b)
{
    const tg_work_entry *x = a, *y = b;
    double tx = isnan(x->time) ? x->total : x->time, ty = isnan(y->time) ? y->total : y->time;
    if (tx != ty) return tx > ty ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One list (ops or ranges) of runs[0..n), per iteration weighted by each
** run's steady iterations: a name a run lacks counts 0 there. */
static bool pool_list(const tg_hist_run *const *runs, size_t n, bool ranges, double wsum, tg_arena *a,
                      tg_work_entry **out, size_t *n_out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (runs[i]->work) total += ranges ? runs[i]->work->n_ranges : runs[i]->work->n_ops;
    *out = NULL;
    *n_out = 0;
    if (total == 0) return true;
    pool_item *items = malloc(total * sizeof *items);
    if (!items) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const tg_workload *w = runs[i]->work;
        if (!w) continue;
        double weight = w->steady_iterations > 0 ? (double)w->steady_iterations : 1;
        const tg_work_entry *l = ranges ? w->ranges : w->ops;
        for (size_t j = 0, m = ranges ? w->n_ranges : w->n_ops; j < m; j++) items[k++] = (pool_item){&l[j], weight};
    }
    qsort(items, k, sizeof *items, cmp_item);
    tg_work_entry *res = tg_arena_alloc(a, k * sizeof *res);
    size_t m = 0;
    for (size_t i = 0; res && i < k;) {
        size_t j = i;
        tg_work_entry e = {.name = items[i].e->name, .kind = items[i].e->kind, .time = 0, .launches = 0};
        bool per_iter = true;
        for (; j < k && !cmp_item(&items[i], &items[j]); j++) {
            e.count += items[j].e->count;
            e.total += items[j].e->total;
            if (isnan(items[j].e->time)) per_iter = false;
            else e.time += items[j].w * items[j].e->time, e.launches += items[j].w * items[j].e->launches;
        }
        e.time = per_iter && wsum > 0 ? e.time / wsum : NAN;
        e.launches = per_iter && wsum > 0 ? e.launches / wsum : NAN;
        res[m++] = e;
        i = j;
    }
    free(items);
    if (!res) return false;
    qsort(res, m, sizeof *res, cmp_time_desc);
    *out = res;
    *n_out = m;
    return true;
}

/* What ran in runs[0..n), pooled as a baseline pools its runs. NULL when
** none has work (or out of memory: *oom). */
static tg_workload *pool_work(const tg_hist_run *const *runs, size_t n, tg_arena *a, bool *oom)
{
    double wsum = 0, busy = 0, period = 0, idle = 0, wb = 0, wp = 0, wi = 0;
    int64_t iters = 0;
    size_t with = 0;
    for (size_t i = 0; i < n; i++) {
        const tg_workload *w = runs[i]->work;
        if (!w) continue;
        with++;
        double weight = w->steady_iterations > 0 ? (double)w->steady_iterations : 1;
        wsum += weight;
        iters += w->steady_iterations;
        if (isfinite(w->gpu_time)) busy += weight * w->gpu_time, wb += weight;
        if (isfinite(w->period)) period += weight * w->period, wp += weight;
        if (isfinite(w->idle)) idle += weight * w->idle, wi += weight;
    }
    if (!with) return NULL;
    tg_workload *p = tg_arena_alloc(a, sizeof *p);
    if (!p) {
        *oom = true;
        return NULL;
    }
    *p = (tg_workload){.steady_iterations = iters, .gpu_time = wb > 0 ? busy / wb : NAN,
                       .period = wp > 0 ? period / wp : NAN, .idle = wi > 0 ? idle / wi : NAN};
    for (size_t i = 0; i < n; i++)
        if (runs[i]->work) p->total += runs[i]->work->total;
    if (!pool_list(runs, n, false, wsum, a, &p->ops, &p->n_ops) ||
        !pool_list(runs, n, true, wsum, a, &p->ranges, &p->n_ranges)) {
        *oom = true;
        return NULL;
    }
    return p;
}

/* ---------------------------------------------------------- series */



/* The band run i of s was judged against, recomputed: the runs before it
** since the latest change accepted before it, those that did not regress,
** the last TG_HISTORY_BASELINE_MAX of them; NaN with fewer than
** TG_HISTORY_BASELINE_MIN. (The check's own band also floors the spread at
** the runs' within-run precision; the picture leaves that out.) */
static void bands(tg_hist_series *s, const tg_hist_accept *acc, size_t n_acc)
{
    double v[TG_HISTORY_BASELINE_MAX];
    size_t start = 0;
    int64_t since = 0;          /* the accepted run the baseline starts at */
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < n_acc; k++)
            if (tg_same_str(acc[k].workload, s->workload) && acc[k].run_id == s->runs[i]->id) start = i, since = acc[k].run_id;
        size_t m = 0;
        /* as tg_history_baseline: a run that regressed is no baseline,
        ** unless it was judged before the change it carries was accepted */
        for (size_t j = i; j-- > start && m < TG_HISTORY_BASELINE_MAX;)
            if (isfinite(s->values[j]) && (!s->runs[j]->regressed || (since && s->runs[j]->epoch != since)))
                v[m++] = s->values[j];
        s->band_lo[i] = s->band_hi[i] = NAN;
        if (m < TG_HISTORY_BASELINE_MIN) continue;
        double med = tg_stats_median(v, m);
        double spread = fmax(tg_stats_spread(v, m), TG_BASELINE_MIN_REL_NOISE * fabs(med));
        s->band_lo[i] = med - TG_BASELINE_BAND_K * spread;
        s->band_hi[i] = med + TG_BASELINE_BAND_K * spread;
        if (s->band_lo[i] < 0 && med >= 0 && tg_baseline_nonnegative(s->unit)) s->band_lo[i] = 0;
    }
}


static const tg_hist_accept *accepted_at(const tg_hist_series *s, size_t index, const tg_hist_accept *acc,
                                         size_t n_acc, size_t slack)
{
    const tg_hist_accept *best = NULL;
    for (size_t k = 0; k < n_acc; k++) {
        if (!tg_same_str(acc[k].workload, s->workload)) continue;
        for (size_t i = index >= slack ? index - slack : 0; i < s->n && i <= index + slack; i++)
            if (s->runs[i]->id == acc[k].run_id) best = &acc[k];
    }
    return best;
}

/* The change points cps of s (indices into the series), each explained by
** its segments' work. */
static bool changes(tg_hist_series *s, const tg_cp *cps, size_t n_cps, const tg_cp_opts *opts,
                    const tg_hist_accept *acc, size_t n_acc, tg_arena *a)
{
    s->changes = n_cps ? tg_arena_alloc(a, n_cps * sizeof *s->changes) : NULL;
    bool ok = !n_cps || s->changes;
    for (size_t c = 0; ok && c < n_cps; c++) {
        size_t lo = c ? cps[c - 1].index : 0, mid = cps[c].index;
        size_t hi = c + 1 < n_cps ? cps[c + 1].index : s->n;
        tg_hist_change *h = &s->changes[s->n_changes++];
        double before = cps[c].before, after = cps[c].after;
        *h = (tg_hist_change){.index = mid, .label = s->runs[mid]->label, .before = before, .after = after,
                              .change = before != 0 ? (after - before) / fabs(before) : NAN, .p = cps[c].p};
        int d = s->direction * (after > before ? 1 : after < before ? -1 : 0);
        h->regression = d > 0;
        h->improvement = d < 0;
        h->cmp = (tg_baseline_cmp){.present = true, .value = before, .current = after, .change = h->change,
                                   .p_value = h->p, .band_lo = NAN, .band_hi = NAN, .spread = NAN,
                                   .workload_match = NAN, .busy_then = NAN, .busy_now = NAN};
        bool oom = false;
        tg_workload *then = pool_work(s->runs + lo, mid - lo, a, &oom);
        tg_workload *now = oom ? NULL : pool_work(s->runs + mid, hi - mid, a, &oom);
        if (oom) ok = false;
        else if (then && now && !isnan(then->gpu_time) && !isnan(now->gpu_time))
            ok = tg_workload_attribute(then, now, after - before, tg_history_series_wall_time(s), &h->cmp, a);
        h->accepted = accepted_at(s, mid, acc, n_acc, opts->min_segment ? opts->min_segment - 1 : 0);
    }
    return ok;
}

static int cmp_series(const void *a, const void *b)
{
    const tg_hist_series *x = a, *y = b;
    int c = strcmp(x->workload ? x->workload : "", y->workload ? y->workload : "");
    return c ? c : strcmp(x->rule, y->rule);
}

bool tg_history_view(const tg_hist_run *runs, size_t n, const tg_hist_accept *accepts, size_t n_accepts,
                     const tg_cp_opts *opts, tg_arena *a, tg_hist_view *out)
{
    *out = (tg_hist_view){.accepts = accepts, .n_accepts = n_accepts, .n_runs = n};
    tg_cp_opts dflt = TG_CP_OPTS_DEFAULT;
    if (!opts) opts = &dflt;
    /* one series per (workload, regression rule) that some run has: the
    ** definition of its latest run */
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) cap += runs[i].n_metrics;
    tg_hist_series *s = tg_arena_alloc(a, (cap ? cap : 1) * sizeof *s);
    if (!s) return false;
    size_t ns = 0;
    for (size_t i = n; i-- > 0;) {
        for (size_t k = 0; k < runs[i].n_metrics; k++) {
            const tg_hist_metric *m = &runs[i].metrics[k];
            if (!m->direction) continue;
            bool seen = false;
            for (size_t j = 0; j < ns && !seen; j++)
                seen = tg_same_str(s[j].workload, runs[i].workload) && !strcmp(s[j].rule, m->rule);
            if (seen) continue;
            s[ns++] = (tg_hist_series){.workload = runs[i].workload, .workload_name = runs[i].workload_name,
                                       .rule = m->rule, .metric = m->metric, .unit = m->unit,
                                       .direction = m->direction};
        }
    }
    qsort(s, ns, sizeof *s, cmp_series);
    for (size_t j = 0; j < ns; j++) {
        tg_hist_series *x = &s[j];
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++) cnt += tg_same_str(runs[i].workload, x->workload);
        x->runs = tg_arena_alloc(a, (cnt ? cnt : 1) * sizeof *x->runs);
        x->values = tg_arena_alloc(a, (cnt ? cnt : 1) * sizeof *x->values);
        x->band_lo = tg_arena_alloc(a, (cnt ? cnt : 1) * sizeof *x->band_lo);
        x->band_hi = tg_arena_alloc(a, (cnt ? cnt : 1) * sizeof *x->band_hi);
        if (!x->runs || !x->values || !x->band_lo || !x->band_hi) return false;
        for (size_t i = 0; i < n; i++) {
            if (!tg_same_str(runs[i].workload, x->workload)) continue;
            const tg_hist_metric *m = tg_history_metric(&runs[i], x->rule);
            /* a value of another definition of the rule is not this series' */
            bool same = m && tg_same_str(m->metric, x->metric) && m->unit == x->unit && m->direction == x->direction;
            x->runs[x->n] = &runs[i];
            x->values[x->n++] = same && isfinite(m->value) ? m->value : NAN;
        }
        bands(x, accepts, n_accepts);
    }
    /* The change points of all series at once, on every core (the searches
    ** are most of the time `history show` takes: issue 30 item 8); the
    ** values' NaNs are left out by the search, its indices are the
    ** series'. The explanations then take the arena, one series at a time. */
    tg_cp_job *jobs = calloc(ns ? ns : 1, sizeof *jobs);
    if (!jobs) return false;
    for (size_t j = 0; j < ns; j++) jobs[j] = (tg_cp_job){.x = s[j].values, .n = s[j].n};
    bool ok = tg_changepoints_batch(jobs, ns, opts, 0);
    for (size_t j = 0; ok && j < ns; j++) ok = changes(&s[j], jobs[j].cps, jobs[j].n_cps, opts, accepts, n_accepts, a);
    for (size_t j = 0; j < ns; j++) free(jobs[j].cps);
    free(jobs);
    if (!ok) return false;
    out->series = s;
    out->n_series = ns;
    return true;
}

/* ------------------------------------------------------------- show */

/* s as an SQL string literal (tg_sql_string), in arena. */
static char *sql_quote(tg_arena *a, const char *s)
{
    char *q = tg_sql_string(s);
    char *out = q ? tg_arena_strdup(a, q) : NULL;
    free(q);
    return out;
}

/* The SQL that gives a series' values from the history (docs/history.md,
** "Where the numbers come from"): the runs of its workload in history
** order, with the value of its rule as the series defines it. */
static const char *series_query(const tg_hist_series *s, tg_arena *a)
{
    char *w = sql_quote(a, s->workload ? s->workload : ""), *r = sql_quote(a, s->rule),
         *m = sql_quote(a, s->metric ? s->metric : "");
    if (!w || !r || !m) return NULL;
    return tg_arena_printf(a, "SELECT r.label, r.time, m.value FROM tg_runs r LEFT JOIN tg_metrics m ON m.run_id = "
                           "r.id AND m.rule = %s AND m.metric = %s WHERE r.workload = %s ORDER BY r.time, r.id;",
                           r, m, w);
}


static void put_change_text(FILE *f, const tg_hist_series *s, const tg_hist_change *c)
{
    char b[48], a[48];
    tg_fmt_num(b, sizeof b, c->before, s->unit);
    tg_fmt_num(a, sizeof a, c->after, s->unit);
    fprintf(f, "    change point at %s: %s -> %s (%+.3g%%), p=%.3g, %s", c->label, b, a, 100 * c->change, c->p,
            c->regression ? "regression" : c->improvement ? "improvement" : "change");
    if (c->accepted) fprintf(f, ", accepted (%s)", c->accepted->reason ? c->accepted->reason : "");
    fputc('\n', f);
    if (c->cmp.n_contributors) {
        /* the check's sentence, less the "; " that joins it to a verdict */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (!m) return;
        tg_workload_put_changes(m, &c->cmp, tg_history_series_wall_time(s));
        fclose(m);
        const char *p = buf ? buf : "";
        while (*p == ';' || *p == ' ') p++;
        fprintf(f, "      %s\n", p);
        free(buf);
    }
}

tg_status tg_history_write_text(FILE *f, const tg_hist_view *v)
{
    const char *wl = NULL;
    bool first = true;
    if (v->n_series == 0) fprintf(f, "no regression metric in %zu run%s\n", v->n_runs, v->n_runs == 1 ? "" : "s");
    for (size_t j = 0; j < v->n_series; j++) {
        const tg_hist_series *s = &v->series[j];
        if (first || !tg_same_str(wl, s->workload)) {
            const tg_hist_run *r0 = s->runs[0];
            fprintf(f, "%sworkload %s (%s) on %s, %s: %zu run%s\n", first ? "" : "\n", s->workload,
                    s->workload_name ? s->workload_name : "?", r0->gpu ? r0->gpu : "an unknown GPU",
                    r0->format ? r0->format : "?", s->n, s->n == 1 ? "" : "s");
            wl = s->workload;
            first = false;
        }
        fprintf(f, "  %s (%s, %s): %zu change point%s\n", s->rule, s->metric, tg_baseline_direction_name(s->direction),
                s->n_changes, s->n_changes == 1 ? "" : "s");
        tg_arena *qa = tg_arena_new();
        const char *q = qa ? series_query(s, qa) : NULL;
        if (q) fprintf(f, "    query: %s\n", q);
        tg_arena_free(qa);
        for (size_t i = 0; i < s->n; i++) {
            char val[48];
            const tg_hist_metric *m = tg_history_series_metric(s, i);
            tg_fmt_num(val, sizeof val, s->values[i], s->unit);
            fprintf(f, "    %-24s %-20s %12s  %s%s%s\n", s->runs[i]->label, s->runs[i]->time ? s->runs[i]->time : "",
                    isnan(s->values[i]) ? "-" : val, m && m->verdict ? m->verdict : "-",
                    s->runs[i]->branch ? "  " : "", s->runs[i]->branch ? s->runs[i]->branch : "");
        }
        for (size_t c = 0; c < s->n_changes; c++) put_change_text(f, s, &s->changes[c]);
    }
    for (size_t k = 0; k < v->n_accepts; k++)
        fprintf(f, "%saccepted: %s at %s on %s: %s\n", k ? "" : "\n", v->accepts[k].workload, v->accepts[k].label,
                v->accepts[k].time ? v->accepts[k].time : "?", v->accepts[k].reason ? v->accepts[k].reason : "");
    return ferror(f) ? TG_EINTERNAL : TG_OK;
}

/* json_object_set_new that remembers a failure. */
static void put(bool *ok, json_t *o, const char *key, json_t *v)
{
    if (!v || json_object_set_new(o, key, v) != 0) *ok = false;
}

static void push(bool *ok, json_t *list, json_t *v)
{
    if (!v || json_array_append_new(list, v) != 0) *ok = false;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *accept_json(bool *ok, const tg_hist_accept *x)
{
    json_t *o = json_object();
    put(ok, o, "workload", str_or_null(x->workload));
    put(ok, o, "label", str_or_null(x->label));
    put(ok, o, "reason", str_or_null(x->reason));
    put(ok, o, "time", str_or_null(x->time));
    return o;
}

static json_t *change_json(bool *ok, const tg_hist_series *s, const tg_hist_change *c)
{
    json_t *o = json_object();
    put(ok, o, "workload", str_or_null(s->workload));
    put(ok, o, "rule", json_string(s->rule));
    put(ok, o, "label", str_or_null(c->label));
    put(ok, o, "index", json_integer((json_int_t)c->index));
    put(ok, o, "before", tg_report_json_num(c->before));
    put(ok, o, "after", tg_report_json_num(c->after));
    put(ok, o, "change", tg_report_json_num(c->change));
    put(ok, o, "p", tg_report_json_num(c->p));
    put(ok, o, "kind", json_string(c->regression ? "regression" : c->improvement ? "improvement" : "change"));
    put(ok, o, "busy_before_ns", tg_report_json_num(c->cmp.busy_then));
    put(ok, o, "busy_after_ns", tg_report_json_num(c->cmp.busy_now));
    put(ok, o, "contributors", tg_report_json_contributors(c->cmp.contributors, c->cmp.n_contributors));
    put(ok, o, "accepted", c->accepted ? accept_json(ok, c->accepted) : json_null());
    return o;
}

tg_status tg_history_write_json(FILE *f, const tg_hist_view *v)
{
    bool ok = true;
    json_t *doc = json_object(), *wls = json_array(), *all = json_array(), *acc = json_array();
    put(&ok, doc, "history_schema", json_integer(TG_HISTORY_SCHEMA));
    put(&ok, doc, "runs", json_integer((json_int_t)v->n_runs));
    json_t *cur = NULL, *series = NULL;
    const char *wl = NULL;
    for (size_t j = 0; ok && j < v->n_series; j++) {
        const tg_hist_series *s = &v->series[j];
        if (!cur || !tg_same_str(wl, s->workload)) {
            cur = json_object();
            series = json_array();
            const tg_hist_run *r0 = s->runs[0];
            put(&ok, cur, "workload", str_or_null(s->workload));
            put(&ok, cur, "name", str_or_null(s->workload_name));
            put(&ok, cur, "gpu", str_or_null(r0->gpu));
            put(&ok, cur, "format", str_or_null(r0->format));
            put(&ok, cur, "iteration_marker", str_or_null(r0->marker));
            put(&ok, cur, "runs", json_integer((json_int_t)s->n));
            put(&ok, cur, "series", series);
            push(&ok, wls, cur);
            wl = s->workload;
        }
        json_t *o = json_object(), *pts = json_array(), *cps = json_array();
        put(&ok, o, "rule", json_string(s->rule));
        put(&ok, o, "metric", json_string(s->metric));
        put(&ok, o, "unit", json_string(tg_unit_key(s->unit)));
        put(&ok, o, "direction", json_string(tg_baseline_direction_name(s->direction)));
        tg_arena *qa = tg_arena_new();
        const char *q = qa ? series_query(s, qa) : NULL;
        put(&ok, o, "query", q ? json_string(q) : NULL);
        tg_arena_free(qa);
        for (size_t i = 0; i < s->n; i++) {
            const tg_hist_run *r = s->runs[i];
            const tg_hist_metric *m = tg_history_series_metric(s, i);
            json_t *p = json_object();
            put(&ok, p, "label", str_or_null(r->label));
            put(&ok, p, "time", str_or_null(r->time));
            put(&ok, p, "branch", str_or_null(r->branch));
            put(&ok, p, "value", tg_report_json_num(s->values[i]));
            put(&ok, p, "verdict", str_or_null(m ? m->verdict : NULL));
            put(&ok, p, "run_verdict", str_or_null(r->verdict));
            put(&ok, p, "band_lo", tg_report_json_num(s->band_lo[i]));
            put(&ok, p, "band_hi", tg_report_json_num(s->band_hi[i]));
            push(&ok, pts, p);
        }
        for (size_t c = 0; c < s->n_changes; c++) {
            push(&ok, cps, change_json(&ok, s, &s->changes[c]));
            push(&ok, all, change_json(&ok, s, &s->changes[c]));
        }
        put(&ok, o, "runs", pts);
        put(&ok, o, "change_points", cps);
        push(&ok, series, o);
    }
    for (size_t k = 0; k < v->n_accepts; k++) push(&ok, acc, accept_json(&ok, &v->accepts[k]));
    put(&ok, doc, "workloads", wls);
    put(&ok, doc, "change_points", all);
    put(&ok, doc, "accepted", acc);
    if (!ok) {
        json_decref(doc);
        return TG_EINTERNAL;
    }
    return tg_report_json_dump(doc, f);
}
