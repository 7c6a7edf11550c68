/*
** The history in PostgreSQL (docs/history.md, "Stores"): the row of the
** stores' table (store.h) for a --db that is a postgresql:// or
** postgres:// URI, through libpq. Teams whose CI runners share one history
** point them all at one database.
**
** What the row adds to the SQL of history_store.c is only the session and
** the transactions:
**   - the session speaks UTF-8 and prints doubles exactly
**     (extra_float_digits = 3: the shortest text that reads back as the
**     same double, as "%.17g" does for the SQLite row);
**   - a writer serializes with every other writer of the database through
**     a transaction-scoped advisory lock taken right after BEGIN (it needs
**     no table, so two first writers creating the schema at once take
**     turns), in READ COMMITTED: each statement after the lock sees every
**     commit made before the lock was granted;
**   - a reader reads one snapshot (REPEATABLE READ READ ONLY): a history
**     being appended to is seen before or after the append, never half;
**   - waiting for a lock ends after TG_HISTORY_BUSY_MS (default 60 s) with
**     "... is locked by another writer", connecting after
**     TG_HISTORY_CONNECT_S (default 10 s).
**
** Every message is one sentence that names the database by its URI with
** the password masked (pg_shown), as history_store.c's messages and
** tg_history_name do (store.h, shown); libpq's notices never reach stderr
** (the library prints nothing).
*/
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

/* The advisory lock of history writers: any fixed 64-bit key; "tghist" and
** a version byte, so that another program's locks are unlikely to meet it. */
#define PG_WRITER_LOCK_KEY 0x7467686973740001LL

#define PG_CONNECT_S_DEFAULT 10

/* What a URI's password is, kept to scrub messages (pg_scrub): the one of
** the user information and up to three password= parameters, each as
** written and percent-decoded. */
#define PG_SECRETS 8

struct tg_store {
    PGconn *conn;
    char *shown;        /* the URI with its password masked */
    char *secrets[PG_SECRETS];  /* the password as written in the URI (pg_shown) */
    size_t n_secrets;
    long busy_ms;       /* lock_timeout of every transaction */
};

static bool pg_claims(const char *db)
{
    return db && (strncmp(db, "postgresql://", 13) == 0 || strncmp(db, "postgres://", 11) == 0);
}

/* ---------------------------------------------------------- messages */

/* Replace s[from..to) with "***" in a malloc'd copy of s (s is freed),
** keeping the replaced bytes, and their percent-decoded form, in
** secrets. */
static char *pg_mask_range(char *s, size_t from, size_t to, char **secrets, size_t *n_secrets)
{
    size_t n = strlen(s);
    char *out = malloc(n - (to - from) + 4);
    char *raw = strndup(s + from, to - from), *decoded = strndup(s + from, to - from);
    if (!out || !raw || !decoded) {
        free(out), free(raw), free(decoded), free(s);
        return NULL;
    }
    char *d = decoded;
    for (const char *p = raw; *p; p++) {
        unsigned byte;
        if (*p == '%' && sscanf(p + 1, "%2x", &byte) == 1 && p[1] && p[2]) {
            *d++ = (char)byte;
            p += 2;
        } else {
            *d++ = *p;
        }
    }
    *d = '\0';
    if (*n_secrets + 2 <= PG_SECRETS) {   /* a URI with more passwords still has them all masked */
        secrets[(*n_secrets)++] = raw;
        secrets[(*n_secrets)++] = decoded;
    } else {
        free(raw), free(decoded);
    }
    memcpy(out, s, from);
    memcpy(out + from, "***", 3);
    memcpy(out + from + 3, s + to, n - to + 1);
    free(s);
    return out;
}

/* The URI as messages show it: the password of "user:PASSWORD@host" and
** the value of a password= parameter become ***. The user information is
** taken to end at the last '@' of the URI, not at the first '/' as libpq
** reads it: a password holding an unescaped '/' is then masked too. The
** cost is a URI with an '@' in a parameter and a port but no user, whose
** port and path are masked: too much hidden, nothing shown. NULL when out
** of memory. */
static char *pg_shown(const char *uri, char **secrets, size_t *n_secrets)
{
    char *s = strdup(uri);
    if (!s) return NULL;
    const char *scheme_end = strstr(s, "://");
    size_t start = scheme_end ? (size_t)(scheme_end - s) + 3 : 0;
    /* the parameters first: a password= value holding an '@' must not
    ** count as the end of the user information */
    const char *q = strchr(s + start, '?');
    for (size_t from = q ? (size_t)(q - s) : strlen(s); s && s[from];) {
        const char *p = strstr(s + from, "password=");
        if (!p) break;
        size_t name = (size_t)(p - s), v = name + 9, e = v + strcspn(s + v, "&");
        bool param = s[name - 1] == '?' || s[name - 1] == '&';
        if (param && e > v) s = pg_mask_range(s, v, e, secrets, n_secrets);
        from = param && e > v ? v + 3 : name + 1;
    }
    const char *at = s ? strrchr(s + start, '@') : NULL;
    if (at) {
        const char *colon = memchr(s + start, ':', (size_t)(at - (s + start)));
        if (colon && colon + 1 < at)
            s = pg_mask_range(s, (size_t)(colon + 1 - s), (size_t)(at - s), secrets, n_secrets);
    }
    return s;
}

