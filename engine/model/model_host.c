/*
** The host side of the model (docs/host.md): what the program's threads
** did while the GPU waited, where in the program its CUDA calls are made,
** and what launching kernels costs.
**
** - During the launch pass (model_join.c) every call is shown here once
**   (tg_model_host_call): the threads that make CUDA calls are remembered
**   (they feed the GPU; the others are helpers), calls of
**   TG_HOST_CUDA_MIN_NS or more are kept as host activity, and a few calls
**   with a stack sample the export's stack ids. Every kernel a call
**   launched is shown too (tg_model_host_launch): the iteration's launch
**   time, kernel time and short kernels (shorter than their launching
**   call), the steady short kernels by name, and the cuDNN / cuBLAS call
**   the launch happened inside (same thread).
** - OS runtime calls get their thread name, iteration and steady flag;
**   library calls too.
** - Stacks (CUDA_CALLCHAINS, OSRT_CALLCHAINS) are indexed by id, and each
**   gets its call site: the first frame outside CUDA and system libraries
**   (modules.def). The nsys 2022.2 export of public/saxpy numbers the
**   runtime table's callchainId one below CUDA_CALLCHAINS.id; the offset
**   is found by matching the sampled calls' names against their stacks.
** - tg_model_host_window answers "what did process P do in [s, e)": OS
**   runtime calls, long CUDA calls and NVTX ranges by name and thread,
**   each with the time it overlaps the window and the rows it cites.
**
** The host tables may be read after the model is built (tg_model_host_load,
** when a failing finding wants its cause): the derivations then run on them
** alone. Library calls are attributed their kernels only when loaded before
** the build.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

const char *const tg_host_source_names[TG_HSRC_COUNT] = {
#define X(id, name, what) name,
    TG_HOST_SOURCE_LIST(X)
#undef X
};

/* A call (or OS runtime call) whose stack is recorded: its name against
** the stack's frames tells the id offset. */
typedef struct stack_sample {
    int32_t name, base, chain;
} stack_sample;

#define SAMPLES 64

typedef struct stack_index {
    int32_t *ids;              /* chain ids in the frame array, ascending */
    uint32_t *first;           /* first frame of each */
    uint32_t *count;
    int32_t *site, *site_module;   /* string ids, -1 */
    size_t n;
    int32_t offset;
    bool ready;
    stack_sample samples[SAMPLES];
    size_t n_samples;
} stack_index;

struct tg_host_ctx {
    tg_idmap threads;    /* (pid, tid) of threads that made CUDA calls */
    tg_host_call *calls;
    size_t n_calls, cap_calls;
    int64_t last_launch;       /* rowid of the call last counted as a launch */
    int64_t last_thread;       /* (pid, tid) key last entered in threads: calls come in runs */
    tg_idmap short_ids;  /* kernel name -> index into shorts */
    tg_short_kernel *shorts;
    size_t n_shorts, cap_shorts, last_short;
    uint32_t *lib_order[TG_LIB_COUNT];  /* library calls by (pid, tid, start) */
    stack_index stacks[TG_STACKS_COUNT];
    tg_idmap modules;             /* module id -> index into the two below */
    int8_t *module_class;               /* 1: looked past (modules.def), 2: the program's */
    int32_t *module_file;               /* the module's file name (string id) */
    size_t n_modules, cap_modules, cap_files;
    bool oom;
};

static tg_host_ctx *host_of(const tg_model *m)
{
    return tg_model_cpriv_of(m)->host;
}

/* ---------------------------------------------------------------- libraries */

static int cmp_lib(const void *a, const void *b, void *ctx)
{
    const tg_libcall *rows = ctx;
    const tg_libcall *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
    if (x->pid != y->pid) return (x->pid > y->pid) - (x->pid < y->pid);
    if (x->tid != y->tid) return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->start > y->start) - (x->start < y->start);
}

