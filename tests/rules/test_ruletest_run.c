/*
** Running rule test files through the library (tg_ruletest_run): the rule
** set a file gets (built-in plus the rule file beside it, or `rules:`), a
** `trace:` input, temporary files (removed, or kept), and the problems
** that make a file malformed -- unknown rule or param, rules or a baseline
** that do not load -- reported at the test file's positions, versus a
** case that fails because its input cannot be read or compared.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "ruletest/ruletest.h"
#include "trace/trace.h"
#include "tg_config.h"

static char builtin[4200], source_root[2048];

/* A folder (from the fixture helper) holding trace.sqlite: one blocking
** 16 MiB copy through cuMemcpyHtoD_v2. */
static char *trace_dir_file(void)
{
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (1, 'cuMemcpyHtoD_v2');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId)"
        "  VALUES (900000, 3100000, 1, (1 << 48) | (77 << 24) | 77, 9, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
        "  globalPid, bytes, copyKind, srcKind, dstKind)"
        "  VALUES (1000000, 3000000, 0, 1, 7, 9, (1 << 48) | (77 << 24), 16777216, 1, 0, 2);");
    assert_non_null(p);
    return p;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The folder of a fixture path (a copy). */
static char *dir_of(const char *path)
{
    char *d = strdup(path);
    *strrchr(d, '/') = 0;
    return d;
}

typedef struct ran {
    tg_ruletest_file *f;
    tg_rt_report rep;
    tg_diag diag;
    tg_status st;
} ran;

static void run_file(ran *r, const char *path, const tg_rt_opts *opts)
{
    memset(r, 0, sizeof *r);
    tg_diag_init(&r->diag);
    r->f = tg_ruletest_load(path, &r->diag);
    for (size_t k = 0; k < r->diag.n; k++) print_error("%s\n", r->diag.msgs[k].text);
    assert_non_null(r->f);
    r->st = tg_ruletest_run(r->f, opts, &r->rep, &r->diag);
}

static void ran_free(ran *r)
{
    tg_rt_report_free(&r->rep);
    tg_ruletest_free(r->f);
    tg_diag_clear(&r->diag);
}

static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A rule test takes the path `check` takes (engine/check): a rule on the
** api source with a `where` gets the API table streamed through the launch
** join (only the calls it admits kept); a rule that may count any call
** gets it whole. The result says which. */
static void test_same_pipeline_as_check(void **state)
{
    (void)state;
    char *trace = trace_dir_file(), *dir = dir_of(trace);
    /* the built-in rules: every rule on api has a `where` */
    write_file(dir, "lean.test.yaml",
               "version: 1\ntests:\n"
               "  - name: blocking calls, streamed\n    rule: blocking-sync-api\n"
               "    input:\n      events:\n        api:\n"
               "          - {name: cudaStreamSynchronize, start: 0, duration: 1ms, repeat: {count: 3, every: 2ms}}\n"
               "          - {name: cudaGetDevice, start: 0.5ms, duration: 1us, repeat: {count: 50, every: 10us}}\n"
               "    expect: {status: fail}\n");
    /* plus a team rule that may count any call */
    write_file(dir, "team.yaml",
               "version: 1\nrules:\n"
               "  - id: every-call\n    title: Calls\n    severity: info\n    source: api\n"
               "    fail_when: count > 100\n");
    write_file(dir, "team.test.yaml",
               "version: 1\ntests:\n"
               "  - name: every call, loaded whole\n    rule: every-call\n    input: {trace: trace.sqlite}\n"
               "    expect: {status: pass, count: 1}\n");
    tg_rt_opts opts = {.builtin_rules = builtin};
    char path[4200];
    ran r;
    snprintf(path, sizeof path, "%s/lean.test.yaml", dir);
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.rep.passed, 1);
    assert_true(r.rep.results[0].api_streamed);
    ran_free(&r);
    snprintf(path, sizeof path, "%s/team.test.yaml", dir);
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.rep.passed, 1);
    assert_false(r.rep.results[0].api_streamed);
    ran_free(&r);
    free(dir);
    tg_fixture_remove(trace);
}

