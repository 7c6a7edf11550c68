/*
** Unit tests of tg_baseline_apply_with (docs/regressions.md): verdicts of
** regression rules against a baseline recorded from hand-built runs
** (regression, improvement, below min_change, not significant within the
** run, the band measured with 3 runs or assumed from run_noise, the
** inconclusive outcome, lower is worse, nothing to test within the run),
** trend info for other metrics, the errors that keep a gate from passing
** what it could not judge (not in the baseline, no value, missing data),
** and the GPU / schema / marker mismatch guard with and without
** allow_mismatch. Params come through a tg_baseline_rules lookup filled by
** the test (min_change / alpha / run_noise per rule), the way
** baseline_rules.c feeds them from a compiled rule set. Expected bands are
** worked out in the comments (sd from Python's statistics.stdev).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "baseline/baseline.h"
#include "common/stats.h"
#include "common/units.h"
#include "run_builder.h"

#define MS 1e6
#define RULE "iteration-time-regression"

typedef struct test_params {
    double min_change, alpha, run_noise;
} test_params;

static double param_of(const void *ctx, const char *rule, const char *param, double dflt)
{
    const test_params *p = ctx;
    if (strcmp(rule, RULE) && strcmp(rule, "throughput")) return dflt;
    if (!strcmp(param, "min_change") && !isnan(p->min_change)) return p->min_change;
    if (!strcmp(param, "alpha") && !isnan(p->alpha)) return p->alpha;
    if (!strcmp(param, "run_noise") && !isnan(p->run_noise)) return p->run_noise;
    return dflt;
}

static const char *describe(const void *ctx, const char *rule)
{
    (void)ctx;
    (void)rule;
    return "period";
}

/* A baseline of n_runs runs with per-run p50 values `centres`, each with
** 100 period samples centre +- 0.5 ms, recorded through the real path. */
static tg_baseline *make_baseline(const double *centres, size_t n_runs, const char *gpus,
                                  const char *schema)
{
    tg_run_result *run = tb_run_new();
    for (size_t i = 0; i < n_runs; i++) {
        tg_trace_result *t = tb_trace(run, "base.sqlite", gpus, schema);
        double *s = tb_values(run, 100, centres[i], 0.5 * MS, (unsigned)i + 1);
        tb_rule(run, t, RULE, "p50(period)", 1, centres[i], s, 100);
        tb_rule(run, t, "trend", "p50(period)", 0, centres[i], s, 100);
    }
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline_rules rules = {.samples = describe};
    tg_baseline *b = tg_baseline_record_with(run, &rules, "0.1.0", "2025-03-01", &d);
    assert_non_null(b);
    tg_diag_clear(&d);
    tb_run_free(run);
    return b;
}

/* A current run: one trace, the regression rule at `value` with 95 samples
** around it (spread +- 0.5 ms), a trend-only rule and an unrecorded rule. */
static tg_run_result *make_current(double value, const char *gpus, const char *schema)
{
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "/ci/current.sqlite", gpus, schema);
    double *s = tb_values(run, 95, value, 0.5 * MS, 77);
    tb_rule(run, t, RULE, "p50(period)", 1, value, s, 95);
    tb_rule(run, t, "trend", "p50(period)", 0, value, s, 95);
    tb_rule(run, t, "new-rule", "p50(gpu_time)", 1, 5 * MS, s, 95);
    tb_rule(run, t, "sync-memcpy", NULL, 0, NAN, NULL, 0)->verdict = TG_V_FAIL;
    return run;
}

static tg_rule_result *result_of(tg_run_result *run, const char *id)
{
    for (size_t i = 0; i < run->traces[0].n_results; i++)
        if (!strcmp(run->traces[0].results[i].rule, id)) return &run->traces[0].results[i];
    fail_msg("no result %s", id);
    return NULL;
}

static tg_status apply_noise(const tg_baseline *b, tg_run_result *run, double min_change, double alpha,
                             double run_noise, bool allow, tg_diag *d)
{
    test_params p = {min_change, alpha, run_noise};
    tg_baseline_rules rules = {.ctx = &p, .param = param_of, .samples = describe};
    return tg_baseline_apply_with(b, &rules, run, allow, d);
}

