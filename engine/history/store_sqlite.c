/*
** The history in an SQLite file (docs/history.md, "Stores"): the row of
** the stores' table (store.h) for every --db that is not a PostgreSQL URI.
** The file is the embedded default: a CI keeps it between runs as a cache
** or an artifact.
**
** What the row adds to the SQL of history_store.c:
**   - parameters $N become ?N, every value is bound as text (the columns'
**     affinity makes numbers of them: SQLite's conversion gives back the
**     double that "%.17g" printed for magnitudes from 1e-250 to 1e250,
**     measured on random doubles; it is not correctly rounded nearer the
**     ends of the range, where no time, size or ratio lies), and a REAL
**     column is returned as "%.17g" (sqlite3_column_text would round it
**     to 15 digits);
**   - a READ open never creates anything (SQLITE_OPEN_READONLY); a WRITE
**     open may create the file, and is refused when the file or its
**     directory (where the rollback journal goes) cannot be written;
**   - the rollback journal (a new file's default) with synchronous=FULL:
**     a writer killed mid-append leaves a hot journal that the next
**     connection plays back, and the history is as it was before; a READ
**     open that meets one has it played back (the one write it makes:
**     what it restores is the history as it was);
**   - writers BEGIN IMMEDIATE and wait for each other up to the busy
**     timeout: TG_HISTORY_BUSY_MS (tg_store_busy_ms), default 60 s (ten CI
**     jobs appending to one file on a loaded machine), then "... is
**     locked";
**   - a history is a file anyone may hand us, so the connection runs with
**     SQLite's defensive settings and without triggers and views (the
**     schema has none; a crafted file's would run on our inserts).
**
** Exit classes (store.h): what the user named is not a history, is
** corrupt, locked or read-only: TG_EUSAGE; a file the system will not let
** us open or read (permissions, I/O errors): TG_ETRACE; out of memory or
** a disk that is full: TG_EINTERNAL.
*/
#include "store.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define SQ_STMT_CACHE 24          /* prepared statements kept (an append runs ~8 kinds) */
#define SQ_MAX_PARAMS 999         /* the smallest SQLITE_MAX_VARIABLE_NUMBER of any build */

typedef struct sq_cached {
    char *sql;                  /* the statement as prepared (?N) */
    sqlite3_stmt *stmt;
} sq_cached;

struct tg_store {
    sqlite3 *db;
    char *name;                 /* the path, as messages name it */
    int busy_ms;
    sq_cached cache[SQ_STMT_CACHE];
    size_t n_cache, next_evict;
};

/* Everything that is not a PostgreSQL URI is a path: this row is asked last. */
static bool sq_claims(const char *db)
{
    return db != NULL;
}

/* ---------------------------------------------------------- messages */

/* One sentence naming the file for an SQLite error rc (extended code)
** with SQLite's own words (msg) after it. */
static tg_status sq_error(const char *name, int rc, const char *msg, int busy_ms, tg_diag *diag)
{
    if (!msg) msg = sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        tg_diag_error(diag, TG_EUSAGE,
                      "%s is locked by another writer (waited %d ms; TG_HISTORY_BUSY_MS sets how long)", name,
                      busy_ms);
        return TG_EUSAGE;
    case SQLITE_READONLY:
        tg_diag_error(diag, TG_EUSAGE, "%s cannot be written: %s", name, msg);
        return TG_EUSAGE;
    case SQLITE_NOTADB:
        tg_diag_error(diag, TG_EUSAGE, "%s is not a tracegate history: it is not an SQLite database", name);
        return TG_EUSAGE;
    case SQLITE_CORRUPT:
        tg_diag_error(diag, TG_EUSAGE, "%s is a corrupt SQLite database (%s)", name, msg);
        return TG_EUSAGE;
    case SQLITE_CONSTRAINT:
        tg_diag_error(diag, TG_EUSAGE, "%s refused a row: %s", name, msg);
        return TG_EUSAGE;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        tg_diag_error(diag, TG_ETRACE, "%s cannot be read or written (%s)", name, msg);
        return TG_ETRACE;
    case SQLITE_FULL:
        tg_diag_error(diag, TG_EINTERNAL, "%s cannot grow: the disk is full", name);
        return TG_EINTERNAL;
    default:
        tg_diag_error(diag, TG_EINTERNAL, "%s: %s (SQLite)", name, msg);
        return TG_EINTERNAL;
    }
}

static tg_status sq_fail(tg_store *s, int rc, tg_diag *diag)
{
    return sq_error(s->name, rc, sqlite3_errmsg(s->db), s->busy_ms, diag);
}

/* ---------------------------------------------------------- open */

/* Can the directory of path take a new file (the history itself, or the
** rollback journal beside it)? access(2) also says EROFS for a read-only
** mount, which permission bits do not show to root. */
static bool sq_dir_writable(const char *path, int *err)
{
    char *copy = strdup(path);
    if (!copy) {
        *err = ENOMEM;
        return false;
    }
    bool ok = access(dirname(copy), W_OK) == 0;
    *err = ok ? 0 : errno;
    free(copy);
    return ok;
}

