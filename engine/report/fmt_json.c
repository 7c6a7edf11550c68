/*
** The JSON result (docs/formats.md, "json"): the contract that `tracegate
** merge`, the corpus tests and other tools read, documented in
** docs/result-schema.json. It maps tg_run_result one to one: keys always in
** the same order, absent C values (NULL strings, TG_NULL_I64, NaN) as JSON
** null, optional members (gpus, error, baseline, metric, missing_data, untimed,
** location) only when they carry something. Extend it; never rename or retype
** what is there.
*/
#include "report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Building context: the first allocation failure is remembered so that a
** document with a silently missing key is never written. */
typedef struct jctx {
    bool ok;
} jctx;

static void put(jctx *c, json_t *obj, const char *key, json_t *val)
{
    if (!obj) json_decref(val);   /* set_new frees val itself on failure */
    if (!obj || !val || json_object_set_new(obj, key, val) != 0) c->ok = false;
}

static void append(jctx *c, json_t *arr, json_t *val)
{
    if (!arr) json_decref(val);
    if (!arr || !val || json_array_append_new(arr, val) != 0) c->ok = false;
}

json_t *tg_report_json_str(const char *s)
{
    if (!s) return json_null();
    size_t len = strlen(s);
    if (tg_utf8_valid(s, len)) return json_stringn(s, len);
    char *clean = tg_utf8_clean(NULL, s);
    json_t *j = clean ? json_string(clean) : NULL;
    free(clean);
    return j;
}

json_t *tg_report_json_num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *i64(int64_t x)
{
    return x == TG_NULL_I64 ? json_null() : json_integer((json_int_t)x);
}

static json_t *value_json(const tg_value *v)
{
    switch (v->type) {
    case TG_TY_BOOL: return json_boolean(v->u.b);
    case TG_TY_INT: return json_integer((json_int_t)v->u.i);
    case TG_TY_FLOAT: return tg_report_json_num(v->u.f);
    case TG_TY_STRING: return tg_report_json_str(v->u.s);
    default: return json_null();
    }
}

