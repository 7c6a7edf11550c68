/*
** The model as SQL (model_sql.h): one common table expression per view,
** each written once by its own function, which first asks for the views it
** reads (need()), so a query names only what its rule uses, in order.
**
** The views and what they stand for in the C model:
**
**   capture        first and last timestamp of every loaded row (trace.c)
**   iter           the iterations: rowids chosen by model_marker.c, their
**                  index per process, warmup, partial, steady (model_iter.c)
**   steady_window  first steady start to last steady end (else the capture)
**   calls          every API call, once (the outer rows of a call recorded
**                  twice left out: tg_sql_put_api_calls): process, thread,
**                  base name, the flags of its name,
**                  the iteration containing its start (a window over calls
**                  and iteration starts finds the latest iteration starting
**                  before it, as tg_model_finder_find does)
**   launch         per (process, correlation id) the call that launched
**                  the ops with that id: the first
**   kernel, memcpy, memset, api, nvtx     the row sources (model.c,
**                  model_join.c)
**   iteration      + GPU time, span, kernels and blocking calls of each
**                  iteration, its period from GPU completion (model_iter.c)
**   ops, pair, busy  every kernel, copy and memset, and the busy overhead
**                  rows clipped to each (process, device) pair's span
**                  (model_device.c)
**   segment        the union of intervals, per device and class (busy,
**                  copy, kernel, nccl, compute): an interval opens a new
**                  segment when it starts after the largest end before it
**   gap_items, gap the idle intervals of each (process, device) pair
**   device, trace  the facts
**
** Names are read through StringIds by their id, as nsys stores them (NVTX
** text may also be inline: coalesce(textId's string, text)).
*/
#include "model_sql.h"
#include "model_int.h"
#include "model_views.h"
#include "../trace/nsys_enums.h"

#include <stdlib.h>
#include <string.h>

/* The views, each with the call that writes it on the writer w: the enum
** and need() are expanded from this list (model_views.h). */
#define SQL_VIEWS(V)                                                                                          \
    V(CAPTURE, view_capture(w)) V(ITER, view_iter(w)) V(WINDOW, view_window(w)) V(CALLS, view_calls(w))      \
    V(LAUNCH, view_launch(w)) V(KERNEL, view_kernel(w)) V(MEMCPY, view_memop(w, true))                        \
    V(MEMSET, view_memop(w, false)) V(API, view_api(w)) V(NVTX, view_nvtx(w)) V(ITERATION, view_iteration(w)) \
    V(OPS, view_ops(w)) V(BUSY, view_busy(w)) V(SEGMENT, view_segment(w)) V(GAP_ITEMS, view_gap_items(w))     \
    V(GAP, view_gap(w)) V(DEVICE, view_device(w)) V(TRACE, view_trace(w))

enum view { SQL_VIEWS(TG_VIEW_ENUM) V_COUNT };

typedef struct sqlw {
    const tg_model *m;
    const tg_trace *t;
    uint64_t fields;           /* the columns of the asked view the caller reads */
    FILE *f;
    bool done[V_COUNT];
    bool any;                  /* a view was written: the next one takes ", " */
} sqlw;

static void need(sqlw *w, enum view v);

/* Device columns by what computes them. */
static const char *const busy_fields[] = {"busy_frac", "busy_frac_steady", "busy_time_steady", "copy_time_steady",
                                          "copy_frac_steady", NULL};
static const char *const nccl_fields[] = {"nccl_time", "nccl_overlap", "exposed_nccl_time", NULL};
static const char *const queue_fields[] = {"queue_p50", "queue_kernels", "queue_clamped", NULL};

/* ------------------------------------------------------------- helpers */

/* The base name (tg_model_base_name_len) of `col` in plain SQL: no regular
** expression, no recursion, no function of ours, so the sqlite3 shell runs
** it as it stands; exact for every text. x is the name with each character
** in its place (so a length in x is one in the name): _ptsz and _ptds
** become five char(1), _v before a digit two char(2) (control characters of
** the name itself become '#' first), and the char(1) of a _ptsz or _ptds
** before a digit '#': in x, the suffixes that stack at the end are the
** longest tail of char(1), char(2) and digits (rtrim) less the digits it
** starts with (a digit run not after _v: cuda12_v3, a_ptsz12_v3); t is its
** length. When the whole name is suffixes (_v2_v3), its first stays. */
void tg_sql_put_base_name(FILE *f, const char *col)
{
    /* one derived table per group of replace()s: SQLite's parser refuses
    ** a few dozen nested calls ("parser stack overflow") */
    fputs("(SELECT CASE WHEN t > 0 AND t = length(x) THEN substr(s, 1, CASE WHEN substr(x, 1, 1) = char(1) THEN 5 "
          "ELSE length(x) - length(ltrim(substr(x, 3), '0123456789')) END) ELSE substr(s, 1, length(x) - t) END "
          "FROM (SELECT s, x, length(ltrim(substr(x, length(rtrim(x, char(1, 2) || '0123456789')) + 1), "
          "'0123456789')) AS t FROM (SELECT s, ", f);
    for (int d = 0; d < 10; d++) fputs("replace(", f);
    fputs("x", f);
    for (int d = 0; d < 10; d++) fprintf(f, ", char(1, %d), '#%d')", '0' + d, d);
    fputs(" AS x FROM (SELECT s, ", f);
    for (int d = 0; d < 10; d++) fputs("replace(", f);
    fputs("x", f);
    for (int d = 0; d < 10; d++) fprintf(f, ", '_v%d', char(2, 2, %d))", d, '0' + d);
    fputs(" AS x FROM (SELECT s, replace(replace(replace(replace(s, char(1), '#'), char(2), '#'), '_ptsz', "
          "char(1, 1, 1, 1, 1)), '_ptds', char(1, 1, 1, 1, 1)) AS x ", f);
    fprintf(f, "FROM (SELECT %s AS s))))))", col);
}

void tg_sql_put_nvtx_name(FILE *f, const tg_trace *t, const char *prefix)
{
    bool id = tg_trace_has_column(t, TG_TABLE_NVTX, "textId"), text = tg_trace_has_column(t, TG_TABLE_NVTX, "text");
    if (!id && !text) fputs("NULL", f);
    if (id && text) fputs("coalesce(", f);
    if (id) fprintf(f, "(SELECT value FROM StringIds WHERE id = %s\"textId\")", prefix);
    if (id && text) fputs(", ", f);
    if (text) fprintf(f, "%s\"text\"", prefix);
    if (id && text) fputs(")", f);
}