/* The name messages give db (store.h): pg_shown, the secrets let go. */
static char *pg_shown_db(const char *db)
{
    char *secrets[PG_SECRETS];
    size_t n = 0;
    char *shown = pg_shown(db, secrets, &n);
    while (n) free(secrets[--n]);
    return shown;
}

/* Mask in line every piece of the URI's password (its parts between URI
** delimiters, of 3 bytes or more): libpq may quote what it misread of a
** malformed URI ('invalid integer value "PASS" for connection option
** "port"' for "user:PASS/WORD@host"). */
static void pg_scrub(const tg_store *s, char *line)
{
    for (size_t i = 0; i < s->n_secrets; i++)
        for (const char *piece = s->secrets[i]; *piece;) {
            size_t n = strcspn(piece, "/?&=:@#");
            for (char *p = line; n >= 3 && (p = memmem(p, strlen(p), piece, n)); p += 3) {
                memcpy(p, "***", 3);
                memmove(p + 3, p + n, strlen(p + n) + 1);
            }
            piece += n + (piece[n] != '\0');
        }
}

/* The first line of a libpq or server message, without a trailing
** period or blanks, with runs of blanks made one (libpq writes
** "FATAL:  role ...") and the password scrubbed, in buf. */
static const char *pg_first_line(const tg_store *s, const char *msg, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *p = msg ? msg : ""; *p && *p != '\n' && n + 1 < size; p++) {
        char c = *p == '\t' || *p == '\r' ? ' ' : *p;
        if (c == ' ' && (n == 0 || buf[n - 1] == ' ')) continue;
        buf[n++] = c;
    }
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '.')) n--;
    buf[n] = '\0';
    if (n == 0) snprintf(buf, size, "no message from libpq");
    pg_scrub(s, buf);
    return buf;
}

/* SQLSTATEs that are the setting's or another writer's doing, not a bug
** (TG_EUSAGE); two characters name a class, three a part of one. Every
** other SQLSTATE is TG_EINTERNAL: history_store.c's SQL is wrong. */
static const char *const pg_usage_states[] = {
    "23",       /* integrity constraint: a label stored twice */
    "25006",    /* read_only_sql_transaction: a read-only server or setting */
    "55P03",    /* lock_not_available: lock_timeout (TG_HISTORY_BUSY_MS) */
    "57014",    /* query_canceled: statement_timeout, a cancel by an operator */
    "28",       /* invalid authorization: a role or password refused */
    "42501",    /* insufficient_privilege: a role granted SELECT only */
    "40",       /* transaction rollback: deadlock or serialization with another session */
    "08",       /* connection exception: the server went away */
    "57P",      /* operator intervention: the server shutting down */
    "53",       /* insufficient resources: disk full, too many connections */
    "3F000",    /* invalid_schema_name: a search_path naming no schema that exists */
};

static tg_status pg_status_of(const char *sqlstate)
{
    if (!sqlstate) return TG_EINTERNAL;
    for (size_t i = 0; i < sizeof pg_usage_states / sizeof pg_usage_states[0]; i++)
        if (strncmp(sqlstate, pg_usage_states[i], strlen(pg_usage_states[i])) == 0) return TG_EUSAGE;
    return TG_EINTERNAL;
}

/* One sentence for a failed result (res may be NULL: libpq out of memory
** or the connection gone); doing says what was asked ("the query"). */
static tg_status pg_fail(tg_store *s, const PGresult *res, const char *doing, tg_diag *diag)
{
    char line[512];
    const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    tg_status st = pg_status_of(sqlstate);
    if (!sqlstate && PQstatus(s->conn) == CONNECTION_BAD) st = TG_EUSAGE;   /* the server went away */
    pg_first_line(s, primary ? primary : PQerrorMessage(s->conn), line, sizeof line);
    if (sqlstate)
        tg_diag_error(diag, st, "%s refused %s: %s (SQLSTATE %s)", s->shown, doing, line, sqlstate);
    else
        tg_diag_error(diag, st, "%s: %s failed: %s", s->shown, doing, line);
    return st;
}

