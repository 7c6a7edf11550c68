/*
** Wrong messages and numbers (issue #16), through the binary:
**
** - `baseline record` from a trace whose file name, GPU name and nsys
**   version are Latin-1 bytes (not UTF-8): the baseline is written (each
**   bad byte as U+FFFD), with -o FILE and -o - alike, `baseline show`
**   reads it and `check --baseline` against the same trace sees no
**   mismatch; never the stale "Inappropriate ioctl for device" of before,
**   never exit 4 without a word;
** - numbers that overflow to infinity (1e400%, 1e300h, a 500-digit
**   literal) in --set, in rule params and in expressions are refused like
**   `inf`; params with a natural range (alpha, min_change, durations,
**   sizes) are range-checked, from rule files and --set;
** - an unknown short option is named itself (`-x`), also inside a group;
** - a job summary ($GITHUB_STEP_SUMMARY) that cannot be appended to is
**   named with its reason, and the annotations are still written;
** - a NUL inside a name (`cudaMemcpy\0Async` in StringIds) is not the
**   name before it: SQL compares whole values, so does tracegate (the NUL
**   reads as U+FFFD); a trailing NUL, a C terminator, is dropped.
*/
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/common.h"
#include "fixture.h"
#include "hostile.h"

static const char *example_arg;

typedef struct world {
    char *dir;
    char *trace;      /* a copy of the bundled example */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->dir = hx_tempdir();
    char *example = hx_example_path(example_arg);
    w->trace = hx_copy_fixture(example, w->dir, "run.sqlite");
    free(example);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    free(w->dir);
    free(w->trace);
    free(w);
    return 0;
}

static void sql(const char *path, const char *text)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) fail_msg("SQL failed: %s", err);
    sqlite3_close(db);
}

/* ------------------------------------------------ Latin-1 provenance */

static void test_latin1_baseline(void **state)
{
    world *w = *state;
    char *latin = hx_path(w->dir, "caf\xe9.sqlite");
    assert_int_equal(rename(w->trace, latin), 0);
    /* "NVIDIA H200 \xe9" and "2022.4\xff" as TEXT */
    sql(latin, "UPDATE TARGET_INFO_GPU SET name = CAST(X'4E5649444941204832303020E9' AS TEXT);"
               "UPDATE EXPORT_META_DATA SET value = CAST(X'323032322E34FF' AS TEXT)"
               " WHERE name = 'EXPORT_PRODUCT_VERSION';");
    char *out = hx_path(w->dir, "base.yaml");
    hx_result r;
    hx_run(&r, "baseline", "record", "-o", out, latin);
    hx_expect_line("baseline record, Latin-1 names", &r, 0, "recorded 2 metrics");
    hx_free(&r);
    size_t len = 0;
    char *yaml = hx_slurp(out, &len);
    assert_non_null(yaml);
    if (!tg_utf8_valid(yaml, len)) fail_msg("the baseline is not UTF-8:\n%s", yaml);
    if (!strstr(yaml, "trace: \"caf\xef\xbf\xbd.sqlite\"") ||
        !strstr(yaml, "gpu_names: \"NVIDIA H200 \xef\xbf\xbd\"") ||
        !strstr(yaml, "nsys_version: \"2022.4\xef\xbf\xbd\""))
        fail_msg("invalid bytes are not U+FFFD in the baseline:\n%s", yaml);

    /* -o -: the same bytes on stdout, nothing on stderr, exit 0 */
    hx_run(&r, "baseline", "record", "-o", "-", latin);
    if (r.status != 0 || r.err_len != 0 || r.out_len != len || memcmp(r.out, yaml, len) != 0)
        fail_msg("baseline record -o -: exit %d, stderr '%s', %zu bytes (file: %zu)", r.status, r.err,
                 r.out_len, len);
    hx_free(&r);

    hx_run(&r, "baseline", "show", out);
    if (r.status != 0 || !strstr(r.out, "caf\xef\xbf\xbd.sqlite")) fail_msg("baseline show: exit %d: %s", r.status, r.err);
    hx_free(&r);

    /* the same trace against its own baseline: no GPU or schema mismatch */
    hx_run(&r, "check", "--fail-on", "never", "--baseline", out, latin);
    if (r.status != 0 || r.err_len != 0) fail_msg("check --baseline: exit %d: %s", r.status, r.err);
    hx_free(&r);
    free(yaml);
    free(out);
    /* teardown frees w->trace */
    free(w->trace);
    w->trace = latin;
}

