/*
** The statistics of the engine, one implementation each: order statistics
** (median, percentiles with linear interpolation between closest ranks, as
** numpy's default), the median absolute deviation, the sd, the run-to-run
** spread and band, a two-sided Mann-Whitney U test (baselines and
** regression gating), and the integer median and series summary the model
** and `tracegate metrics` use. Plain and side-effect free, so the unit
** tests check them against values computed independently.
**
** NaN is the "no value" answer: empty inputs, and allocation failure (these
** helpers never abort and have no diag to report into).
*/
#ifndef TG_STATS_H
#define TG_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Scale that makes the MAD a consistent estimator of the standard deviation
** of a normal distribution (1 / Phi^-1(3/4)). */
#define TG_MAD_SCALE 1.4826

/* Sort ascending in place (NaNs last). */
void tg_stats_sort(double *x, size_t n);

/* Percentile q in [0, 1] of sorted values, linear interpolation between
** order statistics (Hyndman-Fan type 7, numpy's default): position
** h = (n - 1) q, value x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). */
double tg_stats_percentile_sorted(const double *sorted, size_t n, double q);

/* The same on unsorted values (copied, not modified). */
double tg_stats_percentile(const double *x, size_t n, double q);
double tg_stats_median(const double *x, size_t n);

/* Median absolute deviation, raw (not scaled): median(|x_i - median(x)|). */
double tg_stats_mad(const double *x, size_t n);

/* Sample standard deviation (n - 1 in the denominator); NaN for n < 2. */
double tg_stats_sd(const double *x, size_t n);

/* Small-sample consistency factor b_n of the MAD (Croux & Rousseeuw 1992):
** b_n x TG_MAD_SCALE x MAD estimates the sd of n normal values without the
** bias of small n (1.196 at n = 2, 1.495 at 3, 1.363 at 4, ..., n / (n - 0.8)
** from 10 on). 1 for n < 2. */
double tg_stats_mad_factor(size_t n);

/* Spread of per-run values: b_n x TG_MAD_SCALE x MAD, robust to one odd
** value at every n >= 3 (no sd fallback: one odd run blows an sd up). It
** reads 0 when two of three values agree, however far the third is: the
** callers floor it (docs/regressions.md, "The spread"). NaN for n < 2. */
double tg_stats_spread(const double *x, size_t n);

/* Standard error of a median of n_per_value values drawn like x[0..n):
** sqrt(pi/2) x TG_MAD_SCALE x MAD(x) / sqrt(n_per_value). How precisely
** one run's median is known from its own iterations: the floor of a
** run-to-run spread. NaN for n < 2 or n_per_value < 1. */
double tg_stats_median_se(const double *x, size_t n, double n_per_value);

/* Run-to-run band: median +- k * tg_stats_spread. Returns false (and NaN
** bounds) when n is below min_n. */
bool tg_stats_band(const double *x, size_t n, size_t min_n, double k,
                   double *lo, double *hi);

/* Two-sided Mann-Whitney U test of x against y. */
typedef struct tg_mwu {
    double u_x;        /* U of x: R_x - n_x (n_x + 1) / 2, ties at midranks */
    double u_y;        /* n_x n_y - u_x */
    double z;          /* normal approximation's z; NaN when exact */
    double p_value;    /* two-sided, in [0, 1]; NaN when a side is empty */
    bool exact;        /* exact distribution (small samples, no ties) */
    bool ties;         /* some value occurs in both or twice */
} tg_mwu;

/* Largest sample size per side for which the exact distribution is used
** (when there are no ties); beyond it, or with ties, the normal
** approximation with tie-corrected variance and continuity correction. */
#define TG_MWU_EXACT_MAX 20

/* Returns false (p_value NaN) when either side is empty or memory is out. */
bool tg_stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                           tg_mwu *out);

/* P(U <= u) under the null hypothesis for sample sizes m, n without ties,
** by dynamic programming over the count of arrangements. NaN when m or n
** exceeds TG_MWU_EXACT_MAX or memory is out. Exposed for the tests. */
double tg_stats_mwu_exact_cdf(size_t m, size_t n, double u);

/* ---------------------------------------------------- integer series */

typedef struct tg_summary {
    size_t n;
    double p50, mean, cv, max_over_p50, min, max, sum;
} tg_summary;

/* Median of v[0..n) by selection (reorders v; the mean of the two middle
** values for an even count, as numpy/pandas report it); NaN when n == 0. */
double tg_stats_median_i64(int64_t *v, size_t n);
/* Summary of v[0..n) (reorders v): n, p50, mean, cv with the population
** standard deviation, max / p50, min, max, sum; all NaN but n when n == 0;
** cv and max_over_p50 NaN when the mean or p50 is 0. */
tg_summary tg_stats_summarize_i64(int64_t *v, size_t n);

#endif
