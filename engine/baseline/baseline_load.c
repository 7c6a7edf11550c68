/*
** Reading a baseline file (written by baseline_write.c) with the one YAML
** reader (common/yaml.h), under a baseline's limits. The layout is
** documented in baselines/README.md.
**
** Strict about what matters (types, one value per recorded run, median and
** MAD consistent with the per-run values, a format version this build
** understands) and lenient about the rest: unknown keys are warnings, so a
** newer tracegate can add fields. Every problem is one sentence with
** file:line:col and the offending line, status TG_EUSAGE.
*/
#include "baseline.h"
#include "../common/stats.h"
#include "../common/yaml.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits on a baseline file: it is input a CI job reads. Baselines that
** tracegate writes are far below every one. */
#define BASELINE_MAX_FILE (64u * 1024 * 1024)
static const tg_yaml_limits baseline_limits = {
    .what = "baseline", .max_scalar = 64u * 1024, .max_depth = 64,
    .max_nodes = 4000000, .max_expanded = 4000000, .one_document = true,
};

typedef struct loader {
    const char *name;
    const tg_src *src;
    tg_diag *diag;
    tg_baseline *b;
    int errors;
} loader;

static void report_at(loader *L, tg_diag_level level, tg_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report_at(loader *L, tg_diag_level level, tg_pos pos, const char *fmt, ...)
{
    char *line = tg_src_line(L->src, pos.line);
    va_list ap;
    va_start(ap, fmt);
    tg_diag_vadd(L->diag, level, level == TG_DIAG_ERROR ? TG_EUSAGE : TG_OK, pos, line, fmt, ap);
    va_end(ap);
    free(line);
    if (level == TG_DIAG_ERROR) L->errors++;
}

#define LOAD_ERROR(L, node, ...) report_at((L), TG_DIAG_ERROR, (node)->pos, __VA_ARGS__)

static const char *scalar(const tg_ynode *n)
{
    return n->kind == TG_Y_SCALAR ? n->value : NULL;
}

/* A string or null (*out NULL). */
static bool get_str(loader *L, const tg_ynode *n, const char *what, const char **out)
{
    if (tg_ynode_is_null(n)) {
        *out = NULL;
        return true;
    }
    if (n->kind != TG_Y_SCALAR) {
        LOAD_ERROR(L, n, "%s must be a string, not %s", what, tg_ynode_kind_name(n));
        return false;
    }
    *out = tg_arena_strdup(L->b->arena, scalar(n));
    return *out != NULL;
}

/* A finite number; null gives NaN when allow_null. No field of a
** baseline is ever infinite (the recorder writes a missing run value as
** null), so .inf and overflowing literals (1e400) are refused; a value
** too small for a double reads as the nearest one (strtod's ERANGE on
** underflow), as the writer's shortest form of a subnormal must. */
static bool get_num(loader *L, const tg_ynode *n, const char *what, bool allow_null, double *out)
{
    if (allow_null && tg_ynode_is_null(n)) {
        *out = NAN;
        return true;
    }
    const char *s = scalar(n);
    if (s && n->style == TG_YS_PLAIN) {
        char *end;
        double v = strtod(s, &end);
        if (*s && !*end && isfinite(v)) {
            *out = v;
            return true;
        }
    }
    if (s)
        LOAD_ERROR(L, n, "%s must be a finite number%s, not '%s'", what, allow_null ? " or null" : "", s);
    else
        LOAD_ERROR(L, n, "%s must be a finite number%s, not %s", what, allow_null ? " or null" : "",
                   tg_ynode_kind_name(n));
    return false;
}

static bool get_count(loader *L, const tg_ynode *n, const char *what, size_t *out)
{
    double v;
    if (!get_num(L, n, what, false, &v)) return false;
    if (v < 0 || v != floor(v) || v > 1e15) {
        LOAD_ERROR(L, n, "%s must be a whole number >= 0, not %s", what, scalar(n));
        return false;
    }
    *out = (size_t)v;
    return true;
}

/* A flow or block list of numbers into arena memory. */
static bool get_numbers(loader *L, const tg_ynode *n, const char *what, bool allow_null,
                        double **out, size_t *count)
{
    if (n->kind != TG_Y_SEQ) {
        LOAD_ERROR(L, n, "%s must be a list of numbers, not %s", what, tg_ynode_kind_name(n));
        return false;
    }
    size_t len = n->n;
    *out = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof **out);
    *count = len;
    if (!*out) return false;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        const tg_ynode *item = n->items[i];
        if (!get_num(L, item, what, allow_null, &(*out)[i])) ok = false;
    }
    return ok;
}

