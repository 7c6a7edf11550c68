/*
** The workload of a trace as baselines keep it (docs/regressions.md): GPU
** work per steady iteration by kernel family, copy kind and memset, and
** the NVTX ranges inside steady iterations (model_work.c sums them), as
** tg_work_entry lists in the result's arena; plus what it takes to write
** the query that reproduces one entry's per-iteration total and lists its
** cited rows: for an export the steady iterations' NVTX rowids and the
** tables as named in the file (SQL), for a Kineto trace the jq views.
*/
#include "eval_int.h"
#include "../common/stats.h"
#include "../model/model_family.h"
#include "../model/model_jq.h"
#include "../model/model_sql.h"
#include "../trace/nsys_enums.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a memstream wrote (f over *buf, which fclose sets), closed,
** copied into the arena, freed; NULL when it could not be written. */
static const char *stream_text(FILE *f, char **buf, tg_arena *a)
{
    const char *out = fclose(f) == 0 ? tg_arena_strdup(a, *buf) : NULL;
    free(*buf);
    return out;
}

static const char *table_of(const tg_trace *t, int id)
{
    return t->table_name[id] ? t->table_name[id] : tg_table_names[id];
}

/* "SELECT pid, start, end FROM NVTX_EVENTS WHERE rowid IN (...)": the
** steady iterations, for a WITH clause. */
static const char *steady_cte(const tg_model *m, tg_arena *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "SELECT (globalTid >> 24) & 16777215 AS pid, start, end FROM %s WHERE rowid IN (",
            table_of(m->trace, TG_TABLE_NVTX));
    size_t n = 0;
    for (size_t i = 0; i < m->n_iterations; i++)
        if (m->iterations[i].steady) fprintf(f, "%s%lld", n++ ? ", " : "", (long long)m->iterations[i].rowid);
    fputc(')', f);
    return stream_text(f, &buf, a);
}

/* The table a work entry's rows are in. */
static int entry_table(tg_work_kind kind)
{
    return kind == TG_WORK_KERNEL ? TG_TABLE_KERNEL : kind == TG_WORK_MEMCPY ? TG_TABLE_MEMCPY
         : kind == TG_WORK_MEMSET ? TG_TABLE_MEMSET : TG_TABLE_NVTX;
}

static bool entries(const tg_trace *t, const tg_work_name *src, size_t n, int64_t iters, tg_arena *a,
                    tg_work_entry **out)
{
    *out = tg_arena_alloc(a, (n ? n : 1) * sizeof **out);
    if (!*out) return false;
    for (size_t i = 0; i < n; i++) {
        const tg_work_name *w = &src[i];
        int64_t *rows = w->n_top ? tg_arena_alloc(a, (size_t)w->n_top * sizeof *rows) : NULL;
        if (w->n_top && !rows) return false;
        for (int k = 0; k < w->n_top; k++) rows[k] = w->top_rowid[k];
        (*out)[i] = (tg_work_entry){
            .name = tg_arena_strdup(a, w->name), .kind = w->kind, .count = w->count, .total = (double)w->time,
            .time = iters > 0 ? (double)w->steady_time / (double)iters : NAN,
            .launches = iters > 0 ? (double)w->steady_count / (double)iters : NAN,
            .rows = rows, .n_rows = (size_t)w->n_top, .table = tg_trace_cite_table(t, entry_table(w->kind)),
        };
        if (!(*out)[i].name) return false;
    }
    return true;
}

/* p50 period of the steady iterations; NaN without. */
static double steady_period(const tg_model *m)
{
    int64_t *v = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *v);
    if (!v) return NAN;
    size_t n = 0;
    for (size_t i = 0; i < m->n_iterations; i++)
        if (m->iterations[i].steady && m->iterations[i].period != TG_NULL_I64) v[n++] = m->iterations[i].period;
    double p50 = tg_stats_median_i64(v, n);
    free(v);
    return p50;
}

/* Steady time in which a device ran no GPU op, summed over the devices,
** per steady iteration: what a rank's GPU waited for per iteration (its
** host, its input, the other ranks), beside gpu_time, what it ran. */
static double steady_idle(const tg_model *m, int64_t iters)
{
    double window = (double)(m->steady_end - m->steady_start), idle = 0;
    if (iters <= 0 || !(window > 0)) return NAN;
    for (size_t i = 0; i < m->n_devices; i++) {
        double busy = m->devices[i].busy_frac_steady;
        if (isnan(busy)) continue;
        idle += window * (1 - (busy > 1 ? 1 : busy));
    }
    return idle / (double)iters;
}

