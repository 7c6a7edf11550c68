/*
** The history store (docs/history.md, "Stores"): the schema and every
** query of a history, written once in the SQL that SQLite and PostgreSQL
** both speak, run through a row of the stores' table (store.h). Nothing
** here knows which database it talks to.
**
** The schema (TG_HISTORY_SCHEMA in tg_meta.schema_version, and
** tg_meta.application naming it, so that a database holding other things
** is told from a history; every table is prefixed tg_):
**
**   tg_runs     one row per run (tg_hist_run): its strings, its verdicts,
**               the scalars of its workload (has_work 0: none recorded);
**               id assigned here, MAX(id) + 1 inside the write transaction
**   tg_metrics  one row per rule with a metric, in the run's order (seq):
**               value NULL for NaN, samples as space-separated "%.17g"
**   tg_work     one row per kernel / NVTX range of the run's workload
**               (list 'ops' or 'ranges', seq across both, the work kind)
**   tg_accepts  the accepted change points, in order of acceptance
**   tg_lock     one row, for a store that serializes writers on a table
**
** Every append is one write transaction (store.h: writers see each other's
** commits): the labels it checks, the ids it takes, the workload keys it
** assigns are those of the history as it is when the transaction begins.
** The loads, which read one snapshot and run one query per table, are in
** history_load.c (history_int.h: what the two files share).
*/
#include "history_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/sha256.h"

#define HS_APPLICATION "tracegate history"
#define HS_STR_(x) #x
#define HS_STR(x) HS_STR_(x)
#define HS_TABLES_SHOWN 5        /* tables a refusal names */

/* ---------------------------------------------------------------- rows */

/* The rows, in the order their claims are asked (store.h). */
static const tg_store_ops *const hs_stores[] = {&tg_store_pg_ops, &tg_store_sqlite_ops};

const tg_store_ops *tg_store_for(const char *db)
{
    for (size_t i = 0; i < sizeof hs_stores / sizeof *hs_stores; i++)
        if (hs_stores[i]->claims(db)) return hs_stores[i];
    return &tg_store_sqlite_ops;
}

bool tg_store_env_long(const char *name, long def, long lo, long hi, const char *unit, long *out, tg_diag *diag)
{
    const char *v = getenv(name);
    *out = def;
    if (!v || !*v) return true;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        tg_diag_error(diag, TG_EUSAGE, "%s must be a whole number of %s from %ld to %ld, not '%s'", name, unit, lo, hi,
                      v);
        return false;
    }
    *out = x;
    return true;
}

bool tg_store_busy_ms(long *out, tg_diag *diag)
{
    return tg_store_env_long("TG_HISTORY_BUSY_MS", TG_STORE_BUSY_MS_DEFAULT, 0, TG_STORE_BUSY_MS_MAX, "milliseconds",
                             out, diag);
}

const char *tg_history_kind(const tg_history *h)
{
    return h->ops->name;
}

const char *tg_history_name(const tg_history *h)
{
    return h->shown;
}

/* ---------------------------------------------------------------- schema */

