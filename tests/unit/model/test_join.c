/*
** Row derivations of engine/model/model.c on hand-built traces: the join of
** GPU ops to their launching calls (same process and correlation id), queue
** time, API base names and flags, copy/memory kind names, and the duplicate
** API rows of old exports.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"
#include "eval/eval.h"

static void test_join_and_queue(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_api(t, 1, 11, 5, "cuLaunchKernel", 100, 110);
    mt_api(t, 2, 21, 5, "cudaLaunchKernel_v7000", 300, 320);
    size_t k1 = mt_kernel(t, 1, 0, 5, "saxpy", 150, 200);
    size_t k2 = mt_kernel(t, 2, 0, 5, "ncclKernel_AllReduce_RING_LL_Sum_float", 310, 400);
    size_t k3 = mt_kernel(t, 1, 0, 99, "NCCLdevKernel_Generic", 500, 600);
    tg_model *m = mt_build(t);

    const tg_kernel *a = &t->kernels[k1], *b = &t->kernels[k2], *c = &t->kernels[k3];
    assert_int_equal(a->api, 0);                 /* same correlation, same process */
    assert_string_equal(mt_s(t, a->api_name), "cuLaunchKernel");
    assert_int_equal(a->tid, 11);
    assert_int_equal(mt_field(m, "kernel", "launch_end", k1), 110);
    assert_int_equal(a->queue, 40);              /* 150 - 110 */
    assert_int_equal(mt_field(m, "kernel", "duration", k1), 50);
    assert_int_equal(a->nccl, 0);

    assert_int_equal(b->api, 1);                 /* pid 2's call, not pid 1's */
    assert_string_equal(mt_s(t, b->api_name), "cudaLaunchKernel");
    assert_int_equal(mt_field(m, "kernel", "launch_end", k2), 320);
    assert_int_equal(b->queue, 0);               /* started before the call returned: 0, not dropped */
    assert_int_equal(b->queue_clamped, 1);
    assert_int_equal(a->queue_clamped, 0);
    assert_int_equal(b->nccl, 1);

    assert_int_equal(c->api, -1);                /* no call with that correlation id */
    assert_int_equal(c->tid, -1);
    assert_true(c->queue == TG_NULL_I64 && mt_field(m, "kernel", "launch_end", k3) == TG_NULL_I64);
    assert_int_equal(c->nccl, 1);                /* case-insensitive */
    tg_model_free(m);
    mt_free(t);
}

static void check_api(tg_trace *t, size_t i, const char *base, int driver, int blocking)
{
    assert_string_equal(mt_s(t, t->apis[i].base_name), base);
    assert_int_equal(t->apis[i].driver, driver);
    assert_int_equal(t->apis[i].blocking, blocking);
}

