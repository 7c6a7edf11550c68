/*
** Resolution of the export's layout: which tables exist (exact name, or a
** `_V<n>` suffixed variant of newer exports), which columns each has (by
** name through `pragma table_xinfo`, never by position; trace_guard.c
** vets each table and column read), and the prepared
** SELECT every loader steps through once. Also the nsys-id -> pool-id map
** behind every name column, and the two cell readers that intern text.
**
** Absent optional columns are selected as NULL so loaders need not care
** which nsys version wrote the file; docs/architecture.md ("The nsys
** export") lists the drift handled.
*/
#include "trace_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- tables */

/* "NAME_V<digits>" -> digits, else -1. Only this suffix counts: a plain
** prefix match would take TARGET_INFO_GPU_METRICS for TARGET_INFO_GPU. */
static long version_suffix(const char *name, const char *canonical)
{
    size_t n = strlen(canonical);
    if (strncmp(name, canonical, n) != 0) return -1;
    const char *p = name + n;
    if (p[0] != '_' || (p[1] != 'V' && p[1] != 'v') || !isdigit((unsigned char)p[2])) return -1;
    char *end;
    long v = strtol(p + 2, &end, 10);
    return *end ? -1 : v;
}

const char *tg_load_find_table(const tg_loader *ld, const char *canonical)
{
    const char *best = NULL;
    long best_v = -1;
    for (size_t i = 0; i < ld->n_tables; i++) {
        const char *name = ld->table_list[i];
        if (strcmp(name, canonical) == 0) return name;
        long v = version_suffix(name, canonical);
        if (v > best_v) {
            best_v = v;
            best = name;
        }
    }
    return best;
}

/* ---------------------------------------------------------------- columns */

/* Append s to a growing buffer; false when out of memory. */
static bool buf_add(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (!tg_grow((void **)buf, cap, *len + n + 1, 1)) return false;
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return true;
}

/* Double-quoted SQL identifier (quotes doubled) appended to the buffer. */
static bool buf_add_ident(char **buf, size_t *len, size_t *cap, const char *id)
{
    if (!buf_add(buf, len, cap, "\"")) return false;
    for (const char *p = id; *p; p++) {
        char c[3] = {*p, *p == '"' ? '"' : 0, 0};
        if (!buf_add(buf, len, cap, c)) return false;
    }
    return buf_add(buf, len, cap, "\"");
}

typedef struct column_set {
    char **names;
    size_t n, cap;
    int *hidden;               /* ORDER names: pragma table_xinfo's `hidden` */
    size_t hidden_n, hidden_cap;
} column_set;

static void column_set_free(column_set *cs)
{
    for (size_t i = 0; i < cs->n; i++) free(cs->names[i]);
    free(cs->names);
    free(cs->hidden);
}

static bool read_columns(tg_loader *ld, const char *table, column_set *cs)
{
    char *sql = NULL;
    size_t len = 0, cap = 0;
    if (!buf_add(&sql, &len, &cap, "SELECT name, hidden FROM pragma_table_xinfo(") ||
        !buf_add(&sql, &len, &cap, "'")) {
        free(sql);
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    /* The pragma takes a string literal: double any single quote. */
    for (const char *p = table; *p; p++) {
        char c[3] = {*p, *p == '\'' ? '\'' : 0, 0};
        if (!buf_add(&sql, &len, &cap, c)) {
            free(sql);
            tg_load_fail(ld, TG_EINTERNAL, "out of memory");
            return false;
        }
    }
    if (!buf_add(&sql, &len, &cap, "')")) {
        free(sql);
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ld->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK) {
        tg_load_sqlite_fail(ld, rc, "reading the columns of a table");
        return false;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name) continue;
        char *copy = strdup(name);
        if (!copy || !TG_PUSH(cs->names, cs->n, cs->cap, copy) ||
            !TG_PUSH(cs->hidden, cs->hidden_n, cs->hidden_cap, sqlite3_column_int(st, 1))) {
            if (cs->n == cs->hidden_n) free(copy);   /* not pushed */
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_NOMEM) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    else if (rc != SQLITE_DONE) tg_load_sqlite_fail(ld, rc, "reading the columns of a table");
    return !ld->failed;
}

/* SQLite column names are case-insensitive. Index in cs, or -1. */
static long column_find(const column_set *cs, const char *name)
{
    if (!name) return -1;
    for (size_t i = 0; i < cs->n; i++)
        if (strcasecmp(cs->names[i], name) == 0) return (long)i;
    return -1;
}

/* Remember every column of one of the trace's tables (",a,b,c,", in the
** string pool) for tg_trace_has_column. */
static bool record_columns(tg_loader *ld, const char *table, const column_set *cs)
{
    tg_trace *t = ld->t;
    int id = -1;
    for (int i = 0; i < TG_TABLE_COUNT && id < 0; i++)
        if (t->table_name[i] && strcmp(t->table_name[i], table) == 0) id = i;
    if (id < 0 || t->columns[id] > 0) return true;
    char *list = NULL;
    size_t len = 0, cap = 0;
    bool ok = buf_add(&list, &len, &cap, ",");
    for (size_t i = 0; ok && i < cs->n; i++) ok = buf_add(&list, &len, &cap, cs->names[i]) && buf_add(&list, &len, &cap, ",");
    int32_t sid = ok ? tg_load_intern(ld, list, len) : -1;
    free(list);
    if (sid < 0) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    t->columns[id] = sid + 1;
    return true;
}

sqlite3_stmt *tg_load_select(tg_loader *ld, const char *table, const tg_colspec *cols, int n,
                             const char *where)
{
    column_set cs = {0};
    if (!tg_load_check_table(ld, table) || !read_columns(ld, table, &cs) || !record_columns(ld, table, &cs)) {
        column_set_free(&cs);
        return NULL;
    }
    char *sql = NULL;
    size_t len = 0, cap = 0;
    bool ok = buf_add(&sql, &len, &cap, "SELECT rowid");
    for (int i = 0; ok && i < n; i++) {
        long at = column_find(&cs, cols[i].name);
        if (at < 0) at = column_find(&cs, cols[i].alt);
        const char *found = at < 0 ? NULL : cs.names[at];
        if (found && !tg_load_check_column(ld, table, found, cs.hidden[at])) {
            column_set_free(&cs);
            free(sql);
            return NULL;
        }
        if (!found && cols[i].required) {
            tg_load_fail(ld, TG_ETRACE,
                         "table %s has no column '%s', so this is not an nsys export layout "
                         "tracegate can read", table, cols[i].name);
            column_set_free(&cs);
            free(sql);
            return NULL;
        }
        ok = buf_add(&sql, &len, &cap, ", ") &&
             (found ? buf_add_ident(&sql, &len, &cap, found) : buf_add(&sql, &len, &cap, "NULL"));
    }
    ok = ok && buf_add(&sql, &len, &cap, " FROM ") && buf_add_ident(&sql, &len, &cap, table);
    if (ok && where) ok = buf_add(&sql, &len, &cap, " WHERE ") && buf_add(&sql, &len, &cap, where);
    column_set_free(&cs);
    if (!ok) {
        free(sql);
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ld->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK) {
        char what[256];
        snprintf(what, sizeof what, "reading %s", table);
        tg_load_sqlite_fail(ld, rc, what);
        return NULL;
    }
    return st;
}

bool tg_load_step(tg_loader *ld, sqlite3_stmt *st, const char *table)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) {
        char what[256];
        snprintf(what, sizeof what, "reading %s", table);
        tg_load_sqlite_fail(ld, rc, what);
    }
    return false;
}

