/*
** Reading JSON results back (the inverse of fmt_json.c), for `tracegate
** merge`: per-rank results written by separate `check` runs are loaded into
** one tg_run_result, so every reporter can render the merged verdict. Only
** the contract of docs/formats.md is read; unknown members are ignored, so
** newer results still merge. Numbers keep their unit through the "units"
** objects beside "values" and evidence "fields".
*/
#include "json_read.h"
#include "../trace/trace.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ interning */

/* Strings read into the run's arena once each: a merge of thousands of
** ranks holds one copy of every title, advice, rule file, value name and
** kernel name, not one per rank (memory bounded by the merged result,
** docs/formats.md "merge"). The set only indexes arena strings; freeing it
** leaves them to the run. */
typedef struct strset {
    const char **slots;
    size_t *lens;
    size_t n_slots, n;
    uint64_t seed;             /* tg_hash_seed: the strings come from the input */
} strset;

typedef struct rd {
    tg_arena *arena;
    strset *set;
} rd;

static bool strset_grow(strset *set)
{
    size_t n_slots = set->n_slots ? set->n_slots * 2 : 1024;
    const char **slots = calloc(n_slots, sizeof *slots);
    size_t *lens = calloc(n_slots, sizeof *lens);
    if (!slots || !lens) {
        free(slots);
        free(lens);
        return false;
    }
    for (size_t i = 0; i < set->n_slots; i++) {
        if (!set->slots[i]) continue;
        size_t j = tg_hash_bytes(set->seed, set->slots[i], set->lens[i]) & (n_slots - 1);
        while (slots[j]) j = (j + 1) & (n_slots - 1);
        slots[j] = set->slots[i];
        lens[j] = set->lens[i];
    }
    free(set->slots);
    free(set->lens);
    set->slots = slots;
    set->lens = lens;
    set->n_slots = n_slots;
    return true;
}

/* The arena copy of s[0..n) (JSON strings may hold NUL: kept whole). */
static const char *intern_n(rd *a, const char *s, size_t n)
{
    strset *set = a->set;
    if (!set) return tg_arena_strndup(a->arena, s, n);
    if ((set->n + 1) * 2 > set->n_slots && !strset_grow(set)) return NULL;
    size_t j = tg_hash_bytes(set->seed, s, n) & (set->n_slots - 1);
    for (; set->slots[j]; j = (j + 1) & (set->n_slots - 1))
        if (set->lens[j] == n && !memcmp(set->slots[j], s, n)) return set->slots[j];
    char *copy = tg_arena_strndup(a->arena, s, n);
    if (!copy) return NULL;
    set->slots[j] = copy;
    set->lens[j] = n;
    set->n++;
    return copy;
}

static const char *intern(rd *a, const char *s)
{
    return intern_n(a, s, strlen(s));
}

static const char *str_of(rd *a, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? intern_n(a, json_string_value(v), json_string_length(v)) : NULL;
}

/* A trace's file for messages. */
static const char *t_name(json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "file"));
    return s ? s : "(unnamed)";
}

static int64_t int_of(json_t *o, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static double num_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static tg_value value_from(rd *a, json_t *v)
{
    if (json_is_boolean(v)) return tg_bool(json_is_true(v));
    if (json_is_integer(v)) return tg_int((int64_t)json_integer_value(v), TG_UNIT_NONE);
    if (json_is_real(v)) return tg_float(json_real_value(v), TG_UNIT_NONE);
    if (json_is_string(v)) return tg_str(intern(a, json_string_value(v)));
    return tg_null();
}

/* Values with their units from the companion "units" object. */
static tg_named_value *values_from(rd *a, json_t *obj, json_t *units, size_t *n)
{
    *n = json_is_object(obj) ? json_object_size(obj) : 0;
    tg_named_value *vals = tg_arena_alloc(a->arena, (*n ? *n : 1) * sizeof *vals);
    if (!vals) return NULL;
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        vals[i].name = intern(a, key);
        vals[i].value = value_from(a, v);
        tg_unit u;
        if (vals[i].value.type == TG_TY_INT || vals[i].value.type == TG_TY_FLOAT)
            if (tg_unit_parse_key(json_string_value(json_object_get(units, key)), &u)) vals[i].value.unit = u;
        i++;
    }
    return vals;
}