/* Iterate over a mapping's pairs with duplicate-key detection. */
typedef bool (*pair_fn)(loader *L, const char *key, const tg_ynode *knode, const tg_ynode *value,
                        void *ctx);

static bool each_pair(loader *L, const tg_ynode *map, const char *what, pair_fn fn, void *ctx)
{
    if (map->kind != TG_Y_MAP) {
        LOAD_ERROR(L, map, "%s must be a mapping, not %s", what, tg_ynode_kind_name(map));
        return false;
    }
    long dup = tg_ymap_duplicate(map);
    if (dup >= 0) {
        LOAD_ERROR(L, map->items[dup], "duplicate key '%s' in %s", map->items[dup]->value, what);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < map->n; i++) {
        const tg_ynode *k = map->items[i], *v = map->vals[i];
        const char *key = scalar(k);
        if (!key) {
            LOAD_ERROR(L, k, "keys of %s must be plain names", what);
            ok = false;
            continue;
        }
        if (!fn(L, key, k, v, ctx)) ok = false;
    }
    return ok;
}

static void unknown_key(loader *L, const tg_ynode *k, const char *key, const char *what)
{
    report_at(L, TG_DIAG_WARNING, k->pos, "unknown key '%s' in %s is ignored", key, what);
}

/* ------------------------------------------------------------ the runs */

static bool run_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    tg_baseline_run *r = ctx;
    if (!strcmp(key, "trace")) return get_str(L, v, "runs[].trace", &r->trace);
    if (!strcmp(key, "nsys_version")) return get_str(L, v, "runs[].nsys_version", &r->nsys_version);
    if (!strcmp(key, "schema_version"))
        return get_str(L, v, "runs[].schema_version", &r->schema_version);
    if (!strcmp(key, "gpu_names")) return get_str(L, v, "runs[].gpu_names", &r->gpu_names);
    if (!strcmp(key, "trace_format")) return get_str(L, v, "runs[].trace_format", &r->trace_format);
    if (!strcmp(key, "iteration_marker")) {
        /* null: the run had no iterations; absent: not recorded */
        if (!get_str(L, v, "runs[].iteration_marker", &r->iteration_marker)) return false;
        if (!r->iteration_marker) r->iteration_marker = "";
        return true;
    }
    unknown_key(L, k, key, "a run");
    return true;
}

static bool load_runs(loader *L, const tg_ynode *n)
{
    if (n->kind != TG_Y_SEQ) {
        LOAD_ERROR(L, n, "'runs' must be a list of recorded runs, not %s", tg_ynode_kind_name(n));
        return false;
    }
    size_t len = n->n;
    if (len == 0) {
        LOAD_ERROR(L, n, "'runs' is empty: a baseline records at least one run");
        return false;
    }
    L->b->runs = tg_arena_alloc(L->b->arena, len * sizeof *L->b->runs);
    if (!L->b->runs) return false;
    L->b->n_runs = len;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        const tg_ynode *item = n->items[i];
        if (!each_pair(L, item, "a run", run_pair, &L->b->runs[i])) ok = false;
        else if (!L->b->runs[i].trace) {
            LOAD_ERROR(L, item, "run %zu has no 'trace' name", i + 1);
            ok = false;
        }
    }
    return ok;
}

/* --------------------------------------------------------- the metrics */

typedef struct metric_nodes {
    tg_baseline_metric *m;
    const tg_ynode *metric, *median, *mad, *n_runs, *runs, *samples, *n_samples, *kept_outliers;
} metric_nodes;

