/*
** Which ranges are the iterations (engine/model/model_marker.c,
** docs/iterations.md), one case per marker layout real jobs write: two
** levels (torch.profiler's ProfilerStep around the loop's train_step, a
** user's step around train_step, a wrapper on some steps only), a marker
** nested in itself, ranges on several threads (main thread or not),
** several processes, start/end ranges that overlap or close on another
** thread, ranges cut by the capture, a step counter in the name. Each case
** checks the iterations, what `info`/`metrics` report about the choice
** (tg_iter_selection) and where GPU work and calls are attributed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "mtrace.h"

/* The count entry of (tid, marker, role) in series s, or NULL. */
static const tg_marker_count *find_count(const tg_iter_selection *sel, const tg_iter_series *s,
                                         int32_t tid, const char *marker, int role)
{
    for (size_t i = s->first_count; i < s->first_count + s->n_counts; i++) {
        const tg_marker_count *c = &sel->counts[i];
        if (c->tid == tid && c->role == role && !strcmp(tg_iter_marker_name(sel, c->marker), marker))
            return c;
    }
    return NULL;
}

static void assert_count(const tg_iter_selection *sel, const tg_iter_series *s, int32_t tid,
                         const char *marker, int role, int64_t ranges)
{
    const tg_marker_count *c = find_count(sel, s, tid, marker, role);
    if (!c) fail_msg("no count for thread %d, marker %s, role %s", tid, marker, tg_marker_role_name(role));
    assert_int_equal(c->ranges, ranges);
}

static void assert_markers(const tg_model *m, const char *want)
{
    char *got = tg_iter_selection_markers(m->selection);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* ------------------------------------------------------------ two levels */

/* 12 steps of torch.profiler under a schedule: ProfilerStep#k around the
** loop's train_step, each launching a kernel before train_step opens (the
** profiler's own step bookkeeping) and one inside it. */
static void test_profiler_step_around_train_step(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t k = 0; k < 12; k++) {
        int64_t b = 1000 * k;
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", (int)(k + 5));
        mt_nvtx(t, 7, 7, 59, name, b, b + 900);
        mt_nvtx(t, 7, 7, 59, "train_step", b + 10, b + 890);
        mt_launch(t, 7, 7, 0, corr++, "prologue", b + 2, b + 4, b + 100, b + 110);
        mt_launch(t, 7, 7, 0, corr++, "step_kernel", b + 20, b + 30, b + 200, b + 700);
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 12);
    assert_int_equal(m->facts.steady_iterations, 7);
    for (int k = 0; k < 12; k++) {
        const tg_iteration *it = &m->iterations[k];
        assert_string_equal(mt_s(t, it->marker), "ProfilerStep#N");
        assert_int_equal(it->index, k);
        assert_int_equal(it->start, 1000 * k);
        assert_int_equal(it->kernels, 2);
        assert_int_equal(it->gpu_time, 10 + 500);
        assert_int_equal(it->steady, k >= 5);
        if (k != 0 && k != 5) assert_int_equal(it->period, 1000);   /* one per step, not alternating */
    }
    /* both kernels of a step belong to it, the one launched before train_step too */
    for (size_t i = 0; i < t->n_kernels; i++) assert_int_equal(t->kernels[i].iteration, (int)(i / 2));

    const tg_iter_selection *sel = m->selection;
    assert_int_equal(sel->n_series, 1);
    const tg_iter_series *s = &sel->series[0];
    assert_int_equal(s->pid, 7);
    assert_int_equal(s->tid, 7);
    assert_true(s->main_thread);
    assert_int_equal(s->iterations, 12);
    assert_int_equal(s->partial, 0);
    assert_int_equal(s->n_counts, 2);
    assert_count(sel, s, 7, "ProfilerStep#N", TG_MARKER_ITERATIONS, 12);
    assert_count(sel, s, 7, "train_step", TG_MARKER_NESTED, 12);
    assert_int_equal(sel->counts[s->first_count].role, TG_MARKER_ITERATIONS);   /* listed first */
    assert_markers(m, "ProfilerStep#N");
    tg_model_free(m);

    /* a user pattern matching only the inner marker gets the inner ranges */
    tg_diag d;
    tg_diag_init(&d);
    tg_model_params p = {.iteration_pattern = "^train_step$"};
    m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 12);
    assert_string_equal(mt_s(t, m->iterations[0].marker), "train_step");
    assert_int_equal(t->kernels[0].iteration, -1);   /* launched before train_step opened */
    assert_int_equal(t->kernels[1].iteration, 0);
    tg_model_free(m);
    tg_diag_clear(&d);
    mt_free(t);
}

