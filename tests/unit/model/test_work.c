/*
** GPU work by name (engine/model/model_work.c): kernel families, the
** counts and times over the trace and over steady iterations, medians,
** copies by kind and memsets, NVTX ranges inside steady iterations
** without the iteration markers' own.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

static const tg_work_name *find(const tg_work_name *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i].name, name)) return &list[i];
    fail_msg("no entry '%s'", name);
    return NULL;
}

static void test_kernel_families(void **state)
{
    (void)state;
    static const struct { const char *name, *family; } cases[] = {
        {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float>>(int, T1, T2)",
         "vectorized_elementwise_kernel"},
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>>(T1, T2)",
         "multi_tensor_apply_kernel"},
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
        {"nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT"},
        {"saxpy", "saxpy"},
        {"cutlass::Kernel2<cutlass_80_tensorop_s16816gemm>(Params)", "Kernel2"},
        {"(anonymous namespace)::softmax_warp_forward<float>(float*)", "softmax_warp_forward"},
        {"<weird>", "<weird>"},
        {"triton_poi_fused_gelu_1", "triton_poi_fused_gelu"},
    };
    tg_trace *t = mt_new();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        mt_kernel(t, 1, 0, 0, cases[i].name, 100 * (int64_t)i, 100 * (int64_t)i + 10);
    tg_model *m = mt_build(t);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_string_equal(mt_s(t, tg_model_kernel_family(m, t->kernels[i].name)), cases[i].family);
    tg_model_free(m);
    mt_free(t);
}

/* 12 iterations (5 warmup), each launching two instantiations of one
** template (10 + 20 ns) and, from iteration 8 on, a `spin` kernel (100
** ns); a pinned HtoD copy and a memset per iteration; an NVTX `forward`
** range in each step besides the markers. */
static void test_summary(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t k = 0; k < 12; k++) {
        int64_t b = 1000 * k;
        mt_nvtx(t, 1, 1, 59, "ProfilerStep#1", b, b + 900);
        mt_nvtx(t, 1, 1, 59, "train_step", b + 1, b + 899);
        mt_nvtx(t, 1, 1, 59, "forward", b + 2, b + 50);
        mt_launch(t, 1, 1, 0, corr++, "void add_kernel<float>(float*)", b + 3, b + 4, b + 100, b + 110);
        mt_launch(t, 1, 1, 0, corr++, "void add_kernel<half>(half*)", b + 5, b + 6, b + 120, b + 140);
        if (k >= 8) mt_launch(t, 1, 1, 0, corr++, "spin", b + 7, b + 8, b + 200, b + 300);
        mt_api(t, 1, 1, corr, "cudaMemcpyAsync", b + 9, b + 10);
        mt_memcpy(t, 1, 0, corr++, 1, 1, 2, 1024, b + 400, b + 430);
        mt_api(t, 1, 1, corr, "cudaMemsetAsync", b + 11, b + 12);
        mt_memset(t, 1, 0, corr++, 2, 64, b + 500, b + 505);
    }
    mt_kernel(t, 1, 0, 999, "spin", 20000, 20050);     /* launched by no call: not steady */
    tg_model *m = mt_build(t);
    tg_work_summary s;
    assert_true(tg_model_work_summary(m, true, &s));
    assert_int_equal(s.steady_iterations, 7);
    assert_int_equal(s.n_names, 4);
    const tg_work_name *add = find(s.names, s.n_names, "add_kernel");
    assert_int_equal(add->kind, TG_WORK_KERNEL);
    assert_int_equal(add->count, 24);
    assert_int_equal(add->time, 12 * 30);
    assert_int_equal(add->steady_count, 14);
    assert_int_equal(add->steady_time, 7 * 30);
    assert_int_equal(add->p50, 15);                      /* 10 and 20 ns, 12 each */
    const tg_work_name *spin = find(s.names, s.n_names, "spin");
    assert_int_equal(spin->count, 5);
    assert_int_equal(spin->steady_count, 4);
    assert_int_equal(spin->steady_time, 400);
    assert_int_equal(spin->p50, 100);
    const tg_work_name *copy = find(s.names, s.n_names, "[memcpy HtoD]");
    assert_int_equal(copy->kind, TG_WORK_MEMCPY);
    assert_int_equal(copy->steady_time, 7 * 30);
    const tg_work_name *set = find(s.names, s.n_names, "[memset]");
    assert_int_equal(set->steady_count, 7);
    assert_int_equal(s.steady_time, 7 * 30 + 400 + 7 * 30 + 7 * 5);
    assert_string_equal(s.names[0].name, "spin");        /* by steady time */
    /* NVTX: forward only, the markers (ProfilerStep#N, train_step) left out */
    assert_int_equal(s.n_ranges, 1);
    assert_string_equal(s.ranges[0].name, "forward");
    assert_int_equal(s.ranges[0].steady_count, 7);
    assert_int_equal(s.ranges[0].steady_time, 7 * 48);
    tg_work_summary_free(&s);
    tg_model_free(m);
    mt_free(t);
}

/* Without iterations nothing is per iteration: steady counts stay 0. */
static void test_without_iterations(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 1, 0, 1, "k", 0, 1, 10, 20);
    tg_model *m = mt_build(t);
    tg_work_summary s;
    assert_true(tg_model_work_summary(m, false, &s));
    assert_int_equal(s.n_names, 1);
    assert_int_equal(s.names[0].count, 1);
    assert_int_equal(s.names[0].steady_count, 0);
    assert_true(s.names[0].p50 == TG_NULL_I64);
    assert_int_equal(s.n_ranges, 0);
    tg_work_summary_free(&s);
    tg_model_free(m);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_families),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_without_iterations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
