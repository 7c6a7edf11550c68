/*
** scale-trace: make a large nsys SQLite export out of a real one by
** replicating its activity N times along the time axis, so the benchmarks
** (bench/run) can measure tracegate on 10M-kernel files without a 10M-kernel
** GPU run.
**
**     scale-trace IN.sqlite OUT.sqlite N
**
** The output has IN's schema and every table of IN. Tables that hold events
** in time (every table with both a `start` and an `end` column: kernels,
** copies, memsets, runtime calls, synchronization, NVTX, profiler overhead,
** OS runtime calls, ...) get N copies of their rows; copy k has
**   - start/end shifted by k * (span + gap), where span is first start to
**     last end over all those tables and gap is a small idle interval, so
**     copies follow each other without overlapping;
**   - correlationId shifted by k * (max correlationId + 1), taken over all
**     tables, so the per-process join activity -> launching call stays
**     one-to-one;
**   - rangeId (NVTX start/end ranges) and any integer primary key shifted
**     the same way, so they stay unique.
** Everything else (StringIds, TARGET_INFO_*, ENUM_*, PROCESSES, ...) is
** copied once. Iteration ranges repeat, so a ×N trace has N times the
** iterations; the warmup ranges of copies k > 0 stay as they are.
** ANALYSIS_DETAILS, when it has rows, is stretched to the new span.
**
** IN is opened read-only (immutable) through ATTACH; OUT is written to
** OUT.tmp in one transaction with `INSERT INTO ... SELECT` statements
** prepared once per table and stepped N times, then renamed, so an
** interrupted run never leaves a half-written OUT behind. After writing,
** the row counts of OUT are checked against N × those of IN and the
** correlation ids of the runtime table checked unique per process.
*/
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

/* Idle time between two copies. Small against any gap rule threshold. */
#define COPY_GAP_NS INT64_C(1000000)

/* One table of the input and how to copy it. */
typedef struct table_plan {
    char *name;
    char *create_sql;
    bool replicate;            /* has start and end: N shifted copies */
    char *insert_sql;          /* INSERT INTO main.T (...) SELECT ... FROM src.T */
    int64_t src_rows;
} table_plan;

typedef struct plan {
    table_plan *tables;
    size_t n_tables;
    char **post_sql;           /* indexes, views, triggers: after the data */
    size_t n_post;
    int64_t min_start, max_end;
    int64_t max_correlation;   /* over every correlationId column */
    int64_t max_key;           /* over rangeId and integer primary keys */
} plan;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The half-written OUT.tmp that die() removes; set once in main. */
static const char *partial_output;

static void die(const char *fmt, ...)
{
    if (partial_output) unlink(partial_output);
    va_list ap;
    va_start(ap, fmt);
    fputs("scale-trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) die("out of memory");
    return q;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) die("out of memory");
    return d;
}

/* printf into a fresh heap string. */
static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) die("out of memory");
    va_end(ap);
    return s;
}

/* Append to a heap string. */
static void append(char **buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(char **buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *more = NULL;
    if (vasprintf(&more, fmt, ap) < 0) die("out of memory");
    va_end(ap);
    size_t a = *buf ? strlen(*buf) : 0, b = strlen(more);
    *buf = xrealloc(*buf, a + b + 1);
    memcpy(*buf + a, more, b + 1);
    free(more);
}

/* SQL identifier quoting: "name" with inner quotes doubled. */
static char *quote_ident(const char *id)
{
    char *out = xrealloc(NULL, 2 * strlen(id) + 3);
    char *p = out;
    *p++ = '"';
    for (const char *s = id; *s; s++) {
        if (*s == '"') *p++ = '"';
        *p++ = *s;
    }
    *p++ = '"';
    *p = 0;
    return out;
}

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        die("%s\n  while running: %.300s", err ? err : sqlite3_errmsg(db), sql);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die("%s\n  while preparing: %.300s", sqlite3_errmsg(db), sql);
    return st;
}

/* Run a query returning one integer (NULL -> dflt). */
static int64_t query_i64(sqlite3 *db, const char *sql, int64_t dflt)
{
    sqlite3_stmt *st = prepare(db, sql);
    int64_t v = dflt;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
    } else if (rc != SQLITE_DONE) {
        die("%s\n  while running: %.300s", sqlite3_errmsg(db), sql);
    }
    sqlite3_finalize(st);
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ planning */