static tg_status apply(const tg_baseline *b, tg_run_result *run, double min_change, double alpha,
                       bool allow, tg_diag *d)
{
    test_params p = {min_change, alpha, NAN};
    tg_baseline_rules rules = {.ctx = &p, .param = param_of, .samples = describe};
    return tg_baseline_apply_with(b, &rules, run, allow, d);
}

static void expect_message(const tg_rule_result *r, const char *needle)
{
    if (!r->message || !strstr(r->message, needle))
        fail_msg("message '%s' lacks '%s'", r->message ? r->message : "(null)", needle);
}

static void test_regression_fails(void **state)
{
    (void)state;
    static const double runs[] = {29.5 * MS, 30.5 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    tg_run_result *run = make_current(48 * MS, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(d.n, 0);
    tg_rule_result *r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_FAIL);
    const tg_baseline_cmp *c = &r->baseline;
    assert_true(c->present && c->regression && !c->improvement);
    /* baseline value: median of the per-run values (29.5 + 30.5) / 2 */
    assert_true(c->value == 30 * MS);
    assert_true(c->current == 48 * MS);
    assert_true(fabs(c->change - 0.6) < 1e-12);
    assert_int_equal(c->n_baseline, 200);
    assert_int_equal(c->n_current, 95);
    assert_true(c->p_value < 1e-20);             /* no overlap at all */
    /* 2 runs: the spread is assumed, run_noise 10% (the default) of 30 ms
    ** = 3 ms, larger than the runs' own sd 0.7071 ms: band 30 +- 9 ms */
    assert_false(c->band_measured);
    assert_int_equal(c->n_runs, 2);
    assert_true(fabs(c->spread - 0.1) < 1e-12);
    assert_true(fabs(c->band_lo - 21 * MS) < 1e-3 && fabs(c->band_hi - 39 * MS) < 1e-3);
    assert_true(c->outside_band);
    expect_message(r, "p50(period) 48 ms vs baseline 30 ms (+60%, p=");
    /* the change reads as every report's baseline line prints it: one
    ** formatter (units.h), not a second one with another precision */
    char chg[TG_FMT_BUF], said[TG_FMT_BUF + 4];
    snprintf(said, sizeof said, "(%s, p=", tg_fmt_change(chg, sizeof chg, c->change));
    expect_message(r, said);
    expect_message(r, "n=95 now vs 200 in the baseline): regression beyond the 5% threshold, outside the "
                      "run-to-run band 21 ms..39 ms (3 x 10% run-to-run spread assumed with 2 baseline runs), "
                      "significant within the run at alpha 0.01");

    /* the trend-only rule gets numbers, not a verdict */
    tg_rule_result *t = result_of(run, "trend");
    assert_int_equal(t->verdict, TG_V_PASS);
    assert_string_equal(t->message, "ok");
    assert_true(t->baseline.present);
    assert_false(t->baseline.regression);
    assert_true(fabs(t->baseline.change - 0.6) < 1e-12);
    /* a regression rule the baseline does not know: an error, not a skip */
    tg_rule_result *n = result_of(run, "new-rule");
    assert_int_equal(n->verdict, TG_V_ERROR);
    assert_int_equal(n->error_status, TG_EUSAGE);
    expect_message(n, "is not in the baseline");
    assert_false(n->baseline.present);
    /* a rule without metric is untouched */
    assert_int_equal(result_of(run, "sync-memcpy")->verdict, TG_V_FAIL);
    assert_false(result_of(run, "sync-memcpy")->baseline.present);

    tb_run_free(run);

    /* when the evaluator rendered the rule's message, it leads */
    run = make_current(48 * MS, "NVIDIA H200", "3.11.0");
    r = result_of(run, RULE);
    r->verdict = TG_V_PASS;
    r->message = "p50 iteration period 48 ms over 95 steady iterations";
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(r->verdict, TG_V_FAIL);
    expect_message(r, "p50 iteration period 48 ms over 95 steady iterations vs baseline 30 ms "
                      "(+60%, p=");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_improvement_passes(void **state)
{
    (void)state;
    static const double runs[] = {29.5 * MS, 30.5 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    tg_run_result *run = make_current(20 * MS, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    tg_rule_result *r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_true(r->baseline.improvement);
    assert_false(r->baseline.regression);
    expect_message(r, "(-33.3%");
    expect_message(r, "improvement beyond the 5% threshold");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* +3%: clearly significant with 95 vs 200 tight samples, but below the
** default 5%; the same run fails once min_change is tightened to 1%. */
static void test_min_change(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);
    tg_run_result *run = make_current(30.9 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    tg_rule_result *r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_false(r->baseline.regression || r->baseline.improvement);
    assert_true(r->baseline.p_value < 0.01);
    expect_message(r, "within the 5% threshold");
    tb_run_free(run);

    /* min_change 1%: +3% is beyond it and significant, but inside what the
    ** assumed run-to-run noise can do (30 +- 3 x 10% x 30 = 21..39 ms):
    ** inconclusive, asking for more baseline runs */
    run = make_current(30.9 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, 0.01, NAN, false, &d), TG_OK);
    r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_INCONCLUSIVE);
    assert_true(r->baseline.inconclusive);
    assert_false(r->baseline.regression);
    expect_message(r, "inconclusive: beyond the 1% threshold and significant within the run, but inside "
                      "21 ms..39 ms");
    expect_message(r, "record at least 3 runs in the baseline");
    expect_message(r, "; 1 more baseline run would decide it");
    tb_run_free(run);

    /* where runs are known to agree (run_noise 0.5%: band 30 +- 0.45 ms) it fails */
    run = make_current(30.9 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply_noise(b, run, 0.01, NAN, 0.005, false, &d), TG_OK);
    r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_FAIL);
    expect_message(r, "beyond the 1% threshold, outside the run-to-run band 29.6 ms..30.4 ms");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* +10% in the metric but the per-row samples are the baseline's own: the
** U test sees no shift (p ~ 1), so no regression. */
static void test_not_significant(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "cur.sqlite", "NVIDIA H200", "3.11.0");
    double *s = tb_values(run, 100, 30 * MS, 0.5 * MS, 1);     /* = baseline run 1 */
    tb_rule(run, t, RULE, "p50(period)", 1, 33 * MS, s, 100);
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    tg_rule_result *r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_true(r->baseline.p_value > 0.1);
    expect_message(r, "beyond the 5% threshold but not significant within the run at alpha 0.01");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* Three runs 27, 30, 33 ms: median 30, MAD 3, band 30 +- 3 * 1.4826 * 3 =
** 30 +- 13.3434 -> [16.6566, 43.3434] ms. 40 ms (+33%, significant) is
** inside: pass. 45 ms is outside: fail. */
static void test_band_three_runs(void **state)
{
    (void)state;
    static const double runs[] = {27 * MS, 30 * MS, 33 * MS};
    tg_baseline *b = make_baseline(runs, 3, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);
    tg_run_result *run = make_current(40 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    tg_rule_result *r = result_of(run, RULE);
    /* 30 +- 3 x b_3 1.495 x 1.4826 x MAD 3 ms = 30 +- 19.948 ms */
    assert_true(fabs(r->baseline.band_lo - 10.0516 * MS) < 1e3);
    assert_true(fabs(r->baseline.band_hi - 49.9484 * MS) < 1e3);
    assert_false(r->baseline.outside_band);
    assert_true(r->baseline.p_value < 0.01);
    assert_int_equal(r->verdict, TG_V_PASS);
    expect_message(r, "inside the run-to-run band 10.1 ms..49.9 ms (3 x the spread of 3 baseline runs)");
    tb_run_free(run);

    /* 18 ms (-40%, faster) inside the same band: called an improvement,
    ** not claimed */
    run = make_current(18 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_PASS);
    expect_message(r, "an improvement beyond the 5% threshold but inside the run-to-run band 10.1 ms..49.9 ms");
    tb_run_free(run);

    run = make_current(52 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    r = result_of(run, RULE);
    assert_true(r->baseline.outside_band);
    assert_int_equal(r->verdict, TG_V_FAIL);
    expect_message(r, "outside the run-to-run band 10.1 ms..49.9 ms");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* lower_is_worse: a drop is the regression, a rise the improvement. */
static void test_lower_is_worse(void **state)
{
    (void)state;
    tg_run_result *base = tb_run_new();
    tg_trace_result *t = tb_trace(base, "b.sqlite", NULL, NULL);
    tb_rule(base, t, "throughput", "mean(kernels)", -1, 100, tb_values(base, 50, 100, 2, 3), 50);
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(base, NULL, "0.1.0", "2025-03-01", &d);
    tb_run_free(base);

    tg_run_result *run = tb_run_new();
    t = tb_trace(run, "c.sqlite", NULL, NULL);
    tb_rule(run, t, "throughput", "mean(kernels)", -1, 80, tb_values(run, 50, 80, 2, 4), 50);
    /* one run, run_noise 10%: band 100 +- 30, so -20% is inconclusive ... */
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(run->traces[0].results[0].verdict, TG_V_INCONCLUSIVE);
    /* ... and with run_noise 2% (band 100 +- 6) a regression */
    assert_int_equal(apply_noise(b, run, NAN, NAN, 0.02, false, &d), TG_OK);
    assert_int_equal(run->traces[0].results[0].verdict, TG_V_FAIL);
    assert_true(run->traces[0].results[0].baseline.regression);
    expect_message(&run->traces[0].results[0], "mean(kernels) 80 vs baseline 100 (-20%");
    tb_run_free(run);

    run = tb_run_new();
    t = tb_trace(run, "c.sqlite", NULL, NULL);
    tb_rule(run, t, "throughput", "mean(kernels)", -1, 120, tb_values(run, 50, 120, 2, 4), 50);
    assert_int_equal(apply_noise(b, run, NAN, NAN, 0.02, false, &d), TG_OK);
    assert_int_equal(run->traces[0].results[0].verdict, TG_V_PASS);
    assert_true(run->traces[0].results[0].baseline.improvement);
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* Without per-row samples there is no within-run test: with fewer than 3
** runs (the spread only assumed) +100% is inconclusive, saying why; with 3
** runs the measured band decides alone (runs 30, 31, 32: spread
** max(1.4826 x 1, sd 1) = 1.4826 ms, band 31 +- 4.45 ms). */
static void test_without_samples(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    for (int n_runs = 1; n_runs <= 3; n_runs += 2) {
        tg_run_result *base = tb_run_new();
        for (int i = 0; i < n_runs; i++) {
            tg_trace_result *t = tb_trace(base, "b.sqlite", NULL, NULL);
            tb_rule(base, t, RULE, "p50(period)", 1, (30 + i) * MS, NULL, 0);
        }
        tg_baseline *b = tg_baseline_record_with(base, NULL, "0.1.0", "2025-03-01", &d);
        tb_run_free(base);
        tg_run_result *run = tb_run_new();
        tg_trace_result *t = tb_trace(run, "c.sqlite", NULL, NULL);
        tb_rule(run, t, RULE, "p50(period)", 1, 60 * MS, NULL, 0);
        assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
        tg_rule_result *r = &run->traces[0].results[0];
        assert_true(isnan(r->baseline.p_value));
        if (n_runs == 1) {
            assert_int_equal(r->verdict, TG_V_INCONCLUSIVE);
            expect_message(r, "p=n/a, n=0 now vs 0 in the baseline");
            expect_message(r, "with fewer than 10 values per side there is no within-run test");
            /* the trace is what is short (0 values), not only the baseline */
            expect_message(r, "this trace is too short to judge: capture at least 10 steady iterations (it gives "
                              "0 values), or record at least 3 runs in the baseline to measure the spread");
        } else {
            assert_int_equal(r->verdict, TG_V_FAIL);    /* 60 ms is far outside 31 +- 4.4 ms */
            assert_true(r->baseline.outside_band);
        }
        tb_run_free(run);
        tg_baseline_free(b);
    }
    tg_diag_clear(&d);
}

/* A trace cut to 3 steady iterations against a 2-run baseline of 200
** values (audit of issue 13): +68% is outside the assumed band (30 ms +-
** 3 x 15%), +10% inside it; both inconclusive, and the advice names the
** short trace, not only the baseline's runs. */
static void test_short_trace_advice(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);
    for (int k = 0; k < 2; k++) {
        double value = k == 0 ? 50.4 * MS : 33 * MS;
        tg_run_result *run = tb_run_new();
        tg_trace_result *t = tb_trace(run, "/ci/short.sqlite", "NVIDIA H200", "3.11.0");
        double *s = tb_values(run, 3, value, 0.5 * MS, 5);
        tb_rule(run, t, RULE, "p50(period)", 1, value, s, 3);
        assert_int_equal(apply_noise(b, run, NAN, NAN, 0.15, false, &d), TG_OK);
        tg_rule_result *r = result_of(run, RULE);
        assert_int_equal(r->verdict, TG_V_INCONCLUSIVE);
        assert_int_equal(r->baseline.n_current, 3);
        if (k == 0)
            expect_message(r, "no within-run test, and the spread is not measured; this trace is too short to "
                              "judge: capture at least 10 steady iterations (it gives 3 values), or record at "
                              "least 3 runs in the baseline to measure the spread");
        else
            expect_message(r, "record at least 3 runs in the baseline to measure the spread (and this trace gives "
                              "3 values, too few for the within-run test: capture at least 10 steady iterations)");
        /* what would decide it, counted: the runs the band needs, and the
        ** iterations the within-run test needs for a change this size at
        ** this trace's spread (docs/regressions.md) */
        expect_message(r, "; 1 more baseline run, or about ");
        expect_message(r, "steady iterations of this trace (it gives 3) would decide it");
        tb_run_free(run);
    }
    tg_diag_clear(&d);
    tg_baseline_free(b);
}

/* A regression rule the baseline holds but the trace cannot give a value
** for is an error saying why (exit 3), never a pass; a result already an
** error for missing data keeps its message; one skipped for missing data
** (--missing-data=skip) becomes an error too: the baseline asks for it. */
static void test_missing_values(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS};
    tg_baseline *b = make_baseline(runs, 1, "G", "3.0.0");
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "c.sqlite", "G", "3.0.0");
    tg_rule_result *nan = tb_rule(run, t, RULE, "p50(period)", 1, NAN, NULL, 0);
    nan->metric_missing = "no iteration: none of its 12 NVTX ranges matches the iteration pattern ^x$";
    tg_rule_result *e = tb_rule(run, t, "trend", "p50(period)", 1, NAN, NULL, 0);
    e->verdict = TG_V_ERROR;
    e->missing_data = true;
    e->message = "needs NVTX";
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(t->results[0].verdict, TG_V_ERROR);
    assert_int_equal(t->results[0].error_status, TG_ETRACE);
    expect_message(&t->results[0], "p50(period) cannot be computed on this trace: no iteration: none of its 12 "
                                   "NVTX ranges matches the iteration pattern ^x$");
    assert_int_equal(t->results[1].verdict, TG_V_ERROR);
    assert_string_equal(t->results[1].message, "needs NVTX");
    tb_run_free(run);

    /* skipped for missing data (--missing-data=skip): an error all the same */
    run = tb_run_new();
    t = tb_trace(run, "c.sqlite", "G", "3.0.0");
    tg_rule_result *s = tb_rule(run, t, RULE, "p50(period)", 1, NAN, NULL, 0);
    s->verdict = TG_V_SKIP;
    s->missing_data = true;
    s->message = "rule iteration-time-regression needs NVTX ranges (table NVTX_EVENTS)";
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(s->verdict, TG_V_ERROR);
    assert_int_equal(s->error_status, TG_ETRACE);
    expect_message(s, "needs NVTX ranges (table NVTX_EVENTS); the baseline holds this rule's metric, so the "
                      "comparison cannot be skipped");
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_mismatch(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    b->path = "baselines/train.yaml";
    tg_diag d;
    tg_diag_init(&d);

    /* another GPU model: error naming both, results untouched */
    tg_run_result *run = make_current(48 * MS, "NVIDIA A100-SXM4-80GB", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_EUSAGE);
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "NVIDIA A100-SXM4-80GB"));
    assert_non_null(strstr(d.msgs[0].text, "NVIDIA H200"));
    assert_non_null(strstr(d.msgs[0].text, "baselines/train.yaml"));
    assert_non_null(strstr(d.msgs[0].text, "--allow-mismatch"));
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_SKIP);
    assert_false(result_of(run, RULE)->baseline.present);
    tg_diag_clear(&d);

    /* allowed: a warning, and the comparison runs */
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, true, &d), TG_OK);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_FAIL);
    tb_run_free(run);
    tg_diag_clear(&d);

    /* schema major 2 vs 3 */
    tg_diag_init(&d);
    run = make_current(30 * MS, "NVIDIA H200", "2.9.1");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "2.9.1"));
    assert_non_null(strstr(d.msgs[0].text, "3.11.0"));
    tb_run_free(run);
    tg_diag_clear(&d);

    /* same major, other minor, other nsys: fine; unknown GPU names: not compared */
    tg_diag_init(&d);
    run = make_current(30 * MS, NULL, "3.25.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(d.n, 0);
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_PASS);
    tb_run_free(run);
    tg_diag_clear(&d);

    /* iterations on another marker (train_step vs ProfilerStep#N around it):
    ** an error naming both and the option that selects a marker */
    b->runs[0].iteration_marker = "ProfilerStep#N";
    b->runs[1].iteration_marker = "ProfilerStep#N";
    tg_diag_init(&d);
    run = make_current(48 * MS, "NVIDIA H200", "3.11.0");
    run->traces[0].iteration_marker = "train_step";
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "its iterations are train_step ranges"));
    assert_non_null(strstr(d.msgs[0].text, "recorded on ProfilerStep#N ranges"));
    assert_non_null(strstr(d.msgs[0].text, "--iteration-pattern"));
    assert_false(result_of(run, RULE)->baseline.present);
    tg_diag_clear(&d);
    tg_diag_init(&d);                                /* allowed: a warning */
    assert_int_equal(apply(b, run, NAN, NAN, true, &d), TG_OK);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    tg_diag_clear(&d);
    /* the same marker, or a baseline recorded before markers were: compared */
    run->traces[0].iteration_marker = "ProfilerStep#N";
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    tg_diag_clear(&d);
    run->traces[0].iteration_marker = "train_step";
    b->runs[0].iteration_marker = b->runs[1].iteration_marker = NULL;
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(d.n, 0);
    tb_run_free(run);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* The GPU time of the drv_train series (docs/regressions.md): runs of
