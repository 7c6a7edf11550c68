/*
** Unit tests of engine/common/stats.c against hand-computed values. scipy
** is not available on the build machines, so each expected number is
** derived in a comment; the exact Mann-Whitney distribution was also
** cross-checked by brute-force enumeration of all C(N, m) rank placements
** (Python itertools, exact fractions) and against the published critical
** value table (n1 = n2 = 20, two-sided alpha 0.05: U_crit = 127).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "common/stats.h"

#define N_OF(a) (sizeof (a) / sizeof *(a))

static void assert_close(double got, double want, double rel)
{
    double tol = rel * fmax(fabs(want), 1e-300);
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (rel tol %g)", got, want, rel);
}

static void test_percentiles(void **state)
{
    (void)state;
    double odd[] = {100, 3, 1, 4, 2};            /* sorted: 1 2 3 4 100 */
    assert_close(tg_stats_median(odd, N_OF(odd)), 3, 1e-15);
    double even[] = {4, 1, 3, 2};                /* sorted: 1 2 3 4 */
    /* type 7: h = (n-1) q; q=.5 -> h=1.5 -> 2 + .5*(3-2) = 2.5 */
    assert_close(tg_stats_median(even, N_OF(even)), 2.5, 1e-15);
    /* q=.9 -> h=2.7 -> 3 + .7*(4-3) = 3.7; q=.25 -> h=.75 -> 1.75 */
    assert_close(tg_stats_percentile(even, N_OF(even), 0.9), 3.7, 1e-15);
    assert_close(tg_stats_percentile(even, N_OF(even), 0.25), 1.75, 1e-15);
    assert_close(tg_stats_percentile(even, N_OF(even), 0), 1, 0);
    assert_close(tg_stats_percentile(even, N_OF(even), 1), 4, 0);
    /* the input is not modified */
    assert_true(even[0] == 4 && even[3] == 2);
    double one[] = {7};
    assert_close(tg_stats_median(one, 1), 7, 0);
    assert_close(tg_stats_percentile(one, 1, 0.99), 7, 0);
    assert_true(isnan(tg_stats_median(one, 0)));
}

static void test_mad_and_band(void **state)
{
    (void)state;
    /* median 3; |x - 3| = 2 1 0 1 97 -> sorted 0 1 1 2 97 -> MAD 1 (the
    ** outlier 100 does not move it: that is why the band uses MAD) */
    double x[] = {1, 2, 3, 4, 100};
    assert_close(tg_stats_mad(x, N_OF(x)), 1, 1e-15);
    /* median 2.5; |x - 2.5| = 1.5 .5 .5 1.5 -> MAD (0.5 + 1.5)/2 = 1 */
    double even[] = {1, 2, 3, 4};
    assert_close(tg_stats_mad(even, N_OF(even)), 1, 1e-15);
    double same[] = {5, 5, 5};
    assert_close(tg_stats_mad(same, 3), 0, 0);

    double lo, hi;
    /* 5 runs: b_5 1.206 x 1.4826 x MAD 1 = 1.7880156: 3 +- 5.3640468 */
    assert_true(tg_stats_band(x, N_OF(x), 3, 3.0, &lo, &hi));
    assert_close(lo, 3 - 5.3640468, 1e-12);
    assert_close(hi, 3 + 5.3640468, 1e-12);
    /* too few runs: no band */
    assert_false(tg_stats_band(x, 2, 3, 3.0, &lo, &hi));
    assert_true(isnan(lo) && isnan(hi));
    /* zero MAD: a zero-width band at the median (the baseline floors it) */
    assert_true(tg_stats_band(same, 3, 3, 3.0, &lo, &hi));
    assert_close(lo, 5, 0);
    assert_close(hi, 5, 0);

    /* sd (known answers from Python's statistics.stdev) */
    assert_close(tg_stats_sd(x, N_OF(x)), 43.617656975128774, 1e-12);
    assert_true(isnan(tg_stats_sd(x, 1)));
    /* the spread is the MAD's at every n: the outlier run does not widen it */
    assert_close(tg_stats_spread(x, N_OF(x)), 1.206 * 1.4826, 1e-12);
    /* 3 runs 30, 30, 45: MAD 0, whatever the third (no sd fallback: the sd,
    ** 8.66, is what one odd run makes of it); baselines floor it */
    double two_agree[] = {30, 30, 45};
    assert_close(tg_stats_spread(two_agree, 3), 0, 0);
    double two_agree_far[] = {30, 30, 4500};
    assert_close(tg_stats_spread(two_agree_far, 3), 0, 0);
    /* 3 runs 27, 30, 33: b_3 1.495 x 1.4826 x MAD 3 */
    double even3[] = {27, 30, 33};
    assert_close(tg_stats_spread(even3, 3), 1.495 * 1.4826 * 3, 1e-12);
    /* one odd run of four moves it by at most one order statistic */
    assert_close(tg_stats_spread(even, 4), 1.363 * 1.4826, 1e-12);
    double odd4[] = {1, 2, 3, 4000};
    assert_close(tg_stats_spread(odd4, 4), 1.363 * 1.4826, 1e-12);
    assert_true(isnan(tg_stats_spread(x, 1)));
}

