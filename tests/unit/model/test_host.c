/*
** The host side of the model (engine/model/model_host.c, docs/host.md) on
** exports written by the fixture builder: the host tables read at open
** and later (the same rows either way), call sites through stacks
** (libraries and CUDA wrappers looked past, the nsys 2022.2 id offset
** found), what a process did in a window, launch time per iteration and
** the cuDNN/cuBLAS call a launch happened in.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "model/source.h"
#include "report/metrics.h"

#define PID 1000
#define G "16777216000"            /* 1000 << 24 */
#define T(tid) "(16777216000 + " #tid ")"

/* strings: 1 cudaMemcpy 2 cudaLaunchKernel 3 k 4 usleep 5 poll 6 libcudart.so.12
** 7 /opt/app/train.so 8 step(int) 9 main 10 /lib/libc.so.6 11 cudaError cudaMemcpy<float>(float*) 12 gemm
** 13 cublasSgemm_v2 14 iteration 15 loader 16 drv 17 /usr/lib/libcuda.so.1 */
static const char *const rows =
    "INSERT INTO StringIds VALUES (1, 'cudaMemcpy'), (2, 'cudaLaunchKernel'), (3, 'k'), (4, 'usleep'),"
    " (5, 'poll'), (6, 'libcudart.so.12'), (7, '/opt/app/train.so'), (8, 'step(int)'), (9, 'main'),"
    " (10, '/lib/libc.so.6'), (11, 'cudaError cudaMemcpy<float>(float*)'), (12, 'gemm'), (13, 'cublasSgemm_v2'),"
    " (14, 'iteration'), (15, 'loader'), (16, 'drv'), (17, '/usr/lib/libcuda.so.1');\n"
    /* one copy per call site sample; callchainId is CUDA_CALLCHAINS.id - 1, as nsys 2022.2 writes it */
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId, callchainId) VALUES"
    " (1000000, 4000000, " T(1000) ", 1, 1, 0),"
    " (11000000, 14000000, " T(1000) ", 2, 1, 1),"
    " (20000000, 20008000, " T(1000) ", 3, 2, NULL),"
    " (20100000, 20108000, " T(1000) ", 4, 2, NULL),"
    " (30000000, 30500000, " T(1000) ", 5, 2, NULL);\n"
    "INSERT INTO CUDA_CALLCHAINS (id, symbol, module, unresolved, stackDepth) VALUES"
    " (1, 0, 17, 1, 0), (1, 1, 6, 0, 1), (1, 11, 7, 0, 2), (1, 8, 7, 0, 3), (1, 9, 7, 0, 4),"
    " (2, 1, 6, 0, 0), (2, 9, 7, 0, 1);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind,"
    " srcKind, dstKind) VALUES (2000000, 3500000, 0, 7, 1, " G ", 1048576, 1, 0, 2),"
    " (12000000, 13500000, 0, 7, 2, " G ", 1048576, 1, 0, 2);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName,"
    " shortName) VALUES (20009000, 20010000, 0, 7, 3, " G ", 3, 3), (20109000, 20110000, 0, 7, 4, " G ", 3, 3),"
    " (30600000, 31600000, 0, 7, 5, " G ", 12, 12);\n"
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
    " (0, 15000000, 59, 'iteration', " T(1000) "), (15000000, 40000000, 59, 'iteration', " T(1000) ");\n"
    "INSERT INTO OSRT_API (start, end, globalTid, nameId, returnValue, nestingLevel, callchainId) VALUES"
    " (4500000, 10500000, " T(1000) ", 4, 0, 0, 7), (0, 40000000, " T(1001) ", 5, 1, 0, 8);\n"
    "INSERT INTO OSRT_CALLCHAINS (id, symbol, module, stackDepth) VALUES (7, 4, 10, 0), (7, 9, 7, 1);\n"
    "INSERT INTO CUBLAS_EVENTS (start, end, globalTid, nameId) VALUES (29000000, 31000000, " T(1000) ", 13);\n"
    "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (16, 20, " T(1000) "), (15, 20, " T(1001) ");\n";