json_t *tg_report_json_values(const tg_named_value *values, size_t n)
{
    jctx c = {true};
    json_t *obj = json_object();
    for (size_t i = 0; i < n; i++) {
        if (!values[i].name) continue;
        char *key = tg_utf8_valid(values[i].name, strlen(values[i].name))
                        ? NULL : tg_utf8_clean(NULL, values[i].name);
        put(&c, obj, key ? key : values[i].name, value_json(&values[i].value));
        free(key);
    }
    if (!c.ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *tg_report_json_contributors(const tg_contributor *contributors, size_t n)
{
    jctx c = {true};
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const tg_contributor *x = &contributors[i];
        json_t *e = json_object();
        put(&c, e, "name", tg_report_json_str(x->name));
        put(&c, e, "kind", json_string(tg_work_kind_name(x->kind)));
        put(&c, e, "status", json_string(tg_contrib_status_name(x->status)));
        put(&c, e, "baseline_ns", tg_report_json_num(x->then_time));
        put(&c, e, "current_ns", tg_report_json_num(x->now_time));
        put(&c, e, "delta_ns", tg_report_json_num(x->delta));
        put(&c, e, "share", tg_report_json_num(x->share));
        if (x->kind != TG_WORK_NVTX) {
            put(&c, e, "baseline_launches", tg_report_json_num(x->then_launches));
            put(&c, e, "current_launches", tg_report_json_num(x->now_launches));
        }
        put(&c, e, "query", tg_report_json_str(x->query));
        append(&c, list, e);
    }
    if (!c.ok) {
        json_decref(list);
        return NULL;
    }
    return list;
}

/* The units of those values that have one ({"sum_duration_ns": "ns"}), or
** NULL when none has: JSON numbers carry none, and merge reads them back. */
static json_t *units_json(jctx *c, const tg_named_value *values, size_t n)
{
    json_t *obj = NULL;
    for (size_t i = 0; i < n; i++) {
        const tg_value *v = &values[i].value;
        if (!values[i].name || v->unit == TG_UNIT_NONE || (v->type != TG_TY_INT && v->type != TG_TY_FLOAT))
            continue;
        if (!obj && !(obj = json_object())) {
            c->ok = false;
            return NULL;
        }
        char *key = tg_utf8_valid(values[i].name, strlen(values[i].name))
                        ? NULL : tg_utf8_clean(NULL, values[i].name);
        put(c, obj, key ? key : values[i].name, json_string(tg_unit_key(v->unit)));
        free(key);
    }
    return obj;
}

static json_t *baseline_json(jctx *c, const tg_baseline_cmp *b)
{
    json_t *o = json_object();
    put(c, o, "value", tg_report_json_num(b->value));
    put(c, o, "current", tg_report_json_num(b->current));
    put(c, o, "change", tg_report_json_num(b->change));
    put(c, o, "p_value", tg_report_json_num(b->p_value));
    put(c, o, "n_baseline", json_integer((json_int_t)b->n_baseline));
    put(c, o, "n_current", json_integer((json_int_t)b->n_current));
    put(c, o, "regression", json_boolean(b->regression));
    put(c, o, "improvement", json_boolean(b->improvement));
    put(c, o, "inconclusive", json_boolean(b->inconclusive));
    /* The run-to-run band: measured with 3+ baseline runs, else assumed. */
    if (!isnan(b->band_lo) || !isnan(b->band_hi)) {
        put(c, o, "outside_band", json_boolean(b->outside_band));
        put(c, o, "band_lo", tg_report_json_num(b->band_lo));
        put(c, o, "band_hi", tg_report_json_num(b->band_hi));
        put(c, o, "band_measured", json_boolean(b->band_measured));
        put(c, o, "spread", tg_report_json_num(b->spread));
        put(c, o, "n_runs", json_integer((json_int_t)b->n_runs));
    }
    if (!isnan(b->workload_match)) put(c, o, "workload_match", tg_report_json_num(b->workload_match));
    if (!isnan(b->busy_then) || !isnan(b->busy_now)) {
        put(c, o, "gpu_busy_baseline", tg_report_json_num(b->busy_then));
        put(c, o, "gpu_busy_current", tg_report_json_num(b->busy_now));
        if (b->busy_query) put(c, o, "gpu_busy_query", tg_report_json_str(b->busy_query));
    }
    if (b->n_contributors) put(c, o, "contributors", tg_report_json_contributors(b->contributors, b->n_contributors));
    return o;
}

static json_t *evidence_json(jctx *c, const tg_evidence *e)
{
    json_t *o = json_object();
    put(c, o, "table", tg_report_json_str(e->table));
    put(c, o, "rowid", i64(e->rowid));
    put(c, o, "start", i64(e->start));
    put(c, o, "end", i64(e->end));
    put(c, o, "fields", tg_report_json_values(e->fields, e->n_fields));
    json_t *units = units_json(c, e->fields, e->n_fields);
    if (units) put(c, o, "units", units);
    /* start..end is a gap or a device's window: the cited row's own span */
    if (e->interval != TG_INTERVAL_ROW) {
        put(c, o, "interval", json_string(tg_interval_name(e->interval)));
        put(c, o, "row_start", i64(e->row_start));
        put(c, o, "row_end", i64(e->row_end));
    }
    return o;
}

static json_t *strings_json(jctx *c, const char *const *list, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) append(c, arr, tg_report_json_str(list[i]));
    return arr;
}

static json_t *rowids_json(jctx *c, const int64_t *rowids, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) append(c, arr, json_integer((json_int_t)rowids[i]));
    return arr;
}

