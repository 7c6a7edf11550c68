/*
** The gap and device sources (engine/model/model_device.c): gaps per
** (process, device) with the ops on either side, profiler overhead counted
** as busy but clipped to each device's first-to-last-op range, busy time as
** a union of intervals, the steady window, NCCL overlap, median queue time.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

#define EPS 1e-12

static void test_gaps_and_union(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_gpu(t, 0, "NVIDIA H200");
    mt_launch(t, 1, 1, 0, 1, "a", 0, 1, 0, 100);
    mt_launch(t, 1, 1, 0, 2, "b", 2, 3, 50, 150);     /* overlaps a */
    mt_launch(t, 1, 1, 0, 3, "c", 4, 5, 400, 500);
    mt_memcpy(t, 1, 0, 77, 1, 1, 2, 8, 600, 700);     /* copies are device work too */
    mt_memset(t, 1, 0, 78, 2, 8, 700, 750);           /* touching: no gap */
    mt_launch(t, 1, 1, 0, 4, "d", 6, 7, 1000, 1100);
    tg_model *m = mt_build(t);

    assert_int_equal(m->n_gaps, 3);
    const tg_gap *g = m->gaps;
    assert_int_equal(g[0].start, 150);
    assert_int_equal(g[0].end, 400);
    assert_int_equal(g[0].duration, 250);
    assert_int_equal(g[0].table, TG_TABLE_KERNEL);
    assert_int_equal(g[0].rowid, 2);                   /* b ended last */
    assert_int_equal(g[0].next_table, TG_TABLE_KERNEL);
    assert_int_equal(g[0].next_rowid, 3);
    assert_int_equal(g[1].start, 500);
    assert_int_equal(g[1].next_table, TG_TABLE_MEMCPY);
    assert_int_equal(g[2].start, 750);
    assert_int_equal(g[2].end, 1000);
    assert_int_equal(g[2].table, TG_TABLE_MEMSET);
    for (size_t i = 0; i < m->n_gaps; i++) {
        assert_int_equal(g[i].device, 0);
        assert_int_equal(g[i].pid, 1);
        assert_int_equal(g[i].in_steady_state, 1);    /* no iterations: all steady */
    }

    assert_int_equal(m->n_devices, 1);
    const tg_device *d = &m->devices[0];
    assert_int_equal(d->device, 0);
    assert_string_equal(mt_s(t, d->name), "NVIDIA H200");
    assert_int_equal(d->start, 0);
    assert_int_equal(d->end, 1100);
    assert_int_equal(d->span, 1100);
    assert_int_equal(d->kernels, 4);
    assert_int_equal(d->kernel_time, 100 + 100 + 100 + 100);
    assert_near(d->busy_frac, (150.0 + 100 + 150 + 100) / 1100, EPS);
    assert_near(d->busy_frac_steady, d->busy_frac, EPS);
    assert_true(isnan(d->nccl_overlap));
    assert_int_equal(d->nccl_time, 0);
    assert_int_equal(d->gaps, 0);                      /* none >= 500 ms */
    assert_int_equal(m->facts.devices, 1);
    tg_model_free(m);
    mt_free(t);
}

static void test_overhead_clipping(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 1, 0, 1, "a", 0, 10, 1000, 2000);
    mt_launch(t, 1, 1, 0, 2, "b", 20, 30, 5000, 6000);
    mt_launch(t, 1, 1, 1, 3, "c", 40, 50, 10000, 11000);  /* device 1, same process */
    mt_launch(t, 2, 1, 0, 4, "e", 60, 70, 20000, 20100);  /* process 2 on device 0 */
    mt_overhead(t, 1, "CUDA profiling data flush overhead", 1500, 3000);
    mt_overhead(t, 1, "CUDA profiling overhead", 5500, 9000);
    mt_overhead(t, 1, "CUDA profiling initialization", 3000, 5000);  /* not busy */
    mt_overhead(t, 1, "CUDA profiling stop overhead", 100, 200);     /* before the first op */
    tg_model *m = mt_build(t);

    /* (pid 1, device 0): [1000, 3000] busy, gap [3000, 5000] after the overhead row */
    assert_int_equal(m->n_gaps, 1);
    const tg_gap *g = &m->gaps[0];
    assert_int_equal(g->start, 3000);
    assert_int_equal(g->end, 5000);
    assert_int_equal(g->table, TG_TABLE_OVERHEAD);
    assert_int_equal(g->rowid, 1);
    assert_int_equal(g->next_rowid, 2);
    assert_int_equal(g->pid, 1);

    assert_int_equal(m->n_devices, 2);
    const tg_device *d0 = &m->devices[0], *d1 = &m->devices[1];
    assert_int_equal(d0->device, 0);
    assert_int_equal(d0->start, 1000);
    assert_int_equal(d0->end, 20100);                  /* process 2's op; overhead never extends */
    /* busy: [1000,3000] + [5000,6000] (overhead clipped at 6000) + [20000,20100];
    ** the wait between processes 1 and 2 is busy-less but no gap of either */
    assert_near(d0->busy_frac, (2000.0 + 1000 + 100) / 19100, EPS);
    assert_int_equal(d1->device, 1);
    assert_near(d1->busy_frac, 1.0, EPS);     /* overhead outside its range */
    assert_int_equal(d1->span, 1000);
    tg_model_free(m);
    mt_free(t);
}

