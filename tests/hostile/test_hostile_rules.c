/*
** Hostile rule files, baselines and patterns, through the binary: YAML
** alias bombs and deep nesting, expressions nested 10000 deep or 1 MB
** long, regular expressions that would take gigabytes or seconds
** (`matches`, --iteration-pattern), rule and baseline paths that are a
** FIFO, a device, an empty folder or binary junk. Each must exit 2 with
** one error message (file:line:col, the line cut to a window, a caret),
** within the deadline.
*/
#include <setjmp.h>
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

#define RULE_HEAD "version: 1\nrules:\n  - id: hostile\n    title: hostile\n    severity: error\n" \
                  "    source: kernel\n    fail_when: count > 0\n    message: m\n"

typedef struct world {
    char *dir;
    char *trace;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->dir = hx_tempdir();
    w->trace = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (1, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'), (2, 'cudaLaunchKernel');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, correlationId, globalPid, demangledName, shortName)"
        " VALUES (1000, 2000, 1, 1 << 24, 1, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (500, 900, (1 << 24) | 1, 1, 2);");
    if (!w->trace) return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    free(w->dir);
    tg_fixture_remove(w->trace);
    free(w);
    return 0;
}

/* Growable text for generated files. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    if (t->n + (size_t)n + 1 > t->cap) {
        t->cap = (t->n + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)n;
}

static void repeat(text *t, const char *s, size_t times)
{
    for (size_t i = 0; i < times; i++) put(t, "%s", s);
}

/* Write t as DIR/name and run `check --rules` on it: exit 2, one error. */
static void expect_rules_refused(world *w, const char *what, const char *name, text *t, const char *part)
{
    char *p = hx_path(w->dir, name);
    hx_write_file(p, t->s, t->n);
    hx_result r;
    hx_run(&r, "check", "--rules", p, w->trace);
    hx_expect_rule_error(what, &r, 2, part);
    hx_free(&r);
    hx_run(&r, "rules", "lint", p);
    char label[128];
    snprintf(label, sizeof label, "lint: %s", what);
    hx_expect_in_time(label, &r);
    if (r.signal || r.status != 2) fail_msg("%s: exit %d, signal %d", label, r.status, r.signal);
    hx_free(&r);
    free(p);
    free(t->s);
    memset(t, 0, sizeof *t);
}

static void test_alias_bomb(void **state)
{
    world *w = *state;
    text t = {0};
    put(&t, "version: 1\nlists:\n  l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n");
    for (int i = 1; i < 10; i++) {
        put(&t, "  l%d: &l%d [", i, i);
        for (int j = 0; j < 10; j++) put(&t, "%s*l%d", j ? ", " : "", i - 1);
        put(&t, "]\n");
    }
    expect_rules_refused(w, "YAML alias bomb (10^10 nodes)", "laughs.yaml", &t, "aliases expand to more than");
}

static void test_deep_nesting(void **state)
{
    world *w = *state;
    text t = {0};
    put(&t, "version: 1\nrules: ");
    repeat(&t, "[", 100000);
    repeat(&t, "]", 100000);
    put(&t, "\n");
    expect_rules_refused(w, "100000 nested flow sequences", "deep-flow.yaml", &t, "nested deeper than 64");
    put(&t, "version: 1\nrules:\n");
    for (int i = 0; i < 200; i++) put(&t, "%*s- \n", i * 2 + 2, "");
    expect_rules_refused(w, "200 nested block sequences", "deep-block.yaml", &t, "nested deeper than 64");
}

static void test_expression_depth(void **state)
{
    world *w = *state;
    text t = {0};
    put(&t, RULE_HEAD "    where: \"");
    repeat(&t, "(", 10000);
    put(&t, "duration > 1us");
    repeat(&t, ")", 10000);
    put(&t, "\"\n");
    expect_rules_refused(w, "10000 nested parentheses", "parens.yaml", &t, "nested more than 200 levels");
    put(&t, RULE_HEAD "    where: \"");
    repeat(&t, "not ", 10000);
    put(&t, "true\"\n");
    expect_rules_refused(w, "10000 nested 'not'", "nots.yaml", &t, "nested more than 200 levels");
    put(&t, RULE_HEAD "    where: \"duration > ");
    repeat(&t, "-", 10000);
    put(&t, "1us\"\n");
    expect_rules_refused(w, "10000 unary minus", "minus.yaml", &t, "nested more than 200 levels");
}