/* The built-in rules plus the rule file beside the test, on a trace. */
static void test_trace_input_and_sibling_rules(void **state)
{
    (void)state;
    char *trace = trace_dir_file(), *dir = dir_of(trace);
    write_file(dir, "team.yaml",
               "version: 1\nrules:\n  - id: big-copies\n    title: Big copies\n    severity: info\n"
               "    source: memcpy\n    where: bytes >= 1MiB\n    fail_when: count > 0\n");
    write_file(dir, "team.test.yaml",
               "version: 1\ntests:\n"
               "  - name: the team rule sees the copy\n    rule: big-copies\n    input: {trace: trace.sqlite}\n"
               "    expect: {status: fail, count: 1, evidence: [{rowid: 1, start: 1ms}]}\n"
               "  - name: so does a built-in rule\n    rule: sync-memcpy\n    input: {trace: trace.sqlite}\n"
               "    expect: {status: fail, count: 1, values: {sum_bytes: 16MiB}}\n"
               "  - name: a trace that is not there fails the case\n    rule: sync-memcpy\n"
               "    input: {trace: gone.sqlite}\n    expect: {status: pass}\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/team.test.yaml", dir);
    tg_rt_opts opts = {.builtin_rules = builtin};
    ran r;
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.diag.n, 0);
    assert_int_equal(r.rep.n_results, 3);
    assert_int_equal(r.rep.passed, 2);
    assert_int_equal(r.rep.failed, 1);
    assert_true(r.rep.results[0].passed);
    assert_int_equal(r.rep.results[0].verdict, TG_V_FAIL);
    assert_true(r.rep.results[1].passed);
    assert_false(r.rep.results[2].passed);
    assert_non_null(r.rep.results[2].error);
    assert_non_null(strstr(r.rep.results[2].error, "gone.sqlite"));
    assert_int_equal(r.rep.results[2].c->pos.line, 11);
    ran_free(&r);

    /* a rule folder skips the test files beside its rules */
    write_file(dir, "folder.test.yaml",
               "version: 1\nrules: [builtin, .]\ntests:\n"
               "  - name: x\n    rule: big-copies\n    input: {trace: trace.sqlite}\n    expect: {status: fail}\n");
    snprintf(path, sizeof path, "%s/folder.test.yaml", dir);
    run_file(&r, path, &opts);
    for (size_t k = 0; k < r.diag.n; k++) print_error("%s\n", r.diag.msgs[k].text);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.rep.passed, 1);
    ran_free(&r);

    /* `rules:` replaces the default set: the built-in rule is unknown now */
    write_file(dir, "only.test.yaml",
               "version: 1\nrules: team.yaml\ntests:\n"
               "  - name: x\n    rule: sync-memcpy\n    input: {trace: trace.sqlite}\n    expect: {status: fail}\n");
    snprintf(path, sizeof path, "%s/only.test.yaml", dir);
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_EUSAGE);
    assert_int_equal(r.rep.n_results, 0);
    assert_int_equal(r.diag.n_errors, 1);
    assert_int_equal(r.diag.msgs[0].pos.line, 5);
    assert_int_equal(r.diag.msgs[0].pos.col, 11);
    assert_non_null(strstr(r.diag.msgs[0].text, "no rule 'sync-memcpy' in the loaded rules"));
    assert_string_equal(r.diag.msgs[0].line_text, "    rule: sync-memcpy");
    ran_free(&r);
    free(dir);
    tg_fixture_remove(trace);
}

static void test_malformed_at_run(void **state)
{
    (void)state;
    char *trace = trace_dir_file(), *dir = dir_of(trace);
    write_file(dir, "bad.test.yaml",
               "version: 1\ntests:\n"
               "  - name: a typo in the rule id\n    rule: sync-memcpi\n    input: {trace: trace.sqlite}\n"
               "    expect: {status: fail}\n"
               "  - name: an unknown param\n    rule: sync-memcpy\n    params: {small: 1MB}\n"
               "    input: {trace: trace.sqlite}\n    expect: {status: fail}\n"
               "  - name: a baseline that is not there\n    rule: gpu-time-regression\n    baseline: nothere.yaml\n"
               "    input: {trace: trace.sqlite}\n    expect: {status: pass}\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/bad.test.yaml", dir);
    tg_rt_opts opts = {.builtin_rules = builtin};
    ran r;
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_EUSAGE);
    assert_int_equal(r.rep.n_results, 0);
    assert_true(r.diag.n_errors >= 3);
    assert_int_equal(r.diag.msgs[0].pos.line, 4);
    assert_non_null(strstr(r.diag.msgs[0].text, "did you mean 'sync-memcpy'"));
    assert_int_equal(r.diag.msgs[1].pos.line, 9);
    assert_int_equal(r.diag.msgs[1].pos.col, 13);
    assert_non_null(strstr(r.diag.msgs[1].text, "has no param 'small'"));
    bool baseline_named = false, baseline_pos = false;
    for (size_t k = 2; k < r.diag.n; k++) {
        baseline_named |= strstr(r.diag.msgs[k].text, "the baseline cannot be opened") != NULL;
        baseline_pos |= r.diag.msgs[k].pos.line == 14 && strstr(r.diag.msgs[k].text, "does not load");
    }
    assert_true(baseline_named);
    assert_true(baseline_pos);
    ran_free(&r);

    /* rules that do not load stop the file, with their own positions */
    write_file(dir, "broken.yaml", "version: 1\nrules:\n  - id: x\n    source: memcpi\n");
    write_file(dir, "r.test.yaml",
               "version: 1\nrules: [broken.yaml]\ntests:\n"
               "  - name: x\n    rule: x\n    input: {trace: trace.sqlite}\n    expect: {status: fail}\n");
    snprintf(path, sizeof path, "%s/r.test.yaml", dir);
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_EUSAGE);
    assert_non_null(strstr(r.diag.msgs[0].pos.file, "broken.yaml"));
    assert_non_null(strstr(r.diag.msgs[r.diag.n - 1].text, "the rules of this test file do not load"));
    assert_int_equal(r.diag.msgs[r.diag.n - 1].pos.line, 2);
    ran_free(&r);

    /* no built-in rules to fall back on */
    opts.builtin_rules = NULL;
    snprintf(path, sizeof path, "%s/bad.test.yaml", dir);
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_EUSAGE);
    assert_non_null(strstr(r.diag.msgs[0].text, "built-in rules (rules.d) were not found"));
    ran_free(&r);
    free(dir);
    tg_fixture_remove(trace);
}