/* libpq's notices (a NOTICE from CREATE TABLE IF NOT EXISTS, a WARNING
** from ROLLBACK outside a transaction) would go to stderr. */
static void pg_quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* ------------------------------------------------------------- open */

/* Run statements without params or results (doing: what they are, for
** the message). */
static tg_status pg_run(tg_store *s, const char *sql, const char *doing, tg_diag *diag)
{
    PGresult *res = PQexec(s->conn, sql);
    ExecStatusType rs = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    tg_status st = TG_OK;
    if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK && rs != PGRES_EMPTY_QUERY) st = pg_fail(s, res, doing, diag);
    PQclear(res);
    return st;
}

/* The tables (and views, foreign tables) of the current schema, the one a
** history's unqualified names go to. pg_class, not
** information_schema.tables: that hides the tables a role has no
** privilege on, and a database holding only those is not empty. */
#define PG_TABLES_SQL                                                                        \
    "SELECT c.relname FROM pg_catalog.pg_class c"                                            \
    " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"                              \
    " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"

/* Does the current schema hold a table? */
static bool pg_has_tables(tg_store *s, bool *exists, tg_diag *diag)
{
    PGresult *res = PQexec(s->conn, "SELECT EXISTS (" PG_TABLES_SQL ")");
    bool ok = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    if (ok) *exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    else pg_fail(s, res, "the list of its tables", diag);
    PQclear(res);
    return ok;
}

static void pg_close(tg_store *s)
{
    if (!s) return;
    PQfinish(s->conn);
    free(s->shown);
    for (size_t i = 0; i < s->n_secrets; i++) free(s->secrets[i]);
    free(s);
}

