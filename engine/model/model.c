/*
** tg_model_build: derives the rule sources of DESIGN §2 from a loaded trace.
**
** This file runs the passes in order and owns the row-level derivations:
** durations, API names without their version suffix (`cudaMemcpy_v3020` is
** `cudaMemcpy`) and their flags, copy and memory kind names, and the trace
** facts. The join of GPU ops to their launching calls (with queue time and
** the duplicate API rows of old exports) is model_join.c; iterations, NVTX
** attribution and the device/gap sweeps are model_iter.c, model_nvtx.c and
** model_device.c.
**
** Every DERIVED field is written on every build, so building twice on one
** trace (other params) gives the same rows as building once.
*/
#include "model_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per raw API name: what its base name says. */
enum {
    NAME_DRIVER = 1,           /* cu* but not cuda*: driver API */
    NAME_BLOCKING = 2,         /* host-blocking synchronize call */
    NAME_SYNC_MEMOP = 4,       /* cudaMemcpy* / cuMemcpy* / cudaMemset* / cuMemset* without Async */
    NAME_ASYNC = 8,            /* contains "Async" */
    NAME_KNOWN = 16            /* cache slot filled */
};

static const char *const blocking_names[] = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
};

/* ENUM_CUDA_MEMCPY_OPER ids 0..13 and ENUM_CUDA_MEM_KIND ids 0..7. */
static const char *const copy_kind_names[] = {
    "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH",
    "PtoP", "UVM_HtoD", "UVM_DtoH", "UVM_DtoD",
};
static const char *const mem_kind_names[] = {
    "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static", "unknown",
};
#define N_COPY_KINDS (sizeof copy_kind_names / sizeof copy_kind_names[0])
#define N_MEM_KINDS (sizeof mem_kind_names / sizeof mem_kind_names[0])

typedef struct name_cache {
    int32_t n;                 /* strings interned before the build */
    int32_t *base;             /* raw name id -> base name id */
    uint8_t *flags;            /* raw name id -> NAME_* */
    int8_t *nccl;              /* kernel name id -> contains "nccl" (-1 unknown) */
    int32_t copy_kind[N_COPY_KINDS], mem_kind[N_MEM_KINDS];
} name_cache;

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Length of name without its version suffixes: _v<digits>, _ptsz, _ptds
** (possibly stacked: cudaMemcpyAsync_ptsz_v7000). */
static size_t base_name_len(const char *name, size_t len)
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
    uint8_t f = NAME_KNOWN;
    if (starts_with(base, "cu") && !starts_with(base, "cuda")) f |= NAME_DRIVER;
    for (size_t i = 0; i < sizeof blocking_names / sizeof blocking_names[0]; i++)
        if (strcmp(base, blocking_names[i]) == 0) f |= NAME_BLOCKING;
    bool copy_or_set = starts_with(base, "cudaMemcpy") || starts_with(base, "cuMemcpy") ||
                       starts_with(base, "cudaMemset") || starts_with(base, "cuMemset");
    bool async = strstr(base, "Async") != NULL;
    if (copy_or_set && !async) f |= NAME_SYNC_MEMOP;
    if (async) f |= NAME_ASYNC;
    return f;
}

/* Base name id and flags of raw name id; false on OOM. */
static bool resolve_name(tg_strpool *pool, name_cache *c, int32_t id)
{
    if (id < 0 || id >= c->n || c->flags[id]) return true;
    const char *s = tg_strpool_get(pool, id);
    size_t len = base_name_len(s, tg_strpool_len(pool, id));
    int32_t base = tg_strpool_intern(pool, s, len);
    if (base < 0) return false;
    c->base[id] = base;
    c->flags[id] = name_flags(tg_strpool_get(pool, base));
    return true;
}

static bool contains_nccl(const char *s)
{
    for (; s && *s; s++)
        if ((s[0] | 32) == 'n' && (s[1] | 32) == 'c' && (s[2] | 32) == 'c' && (s[3] | 32) == 'l')
            return true;
    return false;
}

static int8_t kernel_is_nccl(const tg_trace *t, name_cache *c, int32_t id)
{
    if (id < 0 || id >= c->n) return 0;
    if (c->nccl[id] < 0) c->nccl[id] = contains_nccl(tg_trace_str(t, id));
    return c->nccl[id];
}

static bool cache_init(name_cache *c, tg_strpool *pool)
{
    memset(c, 0, sizeof *c);
    c->n = tg_strpool_count(pool);
    size_t n = c->n > 0 ? (size_t)c->n : 1;
    c->base = malloc(n * sizeof *c->base);
    c->flags = calloc(n, 1);
    c->nccl = malloc(n);
    if (!c->base || !c->flags || !c->nccl) return false;
    memset(c->nccl, -1, n);
    for (size_t i = 0; i < N_COPY_KINDS; i++)
        if ((c->copy_kind[i] = tg_strpool_intern(pool, copy_kind_names[i], strlen(copy_kind_names[i]))) < 0)
            return false;
    for (size_t i = 0; i < N_MEM_KINDS; i++)
        if ((c->mem_kind[i] = tg_strpool_intern(pool, mem_kind_names[i], strlen(mem_kind_names[i]))) < 0)
            return false;
    return true;
}