** 607.648 and 607.328 us per step, gpu-time-regression's run_noise 0.2%:
** spread max(0.2% x 607.488 = 1.215 us, sd 0.226 us), band 607.488 +-
** 3.645 us. An extra launch worth +1.05% or +1.9% per step is outside it:
** with min_change 0.5% both fail, at the default 2% both pass. */
/* A baseline without its workload fingerprint (the `workload:` section
** removed, or listing no GPU work) would compare a wholly different trace
** as if it were the same one: refused, naming the file, unless
** allow_mismatch (a warning). A run without regression rules needs none. */
static void test_fingerprint_required(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS};
    tg_baseline *b = make_baseline(runs, 2, "NVIDIA H200", "3.11.0");
    b->path = "baselines/train.yaml";
    assert_non_null(b->workload);
    tg_workload *recorded = b->workload;
    tg_diag d;
    tg_diag_init(&d);
    tg_run_result *run = make_current(10 * MS, "NVIDIA H200", "3.11.0");   /* an "improvement" */
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);   /* with its fingerprint: judged */
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_PASS);
    tb_run_free(run);
    tg_diag_clear(&d);

    b->workload = NULL;
    tg_diag_init(&d);
    run = make_current(10 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_EUSAGE);
    assert_int_equal(d.n_errors, 1);
    assert_string_equal(d.msgs[0].text, "baselines/train.yaml carries no workload fingerprint (it has no "
                        "'workload' section), so a trace of another workload would be compared with it as if it "
                        "were the same one; record the baseline again ('tracegate baseline record -o FILE "
                        "TRACE...'), or pass --allow-mismatch to compare anyway");
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_SKIP);   /* never judged */
    tg_diag_clear(&d);
    tg_diag_init(&d);
    assert_int_equal(apply(b, run, NAN, NAN, true, &d), TG_OK);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    assert_non_null(strstr(d.msgs[0].text, "comparing anyway because of --allow-mismatch"));
    assert_int_equal(result_of(run, RULE)->verdict, TG_V_PASS);
    tb_run_free(run);
    tg_diag_clear(&d);

    /* present but empty: `workload: {gpu_time: 0, ops: []}` */
    tg_workload empty = {.gpu_time = 0, .period = NAN, .idle = NAN};
    b->workload = &empty;
    tg_diag_init(&d);
    run = make_current(10 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "(its 'workload' lists no GPU work)"));
    tb_run_free(run);
    tg_diag_clear(&d);

    /* a run without the baseline's regression rules: nothing to fingerprint */
    tg_diag_init(&d);
    run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "/ci/current.sqlite", "NVIDIA H200", "3.11.0");
    tb_rule(run, t, "trend", "p50(period)", 0, 30 * MS, NULL, 0);
    assert_int_equal(apply(b, run, NAN, NAN, false, &d), TG_OK);
    assert_int_equal(d.n, 0);
    tb_run_free(run);
    tg_diag_clear(&d);
    b->workload = recorded;
    tg_baseline_free(b);
}

