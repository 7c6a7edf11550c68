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
#include "../common/text.h"

#include <ctype.h>
#include <errno.h>
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
    bool *direct;              /* ORDER names: the direct reader reads it (tg_btree_column_ok) */
    size_t direct_n, direct_cap;
} column_set;

static void column_set_free(column_set *cs)
{
    for (size_t i = 0; i < cs->n; i++) free(cs->names[i]);
    free(cs->names);
    free(cs->hidden);
    free(cs->direct);
}

static bool read_columns(tg_loader *ld, const char *table, column_set *cs)
{
    char *sql = NULL;
    size_t len = 0, cap = 0;
    /* The pragma takes a string literal. */
    char *name = tg_sql_string(table);
    bool built = name && buf_add(&sql, &len, &cap, "SELECT name, hidden, type, pk, dflt_value IS NOT NULL FROM "
                                 "pragma_table_xinfo(") && buf_add(&sql, &len, &cap, name) && buf_add(&sql, &len, &cap, ")");
    free(name);
    if (!built) {
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
        int hidden = sqlite3_column_int(st, 1);
        bool direct = tg_btree_column_ok((const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3) != 0,
                                         sqlite3_column_int(st, 4) != 0, hidden != 0);
        if (!copy || !TG_PUSH(cs->names, cs->n, cs->cap, copy)) {
            free(copy);
            rc = SQLITE_NOMEM;
            break;
        }
        if (!TG_PUSH(cs->hidden, cs->hidden_n, cs->hidden_cap, hidden) ||
            !TG_PUSH(cs->direct, cs->direct_n, cs->direct_cap, direct)) {
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

/* The root page of a rowid table, 0 when SQLite does not say. */
static uint32_t root_page(tg_loader *ld, const char *table)
{
    sqlite3_stmt *st = NULL;
    int64_t root = 0;
    if (sqlite3_prepare_v2(ld->db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) == SQLITE_INTEGER)
        root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return root > 0 && root <= UINT32_MAX ? (uint32_t)root : 0;
}

/* The direct reader of the columns at[0..n) of table (-1: absent), or
** NULL: then SQLite reads it. It takes a table none of whose columns is
** hidden (each column is then at its cid in the record) and columns it
** reads as SQLite does. */
static tg_btree *direct_reader(tg_loader *ld, const char *table, const column_set *cs, const long *at, int n)
{
    if (ld->sqlite_reads) return NULL;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->hidden[i]) return NULL;
    int *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
    if (!pos) return NULL;
    bool ok = true;
    for (int i = 0; i < n; i++) {
        pos[i] = (int)at[i];
        if (at[i] >= 0 && !cs->direct[at[i]]) ok = false;
    }
    uint32_t root = ok ? root_page(ld, table) : 0;
    tg_btree *bt = root ? tg_btree_open(tg_load_file_path(ld), root, pos, n) : NULL;
    free(pos);
    return bt;
}

bool tg_row_open(tg_loader *ld, const char *table, const tg_colspec *cols, int n, tg_row *row)
{
    *row = (tg_row){.table = table, .n = n};
    column_set cs = {0};
    if (!tg_load_check_table(ld, table) || !read_columns(ld, table, &cs) || !record_columns(ld, table, &cs)) {
        column_set_free(&cs);
        return false;
    }
    long *at = malloc((size_t)(n ? n : 1) * sizeof *at);
    char *sql = NULL;
    size_t len = 0, cap = 0;
    bool ok = at && buf_add(&sql, &len, &cap, "SELECT rowid");
    for (int i = 0; ok && i < n; i++) {
        at[i] = column_find(&cs, cols[i].name);
        if (at[i] < 0) at[i] = column_find(&cs, cols[i].alt);
        const char *found = at[i] < 0 ? NULL : cs.names[at[i]];
        if (found && !tg_load_check_column(ld, table, found, cs.hidden[at[i]])) {
            column_set_free(&cs);
            free(at);
            free(sql);
            return false;
        }
        if (!found && cols[i].required) {
            tg_load_fail(ld, TG_ETRACE,
                         "table %s has no column '%s', so this is not an nsys export layout "
                         "tracegate can read", table, cols[i].name);
            column_set_free(&cs);
            free(at);
            free(sql);
            return false;
        }
        ok = buf_add(&sql, &len, &cap, ", ") &&
             (found ? buf_add_ident(&sql, &len, &cap, found) : buf_add(&sql, &len, &cap, "NULL"));
    }
    ok = ok && buf_add(&sql, &len, &cap, " FROM ") && buf_add_ident(&sql, &len, &cap, table);
    if (ok) row->bt = direct_reader(ld, table, &cs, at, n);
    column_set_free(&cs);
    free(at);
    if (!ok) {
        free(sql);
        tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    /* every read of a table, the direct reader's open of the file or a
    ** statement on the connection, is of the run's file (trace_guard.c) */
    if (!tg_load_same_file(ld)) {
        tg_btree_close(row->bt);
        row->bt = NULL;
        free(sql);
        return false;
    }
    if (row->bt) {
        free(sql);
        row->cells = tg_btree_cells(row->bt);
        return true;
    }
    int rc = sqlite3_prepare_v2(ld->db, sql, -1, &row->st, NULL);
    free(sql);
    if (rc != SQLITE_OK) {
        char what[256];
        snprintf(what, sizeof what, "reading %s", table);
        tg_load_sqlite_fail(ld, rc, what);
        return false;
    }
    return true;
}

/* A direct read's failure, in the words SQLite's would have. */
static void direct_fail(tg_loader *ld, int rc, const char *what)
{
    switch (rc) {
    case TG_BT_TOOBIG:
        tg_load_sqlite_fail(ld, SQLITE_TOOBIG, what);
        break;
    case TG_BT_NOMEM:
        tg_load_sqlite_fail(ld, SQLITE_NOMEM, what);
        break;
    case TG_BT_IO:
        tg_load_fail(ld, TG_ETRACE, "read error (%s): %s; the export may be truncated", what, strerror(errno));
        break;
    default:
        tg_load_sqlite_fail(ld, SQLITE_CORRUPT, what);
        break;
    }
}

/* The virtual-machine steps SQLite's scan takes for one row (a Column per
** cell, the rowid, the result and the Next), charged to the read budget
** by the direct reader, so the budget means the same either way
** (docs/limits.md). */
#define ROW_STEPS(n) ((int64_t)(n) + 3)

bool tg_row_step(tg_loader *ld, tg_row *row)
{
    char what[256];
    if (row->bt) {
        ld->steps += ROW_STEPS(row->n);
        if (ld->steps > ld->step_budget) {
            ld->budget_hit = true;
            snprintf(what, sizeof what, "reading %s", row->table);
            tg_load_sqlite_fail(ld, SQLITE_INTERRUPT, what);
            return false;
        }
        int rc = tg_btree_next(row->bt);
        if (rc > 0) return true;
        if (rc < 0) {
            snprintf(what, sizeof what, "reading %s", row->table);
            direct_fail(ld, rc, what);
        }
        return false;
    }
    int rc = sqlite3_step(row->st);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) {
        snprintf(what, sizeof what, "reading %s", row->table);
        tg_load_sqlite_fail(ld, rc, what);
    }
    return false;
}

void tg_row_close(tg_row *row)
{
    sqlite3_finalize(row->st);
    tg_btree_close(row->bt);
    *row = (tg_row){0};
}

/* ---------------------------------------------------------------- cells */

/* A direct read's cell as text, as sqlite3_column_text gives it: numbers
** printed as SQLite prints them (into buf), text and blobs as they are. */
static const char *direct_text(const tg_cellv *v, char *buf, size_t cap, size_t *n)
{
    switch (v->type) {
    case SQLITE_INTEGER:
        sqlite3_snprintf((int)cap, buf, "%lld", (long long)v->i);
        break;
    case SQLITE_FLOAT:
        sqlite3_snprintf((int)cap, buf, "%!.15g", v->d);
        break;
    case SQLITE_NULL:
        *n = 0;
        return NULL;
    default:
        *n = (size_t)v->n;
        return v->p;
    }
    *n = strlen(buf);
    return buf;
}

bool tg_cell_text(const tg_row *st, int col, const char **text, size_t *len, char **owned)
{
    *owned = NULL;
    *len = 0;
    size_t n, nuls = 0;
    char num[64];
    if (st->cells) {
        *text = direct_text(&st->cells[col], num, sizeof num, &n);
        if (!*text) return true;
    } else {
        *text = sqlite3_column_type(st->st, col) == SQLITE_NULL ? NULL : (const char *)sqlite3_column_text(st->st, col);
        if (!*text) return sqlite3_errcode(sqlite3_db_handle(st->st)) != SQLITE_NOMEM;
        n = (size_t)sqlite3_column_bytes(st->st, col);
    }
    while (n && !(*text)[n - 1]) n--;   /* a C writer's terminator: no part of the name */
    for (const char *p = *text, *end = *text + n; (p = memchr(p, 0, (size_t)(end - p))); p++) nuls++;
    *len = n;
    if (!nuls && *text != num) return true;
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

int32_t tg_load_text(tg_loader *ld, const tg_row *st, int col)
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

int32_t tg_load_strid(tg_loader *ld, const tg_row *st, int col)
{
    int64_t id = 0;
    switch (tg_cell_peek(st, col, &id)) {
    case SQLITE_INTEGER:
        return tg_idmap_get(&ld->strings, id);
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
