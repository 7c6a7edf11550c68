/*
** Runs, workloads, baselines and views of the history (engine/history/
** history.c, history_view.c), on hand-built runs and the built-in rules:
** what a run keeps of a trace, which workload it joins, which runs a
** baseline draws (fewer than 3: the number still needed; regressed runs
** out; the latest accepted change point first; an unaccepted regression
** change point last; an outlier kept out and named), and the change points
** of a series with what changed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "history/history.h"

static tg_ruleset *builtin(void)
{
    const char *root = getenv("TG_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/rules.d", root ? root : ".");
    const char *paths[] = {path};
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load(paths, 1, NULL, 0, &d);
    tg_diag_clear(&d);
    assert_non_null(rs);
    return rs;
}

/* Deterministic noise in [-1, 1). */
static double noise(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

static tg_workload *work(tg_arena *a, double gemm, double extra)
{
    tg_workload *w = tg_arena_alloc(a, sizeof *w);
    tg_work_entry *ops = tg_arena_alloc(a, 3 * sizeof *ops);
    ops[0] = (tg_work_entry){.name = "gemm", .kind = TG_WORK_KERNEL, .count = 100, .total = gemm * 100,
                             .time = gemm, .launches = 1};
    ops[1] = (tg_work_entry){.name = "[memcpy HtoD]", .kind = TG_WORK_MEMCPY, .count = 100, .total = 1e4 * 100,
                             .time = 1e4, .launches = 1};
    size_t n = 2;
    if (extra > 0)
        ops[n++] = (tg_work_entry){.name = "spin", .kind = TG_WORK_KERNEL, .count = 100, .total = extra * 100,
                                   .time = extra, .launches = 1};
    *w = (tg_workload){.steady_iterations = 100, .gpu_time = gemm + 1e4 + extra, .period = 2e6, .idle = 1e5,
                       .total = (gemm + 1e4 + extra) * 100, .ops = ops, .n_ops = n};
    return w;
}

/* A run as the store gives it back: both regression metrics, samples
** around value. */
static void make_run(tg_arena *a, tg_hist_run *r, int64_t id, double gpu, double period, const char *digest,
                     unsigned seed)
{
    tg_hist_metric *m = tg_arena_alloc(a, 2 * sizeof *m);
    double *s1 = tg_arena_alloc(a, 50 * sizeof *s1), *s2 = tg_arena_alloc(a, 50 * sizeof *s2);
    for (int i = 0; i < 50; i++) {
        s1[i] = gpu * (1 + 0.0005 * noise(&seed));
        s2[i] = period * (1 + 0.01 * noise(&seed));
    }
    m[0] = (tg_hist_metric){.rule = "gpu-time-regression", .metric = "p50(gpu_time)", .samples_field = "gpu_time",
                            .unit = TG_UNIT_NS, .direction = 1, .value = gpu, .verdict = "pass", .samples = s1,
                            .n_samples = 50};
    m[1] = (tg_hist_metric){.rule = "iteration-time-regression", .metric = "p50(period)",
                            .samples_field = "period", .unit = TG_UNIT_NS, .direction = 1, .value = period,
                            .verdict = "pass", .samples = s2, .n_samples = 50};
    *r = (tg_hist_run){.id = id, .label = tg_arena_printf(a, "n%lld", (long long)id),
                       .time = tg_arena_printf(a, "2026-11-%02lldT03:00:00Z", (long long)id), .workload = "w1",
                       .workload_name = "gemm", .gpu = "NVIDIA H200", .format = "nsys-sqlite", .marker = "iteration",
                       .schema_version = "3.0.0", .trace = "t.sqlite", .metrics_digest = digest, .verdict = "pass",
                       .metrics = m, .n_metrics = 2, .work = work(a, gpu - 1e4, 0)};
}

typedef struct fx {
    tg_ruleset *rs;
    tg_arena *a;
    const char *digest;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->rs = builtin();
    f->a = tg_arena_new();
    f->digest = tg_history_metrics_digest(f->rs, f->a);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    tg_rules_free(f->rs);
    tg_arena_free(f->a);
    free(f);
    return 0;
}

/* n runs of ~gpu, ~period; the current run is one more. */
static tg_hist_run *series(fx *f, size_t n, double gpu, double period)
{
    tg_hist_run *r = tg_arena_alloc(f->a, (n + 1) * sizeof *r);
    unsigned s = 7;
    for (size_t i = 0; i < n + 1; i++)
        make_run(f->a, &r[i], (int64_t)i + 1, gpu * (1 + 0.0005 * noise(&s)), period * (1 + 0.02 * noise(&s)),
                 f->digest, (unsigned)i);
    return r;
}

static void test_digest(void **state)
{
    fx *f = *state;
    assert_non_null(f->digest);
    assert_int_equal(strncmp(f->digest, "sha256:", 7), 0);
    /* a param is not a definition: --set leaves the digest */
    tg_param_set set = {.rule = "gpu-time-regression", .param = "min_change", .value = "3%"};
    const char *root = getenv("TG_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/rules.d", root ? root : ".");
    const char *paths[] = {path};
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs2 = tg_rules_load(paths, 1, &set, 1, &d);
    tg_diag_clear(&d);
    assert_non_null(rs2);
    assert_string_equal(tg_history_metrics_digest(rs2, f->a), f->digest);
    tg_rules_free(rs2);
}

static void test_run_of(void **state)
{
    fx *f = *state;
    tg_trace_result tr = {.file = "/x/y/night7.sqlite", .gpu_names = "NVIDIA H200", .schema_version = "3.0.0",
                          .iteration_marker = "iteration", .trace_format = "nsys-sqlite", .status = TG_OK};
    double *samples = tg_arena_alloc(f->a, 1000 * sizeof *samples);
    for (int i = 0; i < 1000; i++) samples[i] = 1000 - i;
    samples[3] = NAN;
    tg_rule_result res[2] = {
        {.rule = "iteration-time-regression", .metric = "p50(period)", .metric_unit = TG_UNIT_NS,
         .metric_value = 5e6, .regression = 1, .verdict = TG_V_PASS, .samples = samples, .n_samples = 1000},
        {.rule = "gpu-time-regression", .metric = "p50(gpu_time)", .metric_unit = TG_UNIT_NS, .metric_value = NAN,
         .regression = 1, .verdict = TG_V_ERROR, .missing_data = true},
    };
    tr.results = res;
    tr.n_results = 2;
    tg_workload *w = tg_arena_alloc(f->a, sizeof *w);
    tg_work_entry *ops = tg_arena_alloc(f->a, 300 * sizeof *ops);
    for (int i = 0; i < 300; i++)
        ops[i] = (tg_work_entry){.name = tg_arena_printf(f->a, "k%d", i), .kind = TG_WORK_KERNEL, .count = 1,
                                 .total = 300 - i, .time = 300 - i, .launches = 1};
    *w = (tg_workload){.steady_iterations = 10, .gpu_time = 1, .ops = ops, .n_ops = 300};
    tr.workload = w;
    tg_hist_meta meta = {.branch = "main", .verdict = "pass"};
    tg_hist_run r;
    assert_true(tg_history_run_of(&tr, f->rs, &meta, f->a, &r));
    assert_string_equal(r.label, "night7.sqlite");
    assert_string_equal(r.trace, "night7.sqlite");
    assert_string_equal(r.branch, "main");
    assert_non_null(r.time);
    assert_string_equal(r.metrics_digest, f->digest);
    assert_int_equal(r.n_metrics, 2);
    /* sorted by rule id */
    assert_string_equal(r.metrics[0].rule, "gpu-time-regression");
    assert_true(isnan(r.metrics[0].value));
    assert_string_equal(r.metrics[0].verdict, "error");
    const tg_hist_metric *m = &r.metrics[1];
    assert_string_equal(m->samples_field, "period");
    assert_int_equal(m->n_samples, TG_HISTORY_SAMPLES);
    for (size_t i = 1; i < m->n_samples; i++) assert_true(m->samples[i - 1] <= m->samples[i]);
    /* at most TG_BASELINE_MAX_WORK names, the rest summed */
    assert_int_equal(r.work->n_ops, TG_BASELINE_MAX_WORK + 1);
    const tg_work_entry *o = &r.work->ops[TG_BASELINE_MAX_WORK];
    assert_string_equal(o->name, TG_BASELINE_OTHER);
    assert_int_equal(o->count, 100);
    assert_null(r.work->ops[0].rows);
}

static void test_match(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 2, 1e5, 2e6);
    tg_hist_run *cur = &r[2];
    cur->workload = NULL;
    r[1].workload = "w2";
    assert_string_equal(tg_history_match(cur, r, 2, 0.5), "w2");   /* the latest wins a tie */
    cur->gpu = "NVIDIA H100";
    assert_null(tg_history_match(cur, r, 2, 0.5));
    cur->gpu = "NVIDIA H200";
    cur->marker = "ProfilerStep#N";
    assert_null(tg_history_match(cur, r, 2, 0.5));
    cur->marker = "iteration";
    /* kernels that cover none of the history's GPU time: another workload */
    tg_work_entry *ops = tg_arena_alloc(f->a, sizeof *ops);
    ops[0] = (tg_work_entry){.name = "other", .kind = TG_WORK_KERNEL, .count = 1, .total = 5, .time = 5};
    tg_workload w = {.steady_iterations = 1, .gpu_time = 5, .ops = ops, .n_ops = 1};
    cur->work = &w;
    assert_null(tg_history_match(cur, r, 2, 0.5));
}

