/*
** NVTX attribution: for every range, its nesting depth among the push/pop
** ranges of its thread and the GPU work launched inside it (launching call
** start within [start, end] on the same thread): gpu_time, the sum of the
** op durations, and gpu_span, last op end minus first op start. For every
** kernel, the innermost range open on its launching thread at launch.
**
** Everything runs per thread on two sorted lists: the thread's ranges by
** start and its launches by launch time. gpu_time is a difference of prefix
** sums; gpu_span an offline range-min/range-max query (queries sorted by
** their right end, answered from monotonic stacks), so overlapping
** start/end ranges that do not nest are as exact as push/pop ones, and
** nothing is quadratic.
**
** The launch pass (model_join.c) reports each launch as it joins it; only
** launches on threads that have ranges are kept. A build whose rules read
** neither the nvtx source nor kernel rows skips all of this
** (tg_model_params.skip_nvtx_gpu).
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

/* A launched GPU op as the sweep needs it. `ref` packs kind (2 bits) and
** row index (30 bits). */
typedef struct launch {
    int64_t launch, start, end;
    uint32_t ref;
    int32_t thread;
} launch;

#define REF_SHIFT 30
#define REF_MAX ((1u << REF_SHIFT) - 1)

/* Thread index of the previous call (pid, tid): consecutive calls mostly
** come from one thread. */
typedef struct thread_cache_slot {
    int32_t pid, tid, th;
    bool valid;
} thread_cache_slot;

typedef struct tg_nvtx_ctx nvtx_ctx;

struct tg_nvtx_ctx {
    tg_trace *t;
    tg_idmap threads;
    size_t n_threads;
    size_t *range_off, *launch_off;   /* per thread: first index in the arrays below */
    uint32_t *ranges;                 /* nvtx indices grouped by thread, by start */
    launch *launches;                 /* grouped by thread, by launch time */
    launch *collected;                /* as the launch pass reports them */
    size_t n_collected, cap_collected;
    thread_cache_slot last;           /* thread of the previous call */
    int64_t *prefix;                  /* scratch: prefix sums of one thread */
    uint32_t *lo, *hi;                /* scratch: per range of one thread */
    uint32_t *max_stack, *min_stack;  /* scratch: monotonic stacks */
    uint32_t *open;                   /* scratch: open-range stack */
};

static bool is_range(const tg_nvtx *r)
{
    return (r->event_type == 59 || r->event_type == 60) && r->start != TG_NULL_I64 &&
           r->end != TG_NULL_I64 && r->end >= r->start;
}

static int cmp_launch(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    if (x->launch != y->launch) return x->launch < y->launch ? -1 : 1;
    return (x->ref > y->ref) - (x->ref < y->ref);
}

/* qsort has no context: sort range indices by start through a copy. */
typedef struct keyed { int64_t key; uint32_t value; } keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->value > y->value) - (x->value < y->value);
}

/* Group the ranges by thread (counting sort keeps the start order). */
static bool group_ranges(nvtx_ctx *c)
{
    tg_trace *t = c->t;
    if (!(*(&c->threads) = (tg_idmap){0}, true)) return false;
    int32_t *thread_of = malloc((t->n_nvtx ? t->n_nvtx : 1) * sizeof *thread_of);
    if (!thread_of) return false;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        thread_of[i] = is_range(&t->nvtx[i]) ? tg_idmap_intern(&c->threads, tg_key2(t->nvtx[i].pid, t->nvtx[i].tid)) : -1;
        if (is_range(&t->nvtx[i]) && thread_of[i] < 0) { free(thread_of); return false; }
    }
    c->n_threads = tg_idmap_count(&c->threads);
    c->range_off = calloc(c->n_threads + 1, sizeof *c->range_off);
    c->ranges = malloc((t->n_nvtx ? t->n_nvtx : 1) * sizeof *c->ranges);
    if (!c->range_off || !c->ranges) { free(thread_of); return false; }
    for (size_t i = 0; i < t->n_nvtx; i++)
        if (thread_of[i] >= 0) c->range_off[thread_of[i] + 1]++;
    for (size_t k = 0; k < c->n_threads; k++) c->range_off[k + 1] += c->range_off[k];
    size_t *fill = malloc((c->n_threads ? c->n_threads : 1) * sizeof *fill);
    if (!fill) { free(thread_of); return false; }
    memcpy(fill, c->range_off, c->n_threads * sizeof *fill);
    bool sorted = true;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        if (thread_of[i] < 0) continue;
        c->ranges[fill[thread_of[i]]++] = (uint32_t)i;
        if (i > 0 && t->nvtx[i - 1].start > t->nvtx[i].start) sorted = false;
    }
    free(fill);
    free(thread_of);
    if (sorted) return true;
    /* the loader sorts by start; if it did not, sort each thread's ranges */
    keyed *tmp = malloc((t->n_nvtx ? t->n_nvtx : 1) * sizeof *tmp);
    if (!tmp) return false;
    for (size_t k = 0; k < c->n_threads; k++) {
        size_t a = c->range_off[k], n = c->range_off[k + 1] - a;
        for (size_t i = 0; i < n; i++) tmp[i] = (keyed){t->nvtx[c->ranges[a + i]].start, c->ranges[a + i]};
        qsort(tmp, n, sizeof *tmp, cmp_keyed);
        for (size_t i = 0; i < n; i++) c->ranges[a + i] = tmp[i].value;
    }
    free(tmp);
    return true;
}