static void test_expression_length(void **state)
{
    world *w = *state;
    text t = {0};
    put(&t, RULE_HEAD "    where: \"duration > 0us");
    while (t.n < (1u << 20)) put(&t, " or duration > %zuus", t.n);
    put(&t, "\"\n");
    expect_rules_refused(w, "1 MB where clause", "long-where.yaml", &t, "more than the 64 KiB allowed");
    /* just under the scalar limit: thousands of operators compile and run */
    put(&t, RULE_HEAD "    where: \"duration > 0us");
    while (t.n < 60000) put(&t, " or duration > %zuus", t.n);
    put(&t, "\"\n");
    char *p = hx_path(w->dir, "60k-where.yaml");
    hx_write_file(p, t.s, t.n);
    hx_result r;
    hx_run(&r, "check", "--rules", p, w->trace);
    hx_expect_warnings("check 60 KB where clause (valid)", &r, 1, 0, NULL);
    hx_free(&r);
    free(p);
    free(t.s);
}

static void test_many_errors_bounded(void **state)
{
    world *w = *state;
    text t = {0};
    /* 3000 unit errors on one 60 KB line */
    put(&t, RULE_HEAD "    where: \"duration > 0");
    while (t.n < 60000) put(&t, " or duration > %zu", t.n);
    put(&t, "\"\n");
    char *p = hx_path(w->dir, "errors.yaml");
    hx_write_file(p, t.s, t.n);
    hx_result r;
    hx_run(&r, "check", "--rules", p, w->trace);
    printf("  %-44s exit %d in %.2f s (%.2f s CPU): %zu lines, %zu bytes of stderr\n",
           "check 3000 errors on one 60 KB line", r.status, r.seconds, r.cpu_seconds, hx_lines(r.err), r.err_len);
    hx_expect_in_time("check 3000 errors on one 60 KB line", &r);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.status, 2);
    /* every message shows a window of the line, not 60 KB of it */
    assert_true(r.err_len < (1u << 20));
    assert_non_null(strstr(r.err, "more errors"));
    for (const char *line = r.err; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len > 600) fail_msg("a stderr line of %zu bytes", len);
        line = nl ? nl + 1 : line + len;
    }
    hx_free(&r);
    free(p);
    free(t.s);
}

static void test_regex_limits(void **state)
{
    world *w = *state;
    static const struct { const char *what, *pattern, *part; } cases[] = {
        {"regex: nested counted repetition", "((a{1,100}){1,100}){1,100}", "more than 2000 elements"},
        {"regex: (a{1,255}){1,255}", "(a{1,255}){1,255}", "more than 2000 elements"},
        {"regex: repetition over 255", "a{1,1000}b", "more than 255 times"},
        {"regex: (.{1,64}){1,64} (slow to match)", "(.{1,64}){1,64}x", "more than 2000 elements"},
        {"regex: back-reference", "^(a*)*\\\\1$", "back-reference"},
        {"regex: invalid", "a(b", "bad regular expression"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        text t = {0};
        put(&t, RULE_HEAD "    where: name matches \"%s\"\n", cases[i].pattern);
        expect_rules_refused(w, cases[i].what, "regex.yaml", &t, cases[i].part);
    }
    text t = {0};
    put(&t, RULE_HEAD "    where: name matches \"");
    repeat(&t, "a|", 30000);
    put(&t, "b\"\n");
    expect_rules_refused(w, "regex: 60 KB alternation", "regex-long.yaml", &t, "longer than 4096 bytes");
    /* a pattern at the limits still compiles and matches quickly */
    put(&t, RULE_HEAD "    where: name matches \"^(a|b){1,30}(.{1,32}){1,30}b$\"\n");
    char *p = hx_path(w->dir, "regex-ok.yaml");
    hx_write_file(p, t.s, t.n);
    hx_result r;
    hx_run(&r, "check", "--rules", p, w->trace);
    hx_expect_warnings("check regex within the limits", &r, 1, 0, NULL);
    hx_free(&r);
    free(p);
    free(t.s);
}

/* The measure itself (engine/common/regex_check.c), on patterns real rules
** use and on the edges of its little parser. */
static void test_regex_measure(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "^(iteration|train_step|step|ProfilerStep#[0-9]+)$", "^nccl", "(gemm|conv).*_f16$",
        "[]a]{2}", "[^]x]+", "[[:alpha:]_]{1,200}", "a{,3}", "x{", "\\.", "(.{1,32}){1,30}y",
        "a)b", "", "(((((((((((((((((((((a)))))))))))))))))))))",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (tg_regex_refuse(ok[i])) fail_msg("\"%s\" refused: %s", ok[i], tg_regex_refuse(ok[i]));
    static const char *const bad[] = {
        "x{256}", "(a)\\1", "([[:alpha:]]{1,200}){1,10}", "((a{1,100}){1,100}){1,100}",
        "(.{1,64}){1,64}", "a{9}{9}{9}{9}", "[ab]{255}[cd]{255}[ef]{255}[gh]{255}[ij]{255}[kl]{255}[mn]{255}[op]{255}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (!tg_regex_refuse(bad[i])) fail_msg("\"%s\" accepted", bad[i]);
    char *deep = malloc(1200);
    assert_non_null(deep);
    memset(deep, '(', 600);
    memset(deep + 600, ')', 599);
    deep[1199] = 0;
    assert_non_null(tg_regex_refuse(deep));   /* groups nested 600 deep */
    free(deep);
}

static void test_iteration_pattern_limits(void **state)
{
    world *w = *state;
    hx_result r;
    hx_run(&r, "metrics", "--iteration-pattern", "((a{1,100}){1,100}){1,100}", w->trace);
    hx_expect_line("metrics --iteration-pattern bomb", &r, 2, "more than 2000 elements");
    hx_free(&r);
    hx_run(&r, "check", "--iteration-pattern", "((a{1,100}){1,100}){1,100}", w->trace);
    hx_expect_line("check --iteration-pattern bomb", &r, 2, "more than 2000 elements");
    hx_free(&r);
}

static void test_rule_paths(void **state)
{
    world *w = *state;
    char *fifo = hx_path(w->dir, "rules.yaml");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    hx_result r;
    hx_run(&r, "check", "--rules", fifo, w->trace);
    hx_expect_line("check --rules FIFO", &r, 2, "not a regular file");
    hx_free(&r);
    hx_run(&r, "explain", "--rules", fifo, "hostile");
    hx_expect_line("explain --rules FIFO", &r, 2, "not a regular file");
    hx_free(&r);
    hx_run(&r, "check", "--rules", "/dev/zero", w->trace);
    hx_expect_line("check --rules /dev/zero", &r, 2, "not a regular file");
    hx_free(&r);
    unlink(fifo);
    free(fifo);

    char *empty = hx_path(w->dir, "no-rules");
    assert_int_equal(mkdir(empty, 0755), 0);
    hx_run(&r, "check", "--rules", empty, w->trace);
    hx_expect_line("check --rules empty folder", &r, 2, "no rules were loaded");
    hx_free(&r);
    free(empty);

    char *junk = hx_path(w->dir, "junk.yaml");
    unsigned char bytes[4096];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 151 + 7);
    bytes[10] = 0;
    hx_write_file(junk, bytes, sizeof bytes);
    hx_run(&r, "check", "--rules", junk, w->trace);
    hx_expect_rule_error("check --rules binary junk", &r, 2, "YAML");
    hx_free(&r);
    free(junk);

    char *big = hx_path(w->dir, "big.yaml");
    size_t size = 5u << 20;
    char *buf = malloc(size);
    assert_non_null(buf);
    memset(buf, '#', size);
    hx_write_file(big, buf, size);
    free(buf);
    hx_run(&r, "check", "--rules", big, w->trace);
    hx_expect_line("check --rules 5 MiB file", &r, 2, "4 MiB");
    hx_free(&r);
    free(big);
}