static const char hs_schema[] =
    "CREATE TABLE IF NOT EXISTS tg_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tg_lock (id INTEGER PRIMARY KEY);"
    "CREATE TABLE IF NOT EXISTS tg_runs ("
    " id BIGINT PRIMARY KEY, workload TEXT NOT NULL, workload_name TEXT, label TEXT NOT NULL,"
    " time TEXT NOT NULL, branch TEXT, gpu TEXT, format TEXT, marker TEXT, nsys_version TEXT,"
    " schema_version TEXT, trace TEXT, rules_digest TEXT, metrics_digest TEXT, tool_version TEXT,"
    " verdict TEXT, regressed INTEGER NOT NULL, epoch BIGINT NOT NULL, has_work INTEGER NOT NULL,"
    " steady_iterations BIGINT, gpu_time DOUBLE PRECISION, period DOUBLE PRECISION,"
    " idle DOUBLE PRECISION, work_total DOUBLE PRECISION,"
    " UNIQUE (workload, label));"
    "CREATE INDEX IF NOT EXISTS tg_runs_order ON tg_runs (workload, time, id);"
    "CREATE TABLE IF NOT EXISTS tg_metrics ("
    " run_id BIGINT NOT NULL, seq INTEGER NOT NULL, rule TEXT NOT NULL, metric TEXT,"
    " samples_field TEXT, unit TEXT NOT NULL, direction INTEGER NOT NULL,"
    " value DOUBLE PRECISION, verdict TEXT, samples TEXT, PRIMARY KEY (run_id, seq));"
    "CREATE TABLE IF NOT EXISTS tg_work ("
    " run_id BIGINT NOT NULL, seq INTEGER NOT NULL, list TEXT NOT NULL, kind TEXT NOT NULL,"
    " name TEXT NOT NULL, count BIGINT NOT NULL, total DOUBLE PRECISION, time DOUBLE PRECISION,"
    " launches DOUBLE PRECISION, PRIMARY KEY (run_id, seq));"
    "CREATE TABLE IF NOT EXISTS tg_accepts ("
    " id BIGINT PRIMARY KEY, workload TEXT NOT NULL, label TEXT NOT NULL, run_id BIGINT NOT NULL,"
    " reason TEXT NOT NULL, time TEXT NOT NULL);"
    "INSERT INTO tg_lock (id) VALUES (1) ON CONFLICT (id) DO NOTHING;"
    "INSERT INTO tg_meta (key, value) VALUES ('schema_version', '" HS_STR(TG_HISTORY_SCHEMA) "'),"
    " ('application', '" HS_APPLICATION "') ON CONFLICT (key) DO NOTHING;";

/* ---------------------------------------------------------------- helpers */

/* The first column of the first row, copied into an arena. */
typedef struct hs_first {
    tg_arena *arena;
    const char *value;
    bool got;
} hs_first;

static bool hs_first_row(void *ctx, size_t n, const char *const *cols)
{
    hs_first *f = ctx;
    if (f->got || n == 0) return true;
    f->got = true;
    f->value = cols[0] ? tg_arena_strdup(f->arena, cols[0]) : NULL;
    return !cols[0] || f->value;
}

/* Every column of every row, row after row ("" for NULL), in an arena;
** n counts the cells. The growing array is malloc'd: hs_list_free. */
typedef struct hs_list {
    tg_arena *arena;
    const char **items;
    size_t n, cap;
} hs_list;

static bool hs_list_row(void *ctx, size_t n, const char *const *cols)
{
    hs_list *l = ctx;
    for (size_t i = 0; i < n; i++) {
        const char *v = tg_arena_strdup(l->arena, cols[i] ? cols[i] : "");
        if (!v || !TG_PUSH(l->items, l->n, l->cap, v)) return false;
    }
    return true;
}

static void hs_list_free(hs_list *l)
{
    free(l->items);
    l->items = NULL;
}

/* A double as the stores take it: all 17 digits; NaN is NULL. */
static const char *hs_f64(tg_arena *a, double v)
{
    return isnan(v) ? NULL : tg_arena_printf(a, "%.17g", v);
}

