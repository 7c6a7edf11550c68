/*
** When the regex matcher cannot decide (engine/common/regex.c answers -1:
** past its step budget, or when its state lists cannot be allocated, the
** case made here), the test is never read as "no match": the
** rule's verdict is an error naming the pattern and the string's length,
** whatever the verdict would otherwise have been, and a row filter keeps
** the row so the rule meets the same failure (docs/limits.md). malloc is
** made to fail for the sizes the matcher asks for (between 8 and 60 KiB
** for this pattern; arena blocks are 64 KiB); not under AddressSanitizer
** or valgrind, whose allocators this would bypass.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "world.h"

#if defined(__SANITIZE_ADDRESS__)
#define TG_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_NO_MALLOC_HOOK 1
#endif
#endif

static bool failing;           /* mallocs of 8 KiB up to 60 KiB return NULL */

#ifndef TG_NO_MALLOC_HOOK
void *__libc_malloc(size_t n);
void *malloc(size_t n)
{
    if (failing && n >= 8192 && n < 60000) return NULL;
    return __libc_malloc(n);
}
#endif

/* A pattern of several hundred instructions: its matcher's lists do not
** fit the stack buffer and are malloc'd. Every name here holds no "x". */
#define RULE_TEXT(where)                                                                            \
    "version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: kernel\n"         \
    "    where: " where "\n    fail_when: count > 0\n    message: \"{count}\"\n"
#define BIG "(a|b|c|d){1,100}x"

/* Skips when malloc is not this file's: under AddressSanitizer, and under
** valgrind, whose allocator replaces every malloc at run time. */
static void skip_if_hook_unavailable(void)
{
#ifdef TG_NO_MALLOC_HOOK
    skip();
#endif
    failing = true;
    void *(*volatile alloc)(size_t) = malloc;   /* not a builtin the compiler may elide */
    void *probe = alloc(10000);
    failing = false;
    if (probe) {
        free(probe);
        skip();
    }
}

static world *kernels(void)
{
    world *w = world_new();
    add_kernel(w, 1, 100, 10, "abcd", 5000, 0);
    add_kernel(w, 2, 200, 10, "gemm", 5000, 0);
    return w;
}

static void test_undecided_is_an_error(void **state)
{
    (void)state;
    skip_if_hook_unavailable();
    /* decided: no name matches, the rule passes; `not` makes it fail */
    world *w = kernels();
    world_rules(w, RULE_TEXT("name matches \"" BIG "\""));
    assert_int_equal(world_eval(w, NULL, "r")->verdict, TG_V_PASS);
    failing = true;
    tg_rule_result *r = world_eval(w, NULL, "r");
    failing = false;
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_false(r->missing_data);
    assert_string_equal(r->message, "rule r cannot be decided: its regular expression \"" BIG "\" hit a limit of the "
                                     "matcher on a string of 4 bytes (docs/limits.md)");
    world_free(w);

    w = kernels();
    world_rules(w, RULE_TEXT("not (name matches \"" BIG "\")"));
    assert_int_equal(world_eval(w, NULL, "r")->verdict, TG_V_FAIL);
    failing = true;
    r = world_eval(w, NULL, "r");
    failing = false;
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_int_equal(r->n_evidence, 0);
    world_free(w);
}

static void test_filter_keeps_undecided_rows(void **state)
{
    (void)state;
    skip_if_hook_unavailable();
    world *w = world_new();
    tg_api *a = add_api(w, 1, 100, 5, "cudaLaunchKernel");
    world_rules(w, "version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: api\n"
                   "    where: name matches \"" BIG "\"\n    fail_when: count > 0\n    message: \"{count}\"\n");
    bool all = true;
    tg_row_filter *f = tg_row_filter_new(w->rs, TG_SRC_API, &w->model, &all);
    assert_non_null(f);
    assert_false(tg_row_filter_pass(f, (const char *)a));   /* decided: no match, dropped */
    tg_row_filter_free(f);
    f = tg_row_filter_new(w->rs, TG_SRC_API, &w->model, &all);
    assert_non_null(f);
    failing = true;
    bool kept = tg_row_filter_pass(f, (const char *)a);
    failing = false;
    assert_true(kept);
    tg_row_filter_free(f);
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undecided_is_an_error),
        cmocka_unit_test(test_filter_keeps_undecided_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