static bool lib_index(tg_model *m, tg_host_ctx *h)
{
    tg_trace *t = m->trace;
    for (int lib = 0; lib < TG_LIB_COUNT; lib++) {
        size_t n = t->n_libcalls[lib];
        free(h->lib_order[lib]);
        h->lib_order[lib] = NULL;
        if (!n || n > UINT32_MAX) continue;
        uint32_t *order = malloc(n * sizeof *order);
        if (!order) return false;
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        qsort_r(order, n, sizeof *order, cmp_lib, t->libcalls[lib]);
        h->lib_order[lib] = order;
    }
    return true;
}

/* The library call of thread (pid, tid) that contains [s, e), or NULL. */
static tg_libcall *lib_containing(const tg_model *m, int lib, int32_t pid, int32_t tid, int64_t s, int64_t e)
{
    const tg_host_ctx *h = host_of(m);
    const uint32_t *order = h->lib_order[lib];
    tg_libcall *rows = m->trace->libcalls[lib];
    if (!order) return NULL;
    size_t lo = 0, hi = m->trace->n_libcalls[lib];
    while (lo < hi) {          /* first row after (pid, tid, s) */
        size_t mid = lo + (hi - lo) / 2;
        const tg_libcall *c = &rows[order[mid]];
        bool before = c->pid < pid || (c->pid == pid && (c->tid < tid || (c->tid == tid && c->start <= s)));
        if (before) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    tg_libcall *c = &rows[order[lo - 1]];
    return c->pid == pid && c->tid == tid && c->start <= s && e <= c->end ? c : NULL;
}

/* ---------------------------------------------------------------- rows */

static void derive_osrt(tg_model *m)
{
    tg_trace *t = m->trace;
    tg_iter_finder f;
    bool finder = tg_model_finder_init(&f, m);
    for (size_t i = 0; i < t->n_osrts; i++) {
        tg_osrt *o = &t->osrts[i];
        o->thread = tg_trace_thread_name(t, o->pid, o->tid);
        int64_t it = finder ? tg_model_finder_find(&f, o->pid, o->start) : -1;
        tg_model_mark_row(m, it, &o->iteration, &o->steady);
    }
    if (finder) tg_model_finder_free(&f);
}

static void derive_libcalls(tg_model *m, bool reset_kernels)
{
    tg_trace *t = m->trace;
    tg_iter_finder f;
    bool finder = tg_model_finder_init(&f, m);
    for (int lib = 0; lib < TG_LIB_COUNT; lib++)
        for (size_t i = 0; i < t->n_libcalls[lib]; i++) {
            tg_libcall *c = &t->libcalls[lib][i];
            c->thread = tg_trace_thread_name(t, c->pid, c->tid);
            int64_t it = finder ? tg_model_finder_find(&f, c->pid, c->start) : -1;
            tg_model_mark_row(m, it, &c->iteration, &c->steady);
            if (reset_kernels) {
                c->kernels = 0;
                c->kernel_time = 0;
            }
        }
    if (finder) tg_model_finder_free(&f);
}

/* ---------------------------------------------------------------- stacks */

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A module's slot: whether call sites look past it (modules.def) and its
** file name; -1 on OOM. */
static long module_slot(tg_model *m, tg_host_ctx *h, int32_t module)
{
    int32_t slot = tg_idmap_intern(&h->modules, module);
    if (slot < 0) return -1;
    if ((size_t)slot < h->n_modules) return slot;
    const char *path = module >= 0 ? tg_strpool_get(m->trace->strings, module) : NULL;
    const char *name = path ? file_name(path) : "[Unknown]";
    int8_t cls = 2;
#define TG_MODULE(prefix, kind) if (has_prefix(name, prefix)) cls = 1;
#include "modules.def"
#undef TG_MODULE
    int32_t file = path ? tg_strpool_intern(m->trace->strings, name, strlen(name)) : -1;
    if ((path && file < 0) ||
        !tg_grow((void **)&h->module_class, &h->cap_modules, h->n_modules + 1, sizeof *h->module_class) ||
        !tg_grow((void **)&h->module_file, &h->cap_files, h->n_modules + 1, sizeof *h->module_file))
        return -1;
    h->module_class[h->n_modules] = cls;
    h->module_file[h->n_modules++] = file;
    return slot;
}

/* A CUDA API wrapper compiled into the program (cuda_runtime.h's
** `cudaError cudaMalloc<double>(double**, unsigned long)`), a kernel's
** host stub: not where the program calls CUDA. */
static bool cuda_wrapper(const char *symbol)
{
    const char *paren = strchr(symbol, '(');
    size_t len = paren ? (size_t)(paren - symbol) : strlen(symbol);
    size_t start = 0;
    for (size_t i = 0, depth = 0; i < len; i++) {   /* the last word outside <...> */
        if (symbol[i] == '<') depth++;
        else if (symbol[i] == '>' && depth) depth--;
        else if (symbol[i] == ' ' && !depth) start = i + 1;
    }
    const char *fn = symbol + start;
    return has_prefix(fn, "cuda") || has_prefix(fn, "__cuda") || has_prefix(fn, "__device_stub") ||
           (fn[0] == 'c' && fn[1] == 'u' && fn[2] >= 'A' && fn[2] <= 'Z');
}

static void stack_free(stack_index *s)
{
    free(s->ids);
    free(s->first);
    free(s->count);
    free(s->site);
    free(s->site_module);
    s->ids = s->site = s->site_module = NULL;
    s->first = s->count = NULL;
    s->n = 0;
    s->ready = false;
}

/* Index of chain id (offset applied by the caller), or -1. */
static long stack_find(const stack_index *s, int32_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ids[mid] == id) return (long)mid;
        if (s->ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* Samples whose own name is a frame of their stack under this offset. */
static size_t sample_matches(const stack_index *s, const tg_frame *frames, int32_t offset)
{
    size_t matches = 0;
    for (size_t i = 0; i < s->n_samples; i++) {
        const stack_sample *x = &s->samples[i];
        long k = stack_find(s, x->chain + offset);
        for (uint32_t j = 0; k >= 0 && j < s->count[k]; j++) {
            int32_t sym = frames[s->first[k] + j].symbol;
            if (sym >= 0 && (sym == x->name || sym == x->base)) {
                matches++;
                break;
            }
        }
    }
    return matches;
}

static bool stack_build(tg_model *m, tg_host_ctx *h, int which)
{
    stack_index *s = &h->stacks[which];
    const tg_frame *f = m->trace->frames[which];
    size_t n = m->trace->n_frames[which];
    stack_free(s);
    s->ready = true;
    size_t chains = 0;
    for (size_t i = 0; i < n; i++) chains += i == 0 || f[i].chain != f[i - 1].chain;
    if (!chains) return true;
    if (n > UINT32_MAX) return false;
    s->ids = malloc(chains * sizeof *s->ids);
    s->first = malloc(chains * sizeof *s->first);
    s->count = calloc(chains, sizeof *s->count);
    s->site = malloc(chains * sizeof *s->site);
    s->site_module = malloc(chains * sizeof *s->site_module);
    if (!s->ids || !s->first || !s->count || !s->site || !s->site_module) return false;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || f[i].chain != f[i - 1].chain) {
            s->ids[s->n] = f[i].chain;
            s->first[s->n] = (uint32_t)i;
            s->n++;
        }
        s->count[s->n - 1]++;
    }
    for (size_t k = 0; k < s->n; k++) {
        s->site[k] = s->site_module[k] = -1;
        for (uint32_t j = 0; j < s->count[k]; j++) {
            const tg_frame *fr = &f[s->first[k] + j];
            const char *sym = fr->symbol >= 0 ? tg_strpool_get(m->trace->strings, fr->symbol) : NULL;
            if (fr->unresolved || !sym || !*sym || cuda_wrapper(sym)) continue;
            long mod = module_slot(m, h, fr->module);
            if (mod < 0) return false;
            if (h->module_class[mod] == 1) continue;
            s->site[k] = fr->symbol;
            s->site_module[k] = h->module_file[mod];
            break;
        }
    }
    size_t same = sample_matches(s, f, 0), plus = sample_matches(s, f, 1);
    s->offset = plus > same ? 1 : 0;
    return true;
}