/* What put wrote for (a, b), as a malloc'd string; NULL out of memory. */
static char *written(void (*put)(FILE *, const void *, const char *), const void *a, const char *b)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) return NULL;
    put(f, a, b);
    if (fclose(f) != 0 || !s) {
        free(s);
        return NULL;
    }
    return s;
}

static void put_base(FILE *f, const void *col, const char *unused)
{
    (void)unused;
    tg_sql_put_base_name(f, col);
}

static void put_nvtx(FILE *f, const void *t, const char *prefix)
{
    tg_sql_put_nvtx_name(f, t, prefix);
}

char *tg_sql_base_name(const char *col) { return written(put_base, col, NULL); }
char *tg_sql_nvtx_name(const tg_trace *t, const char *prefix) { return written(put_nvtx, t, prefix); }

/* The file's name of table id, quoted; NULL when the file lacks it. */
static bool has(const sqlw *w, tg_table_id id)
{
    return w->t->table_name[id] != NULL;
}

static void table(sqlw *w, tg_table_id id)
{
    tg_sql_put_ident(w->f, w->t->table_name[id]);
}

static void table_literal(sqlw *w, tg_table_id id)
{
    tg_sql_put_string(w->f, w->t->table_name[id]);
}

/* A column of table id, or NULL when the file's table lacks it. */
static void column(sqlw *w, tg_table_id id, const char *prefix, const char *name)
{
    if (tg_trace_has_column(w->t, id, name)) fprintf(w->f, "%s\"%s\"", prefix, name);
    else fputs("NULL", w->f);
}

/* The string a StringIds id column names. */
static void string_of(sqlw *w, tg_table_id id, const char *prefix, const char *name)
{
    if (!tg_trace_has_column(w->t, id, name)) {
        fputs("NULL", w->f);
        return;
    }
    fprintf(w->f, "(SELECT value FROM StringIds WHERE id = %s\"%s\")", prefix, name);
}

/* The raw name of the API row under `prefix` (its nameId's string, or its
** own name text where the export has that column). */
static void api_raw_name(sqlw *w, const char *prefix)
{
    bool text = tg_trace_has_column(w->t, TG_TABLE_RUNTIME, "name");
    if (text) fputs("coalesce(", w->f);
    string_of(w, TG_TABLE_RUNTIME, prefix, "nameId");
    if (text) fprintf(w->f, ", %sname)", prefix);
}

void tg_sql_put_api_calls(FILE *f, const tg_trace *t)
{
    sqlw w = {.t = t, .f = f};
    if (!t->mixed_duplicate_api) {
        table(&w, TG_TABLE_RUNTIME);
        return;
    }
    /* tg_model_twin_inner: per (process, correlation id, base name) the
    ** row starting last, at one start the larger rowid; a row without an
    ** id (null or 0) is a call of its own */
    fputs("(SELECT * FROM (SELECT rowid AS rowid, *, row_number() OVER (PARTITION BY (globalTid >> 24) & 16777215, "
          "correlationId, ", f);
    char *raw = NULL;
    size_t len = 0;
    FILE *r = open_memstream(&raw, &len);
    if (r) {
        sqlw rw = {.t = t, .f = r};
        api_raw_name(&rw, "");
        if (fclose(r) != 0) {
            free(raw);
            raw = NULL;
        }
    }
    tg_sql_put_base_name(f, raw ? raw : "NULL");
    free(raw);
    fputs(", CASE WHEN coalesce(correlationId, 0) = 0 THEN rowid END ORDER BY start DESC, rowid DESC) AS tg_twin "
          "FROM ", f);
    table(&w, TG_TABLE_RUNTIME);
    fputs(") WHERE tg_twin = 1 /* each call once: the outer rows of calls recorded twice left out (docs/formats.md) */)",
          f);
}

uint64_t tg_model_sql_field_bit(const tg_field_def *f)
{
    unsigned k = 0;
    for (size_t i = 0; i < tg_field_count && &tg_field_defs[i] != f; i++) k += tg_field_defs[i].source == f->source;
    return k < 64 ? (uint64_t)1 << k : 0;
}

/* Does the caller read column `name` of the view of src? */
static bool wants(const sqlw *w, tg_source_id src, const char *name)
{
    const tg_field_def *f = tg_field_find(src, name);
    return f && (w->fields & tg_model_sql_field_bit(f));
}

static bool wants_any(const sqlw *w, tg_source_id src, const char *const *names)
{
    for (; *names; names++)
        if (wants(w, src, *names)) return true;
    return false;
}

static void begin(sqlw *w, const char *name)
{
    fprintf(w->f, "%s%s AS (", w->any ? ", " : "WITH ", name);
    w->any = true;
}

/* A view computed once even when the planner would inline it into each
** reader (SQLite 3.35): one whose columns cost a string function per row. */
static void begin_materialized(sqlw *w, const char *name)
{
    fprintf(w->f, "%s%s AS MATERIALIZED (", w->any ? ", " : "WITH ", name);
    w->any = true;
}

static void end(sqlw *w)
{
    fputc(')', w->f);
}

/* A view whose SQL is one text. */
static void define(sqlw *w, const char *name, const char *sql)
{
    begin(w, name);
    fputs(sql, w->f);
    end(w);
}

/* A CASE naming the codes of an nsys enum: names[] by code, NULL-ended;
** codes past the list read `unknown`, a negative or missing code null. */
static void enum_case(sqlw *w, const char *col, const char *const *names, const char *unknown)
{
    fprintf(w->f, "CASE WHEN %s >= 0 THEN CASE %s", col, col);
    for (int i = 0; names[i]; i++) {
        fprintf(w->f, " WHEN %d THEN ", i);
        tg_sql_put_string(w->f, names[i]);
    }
    fputs(" ELSE ", w->f);
    tg_sql_put_string(w->f, unknown);
    fputs(" END END", w->f);
}

void tg_sql_put_nvtx_ranges_only(FILE *f)
{
    fputs(" AND eventType NOT IN (", f);
    const char *sep = "";
#define X(type) fprintf(f, "%s%d", sep, type), sep = ", ";
    TG_NVTX_DEFINITION_TYPES(X)
#undef X
    fputc(')', f);
}


/* A kernel's name (the demangled one, else the short one), and whether it
** is an NCCL kernel: columns of the kernel table under `prefix`. */
static void put_kernel_name(sqlw *w, const char *prefix)
{
    fputs("coalesce(", w->f);
    string_of(w, TG_TABLE_KERNEL, prefix, "demangledName");
    fputs(", ", w->f);
    string_of(w, TG_TABLE_KERNEL, prefix, "shortName");
    fputs(")", w->f);
}

static void put_is_nccl(sqlw *w, const char *prefix)
{
    fputs("coalesce(instr(lower(", w->f);
    put_kernel_name(w, prefix);
    fputs("), 'nccl') > 0, 0)", w->f);
}

