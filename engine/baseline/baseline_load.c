/*
** Reading a baseline file (written by baseline_write.c) with libyaml's
** document loader. The layout is documented in baselines/README.md.
**
** Strict about what matters (types, one value per recorded run, median and
** MAD consistent with the per-run values, a format version this build
** understands) and lenient about the rest: unknown keys are warnings, so a
** newer tracegate can add fields. Every problem is one sentence with
** file:line:col and the offending line, status TG_EUSAGE.
*/
#include "baseline.h"
#include "../common/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

typedef struct loader {
    const char *name;
    const char *text;
    size_t len;
    yaml_document_t doc;
    tg_diag *diag;
    tg_baseline *b;
    int errors;
} loader;

/* The source line (0-based) of the text, NUL-terminated in a static-free
** buffer owned by the caller. */
static void line_of(const loader *L, size_t line, char *buf, size_t size)
{
    const char *p = L->text, *end = L->text + L->len;
    for (size_t l = 0; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((e ? e : end) - p);
    if (n && p[n - 1] == '\r') n--;
    if (n >= size) n = size - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
}

static void report_at(loader *L, tg_diag_level level, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report_at(loader *L, tg_diag_level level, yaml_mark_t mark, const char *fmt, ...)
{
    char line[512];
    line_of(L, mark.line, line, sizeof line);
    tg_pos pos = {L->name, (int)mark.line + 1, (int)mark.column + 1};
    va_list ap;
    va_start(ap, fmt);
    tg_diag_vadd(L->diag, level, level == TG_DIAG_ERROR ? TG_EUSAGE : TG_OK, pos, line, fmt, ap);
    va_end(ap);
    if (level == TG_DIAG_ERROR) L->errors++;
}

#define LOAD_ERROR(L, node, ...) report_at((L), TG_DIAG_ERROR, (node)->start_mark, __VA_ARGS__)

static yaml_node_t *node_at(loader *L, int id) { return yaml_document_get_node(&L->doc, id); }

static const char *scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
    const char *s = scalar(n);
    return !*s || !strcmp(s, "null") || !strcmp(s, "~") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static const char *node_kind(const yaml_node_t *n)
{
    return n->type == YAML_MAPPING_NODE ? "a mapping"
         : n->type == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
}

/* A string or null (*out NULL). */
static bool get_str(loader *L, yaml_node_t *n, const char *what, const char **out)
{
    if (is_null(n)) {
        *out = NULL;
        return true;
    }
    if (n->type != YAML_SCALAR_NODE) {
        LOAD_ERROR(L, n, "%s must be a string, not %s", what, node_kind(n));
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
static bool get_num(loader *L, yaml_node_t *n, const char *what, bool allow_null, double *out)
{
    if (allow_null && is_null(n)) {
        *out = NAN;
        return true;
    }
    const char *s = scalar(n);
    if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
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
                   node_kind(n));
    return false;
}

static bool get_count(loader *L, yaml_node_t *n, const char *what, size_t *out)
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
static bool get_numbers(loader *L, yaml_node_t *n, const char *what, bool allow_null,
                        double **out, size_t *count)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        LOAD_ERROR(L, n, "%s must be a list of numbers, not %s", what, node_kind(n));
        return false;
    }
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof **out);
    *count = len;
    if (!*out) return false;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        yaml_node_t *item = node_at(L, n->data.sequence.items.start[i]);
        if (!get_num(L, item, what, allow_null, &(*out)[i])) ok = false;
    }
    return ok;
}

/* Iterate over a mapping's pairs with duplicate-key detection. */
typedef bool (*pair_fn)(loader *L, const char *key, yaml_node_t *knode, yaml_node_t *value,
                        void *ctx);

static bool each_pair(loader *L, yaml_node_t *map, const char *what, pair_fn fn, void *ctx)
{
    if (map->type != YAML_MAPPING_NODE) {
        LOAD_ERROR(L, map, "%s must be a mapping, not %s", what, node_kind(map));
        return false;
    }
    bool ok = true;
    yaml_node_pair_t *start = map->data.mapping.pairs.start, *top = map->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = start; p < top; p++) {
        yaml_node_t *k = node_at(L, p->key), *v = node_at(L, p->value);
        const char *key = scalar(k);
        if (!key) {
            LOAD_ERROR(L, k, "keys of %s must be plain names", what);
            ok = false;
            continue;
        }
        bool dup = false;
        for (yaml_node_pair_t *q = start; q < p && !dup; q++) {
            const char *other = scalar(node_at(L, q->key));
            dup = other && !strcmp(other, key);
        }
        if (dup) {
            LOAD_ERROR(L, k, "duplicate key '%s' in %s", key, what);
            ok = false;
            continue;
        }
        if (!fn(L, key, k, v, ctx)) ok = false;
    }
    return ok;
}

