/*
** `tracegate rules test` as a user runs it: the built-in rules' tests pass
** (and every built-in rule has a test file), the deliberately wrong file in
** broken/ fails with a readable diff and exit 1, the malformed one exits 2
** with file:line:col errors, --keep leaves a trace `tracegate info` reads,
** and the summary line is always last, alone.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tg_config.h"

static char bin[4096], dir[2048];

/* Run a shell command line with the binary; stdout+stderr into out. */
static int run(const char *args, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 '%s' %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = 0, cap = 4096;
    *out = malloc(cap);
    size_t got;
    while ((got = fread(*out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) *out = realloc(*out, cap *= 2);
    }
    (*out)[len] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last line of out (without its newline) must be exactly `want`. */
static void assert_last_line(const char *out, const char *want)
{
    size_t len = strlen(out);
    assert_true(len > 0 && out[len - 1] == '\n');
    const char *start = out + len - 1;
    while (start > out && start[-1] != '\n') start--;
    size_t l = (size_t)(out + len - 1 - start);
    if (l != strlen(want) || memcmp(start, want, l) != 0) print_error("last line: %.*s\n", (int)l, start);
    assert_int_equal(l, strlen(want));
    assert_memory_equal(start, want, l);
}

#define NEED_BINARY() \
    do { if (!bin[0]) skip(); } while (0)

static void test_builtin_rule_tests_pass(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[8192];
    snprintf(args, sizeof args, "rules test '%s'", dir);
    int st = run(args, &out);
    if (st != 0) print_error("%s", out);
    assert_int_equal(st, 0);
    assert_null(strstr(out, "FAILED"));
    assert_null(strstr(out, "broken/"));   /* not recursive */
    /* one "ok" line per case, and the count in the summary */
    size_t oks = 0;
    for (const char *p = out; (p = strstr(p, "ok   ")) != NULL; p++) oks++;
    assert_true(oks >= 100);
    char summary[64];
    snprintf(summary, sizeof summary, "%zu passed, 0 failed", oks);
    assert_last_line(out, summary);
    free(out);

    /* every built-in rule has its test file */
    assert_int_equal(run("rules list builtin", &out), 0);
    char *save = NULL;
    size_t rules = 0;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "ID ", 3)) continue;
        char id[128], path[8400];
        assert_int_equal(sscanf(line, "%127s", id), 1);
        snprintf(path, sizeof path, "%s/%s.test.yaml", dir, id);
        if (access(path, R_OK) != 0) print_error("no rule test file for built-in rule %s\n", id);
        assert_int_equal(access(path, R_OK), 0);
        rules++;
    }
    assert_int_equal(rules, 14);
    free(out);
}

static void test_wrong_expectation_fails_with_diff(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[8192];
    snprintf(args, sizeof args, "rules test '%s/broken/wrong-expectation.test.yaml'", dir);
    assert_int_equal(run(args, &out), 1);
    char want[8400];
    snprintf(want, sizeof want, "ok   %s/broken/wrong-expectation.test.yaml:8 a blocking 16 MiB copy fires\n", dir);
    assert_non_null(strstr(out, want));
    snprintf(want, sizeof want, "FAILED %s/broken/wrong-expectation.test.yaml:17 a blocking 16 MiB copy passes (wrong)\n"
                                "    - expected\n"
                                "    + actual\n"
                                "    - status: pass\n"
                                "    + status: fail\n"
                                "    - count: 0\n"
                                "    + count: 1\n"
                                "    - values.sum_bytes: 64KB\n"
                                "    + values.sum_bytes: 16777216B\n"
                                "    - evidence[0].rowid: 2\n"
                                "    + evidence[0].rowid: 1\n"
                                "    (rule sync-memcpy gave fail, count 1: \"1 synchronous copy blocked the host",
             dir);
    if (!strstr(out, want)) print_error("%s", out);
    assert_non_null(strstr(out, want));
    assert_last_line(out, "1 passed, 1 failed");
    free(out);

    /* with the passing folder too: still 1, the counts add up */
    snprintf(args, sizeof args, "rules test '%s' '%s/broken/wrong-expectation.test.yaml'", dir, dir);
    assert_int_equal(run(args, &out), 1);
    assert_non_null(strstr(out, " failed\n"));
    assert_non_null(strstr(out, ", 1 failed\n"));
    free(out);
}