/* What the path is before SQLite touches it: refused when it cannot be a
** history for this mode (absent for READ, a directory, not a regular
** file, not writable for WRITE). */
static bool sq_check_path(const char *db, bool create, tg_diag *diag)
{
    struct stat st;
    if (stat(db, &st) != 0) {
        if (errno != ENOENT) {
            tg_diag_error(diag, TG_ETRACE, "%s cannot be read (%s)", db, strerror(errno));
            return false;
        }
        if (!create) {
            tg_diag_error(diag, TG_EUSAGE, "%s: no such history", db);
            return false;
        }
        int err;
        if (!sq_dir_writable(db, &err)) {
            tg_diag_error(diag, TG_EUSAGE, "%s cannot be created: its directory %s (%s)", db,
                          err == ENOENT ? "does not exist" : "is not writable", strerror(err));
            return false;
        }
        return true;
    }
    if (S_ISDIR(st.st_mode)) {
        tg_diag_error(diag, TG_EUSAGE, "%s is a directory, not a tracegate history", db);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        tg_diag_error(diag, TG_EUSAGE, "%s is not a regular file, so not a tracegate history", db);
        return false;
    }
    int err;
    if (create && !sq_dir_writable(db, &err)) {
        tg_diag_error(diag, TG_EUSAGE,
                      "%s cannot be written: its directory, where the rollback journal goes, is not writable (%s)",
                      db, strerror(err));
        return false;
    }
    return true;
}

static int sq_count_tables(sqlite3 *db, int64_t *n)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The connection's settings: a history file is input like any other. */
static void sq_harden(sqlite3 *db, int busy_ms)
{
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, busy_ms);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_exec(db, "PRAGMA synchronous = FULL", NULL, NULL, NULL);
}

static int sq_connect(const char *db, int flags, int busy_ms, sqlite3 **out)
{
    int rc = sqlite3_open_v2(db, out, flags | SQLITE_OPEN_EXRESCODE, NULL);
    if (rc == SQLITE_OK) sq_harden(*out, busy_ms);
    return rc;
}

/* A writer killed mid-append leaves a hot journal, which a read-only
** connection cannot play back (SQLITE_READONLY_ROLLBACK): a connection
** that may write plays it back, restoring the history as it was before
** the append, and the reader then reads that. */
static int sq_roll_back_hot_journal(const char *db, int busy_ms)
{
    sqlite3 *w = NULL;
    int rc = sq_connect(db, SQLITE_OPEN_READWRITE, busy_ms, &w);
    int64_t n;
    if (rc == SQLITE_OK) rc = sq_count_tables(w, &n);
    sqlite3_close(w);
    return rc;
}

static tg_store *sq_open(const char *db, bool create, bool *exists, tg_diag *diag)
{
    long busy_ms;
    if (!db || !tg_store_busy_ms(&busy_ms, diag) || !sq_check_path(db, create, diag)) return NULL;
    tg_store *s = calloc(1, sizeof *s);
    if (s) s->name = strdup(db);
    if (!s || !s->name) {
        free(s);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory opening %s", db);
        return NULL;
    }
    s->busy_ms = (int)busy_ms;   /* at most TG_STORE_BUSY_MS_MAX */
    int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    int rc = sq_connect(db, flags, s->busy_ms, &s->db);
    if (rc == SQLITE_OK && create && sqlite3_db_readonly(s->db, "main") == 1) {
        tg_diag_error(diag, TG_EUSAGE, "%s cannot be written: the file is read-only", db);
        goto fail;
    }
    /* the first read: SQLite reads the header here, so a file that is
    ** not a database, a corrupt first page or a lock shows now */
    int64_t n_tables = 0;
    if (rc == SQLITE_OK) rc = sq_count_tables(s->db, &n_tables);
    if (rc == SQLITE_READONLY_ROLLBACK && sq_roll_back_hot_journal(db, s->busy_ms) == SQLITE_OK) {
        sqlite3_close(s->db);
        s->db = NULL;
        rc = sq_connect(db, flags, s->busy_ms, &s->db);
        if (rc == SQLITE_OK) rc = sq_count_tables(s->db, &n_tables);
    }
    if (rc == SQLITE_READONLY_ROLLBACK) {
        tg_diag_error(diag, TG_EUSAGE,
                      "%s holds an interrupted append that only a writer can roll back, and it cannot be written",
                      db);
        goto fail;
    }
    if (rc != SQLITE_OK) {
        sq_error(db, rc, s->db ? sqlite3_errmsg(s->db) : NULL, s->busy_ms, diag);
        goto fail;
    }
    *exists = n_tables > 0;
    return s;
fail:
    sqlite3_close(s->db);
    free(s->name);
    free(s);
    return NULL;
}

static void sq_close(tg_store *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_cache; i++) {
        sqlite3_finalize(s->cache[i].stmt);
        free(s->cache[i].sql);
    }
    sqlite3_close(s->db);
    free(s->name);
    free(s);
}

/* ---------------------------------------------------------- statements */

