/*
** The statistics of stats.h: order statistics, MAD, sd, the run-to-run
** spread and band, the Mann-Whitney U test, and the integer median (by
** selection, no full sort) and series summary.
**
** The U test follows the textbook (and scipy.stats.mannwhitneyu) definition:
** ranks of the pooled sample with midranks for ties, U_x = R_x - n_x(n_x+1)/2.
** Small samples without ties get the exact null distribution, counted by
** dynamic programming: the largest of i x's and j y's is either an x, which
** beats all j y's (f[i-1][j][u-j]), or a y (f[i][j-1][u]). Otherwise the
** normal approximation: mean n_x n_y / 2, variance
** n_x n_y / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))) over tie groups of
** size t, and a continuity correction of 0.5 towards the mean. Both report
** the two-sided p-value 2 P(U >= max(U_x, U_y)), capped at 1.
*/
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    bool nx = isnan(x), ny = isnan(y);
    if (nx || ny) return (int)nx - (int)ny;   /* NaN last */
    return (x > y) - (x < y);
}

void tg_stats_sort(double *x, size_t n)
{
    if (n > 1) qsort(x, n, sizeof *x, cmp_double);
}

double tg_stats_percentile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0 || isnan(q)) return NAN;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return sorted[n - 1];
    double frac = h - (double)lo;
    if (frac == 0) return sorted[lo];
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static double *sorted_copy(const double *x, size_t n)
{
    double *c = malloc(n * sizeof *c);
    if (!c) return NULL;
    memcpy(c, x, n * sizeof *c);
    tg_stats_sort(c, n);
    return c;
}

double tg_stats_percentile(const double *x, size_t n, double q)
{
    if (n == 0) return NAN;
    double *c = sorted_copy(x, n);
    if (!c) return NAN;
    double r = tg_stats_percentile_sorted(c, n, q);
    free(c);
    return r;
}

double tg_stats_median(const double *x, size_t n)
{
    return tg_stats_percentile(x, n, 0.5);
}

double tg_stats_mad(const double *x, size_t n)
{
    if (n == 0) return NAN;
    double med = tg_stats_median(x, n);
    if (isnan(med)) return NAN;
    double *dev = malloc(n * sizeof *dev);
    if (!dev) return NAN;
    for (size_t i = 0; i < n; i++) dev[i] = fabs(x[i] - med);
    double r = tg_stats_median(dev, n);
    free(dev);
    return r;
}