/* One cause item (docs/host.md): what its kind carries. */
static json_t *cause_item_json(jctx *c, tg_cause_kind kind, const tg_cause_item *it)
{
    json_t *o = json_object();
    if (kind == TG_CAUSE_HOST) put(c, o, "source", tg_report_json_str(it->source));
    put(c, o, kind == TG_CAUSE_CALL_SITE ? "call_site" : "name", tg_report_json_str(it->name));
    if (kind == TG_CAUSE_CALL_SITE) put(c, o, "call_module", tg_report_json_str(it->module));
    if (kind == TG_CAUSE_HOST) {
        put(c, o, "tid", i64(it->tid));
        put(c, o, "thread", tg_report_json_str(it->thread));
        put(c, o, "launch_thread", json_boolean(it->launch_thread));
    }
    put(c, o, "count", json_integer((json_int_t)it->count));
    put(c, o, kind == TG_CAUSE_LAUNCH ? "kernel_time_ns" : "time_ns", tg_report_json_num(it->time));
    if (kind == TG_CAUSE_LAUNCH) put(c, o, "launch_time_ns", tg_report_json_num(it->launch_time));
    put(c, o, "share", tg_report_json_num(it->share));
    if (kind == TG_CAUSE_HOST && it->source && strcmp(it->source, "nvtx") != 0) {
        put(c, o, "call_site", tg_report_json_str(it->call_site));
        put(c, o, "call_module", tg_report_json_str(it->call_module));
    }
    if (kind != TG_CAUSE_LAUNCH) {
        put(c, o, "table", tg_report_json_str(it->table));
        put(c, o, "rowids", rowids_json(c, it->rowids, it->n_rowids));
    }
    if (kind == TG_CAUSE_CALL_SITE) put(c, o, "stack", strings_json(c, it->stack, it->n_stack));
    return o;
}

static json_t *cause_items_json(jctx *c, tg_cause_kind kind, const tg_cause_item *items, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) append(c, arr, cause_item_json(c, kind, &items[i]));
    return arr;
}

static json_t *cause_json(jctx *c, const tg_cause *x)
{
    json_t *o = json_object();
    put(c, o, "kind", json_string(tg_cause_name(x->kind)));
    put(c, o, "summary", tg_report_json_str(x->summary));
    put(c, o, "unknown", strings_json(c, x->unknown, x->n_unknown));
    if (x->kind == TG_CAUSE_HOST) {
        json_t *wins = json_array();
        for (size_t i = 0; i < x->n_windows; i++) {
            const tg_cause_window *w = &x->windows[i];
            json_t *wo = json_object();
            put(c, wo, "evidence", json_integer((json_int_t)w->evidence));
            put(c, wo, "pid", i64(w->pid));
            put(c, wo, "start", i64(w->start));
            put(c, wo, "end", i64(w->end));
            put(c, wo, "duration_ns", i64(w->end - w->start));
            put(c, wo, "accounted_ns", i64(w->accounted));
            put(c, wo, "activity", cause_items_json(c, x->kind, w->items, w->n_items));
            append(c, wins, wo);
        }
        put(c, o, "windows", wins);
    } else {
        put(c, o, x->kind == TG_CAUSE_CALL_SITE ? "sites" : "kernels",
            cause_items_json(c, x->kind, x->items, x->n_items));
    }
    put(c, o, "reproduce", tg_report_json_str(x->reproduce));
    return o;
}