static bool metric_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    metric_nodes *c = ctx;
    tg_baseline_metric *m = c->m;
    if (!strcmp(key, "direction")) {
        const char *s = scalar(v);
        if (s && !strcmp(s, "higher_is_worse")) m->direction = 1;
        else if (s && !strcmp(s, "lower_is_worse")) m->direction = -1;
        else if (s && !strcmp(s, "none")) m->direction = 0;
        else {
            LOAD_ERROR(L, v, "direction must be higher_is_worse, lower_is_worse or none");
            return false;
        }
        return true;
    }
    if (!strcmp(key, "unit")) {
        if (!tg_unit_parse_key(scalar(v), &m->unit)) {
            LOAD_ERROR(L, v, "unit must be ns, bytes, ratio or none");
            return false;
        }
        return true;
    }
    if (!strcmp(key, "metric")) {
        c->metric = v;
        if (!get_str(L, v, "metric", &m->metric)) return false;
        if (!m->metric || !*m->metric) {
            LOAD_ERROR(L, v, "metric must be the rule's metric expression, e.g. p50(gpu_time)");
            return false;
        }
        return true;
    }
    if (!strcmp(key, "samples_field")) return get_str(L, v, "samples_field", &m->samples_field);
    if (!strcmp(key, "median")) return c->median = v, get_num(L, v, "median", false, &m->median);
    if (!strcmp(key, "mad")) return c->mad = v, get_num(L, v, "mad", false, &m->mad);
    if (!strcmp(key, "n_runs")) return c->n_runs = v, get_count(L, v, "n_runs", &m->n_runs);
    if (!strcmp(key, "n_samples"))
        return c->n_samples = v, get_count(L, v, "n_samples", &m->n_samples_total);
    if (!strcmp(key, "runs")) {
        size_t n;
        c->runs = v;
        return get_numbers(L, v, "runs", true, &m->runs, &n);
    }
    if (!strcmp(key, "kept_outliers")) {
        /* indices into runs (format 2): checked against them in check_metric */
        if (v->kind != TG_Y_SEQ) {
            LOAD_ERROR(L, v, "kept_outliers must be a list of run indices, not %s", tg_ynode_kind_name(v));
            return false;
        }
        c->kept_outliers = v;
        m->kept_outliers = tg_arena_alloc(L->b->arena, (v->n ? v->n : 1) * sizeof *m->kept_outliers);
        if (!m->kept_outliers) return false;
        for (size_t i = 0; i < v->n; i++)
            if (!get_count(L, v->items[i], "kept_outliers[]", &m->kept_outliers[i])) return false;
        m->n_kept_outliers = v->n;
        return true;
    }
    if (!strcmp(key, "samples"))
        return c->samples = v, get_numbers(L, v, "samples", false, &m->samples, &m->n_samples);
    unknown_key(L, k, key, "a metric entry");
    return true;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Required keys and the consistency of what they say. */