/* ---------------------------------------------------------------- cells */

bool tg_cell_text(sqlite3_stmt *st, int col, const char **text, size_t *len, char **owned)
{
    *owned = NULL;
    *len = 0;
    *text = sqlite3_column_type(st, col) == SQLITE_NULL ? NULL : (const char *)sqlite3_column_text(st, col);
    if (!*text) return sqlite3_errcode(sqlite3_db_handle(st)) != SQLITE_NOMEM;
    size_t n = (size_t)sqlite3_column_bytes(st, col), nuls = 0;
    while (n && !(*text)[n - 1]) n--;   /* a C writer's terminator: no part of the name */
    for (const char *p = *text, *end = *text + n; (p = memchr(p, 0, (size_t)(end - p))); p++) nuls++;
    *len = n;
    if (!nuls) return true;
    char *out = malloc(n + 2 * nuls + 1);
    if (!out) return false;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if ((*text)[i]) {
            out[o++] = (*text)[i];
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);   /* U+FFFD */
            o += 3;
        }
    }
    out[o] = 0;
    *text = *owned = out;
    *len = o;
    return true;
}

int32_t tg_load_intern(tg_loader *ld, const char *s, size_t len)
{
    if (ld->pool_lock) pthread_mutex_lock(ld->pool_lock);
    int32_t id = tg_strpool_intern(ld->t->strings, s, len);
    if (ld->pool_lock) pthread_mutex_unlock(ld->pool_lock);
    return id;
}

int32_t tg_load_text(tg_loader *ld, sqlite3_stmt *st, int col)
{
    const char *s;
    size_t len;
    char *owned;
    if (!tg_cell_text(st, col, &s, &len, &owned)) {
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return TG_NO_STR;
    }
    if (!s) return TG_NO_STR;
    int32_t id = tg_load_intern(ld, s, len);
    free(owned);
    if (id < 0) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return id;
}

int32_t tg_load_strid(tg_loader *ld, sqlite3_stmt *st, int col)
{
    sqlite3_value *v = sqlite3_column_value(st, col);
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        return tg_idmap_get(&ld->strings, sqlite3_value_int64(v));
    case SQLITE_TEXT:
        return tg_load_text(ld, st, col);
    default:
        return TG_NO_STR;
    }
}

bool tg_trace_has_column(const tg_trace *t, tg_table_id id, const char *name)
{
    if ((unsigned)id >= TG_TABLE_COUNT || t->columns[id] <= 0) return true;
    const char *list = tg_strpool_get(t->strings, t->columns[id] - 1);
    size_t n = strlen(name);
    for (const char *p = list; p && (p = strchr(p, ',')) != NULL; p++)
        if (strncasecmp(p + 1, name, n) == 0 && p[1 + n] == ',') return true;
    return false;
}
