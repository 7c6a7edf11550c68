/*
** The iteration source and the steady state (engine/model/model_iter.c):
** numbering per process, warmup, attribution of GPU work by the start of
** its launching call, gpu_time, gpu_span, period (and where it is null),
** blocking calls, the steady window, custom and invalid patterns.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

/* Process 1: 12 iterations [1000 i, 1000 i + 500], each launching one
** kernel at 1000 i + 10 that runs [1000 i + 100, 1000 i + 300]; iteration 8's
** kernel runs 200 ns longer. */
static tg_trace *twelve_iterations(void)
{
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t i = 0; i < 12; i++) {
        int64_t b = 1000 * i;
        mt_nvtx(t, 1, 1, 59, "iteration", b, b + 500);
        mt_launch(t, 1, 1, 0, corr++, "k", b + 10, b + 20, b + 100, b + 300 + (i == 8 ? 200 : 0));
        if (i == 7) mt_api(t, 1, 1, corr++, "cuStreamSynchronize", b + 30, b + 400);
    }
    return t;
}

static void test_warmup_period_gpu_time(void **state)
{
    (void)state;
    tg_trace *t = twelve_iterations();
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 12);
    assert_true(m->has_iterations);
    for (int i = 0; i < 12; i++) {
        const tg_iteration *it = &m->iterations[i];
        assert_int_equal(it->index, i);
        assert_int_equal(it->pid, 1);
        assert_int_equal(it->warmup, i < 5);
        assert_int_equal(it->duration, 500);
        assert_int_equal(it->kernels, 1);
        assert_int_equal(it->gpu_time, i == 8 ? 400 : 200);
        assert_int_equal(it->gpu_span, i == 8 ? 400 : 200);
        assert_int_equal(it->gpu_end, 1000 * i + (i == 8 ? 500 : 300));
        assert_int_equal(it->blocking_calls, i == 7);
        assert_string_equal(mt_s(t, it->name), "iteration");
    }
    /* null for the first of the process and for the first steady one */
    assert_true(m->iterations[0].period == TG_NULL_I64);
    assert_int_equal(m->iterations[1].period, 1000);
    assert_int_equal(m->iterations[4].period, 1000);
    assert_true(m->iterations[5].period == TG_NULL_I64);
    assert_int_equal(m->iterations[6].period, 1000);
    assert_int_equal(m->iterations[8].period, 1200);
    assert_int_equal(m->iterations[9].period, 800);
    assert_int_equal(m->facts.iterations, 12);
    assert_int_equal(m->facts.steady_iterations, 7);
    assert_int_equal(m->steady_start, 5000);
    assert_int_equal(m->steady_end, 11500);
    assert_int_equal(m->facts.steady_duration, 6500);

    /* rows: iteration index and steady flag from the launching call */
    assert_int_equal(t->kernels[2].iteration, 2);
    assert_int_equal(t->kernels[2].steady, 0);
    assert_int_equal(t->kernels[6].iteration, 6);
    assert_int_equal(t->kernels[6].steady, 1);
    for (size_t i = 0; i < t->n_apis; i++)
        if (t->apis[i].blocking) {
            assert_int_equal(t->apis[i].iteration, 7);
            assert_int_equal(t->apis[i].steady, 1);
        }
    tg_model_free(m);
    mt_free(t);
}

static void test_attribution_by_launch(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_nvtx(t, 1, 1, 59, "train_step", 0, 100);
    mt_nvtx(t, 1, 1, 59, "train_step", 200, 300);
    mt_nvtx(t, 2, 1, 60, "train_step", 0, 1000);
    /* launched at the end of step 0 (inclusive), runs after the range ended */
    mt_launch(t, 1, 1, 0, 1, "late", 100, 105, 150, 260);
    /* a copy launched in step 1; its duration counts, its kernels do not */
    mt_api(t, 1, 1, 2, "cudaMemcpyAsync", 210, 215);
    mt_memcpy(t, 1, 0, 2, 1, 1, 2, 1024, 270, 290);
    mt_api(t, 1, 1, 3, "cudaMemsetAsync", 220, 225);
    mt_memset(t, 1, 0, 3, 2, 1024, 295, 310);
    /* launched between iterations: no iteration, and not steady */
    mt_launch(t, 1, 1, 0, 4, "between", 150, 160, 320, 330);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 3);
    const tg_iteration *s0 = &m->iterations[0], *s1 = &m->iterations[1], *p2 = &m->iterations[2];
    assert_int_equal(s0->pid, 1);
    assert_int_equal(s0->gpu_time, 110);
    assert_int_equal(s0->gpu_end, 260);
    assert_int_equal(s0->kernels, 1);
    assert_int_equal(s1->gpu_time, 20 + 15);
    assert_int_equal(s1->gpu_span, 310 - 270);
    assert_int_equal(s1->kernels, 0);
    assert_int_equal(s1->period, 310 - 260);
    assert_int_equal(s1->warmup, 0);            /* 10 or fewer: no warmup */
    /* process 2 launched nothing: its range is unrelated to process 1's work */
    assert_int_equal(p2->pid, 2);
    assert_int_equal(p2->index, 0);
    assert_int_equal(p2->gpu_time, 0);
    assert_true(p2->gpu_end == TG_NULL_I64 && p2->gpu_span == TG_NULL_I64);
    assert_int_equal(t->kernels[1].iteration, -1);
    assert_int_equal(t->kernels[1].steady, 0);
    assert_int_equal(t->memcpys[0].iteration, 1);
    assert_int_equal(t->memcpys[0].steady, 1);
    /* steady window: all processes */
    assert_int_equal(m->steady_start, 0);
    assert_int_equal(m->steady_end, 1000);
    tg_model_free(m);
    mt_free(t);
}