static bool check_metric(loader *L, const tg_ynode *key_node, metric_nodes *c)
{
    tg_baseline_metric *m = c->m;
    static const char *const names[] = {"metric", "median", "mad", "n_runs", "runs"};
    const tg_ynode *const have[] = {c->metric, c->median, c->mad, c->n_runs, c->runs};
    bool ok = true;
    for (size_t i = 0; i < 5; i++)
        if (!have[i]) {
            LOAD_ERROR(L, key_node, "metric entry '%s' lacks '%s'", m->rule, names[i]);
            ok = false;
        }
    if (!ok) return false;
    size_t len = c->runs->n;
    if (len != L->b->n_runs) {
        LOAD_ERROR(L, c->runs, "'%s' has %zu run value%s but the baseline records %zu run%s",
                   m->rule, len, len == 1 ? "" : "s", L->b->n_runs, L->b->n_runs == 1 ? "" : "s");
        return false;
    }
    double *finite = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof *finite);
    if (!finite) return false;
    size_t nf = 0;
    for (size_t i = 0; i < len; i++)
        if (isfinite(m->runs[i])) finite[nf++] = m->runs[i];
    if (nf != m->n_runs) {
        LOAD_ERROR(L, c->n_runs, "n_runs of '%s' is %zu but its runs hold %zu value%s", m->rule,
                   m->n_runs, nf, nf == 1 ? "" : "s");
        return false;
    }
    if (nf == 0) {
        LOAD_ERROR(L, c->runs, "'%s' has no run value to compare with", m->rule);
        return false;
    }
    for (size_t i = 0; i < m->n_kept_outliers; i++) {
        size_t k = m->kept_outliers[i];
        const tg_ynode *at = c->kept_outliers->items[i];
        if (k >= len || !isfinite(m->runs[k])) {
            LOAD_ERROR(L, at, "kept_outliers of '%s' names run %zu, which %s", m->rule, k,
                       k >= len ? "is not one of its runs (they count from 0)" : "has no value");
            return false;
        }
        for (size_t j = 0; j < i; j++)
            if (m->kept_outliers[j] == k) {
                LOAD_ERROR(L, at, "kept_outliers of '%s' names run %zu twice", m->rule, k);
                return false;
            }
    }
    if (m->n_kept_outliers + 2 > nf && m->n_kept_outliers) {
        LOAD_ERROR(L, c->kept_outliers, "kept_outliers of '%s' leaves fewer than two runs to estimate from",
                   m->rule);
        return false;
    }
    double med = tg_stats_median(finite, nf), mad = tg_stats_mad(finite, nf);
    if (!near(med, m->median)) {
        LOAD_ERROR(L, c->median, "median of '%s' is %.17g but the median of its runs is %.17g; "
                   "re-record the baseline rather than editing it", m->rule, m->median, med);
        ok = false;
    }
    if (!near(mad, m->mad)) {
        LOAD_ERROR(L, c->mad, "mad of '%s' is %.17g but the MAD of its runs is %.17g; "
                   "re-record the baseline rather than editing it", m->rule, m->mad, mad);
        ok = false;
    }
    if (!c->n_samples) m->n_samples_total = m->n_samples;
    else if (m->n_samples_total < m->n_samples) {
        LOAD_ERROR(L, c->n_samples, "n_samples of '%s' is %zu but %zu samples are listed",
                   m->rule, m->n_samples_total, m->n_samples);
        ok = false;
    }
    tg_stats_sort(m->samples, m->n_samples);
    return ok;
}

typedef struct metrics_ctx {
    size_t n;
} metrics_ctx;

static bool metrics_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    metrics_ctx *mc = ctx;
    if (!tg_rules_valid_id(key)) {   /* it could never name a rule */
        LOAD_ERROR(L, k, "'%.80s' is not a rule id (letters, digits, '_' and '-')", key);
        return false;
    }
    tg_baseline_metric *m = &L->b->metrics[mc->n];
    *m = (tg_baseline_metric){.rule = tg_arena_strdup(L->b->arena, key),
                              .median = NAN, .mad = NAN,
                              .pos = k->pos};
    if (!m->rule) return false;
    metric_nodes c = {.m = m};
    char what[300];
    snprintf(what, sizeof what, "metric entry '%s'", key);
    if (!each_pair(L, v, what, metric_pair, &c)) return false;
    if (!check_metric(L, k, &c)) return false;
    mc->n++;
    return true;
}

static int cmp_metric(const void *a, const void *b)
{
    return strcmp(((const tg_baseline_metric *)a)->rule, ((const tg_baseline_metric *)b)->rule);
}

static bool load_metrics(loader *L, const tg_ynode *n)
{
    if (n->kind != TG_Y_MAP) {
        LOAD_ERROR(L, n, "'metrics' must map rule ids to metric entries, not %s", tg_ynode_kind_name(n));
        return false;
    }
    size_t len = n->n;
    if (len == 0) {
        LOAD_ERROR(L, n, "'metrics' is empty: a baseline without metrics would pass every check; "
                   "re-record it with `tracegate baseline record`");
        return false;
    }
    L->b->metrics = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof *L->b->metrics);
    if (!L->b->metrics) return false;
    metrics_ctx mc = {0};
    bool ok = each_pair(L, n, "'metrics'", metrics_pair, &mc);
    L->b->n_metrics = mc.n;
    qsort(L->b->metrics, L->b->n_metrics, sizeof *L->b->metrics, cmp_metric);
    return ok;
}

