/*
** The one formatter (engine/common/units.h), as messages, reports and
** baseline listings print numbers: durations adapt their unit with three
** significant digits, byte counts use decimal units only (a 16 MiB copy is
** 16.8 MB, docs/formats.md), rates the same units per second, ratios are
** percentages, null and NaN are n/a; and the exact literals an author
** pastes back (tg_fmt_literal).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/units.h"

static void check(tg_value v, const char *want)
{
    char buf[64];
    const char *got = tg_fmt_value(buf, sizeof buf, v);
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
    check(tg_int(999700, TG_UNIT_NS), "1 ms");          /* rounds up into the next unit */
    check(tg_int(999400, TG_UNIT_NS), "999 us");
    check(tg_float(1e15, TG_UNIT_NS), "278 h");                 /* hours are the last rung */
}

static void test_bytes(void **state)
{
    (void)state;
    check(tg_int(512, TG_UNIT_BYTES), "512 B");
    check(tg_int(64000, TG_UNIT_BYTES), "64 KB");
    /* one prefix system, decimal: a binary multiple is no exception */
    check(tg_int(65536, TG_UNIT_BYTES), "65.5 KB");
    check(tg_int(16777216, TG_UNIT_BYTES), "16.8 MB");
    check(tg_int(16800000, TG_UNIT_BYTES), "16.8 MB");
    check(tg_int(17600000, TG_UNIT_BYTES), "17.6 MB");
    check(tg_int(503316480, TG_UNIT_BYTES), "503 MB");       /* 480 MiB */
    check(tg_int(3221225472, TG_UNIT_BYTES), "3.22 GB");
    check(tg_float(1536.5, TG_UNIT_BYTES), "1.54 KB");
}

/* A rate (bytes over a duration, in bytes per second) prints as a rate,
** never as a size: copy-dominated's bytes_per_s reads 18.4 GB/s. */
static void test_rates(void **state)
{
    (void)state;
    check(tg_float(18.4e9, TG_UNIT_RATE), "18.4 GB/s");
    check(tg_float(14513766731.27, TG_UNIT_RATE), "14.5 GB/s");
    check(tg_float(1.98e12, TG_UNIT_RATE), "1.98 TB/s");
    check(tg_float(6461599.1, TG_UNIT_RATE), "6.46 MB/s");
    check(tg_int(512, TG_UNIT_RATE), "512 B/s");
    check(tg_float(0.5, TG_UNIT_RATE), "0.5 B/s");
    check(tg_float(999.7e9, TG_UNIT_RATE), "1 TB/s");
    assert_string_equal(tg_unit_base_suffix(TG_UNIT_RATE), "B/s");
    assert_string_equal(tg_unit_base_suffix(TG_UNIT_BYTES), "B");
    assert_string_equal(tg_unit_base_suffix(TG_UNIT_NS), "ns");
    assert_null(tg_unit_base_suffix(TG_UNIT_RATIO));
    assert_null(tg_unit_base_suffix(TG_UNIT_NONE));
    assert_string_equal(tg_unit_key(TG_UNIT_RATE), "bytes/s");
    tg_unit u;
    assert_true(tg_unit_parse_key("bytes/s", &u) && u == TG_UNIT_RATE);
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

static void num(double x, tg_unit u, int digits, const char *want)
{
    char buf[TG_FMT_BUF];
    const char *got = tg_fmt_num_digits(buf, sizeof buf, x, u, digits);
    if (strcmp(got, want)) print_message("want '%s', got '%s'\n", want, got);
    assert_string_equal(got, want);
}

static void test_digits_and_nonfinite(void **state)
{
    (void)state;
    num(11737417.25, TG_UNIT_NS, 6, "11.7374 ms");      /* `baseline show` */
    num(11737417.25, TG_UNIT_NS, 3, "11.7 ms");
    num(0.1254, TG_UNIT_RATIO, 2, "13%");
    num(NAN, TG_UNIT_NS, 3, "n/a");
    num(INFINITY, TG_UNIT_NS, 3, "inf");
    num(-INFINITY, TG_UNIT_RATIO, 3, "-inf%");
    num(1.5, TG_UNIT_NONE, 0, "2");                     /* digits clamp to 1..17 */
    char b[TG_FMT_BUF];
    assert_string_equal(tg_fmt_change(b, sizeof b, 0.065), "+6.5%");
    assert_string_equal(tg_fmt_change(b, sizeof b, -0.0909), "-9.09%");
    assert_string_equal(tg_fmt_change(b, sizeof b, 0), "0%");
    assert_string_equal(tg_fmt_change(b, sizeof b, NAN), "n/a");
    assert_string_equal(tg_fmt_change(b, sizeof b, INFINITY), "+inf%");
    char small[4];
    assert_string_equal(tg_fmt_value(small, sizeof small, tg_str("a long kernel name")), "a l");
}

/* The ladders come from units.def: every duration, decimal size and rate
** suffix prints as itself; a binary size prints in decimal units (one
** prefix system, docs/formats.md). */
static void test_suffixes_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < tg_unit_suffix_count; i++) {
        const tg_unit_suffix *s = &tg_unit_suffixes[i];
        if (s->unit == TG_UNIT_RATIO || s->scale == 1) continue;
        char want[32], buf[TG_FMT_BUF];
        snprintf(want, sizeof want, "3 %s", s->suffix);
        tg_fmt_num(buf, sizeof buf, 3 * s->scale, s->unit);
        bool binary = strchr(s->suffix, 'i') != NULL;
        if (binary != (strcmp(buf, want) != 0)) print_message("%s: got '%s'\n", s->suffix, buf);
        if (binary) assert_null(strstr(buf, "iB"));
        else assert_string_equal(buf, want);
    }
}

