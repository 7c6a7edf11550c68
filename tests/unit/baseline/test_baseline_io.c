/*
** Unit tests of the baseline file: recording from hand-built evaluation
** results, the exact YAML written (sorted keys, stable numbers), the round
** trip through the loader, byte-identical rewrites, the deterministic
** thinning of samples, the provenance check between recorded runs, and
** malformed files reported with file:line:col.
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
#include "run_builder.h"

static const char *describe_iteration(const void *ctx, const char *rule)
{
    (void)ctx;
    return !strcmp(rule, "gpu-time-regression") ? "gpu_time" : "period";
}

static const tg_baseline_rules iteration_rules = {.samples = describe_iteration};

/* Write to a malloc'd string. */
static char *write_string(const tg_baseline *b, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_int_equal(tg_baseline_write(b, f), TG_OK);
    fclose(f);
    if (len) *len = n;
    return buf;
}

/* Two runs, two metrics: a regression rule with samples, a trend metric
** without. Values chosen so that median and MAD are easy: runs 11545000 and
** 11546000 -> median 11545500, MAD 500. */
static tg_run_result *small_run(void)
{
    tg_run_result *run = tb_run_new();
    static const double s1[] = {11546000, 11544000, 11545000};
    static const double s2[] = {11547000.5, NAN, 11545500};
    tg_trace_result *t1 = tb_trace(run, "/data/ci/run1.sqlite", "NVIDIA H200", "3.11.0");
    t1->iteration_marker = "ProfilerStep#N";
    tb_rule(run, t1, "gpu-time-regression", "p50(gpu_time)", 1, 11545000, s1, 3);
    tb_rule(run, t1, "sync-memcpy", NULL, 0, NAN, NULL, 0);
    tb_rule(run, t1, "busy", "count", 0, 0.25, NULL, 0);
    tg_trace_result *t2 = tb_trace(run, "run2.sqlite", "NVIDIA H200", "3.11.0");
    t2->iteration_marker = "ProfilerStep#N";
    tb_rule(run, t2, "gpu-time-regression", "p50(gpu_time)", 1, 11546000, s2, 3);
    tb_rule(run, t2, "sync-memcpy", NULL, 0, NAN, NULL, 0);
    tb_rule(run, t2, "busy", "count", 0, 1e-7, NULL, 0);
    return run;
}

static const char expected_yaml[] =
    "# tracegate baseline, format 1: the fields are described in baselines/README.md.\n"
    "# Re-record with: tracegate baseline record -o FILE TRACE...\n"
    "date: \"2025-03-01\"\n"
    "format_version: 1\n"
    "metrics:\n"
    "  busy:\n"
    "    direction: none\n"
    "    mad: 0.12499995\n"
    "    median: 0.12500005\n"
    "    metric: \"count\"\n"
    "    n_runs: 2\n"
    "    n_samples: 0\n"
    "    runs: [0.25, 1.0e-07]\n"
    "    samples: []\n"
    "    samples_field: \"period\"\n"
    "    unit: none\n"
    "  gpu-time-regression:\n"
    "    direction: higher_is_worse\n"
    "    mad: 500\n"
    "    median: 11545500\n"
    "    metric: \"p50(gpu_time)\"\n"
    "    n_runs: 2\n"
    "    n_samples: 5\n"
    "    runs: [11545000, 11546000]\n"
    "    samples: [11544000, 11545000, 11545500, 11546000, 11547000.5]\n"
    "    samples_field: \"gpu_time\"\n"
    "    unit: ns\n"
    "runs:\n"
    "- gpu_names: \"NVIDIA H200\"\n"
    "  iteration_marker: \"ProfilerStep#N\"\n"
    "  nsys_version: \"2024.5.1.113\"\n"
    "  schema_version: \"3.11.0\"\n"
    "  trace: \"run1.sqlite\"\n"
    "- gpu_names: \"NVIDIA H200\"\n"
    "  iteration_marker: \"ProfilerStep#N\"\n"
    "  nsys_version: \"2024.5.1.113\"\n"
    "  schema_version: \"3.11.0\"\n"
    "  trace: \"run2.sqlite\"\n"
    "tool_version: \"0.1.0\"\n"
    "workload:\n"
    "  gpu_time: 0\n"
    "  nvtx: []\n"
    "  ops:\n"
    "  - {count: 200, kind: kernel, launches: 1, name: \"train_kernel\", time: 10000000, total: 2000000000}\n"
    "  steady_iterations: 200\n"
    "  total: 0\n";

