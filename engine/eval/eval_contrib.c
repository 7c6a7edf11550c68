/*
** What changed between two workloads (docs/regressions.md, "The
** workload, and what got slower"): the attribution a regression finding gives against its
** baseline (engine/baseline/compare.c) and `tracegate merge` gives the
** slowest rank against the median rank (engine/report/merge.c). Per steady
** iteration, the GPU work names (kernel families, copy kinds, memsets)
** and NVTX ranges whose time moved, by |delta|, each with the newer
** trace's longest steady rows of it and the query (SQL, or jq on a Kineto
** trace) that reproduces its time there and lists them; and the sentence
** that names them.
*/
#include "eval.h"
#include "../common/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tg_work_entry *find_entry(const tg_work_entry *list, size_t n, const char *name, tg_work_kind kind)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].kind == kind && !strcmp(list[i].name, name)) return &list[i];
    return NULL;
}

static bool is_other(const tg_work_entry *e)
{
    return !strcmp(e->name, TG_WORK_OTHER);
}

static int cmp_contrib(const void *a, const void *b)
{
    const tg_contributor *x = a, *y = b;
    double dx = fabs(x->delta), dy = fabs(y->delta);
    if (dx != dy) return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The names of one list (ops or ranges) whose time per iteration moved,
** appended to out (capacity reserved by the caller). */
static void diff_lists(const tg_work_entry *then, size_t n_then, const tg_work_entry *now, size_t n_now,
                       double total_delta, tg_contributor *out, size_t *n)
{
    for (size_t i = 0; i < n_then; i++) {
        const tg_work_entry *b = &then[i];
        if (is_other(b)) continue;
        const tg_work_entry *c = find_entry(now, n_now, b->name, b->kind);
        double now_time = c && !isnan(c->time) ? c->time : 0, now_launches = c && !isnan(c->launches) ? c->launches : 0;
        out[(*n)++] = (tg_contributor){.name = b->name, .kind = b->kind, .then_time = b->time, .now_time = now_time,
                                       .then_launches = b->launches, .now_launches = now_launches,
                                       .rows = c ? c->rows : NULL, .n_rows = c ? c->n_rows : 0,
                                       .table = c ? c->table : NULL};
    }
    for (size_t i = 0; i < n_now; i++) {
        const tg_work_entry *c = &now[i];
        if (find_entry(then, n_then, c->name, c->kind)) continue;
        out[(*n)++] = (tg_contributor){.name = c->name, .kind = c->kind, .then_time = 0, .now_time = c->time,
                                       .then_launches = 0, .now_launches = c->launches, .rows = c->rows,
                                       .n_rows = c->n_rows, .table = c->table};
    }
    for (size_t i = 0; i < *n; i++) {
        tg_contributor *x = &out[i];
        if (isnan(x->now_time)) x->now_time = 0;
        if (isnan(x->then_time)) x->then_time = 0;
        x->delta = x->now_time - x->then_time;
        x->share = total_delta != 0 && isfinite(total_delta) ? x->delta / total_delta : NAN;
        x->status = x->then_time == 0 && x->then_launches == 0 ? TG_CONTRIB_NEW
                  : x->now_time == 0 && x->now_launches == 0 ? TG_CONTRIB_GONE
                  : x->delta >= 0 ? TG_CONTRIB_GREW : TG_CONTRIB_SHRANK;
    }
}

bool tg_workload_attribute(const tg_workload *base, const tg_workload *cur, double metric_change, bool ranges,
                           tg_baseline_cmp *c, tg_arena *a)
{
    c->busy_then = base->gpu_time;
    c->busy_now = cur->gpu_time;
    c->busy_query = tg_workload_busy_query(cur, a);
    size_t cap = base->n_ops + cur->n_ops + (ranges ? base->n_ranges + cur->n_ranges : 0);
    tg_contributor *ops = malloc((cap ? cap : 1) * sizeof *ops);
    if (!ops) return false;
    size_t n_ops = 0, n_ranges = 0;
    diff_lists(base->ops, base->n_ops, cur->ops, cur->n_ops, cur->gpu_time - base->gpu_time, ops, &n_ops);
    qsort(ops, n_ops, sizeof *ops, cmp_contrib);
    tg_contributor *rng = ops + n_ops;
    if (ranges) {
        diff_lists(base->ranges, base->n_ranges, cur->ranges, cur->n_ranges, NAN, rng, &n_ranges);
        qsort(rng, n_ranges, sizeof *rng, cmp_contrib);
    }
    /* the ones that matter: at least 2% of the change they are part of
    ** (GPU work: of the GPU time per iteration; ranges: of the metric) */
    double busy = fabs(cur->gpu_time - base->gpu_time), total = fabs(metric_change);
    size_t keep_ops = 0, keep_ranges = 0;
    while (keep_ops < n_ops && keep_ops < TG_CONTRIB_MAX_OPS && ops[keep_ops].delta != 0 &&
           (keep_ops == 0 || fabs(ops[keep_ops].delta) >= 0.02 * busy))
        keep_ops++;
    while (keep_ranges < n_ranges && keep_ranges < TG_CONTRIB_MAX_RANGES && rng[keep_ranges].delta != 0 &&
           (keep_ranges == 0 || fabs(rng[keep_ranges].delta) >= 0.02 * total))
        keep_ranges++;
    c->contributors = tg_arena_alloc(a, (keep_ops + keep_ranges + 1) * sizeof *c->contributors);
    bool ok = c->contributors != NULL;
    for (size_t i = 0; ok && i < keep_ops + keep_ranges; i++) {
        tg_contributor x = i < keep_ops ? ops[i] : rng[i - keep_ops];
        x.name = tg_arena_strdup(a, x.name);
        int64_t *rows = x.n_rows ? tg_arena_alloc(a, x.n_rows * sizeof *rows) : NULL;
        if (rows) memcpy(rows, x.rows, x.n_rows * sizeof *rows);
        x.rows = rows;
        x.n_rows = rows ? x.n_rows : 0;
        if (x.table) x.table = tg_arena_strdup(a, x.table);
        tg_work_entry e = {.name = x.name, .kind = x.kind, .rows = x.rows, .n_rows = x.n_rows};
        x.query = tg_workload_query(cur, &e, a);
        ok = x.name != NULL;
        c->contributors[c->n_contributors++] = x;
    }
    free(ops);
    return ok;
}

/* Up to `max` contributors of one kind (GPU work, or NVTX
** ranges) that moved at least 5% of `total`: "; LABEL NAME +1.58 ms per
** iteration (149 -> 745 launches), ...". */
static void put_movers(FILE *f, const tg_baseline_cmp *c, bool ranges, double total, size_t max, const char *label)
{
    char d[48];
    size_t shown = 0;
    for (size_t i = 0; i < c->n_contributors && shown < max; i++) {
        const tg_contributor *x = &c->contributors[i];
        if ((x->kind == TG_WORK_NVTX) != ranges) continue;
        if (shown > 0 && isfinite(total) && fabs(x->delta) < 0.05 * fabs(total)) break;
        tg_fmt_num(d, sizeof d, fabs(x->delta), TG_UNIT_NS);
        fprintf(f, "%s%s %s%s per iteration", shown ? ", " : label, x->name, x->delta >= 0 ? "+" : "-", d);
        if (!ranges)
            fprintf(f, " (%.4g -> %.4g launches%s)", x->then_launches, x->now_launches,
                    x->status == TG_CONTRIB_NEW ? ", new" : x->status == TG_CONTRIB_GONE ? ", gone" : "");
        else if (x->status == TG_CONTRIB_NEW || x->status == TG_CONTRIB_GONE)
            fprintf(f, " (%s)", x->status == TG_CONTRIB_NEW ? "new" : "gone");
        shown++;
    }
}

/* What changed, after the verdict: for wall time how much of the change
** the GPU was busy and the NVTX ranges that moved, then the GPU work. */
void tg_workload_put_changes(FILE *f, const tg_baseline_cmp *c, bool wall_time)
{
    char a[48], b[48], d[48];
    if (wall_time && !isnan(c->busy_then) && !isnan(c->busy_now) && !isnan(c->value) && !isnan(c->current)) {
        double total = c->current - c->value, busy = c->busy_now - c->busy_then;
        tg_fmt_num(a, sizeof a, c->busy_then, TG_UNIT_NS);
        tg_fmt_num(b, sizeof b, c->busy_now, TG_UNIT_NS);
        tg_fmt_num(d, sizeof d, total - busy, TG_UNIT_NS);
        fprintf(f, "; GPU busy per iteration %s -> %s, the rest of the change (%s%s) is time the GPU waited "
                   "(host work, syncs, data loading)", a, b, total - busy >= 0 ? "+" : "", d);
    }
    double busy = c->busy_now - c->busy_then;
    if (wall_time) put_movers(f, c, true, c->current - c->value, 2, "; NVTX ranges that changed most: ");
    put_movers(f, c, false, busy, wall_time ? 2 : 3, wall_time ? "; GPU work that changed most: "
                                                                 : "; what changed most: ");
}
