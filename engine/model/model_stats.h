/*
** Small order statistics used by the model and by `tracegate metrics`:
** the median (mean of the two middle values for an even count, as
** numpy/pandas report it) found by quickselect, and the summary the
** reference metrics use for iteration series (n, p50, mean, cv with the
** population standard deviation, max / p50).
*/
#ifndef TG_MODEL_STATS_H
#define TG_MODEL_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tg_summary {
    size_t n;
    double p50, mean, cv, max_over_p50, min, max, sum;
} tg_summary;

/* Median of v[0..n) (reorders v); NaN when n == 0. */
double tg_model_median(int64_t *v, size_t n);
/* Summary of v[0..n) (reorders v); all NaN but n when n == 0; cv and
** max_over_p50 NaN when the mean or p50 is 0. */
tg_summary tg_model_summarize(int64_t *v, size_t n);

#endif