/* ------------------------------------------------------------ workload */

typedef struct entry_nodes {
    tg_work_entry *e;
    bool name, kind;
} entry_nodes;

static bool entry_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    entry_nodes *c = ctx;
    tg_work_entry *e = c->e;
    if (!strcmp(key, "name")) {
        c->name = true;
        if (!get_str(L, v, "workload name", &e->name)) return false;
        if (!e->name) {
            LOAD_ERROR(L, v, "a workload entry's name must be a string");
            return false;
        }
        return true;
    }
    if (!strcmp(key, "kind")) {
        c->kind = tg_work_kind_parse(scalar(v), &e->kind);
        if (!c->kind) LOAD_ERROR(L, v, "kind must be kernel, memcpy, memset or nvtx");
        return c->kind;
    }
    double x;
    if (!strcmp(key, "count")) {
        size_t n;
        if (!get_count(L, v, "count", &n)) return false;
        e->count = (int64_t)n;
        return true;
    }
    if (!strcmp(key, "time")) return get_num(L, v, "time", true, &e->time);
    if (!strcmp(key, "launches")) return get_num(L, v, "launches", true, &e->launches);
    if (!strcmp(key, "total")) {
        if (!get_num(L, v, "total", false, &x)) return false;
        e->total = x;
        return true;
    }
    unknown_key(L, k, key, "a workload entry");
    return true;
}

static bool load_entries(loader *L, const tg_ynode *n, const char *what, tg_work_entry **out, size_t *n_out)
{
    if (n->kind != TG_Y_SEQ) {
        LOAD_ERROR(L, n, "workload %s must be a list, not %s", what, tg_ynode_kind_name(n));
        return false;
    }
    size_t len = n->n;
    *out = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof **out);
    if (!*out) return false;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        const tg_ynode *item = n->items[i];
        tg_work_entry *e = &(*out)[i];
        *e = (tg_work_entry){.time = NAN, .launches = NAN};
        entry_nodes c = {.e = e};
        if (!each_pair(L, item, "a workload entry", entry_pair, &c)) ok = false;
        else if (!c.name || !c.kind) {
            LOAD_ERROR(L, item, "a workload entry needs 'name' and 'kind'");
            ok = false;
        }
    }
    *n_out = len;
    return ok;
}

typedef struct workload_nodes {
    tg_workload *w;
    const tg_ynode *ops;
} workload_nodes;

static bool workload_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    workload_nodes *c = ctx;
    tg_workload *w = c->w;
    if (!strcmp(key, "ops")) return c->ops = v, load_entries(L, v, "ops", &w->ops, &w->n_ops);
    if (!strcmp(key, "nvtx")) return load_entries(L, v, "nvtx", &w->ranges, &w->n_ranges);
    if (!strcmp(key, "gpu_time")) return get_num(L, v, "gpu_time", true, &w->gpu_time);
    if (!strcmp(key, "total")) return get_num(L, v, "total", false, &w->total);
    if (!strcmp(key, "steady_iterations")) {
        size_t n;
        if (!get_count(L, v, "steady_iterations", &n)) return false;
        w->steady_iterations = (int64_t)n;
        return true;
    }
    unknown_key(L, k, key, "the workload");
    return true;
}

static bool load_workload(loader *L, const tg_ynode *n)
{
    tg_workload *w = tg_arena_alloc(L->b->arena, sizeof *w);
    if (!w) return false;
    *w = (tg_workload){.gpu_time = NAN};
    workload_nodes c = {.w = w};
    if (!each_pair(L, n, "the workload", workload_pair, &c)) return false;
    if (!c.ops) {
        LOAD_ERROR(L, n, "the workload lacks 'ops'");
        return false;
    }
    L->b->workload = w;
    return true;
}

/* ------------------------------------------------------------ the root */

typedef struct root_nodes {
    const tg_ynode *date, *format_version, *metrics, *runs, *tool_version, *workload;
} root_nodes;