/* An outer `step` around an inner `train_step` on a plain nsys capture. */
static void test_step_around_train_step(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 20; k++) {
        mt_nvtx(t, 3, 3, 59, "step", 100 * k, 100 * k + 90);
        mt_nvtx(t, 3, 3, 59, "train_step", 100 * k + 1, 100 * k + 50);
        mt_nvtx(t, 3, 3, 59, "forward", 100 * k + 2, 100 * k + 20);
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 20);
    assert_int_equal(m->iterations[19].duration, 90);
    assert_markers(m, "step");
    const tg_iter_series *s = &m->selection->series[0];
    assert_int_equal(s->n_counts, 2);                      /* `forward` does not match */
    assert_count(m->selection, s, 3, "train_step", TG_MARKER_NESTED, 20);
    tg_model_free(m);
    mt_free(t);
}

/* The profiler wraps only the later steps: one iteration per step all the
** same, the outermost range of each. */
static void test_wrapper_on_some_steps(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 12; k++) {
        if (k >= 4) mt_nvtx(t, 1, 1, 59, "ProfilerStep#1", 100 * k, 100 * k + 95);
        mt_nvtx(t, 1, 1, 59, "train_step", 100 * k + 1, 100 * k + 90);
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 12);
    for (int k = 0; k < 12; k++)
        assert_string_equal(mt_s(t, m->iterations[k].marker), k < 4 ? "train_step" : "ProfilerStep#N");
    const tg_iter_series *s = &m->selection->series[0];
    assert_count(m->selection, s, 1, "ProfilerStep#N", TG_MARKER_ITERATIONS, 8);
    assert_count(m->selection, s, 1, "train_step", TG_MARKER_ITERATIONS, 4);
    assert_count(m->selection, s, 1, "train_step", TG_MARKER_NESTED, 8);
    assert_markers(m, "ProfilerStep#N, train_step");
    tg_model_free(m);
    mt_free(t);
}

/* A marker nested in itself (a step that runs sub-steps): the outer ones. */
static void test_marker_nested_in_itself(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 3; k++) {
        mt_nvtx(t, 1, 1, 59, "step", 1000 * k, 1000 * k + 900);
        mt_nvtx(t, 1, 1, 59, "step", 1000 * k + 10, 1000 * k + 400);
        mt_nvtx(t, 1, 1, 59, "step", 1000 * k + 500, 1000 * k + 900);   /* same end as its parent */
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 3);
    for (int k = 0; k < 3; k++) assert_int_equal(m->iterations[k].duration, 900);
    const tg_iter_series *s = &m->selection->series[0];
    assert_count(m->selection, s, 1, "step", TG_MARKER_ITERATIONS, 3);
    assert_count(m->selection, s, 1, "step", TG_MARKER_NESTED, 6);
    tg_model_free(m);
    mt_free(t);
}

/* Identical ranges under two names (a wrapper with the same timestamps):
** one of them, not both. */
static void test_identical_ranges(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 4; k++) {
        mt_nvtx(t, 1, 1, 59, "step", 100 * k, 100 * k + 50);
        mt_nvtx(t, 1, 1, 59, "train_step", 100 * k, 100 * k + 50);
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 4);
    assert_markers(m, "step");              /* the earlier row wins the tie */
    tg_model_free(m);
    mt_free(t);
}

/* --------------------------------------------------------------- threads */

/* The main thread (tid == pid) marks the steps; a worker thread of the
** same process marks its own `step`s: the main thread wins, the worker's
** ranges are reported as another thread's, and calls on the worker are
** still attributed by time to the main thread's iterations. */
static void test_main_thread_wins(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 12; k++) mt_nvtx(t, 10, 10, 59, "iteration", 1000 * k, 1000 * k + 800);
    for (int64_t k = 0; k < 30; k++) mt_nvtx(t, 10, 11, 59, "step", 400 * k, 400 * k + 300);
    mt_api(t, 10, 11, 1, "cudaDeviceSynchronize", 3100, 3200);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 12);
    for (size_t i = 0; i < m->n_iterations; i++) assert_int_equal(m->iterations[i].tid, 10);
    const tg_iter_series *s = &m->selection->series[0];
    assert_int_equal(s->tid, 10);
    assert_true(s->main_thread);
    assert_count(m->selection, s, 10, "iteration", TG_MARKER_ITERATIONS, 12);
    assert_count(m->selection, s, 11, "step", TG_MARKER_OTHER_THREAD, 30);
    assert_int_equal(t->apis[0].iteration, 3);
    assert_markers(m, "iteration");
    tg_model_free(m);
    mt_free(t);
}