/* "2026-12-07T03:00:00Z", now. */
static void hs_now(char buf[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Does t[0..) have the shape (d: a digit, any other byte itself)? */
static bool hs_shaped(const char *t, const char *shape)
{
    for (; *shape; t++, shape++)
        if (*shape == 'd' ? !(*t >= '0' && *t <= '9') : *t != *shape) return false;
    return true;
}

static int hs_digits(const char *t, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (t[i] - '0');
    return v;
}

/* A time as the history keeps it: ISO 8601 UTC to the second
** ("2026-12-07T03:00:00Z"), from an ISO 8601 date ("2026-12-07": its
** midnight) or date and time with Z or an offset ("+02:00", "+0200")
** and any fraction of a second (dropped). One form, so that the history
** order, which compares times as text, is the order of time. False when t
** is no such time (a day past the month's end included). */
bool tg_history_time(const char *t, char out[32])
{
    if (!hs_shaped(t, "dddd-dd-dd")) return false;
    struct tm tm = {.tm_year = hs_digits(t, 4) - 1900, .tm_mon = hs_digits(t + 5, 2) - 1,
                    .tm_mday = hs_digits(t + 8, 2)};
    const char *p = t + 10;
    long offset = 0;
    if (*p) {
        if (!hs_shaped(p, "Tdd:dd:dd")) return false;
        tm.tm_hour = hs_digits(p + 1, 2), tm.tm_min = hs_digits(p + 4, 2), tm.tm_sec = hs_digits(p + 7, 2);
        p += 9;
        if (*p == '.' && p[1] >= '0' && p[1] <= '9')
            for (p++; *p >= '0' && *p <= '9';) p++;
        if (*p == 'Z') {
            p++;
        } else if ((*p == '+' || *p == '-') && (hs_shaped(p + 1, "dd:dd") || hs_shaped(p + 1, "dddd"))) {
            bool colon = p[3] == ':';
            int hh = hs_digits(p + 1, 2), mm = hs_digits(p + (colon ? 4 : 3), 2);
            if (hh > 23 || mm > 59) return false;
            offset = (*p == '+' ? 1 : -1) * (hh * 3600L + mm * 60L);
            p += colon ? 6 : 5;
        } else {
            return false;
        }
        if (*p) return false;
    }
    struct tm want = tm;
    time_t utc = timegm(&tm);
    /* timegm carries February 30 into March: a date it moved is no date */
    if (utc == (time_t)-1 || tm.tm_mday != want.tm_mday || tm.tm_mon != want.tm_mon || tm.tm_hour != want.tm_hour ||
        tm.tm_min != want.tm_min || tm.tm_sec != want.tm_sec)
        return false;
    utc -= offset;
    if (!gmtime_r(&utc, &tm)) return false;
    return strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 20;
}

/* ---------------------------------------------------------------- open */

static bool hs_has(const hs_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], name) == 0) return true;
    return false;
}

/* The database's tables (tables_sql of the row), or none listed. */
static tg_status hs_tables(tg_history *h, tg_arena *a, hs_list *out, tg_diag *diag)
{
    *out = (hs_list){.arena = a};
    return h->ops->tables_sql ? hs_exec(h, h->ops->tables_sql, NULL, 0, hs_list_row, out, diag) : TG_OK;
}

static tg_status hs_refuse_foreign(tg_history *h, const hs_list *tables, tg_diag *diag)
{
    /* each name cut at 64 bytes: HS_TABLES_SHOWN of them fit */
    char names[HS_TABLES_SHOWN * 70 + 32] = "";
    size_t len = 0;
    for (size_t i = 0; i < tables->n && i < HS_TABLES_SHOWN; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%.64s", i ? ", " : "", tables->items[i]);
    if (tables->n > HS_TABLES_SHOWN)
        snprintf(names + len, sizeof names - len, " and %zu more", tables->n - HS_TABLES_SHOWN);
    if (tables->n)
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history (it holds other tables: %s)", h->shown, names);
    else
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history (it holds other tables and no tg_meta)",
                      h->shown);
    return TG_EUSAGE;
}

typedef struct hs_meta {
    tg_arena *arena;
    const char *version, *application;
} hs_meta;

static bool hs_meta_row(void *ctx, size_t n, const char *const *cols)
{
    hs_meta *m = ctx;
    if (n < 2 || !cols[0] || !cols[1]) return true;
    const char **slot = strcmp(cols[0], "schema_version") == 0 ? &m->version
                        : strcmp(cols[0], "application") == 0 ? &m->application : NULL;
    if (!slot) return true;
    *slot = tg_arena_strdup(m->arena, cols[1]);
    return *slot != NULL;
}

