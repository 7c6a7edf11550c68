/*
** tg_model_build: derives the rule sources (docs/rules.md, "Sources and
** fields"; docs/architecture.md, the model step) from a loaded trace.
**
** This file runs the passes in order and owns the row-level derivations:
** durations, API names without their version suffix (`cudaMemcpy_v3020` is
** `cudaMemcpy`) and their flags, copy and memory kind names, and the trace
** facts. The passes: iterations (model_iter.c), then the launch pass
** (model_join.c), which visits every call once, loaded or streamed, joins
** the GPU ops to their calls and attributes both to iterations and, when a
** rule reads them, NVTX ranges (model_nvtx.c); then the device and gap
** sweep (model_device.c).
**
** The passes read kernels as tg_kspan rows: the trace's own when it loaded
** no tg_kernel rows, else a copy of the few fields they need.
**
** Every DERIVED field is written on every build, so building twice on one
** loaded trace (other params) gives the same rows as building once. A
** trace whose API table was streamed can be built once.
*/
#include "model_int.h"
#include "model_family.h"
#include "../trace/nsys_enums.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const blocking_names[] = {
#define X(name) name,
    TG_BLOCKING_CALLS(X)
#undef X
};

/* ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND: engine/trace/nsys_enums.h. */
#define N_COPY_KINDS TG_COPY_KIND_COUNT
#define N_MEM_KINDS TG_MEM_KIND_COUNT
_Static_assert(TG_MEM_KIND_UNKNOWN == N_MEM_KINDS - 1, "unknown is the last memory kind");

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

size_t tg_model_base_name_len(const char *name, size_t len)
{
    for (;;) {
        if (len > 5 && (memcmp(name + len - 5, "_ptsz", 5) == 0 ||
                        memcmp(name + len - 5, "_ptds", 5) == 0)) {
            len -= 5;
            continue;
        }
        size_t d = len;
        while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') d--;
        if (d < len && d >= 3 && name[d - 1] == 'v' && name[d - 2] == '_') {
            len = d - 2;
            continue;
        }
        return len;
    }
}

static uint8_t name_flags(const char *base)
{
    uint8_t f = TG_NAME_KNOWN;
    if (starts_with(base, "cu") && !starts_with(base, "cuda")) f |= TG_NAME_DRIVER;
    for (size_t i = 0; i < sizeof blocking_names / sizeof blocking_names[0]; i++)
        if (strcmp(base, blocking_names[i]) == 0) f |= TG_NAME_BLOCKING;
#define X(table, prefix) \
    if (starts_with(base, prefix)) f |= TG_NAME_OPS_##table;
    TG_OP_CALL_PREFIXES(X)
#undef X
    bool copy_or_set = (f & (TG_NAME_OPS_MEMCPY | TG_NAME_OPS_MEMSET)) != 0;
    bool async = strstr(base, "Async") != NULL;
    if (copy_or_set && !async) f |= TG_NAME_SYNC_MEMOP;
    if (async) f |= TG_NAME_ASYNC;
    return f;
}

/* Grow the cache to cover every id of the pool (names interned while a
** table streams, base names interned here). */
static bool cache_cover(tg_name_cache *c, int32_t n)
{
    if (n <= c->n) return true;
    size_t want = (size_t)n + (size_t)n / 2 + 16;
    int32_t *base = realloc(c->base, want * sizeof *base);
    if (base) c->base = base;
    uint8_t *flags = realloc(c->flags, want);
    if (flags) c->flags = flags;
    int8_t *nccl = realloc(c->nccl, want);
    if (nccl) c->nccl = nccl;
    int32_t *family = realloc(c->family, want * sizeof *family);
    if (family) c->family = family;
    if (!base || !flags || !nccl || !family) return false;
    memset(c->flags + c->n, 0, want - (size_t)c->n);
    memset(c->nccl + c->n, -1, want - (size_t)c->n);
    for (size_t i = (size_t)c->n; i < want; i++) c->family[i] = -1;
    c->n = (int32_t)want;
    return true;
}

bool tg_model_resolve_name(tg_model *m, int32_t id)
{
    tg_name_cache *c = &tg_model_priv_of(m)->names;
    tg_strpool *pool = m->trace->strings;
    if (id < 0 || id >= tg_strpool_count(pool)) return true;
    if (id >= c->n && !cache_cover(c, tg_strpool_count(pool))) return false;
    if (c->flags[id]) return true;
    const char *s = tg_strpool_get(pool, id);
    size_t len = tg_model_base_name_len(s, tg_strpool_len(pool, id));
    int32_t base = tg_strpool_intern(pool, s, len);
    if (base < 0) return false;
    c->base[id] = base;
    c->flags[id] = name_flags(tg_strpool_get(pool, base));
    return true;
}

