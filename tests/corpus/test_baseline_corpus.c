/*
** Corpus test: baselines and regression gating on real traces (the last
** rows of ../shared/traces/README.md's verdicts table). Records baselines
** with the built binary into a temporary folder, checks traces against
** them, and asserts the regression verdicts; recording twice must give
** byte-identical files. Skips with a message when ../shared is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"

#include <math.h>
#include <sqlite3.h>

static char tmpdir[256];

static json_t *check_json(int *status, const char *baseline, const char *trace, const char *extra)
{
    return corpus_json(status, "check --format json --baseline '%s' %s '%s/%s'", baseline, extra,
                       corpus_traces, trace);
}

static json_t *result_of(json_t *doc, const char *rule)
{
    json_t *r = corpus_result(doc, rule);
    if (!r) fail_msg("rule %s absent from the result", rule);
    return r;
}

static double baseline_field(json_t *doc, const char *rule, const char *key)
{
    json_t *b = json_object_get(result_of(doc, rule), "baseline");
    return json_number_value(json_object_get(b, key));
}

/* Run a contributor's query on the read-only trace: its launches and per-
** iteration total (columns 0 and 2). */
static bool run_query(const char *trace, const char *sql, double *launches, double *per_iteration)
{
    char uri[4096];
    snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", trace);
    sqlite3 *db;
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) return false;
    sqlite3_stmt *st;
    bool ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *launches = sqlite3_column_double(st, 0);
        *per_iteration = sqlite3_column_double(st, 2);
    } else {
        print_error("contributor query fails: %s\n", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ok;
}

static json_t *contributor(json_t *doc, const char *rule, const char *name)
{
    json_t *list = json_object_get(json_object_get(result_of(doc, rule), "baseline"), "contributors");
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
        if (!strcmp(json_string_value(json_object_get(c, "name")), name)) return c;
    fail_msg("%s: no contributor %s", rule, name);
    return NULL;
}

/* What got slower in realistic_regressed (docs/regressions.md): the
** unfused optimizer's element-wise kernels grew (5x the launches), the
** fused multi-tensor kernel is gone; each GPU contributor's SQL gives, on
** the trace, the launches and per-iteration time the finding states. */
static void check_contributors(json_t *doc)
{
    json_t *first = json_array_get(json_object_get(json_object_get(result_of(doc, "gpu-time-regression"), "baseline"),
                                                   "contributors"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "name")), "at::native::vectorized_elementwise_kernel");
    assert_string_equal(json_string_value(json_object_get(first, "status")), "grew");
    double then = json_number_value(json_object_get(first, "baseline_launches"));
    double now = json_number_value(json_object_get(first, "current_launches"));
    assert_true(now > 4.5 * then && now < 5.5 * then);
    json_t *gone = contributor(doc, "gpu-time-regression", "at::native::(anonymous namespace)::multi_tensor_apply_kernel");
    assert_string_equal(json_string_value(json_object_get(gone, "status")), "gone");
    assert_true(json_number_value(json_object_get(gone, "delta_ns")) < 0);
    /* wall time: the optimizer's NVTX range grew, and the GPU-busy split */
    json_t *opt = contributor(doc, "iteration-time-regression", "Optimizer.step#AdamW.step");
    assert_string_equal(json_string_value(json_object_get(opt, "kind")), "nvtx");
    assert_true(json_number_value(json_object_get(opt, "delta_ns")) > 10e6);
    json_t *b = json_object_get(result_of(doc, "iteration-time-regression"), "baseline");
    assert_true(json_number_value(json_object_get(b, "gpu_busy_current")) >
                json_number_value(json_object_get(b, "gpu_busy_baseline")));
    assert_true(json_number_value(json_object_get(b, "workload_match")) > 0.9);

    char trace[1024];
    snprintf(trace, sizeof trace, "%s/h200-torch/realistic_regressed.sqlite", corpus_traces);
    json_t *list = json_object_get(json_object_get(result_of(doc, "gpu-time-regression"), "baseline"), "contributors");
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const char *sql = json_string_value(json_object_get(c, "query"));
        assert_non_null(sql);
        double launches = NAN, per = NAN;
        assert_true(run_query(trace, sql, &launches, &per));
        double want = json_number_value(json_object_get(c, "current_ns"));
        double want_launches = json_number_value(json_object_get(c, "current_launches"));
        if (fabs(per - want) > 1e-6 * fmax(1, want) || fabs(launches / 50 - want_launches) > 1e-9)
            fail_msg("%s: the query gives %.17g ns (%g launches), the finding %.17g ns (%g per iteration)",
                     json_string_value(json_object_get(c, "name")), per, launches, want, want_launches);
    }
}

