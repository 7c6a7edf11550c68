/*
** Resolution of the export's layout: which tables exist (exact name, or a
** `_V<n>` suffixed variant of newer exports), which columns each has (by
** name through `pragma table_info`, never by position), and the prepared
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

/* Step a prepared one-column query (rc: its prepare status) and append
** copies of the non-NULL names to *names; finalizes st. */
static bool collect_names(tg_loader *ld, int rc, sqlite3_stmt *st, char ***names, size_t *n,
                          size_t *cap, const char *what)
{
    if (rc != SQLITE_OK) {
        tg_load_sqlite_fail(ld, rc, what);
        return false;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name) continue;
        char *copy = strdup(name);
        if (!copy || !TG_PUSH(*names, *n, *cap, copy)) {
            free(copy);
            sqlite3_finalize(st);
            tg_load_fail(ld, TG_EINTERNAL, "out of memory");
            return false;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        tg_load_sqlite_fail(ld, rc, what);
        return false;
    }
    return true;
}

bool tg_load_list_tables(tg_loader *ld)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ld->db,
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')", -1, &st, NULL);
    size_t cap = 0;
    return collect_names(ld, rc, st, &ld->table_list, &ld->n_tables, &cap, "reading the list of tables");
}

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
} column_set;

static void column_set_free(column_set *cs)
{
    for (size_t i = 0; i < cs->n; i++) free(cs->names[i]);
    free(cs->names);
}

static bool read_columns(tg_loader *ld, const char *table, column_set *cs)
{
    char *sql = NULL;
    size_t len = 0, cap = 0;
    if (!buf_add(&sql, &len, &cap, "SELECT name FROM pragma_table_info(") ||
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
    return collect_names(ld, rc, st, &cs->names, &cs->n, &cs->cap, "reading the columns of a table");
}

/* SQLite column names are case-insensitive. */
static const char *column_find(const column_set *cs, const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < cs->n; i++)
        if (strcasecmp(cs->names[i], name) == 0) return cs->names[i];
    return NULL;
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
    int32_t sid = ok ? tg_strpool_intern(t->strings, list, len) : -1;
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
    if (!read_columns(ld, table, &cs) || !record_columns(ld, table, &cs)) {
        column_set_free(&cs);
        return NULL;
    }
    char *sql = NULL;
    size_t len = 0, cap = 0;
    bool ok = buf_add(&sql, &len, &cap, "SELECT rowid");
    for (int i = 0; ok && i < n; i++) {
        const char *found = column_find(&cs, cols[i].name);
        if (!found) found = column_find(&cs, cols[i].alt);
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

/* ---------------------------------------------------------------- idmap */

/* Keys up to this bound use the dense array when it stays compact. */
#define DENSE_MAX ((int64_t)1 << 26)

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static bool hash_put(tg_idmap *m, int64_t key, int32_t val)
{
    if ((m->used + 1) * 2 > m->slots) {
        size_t ns = m->slots ? m->slots * 2 : 1024;
        int64_t *keys = malloc(ns * sizeof *keys);
        int32_t *vals = malloc(ns * sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return false;
        }
        for (size_t i = 0; i < ns; i++) keys[i] = TG_NULL_I64;
        for (size_t i = 0; i < m->slots; i++) {
            if (m->keys[i] == TG_NULL_I64) continue;
            size_t j = (size_t)mix64((uint64_t)m->keys[i]) & (ns - 1);
            while (keys[j] != TG_NULL_I64) j = (j + 1) & (ns - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->slots = ns;
    }
    size_t j = (size_t)mix64((uint64_t)key) & (m->slots - 1);
    while (m->keys[j] != TG_NULL_I64 && m->keys[j] != key) j = (j + 1) & (m->slots - 1);
    if (m->keys[j] == TG_NULL_I64) m->used++;
    m->keys[j] = key;
    m->vals[j] = val;
    return true;
}

bool tg_idmap_put(tg_idmap *m, int64_t key, int32_t val)
{
    if (key == TG_NULL_I64) return true;
    if (!m->slots) {
        /* Dense form while the ids stay compact (they do in every export
        ** seen); a sparse id set moves to the hash instead of allocating
        ** an array that dwarfs the strings. */
        if (key >= 0 && key < m->dense_n) {
            if (m->dense[key] < 0) m->dense_count++;
            m->dense[key] = val;
            return true;
        }
        if (key >= 0 && key < DENSE_MAX) {
            int64_t want = m->dense_n ? m->dense_n : 1024;
            while (want <= key) want *= 2;
            if (want <= ((int64_t)1 << 20) || want <= 16 * (m->dense_count + 1)) {
                int32_t *d = realloc(m->dense, (size_t)want * sizeof *d);
                if (!d) return false;
                for (int64_t i = m->dense_n; i < want; i++) d[i] = -1;
                m->dense = d;
                m->dense_n = want;
                m->dense[key] = val;
                m->dense_count++;
                return true;
            }
        }
        int32_t *dense = m->dense;
        int64_t dense_n = m->dense_n;
        m->dense = NULL;
        m->dense_n = 0;
        bool ok = true;
        for (int64_t i = 0; ok && i < dense_n; i++)
            if (dense[i] >= 0) ok = hash_put(m, i, dense[i]);
        free(dense);
        if (!ok) return false;
    }
    return hash_put(m, key, val);
}

int32_t tg_idmap_get(const tg_idmap *m, int64_t key)
{
    if (!m->slots) return (key >= 0 && key < m->dense_n) ? m->dense[key] : -1;
    if (key == TG_NULL_I64) return -1;
    size_t j = (size_t)mix64((uint64_t)key) & (m->slots - 1);
    while (m->keys[j] != TG_NULL_I64) {
        if (m->keys[j] == key) return m->vals[j];
        j = (j + 1) & (m->slots - 1);
    }
    return -1;
}

void tg_idmap_free(tg_idmap *m)
{
    free(m->dense);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
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
    int32_t id = tg_strpool_intern(ld->t->strings, s, len);
    free(owned);
    if (id < 0) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
    return id;
}

int32_t tg_load_strid(tg_loader *ld, sqlite3_stmt *st, int col)
{
    switch (sqlite3_column_type(st, col)) {
    case SQLITE_INTEGER:
        return tg_idmap_get(&ld->strings, sqlite3_column_int64(st, col));
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