static void test_baseline_paths(void **state)
{
    world *w = *state;
    hx_result r;
    char *fifo = hx_path(w->dir, "baseline.yaml");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    static const struct { const char *what, *path, *part; } cases[] = {
        {"check --baseline /dev/zero", "/dev/zero", "not a regular file"},
        {"check --baseline FIFO", NULL, "not a regular file"},
        {"check --baseline directory", "", "is a directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = cases[i].path ? (*cases[i].path ? cases[i].path : w->dir) : fifo;
        hx_run(&r, "check", "--baseline", p, w->trace);
        hx_expect_line(cases[i].what, &r, 2, cases[i].part);
        hx_free(&r);
    }
    unlink(fifo);
    free(fifo);

    text t = {0};
    put(&t, "format: 1\nrules: ");
    repeat(&t, "[", 100000);
    repeat(&t, "]", 100000);
    put(&t, "\n");
    char *p = hx_path(w->dir, "deep-baseline.yaml");
    hx_write_file(p, t.s, t.n);
    hx_run(&r, "check", "--baseline", p, w->trace);
    hx_expect_rule_error("check --baseline nested 100000 deep", &r, 2, "nested deeper than 64");
    hx_free(&r);
    free(p);
    free(t.s);
    memset(&t, 0, sizeof t);

    put(&t, "format: 1\nx0: &x0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
    for (int i = 1; i < 10; i++) {
        put(&t, "x%d: &x%d [", i, i);
        for (int j = 0; j < 10; j++) put(&t, "%s*x%d", j ? ", " : "", i - 1);
        put(&t, "]\n");
    }
    p = hx_path(w->dir, "laughs-baseline.yaml");
    hx_write_file(p, t.s, t.n);
    hx_run(&r, "check", "--baseline", p, w->trace);
    hx_expect_rule_error("check --baseline alias bomb", &r, 2, "aliases expand to more than");
    hx_free(&r);
    free(p);
    free(t.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alias_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expression_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expression_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_errors_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regex_limits, setup, teardown),
        cmocka_unit_test(test_regex_measure),
        cmocka_unit_test_setup_teardown(test_iteration_pattern_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_baseline_paths, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