static void test_record_and_write(void **state)
{
    (void)state;
    tg_run_result *run = small_run();
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(run, &iteration_rules, "0.1.0", "2025-03-01", &d);
    assert_non_null(b);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(b->n_runs, 2);
    assert_int_equal(b->n_metrics, 2);               /* sync-memcpy has no metric */
    const tg_baseline_metric *m = tg_baseline_find(b, "gpu-time-regression");
    assert_non_null(m);
    assert_true(m->median == 11545500 && m->mad == 500);
    assert_int_equal(m->n_runs, 2);
    assert_int_equal(m->n_samples, 5);               /* the NaN sample is dropped */
    assert_int_equal(m->n_samples_total, 5);
    assert_int_equal(m->unit, TG_UNIT_NS);
    assert_int_equal(m->direction, 1);
    assert_null(tg_baseline_find(b, "sync-memcpy"));

    char *text = write_string(b, NULL);
    assert_string_equal(text, expected_yaml);
    free(text);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

static void test_round_trip(void **state)
{
    (void)state;
    tg_run_result *run = small_run();
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(run, &iteration_rules, "0.1.0", "2025-03-01", &d);
    size_t len;
    char *text = write_string(b, &len);
    tg_baseline *back = tg_baseline_load_string(text, len, "mem.yaml", &d);
    assert_non_null(back);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 0);                        /* no warnings either */
    assert_string_equal(back->date, "2025-03-01");
    assert_string_equal(back->tool_version, "0.1.0");
    assert_int_equal(back->n_runs, 2);
    assert_string_equal(back->runs[0].trace, "run1.sqlite");
    assert_string_equal(back->runs[1].gpu_names, "NVIDIA H200");
    assert_string_equal(back->runs[1].iteration_marker, "ProfilerStep#N");
    assert_int_equal(back->n_metrics, b->n_metrics);
    for (size_t i = 0; i < b->n_metrics; i++) {
        const tg_baseline_metric *x = &b->metrics[i], *y = &back->metrics[i];
        assert_string_equal(x->rule, y->rule);
        assert_string_equal(x->metric, y->metric);
        assert_true(x->median == y->median && x->mad == y->mad);   /* bit-exact */
        assert_int_equal(x->n_runs, y->n_runs);
        assert_int_equal(x->n_samples, y->n_samples);
        assert_int_equal(x->n_samples_total, y->n_samples_total);
        assert_int_equal(x->direction, y->direction);
        assert_int_equal(x->unit, y->unit);
        for (size_t k = 0; k < b->n_runs; k++) assert_true(x->runs[k] == y->runs[k]);
        for (size_t k = 0; k < x->n_samples; k++) assert_true(x->samples[k] == y->samples[k]);
        assert_int_equal(y->pos.line > 0, 1);
    }
    /* writing what was loaded gives the same bytes */
    size_t len2;
    char *again = write_string(back, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, again, len);
    free(text);
    free(again);
    tg_baseline_free(back);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

/* Numbers that need all 17 digits, tiny and huge ones survive the trip,
** subnormals too (strtod flags them ERANGE; they were refused on reading). */
static void test_number_round_trip(void **state)
{
    (void)state;
    tg_run_result *run = tb_run_new();
    static const double vals[] = {0.1, 1.0 / 3.0, 2.0 / 3.0 * 1e-300, 1e300 / 7, -0.0, 123456789.125,
                                  4.9406564584124654e-324, 1e-310};
    for (size_t i = 0; i < 8; i++) {
        tg_trace_result *t = tb_trace(run, "r.sqlite", NULL, NULL);
        tb_rule(run, t, "m", "mean(duration)", 0, vals[i], vals, 8);
    }
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    size_t len;
    char *text = write_string(b, &len);
    tg_baseline *back = tg_baseline_load_string(text, len, "mem.yaml", &d);
    assert_non_null(back);
    for (size_t i = 0; i < 8; i++)
        assert_true(back->metrics[0].runs[i] == vals[i]);
    assert_int_equal(back->metrics[0].n_samples_total, 64);
    free(text);
    tg_baseline_free(back);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

/* Provenance that is not UTF-8 (a Latin-1 file name, GPU name, nsys
** version) is stored with U+FFFD per invalid byte: written, read back. */
static void test_non_utf8_provenance(void **state)
{
    (void)state;
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "/data/caf\xe9.sqlite", "NVIDIA \xff\xfe", "3.0");
    t->nsys_version = "2024.5\x80";
    tb_rule(run, t, "m", "mean(duration)", 1, 5, (const double[]){5}, 1);
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_non_null(b);
    size_t len;
    char *text = write_string(b, &len);
    assert_non_null(text);
    tg_baseline *back = tg_baseline_load_string(text, len, "mem.yaml", &d);
    assert_non_null(back);
    assert_string_equal(back->runs[0].trace, "caf\xef\xbf\xbd.sqlite");
    assert_string_equal(back->runs[0].gpu_names, "NVIDIA \xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(back->runs[0].nsys_version, "2024.5\xef\xbf\xbd");
    /* the same trace compares with it without a GPU mismatch */
    assert_int_equal(tg_baseline_apply_with(back, NULL, run, false, &d), TG_OK);
    assert_int_equal(d.n_errors, 0);
    free(text);
    tg_baseline_free(back);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

/* 3 runs x 1000 samples pooled -> 1000 kept: the middle of each of 1000
** strata of the sorted 3000, i.e. sorted[(2k+1) * 3000 / 2000] = sorted[3k+1].
** The order of the input rows does not matter. */
static void test_sample_thinning(void **state)
{
    (void)state;
    char *texts[2];
    for (int variant = 0; variant < 2; variant++) {
        tg_run_result *run = tb_run_new();
        for (int t = 0; t < 3; t++) {
            double v[1000];
            for (int i = 0; i < 1000; i++) {
                int k = variant ? 999 - i : i;      /* reversed order in variant 1 */
                v[i] = (double)(3 * k + t);         /* pooled: 0, 1, ..., 2999 */
            }
            tg_trace_result *tr = tb_trace(run, "r.sqlite", "GPU", "3.0.0");
            tb_rule(run, tr, "iteration-time-regression", "p50(period)", 1, 1500 + t, v, 1000);
        }
        tg_diag d;
        tg_diag_init(&d);
        tg_baseline *b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
        const tg_baseline_metric *m = &b->metrics[0];
        assert_int_equal(m->n_samples, TG_BASELINE_MAX_SAMPLES);
        assert_int_equal(m->n_samples_total, 3000);
        for (size_t k = 0; k < m->n_samples; k++) assert_true(m->samples[k] == (double)(3 * k + 1));
        assert_true(m->median == 1501);
        assert_true(m->mad == 1);
        texts[variant] = write_string(b, NULL);
        tg_baseline_free(b);
        tg_diag_clear(&d);
        tb_run_free(run);
    }
    assert_string_equal(texts[0], texts[1]);
    free(texts[0]);
    free(texts[1]);
}

static void test_record_rejects(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    /* an unreadable trace: TG_ETRACE */
    tg_run_result *run = tb_run_new();
    tg_trace_result *t = tb_trace(run, "bad.sqlite", NULL, NULL);
    t->status = TG_ETRACE;
    t->error = "bad.sqlite is not an SQLite file";
    assert_null(tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d));
    assert_int_equal(d.status, TG_ETRACE);
    tb_run_free(run);
    tg_diag_clear(&d);

    /* a trend metric (no regression) without a value on any trace: left
    ** out, with a warning */
    run = tb_run_new();
    t = tb_trace(run, "a.sqlite", NULL, NULL);
    tb_rule(run, t, "x", "p50(period)", 0, NAN, NULL, 0);
    tb_rule(run, t, "y", "p50(period)", 1, 5, NULL, 0);
    tg_baseline *b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_non_null(b);
    assert_int_equal(b->n_metrics, 1);
    assert_string_equal(b->metrics[0].rule, "y");
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.msgs[0].text, "rule x"));
    tg_baseline_free(b);
    tb_run_free(run);
    tg_diag_clear(&d);

    /* a regression rule without a value on one of the runs: no baseline,
    ** TG_ETRACE naming the rule, the run and why */
    run = tb_run_new();
    t = tb_trace(run, "/ci/a.sqlite", NULL, NULL);
    tb_rule(run, t, "y", "p50(period)", 1, 5, NULL, 0);
    t = tb_trace(run, "/ci/b.sqlite", NULL, NULL);
    tg_rule_result *r = tb_rule(run, t, "y", "p50(period)", 1, NAN, NULL, 0);
    r->metric_missing = "no iteration: none of its 12 NVTX ranges matches the iteration pattern ^step$";
    tg_diag_init(&d);
    assert_null(tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d));
    assert_int_equal(d.status, TG_ETRACE);
    assert_non_null(strstr(d.msgs[0].text, "cannot record regression rule y from b.sqlite: no iteration"));
    assert_non_null(strstr(d.msgs[0].text, "no baseline written"));
    tb_run_free(run);
    tg_diag_clear(&d);

    /* nothing recordable at all: refused, a baseline without metrics would
    ** pass every check */
    run = tb_run_new();
    t = tb_trace(run, "a.sqlite", NULL, NULL);
    tb_rule(run, t, "x", "p50(period)", 0, NAN, NULL, 0);
    tg_diag_init(&d);
    assert_null(tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d));
    assert_int_equal(d.status, TG_ETRACE);
    assert_non_null(strstr(d.msgs[d.n - 1].text, "no metric could be recorded from a.sqlite"));
    tb_run_free(run);
    tg_diag_clear(&d);
}