static void sample_stack(tg_host_ctx *h, int which, int32_t name, int32_t base, int32_t chain)
{
    stack_index *s = &h->stacks[which];
    if (chain < 0 || s->n_samples >= SAMPLES) return;
    s->samples[s->n_samples++] = (stack_sample){name, base, chain};
}

int32_t tg_model_call_site(const tg_model *m, int stacks, int32_t chain, bool module)
{
    const tg_host_ctx *h = host_of(m);
    if (!h || chain < 0 || stacks < 0 || stacks >= TG_STACKS_COUNT || !h->stacks[stacks].ready) return -1;
    const stack_index *s = &h->stacks[stacks];
    long k = stack_find(s, chain + s->offset);
    if (k < 0) return -1;
    return module ? s->site_module[k] : s->site[k];
}

const tg_frame *tg_model_stack(const tg_model *m, int stacks, int32_t chain, size_t *n)
{
    const tg_host_ctx *h = host_of(m);
    *n = 0;
    if (!h || chain < 0 || stacks < 0 || stacks >= TG_STACKS_COUNT || !h->stacks[stacks].ready) return NULL;
    const stack_index *s = &h->stacks[stacks];
    long k = stack_find(s, chain + s->offset);
    if (k < 0) return NULL;
    *n = s->count[k];
    return m->trace->frames[stacks] + s->first[k];
}

