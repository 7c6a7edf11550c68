/*
** The rule-test materialiser (engine/ruletest/ruletest_sqlite.c): the file it
** writes must load exactly like an export of the same shape. Checked three
** ways: against a fixture written by hand in SQL with nsys's encodings
** (same `tracegate info` JSON, same joins after the model), against a real
** nsys 2022.4 export when ../shared/traces is present (same columns, ENUM
** rows and GlobalId high bits), and for the lazily created tables, rowid
** order, NVTX domains and byte-stable output.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "model/model.h"
#include "report/info.h"
#include "ruletest/ruletest_int.h"

#define P "version: 1\ntests:\n  - name: t\n    rule: r\n    input:\n      events:\n"
#define EX "    expect: {status: pass}\n"

/* Load a one-case test text and write its events into a fresh fixture
** folder; returns the path (free with tg_fixture_remove). */
static char *materialise(const char *events_yaml)
{
    size_t len = strlen(P) + strlen(events_yaml) + strlen(EX) + 1;
    char *text = malloc(len);
    snprintf(text, len, "%s%s%s", P, events_yaml, EX);
    tg_diag d;
    tg_diag_init(&d);
    tg_ruletest_file *f = tg_ruletest_load_text("m.test.yaml", text, strlen(text), &d);
    for (size_t k = 0; k < d.n; k++) print_error("%d:%d %s\n", d.msgs[k].pos.line, d.msgs[k].pos.col, d.msgs[k].text);
    assert_non_null(f);
    /* a private folder the fixture helper knows how to remove */
    char *path = tg_fixture_from_sql("SELECT 1;");
    assert_non_null(path);
    unlink(path);
    assert_int_equal(tg_ruletest_write_events(f->cases[0].events, path, &d), TG_OK);
    tg_ruletest_free(f);
    tg_diag_clear(&d);
    free(text);
    return path;
}

static tg_trace *open_trace(const char *path)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    for (size_t k = 0; k < d.n; k++) print_error("%s\n", d.msgs[k].text);
    assert_non_null(t);
    tg_diag_clear(&d);
    return t;
}

/* ------------------------------------------------ against a fixture */

static const char *const events_all =
    "        api:\n"
    "          - {name: cudaStreamSynchronize, start: 5ms, end: 6ms}\n"
    "        kernels:\n"
    "          - {name: saxpy, start: 1ms, duration: 10us,\n"
    "             launch: {name: cudaLaunchKernel, start: 0.9ms, end: 0.95ms}}\n"
    "        memcpys:\n"
    "          - {start: 2ms, duration: 100us, kind: HtoD, bytes: 1MiB,\n"
    "             launch: {name: cuMemcpyHtoD_v2, start: 1.9ms, end: 2.2ms}}\n"
    "        memsets:\n"
    "          - {start: 3ms, duration: 5us, mem_kind: pinned, bytes: 4KiB,\n"
    "             launch: {name: cudaMemset, start: 2.99ms, end: 3.01ms}}\n"
    "        nvtx:\n"
    "          - {name: iteration, start: 0.5ms, end: 7ms}\n"
    "          - {name: mark1, start: 4ms, type: mark}\n"
    "        overhead:\n"
    "          - {start: 6ms, duration: 1ms}\n";