/* ------------------------------------------------------------ the views */

static void view_capture(sqlw *w)
{
    static const tg_table_id spans[] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET, TG_TABLE_RUNTIME,
                                        TG_TABLE_SYNC, TG_TABLE_OVERHEAD};
    begin(w, "capture");
    fputs("SELECT min(s) AS first_ns, max(e) AS last_ns FROM (SELECT NULL AS s, NULL AS e", w->f);
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
        if (!has(w, spans[i])) continue;
        fputs(" UNION ALL SELECT min(start), max(max(\"end\", start)) FROM ", w->f);
        table(w, spans[i]);
        fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL", w->f);
    }
    if (has(w, TG_TABLE_NVTX)) {
        fputs(" UNION ALL SELECT min(start), max(coalesce(max(\"end\", start), start)) FROM ", w->f);
        table(w, TG_TABLE_NVTX);
        fputs(" WHERE start IS NOT NULL", w->f);
        tg_sql_put_nvtx_ranges_only(w->f);
    }
    fputc(')', w->f);
    end(w);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* "rowid is one of the iterations' (partial_only: the ones the capture
** cut)" as a predicate: runs of consecutive rowids as BETWEEN, the rest
** in a list; 0 when there is none. */
static void put_rowid_set(sqlw *w, bool partial_only)
{
    const tg_model *m = w->m;
    int64_t *ids = malloc((m->n_iterations ? m->n_iterations : 1) * sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; ids && i < m->n_iterations; i++)
        if (!partial_only || m->iterations[i].partial) ids[n++] = m->iterations[i].rowid;
    if (!ids || n == 0) {
        fputs(ids ? "0" : "NULL", w->f);      /* NULL: out of memory, the SQL is cut anyway */
        free(ids);
        return;
    }
    qsort(ids, n, sizeof *ids, cmp_i64);
    size_t terms = 0, listed = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++) {}
        terms += j - i >= 3;
        listed += j - i < 3 ? j - i : 0;
    }
    bool paren = terms + (listed > 0) > 1;
    fputs(paren ? "(" : "", w->f);
    const char *sep = "";
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++) {}
        if (j - i < 3) continue;
        fprintf(w->f, "%srowid BETWEEN %lld AND %lld", sep, (long long)ids[i], (long long)ids[j - 1]);
        sep = " OR ";
    }
    if (listed) {
        fprintf(w->f, "%srowid IN (", sep);
        const char *comma = "";
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++) {}
            for (size_t k = i; j - i < 3 && k < j; k++, comma = ", ") fprintf(w->f, "%s%lld", comma, (long long)ids[k]);
        }
        fputc(')', w->f);
    }
    fputs(paren ? ")" : "", w->f);
    free(ids);
}

static void view_iter(sqlw *w)
{
    const tg_model *m = w->m;
    begin(w, "iter");
    if (!m->n_iterations || !has(w, TG_TABLE_NVTX)) {
        fputs("SELECT NULL AS rowid, NULL AS pid, NULL AS tid, NULL AS name, NULL AS start, NULL AS \"end\", "
              "NULL AS \"index\", NULL AS warmup, NULL AS partial, NULL AS steady WHERE 0", w->f);
        end(w);
        return;
    }
    fprintf(w->f, "SELECT rowid, pid, tid, name, start, \"end\", \"index\", "
                  "n > %d AND \"index\" < %d AS warmup, partial, NOT (n > %d AND \"index\" < %d) AND NOT partial AS steady "
                  "FROM (SELECT rowid, (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid, ",
            TG_WARMUP_MIN_ITERATIONS - 1, TG_WARMUP_COUNT, TG_WARMUP_MIN_ITERATIONS - 1, TG_WARMUP_COUNT);
    tg_sql_put_nvtx_name(w->f, w->t, "");
    /* a range that never closed ends with the capture (model_marker.c) */
    if (m->trace->last_ns != TG_NULL_I64)
        fprintf(w->f, " AS name, start, coalesce(\"end\", max(start, %lld)) AS \"end\", ", (long long)m->trace->last_ns);
    else
        fputs(" AS name, start, coalesce(\"end\", start) AS \"end\", ", w->f);
    fputs("row_number() OVER (PARTITION BY globalTid >> 24 & 16777215 ORDER BY start, rowid) - 1 AS \"index\", "
          "count(*) OVER (PARTITION BY globalTid >> 24 & 16777215) AS n, ", w->f);
    put_rowid_set(w, true);
    fputs(" AS partial FROM ", w->f);
    table(w, TG_TABLE_NVTX);
    fputs(" WHERE ", w->f);
    put_rowid_set(w, false);
    fputs(" /* the iterations tracegate chose: docs/iterations.md */)", w->f);
    end(w);
}

static void view_window(sqlw *w)
{
    need(w, V_CAPTURE);
    need(w, V_ITER);
    define(w, "steady_window",
           "SELECT coalesce((SELECT min(start) FROM iter WHERE steady), first_ns) AS ws, "
           "coalesce((SELECT max(\"end\") FROM iter WHERE steady), last_ns) AS we FROM capture");
}

/* Does some process have iterations that overlap (start/end ranges)? */
static bool iterations_overlap(const tg_model *m)
{
    for (size_t i = 1; i < m->n_iterations; i++) {
        const tg_iteration *a = &m->iterations[i - 1], *b = &m->iterations[i];
        if (a->pid == b->pid && b->start <= a->end) return true;
    }
    return false;
}

