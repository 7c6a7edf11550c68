/*
** Attribution of GPU work and calls against a direct computation, on
** random traces: two processes, two threads each, nested and overlapping
** iteration ranges, other NVTX ranges, kernels, copies and memsets whose
** launching calls come in another order than the ops (and, in one variant,
** calls not sorted by start, as hand-built traces may have them).
**
** Checked for every row: the iteration of each op, call and NVTX range
** (model_iter.c's cursors against "the latest-starting iteration of the
** process containing the time"), and for every range its gpu_time and
** gpu_span, and for every kernel its innermost range at launch
** (model_nvtx.c, which builds the launch order from the call order).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

static uint32_t seed;
static uint32_t rnd(uint32_t n)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
}

/* The iteration (index within its process) containing time x, directly. */
static int32_t expected_iteration(const tg_model *m, int32_t pid, int64_t x)
{
    const tg_iteration *best = NULL;
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        if (it->pid != pid || it->start > x || it->end < x) continue;
        if (!best || it->start > best->start || (it->start == best->start && it->rowid > best->rowid)) best = it;
    }
    return best ? best->index : -1;
}

/* One GPU op as the checks see it. */
typedef struct op_ref {
    int64_t api, start, end;
    int32_t pid;
} op_ref;

static op_ref op_at(const tg_trace *t, int kind, size_t i)
{
    if (kind == 0) return (op_ref){t->kernels[i].api, t->kernels[i].start, t->kernels[i].end, t->kernels[i].pid};
    const tg_memop *r = kind == 1 ? &t->memcpys[i] : &t->memsets[i];
    return (op_ref){r->api, r->start, r->end, r->pid};
}

static size_t op_count(const tg_trace *t, int kind)
{
    return kind == 0 ? t->n_kernels : kind == 1 ? t->n_memcpys : t->n_memsets;
}

static void check(const tg_trace *t, const tg_model *m)
{
    /* iterations of ops (by launch), calls and ranges (by their start) */
    for (int kind = 0; kind < 3; kind++)
        for (size_t i = 0; i < op_count(t, kind); i++) {
            op_ref o = op_at(t, kind, i);
            int32_t want = o.api < 0 ? -1 : expected_iteration(m, o.pid, t->apis[o.api].start);
            int32_t got = kind == 0 ? t->kernels[i].iteration
                        : kind == 1 ? t->memcpys[i].iteration : t->memsets[i].iteration;
            assert_int_equal(got, want);
        }
    for (size_t i = 0; i < t->n_apis; i++)
        assert_int_equal(t->apis[i].iteration, expected_iteration(m, t->apis[i].pid, t->apis[i].start));
    for (size_t i = 0; i < t->n_nvtx; i++)
        assert_int_equal(t->nvtx[i].iteration, expected_iteration(m, t->nvtx[i].pid, t->nvtx[i].start));

    /* per range: GPU work launched inside it on its thread */
    for (size_t r = 0; r < t->n_nvtx; r++) {
        const tg_nvtx *x = &t->nvtx[r];
        int64_t sum = 0, lo = TG_NULL_I64, hi = TG_NULL_I64;
        for (int kind = 0; kind < 3; kind++)
            for (size_t i = 0; i < op_count(t, kind); i++) {
                op_ref o = op_at(t, kind, i);
                if (o.api < 0) continue;
                const tg_api *a = &t->apis[o.api];
                if (a->pid != x->pid || a->tid != x->tid || a->start < x->start || a->start > x->end) continue;
                sum += o.end - o.start;
                if (lo == TG_NULL_I64 || o.start < lo) lo = o.start;
                if (hi == TG_NULL_I64 || o.end > hi) hi = o.end;
            }
        assert_int_equal(x->gpu_time, sum);
        if (lo == TG_NULL_I64) assert_true(x->gpu_span == TG_NULL_I64);
        else assert_int_equal(x->gpu_span, hi - lo);
    }

    /* per kernel: the latest-starting range open on its thread at launch */
    for (size_t k = 0; k < t->n_kernels; k++) {
        const tg_kernel *kr = &t->kernels[k];
        int32_t want = -1;
        if (kr->api >= 0) {
            const tg_api *a = &t->apis[kr->api];
            const tg_nvtx *best = NULL;
            for (size_t r = 0; r < t->n_nvtx; r++) {
                const tg_nvtx *x = &t->nvtx[r];
                if (x->pid != a->pid || x->tid != a->tid || x->start > a->start || x->end < a->start) continue;
                if (!best || x->start >= best->start) best = x;   /* later row wins a tie */
            }
            if (best) want = best->name;
        }
        assert_int_equal(kr->nvtx, want);
    }
}