static void test_processes_share_a_device(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 1, 0, 1, "a", 0, 1, 0, 100);
    mt_launch(t, 2, 1, 0, 1, "x", 0, 1, 150, 250);
    mt_launch(t, 1, 1, 0, 2, "b", 2, 3, 300, 400);
    tg_model *m = mt_build(t);
    /* gaps per (process, device): process 1 idles [100, 300]; process 2 none */
    assert_int_equal(m->n_gaps, 1);
    assert_int_equal(m->gaps[0].pid, 1);
    assert_int_equal(m->gaps[0].duration, 200);
    assert_near(m->devices[0].busy_frac, 300.0 / 400, EPS);
    tg_model_free(m);
    mt_free(t);
}

static void test_nccl_overlap(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 1, 0, 1, "ncclKernel_AllReduce", 0, 1, 0, 100);
    mt_launch(t, 1, 2, 0, 2, "gemm", 0, 1, 50, 150);
    mt_launch(t, 1, 2, 0, 3, "gemm", 2, 3, 180, 220);
    mt_launch(t, 1, 1, 0, 4, "ncclDevKernel_SendRecv", 2, 3, 200, 300);
    mt_launch(t, 1, 2, 0, 5, "gemm", 4, 5, 250, 260);
    mt_launch(t, 1, 2, 0, 6, "gemm", 4, 5, 255, 258);    /* overlaps gemm: union, not sum */
    mt_launch(t, 1, 1, 1, 7, "gemm", 6, 7, 0, 10);       /* device 1: no NCCL */
    tg_model *m = mt_build(t);
    const tg_device *d0 = &m->devices[0], *d1 = &m->devices[1];
    assert_int_equal(d0->nccl_time, 200);
    /* overlapped: [50,100] + [200,220] + [250,260] = 80 */
    assert_near(d0->nccl_overlap, 80.0 / 200, EPS);
    assert_int_equal(d0->exposed_nccl_time, 120);
    assert_int_equal(d0->kernels, 6);
    assert_true(isnan(d1->nccl_overlap));
    assert_int_equal(d1->nccl_time, 0);
    assert_int_equal(d1->exposed_nccl_time, 0);
    tg_model_free(m);
    mt_free(t);
}

static void test_queue_median(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    /* queues 40, 10, 30, 20, 0 on device 0 (median 20); 7, 9, 8 on device 1 */
    mt_launch(t, 1, 1, 0, 1, "k", 0, 10, 50, 60);
    mt_launch(t, 1, 1, 0, 2, "k", 20, 60, 70, 80);
    mt_launch(t, 1, 1, 0, 3, "k", 30, 60, 90, 100);
    mt_launch(t, 1, 1, 0, 4, "k", 40, 100, 120, 130);
    mt_launch(t, 1, 1, 0, 5, "k", 200, 300, 250, 260);   /* starts before the call returns: 0, counted */
    mt_launch(t, 1, 1, 1, 6, "k", 0, 1, 8, 9);
    mt_launch(t, 1, 1, 1, 7, "k", 0, 1, 10, 11);
    mt_launch(t, 1, 1, 1, 8, "k", 0, 1, 9, 10);
    mt_kernel(t, 1, 1, 99, "unmatched", 12, 13);
    tg_model *m = mt_build(t);
    assert_int_equal(m->devices[0].queue_p50, 20);
    assert_int_equal(m->devices[0].queue_kernels, 5);   /* the unmatched kernel has no queue */
    assert_int_equal(m->devices[0].queue_clamped, 1);
    assert_int_equal(m->devices[1].queue_p50, 8);
    assert_int_equal(m->devices[1].queue_kernels, 3);
    assert_int_equal(m->devices[1].queue_clamped, 0);
    tg_model_free(m);
    mt_free(t);
}

