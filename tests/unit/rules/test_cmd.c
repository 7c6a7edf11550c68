/*
** The commands over engine/rules, run as a user would: `tracegate rules
** list|lint|test|fields` and `tracegate explain`, their output and exit
** statuses (2 for rule errors, with file:line:col, the line and a caret).
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
#include "model/source.h"

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
    /* the built-in rules lint clean: the params only the baseline
    ** comparison reads (params.def) are not "never used" */
    assert_int_equal(run("rules lint builtin", &out), 0);
    assert_string_equal(out, "no problems found in 1 path\n");
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

/* The number of lines of s. */
static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* `rules fields`: every field of the tables (fields.def) is printed, with
** its type, unit and meaning, under its source; one source alone. */
static void test_fields_text(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out;
    assert_int_equal(run("rules fields", &out), 0);
    for (int s = 0; s < TG_SRC_COUNT; s++) {
        char head[256];
        snprintf(head, sizeof head, "%s%s: %s\n", s ? "\n" : "", tg_source_defs[s].name, tg_source_defs[s].doc);
        assert_non_null(strstr(out, head));
    }
    for (size_t i = 0; i < tg_field_count; i++) {
        const tg_field_def *f = &tg_field_defs[i];
        char head[256], pat[512];
        snprintf(head, sizeof head, "%s: %s\n", tg_source_defs[f->source].name, tg_source_defs[f->source].doc);
        snprintf(pat, sizeof pat, "\n  %s ", f->name);
        const char *section = strstr(out, head);
        assert_non_null(section);
        const char *line = strstr(section, pat);
        assert_non_null(line);
        const char *eol = strchr(line + 1, '\n');
        assert_non_null(eol);
        char row[512];
        snprintf(row, sizeof row, "%.*s", (int)(eol - line), line);
        assert_non_null(strstr(row, tg_type_name(f->type)));
        assert_non_null(strstr(row, f->unit ? tg_unit_key(f->unit) : " - "));
        assert_non_null(strstr(row, f->doc));
    }
    assert_non_null(strstr(out, "  queue        int     ns     yes   start - end of launching call"));
    assert_non_null(strstr(out, "memcpy: one row per memory copy\n  needs CUPTI_ACTIVITY_KIND_RUNTIME"));
    assert_non_null(strstr(out, "(CUDA kernels, recorded by 'nsys profile -t cuda'; in a Kineto trace, its kernel events)"));
    free(out);

    assert_int_equal(run("rules fields gap", &out), 0);
    assert_non_null(strstr(out, "gap: one row per idle interval"));
    assert_null(strstr(out, "kernel: "));
    assert_null(strstr(out, "device: "));
    assert_non_null(strstr(out, "  in_steady_state  bool"));
    free(out);
}

static void test_fields_markdown(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out;
    assert_int_equal(run("rules fields --format markdown memcpy", &out), 0);
    assert_true(strncmp(out, "### `memcpy`\n\nOne row per memory copy. A rule on it needs "
                             "`CUPTI_ACTIVITY_KIND_RUNTIME`", 76) == 0);
    assert_non_null(strstr(out, "| field | type | unit | null | meaning |\n|---|---|---|---|---|\n"));
    assert_non_null(strstr(out, "| `bytes` | int | bytes |  | bytes copied |\n"));
    assert_non_null(strstr(out, "| `kind` | string |  | yes | copy kind: HtoD,"));
    assert_null(strstr(out, "### `kernel`"));
    free(out);
    assert_int_equal(run("rules fields --format=md", &out), 0);
    for (int s = 0; s < TG_SRC_COUNT; s++) {
        char head[64];
        snprintf(head, sizeof head, "### `%s`\n", tg_source_defs[s].name);
        assert_non_null(strstr(out, head));
    }
    assert_non_null(strstr(out, "reads these fields as `trace.NAME`"));
    free(out);
}

/* An unknown source, format or extra argument: one sentence, exit 2. */
static void test_fields_errors(void **state)
{
    (void)state;
    NEED_BINARY();
    char *out;
    assert_int_equal(run("rules fields kernal", &out), 2);
    assert_string_equal(out, "tracegate: rules fields: unknown source 'kernal' (did you mean 'kernel'?)\n");
    free(out);
    assert_int_equal(run("rules fields --format md iteraton", &out), 2);
    assert_non_null(strstr(out, "(did you mean 'iteration'?)"));
    assert_int_equal(lines(out), 1);
    free(out);
    assert_int_equal(run("rules fields zzz", &out), 2);
    assert_string_equal(out, "tracegate: rules fields: unknown source 'zzz' (sources: kernel, memcpy, memset, "
                             "api, nvtx, iteration, gap, device, trace, osrt, cudnn or cublas)\n");
    free(out);
    assert_int_equal(run("rules fields --format yaml", &out), 2);
    assert_string_equal(out, "tracegate: --format wants text or markdown, not 'yaml' "
                             "(see 'tracegate rules fields --help')\n");
    free(out);
    assert_int_equal(run("rules fields kernel gap", &out), 2);
    assert_int_equal(lines(out), 1);
    free(out);
    assert_int_equal(run("rules fields --format", &out), 2);
    free(out);
    assert_int_equal(run("rules fields --help", &out), 0);
    assert_non_null(strstr(out, "usage: tracegate rules fields [options] [SOURCE]"));
    assert_non_null(strstr(out, "FORMAT: text or markdown"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_lint),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_rules_test_usage),
        cmocka_unit_test(test_fields_text),
        cmocka_unit_test(test_fields_markdown),
        cmocka_unit_test(test_fields_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