static const char *const events_case =
    "version: 1\ntests:\n"
    "  - name: inline events\n    rule: sync-memcpy\n"
    "    input:\n      events:\n        memcpys:\n"
    "          - {start: 1ms, duration: 2ms, bytes: 16MiB, launch: {name: cudaMemcpy, start: 0.9ms, end: 3.1ms}}\n"
    "    expect: {status: fail, count: 1}\n";

static void test_temporary_files(void **state)
{
    (void)state;
    char *trace = trace_dir_file(), *dir = dir_of(trace);
    char tmp[4200], path[4200];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    assert_int_equal(mkdir(tmp, 0700), 0);
    write_file(dir, "ev.test.yaml", events_case);
    snprintf(path, sizeof path, "%s/ev.test.yaml", dir);

    tg_rt_opts opts = {.builtin_rules = builtin, .tmpdir = tmp};
    ran r;
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.rep.passed, 1);
    assert_null(r.rep.results[0].kept);
    assert_int_equal(entries(tmp), 0);   /* folder and file removed */
    ran_free(&r);

    opts.keep = true;
    run_file(&r, path, &opts);
    assert_int_equal(r.rep.passed, 1);
    const char *kept = r.rep.results[0].kept;
    assert_non_null(kept);
    assert_true(strncmp(kept, tmp, strlen(tmp)) == 0);
    assert_non_null(strstr(kept, "/tracegate-ruletest-"));
    assert_non_null(strstr(kept, "/ev-line3.sqlite"));
    assert_int_equal(access(kept, R_OK), 0);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(kept, &d);
    assert_non_null(t);
    assert_int_equal(t->n_memcpys, 1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    char *kdir = dir_of(kept);
    unlink(kept);
    rmdir(kdir);
    free(kdir);
    ran_free(&r);
    rmdir(tmp);
    free(dir);
    tg_fixture_remove(trace);
}

/* A baseline from another GPU makes the case fail with the reason. */
static void test_baseline_mismatch_fails_case(void **state)
{
    (void)state;
    char *trace = trace_dir_file(), *dir = dir_of(trace);
    char text[8192], path[4200];
    snprintf(text, sizeof text,
             "version: 1\ntests:\n"
             "  - name: another GPU\n    rule: gpu-time-regression\n"
             "    baseline: %s/tests/rules/baselines/train-10ms.yaml\n"
             "    input:\n      events:\n"
             "        devices: [{name: NVIDIA A100-SXM4-80GB}]\n"
             "        nvtx: [{name: iteration, start: 0, duration: 6ms, repeat: {count: 25, every: 10ms}}]\n"
             "        kernels: [{start: 1ms, duration: 4ms, launch: cudaLaunchKernel, repeat: {count: 25, every: 10ms}}]\n"
             "    expect: {status: pass}\n",
             source_root);
    write_file(dir, "gpu.test.yaml", text);
    snprintf(path, sizeof path, "%s/gpu.test.yaml", dir);
    tg_rt_opts opts = {.builtin_rules = builtin};
    ran r;
    run_file(&r, path, &opts);
    assert_int_equal(r.st, TG_OK);
    assert_int_equal(r.rep.failed, 1);
    assert_non_null(r.rep.results[0].error);
    assert_non_null(strstr(r.rep.results[0].error, "NVIDIA A100-SXM4-80GB"));
    ran_free(&r);
    free(dir);
    tg_fixture_remove(trace);
}

static int setup(void **state)
{
    (void)state;
    const char *root = getenv("TG_SOURCE_ROOT");
    snprintf(source_root, sizeof source_root, "%s", root ? root : TG_SOURCE_ROOT);
    snprintf(builtin, sizeof builtin, "%s/rules.d", source_root);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_pipeline_as_check),
        cmocka_unit_test(test_trace_input_and_sibling_rules),
        cmocka_unit_test(test_malformed_at_run),
        cmocka_unit_test(test_temporary_files),
        cmocka_unit_test(test_baseline_mismatch_fails_case),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