int32_t tg_model_stack_offset(const tg_model *m, int stacks)
{
    const tg_host_ctx *h = host_of(m);
    return h && stacks >= 0 && stacks < TG_STACKS_COUNT ? h->stacks[stacks].offset : 0;
}

/* ---------------------------------------------------------------- passes */

static void reset_counts(tg_model *m, tg_host_ctx *h)
{
    tg_idmap_free(&h->threads);
    tg_idmap_free(&h->short_ids);
    h->n_calls = h->n_shorts = 0;
    h->last_launch = TG_NULL_I64;
    h->last_thread = INT64_MIN;
    h->stacks[TG_STACKS_CUDA].n_samples = 0;
    if (!(*(&h->threads) = (tg_idmap){0}, true) || !(*(&h->short_ids) = (tg_idmap){0}, true)) h->oom = true;
    for (size_t i = 0; i < m->n_iterations; i++) {
        tg_iteration *it = &m->iterations[i];
        it->launches = it->short_kernels = it->graph_launches = it->graph_kernels = 0;
        it->launch_time = it->kernel_time = 0;
    }
    derive_libcalls(m, true);
}

bool tg_model_host_begin(tg_model *m)
{
    tg_model_priv *p = tg_model_priv_of(m);
    tg_host_ctx *h = calloc(1, sizeof *h);
    if (!h) return false;
    p->host = h;
    if (!(*(&h->modules) = (tg_idmap){0}, true) || !lib_index(m, h))
        return false;
    reset_counts(m, h);
    return !h->oom;
}

void tg_model_host_reset(tg_model *m)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    if (h) reset_counts(m, h);
}