typedef struct built {
    char *path;
    tg_trace *t;
    tg_model *m;
} built;

static built build(unsigned host_at_open)
{
    built b = {.path = tg_fixture_build(tg_fixture_schema_3_0, rows)};
    assert_non_null(b.path);
    tg_diag d;
    tg_diag_init(&d);
    tg_load_opts opts = {.kernel_rows = true, .host = host_at_open};
    b.t = tg_trace_open_with(b.path, &opts, &d);
    for (size_t i = 0; i < d.n; i++) print_error("%s\n", d.msgs[i].text);
    assert_non_null(b.t);
    b.m = tg_model_build(b.t, NULL, &d);
    assert_non_null(b.m);
    tg_diag_clear(&d);
    return b;
}

static void drop(built *b)
{
    tg_model_free(b->m);
    tg_trace_close(b->t);
    tg_fixture_remove(b->path);
}

static const char *str(const built *b, int32_t id)
{
    return id >= 0 ? tg_trace_str(b->t, id) : NULL;
}

static const char *site_of_copy(const built *b, size_t i, const char *field)
{
    tg_source_view v = tg_model_source(b->m, TG_SRC_MEMCPY);
    tg_value x = tg_field_get(b->m, &v, tg_field_find(TG_SRC_MEMCPY, field), i);
    return x.type == TG_TY_STRING ? x.u.s : NULL;
}

/* Call sites: libcupti/libcuda/libcudart frames, unresolved ones and the
** cuda_runtime.h wrapper compiled into train.so are looked past. */
static void check_sites(const built *b)
{
    assert_int_equal(tg_model_stack_offset(b->m, TG_STACKS_CUDA), 1);
    assert_int_equal(b->t->memcpys[0].callchain, 0);
    assert_string_equal(site_of_copy(b, 0, "call_site"), "step(int)");
    assert_string_equal(site_of_copy(b, 0, "call_module"), "train.so");
    assert_string_equal(site_of_copy(b, 1, "call_site"), "main");
    size_t n;
    const tg_frame *f = tg_model_stack(b->m, TG_STACKS_CUDA, 0, &n);
    assert_int_equal(n, 5);
    assert_string_equal(str(b, f[3].symbol), "step(int)");
    /* OS runtime stacks: no offset; usleep in libc is looked past */
    assert_int_equal(tg_model_stack_offset(b->m, TG_STACKS_OSRT), 0);
    assert_string_equal(str(b, tg_model_call_site(b->m, TG_STACKS_OSRT, 7, false)), "main");
    assert_int_equal(tg_model_call_site(b->m, TG_STACKS_OSRT, 8, false), -1);   /* no frames */
}

static void test_sites_at_open(void **state)
{
    (void)state;
    built b = build(TG_HOST_ALL);
    check_sites(&b);
    drop(&b);
}

/* The same read after the model is built, as a failing finding reads it. */
static void test_sites_later(void **state)
{
    (void)state;
    built b = build(0);
    assert_int_equal(b.t->n_osrts, 0);
    assert_null(site_of_copy(&b, 0, "call_site"));       /* no stacks read yet */
    tg_diag d;
    tg_diag_init(&d);
    assert_true(tg_model_host_load(b.m, TG_HOST_OSRT | TG_HOST_STACKS, &d));
    assert_int_equal(d.n, 0);
    assert_int_equal(b.t->n_osrts, 2);
    assert_string_equal(str(&b, b.t->osrts[0].thread), "loader");
    check_sites(&b);
    /* read once: asking again reads nothing more */
    assert_true(tg_model_host_load(b.m, TG_HOST_OSRT | TG_HOST_STACKS, &d));
    assert_int_equal(b.t->n_osrts, 2);
    tg_diag_clear(&d);
    drop(&b);
}