static bool contributors_from(rd *a, json_t *arr, tg_baseline_cmp *out)
{
    size_t n = json_array_size(arr), i;
    if (!n) return true;
    out->contributors = tg_arena_alloc(a->arena, n * sizeof *out->contributors);
    if (!out->contributors) return false;
    json_t *e;
    json_array_foreach(arr, i, e) {
        tg_contributor x = {.name = str_of(a, e, "name"), .kind = TG_WORK_NVTX, .then_time = num_of(e, "baseline_ns"),
                            .now_time = num_of(e, "current_ns"), .delta = num_of(e, "delta_ns"),
                            .share = num_of(e, "share"), .then_launches = num_of(e, "baseline_launches"),
                            .now_launches = num_of(e, "current_launches"), .query = str_of(a, e, "query")};
        const char *k = json_string_value(json_object_get(e, "kind")), *s = json_string_value(json_object_get(e, "status"));
        if (!x.name || !tg_work_kind_parse(k, &x.kind) || !tg_contrib_status_parse(s, &x.status))
            continue;     /* not a contributor this reader knows */
        out->contributors[out->n_contributors++] = x;
    }
    return true;
}

static bool baseline_from(rd *a, json_t *b, tg_baseline_cmp *out)
{
    if (!json_is_object(b)) return true;
    out->present = true;
    out->value = num_of(b, "value");
    out->current = num_of(b, "current");
    out->change = num_of(b, "change");
    out->p_value = num_of(b, "p_value");
    out->n_baseline = (size_t)int_of(b, "n_baseline", 0);
    out->n_current = (size_t)int_of(b, "n_current", 0);
    out->regression = json_is_true(json_object_get(b, "regression"));
    out->improvement = json_is_true(json_object_get(b, "improvement"));
    out->outside_band = json_is_true(json_object_get(b, "outside_band"));
    out->band_lo = num_of(b, "band_lo");
    out->band_hi = num_of(b, "band_hi");
    out->inconclusive = json_is_true(json_object_get(b, "inconclusive"));
    out->band_measured = json_is_true(json_object_get(b, "band_measured"));
    out->spread = num_of(b, "spread");
    out->n_runs = (size_t)int_of(b, "n_runs", 0);
    out->workload_match = num_of(b, "workload_match");
    out->busy_then = num_of(b, "gpu_busy_baseline");
    out->busy_now = num_of(b, "gpu_busy_current");
    return contributors_from(a, json_object_get(b, "contributors"), out);
}

static bool evidence_from(rd *a, json_t *arr, tg_rule_result *r)
{
    r->n_evidence = json_array_size(arr);
    if (!r->n_evidence) return true;
    r->evidence = tg_arena_alloc(a->arena, r->n_evidence * sizeof *r->evidence);
    if (!r->evidence) return false;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        tg_evidence *ev = &r->evidence[i];
        ev->table = str_of(a, e, "table");
        ev->rowid = int_of(e, "rowid", -1);
        ev->start = int_of(e, "start", TG_NULL_I64);
        ev->end = int_of(e, "end", TG_NULL_I64);
        ev->interval = TG_INTERVAL_ROW;
        tg_interval_parse(json_string_value(json_object_get(e, "interval")), &ev->interval);
        ev->row_start = int_of(e, "row_start", TG_NULL_I64);
        ev->row_end = int_of(e, "row_end", TG_NULL_I64);
        ev->row = -1;              /* the model is not at hand */
        ev->fields = values_from(a, json_object_get(e, "fields"), json_object_get(e, "units"), &ev->n_fields);
        /* the row after a gap, the last op of a device: fields of their own */
        const char *links[][2] = {{"next_table", "next_rowid"}, {"last_table", "last_rowid"}};
        ev->next_table = NULL;
        ev->next_rowid = -1;
        for (int k = 0; k < 2; k++) {
            json_t *f = json_object_get(e, "fields");
            json_t *t = json_object_get(f, links[k][0]), *id = json_object_get(f, links[k][1]);
            if (json_is_string(t) && json_is_integer(id)) {
                ev->next_table = str_of(a, f, links[k][0]);
                ev->next_rowid = json_integer_value(id);
            }
        }
    }
    return true;
}