static void test_realistic_regressed_fails(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/realistic.yaml", tmpdir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite' "
                         "'%s/h200-torch/realistic_baseline_run2.sqlite'", base, corpus_traces, corpus_traces), 0);
    int st;
    json_t *doc = check_json(&st, base, "h200-torch/realistic_regressed.sqlite", "");
    assert_int_equal(st, 1);
    assert_string_equal(corpus_status(doc, "iteration-time-regression"), "fail");
    assert_string_equal(corpus_status(doc, "gpu-time-regression"), "fail");
    assert_string_equal(corpus_status(doc, "blocking-sync-api"), "fail");
    assert_string_equal(corpus_status(doc, "pageable-async-memcpy"), "fail");
    /* README: p50 step about 48 ms vs about 29-31 ms; GPU time 12.71 vs 11.545 ms */
    double cur = baseline_field(doc, "iteration-time-regression", "current");
    double was = baseline_field(doc, "iteration-time-regression", "value");
    assert_true(cur > 44e6 && cur < 52e6);
    assert_true(was > 28e6 && was < 32e6);
    cur = baseline_field(doc, "gpu-time-regression", "current");
    was = baseline_field(doc, "gpu-time-regression", "value");
    /* README's "about 12.71 vs 11.545 ms" is approximate; reference/metrics.jsonl
    ** (kernels + copies + memsets: iteration.gpu_time, docs/rules.md) gives 12.908 ms for regressed and
    ** 11.738 / 11.736 ms for the two baseline runs: hold both within 1%. */
    assert_true(cur > 12.908e6 * 0.99 && cur < 12.908e6 * 1.01);
    assert_true(was > 11.737e6 * 0.99 && was < 11.737e6 * 1.01);
    assert_true(cur > 12.71e6 * 0.97 && cur < 12.71e6 * 1.03);
    assert_true(was > 11.545e6 * 0.97 && was < 11.545e6 * 1.03);
    assert_true(baseline_field(doc, "gpu-time-regression", "p_value") < 0.01);
    check_contributors(doc);
    json_decref(doc);
}

static void test_run2_against_run1_passes(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/run1.yaml", tmpdir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite'",
                         base, corpus_traces), 0);
    int st;
    json_t *doc = check_json(&st, base, "h200-torch/realistic_baseline_run2.sqlite", "");
    assert_string_equal(corpus_status(doc, "iteration-time-regression"), "pass");
    assert_string_equal(corpus_status(doc, "gpu-time-regression"), "pass");
    json_decref(doc);
}

static void test_drv_train_series_passes(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/train.yaml", tmpdir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite' "
                         "'%s/h200-nsys/drv_train_run2.sqlite'", base, corpus_traces, corpus_traces), 0);
    const char *extras[] = {"", "--set gpu-time-regression.min_change=0.5%"};
    for (int i = 0; i < 2; i++) {
        int st;
        json_t *doc = check_json(&st, base, "h200-nsys/drv_train_run3.sqlite", extras[i]);
        assert_string_equal(corpus_status(doc, "iteration-time-regression"), "pass");
        assert_string_equal(corpus_status(doc, "gpu-time-regression"), "pass");
        json_decref(doc);
    }
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    *n = fread(buf, 1, (size_t)len, f);
    fclose(f);
    return buf;
}