/* The same trace as nsys would write it, by hand: globalPid = 1 << 48 |
** pid << 24 (pid 1000), globalTid adds the thread (1000). */
#define G "281491753926656"
#define T "281491753927656"
static const char *const fixture_rows =
    "DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;\n"
    /* no -t osrt, --cudabacktrace, -t cudnn,cublas: no host-side tables */
    "DROP TABLE OSRT_API; DROP TABLE OSRT_CALLCHAINS; DROP TABLE CUDA_CALLCHAINS;\n"
    "DROP TABLE CUDNN_EVENTS; DROP TABLE CUBLAS_EVENTS;\n"
    "INSERT INTO StringIds VALUES (11, 'cudaStreamSynchronize'), (12, 'cudaLaunchKernel'), (13, 'saxpy'),"
    " (14, 'cuMemcpyHtoD_v2'), (15, 'cudaMemset'), (16, 'CUDA profiling overhead'), (17, 'tracegate-test');\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)"
    " VALUES (5000000, 6000000, 1, " T ", 1, 11, 0), (900000, 950000, 1, " T ", 2, 12, 0),"
    " (1900000, 2200000, 1, " T ", 3, 14, 0), (2990000, 3010000, 1, " T ", 4, 15, 0);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
    " demangledName, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread)"
    " VALUES (1000000, 1010000, 0, 1, 7, 2, " G ", 13, 13, 1, 1, 1, 256, 1, 1, 32);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
    " bytes, copyKind, srcKind, dstKind) VALUES (2000000, 2100000, 0, 1, 7, 3, " G ", 1048576, 1, 0, 2);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
    " value, bytes, memKind) VALUES (3000000, 3005000, 0, 1, 7, 4, " G ", 0, 4096, 1);\n"
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)"
    " VALUES (500000, 7000000, 59, 'iteration', " T ", 0), (4000000, NULL, 34, 'mark1', " T ", 0);\n"
    "INSERT INTO PROFILER_OVERHEAD VALUES (6000000, 7000000, " T ", 16, 0);\n"
    "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, computeMajor, computeMinor)"
    " VALUES (281474976710656, 0, 'NVIDIA H200', 150109880320, 132, 9, 0);\n"
    "INSERT INTO PROCESSES VALUES (" G ", 1000, 'tracegate-test');\n"
    "INSERT INTO ThreadNames VALUES (17, 20, " T ");\n"
    "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1735689600000000000, '2025-01-01T00:00:00',"
    " '2025-01-01T00:00:00');\n";

static void test_loads_like_fixture(void **state)
{
    (void)state;
    char *mine = materialise(events_all);
    char *ref = tg_fixture_build(tg_fixture_schema_3_0, fixture_rows);
    assert_non_null(ref);
    tg_trace *a = open_trace(mine), *b = open_trace(ref);

    for (int i = 0; i < TG_TABLE_COUNT; i++) {
        if (a->has_table[i] != b->has_table[i]) print_error("table %s differs\n", tg_table_names[i]);
        assert_int_equal(a->has_table[i], b->has_table[i]);
    }
    assert_false(a->has_table[TG_TABLE_SYNC]);
    assert_string_equal(a->schema_version, "3.0.0");
    assert_string_equal(a->nsys_version, "2022.4.2.1");

    /* `tracegate info --format json`, file name aside, is the same document */
    json_t *ja = tg_info_json(a, NULL), *jb = tg_info_json(b, NULL);
    assert_non_null(ja);
    assert_non_null(jb);
    json_object_del(ja, "file");
    json_object_del(jb, "file");
    char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);
    if (!json_equal(ja, jb)) print_error("materialised:\n%s\nfixture:\n%s\n", sa, sb);
    assert_true(json_equal(ja, jb));
    assert_non_null(strstr(sa, "\"kernel\": 1"));
    assert_non_null(strstr(sa, "\"NVIDIA H200\""));
    free(sa);
    free(sb);
    json_decref(ja);
    json_decref(jb);

    /* the joins the model makes: launching calls, queue time, iterations */
    tg_diag d;
    tg_diag_init(&d);
    tg_model *ma = tg_model_build(a, NULL, &d), *mb = tg_model_build(b, NULL, &d);
    assert_non_null(ma);
    assert_non_null(mb);
    assert_int_equal(a->n_kernels, 1);
    assert_int_equal(a->kernels[0].pid, 1000);
    assert_int_equal(a->kernels[0].tid, 1000);
    assert_string_equal(tg_trace_str(a, a->kernels[0].api_name), "cudaLaunchKernel");
    assert_int_equal(a->kernels[0].queue, 50000);
    assert_int_equal(a->kernels[0].queue, b->kernels[0].queue);
    assert_string_equal(tg_trace_str(a, a->memcpys[0].api_name), tg_trace_str(b, b->memcpys[0].api_name));
    assert_int_equal(a->memcpys[0].api_sync, 1);
    assert_int_equal(a->memcpys[0].api_sync, b->memcpys[0].api_sync);
    assert_string_equal(tg_trace_str(a, a->memcpys[0].src_kind_name), "pageable");
    assert_int_equal(a->memsets[0].api_sync, 1);
    assert_string_equal(tg_trace_str(a, a->memsets[0].src_kind_name), "pinned");
    assert_int_equal(ma->n_iterations, 1);
    assert_int_equal(ma->n_iterations, mb->n_iterations);
    assert_int_equal(ma->iterations[0].gpu_time, mb->iterations[0].gpu_time);
    assert_int_equal(ma->iterations[0].gpu_time, 10000 + 100000 + 5000);
    assert_int_equal(ma->n_gaps, mb->n_gaps);
    assert_int_equal(a->apis[3].blocking, 1);
    tg_model_free(ma);
    tg_model_free(mb);
    tg_diag_clear(&d);
    tg_trace_close(a);
    tg_trace_close(b);
    tg_fixture_remove(mine);
    tg_fixture_remove(ref);
}