/* A cause's items (fmt_json.c's cause_item_json): every key optional. */
static tg_cause_item *cause_items_from(rd *a, json_t *arr, tg_cause_kind kind, size_t *n)
{
    *n = json_array_size(arr);
    tg_cause_item *items = tg_arena_alloc(a->arena, (*n ? *n : 1) * sizeof *items);
    if (!items) return NULL;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        tg_cause_item *it = &items[i];
        it->source = kind == TG_CAUSE_HOST ? str_of(a, e, "source") : kind == TG_CAUSE_CALL_SITE ? "call_site" : "kernel";
        it->name = str_of(a, e, kind == TG_CAUSE_CALL_SITE ? "call_site" : "name");
        it->module = kind == TG_CAUSE_CALL_SITE ? str_of(a, e, "call_module") : NULL;
        it->thread = str_of(a, e, "thread");
        it->tid = int_of(e, "tid", -1);
        it->launch_thread = json_is_true(json_object_get(e, "launch_thread"));
        it->count = int_of(e, "count", 0);
        it->time = num_of(e, kind == TG_CAUSE_LAUNCH ? "kernel_time_ns" : "time_ns");
        it->launch_time = num_of(e, "launch_time_ns");
        it->share = num_of(e, "share");
        if (kind == TG_CAUSE_HOST) {
            it->call_site = str_of(a, e, "call_site");
            it->call_module = str_of(a, e, "call_module");
        }
        it->table = str_of(a, e, "table");
        json_t *ids = json_object_get(e, "rowids"), *stack = json_object_get(e, "stack");
        it->rowids = tg_arena_alloc(a->arena, (json_array_size(ids) + 1) * sizeof *it->rowids);
        it->stack = tg_arena_alloc(a->arena, (json_array_size(stack) + 1) * sizeof *it->stack);
        if (!it->rowids || !it->stack) return NULL;
        size_t k;
        json_t *x;
        json_array_foreach(ids, k, x)
            if (json_is_integer(x)) it->rowids[it->n_rowids++] = (int64_t)json_integer_value(x);
        json_array_foreach(stack, k, x)
            if (json_is_string(x)) it->stack[it->n_stack++] = intern(a, json_string_value(x));
    }
    return items;
}

/* `cause` (docs/host.md), so that merge writes it again; a kind this
** reader does not know is left out. */
static bool cause_from(rd *a, json_t *o, tg_rule_result *r)
{
    tg_cause_kind kind;
    if (!json_is_object(o) || !tg_cause_parse(json_string_value(json_object_get(o, "kind")), &kind) ||
        kind == TG_CAUSE_NONE)
        return true;
    tg_cause *c = tg_arena_alloc(a->arena, sizeof *c);
    if (!c) return false;
    c->kind = kind;
    c->summary = str_of(a, o, "summary");
    c->reproduce = str_of(a, o, "reproduce");
    json_t *unknown = json_object_get(o, "unknown"), *x;
    c->unknown = tg_arena_alloc(a->arena, (json_array_size(unknown) + 1) * sizeof *c->unknown);
    if (!c->unknown) return false;
    size_t i;
    json_array_foreach(unknown, i, x)
        if (json_is_string(x)) c->unknown[c->n_unknown++] = intern(a, json_string_value(x));
    if (kind == TG_CAUSE_HOST) {
        json_t *wins = json_object_get(o, "windows");
        c->windows = tg_arena_alloc(a->arena, (json_array_size(wins) + 1) * sizeof *c->windows);
        if (!c->windows) return false;
        json_array_foreach(wins, i, x) {
            tg_cause_window *w = &c->windows[c->n_windows++];
            w->evidence = (size_t)int_of(x, "evidence", 0);
            w->pid = int_of(x, "pid", -1);
            w->start = int_of(x, "start", TG_NULL_I64);
            w->end = int_of(x, "end", TG_NULL_I64);
            w->accounted = int_of(x, "accounted_ns", 0);
            if (!(w->items = cause_items_from(a, json_object_get(x, "activity"), kind, &w->n_items))) return false;
        }
    } else {
        json_t *list = json_object_get(o, kind == TG_CAUSE_CALL_SITE ? "sites" : "kernels");
        if (!(c->items = cause_items_from(a, list, kind, &c->n_items))) return false;
    }
    r->cause = c;
    return true;
}

