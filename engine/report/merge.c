/*
** The cross-rank straggler rule of `tracegate merge` (docs/architecture.md,
** "Many traces"): in a data-parallel job every rank waits for the slowest at
** each collective, so one slow rank sets the pace of all. The per-rank input
** is the p50 steady iteration period each `check` run computed (the metric of
** iteration-time-regression, present with or without a baseline).
*/
#include "json_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/units.h"

static double rank_period(const tg_trace_result *t)
{
    for (size_t i = 0; i < t->n_results; i++) {
        const tg_rule_result *r = &t->results[i];
        if (!r->rule || strcmp(r->rule, "iteration-time-regression") != 0) continue;
        if (isfinite(r->metric_value)) return r->metric_value;
        for (size_t k = 0; k < r->n_values; k++)
            if (!strcmp(r->values[k].name, "p50_period_ns")) {
                const tg_value *v = &r->values[k].value;
                if (v->type == TG_TY_INT) return (double)v->u.i;
                if (v->type == TG_TY_FLOAT) return v->u.f;
            }
    }
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

size_t tg_merge_stragglers(tg_run_result *run, double threshold, tg_severity severity)
{
    double *p = malloc((run->n_traces ? run->n_traces : 1) * sizeof *p);
    if (!p) return 0;
    size_t n = 0;
    for (size_t i = 0; i < run->n_traces; i++) {
        double x = rank_period(&run->traces[i]);
        if (isfinite(x) && x > 0) p[n++] = x;
    }
    if (n < 2) {
        free(p);
        return 0;
    }
    qsort(p, n, sizeof *p, cmp_double);
    double median = n % 2 ? p[n / 2] : (p[n / 2 - 1] + p[n / 2]) / 2;
    free(p);

    char med[32], cur[32], lim[32];
    tg_fmt_num(med, sizeof med, median, TG_UNIT_NS);
    tg_fmt_num(lim, sizeof lim, threshold, TG_UNIT_RATIO);
    for (size_t i = 0; i < run->n_traces; i++) {
        tg_trace_result *t = &run->traces[i];
        double x = rank_period(t);
        if (!isfinite(x) || x <= 0 || !t->results) continue;
        double change = (x - median) / median;
        bool slow = change > threshold;
        tg_fmt_num(cur, sizeof cur, x, TG_UNIT_NS);
        tg_rule_result *r = &t->results[t->n_results++];
        memset(r, 0, sizeof *r);
        r->rule = "rank-straggler";
        r->title = "A rank is slower than the others";
        r->severity = severity;
        r->verdict = slow ? TG_V_FAIL : TG_V_PASS;
        r->count = slow;
        r->metric = "p50(period)";
        r->metric_value = x;
        r->message = tg_arena_printf(run->arena,
            "p50 iteration period %s is %+.1f%% from the median rank (%s over %zu ranks; limit +%s)",
            cur, 100 * change, med, n, lim);
        r->advice = slow ? "Compare this rank's trace with a typical one: input pipeline, "
                           "host contention, thermal throttling or a slower link on its node."
                         : NULL;
        r->values = tg_arena_alloc(run->arena, 2 * sizeof *r->values);
        if (r->values) {
            r->values[0] = (tg_named_value){"p50_period_ns", tg_float(x, TG_UNIT_NS)};
            r->values[1] = (tg_named_value){"median_rank_period_ns", tg_float(median, TG_UNIT_NS)};
            r->n_values = 2;
        }
        r->baseline.present = true;
        r->baseline.value = median;
        r->baseline.current = x;
        r->baseline.change = change;
        r->baseline.p_value = NAN;
        r->baseline.band_lo = r->baseline.band_hi = NAN;
        r->baseline.n_baseline = n;
        r->baseline.n_current = 1;
        r->baseline.regression = slow;
    }
    return n;
}
