/*
** The order statistics of engine/common/stats.c that the model uses: the
** median (mean of the two middle values for an even count) and the
** iteration summary (cv with the population standard deviation, as the
** reference metrics use).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "common/stats.h"
#include "mtrace.h"

static void test_median(void **state)
{
    (void)state;
    int64_t odd[] = {9, 1, 5, 3, 7};
    assert_near(tg_stats_median_i64(odd, 5), 5.0, 0);
    int64_t even[] = {1917, 40, 1918, 100000};
    assert_near(tg_stats_median_i64(even, 4), 1917.5, 0);
    int64_t one[] = {42};
    assert_near(tg_stats_median_i64(one, 1), 42.0, 0);
    int64_t same[] = {3, 3, 3, 3, 3, 3};
    assert_near(tg_stats_median_i64(same, 6), 3.0, 0);
    assert_true(isnan(tg_stats_median_i64(NULL, 0)));
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_median_matches_sort(void **state)
{
    (void)state;
    enum { N = 1001 };
    int64_t v[N], w[N];
    uint32_t seed = 99;
    for (size_t n = 1; n <= N; n += 37) {
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            v[i] = w[i] = (int64_t)(seed >> 20) - 2000;
        }
        qsort(w, n, sizeof *w, cmp64);
        double want = n % 2 ? (double)w[n / 2] : ((double)w[n / 2 - 1] + (double)w[n / 2]) / 2;
        assert_near(tg_stats_median_i64(v, n), want, 0);
    }
}

static void test_summary(void **state)
{
    (void)state;
    int64_t v[] = {10, 20, 30, 100};
    tg_summary s = tg_stats_summarize_i64(v, 4);
    assert_int_equal(s.n, 4);
    assert_near(s.mean, 40.0, 1e-12);
    assert_near(s.p50, 25.0, 1e-12);
    /* population sd: sqrt((900 + 400 + 100 + 3600) / 4) = sqrt(1250) */
    assert_near(s.cv, sqrt(1250.0) / 40.0, 1e-12);
    assert_near(s.max_over_p50, 4.0, 1e-12);
    assert_near(s.min, 10.0, 0);
    assert_near(s.max, 100.0, 0);
    assert_near(s.sum, 160.0, 0);
    tg_summary e = tg_stats_summarize_i64(NULL, 0);
    assert_int_equal(e.n, 0);
    assert_true(isnan(e.p50) && isnan(e.mean) && isnan(e.cv));
    int64_t z[] = {0, 0};
    tg_summary zs = tg_stats_summarize_i64(z, 2);
    assert_true(isnan(zs.cv) && isnan(zs.max_over_p50));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_median_matches_sort),
        cmocka_unit_test(test_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