/* What process 1000 did in [4 ms, 11 ms): usleep on the thread that makes
** CUDA calls (6 ms), cudaMemcpy (1 ms of the second call), poll on the
** loader thread all along, the iteration range. */
static void test_window(void **state)
{
    (void)state;
    built b = build(TG_HOST_ALL);
    tg_host_window w;
    assert_true(tg_model_host_window(b.m, PID, 4000000, 11000000, &w));
    assert_int_equal(w.launch_threads, 1);
    assert_int_equal(w.n_entries, 3);
    assert_int_equal(w.entries[0].source, TG_HSRC_OSRT);
    assert_string_equal(str(&b, w.entries[0].name), "usleep");
    assert_true(w.entries[0].launch_thread);
    assert_int_equal(w.entries[0].time, 6000000);
    assert_int_equal(w.entries[0].rowids[0], 1);
    assert_string_equal(str(&b, w.entries[0].thread), "drv");
    assert_int_equal(w.entries[1].source, TG_HSRC_NVTX);
    assert_int_equal(w.entries[1].time, 7000000);
    assert_int_equal(w.entries[2].source, TG_HSRC_OSRT);
    assert_string_equal(str(&b, w.entries[2].name), "poll");
    assert_false(w.entries[2].launch_thread);
    assert_int_equal(w.entries[2].time, 7000000);
    assert_int_equal(w.launch_busy, 6000000);
    tg_host_window_free(&w);

    /* [3 ms, 12 ms): the first cudaMemcpy's last ms and the second's first */
    assert_true(tg_model_host_window(b.m, PID, 3000000, 12000000, &w));
    assert_string_equal(str(&b, w.entries[0].name), "usleep");
    assert_int_equal(w.entries[1].source, TG_HSRC_CUDA);
    assert_int_equal(w.entries[1].rows, 2);
    assert_int_equal(w.entries[1].time, 2000000);
    assert_int_equal(w.launch_busy, 8000000);
    tg_host_window_free(&w);

    /* another process did nothing */
    assert_true(tg_model_host_window(b.m, 4242, 0, 40000000, &w));
    assert_int_equal(w.n_entries, 0);
    tg_host_window_free(&w);
    assert_int_equal(tg_model_device_pid(b.m, 0), PID);
    assert_int_equal(tg_model_device_pid(b.m, 7), -1);
    drop(&b);
}

/* Launch time per iteration, short kernels by name, and the cuBLAS call
** that holds a launch. */
static void test_launches(void **state)
{
    (void)state;
    built b = build(TG_HOST_ALL);
    assert_int_equal(b.m->n_iterations, 2);
    const tg_iteration *it = &b.m->iterations[1];
    assert_int_equal(it->launches, 3);
    assert_int_equal(it->launch_time, 8000 + 8000 + 500000);
    assert_int_equal(it->kernel_time, 1000 + 1000 + 1000000);
    assert_int_equal(it->short_kernels, 2);
    size_t n;
    const tg_short_kernel *s = tg_model_short_kernels(b.m, &n);
    assert_int_equal(n, 1);
    assert_string_equal(str(&b, s[0].name), "k");
    assert_int_equal(s[0].count, 2);
    assert_int_equal(s[0].launch_time, 16000);
    assert_int_equal(b.t->n_libcalls[TG_LIB_CUBLAS], 1);
    assert_int_equal(b.t->libcalls[TG_LIB_CUBLAS][0].kernels, 1);
    assert_int_equal(b.t->libcalls[TG_LIB_CUBLAS][0].kernel_time, 1000000);
    assert_string_equal(str(&b, b.t->libcalls[TG_LIB_CUBLAS][0].thread), "drv");

    /* metrics' host member (engine/report/metrics_host.c) states the same */
    json_t *h = tg_metrics_host_json(b.m);
    assert_non_null(h);
    json_t *osrt = json_object_get(h, "osrt");
    assert_true(json_is_true(json_object_get(osrt, "recorded")));
    assert_int_equal(json_integer_value(json_object_get(osrt, "calls")), 2);
    json_t *first = json_array_get(json_object_get(osrt, "names"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "name")), "poll");
    assert_int_equal(json_integer_value(json_object_get(first, "total_ns")), 40000000);
    json_t *cublas = json_array_get(json_object_get(h, "libraries"), 1);
    assert_string_equal(json_string_value(json_object_get(cublas, "library")), "cublas");
    assert_int_equal(json_integer_value(json_object_get(cublas, "calls")), 1);
    assert_int_equal(json_integer_value(json_object_get(cublas, "api_time_ns")), 2000000);
    assert_int_equal(json_integer_value(json_object_get(cublas, "kernels")), 1);
    assert_int_equal(json_integer_value(json_object_get(cublas, "kernel_time_ns")), 1000000);
    json_t *cudnn = json_array_get(json_object_get(h, "libraries"), 0);
    assert_false(json_is_true(json_object_get(cudnn, "recorded")));   /* the table is there, empty */
    assert_int_equal(json_integer_value(json_object_get(cudnn, "calls")), 0);
    json_decref(h);
    drop(&b);
}

