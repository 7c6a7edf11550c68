/*
** Internal helpers shared by the files of engine/baseline (not part of the
** public header): provenance comparisons used both when recording and when
** comparing a run with a baseline.
*/
#ifndef TG_BASELINE_INT_H
#define TG_BASELINE_INT_H

#include <stdbool.h>

/* Two comma-separated GPU name lists name the same set (order, repeats and
** blanks around names ignored). */
bool tg_baseline_same_names(const char *a, const char *b);

/* Major version of "3.25.0", or -1 when absent or not a number. */
int tg_baseline_schema_major(const char *version);

#endif