uint8_t tg_model_name_flags(const tg_model *m, int32_t id)
{
    const tg_name_cache *c = &tg_model_cpriv_of(m)->names;
    return id >= 0 && id < c->n ? c->flags[id] : 0;
}

bool tg_model_derive_call(tg_model *m, tg_api *a)
{
    if (!tg_model_resolve_name(m, a->name)) return false;
    const tg_name_cache *c = &tg_model_priv_of(m)->names;
    uint8_t f = tg_model_name_flags(m, a->name);
    a->base_name = f ? c->base[a->name] : a->name;
    a->driver = (f & TG_NAME_DRIVER) != 0;
    a->blocking = (f & TG_NAME_BLOCKING) != 0;
    a->steady = 1;
    a->startup = 0;
    a->iteration = -1;
    a->dup_of = -1;
    return true;
}

static bool contains_nccl(const char *s)
{
    for (; s && *s; s++)
        if ((s[0] | 32) == 'n' && (s[1] | 32) == 'c' && (s[2] | 32) == 'c' && (s[3] | 32) == 'l')
            return true;
    return false;
}

int32_t tg_model_kernel_family(const tg_model *m, int32_t id)
{
    const tg_name_cache *c = &tg_model_cpriv_of(m)->names;
    return id >= 0 && id < c->n && c->family ? c->family[id] : id;
}

/* Intern the family of kernel name id into the cache; false on OOM. */
static bool kernel_family(tg_model *m, int32_t id)
{
    tg_name_cache *c = &tg_model_priv_of(m)->names;
    tg_strpool *pool = m->trace->strings;
    if (id < 0 || id >= tg_strpool_count(pool)) return true;
    if (id >= c->n && !cache_cover(c, tg_strpool_count(pool))) return false;
    if (c->family[id] >= 0) return true;
    const char *s = tg_strpool_get(pool, id);
    size_t start, len;
    tg_kernel_family_span(s, tg_strpool_len(pool, id), &start, &len);
    int32_t f = tg_strpool_intern(pool, s + start, len);
    if (f < 0) return false;
    c->family[id] = f;
    return true;
}

/* 1 when kernel name id contains "nccl", 0 when not, -1 on OOM. */
static int8_t kernel_is_nccl(tg_model *m, int32_t id)
{
    tg_name_cache *c = &tg_model_priv_of(m)->names;
    if (id < 0 || id >= tg_strpool_count(m->trace->strings)) return 0;
    if (id >= c->n && !cache_cover(c, tg_strpool_count(m->trace->strings))) return -1;
    if (c->nccl[id] < 0) c->nccl[id] = contains_nccl(tg_trace_str(m->trace, id));
    return c->nccl[id];
}

/* Copy and memory kind names, interned once per build. */
typedef struct kind_names {
    int32_t copy_kind[N_COPY_KINDS], mem_kind[N_MEM_KINDS];
} kind_names;

static bool kinds_init(kind_names *k, tg_strpool *pool)
{
    for (size_t i = 0; i < N_COPY_KINDS; i++)
        if ((k->copy_kind[i] = tg_strpool_intern(pool, tg_copy_kind_names[i], strlen(tg_copy_kind_names[i]))) < 0)
            return false;
    for (size_t i = 0; i < N_MEM_KINDS; i++)
        if ((k->mem_kind[i] = tg_strpool_intern(pool, tg_mem_kind_names[i], strlen(tg_mem_kind_names[i]))) < 0)
            return false;
    return true;
}

static int64_t span_of(int64_t start, int64_t end)
{
    return start == TG_NULL_I64 || end == TG_NULL_I64 ? TG_NULL_I64 : end - start;
}

/* Name id of an enum code; codes this build does not know read "unknown". */
static int32_t kind_name(const int32_t *ids, size_t n, size_t unknown, int32_t code)
{
    if (code < 0) return -1;
    return ids[(size_t)code < n ? (size_t)code : unknown];
}

static void reset_memop(tg_memop *r, const kind_names *k, bool is_copy)
{
    r->kind_name = is_copy ? kind_name(k->copy_kind, N_COPY_KINDS, 0, r->copy_kind) : -1;
    r->src_kind_name = kind_name(k->mem_kind, N_MEM_KINDS, N_MEM_KINDS - 1, r->src_kind);
    r->dst_kind_name = is_copy ? kind_name(k->mem_kind, N_MEM_KINDS, N_MEM_KINDS - 1, r->dst_kind) : -1;
    r->api = -1;
    r->api_name = -1;
    r->tid = -1;
    r->api_sync = 0;
    r->api_async = 0;
    r->steady = 1;
    r->iteration = -1;
    r->launched = 0;
    r->callchain = -1;
}

