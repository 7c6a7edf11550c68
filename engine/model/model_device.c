/*
** The gap and device sources: one sweep over every GPU op in start order.
**
** Ops are kernels, copies and memsets, plus the PROFILER_OVERHEAD rows
** NVIDIA's gap rule counts as busy (CUDA profiling overhead, data flush
** overhead, stop overhead). Overhead rows carry a process but no device, so
** each one is applied to every (process, device) pair of its process,
** clipped to that pair's first-to-last-op range: it can fill a gap but
** never stretch a device's span.
**
** Gaps are per (process, device), as nsys analyze reports them; busy time
** is per device, the union over all its processes. The sweep keeps one open
** union segment per device, per (process, device) and, for the NCCL
** overlap, three per device (NCCL kernels, other kernels, all kernels):
** overlap = |N| + |C| - |N u C| by inclusion-exclusion, so no interval
** list is ever stored. A fourth union per device, of its copies, clipped
** to the steady window like busy time, gives the share of the steady busy
** time spent copying (copy_frac_steady).
**
** Overhead rows are clipped to the first-to-last-op range of each pair, so
** with busy overhead rows a first pass over the ops (census) finds those
** ranges before the sweep; without any, the census is done by the sweep
** itself, in one pass (pairs and devices get the same numbers either way:
** the order in which the ops first name them).
*/
#include "model_int.h"
#include "../common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const busy_overhead_names[] = {
#define X(name) name,
    TG_BUSY_OVERHEADS(X)
#undef X
};

bool tg_model_is_busy_overhead(const char *name)
{
    for (size_t i = 0; name && i < sizeof busy_overhead_names / sizeof busy_overhead_names[0]; i++)
        if (strcmp(name, busy_overhead_names[i]) == 0) return true;
    return false;
}

/* One growing union of intervals visited in start order. */
typedef struct seg {
    bool open;
    int64_t s, e, total;
} seg;

/* Add [s, e); returns true (and the closed segment) when one closed. */
static bool seg_add(seg *g, int64_t s, int64_t e, int64_t *cs, int64_t *ce)
{
    bool closed = false;
    if (g->open && s > g->e) {
        *cs = g->s; *ce = g->e;
        g->total += g->e - g->s;
        g->open = false;
        closed = true;
    }
    if (!g->open) { g->open = true; g->s = s; g->e = e; }
    else if (e > g->e) g->e = e;
    return closed;
}

static bool seg_close(seg *g, int64_t *cs, int64_t *ce)
{
    if (!g->open) return false;
    *cs = g->s; *ce = g->e;
    g->total += g->e - g->s;
    g->open = false;
    return true;
}

typedef struct dev_state {
    int32_t device;
    int64_t first, last;
    int32_t kernels;
    int64_t kernel_time;
    int64_t *queues;                /* queue times of its kernels */
    size_t queue_n, queue_cap;
    int32_t queue_clamped;
    seg busy, nccl, compute, all, copy;
    int64_t busy_steady, copy_steady;
    int32_t gaps;
} dev_state;

typedef struct group_state {
    int32_t dev, pid;               /* dev: index into the dev_state array */
    int64_t first, last;
    int64_t steady_from;            /* gaps starting at or after it are steady; null = all */
    bool open;
    int64_t end, end_rowid;         /* union end so far and the op that reached it */
    int64_t end_start;              /* that op's start */
    int32_t end_table;
} group_state;

typedef struct item {               /* an op or a clipped overhead row */
    int64_t start, end, rowid;
    int32_t table, group;
    int8_t kernel, nccl;
} item;

/* Add the part of [s, e) inside the steady window to *total. */
static void add_steady(const tg_model *m, int64_t s, int64_t e, int64_t *total)
{
    if (s < m->steady_start) s = m->steady_start;
    if (e > m->steady_end) e = m->steady_end;
    if (e > s) *total += e - s;
}

typedef struct sweep {
    tg_model *m;
    const tg_model_params *p;
    tg_idmap dev_map, group_map;
    dev_state *devs; size_t n_devs;
    group_state *groups; size_t n_groups;
    item *extra; size_t n_extra;    /* overhead rows, by start */
    size_t dev_cap, group_cap;
    size_t n_gaps, cap_gaps;
    int32_t last_device, last_pid, last_group;   /* ops come in runs of one pair */
} sweep;