/* Is the database a history this build reads? Reads only. */
static tg_status hs_check(tg_history *h, tg_arena *a, tg_diag *diag)
{
    hs_list tables;
    tg_status st = hs_tables(h, a, &tables, diag);
    if (st == TG_OK && h->ops->tables_sql && !hs_has(&tables, "tg_meta")) st = hs_refuse_foreign(h, &tables, diag);
    hs_list_free(&tables);
    if (st != TG_OK) return st;
    hs_meta m = {.arena = a};
    static const char sql[] = "SELECT key, value FROM tg_meta";
    if (h->ops->tables_sql) {
        st = hs_exec(h, sql, NULL, 0, hs_meta_row, &m, diag);
    } else {
        /* a row that cannot list tables: no tg_meta to read is no history */
        tg_diag scratch;
        tg_diag_init(&scratch);
        st = hs_exec(h, sql, NULL, 0, hs_meta_row, &m, &scratch);
        tg_diag_clear(&scratch);
        if (st != TG_OK) return hs_refuse_foreign(h, &tables, diag);
    }
    if (st != TG_OK) return st;
    if (!m.application || strcmp(m.application, HS_APPLICATION) != 0) {
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history (its tg_meta table is another program's)",
                      h->shown);
        return TG_EUSAGE;
    }
    char *end = NULL;
    long version = m.version ? strtol(m.version, &end, 10) : 0;
    if (!m.version || *end || version < 1) {
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history (schema_version \"%s\")", h->shown,
                      m.version ? m.version : "");
        return TG_EUSAGE;
    }
    if (version > TG_HISTORY_SCHEMA) {
        tg_diag_error(diag, TG_EUSAGE,
                      "%s was written by a newer tracegate (history schema %ld; this one reads schema %d)",
                      h->shown, version, TG_HISTORY_SCHEMA);
        return TG_EUSAGE;
    }
    return TG_OK;
}

/* Make the schema in a database that held no table when it was opened.
** In a write transaction, so that two first writers take turns: the
** second finds the first's tables (and creates nothing); a database that
** got other tables meanwhile is refused. */
static tg_status hs_create(tg_history *h, tg_arena *a, tg_diag *diag)
{
    tg_status st = h->ops->begin_write(h->s, diag);
    if (st != TG_OK) return st;
    hs_list tables;
    st = hs_tables(h, a, &tables, diag);
    if (st == TG_OK && tables.n && !hs_has(&tables, "tg_meta")) st = hs_refuse_foreign(h, &tables, diag);
    if (st == TG_OK && !tables.n) st = h->ops->script(h->s, hs_schema, diag);
    hs_list_free(&tables);
    if (st == TG_OK) st = h->ops->commit(h->s, diag);
    if (st != TG_OK) h->ops->rollback(h->s);
    return st;
}

void tg_history_close(tg_history *h)
{
    if (!h) return;
    if (h->s) h->ops->close(h->s);
    tg_arena_free(h->arena);
    free(h->shown);
    free(h);
}

tg_history *tg_history_open(const char *db, tg_history_mode mode, tg_diag *diag)
{
    if (!db || !*db) {
        tg_diag_error(diag, TG_EUSAGE, "no history named: --db needs a file or a postgresql:// URI");
        return NULL;
    }
    tg_history *h = calloc(1, sizeof *h);
    if (h) {
        h->ops = tg_store_for(db);
        h->shown = h->ops->shown ? h->ops->shown(db) : strdup(db);
        h->arena = tg_arena_new();
    }
    if (!h || !h->shown || !h->arena) {
        /* never db itself: it may hold a password */
        if (h && h->shown) tg_diag_error(diag, TG_EINTERNAL, "out of memory opening the history %s", h->shown);
        else tg_diag_error(diag, TG_EINTERNAL, "out of memory opening a history");
        tg_history_close(h);
        return NULL;
    }
    bool exists = false;
    h->s = h->ops->open(db, mode == TG_HISTORY_WRITE, &exists, diag);
    tg_arena *a = tg_arena_new();
    tg_status st = !h->s ? TG_EUSAGE : !a ? hs_oom(h, diag) : TG_OK;
    if (st == TG_OK && !exists && mode == TG_HISTORY_READ) {
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history (it holds no table)", h->shown);
        st = TG_EUSAGE;
    }
    if (st == TG_OK && !exists) st = hs_create(h, a, diag);
    if (st == TG_OK) st = hs_check(h, a, diag);
    tg_arena_free(a);
    if (st != TG_OK) {
        tg_history_close(h);
        return NULL;
    }
    return h;
}

/* ---------------------------------------------------------------- append */

#define HS_KEY_OPS 5             /* top ops a new workload's key hashes */