/* The kernels as the passes read them: the trace's tg_kspan rows, or the
** tg_kspan head of each of its tg_kernel rows. */
static void kernel_spans(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    const tg_trace *t = m->trace;
    p->ks = t->kernels ? (char *)&t->kernels[0].span : (char *)t->kspans;
    p->ks_stride = t->kernels ? sizeof(tg_kernel) : sizeof(tg_kspan);
}

static bool derive_calls(tg_model *m)
{
    for (size_t i = 0; i < m->trace->n_apis; i++)
        if (!tg_model_derive_call(m, &m->trace->apis[i])) return false;
    return true;
}

/* Names and null defaults of every DERIVED field; the NVTX rows' too
** unless `nvtx` is false (a rerun of the launch pass: the iterations have
** numbered them already, and the launch pass does not touch them). */
static bool derive_rows(tg_model *m, bool nvtx)
{
    tg_trace *t = m->trace;
    tg_model_priv *p = tg_model_priv_of(m);
    kind_names kinds;
    if (!kinds_init(&kinds, t->strings) || !derive_calls(m)) return false;
    for (size_t i = 0; i < t->n_kernels; i++) {
        tg_kspan *k = tg_model_ks(p, i);
        k->queue = TG_NULL_I64;
        k->queue_clamped = 0;
        k->launched = 0;
        k->steady = 1;
        if ((k->nccl = kernel_is_nccl(m, k->name)) < 0 || !kernel_family(m, k->name)) return false;
        if (!t->kernels) continue;
        tg_kernel *r = &t->kernels[i];
        r->api = -1;
        r->api_name = -1;
        r->tid = -1;
        r->launch_end = TG_NULL_I64;
        r->nvtx = -1;
        r->iteration = -1;
        r->callchain = -1;
    }
    for (size_t i = 0; i < t->n_memcpys; i++) reset_memop(&t->memcpys[i], &kinds, true);
    for (size_t i = 0; i < t->n_memsets; i++) reset_memop(&t->memsets[i], &kinds, false);
    for (size_t i = 0; nvtx && i < t->n_nvtx; i++) {
        tg_nvtx *r = &t->nvtx[i];
        r->duration = span_of(r->start, r->end);
        r->depth = 0;
        r->gpu_time = 0;
        r->gpu_span = TG_NULL_I64;
        r->iteration = -1;
    }
    return true;
}

/* ---------------------------------------------------------------- facts */

static int32_t intern_or_null(tg_strpool *pool, const char *s)
{
    return s ? tg_strpool_intern(pool, s, strlen(s)) : -1;
}

static void compute_facts(tg_model *m)
{
    tg_trace *t = m->trace;
    tg_trace_facts *f = &m->facts;
    memset(f, 0, sizeof *f);
    f->rowid = -1;
    f->duration = span_of(t->first_ns, t->last_ns);
    if (f->duration == TG_NULL_I64) f->duration = 0;
    f->schema_version = intern_or_null(t->strings, t->schema_version);
    f->nsys_version = intern_or_null(t->strings, t->nsys_version);
    f->kernels = (int64_t)t->n_kernels;
    f->memcpys = (int64_t)t->n_memcpys;
    f->memsets = (int64_t)t->n_memsets;
    const tg_model_priv *p = tg_model_cpriv_of(m);
    f->api_calls = p->api_calls;
    f->blocking_calls = p->blocking_calls;
    f->blocked_time = p->blocked_time;
    memcpy(m->op_calls, p->op_calls, sizeof m->op_calls);
    for (size_t i = 0; i < t->n_nvtx; i++)
        if (t->nvtx[i].end != TG_NULL_I64) f->nvtx_ranges++;
    f->devices = (int64_t)m->n_devices;
    f->iterations = (int64_t)m->n_iterations;
    for (size_t i = 0; i < m->n_iterations; i++)
        if (m->iterations[i].steady) f->steady_iterations++;
    f->steady_duration = m->steady_end > m->steady_start ? m->steady_end - m->steady_start : 0;
}

/* ------------------------------------------------------------- coverage */

const char *const tg_cov_activity_names[TG_COV_COUNT] = {
#define X(id, name, what) name,
    TG_COV_ACTIVITY_LIST(X)
#undef X
};
const char *const tg_cov_activity_what[TG_COV_COUNT] = {
#define X(id, name, what) what,
    TG_COV_ACTIVITY_LIST(X)
#undef X
};