static void view_calls(sqlw *w)
{
    need(w, V_ITER);
    if (!has(w, TG_TABLE_RUNTIME)) {
        define(w, "calls",
               "SELECT NULL AS rowid, NULL AS start, NULL AS \"end\", NULL AS corr, NULL AS pid, NULL AS tid, "
               "NULL AS return_value, NULL AS raw_name, NULL AS name, NULL AS iteration_rowid, 0 AS driver, "
               "0 AS sync_memop, 0 AS async, 0 AS blocking WHERE 0");
        return;
    }
    begin(w, "call_rows");
    fputs("SELECT rowid, start, max(\"end\", start) AS \"end\", ", w->f);
    column(w, TG_TABLE_RUNTIME, "", "correlationId");
    fputs(" AS corr, (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid, ", w->f);
    column(w, TG_TABLE_RUNTIME, "", "returnValue");
    fputs(" AS return_value, ", w->f);
    api_raw_name(w, "");
    fputs(" AS raw_name FROM ", w->f);
    tg_sql_put_api_calls(w->f, w->t);
    fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL", w->f);
    end(w);
    /* the calls in start order among the iteration starts of their
    ** process: the number of iteration starts up to a call names the
    ** latest iteration that starts at or before it (tg_model_finder_find) */
    define(w, "call_placed",
           "SELECT *, sum(1 - is_call) OVER (PARTITION BY pid ORDER BY start, is_call, rowid ROWS UNBOUNDED PRECEDING) "
           "AS it_count FROM (SELECT rowid, start, \"end\", corr, pid, tid, return_value, raw_name, 1 AS is_call "
           "FROM call_rows UNION ALL SELECT rowid, start, NULL, NULL, pid, NULL, NULL, NULL, 0 FROM iter)");
    begin_materialized(w, "call_named");
    fputs("SELECT c.rowid, c.start, c.\"end\", c.corr, c.pid, c.tid, c.return_value, c.raw_name, ", w->f);
    tg_sql_put_base_name(w->f, "c.raw_name");
    fputs(" AS name, ", w->f);
    bool overlap = iterations_overlap(w->m);
    fprintf(w->f, "%si.rowid", overlap ? "coalesce(" : "");
    if (overlap)
        fputs(", (SELECT o.rowid FROM iter o WHERE o.pid = c.pid AND c.start BETWEEN o.start AND o.\"end\" "
              "ORDER BY o.start DESC, o.rowid DESC LIMIT 1))", w->f);
    fputs(" AS iteration_rowid FROM (SELECT * FROM call_placed WHERE is_call) c LEFT JOIN iter i ON i.pid = c.pid AND i.\"index\" = c.it_count - 1 "
          "AND i.\"end\" >= c.start", w->f);
    end(w);
    begin(w, "call_flags");
    fputs("SELECT c.*, name GLOB 'cu*' AND NOT name GLOB 'cuda*' AS driver, (", w->f);
    const char *sep = "";
#define X(table, prefix) \
    if (TG_TABLE_##table != TG_TABLE_KERNEL) fprintf(w->f, "%sname GLOB '%s*'", sep, prefix), sep = " OR ";
    TG_OP_CALL_PREFIXES(X)
#undef X
    fputs(") AND instr(name, 'Async') = 0 AS sync_memop, instr(name, 'Async') > 0 AS async, name IN (", w->f);
    sep = "";
#define X(name) fprintf(w->f, "%s'%s'", sep, name), sep = ", ";
    TG_BLOCKING_CALLS(X)
#undef X
    fputs(") AS synchronize FROM call_named c", w->f);
    end(w);
    define(w, "calls", "SELECT *, synchronize AS blocking FROM call_flags");
}

static void view_launch(sqlw *w)
{
    need(w, V_CALLS);
    define(w, "launch",
           "SELECT pid, corr, rowid AS call_rowid, min(start) AS start, \"end\", tid, name, iteration_rowid, "
           "sync_memop, async FROM calls WHERE corr IS NOT NULL AND corr != 0 GROUP BY pid, corr");
}

/* steady of a row in iteration `alias` (null: none): docs/iterations.md */
static void steady_of(sqlw *w, const char *alias)
{
    if (w->m->has_iterations) fprintf(w->f, "coalesce(%s.steady, 0)", alias);
    else fputs("1", w->f);
}

/* How a GPU op view (kernel, memcpy, memset) ends: the iteration and
** steady of the op's launching call, then the op table under alias `a`
** joined to its launch (same process, same correlation id). */
static void put_launch_join(sqlw *w, tg_table_id id, const char *a)
{
    fputs("i.\"index\" AS iteration, ", w->f);
    steady_of(w, "i");
    fputs(" AS steady FROM ", w->f);
    table(w, id);
    fprintf(w->f, " %s LEFT JOIN launch l ON l.pid = (%s.globalPid >> 24) & 16777215 AND l.corr = %s.correlationId "
                  "LEFT JOIN iter i ON i.rowid = l.iteration_rowid WHERE %s.start IS NOT NULL AND %s.\"end\" IS NOT NULL",
            a, a, a, a, a);
}

static void view_kernel(sqlw *w)
{
    need(w, V_LAUNCH);
    begin(w, "kernel");
    if (!has(w, TG_TABLE_KERNEL)) {
        fputs("SELECT NULL AS rowid, NULL AS start, NULL AS \"end\", NULL AS duration, NULL AS device, NULL AS stream, "
              "NULL AS pid, NULL AS tid, NULL AS name, NULL AS short_name, NULL AS grid_x, NULL AS grid_y, "
              "NULL AS grid_z, NULL AS block_x, NULL AS block_y, NULL AS block_z, NULL AS registers, NULL AS api, "
              "NULL AS launch_end, NULL AS queue, NULL AS nccl, NULL AS iteration, NULL AS steady WHERE 0", w->f);
        end(w);
        return;
    }
    static const char *const cols[][2] = {
        {"deviceId", "device"}, {"streamId", "stream"}, {"gridX", "grid_x"}, {"gridY", "grid_y"},
        {"gridZ", "grid_z"}, {"blockX", "block_x"}, {"blockY", "block_y"}, {"blockZ", "block_z"},
        {"registersPerThread", "registers"},
    };
    fputs("SELECT k.rowid, k.start, max(k.\"end\", k.start) AS \"end\", max(k.\"end\", k.start) - k.start AS duration",
          w->f);
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        fputs(", ", w->f);
        column(w, TG_TABLE_KERNEL, "k.", cols[i][0]);
        fprintf(w->f, " AS %s", cols[i][1]);
    }
    fputs(", (k.globalPid >> 24) & 16777215 AS pid, l.tid, ", w->f);
    put_kernel_name(w, "k.");
    fputs(" AS name, ", w->f);
    string_of(w, TG_TABLE_KERNEL, "k.", "shortName");
    /* queue: a launch call that ends after its kernel starts gives 0; only
    ** the first kernel of a call has one, the others of a graph launch
    ** waited for the graph (model_join.c launch_kernel) */
    fputs(" AS short_name, l.name AS api, l.\"end\" AS launch_end, CASE WHEN l.call_rowid IS NOT NULL AND "
          "row_number() OVER (PARTITION BY l.call_rowid ORDER BY k.start, k.rowid) = 1 THEN "
          "max(k.start - l.\"end\", 0) END AS queue, ", w->f);
    put_is_nccl(w, "k.");
    fputs(" AS nccl, ", w->f);
    put_launch_join(w, TG_TABLE_KERNEL, "k");
    end(w);
}