/* A new workload's key: "w" and 12 hex digits of the SHA-256 of its GPU,
** format, marker and top op names; "-2", "-3", ... after it while another
** workload holds that key. In arena. */
static const char *hs_new_key(const tg_hist_run *run, const hs_cands *c, tg_arena *arena)
{
    tg_sha256 sha;
    tg_sha256_init(&sha);
    tg_sha256_str(&sha, run->gpu);
    tg_sha256_str(&sha, run->format);
    tg_sha256_str(&sha, run->marker);
    for (size_t i = 0, used = 0; run->work && i < run->work->n_ops && used < HS_KEY_OPS; i++)
        if (run->work->ops[i].name && strcmp(run->work->ops[i].name, TG_WORK_OTHER) != 0) {
            tg_sha256_str(&sha, run->work->ops[i].name);
            used++;
        }
    char hex[TG_SHA256_HEX];
    tg_sha256_hex(&sha, hex);
    for (unsigned k = 1;; k++) {
        const char *key = k == 1 ? tg_arena_printf(arena, "w%.12s", hex) : tg_arena_printf(arena, "w%.12s-%u", hex, k);
        if (!key) return NULL;
        bool taken = false;
        for (size_t i = 0; i < c->n && !taken; i++) taken = strcmp(c->runs[i].workload, key) == 0;
        if (!taken) return key;
    }
}

/* What people read of a workload: its first run's name for a known key;
** for a new one, the run's own, its top op's name or its trace's. */
static const char *hs_workload_name(const tg_hist_run *run, const char *key, const hs_cands *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->runs[i].workload, key) == 0 && c->runs[i].workload_name) return c->runs[i].workload_name;
    if (run->workload_name) return run->workload_name;
    for (size_t i = 0; run->work && i < run->work->n_ops; i++)
        if (run->work->ops[i].name && strcmp(run->work->ops[i].name, TG_WORK_OTHER) != 0)
            return run->work->ops[i].name;
    return run->trace ? run->trace : key;
}

/* s as the store keeps it: UTF-8 (an invalid byte becomes U+FFFD). */
static const char *hs_text(tg_arena *a, const char *s, bool *ok)
{
    if (!s || tg_utf8_valid(s, strlen(s))) return s;
    const char *clean = tg_utf8_clean(a, s);
    if (!clean) *ok = false;
    return clean;
}

static char *hs_samples_text(tg_arena *a, const double *v, size_t n)
{
    char *text = tg_arena_alloc(a, n * 26 + 1), *p = text;
    if (!text) return NULL;
    for (size_t i = 0; i < n; i++) p += sprintf(p, "%s%.17g", i ? " " : "", v[i]);
    return text;
}

static tg_status hs_insert_metrics(tg_history *h, const tg_hist_run *run, const char *id, tg_arena *a,
                                   tg_diag *diag)
{
    static const char sql[] = "INSERT INTO tg_metrics (run_id, seq, rule, metric, samples_field, unit, direction,"
                              " value, verdict, samples) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
    for (size_t i = 0; i < run->n_metrics; i++) {
        const tg_hist_metric *m = &run->metrics[i];
        bool ok = true;
        const char *p[] = {id, hs_i64(a, (int64_t)i), hs_text(a, m->rule, &ok), hs_text(a, m->metric, &ok),
                           hs_text(a, m->samples_field, &ok), tg_unit_key(m->unit), hs_i64(a, m->direction),
                           hs_f64(a, m->value), hs_text(a, m->verdict, &ok),
                           m->samples && m->n_samples ? hs_samples_text(a, m->samples, m->n_samples) : NULL};
        if (!ok || !p[1] || !p[6] || (!isnan(m->value) && !p[7]) || (m->samples && m->n_samples && !p[9]))
            return hs_oom(h, diag);
        if (!m->rule) {
            tg_diag_error(diag, TG_EINTERNAL, "a metric of run %s has no rule id, so %s cannot keep it", id, h->shown);
            return TG_EINTERNAL;
        }
        tg_status st = hs_exec(h, sql, p, sizeof p / sizeof *p, NULL, NULL, diag);
        if (st != TG_OK) return st;
    }
    return TG_OK;
}