static void test_recording_is_byte_stable(void **state)
{
    (void)state;
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.yaml", tmpdir);
    snprintf(b, sizeof b, "%s/b.yaml", tmpdir);
    for (int i = 0; i < 2; i++)
        assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite' "
                             "'%s/h200-nsys/drv_train_run2.sqlite'", i ? b : a, corpus_traces, corpus_traces), 0);
    size_t na, nb;
    char *da = slurp(a, &na), *db = slurp(b, &nb);
    assert_non_null(da);
    assert_non_null(db);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);
    free(da);
    free(db);
}

static void test_other_gpu_is_refused(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/h200.yaml", tmpdir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite'", base, corpus_traces), 0);
    /* an A100 capture against an H200 baseline: exit 2 unless --allow-mismatch */
    int st;
    assert_int_equal(corpus_run("check --baseline '%s' '%s/public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite'",
                                base, corpus_traces), 2);
    json_t *doc = check_json(&st, base, "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
                     "--allow-mismatch --missing-data=skip");
    /* its synchronous copies fail the gate: 1 wins over the missing data
    ** below (docs/formats.md, "Run status and exit status") */
    assert_int_equal(st, 1);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "fail");
    json_decref(doc);
    doc = check_json(&st, base, "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
                     "--allow-mismatch --missing-data=skip --fail-on never");
    /* compared anyway, but the capture has no NVTX ranges: the regression
    ** rules cannot be judged, and --missing-data=skip does not make that a
    ** pass (exit 3, not 0) */
    assert_int_equal(st, 3);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "error");
    assert_string_equal(corpus_status(doc, "iteration-time-regression"), "error");
    const char *msg = json_string_value(json_object_get(corpus_result(doc, "gpu-time-regression"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "NVTX"));
    json_decref(doc);
}

/* realistic_nocache marks each step twice (ProfilerStep#N around
** train_step): against a baseline of the realistic runs (train_step) its
** iterations are another marker, refused (exit 2) unless the pattern
** selects the baseline's; a baseline recorded on it remembers its marker. */
static void test_other_marker_is_refused(void **state)
{
    (void)state;
    char base[512], own[512];
    snprintf(base, sizeof base, "%s/realistic.yaml", tmpdir);
    snprintf(own, sizeof own, "%s/nocache.yaml", tmpdir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite' "
                                "'%s/h200-torch/realistic_baseline_run2.sqlite'", base, corpus_traces,
                                corpus_traces), 0);
    assert_int_equal(corpus_run("check --baseline '%s' '%s/h200-torch/realistic_nocache.sqlite' 2>/dev/null",
                                base, corpus_traces), 2);
    int st;
    json_t *doc = check_json(&st, base, "h200-torch/realistic_nocache.sqlite", "--iteration-pattern '^train_step$'");
    assert_int_equal(st, 1);       /* compared: 45 train_step periods of ~126 ms vs ~29.5 ms */
    assert_string_equal(json_string_value(json_object_get(result_of(doc, "iteration-time-regression"), "status")),
                        "fail");
    json_decref(doc);

    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-torch/realistic_nocache.sqlite'", own,
                                corpus_traces), 0);
    FILE *f = fopen(own, "r");
    assert_non_null(f);
    char line[256];
    bool found = false;
    while (fgets(line, sizeof line, f)) found |= strstr(line, "iteration_marker: \"ProfilerStep#N\"") != NULL;
    fclose(f);
    assert_true(found);
    assert_int_equal(corpus_run("check --baseline '%s' --iteration-pattern '^train_step$' "
                                "'%s/h200-torch/realistic_nocache.sqlite' 2>/dev/null", own, corpus_traces), 2);
    assert_int_equal(corpus_run("check --baseline '%s' '%s/h200-torch/realistic_nocache.sqlite' >/dev/null",
                                own, corpus_traces), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-baseline-corpus-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    if (!corpus_init("baseline corpus")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realistic_regressed_fails),
        cmocka_unit_test(test_run2_against_run1_passes),
        cmocka_unit_test(test_drv_train_series_passes),
        cmocka_unit_test(test_recording_is_byte_stable),
        cmocka_unit_test(test_other_gpu_is_refused),
        cmocka_unit_test(test_other_marker_is_refused),
    };
    return cmocka_run_group_tests_name("corpus baselines", tests, setup, teardown);
}