static void unknown_key(loader *L, yaml_node_t *k, const char *key, const char *what)
{
    report_at(L, TG_DIAG_WARNING, k->start_mark, "unknown key '%s' in %s is ignored", key, what);
}

/* ------------------------------------------------------------ the runs */

static bool run_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
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

static bool load_runs(loader *L, yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        LOAD_ERROR(L, n, "'runs' must be a list of recorded runs, not %s", node_kind(n));
        return false;
    }
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (len == 0) {
        LOAD_ERROR(L, n, "'runs' is empty: a baseline records at least one run");
        return false;
    }
    L->b->runs = tg_arena_alloc(L->b->arena, len * sizeof *L->b->runs);
    if (!L->b->runs) return false;
    L->b->n_runs = len;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        yaml_node_t *item = node_at(L, n->data.sequence.items.start[i]);
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
    yaml_node_t *metric, *median, *mad, *n_runs, *runs, *samples, *n_samples;
} metric_nodes;

static bool metric_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
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
static bool check_metric(loader *L, yaml_node_t *key_node, metric_nodes *c)
{
    tg_baseline_metric *m = c->m;
    static const char *const names[] = {"metric", "median", "mad", "n_runs", "runs"};
    yaml_node_t *const have[] = {c->metric, c->median, c->mad, c->n_runs, c->runs};
    bool ok = true;
    for (size_t i = 0; i < 5; i++)
        if (!have[i]) {
            LOAD_ERROR(L, key_node, "metric entry '%s' lacks '%s'", m->rule, names[i]);
            ok = false;
        }
    if (!ok) return false;
    size_t len = (size_t)(c->runs->data.sequence.items.top - c->runs->data.sequence.items.start);
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

static bool metrics_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
{
    metrics_ctx *mc = ctx;
    if (!tg_rules_valid_id(key)) {   /* it could never name a rule */
        LOAD_ERROR(L, k, "'%.80s' is not a rule id (letters, digits, '_' and '-')", key);
        return false;
    }
    tg_baseline_metric *m = &L->b->metrics[mc->n];
    *m = (tg_baseline_metric){.rule = tg_arena_strdup(L->b->arena, key),
                              .median = NAN, .mad = NAN,
                              .pos = {L->name, (int)k->start_mark.line + 1,
                                      (int)k->start_mark.column + 1}};
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

static bool load_metrics(loader *L, yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE) {
        LOAD_ERROR(L, n, "'metrics' must map rule ids to metric entries, not %s", node_kind(n));
        return false;
    }
    size_t len = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
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

static bool entry_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
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

static bool load_entries(loader *L, yaml_node_t *n, const char *what, tg_work_entry **out, size_t *n_out)
{
    if (n->type != YAML_SEQUENCE_NODE) {
        LOAD_ERROR(L, n, "workload %s must be a list, not %s", what, node_kind(n));
        return false;
    }
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = tg_arena_alloc(L->b->arena, (len ? len : 1) * sizeof **out);
    if (!*out) return false;
    bool ok = true;
    for (size_t i = 0; i < len; i++) {
        yaml_node_t *item = node_at(L, n->data.sequence.items.start[i]);
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
    yaml_node_t *ops;
} workload_nodes;

static bool workload_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
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

static bool load_workload(loader *L, yaml_node_t *n)
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
    yaml_node_t *date, *format_version, *metrics, *runs, *tool_version, *workload;
} root_nodes;

static bool root_pair(loader *L, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx)
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

static bool load_root(loader *L, yaml_node_t *root)
{
    if (root->type != YAML_MAPPING_NODE) {
        LOAD_ERROR(L, root, "not a tracegate baseline: expected a mapping with format_version, "
                   "runs and metrics, found %s", node_kind(root));
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
                   "reads (%d); re-record the baseline or use a matching tracegate", version,
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

/* Limits on a baseline file, checked before libyaml builds the document:
** it is input a CI job reads, and libyaml's loader has none of its own
** (deep nesting is quadratic, aliases let a small file stand for a huge
** tree). Baselines that tracegate writes are far below every one. */
#define BASELINE_MAX_FILE (64u * 1024 * 1024)
#define BASELINE_MAX_DEPTH 64
#define BASELINE_MAX_NODES 4000000

typedef struct anchor_size {
    char *name;
    size_t nodes;
} anchor_size;

/* One pass over libyaml's events: nesting depth and the node count with
** aliases expanded. Returns false after reporting. */
static bool prescan(loader *L)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) return true;   /* the loader reports it */
    yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
    anchor_size *anchors = NULL;
    size_t n_anchors = 0, cap_anchors = 0, nodes = 0;
    size_t starts[BASELINE_MAX_DEPTH + 1];
    char *names[BASELINE_MAX_DEPTH + 1];
    int depth = 0;
    bool ok = true, done = false;
    while (ok && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) break;   /* syntax errors: the loader reports them */
        const char *anchor = NULL;
        size_t size = 0;
        switch (e.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (depth == BASELINE_MAX_DEPTH) {
                report_at(L, TG_DIAG_ERROR, e.start_mark,
                          "the baseline nests deeper than %d levels; refusing it", BASELINE_MAX_DEPTH);
                ok = false;
                break;
            }
            nodes++;
            starts[depth] = nodes;
            anchor = (const char *)(e.type == YAML_SEQUENCE_START_EVENT ? e.data.sequence_start.anchor
                                                                         : e.data.mapping_start.anchor);
            names[depth++] = anchor ? strdup(anchor) : NULL;
            anchor = NULL;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth > 0) {
                depth--;
                if (names[depth]) {
                    anchor = names[depth];
                    size = nodes - starts[depth] + 1;
                }
            }
            break;
        case YAML_SCALAR_EVENT:
            nodes++;
            anchor = (const char *)e.data.scalar.anchor;
            size = 1;
            break;
        case YAML_ALIAS_EVENT:
            for (size_t i = n_anchors; i-- > 0;)
                if (!strcmp(anchors[i].name, (const char *)e.data.alias.anchor)) {
                    nodes += anchors[i].nodes;
                    break;
                }
            break;
        default: break;
        }
        if (anchor) {
            anchor_size a = {e.type == YAML_SCALAR_EVENT ? strdup(anchor) : (char *)anchor, size};
            if (!a.name || !TG_PUSH(anchors, n_anchors, cap_anchors, a)) free(a.name);
        }
        if (ok && nodes > BASELINE_MAX_NODES) {
            report_at(L, TG_DIAG_ERROR, e.start_mark,
                      "the baseline holds more than %d YAML nodes (aliases expanded); refusing it",
                      BASELINE_MAX_NODES);
            ok = false;
        }
        yaml_event_delete(&e);
    }
    while (depth > 0) free(names[--depth]);
    for (size_t i = 0; i < n_anchors; i++) free(anchors[i].name);
    free(anchors);
    yaml_parser_delete(&p);
    return ok;
}