/* ------------------------------------------- against a real export */

typedef struct column {
    char name[64], type[32];
    int notnull, pk;
} column;

static int columns(sqlite3 *db, const char *table, column *out, int max)
{
    sqlite3_stmt *st;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT name, type, \"notnull\", pk FROM pragma_table_info('%s')", table);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < max) {
        snprintf(out[n].name, sizeof out[n].name, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(out[n].type, sizeof out[n].type, "%s", (const char *)sqlite3_column_text(st, 1));
        out[n].notnull = sqlite3_column_int(st, 2);
        out[n].pk = sqlite3_column_int(st, 3);
        n++;
    }
    sqlite3_finalize(st);
    return n;
}

static int64_t scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_same_columns_as_real_export(void **state)
{
    (void)state;
    const char *root = getenv("TG_SHARED_TRACES");
    /* two real captures between them hold every table the events create */
    char real[4096], real2[4096];
    snprintf(real, sizeof real, "file:%s/h200-nsys/drv_sync_memcpy.sqlite?mode=ro", root ? root : "../shared/traces");
    snprintf(real2, sizeof real2, "file:%s/h200-nsys/drv_sync_memset.sqlite?mode=ro", root ? root : "../shared/traces");
    sqlite3 *rdb = NULL, *rdb2 = NULL;
    if (sqlite3_open_v2(real, &rdb, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
        sqlite3_exec(rdb, "SELECT 1 FROM EXPORT_META_DATA", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_open_v2(real2, &rdb2, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
        sqlite3_exec(rdb2, "SELECT 1 FROM EXPORT_META_DATA", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(rdb);
        sqlite3_close(rdb2);
        print_message("skipped: the shared traces (h200-nsys/drv_sync_mem{cpy,set}.sqlite) are not here\n");
        skip();
    }
    char *mine = materialise(events_all);
    sqlite3 *mdb;
    assert_int_equal(sqlite3_open_v2(mine, &mdb, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(mdb, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1,
                                        &st, NULL), SQLITE_OK);
    int tables = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *table = (const char *)sqlite3_column_text(st, 0);
        column a[64], b[64];
        int na = columns(mdb, table, a, 64), nb = columns(rdb, table, b, 64);
        if (nb == 0) nb = columns(rdb2, table, b, 64);
        if (na != nb) print_error("%s: %d columns here, %d in the real export\n", table, na, nb);
        assert_int_equal(na, nb);
        for (int i = 0; i < na; i++) {
            assert_string_equal(a[i].name, b[i].name);
            assert_string_equal(a[i].type, b[i].type);
            assert_int_equal(a[i].notnull, b[i].notnull);
            assert_int_equal(a[i].pk, b[i].pk);
        }
        tables++;
    }
    sqlite3_finalize(st);
    assert_int_equal(tables, 16);
    /* the ENUM tables hold the real rows */
    static const char *const enums[] = {"ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE",
                                        "ENUM_NSYS_EVENT_TYPE"};
    char sql[512];
    assert_int_equal(sqlite3_exec(mdb, "SELECT 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(mdb);
    char attach[4400];
    snprintf(attach, sizeof attach, "ATTACH '%s' AS real", real);
    sqlite3 *both;
    assert_int_equal(sqlite3_open_v2(mine, &both, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(both, attach, NULL, NULL, NULL), SQLITE_OK);
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM real.%s)",
                 enums[i], enums[i]);
        assert_int_equal(scalar(both, sql), 0);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM (SELECT * FROM real.%s EXCEPT SELECT * FROM main.%s)",
                 enums[i], enums[i]);
        assert_int_equal(scalar(both, sql), 0);
    }
    /* metadata keys this export records agree with the real one */
    assert_int_equal(scalar(both, "SELECT count(*) FROM main.EXPORT_META_DATA m JOIN real.EXPORT_META_DATA r "
                                  "USING (name) WHERE m.value IS NOT r.value"), 0);
    assert_int_equal(scalar(both, "SELECT count(*) FROM main.EXPORT_META_DATA"), 7);
    /* GlobalIds carry the same high bits, pid in bits 24..47 */
    assert_int_equal(scalar(both, "SELECT min(globalPid >> 48) FROM real.CUPTI_ACTIVITY_KIND_MEMCPY"),
                     scalar(both, "SELECT min(globalPid >> 48) FROM main.CUPTI_ACTIVITY_KIND_MEMCPY"));
    assert_int_equal(scalar(both, "SELECT (globalPid >> 24) & 16777215 FROM main.CUPTI_ACTIVITY_KIND_MEMCPY"), 1000);
    assert_int_equal(scalar(both, "SELECT count(*) FROM main.CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
                                  "main.CUPTI_ACTIVITY_KIND_MEMCPY m ON m.correlationId = r.correlationId AND "
                                  "m.globalPid = (r.globalTid & -16777216)"), 1);
    sqlite3_close(both);
    sqlite3_close(rdb);
    sqlite3_close(rdb2);
    tg_fixture_remove(mine);
}

/* ----------------------------------------------------- the shape */

static void test_tables_created_lazily(void **state)
{
    (void)state;
    struct {
        const char *events;
        unsigned tables;   /* bit per tg_table_id */
    } cases[] = {
        {"        {}\n", 1u << TG_TABLE_STRINGS},
        {"        nvtx: []\n", 1u << TG_TABLE_STRINGS | 1u << TG_TABLE_NVTX},
        {"        memsets:\n", 1u << TG_TABLE_STRINGS | 1u << TG_TABLE_MEMSET | 1u << TG_TABLE_RUNTIME | 1u << TG_TABLE_GPU},
        {"        api: []\n", 1u << TG_TABLE_STRINGS | 1u << TG_TABLE_RUNTIME | 1u << TG_TABLE_GPU},
        {"        devices: [{name: x}]\n", 1u << TG_TABLE_STRINGS | 1u << TG_TABLE_GPU},
        {"        overhead: []\n        kernels: []\n",
         1u << TG_TABLE_STRINGS | 1u << TG_TABLE_OVERHEAD | 1u << TG_TABLE_KERNEL | 1u << TG_TABLE_RUNTIME |
             1u << TG_TABLE_GPU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s", cases[i].events);
        /* `events: {}` is written inline */
        char *path = strcmp(text, "        {}\n") == 0 ? NULL : materialise(text);
        if (!path) {
            const char *t = "version: 1\ntests:\n  - name: t\n    rule: r\n    input: {events: {}}\n" EX;
            tg_diag d;
            tg_diag_init(&d);
            tg_ruletest_file *f = tg_ruletest_load_text("e.test.yaml", t, strlen(t), &d);
            assert_non_null(f);
            path = tg_fixture_from_sql("SELECT 1;");
            unlink(path);
            assert_int_equal(tg_ruletest_write_events(f->cases[0].events, path, &d), TG_OK);
            tg_ruletest_free(f);
            tg_diag_clear(&d);
        }
        tg_trace *t = open_trace(path);
        for (int k = 0; k < TG_TABLE_COUNT; k++) {
            bool want = (cases[i].tables >> k) & 1u;
            if (t->has_table[k] != want) print_error("case %zu: table %s\n", i, tg_table_names[k]);
            assert_int_equal(t->has_table[k], want);
        }
        assert_string_equal(t->schema_version, "3.0.0");
        assert_int_equal(t->n_processes >= 1, 1);
        tg_trace_close(t);
        tg_fixture_remove(path);
    }
}

static void test_rows_domains_and_gpus(void **state)
{
    (void)state;
    char *path = materialise(
        "        nvtx:\n"
        "          - {name: b, start: 5ms, duration: 1ms, domain: app, pid: 7}\n"
        "          - {name: a, start: 1ms, duration: 1ms}\n"
        "          - {name: c, start: 2ms, duration: 3ms, domain: app, pid: 8, type: startend}\n"
        "          - {name: m, start: 9ms, type: mark}\n"
        "        devices:\n"
        "          - {id: 1, name: NVIDIA A100-SXM4-80GB, sm_count: 108, memory: 80GiB, compute_capability: 8.0}\n"
        "        kernels:\n"
        "          - {start: 1ms, duration: 1ms, device: 1}\n"
        "          - {start: 1ms, duration: 1ms, device: 3}\n");
    tg_trace *t = open_trace(path);
    assert_int_equal(t->n_nvtx, 4);
    /* sorted by start; rowids are the order written */
    assert_int_equal(t->nvtx[0].rowid, 2);
    assert_string_equal(tg_trace_str(t, t->nvtx[0].name), "a");
    assert_int_equal(t->nvtx[0].domain, TG_NO_STR);
    assert_int_equal(t->nvtx[1].rowid, 3);
    assert_int_equal(t->nvtx[1].event_type, 60);
    assert_int_equal(t->nvtx[1].pid, 8);
    assert_string_equal(tg_trace_str(t, t->nvtx[1].domain), "app");
    assert_int_equal(t->nvtx[2].rowid, 1);
    assert_string_equal(tg_trace_str(t, t->nvtx[2].domain), "app");
    assert_int_equal(t->nvtx[3].end, TG_NULL_I64);
    assert_int_equal(t->nvtx[3].event_type, 34);
    /* the described GPU, and a bare entry for the undescribed device 3 */
    assert_int_equal(t->n_gpus, 2);
    assert_int_equal(t->gpus[0].id, 1);
    assert_string_equal(tg_trace_str(t, t->gpus[0].name), "NVIDIA A100-SXM4-80GB");
    assert_int_equal(t->gpus[0].sm_count, 108);
    assert_int_equal(t->gpus[0].memory, INT64_C(85899345920));
    assert_int_equal(t->gpus[0].compute_major, 8);
    assert_int_equal(t->gpus[1].id, 3);
    assert_int_equal(t->gpus[1].name, TG_NO_STR);
    assert_int_equal(t->n_processes, 3);
    tg_trace_close(t);
    tg_fixture_remove(path);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len ? *len : 1);
    assert_int_equal(fread(buf, 1, *len, f), *len);
    fclose(f);
    return buf;
}

static void test_byte_stable_and_no_overwrite(void **state)
{
    (void)state;
    char *a = materialise(events_all), *b = materialise(events_all);
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
    /* an existing file is never overwritten */
    const char *t = P "        kernels: []\n" EX;
    tg_diag d;
    tg_diag_init(&d);
    tg_ruletest_file *f = tg_ruletest_load_text("e.test.yaml", t, strlen(t), &d);
    assert_non_null(f);
    assert_int_equal(tg_ruletest_write_events(f->cases[0].events, a, &d), TG_EINTERNAL);
    assert_non_null(strstr(d.msgs[0].text, "the file exists"));
    x = slurp(a, &la);
    assert_int_equal(la, lb);
    free(x);
    tg_ruletest_free(f);
    tg_diag_clear(&d);
    tg_fixture_remove(a);
    tg_fixture_remove(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_like_fixture),
        cmocka_unit_test(test_same_columns_as_real_export),
        cmocka_unit_test(test_tables_created_lazily),
        cmocka_unit_test(test_rows_domains_and_gpus),
        cmocka_unit_test(test_byte_stable_and_no_overwrite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
