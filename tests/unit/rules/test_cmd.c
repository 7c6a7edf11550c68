/*
** The commands over engine/rules, run as a user would: `tracegate rules
** list|lint|test` and `tracegate explain`, their output and exit statuses
** (2 for rule errors, with file:line:col, the line and a caret).
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

static char bin[4096], data[4096];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("TG_BINARY");
    const char *root = getenv("TG_SOURCE_ROOT");
    if (!b || access(b, X_OK) != 0) return 0;
    snprintf(bin, sizeof bin, "%s", b);
    snprintf(data, sizeof data, "%s/tests/unit/rules/data", root ? root : TG_SOURCE_ROOT);
    return 0;
}

/* Run a shell command line; stdout+stderr into out (malloc'd); exit status. */
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

#define NEED_BINARY() \
    do { if (!bin[0]) skip(); } while (0)

static void test_list(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[12288];
    snprintf(args, sizeof args, "rules list %s/design-example.yaml %s/custom.yaml", data, data);
    assert_int_equal(run(args, &out), 0);
    assert_non_null(strstr(out, "sync-memcpy      warning   memcpy     Synchronous memcpy blocks the host ("));
    assert_non_null(strstr(out, "design-example.yaml:9)"));
    assert_non_null(strstr(out, "step-gpu-time    error     iteration  GPU time per step regressed"));
    free(out);
}

static void test_lint(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[12288];
    snprintf(args, sizeof args, "rules lint %s/design-example.yaml", data);
    assert_int_equal(run(args, &out), 0);
    assert_non_null(strstr(out, "design-example.yaml:7:3: warning: macro 'steady' is never used"));
    assert_non_null(strstr(out, "0 errors, 3 warnings"));
    free(out);
    char path[] = "/tmp/tg_lint_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("version: 1\nrules:\n  - id: x\n    title: t\n    severity: error\n    source: memcpy\n"
          "    where: api_sync and bytes > 64kb\n    fail_when: count > 0\n    advice: a\n", f);
    fclose(f);
    snprintf(args, sizeof args, "rules lint %s", path);
    assert_int_equal(run(args, &out), 2);
    assert_non_null(strstr(out, ":7:35: error: unknown unit 'kb' in '64kb' (did you mean 'KB'?)\n"
                                "      where: api_sync and bytes > 64kb\n"
                                "                                    ^"));
    free(out);
    snprintf(args, sizeof args, "rules list %s", path);
    assert_int_equal(run(args, &out), 2);
    free(out);
    unlink(path);
}

static void test_explain(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out, args[12288];
    snprintf(args, sizeof args, "explain --rules %s/design-example.yaml --rules %s/custom.yaml "
                                "--set large-dtoh-copy.max_total=25ms large-dtoh-copy", data, data);
    assert_int_equal(run(args, &out), 0);
    assert_non_null(strstr(out, "max_total = 25ms (= 25000000 ns)   (from --set)"));
    assert_non_null(strstr(out, "    params.max_total = 25ms (= 25000000 ns) : int duration"));
    free(out);
    snprintf(args, sizeof args, "explain --rules %s/design-example.yaml no-such-rule", data);
    assert_int_equal(run(args, &out), 2);
    assert_non_null(strstr(out, "no rule 'no-such-rule'"));
    free(out);
    snprintf(args, sizeof args, "explain --rules %s/design-example.yaml --set sync-memcpy.x=1 sync-memcpy", data);
    assert_int_equal(run(args, &out), 2);
    assert_non_null(strstr(out, "--set: error: sync-memcpy.x=1: rule 'sync-memcpy' has no param 'x'"));
    free(out);
}

/* `rules test` itself is tested in tests/rules/test_ruletest_cli.c. */
static void test_rules_test_usage(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out;
    assert_int_equal(run("rules test whatever.yaml", &out), 2);
    assert_non_null(strstr(out, "whatever.yaml: no such file or folder"));
    free(out);
    assert_int_equal(run("rules frobnicate", &out), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_lint),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_rules_test_usage),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