/* sql with each $N outside a string literal written ?N, malloc'd. */
static char *sq_rewrite(const char *sql)
{
    char *out = strdup(sql);
    if (!out) return NULL;
    bool in_string = false;
    for (char *p = out; *p; p++) {
        if (*p == '\'') in_string = !in_string;
        else if (!in_string && *p == '$' && p[1] >= '0' && p[1] <= '9') *p = '?';
    }
    return out;
}

/* The prepared statement of sql, from the cache or prepared now. */
static int sq_prepare(tg_store *s, const char *sql, sqlite3_stmt **out)
{
    char *text = sq_rewrite(sql);
    if (!text) return SQLITE_NOMEM;
    for (size_t i = 0; i < s->n_cache; i++)
        if (strcmp(s->cache[i].sql, text) == 0) {
            free(text);
            *out = s->cache[i].stmt;
            return SQLITE_OK;
        }
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v3(s->db, text, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (rc != SQLITE_OK) {
        free(text);
        return rc;
    }
    size_t slot = s->n_cache < SQ_STMT_CACHE ? s->n_cache++ : s->next_evict++ % SQ_STMT_CACHE;
    if (s->cache[slot].stmt) {
        sqlite3_finalize(s->cache[slot].stmt);
        free(s->cache[slot].sql);
    }
    s->cache[slot] = (sq_cached){text, st};
    *out = st;
    return SQLITE_OK;
}

/* Column i of the row as text, a REAL with all 17 digits (into buf). */
static const char *sq_column(sqlite3_stmt *st, int i, char *buf, size_t size)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        return NULL;
    case SQLITE_FLOAT:
        snprintf(buf, size, "%.17g", sqlite3_column_double(st, i));
        return buf;
    default:
        return (const char *)sqlite3_column_text(st, i);
    }
}

#define SQ_COLS_ON_STACK 32

static tg_status sq_step_rows(tg_store *s, sqlite3_stmt *st, tg_store_row_fn row, void *ctx, tg_diag *diag)
{
    int n = sqlite3_column_count(st);
    const char *stack_cols[SQ_COLS_ON_STACK];
    char stack_bufs[SQ_COLS_ON_STACK][32];
    const char **cols = stack_cols;
    char (*bufs)[32] = stack_bufs;
    if (n > SQ_COLS_ON_STACK) {
        cols = malloc((size_t)n * sizeof *cols);
        bufs = malloc((size_t)n * sizeof *bufs);
    }
    tg_status status = TG_OK;
    if (!cols || !bufs) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory reading %s", s->name);
        status = TG_EINTERNAL;
    }
    int rc;
    while (status == TG_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!row) continue;
        for (int i = 0; i < n; i++) cols[i] = sq_column(st, i, bufs[i], sizeof bufs[i]);
        if (!row(ctx, (size_t)n, cols)) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory reading %s", s->name);
            status = TG_EINTERNAL;
        }
    }
    if (status == TG_OK && rc != SQLITE_DONE) status = sq_fail(s, rc, diag);
    if (cols != stack_cols) free(cols);
    if (bufs != stack_bufs) free(bufs);
    return status;
}

static tg_status sq_exec(tg_store *s, const char *sql, const char *const *params, size_t n, tg_store_row_fn row,
                         void *ctx, tg_diag *diag)
{
    if (n > SQ_MAX_PARAMS) {
        tg_diag_error(diag, TG_EINTERNAL, "%s: a statement with %zu parameters (at most %d)", s->name, n,
                      SQ_MAX_PARAMS);
        return TG_EINTERNAL;
    }
    sqlite3_stmt *st;
    int rc = sq_prepare(s, sql, &st);
    if (rc != SQLITE_OK) return sq_fail(s, rc, diag);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++)
        rc = params[i] ? sqlite3_bind_text(st, (int)i + 1, params[i], -1, SQLITE_STATIC)
                       : sqlite3_bind_null(st, (int)i + 1);
    tg_status status = rc == SQLITE_OK ? sq_step_rows(s, st, row, ctx, diag) : sq_fail(s, rc, diag);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return status;
}

static tg_status sq_script(tg_store *s, const char *sql, tg_diag *diag)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? TG_OK : sq_fail(s, rc, diag);
}

/* ---------------------------------------------------------- transactions */

static tg_status sq_begin_write(tg_store *s, tg_diag *diag)
{
    return sq_script(s, "BEGIN IMMEDIATE", diag);
}

/* A deferred transaction: its first read takes the shared lock, and every
** later read sees the same history. */
static tg_status sq_begin_read(tg_store *s, tg_diag *diag)
{
    return sq_script(s, "BEGIN", diag);
}

static tg_status sq_commit(tg_store *s, tg_diag *diag)
{
    return sq_script(s, "COMMIT", diag);
}

/* An error may have ended the transaction already (SQLite rolls back on
** some, a full disk among them). */
static void sq_rollback(tg_store *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

const tg_store_ops tg_store_sqlite_ops = {
    .name = "sqlite",
    .claims = sq_claims,
    .open = sq_open,
    .close = sq_close,
    .begin_write = sq_begin_write,
    .begin_read = sq_begin_read,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .exec = sq_exec,
    .script = sq_script,
    .tables_sql = "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name",
};