static void test_check_runs(void **state)
{
    (void)state;
    tg_run_result *run = tb_run_new();
    tg_trace_result *t1 = tb_trace(run, "h200.sqlite", "NVIDIA H200", "3.11.0");
    tb_rule(run, t1, "x", "p50(period)", 1, 5, NULL, 0);
    tg_trace_result *t2 = tb_trace(run, "a100.sqlite", "NVIDIA A100-SXM4-80GB", "3.11.0");
    tb_rule(run, t2, "x", "p50(period)", 1, 6, NULL, 0);
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_int_equal(tg_baseline_check_runs(b, false, &d), TG_EUSAGE);
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "NVIDIA H200"));
    assert_non_null(strstr(d.msgs[0].text, "NVIDIA A100-SXM4-80GB"));
    tg_diag_clear(&d);
    tg_diag_init(&d);
    assert_int_equal(tg_baseline_check_runs(b, true, &d), TG_OK);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    tg_diag_clear(&d);
    tg_baseline_free(b);

    /* same GPUs in another order, schema 3.0.0 vs 3.11.0: one setup */
    t1->gpu_names = "NVIDIA H100, NVIDIA H200";
    t2->gpu_names = "NVIDIA H200,NVIDIA H100";
    t1->schema_version = "3.0.0";
    tg_diag_init(&d);
    b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_int_equal(tg_baseline_check_runs(b, false, &d), TG_OK);
    assert_int_equal(d.n, 0);
    tg_baseline_free(b);
    /* schema major 2 vs 3: an error */
    t1->schema_version = "2.9.1";
    b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_int_equal(tg_baseline_check_runs(b, false, &d), TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "2.9.1"));
    assert_non_null(strstr(d.msgs[0].text, "3.11.0"));
    tg_baseline_free(b);
    tg_diag_clear(&d);
    /* runs on different iteration markers: an error naming both; a run
    ** without iterations (its metrics are missing) is not a marker */
    t1->schema_version = "3.11.0";
    t1->iteration_marker = "ProfilerStep#N";
    t2->iteration_marker = "train_step";
    tg_diag_init(&d);
    b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_int_equal(tg_baseline_check_runs(b, false, &d), TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "iteration marker"));
    assert_non_null(strstr(d.msgs[0].text, "ProfilerStep#N"));
    assert_non_null(strstr(d.msgs[0].text, "train_step"));
    tg_baseline_free(b);
    tg_diag_clear(&d);
    t2->iteration_marker = NULL;
    tg_diag_init(&d);
    b = tg_baseline_record_with(run, NULL, "0.1.0", "2025-03-01", &d);
    assert_string_equal(b->runs[1].iteration_marker, "");
    assert_int_equal(tg_baseline_check_runs(b, false, &d), TG_OK);
    tg_baseline_free(b);
    tg_diag_clear(&d);
    tb_run_free(run);
}

