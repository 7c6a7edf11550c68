/*
** Fuzz target: the direct reader of a table's B-tree pages
** (engine/trace/trace_btree.c) against SQLite, on whole database files.
** Each input is written to the scratch file; every table of its schema (at
** most 16) is read both ways: through `SELECT rowid, c0, ... FROM t` and
** by tg_btree_open on the table's root page with the columns at their
** positions. The reader must never crash, hang or read out of bounds
** (ASan), whatever the pages hold; and where SQLite reads the whole table
** and the reader takes the columns (tg_btree_column_ok), the reader must
** read the same rows: same count, rowids and cells (type, value, bytes).
** A disagreement abort()s, so libFuzzer keeps the input. Leniency is
** checked both ways: where SQLite's scan fails (a file it finds
** malformed, a value too long), the reader must fail too (issue 31: it
** read a cell SQLite called malformed, and the loader skipped the row).
** Where SQLite reads on and the reader fails, only the damage that
** tg_btree_stricter owns is allowed (docs/limits.md): a payload size no
** well-formed cell has (SQLite 3.40 reads such a cell's bytes on its
** page, truncating the size to 32 bits), a cell whose bytes run past its
** page (SQLite reads them from the slack its page cache keeps past the
** page). Never allowed: a row more, a row less without an error, a
** different cell.
**
** Seeds: the small exports of fuzz-mkseeds (ci/fuzz.sh), as trace_file's.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "fuzz_common.h"
#include "trace/trace_int.h"

#define MAX_TABLES 16
#define MAX_COLS 32
#define MAX_ROWS 20000

typedef struct table {
    char name[128];
    uint32_t root;
    int n_cols;
    bool direct;               /* every column one the reader takes */
} table;

static int list_tables(sqlite3 *db, table *out)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND "
                               "sql NOT LIKE '%WITHOUT ROWID%' AND sql NOT LIKE 'CREATE VIRTUAL%'",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return 0;
    }
    while (n < MAX_TABLES && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int64_t root = sqlite3_column_int64(st, 1);
        if (!name || strlen(name) >= sizeof out[n].name || root < 1 || root > UINT32_MAX) continue;
        snprintf(out[n].name, sizeof out[n].name, "%s", name);
        out[n].root = (uint32_t)root;
        out[n].n_cols = 0;
        out[n].direct = true;
        n++;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) {
        if (sqlite3_prepare_v2(db, "SELECT type, pk, dflt_value IS NOT NULL, hidden FROM pragma_table_xinfo(?1)", -1,
                               &st, NULL) != SQLITE_OK) {
            sqlite3_finalize(st);
            out[i].direct = false;
            continue;
        }
        sqlite3_bind_text(st, 1, out[i].name, -1, SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (!tg_btree_column_ok((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1) != 0,
                                    sqlite3_column_int(st, 2) != 0, sqlite3_column_int(st, 3) != 0))
                out[i].direct = false;
            out[i].n_cols++;
        }
        if (rc != SQLITE_DONE || out[i].n_cols > MAX_COLS) out[i].direct = false;
        if (out[i].n_cols > MAX_COLS) out[i].n_cols = MAX_COLS;
        sqlite3_finalize(st);
    }
    return n;
}

/* One cell of SQLite's row against the reader's: false when they differ. */
static bool same_cell(sqlite3_stmt *st, int col, const tg_cellv *v)
{
    int type = sqlite3_column_type(st, col);
    if (type != v->type) return false;
    switch (type) {
    case SQLITE_INTEGER:
        return sqlite3_column_int64(st, col) == v->i;
    case SQLITE_FLOAT: {
        double d = sqlite3_column_double(st, col);
        return memcmp(&d, &v->d, sizeof d) == 0;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
        const void *p = type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, col) : sqlite3_column_blob(st, col);
        int n = sqlite3_column_bytes(st, col);
        return n == v->n && (n == 0 || memcmp(p, v->p, (size_t)n) == 0) && v->p[v->n] == 0;
    }
    default:
        return true;
    }
}

/* Say what differs, then abort() (libFuzzer keeps the input). */
static void disagree(const table *t, int row, int cell, const char *what)
{
    fprintf(stderr, "fuzz-btree: table %s (root %u), row %d, cell %d: %s\n", t->name, t->root, row, cell, what);
    abort();
}