void tg_model_host_call(tg_model *m, const tg_api *a)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    if (!h) return;
    int64_t key = tg_key2(a->pid, a->tid);
    if (key != h->last_thread && tg_idmap_intern(&h->threads, key) < 0) h->oom = true;
    h->last_thread = key;
    sample_stack(h, TG_STACKS_CUDA, a->name, a->base_name, a->callchain);
    if (a->dup_of >= 0 || a->start == TG_NULL_I64 || a->end == TG_NULL_I64 ||
        a->end - a->start < TG_HOST_CUDA_MIN_NS)
        return;
    /* by base name: a cause spells an API name as evidence does */
    tg_host_call c = {a->rowid, a->start, a->end, a->pid, a->tid, a->base_name, a->callchain};
    if (!TG_PUSH(h->calls, h->n_calls, h->cap_calls, c)) h->oom = true;
}

static void count_short(tg_host_ctx *h, const tg_kspan *k, int64_t kd, int64_t cd)
{
    /* a name repeats in runs: the last one's slot first */
    int32_t slot = h->n_shorts && h->shorts[h->last_short].name == k->name ? (int32_t)h->last_short
                                                                           : tg_idmap_intern(&h->short_ids, k->name);
    if (slot < 0) {
        h->oom = true;
        return;
    }
    if ((size_t)slot == h->n_shorts) {
        tg_short_kernel s = {.name = k->name};
        if (!TG_PUSH(h->shorts, h->n_shorts, h->cap_shorts, s)) {
            h->oom = true;
            return;
        }
    }
    h->last_short = (size_t)slot;
    tg_short_kernel *s = &h->shorts[slot];
    s->count++;
    s->kernel_time = tg_add_sat(s->kernel_time, kd);
    s->launch_time = tg_add_sat(s->launch_time, cd);
}

/* Kernel k of the call a, which launched g->kernels kernels running
** g->kernel_time together. A call is short when its kernels together ran
** shorter than it, and then each of them is a short kernel: for a graph
** launch (several kernels on one call) that compares the launch with the
** graph, not each node with the whole launch (docs/rules.md, "CUDA
** graphs"); for any other call it is the kernel against its call. */
void tg_model_host_launch(tg_model *m, const tg_api *a, int64_t it, const tg_kspan *k, const tg_launch_group *g)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    if (!h || a->start == TG_NULL_I64 || a->end == TG_NULL_I64) return;
    int64_t kd = k->end - k->start, cd = a->end - a->start;
    bool first = h->last_launch != a->rowid;     /* a graph launch shows each of its kernels */
    bool is_short = g->kernel_time < cd, graph = g->kernels > 1;
    h->last_launch = a->rowid;
    if (it >= 0) {
        tg_iteration *r = &m->iterations[it];
        if (first) {
            r->launches++;
            r->launch_time = tg_add_sat(r->launch_time, cd);
            if (graph) r->graph_launches++;
        }
        r->kernel_time = tg_add_sat(r->kernel_time, kd);
        if (is_short) r->short_kernels++;
        if (graph) r->graph_kernels++;
    }
    if (is_short && k->steady) count_short(h, k, kd, cd);
    for (int lib = 0; lib < TG_LIB_COUNT; lib++) {
        tg_libcall *c = lib_containing(m, lib, a->pid, a->tid, a->start, a->end);
        if (!c) continue;
        c->kernels++;
        c->kernel_time = tg_add_sat(c->kernel_time, kd);
    }
}

static int cmp_call(const void *a, const void *b)
{
    const tg_host_call *x = a, *y = b;
    if (x->start != y->start) return (x->start > y->start) - (x->start < y->start);
    return (x->rowid > y->rowid) - (x->rowid < y->rowid);
}

static int cmp_short(const void *a, const void *b)
{
    const tg_short_kernel *x = a, *y = b;
    if (x->count != y->count) return (x->count < y->count) - (x->count > y->count);
    return (x->kernel_time < y->kernel_time) - (x->kernel_time > y->kernel_time);
}

