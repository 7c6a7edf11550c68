/*
** The trace layer on fixtures of the three export shapes (nsys 2022.1 /
** schema 2.9.1, 2022.4 / 3.0.0, 2026.2 / 3.25.0): versions detected, every
** table's rows loaded with the right fields, StringIds resolved, tables
** and columns found by name whatever their order, suffix or company, and
** absent optional tables or columns read as "no data", not as errors.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "trace_test.h"

/* Every field of the shared capture TT_ROWS, whatever the shape. */
/* The host-side tables (docs/host.md): the 3.25 captures recorded none. */
static bool host_table(int i)
{
    return i == TG_TABLE_OSRT || i == TG_TABLE_CALLCHAINS || i == TG_TABLE_OSRT_CALLCHAINS ||
           i == TG_TABLE_CUDNN || i == TG_TABLE_CUBLAS;
}

static void check_rows(const tg_trace *t, bool host_tables)
{
    assert_int_equal(t->n_kernels, 1);
    const tg_kernel *k = &t->kernels[0];
    assert_int_equal(k->start, 200);
    assert_int_equal(k->end, 260);
    assert_int_equal(k->rowid, 1);
    assert_int_equal(k->correlation, 11);
    assert_int_equal(k->pid, TT_PID);
    assert_int_equal(k->device, 0);
    assert_int_equal(k->context, 1);
    assert_int_equal(k->stream, 7);
    assert_string_equal(tt_str(t, k->name), "void saxpy<float>(int, float, float*, float*)");
    assert_string_equal(tt_str(t, k->short_name), "saxpy");
    assert_int_equal(k->grid_x, 64);
    assert_int_equal(k->grid_y, 2);
    assert_int_equal(k->block_x, 256);
    assert_int_equal(k->registers, 32);
    assert_int_equal(k->static_smem, 16);
    assert_int_equal(k->dynamic_smem, 1024);
    /* DERIVED fields are left null for engine/model. */
    assert_true(k->queue == TG_NULL_I64);
    assert_int_equal(k->api, -1);
    assert_int_equal(k->api_name, -1);
    assert_int_equal(k->tid, -1);
    assert_int_equal(k->nvtx, -1);
    assert_int_equal(k->iteration, -1);
    assert_int_equal(k->nccl, 0);
    assert_int_equal(k->steady, 0);

    assert_int_equal(t->n_memcpys, 1);
    const tg_memop *c = &t->memcpys[0];
    assert_int_equal(c->start, 330);
    assert_int_equal(c->correlation, 12);
    assert_int_equal(c->bytes, 16777216);
    assert_int_equal(c->copy_kind, 1);
    assert_int_equal(c->src_kind, 0);
    assert_int_equal(c->dst_kind, 2);
    assert_int_equal(c->pid, TT_PID);
    assert_true(c->value == TG_NULL_I64);
    assert_int_equal(c->api, -1);
    assert_int_equal(c->kind_name, -1);
    assert_int_equal(c->iteration, -1);
    assert_int_equal(c->api_sync, 0);

    assert_int_equal(t->n_memsets, 1);
    const tg_memop *m = &t->memsets[0];
    assert_int_equal(m->correlation, 13);
    assert_int_equal(m->bytes, 4096);
    assert_int_equal(m->value, 255);
    assert_int_equal(m->src_kind, 1);       /* memKind */
    assert_int_equal(m->copy_kind, -1);
    assert_int_equal(m->dst_kind, -1);

    assert_int_equal(t->n_apis, 4);
    const tg_api *a = &t->apis[0];
    assert_int_equal(a->start, 100);
    assert_int_equal(a->pid, TT_PID);
    assert_int_equal(a->tid, TT_TID);
    assert_int_equal(a->correlation, 11);
    assert_string_equal(tt_str(t, a->name), "cudaLaunchKernel_v7000");
    assert_int_equal(t->apis[3].return_value, 999);
    assert_int_equal(a->base_name, -1);
    assert_int_equal(a->dup_of, -1);
    assert_int_equal(a->iteration, -1);

    assert_int_equal(t->n_syncs, 1);
    assert_int_equal(t->syncs[0].correlation, 14);
    assert_int_equal(t->syncs[0].sync_type, 3);
    assert_int_equal(t->syncs[0].stream, 7);

    assert_int_equal(t->n_nvtx, 3);       /* two ranges and a mark */
    assert_string_equal(tt_str(t, t->nvtx[0].name), "iteration");        /* inline text */
    assert_int_equal(t->nvtx[0].event_type, 59);
    assert_int_equal(t->nvtx[0].pid, TT_PID);
    assert_int_equal(t->nvtx[0].tid, TT_TID);
    assert_int_equal(t->nvtx[0].domain, -1);
    assert_string_equal(tt_str(t, t->nvtx[1].name), "registered range"); /* textId */
    assert_int_equal(t->nvtx[2].event_type, 34);
    assert_true(t->nvtx[2].end == TG_NULL_I64);
    assert_string_equal(tt_str(t, t->nvtx[2].name), "a mark");
    assert_int_equal(t->nvtx[0].depth, -1);
    assert_true(t->nvtx[0].gpu_time == TG_NULL_I64);

    assert_int_equal(t->n_overheads, 1);
    assert_string_equal(tt_str(t, t->overheads[0].name), "CUDA profiling overhead");
    assert_int_equal(t->overheads[0].tid, 1236);

    assert_int_equal(t->n_gpus, 1);
    assert_int_equal(t->gpus[0].id, 0);
    assert_string_equal(tt_str(t, t->gpus[0].name), "NVIDIA H200");
    assert_int_equal(t->gpus[0].sm_count, 132);
    assert_int_equal(t->gpus[0].memory, 150109880320LL);
    assert_int_equal(t->gpus[0].compute_major, 9);

    assert_int_equal(t->n_processes, 1);
    assert_int_equal(t->processes[0].pid, TT_PID);
    assert_string_equal(tt_str(t, t->processes[0].name), "train.py");

    assert_int_equal(t->first_ns, 90);
    assert_int_equal(t->last_ns, 990);
    assert_int_equal(t->session_start_ns, 1700000000000000000LL);
    for (int i = 0; i < TG_TABLE_COUNT; i++) {
        if (host_table(i) && !host_tables) {
            assert_false(t->has_table[i]);
            continue;
        }
        assert_true(t->has_table[i]);
        assert_string_equal(t->table_name[i], tg_table_names[i]);
    }
    assert_false(t->mixed_duplicate_api);
}