static void test_api_names(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    const char *names[] = {"cudaMemcpy_v3020", "cudaMemcpyAsync_ptsz_v7000", "cudaLaunchKernel_ptds",
                           "cuMemcpyHtoD_v2", "cudaStreamSynchronize", "cuCtxSynchronize",
                           "cudaStreamWaitEvent", "cuStreamSynchronize_v2", "my_v", "cuda_v12",
                           "cudaEventSynchronize", "cuEventSynchronize", "cudaDeviceSynchronize_v3020"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        mt_api(t, 1, 1, (int64_t)i + 1, names[i], 10 * (int64_t)i, 10 * (int64_t)i + 5);
    tg_model *m = mt_build(t);
    check_api(t, 0, "cudaMemcpy", 0, 0);
    check_api(t, 1, "cudaMemcpyAsync", 0, 0);
    check_api(t, 2, "cudaLaunchKernel", 0, 0);
    check_api(t, 3, "cuMemcpyHtoD", 1, 0);
    check_api(t, 4, "cudaStreamSynchronize", 0, 1);
    check_api(t, 5, "cuCtxSynchronize", 1, 1);
    check_api(t, 6, "cudaStreamWaitEvent", 0, 0);   /* does not block the host */
    check_api(t, 7, "cuStreamSynchronize", 1, 1);
    check_api(t, 8, "my_v", 0, 0);                  /* no digits: not a version suffix */
    check_api(t, 9, "cuda", 0, 0);
    check_api(t, 10, "cudaEventSynchronize", 0, 1);
    check_api(t, 11, "cuEventSynchronize", 1, 1);
    check_api(t, 12, "cudaDeviceSynchronize", 0, 1);
    assert_int_equal(mt_field(m, "api", "duration", 3), 5);
    assert_int_equal(m->facts.api_calls, 13);
    assert_int_equal(m->facts.blocking_calls, 6);
    assert_int_equal(m->facts.blocked_time, 30);
    tg_model_free(m);
    mt_free(t);
}

static void test_memop_kinds(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_api(t, 1, 1, 1, "cuMemcpyHtoD_v2", 0, 100);
    mt_api(t, 1, 1, 2, "cudaMemcpyAsync", 200, 210);
    mt_api(t, 1, 1, 3, "cuMemsetD32_v2", 300, 310);
    mt_api(t, 1, 1, 4, "cudaMemsetAsync", 400, 410);
    mt_api(t, 1, 1, 5, "cudaMemcpy2DAsync_v3020", 500, 510);
    size_t c1 = mt_memcpy(t, 1, 0, 1, 1, 0, 2, 16 << 20, 10, 90);
    size_t c2 = mt_memcpy(t, 1, 0, 2, 2, 2, 1, 16, 220, 230);
    size_t c3 = mt_memcpy(t, 1, 0, 5, 11, 4, 4, 4096, 520, 530);
    size_t c4 = mt_memcpy(t, 1, 0, 77, 42, 9, 7, 1, 600, 610);
    size_t s1 = mt_memset(t, 1, 0, 3, 1, 64, 305, 306);
    size_t s2 = mt_memset(t, 1, 0, 4, 2, 64, 420, 430);
    tg_model *m = mt_build(t);

    const tg_memop *r = &t->memcpys[c1];
    assert_string_equal(mt_s(t, r->kind_name), "HtoD");
    assert_string_equal(mt_s(t, r->src_kind_name), "pageable");
    assert_string_equal(mt_s(t, r->dst_kind_name), "device");
    assert_string_equal(mt_s(t, r->api_name), "cuMemcpyHtoD");
    assert_int_equal(r->api_sync, 1);
    assert_int_equal(r->api_async, 0);
    assert_int_equal(r->tid, 1);

    r = &t->memcpys[c2];
    assert_string_equal(mt_s(t, r->kind_name), "DtoH");
    assert_string_equal(mt_s(t, r->dst_kind_name), "pinned");
    assert_int_equal(r->api_sync, 0);
    assert_int_equal(r->api_async, 1);

    r = &t->memcpys[c3];
    assert_string_equal(mt_s(t, r->kind_name), "UVM_HtoD");
    assert_string_equal(mt_s(t, r->src_kind_name), "managed");
    assert_string_equal(mt_s(t, r->api_name), "cudaMemcpy2DAsync");
    assert_int_equal(r->api_async, 1);

    r = &t->memcpys[c4];                          /* unmatched, codes out of range */
    assert_string_equal(mt_s(t, r->kind_name), "unknown");
    assert_string_equal(mt_s(t, r->src_kind_name), "unknown");
    assert_string_equal(mt_s(t, r->dst_kind_name), "unknown");
    assert_int_equal(r->api, -1);
    assert_int_equal(r->api_sync, 0);
    assert_int_equal(r->api_async, 0);

    r = &t->memsets[s1];
    assert_int_equal(r->kind_name, -1);
    assert_string_equal(mt_s(t, r->src_kind_name), "pinned");
    assert_int_equal(r->api_sync, 1);
    r = &t->memsets[s2];
    assert_string_equal(mt_s(t, r->src_kind_name), "device");
    assert_int_equal(r->api_sync, 0);
    assert_int_equal(r->api_async, 1);
    tg_model_free(m);
    mt_free(t);
}

/* An nsys 2021 export records each runtime call twice with one correlation
** id: `cudaMemcpy` around a nested `cudaMemcpy_v3020`. */
static void test_duplicate_api_rows(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_api(t, 1, 1, 7, "cudaMemcpy", 100, 1000);
    mt_api(t, 1, 1, 7, "cudaMemcpy_v3020", 110, 990);
    mt_api(t, 1, 1, 8, "cudaLaunchKernel", 1100, 1200);
    mt_api(t, 1, 1, 8, "cudaLaunchKernel_v7000", 1110, 1190);
    mt_api(t, 1, 1, 9, "cudaDeviceSynchronize", 2000, 3000);
    mt_api(t, 1, 1, 9, "cudaDeviceSynchronize_v3020", 2010, 2990);
    mt_api(t, 1, 1, 10, "cudaFree", 3100, 3200);
    mt_api(t, 1, 1, 10, "cudaMalloc", 3110, 3190);   /* same id, other call: not a duplicate */
    size_t c = mt_memcpy(t, 1, 0, 7, 1, 0, 2, 1 << 20, 200, 900);
    size_t k = mt_kernel(t, 1, 0, 8, "saxpy", 1250, 1900);
    tg_model *m = mt_build(t);

    /* the outer rows are gone: the inner rows, then the two calls of id 10 */
    static const char *const left[] = {"cudaMemcpy_v3020", "cudaLaunchKernel_v7000", "cudaDeviceSynchronize_v3020",
                                       "cudaFree", "cudaMalloc"};
    assert_int_equal(t->n_apis, 5);
    assert_int_equal(t->n_api_twins, 3);
    for (size_t i = 0; i < t->n_apis; i++) {
        assert_string_equal(mt_s(t, t->apis[i].name), left[i]);
        assert_int_equal(t->apis[i].dup_of, -1);
    }
    assert_true(t->mixed_duplicate_api);
    assert_int_equal(t->memcpys[c].api, 0);         /* the launching call's index follows the drop */
    assert_int_equal(t->memcpys[c].api_sync, 1);
    assert_int_equal(t->kernels[k].api, 1);
    assert_int_equal(mt_field(m, "kernel", "launch_end", k), 1190);
    assert_int_equal(t->kernels[k].queue, 60);      /* from the inner call's end */
    /* one blocking call, counted once */
    assert_int_equal(t->apis[2].blocking, 1);
    assert_int_equal(m->facts.blocking_calls, 1);
    assert_int_equal(m->facts.blocked_time, 980);
    assert_int_equal(m->facts.api_calls, 5);
    tg_model_free(m);
    mt_free(t);
}

/* Correlation ids far apart (as in PyTorch traces) take the hashed path of
** the join; ids close together the direct one. Same answers either way. */
static void test_sparse_correlation_ids(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    const int64_t sparse[] = {10, 5000, 100000, 7000000};
    for (int i = 0; i < 4; i++) {
        mt_api(t, 1, 1, sparse[i], "cudaLaunchKernel", 100 * i, 100 * i + 10);
        mt_api(t, 2, 1, i + 1, "cudaLaunchKernel", 100 * i, 100 * i + 20);
    }
    mt_api(t, 1, 1, 5000, "cudaLaunchKernel_v7000", 101, 109);  /* duplicate, hashed path */
    size_t ks = mt_kernel(t, 1, 0, 100000, "k", 250, 260);
    size_t kd = mt_kernel(t, 2, 0, 3, "k", 230, 240);
    size_t kdup = mt_kernel(t, 1, 0, 5000, "k", 150, 160);
    size_t kmiss = mt_kernel(t, 1, 0, 99999, "k", 300, 310);
    size_t kout = mt_kernel(t, 2, 0, 100000, "k", 300, 310);     /* outside pid 2's id range */
    tg_model *m = mt_build(t);
    /* the outer row of id 5000 (index 2) is dropped: the later indices move down one */
    assert_int_equal(t->n_api_twins, 1);
    assert_int_equal(t->kernels[ks].api, 3);
    assert_int_equal(t->kernels[ks].queue, 40);
    assert_int_equal(t->kernels[kd].api, 4);
    assert_int_equal(t->kernels[kd].queue, 10);
    assert_int_equal(t->kernels[kdup].api, 7);                    /* the inner row */
    assert_string_equal(mt_s(t, t->apis[7].name), "cudaLaunchKernel_v7000");
    assert_int_equal(t->kernels[kdup].queue, 41);
    assert_int_equal(t->kernels[kmiss].api, -1);
    assert_int_equal(t->kernels[kout].api, -1);
    tg_model_free(m);
    mt_free(t);
}

/* Processes whose ids mostly increase in call order are searched, not
** indexed: ops in any order, ids between, below and above the calls',
** four processes interleaved: 1 and 2 in order, 4 with neighbours swapped
** now and then (listed, the swapped calls hashed), 3 out of order from
** some point on (indexed). Every op against a direct search. */
static void test_ordered_ids_searched(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    uint32_t seed = 4242;
    int64_t next_id[4] = {5, 1000000, 77, 3000000};
    for (int i = 0; i < 4000; i++) {
        seed = seed * 1103515245u + 12345u;
        int32_t pid = 1 + (int32_t)((seed >> 16) % 4);
        int64_t id = next_id[pid - 1] += 2 + (seed >> 20) % 40;           /* sparse, increasing */
        if (pid == 3 && i % 7 == 0) id = 5000000 - i;                       /* pid 3: out of order */
        if (pid == 4 && i % 9 == 0) {                                       /* pid 4: a swapped pair */
            mt_api(t, pid, 1, id + 1, "cudaLaunchKernel", 10 * i, 10 * i + 4);
            next_id[3]++;
        }
        mt_api(t, pid, 1, id, "cudaLaunchKernel", 10 * i + 1, 10 * i + 5);
    }
    size_t n_calls = t->n_apis;
    for (int i = 0; i < 5000; i++) {
        seed = seed * 1103515245u + 12345u;
        int32_t pid = 1 + (int32_t)((seed >> 16) % 4);
        int64_t id;
        if (i % 3) id = t->apis[(seed >> 4) % n_calls].correlation;           /* mostly a call's id */
        else id = (int64_t)((seed >> 6) % 3200000);                           /* any id, may miss */
        if (i % 50 == 0) id = i % 100 ? -5 : 9000000000LL;                   /* out of every range */
        int64_t start = 10 * (int64_t)((seed >> 3) % 3000) + 6;
        if (i % 2) mt_kernel(t, pid, 0, id, "k", start, start + 3);
        else mt_memcpy(t, pid, 0, id, 1, 0, 2, 8, start, start + 3);
    }
    tg_model *m = mt_build(t);
    for (int kind = 0; kind < 2; kind++) {
        size_t n = kind ? t->n_memcpys : t->n_kernels;
        for (size_t i = 0; i < n; i++) {
            int32_t pid = kind ? t->memcpys[i].pid : t->kernels[i].pid;
            int64_t id = kind ? t->memcpys[i].correlation : t->kernels[i].correlation;
            int32_t want = -1;
            for (size_t c = 0; c < n_calls && want < 0; c++)
                if (t->apis[c].pid == pid && t->apis[c].correlation == id) want = (int32_t)c;
            assert_int_equal(kind ? t->memcpys[i].api : t->kernels[i].api, want);
        }
    }
    tg_model_free(m);
    mt_free(t);
}

/* A listed process's calls out of order that repeat an id: the inner row
** of a nested pair wins (as when indexed), a call of another name does not. */
static void test_ordered_ids_duplicates(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t id = 1; id <= 40; id++) mt_api(t, 1, 1, id, "cudaLaunchKernel", 100 * id, 100 * id + 10);
    size_t outer = mt_api(t, 1, 1, 41, "cudaMemcpy", 4100, 4200);
    size_t inner = mt_api(t, 1, 1, 41, "cudaMemcpy_v3020", 4110, 4190);     /* out of order: repeats 41 */
    size_t first = mt_api(t, 1, 1, 42, "cudaLaunchKernel", 4300, 4310);
    mt_api(t, 1, 1, 42, "cudaMemcpy", 4305, 4306);                           /* other name: not a twin */
    size_t late = mt_api(t, 1, 1, 30, "cudaMemcpyAsync", 4400, 4410);      /* id 30 again, other name */
    size_t lone = mt_api(t, 1, 1, 39, "cudaMemcpy", 4500, 4510);            /* id 39 again, other name */
    mt_api(t, 1, 1, 43, "cudaLaunchKernel", 4600, 4610);
    size_t k41 = mt_kernel(t, 1, 0, 41, "k", 4250, 4260);
    size_t k42 = mt_kernel(t, 1, 0, 42, "k", 4350, 4360);
    size_t k30 = mt_kernel(t, 1, 0, 30, "k", 4450, 4460);
    size_t c41 = mt_memcpy(t, 1, 0, 41, 1, 0, 2, 8, 4195, 4199);
    int64_t inner_rowid = t->apis[inner].rowid, first_rowid = t->apis[first].rowid,
            late_rowid = t->apis[late].rowid, lone_rowid = t->apis[lone].rowid;
    size_t rows = t->n_apis;
    tg_model *m = mt_build(t);
    /* the outer row alone is dropped (the indices past it move down one) */
    assert_int_equal(t->n_apis, rows - 1);
    assert_int_equal(t->n_api_twins, 1);
    assert_int_equal(t->apis[outer].rowid, inner_rowid);
    assert_int_equal(t->kernels[k41].api, (int)outer);
    assert_int_equal(t->memcpys[c41].api, (int)outer);
    assert_int_equal(t->kernels[k42].api, (int)first - 1);
    assert_int_equal(t->apis[first - 1].rowid, first_rowid);
    assert_int_equal(t->kernels[k30].api, 29);                               /* the first id 30 */
    assert_int_equal(t->apis[late - 1].rowid, late_rowid);
    assert_int_equal(t->apis[lone - 1].rowid, lone_rowid);
    assert_true(t->mixed_duplicate_api);
    tg_model_free(m);
    mt_free(t);
}