/* The host tables loaded so far, derived. */
static bool derive_loaded(tg_model *m, tg_host_ctx *h)
{
    const tg_trace *t = m->trace;
    derive_osrt(m);
    for (size_t i = 0; i < t->n_osrts && h->stacks[TG_STACKS_OSRT].n_samples < SAMPLES; i++)
        sample_stack(h, TG_STACKS_OSRT, t->osrts[i].name, t->osrts[i].name, t->osrts[i].callchain);
    for (int w = 0; w < TG_STACKS_COUNT; w++)
        if ((t->host_loaded & TG_HOST_STACKS) && !h->stacks[w].ready && !stack_build(m, h, w)) return false;
    return !h->oom;
}

bool tg_model_host_end(tg_model *m)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    if (!h || h->oom) return false;
    if (h->n_calls > 1) qsort(h->calls, h->n_calls, sizeof *h->calls, cmp_call);
    if (h->n_shorts > 1) qsort(h->shorts, h->n_shorts, sizeof *h->shorts, cmp_short);
    /* the idmap's slots point into shorts by position: no lookups after this */
    tg_idmap_free(&h->short_ids);
    derive_libcalls(m, false);
    return derive_loaded(m, h);
}

bool tg_model_host_load(tg_model *m, unsigned what, tg_diag *diag)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    /* library calls get their kernels in the launch pass: only at open */
    what &= TG_HOST_OSRT | TG_HOST_STACKS;
    unsigned before = m->trace->host_loaded;
    if (!h || !tg_trace_load_host(m->trace, what, diag)) return false;
    if (m->trace->host_loaded == before) return true;
    if (!derive_loaded(m, h)) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while reading the host side of the trace");
        return false;
    }
    return true;
}

void tg_model_host_free(tg_model *m)
{
    tg_host_ctx *h = tg_model_priv_of(m)->host;
    if (!h) return;
    tg_idmap_free(&h->threads);
    tg_idmap_free(&h->short_ids);
    tg_idmap_free(&h->modules);
    free(h->module_class);
    free(h->module_file);
    free(h->calls);
    free(h->shorts);
    for (int lib = 0; lib < TG_LIB_COUNT; lib++) free(h->lib_order[lib]);
    for (int w = 0; w < TG_STACKS_COUNT; w++) stack_free(&h->stacks[w]);
    free(h);
    tg_model_priv_of(m)->host = NULL;
}

size_t tg_model_launch_threads(const tg_model *m, int32_t pid)
{
    const tg_host_ctx *h = host_of(m);
    size_t n = 0;
    size_t pos = 0;
    int64_t key;
    int32_t id;
    while (h && tg_idmap_next(&h->threads, &pos, &key, &id)) n += (int32_t)((uint64_t)key >> 32) == pid;
    return n;
}

bool tg_model_launch_thread(const tg_model *m, int32_t pid, int32_t tid)
{
    const tg_host_ctx *h = host_of(m);
    return h && tg_idmap_get(&h->threads, tg_key2(pid, tid)) >= 0;
}

const tg_host_call *tg_model_host_calls(const tg_model *m, size_t *n)
{
    const tg_host_ctx *h = host_of(m);
    *n = h ? h->n_calls : 0;
    return h ? h->calls : NULL;
}

const tg_short_kernel *tg_model_short_kernels(const tg_model *m, size_t *n)
{
    const tg_host_ctx *h = host_of(m);
    *n = h ? h->n_shorts : 0;
    return h ? h->shorts : NULL;
}

int32_t tg_model_device_pid(const tg_model *m, int32_t device)
{
    const tg_trace *t = m->trace;
    int32_t pid = -1;
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < t->n_kernels; i++) {
        const tg_kspan *k = tg_model_kernel(m, i);
        if (k->device == device && k->start < first) {
            first = k->start;
            pid = k->pid;
            if (t->sorted_by_start) break;
        }
    }
    const tg_memop *sets[2] = {t->memcpys, t->memsets};
    size_t ns[2] = {t->n_memcpys, t->n_memsets};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < ns[s]; i++)
            if (sets[s][i].device == device && sets[s][i].start < first) {
                first = sets[s][i].start;
                pid = sets[s][i].pid;
            }
    return pid;
}