/* ------------------------------------------------------------- numbers */

typedef struct refused_set {
    const char *set;
    const char *part;
} refused_set;

static void test_set_overflow_and_ranges(void **state)
{
    world *w = *state;
    static char long_literal[600];
    if (!long_literal[0]) {
        strcpy(long_literal, "gpu-idle-gap.min_gap=0.");
        size_t n = strlen(long_literal);
        memset(long_literal + n, '0', 500);
        strcpy(long_literal + n + 500, "1ms");
    }
    const refused_set cases[] = {
        {"iteration-time-regression.min_change=1e400%", "is out of range"},
        {"iteration-time-regression.min_change=inf", "is not a number"},
        {"gpu-idle-gap.min_gap=1e300h", "is out of range"},
        {long_literal, "is out of range"},
        {"low-gpu-utilization.min_busy=1e999", "is out of range"},
        {"iteration-time-regression.alpha=0", "strictly between 0 and 1"},
        {"iteration-time-regression.alpha=1", "strictly between 0 and 1"},
        {"iteration-time-regression.alpha=1.5", "strictly between 0 and 1"},
        {"iteration-time-regression.alpha=-0.01", "strictly between 0 and 1"},
        {"gpu-time-regression.min_change=-5%", "at least 0%"},
        {"gpu-time-regression.run_noise=-1%", "run_noise is the run-to-run spread assumed"},
        {"iteration-time-regression.min_workload_match=150%", "from 0% to 100%"},
        {"iteration-time-regression.min_workload_match=-1%", "from 0% to 100%"},
        {"gpu-idle-gap.min_gap=-1ms", "a duration, which cannot be negative"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char what[128];
        snprintf(what, sizeof what, "check --set %.80s", cases[i].set);
        hx_result r;
        hx_run(&r, "check", "--set", cases[i].set, w->trace);
        hx_expect_rule_error(what, &r, 2, cases[i].part);
        hx_free(&r);
        snprintf(what, sizeof what, "baseline record --set %.80s", cases[i].set);
        hx_run(&r, "baseline", "record", "-o", "-", "--set", cases[i].set, w->trace);
        hx_expect_rule_error(what, &r, 2, cases[i].part);
        if (r.out_len) fail_msg("%s: a baseline was written", what);
        hx_free(&r);
    }
    /* in range: accepted */
    hx_result r;
    hx_run(&r, "check", "--fail-on", "never", "--set", "iteration-time-regression.alpha=0.05", "--set",
           "gpu-time-regression.min_change=0%", "--set", "gpu-idle-gap.min_gap=0ms", "--set",
           "gpu-time-regression.run_noise=0%", "--set", "iteration-time-regression.min_workload_match=100%", w->trace);
    if (r.status != 0) fail_msg("in-range --set values: exit %d: %s", r.status, r.err);
    hx_free(&r);
}

static void test_rule_file_numbers(void **state)
{
    world *w = *state;
    static const struct { const char *params, *where, *part; } cases[] = {
        {"min: 1e400MB", "bytes > params.min", "out of range"},
        {"min: 5MB", "bytes > 1e400", "out of range"},
        {"min: 5MB", "bytes > 1e300GB", "out of range"},
        {"min: -5MB", "bytes > params.min", "a size, which cannot be negative"},
        {"min: -1ms", "duration > params.min", "a duration, which cannot be negative"},
        {"alpha: 2", "bytes > 0", "strictly between 0 and 1"},
    };
    char *path = hx_path(w->dir, "rule.yaml");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        int n = snprintf(text, sizeof text,
                         "version: 1\nrules:\n  - id: copies\n    title: copies\n    severity: error\n"
                         "    source: memcpy\n    params: {%s}\n    where: %s\n    fail_when: count > 0\n"
                         "    message: \"{count} copies\"\n",
                         cases[i].params, cases[i].where);
        hx_write_file(path, text, (size_t)n);
        char what[160];
        snprintf(what, sizeof what, "rule params {%s} where %s", cases[i].params, cases[i].where);
        hx_result r;
        hx_run(&r, "check", "--rules", path, w->trace);
        hx_expect_rule_error(what, &r, 2, cases[i].part);
        hx_free(&r);
    }
    free(path);
}