/* Group of (device, pid); consecutive ops mostly share it. */
static int32_t group_of(sweep *w, int32_t device, int32_t pid)
{
    if (w->last_group >= 0 && device == w->last_device && pid == w->last_pid) return w->last_group;
    int32_t g = tg_idmap_get(&w->group_map, tg_key2(device, pid));
    w->last_device = device;
    w->last_pid = pid;
    w->last_group = g;
    return g;
}

static bool usable(const tg_op *op)
{
    return op->start != TG_NULL_I64 && op->end != TG_NULL_I64 && op->end >= op->start;
}

/* The census of one op: its pair and device (numbered on first sight),
** their spans, the kernel count and time. Returns the pair, -1 on OOM. */
static int32_t count_op(sweep *w, const tg_op *op)
{
    int32_t g = group_of(w, op->device, op->pid), d;
    if (g >= 0) {
        d = w->groups[g].dev;
    } else {
        d = tg_idmap_intern(&w->dev_map, op->device);
        g = tg_idmap_intern(&w->group_map, tg_key2(op->device, op->pid));
        w->last_group = -1;
        if (d < 0 || g < 0) return -1;
        if ((size_t)d == w->n_devs &&
            !TG_PUSH(w->devs, w->n_devs, w->dev_cap, ((dev_state){.device = op->device, .first = op->start, .last = op->end})))
            return -1;
        if ((size_t)g == w->n_groups) {
            tg_model *m = w->m;
            group_state gs = {.dev = d, .pid = op->pid, .first = op->start, .last = op->end,
                              .steady_from = m->has_iterations ? tg_model_first_steady_start(m, op->pid) : TG_NULL_I64};
            if (!TG_PUSH(w->groups, w->n_groups, w->group_cap, gs)) return -1;
        }
    }
    dev_state *ds = &w->devs[d];
    group_state *gs = &w->groups[g];
    if (op->end > ds->last) ds->last = op->end;
    if (op->end > gs->last) gs->last = op->end;
    if (op->kind == TG_OPK_KERNEL) {
        ds->kernels++;
        ds->kernel_time = tg_add_sat(ds->kernel_time, op->end - op->start);
    }
    return g;
}

/* Pass 1 (with overhead rows): number devices and pairs, their spans. */
static bool census(sweep *w)
{
    tg_op_stream s;
    if (!tg_model_ops_open(&s, w->m)) return false;
    tg_op op;
    bool ok = true;
    while (ok && tg_model_ops_next(&s, &op))
        if (usable(&op)) ok = count_op(w, &op) >= 0;
    tg_model_ops_close(&s);
    return ok;
}

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->group > y->group) - (x->group < y->group);
}

/* Overhead rows, clipped to the span of each pair of their process. */
static bool overhead_items(sweep *w)
{
    const tg_trace *t = w->m->trace;
    size_t cap = 0;
    for (size_t i = 0; i < t->n_overheads; i++) {
        const tg_overhead *o = &t->overheads[i];
        if (o->start == TG_NULL_I64 || o->end == TG_NULL_I64) continue;
        if (!tg_model_is_busy_overhead(tg_trace_str(t, o->name))) continue;
        for (size_t g = 0; g < w->n_groups; g++) {
            const group_state *gs = &w->groups[g];
            if (gs->pid != o->pid) continue;
            int64_t s = o->start > gs->first ? o->start : gs->first;
            int64_t e = o->end < gs->last ? o->end : gs->last;
            if (e <= s) continue;
            item it = {s, e, o->rowid, TG_TABLE_OVERHEAD, (int32_t)g, 0, 0};
            if (!TG_PUSH(w->extra, w->n_extra, cap, it)) return false;
        }
    }
    if (w->n_extra > 1) qsort(w->extra, w->n_extra, sizeof *w->extra, cmp_item);
    return true;
}