static bool result_from(rd *a, json_t *o, tg_rule_result *r, const char *file, tg_diag *diag)
{
    r->rule = str_of(a, o, "rule");
    const char *sev = json_string_value(json_object_get(o, "severity"));
    const char *st = json_string_value(json_object_get(o, "status"));
    if (!r->rule || !tg_severity_parse(sev, &r->severity) || !tg_verdict_parse(st, &r->verdict)) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "a result lacks its rule, severity or status: not a tracegate result");
        return false;
    }
    r->title = str_of(a, o, "title");
    r->count = int_of(o, "count", TG_NULL_I64);
    r->message = str_of(a, o, "message");
    r->advice = str_of(a, o, "advice");
    r->reproduce = str_of(a, o, "reproduce");
    r->metric = str_of(a, o, "metric");
    r->metric_value = num_of(o, "metric_value");
    const char *unit = json_string_value(json_object_get(o, "metric_unit"));
    const char *dir = json_string_value(json_object_get(o, "regression"));
    if ((unit && !tg_unit_parse_key(unit, &r->metric_unit)) ||
        (dir && strcmp(dir, "higher_is_worse") && strcmp(dir, "lower_is_worse"))) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "result '%s' has metric_unit '%s' or regression '%s', which this tracegate does not know: "
                    "merge results of one tracegate version", r->rule, unit ? unit : "", dir ? dir : "");
        return false;
    }
    r->regression = !dir ? 0 : !strcmp(dir, "higher_is_worse") ? 1 : -1;
    r->missing_data = json_is_true(json_object_get(o, "missing_data"));
    r->untimed = str_of(a, o, "untimed");
    json_t *sup = json_object_get(o, "suppressed");   /* a rank's suppression stays */
    r->suppressed = str_of(a, sup, "reason");
    r->suppressed_at = str_of(a, sup, "at");
    const char *ek = json_string_value(json_object_get(o, "error_kind"));
    r->error_status = !ek ? TG_OK : !strcmp(ek, "data") ? TG_ETRACE : !strcmp(ek, "mismatch") ? TG_EUSAGE : TG_EINTERNAL;
    json_t *loc = json_object_get(o, "location");
    r->rule_file = str_of(a, loc, "file");
    r->rule_line = (int)int_of(loc, "line", 0);
    r->values = values_from(a, json_object_get(o, "values"), json_object_get(o, "units"), &r->n_values);
    json_t *b = json_object_get(o, "baseline");
    if (!baseline_from(a, b, &r->baseline)) return false;
    /* results written before `regression` was: a baseline marks the rule */
    if (!r->regression && r->baseline.present) r->regression = 1;
    return r->values && evidence_from(a, json_object_get(o, "evidence"), r) &&
           cause_from(a, json_object_get(o, "cause"), r);
}

/* rank, world_size, job, host, pids (fmt_json.c's origin_json): null or
** absent is unknown; a value of another kind is not a result's. */
static bool origin_from(rd *a, json_t *o, tg_origin *og, const char *file, tg_diag *diag)
{
    *og = (tg_origin){.rank = -1, .world_size = -1};
    json_t *rank = json_object_get(o, "rank"), *size = json_object_get(o, "world_size");
    json_t *job = json_object_get(o, "job"), *host = json_object_get(o, "host"), *pids = json_object_get(o, "pids");
    bool ok = (!rank || json_is_null(rank) || (json_is_integer(rank) && json_integer_value(rank) >= 0 &&
                                               json_integer_value(rank) <= INT32_MAX)) &&
              (!size || json_is_null(size) || (json_is_integer(size) && json_integer_value(size) > 0 &&
                                               json_integer_value(size) <= INT32_MAX)) &&
              (!job || json_is_null(job) || json_is_string(job)) && (!host || json_is_null(host) || json_is_string(host)) &&
              (!pids || json_is_array(pids));
    if (!ok) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "trace %s: rank, world_size, job, host or pids is not what tracegate writes (a rank is an "
                    "integer from 0, a world size one from 1, job and host strings, pids a list)",
                    t_name(o));
        return false;
    }
    if (json_is_integer(rank)) {
        og->rank = (int64_t)json_integer_value(rank);
        og->rank_from = str_of(a, o, "rank_from");
        if (!og->rank_from) og->rank_from = "result";
    }
    if (json_is_integer(size)) og->world_size = (int64_t)json_integer_value(size);
    og->job = str_of(a, o, "job");
    og->host = str_of(a, o, "host");
    size_t n = json_array_size(pids), i;
    og->pids = tg_arena_alloc(a->arena, (n ? n : 1) * sizeof *og->pids);
    if (!og->pids) return false;
    json_t *p;
    json_array_foreach(pids, i, p) {
        if (json_is_integer(p) && json_integer_value(p) >= 0 && json_integer_value(p) <= INT32_MAX)
            og->pids[og->n_pids++] = (int32_t)json_integer_value(p);
    }
    return true;
}