static void literal(int64_t x, tg_unit u, const char *want)
{
    char buf[TG_FMT_BUF];
    assert_string_equal(tg_fmt_literal(buf, sizeof buf, x, u), want);
}

/* The largest of ns, us, ms, s that keeps the value whole; never min or h
** (120s stays 120s); other units in their base suffix. */
static void test_literals(void **state)
{
    (void)state;
    literal(2000000, TG_UNIT_NS, "2ms");
    literal(1500000, TG_UNIT_NS, "1500us");
    literal(7, TG_UNIT_NS, "7ns");
    literal(0, TG_UNIT_NS, "0ns");
    literal(-3000, TG_UNIT_NS, "-3us");
    literal(INT64_C(120000000000), TG_UNIT_NS, "120s");
    literal(INT64_C(1500000001), TG_UNIT_NS, "1500000001ns");
    literal(16777216, TG_UNIT_BYTES, "16777216B");
    literal(64000, TG_UNIT_BYTES, "64000B");
    literal(12, TG_UNIT_NONE, "12");
}

/* A chart axis's one unit: the rung the formatter prints its largest
** value in, every tick in it with fixed decimals, no "-0". */
static void test_axis_units(void **state)
{
    (void)state;
    char buf[TG_FMT_BUF];
    assert_string_equal(tg_unit_rung(47.9e6, TG_UNIT_NS)->suffix, "ms");
    assert_string_equal(tg_unit_rung(999.7e3, TG_UNIT_NS)->suffix, "ms");   /* as tg_fmt_num rounds it */
    assert_string_equal(tg_unit_rung(500, TG_UNIT_NS)->suffix, "ns");
    assert_string_equal(tg_unit_rung(3.5e9, TG_UNIT_NS)->suffix, "s");
    assert_string_equal(tg_unit_rung(16.8e6, TG_UNIT_BYTES)->suffix, "MB");
    assert_string_equal(tg_unit_rung(18.4e9, TG_UNIT_RATE)->suffix, "GB/s");
    assert_string_equal(tg_unit_rung(0.4, TG_UNIT_RATIO)->suffix, "%");
    assert_null(tg_unit_rung(12, TG_UNIT_NONE));
    const tg_unit_suffix *ms = tg_unit_rung(80e6, TG_UNIT_NS), *s = tg_unit_rung(3e9, TG_UNIT_NS);
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, 0, ms, 0), "0 ms");
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, 20e6, ms, 0), "20 ms");
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, 0.5e9, s, 1), "0.5 s");
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, -1e-9, ms, 1), "0.0 ms");
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, 0.4, tg_unit_rung(0.4, TG_UNIT_RATIO), 0), "40%");
    assert_string_equal(tg_fmt_num_in(buf, sizeof buf, 12.5, NULL, 2), "12.50");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_ratios_and_numbers),
        cmocka_unit_test(test_digits_and_nonfinite),
        cmocka_unit_test(test_suffixes_round_trip),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_axis_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
