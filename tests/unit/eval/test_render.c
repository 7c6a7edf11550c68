/*
** Values in their units, as messages print them: durations adapt their
** unit with three significant digits, byte counts use binary units when
** exact and decimal ones otherwise, ratios are percentages, null is n/a.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "eval/eval_int.h"

static void check(tg_value v, const char *want)
{
    char buf[64];
    const char *got = tg_eval_format(buf, sizeof buf, v);
    if (strcmp(got, want)) print_message("want '%s', got '%s'\n", want, got);
    assert_string_equal(got, want);
}

static void test_durations(void **state)
{
    (void)state;
    check(tg_int(0, TG_UNIT_NS), "0 ns");
    check(tg_int(812, TG_UNIT_NS), "812 ns");
    check(tg_float(812.5, TG_UNIT_NS), "812 ns");
    check(tg_int(2500, TG_UNIT_NS), "2.5 us");
    check(tg_int(1234567, TG_UNIT_NS), "1.23 ms");
    check(tg_int(999999, TG_UNIT_NS), "1 ms");
    check(tg_int(45600000, TG_UNIT_NS), "45.6 ms");
    check(tg_int(2500000000, TG_UNIT_NS), "2.5 s");
    check(tg_int(150000000000, TG_UNIT_NS), "2.5 min");
    check(tg_int(7200000000000, TG_UNIT_NS), "2 h");
    check(tg_int(-1500000, TG_UNIT_NS), "-1.5 ms");
}

static void test_bytes(void **state)
{
    (void)state;
    check(tg_int(512, TG_UNIT_BYTES), "512 B");
    check(tg_int(64000, TG_UNIT_BYTES), "64 KB");
    check(tg_int(65536, TG_UNIT_BYTES), "64 KiB");
    check(tg_int(16777216, TG_UNIT_BYTES), "16 MiB");
    check(tg_int(16800000, TG_UNIT_BYTES), "16.8 MB");
    check(tg_int(17600000, TG_UNIT_BYTES), "17.6 MB");
    check(tg_int(3221225472, TG_UNIT_BYTES), "3 GiB");
    check(tg_float(1536.5, TG_UNIT_BYTES), "1.54 KB");
}

static void test_ratios_and_numbers(void **state)
{
    (void)state;
    check(tg_float(0.2, TG_UNIT_RATIO), "20%");
    check(tg_float(0.056, TG_UNIT_RATIO), "5.6%");
    check(tg_float(0.12345, TG_UNIT_RATIO), "12.3%");
    check(tg_float(1.0, TG_UNIT_RATIO), "100%");
    check(tg_int(42, TG_UNIT_NONE), "42");
    check(tg_float(0.354, TG_UNIT_NONE), "0.354");
    check(tg_float(2.0, TG_UNIT_NONE), "2");
    check(tg_float(12345.6, TG_UNIT_NONE), "12346");
    check(tg_null(), "n/a");
    check(tg_bool(true), "true");
    check(tg_str("cuMemcpyHtoD"), "cuMemcpyHtoD");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_ratios_and_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