static void window_add(tg_cov_window *w, int64_t start, int64_t end)
{
    if (start == TG_NULL_I64) return;
    if (end == TG_NULL_I64 || end < start) end = start;
    w->records++;
    if (w->first == TG_NULL_I64 || start < w->first) w->first = start;
    if (w->last == TG_NULL_I64 || end > w->last) w->last = end;
}

static void memop_window(tg_cov_window *w, const tg_memop *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) window_add(w, rows[i].start, rows[i].end);
}

/* Did the activity of window w stop early: before a tenth of the span of
** the activity that goes on (NVTX ranges, OS runtime calls), counted from
** the later of the two firsts, with
** TG_COV_STOP_AFTER_NS or more of it after? Its records must exist: an
** activity never recorded did not stop. Half the span would call a
** program whose CUDA work ends after its warm-up, or a rule test's
** capture of 0.1 s, damaged; a profiler that stops recording leaves a few
** calls and seconds of ranges after them. */
static bool stops_early(const tg_cov_window *w, const tg_cov_window *on)
{
    /* the span from when both are recorded: OS runtime calls start with
    ** the process, before its CUDA start-up */
    int64_t from = on->first > w->first ? on->first : w->first;
    if (!w->records || !on->records || on->last <= from) return false;
    return w->last < from + (on->last - from) / 10 && on->last - w->last >= TG_COV_STOP_AFTER_NS;
}

/* The profiler's account (tg_trace.capture), copied: a result outlives
** its trace. */
static void copy_capture(tg_coverage *c, const tg_trace *t)
{
    const tg_capture_info *k = &t->capture;
    c->by_kineto = t->format == TG_FORMAT_KINETO || (t->product_name && strstr(t->product_name, "kineto"));
    snprintf(c->profiler_version, sizeof c->profiler_version, "%s",
             t->format == TG_FORMAT_NSYS && t->nsys_version ? t->nsys_version : "");
    c->profiler_cuda = c->profiler_version[0] ? tg_nsys_cuda(c->profiler_version) : TG_NULL_I64;
    c->cuda_driver = k->cuda_driver;
    c->cuda_runtime = k->cuda_runtime;
    c->cupti = k->cupti;
    snprintf(c->nv_driver, sizeof c->nv_driver, "%s", k->nv_driver ? k->nv_driver : "");
    c->capture_start = k->start_ns;
    c->capture_stop = k->stop_ns;
    c->notes_total = k->n_notes;
    for (size_t i = 0; i < k->n_notes && c->n_notes < TG_COV_NOTES; i++) {
        tg_cov_note *n = &c->notes[c->n_notes++];
        n->severity = k->notes[i].severity;
        n->count = k->notes[i].count;
        n->first_ns = k->notes[i].first_ns;
        snprintf(n->text, sizeof n->text, "%s", k->notes[i].text);
    }
}

/* The iterations the lost data cuts (tg_coverage.cut_*): those that end
** after CUDA activity stopped, else those holding a launch call without
** a GPU record. */
static void cut_iterations(tg_coverage *c, const tg_model *m)
{
    c->cut_first = c->cut_last = TG_NULL_I64;
    c->iterations = (int64_t)m->n_iterations;
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        bool cut = c->stopped_at != TG_NULL_I64 ? it->end > c->stopped_at : it->launches_lost > 0;
        if (!cut) continue;
        if (c->cut_first == TG_NULL_I64 || it->start < c->cut_first) c->cut_first = it->start;
        if (c->cut_last == TG_NULL_I64 || it->start > c->cut_last) c->cut_last = it->start;
        c->cut_count++;
    }
}

