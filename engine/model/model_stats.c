/*
** Median by selection (no full sort) and the series summary of
** model_stats.h.
*/
#include "model_stats.h"

#include <math.h>
#include <stddef.h>

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

double tg_model_median(int64_t *v, size_t n)
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

tg_summary tg_model_summarize(int64_t *v, size_t n)
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
    s.p50 = tg_model_median(v, n);
    if (s.p50 != 0) s.max_over_p50 = s.max / s.p50;
    return s;
}