/* An export without the host tables: nothing to read, and nothing fails. */
static void test_absent_tables(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0,
                                  "DROP TABLE OSRT_API; DROP TABLE OSRT_CALLCHAINS; DROP TABLE CUDA_CALLCHAINS;"
                                  "INSERT INTO StringIds VALUES (1, 'k');"
                                  "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, globalPid, demangledName)"
                                  " VALUES (0, 10, " G ", 1);");
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    assert_non_null(t);
    tg_model *m = tg_model_build(t, NULL, &d);
    assert_true(tg_model_host_load(m, TG_HOST_ALL, &d));
    assert_int_equal(d.n, 0);
    assert_false(t->has_table[TG_TABLE_OSRT]);
    assert_int_equal(t->n_osrts, 0);
    assert_int_equal(tg_model_call_site(m, TG_STACKS_CUDA, 0, false), -1);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* The export gone before its host tables are read: the read fails with a
** sentence, once and for all, and the model stays usable. */
static void test_read_fails(void **state)
{
    (void)state;
    built b = build(0);
    char *gone = strdup(b.path);
    assert_int_equal(unlink(gone), 0);
    tg_diag d;
    tg_diag_init(&d);
    assert_false(tg_model_host_load(b.m, TG_HOST_OSRT, &d));
    assert_true(d.n >= 1);
    assert_false(tg_model_host_load(b.m, TG_HOST_OSRT, &d));
    assert_int_equal(b.t->n_osrts, 0);
    tg_host_window w;
    assert_true(tg_model_host_window(b.m, PID, 0, 40000000, &w));
    tg_host_window_free(&w);
    tg_diag_clear(&d);
    free(gone);
    drop(&b);
}