typedef struct column {
    char *name;
    char *type;
    int pk;
} column;

static size_t read_columns(sqlite3 *db, const char *table, column **out)
{
    sqlite3_stmt *st = prepare(db, "SELECT name, type, pk FROM pragma_table_info(?1, 'src')");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_TRANSIENT);
    column *cols = NULL;
    size_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        cols = xrealloc(cols, (n + 1) * sizeof *cols);
        cols[n].name = xstrdup((const char *)sqlite3_column_text(st, 0));
        cols[n].type = xstrdup((const char *)sqlite3_column_text(st, 1));
        cols[n].pk = sqlite3_column_int(st, 2);
        n++;
    }
    if (rc != SQLITE_DONE) die("%s (columns of %s)", sqlite3_errmsg(db), table);
    sqlite3_finalize(st);
    *out = cols;
    return n;
}

static bool has_column(const column *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(cols[i].name, name) == 0) return true;
    return false;
}

/* How column c of a replicated table moves in copy k:
** ?1 = time shift, ?2 = correlation shift, ?3 = key shift. */
static const char *shift_param(const column *c, int n_pk)
{
    if (strcasecmp(c->name, "start") == 0 || strcasecmp(c->name, "end") == 0) return "?1";
    if (strcasecmp(c->name, "correlationId") == 0) return "?2";
    if (strcasecmp(c->name, "rangeId") == 0) return "?3";
    /* A single-column integer primary key must stay unique. */
    if (c->pk == 1 && n_pk == 1 && strcasestr(c->type, "INT")) return "?3";
    return NULL;
}

/* Widen the plan's extents with this table's columns. */
static void measure_table(sqlite3 *db, plan *p, const char *qname, const column *cols, size_t n,
                          int n_pk)
{
    for (size_t i = 0; i < n; i++) {
        const char *param = shift_param(&cols[i], n_pk);
        if (!param) continue;
        char *qc = quote_ident(cols[i].name);
        char *sql;
        if (strcmp(param, "?1") == 0) {
            bool is_start = strcasecmp(cols[i].name, "start") == 0;
            sql = xprintf("SELECT %s(%s) FROM src.%s", is_start ? "min" : "max", qc, qname);
            int64_t v = query_i64(db, sql, is_start ? INT64_MAX : INT64_MIN);
            if (is_start && v < p->min_start) p->min_start = v;
            if (!is_start && v > p->max_end) p->max_end = v;
        } else {
            sql = xprintf("SELECT max(%s) FROM src.%s", qc, qname);
            int64_t v = query_i64(db, sql, 0);
            int64_t *dst = strcmp(param, "?2") == 0 ? &p->max_correlation : &p->max_key;
            if (v > *dst) *dst = v;
        }
        free(sql);
        free(qc);
    }
}

static void plan_table(sqlite3 *db, plan *p, table_plan *tp)
{
    column *cols = NULL;
    size_t n = read_columns(db, tp->name, &cols);
    int n_pk = 0;
    for (size_t i = 0; i < n; i++) n_pk += cols[i].pk > 0;
    char *qname = quote_ident(tp->name);
    tp->replicate = has_column(cols, n, "start") && has_column(cols, n, "end");

    char *names = NULL, *exprs = NULL;
    for (size_t i = 0; i < n; i++) {
        char *qc = quote_ident(cols[i].name);
        const char *param = tp->replicate ? shift_param(&cols[i], n_pk) : NULL;
        append(&names, "%s%s", i ? ", " : "", qc);
        if (param)
            append(&exprs, "%s%s + %s", i ? ", " : "", qc, param);
        else
            append(&exprs, "%s%s", i ? ", " : "", qc);
        free(qc);
    }
    if (tp->replicate) {
        if (n_pk > 1) die("table %s has a composite primary key: cannot replicate its rows", tp->name);
        measure_table(db, p, qname, cols, n, n_pk);
        tp->insert_sql = xprintf("INSERT INTO main.%s (%s) SELECT %s FROM src.%s",
                                 qname, names, exprs, qname);
    } else {
        /* Same schema on both sides: SQLite's transfer optimization applies. */
        tp->insert_sql = xprintf("INSERT INTO main.%s SELECT * FROM src.%s", qname, qname);
    }
    char *count_sql = xprintf("SELECT count(*) FROM src.%s", qname);
    tp->src_rows = query_i64(db, count_sql, 0);
    free(count_sql);
    free(names);
    free(exprs);
    free(qname);
    for (size_t i = 0; i < n; i++) {
        free(cols[i].name);
        free(cols[i].type);
    }
    free(cols);
}

