/*
** Internal helpers shared by the files of engine/baseline (not part of the
** public header): provenance comparisons used both when recording and when
** comparing a run with a baseline.
*/
#ifndef TG_BASELINE_INT_H
#define TG_BASELINE_INT_H

#include <stdbool.h>
#include "../common/value.h"

/* The least spread of a metric whose value is `value` and whose runs'
** medians are known to +- iteration_se (NaN: unknown):
** TG_BASELINE_MIN_REL_NOISE x |value|, or iteration_se when larger
** (docs/regressions.md, "The spread"). */
double tg_baseline_floor(double value, double iteration_se);


#endif