static void open_shape(const char *schema, const char *nsys, const char *schema_version, int major,
                       int minor)
{
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(schema, TT_ROWS, &path, &d);
    assert_non_null(t);
    assert_int_equal(d.n, 0);
    assert_non_null(t->nsys_version);
    assert_string_equal(t->nsys_version, nsys);
    assert_string_equal(t->schema_version, schema_version);
    assert_string_equal(t->product_name, "NVIDIA Nsight Systems");
    assert_int_equal(t->schema_major, major);
    assert_int_equal(t->schema_minor, minor);
    assert_string_equal(t->path, path);
    check_rows(t, major != 3 || minor != 25);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

static void test_shape_3_0(void **state)
{
    (void)state;
    open_shape(tg_fixture_schema_3_0, "2022.4.2.1", "3.0.0", 3, 0);
}

static void test_shape_2_9(void **state)
{
    (void)state;
    open_shape(tg_fixture_schema_2_9, "2022.1.3.3", "2.9.1", 2, 9);
}

static void test_shape_3_25(void **state)
{
    (void)state;
    open_shape(tg_fixture_schema_3_25, "2026.2.1.210", "3.25.0", 3, 25);
}

/* Old exports (nsys 2021.3) have no metadata table at all. */
static void test_no_metadata(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0, TT_ROWS "DROP TABLE EXPORT_META_DATA;", &path, &d);
    assert_non_null(t);
    assert_null(t->nsys_version);
    assert_null(t->schema_version);
    assert_null(t->product_name);
    assert_int_equal(t->schema_major, -1);
    assert_int_equal(t->n_kernels, 1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* A newer export's _V2 table is found by prefix; the highest version wins;
** a longer name that merely starts the same (TARGET_INFO_GPU_METRICS) is
** not mistaken for the table. */
static void test_suffixed_tables(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0,
        TT_ROWS
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO CUPTI_ACTIVITY_KIND_KERNEL_V2;"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL_V3 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL_V2;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL_V3 (start, end, demangledName) VALUES (270, 280, 2);"
        "DROP TABLE TARGET_INFO_GPU;"
        "CREATE TABLE TARGET_INFO_GPU_METRICS (id INTEGER, name TEXT);"
        "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (5, 'not a GPU');",
        &path, &d);
    assert_non_null(t);
    assert_true(t->has_table[TG_TABLE_KERNEL]);
    assert_string_equal(t->table_name[TG_TABLE_KERNEL], "CUPTI_ACTIVITY_KIND_KERNEL_V3");
    assert_int_equal(t->n_kernels, 2);
    assert_string_equal(tt_str(t, t->kernels[1].name), "saxpy");
    assert_false(t->has_table[TG_TABLE_GPU]);
    assert_null(t->table_name[TG_TABLE_GPU]);
    /* The device the kernels ran on is still listed, undescribed. */
    assert_int_equal(t->n_gpus, 1);
    assert_int_equal(t->gpus[0].id, 0);
    assert_int_equal(t->gpus[0].name, -1);
    assert_int_equal(t->gpus[0].sm_count, -1);
    assert_true(t->gpus[0].memory == TG_NULL_I64);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Columns are read by name: a table with its columns in another order and
** unknown extra columns loads the same values. */
static void test_columns_by_name(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL, extra BLOB);"
        "INSERT INTO StringIds VALUES (3, 'k', x'00'), (4, 'cuLaunchKernel', NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (futureColumn TEXT, shortName INTEGER,"
        " globalPid INTEGER, streamId INTEGER, end INTEGER, newMetric REAL, start INTEGER,"
        " correlationId INTEGER, deviceId INTEGER, greenContextId INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('x', 3, 77 << 24, 9, 2000, 1.5, 1000, 5, 2, 1);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (nameId INTEGER, correlationId INTEGER,"
        " end INTEGER, start INTEGER, globalTid INTEGER, somethingNew INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (4, 5, 900, 800, (77 << 24) | 78, 1);",
        NULL, &path, &d);
    assert_non_null(t);
    assert_int_equal(t->n_kernels, 1);
    const tg_kernel *k = &t->kernels[0];
    assert_int_equal(k->start, 1000);
    assert_int_equal(k->end, 2000);
    assert_int_equal(k->device, 2);
    assert_int_equal(k->stream, 9);
    assert_int_equal(k->pid, 77);
    assert_int_equal(k->correlation, 5);
    /* No demangledName column: the name falls back to shortName. */
    assert_string_equal(tt_str(t, k->name), "k");
    assert_string_equal(tt_str(t, k->short_name), "k");
    /* Absent optional columns read as null. */
    assert_int_equal(k->context, -1);
    assert_int_equal(k->grid_x, -1);
    assert_int_equal(k->registers, -1);
    assert_int_equal(t->n_apis, 1);
    assert_int_equal(t->apis[0].tid, 78);
    assert_int_equal(t->apis[0].return_value, -1);
    assert_string_equal(tt_str(t, t->apis[0].name), "cuLaunchKernel");
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Tables are created lazily: no memsets, no NVTX, no GPU table is "no such
** events", not an error. */
static void test_missing_optional_tables(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_25,
        TT_ROWS "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE NVTX_EVENTS;"
        "DROP TABLE PROFILER_OVERHEAD; DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;"
        "DROP TABLE PROCESSES; DROP TABLE TARGET_INFO_SESSION_START_TIME;",
        &path, &d);
    assert_non_null(t);
    assert_int_equal(d.n_errors, 0);
    assert_false(t->has_table[TG_TABLE_MEMSET]);
    assert_false(t->has_table[TG_TABLE_NVTX]);
    assert_false(t->has_table[TG_TABLE_SYNC]);
    assert_false(t->has_table[TG_TABLE_OVERHEAD]);
    assert_null(t->table_name[TG_TABLE_MEMSET]);
    assert_int_equal(t->n_memsets, 0);
    assert_int_equal(t->n_nvtx, 0);
    assert_int_equal(t->n_syncs, 0);
    assert_int_equal(t->n_overheads, 0);
    assert_int_equal(t->n_processes, 0);
    assert_true(t->session_start_ns == TG_NULL_I64);
    assert_int_equal(t->n_kernels, 1);
    assert_int_equal(t->n_memcpys, 1);
    assert_int_equal(t->first_ns, 100);   /* NVTX gone: the first API call */
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* A capture with no CUDA tables at all (only StringIds and GPU info). */
static void test_empty_capture(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES (1, 'x');"
        "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
        " smCount INTEGER, totalMemory INTEGER);"
        "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA RTX A2000 12GB', 26, 12633047040);",
        NULL, &path, &d);
    assert_non_null(t);
    assert_int_equal(d.n, 0);
    assert_int_equal(t->n_kernels + t->n_memcpys + t->n_memsets + t->n_apis + t->n_nvtx, 0);
    assert_false(t->has_table[TG_TABLE_KERNEL]);
    assert_false(t->has_table[TG_TABLE_RUNTIME]);
    assert_true(t->has_table[TG_TABLE_STRINGS]);
    assert_int_equal(t->n_gpus, 1);
    assert_int_equal(t->gpus[0].compute_major, -1);
    assert_true(t->first_ns == TG_NULL_I64 && t->last_ns == TG_NULL_I64);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* NVTX domains: defined by eventType 75 rows (domainId + text), per
** process; definition rows are not loaded; unknown domains get a name. */
static void test_nvtx_domains(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (417, 'ncclCommInitRank'), (500, 'MPI');"
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId) VALUES"
        " (10, NULL, 75, 'NCCL', NULL, " TT_GTID ", 1),"          /* domain 1 = NCCL in 1234 */
        " (11, NULL, 75, NULL, 500, ((99 << 24) | 1), 1),"         /* domain 1 = MPI in 99 */
        " (12, NULL, 39, 'NCCLproxy 0', NULL, " TT_GTID ", 0),"    /* thread name */
        " (13, NULL, 33, 'a category', NULL, " TT_GTID ", 0),"
        " (20, 30, 59, NULL, 417, " TT_GTID ", 1),"
        " (21, 31, 59, 'send', NULL, ((99 << 24) | 1), 1),"
        " (22, 32, 60, 'async work', NULL, ((55 << 24) | 1), 1),"  /* no definition in 55 */
        " (23, 33, 59, 'orphan', NULL, " TT_GTID ", 7),"
        " (24, NULL, 34, 'mark', NULL, " TT_GTID ", 0);",
        &path, &d);
    assert_non_null(t);
    assert_int_equal(t->n_nvtx, 5);
    assert_string_equal(tt_str(t, t->nvtx[0].name), "ncclCommInitRank");
    assert_string_equal(tt_str(t, t->nvtx[0].domain), "NCCL");
    assert_string_equal(tt_str(t, t->nvtx[1].domain), "MPI");
    assert_int_equal(t->nvtx[1].pid, 99);
    /* No definition in process 55: by id alone (lowest pid's definition). */
    assert_string_equal(tt_str(t, t->nvtx[2].domain), "MPI");
    assert_int_equal(t->nvtx[2].event_type, 60);
    assert_string_equal(tt_str(t, t->nvtx[3].domain), "domain 7");
    assert_int_equal(t->nvtx[4].domain, -1);
    assert_int_equal(t->nvtx[4].event_type, 34);
    assert_true(t->nvtx[4].end == TG_NULL_I64);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Rows come out sorted by start, ties in table order (stable). */