static bool root_pair(loader *L, const char *key, const tg_ynode *k, const tg_ynode *v, void *ctx)
{
    root_nodes *r = ctx;
    if (!strcmp(key, "date")) r->date = v;
    else if (!strcmp(key, "format_version")) r->format_version = v;
    else if (!strcmp(key, "metrics")) r->metrics = v;
    else if (!strcmp(key, "runs")) r->runs = v;
    else if (!strcmp(key, "tool_version")) r->tool_version = v;
    else if (!strcmp(key, "workload")) r->workload = v;
    else unknown_key(L, k, key, "the baseline");
    return true;
}

static bool load_root(loader *L, const tg_ynode *root)
{
    if (root->kind != TG_Y_MAP) {
        LOAD_ERROR(L, root, "not a tracegate baseline: expected a mapping with format_version, "
                   "runs and metrics, found %s", tg_ynode_kind_name(root));
        return false;
    }
    root_nodes r = {0};
    if (!each_pair(L, root, "the baseline", root_pair, &r)) return false;
    if (!r.format_version) {
        LOAD_ERROR(L, root, "not a tracegate baseline: 'format_version' is missing");
        return false;
    }
    size_t version;
    if (!get_count(L, r.format_version, "format_version", &version)) return false;
    if (version > TG_BASELINE_FORMAT || version < 1) {
        LOAD_ERROR(L, r.format_version, "baseline format version %zu is not one this tracegate "
                   "reads (1 to %d); re-record the baseline or use a matching tracegate", version,
                   TG_BASELINE_FORMAT);
        return false;
    }
    L->b->format_version = (int)version;
    bool ok = true;
    if (r.date && !get_str(L, r.date, "date", &L->b->date)) ok = false;
    if (r.tool_version && !get_str(L, r.tool_version, "tool_version", &L->b->tool_version))
        ok = false;
    if (!r.runs || !r.metrics) {
        LOAD_ERROR(L, root, "not a complete tracegate baseline: '%s' is missing",
                   !r.runs ? "runs" : "metrics");
        return false;
    }
    if (!load_runs(L, r.runs)) return false;    /* metrics are checked against the runs */
    if (r.workload && !load_workload(L, r.workload)) ok = false;
    return load_metrics(L, r.metrics) && ok;
}

tg_baseline *tg_baseline_load_string(const char *text, size_t len, const char *name,
                                     tg_diag *diag)
{
    loader L = {.name = name, .diag = diag};
    L.b = calloc(1, sizeof *L.b);
    char *copy = L.b ? malloc(len + 1) : NULL;
    if (!L.b || !copy || !(L.b->arena = tg_arena_new())) {
        free(copy);
        if (L.b) tg_baseline_free(L.b);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", name);
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    L.b->path = tg_arena_strdup(L.b->arena, name);
    tg_src *src = tg_src_new(L.b->arena, diag, name, copy, len);
    L.src = src;
    bool ok = src != NULL;
    const tg_ynode *root = ok ? tg_yaml_read(L.b->arena, diag, src, &baseline_limits, &ok) : NULL;
    if (ok && !root) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){name, 0, 0}, NULL,
                    "the baseline file is empty; record one with "
                    "'tracegate baseline record -o FILE TRACE...'");
        ok = false;
    } else if (ok && (!load_root(&L, root) || L.errors)) {
        if (!L.errors) tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", name);
        ok = false;
    }
    tg_src_release(src);
    if (!ok) {
        tg_baseline_free(L.b);
        return NULL;
    }
    return L.b;
}

tg_baseline *tg_baseline_load(const char *path, tg_diag *diag)
{
    char why[256];
    size_t len;
    char *text = tg_read_small_file(path, BASELINE_MAX_FILE, &len, why, sizeof why);
    if (!text) {
        if (!why[0]) tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", path);
        else tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){path, 0, 0}, NULL, "the baseline %s", why);
        return NULL;
    }
    tg_baseline *b = tg_baseline_load_string(text, len, path, diag);
    free(text);
    return b;
}