/* The jq views a Kineto entry's program reads: the op rows, the ranges,
** the trace's steady iterations (model_jq.h). */
static const char *jq_views(const tg_model *m, tg_arena *a)
{
    uint64_t fields[TG_SRC_COUNT] = {0};
    unsigned sources = 1u << TG_SRC_KERNEL | 1u << TG_SRC_MEMCPY | 1u << TG_SRC_MEMSET | 1u << TG_SRC_NVTX |
                       1u << TG_SRC_TRACE;
    char *views = tg_model_jq_with(m, sources, fields);
    const char *out = views ? tg_arena_strdup(a, views) : NULL;
    free(views);
    return out;
}

tg_workload *tg_eval_workload(const tg_model *m, tg_arena *a)
{
    tg_work_summary s;
    if (!tg_model_work_summary(m, false, &s)) return NULL;
    tg_workload *w = tg_arena_alloc(a, sizeof *w);
    bool ok = w != NULL;
    if (ok) {
        const tg_trace *t = m->trace;
        int64_t iters = m->has_iterations ? s.steady_iterations : 0;
        bool jq = tg_trace_query_lang(t) == TG_QUERY_JQ;
        *w = (tg_workload){
            .steady_iterations = iters,
            .gpu_time = iters > 0 ? (double)s.steady_time / (double)iters : NAN,
            .period = iters > 0 ? steady_period(m) : NAN,
            .idle = steady_idle(m, iters),
            .total = (double)s.time, .n_ops = s.n_names, .n_ranges = s.n_ranges,
            .table_kernel = table_of(t, TG_TABLE_KERNEL), .table_memcpy = table_of(t, TG_TABLE_MEMCPY),
            .table_memset = table_of(t, TG_TABLE_MEMSET), .table_runtime = table_of(t, TG_TABLE_RUNTIME),
            .table_nvtx = table_of(t, TG_TABLE_NVTX),
        };
        char *nvtx = tg_sql_nvtx_name(t, "");
        w->sql_nvtx_name = nvtx ? tg_arena_strdup(a, nvtx) : NULL;
        free(nvtx);
        ok = w->sql_nvtx_name != NULL;
        ok = ok && entries(t, s.names, s.n_names, iters, a, &w->ops) &&
             entries(t, s.ranges, s.n_ranges, iters, a, &w->ranges) &&
             (iters == 0 || (jq ? (w->jq_views = jq_views(m, a)) != NULL : (w->sql_steady = steady_cte(m, a)) != NULL));
    }
    tg_work_summary_free(&s);
    return ok ? w : NULL;
}

/* ---------------------------------------------------------------- SQL */

/* 'text' as an SQL string literal. */
static void put_quoted(FILE *f, const char *s);

static void put_literal(FILE *f, const char *s)
{
    fputc('\'', f);
    put_quoted(f, s);
    fputc('\'', f);
}

/* The characters of s inside an SQL string literal. */
static void put_quoted(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        fputc(*s, f);
    }
}

/* The copy kind code of "[memcpy HtoD]", or -1. */
static int copy_kind_of(const char *label)
{
    size_t len = strlen(label);
    if (len < 10 || strncmp(label, "[memcpy ", 8) != 0 || label[len - 1] != ']') return -1;
    return tg_copy_kind_code(label + 8, len - 9);
}

/* The second statement: the cited rows, longest first. */
static void put_cited_sql(FILE *f, const tg_work_entry *e, const char *table, bool nvtx, const char *name_sql)
{
    if (!e->n_rows) return;
    fprintf(f, " SELECT rowid, start AS start_ns, end AS end_ns, end - start AS duration_ns, %s AS name FROM %s "
               "WHERE rowid IN (", nvtx ? name_sql : "NULL", table);
    for (size_t i = 0; i < e->n_rows; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)e->rows[i]);
    fputs(") ORDER BY duration_ns DESC, start;", f);
}

