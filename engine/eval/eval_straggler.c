/*
** The cross-rank straggler rule `rank-straggler` (docs/formats.md,
** "merge"; docs/iterations.md, "Ranks within one export"): in a
** data-parallel job every rank waits for the slowest at each collective,
** so one slow rank sets the pace of all. Each rank's p50 steady iteration
** period is compared with the median over the ranks; one more than the
** threshold above it fails, stating its GPU time and idle time per
** iteration beside the median rank's, and the slowest rank names what it
** ran differently from the median rank (eval_contrib.c, the attribution
** of regression findings) where both workloads are known.
**
** One code for both callers: merge compares the ranks of the results it
** reads (engine/report/merge.c), check the ranks inside one export
** (eval_ranks.c).
*/
#include "eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/stats.h"
#include "../common/units.h"

typedef struct straggle {
    double threshold;
    tg_severity severity;
    double median;             /* of the periods */
    size_t n;                  /* ranks compared */
    const tg_straggler_rank *mid;      /* the median rank (lower middle) */
    const tg_straggler_rank *slowest;
} straggle;

/* "; per iteration 11 ms GPU, 2 ms idle (the median rank, rank 4: ...)":
** GPU and idle time per iteration side by side, where both are known. */
static void put_side_by_side(FILE *f, const tg_straggler_rank *t, const tg_straggler_rank *mid)
{
    if (isnan(t->gpu_time) || isnan(t->idle)) return;
    char gs[32], is[32];
    tg_fmt_num(gs, sizeof gs, t->gpu_time, TG_UNIT_NS);
    tg_fmt_num(is, sizeof is, t->idle, TG_UNIT_NS);
    fprintf(f, "; per iteration %s GPU, %s idle", gs, is);
    if (!mid || mid == t || isnan(mid->gpu_time) || isnan(mid->idle)) return;
    tg_fmt_num(gs, sizeof gs, mid->gpu_time, TG_UNIT_NS);
    tg_fmt_num(is, sizeof is, mid->idle, TG_UNIT_NS);
    fprintf(f, " (the median rank, %s: %s GPU, %s idle)", mid->who, gs, is);
}

/* The rank-straggler result of rank t into r. */
static bool rank_result(const straggle *s, const tg_straggler_rank *t, tg_rule_result *r)
{
    tg_arena *a = t->arena;
    double x = t->period, change = (x - s->median) / s->median;
    bool slow = change > s->threshold;
    memset(r, 0, sizeof *r);
    r->rule = TG_STRAGGLER_RULE;
    r->title = "A rank is slower than the others";
    r->severity = s->severity;
    r->verdict = slow ? TG_V_FAIL : TG_V_PASS;
    r->count = slow;
    r->metric = "p50(period)";
    r->metric_unit = TG_UNIT_NS;
    r->metric_value = x;
    r->advice = slow ? "Compare this rank's trace with a typical one: input pipeline, host contention, "
                       "thermal throttling or a slower link on its node."
                     : NULL;
    r->baseline = (tg_baseline_cmp){.present = true, .value = s->median, .current = x, .change = change,
                                    .p_value = NAN, .band_lo = NAN, .band_hi = NAN, .spread = NAN,
                                    .workload_match = NAN, .busy_then = NAN, .busy_now = NAN,
                                    .n_baseline = s->n, .n_current = 1, .regression = slow};
    /* a failing slowest rank says what it ran differently from the median rank */
    bool wall = slow && t == s->slowest && s->mid && s->mid != t && s->mid->workload && t->workload &&
                !isnan(s->mid->workload->gpu_time) && !isnan(t->workload->gpu_time);
    if (wall && !tg_workload_attribute(s->mid->workload, t->workload, x - s->median, true, &r->baseline, a))
        return false;
    r->values = tg_arena_alloc(a, 6 * sizeof *r->values);
    if (!r->values) return false;
    const tg_straggler_rank *mid = s->mid ? s->mid : t;
    r->values[r->n_values++] = (tg_named_value){"p50_period_ns", tg_float(x, TG_UNIT_NS)};
    r->values[r->n_values++] = (tg_named_value){"median_rank_period_ns", tg_float(s->median, TG_UNIT_NS)};
    r->values[r->n_values++] = (tg_named_value){"gpu_time_ns", tg_float(t->gpu_time, TG_UNIT_NS)};
    r->values[r->n_values++] = (tg_named_value){"idle_ns", tg_float(t->idle, TG_UNIT_NS)};
    r->values[r->n_values++] = (tg_named_value){"median_rank_gpu_time_ns", tg_float(mid->gpu_time, TG_UNIT_NS)};
    r->values[r->n_values++] = (tg_named_value){"median_rank_idle_ns", tg_float(mid->idle, TG_UNIT_NS)};

    char med[TG_FMT_BUF], cur[TG_FMT_BUF], lim[TG_FMT_BUF], chg[TG_FMT_BUF];
    tg_fmt_num(med, sizeof med, s->median, TG_UNIT_NS);
    tg_fmt_num(cur, sizeof cur, x, TG_UNIT_NS);
    tg_fmt_num(lim, sizeof lim, s->threshold, TG_UNIT_RATIO);
    tg_fmt_change(chg, sizeof chg, change);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return false;
    fprintf(f, "%s: p50 iteration period %s is %s from the median rank (%s over %zu ranks; limit +%s)",
            t->who, cur, chg, med, s->n, lim);
    put_side_by_side(f, t, s->mid);
    if (wall) tg_workload_put_changes(f, &r->baseline, true);
    bool ok = fclose(f) == 0;
    r->message = ok ? tg_arena_strdup(a, text) : NULL;
    free(text);
    return r->message != NULL;
}