static json_t *result_json(jctx *c, const tg_rule_result *r)
{
    json_t *o = json_object();
    put(c, o, "rule", tg_report_json_str(r->rule));
    put(c, o, "title", tg_report_json_str(r->title));
    put(c, o, "status", json_string(tg_verdict_name(r->verdict)));
    put(c, o, "severity", json_string(tg_severity_name(r->severity)));
    put(c, o, "count", i64(r->count));
    put(c, o, "message", tg_report_json_str(r->message));
    put(c, o, "advice", tg_report_json_str(r->advice));
    put(c, o, "values", tg_report_json_values(r->values, r->n_values));
    json_t *units = units_json(c, r->values, r->n_values);
    if (units) put(c, o, "units", units);
    if (r->baseline.present) put(c, o, "baseline", baseline_json(c, &r->baseline));
    json_t *ev = json_array();
    for (size_t i = 0; i < r->n_evidence; i++) append(c, ev, evidence_json(c, &r->evidence[i]));
    put(c, o, "evidence", ev);
    put(c, o, "reproduce", tg_report_json_str(r->reproduce));
    if (r->cause) put(c, o, "cause", cause_json(c, r->cause));
    if (r->metric) {
        put(c, o, "metric", tg_report_json_str(r->metric));
        put(c, o, "metric_value", tg_report_json_num(r->metric_value));
        put(c, o, "metric_unit", json_string(tg_unit_key(r->metric_unit)));
        if (r->regression)
            put(c, o, "regression", json_string(r->regression > 0 ? "higher_is_worse" : "lower_is_worse"));
    }
    if (r->missing_data) put(c, o, "missing_data", json_true());
    if (r->untimed) put(c, o, "untimed", tg_report_json_str(r->untimed));
    if (r->suppressed) {
        json_t *sup = json_object();
        put(c, sup, "reason", tg_report_json_str(r->suppressed));
        put(c, sup, "at", tg_report_json_str(r->suppressed_at));
        put(c, o, "suppressed", sup);
    }
    if (r->verdict == TG_V_ERROR) {
        tg_status es = r->error_status != TG_OK ? r->error_status : r->missing_data ? TG_ETRACE : TG_EINTERNAL;
        put(c, o, "error_kind", json_string(es == TG_ETRACE ? "data" : es == TG_EUSAGE ? "mismatch" : "internal"));
    }
    if (r->rule_file) {
        json_t *loc = json_object();
        put(c, loc, "file", tg_report_json_str(r->rule_file));
        put(c, loc, "line", json_integer(r->rule_line));
        put(c, o, "location", loc);
    }
    return o;
}

/* Names kept per list of a result's workload (the rest summed as
** TG_WORK_OTHER): enough for the movers merge names (8 kernels, 4 ranges),
** small beside the rule results. */
#define WORK_OPS_KEPT 32
#define WORK_RANGES_KEPT 16

static void put_work(jctx *c, json_t *arr, const tg_work_entry *e)
{
    json_t *o = json_object();
    put(c, o, "name", tg_report_json_str(e->name));
    put(c, o, "kind", json_string(tg_work_kind_name(e->kind)));
    put(c, o, "time_ns", tg_report_json_num(e->time));
    if (e->kind != TG_WORK_NVTX) put(c, o, "launches", tg_report_json_num(e->launches));
    put(c, o, "count", json_integer((json_int_t)e->count));
    put(c, o, "total_ns", tg_report_json_num(e->total));
    append(c, arr, o);
}

/* The first `kept` entries (time per iteration, descending), then the rest
** summed as TG_WORK_OTHER (kind kernel for GPU work, as baselines write it). */
static json_t *work_list_json(jctx *c, const tg_work_entry *list, size_t n, size_t kept)
{
    json_t *arr = json_array();
    tg_work_entry other = {.name = TG_WORK_OTHER};
    size_t shown = 0, rest = 0;
    for (size_t i = 0; i < n; i++) {
        const tg_work_entry *e = &list[i];
        if (shown < kept && strcmp(e->name, TG_WORK_OTHER) != 0) {
            put_work(c, arr, e);
            shown++;
            continue;
        }
        other.kind = e->kind == TG_WORK_NVTX ? TG_WORK_NVTX : TG_WORK_KERNEL;
        other.count += e->count;
        other.total += e->total;
        other.time += e->time;         /* NaN without iterations, as e's */
        other.launches += e->launches;
        rest++;
    }
    if (rest) put_work(c, arr, &other);
    return arr;
}

