/*
** floor: the physical floor of `tracegate check` on one export. It opens
** the file the way the trace layer does (read-only, immutable URI; plus
** SQLITE_OPEN_NOMUTEX, the cheapest way to use one connection), reads with
** the sqlite3 C API exactly the columns engine/trace loads
** (engine/trace/trace_load.c, trace_nvtx.c: the rowid plus the same column
** lists, absent columns selected as NULL), one sequential scan per table,
** for `tracegate check` with the built-in rules: kernels as tg_kspan rows
** (7 of the table's columns; `--kernel-rows` reads all 18, as a run with a
** rule on the `kernel` source does),
** and does nothing else with them than fold every value into a checksum so
** the compiler cannot drop a read. Whatever tracegate spends beyond this
** time is its own work (interning, sorting, joins, rule evaluation, report).
**
**     floor [--kernel-rows] EXPORT.sqlite
**     -> rows=<rows read> kernels=<kernel rows> checksum=<hex>
**     floor --sql [--kernel-rows] EXPORT.sqlite
**     -> the same scan as SQL for the sqlite3 shell, one statement per
**        table: SELECT count(*), total(c1), ... FROM table; (bench/run's
**        second floor: the shell sums inside SQLite, with no row handed
**        out through the C API)
**
** Keep the column lists in step with the trace layer's when it changes.
*/
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace/trace.h"

typedef struct table_read {
    const char *table;
    const char *const *columns;   /* NULL-terminated */
} table_read;

/* The column lists of engine/trace, table by table. */
static const char *const string_cols[] = {"id", "value", NULL};
static const char *const kspan_cols[] = {
    "start", "end", "deviceId", "correlationId", "globalPid", "demangledName", "shortName", NULL};
static const char *const kernel_cols[] = {
    "start", "end", "deviceId", "correlationId", "globalPid", "demangledName", "shortName",
    "contextId", "streamId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
    "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", NULL};
static const char *const memop_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
    "copyKind", "srcKind", "dstKind", "srcDeviceId", "dstDeviceId", "value", "memKind", NULL};
static const char *const api_cols[] = {
    "start", "end", "globalTid", "correlationId", "nameId", "name", "returnValue", NULL};
static const char *const sync_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "syncType", "deprecatedSyncType", NULL};
static const char *const overhead_cols[] = {"start", "end", "globalTid", "nameId", NULL};
static const char *const nvtx_cols[] = {
    "start", "end", "eventType", "text", "textId", "globalTid", "domainId", NULL};
static const char *const gpu_cols[] = {
    "id", "name", "smCount", "totalMemory", "computeMajor", "computeMinor", NULL};
static const char *const process_cols[] = {"pid", "name", "globalPid", NULL};

static table_read reads[] = {
    {"StringIds", string_cols},
    {"CUPTI_ACTIVITY_KIND_KERNEL", kspan_cols},
    {"CUPTI_ACTIVITY_KIND_MEMCPY", memop_cols},
    {"CUPTI_ACTIVITY_KIND_MEMSET", memop_cols},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", api_cols},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", sync_cols},
    {"NVTX_EVENTS", nvtx_cols},
    {"PROFILER_OVERHEAD", overhead_cols},
    {"TARGET_INFO_GPU", gpu_cols},
    {"PROCESSES", process_cols},
};

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    return 1;
}

static int table_has_column(sqlite3 *db, const char *table, const char *column, int *found)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(db, "pragma_table_info");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
    *found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return 0;
}

/* Scan one table; add its row count and value checksum. A missing table
** reads as empty, as in the engine. */
static bool print_sql;   /* --sql: print the scan, read nothing */