static void view_memop(sqlw *w, bool copy)
{
    need(w, V_LAUNCH);
    tg_table_id id = copy ? TG_TABLE_MEMCPY : TG_TABLE_MEMSET;
    begin(w, copy ? "memcpy" : "memset");
    if (!has(w, id)) {
        fprintf(w->f, "SELECT NULL AS rowid, NULL AS start, NULL AS \"end\", NULL AS duration, NULL AS device, "
                      "NULL AS stream, NULL AS pid, NULL AS tid, NULL AS bytes, %s NULL AS api, NULL AS api_sync, "
                      "%sNULL AS iteration, NULL AS steady WHERE 0",
                copy ? "NULL AS kind, NULL AS src_kind, NULL AS dst_kind," : "NULL AS mem_kind,",
                copy ? "NULL AS api_async, " : "");
        end(w);
        return;
    }
    fputs("SELECT m.rowid, m.start, max(m.\"end\", m.start) AS \"end\", max(m.\"end\", m.start) - m.start AS duration, ",
          w->f);
    column(w, id, "m.", "deviceId");
    fputs(" AS device, ", w->f);
    column(w, id, "m.", "streamId");
    fputs(" AS stream, (m.globalPid >> 24) & 16777215 AS pid, l.tid, ", w->f);
    column(w, id, "m.", "bytes");
    fputs(" AS bytes, ", w->f);
    if (copy) {
        enum_case(w, "m.copyKind", tg_copy_kind_names, tg_copy_kind_names[TG_COPY_KIND_UNKNOWN]);
        fputs(" AS kind, ", w->f);
        enum_case(w, "m.srcKind", tg_mem_kind_names, tg_mem_kind_names[TG_MEM_KIND_UNKNOWN]);
        fputs(" AS src_kind, ", w->f);
        enum_case(w, "m.dstKind", tg_mem_kind_names, tg_mem_kind_names[TG_MEM_KIND_UNKNOWN]);
        fputs(" AS dst_kind, ", w->f);
    } else {
        enum_case(w, "m.memKind", tg_mem_kind_names, tg_mem_kind_names[TG_MEM_KIND_UNKNOWN]);
        fputs(" AS mem_kind, ", w->f);
    }
    fputs("l.name AS api, coalesce(l.sync_memop, 0) AS api_sync, ", w->f);
    if (copy) fputs("coalesce(l.async, 0) AS api_async, ", w->f);
    put_launch_join(w, id, "m");
    end(w);
}

static void view_api(sqlw *w)
{
    need(w, V_CALLS);
    begin(w, "api");
    fputs("SELECT c.rowid, c.name, c.raw_name, c.start, c.\"end\", c.\"end\" - c.start AS duration, c.pid, c.tid, "
          "c.driver, c.blocking, c.return_value, i.\"index\" AS iteration, ", w->f);
    steady_of(w, "i");
    /* startup: before the process's first kernel, outside steady
    ** iterations (model_join.c is_startup) */
    if (!has(w, TG_TABLE_KERNEL)) {
        fputs(" AS steady, 0 AS startup FROM calls c LEFT JOIN iter i ON i.rowid = c.iteration_rowid", w->f);
        end(w);
        return;
    }
    fputs(w->m->has_iterations ? " AS steady, coalesce(c.start < fk.first, 0) AND NOT coalesce(i.steady, 0) AS startup "
                               : " AS steady, coalesce(c.start < fk.first, 0) AS startup ", w->f);
    fputs("FROM calls c LEFT JOIN iter i ON i.rowid = "
          "c.iteration_rowid LEFT JOIN (SELECT (globalPid >> 24) & 16777215 AS pid, min(start) AS first FROM ", w->f);
    table(w, TG_TABLE_KERNEL);
    fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL GROUP BY 1) fk ON fk.pid = c.pid", w->f);
    end(w);
}

static void view_nvtx(sqlw *w)
{
    begin(w, "nvtx");
    if (!has(w, TG_TABLE_NVTX)) {
        fputs("SELECT NULL AS rowid, NULL AS name, NULL AS start, NULL AS \"end\", NULL AS duration, NULL AS pid, "
              "NULL AS tid WHERE 0", w->f);
        end(w);
        return;
    }
    fputs("SELECT rowid, ", w->f);
    tg_sql_put_nvtx_name(w->f, w->t, "");
    fputs(" AS name, start, \"end\", \"end\" - start AS duration, (globalTid >> 24) & 16777215 AS pid, "
          "globalTid & 16777215 AS tid FROM ", w->f);
    table(w, TG_TABLE_NVTX);
    fputs(" WHERE start IS NOT NULL", w->f);
    tg_sql_put_nvtx_ranges_only(w->f);
    end(w);
}

/* The GPU ops with their (process, correlation id), for the launch join. */
static void launched_ops(sqlw *w)
{
    static const struct { tg_table_id id; int kernel; } tables[] = {
        {TG_TABLE_KERNEL, 1}, {TG_TABLE_MEMCPY, 0}, {TG_TABLE_MEMSET, 0}};
    bool first = true;
    fputc('(', w->f);
    for (size_t i = 0; i < 3; i++) {
        if (!has(w, tables[i].id)) continue;
        fprintf(w->f, "%sSELECT (globalPid >> 24) & 16777215 AS pid, correlationId AS corr, start, "
                      "max(\"end\", start) AS \"end\", %d AS kernel FROM ", first ? "" : " UNION ALL ", tables[i].kernel);
        table(w, tables[i].id);
        fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL", w->f);
        first = false;
    }
    if (first) fputs("SELECT NULL AS pid, NULL AS corr, NULL AS start, NULL AS \"end\", 0 AS kernel WHERE 0", w->f);
    fputc(')', w->f);
}

