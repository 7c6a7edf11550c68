/*
** Loading only what the rules read (tg_trace_open_with, tg_trace_stream_apis,
** tg_model_build on a deferred API table) on exports written by the fixture
** builder, so it is covered without ../shared. The SQL row writers, builds,
** comparisons and keep_blocking are in stream_fixture.c; the old exports
** that record calls twice (case c) in test_stream_twins.c.
**
** The main fixture is a small training loop: 12 NVTX `iteration` ranges
** (the first 5 warmup) with a nested `forward` range, in each two kernels
** launched on device 0 and an NCCL kernel plus an overlapping compute kernel
** on device 1, a cudaGetLastError that launches nothing and a
** cudaStreamSynchronize; a graph launch whose one correlation id runs two
** kernels (iteration 2); a blocking cudaMemcpy, a cudaMemcpyAsync and a
** cudaMemsetAsync (iteration 7); a kernel no call launched; a cudaMalloc
** and a blocking copy before the loop and a cudaDeviceSynchronize after it,
** which are the first and last events of the capture (so the trace span
** comes from API rows only). The runtime table is not in start order: the
** synchronize calls and the cudaMalloc are written last, as a flushed
** thread buffer would leave them.
**
** Every streamed build is compared field by field with the build on a
** trace loaded whole, and both with values computed by hand below.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "eval/eval.h"
#include "model/model.h"
#include "rules/rules.h"
#include "stream_fixture.h"

#define N_ITER 12
#define ITER_START(i) (100000LL + 10000LL * (i))
#define CORR(i) (1000LL + 20LL * (i))
#define N_CALLS 79          /* 6 per iteration, graph, 2 copies + memset, 3 outside */
#define N_BLOCKING 13       /* 12 cudaStreamSynchronize, 1 cudaDeviceSynchronize */
#define N_KERNELS 51        /* 4 per iteration, 2 of the graph, 1 orphan */
#define FIRST_NS 50000LL    /* cudaMalloc start */
#define LAST_NS 221000LL    /* cudaDeviceSynchronize end */

/* ---------------------------------------------------------------- main fixture */