/* ------------------------------------------------------------ malformed */

static const char good_prefix[] =
    "format_version: 1\n"
    "runs:\n"
    "- {trace: a.sqlite, gpu_names: G, schema_version: \"3.0.0\", nsys_version: null}\n"
    "- {trace: b.sqlite, gpu_names: G, schema_version: \"3.0.0\", nsys_version: null}\n"
    "metrics:\n"
    "  r:\n"
    "    metric: p50(period)\n"
    "    direction: higher_is_worse\n";

typedef struct bad_case {
    const char *text;
    int line, col;
    const char *needle;
} bad_case;

static void expect_bad(const bad_case *c)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_load_string(c->text, strlen(c->text), "bad.yaml", &d);
    if (b) fail_msg("loaded although malformed: %s", c->needle);
    assert_int_equal(d.status, TG_EUSAGE);
    assert_true(d.n_errors >= 1);
    const tg_diag_msg *m = NULL;
    for (size_t i = 0; i < d.n && !m; i++)
        if (d.msgs[i].level == TG_DIAG_ERROR) m = &d.msgs[i];
    assert_non_null(m);
    assert_string_equal(m->pos.file, "bad.yaml");
    if (m->pos.line != c->line || m->pos.col != c->col || !strstr(m->text, c->needle))
        fail_msg("for '%s': got %d:%d '%s'", c->needle, m->pos.line, m->pos.col, m->text);
    tg_diag_clear(&d);
}