/* Read t both ways; abort() when SQLite read it whole and the reader
** disagrees. */
static void compare(sqlite3 *db, const char *path, const table *t)
{
    int pos[MAX_COLS];
    for (int i = 0; i < t->n_cols; i++) pos[i] = t->n_cols - 1 - i;   /* out of order on purpose */
    tg_btree *bt = tg_btree_open(path, t->root, pos, t->n_cols);
    if (!bt) return;
    char sql[1024];
    int len = snprintf(sql, sizeof sql, "SELECT rowid");
    for (int i = 0; i < t->n_cols && len < (int)sizeof sql - 64; i++) {
        sqlite3_stmt *info = NULL;
        /* the i-th column by position, quoted */
        char q[256];
        snprintf(q, sizeof q, "SELECT name FROM pragma_table_xinfo(?1) LIMIT 1 OFFSET %d", pos[i]);
        const char *name = NULL;
        if (sqlite3_prepare_v2(db, q, -1, &info, NULL) == SQLITE_OK) {
            sqlite3_bind_text(info, 1, t->name, -1, SQLITE_STATIC);
            if (sqlite3_step(info) == SQLITE_ROW) name = (const char *)sqlite3_column_text(info, 0);
        }
        char *quoted = name ? sqlite3_mprintf(", \"%w\"", name) : NULL;
        if (quoted) len += snprintf(sql + len, sizeof sql - (size_t)len, "%s", quoted);
        sqlite3_free(quoted);
        sqlite3_finalize(info);
        if (!name) {
            tg_btree_close(bt);
            return;
        }
    }
    char *from = sqlite3_mprintf(" FROM \"%w\"", t->name);
    if (!from || len + strlen(from) >= sizeof sql) {
        sqlite3_free(from);
        tg_btree_close(bt);
        return;
    }
    strcat(sql, from);
    sqlite3_free(from);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        while (tg_btree_next(bt) > 0) {}   /* it must still survive the pages */
        tg_btree_close(bt);
        return;
    }
    /* SQLite first: does it read the whole table, or refuse it? */
    int rows = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && rows < MAX_ROWS) rows++;
    bool whole = rc == SQLITE_DONE, refused = rc != SQLITE_DONE && rc != SQLITE_ROW;
    sqlite3_reset(st);
    if (!t->direct || (!whole && !refused)) {
        for (int i = 0; i < MAX_ROWS && tg_btree_next(bt) > 0; i++) {}
    } else if (refused) {
        /* what SQLite refuses, the reader must refuse (issue 31) */
        int rb = 1;
        for (int i = 0; i <= MAX_ROWS && (rb = tg_btree_next(bt)) > 0; i++) {}
        if (rb == 0) disagree(t, rows, -1, "SQLite finds the table malformed, the reader reads it whole");
    } else {
        for (int i = 0; i < rows; i++) {
            if (sqlite3_step(st) != SQLITE_ROW) disagree(t, i, -1, "SQLite's second read differs");
            int rc = tg_btree_next(bt);
            if (rc < 0) {
                /* the reader stops where SQLite reads on: only for the
                ** damage SQLite's scan reads past (tg_btree_stricter) */
                if (!tg_btree_stricter(bt)) disagree(t, i, rc, "SQLite reads the table whole, the reader refuses it");
                break;
            }
            if (rc == 0) disagree(t, i, rc, "SQLite read the row, the reader saw the table end");
            const tg_cellv *c = tg_btree_cells(bt);
            for (int k = 0; k <= t->n_cols; k++)
                if (!same_cell(st, k, &c[k])) disagree(t, i, k, "the cell differs");
        }
        if (tg_btree_next(bt) > 0) disagree(t, rows, -1, "SQLite read no more rows, the reader read one");
    }
    sqlite3_finalize(st);
    tg_btree_close(bt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_scratch_write(data, size);
    char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
    sqlite3 *db = NULL;
    if (uri && sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK) {
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, TG_MAX_VALUE_BYTES);
        table tables[MAX_TABLES];
        int n = list_tables(db, tables);
        for (int i = 0; i < n; i++) compare(db, path, &tables[i]);
    }
    sqlite3_close(db);
    sqlite3_free(uri);
    return 0;
}