/* What ran, per steady iteration (docs/formats.md): merge compares ranks
** with it, and names what the slowest one ran differently. */
static json_t *workload_json(jctx *c, const tg_workload *w)
{
    json_t *o = json_object();
    put(c, o, "steady_iterations", json_integer((json_int_t)w->steady_iterations));
    put(c, o, "period_p50_ns", tg_report_json_num(w->period));
    put(c, o, "gpu_time_ns", tg_report_json_num(w->gpu_time));
    put(c, o, "idle_ns", tg_report_json_num(w->idle));
    put(c, o, "total_ns", tg_report_json_num(w->total));
    put(c, o, "ops", work_list_json(c, w->ops, w->n_ops, WORK_OPS_KEPT));
    put(c, o, "ranges", work_list_json(c, w->ranges, w->n_ranges, WORK_RANGES_KEPT));
    if (w->sql_steady) {
        json_t *q = json_object();
        put(c, q, "steady", tg_report_json_str(w->sql_steady));
        put(c, q, "kernel", tg_report_json_str(w->table_kernel));
        put(c, q, "memcpy", tg_report_json_str(w->table_memcpy));
        put(c, q, "memset", tg_report_json_str(w->table_memset));
        put(c, q, "runtime", tg_report_json_str(w->table_runtime));
        put(c, q, "nvtx", tg_report_json_str(w->table_nvtx));
        put(c, o, "sql", q);
    }
    return o;
}

/* The ranks a trace holds (docs/formats.md, "ranks"): each number with
** the query (SQL, or jq for a Kineto trace) that reproduces it. */
static json_t *ranks_json(jctx *c, const tg_rank_result *r, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const tg_rank_result *x = &r[i];
        json_t *o = json_object();
        put(c, o, "rank", json_integer((json_int_t)x->rank));
        put(c, o, "pid", json_integer(x->pid));
        put(c, o, "device", json_integer(x->device));
        put(c, o, "devices", json_integer(x->n_devices));
        put(c, o, "steady_iterations", json_integer((json_int_t)x->steady_iterations));
        put(c, o, "period_p50_ns", tg_report_json_num(x->period));
        put(c, o, "period_p50_query", tg_report_json_str(x->period_query));
        put(c, o, "gpu_time_p50_ns", tg_report_json_num(x->gpu_time));
        put(c, o, "gpu_time_p50_query", tg_report_json_str(x->gpu_time_query));
        put(c, o, "idle_frac", tg_report_json_num(x->idle_frac));
        put(c, o, "idle_frac_query", tg_report_json_str(x->idle_query));
        put(c, o, "idle_ns", tg_report_json_num(x->idle));
        append(c, arr, o);
    }
    return arr;
}

/* "A100, H100" -> ["A100", "H100"]. */
static json_t *gpus_json(jctx *c, const char *names)
{
    json_t *arr = json_array();
    const char *p = names;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && p[len - 1] == ' ') len--;
        char *one = malloc(len + 1);
        if (!one) {
            c->ok = false;
            break;
        }
        memcpy(one, p, len);
        one[len] = 0;
        append(c, arr, tg_report_json_str(one));
        free(one);
        p += end ? (size_t)(end - p) : strlen(p);
    }
    return arr;
}

/* Where the trace was recorded: rank, world size, job and host are null
** when unknown, rank_from says who told the rank. */
static void origin_json(jctx *c, json_t *o, const tg_origin *og)
{
    bool ranked = tg_origin_has_rank(og);
    put(c, o, "rank", ranked ? json_integer((json_int_t)og->rank) : json_null());
    if (ranked) put(c, o, "rank_from", tg_report_json_str(og->rank_from));
    put(c, o, "world_size", og->world_size > 0 ? json_integer((json_int_t)og->world_size) : json_null());
    put(c, o, "job", tg_report_json_str(og->job));
    put(c, o, "host", tg_report_json_str(og->host));
    json_t *pids = json_array();
    for (size_t i = 0; i < og->n_pids; i++) append(c, pids, json_integer(og->pids[i]));
    put(c, o, "pids", pids);
}