static void test_malformed(void **state)
{
    (void)state;
    char buf[2048];
    const bad_case plain[] = {
        {"format_version: 1\nruns: [a, b\n", 3, 1, "YAML syntax error"},
        {"- 1\n- 2\n", 1, 1, "not a tracegate baseline"},
        {"runs: []\nmetrics: {}\n", 1, 1, "'format_version' is missing"},
        {"format_version: 3\nruns: []\nmetrics: {}\n", 1, 17, "format version 3"},
        {"format_version: one\n", 1, 17, "format_version must be a finite number"},
        {"format_version: 1\nruns: []\nmetrics: {}\n", 2, 7, "'runs' is empty"},
        {"format_version: 1\nruns:\n- {trace: a}\nruns: []\n", 4, 1, "duplicate key 'runs'"},
        {"format_version: 1\nmetrics: {}\n", 1, 1, "'runs' is missing"},
        {"format_version: 1\nruns:\n- {gpu_names: G}\nmetrics: {}\n", 3, 3, "has no 'trace'"},
        {"format_version: 1\nruns:\n- {trace: [x]}\nmetrics: {}\n", 3, 11, "runs[].trace must be a string"},
        {"format_version: 1\nruns:\n- {trace: a}\nmetrics: {'': {}}\n", 4, 11, "'' is not a rule id"},
    };
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) expect_bad(&plain[i]);

    /* metric entries: lines 9 and on follow good_prefix (8 lines) */
    struct { const char *tail; int line, col; const char *needle; } tails[] = {
        {"    median: abc\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n", 9, 13,
         "median must be a finite number, not 'abc'"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, 1, 1]\n", 12, 11,
         "has 3 run values but the baseline records 2 runs"},
        {"    median: 2\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n", 9, 13,
         "median of 'r' is 2 but the median of its runs is 1"},
        {"    median: 1.5\n    mad: 7\n    n_runs: 2\n    runs: [1, 2]\n", 10, 10,
         "mad of 'r' is 7 but the MAD of its runs is 0.5"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, null]\n", 11, 13,
         "n_runs of 'r' is 2 but its runs hold 1 value"},
        {"    median: 1\n    mad: 0\n    runs: [1, 1]\n", 6, 3, "lacks 'n_runs'"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n    samples: [1, x]\n", 13,
         18, "samples must be a finite number, not 'x'"},
        /* never infinite (tampered: the recorder writes no infinity) */
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n    samples: [1, .inf]\n", 13,
         18, "samples must be a finite number, not '.inf'"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, -.inf]\n", 12, 15,
         "runs must be a finite number or null, not '-.inf'"},
        {"    median: 1e400\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n", 9, 13,
         "median must be a finite number, not '1e400'"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n    samples: [1, 2]\n"
         "    n_samples: 1\n", 14, 16, "n_samples of 'r' is 1 but 2 samples are listed"},
        {"    median: 1\n    mad: 0\n    n_runs: 2\n    runs: [1, 1]\n    unit: parsecs\n", 13, 11,
         "unit must be"},
        {"    median: 1\n    mad: 0\n    n_runs: -2\n    runs: [1, 1]\n", 11, 13,
         "n_runs must be a whole number"},
    };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        snprintf(buf, sizeof buf, "%s%s", good_prefix, tails[i].tail);
        bad_case c = {buf, tails[i].line, tails[i].col, tails[i].needle};
        expect_bad(&c);
    }

    /* an empty file: one sentence naming it */
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_baseline_load_string("", 0, "empty.yaml", &d));
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "empty"));
    tg_diag_clear(&d);
    /* a missing file */
    tg_diag_init(&d);
    assert_null(tg_baseline_load("/nonexistent/dir/b.yaml", &d));
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "cannot be opened"));
    tg_diag_clear(&d);
}