static tg_store *pg_open(const char *db, bool create, bool *exists, tg_diag *diag)
{
    (void)create;   /* the database must exist; WRITE makes the schema (history_store.c) */
    long connect_s;
    tg_store *s = calloc(1, sizeof *s);
    if (!s || !(s->shown = pg_shown(db, s->secrets, &s->n_secrets))) {
        pg_close(s);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory opening a PostgreSQL history");
        return NULL;
    }
    if (!tg_store_env_long("TG_HISTORY_CONNECT_S", PG_CONNECT_S_DEFAULT, 1, 3600, "seconds", &connect_s, diag) ||
        !tg_store_busy_ms(&s->busy_ms, diag)) {
        pg_close(s);
        return NULL;
    }
    char timeout[24];
    snprintf(timeout, sizeof timeout, "%ld", connect_s);
    /* Before dbname the URI may override them, after it not: the URI's own
    ** connect_timeout wins, the encoding is ours. */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding", NULL};
    const char *const values[] = {timeout, "tracegate", db, "UTF8", NULL};
    s->conn = PQconnectdbParams(keys, values, 1);
    if (!s->conn) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory connecting to %s", s->shown);
        pg_close(s);
        return NULL;
    }
    PQsetNoticeProcessor(s->conn, pg_quiet, NULL);
    if (PQstatus(s->conn) != CONNECTION_OK) {
        char line[512];
        tg_diag_error(diag, TG_EUSAGE, "%s cannot be opened: %s", s->shown,
                      pg_first_line(s, PQerrorMessage(s->conn), line, sizeof line));
        pg_close(s);
        return NULL;
    }
    if (pg_run(s, "SET extra_float_digits = 3", "the session's settings", diag) != TG_OK ||
        !pg_has_tables(s, exists, diag)) {
        pg_close(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------ transactions */

static void pg_rollback(tg_store *s)
{
    if (PQtransactionStatus(s->conn) == PQTRANS_IDLE) return;
    PQclear(PQexec(s->conn, "ROLLBACK"));
}

/* BEGIN with the transaction's lock_timeout (every lock it waits for,
** the writers' lock first, ends after TG_HISTORY_BUSY_MS). */
static tg_status pg_begin(tg_store *s, const char *begin, tg_diag *diag)
{
    char set[64];
    /* 0 would mean no timeout at all; 1 ms is as good as not waiting */
    snprintf(set, sizeof set, "SET LOCAL lock_timeout = %ld", s->busy_ms > 0 ? s->busy_ms : 1);
    tg_status st = pg_run(s, begin, "BEGIN", diag);
    if (st == TG_OK && (st = pg_run(s, set, "the transaction's lock timeout", diag)) != TG_OK) pg_rollback(s);
    return st;
}

static tg_status pg_begin_write(tg_store *s, tg_diag *diag)
{
    tg_status st = pg_begin(s, "BEGIN", diag);
    if (st != TG_OK) return st;
    char lock[80];
    snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%lld)", PG_WRITER_LOCK_KEY);
    PGresult *res = PQexec(s->conn, lock);
    if (res && PQresultStatus(res) == PGRES_TUPLES_OK) {
        PQclear(res);
        return TG_OK;
    }
    const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (sqlstate && strcmp(sqlstate, "55P03") == 0) {
        tg_diag_error(diag, TG_EUSAGE, "%s is locked by another writer (waited %ld ms; TG_HISTORY_BUSY_MS sets how long)",
                      s->shown, s->busy_ms);
        st = TG_EUSAGE;
    } else {
        st = pg_fail(s, res, "the writers' lock", diag);
    }
    PQclear(res);
    pg_rollback(s);
    return st;
}

static tg_status pg_begin_read(tg_store *s, tg_diag *diag)
{
    return pg_begin(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", diag);
}

/* COMMIT of a transaction that failed earlier answers ROLLBACK without an
** error: that is a failure too. */
static tg_status pg_commit(tg_store *s, tg_diag *diag)
{
    PGresult *res = PQexec(s->conn, "COMMIT");
    tg_status st = TG_OK;
    if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
        st = pg_fail(s, res, "the commit", diag);
        pg_rollback(s);
    } else if (strcmp(PQcmdStatus(res), "COMMIT") != 0) {
        tg_diag_error(diag, TG_EINTERNAL, "%s rolled the transaction back instead of committing it",
                      s->shown);
        st = TG_EINTERNAL;
    }
    PQclear(res);
    return st;
}

/* -------------------------------------------------------- statements */

/* The rows of one result to row; false when row said out of memory. */
static bool pg_rows(const PGresult *res, tg_store_row_fn row, void *ctx, const char ***vals, int *cap)
{
    int cols = PQnfields(res);
    if (cols > *cap) {
        const char **grown = realloc(*vals, (size_t)cols * sizeof *grown);
        if (!grown) return false;
        *vals = grown;
        *cap = cols;
    }
    for (int r = 0; r < PQntuples(res); r++) {
        for (int c = 0; c < cols; c++) (*vals)[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
        if (!row(ctx, (size_t)cols, *vals)) return false;
    }
    return true;
}

/* Rows come one result each (single-row mode), so that a load of a large
** history never holds its whole result in libpq beside what the caller
** builds of it. Every result is read to the end, also after an error:
** the connection is then ready for the next statement. */
static tg_status pg_exec(tg_store *s, const char *sql, const char *const *params, size_t n, tg_store_row_fn row,
                         void *ctx, tg_diag *diag)
{
    if (n > 65535) {   /* the protocol's limit on parameters */
        tg_diag_error(diag, TG_EINTERNAL, "%s: a statement with %zu parameters (at most 65535)", s->shown, n);
        return TG_EINTERNAL;
    }
    if (!PQsendQueryParams(s->conn, sql, (int)n, NULL, params, NULL, NULL, 0)) return pg_fail(s, NULL, "a query", diag);
    if (row) PQsetSingleRowMode(s->conn);   /* refused: the rows come in one result, as good */
    tg_status st = TG_OK;
    const char **vals = NULL;
    int cap = 0;
    for (PGresult *res; (res = PQgetResult(s->conn)); PQclear(res)) {
        ExecStatusType rs = PQresultStatus(res);
        if (st != TG_OK) continue;
        if (rs != PGRES_SINGLE_TUPLE && rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK) {
            st = pg_fail(s, res, "a query", diag);
        } else if (row && !pg_rows(res, row, ctx, &vals, &cap)) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory reading %s", s->shown);
            st = TG_EINTERNAL;
        }
    }
    free(vals);
    return st;
}

static tg_status pg_script(tg_store *s, const char *sql, tg_diag *diag)
{
    return pg_run(s, sql, "the schema", diag);
}

const tg_store_ops tg_store_pg_ops = {
    .name = "postgresql",
    .claims = pg_claims,
    .shown = pg_shown_db,
    .open = pg_open,
    .close = pg_close,
    .begin_write = pg_begin_write,
    .begin_read = pg_begin_read,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .exec = pg_exec,
    .script = pg_script,
    .tables_sql = PG_TABLES_SQL " ORDER BY 1",
};