/* No thread is the main thread (a converted trace, a worker-driven loop):
** the thread with the most candidates wins, lowest tid on a tie. */
static void test_busiest_thread_without_main(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 5; k++) mt_nvtx(t, 20, 21, 59, "step", 100 * k, 100 * k + 50);
    for (int64_t k = 0; k < 8; k++) mt_nvtx(t, 20, 22, 59, "step", 100 * k + 5, 100 * k + 60);
    for (int64_t k = 0; k < 8; k++) mt_nvtx(t, 20, 23, 59, "step", 100 * k + 7, 100 * k + 70);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 8);
    const tg_iter_series *s = &m->selection->series[0];
    assert_int_equal(s->tid, 22);
    assert_false(s->main_thread);
    assert_count(m->selection, s, 21, "step", TG_MARKER_OTHER_THREAD, 5);
    assert_count(m->selection, s, 23, "step", TG_MARKER_OTHER_THREAD, 8);
    tg_model_free(m);
    mt_free(t);
}

/* ------------------------------------------------------------- processes */

/* Two ranks in one export (DDP): one series per process, numbered on its
** own, each process's GPU work in its own iterations. */
static void test_one_series_per_process(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t k = 0; k < 12; k++)
        for (int32_t pid = 100; pid <= 101; pid++) {
            int64_t b = 1000 * k + (pid - 100) * 300;
            mt_nvtx(t, pid, pid, 59, "iteration", b, b + 600);
            mt_launch(t, pid, pid, pid - 100, corr++, "k", b + 5, b + 10, b + 20, b + 20 + pid);
        }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 24);
    assert_int_equal(m->selection->n_series, 2);
    for (size_t i = 0; i < 24; i++) {
        const tg_iteration *it = &m->iterations[i];
        assert_int_equal(it->pid, i < 12 ? 100 : 101);
        assert_int_equal(it->index, (int)(i % 12));
        assert_int_equal(it->gpu_time, it->pid);
        assert_int_equal(it->steady, i % 12 >= 5);
    }
    assert_int_equal(m->facts.steady_iterations, 14);
    assert_markers(m, "iteration");
    tg_model_free(m);
    mt_free(t);
}

/* ------------------------------------------------------- start/end ranges */

/* Pipelined steps as start/end ranges (eventType 60): each opens before the
** previous one closes. They overlap without nesting: all are iterations. */
static void test_overlapping_start_end_ranges(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    for (int64_t k = 0; k < 6; k++) mt_nvtx(t, 1, 1, 60, "step", 100 * k, 100 * k + 150);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 6);
    tg_model_free(m);
    mt_free(t);
}

/* A start/end range opened on one thread and closed on another, read from
** an export: it is one range of the thread that opened it. */
static void test_range_closed_on_another_thread(void **state)
{
    (void)state;
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (1, 'step');"));
    for (int k = 0; k < 12; k++)
        assert_true(tg_fixture_append(&sql,
            "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, endGlobalTid, rangeId)"
            " VALUES (%d, %d, 60, 1, %lld, %lld, %d);", 1000 * k, 1000 * k + 700,
            (long long)tg_fixture_gtid(5, 6), (long long)tg_fixture_gtid(5, 7 + k % 2), k + 1));
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    assert_non_null(t);
    tg_model *m = tg_model_build(t, NULL, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 12);
    const tg_iter_series *s = &m->selection->series[0];
    assert_int_equal(s->pid, 5);
    assert_int_equal(s->tid, 6);
    assert_int_equal(m->iterations[11].duration, 700);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* ------------------------------------------------------- capture window */

/* 14 steps of 1000 ns with GPU work in each; the capture cuts the first one
** short (it starts with the capture, 300 ns long) and stops during the
** last one (never closed). */
static tg_trace *cut_capture(bool first_cut, bool last_open)
{
    tg_trace *t = mt_new();
    int64_t corr = 1;
    for (int64_t k = 0; k < 14; k++) {
        int64_t b = 1000 * k + (k == 0 && first_cut ? 700 : 0);
        int64_t e = k == 13 && last_open ? TG_NULL_I64 : 1000 * k + 990;
        mt_nvtx(t, 1, 1, 59, "iteration", b, e);
        mt_launch(t, 1, 1, 0, corr++, "k", b + 5, b + 10, b + 50, b + 80);
    }
    mt_api(t, 1, 1, corr++, "cuCtxSynchronize", 13500, 14200);   /* the capture ends at 14200 */
    return t;
}

static void test_cut_by_the_capture(void **state)
{
    (void)state;
    tg_trace *t = cut_capture(true, true);
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 14);
    const tg_iteration *first = &m->iterations[0], *last = &m->iterations[13];
    assert_true(first->partial && !first->steady);
    assert_true(last->partial && !last->steady);
    assert_int_equal(last->end, 14200);                  /* the capture's end */
    assert_true(last->period == TG_NULL_I64);
    assert_int_equal(m->iterations[12].steady, 1);
    assert_int_equal(m->iterations[1].partial, 0);
    assert_int_equal(m->facts.steady_iterations, 14 - 5 - 1);   /* warmup 0..4, last partial */
    assert_int_equal(m->steady_end, 12990);              /* the last steady iteration's end */
    assert_int_equal(t->kernels[13].iteration, 13);
    assert_int_equal(t->kernels[13].steady, 0);           /* launched in a partial step */
    assert_int_equal(m->selection->series[0].partial, 2);
    tg_model_free(m);
    mt_free(t);
}

