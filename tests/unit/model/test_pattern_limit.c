/*
** An iteration pattern the regex matcher cannot decide on some NVTX name
** (engine/common/regex.c answers -1: past its step budget, or, the case
** made here, when its state lists cannot be allocated) fails the model
** with one sentence
** naming the pattern and the name's length, status TG_EINTERNAL: a range
** is never silently "not an iteration" (docs/limits.md). malloc is made to
** fail for the sizes the matcher asks for with this pattern (8 to 60 KiB);
** not under AddressSanitizer, whose allocator this would bypass.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

#if defined(__SANITIZE_ADDRESS__)
#define TG_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_NO_MALLOC_HOOK 1
#endif
#endif

static bool failing;

#ifndef TG_NO_MALLOC_HOOK
void *__libc_malloc(size_t n);
void *malloc(size_t n)
{
    if (failing && n >= 8192 && n < 60000) return NULL;
    return __libc_malloc(n);
}
#endif

#define BIG "^step_(0|1|2|3|4|5|6|7|8|9){1,60}$"

static void test_undecided_pattern_fails_the_model(void **state)
{
    (void)state;
#ifdef TG_NO_MALLOC_HOOK
    skip();
#endif
    /* valgrind replaces malloc at run time: the hook is then not called */
    failing = true;
    void *(*volatile alloc)(size_t) = malloc;   /* not a builtin the compiler may elide */
    void *probe = alloc(10000);
    failing = false;
    if (probe) {
        free(probe);
        skip();
    }
    tg_trace *t = mt_new();
    mt_nvtx(t, 1, 1, 59, "step_1", 0, 100);
    mt_nvtx(t, 1, 1, 59, "step_22", 100, 200);
    tg_diag d;
    tg_diag_init(&d);
    tg_model_params p = {.iteration_pattern = BIG};
    tg_model *m = tg_model_build(t, &p, &d);
    assert_non_null(m);
    assert_int_equal(m->n_iterations, 2);
    tg_model_free(m);

    failing = true;
    m = tg_model_build(t, &p, &d);
    failing = false;
    assert_null(m);
    assert_int_equal(d.status, TG_EINTERNAL);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.msgs[0].text, "the iteration pattern \"" BIG "\" hit a limit of the matcher on an NVTX "
                                        "range name of 6 bytes (docs/limits.md), so the iterations cannot be found");
    tg_diag_clear(&d);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undecided_pattern_fails_the_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