/* 12 iterations of process 1 (first 5 warmup), a long idle gap before the
** steady state and two after it. */
static void test_steady_gaps_and_busy(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    const int64_t ms = 1000000;
    int64_t corr = 1;
    for (int64_t i = 0; i < 12; i++) {
        int64_t b = 1000 * ms * i;
        mt_nvtx(t, 1, 1, 59, "iteration", b, b + 900 * ms);
        /* the GPU works [b, b + 100 ms] (and [b, b + 400 ms] in iteration 8) */
        mt_launch(t, 1, 1, 0, corr++, "k", b, b + 1, b + 1, b + (i == 8 ? 400 : 100) * ms);
    }
    tg_model_params p = {.gap_min_ns = 850 * ms};
    tg_diag d;
    tg_diag_init(&d);
    tg_model *m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_gaps, 11);
    for (size_t i = 0; i < m->n_gaps; i++)
        assert_int_equal(m->gaps[i].in_steady_state, m->gaps[i].start >= 5000 * ms);
    assert_int_equal(m->devices[0].gaps, 10);        /* >= 850 ms: all but after iteration 8 */
    /* steady window [5000 ms, 11900 ms]: busy 7 x 100 ms (+300 ms in iteration 8) */
    assert_near(m->devices[0].busy_frac_steady, (1000.0 * ms - 7) / (6900.0 * ms), 1e-9);
    tg_model_free(m);
    mt_free(t);
}

/* copy_frac_steady: the union of copy time (overlapping copies on two
** streams count once) over the union of busy time, both clipped to the
** steady window; copies in warm-up do not count. 12 iterations of 1000 ns,
** the first 5 warmup: steady window [5000, 11900]. */
static void test_copy_share_steady(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t i = 0; i < 12; i++) {
        int64_t b = 1000 * i;
        mt_nvtx(t, 1, 1, 59, "iteration", b, b + 900);
        mt_launch(t, 1, 1, 0, corr++, "k", b, b + 1, b + 1, b + 101);        /* 100 ns compute */
        mt_memcpy(t, 1, 0, corr++, 1, 0, 2, 4096, b + 200, b + 500);       /* 300 ns copy */
        mt_memcpy(t, 1, 0, corr++, 1, 0, 2, 4096, b + 400, b + 600);       /* overlaps it: +100 */
        mt_memcpy(t, 1, 0, corr++, 2, 2, 0, 64, b + 50, b + 80);           /* inside the kernel */
    }
    mt_memcpy(t, 1, 1, corr++, 1, 0, 2, 64, 100, 200);   /* device 1: copies only, all in warm-up */
    mt_launch(t, 1, 1, 1, corr++, "k", 5000, 5001, 6000, 6100);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_devices, 2);
    const tg_device *d = &m->devices[0];
    /* per steady iteration: busy [b+1, b+101] u [b+200, b+600] = 500,
    ** copies [b+50, b+80] u [b+200, b+600] = 430 */
    assert_int_equal(d->busy_time_steady, 7 * 500);
    assert_int_equal(d->copy_time_steady, 7 * 430);
    assert_near(d->copy_frac_steady, 430.0 / 500.0, EPS);
    const tg_device *d1 = &m->devices[1];
    assert_int_equal(d1->busy_time_steady, 100);
    assert_int_equal(d1->copy_time_steady, 0);
    assert_near(d1->copy_frac_steady, 0, EPS);
    assert_int_equal(mt_field(m, "device", "copy_time_steady", 0), 7 * 430);
    assert_int_equal(mt_field(m, "device", "busy_time_steady", 1), 100);
    tg_model_free(m);
    mt_free(t);
}

/* Without iterations the window is the whole trace; a device with no
** busy time in it has no copy share (null), not 0%. */
static void test_copy_share_no_iterations(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_memcpy(t, 1, 0, 1, 1, 0, 2, 1 << 20, 0, 900);
    mt_launch(t, 1, 1, 0, 2, "k", 0, 1, 900, 1000);
    mt_memset(t, 1, 0, 3, 2, 8, 1000, 1100);
    tg_model *m = mt_build(t);
    const tg_device *d = &m->devices[0];
    assert_int_equal(d->busy_time_steady, 1100);
    assert_int_equal(d->copy_time_steady, 900);
    assert_near(d->copy_frac_steady, 900.0 / 1100.0, EPS);
    tg_model_free(m);
    mt_free(t);
}