static int32_t thread_of(nvtx_ctx *c, const tg_api *a)
{
    thread_cache_slot *tc = &c->last;
    if (!tc->valid || a->pid != tc->pid || a->tid != tc->tid)
        *tc = (thread_cache_slot){a->pid, a->tid, tg_idmap_get(&c->threads, tg_key2(a->pid, a->tid)), true};
    return tc->th;
}

bool tg_model_nvtx_launch(tg_model *m, const tg_api *call, tg_op_kind kind, size_t row, int64_t start,
                          int64_t end)
{
    nvtx_ctx *c = tg_model_priv_of(m)->nvtx;
    if (start == TG_NULL_I64 || end == TG_NULL_I64 || row > REF_MAX) return row <= REF_MAX;
    int32_t th = thread_of(c, call);
    if (th < 0) return true;             /* a thread without ranges */
    launch l = {call->start, start, end, (uint32_t)kind << REF_SHIFT | (uint32_t)row, th};
    return TG_PUSH(c->collected, c->n_collected, c->cap_collected, l);
}

/* Group the collected launches by thread (counting sort: each thread's
** keep the order they came in), each thread's in launch order. Calls of a
** loaded table come in start order, so mostly no sort is needed; launches
** with one launch time may come in any order: every use below treats them
** alike. */
static bool group_launches(nvtx_ctx *c)
{
    c->launch_off = calloc(c->n_threads + 1, sizeof *c->launch_off);
    c->launches = malloc((c->n_collected ? c->n_collected : 1) * sizeof *c->launches);
    size_t *fill = malloc((c->n_threads ? c->n_threads : 1) * sizeof *fill);
    bool ok = c->launch_off && c->launches && fill;
    for (size_t i = 0; ok && i < c->n_collected; i++) c->launch_off[c->collected[i].thread + 1]++;
    for (size_t k = 0; ok && k < c->n_threads; k++) c->launch_off[k + 1] += c->launch_off[k];
    if (ok) memcpy(fill, c->launch_off, c->n_threads * sizeof *fill);
    for (size_t i = 0; ok && i < c->n_collected; i++) c->launches[fill[c->collected[i].thread]++] = c->collected[i];
    free(fill);
    free(c->collected);
    c->collected = NULL;
    c->n_collected = c->cap_collected = 0;
    for (size_t k = 0; ok && k < c->n_threads; k++) {
        launch *l = c->launches + c->launch_off[k];
        size_t n = c->launch_off[k + 1] - c->launch_off[k];
        for (size_t i = 1; i < n; i++)
            if (l[i - 1].launch > l[i].launch) {
                qsort(l, n, sizeof *l, cmp_launch);
                break;
            }
    }
    return ok;
}

/* First index in l[0..n) with launch >= t (strict: launch > t). */
static size_t bound(const launch *l, size_t n, int64_t t, bool strict)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strict ? l[mid].launch <= t : l[mid].launch < t) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static void depths(nvtx_ctx *c, const uint32_t *r, size_t nr)
{
    size_t top = 0;
    for (size_t i = 0; i < nr; i++) {
        tg_nvtx *x = &c->t->nvtx[r[i]];
        if (x->event_type != 59) continue;
        while (top > 0 && c->t->nvtx[c->open[top - 1]].end <= x->start) top--;
        x->depth = (int32_t)top;
        c->open[top++] = r[i];
    }
}

/* Innermost range containing each kernel's launch: the latest-started one
** still open. Ranges that ended are popped lazily when they reach the top. */
static void innermost(nvtx_ctx *c, const uint32_t *r, size_t nr, const launch *l, size_t nl)
{
    size_t top = 0, next = 0;
    for (size_t i = 0; i < nl; i++) {
        while (next < nr && c->t->nvtx[r[next]].start <= l[i].launch) c->open[top++] = r[next++];
        while (top > 0 && c->t->nvtx[c->open[top - 1]].end < l[i].launch) top--;
        if (top == 0 || (l[i].ref >> REF_SHIFT) != TG_OPK_KERNEL) continue;
        if (c->t->kernels) c->t->kernels[l[i].ref & REF_MAX].nvtx = c->t->nvtx[c->open[top - 1]].name;
    }
}