/* An NVTX range's: the ranges of that name opened inside a steady
** iteration of their process (model_work.c), their time. */
static void put_range_sql(FILE *f, const tg_workload *w, const tg_work_entry *e)
{
    fprintf(f, "WITH steady AS (%s), r AS (SELECT rowid, start, end, (globalTid >> 24) & 16777215 AS pid, %s AS name "
               "FROM %s WHERE start IS NOT NULL AND end IS NOT NULL",
            w->sql_steady, w->sql_nvtx_name, w->table_nvtx);
    tg_sql_put_nvtx_ranges_only(f);
    fprintf(f, ") SELECT COUNT(*) AS ranges, SUM(r.end - r.start) AS time_ns, SUM(r.end - r.start) / %lld.0 AS "
               "per_iteration_ns FROM r WHERE r.name = ", (long long)w->steady_iterations);
    put_literal(f, e->name);
    fputs(" AND EXISTS (SELECT 1 FROM steady s WHERE s.pid = r.pid AND r.start BETWEEN s.start AND s.end);", f);
    put_cited_sql(f, e, w->table_nvtx, true, w->sql_nvtx_name);
}

/* A kernel family's rows: the kernels with their name and its head
** (model_family.h, whose test reads it). */
static void put_kernel_rows(FILE *f, const tg_workload *w)
{
    char *inner = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&inner, &len);
    if (!m) return;
    fprintf(m, "SELECT rowid, start, end, correlationId AS corr, (globalPid >> 24) & 16777215 AS pid, "
               "coalesce((SELECT value FROM StringIds WHERE id = demangledName), "
               "(SELECT value FROM StringIds WHERE id = shortName)) AS name FROM %s", w->table_kernel);
    if (fclose(m) == 0) tg_family_sql_put_rows(f, inner);
    free(inner);
}

static void put_op_sql(FILE *f, const tg_workload *w, const tg_work_entry *e)
{
    fprintf(f, "WITH steady AS (%s), op AS (", w->sql_steady);
    if (e->kind == TG_WORK_KERNEL) put_kernel_rows(f, w);
    else fputs("SELECT rowid, start, end, correlationId AS corr, (globalPid >> 24) & 16777215 AS pid", f);
    if (e->kind == TG_WORK_KERNEL) fputs(") ", f);
    else if (e->kind == TG_WORK_MEMCPY) fprintf(f, ", copyKind AS kind FROM %s) ", w->table_memcpy);
    else fprintf(f, " FROM %s) ", w->table_memset);
    fprintf(f, "SELECT COUNT(*) AS launches, SUM(op.end - op.start) AS gpu_time_ns, "
               "SUM(op.end - op.start) / %lld.0 AS per_iteration_ns FROM op WHERE ",
            (long long)w->steady_iterations);
    if (e->kind == TG_WORK_KERNEL) tg_family_sql_put_test(f, "op", e->name);
    else if (e->kind == TG_WORK_MEMCPY) fprintf(f, "op.kind = %d", copy_kind_of(e->name));
    else fputs("1", f);
    fprintf(f, " AND EXISTS (SELECT 1 FROM %s r JOIN steady s ON s.pid = op.pid AND r.start BETWEEN "
               "s.start AND s.end WHERE r.correlationId = op.corr AND ((r.globalTid >> 24) & 16777215) = op.pid);",
            w->table_runtime);
    put_cited_sql(f, e, e->kind == TG_WORK_KERNEL ? w->table_kernel : e->kind == TG_WORK_MEMCPY ? w->table_memcpy
                                                                                           : w->table_memset,
                  false, NULL);
}