static void test_baseline_young(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 2, 1e5, 2e6);
    tg_hist_choice ch;
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_history_baseline(r, 2, NULL, 0, &r[2], f->rs, "t", f->a, &ch, &d);
    assert_null(b);
    assert_int_equal(ch.n_usable, 2);
    assert_int_equal(ch.n_needed, 1);
    assert_int_equal(d.n_errors, 0);
    /* a run measured with other metric definitions is not usable */
    r[0].metrics_digest = "sha256:other";
    b = tg_history_baseline(r, 2, NULL, 0, &r[2], f->rs, "t", f->a, &ch, &d);
    assert_null(b);
    assert_int_equal(ch.n_needed, 2);
    assert_int_equal(ch.n_other_metrics, 1);
    tg_diag_clear(&d);
}

static void test_baseline_last_ten(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 14, 1e5, 2e6);
    r[12].regressed = true;    /* a night that failed is not a baseline */
    tg_hist_choice ch;
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_history_baseline(r, 14, NULL, 0, &r[14], f->rs, "t", f->a, &ch, &d);
    assert_non_null(b);
    assert_int_equal(ch.n_used, 10);
    assert_int_equal(ch.n_usable, 13);
    assert_string_equal(ch.used[0]->label, "n4");
    assert_string_equal(ch.used[9]->label, "n14");
    for (size_t i = 0; i < ch.n_used; i++) assert_string_not_equal(ch.used[i]->label, "n13");
    assert_int_equal(b->n_runs, 10);
    assert_non_null(strstr(b->path, "10 runs, n4 .. n14"));
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_baseline_outlier_named(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 6, 1e5, 2e6);
    r[3].metrics[0].value *= 1.5;   /* one bad night, never judged */
    tg_hist_choice ch;
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_history_baseline(r, 6, NULL, 0, &r[6], f->rs, "t", f->a, &ch, &d);
    assert_non_null(b);
    const tg_baseline_metric *m = tg_baseline_find(b, "gpu-time-regression");
    assert_non_null(m);
    assert_int_equal(m->n_kept_outliers, 1);
    assert_int_equal(m->kept_outliers[0], 3);
    /* the warning names it */
    bool named = false;
    for (size_t i = 0; i < d.n; i++) named |= strstr(d.msgs[i].text, "n4") != NULL;
    assert_true(named);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_baseline_accept_and_cut(void **state)
{
    fx *f = *state;
    /* 12 nights, then 8 nights 10% slower in GPU time, never accepted */
    tg_hist_run *r = series(f, 20, 1e5, 2e6);
    for (size_t i = 12; i < 21; i++) r[i].metrics[0].value *= 1.10;
    tg_hist_choice ch;
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_history_baseline(r, 20, NULL, 0, &r[20], f->rs, "t", f->a, &ch, &d);
    assert_non_null(b);
    assert_non_null(ch.cut_label);
    assert_string_equal(ch.cut_label, "n13");
    assert_string_equal(ch.used[ch.n_used - 1]->label, "n12");
    tg_baseline_free(b);
    /* accepted at n13: the baseline is the slow nights from there on */
    tg_hist_accept acc = {.workload = "w1", .label = "n13", .run_id = 13, .reason = "new kernel"};
    b = tg_history_baseline(r, 20, &acc, 1, &r[20], f->rs, "t", f->a, &ch, &d);
    assert_non_null(b);
    assert_ptr_equal(ch.since, &acc);
    assert_null(ch.cut_label);
    assert_int_equal(ch.n_used, 8);
    assert_string_equal(ch.used[0]->label, "n13");
    tg_baseline_free(b);
    /* a slow night that failed before the accept is part of the new normal */
    r[13].regressed = true;
    r[13].epoch = 0;
    b = tg_history_baseline(r, 20, &acc, 1, &r[20], f->rs, "t", f->a, &ch, &d);
    assert_int_equal(ch.n_used, 8);
    tg_baseline_free(b);
    /* one that failed against the accepted baseline is not */
    r[13].epoch = 13;
    b = tg_history_baseline(r, 20, &acc, 1, &r[20], f->rs, "t", f->a, &ch, &d);
    assert_int_equal(ch.n_used, 7);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* A regression that was fixed: the runs after the fix are the normal
** again, not the runs before the regression (a baseline stuck there would
** never move on). */
static void test_baseline_after_fix(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 36, 1e5, 2e6);
    for (size_t i = 12; i < 24; i++) r[i].metrics[0].value *= 1.10;
    tg_hist_choice ch;
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_history_baseline(r, 36, NULL, 0, &r[36], f->rs, "t", f->a, &ch, &d);
    assert_non_null(b);
    assert_null(ch.cut_label);
    assert_int_equal(ch.n_used, 10);
    assert_string_equal(ch.used[0]->label, "n27");
    assert_string_equal(ch.used[9]->label, "n36");
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_view(void **state)
{
    fx *f = *state;
    tg_hist_run *r = series(f, 29, 1e5, 2e6);
    /* from n21 on, a new kernel adds 3% GPU time */
    for (size_t i = 20; i < 30; i++) {
        r[i].metrics[0].value *= 1.03;
        r[i].work = work(f->a, 1e5 - 1e4, 3e3);
    }
    r[3].workload = "w0";   /* another workload's run: a series of its own */
    tg_hist_accept acc = {.workload = "w1", .label = "n21", .run_id = 21, .reason = "spin kernel on purpose"};
    tg_hist_view v;
    tg_cp_opts opts = TG_CP_OPTS_DEFAULT;
    assert_true(tg_history_view(r, 30, &acc, 1, &opts, f->a, &v));
    assert_int_equal(v.n_series, 4);
    const tg_hist_series *s = NULL;
    for (size_t i = 0; i < v.n_series; i++)
        if (!strcmp(v.series[i].workload, "w1") && !strcmp(v.series[i].rule, "gpu-time-regression")) s = &v.series[i];
    assert_non_null(s);
    assert_int_equal(s->n, 29);
    assert_int_equal(s->n_changes, 1);
    const tg_hist_change *c = &s->changes[0];
    assert_string_equal(c->label, "n21");
    assert_true(c->regression);
    assert_true(fabs(c->change - 0.03) < 0.005);
    assert_true(c->p <= 0.001);
    assert_ptr_equal(c->accepted, &acc);
    bool spin = false;
    for (size_t i = 0; i < c->cmp.n_contributors; i++)
        spin |= !strcmp(c->cmp.contributors[i].name, "spin") && c->cmp.contributors[i].status == TG_CONTRIB_NEW;
    assert_true(spin);
    /* bands: none before 3 runs, then around the value */
    assert_true(isnan(s->band_lo[2]));
    assert_true(s->band_lo[10] < s->values[10] && s->values[10] < s->band_hi[10]);

    /* JSON: the change point with what the issue asks for */
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    assert_int_equal(tg_history_write_json(mf, &v), TG_OK);
    fclose(mf);
    assert_non_null(strstr(buf, "\"change_points\""));
    assert_non_null(strstr(buf, "\"label\": \"n21\""));
    assert_non_null(strstr(buf, "\"contributors\""));
    assert_non_null(strstr(buf, "spin kernel on purpose"));
    free(buf);
    mf = open_memstream(&buf, &len);
    assert_int_equal(tg_history_write_text(mf, &v), TG_OK);
    fclose(mf);
    assert_non_null(strstr(buf, "change point at n21"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_digest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_of, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_young, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_last_ten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_outlier_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_accept_and_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_after_fix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