/* Launches without a GPU record: how many, of how many launch calls. */
static json_t *unmatched_json(jctx *c, int64_t count, int64_t calls)
{
    json_t *o = json_object();
    put(c, o, "count", json_integer((json_int_t)count));
    put(c, o, "fraction", calls ? tg_report_json_num((double)count / (double)calls) : json_null());
    return o;
}

/* The profiler's own account in a coverage (docs/formats.md, "coverage"):
** versions, the capture's window, its warnings and errors. */
static void profiler_json(jctx *c, json_t *o, const tg_coverage *cov)
{
    json_t *p = json_object();
    put(c, p, "version", cov->profiler_version[0] ? json_string(cov->profiler_version) : json_null());
    put(c, p, "cuda", i64(cov->profiler_cuda));
    put(c, p, "cupti_version", i64(cov->cupti));
    put(c, p, "cuda_runtime_version", i64(cov->cuda_runtime));
    put(c, o, "profiler", p);
    json_t *d = json_object();
    put(c, d, "cuda", i64(cov->cuda_driver));
    put(c, d, "version", cov->nv_driver[0] ? tg_report_json_str(cov->nv_driver) : json_null());
    put(c, o, "driver", d);
    json_t *w = json_object();
    put(c, w, "start_ns", i64(cov->capture_start));
    put(c, w, "stop_ns", i64(cov->capture_stop));
    put(c, o, "capture", w);
    json_t *notes = json_array();
    for (size_t i = 0; i < cov->n_notes; i++) {
        const tg_cov_note *n = &cov->notes[i];
        json_t *x = json_object();
        put(c, x, "severity", json_string(n->severity == 3 ? "error" : "warning"));
        put(c, x, "text", tg_report_json_str(n->text));
        put(c, x, "count", json_integer((json_int_t)n->count));
        put(c, x, "first_ns", i64(n->first_ns));
        append(c, notes, x);
    }
    put(c, o, "diagnostics", notes);
    put(c, o, "diagnostics_total", json_integer((json_int_t)cov->notes_total));
}