static void cache_free(name_cache *c)
{
    free(c->base);
    free(c->flags);
    free(c->nccl);
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

static void reset_memop(tg_memop *r, const name_cache *c, bool is_copy)
{
    r->kind_name = is_copy ? kind_name(c->copy_kind, N_COPY_KINDS, 0, r->copy_kind) : -1;
    r->src_kind_name = kind_name(c->mem_kind, N_MEM_KINDS, N_MEM_KINDS - 1, r->src_kind);
    r->dst_kind_name = is_copy ? kind_name(c->mem_kind, N_MEM_KINDS, N_MEM_KINDS - 1, r->dst_kind) : -1;
    r->api = -1;
    r->api_name = -1;
    r->tid = -1;
    r->api_sync = 0;
    r->api_async = 0;
    r->steady = 1;
    r->iteration = -1;
}

/* Durations, names and null defaults of every DERIVED field. */
static bool derive_rows(tg_trace *t, name_cache *c)
{
    for (size_t i = 0; i < t->n_apis; i++) {
        tg_api *a = &t->apis[i];
        if (!resolve_name(t->strings, c, a->name)) return false;
        bool known = a->name >= 0 && a->name < c->n;
        uint8_t f = known ? c->flags[a->name] : 0;
        a->base_name = known ? c->base[a->name] : a->name;
        a->driver = (f & NAME_DRIVER) != 0;
        a->blocking = (f & NAME_BLOCKING) != 0;
        a->steady = 1;
        a->iteration = -1;
        a->dup_of = -1;
    }
    for (size_t i = 0; i < t->n_kernels; i++) {
        tg_kernel *k = &t->kernels[i];
        k->api = -1;
        k->api_name = -1;
        k->tid = -1;
        k->queue = TG_NULL_I64;
        k->nccl = kernel_is_nccl(t, c, k->name >= 0 ? k->name : k->short_name);
        k->steady = 1;
        k->nvtx = -1;
        k->iteration = -1;
    }
    for (size_t i = 0; i < t->n_memcpys; i++) reset_memop(&t->memcpys[i], c, true);
    for (size_t i = 0; i < t->n_memsets; i++) reset_memop(&t->memsets[i], c, false);
    for (size_t i = 0; i < t->n_nvtx; i++) {
        tg_nvtx *r = &t->nvtx[i];
        r->duration = span_of(r->start, r->end);
        r->depth = 0;
        r->gpu_time = 0;
        r->gpu_span = TG_NULL_I64;
        r->iteration = -1;
    }
    return true;
}

/* ---------------------------------------------------------------- launches */

/* Flags of a copy or memset that depend on its launching call's name. */
static void memop_call_flags(tg_trace *t, const name_cache *c, tg_memop *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tg_memop *r = &rows[i];
        if (r->api < 0) continue;
        int32_t name = t->apis[r->api].name;
        uint8_t f = name >= 0 && name < c->n ? c->flags[name] : 0;
        r->api_sync = (f & NAME_SYNC_MEMOP) != 0;
        r->api_async = (f & NAME_ASYNC) != 0;
    }
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
    for (size_t i = 0; i < t->n_apis; i++) {
        const tg_api *a = &t->apis[i];
        if (a->dup_of >= 0) continue;
        f->api_calls++;
        if (a->blocking) {
            f->blocking_calls++;
            int64_t d = span_of(a->start, a->end);
            if (d != TG_NULL_I64) f->blocked_time = tg_add_sat(f->blocked_time, d);
        }
    }
    for (size_t i = 0; i < t->n_nvtx; i++)
        if (t->nvtx[i].end != TG_NULL_I64) f->nvtx_ranges++;
    f->devices = (int64_t)m->n_devices;
    f->iterations = (int64_t)m->n_iterations;
    for (size_t i = 0; i < m->n_iterations; i++)
        if (!m->iterations[i].warmup) f->steady_iterations++;
    f->steady_duration = m->steady_end > m->steady_start ? m->steady_end - m->steady_start : 0;
}

/* ---------------------------------------------------------------- build */


tg_model *tg_model_build(tg_trace *trace, const tg_model_params *params, tg_diag *diag)
{
    tg_model_params p = {.iteration_pattern = NULL, .gap_min_ns = 500000000};
    if (params) {
        p.iteration_pattern = params->iteration_pattern;
        if (params->gap_min_ns > 0) p.gap_min_ns = params->gap_min_ns;
        p.gap_rows_min_ns = params->gap_rows_min_ns;
    }
    if (!p.iteration_pattern) p.iteration_pattern = TG_DEFAULT_ITERATION_PATTERN;

    tg_model_priv *priv = calloc(1, sizeof *priv);
    if (!priv) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
        return NULL;
    }
    tg_model *m = &priv->pub;
    m->trace = trace;
    name_cache cache;
    bool ok = cache_init(&cache, trace->strings) && derive_rows(trace, &cache);
    ok = ok && tg_model_join_launches(trace);
    if (ok) {
        memop_call_flags(trace, &cache, trace->memcpys, trace->n_memcpys);
        memop_call_flags(trace, &cache, trace->memsets, trace->n_memsets);
    }
    cache_free(&cache);
    if (!ok) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
        tg_model_free(m);
        return NULL;
    }
    if (!tg_model_build_iterations(m, &p, diag)) {   /* reports its own error */
        tg_model_free(m);
        return NULL;
    }
    if (!tg_model_build_nvtx(m) || !tg_model_build_devices(m, &p)) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while building the trace model");
        tg_model_free(m);
        return NULL;
    }
    compute_facts(m);
    return m;
}

void tg_model_free(tg_model *m)
{
    if (!m) return;
    tg_model_free_iterations(m);
    free(m->gaps);
    free(m->devices);
    free(tg_model_priv_of(m));
}