double tg_stats_sd(const double *x, size_t n)
{
    if (n < 2) return NAN;
    double mean = 0;
    for (size_t i = 0; i < n; i++) mean += x[i];
    mean /= (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

double tg_stats_mad_factor(size_t n)
{
    /* Croux & Rousseeuw (1992), "Time-efficient algorithms for two highly
    ** robust estimators of scale": b_n for the MAD (checked by simulation
    ** of normal samples, tests/unit/baseline/test_stats.c) */
    static const double b[] = {1, 1, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107};
    if (n < sizeof b / sizeof b[0]) return b[n];
    return (double)n / ((double)n - 0.8);
}

double tg_stats_spread(const double *x, size_t n)
{
    if (n < 2) return NAN;
    double mad = tg_stats_mad(x, n);
    if (isnan(mad)) return NAN;
    return tg_stats_mad_factor(n) * TG_MAD_SCALE * mad;
}

double tg_stats_median_se(const double *x, size_t n, double n_per_value)
{
    if (n < 2 || !(n_per_value >= 1)) return NAN;
    double mad = tg_stats_mad(x, n);
    if (isnan(mad)) return NAN;
    /* sqrt(pi / 2): the median's asymptotic standard error over the mean's */
    return 1.2533141373155001 * TG_MAD_SCALE * mad / sqrt(n_per_value);
}

bool tg_stats_band(const double *x, size_t n, size_t min_n, double k,
                   double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n == 0 || n < min_n) return false;
    double med = tg_stats_median(x, n), spread = tg_stats_spread(x, n);
    if (isnan(med) || isnan(spread)) return false;
    double half = k * spread;
    *lo = med - half;
    *hi = med + half;
    return true;
}

double tg_stats_mwu_exact_cdf(size_t m, size_t n, double u)
{
    if (m > TG_MWU_EXACT_MAX || n > TG_MWU_EXACT_MAX || isnan(u)) return NAN;
    if (u < 0) return 0;
    size_t umax = m * n;
    if (u >= (double)umax) return 1;
    /* prev[j][v] = f(i-1, j, v), cur[j][v] = f(i, j, v); counts are exact
    ** in doubles (at most C(40, 20) < 2^53). */
    size_t w = umax + 1;
    double *prev = calloc((n + 1) * w, sizeof *prev);
    double *cur = calloc((n + 1) * w, sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
    for (size_t j = 0; j <= n; j++) prev[j * w] = 1;   /* i = 0: one arrangement, U = 0 */
    for (size_t i = 1; i <= m; i++) {
        memset(cur, 0, (n + 1) * w * sizeof *cur);
        cur[0] = 1;                                    /* j = 0: U = 0 */
        for (size_t j = 1; j <= n; j++) {
            double *c = cur + j * w;
            const double *left = cur + (j - 1) * w, *up = prev + j * w;
            size_t top = i * j;
            for (size_t v = 0; v <= top; v++) {
                double ways = left[v];
                if (v >= j) ways += up[v - j];
                c[v] = ways;
            }
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    const double *f = prev + n * w;
    double below = 0, total = 0;
    for (size_t v = 0; v <= umax; v++) {
        total += f[v];
        if ((double)v <= u) below += f[v];
    }
    free(prev);
    free(cur);
    return below / total;
}

typedef struct ranked {
    double v;
    bool is_x;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_double(&((const ranked *)a)->v, &((const ranked *)b)->v);
}

bool tg_stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                           tg_mwu *out)
{
    *out = (tg_mwu){.u_x = NAN, .u_y = NAN, .z = NAN, .p_value = NAN};
    if (nx == 0 || ny == 0) return false;
    size_t n = nx + ny;
    ranked *r = malloc(n * sizeof *r);
    if (!r) return false;
    for (size_t i = 0; i < nx; i++) r[i] = (ranked){x[i], true};
    for (size_t i = 0; i < ny; i++) r[nx + i] = (ranked){y[i], false};
    qsort(r, n, sizeof *r, cmp_ranked);

    double rank_sum_x = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && r[j].v == r[i].v) j++;
        double t = (double)(j - i);
        double midrank = ((double)(i + 1) + (double)j) / 2.0;   /* ranks i+1 .. j */
        for (size_t k = i; k < j; k++)
            if (r[k].is_x) rank_sum_x += midrank;
        if (t > 1) tie_term += t * t * t - t;
        i = j;
    }
    free(r);

    double dnx = (double)nx, dny = (double)ny, dn = (double)n;
    out->u_x = rank_sum_x - dnx * (dnx + 1) / 2;
    out->u_y = dnx * dny - out->u_x;
    out->ties = tie_term > 0;
    double u_big = fmax(out->u_x, out->u_y), u_small = fmin(out->u_x, out->u_y);

    if (!out->ties && nx <= TG_MWU_EXACT_MAX && ny <= TG_MWU_EXACT_MAX) {
        double cdf = tg_stats_mwu_exact_cdf(nx, ny, u_small);
        if (!isnan(cdf)) {
            out->exact = true;
            out->p_value = fmin(1.0, 2 * cdf);
            return true;
        }
    }
    double mean = dnx * dny / 2;
    double var = dnx * dny / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
    if (!(var > 0)) {
        /* every value equal: no evidence of a shift at all */
        out->z = 0;
        out->p_value = 1;
        return true;
    }
    out->z = (u_big - mean - 0.5) / sqrt(var);
    out->p_value = fmin(1.0, fmax(0.0, erfc(out->z / sqrt(2.0))));
    return true;
}

/* ---------------------------------------------------- integer series */

static void swap64(int64_t *a, int64_t *b) { int64_t t = *a; *a = *b; *b = t; }

/* Wirth's selection: put the k-th smallest at v[k], smaller ones before it,
** larger ones after. The pivot is the value at k, so sorted or nearly sorted
** input (queue times, periods) partitions evenly. */
static void select_kth(int64_t *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (lo < hi) {
        int64_t pivot = v[kk];
        ptrdiff_t i = lo, j = hi;
        do {
            while (v[i] < pivot) i++;
            while (pivot < v[j]) j--;
            if (i <= j) { swap64(&v[i], &v[j]); i++; j--; }
        } while (i <= j);
        if (j < kk) lo = i;
        if (kk < i) hi = j;
    }
}

double tg_stats_median_i64(int64_t *v, size_t n)
{
    if (n == 0) return NAN;
    size_t k = n / 2;
    select_kth(v, n, k);
    if (n % 2) return (double)v[k];
    /* the lower middle is the largest of v[0..k) after selection */
    int64_t lower = v[0];
    for (size_t i = 1; i < k; i++)
        if (v[i] > lower) lower = v[i];
    return ((double)lower + (double)v[k]) / 2.0;
}

tg_summary tg_stats_summarize_i64(int64_t *v, size_t n)
{
    tg_summary s = {.n = n, .p50 = NAN, .mean = NAN, .cv = NAN, .max_over_p50 = NAN,
                    .min = NAN, .max = NAN, .sum = 0};
    if (n == 0) return s;
    double sum = 0;
    int64_t mn = v[0], mx = v[0];
    for (size_t i = 0; i < n; i++) {
        sum += (double)v[i];
        if (v[i] < mn) mn = v[i];
        if (v[i] > mx) mx = v[i];
    }
    s.sum = sum;
    s.mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)v[i] - s.mean;
        ss += d * d;
    }
    if (s.mean != 0) s.cv = sqrt(ss / (double)n) / fabs(s.mean);
    s.min = (double)mn;
    s.max = (double)mx;
    s.p50 = tg_stats_median_i64(v, n);
    if (s.p50 != 0) s.max_over_p50 = s.max / s.p50;
    return s;
}