/* The small-sample factors make b_n x 1.4826 x MAD an unbiased estimate of
** the sd of normal values: checked by simulation (a deterministic Box-Muller
** stream, 5000 draws per n: the mean estimate within 5% of 1). */
static void test_mad_factor(void **state)
{
    (void)state;
    assert_close(tg_stats_mad_factor(2), 1.196, 0);
    assert_close(tg_stats_mad_factor(3), 1.495, 0);
    assert_close(tg_stats_mad_factor(20), 20 / 19.2, 1e-15);
    uint64_t s = 88172645463325252u;
    for (size_t n = 2; n <= 12; n += (n < 5 ? 1 : 7)) {
        double sum = 0, x[12];
        const int draws = 5000;
        for (int k = 0; k < draws; k++) {
            for (size_t i = 0; i < n; i++) {
                double u[2];
                for (int j = 0; j < 2; j++) {
                    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                    u[j] = ((double)(s >> 11) + 0.5) / 9007199254740992.0;
                }
                x[i] = sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
            }
            sum += tg_stats_spread(x, n);
        }
        double mean = sum / draws;
        if (fabs(mean - 1) > 0.05) fail_msg("n=%zu: mean spread %g of unit-sd values", n, mean);
    }
    /* standard error of a median: sqrt(pi/2) x 1.4826 x MAD / sqrt(n) */
    double v[] = {1, 2, 3, 4, 100};
    assert_close(tg_stats_median_se(v, 5, 4), 1.2533141373155001 * 1.4826 / 2, 1e-12);
    assert_true(isnan(tg_stats_median_se(v, 1, 4)));
    assert_true(isnan(tg_stats_median_se(v, 5, 0)));
}

static void test_exact_distribution(void **state)
{
    (void)state;
    /* m = n = 3: counts of U = 0..9 are 1 1 2 3 3 3 3 2 1 1 (of C(6,3) = 20) */
    static const double counts[] = {1, 1, 2, 3, 3, 3, 3, 2, 1, 1};
    double cum = 0;
    for (int u = 0; u <= 9; u++) {
        cum += counts[u];
        assert_close(tg_stats_mwu_exact_cdf(3, 3, u), cum / 20, 1e-15);
    }
    /* m = 7, n = 13: P(U <= 20) = 883/38760 (brute-force enumeration) */
    assert_close(tg_stats_mwu_exact_cdf(7, 13, 20), 883.0 / 38760.0, 1e-14);
    /* m = n = 20: critical value 127 at two-sided 0.05 (table), i.e.
    ** P(U <= 127) <= 0.025 < P(U <= 128); exact values by enumeration
    ** with the q-binomial recursion: 0.024545162594686, 0.026199760936425 */
    assert_close(tg_stats_mwu_exact_cdf(20, 20, 127), 0.02454516259468622, 1e-12);
    assert_close(tg_stats_mwu_exact_cdf(20, 20, 128), 0.026199760936424864, 1e-12);
    /* 1 vs 20: U = 0 only when the single x is the smallest: 1/21 */
    assert_close(tg_stats_mwu_exact_cdf(1, 20, 0), 1.0 / 21.0, 1e-15);
    assert_close(tg_stats_mwu_exact_cdf(3, 3, -1), 0, 0);
    assert_close(tg_stats_mwu_exact_cdf(3, 3, 9), 1, 0);
    assert_true(isnan(tg_stats_mwu_exact_cdf(21, 3, 5)));
}