/* A first step that begins with the capture but is as long as the others
** is whole (torch.profiler's traces start with a step); so is a last one
** that ends with the capture at full length. */
static void test_edge_steps_at_full_length(void **state)
{
    (void)state;
    tg_trace *t = cut_capture(false, false);
    tg_model *m = mt_build(t);
    assert_int_equal(m->iterations[0].start, t->first_ns);
    for (size_t i = 0; i < m->n_iterations; i++) assert_int_equal(m->iterations[i].partial, 0);
    assert_int_equal(m->facts.steady_iterations, 9);
    tg_model_free(m);
    mt_free(t);
}

/* ------------------------------------------------------------ step counter */

static void test_step_counter_in_the_name(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    char name[32];
    for (int k = 0; k < 12; k++) {
        snprintf(name, sizeof name, "step %d", k);
        mt_nvtx(t, 1, 1, 59, name, 100 * k, 100 * k + 90);
        snprintf(name, sizeof name, "iter_%04d", k);
        mt_nvtx(t, 2, 2, 59, name, 100 * k, 100 * k + 90);
    }
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_iterations, 24);
    assert_int_equal(m->facts.steady_iterations, 14);
    assert_string_equal(mt_s(t, m->iterations[3].marker), "step N");
    assert_string_equal(mt_s(t, m->iterations[3].name), "step 3");
    assert_string_equal(mt_s(t, m->iterations[15].marker), "iter_N");
    assert_count(m->selection, &m->selection->series[0], 1, "step N", TG_MARKER_ITERATIONS, 12);
    assert_markers(m, "iter_N, step N");
    tg_model_free(m);
    mt_free(t);
}

/* Names that match nothing, and many distinct matching names (a hostile
** pattern): counted without a quadratic search. */
static void test_many_markers(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    char name[32];
    for (int k = 0; k < 5000; k++) {
        snprintf(name, sizeof name, "x%c%c%c", 'a' + k % 26, 'a' + k / 26 % 26, 'a' + k / 676);
        mt_nvtx(t, 1, 1, 59, name, 10 * k, 10 * k + 5);
    }
    tg_diag d;
    tg_diag_init(&d);
    tg_model_params p = {.iteration_pattern = "^x"};
    tg_model *m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 5000);
    assert_int_equal(m->selection->series[0].n_counts, 5000);
    tg_model_free(m);
    p.iteration_pattern = "^nothing$";
    m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 0);
    assert_int_equal(m->selection->n_series, 0);
    assert_markers(m, "");
    tg_model_free(m);
    tg_diag_clear(&d);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiler_step_around_train_step),
        cmocka_unit_test(test_step_around_train_step),
        cmocka_unit_test(test_wrapper_on_some_steps),
        cmocka_unit_test(test_marker_nested_in_itself),
        cmocka_unit_test(test_identical_ranges),
        cmocka_unit_test(test_main_thread_wins),
        cmocka_unit_test(test_busiest_thread_without_main),
        cmocka_unit_test(test_one_series_per_process),
        cmocka_unit_test(test_overlapping_start_end_ranges),
        cmocka_unit_test(test_range_closed_on_another_thread),
        cmocka_unit_test(test_cut_by_the_capture),
        cmocka_unit_test(test_edge_steps_at_full_length),
        cmocka_unit_test(test_step_counter_in_the_name),
        cmocka_unit_test(test_many_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