/* What the CUDA activity covers (tg_coverage, docs/formats.md): counted
** from the rows loaded and the calls the launch pass saw go by, so a
** streamed API table counts as a loaded one. */
static void compute_coverage(tg_model *m)
{
    const tg_trace *t = m->trace;
    const tg_model_priv *p = tg_model_cpriv_of(m);
    tg_coverage *c = &m->coverage;
    memset(c, 0, sizeof *c);
    for (int a = 0; a < TG_COV_COUNT; a++) c->act[a].first = c->act[a].last = TG_NULL_I64;
    for (size_t i = 0; i < t->n_kernels; i++) {
        const tg_kspan *k = tg_model_ks(p, i);
        window_add(&c->act[TG_COV_KERNEL], k->start, k->end);
    }
    memop_window(&c->act[TG_COV_MEMCPY], t->memcpys, t->n_memcpys);
    memop_window(&c->act[TG_COV_MEMSET], t->memsets, t->n_memsets);
    tg_cov_window *api = &c->act[TG_COV_API];
    api->records = p->api_calls;
    api->first = p->api_first;
    api->last = p->api_last;
    for (size_t i = 0; i < t->n_nvtx; i++) window_add(&c->act[TG_COV_NVTX], t->nvtx[i].start, t->nvtx[i].end);
    tg_cov_window *osrt = &c->act[TG_COV_OSRT];
    osrt->records = t->capture.osrt_records;
    osrt->first = t->capture.osrt_first;
    osrt->last = t->capture.osrt_last;
    static const int tables[] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET};
    for (int k = 0; k < 3; k++) {
        c->act[k].launch_calls = p->launch_calls[tables[k]];
        c->act[k].launches_without_gpu = p->launch_unmatched[tables[k]];
        c->act[k].launches_after_capture = p->launch_pending[tables[k]];
        c->act[k].op_calls = m->op_calls[tables[k]];
        c->launches_after_capture += c->act[k].launches_after_capture;
        c->launch_calls += c->act[k].launch_calls;
        c->launches_without_gpu += c->act[k].launches_without_gpu;
    }
    c->unmatched_first = c->launches_without_gpu ? p->unmatched_first : TG_NULL_I64;
    c->unmatched_last = c->launches_without_gpu ? p->unmatched_last : TG_NULL_I64;
    c->launch_fraction = c->launch_calls ? (double)c->launches_without_gpu / (double)c->launch_calls : NAN;
    c->run_first = c->run_last = TG_NULL_I64;
    for (int a = 0; a < TG_COV_COUNT; a++) {
        const tg_cov_window *w = &c->act[a];
        if (!w->records || w->first == TG_NULL_I64) continue;
        if (c->run_first == TG_NULL_I64 || w->first < c->run_first) c->run_first = w->first;
        if (c->run_last == TG_NULL_I64 || w->last > c->run_last) c->run_last = w->last;
    }
    /* the GPU ops as one activity: the latest of the three */
    tg_cov_window gpu = {.first = TG_NULL_I64, .last = TG_NULL_I64};
    for (int k = TG_COV_KERNEL; k <= TG_COV_MEMSET; k++) {
        const tg_cov_window *w = &c->act[k];
        if (!w->records) continue;
        gpu.records += w->records;
        if (gpu.last == TG_NULL_I64 || w->last > gpu.last) gpu.last = w->last;
        if (gpu.first == TG_NULL_I64 || w->first < gpu.first) gpu.first = w->first;
    }
    c->stopped = -1;
    c->stopped_at = TG_NULL_I64;
    c->uncovered = NAN;
    /* what goes on after CUDA stops: the NVTX ranges, or the OS runtime
    ** calls when they reach later -- these only for a program that
    ** launched GPU work: one that makes a few CUDA calls and then works on
    ** the CPU (public/uvmtorch-*: 2 calls, no launch, 3 s of OS calls
    ** after) did not lose them */
    const tg_cov_window *nvtx = &c->act[TG_COV_NVTX];
    int64_t launches = c->act[TG_COV_KERNEL].op_calls + c->act[TG_COV_MEMCPY].op_calls + c->act[TG_COV_MEMSET].op_calls;
    c->went_on = launches > 0 && osrt->records && (!nvtx->records || osrt->last > nvtx->last) ? TG_COV_OSRT : TG_COV_NVTX;
    const tg_cov_window *on = &c->act[c->went_on];
    bool gpu_stops = stops_early(&gpu, on), api_stops = stops_early(api, on);
    if (gpu_stops || api_stops) {
        /* the one that stopped first */
        bool gpu_first = gpu_stops && (!api_stops || gpu.last <= api->last);
        c->stopped = gpu_first ? TG_COV_KERNEL : TG_COV_API;
        c->stopped_at = gpu_first ? gpu.last : api->last;
        int64_t run = c->run_last - c->run_first;
        c->uncovered = run > 0 ? (double)(c->run_last - c->stopped_at) / (double)run : NAN;
    }
    cut_iterations(c, m);
    copy_capture(c, t);
    c->set = true;
}

/* ------------------------------------------------------ nsys and CUDA */

static const struct { const char *release; int64_t cuda; } nsys_cuda[] = {
#define X(release, cuda) {release, cuda},
    TG_NSYS_CUDA_LIST(X)
#undef X
};

/* "2022.4.2.1" -> 2022 * 100 + 4; -1 when it does not parse */
static int release_key(const char *v)
{
    int year, n;
    if (!v || sscanf(v, "%d.%d", &year, &n) != 2 || year < 2000 || year > 9999 || n < 0 || n > 99) return -1;
    return year * 100 + n;
}