static void view_iteration(sqlw *w)
{
    need(w, V_LAUNCH);
    begin(w, "iter_work");
    fputs("SELECT l.iteration_rowid AS rowid, sum(o.\"end\" - o.start) AS gpu_time, min(o.start) AS gpu_first, "
          "max(o.\"end\") AS gpu_end, sum(o.kernel) AS kernels FROM ", w->f);
    launched_ops(w);
    /* CROSS JOIN: the ops outside, so that the launches get an index */
    fputs(" o CROSS JOIN launch l ON l.pid = o.pid AND l.corr = o.corr WHERE l.iteration_rowid IS NOT NULL GROUP BY 1",
          w->f);
    end(w);
    define(w, "iter_blocking",
           "SELECT iteration_rowid AS rowid, count(*) AS blocking_calls FROM calls WHERE blocking "
           "AND iteration_rowid IS NOT NULL GROUP BY 1");
    /* launch overhead (model_host.c): per iteration the calls that
    ** launched kernels, their time (once per call), the kernels' time, the
    ** kernels whose call's kernels together ran shorter than it, the calls
    ** of several kernels (graph launches) and their kernels */
    begin(w, "launched_kernels");
    if (has(w, TG_TABLE_KERNEL)) {
        fputs("SELECT l.iteration_rowid AS rowid, l.call_rowid, l.\"end\" - l.start AS call_time, "
              "max(k.\"end\", k.start) - k.start AS kernel_time, sum(max(k.\"end\", k.start) - k.start) OVER c "
              "AS call_kernel_time, count(*) OVER c AS call_kernels FROM ", w->f);
        table(w, TG_TABLE_KERNEL);
        fputs(" k CROSS JOIN launch l ON l.pid = (k.globalPid >> 24) & 16777215 AND l.corr = k.correlationId "
              "WHERE k.start IS NOT NULL AND k.\"end\" IS NOT NULL AND l.iteration_rowid IS NOT NULL "
              "WINDOW c AS (PARTITION BY l.call_rowid)", w->f);
    } else {
        fputs("SELECT NULL AS rowid, NULL AS call_rowid, NULL AS call_time, NULL AS kernel_time, "
              "NULL AS call_kernel_time, NULL AS call_kernels WHERE 0", w->f);
    }
    end(w);
    define(w, "iter_launch",
           "SELECT rowid, count(DISTINCT call_rowid) AS launches, (SELECT sum(call_time) FROM (SELECT DISTINCT "
           "call_rowid, call_time FROM launched_kernels c WHERE c.rowid = k.rowid)) AS launch_time, sum(kernel_time) "
           "AS kernel_time, sum(call_kernel_time < call_time) AS short_kernels, count(DISTINCT CASE WHEN "
           "call_kernels > 1 THEN call_rowid END) AS graph_launches, sum(call_kernels > 1) AS graph_kernels "
           "FROM launched_kernels k GROUP BY rowid");
    define(w, "iter_done",
           "SELECT i.*, w.gpu_time, w.gpu_first, w.gpu_end, w.kernels, lag(w.gpu_end) OVER p AS prev_gpu_end, "
           "lag(i.warmup) OVER p AS prev_warmup, lag(i.partial) OVER p AS prev_partial FROM iter i "
           "LEFT JOIN iter_work w ON w.rowid = i.rowid WINDOW p AS (PARTITION BY i.pid ORDER BY i.\"index\")");
    /* period: GPU completion minus the previous iteration's, in one phase,
    ** neither cut by the capture; null without GPU work on either side */
    define(w, "iteration",
           "SELECT d.rowid, d.\"index\", d.name, d.pid, d.start, d.\"end\", d.warmup, d.partial, d.steady, "
           "d.\"end\" - d.start AS duration, CASE WHEN d.prev_warmup = d.warmup AND NOT d.prev_partial "
           "AND NOT d.partial THEN d.gpu_end - d.prev_gpu_end END AS period, coalesce(d.gpu_time, 0) AS gpu_time, "
           "d.gpu_end - d.gpu_first AS gpu_span, coalesce(d.kernels, 0) AS kernels, "
           "coalesce(b.blocking_calls, 0) AS blocking_calls, coalesce(x.launches, 0) AS launches, "
           "coalesce(x.launch_time, 0) AS launch_time, coalesce(x.kernel_time, 0) AS kernel_time, "
           "coalesce(x.short_kernels, 0) AS short_kernels, coalesce(x.graph_launches, 0) AS graph_launches, "
           "coalesce(x.graph_kernels, 0) AS graph_kernels FROM iter_done d "
           "LEFT JOIN iter_blocking b ON b.rowid = d.rowid LEFT JOIN iter_launch x ON x.rowid = d.rowid");
}

static void view_ops(sqlw *w)
{
    static const struct { tg_table_id id; int kernel, copy; } tables[] = {
        {TG_TABLE_KERNEL, 1, 0}, {TG_TABLE_MEMCPY, 0, 1}, {TG_TABLE_MEMSET, 0, 0}};
    begin(w, "ops");
    bool first = true;
    for (size_t i = 0; i < 3; i++) {
        if (!has(w, tables[i].id)) continue;
        fputs(first ? "SELECT " : " UNION ALL SELECT ", w->f);
        table_literal(w, tables[i].id);
        fputs(" AS tbl, rowid, ", w->f);
        column(w, tables[i].id, "", "deviceId");
        fprintf(w->f, " AS device, (globalPid >> 24) & 16777215 AS pid, start, max(\"end\", start) AS \"end\", "
                      "%d AS kernel, ", tables[i].kernel);
        if (tables[i].kernel) put_is_nccl(w, "");
        else fputs("0", w->f);
        fprintf(w->f, " AS nccl, %d AS copy FROM ", tables[i].copy);
        table(w, tables[i].id);
        fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL", w->f);
        first = false;
    }
    if (first)
        fputs("SELECT NULL AS tbl, NULL AS rowid, NULL AS device, NULL AS pid, NULL AS start, NULL AS \"end\", "
              "0 AS kernel, 0 AS nccl, 0 AS copy WHERE 0", w->f);
    end(w);
}

static void view_busy(sqlw *w)
{
    need(w, V_OPS);
    define(w, "pair", "SELECT device, pid, min(start) AS first, max(\"end\") AS last FROM ops GROUP BY device, pid");
    begin(w, "busy");
    fputs("SELECT tbl, rowid, device, pid, start, \"end\", kernel, nccl, copy FROM ops", w->f);
    if (has(w, TG_TABLE_OVERHEAD)) {
        /* profiling overhead is busy time, within each pair's span */
        fputs(" UNION ALL SELECT ", w->f);
        table_literal(w, TG_TABLE_OVERHEAD);
        fputs(", o.rowid, p.device, p.pid, max(o.start, p.first), min(o.\"end\", p.last), 0, 0, 0 FROM ", w->f);
        table(w, TG_TABLE_OVERHEAD);
        fputs(" o JOIN pair p ON p.pid = (o.globalTid >> 24) & 16777215 WHERE ", w->f);
        string_of(w, TG_TABLE_OVERHEAD, "o.", "nameId");
        fputs(" IN (", w->f);
        const char *sep = "";
#define X(name) fprintf(w->f, "%s'%s'", sep, name), sep = ", ";
        TG_BUSY_OVERHEADS(X)
#undef X
        fputs(") AND min(o.\"end\", p.last) > max(o.start, p.first)", w->f);
    }
    end(w);
}

