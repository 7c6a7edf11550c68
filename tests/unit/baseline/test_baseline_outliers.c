/*
** Unit tests of the outlier guard and the robust band (docs/regressions.md,
** "Outlier runs" and "The spread"), on hand-built runs of the two
** regression metrics (iteration period, +-20% per iteration and +-3%
** between runs; GPU time, +-0.5% per iteration and +-0.02% between runs):
** - one outlier among n = 3, 4, 5, 10 runs, high and low, first or last,
**   on each metric: refused (TG_EUSAGE) naming that run and the metric,
**   no other run named; with keep_outliers recorded, listed, and a check
**   at the outlier's value is outside the band (a regression when high);
** - two runs that disagree: both named; two that agree: recorded;
** - near-identical runs and runs with realistic per-iteration noise: no
**   refusal at any n;
** - the band: never below 0 for a period, robust at 3 and 4 runs (one odd
**   run moves it by at most one order statistic);
** - kept_outliers survives a write and a load; a bad entry is refused.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "baseline/baseline.h"
#include "common/stats.h"
#include "run_builder.h"

#define MS 1e6
#define PERIOD "iteration-time-regression"
#define GPU "gpu-time-regression"

static double param_of(const void *ctx, const char *rule, const char *param, double dflt)
{
    (void)ctx;
    if (!strcmp(param, "run_noise")) return !strcmp(rule, GPU) ? 0.002 : 0.15;
    if (!strcmp(param, "min_change")) return !strcmp(rule, GPU) ? 0.02 : 0.05;
    return dflt;
}

static const char *samples_of(const void *ctx, const char *rule)
{
    (void)ctx;
    return !strcmp(rule, GPU) ? "gpu_time" : "period";
}

static const tg_baseline_rules rules = {.param = param_of, .samples = samples_of};

static const char *const names[] = {"r0.sqlite", "r1.sqlite", "r2.sqlite", "r3.sqlite", "r4.sqlite", "r5.sqlite",
                                    "r6.sqlite", "r7.sqlite", "r8.sqlite", "r9.sqlite", "r10.sqlite", "r11.sqlite"};

/* Run-to-run jitter of unchanged run i, in [-1, 1]: a fixed pattern. */
static double jitter(size_t i)
{
    static const double j[] = {0.3, -1, 0.8, -0.2, 1, -0.6, 0.1, -0.9, 0.5, 0};
    return j[i % 10];
}

/* One trace of both metrics: period p, GPU time g, 50 samples each. */
static void add_run(tg_run_result *run, size_t i, double p, double g, double p_noise, double g_noise)
{
    tg_trace_result *t = tb_trace(run, names[i], "NVIDIA H200", "3.11.0");
    double *ps = tb_values(run, 50, p, p_noise * p, (unsigned)(7 * i + 1));
    double *gs = tb_values(run, 50, g, g_noise * g, (unsigned)(7 * i + 2));
    tb_rule(run, t, PERIOD, "p50(period)", 1, p, ps, 50);
    tb_rule(run, t, GPU, "p50(gpu_time)", 1, g, gs, 50);
}

/* n runs of unchanged code, run `odd` (n: none) multiplied by `factor`
** on `rule`'s metric. */
static tg_run_result *series(size_t n, size_t odd, const char *rule, double factor)
{
    tg_run_result *run = tb_run_new();
    for (size_t i = 0; i < n; i++) {
        double p = 30 * MS * (1 + 0.03 * jitter(i)), g = 11.7 * MS * (1 + 0.0002 * jitter(i + 3));
        if (i == odd) {
            if (!strcmp(rule, PERIOD)) p *= factor;
            else g *= factor;
        }
        add_run(run, i, p, g, 0.2, 0.005);
    }
    return run;
}

/* Does some error of d contain needle? */
static bool said(const tg_diag *d, const char *needle, const char *and_too)
{
    for (size_t i = 0; i < d->n; i++)
        if (strstr(d->msgs[i].text, needle) && (!and_too || strstr(d->msgs[i].text, and_too))) return true;
    return false;
}

/* A current run at period p and GPU time g. */
static tg_run_result *current(double p, double g)
{
    tg_run_result *run = tb_run_new();
    add_run(run, 11, p, g, 0.2, 0.005);
    return run;
}

static const tg_rule_result *result(const tg_run_result *run, const char *rule)
{
    for (size_t i = 0; i < run->traces[0].n_results; i++)
        if (!strcmp(run->traces[0].results[i].rule, rule)) return &run->traces[0].results[i];
    fail_msg("no result for %s", rule);
    return NULL;
}