static void emit_gap(sweep *w, group_state *g, const item *it, bool *ok)
{
    tg_model *m = w->m;
    tg_gap gap = {
        .rowid = g->end_rowid, .table = g->end_table, .prev_start = g->end_start,
        .next_rowid = it->rowid, .next_table = it->table,
        .start = g->end, .end = it->start, .duration = it->start - g->end,
        .device = w->devs[g->dev].device, .pid = g->pid,
        .in_steady_state = g->steady_from == TG_NULL_I64 || g->end >= g->steady_from,
    };
    if (gap.duration >= w->p->gap_min_ns) w->devs[g->dev].gaps++;
    if (gap.duration < w->p->gap_rows_min_ns) return;   /* no rule can see it */
    if (w->n_gaps < w->cap_gaps) {
        m->gaps[w->n_gaps++] = gap;
    } else {
        TG_UNREACHABLE();               /* the array holds one gap per item */
        *ok = false;
    }
}

static void visit(sweep *w, const item *it, bool *ok)
{
    group_state *g = &w->groups[it->group];
    dev_state *d = &w->devs[g->dev];
    int64_t cs, ce;
    if (seg_add(&d->busy, it->start, it->end, &cs, &ce)) add_steady(w->m, cs, ce, &d->busy_steady);
    if (it->table == TG_TABLE_MEMCPY && seg_add(&d->copy, it->start, it->end, &cs, &ce))
        add_steady(w->m, cs, ce, &d->copy_steady);
    if (g->open && it->start > g->end) emit_gap(w, g, it, ok);
    if (!g->open || it->start > g->end || it->end > g->end) {
        g->open = true;
        g->end = it->end;
        g->end_rowid = it->rowid;
        g->end_table = it->table;
        g->end_start = it->start;
    }
    if (it->kernel) {
        seg_add(&d->all, it->start, it->end, &cs, &ce);
        seg_add(it->nccl ? &d->nccl : &d->compute, it->start, it->end, &cs, &ce);
    }
}

/* Pass 2: the sweep proper, ops merged with the overhead items. */
/* Pass 2: the sweep proper, ops merged with the overhead items; with
** `counting`, the census of each op too (no overhead items: one pass). */
static bool run_sweep(sweep *w, bool counting)
{
    tg_op_stream s;
    if (!tg_model_ops_open(&s, w->m)) return false;
    bool ok = true, have = false;
    size_t next_extra = 0;
    tg_op op;
    item cur;
    while (ok) {
        if (!have) {
            while ((have = tg_model_ops_next(&s, &op)) && !usable(&op)) {}
            if (have) {
                int32_t g = counting ? count_op(w, &op) : group_of(w, op.device, op.pid);
                if (g < 0) { ok = false; break; }
                const tg_kspan *k = op.kind == TG_OPK_KERNEL ? tg_model_ks(tg_model_cpriv_of(w->m), op.index) : NULL;
                cur = (item){op.start, op.end, op.rowid, tg_model_op_table(op.kind), g, k != NULL,
                             k ? k->nccl : 0};
                dev_state *d = &w->devs[w->groups[g].dev];
                if (k && k->queue != TG_NULL_I64) {
                    d->queue_clamped += k->queue_clamped;
                    if (!TG_PUSH(d->queues, d->queue_n, d->queue_cap, k->queue)) ok = false;
                }
            }
        }
        bool take_extra = next_extra < w->n_extra && (!have || w->extra[next_extra].start < cur.start);
        if (take_extra) visit(w, &w->extra[next_extra++], &ok);
        else if (have) { visit(w, &cur, &ok); have = false; }
        else break;
    }
    tg_model_ops_close(&s);
    return ok;
}

static int cmp_gap(const void *a, const void *b)
{
    const tg_gap *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_device(const void *a, const void *b)
{
    const tg_device *x = a, *y = b;
    return (x->device > y->device) - (x->device < y->device);
}

static int32_t gpu_name(const tg_trace *t, int32_t device)
{
    size_t lo = 0, hi = t->n_gpus;   /* trace->gpus is sorted by id */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->gpus[mid].id < device) lo = mid + 1; else hi = mid;
    }
    return lo < t->n_gpus && t->gpus[lo].id == device ? t->gpus[lo].name : -1;
}