static void test_mwu_exact(void **state)
{
    (void)state;
    tg_mwu r;
    /* complete separation, 3 vs 3: U_x = 0, P(U <= 0) = 1/20 -> p = 0.1 */
    double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    assert_true(tg_stats_mann_whitney(a, 3, b, 3, &r));
    assert_true(r.exact);
    assert_false(r.ties);
    assert_close(r.u_x, 0, 0);
    assert_close(r.u_y, 9, 0);
    assert_close(r.p_value, 0.1, 1e-15);
    /* symmetric in the sides */
    assert_true(tg_stats_mann_whitney(b, 3, a, 3, &r));
    assert_close(r.u_x, 9, 0);
    assert_close(r.p_value, 0.1, 1e-15);

    /* n = 1 each: P(U <= 0) = 1/2 -> p = min(1, 2 * 1/2) = 1 */
    double one_a[] = {1}, one_b[] = {2};
    assert_true(tg_stats_mann_whitney(one_a, 1, one_b, 1, &r));
    assert_close(r.p_value, 1, 0);
    /* n = 2 each, separated: P(U <= 0) = 1/C(4,2) = 1/6 -> p = 1/3 */
    double two_a[] = {1, 2}, two_b[] = {3, 4};
    assert_true(tg_stats_mann_whitney(two_a, 2, two_b, 2, &r));
    assert_close(r.p_value, 1.0 / 3.0, 1e-15);

    /* interleaved 5 vs 7: pooled ranks of x = {0.3:y} 1.5:2 2.0:y 3.2:4
    ** 4.4:5 5.5:y 6.1:y 7.0:8 8.8:y 9.1:10 10.2:y 11:y -> R_x = 2+4+5+8+10
    ** = 29, U_x = 29 - 15 = 14, U_y = 21; P(U <= 14) = 23/72 (enumeration)
    ** -> p = 23/36 */
    double c[] = {1.5, 3.2, 7.0, 4.4, 9.1}, d[] = {2.0, 5.5, 6.1, 8.8, 10.2, 11.0, 0.3};
    assert_true(tg_stats_mann_whitney(c, 5, d, 7, &r));
    assert_true(r.exact);
    assert_close(r.u_x, 14, 0);
    assert_close(r.p_value, 23.0 / 36.0, 1e-14);
}