static void test_one_outlier(void **state)
{
    (void)state;
    static const size_t ns[] = {3, 4, 5, 10};
    static const char *const metrics[] = {PERIOD, GPU};
    for (size_t a = 0; a < 4; a++)
        for (size_t m = 0; m < 2; m++)
            for (int high = 0; high < 2; high++)
                for (int last = 0; last < 2; last++) {
                    size_t n = ns[a], odd = last ? n - 1 : 0;
                    const char *rule = metrics[m];
                    /* the regressed run's size: +60% / -40% period, +10% / -10% GPU time */
                    double factor = m == 0 ? (high ? 1.6 : 0.6) : (high ? 1.1 : 0.9);
                    char what[96];
                    snprintf(what, sizeof what, "n=%zu %s %s outlier at run %zu", n, rule, high ? "high" : "low",
                             odd);
                    tg_run_result *run = series(n, odd, rule, factor);
                    tg_diag d;
                    tg_diag_init(&d);
                    tg_baseline *b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d);
                    if (b) fail_msg("%s: recorded", what);
                    char who[64];
                    snprintf(who, sizeof who, "run %s is inconsistent", names[odd]);
                    if (!said(&d, who, rule)) fail_msg("%s: not named (%s)", what, d.n ? d.msgs[0].text : "");
                    assert_true(d.status == TG_EUSAGE);
                    for (size_t i = 0; i < n; i++) {
                        snprintf(who, sizeof who, "run %s is", names[i]);
                        if (i != odd && said(&d, who, NULL)) fail_msg("%s: run %zu named too", what, i);
                    }
                    tg_diag_clear(&d);

                    /* kept: listed, left out, and its size is outside the band */
                    tg_diag_init(&d);
                    b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", true, &d);
                    if (!b) fail_msg("%s: not recorded with keep_outliers", what);
                    assert_int_equal(b->format_version, TG_BASELINE_FORMAT_OUTLIERS);
                    const tg_baseline_metric *bm = tg_baseline_find(b, rule);
                    assert_int_equal(bm->n_kept_outliers, 1);
                    assert_int_equal(bm->kept_outliers[0], odd);
                    assert_int_equal(bm->n_samples_total, 50 * (n - 1));
                    tg_spread sp;
                    assert_true(tg_baseline_spread(b, bm, param_of(NULL, rule, "run_noise", NAN), &sp));
                    double v = bm->runs[odd];
                    if (!(v < sp.lo || v > sp.hi)) fail_msg("%s: the kept outlier is inside the band", what);
                    tg_run_result *cur = m == 0 ? current(v, 11.7 * MS) : current(30 * MS, v);
                    tg_diag_clear(&d);
                    tg_diag_init(&d);
                    assert_int_equal(tg_baseline_apply_with(b, &rules, cur, false, &d), TG_OK);
                    const tg_rule_result *r = result(cur, rule);
                    assert_true(r->baseline.outside_band);
                    if (high && r->verdict != TG_V_FAIL) fail_msg("%s: a change its size passed: %s", what, r->message);
                    if (!high) assert_true(r->baseline.improvement);
                    assert_non_null(strstr(r->message, "the baseline keeps 1 outlier run"));
                    tb_run_free(cur);
                    tg_baseline_free(b);
                    tg_diag_clear(&d);
                    tb_run_free(run);
                }
}

static void test_unchanged_series(void **state)
{
    (void)state;
    /* realistic noise: +-3% period, +-0.02% GPU time between runs, +-20% /
    ** +-0.5% per iteration; and near-identical runs */
    for (size_t n = 2; n <= 10; n++) {
        tg_run_result *run = series(n, n, PERIOD, 1);
        tg_diag d;
        tg_diag_init(&d);
        tg_baseline *b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d);
        if (!b) fail_msg("n=%zu: unchanged runs refused: %s", n, d.n ? d.msgs[0].text : "");
        assert_int_equal(b->format_version, TG_BASELINE_FORMAT_PLAIN);
        tg_baseline_free(b);
        tg_diag_clear(&d);
        tb_run_free(run);

        run = tb_run_new();
        for (size_t i = 0; i < n; i++) add_run(run, i, 30 * MS + (double)i, 11.7 * MS, 0.2, 0.005);
        tg_diag_init(&d);
        b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d);
        if (!b) fail_msg("n=%zu: near-identical runs refused: %s", n, d.n ? d.msgs[0].text : "");
        /* their band is the floor, not 0 wide */
        tg_spread sp;
        assert_true(tg_baseline_spread(b, tg_baseline_find(b, GPU), 0.002, &sp));
        assert_true(sp.spread >= TG_BASELINE_MIN_REL_NOISE * 11.7 * MS * 0.999);
        tg_baseline_free(b);
        tg_diag_clear(&d);
        tb_run_free(run);
    }
}