static tg_status hs_insert_work(tg_history *h, const tg_workload *w, const char *id, tg_arena *a, tg_diag *diag)
{
    static const char sql[] = "INSERT INTO tg_work (run_id, seq, list, kind, name, count, total, time, launches)"
                              " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
    size_t seq = 0;
    for (int list = 0; list < 2; list++) {
        const tg_work_entry *e = list ? w->ranges : w->ops;
        size_t n = list ? w->n_ranges : w->n_ops;
        for (size_t i = 0; i < n; i++, seq++) {
            bool ok = true;
            const char *p[] = {id, hs_i64(a, (int64_t)seq), list ? "ranges" : "ops", tg_work_kind_name(e[i].kind),
                               hs_text(a, e[i].name ? e[i].name : "", &ok), hs_i64(a, e[i].count),
                               hs_f64(a, e[i].total), hs_f64(a, e[i].time), hs_f64(a, e[i].launches)};
            if (!ok || !p[1] || !p[5]) return hs_oom(h, diag);
            tg_status st = hs_exec(h, sql, p, sizeof p / sizeof *p, NULL, NULL, diag);
            if (st != TG_OK) return st;
        }
    }
    return TG_OK;
}

static tg_status hs_insert_run(tg_history *h, const tg_hist_run *r, const char *id, tg_arena *a, tg_diag *diag)
{
    static const char sql[] = "INSERT INTO tg_runs (" HS_RUN_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
                              " $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)";
    const tg_workload *w = r->work;
    bool ok = true;
    const char *p[HS_N_RUN_COLS] = {
        id, r->workload, hs_text(a, r->workload_name, &ok), r->label, r->time, hs_text(a, r->branch, &ok),
        hs_text(a, r->gpu, &ok), hs_text(a, r->format, &ok), hs_text(a, r->marker, &ok),
        hs_text(a, r->nsys_version, &ok), hs_text(a, r->schema_version, &ok), hs_text(a, r->trace, &ok),
        hs_text(a, r->rules_digest, &ok), hs_text(a, r->metrics_digest, &ok), hs_text(a, r->tool_version, &ok),
        hs_text(a, r->verdict, &ok), r->regressed ? "1" : "0", hs_i64(a, r->epoch), w ? "1" : "0",
        w && w->steady_iterations != TG_NULL_I64 ? hs_i64(a, w->steady_iterations) : NULL,
        w ? hs_f64(a, w->gpu_time) : NULL, w ? hs_f64(a, w->period) : NULL, w ? hs_f64(a, w->idle) : NULL,
        w ? hs_f64(a, w->total) : NULL};
    if (!ok || !p[17]) return hs_oom(h, diag);
    tg_status st = hs_exec(h, sql, p, HS_N_RUN_COLS, NULL, NULL, diag);
    if (st == TG_OK) st = hs_insert_metrics(h, r, id, a, diag);
    if (st == TG_OK && w) st = hs_insert_work(h, w, id, a, diag);
    return st;
}

/* A stored run of the same workload and label: refused, or deleted
** (replace), and what pointed at it (an accepted change point, the epoch
** of the runs judged since) points at the new run. */
static tg_status hs_take_label(tg_history *h, const tg_hist_run *r, bool replace, const char *new_id, tg_arena *a,
                               tg_diag *diag)
{
    hs_first old = {.arena = a};
    const char *const key[] = {r->workload, r->label};
    tg_status st = hs_exec(h, "SELECT id FROM tg_runs WHERE workload = $1 AND label = $2", key, 2, hs_first_row, &old,
                           diag);
    if (st != TG_OK || !old.got) return st;
    if (!replace) {
        tg_diag_error(diag, TG_EUSAGE,
                      "%s already holds a run labelled %s of workload %s; pass --replace to replace it",
                      h->shown, r->label, r->workload);
        return TG_EUSAGE;
    }
    const char *const id[] = {old.value}, *const moved[] = {new_id, old.value};
    static const char *const deletes[] = {"DELETE FROM tg_metrics WHERE run_id = $1",
                                          "DELETE FROM tg_work WHERE run_id = $1", "DELETE FROM tg_runs WHERE id = $1"};
    for (size_t i = 0; i < 3 && st == TG_OK; i++) st = hs_exec(h, deletes[i], id, 1, NULL, NULL, diag);
    if (st == TG_OK) st = hs_exec(h, "UPDATE tg_accepts SET run_id = $1 WHERE run_id = $2", moved, 2, NULL, NULL, diag);
    if (st == TG_OK) st = hs_exec(h, "UPDATE tg_runs SET epoch = $1 WHERE epoch = $2", moved, 2, NULL, NULL, diag);
    return st;
}