/* A list of fmt_json.c's work_list_json; entries this reader does not
** know (no name) are skipped. */
static bool work_list_from(rd *a, json_t *arr, tg_work_entry **out, size_t *n)
{
    *n = 0;
    *out = tg_arena_alloc(a->arena, (json_array_size(arr) ? json_array_size(arr) : 1) * sizeof **out);
    if (!*out) return false;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        tg_work_entry w = {.name = str_of(a, e, "name"), .count = int_of(e, "count", 0),
                           .total = num_of(e, "total_ns"), .time = num_of(e, "time_ns"),
                           .launches = num_of(e, "launches")};
        if (w.name && tg_work_kind_parse(json_string_value(json_object_get(e, "kind")), &w.kind))
            (*out)[(*n)++] = w;
    }
    return true;
}

/* The ranks member (fmt_json.c's ranks_json): a trace holding several
** ranks, which merge compares one by one (docs/formats.md, "merge"). */
static bool ranks_from(rd *a, json_t *arr, tg_trace_result *t)
{
    size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
    if (!n) return true;
    t->ranks = tg_arena_alloc(a->arena, n * sizeof *t->ranks);
    if (!t->ranks) return false;
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        if (!json_is_object(o)) continue;
        t->ranks[t->n_ranks++] = (tg_rank_result){
            .rank = int_of(o, "rank", -1), .pid = (int32_t)int_of(o, "pid", -1),
            .device = (int32_t)int_of(o, "device", -1), .n_devices = (int32_t)int_of(o, "devices", 1),
            .steady_iterations = int_of(o, "steady_iterations", 0), .period = num_of(o, "period_p50_ns"),
            .gpu_time = num_of(o, "gpu_time_p50_ns"), .idle_frac = num_of(o, "idle_frac"),
            .idle = num_of(o, "idle_ns"), .period_query = str_of(a, o, "period_p50_query"),
            .gpu_time_query = str_of(a, o, "gpu_time_p50_query"), .idle_query = str_of(a, o, "idle_frac_query")};
    }
    return true;
}

/* The workload member (fmt_json.c's workload_json), NULL when absent. */
static bool workload_from(rd *a, json_t *o, tg_workload **out)
{
    *out = NULL;
    if (!json_is_object(o)) return true;
    tg_workload *w = tg_arena_alloc(a->arena, sizeof *w);
    if (!w) return false;
    *w = (tg_workload){.steady_iterations = int_of(o, "steady_iterations", 0), .gpu_time = num_of(o, "gpu_time_ns"),
                       .period = num_of(o, "period_p50_ns"), .idle = num_of(o, "idle_ns"),
                       .total = num_of(o, "total_ns")};
    json_t *q = json_object_get(o, "sql");
    if (json_is_object(q)) {
        w->sql_steady = str_of(a, q, "steady");
        w->table_kernel = str_of(a, q, "kernel");
        w->table_memcpy = str_of(a, q, "memcpy");
        w->table_memset = str_of(a, q, "memset");
        w->table_runtime = str_of(a, q, "runtime");
        w->table_nvtx = str_of(a, q, "nvtx");
    }
    if (!work_list_from(a, json_object_get(o, "ops"), &w->ops, &w->n_ops) ||
        !work_list_from(a, json_object_get(o, "ranges"), &w->ranges, &w->n_ranges))
        return false;
    *out = w;
    return true;
}

/* The format a trace was in (engine/trace/trace.h's names): absent in a
** result written before it was recorded, of an export then; a name
** tracegate does not know is refused rather than read as an export. */
static bool format_from(json_t *o, tg_trace_result *t, const char *file, tg_diag *diag)
{
    json_t *v = json_object_get(o, "trace_format");
    if (!v || json_is_null(v)) return true;
    const tg_trace_format_def *f = json_is_string(v) ? tg_trace_format_of(json_string_value(v)) : NULL;
    if (!f) {
        const char *names[TG_FORMAT_COUNT + 1] = {0};
        for (size_t i = 0; i < TG_FORMAT_COUNT; i++) names[i] = tg_trace_format_names[i];
        char known[128];
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "trace %s: trace_format is not a format tracegate reads (%s)", t_name(o),
                    tg_vocab_join(names, known, sizeof known));
        return false;
    }
    t->trace_format = f->name;
    return true;
}

