/*
** Hostile YAML: rule files are input, and a crafted one must get a clear
** error quickly and with bounded memory. Each case is refused in well
** under a second: alias expansion (billion laughs), deep nesting, huge
** scalars (in a file over the size limit and in one under it), too many
** documents.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rules/rules.h"

/* CPU time of this process: the cost of a load as work done, which a
** loaded machine does not change (wall clock would). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fails when a load used more than limit seconds of CPU. */
static void within(const char *what, double used, double limit)
{
    print_message("%s: %.3f s of CPU\n", what, used);
    if (used >= limit) fail_msg("%s took %.2f s of CPU, more than %.1f s (CPU time: work, not load)", what, used, limit);
}

/* Load text; assert it fails within 1 s of CPU with an error containing msg. */
static void refuse(const char *text, const char *msg)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"hostile.yaml", text};
    double t0 = cpu_now();
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
    double dt = cpu_now() - t0;
    assert_null(rs);
    assert_true(d.n_errors >= 1);
    bool found = false;
    for (size_t i = 0; i < d.n; i++) found |= strstr(d.msgs[i].text, msg) != NULL;
    if (!found) print_message("expected '%s', first error: %s\n", msg, d.n ? d.msgs[0].text : "(none)");
    assert_true(found);
    within(msg, dt, 1.0);
    tg_diag_clear(&d);
}

static void test_billion_laughs(void **state)
{
    (void)state;
    const char *text =
        "version: 1\n"
        "lists:\n"
        "  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
        "  h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
        "  i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    refuse(text, "aliases expand to more than");
}

static void test_small_aliases_allowed(void **state)
{
    (void)state;
    /* A few aliases are legitimate YAML and stay accepted. */
    const char *text =
        "version: 1\n"
        "rules:\n"
        "  - id: a\n    title: t\n    severity: info\n    source: kernel\n"
        "    tags: &t [gpu, kernel]\n    fail_when: count > 0\n"
        "  - id: b\n    title: t\n    severity: info\n    source: kernel\n"
        "    tags: *t\n    fail_when: count > 1\n";
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"aliases.yaml", text};
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
    assert_non_null(rs);
    assert_int_equal(tg_rules_info(rs, 1)->n_tags, 2);
    assert_string_equal(tg_rules_info(rs, 1)->tags[1], "kernel");
    tg_rules_free(rs);
    tg_diag_clear(&d);
}

static void test_recursive_alias(void **state)
{
    (void)state;
    refuse("version: 1\nlists:\n  a: &a [x, *a]\n", "refers to the node that contains it");
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * n + tl + 1);
    assert_non_null(s);
    memcpy(s, head, hl);
    for (size_t i = 0; i < n; i++) memcpy(s + hl + i * ul, unit, ul);
    memcpy(s + hl + ul * n, tail, tl + 1);
    return s;
}

static void test_deep_flow_nesting(void **state)
{
    (void)state;
    char *s = repeat("version: 1\nlists:\n  x: ", "[", 10000, "\n");
    refuse(s, "nested deeper than 64");
    free(s);
}

static void test_deep_block_nesting(void **state)
{
    (void)state;
    /* 10000 levels of block mappings: "a:\n a:\n  a:\n ..." */
    size_t n = 10000, len = 0;
    char *s = malloc(n * (n + 4) / 2 + 64);
    assert_non_null(s);
    len += (size_t)sprintf(s, "version: 1\nlists:\n");
    for (size_t i = 0; i < n; i++) {
        memset(s + len, ' ', i + 2);
        len += i + 2;
        len += (size_t)sprintf(s + len, "a:\n");
        if (len > 3u * 1024 * 1024) break;       /* stay under the file limit */
    }
    s[len] = 0;
    refuse(s, "nested deeper than 64");
    free(s);
}

static void test_huge_scalar_file(void **state)
{
    (void)state;
    /* 5 MB scalar in a file: refused by the size check before parsing. */
    char path[] = "/tmp/tg_hostile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("version: 1\nmacros:\n  big: \"", f);
    for (size_t i = 0; i < 5u * 1000 * 1000; i++) fputc('x', f);
    fputs("\"\n", f);
    fclose(f);
    tg_diag d;
    tg_diag_init(&d);
    const char *paths[] = {path};
    double t0 = cpu_now();
    tg_ruleset *rs = tg_rules_load(paths, 1, NULL, 0, &d);
    double dt = cpu_now() - t0;
    unlink(path);
    assert_null(rs);
    assert_int_equal(d.n_errors, 1);
    assert_non_null(strstr(d.msgs[0].text, "4 MiB"));
    within("a 5 MB rule file", dt, 1.0);
    tg_diag_clear(&d);
}

static void test_long_scalar(void **state)
{
    (void)state;
    /* 100 KB scalar in a 100 KB text (under the file limit): scalar limit. */
    char *s = repeat("version: 1\nmacros:\n  big: ", "a", 100 * 1024, "\n");
    refuse(s, "more than the 64 KiB allowed");
    free(s);
}

static void test_huge_text(void **state)
{
    (void)state;
    char *s = repeat("version: 1\n# ", "x", 5u * 1024 * 1024, "\n");
    refuse(s, "4 MiB");
    free(s);
}

static void test_many_documents(void **state)
{
    (void)state;
    refuse("version: 1\n---\nversion: 1\n", "one YAML document");
}

static void test_many_errors_bounded(void **state)
{
    (void)state;
    /* 20000 broken rules: every error counted, the message list capped. */
    char *s = repeat("version: 1\nrules:\n", "  - {id: x, bogus: 1}\n", 20000, "");
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"many.yaml", s};
    double t0 = cpu_now();
    assert_null(tg_rules_load_texts(&t, 1, NULL, 0, &d));
    within("20000 broken rules", cpu_now() - t0, 2.0);
    assert_true(d.n_errors > 20000);
    assert_true(d.n <= 1000);
    tg_diag_clear(&d);
    free(s);
}

static void test_expression_nesting(void **state)
{
    (void)state;
    char *open = repeat("version: 1\nrules:\n  - id: r\n    title: t\n    severity: info\n    source: kernel\n"
                        "    fail_when: count > 0\n    where: ", "(", 5000, "nccl\n");
    refuse(open, "nested more than");
    free(open);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_billion_laughs),     cmocka_unit_test(test_small_aliases_allowed),
        cmocka_unit_test(test_recursive_alias),    cmocka_unit_test(test_deep_flow_nesting),
        cmocka_unit_test(test_deep_block_nesting), cmocka_unit_test(test_huge_scalar_file),
        cmocka_unit_test(test_long_scalar),        cmocka_unit_test(test_huge_text),
        cmocka_unit_test(test_many_documents),     cmocka_unit_test(test_many_errors_bounded),
        cmocka_unit_test(test_expression_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