/* A rank's place in the order of periods (ties: by order). */
typedef struct placed {
    double period;
    size_t order, k;
} placed;

static int cmp_placed(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    if (a->period != b->period) return a->period < b->period ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

bool tg_straggler_compare(const tg_straggler_rank *r, size_t n, double threshold, tg_severity severity,
                          tg_rule_result *out)
{
    if (n < 2) return true;
    placed *p = malloc(n * sizeof *p);
    double *periods = malloc(n * sizeof *periods);
    bool ok = p && periods;
    if (ok) {
        for (size_t k = 0; k < n; k++) p[k] = (placed){r[k].period, r[k].order, k};
        qsort(p, n, sizeof *p, cmp_placed);
        for (size_t k = 0; k < n; k++) periods[k] = p[k].period;
        straggle s = {.threshold = threshold, .severity = severity, .n = n,
                      .median = tg_stats_percentile_sorted(periods, n, 0.5),
                      .mid = &r[p[(n - 1) / 2].k], .slowest = &r[p[n - 1].k]};
        for (size_t k = 0; k < n && ok; k++) ok = rank_result(&s, &r[k], &out[k]);
    }
    free(p);
    free(periods);
    return ok;
}

const char *tg_rank_who(tg_arena *a, const tg_rank_result *x, const char *in)
{
    return tg_arena_printf(a, "rank %lld (pid %d, device %d)%s%s", (long long)x->rank, (int)x->pid, (int)x->device,
                           in ? " in " : "", in ? in : "");
}

void tg_straggler_keep(tg_rule_result *dst, const tg_rule_result *rs, size_t n, tg_arena *a)
{
    size_t slowest = 0;
    int64_t failing = 0;
    for (size_t k = 0; k < n; k++) {
        failing += rs[k].count;
        if (rs[k].metric_value > rs[slowest].metric_value) slowest = k;
    }
    *dst = rs[slowest];
    dst->count = failing;
    if (failing > 1 && dst->message) {
        const char *m = tg_arena_printf(a, "%s; %lld ranks of this trace are over the limit", dst->message,
                                        (long long)failing);
        if (m) dst->message = m;
    }
}
