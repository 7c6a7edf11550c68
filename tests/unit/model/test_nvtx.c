/*
** NVTX attribution (engine/model/model_nvtx.c): push/pop depth per thread,
** GPU work launched inside a range on the same thread (gpu_time, gpu_span),
** start/end ranges that cross others, and the innermost range at launch.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

static void test_nesting_and_gpu_time(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    size_t outer = mt_nvtx(t, 1, 1, 59, "outer", 0, 1000);
    size_t inner = mt_nvtx(t, 1, 1, 59, "inner", 100, 500);
    size_t cross = mt_nvtx(t, 1, 1, 60, "cross", 400, 1100);
    size_t inner2 = mt_nvtx(t, 1, 1, 59, "inner2", 600, 900);
    size_t deepest = mt_nvtx(t, 1, 1, 59, "deepest", 650, 700);
    size_t after = mt_nvtx(t, 1, 1, 59, "after", 1000, 1050);   /* sibling of outer */
    size_t other = mt_nvtx(t, 1, 2, 59, "other-thread", 0, 2000);
    mt_nvtx(t, 1, 1, 34, "mark", 120, TG_NULL_I64);
    size_t k1 = mt_launch(t, 1, 1, 0, 1, "k1", 120, 125, 200, 300);
    size_t k2 = mt_launch(t, 1, 1, 0, 2, "k2", 650, 655, 800, 1200);
    size_t k3 = mt_launch(t, 1, 1, 0, 3, "k3", 950, 955, 1300, 1400);
    size_t k4 = mt_launch(t, 1, 3, 0, 4, "k4", 130, 135, 1500, 1600);   /* thread 3: no ranges */
    size_t k5 = mt_launch(t, 1, 1, 0, 5, "k5", 1500, 1505, 1700, 1800); /* no range open */
    tg_model *m = mt_build(t);

    assert_int_equal(t->nvtx[outer].depth, 0);
    assert_int_equal(t->nvtx[inner].depth, 1);
    assert_int_equal(t->nvtx[inner2].depth, 1);
    assert_int_equal(t->nvtx[deepest].depth, 2);
    assert_int_equal(t->nvtx[after].depth, 0);
    assert_int_equal(t->nvtx[cross].depth, 0);
    assert_int_equal(t->nvtx[other].depth, 0);

    assert_int_equal(t->nvtx[outer].gpu_time, 100 + 400 + 100);
    assert_int_equal(t->nvtx[outer].gpu_span, 1400 - 200);
    assert_int_equal(t->nvtx[inner].gpu_time, 100);
    assert_int_equal(t->nvtx[inner].gpu_span, 100);
    assert_int_equal(t->nvtx[inner2].gpu_time, 400);
    assert_int_equal(t->nvtx[deepest].gpu_time, 400);   /* launch at its start counts */
    assert_int_equal(t->nvtx[cross].gpu_time, 400 + 100);
    assert_int_equal(t->nvtx[cross].gpu_span, 1400 - 800);
    assert_int_equal(t->nvtx[after].gpu_time, 0);
    assert_true(t->nvtx[after].gpu_span == TG_NULL_I64);
    assert_int_equal(t->nvtx[other].gpu_time, 0);       /* other thread's launches only */
    assert_int_equal(t->nvtx[outer].duration, 1000);

    assert_string_equal(mt_s(t, t->kernels[k1].nvtx), "inner");
    assert_string_equal(mt_s(t, t->kernels[k2].nvtx), "deepest");
    assert_string_equal(mt_s(t, t->kernels[k3].nvtx), "cross");  /* latest-started open range */
    assert_int_equal(t->kernels[k4].nvtx, -1);
    assert_int_equal(t->kernels[k5].nvtx, -1);
    assert_int_equal(m->facts.nvtx_ranges, 7);
    tg_model_free(m);
    mt_free(t);
}

/* Many ranges over many launches: prefix sums and the offline span query
** against a direct computation. */
static void test_spans_match_direct_scan(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    uint32_t seed = 12345;
    for (int i = 0; i < 400; i++) {
        seed = seed * 1103515245u + 12345u;
        int64_t call = 10 * i;
        int64_t start = call + 50 + (seed >> 16) % 300;
        int64_t len = 1 + (seed >> 8) % 97;
        mt_launch(t, 1, 1, 0, i + 1, "k", call, call + 5, start, start + len);
    }
    for (int i = 0; i < 300; i++) {
        seed = seed * 1103515245u + 12345u;
        int64_t s = (seed >> 16) % 4000, len = (seed >> 4) % 700;
        mt_nvtx(t, 1, 1, 60, "r", s, s + len);
    }
    tg_model *m = mt_build(t);
    for (size_t r = 0; r < t->n_nvtx; r++) {
        const tg_nvtx *x = &t->nvtx[r];
        int64_t sum = 0, lo = TG_NULL_I64, hi = TG_NULL_I64;
        for (size_t k = 0; k < t->n_kernels; k++) {
            int64_t launch = t->apis[t->kernels[k].api].start;
            if (launch < x->start || launch > x->end) continue;
            sum += t->kernels[k].end - t->kernels[k].start;
            if (lo == TG_NULL_I64 || t->kernels[k].start < lo) lo = t->kernels[k].start;
            if (hi == TG_NULL_I64 || t->kernels[k].end > hi) hi = t->kernels[k].end;
        }
        assert_int_equal(x->gpu_time, sum);
        if (lo == TG_NULL_I64) assert_true(x->gpu_span == TG_NULL_I64);
        else assert_int_equal(x->gpu_span, hi - lo);
    }
    tg_model_free(m);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_and_gpu_time),
        cmocka_unit_test(test_spans_match_direct_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