static bool trace_from(rd *a, json_t *o, tg_trace_result *t, const char *file, tg_diag *diag)
{
    t->file = str_of(a, o, "file");
    t->nsys_version = str_of(a, o, "nsys_version");
    t->schema_version = str_of(a, o, "schema_version");
    if (!format_from(o, t, file, diag)) return false;
    json_t *gpus = json_object_get(o, "gpus");
    if (json_array_size(gpus)) {
        char buf[1024] = "";
        size_t len = 0, i;
        json_t *g;
        json_array_foreach(gpus, i, g) {
            if (!json_is_string(g)) continue;   /* a hand-edited result: not a name */
            int n = snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", json_string_value(g));
            if (n < 0 || (size_t)n >= sizeof buf - len) break;
            len += (size_t)n;
        }
        t->gpu_names = intern(a, buf);
    }
    t->iteration_marker = str_of(a, o, "iteration_marker");
    t->read_origin = int_of(json_object_get(o, "coverage"), "run_first_ns", TG_NULL_I64);
    t->read_origin_set = t->read_origin != TG_NULL_I64;
    if (!origin_from(a, o, &t->origin, file, diag) || !workload_from(a, json_object_get(o, "workload"), &t->workload) ||
        !ranks_from(a, json_object_get(o, "ranks"), t))
        return false;
    t->error = str_of(a, o, "error");
    t->status = t->error ? TG_ETRACE : TG_OK;
    json_t *results = json_object_get(o, "results");
    if (!json_is_object(o) || (!t->error && json_array_size(results) == 0)) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "trace %s has no rule results and no error: not a tracegate result (a trace judged by "
                    "no rule cannot pass a merge)", t->file ? t->file : "(unnamed)");
        return false;
    }
    t->results = tg_arena_alloc(a->arena, (json_array_size(results) + 1) * sizeof *t->results); /* +1: merge may add one */
    if (!t->results) return false;
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        /* the results a merge adds are recomputed by every merge, not read
        ** back (a merged result merged again would judge a rank twice) */
        const char *rule = json_string_value(json_object_get(r, "rule"));
        if (rule && !strcmp(rule, TG_MERGE_RULE_STRAGGLER)) continue;
        if (!result_from(a, r, &t->results[t->n_results++], file, diag)) return false;
    }
    if (!t->error && t->n_results == 0) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "trace %s has only the results a merge adds: not a tracegate result", t->file ? t->file : "(unnamed)");
        return false;
    }
    return true;
}

/* An input already read: its bytes' length and hash, and the file, so
** the same result given twice (one file under two names, or a copy) is
** refused (docs/formats.md, "merge"). */
typedef struct seen_doc {
    size_t len;
    uint64_t hash;
    bool file;                 /* a regular file: dev and ino are its */
    dev_t dev;
    ino_t ino;
    const char *path;          /* interned */
} seen_doc;

/* What judged one document's traces (its version and rules_digest, NULL
** when absent) and which traces of the run it gave. */
typedef struct doc_rules {
    const char *version, *digest;   /* interned */
    size_t first, n;
} doc_rules;

struct tg_merge {
    tg_run_result *run;
    doc_rules *docs;
    size_t n_docs, cap_docs;
    size_t cap;                /* run->traces' room, grown by doubling */
    strset set;
    seen_doc *seen;
    size_t n_seen;
    size_t *slots;             /* open addressing over seen: index + 1, 0 free */
    size_t n_slots;
};

tg_merge *tg_merge_new(tg_run_result *run)
{
    tg_merge *m = calloc(1, sizeof *m);
    if (m) {
        m->run = run;
        m->cap = run->n_traces;
        m->set.seed = tg_hash_seed();
    }
    return m;
}

void tg_merge_free(tg_merge *m)
{
    if (!m) return;
    free(m->set.slots);
    free(m->set.lens);
    free(m->seen);
    free(m->slots);
    free(m->docs);
    free(m);
}