static void test_lenient(void **state)
{
    (void)state;
    char buf[2048];
    /* unknown keys are warnings; an entry without samples is fine */
    snprintf(buf, sizeof buf, "%s%s", good_prefix,
             "    median: 1.5\n    mad: 0.5\n    n_runs: 2\n    runs: [1, 2]\n    colour: red\n"
             "comment: hello\n");
    tg_diag d;
    tg_diag_init(&d);
    tg_baseline *b = tg_baseline_load_string(buf, strlen(buf), "ok.yaml", &d);
    assert_non_null(b);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.msgs[0].level, TG_DIAG_WARNING);
    assert_int_equal(d.msgs[0].pos.line, 14);   /* the root is read first */
    assert_int_equal(d.msgs[1].pos.line, 13);
    assert_int_equal(b->metrics[0].n_samples_total, 0);
    assert_null(b->runs[0].nsys_version);
    assert_string_equal(b->path, "ok.yaml");
    tg_baseline_free(b);
    tg_diag_clear(&d);
}

static void test_units(void **state)
{
    (void)state;
    /* The file spelling of units round-trips; an unknown one is refused. */
    for (tg_unit u = TG_UNIT_NONE; u < TG_UNIT_COUNT_; u++) {
        tg_unit back;
        assert_true(tg_unit_parse_key(tg_unit_key(u), &back));
        assert_int_equal(back, u);
    }
    tg_unit none;
    assert_false(tg_unit_parse_key("seconds", &none));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_write),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_number_round_trip),
        cmocka_unit_test(test_non_utf8_provenance),
        cmocka_unit_test(test_sample_thinning),
        cmocka_unit_test(test_record_rejects),
        cmocka_unit_test(test_check_runs),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