static void finish_device(sweep *w, dev_state *d, tg_device *out)
{
    const tg_model *m = w->m;
    int64_t cs, ce;
    if (seg_close(&d->busy, &cs, &ce)) add_steady(m, cs, ce, &d->busy_steady);
    if (seg_close(&d->copy, &cs, &ce)) add_steady(m, cs, ce, &d->copy_steady);
    seg_close(&d->nccl, &cs, &ce);
    seg_close(&d->compute, &cs, &ce);
    seg_close(&d->all, &cs, &ce);
    *out = (tg_device){
        .rowid = -1, .device = d->device, .name = gpu_name(m->trace, d->device),
        .start = d->first, .end = d->last, .span = d->last - d->first,
        .kernels = d->kernels, .kernel_time = d->kernel_time,
        .nccl_time = d->nccl.total, .gaps = d->gaps,
        .busy_frac = NAN, .busy_frac_steady = NAN, .nccl_overlap = NAN,
        .queue_p50 = TG_NULL_I64, .queue_kernels = (int32_t)d->queue_n, .queue_clamped = d->queue_clamped,
        .busy_time_steady = d->busy_steady, .copy_time_steady = d->copy_steady, .copy_frac_steady = NAN,
    };
    if (d->busy_steady > 0) out->copy_frac_steady = (double)d->copy_steady / (double)d->busy_steady;
    if (out->span > 0) out->busy_frac = (double)d->busy.total / (double)out->span;
    if (!m->has_iterations) out->busy_frac_steady = out->busy_frac;
    else if (m->steady_end > m->steady_start)
        out->busy_frac_steady = (double)d->busy_steady / (double)(m->steady_end - m->steady_start);
    if (d->nccl.total > 0) {
        int64_t overlapped = d->nccl.total + d->compute.total - d->all.total;
        out->nccl_overlap = (double)overlapped / (double)d->nccl.total;
        out->exposed_nccl_time = d->nccl.total - overlapped;
    }
    if (d->queue_n)
        out->queue_p50 = llround(tg_stats_median_i64(d->queues, d->queue_n));
}

static void sweep_free(sweep *w)
{
    tg_idmap_free(&w->dev_map);
    tg_idmap_free(&w->group_map);
    free(w->groups);
    free(w->extra);
    for (size_t d = 0; d < w->n_devs; d++) free(w->devs[d].queues);
    free(w->devs);
}

bool tg_model_build_devices(tg_model *m, const tg_model_params *p)
{
    sweep w = {.m = m, .p = p, .last_group = -1};
    free(m->gaps);
    free(m->devices);
    m->gaps = NULL; m->devices = NULL; m->n_gaps = 0; m->n_devices = 0;
    const tg_trace *t = m->trace;
    bool busy_overhead = false;
    for (size_t i = 0; i < t->n_overheads && !busy_overhead; i++)
        busy_overhead = tg_model_is_busy_overhead(tg_trace_str(t, t->overheads[i].name));
    bool ok = (*(&w.dev_map) = (tg_idmap){0}, true) && (*(&w.group_map) = (tg_idmap){0}, true);
    if (ok && busy_overhead) ok = census(&w) && overhead_items(&w);
    /* Sized for the worst case (one gap per op or item) once; pages never
    ** written cost no memory. */
    w.cap_gaps = t->n_kernels + t->n_memcpys + t->n_memsets + w.n_extra;
    if (ok) ok = (m->gaps = malloc((w.cap_gaps ? w.cap_gaps : 1) * sizeof *m->gaps)) != NULL;
    if (ok) ok = run_sweep(&w, !busy_overhead);
    if (ok) ok = (m->devices = calloc(w.n_devs ? w.n_devs : 1, sizeof *m->devices)) != NULL;
    if (ok) {
        for (size_t d = 0; d < w.n_devs; d++) finish_device(&w, &w.devs[d], &m->devices[d]);
        m->n_devices = w.n_devs;
        qsort(m->devices, m->n_devices, sizeof *m->devices, cmp_device);
        m->n_gaps = w.n_gaps;
        tg_gap *fit = realloc(m->gaps, (m->n_gaps ? m->n_gaps : 1) * sizeof *m->gaps);
        if (fit) m->gaps = fit;
        /* one process per device (the common case) emits them in order */
        bool sorted = true;
        for (size_t i = 1; i < m->n_gaps && sorted; i++) sorted = cmp_gap(&m->gaps[i - 1], &m->gaps[i]) <= 0;
        if (!sorted) qsort(m->gaps, m->n_gaps, sizeof *m->gaps, cmp_gap);
    }
    sweep_free(&w);
    return ok;
}