static void view_segment(sqlw *w)
{
    need(w, V_BUSY);
    bool busy = wants_any(w, TG_SRC_DEVICE, busy_fields), nccl = wants_any(w, TG_SRC_DEVICE, nccl_fields);
    begin(w, "spans");
    if (busy)
        fputs("SELECT 'busy' AS cls, device, start, \"end\" FROM busy UNION ALL SELECT 'copy', device, start, \"end\" "
              "FROM busy WHERE copy", w->f);
    /* the kernel classes serve the NCCL overlap: only a device with NCCL
    ** kernels needs them */
    if (nccl)
        fprintf(w->f, "%sSELECT cls, b.device, start, \"end\" FROM busy b JOIN (SELECT DISTINCT device FROM busy "
                      "WHERE nccl) n ON n.device = b.device, (SELECT 'kernel' AS cls UNION ALL SELECT 'nccl' "
                      "UNION ALL SELECT 'compute') WHERE kernel AND (cls = 'kernel' OR (cls = 'nccl') = (nccl = 1))",
                busy ? " UNION ALL " : "");
    end(w);
    define(w, "spans_reach",
           "SELECT cls, device, start, \"end\", max(\"end\") OVER (PARTITION BY cls, device ORDER BY start, \"end\" "
           "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach FROM spans");
    define(w, "spans_numbered",
           "SELECT cls, device, start, \"end\", sum(reach IS NULL OR start > reach) OVER (PARTITION BY cls, device "
           "ORDER BY start, \"end\" ROWS UNBOUNDED PRECEDING) AS segment FROM spans_reach");
    define(w, "segment",
           "SELECT cls, device, min(start) AS start, max(\"end\") AS \"end\" FROM spans_numbered "
           "GROUP BY cls, device, segment");
}

static void view_gap_items(sqlw *w)
{
    need(w, V_BUSY);
    define(w, "gap_items",
           "SELECT tbl, rowid, device, pid, start, \"end\", max(\"end\") OVER (PARTITION BY device, pid "
           "ORDER BY start, \"end\" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach FROM busy");
}

static void view_gap(sqlw *w)
{
    need(w, V_GAP_ITEMS);
    need(w, V_WINDOW);
    begin(w, "gap");
    fputs("SELECT g.reach AS start, g.start AS \"end\", g.start - g.reach AS duration, g.device, g.pid, ", w->f);
    if (w->m->has_iterations)
        fputs("g.reach >= coalesce((SELECT min(i.start) FROM iter i WHERE i.steady AND i.pid = g.pid), "
              "(SELECT ws FROM steady_window))", w->f);
    else
        fputs("1", w->f);
    fputs(" AS in_steady_state, (SELECT b.tbl FROM busy b WHERE b.device = g.device AND b.pid = g.pid "
          "AND b.\"end\" = g.reach AND b.start < g.start ORDER BY b.start, b.\"end\" LIMIT 1) AS before_table, "
          "(SELECT b.rowid FROM busy b WHERE b.device = g.device AND b.pid = g.pid AND b.\"end\" = g.reach "
          "AND b.start < g.start ORDER BY b.start, b.\"end\" LIMIT 1) AS before_rowid, "
          "(SELECT b.\"end\" - b.start FROM busy b WHERE b.device = g.device AND b.pid = g.pid AND b.\"end\" = g.reach "
          "AND b.start < g.start ORDER BY b.start, b.\"end\" LIMIT 1) AS before_duration, "
          "g.tbl AS after_table, g.rowid AS after_rowid FROM gap_items g WHERE g.start > g.reach", w->f);
    end(w);
}


/* The device view, with the columns the caller reads (`wants`) and the
** first and last op that evidence cites. */
static void view_device(sqlw *w)
{
    bool busy = wants_any(w, TG_SRC_DEVICE, busy_fields), nccl = wants_any(w, TG_SRC_DEVICE, nccl_fields);
    bool queue = wants_any(w, TG_SRC_DEVICE, queue_fields), gaps = wants(w, TG_SRC_DEVICE, "gaps");
    need(w, V_OPS);
    if (busy || nccl) need(w, V_SEGMENT);
    if (gaps) need(w, V_GAP_ITEMS);
    if (busy) need(w, V_WINDOW);
    if (queue) need(w, V_KERNEL);
    FILE *f = w->f;
    if (busy || nccl) {
        begin(w, "unions");
        fputs("SELECT device, sum(CASE cls WHEN 'busy' THEN \"end\" - start END) AS busy_time", f);
        if (busy)
            fputs(", sum(CASE cls WHEN 'busy' THEN max(0, min(\"end\", we) - max(start, ws)) END) AS busy_time_steady, "
                  "sum(CASE cls WHEN 'copy' THEN max(0, min(\"end\", we) - max(start, ws)) END) AS copy_time_steady", f);
        if (nccl)
            fputs(", sum(CASE cls WHEN 'kernel' THEN \"end\" - start END) AS kernel_union, "
                  "sum(CASE cls WHEN 'nccl' THEN \"end\" - start END) AS nccl_union, "
                  "sum(CASE cls WHEN 'compute' THEN \"end\" - start END) AS compute_union", f);
        fputs(busy ? " FROM segment, steady_window GROUP BY device" : " FROM segment GROUP BY device", f);
        end(w);
    }
    if (queue) {
        /* the median queue time over the kernels with a launching call,
        ** the mean of the two middle ones for an even count */
        define(w, "queue_ranked",
               "SELECT device, queue, launch_end > start AS clamped, row_number() OVER (PARTITION BY device "
               "ORDER BY queue) - 1 AS i, count(*) OVER (PARTITION BY device) AS n FROM kernel "
               "WHERE queue IS NOT NULL");
        define(w, "queue",
               "SELECT device, CAST(round(avg(CASE WHEN i IN ((n - 1) / 2, n / 2) THEN queue END)) AS INTEGER) "
               "AS queue_p50, count(*) AS queue_kernels, sum(clamped) AS queue_clamped "
               "FROM queue_ranked GROUP BY device");
    }
    /* the ops device evidence cites: its first by start, its last by end */
    define(w, "bounds",
           "SELECT device, tbl, rowid, first, last FROM (SELECT device, tbl, rowid, row_number() OVER "
           "(PARTITION BY device ORDER BY start, rowid) = 1 AS first, row_number() OVER (PARTITION BY device "
           "ORDER BY \"end\" DESC, start) = 1 AS last FROM ops) WHERE first OR last");
    begin(w, "device");
    fputs("SELECT d.device, ", f);
    if (has(w, TG_TABLE_GPU) && tg_trace_has_column(w->t, TG_TABLE_GPU, "name")) {
        fputs("(SELECT g.name FROM ", f);
        table(w, TG_TABLE_GPU);
        fputs(" g WHERE g.id = d.device LIMIT 1)", f);
    } else {
        fputs("NULL", f);
    }
    fputs(" AS name, d.start, d.\"end\", d.\"end\" - d.start AS span, d.kernels, d.kernel_time", f);
    if (busy) {
        fputs(", CASE WHEN d.\"end\" > d.start THEN u.busy_time * 1.0 / (d.\"end\" - d.start) END AS busy_frac, ", f);
        if (w->m->has_iterations) fputs("CASE WHEN we > ws THEN u.busy_time_steady * 1.0 / (we - ws) END", f);
        else fputs("CASE WHEN d.\"end\" > d.start THEN u.busy_time * 1.0 / (d.\"end\" - d.start) END", f);
        fputs(" AS busy_frac_steady, coalesce(u.busy_time_steady, 0) AS busy_time_steady, "
              "coalesce(u.copy_time_steady, 0) AS copy_time_steady, CASE WHEN u.busy_time_steady > 0 "
              "THEN coalesce(u.copy_time_steady, 0) * 1.0 / u.busy_time_steady END AS copy_frac_steady", f);
    }
    /* overlap = |N| + |C| - |N u C| (model_device.c) */
    if (nccl)
        fputs(", coalesce(u.nccl_union, 0) AS nccl_time, CASE WHEN u.nccl_union > 0 THEN (u.nccl_union + "
              "coalesce(u.compute_union, 0) - u.kernel_union) * 1.0 / u.nccl_union END AS nccl_overlap, "
              "CASE WHEN u.nccl_union > 0 THEN u.kernel_union - coalesce(u.compute_union, 0) ELSE 0 END "
              "AS exposed_nccl_time", f);
    if (queue)
        fputs(", q.queue_p50, coalesce(q.queue_kernels, 0) AS queue_kernels, coalesce(q.queue_clamped, 0) "
              "AS queue_clamped", f);
    if (gaps)
        fprintf(f, ", (SELECT count(*) FROM gap_items g WHERE g.device = d.device AND g.start > g.reach "
                   "AND g.start - g.reach >= %lld) AS gaps", (long long)TG_GAP_MIN_NS);
    fputs(", fb.tbl AS first_table, fb.rowid AS first_rowid, lb.tbl AS last_table, lb.rowid AS last_rowid "
          "FROM (SELECT device, min(start) AS start, max(\"end\") AS \"end\", sum(kernel) AS kernels, "
          "sum(CASE WHEN kernel THEN \"end\" - start ELSE 0 END) AS kernel_time FROM ops GROUP BY device) d", f);
    if (busy || nccl) fputs(" LEFT JOIN unions u ON u.device = d.device", f);
    if (queue) fputs(" LEFT JOIN queue q ON q.device = d.device", f);
    fputs(" LEFT JOIN bounds fb ON fb.device = d.device AND fb.first LEFT JOIN bounds lb ON lb.device = d.device "
          "AND lb.last", f);
    if (busy) fputs(", steady_window", f);
    end(w);
}