static void test_two_runs(void **state)
{
    (void)state;
    /* GPU time +10%: 50 x the 0.2% assumed; both named */
    tg_run_result *run = series(2, 1, GPU, 1.1);
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d));
    assert_true(said(&d, "runs r0.sqlite and r1.sqlite disagree on " GPU, "no telling which one is odd"));
    tg_diag_clear(&d);
    /* kept: both recorded as they are (no telling which to leave out) */
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", true, &d);
    assert_non_null(b);
    assert_int_equal(tg_baseline_find(b, GPU)->n_kept_outliers, 0);
    assert_true(said(&d, "disagree on " GPU, "both are recorded"));
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
    /* period +60% is within 6 x 15%: recorded (the GPU time would name it) */
    run = series(2, 1, PERIOD, 1.6);
    tg_diag_init(&d);
    b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d);
    assert_non_null(b);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

static void test_band_robust_and_clamped(void **state)
{
    (void)state;
    /* 3 runs of 1, 10, 19 ms: 10 +- 3 x 1.495 x 1.4826 x 9 ms reaches
    ** below 0: clamped */
    tg_run_result *run = tb_run_new();
    const double v[] = {1 * MS, 10 * MS, 19 * MS};
    for (size_t i = 0; i < 3; i++) add_run(run, i, v[i], 11.7 * MS, 0.01, 0.005);
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", false, &d);
    assert_non_null(b);
    tg_spread sp;
    assert_true(tg_baseline_spread(b, tg_baseline_find(b, PERIOD), 0.15, &sp));
    assert_true(sp.measured && sp.clamped);
    assert_true(sp.lo == 0);
    assert_true(fabs(sp.hi - (10 * MS + 3 * 1.495 * 1.4826 * 9 * MS)) < 1);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);

    /* 4 runs, one 3x the others (kept): the band is that of the other three */
    run = tb_run_new();
    const double w[] = {30 * MS, 30.6 * MS, 29.4 * MS, 90 * MS};
    for (size_t i = 0; i < 4; i++) add_run(run, i, w[i], 11.7 * MS, 0.2, 0.005);
    tg_diag_init(&d);
    b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", true, &d);
    assert_non_null(b);
    const tg_baseline_metric *m = tg_baseline_find(b, PERIOD);
    assert_int_equal(m->n_kept_outliers, 1);
    assert_true(tg_baseline_spread(b, m, 0.15, &sp));
    assert_true(sp.measured && sp.n_runs == 3 && sp.n_outliers == 1);
    assert_true(sp.value == 30 * MS);
    assert_true(sp.hi < 36 * MS);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

static void test_file_round_trip(void **state)
{
    (void)state;
    tg_run_result *run = series(3, 2, GPU, 1.1);
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_opts(run, &rules, "t", "2025-03-01", true, &d);
    assert_non_null(b);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(tg_baseline_write(b, f), TG_OK);
    fclose(f);
    assert_non_null(strstr(text, "format_version: 2\n"));
    assert_non_null(strstr(text, "    kept_outliers: [2]\n"));
    tg_baseline *l = tg_baseline_load_string(text, len, "k.yaml", &d);
    assert_non_null(l);
    assert_int_equal(l->format_version, 2);
    const tg_baseline_metric *m = tg_baseline_find(l, GPU);
    assert_int_equal(m->n_kept_outliers, 1);
    assert_int_equal(m->kept_outliers[0], 2);
    assert_int_equal(tg_baseline_find(l, PERIOD)->n_kept_outliers, 0);
    tg_baseline_free(l);
    static const struct { const char *with, *needle; } bad[] = {
        {"    kept_outliers: [3]\n", "names run 3, which is not one of its runs"},
        {"    kept_outliers: [2, 2]\n", "names run 2 twice"},
        {"    kept_outliers: [0, 2]\n", "leaves fewer than two runs"},
        {"    kept_outliers: 2\n", "kept_outliers must be a list"},
        {"    kept_outliers: [-1]\n", "must be a whole number"},
    };
    const char *at = strstr(text, "    kept_outliers: [2]\n");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *edited = NULL;
        size_t elen = 0;
        FILE *e = open_memstream(&edited, &elen);
        fprintf(e, "%.*s%s%s", (int)(at - text), text, bad[i].with, at + strlen("    kept_outliers: [2]\n"));
        fclose(e);
        tg_diag bd;
        tg_diag_init(&bd);
        assert_null(tg_baseline_load_string(edited, elen, "k.yaml", &bd));
        if (!said(&bd, bad[i].needle, NULL)) fail_msg("'%s': %s", bad[i].with, bd.n ? bd.msgs[0].text : "");
        tg_diag_clear(&bd);
        free(edited);
    }
    free(text);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_outlier),
        cmocka_unit_test(test_unchanged_series),
        cmocka_unit_test(test_two_runs),
        cmocka_unit_test(test_band_robust_and_clamped),
        cmocka_unit_test(test_file_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