/* Tables not sorted by start still sweep correctly. */
static void test_unsorted_input(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_launch(t, 1, 1, 0, 1, "late", 0, 1, 500, 600);
    mt_launch(t, 1, 1, 0, 2, "early", 2, 3, 0, 100);
    mt_launch(t, 1, 1, 0, 3, "mid", 4, 5, 200, 300);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_gaps, 2);
    assert_int_equal(m->gaps[0].start, 100);
    assert_int_equal(m->gaps[0].end, 200);
    assert_int_equal(m->gaps[1].start, 300);
    assert_int_equal(m->gaps[1].end, 500);
    assert_near(m->devices[0].busy_frac, 300.0 / 600, EPS);
    tg_model_free(m);
    mt_free(t);
}

/* Without busy overhead rows the census is done by the sweep itself (one
** pass); with them, by a pass of its own. A busy overhead row of a process
** with no GPU work clips to nothing, so both ways must give the same model. */
static void check_same_model(const tg_model *a, const tg_model *b)
{
    assert_int_equal(a->n_gaps, b->n_gaps);
    for (size_t i = 0; i < a->n_gaps; i++) {
        assert_int_equal(a->gaps[i].start, b->gaps[i].start);
        assert_int_equal(a->gaps[i].end, b->gaps[i].end);
        assert_int_equal(a->gaps[i].rowid, b->gaps[i].rowid);
        assert_int_equal(a->gaps[i].table, b->gaps[i].table);
        assert_int_equal(a->gaps[i].next_rowid, b->gaps[i].next_rowid);
        assert_int_equal(a->gaps[i].pid, b->gaps[i].pid);
        assert_int_equal(a->gaps[i].device, b->gaps[i].device);
        assert_int_equal(a->gaps[i].in_steady_state, b->gaps[i].in_steady_state);
    }
    assert_int_equal(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        const tg_device *x = &a->devices[i], *y = &b->devices[i];
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->kernels, y->kernels);
        assert_int_equal(x->kernel_time, y->kernel_time);
        assert_int_equal(x->nccl_time, y->nccl_time);
        assert_int_equal(x->exposed_nccl_time, y->exposed_nccl_time);
        assert_int_equal(x->queue_p50, y->queue_p50);
        assert_int_equal(x->gaps, y->gaps);
        assert_near(x->busy_frac, y->busy_frac, 0);
        assert_true(isnan(x->nccl_overlap) == isnan(y->nccl_overlap));
        if (!isnan(x->nccl_overlap)) assert_near(x->nccl_overlap, y->nccl_overlap, 0);
    }
}

static void test_one_pass_equals_two(void **state)
{
    (void)state;
    uint32_t seed = 99;
    tg_trace *t = mt_new();
    for (int i = 0; i < 12; i++) mt_nvtx(t, 1 + i % 2, 1, 59, "iteration", 1000 * i, 1000 * i + 900);
    for (int64_t c = 1; c <= 3000; c++) {
        seed = seed * 1103515245u + 12345u;
        int32_t pid = 1 + (int32_t)(seed >> 30) % 2, device = (int32_t)(seed >> 20) % 3;
        int64_t call = 4 * c, start = call + 5 + (seed >> 8) % 40, len = 1 + (seed >> 4) % 30;
        mt_launch(t, pid, 1, device, c, (seed >> 12) % 4 ? "gemm" : "ncclAllReduce", call, call + 2, start,
                  start + len);
        if (c % 50 == 0) mt_memcpy(t, pid, device, 100000 + c, 1, 0, 2, 8, start + 40, start + 90);
    }
    mt_finish(t);
    tg_model_params p = {.gap_min_ns = 20};
    tg_diag d;
    tg_diag_init(&d);
    tg_model *one = tg_model_build(t, &p, &d);
    assert_non_null(one);
    mt_overhead(t, 7, "CUDA profiling overhead", 0, 1000000);   /* pid 7: no GPU work */
    tg_model *two = tg_model_build(t, &p, &d);
    assert_non_null(two);
    check_same_model(one, two);
    tg_model_free(one);
    tg_model_free(two);
    tg_diag_clear(&d);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaps_and_union),
        cmocka_unit_test(test_overhead_clipping),
        cmocka_unit_test(test_processes_share_a_device),
        cmocka_unit_test(test_nccl_overlap),
        cmocka_unit_test(test_queue_median),
        cmocka_unit_test(test_steady_gaps_and_busy),
        cmocka_unit_test(test_copy_share_steady),
        cmocka_unit_test(test_copy_share_no_iterations),
        cmocka_unit_test(test_unsorted_input),
        cmocka_unit_test(test_one_pass_equals_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