/* "the-trace.sqlite" of "/runs/the-trace.sqlite". */
static const char *hs_base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* Fill in what the store assigns (into out: label, time, key, name), then
** store the run. */
static tg_status hs_append_one(tg_history *h, const tg_hist_run *in, tg_hist_run *out, bool replace, hs_cands *c,
                               tg_arena *a, tg_diag *diag)
{
    *out = *in;
    bool ok = true;
    out->label = hs_text(h->arena, in->label ? in->label : hs_base_name(in->trace), &ok);
    if (ok && (!out->label || !*out->label)) {
        tg_diag_error(diag, TG_EUSAGE, "a run without a label or a trace file name cannot be added to %s", h->shown);
        return TG_EUSAGE;
    }
    if (!ok) return hs_oom(h, diag);
    char time[32];
    if (!in->time) {
        hs_now(time);
    } else if (!tg_history_time(in->time, time)) {
        tg_diag_error(diag, TG_EUSAGE, "the time of run %s (%s) is not an ISO 8601 time, as 2026-12-07T03:00:00Z",
                      out->label, in->time);
        return TG_EUSAGE;
    }
    out->time = in->time && strcmp(in->time, time) == 0 ? in->time : tg_arena_strdup(h->arena, time);
    if (!out->time) return hs_oom(h, diag);
    const char *key = in->workload ? in->workload : tg_history_match(in, c->runs, c->n, TG_BASELINE_DEFAULT_MIN_MATCH);
    if (!key) key = hs_new_key(in, c, a);
    out->workload = key == in->workload ? hs_text(h->arena, key, &ok) : key ? tg_arena_strdup(h->arena, key) : NULL;
    const char *name = out->workload ? hs_workload_name(in, out->workload, c) : NULL;
    out->workload_name = name == in->workload_name ? hs_text(h->arena, name, &ok)
                         : name ? tg_arena_strdup(h->arena, name) : NULL;
    hs_first id = {.arena = a};
    if (!ok || !out->workload || !out->workload_name) return hs_oom(h, diag);
    tg_status st = hs_exec(h, "SELECT COALESCE(MAX(id), 0) + 1 FROM tg_runs", NULL, 0, hs_first_row, &id, diag);
    if (st == TG_OK && !id.value) st = hs_oom(h, diag);
    if (st == TG_OK) st = hs_take_label(h, out, replace, id.value, a, diag);
    if (st == TG_OK) st = hs_insert_run(h, out, id.value, a, diag);
    if (st != TG_OK) return st;
    out->id = hs_parse_i64(id.value);
    return TG_PUSH(c->runs, c->n, c->cap, *out) ? TG_OK : hs_oom(h, diag);
}

tg_status tg_history_append(tg_history *h, tg_hist_run *runs, size_t n, bool replace, tg_diag *diag)
{
    if (!n) return TG_OK;
    bool match = false;
    for (size_t i = 0; i < n; i++) match |= !runs[i].workload;
    tg_arena *a = tg_arena_new();
    tg_hist_run *done = calloc(n, sizeof *done);
    hs_cands c = {0};
    tg_status st = !a || !done ? hs_oom(h, diag) : h->ops->begin_write(h->s, diag);
    bool began = st == TG_OK;
    if (st == TG_OK) st = tg_hs_candidates(h, match, a, &c, diag);
    for (size_t i = 0; i < n && st == TG_OK; i++) st = hs_append_one(h, &runs[i], &done[i], replace, &c, a, diag);
    if (st == TG_OK) st = h->ops->commit(h->s, diag);
    if (st == TG_OK) {
        /* the caller's runs learn what the store gave them only once it is theirs */
        memcpy(runs, done, n * sizeof *runs);
    } else if (began) {
        h->ops->rollback(h->s);
    }
    free(c.runs);
    free(done);
    tg_arena_free(a);
    return st;
}