static void make_plan(sqlite3 *db, plan *p)
{
    memset(p, 0, sizeof *p);
    p->min_start = INT64_MAX;
    p->max_end = INT64_MIN;
    sqlite3_stmt *st = prepare(db,
        "SELECT type, name, sql FROM src.sqlite_master "
        "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
        "ORDER BY type = 'table' DESC, rowid");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);
        if (strcmp(type, "table") == 0) {
            p->tables = xrealloc(p->tables, (p->n_tables + 1) * sizeof *p->tables);
            table_plan *tp = &p->tables[p->n_tables++];
            memset(tp, 0, sizeof *tp);
            tp->name = xstrdup(name);
            tp->create_sql = xstrdup(sql);
        } else {
            p->post_sql = xrealloc(p->post_sql, (p->n_post + 1) * sizeof *p->post_sql);
            p->post_sql[p->n_post++] = xstrdup(sql);
        }
    }
    if (rc != SQLITE_DONE) die("%s (reading the schema)", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    for (size_t i = 0; i < p->n_tables; i++) plan_table(db, p, &p->tables[i]);
    if (p->min_start == INT64_MAX || p->max_end == INT64_MIN)
        die("the input has no events with start and end times: nothing to replicate");
}

static void free_plan(plan *p)
{
    for (size_t i = 0; i < p->n_tables; i++) {
        free(p->tables[i].name);
        free(p->tables[i].create_sql);
        free(p->tables[i].insert_sql);
    }
    free(p->tables);
    for (size_t i = 0; i < p->n_post; i++) free(p->post_sql[i]);
    free(p->post_sql);
}

/* ------------------------------------------------------------ writing */