/* ------------------------------------------------------------- options */

static void test_unknown_short_option(void **state)
{
    world *w = *state;
    hx_result r;
    hx_run(&r, "check", "--quiet", "-xq", w->trace);
    hx_expect_line("check --quiet -xq", &r, 2, "unknown option '-x'");
    if (strstr(r.err, "--quiet")) fail_msg("check --quiet -xq: blames --quiet: %s", r.err);
    hx_free(&r);
    hx_run(&r, "check", "-x", w->trace);
    hx_expect_line("check -x", &r, 2, "unknown option '-x'");
    hx_free(&r);
    hx_run(&r, "check", "--quiet", "-qo");
    hx_expect_line("check --quiet -qo", &r, 2, "option '-o' needs a value");
    hx_free(&r);
    hx_run(&r, "check", "--no-such", w->trace);
    hx_expect_line("check --no-such", &r, 2, "'--no-such'");
    hx_free(&r);
    hx_run(&r, "merge", "--quiet", "-zq", "r.json");
    hx_expect_line("merge --quiet -zq", &r, 2, "unknown option '-z'");
    hx_free(&r);
}

/* The github format appends the job summary itself and only says that it
** failed: the message names the summary and the reason, not a report on
** standard output with whatever errno was left. */
static void test_job_summary_unwritable(void **state)
{
    world *w = *state;
    char *summary = hx_path(w->dir, "no-such-dir/summary.md");
    setenv("GITHUB_STEP_SUMMARY", summary, 1);
    hx_result r;
    hx_run(&r, "check", "--format", "github", "--fail-on", "never", w->trace);
    unsetenv("GITHUB_STEP_SUMMARY");
    hx_expect_line("GITHUB_STEP_SUMMARY in a missing folder", &r, 4,
                   "cannot append the GitHub job summary to");
    if (!strstr(r.err, "No such file or directory")) fail_msg("no reason: %s", r.err);
    if (!strstr(r.out, "::error")) fail_msg("the annotations were lost: %.300s", r.out);
    hx_free(&r);
    free(summary);
}

/* ------------------------------------------------------- NUL in a name */

/* One blocking 16 MiB copy launched by the call named by StringIds id 3. */
static char *copy_trace(const char *name_sql)
{
    char rows[2048];
    snprintf(rows, sizeof rows,
             "INSERT INTO StringIds VALUES (1, 'saxpy'), (2, 'cudaLaunchKernel'), (3, %s);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
             "  demangledName, shortName) VALUES (1000, 2000, 0, 7, 1, 1 << 24, 1, 1);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
             "  VALUES (500, 900, (1 << 24) | 1, 1, 2), (5000, 6000, (1 << 24) | 1, 3, 3);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid,"
             "  bytes, copyKind, srcKind, dstKind) VALUES (5100, 5900, 0, 7, 3, 1 << 24, 16777216, 1, 0, 2);",
             name_sql);
    char *path = tg_fixture_build(tg_fixture_schema_3_0, rows);
    assert_non_null(path);
    return path;
}