/* The rows of table id with a start and an end (NVTX: its ranges, not
** the definition rows the loader skips). */
static void count_rows(sqlw *w, tg_table_id id)
{
    if (!has(w, id)) {
        fputs("0", w->f);
        return;
    }
    fputs("(SELECT count(*) FROM ", w->f);
    table(w, id);
    fputs(" WHERE start IS NOT NULL AND \"end\" IS NOT NULL", w->f);
    if (id == TG_TABLE_NVTX) tg_sql_put_nvtx_ranges_only(w->f);
    fputc(')', w->f);
}

static void view_trace(sqlw *w)
{
    static const char *const call_fields[] = {"api_calls", "blocking_calls", "blocked_time", NULL};
    bool calls = wants_any(w, TG_SRC_TRACE, call_fields);
    need(w, V_WINDOW);
    if (calls) need(w, V_CALLS);
    need(w, V_OPS);
    begin(w, "trace");
    fputs("SELECT coalesce(last_ns - first_ns, 0) AS duration, ", w->f);
    count_rows(w, TG_TABLE_KERNEL);
    fputs(" AS kernels, ", w->f);
    count_rows(w, TG_TABLE_MEMCPY);
    fputs(" AS memcpys, ", w->f);
    count_rows(w, TG_TABLE_MEMSET);
    fputs(" AS memsets, ", w->f);
    if (calls) fputs("(SELECT count(*) FROM calls) AS api_calls, ", w->f);
    count_rows(w, TG_TABLE_NVTX);
    fputs(" AS nvtx_ranges, (SELECT count(DISTINCT device) FROM ops) AS devices, (SELECT count(*) FROM iter) "
          "AS iterations, (SELECT count(*) FROM iter WHERE steady) AS steady_iterations, max(we - ws, 0) AS "
          "steady_duration", w->f);
    if (calls)
        fputs(", (SELECT count(*) FROM calls WHERE blocking) AS blocking_calls, "
              "(SELECT coalesce(sum(\"end\" - start), 0) FROM calls WHERE blocking) AS blocked_time", w->f);
    fputs(" FROM capture, steady_window", w->f);
    end(w);
}

/* ------------------------------------------------------------- driving */

TG_VIEW_DRIVER(sqlw, SQL_VIEWS)

char *tg_model_sql_with(const tg_model *m, tg_source_id src, uint64_t fields)
{
    if (tg_trace_query_lang(m->trace) != TG_QUERY_SQL || !tg_model_sql_has_source(src)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    sqlw w = {.m = m, .t = m->trace, .fields = fields, .f = open_memstream(&buf, &len)};
    if (!w.f) return NULL;
    need(&w, source_view(src));
    if (fclose(w.f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

const char *tg_model_sql_view(tg_source_id src)
{
    return (unsigned)src < TG_SRC_COUNT ? tg_source_defs[src].name : "?";
}

bool tg_model_sql_has_source(tg_source_id src)
{
    switch (src) {
#define X(name) case TG_SRC_##name:
    TG_VIEW_SOURCES(X)
#undef X
        return true;
    default:
        return false;      /* the host side (osrt, cudnn, cublas): docs/evidence.md */
    }
}

bool tg_model_sql_has_field(const tg_field_def *f)
{
    /* stacks and call sites are read past the libraries of modules.def
    ** (model_host.c): no SQL form */
    if (!tg_model_sql_has_source(f->source) || !strcmp(f->name, "callchain") || !strcmp(f->name, "call_site") ||
        !strcmp(f->name, "call_module"))
        return false;
    static const struct { tg_source_id src; const char *name; } none[] = {
        {TG_SRC_KERNEL, "nvtx"}, {TG_SRC_NVTX, "domain"}, {TG_SRC_NVTX, "depth"}, {TG_SRC_NVTX, "gpu_time"},
        {TG_SRC_NVTX, "gpu_span"}, {TG_SRC_ITERATION, "marker"}, {TG_SRC_TRACE, "schema_version"},
        {TG_SRC_TRACE, "nsys_version"},
    };
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (f->source == none[i].src && strcmp(f->name, none[i].name) == 0) return false;
    return true;
}