static void test_mwu_ties_normal(void **state)
{
    (void)state;
    tg_mwu r;
    /* x = 1 2 2 3, y = 2 3 4 5. Pooled sorted 1 2 2 2 3 3 4 5: midranks
    ** 1 -> 1, 2 -> (2+3+4)/3 = 3, 3 -> (5+6)/2 = 5.5, 4 -> 7, 5 -> 8.
    ** R_x = 1 + 3 + 3 + 5.5 = 12.5, U_x = 12.5 - 10 = 2.5, U_y = 13.5.
    ** Ties: groups of 3 and 2 -> sum(t^3 - t) = 24 + 6 = 30.
    ** var = 16/12 * (9 - 30/56) = 11.285714..., sd = 3.3594218...
    ** z = (13.5 - 8 - 0.5) / sd = 1.4883513944689681
    ** p = erfc(z / sqrt 2) = 0.13665824773814753 */
    double x[] = {1, 2, 2, 3}, y[] = {2, 3, 4, 5};
    assert_true(tg_stats_mann_whitney(x, 4, y, 4, &r));
    assert_false(r.exact);
    assert_true(r.ties);
    assert_close(r.u_x, 2.5, 0);
    assert_close(r.u_y, 13.5, 0);
    assert_close(r.z, 1.4883513944689681, 1e-12);
    assert_close(r.p_value, 0.13665824773814753, 1e-12);

    /* all values equal: the variance is 0, p = 1 */
    double e1[] = {5, 5, 5}, e2[] = {5, 5};
    assert_true(tg_stats_mann_whitney(e1, 3, e2, 2, &r));
    assert_close(r.u_x, 3, 0);
    assert_close(r.p_value, 1, 0);

    /* n = 1 vs 2 with a tie: x = 3, y = 3 4: ranks 1.5 (x), 1.5, 3;
    ** U_x = 1.5 - 1 = 0.5, U_y = 1.5; var = 2/12 * (4 - 6/6) = 0.5;
    ** z = (1.5 - 1 - 0.5) / sqrt(.5) = 0 -> p = erfc(0) = 1 */
    double t1[] = {3}, t2[] = {3, 4};
    assert_true(tg_stats_mann_whitney(t1, 1, t2, 2, &r));
    assert_close(r.u_x, 0.5, 0);
    assert_close(r.p_value, 1, 1e-15);
}

static void test_mwu_large(void **state)
{
    (void)state;
    tg_mwu r;
    double x[30], y[30];
    /* separated 30 vs 30 (normal: n > 20). U_x = 0, U_y = 900; mean 450,
    ** var = 900/12 * 61 = 4575, z = (900 - 450 - 0.5)/sqrt(4575)
    ** = 6.64559922588161, p = erfc(z / sqrt 2) = 3.019859359162151e-11 */
    for (int i = 0; i < 30; i++) {
        x[i] = i + 1;
        y[i] = i + 31;
    }
    assert_true(tg_stats_mann_whitney(x, 30, y, 30, &r));
    assert_false(r.exact);
    assert_close(r.z, 6.64559922588161, 1e-12);
    assert_close(r.p_value, 3.019859359162151e-11, 1e-10);
    /* interleaved evens vs odds 0..59: R_x = sum(1,3,...,59) = 900,
    ** U_x = 900 - 465 = 435, U_y = 465; z = (465 - 450 - .5)/sqrt(4575)
    ** = 0.21437416857682612, p = 0.8302552839111963 */
    for (int i = 0; i < 30; i++) {
        x[i] = 2 * i;
        y[i] = 2 * i + 1;
    }
    assert_true(tg_stats_mann_whitney(x, 30, y, 30, &r));
    assert_close(r.u_x, 435, 0);
    assert_close(r.p_value, 0.8302552839111963, 1e-12);

    /* a tiny p stays representable (erfc, not 1 - erf): 300 vs 300
    ** separated, z = 44999.5 / sqrt(90000/12 * 601) = 21.19, p ~ 1e-99 */
    static double big_x[300], big_y[300];
    for (int i = 0; i < 300; i++) {
        big_x[i] = i;
        big_y[i] = 300 + i;
    }
    assert_true(tg_stats_mann_whitney(big_x, 300, big_y, 300, &r));
    assert_true(r.p_value > 1e-110 && r.p_value < 1e-90);

    /* an empty side: no test */
    assert_false(tg_stats_mann_whitney(x, 30, y, 0, &r));
    assert_true(isnan(r.p_value));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_mad_and_band),
        cmocka_unit_test(test_mad_factor),
        cmocka_unit_test(test_exact_distribution),
        cmocka_unit_test(test_mwu_exact),
        cmocka_unit_test(test_mwu_ties_normal),
        cmocka_unit_test(test_mwu_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