static void copy_table(sqlite3 *db, const table_plan *tp, int64_t copies, int64_t time_shift,
                       int64_t corr_shift, int64_t key_shift)
{
    sqlite3_stmt *st = prepare(db, tp->insert_sql);
    int64_t n = tp->replicate ? copies : 1;
    for (int64_t k = 0; k < n; k++) {
        if (tp->replicate) {
            sqlite3_bind_int64(st, 1, k * time_shift);
            sqlite3_bind_int64(st, 2, k * corr_shift);
            sqlite3_bind_int64(st, 3, k * key_shift);
        }
        if (sqlite3_step(st) != SQLITE_DONE)
            die("%s (copy %" PRId64 " of %s)", sqlite3_errmsg(db), k, tp->name);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

/* ANALYSIS_DETAILS describes the capture's span: stretch it to the copies. */
static void stretch_analysis_details(sqlite3 *db, const plan *p, int64_t extra_ns)
{
    for (size_t i = 0; i < p->n_tables; i++) {
        if (strcmp(p->tables[i].name, "ANALYSIS_DETAILS") != 0 || p->tables[i].src_rows == 0)
            continue;
        char *sql = xprintf("UPDATE main.ANALYSIS_DETAILS SET stopTime = stopTime + %" PRId64
                            ", duration = duration + %" PRId64, extra_ns, extra_ns);
        exec(db, sql);
        free(sql);
    }
}

/* ------------------------------------------------------------ checking */

static void check_output(sqlite3 *db, const plan *p, int64_t copies)
{
    for (size_t i = 0; i < p->n_tables; i++) {
        const table_plan *tp = &p->tables[i];
        char *qname = quote_ident(tp->name);
        char *sql = xprintf("SELECT count(*) FROM main.%s", qname);
        int64_t got = query_i64(db, sql, -1);
        int64_t want = tp->replicate ? tp->src_rows * copies : tp->src_rows;
        if (got != want)
            die("check failed: %s has %" PRId64 " rows, expected %" PRId64, tp->name, got, want);
        free(sql);
        free(qname);
    }
    for (size_t i = 0; i < p->n_tables; i++) {
        if (strcmp(p->tables[i].name, "CUPTI_ACTIVITY_KIND_RUNTIME") != 0) continue;
        /* Old exports record some calls twice with one id (docs/architecture.md, "The nsys export"), so
        ** compare distinct ids per process against the input's, times N. */
        const char *q =
            "SELECT count(*) FROM (SELECT DISTINCT globalTid & 0xFFFFFFFFFF000000, correlationId "
            "FROM %s.CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IS NOT NULL)";
        char *in_sql = xprintf(q, "src"), *out_sql = xprintf(q, "main");
        int64_t in = query_i64(db, in_sql, 0), out = query_i64(db, out_sql, 0);
        if (out != in * copies)
            die("check failed: %" PRId64 " distinct (process, correlationId) pairs, expected %" PRId64,
                out, in * copies);
        free(in_sql);
        free(out_sql);
    }
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: scale-trace IN.sqlite OUT.sqlite N\n"
                        "  writes OUT with N time-shifted copies of IN's activity\n");
        return 2;
    }
    const char *in_path = argv[1], *out_path = argv[2];
    char *end = NULL;
    errno = 0;
    int64_t copies = strtoll(argv[3], &end, 10);
    if (errno || !end || *end || copies < 1 || copies > 1000000) die("N must be an integer from 1 to 1000000");
    if (access(in_path, R_OK) != 0) die("cannot read %s: %s", in_path, strerror(errno));

    double t0 = now_s();
    char *tmp_path = xprintf("%s.tmp", out_path);
    if (unlink(tmp_path) != 0 && errno != ENOENT) die("cannot remove %s: %s", tmp_path, strerror(errno));

    partial_output = tmp_path;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(tmp_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                        NULL) != SQLITE_OK)
        die("cannot create %s: %s", tmp_path, db ? sqlite3_errmsg(db) : "out of memory");

    /* The input is attached read-only and immutable: never written. */
    sqlite3_stmt *att = prepare(db, "ATTACH DATABASE ?1 AS src");
    char *in_uri = tg_trace_uri(in_path);
    if (!in_uri) die("out of memory");
    sqlite3_bind_text(att, 1, in_uri, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(att) != SQLITE_DONE) die("cannot open %s: %s", in_path, sqlite3_errmsg(db));
    sqlite3_finalize(att);
    free(in_uri);
    if (query_i64(db, "SELECT count(*) FROM src.sqlite_master", -1) <= 0)
        die("%s is not an SQLite export with tables", in_path);

    char *page_sql = xprintf("PRAGMA main.page_size = %" PRId64,
                             query_i64(db, "PRAGMA src.page_size", 4096));
    exec(db, page_sql);
    free(page_sql);
    exec(db, "PRAGMA main.journal_mode = OFF; PRAGMA main.synchronous = OFF; "
             "PRAGMA main.cache_size = -65536; PRAGMA temp_store = MEMORY");

    plan p;
    make_plan(db, &p);
    int64_t span = p.max_end - p.min_start;
    int64_t time_shift = span + COPY_GAP_NS;
    int64_t corr_shift = p.max_correlation + 1;
    int64_t key_shift = p.max_key + 1;
    if (span < 0 || (copies - 1) > (INT64_MAX / 4 - p.max_end) / time_shift)
        die("the shifted timestamps would overflow");

    exec(db, "BEGIN");
    for (size_t i = 0; i < p.n_tables; i++) exec(db, p.tables[i].create_sql);
    for (size_t i = 0; i < p.n_tables; i++)
        copy_table(db, &p.tables[i], copies, time_shift, corr_shift, key_shift);
    stretch_analysis_details(db, &p, (copies - 1) * time_shift);
    for (size_t i = 0; i < p.n_post; i++) exec(db, p.post_sql[i]);
    exec(db, "COMMIT");

    check_output(db, &p, copies);
    exec(db, "DETACH DATABASE src");
    if (sqlite3_close(db) != SQLITE_OK) die("cannot close %s", tmp_path);
    if (rename(tmp_path, out_path) != 0) die("cannot rename %s to %s: %s", tmp_path, out_path, strerror(errno));
    partial_output = NULL;

    int64_t kernels = 0;
    for (size_t i = 0; i < p.n_tables; i++)
        if (strcmp(p.tables[i].name, "CUPTI_ACTIVITY_KIND_KERNEL") == 0) kernels = p.tables[i].src_rows;
    fprintf(stderr, "scale-trace: %s x%" PRId64 " -> %s: %" PRId64 " kernels, span %.3f s per copy, %.1f s\n",
            in_path, copies, out_path, kernels * copies, span / 1e9, now_s() - t0);
    free_plan(&p);
    free(tmp_path);
    return 0;
}
