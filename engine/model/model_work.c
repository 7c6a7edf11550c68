/*
** GPU work by name (docs/regressions.md): per kernel family (the
** demangled name without return type, template arguments and parameters:
** the instantiations of one template are one entry), per copy kind
** and for memsets, how many ops ran and how long, over the whole trace and
** launched inside steady iterations; and the NVTX ranges opened inside
** steady iterations, by name. `metrics` prints it as the per-kernel view;
** baselines keep it as the workload's fingerprint and to say what got
** slower when a regression rule fires.
**
** The few longest steady rows of each name are kept for citing.
** One pass over each op table (kernels as tg_kspan: the lean load is
** enough) into a dense array indexed by name id; medians, when asked, sort
** (name, duration) pairs once.
*/
#include "model_int.h"
#include "../trace/nsys_enums.h"

#include <stdlib.h>
#include <string.h>

/* "[memcpy HtoD]" ... by ENUM_CUDA_MEMCPY_OPER id (nsys_enums.h). */
static const char *const copy_labels[] = {
#define X(id, name) [id] = "[memcpy " name "]",
    TG_COPY_KIND_LIST(X)
#undef X
};
#define N_COPY_LABELS (sizeof copy_labels / sizeof *copy_labels)
#define MEMSET_LABEL "[memset]"

/* Index of a name in the summary: kernels by string id, copies and
** memsets after them. */
typedef struct accum {
    int32_t *slot;             /* key -> index into list, -1 */
    size_t n_keys;
    tg_work_name *list;
    size_t n, cap;
    bool oom;
} accum;

static tg_work_name *entry(accum *a, size_t key, const char *name, tg_work_kind kind)
{
    if (key >= a->n_keys) return NULL;
    if (a->slot[key] < 0) {
        tg_work_name w = {.name = name, .kind = kind, .p50 = TG_NULL_I64};
        if (!TG_PUSH(a->list, a->n, a->cap, w)) {
            a->oom = true;
            return NULL;
        }
        a->slot[key] = (int32_t)(a->n - 1);
    }
    return &a->list[a->slot[key]];
}

/* Keep rowid among the TG_WORK_TOP longest (longest first, the earlier
** row on ties). */
static void keep_top(tg_work_name *w, int64_t rowid, int64_t d)
{
    int at = w->n_top;
    while (at > 0 && w->top_duration[at - 1] < d) at--;
    if (at >= TG_WORK_TOP) return;
    int last = w->n_top < TG_WORK_TOP ? w->n_top : TG_WORK_TOP - 1;
    for (int k = last; k > at; k--) {
        w->top_rowid[k] = w->top_rowid[k - 1];
        w->top_duration[k] = w->top_duration[k - 1];
    }
    w->top_rowid[at] = rowid;
    w->top_duration[at] = d;
    if (w->n_top < TG_WORK_TOP) w->n_top++;
}

static void add(tg_work_name *w, int64_t rowid, int64_t start, int64_t end, bool steady, bool has_iterations)
{
    if (!w || start == TG_NULL_I64 || end == TG_NULL_I64) return;
    w->count++;
    w->time = tg_add_sat(w->time, end - start);
    if (steady && has_iterations) {
        w->steady_count++;
        w->steady_time = tg_add_sat(w->steady_time, end - start);
        keep_top(w, rowid, end - start);
    }
}

static int cmp_work(const void *a, const void *b)
{
    const tg_work_name *x = a, *y = b;
    if (x->steady_time != y->steady_time) return x->steady_time > y->steady_time ? -1 : 1;
    if (x->time != y->time) return x->time > y->time ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Medians per name: (entry, duration) pairs sorted once. */
typedef struct pair { int32_t entry; int64_t d; } pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->entry != y->entry) return x->entry < y->entry ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);
}

static bool medians(const tg_model *m, accum *a, int32_t n_strings)
{
    const tg_trace *t = m->trace;
    size_t n = t->n_kernels + t->n_memcpys + t->n_memsets;
    pair *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return false;
    size_t k = 0;
    for (size_t i = 0; i < t->n_kernels; i++) {
        const tg_kspan *s = tg_model_kernel(m, i);
        int32_t f = tg_model_kernel_family(m, s->name);
        if (f >= 0 && f < n_strings && s->start != TG_NULL_I64 && s->end != TG_NULL_I64)
            p[k++] = (pair){a->slot[f], s->end - s->start};
    }
    for (int table = 0; table < 2; table++) {
        const tg_memop *rows = table ? t->memsets : t->memcpys;
        size_t nr = table ? t->n_memsets : t->n_memcpys;
        for (size_t i = 0; i < nr; i++) {
            const tg_memop *r = &rows[i];
            size_t key = (size_t)n_strings + (table ? N_COPY_LABELS
                                                    : (r->copy_kind >= 0 && (size_t)r->copy_kind < N_COPY_LABELS ? (size_t)r->copy_kind : 0));
            if (r->start != TG_NULL_I64 && r->end != TG_NULL_I64) p[k++] = (pair){a->slot[key], r->end - r->start};
        }
    }
    qsort(p, k, sizeof *p, cmp_pair);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && p[j].entry == p[i].entry) j++;
        size_t len = j - i;
        int64_t lo = p[i + (len - 1) / 2].d, hi = p[i + len / 2].d;   /* sorted: hi >= lo */
        a->list[p[i].entry].p50 = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
        i = j;
    }
    free(p);
    return true;
}

