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

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *traces_dir;
static const char *binary;
static char tmpdir[256];

static int run(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s", binary, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_t *check_json(int *status, const char *baseline, const char *trace, const char *extra)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' check --format json --baseline '%s' %s '%s/%s' 2>/dev/null",
             binary, baseline, extra, traces_dir, trace);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    json_error_t err;
    json_t *doc = json_loadf(p, JSON_DISABLE_EOF_CHECK, &err);
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (!doc) fail_msg("%s: not JSON: %s", cmd, err.text);
    return doc;
}

static json_t *result_of(json_t *doc, const char *rule)
{
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        if (!strcmp(json_string_value(json_object_get(r, "rule")), rule)) return r;
    }
    fail_msg("rule %s absent from the result", rule);
    return NULL;
}

static const char *status_of(json_t *doc, const char *rule)
{
    return json_string_value(json_object_get(result_of(doc, rule), "status"));
}

static double baseline_field(json_t *doc, const char *rule, const char *key)
{
    json_t *b = json_object_get(result_of(doc, rule), "baseline");
    return json_number_value(json_object_get(b, key));
}

static void test_realistic_regressed_fails(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/realistic.yaml", tmpdir);
    assert_int_equal(run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite' "
                         "'%s/h200-torch/realistic_baseline_run2.sqlite'", base, traces_dir, traces_dir), 0);
    int st;
    json_t *doc = check_json(&st, base, "h200-torch/realistic_regressed.sqlite", "");
    assert_int_equal(st, 1);
    assert_string_equal(status_of(doc, "iteration-time-regression"), "fail");
    assert_string_equal(status_of(doc, "gpu-time-regression"), "fail");
    assert_string_equal(status_of(doc, "blocking-sync-api"), "fail");
    assert_string_equal(status_of(doc, "pageable-async-memcpy"), "fail");
    /* README: p50 step about 48 ms vs about 29-31 ms; GPU time 12.71 vs 11.545 ms */
    double cur = baseline_field(doc, "iteration-time-regression", "current");
    double was = baseline_field(doc, "iteration-time-regression", "value");
    assert_true(cur > 44e6 && cur < 52e6);
    assert_true(was > 28e6 && was < 32e6);
    cur = baseline_field(doc, "gpu-time-regression", "current");
    was = baseline_field(doc, "gpu-time-regression", "value");
    /* README's "about 12.71 vs 11.545 ms" is approximate; reference/metrics.jsonl
    ** (kernels + copies + memsets, DESIGN §2) gives 12.908 ms for regressed and
    ** 11.738 / 11.736 ms for the two baseline runs: hold both within 1%. */
    assert_true(cur > 12.908e6 * 0.99 && cur < 12.908e6 * 1.01);
    assert_true(was > 11.737e6 * 0.99 && was < 11.737e6 * 1.01);
    assert_true(cur > 12.71e6 * 0.97 && cur < 12.71e6 * 1.03);
    assert_true(was > 11.545e6 * 0.97 && was < 11.545e6 * 1.03);
    assert_true(baseline_field(doc, "gpu-time-regression", "p_value") < 0.01);
    json_decref(doc);
}

static void test_run2_against_run1_passes(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/run1.yaml", tmpdir);
    assert_int_equal(run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite'",
                         base, traces_dir), 0);
    int st;
    json_t *doc = check_json(&st, base, "h200-torch/realistic_baseline_run2.sqlite", "");
    assert_string_equal(status_of(doc, "iteration-time-regression"), "pass");
    assert_string_equal(status_of(doc, "gpu-time-regression"), "pass");
    json_decref(doc);
}

static void test_drv_train_series_passes(void **state)
{
    (void)state;
    char base[512];
    snprintf(base, sizeof base, "%s/train.yaml", tmpdir);
    assert_int_equal(run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite' "
                         "'%s/h200-nsys/drv_train_run2.sqlite'", base, traces_dir, traces_dir), 0);
    const char *extras[] = {"", "--set gpu-time-regression.min_change=0.5%"};
    for (int i = 0; i < 2; i++) {
        int st;
        json_t *doc = check_json(&st, base, "h200-nsys/drv_train_run3.sqlite", extras[i]);
        assert_string_equal(status_of(doc, "iteration-time-regression"), "pass");
        assert_string_equal(status_of(doc, "gpu-time-regression"), "pass");
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
        assert_int_equal(run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite' "
                             "'%s/h200-nsys/drv_train_run2.sqlite'", i ? b : a, traces_dir, traces_dir), 0);
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
    assert_int_equal(run("baseline record -o '%s' '%s/h200-nsys/drv_train_run1.sqlite'", base, traces_dir), 0);
    /* an A100 capture against an H200 baseline: exit 2 unless --allow-mismatch */
    int st;
    json_t *doc = NULL;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' check --baseline '%s' '%s/public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite' "
             ">/dev/null 2>&1", binary, base, traces_dir);
    st = system(cmd);
    assert_int_equal(WEXITSTATUS(st), 2);
    doc = check_json(&st, base, "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
                     "--allow-mismatch --missing-data=skip");
    assert_true(st == 0 || st == 1);
    json_decref(doc);
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
    traces_dir = getenv("TG_SHARED_TRACES");
    binary = getenv("TG_BINARY");
    struct stat st;
    if (!traces_dir || stat(traces_dir, &st) != 0 || !binary) {
        printf("SKIP: ../shared/traces is absent (TG_SHARED_TRACES=%s); baseline corpus not checked\n",
               traces_dir ? traces_dir : "(unset)");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realistic_regressed_fails),
        cmocka_unit_test(test_run2_against_run1_passes),
        cmocka_unit_test(test_drv_train_series_passes),
        cmocka_unit_test(test_recording_is_byte_stable),
        cmocka_unit_test(test_other_gpu_is_refused),
    };
    return cmocka_run_group_tests_name("corpus baselines", tests, setup, teardown);
}