json_t *tg_report_coverage_json(const tg_coverage *cov)
{
    jctx ctx = {true}, *c = &ctx;
    json_t *o = json_object();
    for (int a = 0; a < TG_COV_COUNT; a++) {
        const tg_cov_window *w = &cov->act[a];
        json_t *x = json_object();
        put(c, x, "first_ns", i64(w->records ? w->first : TG_NULL_I64));
        put(c, x, "last_ns", i64(w->records ? w->last : TG_NULL_I64));
        put(c, x, "records", json_integer((json_int_t)w->records));
        if (a <= TG_COV_MEMSET) {
            put(c, x, "launch_calls", json_integer((json_int_t)w->launch_calls));
            put(c, x, "launches_without_gpu_record", unmatched_json(c, w->launches_without_gpu, w->launch_calls));
            put(c, x, "launches_after_capture", json_integer((json_int_t)w->launches_after_capture));
        }
        put(c, o, tg_cov_activity_names[a], x);
    }
    put(c, o, "launch_calls", json_integer((json_int_t)cov->launch_calls));
    json_t *u = unmatched_json(c, cov->launches_without_gpu, cov->launch_calls);
    put(c, u, "first_ns", i64(cov->unmatched_first));
    put(c, u, "last_ns", i64(cov->unmatched_last));
    put(c, o, "launches_without_gpu_record", u);
    put(c, o, "launches_after_capture", json_integer((json_int_t)cov->launches_after_capture));
    put(c, o, "run_first_ns", i64(cov->run_first));
    put(c, o, "run_last_ns", i64(cov->run_last));
    json_t *s = json_null();
    if (cov->stopped_at != TG_NULL_I64) {
        s = json_object();
        put(c, s, "activity", json_string(cov->stopped == TG_COV_API ? "cuda_api" : "gpu"));
        put(c, s, "at_ns", i64(cov->stopped_at));
        put(c, s, "uncovered", tg_report_json_num(cov->uncovered));
        put(c, s, "went_on", json_string(tg_cov_activity_names[cov->went_on]));
    }
    put(c, o, "stops_early", s);
    json_t *cut = json_null();
    if (cov->cut_count) {
        cut = json_object();
        put(c, cut, "count", json_integer((json_int_t)cov->cut_count));
        put(c, cut, "of", json_integer((json_int_t)cov->iterations));
        put(c, cut, "first_start_ns", i64(cov->cut_first));
        put(c, cut, "last_start_ns", i64(cov->cut_last));
    }
    put(c, o, "iterations_cut", cut);
    profiler_json(c, o, cov);
    if (!ctx.ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *trace_json(jctx *c, const tg_trace_result *t)
{
    json_t *o = json_object();
    put(c, o, "file", tg_report_json_str(t->file));
    put(c, o, "nsys_version", tg_report_json_str(t->nsys_version));
    put(c, o, "schema_version", tg_report_json_str(t->schema_version));
    put(c, o, "trace_format", json_string(tg_report_format(t)->name));
    origin_json(c, o, &t->origin);
    if (t->gpu_names) put(c, o, "gpus", gpus_json(c, t->gpu_names));
    if (t->iteration_marker) put(c, o, "iteration_marker", tg_report_json_str(t->iteration_marker));
    if (t->workload) put(c, o, "workload", workload_json(c, t->workload));
    if (t->n_ranks) put(c, o, "ranks", ranks_json(c, t->ranks, t->n_ranks));
    if (t->coverage.set) put(c, o, "coverage", tg_report_coverage_json(&t->coverage));
    if (t->n_missing_ranks) {
        /* runs [first, last]: bounded by the results, not by the world
        ** size; each rank listed too while they are few (docs/formats.md) */
        json_t *runs = json_array();
        json_int_t count = 0;
        for (size_t i = 0; i < t->n_missing_ranks; i++) {
            json_int_t lo = (json_int_t)t->missing_ranks[2 * i], hi = (json_int_t)t->missing_ranks[2 * i + 1];
            json_t *run = json_array();
            append(c, run, json_integer(lo));
            append(c, run, json_integer(hi));
            append(c, runs, run);
            count += hi - lo + 1;
        }
        if (count <= TG_MISSING_RANKS_LISTED) {
            json_t *list = json_array();
            for (size_t i = 0; i < t->n_missing_ranks; i++)
                for (int64_t r = t->missing_ranks[2 * i]; r <= t->missing_ranks[2 * i + 1]; r++)
                    append(c, list, json_integer((json_int_t)r));
            put(c, o, "missing_ranks", list);
        }
        put(c, o, "missing_rank_runs", runs);
        put(c, o, "missing_rank_count", json_integer(count));
    }
    if (t->status != TG_OK)
        put(c, o, "error", tg_report_json_str(t->error ? t->error : "trace could not be read"));
    json_t *results = json_array();
    for (size_t i = 0; i < t->n_results; i++) append(c, results, result_json(c, &t->results[i]));
    put(c, o, "results", results);
    return o;
}


/* What each --suppress entry did (docs/suppressions.md). */
static json_t *suppressions_json(jctx *c, const tg_run_result *run)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < run->n_suppressions; i++) {
        const tg_suppression_use *u = &run->suppressions[i];
        json_t *o = json_object();
        put(c, o, "rule", tg_report_json_str(u->rule));
        put(c, o, "reason", tg_report_json_str(u->reason));
        put(c, o, "status", json_string(tg_suppression_status_name(u->status)));
        put(c, o, "matched", json_integer((json_int_t)u->matched));
        if (u->trace) put(c, o, "trace", tg_report_json_str(u->trace));
        if (u->max_count >= 0) put(c, o, "max_count", json_integer(u->max_count));
        if (u->expires) put(c, o, "expires", tg_report_json_str(u->expires));
        put(c, o, "file", tg_report_json_str(u->file));
        put(c, o, "line", json_integer(u->line));
        append(c, arr, o);
    }
    return arr;
}