static void test_period_without_gpu_work(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_nvtx(t, 1, 1, 59, "step", 0, 100);
    mt_launch(t, 1, 1, 0, 1, "k", 10, 20, 30, 150);
    mt_nvtx(t, 1, 1, 59, "step", 200, 300);      /* no GPU work: no completion */
    mt_nvtx(t, 1, 1, 59, "step", 400, 500);
    mt_launch(t, 1, 1, 0, 2, "k", 410, 420, 430, 480);
    mt_nvtx(t, 1, 1, 59, "step", 600, 700);
    mt_launch(t, 1, 1, 0, 3, "k", 610, 620, 630, 690);
    mt_nvtx(t, 1, 1, 34, "step", 800, TG_NULL_I64);   /* a mark is not an iteration */
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 4);
    /* the period is GPU completion, never the host range's end (issue #14):
    ** the iteration without GPU work has none, nor the one after it */
    assert_true(m->iterations[1].period == TG_NULL_I64);
    assert_true(m->iterations[2].period == TG_NULL_I64);
    assert_int_equal(m->iterations[3].period, 690 - 480);
    tg_model_free(m);
    mt_free(t);
}

static void test_custom_and_invalid_pattern(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_nvtx(t, 1, 1, 59, "step_1", 0, 100);
    mt_nvtx(t, 1, 1, 59, "step_2", 100, 200);
    mt_nvtx(t, 1, 1, 59, "iteration", 300, 400);
    tg_diag d;
    tg_diag_init(&d);
    tg_model_params p = {.iteration_pattern = "^step_[0-9]+$"};
    tg_model *m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 2);
    tg_model_free(m);

    m = tg_model_build(t, NULL, &d);              /* default pattern: a step counter matches */
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 3);
    assert_string_equal(mt_s(t, m->iterations[0].marker), "step_N");
    assert_string_equal(mt_s(t, m->iterations[2].marker), "iteration");
    tg_model_free(m);

    p.iteration_pattern = "(step";
    m = tg_model_build(t, &p, &d);
    assert_null(m);
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "(step"));
    tg_diag_clear(&d);
    mt_free(t);
}

static void test_default_pattern(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    const char *names[] = {"iteration", "train_step", "step", "ProfilerStep#12", "warmup",
                           "iteration_0", "ProfilerStep#", "my step", "step 12", "iter_0012",
                           "iter", "step12", "train_step-3", "Step", "steps", "iteration 1 of 3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        mt_nvtx(t, 1, 1, 59, names[i], 100 * (int64_t)i, 100 * (int64_t)i + 50);
    tg_model *m = mt_build(t);
    const char *want[] = {"iteration", "train_step", "step", "ProfilerStep#N", "iteration_N",
                          "step N", "iter_N", "iter", "stepN", "train_step-N"};
    assert_int_equal(m->n_iterations, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(mt_s(t, m->iterations[i].marker), want[i]);
    tg_model_free(m);
    mt_free(t);
}

static void test_no_iterations_all_steady(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_nvtx(t, 1, 1, 59, "forward", 0, 100);
    mt_launch(t, 1, 1, 0, 1, "k", 10, 20, 30, 40);
    mt_api(t, 1, 1, 2, "cudaDeviceSynchronize", 50, 60);
    tg_model *m = mt_build(t);
    assert_false(m->has_iterations);
    assert_int_equal(t->kernels[0].steady, 1);
    assert_int_equal(t->kernels[0].iteration, -1);
    assert_int_equal(t->apis[1].steady, 1);
    assert_int_equal(m->steady_start, 0);
    assert_int_equal(m->steady_end, 100);
    assert_int_equal(m->facts.steady_iterations, 0);
    assert_int_equal(m->facts.steady_duration, 100);
    assert_int_equal(m->facts.duration, 100);
    tg_model_free(m);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warmup_period_gpu_time),
        cmocka_unit_test(test_attribution_by_launch),
        cmocka_unit_test(test_period_without_gpu_work),
        cmocka_unit_test(test_custom_and_invalid_pattern),
        cmocka_unit_test(test_default_pattern),
        cmocka_unit_test(test_no_iterations_all_steady),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