/* The status of one rule in a JSON report. */
static char *rule_status(const char *json, const char *rule)
{
    char key[128];
    snprintf(key, sizeof key, "\"rule\": \"%s\"", rule);
    const char *p = strstr(json, key);
    if (!p) return NULL;
    p = strstr(p, "\"status\": \"");
    if (!p) return NULL;
    p += strlen("\"status\": \"");
    return strndup(p, strcspn(p, "\""));
}

static void expect_rule(const char *what, const char *json, const char *rule, const char *status)
{
    char *got = rule_status(json, rule);
    if (!got || strcmp(got, status)) fail_msg("%s: %s is %s, expected %s", what, rule, got ? got : "absent", status);
    free(got);
}

static void test_nul_inside_name(void **state)
{
    world *w = *state;
    char *rules = hx_path(w->dir, "names.yaml");
    static const char text[] =
        "version: 1\nrules:\n"
        "  - id: exact-memcpy\n    title: t\n    severity: error\n    source: api\n"
        "    where: name == \"cudaMemcpy\"\n    fail_when: count > 0\n    message: \"{count}\"\n"
        "  - id: async-memcpy\n    title: t\n    severity: error\n    source: api\n"
        "    where: name startswith \"cudaMemcpy\" and name contains \"Async\"\n"
        "    fail_when: count > 0\n    message: \"{count}\"\n"
        "  - id: replaced-name\n    title: t\n    severity: error\n    source: api\n"
        "    where: name == \"cudaMemcpy\xef\xbf\xbd" "Async\"\n    fail_when: count > 0\n    message: \"{count}\"\n";
    hx_write_file(rules, text, sizeof text - 1);

    /* control: the plain name is a blocking copy */
    char *plain = copy_trace("'cudaMemcpy'");
    hx_result r;
    hx_run(&r, "check", "--format", "json", "--rules", "builtin", "--rules", rules, "--missing-data", "skip", plain);
    expect_rule("cudaMemcpy", r.out, "sync-memcpy", "fail");
    expect_rule("cudaMemcpy", r.out, "exact-memcpy", "fail");
    expect_rule("cudaMemcpy", r.out, "async-memcpy", "pass");
    expect_rule("cudaMemcpy", r.out, "replaced-name", "pass");
    hx_free(&r);

    /* 'cudaMemcpy' || char(0) || 'Async': not cudaMemcpy for SQL */
    char *nul = copy_trace("CAST(X'637564614D656D637079004173796E63' AS TEXT)");
    hx_run(&r, "check", "--format", "json", "--rules", "builtin", "--rules", rules, "--missing-data", "skip", nul);
    expect_rule("cudaMemcpy\\0Async", r.out, "sync-memcpy", "pass");
    expect_rule("cudaMemcpy\\0Async", r.out, "exact-memcpy", "pass");
    /* the NUL reads as U+FFFD: the name is whole, and visibly damaged */
    expect_rule("cudaMemcpy\\0Async", r.out, "async-memcpy", "fail");
    expect_rule("cudaMemcpy\\0Async", r.out, "replaced-name", "fail");
    hx_free(&r);

    /* a trailing NUL (a C writer's terminator) is no part of the name */
    char *terminated = copy_trace("CAST(X'637564614D656D63707900' AS TEXT)");
    hx_run(&r, "check", "--format", "json", "--rules", "builtin", "--rules", rules, "--missing-data", "skip",
           terminated);
    expect_rule("cudaMemcpy\\0", r.out, "sync-memcpy", "fail");
    expect_rule("cudaMemcpy\\0", r.out, "exact-memcpy", "fail");
    hx_free(&r);
    tg_fixture_remove(terminated);
    tg_fixture_remove(plain);
    tg_fixture_remove(nul);
    free(rules);
}

int main(int argc, char **argv)
{
    example_arg = argc > 1 ? realpath(argv[1], NULL) : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_latin1_baseline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_overflow_and_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_file_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_short_option, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_summary_unwritable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_inside_name, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