static void test_rebuild_is_stable(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_api(t, 1, 1, 1, "cudaMemcpy", 0, 100);
    mt_api(t, 1, 1, 1, "cudaMemcpy_v3020", 5, 95);
    mt_memcpy(t, 1, 0, 1, 1, 0, 2, 100, 10, 90);
    mt_launch(t, 1, 1, 0, 2, "k", 200, 210, 250, 300);
    tg_model *a = mt_build(t);
    tg_kernel k1 = t->kernels[0];
    tg_memop c1 = t->memcpys[0];
    tg_api x1 = t->apis[0];
    int64_t calls = a->facts.api_calls;
    tg_model_free(a);
    tg_model *b = mt_build(t);
    /* every DERIVED field (member by member: padding is not compared) */
    const tg_kernel *k2 = &t->kernels[0];
    assert_true(k1.queue == k2->queue && k1.api == k2->api && k1.api_name == k2->api_name &&
                k1.tid == k2->tid && k1.nvtx == k2->nvtx && k1.iteration == k2->iteration &&
                k1.nccl == k2->nccl && k1.steady == k2->steady);
    const tg_memop *c2 = &t->memcpys[0];
    assert_true(c1.kind_name == c2->kind_name && c1.src_kind_name == c2->src_kind_name &&
                c1.dst_kind_name == c2->dst_kind_name && c1.api == c2->api && c1.api_name == c2->api_name &&
                c1.tid == c2->tid && c1.iteration == c2->iteration && c1.api_sync == c2->api_sync &&
                c1.api_async == c2->api_async && c1.steady == c2->steady);
    const tg_api *x2 = &t->apis[0];
    assert_true(x1.base_name == x2->base_name && x1.iteration == x2->iteration && x1.dup_of == x2->dup_of &&
                x1.driver == x2->driver && x1.blocking == x2->blocking && x1.steady == x2->steady);
    /* the first build dropped the outer row of the pair; the second found none */
    assert_string_equal(mt_s(t, x1.name), "cudaMemcpy_v3020");
    assert_int_equal(t->n_apis, 2);              /* and the launch of mt_launch */
    assert_int_equal(t->n_api_twins, 1);
    assert_int_equal(b->facts.api_calls, calls);
    tg_model_free(b);
    mt_free(t);
}