/* 15 significant digits: exact for every integer-valued double below 1e15
** (11 days in ns) and free of binary noise (0.065, not
** 0.065000000000000002) for the fractions. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

tg_status tg_report_json_dump(json_t *doc, FILE *out)
{
    if (!doc) return TG_EINTERNAL;
    /* 15 significant digits: exact for every integer-valued double below
    ** 1e15 (11 days in ns) and free of binary noise (0.065, not
    ** 0.065000000000000002) for the fractions. */
    int rc = json_dumpf(doc, out, JSON_FLAGS);
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF) return TG_EINTERNAL;
    return TG_OK;
}

/* Write j as the member of an array two levels deep: json_dumpf's bytes
** for it there, its lines indented 4 more (a JSON string holds no raw line
** feed, so every one in the dump starts a line). */
static bool dump_nested(json_t *j, FILE *out)
{
    char *text = json_dumps(j, JSON_FLAGS);
    if (!text) return false;
    bool ok = true;
    for (const char *p = text; ok && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        ok = fwrite("    ", 1, 4, out) == 4 && fwrite(p, 1, n, out) == n;
        p += n;
    }
    free(text);
    return ok;
}

TG_REPORT_WRITER(tg_report_json)
{
    (void)rs;   /* lists no rules */
    /* Streamed, one trace at a time, so that a merge of thousands of ranks
    ** never holds the document besides the result (docs/formats.md,
    ** "merge"); the bytes are those of json_dumpf on the whole document. */
    jctx c = {true};
    json_t *head = json_object();
    put(&c, head, "tool", json_string("tracegate"));
    put(&c, head, "version", tg_report_json_str(opts->tool_version ? opts->tool_version : ""));
    put(&c, head, "schema", json_integer(1));
    /* what judged the run: merge refuses results of different sets */
    if (opts->rules_digest) put(&c, head, "rules_digest", json_string(opts->rules_digest));
    put(&c, head, "status", json_string(tg_run_status(run, opts)));
    if (opts->n_notes) {
        json_t *notes = json_array();
        for (size_t i = 0; i < opts->n_notes; i++) append(&c, notes, tg_report_json_str(opts->notes[i]));
        put(&c, head, "notes", notes);
    }
    if (opts->ranks_not_compared) put(&c, head, "ranks_not_compared", tg_report_json_str(opts->ranks_not_compared));
    char *text = c.ok ? json_dumps(head, JSON_FLAGS) : NULL;
    json_decref(head);
    size_t len = text ? strlen(text) : 0;
    if (!text || len < 2 || strcmp(text + len - 2, "\n}") != 0) {
        free(text);
        return TG_EINTERNAL;
    }
    text[len - 2] = 0;   /* the head without its closing brace */
    bool ok = fprintf(out, "%s,\n  \"traces\": [", text) >= 0;
    free(text);
    for (size_t t = 0; ok && t < run->n_traces; t++) {
        json_t *trace = trace_json(&c, &run->traces[t]);
        ok = c.ok && fputs(t ? ",\n" : "\n", out) != EOF && dump_nested(trace, out);
        json_decref(trace);
    }
    ok = ok && fputs(run->n_traces ? "\n  ]" : "]", out) != EOF;
    if (ok && run->n_suppressions) {
        /* after the traces, as json_dumpf would place the member */
        json_t *sup = suppressions_json(&c, run);
        char *body = c.ok ? json_dumps(sup, JSON_FLAGS) : NULL;
        json_decref(sup);
        ok = body && fputs(",\n  \"suppressions\": ", out) != EOF;
        for (const char *p = body; ok && p && *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
            ok = (p == body || fwrite("  ", 1, 2, out) == 2) && fwrite(p, 1, n, out) == n;
            p += n;
        }
        free(body);
    }
    ok = ok && fputs("\n}\n", out) != EOF;
    return ok ? TG_OK : TG_EINTERNAL;
}