/* Hostile host tables: rows without times are skipped with one warning
** per table, an end before the start is clamped, stack frames without an
** id or depth are skipped, ids that point nowhere read as no stack, text
** where numbers belong reads as null; nothing crashes, the run goes on. */
static void test_hostile_rows(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0,
        /* the tables without their NOT NULL constraints: a damaged or hand-made export */
        "DROP TABLE OSRT_API; DROP TABLE OSRT_CALLCHAINS; DROP TABLE CUBLAS_EVENTS; DROP TABLE ThreadNames;"
        "CREATE TABLE OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId);"
        "CREATE TABLE OSRT_CALLCHAINS (id, symbol, module, stackDepth);"
        "CREATE TABLE CUBLAS_EVENTS (start, end, eventClass, globalTid, nameId);"
        "CREATE TABLE ThreadNames (nameId, priority, globalTid);"
        "INSERT INTO StringIds VALUES (1, 'usleep'), (2, 'k'), (3, 'cudaMemcpy'), (4, 'main'), (5, 'app');"
        "INSERT INTO OSRT_API (start, end, globalTid, nameId, returnValue, callchainId) VALUES"
        " (NULL, 10, " T(1000) ", 1, 0, 1), ('x', 10, " T(1000) ", 1, 0, 1), (50, 20, " T(1000) ", 1, 'text', 99),"
        " (100, 200, NULL, 424242, 0, 1);"
        "INSERT INTO OSRT_CALLCHAINS (id, symbol, module, stackDepth) VALUES (1, 4, 5, 0), (NULL, 4, 5, 1), (1, 'y', 5, 1),"
        " (2, 4, 5, -3);"
        "INSERT INTO CUDA_CALLCHAINS (id, symbol, module, stackDepth) VALUES (7, 3, 5, 0), (7, 4, 5, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId, callchainId) VALUES"
        " (0, 5, " T(1000) ", 1, 3, 123456789012), (6, 9, " T(1000) ", 2, 3, 'z'), (10, 12, " T(1000) ", 3, 3, 6);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, correlationId, globalPid, bytes) VALUES"
        " (1, 4, 1, " G ", 8), (7, 8, 2, " G ", 8), (11, 12, 3, " G ", 8);"
        "INSERT INTO CUBLAS_EVENTS (start, end, globalTid, nameId) VALUES ('a', 'b', " T(1000) ", 1), (0, 100, 'c', 99);"
        "INSERT INTO ThreadNames (nameId, globalTid) VALUES (NULL, " T(1000) "), (1, NULL);");
    tg_diag d;
    tg_diag_init(&d);
    tg_load_opts opts = {.host = TG_HOST_ALL};
    tg_trace *t = tg_trace_open_with(path, &opts, &d);
    for (size_t i = 0; !t && i < d.n; i++) print_error("%s\n", d.msgs[i].text);
    assert_non_null(t);
    size_t warnings = 0;
    for (size_t i = 0; i < d.n; i++) warnings += d.msgs[i].level == TG_DIAG_WARNING;
    assert_true(warnings >= 3);   /* OSRT_API, OSRT_CALLCHAINS, CUBLAS_EVENTS */
    assert_int_equal(t->n_osrts, 2);
    assert_int_equal(t->osrts[0].start, 50);
    assert_int_equal(t->osrts[0].end, 50);          /* clamped */
    assert_true(t->osrts[0].return_value == TG_NULL_I64);
    assert_int_equal(t->osrts[1].pid, -1);
    assert_int_equal(t->n_frames[TG_STACKS_OSRT], 2);   /* a text symbol is read as the name itself */
    assert_int_equal(t->n_libcalls[TG_LIB_CUBLAS], 1);
    tg_model *m = tg_model_build(t, NULL, &d);
    assert_non_null(m);
    /* ids out of range or text: no stack; the one real stack: main in app */
    tg_source_view v = tg_model_source(m, TG_SRC_MEMCPY);
    const tg_field_def *site = tg_field_find(TG_SRC_MEMCPY, "call_site");
    assert_int_equal(tg_field_get(m, &v, site, 0).type, TG_TY_NULL);
    assert_int_equal(tg_field_get(m, &v, site, 1).type, TG_TY_NULL);
    tg_value s2 = tg_field_get(m, &v, site, 2);
    assert_int_equal(s2.type, TG_TY_STRING);
    assert_string_equal(s2.u.s, "main");
    tg_host_window w;
    assert_true(tg_model_host_window(m, PID, 0, 1000, &w));
    tg_host_window_free(&w);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sites_at_open), cmocka_unit_test(test_sites_later), cmocka_unit_test(test_window),
        cmocka_unit_test(test_launches), cmocka_unit_test(test_absent_tables), cmocka_unit_test(test_read_fails),
        cmocka_unit_test(test_hostile_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