/* NVTX ranges opened inside steady iterations, by name, except the
** iteration markers' own. */
static bool ranges(const tg_model *m, tg_work_summary *out)
{
    const tg_trace *t = m->trace;
    int32_t n_strings = tg_strpool_count(t->strings);
    int8_t *is_marker = calloc(n_strings > 0 ? (size_t)n_strings : 1, 1);   /* 0 unknown, 1 no, 2 yes */
    accum a = {.slot = malloc((n_strings > 0 ? (size_t)n_strings : 1) * sizeof *a.slot), .n_keys = (size_t)n_strings};
    bool ok = is_marker && a.slot;
    for (int32_t i = 0; ok && i < n_strings; i++) a.slot[i] = -1;
    for (size_t i = 0; ok && i < t->n_nvtx; i++) {
        const tg_nvtx *r = &t->nvtx[i];
        if (r->iteration < 0 || r->name < 0 || r->name >= n_strings || r->end == TG_NULL_I64) continue;
        const tg_iteration *it = tg_model_iteration_at(m, r->pid, r->iteration);
        if (!it || !it->steady) continue;
        if (!is_marker[r->name])
            is_marker[r->name] = tg_iter_selection_has_marker(m->selection, tg_trace_str(t, r->name)) ? 2 : 1;
        if (is_marker[r->name] == 2) continue;
        add(entry(&a, (size_t)r->name, tg_trace_str(t, r->name), TG_WORK_NVTX), r->rowid, r->start, r->end, true, true);
        ok = !a.oom;
    }
    free(is_marker);
    free(a.slot);
    if (!ok) {
        free(a.list);
        return false;
    }
    if (a.n > 1) qsort(a.list, a.n, sizeof *a.list, cmp_work);
    out->ranges = a.list;
    out->n_ranges = a.n;
    return true;
}

bool tg_model_work_summary(const tg_model *m, bool with_medians, tg_work_summary *out)
{
    const tg_trace *t = m->trace;
    memset(out, 0, sizeof *out);
    out->steady_iterations = m->facts.steady_iterations;
    int32_t n_strings = tg_strpool_count(t->strings);
    accum a = {.n_keys = (size_t)n_strings + N_COPY_LABELS + 1};
    a.slot = malloc(a.n_keys * sizeof *a.slot);
    if (!a.slot) return false;
    for (size_t i = 0; i < a.n_keys; i++) a.slot[i] = -1;
    bool iters = m->has_iterations;
    for (size_t i = 0; i < t->n_kernels && !a.oom; i++) {
        const tg_kspan *s = tg_model_kernel(m, i);
        int32_t f = tg_model_kernel_family(m, s->name);
        if (f < 0 || f >= n_strings) continue;
        add(entry(&a, (size_t)f, tg_trace_str(t, f), TG_WORK_KERNEL), s->rowid, s->start, s->end, s->steady == 1, iters);
    }
    for (size_t i = 0; i < t->n_memcpys && !a.oom; i++) {
        const tg_memop *r = &t->memcpys[i];
        size_t kind = r->copy_kind >= 0 && (size_t)r->copy_kind < N_COPY_LABELS ? (size_t)r->copy_kind : 0;
        add(entry(&a, (size_t)n_strings + kind, copy_labels[kind], TG_WORK_MEMCPY), r->rowid, r->start, r->end,
            r->steady == 1, iters);
    }
    for (size_t i = 0; i < t->n_memsets && !a.oom; i++) {
        const tg_memop *r = &t->memsets[i];
        add(entry(&a, (size_t)n_strings + N_COPY_LABELS, MEMSET_LABEL, TG_WORK_MEMSET), r->rowid, r->start, r->end,
            r->steady == 1, iters);
    }
    bool ok = !a.oom && (!with_medians || medians(m, &a, n_strings));
    free(a.slot);
    if (!ok) {
        free(a.list);
        return false;
    }
    for (size_t i = 0; i < a.n; i++) {
        out->time = tg_add_sat(out->time, a.list[i].time);
        out->steady_time = tg_add_sat(out->steady_time, a.list[i].steady_time);
    }
    if (a.n > 1) qsort(a.list, a.n, sizeof *a.list, cmp_work);
    out->names = a.list;
    out->n_names = a.n;
    if (iters && !ranges(m, out)) {
        tg_work_summary_free(out);
        return false;
    }
    return true;
}

void tg_work_summary_free(tg_work_summary *s)
{
    free(s->names);
    free(s->ranges);
    memset(s, 0, sizeof *s);
}