/* Room for `more` traces; the old array stays in the arena (a doubling
** leaves at most as much behind as it holds). */
static bool reserve(tg_merge *m, size_t more)
{
    tg_run_result *run = m->run;
    if (run->n_traces + more <= m->cap) return true;
    size_t cap = m->cap ? m->cap * 2 : 16;
    while (cap < run->n_traces + more) cap *= 2;
    tg_trace_result *all = tg_arena_alloc(run->arena, cap * sizeof *all);
    if (!all) return false;
    if (run->n_traces) memcpy(all, run->traces, run->n_traces * sizeof *all);
    run->traces = all;
    m->cap = cap;
    return true;
}

/* A merge's own entry for ranks without a result (merge.c): recomputed by
** every merge, never read back, as its rank-straggler results are not. */
static bool merge_made(json_t *trace)
{
    return json_object_get(trace, "missing_ranks") || json_object_get(trace, "missing_rank_runs");
}

/* What a file of this mode is, for the sentence refusing it. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* The bytes of the file at path, read whole (json_load_file reads with a
** getc per byte, a tenth of a merge's time); NULL with *why (static text
** or strerror) when it cannot be read. A result is a regular file: it is
** opened without blocking (a FIFO without a writer would hold merge
** forever) and refused when it is anything else (docs/formats.md, "merge"). */
static char *slurp(const char *path, size_t *len, struct stat *sb, const char **why)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        struct stat lsb;
        *why = errno == ENOENT && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)
             ? "a symbolic link to nothing (its target does not exist)" : strerror(errno);
        return NULL;
    }
    bool stated = fstat(fd, sb) == 0;
    if (!stated || !S_ISREG(sb->st_mode)) {
        *why = !stated ? strerror(errno) : file_kind(sb->st_mode);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        *why = strerror(errno);
        close(fd);
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n;
    bool ok = true;
    do {
        if (*len == cap) {
            char *more = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!more) {
                ok = false;
                break;
            }
            buf = more;
        }
        n = fread(buf + *len, 1, cap - *len, f);
        *len += n;
    } while (n > 0);
    int err = ferror(f) ? (errno ? errno : EIO) : ok ? 0 : ENOMEM;
    fclose(f);
    if (err) {
        free(buf);
        *why = strerror(err);
        return NULL;
    }
    return buf;
}

/* Whether the file at path holds exactly buf[0..len). */
static bool same_bytes(const char *path, const char *buf, size_t len)
{
    size_t n;
    struct stat sb;
    const char *why;
    char *other = slurp(path, &n, &sb, &why);
    bool same = other && n == len && !memcmp(other, buf, len);
    free(other);
    return same;
}

static bool seen_grow(tg_merge *m)
{
    size_t n_slots = m->n_slots ? m->n_slots * 2 : 1024;
    size_t *slots = calloc(n_slots, sizeof *slots);
    seen_doc *seen = realloc(m->seen, n_slots / 2 * sizeof *seen);
    if (!slots || !seen) {
        free(slots);
        if (seen) m->seen = seen;
        return false;
    }
    m->seen = seen;
    for (size_t i = 0; i < m->n_seen; i++) {
        size_t j = seen[i].hash & (n_slots - 1);
        while (slots[j]) j = (j + 1) & (n_slots - 1);
        slots[j] = i + 1;
    }
    free(m->slots);
    m->slots = slots;
    m->n_slots = n_slots;
    return true;
}

/* Refuse an input read before, under another name or as a copy: its
** traces would count twice (two ranks, two votes for the median), and
** results without a rank have nothing else that tells them apart.
** TG_EUSAGE with the diag, TG_EINTERNAL out of memory. */
static tg_status seen_check(tg_merge *m, const char *path, const char *buf, size_t len, const struct stat *sb,
                            tg_diag *diag)
{
    if ((m->n_seen + 1) * 2 > m->n_slots && !seen_grow(m)) return TG_EINTERNAL;
    seen_doc d = {.len = len, .hash = tg_hash_bytes(m->set.seed, buf, len), .file = S_ISREG(sb->st_mode),
                  .dev = sb->st_dev, .ino = sb->st_ino};
    size_t j = d.hash & (m->n_slots - 1);
    for (; m->slots[j]; j = (j + 1) & (m->n_slots - 1)) {
        const seen_doc *o = &m->seen[m->slots[j] - 1];
        if (o->len != len || o->hash != d.hash) continue;
        if (d.file && o->file && o->dev == d.dev && o->ino == d.ino) {
            tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                        "the same file as %s, given twice: give merge each result once (its traces would "
                        "count twice)", o->path);
            return TG_EUSAGE;
        }
        if (same_bytes(o->path, buf, len)) {
            tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                        "byte-identical to %s: the same result twice (a copy); give merge each result once "
                        "(its traces would count twice)", o->path);
            return TG_EUSAGE;
        }
    }
    rd a = {.arena = m->run->arena, .set = &m->set};
    d.path = intern(&a, path);
    if (!d.path) return TG_EINTERNAL;
    m->seen[m->n_seen++] = d;
    m->slots[j] = m->n_seen;
    return TG_OK;
}

