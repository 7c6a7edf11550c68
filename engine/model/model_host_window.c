/*
** What the threads of one process did in a time window (docs/host.md):
** the answer a gap finding gives to "why did the GPU wait".
**
** Three kinds of rows count, each by the part of its span inside the
** window: OS runtime calls (OSRT_API), CUDA calls of TG_HOST_CUDA_MIN_NS or
** more (the launch pass keeps them) and NVTX ranges. Rows of one source,
** name and thread make one entry: rows, time inside the window, and the
** rowids of the rows with the most time inside it.
**
** Entries are ordered for a reader: the threads that make CUDA calls (the
** ones that feed the GPU; the others are the program's helpers, the CUDA
** driver's and the profiler's, which wait in poll or sem_wait all along)
** first, calls before the NVTX ranges they happen in, then by time.
** launch_busy is the union of the launch threads' call time in the
** window: the rest of the window they spent in code nsys did not trace.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct window_build {
    tg_host_window *w;
    tg_model_idmap keys;       /* (source, tid, name) -> entry */
    size_t cap;
    int64_t (*busy)[2];        /* the launch threads' call spans in the window */
    size_t n_busy, cap_busy;
    bool oom;
} window_build;

static int64_t overlap(int64_t s, int64_t e, int64_t ws, int64_t we)
{
    int64_t a = s > ws ? s : ws, b = e < we ? e : we;
    return b > a ? b - a : 0;
}

static int64_t entry_key(tg_host_source src, int32_t tid, int32_t name)
{
    return (int64_t)(((uint64_t)src << 56) ^ ((uint64_t)(uint32_t)tid << 32) ^ (uint32_t)name);
}

/* Keep the TG_HOST_ROWIDS rows with the most time inside the window. */
static void cite(tg_host_entry *e, int64_t rowid, int64_t ov, int32_t callchain)
{
    size_t at = e->n_rowids;
    while (at > 0 && e->overlaps[at - 1] < ov) at--;
    if (at >= TG_HOST_ROWIDS) return;
    size_t last = e->n_rowids < TG_HOST_ROWIDS ? e->n_rowids : TG_HOST_ROWIDS - 1;
    memmove(&e->rowids[at + 1], &e->rowids[at], (last - at) * sizeof *e->rowids);
    memmove(&e->overlaps[at + 1], &e->overlaps[at], (last - at) * sizeof *e->overlaps);
    e->rowids[at] = rowid;
    e->overlaps[at] = ov;
    if (e->n_rowids < TG_HOST_ROWIDS) e->n_rowids++;
    if (at == 0) e->callchain = callchain;
}

static void add_row(window_build *b, const tg_model *m, tg_host_source src, int32_t tid, int32_t name,
                    int64_t rowid, int64_t s, int64_t e, int32_t callchain)
{
    tg_host_window *w = b->w;
    int64_t ov = overlap(s, e, w->start, w->end);
    if (ov <= 0) return;
    int32_t slot = tg_model_idmap_put(&b->keys, entry_key(src, tid, name));
    if (slot < 0) {
        b->oom = true;
        return;
    }
    bool launch = tg_model_launch_thread(m, w->pid, tid);
    if ((size_t)slot == w->n_entries) {
        tg_host_entry x = {.source = src, .name = name, .pid = w->pid, .tid = tid,
                           .thread = tg_trace_thread_name(m->trace, w->pid, tid), .launch_thread = launch,
                           .callchain = -1};
        if (!TG_PUSH(w->entries, w->n_entries, b->cap, x)) {
            b->oom = true;
            return;
        }
    }
    tg_host_entry *x = &w->entries[slot];
    x->rows++;
    x->time = tg_add_sat(x->time, ov);
    cite(x, rowid, ov, callchain);
    if (launch && src != TG_HSRC_NVTX) {
        int64_t span[2] = {s > w->start ? s : w->start, e < w->end ? e : w->end};
        if (!tg_grow((void **)&b->busy, &b->cap_busy, b->n_busy + 1, sizeof *b->busy)) {
            b->oom = true;
            return;
        }
        memcpy(b->busy[b->n_busy++], span, sizeof span);
    }
}

static int cmp_span(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static int64_t union_length(int64_t (*spans)[2], size_t n)
{
    if (n > 1) qsort(spans, n, sizeof *spans, cmp_span);
    int64_t total = 0, s = 0, e = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (open && spans[i][0] <= e) {
            if (spans[i][1] > e) e = spans[i][1];
            continue;
        }
        if (open) total += e - s;
        s = spans[i][0];
        e = spans[i][1];
        open = true;
    }
    return open ? total + (e - s) : total;
}

static int cmp_entry(const void *a, const void *b)
{
    const tg_host_entry *x = a, *y = b;
    if (x->launch_thread != y->launch_thread) return x->launch_thread ? -1 : 1;
    bool xn = x->source == TG_HSRC_NVTX, yn = y->source == TG_HSRC_NVTX;
    if (xn != yn) return xn ? 1 : -1;
    if (x->time != y->time) return (x->time < y->time) - (x->time > y->time);
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->name > y->name) - (x->name < y->name);
}

bool tg_model_host_window(const tg_model *m, int32_t pid, int64_t start, int64_t end, tg_host_window *out)
{
    memset(out, 0, sizeof *out);
    out->pid = pid;
    out->start = start;
    out->end = end;
    window_build b = {.w = out};
    if (!tg_model_idmap_init(&b.keys, 64)) return false;
    const tg_trace *t = m->trace;
    for (size_t i = 0; i < t->n_osrts && !b.oom; i++) {
        const tg_osrt *o = &t->osrts[i];
        if (o->start >= end) break;              /* sorted by start */
        if (o->pid == pid && o->name >= 0)
            add_row(&b, m, TG_HSRC_OSRT, o->tid, o->name, o->rowid, o->start, o->end, o->callchain);
    }
    size_t n_calls;
    const tg_host_call *calls = tg_model_host_calls(m, &n_calls);
    for (size_t i = 0; i < n_calls && !b.oom; i++) {
        if (calls[i].start >= end) break;
        if (calls[i].pid == pid && calls[i].name >= 0)
            add_row(&b, m, TG_HSRC_CUDA, calls[i].tid, calls[i].name, calls[i].rowid, calls[i].start,
                    calls[i].end, calls[i].callchain);
    }
    for (size_t i = 0; i < t->n_nvtx && !b.oom; i++) {
        const tg_nvtx *r = &t->nvtx[i];
        if (t->sorted_by_start && r->start >= end) break;
        if (r->pid == pid && r->end != TG_NULL_I64 && r->name >= 0)
            add_row(&b, m, TG_HSRC_NVTX, r->tid, r->name, r->rowid, r->start, r->end, -1);
    }
    tg_model_idmap_free(&b.keys);
    if (b.oom) {
        free(b.busy);
        tg_host_window_free(out);
        return false;
    }
    out->launch_busy = union_length(b.busy, b.n_busy);
    free(b.busy);
    out->launch_threads = (int64_t)tg_model_launch_threads(m, pid);
    if (out->n_entries > 1) qsort(out->entries, out->n_entries, sizeof *out->entries, cmp_entry);
    return true;
}

void tg_host_window_free(tg_host_window *w)
{
    free(w->entries);
    w->entries = NULL;
    w->n_entries = 0;
}