/* ---------------------------------------------------------------- accepts */

/* Accept each run labelled label not accepted yet; *added: how many. */
static tg_status hs_accept_runs(tg_history *h, const char *label, const char *reason, const char *time, tg_arena *a,
                                size_t *added, tg_diag *diag)
{
    hs_list runs = {.arena = a};    /* id, workload of each */
    const char *const lp[] = {label};
    tg_status st = hs_exec(h, "SELECT id, workload FROM tg_runs WHERE label = $1 ORDER BY id", lp, 1, hs_list_row,
                           &runs, diag);
    if (st == TG_OK && !runs.n) {
        tg_diag_error(diag, TG_EUSAGE, "%s holds no run labelled %s", h->shown, label);
        st = TG_EUSAGE;
    }
    for (size_t i = 0; i + 1 < runs.n && st == TG_OK; i += 2) {
        hs_first seen = {.arena = a}, next = {.arena = a};
        const char *const rp[] = {runs.items[i]};
        st = hs_exec(h, "SELECT id FROM tg_accepts WHERE run_id = $1", rp, 1, hs_first_row, &seen, diag);
        if (st != TG_OK || seen.got) continue;
        st = hs_exec(h, "SELECT COALESCE(MAX(id), 0) + 1 FROM tg_accepts", NULL, 0, hs_first_row, &next, diag);
        if (st == TG_OK && !next.value) st = hs_oom(h, diag);
        const char *const p[] = {next.value, runs.items[i + 1], label, runs.items[i], reason, time};
        if (st == TG_OK)
            st = hs_exec(h,
                         "INSERT INTO tg_accepts (id, workload, label, run_id, reason, time)"
                         " VALUES ($1, $2, $3, $4, $5, $6)",
                         p, 6, NULL, NULL, diag);
        if (st == TG_OK) (*added)++;
    }
    hs_list_free(&runs);
    if (st == TG_OK && !*added) {
        tg_diag_error(diag, TG_EUSAGE, "run %s is already accepted in %s", label, h->shown);
        st = TG_EUSAGE;
    }
    return st;
}

tg_status tg_history_accept(tg_history *h, const char *label, const char *reason, const char *time, tg_diag *diag)
{
    if (!label || !*label) {
        tg_diag_error(diag, TG_EUSAGE, "accepting a change point in %s needs the label of its first run (--label)",
                      h->shown);
        return TG_EUSAGE;
    }
    if (!reason || !*reason) {
        tg_diag_error(diag, TG_EUSAGE, "accepting run %s in %s needs a reason (--reason)", label, h->shown);
        return TG_EUSAGE;
    }
    char utc[32];
    if (!time) {
        hs_now(utc);
    } else if (!tg_history_time(time, utc)) {
        tg_diag_error(diag, TG_EUSAGE,
                      "the time of the acceptance (%s) is not an ISO 8601 time, as 2026-12-07T03:00:00Z",
                      time);
        return TG_EUSAGE;
    }
    time = utc;
    tg_arena *a = tg_arena_new();
    bool ok = true;
    const char *clean_reason = a ? hs_text(a, reason, &ok) : NULL;
    const char *clean_label = a ? hs_text(a, label, &ok) : NULL;
    if (!a || !ok) {
        tg_arena_free(a);
        return hs_oom(h, diag);
    }
    tg_status st = h->ops->begin_write(h->s, diag);
    if (st != TG_OK) {
        tg_arena_free(a);
        return st;
    }
    size_t added = 0;
    st = hs_accept_runs(h, clean_label, clean_reason, time, a, &added, diag);
    if (st == TG_OK) st = h->ops->commit(h->s, diag);
    if (st != TG_OK) h->ops->rollback(h->s);
    tg_arena_free(a);
    return st;
}
