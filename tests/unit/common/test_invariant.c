/*
** Internal invariants (engine/common/common.h): the first failure is kept
** with its place and what failed, later ones do not replace it, and with
** aborting turned off the code after the check goes on.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/common.h"

static int after_unreachable(void)
{
    TG_UNREACHABLE();
    return 7;
}

static void test_first_failure_kept(void **state)
{
    (void)state;
    tg_invariant_set_abort(false);
    assert_null(tg_invariant_failure());
    TG_ASSERT(1 + 1 == 2);
    assert_null(tg_invariant_failure());
    int two = 2;
    TG_ASSERT(two == 3);
    const char *f = tg_invariant_failure();
    assert_non_null(f);
    assert_non_null(strstr(f, "test_invariant.c:"));
    assert_non_null(strstr(f, "two == 3"));
    assert_int_equal(after_unreachable(), 7);
    assert_string_equal(tg_invariant_failure(), f);   /* the first one stays */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_failure_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