static void test_malformed_exits_2(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[8192], want[8400];
    snprintf(args, sizeof args, "rules test '%s/broken/malformed.test.yaml'", dir);
    assert_int_equal(run(args, &out), 2);
    snprintf(want, sizeof want, "%s/broken/malformed.test.yaml:10:26: error: unknown key 'duraton' in a memcpy "
                                "entry (did you mean 'duration'?)\n"
                                "            - {start: 1ms, duraton: 2ms}\n"
                                "                           ^\n", dir);
    if (!strstr(out, want)) print_error("%s", out);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "malformed.test.yaml:11:36: error: duration wants a duration"));
    assert_non_null(strstr(out, "malformed.test.yaml:12:22: error: status must be pass, fail, skip, error or inconclusive"));
    assert_last_line(out, "0 passed, 0 failed");
    free(out);
    /* a malformed file outranks failures: the whole broken/ folder exits 2 */
    snprintf(args, sizeof args, "rules test '%s/broken'", dir);
    assert_int_equal(run(args, &out), 2);
    assert_last_line(out, "1 passed, 1 failed");
    free(out);
}

static void test_usage_errors(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[8192];
    assert_int_equal(run("rules test", &out), 2);
    assert_non_null(strstr(out, "rules test needs at least one PATH (see 'tracegate rules test --help')"));
    free(out);
    assert_int_equal(run("rules test /nonexistent/x.test.yaml", &out), 2);
    assert_non_null(strstr(out, "/nonexistent/x.test.yaml: no such file or folder"));
    free(out);
    assert_int_equal(run("rules test --frobnicate x", &out), 2);
    assert_non_null(strstr(out, "unknown option '--frobnicate' (see 'tracegate rules test --help')"));
    free(out);
    assert_int_equal(run("rules test --kepe x", &out), 2);
    assert_non_null(strstr(out, "unknown option '--kepe' (did you mean '--keep'?)"));
    free(out);
    /* a folder without test files */
    snprintf(args, sizeof args, "rules test '%s/baselines'", dir);
    assert_int_equal(run(args, &out), 2);
    assert_non_null(strstr(out, "no rule test files (*.test.yaml, *.test.yml, *_test.yaml or *_test.yml)"));
    free(out);
    assert_int_equal(run("rules test --help", &out), 0);
    assert_non_null(strstr(out, "--keep"));
    free(out);
}

static void test_keep(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[8192];
    snprintf(args, sizeof args, "rules test --keep '%s/sync-memset.test.yaml'", dir);
    assert_int_equal(run(args, &out), 0);
    char *k = strstr(out, "    kept: ");
    assert_non_null(k);
    char kept[4096];
    assert_int_equal(sscanf(k, "    kept: %4095s", kept), 1);
    assert_non_null(strstr(kept, "sync-memset-line6.sqlite"));
    char *info;
    snprintf(args, sizeof args, "info --format json '%s'", kept);
    assert_int_equal(run(args, &info), 0);
    assert_non_null(strstr(info, "\"schema_version\": \"3.0.0\""));
    assert_non_null(strstr(info, "\"memset\": 1"));
    free(info);
    /* every case kept its own file; remove them all */
    for (char *p = out; (p = strstr(p, "    kept: ")) != NULL; p++) {
        assert_int_equal(sscanf(p, "    kept: %4095s", kept), 1);
        assert_int_equal(unlink(kept), 0);
        *strrchr(kept, '/') = 0;
        assert_int_equal(rmdir(kept), 0);
    }
    free(out);
}

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("TG_BINARY");
    const char *root = getenv("TG_SOURCE_ROOT");
    snprintf(dir, sizeof dir, "%s/tests/rules", root ? root : TG_SOURCE_ROOT);
    if (b && access(b, X_OK) == 0) snprintf(bin, sizeof bin, "%s", b);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_rule_tests_pass),
        cmocka_unit_test(test_wrong_expectation_fails_with_diff),
        cmocka_unit_test(test_malformed_exits_2),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_keep),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