/* The training loop of the header comment. */
static char *main_fixture(void)
{
    char *sql = NULL;
    sql_strings(&sql);
    sql_devices(&sql);
    /* before the loop: cudaMalloc (written last, below) and a blocking pageable HtoD copy */
    sql_call(&sql, 60000, 62000, 2, S_MEMCPY);
    sql_memcpy(&sql, 60500, 61500, 2, 65536, 1, 0, 2);
    for (long long i = 0; i < N_ITER; i++) {
        long long b = ITER_START(i), c = CORR(i);
        sql_range(&sql, b, b + 9000, NULL, S_ITERATION);
        sql_range(&sql, b + 100, b + 3000, "forward", 0);
        sql_call(&sql, b + 200, b + 220, c + 1, S_LAUNCH);
        sql_kernel(&sql, b + 1000, b + 2000, 0, 7, c + 1, S_GEMM, S_GEMM_SHORT);
        sql_call(&sql, b + 300, b + 320, c + 2, S_LAUNCH);
        sql_kernel(&sql, b + 2100, b + 2600, 0, 7, c + 2, S_RELU, S_RELU_SHORT);
        sql_call(&sql, b + 330, b + 332, c + 3, S_GET_LAST_ERROR);
        if (i == 2) {      /* a graph: one correlation id, two kernels */
            sql_call(&sql, b + 400, b + 450, c + 7, S_GRAPH);
            sql_kernel(&sql, b + 2700, b + 2800, 0, 7, c + 7, S_RELU, S_RELU_SHORT);
            sql_kernel(&sql, b + 2850, b + 2950, 0, 7, c + 7, S_GEMM, S_GEMM_SHORT);
        }
        if (i == 4)        /* no call has its correlation id */
            sql_kernel(&sql, b + 7000, b + 7100, 0, 7, 999999, S_ORPHAN, S_ORPHAN);
        if (i == 7) {
            sql_call(&sql, b + 500, b + 520, c + 9, S_MEMCPY_ASYNC);        /* pinned HtoD */
            sql_memcpy(&sql, b + 600, b + 900, c + 9, 1048576, 1, 1, 2);
            sql_call(&sql, b + 530, b + 540, c + 10, S_MEMSET_ASYNC);
            assert_true(tg_fixture_append(&sql,
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,"
                " correlationId, globalPid, value, bytes, memKind) VALUES (%lld, %lld, 0, 1, 7, %lld, "
                GPID ", 0, 4096, 2);\n", b + 950, b + 980, c + 10));
        }
        sql_call(&sql, b + 3500, b + 3520, c + 4, S_LAUNCH);
        sql_kernel(&sql, b + 3600, b + 6000, 1, 9, c + 4, S_NCCL, S_NCCL_SHORT);
        sql_call(&sql, b + 3530, b + 3550, c + 5, S_LAUNCH);
        sql_kernel(&sql, b + 4000, b + 5000, 1, 8, c + 5, S_GEMM, S_GEMM_SHORT);
        if (i == 7) {      /* a blocking DtoH copy into pageable memory */
            sql_call(&sql, b + 8600, b + 8900, c + 8, S_MEMCPY);
            sql_memcpy(&sql, b + 8650, b + 8850, c + 8, 4194304, 2, 2, 0);
        }
        if (i == 9)
            assert_true(tg_fixture_append(&sql, "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId)"
                                          " VALUES (%lld, %lld, " GTID ", %d);\n", b + 7000, b + 7300, S_OVERHEAD));
    }
    for (long long i = 0; i < N_ITER; i++)
        sql_call(&sql, ITER_START(i) + 6000, ITER_START(i) + 8500, CORR(i) + 6, S_STREAM_SYNC);
    sql_call(&sql, 220500, LAST_NS, 5000, S_DEVICE_SYNC);
    sql_call(&sql, FIRST_NS, 50500, 1, S_MALLOC);
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

/* ---------------------------------------------------------------- by hand */

static const tg_kspan *kspan_of(const tg_model *m, int64_t corr, int64_t start)
{
    for (size_t i = 0; i < m->trace->n_kernels; i++)
        if (tg_model_kernel(m, i)->correlation == corr && tg_model_kernel(m, i)->start == start)
            return tg_model_kernel(m, i);
    fail_msg("no kernel %lld at %lld", (long long)corr, (long long)start);
    return NULL;
}

/* The main fixture's model, from the rows of main_fixture. */
static void check_main_by_hand(const tg_model *m)
{
    const tg_trace *t = m->trace;
    const tg_trace_facts *f = &m->facts;
    SAME(t->first_ns, FIRST_NS);
    SAME(t->last_ns, LAST_NS);
    SAME(f->duration, LAST_NS - FIRST_NS);
    SAME(f->kernels, N_KERNELS);
    SAME(f->memcpys, 3);
    SAME(f->memsets, 1);
    SAME(f->api_calls, N_CALLS);
    SAME(f->nvtx_ranges, 2 * N_ITER);
    SAME(f->devices, 2);
    SAME(f->iterations, N_ITER);
    SAME(f->steady_iterations, N_ITER - 5);
    SAME(f->blocking_calls, N_BLOCKING);
    SAME(f->blocked_time, N_ITER * 2500 + 500);
    SAME(m->steady_start, ITER_START(5));
    SAME(m->steady_end, ITER_START(11) + 9000);

    for (int i = 0; i < N_ITER; i++) {
        const tg_iteration *it = &m->iterations[i];
        int64_t b = ITER_START(i);
        SAME(it->index, i);
        SAME(it->warmup, i < 5);
        SAME(it->kernels, i == 2 ? 6 : 4);
        SAME(it->blocking_calls, 1);
        SAME(it->gpu_time, 4900 + (i == 2 ? 200 : 0) + (i == 7 ? 530 : 0));
        SAME(it->gpu_end, b + (i == 7 ? 8850 : 6000));
        SAME(it->gpu_span, i == 7 ? 8250 : 5000);
        int64_t period = i == 7 ? 12850 : i == 8 ? 7150 : 10000;
        SAME(it->period, i == 0 || i == 5 ? TG_NULL_I64 : period);
    }

    /* queue: kernel start - end of its launching call */
    SAME(kspan_of(m, CORR(3) + 1, ITER_START(3) + 1000)->queue, 780);
    SAME(kspan_of(m, CORR(3) + 4, ITER_START(3) + 3600)->queue, 80);
    SAME(kspan_of(m, CORR(3) + 5, ITER_START(3) + 4000)->queue, 450);
    SAME(kspan_of(m, CORR(2) + 7, ITER_START(2) + 2700)->queue, 2250);     /* a graph's first kernel */
    SAME(kspan_of(m, CORR(2) + 7, ITER_START(2) + 2850)->queue, TG_NULL_I64); /* its second: none */
    const tg_kspan *orphan = kspan_of(m, 999999, ITER_START(4) + 7000);
    SAME(orphan->queue, TG_NULL_I64);
    SAME(orphan->launched, 0);
    size_t launched = 0, nccl = 0;
    for (size_t i = 0; i < t->n_kernels; i++) {
        launched += tg_model_kernel(m, i)->launched == 1;
        nccl += tg_model_kernel(m, i)->nccl == 1;
    }
    SAME(launched, N_KERNELS - 1);
    SAME(nccl, N_ITER);

    /* copies by start: before the loop, then iteration 7's async and blocking ones */
    const tg_memop *c = t->memcpys;
    assert_string_equal(str_of(t, c[0].api_name), "cudaMemcpy");
    SAME(c[0].api_sync, 1); SAME(c[0].api_async, 0); SAME(c[0].iteration, -1); SAME(c[0].steady, 0);
    assert_string_equal(str_of(t, c[0].kind_name), "HtoD");
    assert_string_equal(str_of(t, c[0].src_kind_name), "pageable");
    assert_string_equal(str_of(t, c[1].api_name), "cudaMemcpyAsync");
    SAME(c[1].api_sync, 0); SAME(c[1].api_async, 1); SAME(c[1].iteration, 7); SAME(c[1].steady, 1);
    assert_string_equal(str_of(t, c[1].src_kind_name), "pinned");
    assert_string_equal(str_of(t, c[2].api_name), "cudaMemcpy");
    SAME(c[2].api_sync, 1); SAME(c[2].api_async, 0); SAME(c[2].iteration, 7); SAME(c[2].steady, 1);
    assert_string_equal(str_of(t, c[2].kind_name), "DtoH");
    for (int i = 0; i < 3; i++) SAME(c[i].tid, TID);
    const tg_memop *s = t->memsets;
    assert_string_equal(str_of(t, s->api_name), "cudaMemsetAsync");
    SAME(s->api_sync, 0); SAME(s->api_async, 1); SAME(s->iteration, 7); SAME(s->steady, 1); SAME(s->tid, TID);

    SAME(m->devices[0].kernels, 27);
    SAME(m->devices[1].kernels, 24);
    SAME(m->devices[1].nccl_time, N_ITER * 2400);
    SAME(m->devices[1].exposed_nccl_time, N_ITER * 1400);
}

/* ---------------------------------------------------------------- keep_api */

static const tg_api *api_by_rowid(const tg_trace *t, int64_t rowid)
{
    for (size_t i = 0; i < t->n_apis; i++)
        if (t->apis[i].rowid == rowid) return &t->apis[i];
    fail_msg("no call with rowid %lld", (long long)rowid);
    return NULL;
}

/* a. Only the blocking calls kept: every other source, fact and derived
** field as with the table loaded whole. */
static void test_keep_blocking(void **state)
{
    (void)state;
    char *path = main_fixture();
    built full, lean;
    build(&full, path, NULL, NULL);
    check_main_by_hand(full.m);
    assert_false(full.t->apis_partial);
    SAME(full.t->n_apis, N_CALLS);

    keep_log log = {0};
    tg_model_params p = {.keep_api = keep_blocking, .keep_ctx = &log};
    build(&lean, path, &(tg_load_opts){.defer_api = true}, &p);
    assert_null(lean.t->kernels);
    assert_non_null(lean.t->kspans);
    check_main_by_hand(lean.m);
    same_models(full.m, lean.m, true);

    /* keep_api saw every call once, with its DERIVED fields set */
    SAME(log.calls, N_CALLS);
    for (size_t i = 0; i < log.calls; i++) {
        const tg_api *a = api_by_rowid(full.t, log.seen[i].rowid);
        SAME(log.seen[i].iteration, a->iteration);
        SAME(log.seen[i].steady, a->steady);
        SAME(log.seen[i].blocking, a->blocking);
        assert_string_equal(log.seen[i].name, str_of(full.t, a->base_name));
    }
    /* the table was read in its own order, not by start */
    assert_string_equal(log.seen[0].name, "cudaMemcpy");
    assert_string_equal(log.seen[N_CALLS - 1].name, "cudaMalloc");

    /* exactly the blocking calls, sorted by start, with iteration and steady */
    assert_true(lean.t->apis_partial);
    SAME(lean.t->n_apis, N_BLOCKING);
    size_t k = 0;
    for (size_t i = 0; i < full.t->n_apis; i++) {
        if (!full.t->apis[i].blocking) continue;
        same_api(full.t, &full.t->apis[i], lean.t, &lean.t->apis[k]);
        k++;
    }
    SAME(k, N_BLOCKING);
    for (size_t i = 0; i < lean.t->n_apis; i++) {
        const tg_api *a = &lean.t->apis[i];
        if (i > 0) assert_true(lean.t->apis[i - 1].start <= a->start);
        SAME(a->blocking, 1);
        if (i < N_ITER) {
            assert_string_equal(str_of(lean.t, a->base_name), "cudaStreamSynchronize");
            SAME(a->iteration, (int32_t)i);
            SAME(a->steady, i >= 5);
        } else {
            assert_string_equal(str_of(lean.t, a->base_name), "cudaDeviceSynchronize");
            SAME(a->iteration, -1);
            SAME(a->steady, 0);
        }
    }
    unbuild(&full);
    unbuild(&lean);
    tg_fixture_remove(path);
}

/* a, on two threads: the kernel table read beside the others, the API
** table streamed from a producer thread (docs/architecture.md, "Reading an
** export"): the same model and the same kept calls as on one. */
static void test_keep_blocking_threads(void **state)
{
    (void)state;
    char *path = main_fixture();
    built one, two;
    keep_log log1 = {0}, log2 = {0};
    tg_model_params p1 = {.keep_api = keep_blocking, .keep_ctx = &log1};
    tg_model_params p2 = {.keep_api = keep_blocking, .keep_ctx = &log2};
    build(&one, path, &(tg_load_opts){.defer_api = true}, &p1);
    build(&two, path, &(tg_load_opts){.defer_api = true, .threads = 2}, &p2);
    check_main_by_hand(two.m);
    same_models(one.m, two.m, true);
    SAME(log2.calls, log1.calls);
    for (size_t i = 0; i < log1.calls; i++) SAME(log2.seen[i].rowid, log1.seen[i].rowid);
    SAME(two.t->n_apis, N_BLOCKING);
    for (size_t i = 0; i < one.t->n_apis; i++) same_api(one.t, &one.t->apis[i], two.t, &two.t->apis[i]);
    SAME(two.t->first_ns, FIRST_NS);
    SAME(two.t->last_ns, LAST_NS);
    unbuild(&one);
    unbuild(&two);
    tg_fixture_remove(path);
}

/* Many batches through the producer's ring, call names stored as text in
** every seventh row (old exports: the producer parks them, the visitor
** interns them), and rows with unusable times skipped on the way: one
** thread and two give the same model, rows and warnings. */
static void test_threads_many_batches(void **state)
{
    (void)state;
    enum { CALLS = 20000 };
    char *sql = NULL;
    sql_strings(&sql);
    sql_devices(&sql);
    for (long long i = 0; i < 40; i++) sql_range(&sql, 1000 + i * 100000, 1000 + i * 100000 + 90000, NULL, S_ITERATION);
    for (long long i = 0; i < CALLS; i++) {
        long long b = 1000 + i * 200;
        if (i % 7 == 3)
            assert_true(tg_fixture_append(&sql,
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,"
                " nameId, returnValue) VALUES (%lld, %lld, 1, " GTID ", %lld, '%s', 0);\n", b, b + 20, i + 1,
                i % 2 ? "cudaLaunchKernel" : "cudaStreamSynchronize"));
        else if (i % 1001 == 5)
            assert_true(tg_fixture_append(&sql,
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,"
                " nameId, returnValue) VALUES ('soon', %lld, 1, " GTID ", %lld, %d, 0);\n", b + 20, i + 1, S_LAUNCH));
        else
            sql_call(&sql, b, b + 20, i + 1, i % 5 ? S_LAUNCH : S_STREAM_SYNC);
        sql_kernel(&sql, b + 50, b + 150, (int)(i % 2), 7, i + 1, S_GEMM, S_GEMM_SHORT);
    }
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    built one, two;
    keep_log log1 = {0}, log2 = {0};
    tg_model_params p1 = {.keep_api = keep_blocking, .keep_ctx = &log1};
    tg_model_params p2 = {.keep_api = keep_blocking, .keep_ctx = &log2};
    build(&one, path, &(tg_load_opts){.defer_api = true}, &p1);
    build(&two, path, &(tg_load_opts){.defer_api = true, .threads = 2}, &p2);
    same_models(one.m, two.m, true);
    SAME(log2.calls, log1.calls);
    assert_true(one.t->n_apis > 1000);
    SAME(two.t->n_apis, one.t->n_apis);
    for (size_t i = 0; i < one.t->n_apis; i++) same_api(one.t, &one.t->apis[i], two.t, &two.t->apis[i]);
    SAME(two.t->n_api_rows, one.t->n_api_rows);
    SAME(one.t->n_api_rows, CALLS - (CALLS + 995) / 1001);
    SAME(two.m->facts.blocking_calls, one.m->facts.blocking_calls);
    SAME(two.d.n, one.d.n);     /* the one warning of the skipped rows */
    for (size_t i = 0; i < one.d.n; i++) assert_string_equal(two.d.msgs[i].text, one.d.msgs[i].text);
    assert_true(one.d.n >= 1);
    unbuild(&one);
    unbuild(&two);
    tg_fixture_remove(path);
}

/* b. keep_api NULL: every call kept, so the deferred table is simply loaded;
** with kernel rows too, those match a full load, call indices included. */
static void test_keep_all(void **state)
{
    (void)state;
    char *path = main_fixture();
    built full, lean;
    build(&full, path, NULL, NULL);
    build(&lean, path, &(tg_load_opts){.defer_api = true, .kernel_rows = true}, NULL);
    assert_non_null(lean.t->kernels);
    assert_null(lean.t->kspans);
    check_main_by_hand(lean.m);
    /* keeping every call, the table is loaded whole: rows as in a full load */
    assert_false(lean.t->apis_partial);
    same_models(full.m, lean.m, false);
    SAME(lean.t->n_apis, full.t->n_apis);
    for (size_t i = 0; i < full.t->n_apis; i++) same_api(full.t, &full.t->apis[i], lean.t, &lean.t->apis[i]);
    /* kernel.nvtx: the innermost range open at launch */
    for (size_t i = 0; i < lean.t->n_kernels; i++) {
        const tg_kernel *k = &lean.t->kernels[i];
        const char *want = k->correlation == 999999 ? "<null>" : k->device == 0 ? "forward" : "iteration";
        assert_string_equal(str_of(lean.t, k->nvtx), want);
    }
    unbuild(&full);
    unbuild(&lean);
    tg_fixture_remove(path);
}

/* Without iterations the steady window is the trace span, which only the
** API rows set here: a streamed build must see it widened by every call. */
static void test_no_iterations(void **state)
{
    (void)state;
    char *path = main_fixture();
    built full, lean;
    keep_log log = {0};
    tg_model_params p = {.iteration_pattern = "^no_such_range$", .gap_min_ns = 1000};
    build(&full, path, NULL, &p);
    p.keep_api = keep_blocking;
    p.keep_ctx = &log;
    build(&lean, path, &(tg_load_opts){.defer_api = true}, &p);
    assert_false(lean.m->has_iterations);
    SAME(lean.m->steady_start, FIRST_NS);
    SAME(lean.m->steady_end, LAST_NS);
    SAME(lean.m->facts.steady_duration, LAST_NS - FIRST_NS);
    assert_true(lean.m->devices[0].gaps > 0);
    same_models(full.m, lean.m, true);
    SAME(lean.t->n_apis, N_BLOCKING);
    for (size_t i = 0; i < lean.t->n_apis; i++) {
        SAME(lean.t->apis[i].iteration, -1);
        SAME(lean.t->apis[i].steady, 1);     /* all of a trace without iterations is steady */
    }
    unbuild(&full);
    unbuild(&lean);
    tg_fixture_remove(path);
}

/* ---------------------------------------------------------------- raw stream */

typedef struct visit_log {
    size_t visited, shown;
    int stop_at;               /* visit number that returns -1, or 0 */
    int64_t rowids[LOG_MAX];   /* as visited */
    int64_t ahead[LOG_MAX];    /* as shown to `ahead` */
    bool raw;                  /* every row came with its DERIVED fields null */
    bool shown_first;          /* every row was shown to `ahead` before its visit */
} visit_log;

static int visit_every_other(void *ctx, tg_api *row)
{
    visit_log *v = ctx;
    if (v->visited < LOG_MAX) v->rowids[v->visited] = row->rowid;
    if (row->base_name != TG_NO_STR || row->iteration != -1 || row->dup_of != -1 || row->blocking) v->raw = false;
    if (v->shown <= v->visited || (v->visited < LOG_MAX && v->ahead[v->visited] != row->rowid))
        v->shown_first = false;
    size_t n = ++v->visited;
    if (v->stop_at && n == (size_t)v->stop_at) return -1;
    return n % 2 == 1;         /* the 1st, 3rd, 5th, ... */
}

static void show_ahead(void *ctx, const tg_api *row)
{
    visit_log *v = ctx;
    if (v->shown < LOG_MAX) v->ahead[v->shown] = row->rowid;
    v->shown++;
}

/* d. tg_trace_stream_apis without a model. */
static void test_stream_direct(void **state)
{
    (void)state;
    char *path = main_fixture();
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *all = tg_trace_open(path, &d);
    assert_non_null(all);

    tg_trace *t = tg_trace_open_with(path, &(tg_load_opts){.defer_api = true}, &d);
    assert_non_null(t);
    assert_true(t->apis_deferred);
    SAME(t->n_apis, 0);
    assert_true(t->first_ns > FIRST_NS);           /* no call read yet */
    visit_log v = {.raw = true, .shown_first = true};
    SAME(tg_trace_stream_apis(t, &(tg_api_reader_cb){visit_every_other, show_ahead, &v}, &d), TG_STREAM_DONE);
    SAME(d.n_errors, 0);
    SAME(v.visited, N_CALLS);
    SAME(v.shown, N_CALLS);
    assert_true(v.raw);
    assert_true(v.shown_first);
    for (size_t i = 1; i < N_CALLS; i++) assert_true(v.rowids[i - 1] < v.rowids[i]);   /* table order */
    assert_true(t->apis_partial);
    assert_false(t->apis_deferred);
    SAME(t->n_apis, (N_CALLS + 1) / 2);
    for (size_t i = 0; i < t->n_apis; i++) {
        if (i > 0) assert_true(t->apis[i - 1].start <= t->apis[i].start);
        size_t at = 0;                              /* its visit number must be odd */
        while (at < N_CALLS && v.rowids[at] != t->apis[i].rowid) at++;
        assert_true(at < N_CALLS && at % 2 == 0);
        const tg_trace *ta = all, *tb = t;
        const tg_api *x = api_by_rowid(all, t->apis[i].rowid), *y = &t->apis[i];
        F(start); F(end); F(correlation); F(pid); F(tid); FS(name); F(return_value);
    }
    /* the span covers the dropped calls too (cudaMalloc is the 79th: kept;
    ** the cudaDeviceSynchronize is the 78th: dropped) */
    SAME(t->first_ns, all->first_ns);
    SAME(t->last_ns, all->last_ns);
    SAME(t->last_ns, LAST_NS);
    tg_trace_close(t);

    /* stopped at the third row: the rest comes from tg_trace_load_apis */
    t = tg_trace_open_with(path, &(tg_load_opts){.defer_api = true}, &d);
    assert_non_null(t);
    v = (visit_log){.stop_at = 3, .raw = true};
    SAME(tg_trace_stream_apis(t, &(tg_api_reader_cb){visit_every_other, NULL, &v}, &d), TG_STREAM_STOPPED);
    SAME(v.visited, 3);
    SAME(t->n_apis, 1);                          /* the first; the read stopped */
    assert_true(tg_trace_load_apis(t, &d));
    SAME(d.n_errors, 0);
    assert_false(t->apis_partial);
    assert_false(t->apis_deferred);
    SAME(t->n_apis, all->n_apis);
    for (size_t i = 0; i < all->n_apis; i++) {
        const tg_trace *ta = all, *tb = t;
        const tg_api *x = &all->apis[i], *y = &t->apis[i];
        F(rowid); F(start); F(end); F(correlation); F(pid); F(tid); FS(name); F(return_value);
    }
    SAME(t->first_ns, all->first_ns);
    SAME(t->last_ns, all->last_ns);
    assert_false(t->mixed_duplicate_api);
    /* and a model on it is the full one */
    tg_model *m = tg_model_build(t, NULL, &d);
    assert_non_null(m);
    check_main_by_hand(m);
    tg_model_free(m);
    tg_trace_close(t);
    tg_trace_close(all);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* e. A second model on a streamed trace: one error, no model, no crash. */
static void test_second_build_refused(void **state)
{
    (void)state;
    char *path = main_fixture();
    built lean;
    keep_log log = {0};
    tg_model_params p = {.keep_api = keep_blocking, .keep_ctx = &log};
    build(&lean, path, &(tg_load_opts){.defer_api = true}, &p);
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_model_build(lean.t, &p, &d));
    SAME(d.n, 1); SAME(d.n_errors, 1); SAME(d.msgs[0].level, TG_DIAG_ERROR);
    const char *text = d.msgs[0].text;
    assert_non_null(strstr(text, path));
    assert_non_null(strstr(text, "streamed"));
    assert_null(strchr(text, '\n'));
    SAME(log.calls, N_CALLS);                     /* the refused build read nothing */
    tg_diag_clear(&d);
    /* the first model is untouched */
    check_main_by_hand(lean.m);
    SAME(lean.t->n_apis, N_BLOCKING);
    unbuild(&lean);
    tg_fixture_remove(path);
}

/* f. Kernels as tg_kspan: the same kernels, no tg_kernel rows. */
static void test_kspans(void **state)
{
    (void)state;
    char *path = main_fixture();
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *all = tg_trace_open(path, &d);
    tg_trace *t = tg_trace_open_with(path, &(tg_load_opts){0}, &d);
    assert_true(all && all->kernels && !all->kspans);
    assert_true(t && !t->kernels && t->kspans);
    SAME(t->n_kernels, N_KERNELS);
    SAME(t->n_kernels, all->n_kernels);
    for (size_t i = 0; i < t->n_kernels; i++) {
        const tg_trace *ta = all, *tb = t;
        const tg_kernel *x = &all->kernels[i];
        const tg_kspan *y = &t->kspans[i];
        F(rowid); F(start); F(end); F(correlation); F(device); F(pid); FS(name);
    }
    /* the rest is loaded alike; this one was not deferred */
    SAME(t->n_apis, all->n_apis);
    SAME(t->n_memcpys, all->n_memcpys);
    SAME(t->n_nvtx, all->n_nvtx);
    SAME(t->first_ns, all->first_ns);
    SAME(t->last_ns, all->last_ns);
    tg_model *m = tg_model_build(t, NULL, &d);
    assert_non_null(m);
    assert_ptr_equal(tg_model_kernel(m, 0), t->kspans);
    check_main_by_hand(m);
    tg_model_free(m);
    tg_trace_close(t);
    tg_trace_close(all);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* skip_nvtx_gpu: NVTX GPU attribution left unset, nothing else changes. */
static void test_skip_nvtx_gpu(void **state)
{
    (void)state;
    char *path = main_fixture();
    built full, lean;
    build(&full, path, NULL, NULL);
    build(&lean, path, &(tg_load_opts){.defer_api = true}, &(tg_model_params){.skip_nvtx_gpu = true});
    check_main_by_hand(lean.m);
    same_iterations(full.m, lean.m);
    same_devices(full.m, lean.m);
    same_facts(full.m, lean.m);
    same_kspans(full.m, lean.m);
    size_t forward = 0;
    for (size_t i = 0; i < full.t->n_nvtx; i++) {
        const tg_nvtx *x = &full.t->nvtx[i], *y = &lean.t->nvtx[i];
        F(iteration); F(duration);
        SAME(y->depth, 0); SAME(y->gpu_time, 0); SAME(y->gpu_span, TG_NULL_I64);
        if (strcmp(str_of(full.t, x->name), "forward") == 0) {
            forward++;
            SAME(x->depth, 1);
            assert_true(x->gpu_time >= 1500);
        }
    }
    SAME(forward, N_ITER);
    unbuild(&full);
    unbuild(&lean);
    tg_fixture_remove(path);
}

/* ---------------------------------------------------------------- with rules */

/* As `tracegate check` keeps calls (tg_row_keep_api: a row filter made on
** the first call). Base names are interned while the table streams, so
** "cudaMalloc" is not in the pool when the filter is made. */
typedef struct rule_keep {
    tg_row_keeper keeper;
    bool malloc_absent;        /* "cudaMalloc" was not interned when the filter was made */
} rule_keep;

static bool keep_by_rules(void *ctx, const tg_model *m, const tg_api *row)
{
    rule_keep *k = ctx;
    if (!k->keeper.made) k->malloc_absent = tg_strpool_find(m->trace->strings, "cudaMalloc", 10) < 0;
    return tg_row_keep_api(&k->keeper, m, row);
}

static const tg_rule_result *result_of(const tg_trace_result *r, const char *id)
{
    for (size_t i = 0; i < r->n_results; i++)
        if (strcmp(r->results[i].rule, id) == 0) return &r->results[i];
    fail_msg("no result for %s", id);
    return NULL;
}

static void test_keep_by_rules(void **state)
{
    (void)state;
    static const char rules[] =
        "version: 1\nrules:\n"
        "  - id: mallocs\n    title: t\n    severity: info\n    source: api\n"
        "    where: name == \"cudaMalloc\"\n    fail_when: count > 0\n    message: \"{count}\"\n"
        "  - id: steady-syncs\n    title: t\n    severity: info\n    source: api\n"
        "    where: blocking and steady\n    fail_when: count > 0\n    message: \"{count} {sum(duration)}\"\n"
        "  - id: async\n    title: t\n    severity: info\n    source: api\n"
        "    where: name matches \"^cuda.*Async$\"\n    fail_when: count > 0\n    message: \"{count}\"\n"
        "  - id: copies\n    title: t\n    severity: info\n    source: memcpy\n"
        "    where: api_sync\n    fail_when: count > 0\n    message: \"{count}\"\n";
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text text = {"keep.yaml", rules};
    tg_ruleset *rs = tg_rules_load_texts(&text, 1, NULL, 0, &d);
    if (!rs && d.n) fail_msg("%s", d.msgs[0].text);
    assert_non_null(rs);

    char *path = main_fixture();
    built full, lean;
    build(&full, path, NULL, NULL);
    rule_keep k = {.keeper = {.rs = rs}};
    build(&lean, path, &(tg_load_opts){.defer_api = true},
          &(tg_model_params){.keep_api = keep_by_rules, .keep_ctx = &k});
    assert_true(k.keeper.made);
    assert_false(k.keeper.all);
    assert_true(k.malloc_absent);
    tg_row_filter_free(k.keeper.filter);
    same_models(full.m, lean.m, true);
    /* 1 cudaMalloc + 7 steady cudaStreamSynchronize + cudaMemcpyAsync + cudaMemsetAsync */
    SAME(lean.t->n_apis, 10);
    size_t mallocs = 0;
    for (size_t i = 0; i < lean.t->n_apis; i++)
        mallocs += strcmp(str_of(lean.t, lean.t->apis[i].base_name), "cudaMalloc") == 0;
    SAME(mallocs, 1);

    const char *ids[] = {"mallocs", "steady-syncs", "async", "copies"};
    const int64_t counts[] = {1, 7, 2, 2};
    tg_trace_result out[2];
    tg_arena *arena[2];
    for (int i = 0; i < 2; i++) {
        memset(&out[i], 0, sizeof out[i]);
        arena[i] = tg_arena_new();
        assert_int_equal(tg_eval_model(rs, i ? lean.m : full.m, NULL, arena[i], &out[i], &d), TG_OK);
    }
    for (size_t j = 0; j < 4; j++) {
        const tg_rule_result *x = result_of(&out[0], ids[j]), *y = result_of(&out[1], ids[j]);
        SAME(x->count, counts[j]);
        SAME(y->count, x->count);
        SAME(y->verdict, x->verdict);
        assert_string_equal(y->message, x->message);
    }
    for (int i = 0; i < 2; i++) tg_arena_free(arena[i]);
    unbuild(&full);
    unbuild(&lean);
    tg_rules_free(rs);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_blocking),
        cmocka_unit_test(test_keep_blocking_threads),
        cmocka_unit_test(test_threads_many_batches),
        cmocka_unit_test(test_keep_all),
        cmocka_unit_test(test_no_iterations),
        cmocka_unit_test(test_stream_direct),
        cmocka_unit_test(test_second_build_refused),
        cmocka_unit_test(test_kspans),
        cmocka_unit_test(test_skip_nvtx_gpu),
        cmocka_unit_test(test_keep_by_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
