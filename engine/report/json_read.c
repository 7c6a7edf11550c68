/*
** Reading JSON results back (the inverse of fmt_json.c), for `tracegate
** merge`: per-rank results written by separate `check` runs are loaded into
** one tg_run_result, so every reporter can render the merged verdict. Only
** the contract of docs/formats.md is read; unknown members are ignored, so
** newer results still merge. Numbers keep their unit through the "units"
** objects beside "values" and evidence "fields".
*/
#include "json_read.h"

#include <math.h>
#include <string.h>

static const char *str_of(tg_arena *a, json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? tg_arena_strdup(a, s) : NULL;
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

static tg_value value_from(tg_arena *a, json_t *v)
{
    if (json_is_boolean(v)) return tg_bool(json_is_true(v));
    if (json_is_integer(v)) return tg_int((int64_t)json_integer_value(v), TG_UNIT_NONE);
    if (json_is_real(v)) return tg_float(json_real_value(v), TG_UNIT_NONE);
    if (json_is_string(v)) return tg_str(tg_arena_strdup(a, json_string_value(v)));
    return tg_null();
}

/* Values with their units from the companion "units" object. */
static tg_named_value *values_from(tg_arena *a, json_t *obj, json_t *units, size_t *n)
{
    *n = json_is_object(obj) ? json_object_size(obj) : 0;
    tg_named_value *vals = tg_arena_alloc(a, (*n ? *n : 1) * sizeof *vals);
    if (!vals) return NULL;
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        vals[i].name = tg_arena_strdup(a, key);
        vals[i].value = value_from(a, v);
        tg_unit u;
        if (vals[i].value.type == TG_TY_INT || vals[i].value.type == TG_TY_FLOAT)
            if (tg_unit_parse_key(json_string_value(json_object_get(units, key)), &u)) vals[i].value.unit = u;
        i++;
    }
    return vals;
}

static bool contributors_from(tg_arena *a, json_t *arr, tg_baseline_cmp *out)
{
    size_t n = json_array_size(arr), i;
    if (!n) return true;
    out->contributors = tg_arena_alloc(a, n * sizeof *out->contributors);
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

static bool baseline_from(tg_arena *a, json_t *b, tg_baseline_cmp *out)
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

static bool evidence_from(tg_arena *a, json_t *arr, tg_rule_result *r)
{
    r->n_evidence = json_array_size(arr);
    if (!r->n_evidence) return true;
    r->evidence = tg_arena_alloc(a, r->n_evidence * sizeof *r->evidence);
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

static bool result_from(tg_arena *a, json_t *o, tg_rule_result *r, const char *file, tg_diag *diag)
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
    return r->values && evidence_from(a, json_object_get(o, "evidence"), r);
}

static bool trace_from(tg_arena *a, json_t *o, tg_trace_result *t, const char *file, tg_diag *diag)
{
    t->file = str_of(a, o, "file");
    t->nsys_version = str_of(a, o, "nsys_version");
    t->schema_version = str_of(a, o, "schema_version");
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
        t->gpu_names = tg_arena_strdup(a, buf);
    }
    t->iteration_marker = str_of(a, o, "iteration_marker");
    t->error = str_of(a, o, "error");
    t->status = t->error ? TG_ETRACE : TG_OK;
    json_t *results = json_object_get(o, "results");
    if (!json_is_object(o) || (!t->error && json_array_size(results) == 0)) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = file}, NULL,
                    "trace %s has no rule results and no error: not a tracegate result (a trace judged by "
                    "no rule cannot pass a merge)", t->file ? t->file : "(unnamed)");
        return false;
    }
    t->n_results = json_array_size(results);
    t->results = tg_arena_alloc(a, (t->n_results + 1) * sizeof *t->results); /* +1: merge may add one */
    if (!t->results) return false;
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        if (!result_from(a, r, &t->results[i], file, diag)) return false;
    }
    return true;
}

tg_status tg_result_read_json(const char *path, tg_run_result *run, tg_diag *diag)
{
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
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
    tg_trace_result *all = tg_arena_alloc(run->arena, (run->n_traces + n + 1) * sizeof *all);
    if (!all) {
        json_decref(doc);
        return TG_EINTERNAL;
    }
    if (run->n_traces) memcpy(all, run->traces, run->n_traces * sizeof *all);
    tg_status st = TG_OK;
    for (size_t i = 0; i < n && st == TG_OK; i++)
        if (!trace_from(run->arena, json_array_get(traces, i), &all[run->n_traces + i], path, diag))
            st = diag->n_errors ? TG_EUSAGE : TG_EINTERNAL;
    if (st == TG_OK) {
        run->traces = all;
        run->n_traces += n;
    }
    json_decref(doc);
    return st;
}
