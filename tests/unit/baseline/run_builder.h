/*
** Hand-built evaluation results for the baseline tests: a tg_run_result with
** traces and rule results filled the way engine/eval fills them (metric,
** metric_value, samples, regression), without loading any trace.
*/
#ifndef TB_RUN_BUILDER_H
#define TB_RUN_BUILDER_H

#include "eval/result.h"

tg_run_result *tb_run_new(void);
void tb_run_free(tg_run_result *run);
/* Add a readable trace (gpus / schema may be NULL). */
tg_trace_result *tb_trace(tg_run_result *run, const char *file, const char *gpus,
                          const char *schema);
/* Add a rule result with a metric; samples are copied. metric may be NULL. */
tg_rule_result *tb_rule(tg_run_result *run, tg_trace_result *t, const char *id,
                        const char *metric, int regression, double value,
                        const double *samples, size_t n_samples);
/* n values centre + spread * u, u deterministic in [-1, 1) (seeded LCG). */
double *tb_values(tg_run_result *run, size_t n, double centre, double spread, unsigned seed);

#endif
