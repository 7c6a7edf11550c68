/*
** Aggregate accumulators, fed one row at a time during the single pass
** over a source. Sums, means, standard deviations (Welford's update,
** population form), minima, maxima and counts stream in constant memory;
** percentiles keep the argument's values (one array per distinct
** argument, shared by p50 and p99 of the same expression) and interpolate
** linearly between the closest ranks, as numpy.percentile does by default:
** rank = q/100 * (n - 1), value = v[floor] + frac * (v[floor+1] - v[floor]).
**
** Rows whose argument is null are skipped; an aggregate over no rows is
** null, except count, which is 0.
*/
#include "eval_int.h"
#include "../common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tg_acc_init(tg_rule_state *st)
{
    const tg_rule *r = st->rule;
    st->accs = r->n_aggs ? calloc(r->n_aggs, sizeof *st->accs) : NULL;
    st->kept = r->n_collect ? calloc((size_t)r->n_collect, sizeof *st->kept) : NULL;
    if ((r->n_aggs && !st->accs) || (r->n_collect && !st->kept)) {
        st->oom = true;
        return;
    }
    for (size_t i = 0; i < r->n_aggs; i++) {
        st->accs[i].int_ok = r->aggs[i].arg && r->aggs[i].arg->type == TG_TY_INT;
        if (r->aggs[i].collect >= 0 && !st->kept[r->aggs[i].collect].arg)
            st->kept[r->aggs[i].collect].arg = r->aggs[i].arg;
    }
}

static void acc_value(tg_acc *a, tg_rv v)
{
    double x = tg_rv_num(v);
    a->n++;
    if (v.t == TG_RV_INT) {
        if (a->int_ok && __builtin_add_overflow(a->isum, v.u.i, &a->isum)) a->int_ok = false;
        if (a->n == 1 || v.u.i < a->imin) a->imin = v.u.i;
        if (a->n == 1 || v.u.i > a->imax) a->imax = v.u.i;
    } else {
        a->int_ok = false;
    }
    a->fsum += x;
    if (a->n == 1 || x < a->min) a->min = x;
    if (a->n == 1 || x > a->max) a->max = x;
    double d = x - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
}

void tg_acc_row(tg_rule_state *st, const char *row)
{
    const tg_rule *r = st->rule;
    for (size_t i = 0; i < r->n_aggs; i++) {
        const tg_agg_use *u = &r->aggs[i];
        if (!u->arg || u->collect >= 0) continue;
        if (u->kind == TG_AGG_COUNT || u->kind == TG_AGG_RATIO) {
            if (tg_eval_row_test(st, row, u->arg)) st->accs[i].hits++;
            continue;
        }
        tg_rv v = tg_eval_row(st, row, u->arg);
        if (v.t != TG_RV_NULL) acc_value(&st->accs[i], v);
    }
    for (int k = 0; k < r->n_collect; k++) {
        tg_kept *kp = &st->kept[k];
        if (!kp->arg) continue;
        tg_rv v = tg_eval_row(st, row, kp->arg);
        if (v.t == TG_RV_NULL) continue;
        if (!TG_PUSH(kp->v, kp->n, kp->cap, tg_rv_num(v))) st->oom = true;
    }
}

static double percentile(tg_kept *kp, int q)
{
    if (!kp->sorted) {
        tg_stats_sort(kp->v, kp->n);
        kp->sorted = true;
    }
    return tg_stats_percentile_sorted(kp->v, kp->n, (double)q / 100.0);
}

static tg_value number(double x, const tg_agg_use *u)
{
    if (isnan(x) || isinf(x)) return tg_null();
    return tg_float(x, u->unit);
}

static tg_value finish_one(tg_rule_state *st, const tg_agg_use *u, const tg_acc *a)
{
    switch (u->kind) {
    case TG_AGG_COUNT: return tg_int(u->arg ? a->hits : st->count, TG_UNIT_NONE);
    case TG_AGG_RATIO:
        return st->count ? tg_float((double)a->hits / (double)st->count, TG_UNIT_RATIO) : tg_null();
    default: break;
    }
    if (u->collect >= 0) {
        tg_kept *kp = &st->kept[u->collect];
        if (kp->n == 0) return tg_null();
        return number(percentile(kp, tg_agg_defs[u->kind].quantile), u);
    }
    if (u->kind == TG_AGG_N) return tg_int(a->n, TG_UNIT_NONE);
    if (a->n == 0) {
        /* The sum over no rows is 0 (not null, unlike SQL): "0 copies
        ** moved 0 B" rather than "moved n/a". */
        if (u->kind == TG_AGG_SUM)
            return u->type == TG_TY_INT ? tg_int(0, u->unit) : tg_float(0, u->unit);
        return tg_null();
    }
    double n = (double)a->n;
    switch (u->kind) {
    case TG_AGG_SUM: return a->int_ok ? tg_int(a->isum, u->unit) : number(a->fsum, u);
    case TG_AGG_MEAN: return number(a->mean, u);
    case TG_AGG_MIN: return u->type == TG_TY_INT ? tg_int(a->imin, u->unit) : number(a->min, u);
    case TG_AGG_MAX: return u->type == TG_TY_INT ? tg_int(a->imax, u->unit) : number(a->max, u);
    case TG_AGG_STDDEV: return number(sqrt(a->m2 / n), u);
    case TG_AGG_CV: return a->mean == 0 ? tg_null() : number(sqrt(a->m2 / n) / fabs(a->mean), u);
    default: TG_UNREACHABLE(); return tg_null();   /* percentiles are collected above */
    }
}

tg_value *tg_acc_finish(tg_rule_state *st, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    tg_value *vals = tg_arena_alloc(arena, (r->n_aggs ? r->n_aggs : 1) * sizeof *vals);
    if (!vals) return NULL;
    for (size_t i = 0; i < r->n_aggs; i++) vals[i] = finish_one(st, &r->aggs[i], &st->accs[i]);
    return vals;
}

void tg_acc_free(tg_rule_state *st)
{
    for (int k = 0; st->kept && k < st->rule->n_collect; k++) free(st->kept[k].v);
    free(st->kept);
    free(st->accs);
    st->kept = NULL;
    st->accs = NULL;
}