/* The document at path, parsed; refused when read before (seen_check). */
static json_t *load_doc(tg_merge *m, const char *path, json_error_t *err, tg_diag *diag, tg_status *st)
{
    size_t len;
    struct stat sb;
    const char *why = NULL;
    char *buf = slurp(path, &len, &sb, &why);
    if (!buf) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "cannot read the result: %s (a result is a readable regular file)", why ? why : "unreadable");
        *st = TG_EUSAGE;
        return NULL;
    }
    *st = seen_check(m, path, buf, len, &sb, diag);
    json_t *doc = *st == TG_OK ? json_loadb(buf, len, 0, err) : NULL;
    free(buf);
    return doc;
}

tg_status tg_merge_read(tg_merge *m, const char *path, tg_diag *diag)
{
    json_error_t err;
    tg_status seen = TG_OK;
    json_t *doc = load_doc(m, path, &err, diag, &seen);
    if (seen != TG_OK) return seen;
    if (!doc) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path, .line = err.line, .col = err.column},
                    NULL, "not a JSON document: %s", err.text);
        return TG_EUSAGE;
    }
    json_t *traces = json_object_get(doc, "traces");
    const char *tool = json_string_value(json_object_get(doc, "tool"));
    if (!tool || strcmp(tool, "tracegate") != 0 || !json_is_array(traces) ||
        json_integer_value(json_object_get(doc, "schema")) != 1) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "not a tracegate JSON result of schema 1 (write it with `tracegate check --format json`)");
        json_decref(doc);
        return TG_EUSAGE;
    }
    size_t n = json_array_size(traces);
    if (n == 0) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = path}, NULL,
                    "holds no traces: a result that judged nothing cannot pass a merge");
        json_decref(doc);
        return TG_EUSAGE;
    }
    tg_run_result *run = m->run;
    rd a = {.arena = run->arena, .set = &m->set};
    const char *source = intern(&a, path);
    if (!source || !reserve(m, n)) {
        json_decref(doc);
        return TG_EINTERNAL;
    }
    tg_status st = TG_OK;
    size_t added = 0;
    for (size_t i = 0; i < n && st == TG_OK; i++) {
        json_t *o = json_array_get(traces, i);
        if (merge_made(o)) continue;
        tg_trace_result *t = &run->traces[run->n_traces + added];
        memset(t, 0, sizeof *t);
        if (!trace_from(&a, o, t, path, diag)) st = diag->n_errors ? TG_EUSAGE : TG_EINTERNAL;
        t->source = source;
        added++;
    }
    if (st == TG_OK && added) {
        doc_rules d = {.version = str_of(&a, doc, "version"), .digest = str_of(&a, doc, "rules_digest"),
                       .first = run->n_traces, .n = added};
        if (!TG_PUSH(m->docs, m->n_docs, m->cap_docs, d)) st = TG_EINTERNAL;
    }
    if (st == TG_OK) run->n_traces += added;
    json_decref(doc);
    return st;
}

size_t tg_merge_n_docs(const tg_merge *m)
{
    return m->n_docs;
}

void tg_merge_doc(const tg_merge *m, size_t i, const char **version, const char **digest, size_t *first, size_t *n)
{
    *version = m->docs[i].version;
    *digest = m->docs[i].digest;
    *first = m->docs[i].first;
    *n = m->docs[i].n;
}

tg_status tg_result_read_json(const char *path, tg_run_result *run, tg_diag *diag)
{
    tg_merge *m = tg_merge_new(run);
    if (!m) return TG_EINTERNAL;
    tg_status st = tg_merge_read(m, path, diag);
    tg_merge_free(m);
    return st;
}
