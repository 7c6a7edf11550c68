/*
** Fuzz target: valid exports with mutated rows. A small realistic export
** (fz_rows_sql on the nsys 2022.4 shape of tests/unit/fixture.c) is built
** once; each input is decoded as a list of edits applied to a fresh copy
** of it with SQLite, and the result goes through the full pipeline.
**
** Input format, repeated until the bytes run out (missing bytes read 0):
**   op    1 byte  op % 8: 0-2 set one cell, 3 set a column in every row,
**                 4 duplicate a row, 5 delete a row, 6 drop the table,
**                 7 rename the column (a required column goes missing)
**   table 1 byte  index into `tables` (mod)
**   col   1 byte  index into that table's columns (mod)
**   row   1 byte  row offset (mod 64; no row there: no edit)
**   kind  1 byte  value kind % 8: NULL, small int, int64, special int,
**                 double, text, blob, add a small delta to the cell
**   value         1, 8, 1 (special index), 8, 1+len, 1+len or 2 bytes
** Texts are 0..63 bytes long, so an edit costs at most 70 bytes.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "fuzz_common.h"
#include "fixture.h"

static const char *const tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "StringIds", "TARGET_INFO_GPU",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "PROFILER_OVERHEAD", "PROCESSES", "EXPORT_META_DATA",
    "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "TARGET_INFO_SESSION_START_TIME",
};
#define N_TABLES (sizeof tables / sizeof *tables)
#define MAX_COLS 64

static char *columns[N_TABLES][MAX_COLS];
static int n_columns[N_TABLES];
static uint8_t *image;          /* the template export, byte for byte */
static size_t image_len;

static const int64_t specials[] = {
    INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, -1, 0, 1, INT32_MAX, INT32_MIN,
    (int64_t)1 << 53, (int64_t)1 << 62, -((int64_t)1 << 62), 16777216, 0xFFFFFF, 59, 60, 34,
    (int64_t)77 << 24, ((int64_t)77 << 24) | 78, 500000000,
};

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t byte(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static uint64_t u64(reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | byte(r);
    return v;
}

static void load_template(void)
{
    char *rows = fz_rows_sql();
    char *path = rows ? tg_fixture_build(tg_fixture_schema_3_0, rows) : NULL;
    free(rows);
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f || fseek(f, 0, SEEK_END) != 0) abort();
    image_len = (size_t)ftell(f);
    rewind(f);
    image = malloc(image_len);
    if (!image || fread(image, 1, image_len, f) != image_len) abort();
    fclose(f);
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) abort();
    for (size_t t = 0; t < N_TABLES; t++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", tables[t]);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) abort();
        while (sqlite3_step(st) == SQLITE_ROW && n_columns[t] < MAX_COLS)
            columns[t][n_columns[t]++] = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (n_columns[t] == 0) abort();
    }
    sqlite3_close(db);
    tg_fixture_remove(path);
}

static void bind_value(sqlite3_stmt *st, int idx, int kind, reader *r)
{
    uint8_t len;
    uint8_t buf[64];
    switch (kind) {
    case 0: sqlite3_bind_null(st, idx); break;
    case 1: sqlite3_bind_int64(st, idx, (int8_t)byte(r)); break;
    case 2: sqlite3_bind_int64(st, idx, (int64_t)u64(r)); break;
    case 3: sqlite3_bind_int64(st, idx, specials[byte(r) % (sizeof specials / sizeof *specials)]); break;
    case 4: {
        uint64_t bits = u64(r);
        double d;
        memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(st, idx, d);
        break;
    }
    case 5:
    case 6:
        len = byte(r) % 64;
        for (uint8_t i = 0; i < len; i++) buf[i] = byte(r);
        if (kind == 5) sqlite3_bind_text(st, idx, (const char *)buf, len, SQLITE_TRANSIENT);
        else sqlite3_bind_blob(st, idx, buf, len, SQLITE_TRANSIENT);
        break;
    default: {
        int16_t delta = (int16_t)(byte(r) << 8 | byte(r));
        sqlite3_bind_int64(st, idx, (int64_t)delta * 1000);
        break;
    }
    }
}

/* One edit; SQLite errors (constraint, dropped table, ...) just skip it. */
static void apply_edit(sqlite3 *db, reader *r)
{
    int op = byte(r) % 8;
    size_t t = byte(r) % N_TABLES;
    const char *table = tables[t];
    const char *col = columns[t][byte(r) % n_columns[t]];
    int offset = byte(r) % 64;
    int kind = byte(r) % 8;
    char sql[512];
    char row[160];
    snprintf(row, sizeof row, "rowid = (SELECT rowid FROM \"%s\" LIMIT 1 OFFSET %d)", table, offset);
    switch (op) {
    case 0: case 1: case 2: case 3:
        snprintf(sql, sizeof sql, "UPDATE \"%s\" SET \"%s\" = %s%s%s", table, col,
                 kind == 7 ? "\"" : "", kind == 7 ? col : "?", kind == 7 ? "\" + ?" : "");
        if (op != 3) {
            strncat(sql, " WHERE ", sizeof sql - strlen(sql) - 1);
            strncat(sql, row, sizeof sql - strlen(sql) - 1);
        }
        break;
    case 4:
        snprintf(sql, sizeof sql, "INSERT INTO \"%s\" SELECT * FROM \"%s\" WHERE %s", table, table, row);
        break;
    case 5:
        snprintf(sql, sizeof sql, "DELETE FROM \"%s\" WHERE %s", table, row);
        break;
    case 6:
        snprintf(sql, sizeof sql, "DROP TABLE \"%s\"", table);
        break;
    default:
        snprintf(sql, sizeof sql, "ALTER TABLE \"%s\" RENAME COLUMN \"%s\" TO \"%s_gone\"", table, col, col);
        break;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
    if (sqlite3_bind_parameter_count(st) > 0) bind_value(st, 1, kind, r);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!image) load_template();
    if (size > 4096) return 0;     /* ~60 edits are plenty */
    const char *path = fz_scratch_write(image, image_len);
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) abort();
    sqlite3_exec(db, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
    reader r = {data, size};
    while (r.n) apply_edit(db, &r);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (sqlite3_close(db) != SQLITE_OK) abort();
    fz_run_path(path, NULL);
    return 0;
}