static void run_case(uint32_t case_seed, bool calls_sorted)
{
    seed = case_seed;
    tg_trace *t = mt_new();
    const char *range_names[] = {"fwd", "bwd", "opt"};
    /* iteration ranges per (pid, tid): mostly back to back, some nested
    ** or overlapping; plus other ranges on every thread */
    for (int32_t pid = 1; pid <= 2; pid++)
        for (int32_t tid = 1; tid <= 2; tid++) {
            int64_t at = rnd(50);
            for (int i = 0; i < 30; i++) {
                int64_t len = 200 + rnd(400);
                mt_nvtx(t, pid, tid, tid == 1 ? 59 : 60, "iteration", at, at + len);
                if (rnd(5) == 0) mt_nvtx(t, pid, tid, 60, "iteration", at + rnd(100), at + len + rnd(300));
                int64_t s = at + rnd((uint32_t)len);
                mt_nvtx(t, pid, tid, 59, range_names[rnd(3)], s, s + rnd(150));
                at += len + rnd(3) * 40;
            }
        }
    /* calls, in start order or not, each launching up to three ops that
    ** start later and in an order of their own */
    int64_t corr = 1;
    size_t n_calls = 600;
    for (size_t c = 0; c < n_calls; c++) {
        size_t slot = calls_sorted ? c : (c * 7919) % n_calls;
        int32_t pid = 1 + (int32_t)rnd(2), tid = 1 + (int32_t)rnd(3);   /* tid 3: no ranges */
        int64_t call = (int64_t)slot * 24 + rnd(20);
        mt_api(t, pid, tid, corr, "cudaLaunchKernel", call, call + 5);
        int ops = (int)rnd(4);
        for (int o = 0; o < ops; o++) {
            int64_t start = call + 10 + rnd(2000), len = 1 + rnd(90);
            switch (rnd(3)) {
            case 0: mt_kernel(t, pid, 0, corr, rnd(2) ? "k" : "nccl_k", start, start + len); break;
            case 1: mt_memcpy(t, pid, 0, corr, 1, 0, 2, 64, start, start + len); break;
            default: mt_memset(t, pid, 0, corr, 2, 64, start, start + len); break;
            }
        }
        if (rnd(10) == 0) mt_kernel(t, pid, 0, 999999, "orphan", call + 3, call + 9);   /* no call */
        corr++;
    }
    mt_finish(t);
    tg_model *m = mt_build(t);
    /* one thread per process (pid 1: its main thread 1), outermost ranges only */
    assert_true(m->n_iterations >= 50);
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        assert_true(it->pid != 1 || it->tid == 1);
        for (size_t j = 0; j < m->n_iterations; j++) {
            const tg_iteration *o = &m->iterations[j];
            if (j == i || o->pid != it->pid) continue;
            assert_int_equal(o->tid, it->tid);
            assert_false(o->start <= it->start && it->end <= o->end &&
                         (o->start < it->start || it->end < o->end || j < i));
        }
    }
    check(t, m);
    tg_model_free(m);
    mt_free(t);
}

static void test_random_sorted_calls(void **state)
{
    (void)state;
    for (uint32_t s = 1; s <= 6; s++) run_case(s * 7717u, true);
}

static void test_random_unsorted_calls(void **state)
{
    (void)state;
    for (uint32_t s = 1; s <= 6; s++) run_case(s * 104729u, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_sorted_calls),
        cmocka_unit_test(test_random_unsorted_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