static void test_sorted_by_start(void **state)
{
    (void)state;
    char *sql = NULL;
    /* 2000 kernels in a scrambled order, with many equal starts. */
    for (int i = 0; i < 2000; i++) {
        int start = ((i * 7919) % 1000) * 10 - 5000;   /* negatives too */
        assert_true(tg_fixture_append(&sql,
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, correlationId) VALUES (%d, %d, %d);",
            start, start + 5, i));
    }
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0, sql, &path, &d);
    free(sql);
    assert_non_null(t);
    assert_int_equal(t->n_kernels, 2000);
    for (size_t i = 1; i < t->n_kernels; i++) {
        assert_true(t->kernels[i - 1].start <= t->kernels[i].start);
        if (t->kernels[i - 1].start == t->kernels[i].start)
            assert_true(t->kernels[i - 1].rowid < t->kernels[i].rowid);
        assert_int_equal(t->kernels[i].correlation, t->kernels[i].rowid - 1);
    }
    assert_int_equal(t->first_ns, -5000);
    assert_int_equal(t->last_ns, 4995);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* String ids far apart use the hashed map; an id with no string is null. */
static void test_sparse_string_ids(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (5, 'five'), (5000000000, 'five billion'), (-3, 'minus three');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, demangledName, shortName) VALUES"
        " (1, 2, 5000000000, 5), (3, 4, -3, 5), (5, 6, 424242, 5), (7, 8, 424242, 424242);",
        &path, &d);
    assert_non_null(t);
    assert_int_equal(t->n_kernels, 4);
    assert_string_equal(tt_str(t, t->kernels[0].name), "five billion");
    assert_string_equal(tt_str(t, t->kernels[1].name), "minus three");
    assert_string_equal(tt_str(t, t->kernels[2].name), "five");   /* falls back to shortName */
    assert_int_equal(t->kernels[3].name, -1);
    assert_int_equal(t->kernels[3].short_name, -1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* nsys 2022.2 exports record each runtime call twice on the same thread
** with one correlation id (cudaMalloc and cudaMalloc_v3020). */
static void test_duplicate_api_calls(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_2_9,
        "INSERT INTO StringIds VALUES (1, 'cudaMalloc'), (2, 'cudaMalloc_v3020');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (884995616, 885386920, " TT_GTID ", 135, 1),"
        " (884995887, 885386749, " TT_GTID ", 135, 2);",
        &path, &d);
    assert_non_null(t);
    assert_true(t->mixed_duplicate_api);
    assert_int_equal(t->n_apis, 2);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Cells of the wrong type and impossible times: skipped or clamped,
** deterministically, with one warning for the table; never a crash. */
static void test_bad_cells(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    /* Columns without NOT NULL so the bad rows can be stored at all. */
    tg_trace *t = tt_open(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "INSERT INTO StringIds VALUES (1, 'k'), (2, NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, demangledName,"
        " globalPid, correlationId);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
        " (100, 200, 0, 1, 1, 1 << 24, 1),"
        " ('soon', 300, 0, 1, 1, 1 << 24, 2),"          /* text start: skipped */
        " (NULL, 300, 0, 1, 1, 1 << 24, 3),"            /* null start: skipped */
        " (400, NULL, 0, 1, 1, 1 << 24, 4),"            /* null end: skipped */
        " (500, 450, 0, 1, 1, 1 << 24, 5),"             /* end < start: clamped */
        " (600.0, 700.9, 'gpu0', x'01', 'k', 'pid', 'c'),"  /* reals; junk elsewhere */
        " (800, 900, 99999999999, -1, 2, NULL, NULL);",     /* out of int32 range; null string */
        NULL, &path, &d);
    assert_non_null(t);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 1);                           /* one warning for the table */
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    assert_non_null(strstr(d.msgs[0].text, path));
    assert_non_null(strstr(d.msgs[0].text, "CUPTI_ACTIVITY_KIND_KERNEL"));
    assert_non_null(strstr(d.msgs[0].text, "skipped 3 rows"));
    assert_non_null(strstr(d.msgs[0].text, "clamped 1 rows"));
    assert_int_equal(t->n_kernels, 4);
    assert_int_equal(t->kernels[0].correlation, 1);
    assert_int_equal(t->kernels[1].start, 500);
    assert_int_equal(t->kernels[1].end, 500);
    assert_int_equal(t->kernels[2].start, 600);
    assert_int_equal(t->kernels[2].end, 700);
    assert_int_equal(t->kernels[2].device, -1);
    assert_int_equal(t->kernels[2].stream, -1);
    assert_int_equal(t->kernels[2].pid, -1);
    assert_true(t->kernels[2].correlation == TG_NULL_I64);
    assert_string_equal(tt_str(t, t->kernels[2].name), "k");   /* inline text accepted */
    assert_int_equal(t->kernels[3].device, -1);
    assert_int_equal(t->kernels[3].name, -1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* GPUs from TARGET_INFO_CUDA_DEVICE when TARGET_INFO_GPU is absent, and
** bare entries for other devices the activity uses; sorted by id. */
static void test_gpu_fallbacks(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_25,
        "DROP TABLE TARGET_INFO_GPU;"
        "CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER,"
        " uuid TEXT, numMultiprocessors INTEGER);"
        "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (1, 1, 5, '', 68);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId) VALUES (1, 2, 3), (3, 4, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId) VALUES (5, 6, 0);",
        &path, &d);
    assert_non_null(t);
    assert_false(t->has_table[TG_TABLE_GPU]);
    assert_int_equal(t->n_gpus, 3);
    assert_int_equal(t->gpus[0].id, 0);
    assert_int_equal(t->gpus[1].id, 1);
    assert_int_equal(t->gpus[1].sm_count, 68);
    assert_int_equal(t->gpus[2].id, 3);
    assert_int_equal(t->gpus[2].sm_count, -1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Opening leaves the file untouched and creates nothing beside it. */
static void test_read_only(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    assert_non_null(path);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    char listing[1024];
    for (int i = 0; i < 3; i++) {
        tg_diag d;
        tg_diag_init(&d);
        tg_trace *t = tg_trace_open(path, &d);
        assert_non_null(t);
        tt_dir_listing(path, listing, sizeof listing);
        assert_string_equal(listing, "trace.sqlite");    /* no -journal, -wal, -shm */
        tg_trace_close(t);
        tg_diag_clear(&d);
    }
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_true(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_3_0),
        cmocka_unit_test(test_shape_2_9),
        cmocka_unit_test(test_shape_3_25),
        cmocka_unit_test(test_no_metadata),
        cmocka_unit_test(test_suffixed_tables),
        cmocka_unit_test(test_columns_by_name),
        cmocka_unit_test(test_missing_optional_tables),
        cmocka_unit_test(test_empty_capture),
        cmocka_unit_test(test_nvtx_domains),
        cmocka_unit_test(test_sorted_by_start),
        cmocka_unit_test(test_sparse_string_ids),
        cmocka_unit_test(test_duplicate_api_calls),
        cmocka_unit_test(test_bad_cells),
        cmocka_unit_test(test_gpu_fallbacks),
        cmocka_unit_test(test_read_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