int64_t tg_nsys_cuda(const char *version)
{
    int key = release_key(version);
    size_t n = sizeof nsys_cuda / sizeof *nsys_cuda;
    if (key < release_key(nsys_cuda[0].release) || key > release_key(nsys_cuda[n - 1].release)) return TG_NULL_I64;
    int64_t cuda = TG_NULL_I64;
    for (size_t i = 0; i < n && release_key(nsys_cuda[i].release) <= key; i++) cuda = nsys_cuda[i].cuda;
    return cuda;
}

/* ------------------------------------------------------ saying it */

static double secs(int64_t ns) { return (double)ns / 1e9; }

/* CUDA 13000 -> "13.0" */
static const char *cuda_str(int64_t v, char *buf, size_t size)
{
    snprintf(buf, size, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
    return buf;
}

/* The iterations the loss cuts, as a clause ("; 133 of the 138
** iterations are cut, those starting from 0.301 s to 12.480 s"), or "". */
static void cut_clause(const tg_coverage *c, char *buf, size_t size)
{
    if (size) buf[0] = 0;
    if (!c->cut_count) return;
    snprintf(buf, size, "; %lld of the %lld iterations are cut, those starting from %.3f s to %.3f s",
             (long long)c->cut_count, (long long)c->iterations, secs(c->cut_first - c->run_first),
             secs(c->cut_last - c->run_first));
}

/* What was lost (the first half of tg_coverage_lost's account). */
static bool lost_what(const tg_coverage *c, double tolerance, char *buf, size_t size)
{
    if (size) buf[0] = 0;
    if (!c->set) return false;
    if (!(tolerance >= 0)) tolerance = TG_COV_TOLERANCE;
    int64_t run = c->run_last - c->run_first;
    char cut[160];
    cut_clause(c, cut, sizeof cut);
    if (c->stopped_at != TG_NULL_I64) {
        const char *what = c->stopped == TG_COV_API ? "CUDA API calls" : "GPU activity (kernels, copies, memsets)";
        snprintf(buf, size,
                 "the capture's %s stop %.3f s into it while its %s go on to %.3f s: %.1f%% of the run "
                 "(%.3f s of %.3f s) is left unjudged%s", what, secs(c->stopped_at - c->run_first),
                 tg_cov_activity_what[c->went_on], secs(c->act[c->went_on].last - c->run_first),
                 100.0 * c->uncovered, secs(c->run_last - c->stopped_at), secs(run), cut);
        return true;
    }
    /* a kind without a single record is an op table emptied beside its
    ** calls, which the evaluator says in its own words (ops_lost) */
    int64_t calls = 0, missed = 0;
    for (int k = TG_COV_KERNEL; k <= TG_COV_MEMCPY; k++) {
        if (!c->act[k].records) continue;
        calls += c->act[k].launch_calls;
        missed += c->act[k].launches_without_gpu;
    }
    if (!calls || (double)missed <= tolerance * (double)calls) return false;
    double span = c->unmatched_first != TG_NULL_I64 && run > 0
                ? (double)(c->unmatched_last - c->unmatched_first) / (double)run : 0;
    snprintf(buf, size,
             "%lld of the capture's %lld kernel and copy launch calls (%.1f%%, more than the %.3g%% tolerated) "
             "have no GPU record, from %.3f s to %.3f s into the capture: %.1f%% of the run (%.3f s) is left "
             "unjudged%s", (long long)missed, (long long)calls, 100.0 * (double)missed / (double)calls,
             100.0 * tolerance, secs(c->unmatched_first - c->run_first),
             secs(c->unmatched_last - c->run_first), 100.0 * span, secs(c->unmatched_last - c->unmatched_first), cut);
    return true;
}

/* The profiler's first warning or error that speaks of CUDA events, or
** NULL. */
static const tg_cov_note *cuda_note(const tg_coverage *c)
{
    for (size_t i = 0; i < c->n_notes; i++)
        if (strstr(c->notes[i].text, "CUDA") || strstr(c->notes[i].text, "CUPTI")) return &c->notes[i];
    return NULL;
}

/* Is the profiler older than the driver? Its words into buf. nsys: the
** newest CUDA of its release (TG_NSYS_CUDA_LIST) below the driver's.
** Kineto: CUPTI's major version (130001 = 13.0.1; API levels as 28 are
** not versions) below the driver's. */
static bool older_than_driver(const tg_coverage *c, char *buf, size_t size)
{
    char a[48], b[48];
    if (c->cuda_driver == TG_NULL_I64) return false;
    if (c->profiler_cuda != TG_NULL_I64 && c->profiler_cuda < c->cuda_driver) {
        snprintf(buf, size, "nsys %s supports CUDA up to %s while the driver supports CUDA %s (CudaDriverVersion "
                 "%lld): a profiler older than the driver stops recording CUDA activity; record the run again with "
                 "an nsys release that supports CUDA %s", c->profiler_version, cuda_str(c->profiler_cuda, a, sizeof a),
                 cuda_str(c->cuda_driver, b, sizeof b), (long long)c->cuda_driver, b);
        return true;
    }
    if (c->cupti != TG_NULL_I64 && c->cupti >= 10000 && c->cupti / 10000 < c->cuda_driver / 1000) {
        snprintf(buf, size, "CUPTI %lld.%lld is older than the driver's CUDA %s (cupti_version %lld, "
                 "cuda_driver_version %lld): a profiler older than the driver stops recording CUDA activity; "
                 "record the run again with a PyTorch built for CUDA %s", (long long)(c->cupti / 10000),
                 (long long)(c->cupti / 100 % 100), cuda_str(c->cuda_driver, a, sizeof a), (long long)c->cupti,
                 (long long)c->cuda_driver, a);
        return true;
    }
    return false;
}

/* The options that keep CUDA buffers from being dropped, per format. */
static const char *buffer_advice(const tg_coverage *c)
{
    return c->by_kineto
        ? "records dropped from full activity buffers: give libkineto more buffer with "
          "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB in the file KINETO_CONFIG names, or profile fewer steps"
        : "records dropped from full activity buffers: have nsys save them while the program runs with "
          "'nsys profile --cuda-flush-interval=MS', or capture a shorter range";
}

/* Why, and what records it whole (its second half). */
static void diagnosis(const tg_coverage *c, char *buf, size_t size)
{
    char why[512];
    if (size) buf[0] = 0;
    const tg_cov_note *note = cuda_note(c);
    char said[TG_COV_NOTE_TEXT + 64] = "";
    if (note)
        snprintf(said, sizeof said, " (the profiler said: \"%s\"%s)", note->text,
                 note->count > 1 ? ", more than once" : "");
    if (c->stopped_at != TG_NULL_I64 && older_than_driver(c, why, sizeof why)) {
        snprintf(buf, size, "%s%s", why, said);
        return;
    }
    if (c->stopped_at != TG_NULL_I64) {
        snprintf(buf, size, "CUDA recording stopped while the program ran%s: a profiler that stops recording "
                 "(CUPTI failing on this driver, or a capture range ended early) or %s", said,
                 buffer_advice(c));
        return;
    }
    snprintf(buf, size, "%s%s", buffer_advice(c), said);
}

bool tg_coverage_lost(const tg_coverage *c, double tolerance, char *buf, size_t size)
{
    char what[1024], why[1024];
    if (!lost_what(c, tolerance, what, sizeof what)) {
        if (size) buf[0] = 0;
        return false;
    }
    diagnosis(c, why, sizeof why);
    snprintf(buf, size, "%s; %s", what, why);
    return true;
}

bool tg_coverage_ops_absent(const tg_trace *t, int table, int64_t calls, char *buf, size_t size)
{
    const tg_trace_format_def *fmt = &tg_trace_formats[t->format];
    /* an export writes the CUDA tables when CUDA is traced; a trace whose
    ** events are one list (Kineto) says so only by holding CUDA events,
    ** and its API events may need the CPU activity too, whose advice the
    ** caller gives */
    bool traced = fmt->cite_list
                ? t->n_kernels + t->n_memcpys + t->n_memsets + tg_trace_api_rows(t) > 0 && table != TG_TABLE_RUNTIME
                : t->has_table[TG_TABLE_KERNEL] || t->has_table[TG_TABLE_MEMCPY] || t->has_table[TG_TABLE_MEMSET] ||
                  t->has_table[TG_TABLE_RUNTIME];
    if (size) buf[0] = 0;
    if (!traced && (calls <= 0 || table == TG_TABLE_RUNTIME)) return false;
    const char *label = tg_trace_table_label(t, (tg_table_id)table);
    char lacks[160];
    if (fmt->cite_list) snprintf(lacks, sizeof lacks, "the trace holds no %s %s", fmt->table_noun, label);
    else if (t->has_table[table]) snprintf(lacks, sizeof lacks, "%s %s is empty", fmt->table_noun, label);
    else snprintf(lacks, sizeof lacks, "the capture has no %s %s", fmt->table_noun, label);
    /* CUDA was traced (never "record them with -t cuda"): with calls that
    ** launch them, the ops were recorded and did not reach the export;
    ** without, the program launched none. The API table likewise, with
    ** the GPU ops as its `calls`. */
    if (table == TG_TABLE_RUNTIME && calls > 0)
        snprintf(buf, size, "%s while the capture holds %lld GPU operations (kernels, copies, memsets): CUDA was "
                 "traced, so the CUDA API calls were recorded and then lost, or left out by the exporter", lacks,
                 (long long)calls);
    else if (table == TG_TABLE_RUNTIME)
        snprintf(buf, size, "%s: CUDA was traced, so the program made no CUDA API calls during the capture", lacks);
    else if (calls > 0)
        snprintf(buf, size, "%s while %s %s holds %lld calls that launch them: CUDA was traced, so they were "
                 "recorded and then lost, or left out by the exporter", lacks, fmt->table_noun,
                 tg_trace_table_label(t, TG_TABLE_RUNTIME), (long long)calls);
    else
        snprintf(buf, size, "%s: CUDA was traced, so the program launched none during the capture", lacks);
    return true;
}

/* ---------------------------------------------------------------- build */


static tg_model *build_failed(tg_model *m, tg_diag *diag, bool report)
{
    if (report) tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
    tg_model_free(m);
    return NULL;
}

/* Join and attribute every call; a streamed table that records calls
** twice is read again whole, and the pass rerun on it. */
static int launch_pass(tg_model *m, const tg_model_params *p, tg_diag *diag)
{
    tg_trace *t = m->trace;
    /* a stream that would keep every call is a load */
    if (t->apis_deferred && !p->keep_api) {
        if (!tg_trace_load_apis(t, diag)) return -2;
        if (!derive_calls(m)) return 0;
    }
    if (!t->apis_deferred && !tg_model_mark_duplicates(t)) return 0;
    bool loaded = !t->apis_deferred;
    int rc = tg_model_launch_calls(m, p, diag);
    /* twins counted once by every reader after the pass (model_join.c) */
    if (rc > 0 && loaded && !tg_model_drop_twins(t)) return 0;
    if (rc >= 0) return rc;
    if (!tg_trace_load_apis(t, diag)) return -2;
    tg_model_reset_attribution(m);
    tg_model_nvtx_reset(m);
    tg_model_host_reset(m);
    if (!derive_rows(m, false) || !tg_model_mark_duplicates(t)) return 0;
    rc = tg_model_launch_calls(m, p, diag);
    return rc > 0 && !tg_model_drop_twins(t) ? 0 : rc;
}

tg_model *tg_model_build(tg_trace *trace, const tg_model_params *params, tg_diag *diag)
{
    tg_model_params p = {.iteration_pattern = NULL, .gap_min_ns = TG_GAP_MIN_NS};
    if (params) {
        p = *params;
        if (params->gap_min_ns <= 0) p.gap_min_ns = TG_GAP_MIN_NS;
    }
    if (!p.iteration_pattern) p.iteration_pattern = TG_DEFAULT_ITERATION_PATTERN;

    tg_model_priv *priv = calloc(1, sizeof *priv);
    if (!priv) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
        return NULL;
    }
    tg_model *m = &priv->pub;
    m->trace = trace;
    if (trace->apis_partial) {
        /* the calls a streamed read dropped are gone: a second build
        ** would join and count only the kept ones */
        tg_diag_error(diag, TG_EINTERNAL, "%s: this trace's API table was streamed once already; "
                      "open it again to build another model", trace->path ? trace->path : "trace");
        return build_failed(m, diag, false);
    }
    kernel_spans(m);
    if (!derive_rows(m, true)) return build_failed(m, diag, true);
    if (!tg_model_build_iterations(m, &p, diag)) return build_failed(m, diag, false);
    if (!p.skip_nvtx_gpu && !tg_model_nvtx_begin(m)) return build_failed(m, diag, true);
    if (!tg_model_host_begin(m)) return build_failed(m, diag, true);
    int errors = diag ? diag->n_errors : 0;
    int rc = launch_pass(m, &p, diag);
    if (rc <= 0) return build_failed(m, diag, rc == 0 && !(diag && diag->n_errors > errors));
    if (!tg_model_finish_iterations(m) || (!p.skip_nvtx_gpu && !tg_model_nvtx_end(m)) ||
        !tg_model_host_end(m) || !tg_model_build_devices(m, &p))
        return build_failed(m, diag, true);
    compute_facts(m);
    compute_coverage(m);
    return m;
}

const tg_kspan *tg_model_kernel(const tg_model *m, size_t i)
{
    return tg_model_ks(tg_model_cpriv_of(m), i);
}

void tg_model_free(tg_model *m)
{
    if (!m) return;
    tg_model_priv *p = tg_model_priv_of(m);
    tg_model_free_iterations(m);
    tg_model_nvtx_free(m);
    tg_model_host_free(m);
    free(p->names.base);
    free(p->names.flags);
    free(p->names.nccl);
    free(p->names.family);
    free(m->gaps);
    free(m->devices);
    free(p);
}