static void test_drv_train_gpu_time(void **state)
{
    (void)state;
    static const double runs[] = {607648, 607328};
    tg_run_result *base = tb_run_new();
    for (size_t i = 0; i < 2; i++) {   /* 290 steps a run, within +-300 ns as measured */
        tg_trace_result *t = tb_trace(base, "drv_train.sqlite", "NVIDIA H200", "3.0.0");
        tb_rule(base, t, RULE, "p50(period)", 1, runs[i], tb_values(base, 290, runs[i], 300, (unsigned)i + 1), 290);
    }
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline_rules describe_only = {.samples = describe};
    tg_baseline *b = tg_baseline_record_with(base, &describe_only, "0.1.0", "2025-03-01", &d);
    assert_non_null(b);
    tb_run_free(base);
    for (int k = 0; k < 2; k++) {
        double grown = 607488 * (k == 0 ? 1.0105 : 1.019);
        tg_run_result *run = tb_run_new();
        tg_trace_result *t = tb_trace(run, "drv_train_run3.sqlite", "NVIDIA H200", "3.0.0");
        tb_rule(run, t, RULE, "p50(period)", 1, grown, tb_values(run, 290, grown, 300, 5), 290);
        assert_int_equal(apply_noise(b, run, 0.005, NAN, 0.002, false, &d), TG_OK);
        tg_rule_result *r = &t->results[0];
        assert_int_equal(r->verdict, TG_V_FAIL);
        assert_true(fabs(r->baseline.band_hi - (607488 + 3 * 0.002 * 607488)) < 1e-6);
        /* at the 2% gate: a pass, but said (a notice in every format: the
        ** message), not passed as "within the threshold" */
        assert_int_equal(apply_noise(b, run, 0.02, NAN, 0.002, false, &d), TG_OK);
        assert_int_equal(r->verdict, TG_V_PASS);
        assert_false(r->baseline.improvement);
        expect_message(r, k == 0 ? "(+1.05%, " : "(+1.9%, ");
        expect_message(r, "): significant, below the 2% gate: outside the run-to-run band");
        tb_run_free(run);

        /* the same size better: an improvement, called one */
        double shrunk = 607488 * (k == 0 ? 1 - 0.0105 : 1 - 0.019);
        run = tb_run_new();
        t = tb_trace(run, "drv_train_run3.sqlite", "NVIDIA H200", "3.0.0");
        tb_rule(run, t, RULE, "p50(period)", 1, shrunk, tb_values(run, 290, shrunk, 300, 5), 290);
        assert_int_equal(apply_noise(b, run, 0.02, NAN, 0.002, false, &d), TG_OK);
        r = &t->results[0];
        assert_int_equal(r->verdict, TG_V_PASS);
        assert_true(r->baseline.improvement);
        expect_message(r, "): an improvement, significant, below the 2% gate: outside the run-to-run band");
        /* inside the band and within the gate: nothing to say */
        tb_run_free(run);
        run = tb_run_new();
        t = tb_trace(run, "drv_train_run3.sqlite", "NVIDIA H200", "3.0.0");
        tb_rule(run, t, RULE, "p50(period)", 1, 607500, tb_values(run, 290, 607500, 300, 5), 290);
        assert_int_equal(apply_noise(b, run, 0.02, NAN, 0.002, false, &d), TG_OK);
        r = &t->results[0];
        expect_message(r, "within the 2% threshold");
        assert_false(r->baseline.improvement);
        tb_run_free(run);
    }
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

/* Params and rule descriptions from a compiled rule set (tg_baseline_apply
** and tg_baseline_rule_stats): min_change 20% in the rule file lets +15%
** pass, --set tightens it to 10% and the same run fails. */
static const char rules_yaml[] =
    "version: 1\n"
    "rules:\n"
    "  - id: iteration-time-regression\n"
    "    title: Iteration time regressed\n"
    "    severity: error\n"
    "    source: iteration\n"
    "    params: {min_change: 20%, alpha: 0.01}\n"
    "    metric: p50(period)\n"
    "    samples: period\n"
    "    regression: {direction: higher_is_worse}\n"
    "    message: \"p50 period {p50(period)}\"\n";

static tg_ruleset *load_rules(const tg_param_set *sets, size_t n_sets)
{
    char path[] = "/tmp/tg_baseline_rules_XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(rules_yaml, f);
    fclose(f);
    const char *paths[] = {path};
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load(paths, 1, sets, n_sets, &d);
    if (!rs) fail_msg("rules: %s", d.n ? d.msgs[0].text : "?");
    tg_diag_clear(&d);
    unlink(path);
    return rs;
}

static void test_params_from_ruleset(void **state)
{
    (void)state;
    static const double runs[] = {30 * MS, 30 * MS, 30.2 * MS};
    tg_baseline *b = make_baseline(runs, 3, "NVIDIA H200", "3.11.0");
    tg_diag d;
    tg_diag_init(&d);

    tg_ruleset *rs = load_rules(NULL, 0);
    tg_run_result *run = make_current(34.5 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(tg_baseline_apply(b, rs, run, false, &d), TG_OK);
    tg_rule_result *r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_PASS);
    /* +15% outside the band of three runs that agree: said, below the gate */
    expect_message(r, "(+15%, p=7.1e-49, n=95 now vs 300 in the baseline): significant, below the 20% gate: outside "
                      "the run-to-run band 29.9 ms..30.1 ms (3 x the spread of 3 baseline runs) and significant "
                      "within the run");

    /* what baseline.STAT reads during evaluation: value and band, per rule */
    tg_baseline_cmp *st = tg_baseline_rule_stats(b, rs, run->arena);
    assert_non_null(st);
    assert_true(st[0].present);
    assert_true(st[0].value == 30 * MS);
    assert_int_equal(st[0].n_baseline, 300);
    /* runs 30, 30, 30.2: MAD 0, so the floor: the standard error of one
    ** run's median from the samples (100 a run, +- 0.5 ms), above 0.1% */
    const tg_baseline_metric *bm = tg_baseline_find(b, RULE);
    double se = tg_stats_median_se(bm->samples, bm->n_samples, 100);
    assert_true(se > 0.001 * 30 * MS && se < 0.1 * MS);
    assert_true(fabs(st[0].band_lo - (30 * MS - 3 * se)) < 1 && fabs(st[0].band_hi - (30 * MS + 3 * se)) < 1);
    assert_true(isnan(st[0].p_value) && isnan(st[0].current));
    tb_run_free(run);
    tg_rules_free(rs);

    tg_param_set tight = {RULE, "min_change", "10%"};
    rs = load_rules(&tight, 1);
    run = make_current(34.5 * MS, "NVIDIA H200", "3.11.0");
    assert_int_equal(tg_baseline_apply(b, rs, run, false, &d), TG_OK);
    r = result_of(run, RULE);
    assert_int_equal(r->verdict, TG_V_FAIL);
    expect_message(r, "beyond the 10% threshold");
    expect_message(r, "outside the run-to-run band 29.9 ms..30.1 ms (3 x the spread of 3 baseline runs)");
    tb_run_free(run);
    tg_rules_free(rs);
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regression_fails),
        cmocka_unit_test(test_improvement_passes),
        cmocka_unit_test(test_min_change),
        cmocka_unit_test(test_not_significant),
        cmocka_unit_test(test_band_three_runs),
        cmocka_unit_test(test_lower_is_worse),
        cmocka_unit_test(test_without_samples),
        cmocka_unit_test(test_short_trace_advice),
        cmocka_unit_test(test_missing_values),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_fingerprint_required),
        cmocka_unit_test(test_params_from_ruleset),
        cmocka_unit_test(test_drv_train_gpu_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