tg_baseline *tg_baseline_load_string(const char *text, size_t len, const char *name,
                                     tg_diag *diag)
{
    loader L = {.name = name, .text = text, .len = len, .diag = diag};
    L.b = calloc(1, sizeof *L.b);
    if (!L.b || !(L.b->arena = tg_arena_new())) {
        free(L.b);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", name);
        return NULL;
    }
    L.b->path = tg_arena_strdup(L.b->arena, name);
    if (!prescan(&L)) {
        tg_baseline_free(L.b);
        return NULL;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        tg_baseline_free(L.b);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", name);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    bool ok = true;
    if (!yaml_parser_load(&parser, &L.doc)) {
        report_at(&L, TG_DIAG_ERROR, parser.problem_mark, "not valid YAML: %s%s%s",
                  parser.problem ? parser.problem : "parse error",
                  parser.context ? " " : "", parser.context ? parser.context : "");
        ok = false;
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&L.doc);
        if (!root) {
            tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){name, 0, 0}, NULL,
                        "the baseline file is empty; record one with "
                        "'tracegate baseline record -o FILE TRACE...'");
            ok = false;
        } else if (!load_root(&L, root) || L.errors) {
            if (!L.errors)
                tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", name);
            ok = false;
        }
        yaml_document_delete(&L.doc);
    }
    yaml_parser_delete(&parser);
    if (!ok) {
        tg_baseline_free(L.b);
        return NULL;
    }
    return L.b;
}

tg_baseline *tg_baseline_load(const char *path, tg_diag *diag)
{
    /* O_NONBLOCK: a FIFO must not block the open; only regular files of a
    ** sane size are read (not /dev/zero, not a directory). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){path, 0, 0}, NULL,
                    "cannot open the baseline: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *bad = fstat(fd, &st) != 0 ? "cannot be read"
                    : S_ISDIR(st.st_mode) ? "is a directory, not a baseline file"
                    : !S_ISREG(st.st_mode) ? "is not a regular file, so it cannot be a baseline"
                    : (uintmax_t)st.st_size > BASELINE_MAX_FILE ? "is larger than 64 MiB, so it is not a baseline"
                    : NULL;
    FILE *f = bad ? NULL : fdopen(fd, "rb");
    if (!f) {
        close(fd);
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){path, 0, 0}, NULL, "%s",
                    bad ? bad : "cannot be read");
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    bool read_error = ferror(f);
    fclose(f);
    if (!buf) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading %s", path);
        return NULL;
    }
    if (read_error) {
        free(buf);
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){path, 0, 0}, NULL,
                    "cannot read the baseline");
        return NULL;
    }
    tg_baseline *b = tg_baseline_load_string(buf, len, path, diag);
    free(buf);
    return b;
}