/* The same as a jq program over the Kineto views: the steady rows of the
** entry, their count, time and time per steady iteration; then the cited
** events. */
static void put_jq(FILE *f, const tg_workload *w, const tg_work_entry *e)
{
    if (e->kind == TG_WORK_KERNEL) fputs(tg_family_jq_def, f);
    fputs(w->jq_views, f);
    if (e->kind == TG_WORK_NVTX) {
        fputs("[$nvtx[] | select(.name == ", f);
        tg_jq_put_string(f, e->name);
        fputs(" and (tg_it(.pid; .start) | . != null and .steady))] as $r | {ranges: ($r | length), time_ns: ", f);
    } else {
        fprintf(f, "[$%s[] | select(.steady and ", e->kind == TG_WORK_KERNEL ? "kernel"
                                                   : e->kind == TG_WORK_MEMCPY ? "memcpy" : "memset");
        if (e->kind == TG_WORK_KERNEL) {
            /* the family's definition in jq (model_family.h) */
            fputs("((.name // \"\") | tg_family) == ", f);
            tg_jq_put_string(f, e->name);
            fputs(")", f);
        } else if (e->kind == TG_WORK_MEMCPY) {
            size_t len = strlen(e->name);
            char kind[32] = "";
            if (len > 9 && len - 9 < sizeof kind) memcpy(kind, e->name + 8, len - 9);
            fputs(".kind == ", f);
            tg_jq_put_string(f, kind);
            fputs(")", f);
        } else {
            fputs("true)", f);
        }
        fputs("] as $r | {launches: ($r | length), gpu_time_ns: ", f);
    }
    fputs("($r | map(.duration) | add // 0), per_iteration_ns: (($r | map(.duration) | add // 0) / "
          "$trace.steady_iterations)}", f);
    if (e->n_rows) {
        fputs(", ({", f);
        for (size_t i = 0; i < e->n_rows; i++) fprintf(f, "%s\"%lld\": true", i ? ", " : "", (long long)e->rows[i]);
        fputs("} as $cited | $r | map(select($cited[.rowid | tostring])) | sort_by(-.duration) | .[] | {rowid, "
              "cat: $e[.rowid].cat, event: $e[.rowid].name, ts: $e[.rowid].ts, start_ns: (.start | tg_abs), "
              "end_ns: (.end | tg_abs), duration_ns: .duration})", f);
    }
}

/* Does w list GPU work of kind k (so that its table is in the trace)? */
static bool has_kind(const tg_workload *w, tg_work_kind k)
{
    for (size_t i = 0; i < w->n_ops; i++)
        if (w->ops[i].kind == k && strcmp(w->ops[i].name, TG_WORK_OTHER)) return true;
    return false;
}

/* The busy query's SQL: every kernel, copy and set launched in a steady
** iteration, as put_op_sql counts one name's. */
static void put_busy_sql(FILE *f, const tg_workload *w)
{
    static const tg_work_kind kinds[] = {TG_WORK_KERNEL, TG_WORK_MEMCPY, TG_WORK_MEMSET};
    const char *tables[] = {w->table_kernel, w->table_memcpy, w->table_memset};
    fprintf(f, "WITH steady AS (%s), op AS (", w->sql_steady);
    bool first = true;
    for (size_t k = 0; k < 3; k++) {
        if (!has_kind(w, kinds[k])) continue;
        fprintf(f, "%sSELECT start, end, correlationId AS corr, (globalPid >> 24) & 16777215 AS pid FROM %s",
                first ? "" : " UNION ALL ", tables[k]);
        first = false;
    }
    fprintf(f, ") SELECT COUNT(*) AS launches, SUM(op.end - op.start) AS gpu_time_ns, SUM(op.end - op.start) / "
               "%lld.0 AS per_iteration_ns FROM op WHERE EXISTS (SELECT 1 FROM %s r JOIN steady s ON s.pid = op.pid "
               "AND r.start BETWEEN s.start AND s.end WHERE r.correlationId = op.corr AND "
               "((r.globalTid >> 24) & 16777215) = op.pid);",
            (long long)w->steady_iterations, w->table_runtime);
}

const char *tg_workload_busy_query(const tg_workload *w, tg_arena *a)
{
    if (!w || (!w->sql_steady && !w->jq_views) || w->steady_iterations <= 0) return NULL;
    if (!has_kind(w, TG_WORK_KERNEL) && !has_kind(w, TG_WORK_MEMCPY) && !has_kind(w, TG_WORK_MEMSET)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (w->jq_views) {
        fputs(w->jq_views, f);
        fputs("[$kernel[], $memcpy[], $memset[] | select(.steady)] as $r | {launches: ($r | length), gpu_time_ns: "
              "($r | map(.duration) | add // 0), per_iteration_ns: (($r | map(.duration) | add // 0) / "
              "$trace.steady_iterations)}", f);
    } else {
        put_busy_sql(f, w);
    }
    return stream_text(f, &buf, a);
}

const char *tg_workload_query(const tg_workload *w, const tg_work_entry *e, tg_arena *a)
{
    if (!w || !e || (!w->sql_steady && !w->jq_views)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (w->jq_views) put_jq(f, w, e);
    else if (e->kind == TG_WORK_NVTX) put_range_sql(f, w, e);
    else put_op_sql(f, w, e);
    return stream_text(f, &buf, a);
}