static int scan(sqlite3 *db, const table_read *tr, uint64_t *rows, uint64_t *sum,
                uint64_t *table_rows)
{
    int exists = 0;
    sqlite3_stmt *probe = NULL;
    char *sql = sqlite3_mprintf("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %Q",
                                tr->table);
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &probe, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return fail(db, "reading the schema");
    exists = sqlite3_step(probe) == SQLITE_ROW;
    sqlite3_finalize(probe);
    if (!exists) return 0;

    if (print_sql) {
        printf("SELECT count(*)");
        for (const char *const *c = tr->columns; *c; c++) {
            int found = 0;
            if (table_has_column(db, tr->table, *c, &found)) return 1;
            if (found) printf(", total(\"%s\")", *c);
        }
        printf(" FROM \"%s\";\n", tr->table);
        return 0;
    }
    sql = sqlite3_mprintf("SELECT rowid");
    int n_cols = 1;
    for (const char *const *c = tr->columns; *c; c++, n_cols++) {
        int found = 0;
        if (table_has_column(db, tr->table, *c, &found)) {
            sqlite3_free(sql);
            return 1;
        }
        char *more = found ? sqlite3_mprintf("%s, \"%w\"", sql, *c) : sqlite3_mprintf("%s, NULL", sql);
        sqlite3_free(sql);
        sql = more;
    }
    char *full = sqlite3_mprintf("%s FROM \"%w\"", sql, tr->table);
    sqlite3_free(sql);
    sqlite3_stmt *st = NULL;
    rc = full ? sqlite3_prepare_v2(db, full, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(full);
    if (rc != SQLITE_OK) return fail(db, tr->table);

    uint64_t n = 0, s = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        n++;
        for (int i = 0; i < n_cols; i++) {
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER:
                s += (uint64_t)sqlite3_column_int64(st, i);
                break;
            case SQLITE_FLOAT:
                s += (uint64_t)(int64_t)sqlite3_column_double(st, i);
                break;
            case SQLITE_TEXT: {
                const unsigned char *text = sqlite3_column_text(st, i);
                int len = sqlite3_column_bytes(st, i);
                s += (uint64_t)len + (len > 0 ? text[0] + text[len - 1] : 0);
                break;
            }
            default:
                s += 1;
            }
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return fail(db, tr->table);
    *rows += n;
    *table_rows = n;
    *sum = *sum * 31 + s;
    return 0;
}

int main(int argc, char **argv)
{
    /* the SQLite this build links, for bench/run's record of the machine */
    if (argc == 2 && strcmp(argv[1], "--sqlite-version") == 0) {
        printf("%s\n", sqlite3_libversion());
        return 0;
    }
    int arg = 1;
    print_sql = argc > arg + 1 && strcmp(argv[arg], "--sql") == 0;
    arg += print_sql;
    bool kernel_rows = argc > arg + 1 && strcmp(argv[arg], "--kernel-rows") == 0;
    arg += kernel_rows;
    if (argc != arg + 1) {
        fprintf(stderr, "usage: floor [--sql] [--kernel-rows] EXPORT.sqlite | floor --sqlite-version\n");
        return 2;
    }
    if (kernel_rows) reads[1].columns = kernel_cols;
    const char *path = argv[argc - 1];
    char *uri = tg_trace_uri(path);
    sqlite3 *db = NULL;
    /* NOMUTEX: one thread uses the connection, so SQLite need not lock it
    ** on every sqlite3_column_* call (about 20% of a scan otherwise). */
    int rc = uri ? sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                   NULL)
                 : SQLITE_NOMEM;
    free(uri);
    if (rc != SQLITE_OK) {
        fail(db, path);
        sqlite3_close(db);
        return 1;
    }
    uint64_t rows = 0, sum = 0, kernels = 0;
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        uint64_t n = 0;
        if (scan(db, &reads[i], &rows, &sum, &n)) {
            sqlite3_close(db);
            return 1;
        }
        if (strcmp(reads[i].table, "CUPTI_ACTIVITY_KIND_KERNEL") == 0) kernels = n;
    }
    sqlite3_close(db);
    if (print_sql) return 0;
    printf("rows=%llu kernels=%llu checksum=%016llx\n", (unsigned long long)rows,
           (unsigned long long)kernels, (unsigned long long)sum);
    return 0;
}