static void test_empty_trace(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_devices, 0);
    assert_int_equal(m->n_gaps, 0);
    assert_int_equal(m->n_iterations, 0);
    assert_false(m->has_iterations);
    assert_int_equal(m->facts.kernels, 0);
    assert_int_equal(m->facts.duration, 0);
    tg_model_free(m);
    mt_free(t);
}

/* Fields computed on read (kernel duration and launch_end, copy and call
** durations) as rules see them: in where, aggregates and evidence. */
static void test_computed_fields_in_rules(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 11, 0, 1, "a", 100, 110, 150, 200);     /* launch_end 110, duration 50 */
    mt_launch(t, 1, 11, 0, 2, "b", 300, 340, 350, 360);     /* launch_end 340, duration 10 */
    mt_kernel(t, 1, 0, 99, "c", 500, 580);                  /* no call: launch_end null */
    mt_api(t, 1, 11, 3, "cudaMemcpy", 600, 700);
    mt_memcpy(t, 1, 0, 3, 1, 0, 2, 64, 610, 690);
    mt_finish(t);
    tg_model *m = mt_build(t);
    static const char rules[] =
        "version: 1\nrules:\n"
        "  - {id: k, title: t, severity: error, source: kernel, where: \"launch_end >= 110ns and duration >= 20ns\",\n"
        "     fail_when: count > 0, message: \"{count} {sum(duration)} {max(launch_end)}\", advice: a,\n"
        "     evidence: {columns: [launch_end, duration]}}\n"
        "  - {id: n, title: t, severity: error, source: kernel, where: \"launch_end == null\",\n"
        "     fail_when: \"sum(duration) == 80ns\", message: m, advice: a}\n"
        "  - {id: c, title: t, severity: error, source: memcpy, fail_when: \"sum(duration) == 80ns\", message: m, advice: a}\n"
        "  - {id: a, title: t, severity: error, source: api, fail_when: \"max(duration) == 100ns\", message: m, advice: a}\n";
    tg_rules_text text = {"computed.yaml", rules};
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load_texts(&text, 1, NULL, 0, &d);
    if (!rs && d.n) fail_msg("%s", d.msgs[0].text);
    assert_non_null(rs);
    tg_arena *arena = tg_arena_new();
    tg_trace_result out = {0};
    assert_int_equal(tg_eval_model(rs, m, NULL, arena, &out, &d), TG_OK);
    assert_int_equal(out.n_results, 4);
    const tg_rule_result *k = &out.results[0];
    assert_int_equal(k->verdict, TG_V_FAIL);
    assert_int_equal(k->count, 1);                      /* kernel a only */
    assert_string_equal(k->message, "1 50 ns 110 ns");
    assert_int_equal(k->n_evidence, 1);
    assert_int_equal(k->evidence[0].n_fields, 2);
    assert_string_equal(k->evidence[0].fields[0].name, "launch_end");
    assert_int_equal(k->evidence[0].fields[0].value.u.i, 110);
    assert_int_equal(k->evidence[0].fields[1].value.u.i, 50);
    for (size_t i = 1; i < 4; i++) assert_int_equal(out.results[i].verdict, TG_V_FAIL);
    assert_int_equal(out.results[1].count, 1);          /* kernel c */
    tg_arena_free(arena);
    tg_rules_free(rs);
    tg_diag_clear(&d);
    tg_model_free(m);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_and_queue),
        cmocka_unit_test(test_api_names),
        cmocka_unit_test(test_memop_kinds),
        cmocka_unit_test(test_duplicate_api_rows),
        cmocka_unit_test(test_sparse_correlation_ids),
        cmocka_unit_test(test_rebuild_is_stable),
        cmocka_unit_test(test_empty_trace),
        cmocka_unit_test(test_computed_fields_in_rules),
        cmocka_unit_test(test_ordered_ids_searched),
        cmocka_unit_test(test_ordered_ids_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