/* gpu_span of every range with launches: min start and max end over
** launches [lo, hi), answered in order of hi from monotonic stacks. */
static bool spans(nvtx_ctx *c, const uint32_t *r, size_t nr, const launch *l)
{
    size_t nq = 0;
    for (size_t i = 0; i < nr; i++)
        if (c->hi[i] > c->lo[i]) nq++;
    if (nq == 0) return true;
    keyed *q = malloc(nq * sizeof *q);
    if (!q) return false;
    nq = 0;
    for (size_t i = 0; i < nr; i++)
        if (c->hi[i] > c->lo[i]) q[nq++] = (keyed){c->hi[i], (uint32_t)i};
    qsort(q, nq, sizeof *q, cmp_keyed);
    size_t qi = 0, nmax = 0, nmin = 0;
    for (uint32_t j = 0; qi < nq; j++) {
        while (nmax > 0 && l[c->max_stack[nmax - 1]].end <= l[j].end) nmax--;
        c->max_stack[nmax++] = j;
        while (nmin > 0 && l[c->min_stack[nmin - 1]].start >= l[j].start) nmin--;
        c->min_stack[nmin++] = j;
        for (; qi < nq && q[qi].key == (int64_t)j + 1; qi++) {
            uint32_t lo = c->lo[q[qi].value];
            size_t a = 0, b = nmax;   /* first stack entry with index >= lo */
            while (a < b) { size_t m = (a + b) / 2; if (c->max_stack[m] < lo) a = m + 1; else b = m; }
            int64_t last_end = l[c->max_stack[a]].end;
            a = 0; b = nmin;
            while (a < b) { size_t m = (a + b) / 2; if (c->min_stack[m] < lo) a = m + 1; else b = m; }
            int64_t first_start = l[c->min_stack[a]].start;
            c->t->nvtx[r[q[qi].value]].gpu_span = last_end - first_start;
        }
    }
    free(q);
    return true;
}

static bool per_thread(nvtx_ctx *c, size_t k)
{
    const uint32_t *r = c->ranges + c->range_off[k];
    size_t nr = c->range_off[k + 1] - c->range_off[k];
    const launch *l = c->launches + c->launch_off[k];
    size_t nl = c->launch_off[k + 1] - c->launch_off[k];
    depths(c, r, nr);
    if (nl == 0) return true;
    innermost(c, r, nr, l, nl);
    c->prefix[0] = 0;
    /* Sums wrap in uint64 (no overflow UB on hostile exports); a range's
    ** difference is exact whenever its true sum fits in int64, and a sum
    ** that does not shows as negative and saturates. */
    for (size_t i = 0; i < nl; i++)
        c->prefix[i + 1] = (int64_t)((uint64_t)c->prefix[i] + (uint64_t)(l[i].end - l[i].start));
    for (size_t i = 0; i < nr; i++) {
        tg_nvtx *x = &c->t->nvtx[r[i]];
        c->lo[i] = (uint32_t)bound(l, nl, x->start, false);
        c->hi[i] = (uint32_t)bound(l, nl, x->end, true);
        int64_t sum = (int64_t)((uint64_t)c->prefix[c->hi[i]] - (uint64_t)c->prefix[c->lo[i]]);
        x->gpu_time = c->hi[i] > c->lo[i] ? (sum < 0 ? INT64_MAX : sum) : 0;
    }
    return spans(c, r, nr, l);
}

static void ctx_free(nvtx_ctx *c)
{
    tg_idmap_free(&c->threads);
    free(c->range_off); free(c->launch_off); free(c->ranges); free(c->launches);
    free(c->collected);
    free(c->prefix); free(c->lo); free(c->hi);
    free(c->max_stack); free(c->min_stack); free(c->open);
}

void tg_model_nvtx_free(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    if (!p->nvtx) return;
    ctx_free(p->nvtx);
    free(p->nvtx);
    p->nvtx = NULL;
}

bool tg_model_nvtx_begin(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    p->nvtx = calloc(1, sizeof *p->nvtx);
    if (!p->nvtx) return false;
    p->nvtx->t = m->trace;
    return group_ranges(p->nvtx);
}

void tg_model_nvtx_reset(tg_model *m)
{
    nvtx_ctx *c = tg_model_priv_of(m)->nvtx;
    if (!c) return;
    c->n_collected = 0;
    c->last.valid = false;
}

bool tg_model_nvtx_end(tg_model *m)
{
    nvtx_ctx *c = tg_model_priv_of(m)->nvtx;
    bool ok = group_launches(c);
    size_t max_r = 0, max_l = 0;
    for (size_t k = 0; ok && k < c->n_threads; k++) {
        if (c->range_off[k + 1] - c->range_off[k] > max_r) max_r = c->range_off[k + 1] - c->range_off[k];
        if (c->launch_off[k + 1] - c->launch_off[k] > max_l) max_l = c->launch_off[k + 1] - c->launch_off[k];
    }
    if (ok) {
        c->prefix = malloc((max_l + 1) * sizeof *c->prefix);
        c->lo = malloc((max_r + 1) * sizeof *c->lo);
        c->hi = malloc((max_r + 1) * sizeof *c->hi);
        c->max_stack = malloc((max_l + 1) * sizeof *c->max_stack);
        c->min_stack = malloc((max_l + 1) * sizeof *c->min_stack);
        c->open = malloc((max_r + 1) * sizeof *c->open);
        ok = c->prefix && c->lo && c->hi && c->max_stack && c->min_stack && c->open;
    }
    for (size_t k = 0; ok && k < c->n_threads; k++) ok = per_thread(c, k);
    tg_model_nvtx_free(m);
    return ok;
}
