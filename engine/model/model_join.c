/*
** The launch pass: every API call, visited once, is matched to the kernels,
** copies and memsets it launched (same process, same correlation id:
** docs/architecture.md, "The nsys export"), attributed to its iteration and
** counted; the ops it launched get their queue time, launching call name,
** thread and iteration. The calls come from the loaded API table, or stream
** by from the deferred one (tg_trace_stream_apis): then only the calls
** params->keep_api wants stay as rows, and ten million kernels' launches cost
** no row at all.
**
** The ops are indexed by (process, correlation id) in one open-addressing
** table whose slots carry a fingerprint of the key, so a probe reads an
** op's row only on a likely match; one slot per key, and the ops of a key
** shared by several (a graph launch) in a group behind it, joined once.
** Never a nested scan, and duplicate keys cost O(1) each, in the ops, in
** the calls and in their twin chains.
**
** Duplicates: old exports record a runtime call twice under one correlation
** id, an outer `cudaMemcpy` row and, nested inside it, `cudaMemcpy_v3020`.
** The rule that picks the real row, here once (tg_model_twin_inner; its SQL
** form is tg_sql_put_api_calls, model_sql.c): rows of one process, one
** correlation id (not 0) and one base name are one call, and the row that
** starts last (at one start, the larger rowid) is the call itself; NVIDIA's
** tools and the reference metrics time queue and blocking from it. The
** outer rows get dup_of = the inner row while the pass runs, and are then
** dropped from the table (tg_model_drop_twins), so that every source,
** aggregate and evidence row counts the call once. Marking them needs
** the whole table (tg_model_mark_duplicates, over an index of the calls
** below), so a streamed table that turns out to hold twins (the trace layer
** sees them side by side, a call finds its op taken, or a kept or blocking
** call's id comes back) is loaded whole and the pass rerun: old exports are
** small. The one pair a stream cannot see: twins far apart that launch
** nothing, block nothing and are not kept; they count twice in
** trace.api_calls and nowhere else.
**
** The call index: CUPTI hands out correlation ids per process from a
** counter, so in start order a process's calls carry increasing ids, but
** for a few calls that threads interleave. Such a process gets no index:
** its in-order calls are listed (the list is sorted by id) and searched
** from where the previous lookup ended; the few calls out of order go to a
** small hash table. A process whose ids are not mostly in order (old
** exports record every call twice) is indexed whole: a direct-addressed
** array (slot = id - smallest id) when its ids are dense, else the hash
** table, whose loops prefetch the slots they will need a few dozen rows
** ahead.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Calls out of order allowed in a listed process: one in this many. */
#define LISTED_MAX_DISORDER 8

typedef struct pid_ids {
    int32_t pid;
    int64_t min, max;
    int64_t top;               /* largest id met so far (counting, then listing) */
    size_t count;              /* calls with a usable id */
    size_t in_order;           /* ... of which each beyond every earlier one */
    size_t base;               /* first slot in the direct array or the list */
    size_t n_listed;
    size_t cursor;             /* listed: where the previous lookup ended */
    bool listed, direct;       /* neither: hashed */
} pid_ids;

typedef struct launch_index {
    tg_idmap pids;
    pid_ids *ranges;
    size_t n_ranges;
    uint32_t *list;            /* calls of the listed processes, by process, by id */
    uint32_t *direct;          /* call index + 1, 0 = empty */
    uint64_t *hash;            /* call index + 1 in the low 32 bits, fingerprint above */
    size_t hash_mask;
    uint64_t seed;             /* of hash_of */
    int32_t last_pid, last_dense;
    bool duplicates;           /* mark_duplicate ran */
} launch_index;

/* Where the call of one (pid, correlation id) is, or goes. */
typedef struct slot {
    uint32_t *listed;          /* one of these three; holds the call index */
    uint32_t *direct;
    uint64_t *hashed;
    uint32_t fp;               /* fingerprint (hashed) */
} slot;

#define PREFETCH 64

static uint32_t call_of(uint64_t slot) { return (uint32_t)slot; }

/* Call index + 1 in the slot, 0 when empty. */
static uint32_t slot_call(const slot *s)
{
    if (s->listed) return *s->listed + 1;
    return s->direct ? *s->direct : call_of(*s->hashed);
}

static void slot_set(const slot *s, size_t index)
{
    if (s->listed) *s->listed = (uint32_t)index;
    else if (s->direct) *s->direct = (uint32_t)(index + 1);
    else *s->hashed = (uint64_t)s->fp << 32 | (uint32_t)(index + 1);
}

static bool joinable(int64_t corr) { return corr != TG_NULL_I64 && corr != 0; }

static int32_t dense_pid(launch_index *li, int32_t pid)
{
    if (li->last_dense >= 0 && li->last_pid == pid) return li->last_dense;
    int32_t d = tg_idmap_get(&li->pids, pid);
    li->last_pid = pid;
    li->last_dense = d;
    return d;
}

/* The slot hash of (pid, corr) under a table's seed (tg_hash_seed):
** without one, ids crafted to share a slot made the join quadratic again
** (100,000 distinct ids in one slot: 5.6 s). */
static size_t hash_of(uint64_t seed, int32_t pid, int64_t corr)
{
    uint64_t x = ((uint64_t)corr ^ seed) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4fULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    return (size_t)(x ^ (x >> 32));
}
/* The hash slot of (pid, corr): holding that call, or the empty one it
** would take. */
static slot hash_slot(const launch_index *li, const tg_api *apis, int32_t pid, int64_t corr)
{
    size_t h = hash_of(li->seed, pid, corr), i = h & li->hash_mask;
    uint32_t fp = (uint32_t)(h >> 32);
    for (uint64_t s; (s = li->hash[i]) != 0; i = (i + 1) & li->hash_mask) {
        if ((uint32_t)(s >> 32) != fp) continue;
        const tg_api *a = &apis[call_of(s) - 1];
        if (a->pid == pid && a->correlation == corr) break;
    }
    return (slot){.hashed = &li->hash[i], .fp = fp};
}

/* In the n listed calls from `calls`, the first with id >= corr: a
** galloping search from *cursor, which it leaves there. */
static size_t search_list(const uint32_t *calls, size_t n, size_t *cursor, const tg_api *apis, int64_t corr)
{
#define ID(j) (apis[calls[(j)]].correlation)
    size_t at = *cursor < n ? *cursor : n - 1;
    size_t lo, hi, step = 1;               /* the answer lies in [lo, hi] */
    if (ID(at) < corr) {
        lo = at + 1;
        while (at + step < n && ID(at + step) < corr) {
            lo = at + step + 1;
            step *= 2;
        }
        hi = at + step < n ? at + step : n;
    } else {
        hi = at;
        while (step <= at && ID(at - step) >= corr) {
            hi = at - step;
            step *= 2;
        }
        lo = step <= at ? at - step + 1 : 0;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ID(mid) < corr) lo = mid + 1; else hi = mid;
    }
    *cursor = lo;
    return lo;
#undef ID
}

/* The call of (pid, corr): its slot, false when there is none to read or
** fill (no such process, id out of its range). For a listed process a
** missing id gets the hash slot it would take as a call out of order. */
static bool slot_of(launch_index *li, const tg_api *apis, int32_t pid, int64_t corr, slot *out)
{
    int32_t d = dense_pid(li, pid);
    if (d < 0) return false;
    pid_ids *r = &li->ranges[d];
    if (r->listed) {
        uint32_t *calls = li->list + r->base;
        size_t pos = r->n_listed ? search_list(calls, r->n_listed, &r->cursor, apis, corr) : 0;
        if (pos < r->n_listed && apis[calls[pos]].correlation == corr) {
            *out = (slot){.listed = &calls[pos]};
            return true;
        }
        if (r->in_order == r->count) return false;   /* no call out of order: not hashed */
    } else if (r->direct) {
        if (corr < r->min || corr > r->max) return false;
        *out = (slot){.direct = &li->direct[r->base + (size_t)(corr - r->min)]};
        return true;
    }
    *out = hash_slot(li, apis, pid, corr);
    return true;
}

static void prefetch(launch_index *li, int32_t pid, int64_t corr)
{
    int32_t d = dense_pid(li, pid);
    if (d < 0) return;
    const pid_ids *r = &li->ranges[d];
    if (!r->listed && !r->direct) __builtin_prefetch(&li->hash[hash_of(li->seed, pid, corr) & li->hash_mask]);
}

/* Per process: its ids' range, count and order, then the storage. */
static bool index_init(launch_index *li, const tg_trace *t)
{
    size_t cap = 0;
    li->last_dense = -1;
    if (!(*(&li->pids) = (tg_idmap){0}, true)) return false;
    for (size_t i = 0; i < t->n_apis; i++) {
        const tg_api *a = &t->apis[i];
        if (!joinable(a->correlation)) continue;
        int32_t d = dense_pid(li, a->pid);
        if (d < 0) {
            d = tg_idmap_intern(&li->pids, a->pid);
            li->last_dense = -1;
            pid_ids r = {.pid = a->pid, .min = a->correlation, .max = a->correlation, .top = INT64_MIN};
            if (d < 0 || !TG_PUSH(li->ranges, li->n_ranges, cap, r)) return false;
        }
        pid_ids *r = &li->ranges[d];
        if (a->correlation < r->min) r->min = a->correlation;
        if (a->correlation > r->max) r->max = a->correlation;
        if (a->correlation > r->top) {
            r->top = a->correlation;
            r->in_order++;
        }
        r->count++;
    }
    size_t listed = 0, direct = 0, hashed = 0;
    for (size_t d = 0; d < li->n_ranges; d++) {
        pid_ids *r = &li->ranges[d];
        uint64_t range = (uint64_t)(r->max - r->min) + 1;
        r->listed = (r->count - r->in_order) * LISTED_MAX_DISORDER <= r->count;
        r->direct = !r->listed && range <= 4 * (uint64_t)r->count + 1024;
        r->top = INT64_MIN;                /* the build lists the same calls again */
        if (r->listed) {
            r->base = listed;
            listed += r->in_order;
            hashed += r->count - r->in_order;
        } else if (r->direct) {
            r->base = direct;
            direct += (size_t)range;
        } else {
            hashed += r->count;
        }
    }
    li->list = malloc((listed ? listed : 1) * sizeof *li->list);
    li->direct = calloc(direct ? direct : 1, sizeof *li->direct);
    size_t hcap = 16;
    while (hcap < hashed + hashed / 2) hcap *= 2;     /* load <= 2/3 */
    li->hash = calloc(hcap, sizeof *li->hash);
    li->hash_mask = hcap - 1;
    li->seed = tg_hash_seed();
    return li->list && li->direct && li->hash;
}

static void index_free(launch_index *li)
{
    tg_idmap_free(&li->pids);
    free(li->ranges);
    free(li->list);
    free(li->direct);
    free(li->hash);
}

bool tg_model_twin_inner(const tg_api *a, const tg_api *b)
{
    return a->start > b->start || (a->start == b->start && a->rowid > b->rowid);
}

/* Call i has the id of the call in the slot: keep the inner one there. */
static void mark_duplicate(tg_trace *t, launch_index *li, const slot *s, size_t i)
{
    size_t j = slot_call(s) - 1;
    tg_api *a = &t->apis[i], *b = &t->apis[j];
    if (a->base_name != b->base_name) return;   /* distinct calls: keep the first for the join */
    bool a_inner = tg_model_twin_inner(a, b);
    size_t inner = a_inner ? i : j, outer = a_inner ? j : i;
    t->apis[outer].dup_of = (int32_t)inner;
    /* nsys 2022.2 records the stack on the outer row (docs/host.md) */
    if (t->apis[inner].callchain < 0) t->apis[inner].callchain = t->apis[outer].callchain;
    slot_set(s, inner);
    li->duplicates = true;
    t->mixed_duplicate_api = true;
}

/* Enter call i: listed when it is in order (no earlier call can have its
** id then), else into its slot, where a call with its id already is a
** duplicate. */
static void add_call(tg_trace *t, launch_index *li, size_t i)
{
    tg_api *a = &t->apis[i];
    pid_ids *r = &li->ranges[dense_pid(li, a->pid)];
    if (r->listed && a->correlation > r->top) {
        r->top = a->correlation;
        li->list[r->base + r->n_listed++] = (uint32_t)i;
        return;
    }
    slot s;
    if (!slot_of(li, t->apis, a->pid, a->correlation, &s)) return;
    if (slot_call(&s)) mark_duplicate(t, li, &s, i);
    else slot_set(&s, i);
}

/* Row i is a duplicate: point it, and every row on its way, at the end of
** its chain. Each row is re-pointed once, so all chains cost O(n) together
** (following each chain from every row was quadratic: 150k copies of one
** call took 76 s). Chains have no cycle: a row gets dup_of once, to the row
** holding its slot, which has none then. */
static void point_at_chain_end(tg_api *apis, size_t i)
{
    int32_t end = apis[i].dup_of;
    while (apis[end].dup_of >= 0) end = apis[end].dup_of;
    for (int32_t j = apis[i].dup_of; j != end;) {
        int32_t next = apis[j].dup_of;
        apis[j].dup_of = end;
        j = next;
    }
    apis[i].dup_of = end;
}

bool tg_model_mark_duplicates(tg_trace *t)
{
    if (t->n_apis > INT32_MAX) return false;   /* rows hold call indices as int32 */
    launch_index li = {0};
    if (!index_init(&li, t)) {
        index_free(&li);
        return false;
    }
    for (size_t i = 0; i < t->n_apis; i++) {
        if (i + PREFETCH < t->n_apis) prefetch(&li, t->apis[i + PREFETCH].pid, t->apis[i + PREFETCH].correlation);
        if (joinable(t->apis[i].correlation)) add_call(t, &li, i);
    }
    /* a call recorded three times leaves chains: point every row at the last */
    for (size_t i = 0; li.duplicates && i < t->n_apis; i++) {
        if (t->apis[i].dup_of < 0) continue;
        point_at_chain_end(t->apis, i);
        t->apis[i].blocking = 0;
    }
    index_free(&li);
    return true;
}

/* An op's launching call index (tg_kernel.api) after the drop. */
static void remap_call(int32_t *api, const int32_t *moved)
{
    if (*api >= 0) *api = moved[*api];
}

bool tg_model_drop_twins(tg_trace *t)
{
    size_t n = t->n_apis, kept = 0;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++) any = t->apis[i].dup_of >= 0;
    if (!any) return true;
    int32_t *moved = malloc(n * sizeof *moved);     /* old index -> new, -1 dropped */
    if (!moved) return false;
    for (size_t i = 0; i < n; i++) {
        moved[i] = t->apis[i].dup_of >= 0 ? -1 : (int32_t)kept;
        if (moved[i] < 0) continue;
        if (kept != i) t->apis[kept] = t->apis[i];
        kept++;
    }
    /* the ops were joined to inner rows, which stay */
    for (size_t i = 0; t->kernels && i < t->n_kernels; i++) remap_call(&t->kernels[i].api, moved);
    for (size_t i = 0; i < t->n_memcpys; i++) remap_call(&t->memcpys[i].api, moved);
    for (size_t i = 0; i < t->n_memsets; i++) remap_call(&t->memsets[i].api, moved);
    free(moved);
    size_t dropped = n - kept;
    t->n_apis = kept;
    t->n_api_twins += dropped;
    t->n_api_rows = t->n_api_rows > dropped ? t->n_api_rows - dropped : 0;
    return true;
}

/* ---------------------------------------------------------------- op index */

/* The GPU ops by (process, correlation id), for calls to find what they
** launched: open addressing, one slot per key, holding in its low 32 bits
** an op reference + 1 and a fingerprint of the key above, so a probe reads
** an op's row only on a likely match. A key shared by several ops (a graph
** launch shares its id with every kernel of the graph; a hostile export
** gives a million ops one id) has a group instead: the slot holds
** GROUP_TAG + group number, the group lists its ops in the order they were
** entered (kernels, copies, memsets, each by start, as the cluster of one
** slot per op held them before) and says whether a call has joined them.
** So entering an op and joining a call cost O(1) whatever the duplicates
** (issue #16: 150k ops of one id took 6.3 s, the same with 150k calls 83 s). */
#define REF_SHIFT 30
#define REF_ROWS (1u << REF_SHIFT)
#define GROUP_TAG ((uint32_t)TG_OPK_COUNT << REF_SHIFT)   /* above every op_ref + 1 */
#define HUGE_PAGE ((size_t)2 << 20)

typedef struct op_link {
    uint32_t ref;              /* op reference (op_ref) */
    uint32_t next;             /* next link of the group + 1, 0 at its end */
} op_link;

typedef struct op_group {
    uint32_t head, tail;       /* first and last link */
    bool joined;               /* a call launched these ops */
} op_group;

typedef struct op_index {
    uint64_t *slots;
    size_t mask;
    uint64_t seed;             /* of hash_of */
    op_link *links;
    size_t n_links, links_cap;
    op_group *groups;
    size_t n_groups, groups_cap;
} op_index;

static uint32_t op_ref(tg_op_kind kind, size_t row) { return (uint32_t)kind << REF_SHIFT | (uint32_t)row; }

static void op_key(const tg_model *m, uint32_t ref, int32_t *pid, int64_t *corr)
{
    size_t row = ref & (REF_ROWS - 1);
    switch (ref >> REF_SHIFT) {
    case TG_OPK_KERNEL: {
        const tg_kspan *k = tg_model_ks(tg_model_cpriv_of(m), row);
        *pid = k->pid;
        *corr = k->correlation;
        break;
    }
    case TG_OPK_MEMCPY: *pid = m->trace->memcpys[row].pid; *corr = m->trace->memcpys[row].correlation; break;
    default: *pid = m->trace->memsets[row].pid; *corr = m->trace->memsets[row].correlation; break;
    }
}

/* The slot value v (low 32 bits) as an op reference: the op itself, or
** the first op of its group. */
static bool is_group(uint32_t v) { return v > GROUP_TAG; }

static uint32_t slot_first_ref(const op_index *x, uint32_t v)
{
    return is_group(v) ? x->links[x->groups[v - GROUP_TAG - 1].head].ref : v - 1;
}

/* Zeroed slots; a big table asks for huge pages, its probes being random. */
static uint64_t *slots_alloc(size_t cap)
{
    size_t bytes = cap * sizeof(uint64_t);
    if (bytes < HUGE_PAGE) return calloc(cap, sizeof(uint64_t));
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
    madvise(p, bytes, MADV_HUGEPAGE);      /* advice only: fine if refused */
    memset(p, 0, bytes);
    return p;
}

static void op_index_free(op_index *x)
{
    free(x->slots);
    free(x->links);
    free(x->groups);
}

/* Append op `ref` to the group of slot *s (made from its single op first). */
static bool group_add(op_index *x, uint64_t *s, uint32_t ref)
{
    uint32_t v = (uint32_t)*s;
    if (!is_group(v)) {
        op_link first = {v - 1, 0};
        op_group g = {(uint32_t)x->n_links, (uint32_t)x->n_links, false};
        if (x->n_groups >= REF_ROWS - 1 || !TG_PUSH(x->links, x->n_links, x->links_cap, first) ||
            !TG_PUSH(x->groups, x->n_groups, x->groups_cap, g))
            return false;
        *s = (*s & ~(uint64_t)UINT32_MAX) | (GROUP_TAG + (uint32_t)x->n_groups);
        v = GROUP_TAG + (uint32_t)x->n_groups;
    }
    op_link link = {ref, 0};
    if (x->n_links >= UINT32_MAX - 1 || !TG_PUSH(x->links, x->n_links, x->links_cap, link)) return false;
    op_group *g = &x->groups[v - GROUP_TAG - 1];
    x->links[g->tail].next = (uint32_t)x->n_links;   /* the new link's index + 1 */
    g->tail = (uint32_t)(x->n_links - 1);
    return true;
}

/* Enter op `ref` of key (pid, corr): into the empty slot its probe ends at,
** or into the group of the slot that holds its key. */
static bool op_index_add(op_index *x, const tg_model *m, uint32_t ref, int32_t pid, int64_t corr)
{
    size_t h = hash_of(x->seed, pid, corr), i = h & x->mask;
    uint32_t fp = (uint32_t)(h >> 32);
    for (uint64_t s; (s = x->slots[i]) != 0; i = (i + 1) & x->mask) {
        if ((uint32_t)(s >> 32) != fp) continue;
        int32_t p;
        int64_t c;
        op_key(m, slot_first_ref(x, (uint32_t)s), &p, &c);
        if (p == pid && c == corr) return group_add(x, &x->slots[i], ref);
    }
    x->slots[i] = (uint64_t)fp << 32 | (uint64_t)(ref + 1);
    return true;
}

static bool op_index_build(op_index *x, const tg_model *m)
{
    size_t n = 0;
    for (int kind = 0; kind < TG_OPK_COUNT; kind++) {
        if (tg_model_op_count(m, kind) >= REF_ROWS) return false;
        n += tg_model_op_count(m, kind);
    }
    size_t cap = 16;
    while (cap < n + n / 3) cap *= 2;                /* load <= 3/4 */
    x->slots = slots_alloc(cap);
    if (!x->slots) return false;
    x->mask = cap - 1;
    x->seed = tg_hash_seed();
    for (int kind = 0; kind < TG_OPK_COUNT; kind++) {
        size_t count = tg_model_op_count(m, kind);
        for (size_t row = 0; row < count; row++) {
            int32_t pid;
            int64_t corr;
            if (row + PREFETCH < count) {
                op_key(m, op_ref(kind, row + PREFETCH), &pid, &corr);
                __builtin_prefetch(&x->slots[hash_of(x->seed, pid, corr) & x->mask], 1);
            }
            uint32_t ref = op_ref(kind, row);
            op_key(m, ref, &pid, &corr);
            if (joinable(corr) && !op_index_add(x, m, ref, pid, corr)) return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- the pass */

/* Per process with GPU ops: the largest correlation id of its ops and the
** end of its last op, and its launch calls without an op whose id is past
** that largest one. Those were launched after every op the capture holds:
** with the process's GPU busy to the capture's end (a window that cuts a
** queue hundreds of milliseconds deep), they ran after it, and are not
** lost; with its GPU activity stopped early, they are (coverage). */
typedef struct pid_gpu {
    int64_t max_corr, last_end;
    int64_t pending[TG_TABLE_COUNT];
    int64_t pending_first, pending_last;
} pid_gpu;

typedef struct launch_pass {
    tg_model *m;
    const tg_model_params *p;
    op_index ops;
    tg_iter_finder finder;
    bool streamed;             /* rows come from tg_trace_stream_apis */
    tg_idmap seen;       /* streamed: (pid, id) of the calls kept or blocking */
    size_t index;              /* loaded rows: index of the call being visited */
    bool found;                /* join_call met GPU ops of the call's key */
    tg_launch_group group;     /* the kernels of the call being joined */
    bool queue_open;           /* its first kernel is still to come */
    tg_idmap gpu_pids;         /* pid -> its entry of gpu_of */
    struct pid_gpu *gpu_of;
    size_t n_gpu_of;
    tg_idmap kernel_pids;      /* pid -> its entry of first_kernel */
    int64_t *first_kernel;     /* start of each process's first kernel */
    size_t n_first_kernel;
    bool oom;
} launch_pass;

static void launch_kernel(launch_pass *c, const tg_api *a, int64_t it, size_t row)
{
    tg_model *m = c->m;
    tg_kspan *k = tg_model_ks(tg_model_priv_of(m), row);
    k->launched = 1;
    /* Queue time is the host-side wait: from the call's return to the
    ** start of the first kernel it launched. The other kernels of a graph
    ** launch waited for the graph's earlier kernels, not for the host, and
    ** get none (null: out of the median), docs/rules.md "CUDA graphs". A
    ** kernel that starts before its launching call returns (the call
    ** blocks, or the clocks disagree by a little) waited no time: 0, and
    ** counted, rather than left out of the median (docs/rules.md). */
    if (a->end != TG_NULL_I64 && c->queue_open) {
        k->queue_clamped = k->start < a->end;
        k->queue = k->queue_clamped ? 0 : k->start - a->end;
    }
    c->queue_open = false;
    if (m->trace->kernels) {
        tg_kernel *r = &m->trace->kernels[row];
        r->api = c->streamed ? -1 : (int32_t)c->index;
        r->api_name = a->base_name;
        r->tid = a->tid;
        r->launch_end = a->end;
        r->callchain = a->callchain;
        tg_model_mark_row(m, it, &r->iteration, &k->steady);
    } else {
        int32_t iteration;
        tg_model_mark_row(m, it, &iteration, &k->steady);
    }
    if (it >= 0) tg_model_attribute_op(m, it, k->start, k->end, true);
    tg_model_host_launch(m, a, it, k, &c->group);
    if (tg_model_priv_of(m)->nvtx && !tg_model_nvtx_launch(m, a, TG_OPK_KERNEL, row, k->start, k->end))
        c->oom = true;
}

static void launch_memop(launch_pass *c, const tg_api *a, int64_t it, tg_op_kind kind, tg_memop *r, size_t row)
{
    tg_model *m = c->m;
    uint8_t f = tg_model_name_flags(m, a->name);
    r->launched = 1;
    r->api = c->streamed ? -1 : (int32_t)c->index;
    r->api_name = a->base_name;
    r->tid = a->tid;
    r->api_sync = (f & TG_NAME_SYNC_MEMOP) != 0;
    r->api_async = (f & TG_NAME_ASYNC) != 0;
    r->callchain = a->callchain;
    tg_model_mark_row(m, it, &r->iteration, &r->steady);
    if (it >= 0) tg_model_attribute_op(m, it, r->start, r->end, false);
    if (tg_model_priv_of(m)->nvtx && !tg_model_nvtx_launch(m, a, kind, row, r->start, r->end))
        c->oom = true;
}

/* Launch the op `ref` unless a call took it already: false when taken. */
static bool launch_op(launch_pass *c, const tg_api *a, int64_t it, uint32_t ref)
{
    const tg_model *m = c->m;
    tg_op_kind kind = (tg_op_kind)(ref >> REF_SHIFT);
    size_t row = ref & (REF_ROWS - 1);
    tg_memop *r = kind == TG_OPK_MEMCPY ? &m->trace->memcpys[row]
                : kind == TG_OPK_MEMSET ? &m->trace->memsets[row] : NULL;
    bool taken = r ? r->launched : tg_model_ks(tg_model_cpriv_of(m), row)->launched;
    if (taken) return false;
    if (r) launch_memop(c, a, it, kind, r, row);
    else launch_kernel(c, a, it, row);
    return true;
}

/* The kernels of one key (c->group): the op `ref` and the links from
** `next` (a link index + 1, 0 at the end). */
static void group_of(launch_pass *c, uint32_t ref, uint32_t next)
{
    const tg_model_priv *p = tg_model_cpriv_of(c->m);
    c->group = (tg_launch_group){0};
    for (;;) {
        if (ref >> REF_SHIFT == TG_OPK_KERNEL) {
            const tg_kspan *k = tg_model_ks(p, ref & (REF_ROWS - 1));
            c->group.kernels++;
            c->group.kernel_time = tg_add_sat(c->group.kernel_time, k->end - k->start);
        }
        if (!next) return;
        ref = c->ops.links[next - 1].ref;
        next = c->ops.links[next - 1].next;
    }
}

/* Every op call a launched. Ops joined already mean two calls share (pid,
** id): in a loaded table the first in start order keeps them (twins are
** marked before), a streamed one is read again whole. A group is joined
** whole, so a second call of its key costs O(1). */
static bool join_call(launch_pass *c, const tg_api *a, int64_t it)
{
    const tg_model *m = c->m;
    op_index *x = &c->ops;
    size_t h = hash_of(x->seed, a->pid, a->correlation), i = h & x->mask;
    uint32_t fp = (uint32_t)(h >> 32);
    for (uint64_t s; (s = x->slots[i]) != 0; i = (i + 1) & x->mask) {
        if ((uint32_t)(s >> 32) != fp) continue;
        uint32_t v = (uint32_t)s;
        int32_t pid;
        int64_t corr;
        op_key(m, slot_first_ref(x, v), &pid, &corr);
        if (pid != a->pid || corr != a->correlation) continue;
        c->found = true;
        c->queue_open = true;
        if (!is_group(v)) {
            group_of(c, v - 1, 0);
            return launch_op(c, a, it, v - 1) || !c->streamed;
        }
        op_group *g = &x->groups[v - GROUP_TAG - 1];
        if (g->joined) return !c->streamed;
        g->joined = true;
        group_of(c, x->links[g->head].ref, x->links[g->head].next);
        for (uint32_t l = g->head + 1; l; l = x->links[l - 1].next)
            launch_op(c, a, it, x->links[l - 1].ref);   /* none taken: the group was not joined */
        return true;
    }
    return true;
}

/* Coverage (tg_model.coverage): the calls' window, and per op table the
** launch calls with an id and those whose id found no GPU op: records
** lost (dropped buffers, CUPTI stopping) while the calls were kept. A
** graph launch or a host function is no such call (TG_OP_CALL_PREFIXES). */
static void note_unmatched(tg_model_priv *p, int64_t start)
{
    if (start == TG_NULL_I64) return;
    if (p->unmatched_first == TG_NULL_I64 || start < p->unmatched_first) p->unmatched_first = start;
    if (p->unmatched_last == TG_NULL_I64 || start > p->unmatched_last) p->unmatched_last = start;
}

static void count_coverage(launch_pass *c, tg_model_priv *p, const tg_api *a, int64_t it, uint8_t f, bool found)
{
    if (a->start != TG_NULL_I64 && (p->api_first == TG_NULL_I64 || a->start < p->api_first)) p->api_first = a->start;
    int64_t last = a->end != TG_NULL_I64 ? a->end : a->start;
    if (last != TG_NULL_I64 && (p->api_last == TG_NULL_I64 || last > p->api_last)) p->api_last = last;
    if (!joinable(a->correlation)) return;
    static const struct { uint8_t flag; int table; } kinds[] = {
        {TG_NAME_OPS_KERNEL, TG_TABLE_KERNEL}, {TG_NAME_OPS_MEMCPY, TG_TABLE_MEMCPY}, {TG_NAME_OPS_MEMSET, TG_TABLE_MEMSET}};
    int32_t d = found ? -1 : tg_idmap_get(&c->gpu_pids, a->pid);
    pid_gpu *g = d >= 0 && a->correlation > c->gpu_of[d].max_corr ? &c->gpu_of[d] : NULL;
    bool counted = false;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        /* a kind whose table the capture lacks was not recorded, not lost
        ** (engine/eval/eval_missing.c says so): its calls are not counted */
        if (!(f & kinds[k].flag) || !p->pub.trace->has_table[kinds[k].table]) continue;
        p->launch_calls[kinds[k].table]++;
        if (g) g->pending[kinds[k].table]++;
        else if (!found) p->launch_unmatched[kinds[k].table]++;
        counted = true;
    }
    if (found || !counted || a->start == TG_NULL_I64) return;
    if (!g) {
        if (it >= 0) p->pub.iterations[it].launches_lost++;
        note_unmatched(p, a->start);
        return;
    }
    if (g->pending_first == TG_NULL_I64 || a->start < g->pending_first) g->pending_first = a->start;
    if (g->pending_last == TG_NULL_I64 || a->start > g->pending_last) g->pending_last = a->start;
}

/* Start-up (api.startup, docs/rules.md "Start-up calls"): a call that
** starts before its process's first kernel. The call that creates the
** context (the first cudaMalloc, cuMemAlloc or cuInit, which can take
** hundreds of ms) is one: no kernel runs before its context exists. A
** process that ran no kernel has no start-up by this test, and a call in a
** steady iteration is never start-up (the steady iterations are the loop;
** a capture window that opens mid-run has calls before its first kernel
** there). visit applies that second test. */
static int8_t is_startup(const launch_pass *c, const tg_api *a)
{
    int32_t d = tg_idmap_get(&c->kernel_pids, a->pid);
    return d >= 0 && a->start != TG_NULL_I64 && a->start < c->first_kernel[d];
}

static int visit(void *ctx, tg_api *a)
{
    launch_pass *c = ctx;
    tg_model *m = c->m;
    tg_model_priv *p = tg_model_priv_of(m);
    if (c->streamed && !tg_model_derive_call(m, a)) {
        c->oom = true;
        return -1;
    }
    int64_t it = tg_model_finder_find(&c->finder, a->pid, a->start);
    tg_model_mark_row(m, it, &a->iteration, &a->steady);
    a->startup = is_startup(c, a) && !(m->has_iterations && a->steady);
    tg_model_host_call(m, a);
    if (a->dup_of < 0) {
        p->api_calls++;
        uint8_t f = tg_model_name_flags(m, a->name);
        if (f & TG_NAME_OPS_KERNEL) p->op_calls[TG_TABLE_KERNEL]++;
        if (f & TG_NAME_OPS_MEMCPY) p->op_calls[TG_TABLE_MEMCPY]++;
        if (f & TG_NAME_OPS_MEMSET) p->op_calls[TG_TABLE_MEMSET]++;
        if (a->blocking) {
            p->blocking_calls++;
            if (a->start != TG_NULL_I64 && a->end != TG_NULL_I64)
                p->blocked_time = tg_add_sat(p->blocked_time, a->end - a->start);
            if (it >= 0) m->iterations[it].blocking_calls++;
        }
        c->found = false;
        if (joinable(a->correlation) && !join_call(c, a, it)) return -1;
        count_coverage(c, p, a, it, f, c->found);
    }
    if (c->oom) return -1;
    if (!c->streamed) return 1;
    bool keep = !c->p->keep_api || c->p->keep_api(c->p->keep_ctx, m, a);
    /* Twins the trace layer's window and the join both miss (far apart,
    ** launching nothing) would still count twice as rows or as blocking:
    ** the ids of those calls are remembered, and a repeat means twins. */
    if ((keep || a->blocking) && joinable(a->correlation)) {
        int64_t key = (int64_t)((uint64_t)(uint32_t)a->pid << 40 ^ (uint64_t)a->correlation);
        if (tg_idmap_get(&c->seen, key) >= 0) return -1;
        if (tg_idmap_intern(&c->seen, key) < 0) {
            c->oom = true;
            return -1;
        }
    }
    return keep ? 1 : 0;
}

/* A streamed call is read a few dozen calls before its visit: fetch the
** index slot its join will probe. */
static void ahead(void *ctx, const tg_api *a)
{
    const launch_pass *c = ctx;
    if (joinable(a->correlation)) __builtin_prefetch(&c->ops.slots[hash_of(c->ops.seed, a->pid, a->correlation) & c->ops.mask]);
}

/* The processes' GPU ops: largest id, last end (pid_gpu). */
static bool gpu_pids_build(launch_pass *c)
{
    const tg_model *m = c->m;
    size_t cap = 0;
    int32_t last_pid = 0, last_d = -1;   /* ops come in runs of one process */
    for (int kind = 0; kind < TG_OPK_COUNT; kind++) {
        size_t count = tg_model_op_count(m, kind);
        for (size_t row = 0; row < count; row++) {
            int32_t pid;
            int64_t corr, end;
            uint32_t ref = op_ref((tg_op_kind)kind, row);
            op_key(m, ref, &pid, &corr);
            end = kind == TG_OPK_KERNEL ? tg_model_ks(tg_model_cpriv_of(m), row)->end
                : kind == TG_OPK_MEMCPY ? m->trace->memcpys[row].end : m->trace->memsets[row].end;
            if (!joinable(corr)) continue;
            int32_t d = last_d >= 0 && pid == last_pid ? last_d : tg_idmap_get(&c->gpu_pids, pid);
            last_pid = pid;
            last_d = d;
            if (d < 0) {
                pid_gpu g = {.max_corr = corr, .last_end = end, .pending_first = TG_NULL_I64,
                             .pending_last = TG_NULL_I64};
                if (!TG_PUSH(c->gpu_of, c->n_gpu_of, cap, g) || !tg_idmap_put(&c->gpu_pids, pid, (int32_t)(c->n_gpu_of - 1)))
                    return false;
                last_d = (int32_t)(c->n_gpu_of - 1);
                continue;
            }
            pid_gpu *g = &c->gpu_of[d];
            if (corr > g->max_corr) g->max_corr = corr;
            if (end != TG_NULL_I64 && (g->last_end == TG_NULL_I64 || end > g->last_end)) g->last_end = end;
        }
    }
    return true;
}

/* Each process's first kernel start (is_startup), over every kernel with
** a start and an end, launched or not: the SQL and jq views take the same
** minimum. */
static bool first_kernels_build(launch_pass *c)
{
    const tg_model *m = c->m;
    const tg_model_priv *p = tg_model_cpriv_of(m);
    size_t cap = 0, count = tg_model_op_count(m, TG_OPK_KERNEL);
    for (size_t row = 0; row < count; row++) {
        const tg_kspan *k = tg_model_ks(p, row);
        if (k->start == TG_NULL_I64 || k->end == TG_NULL_I64) continue;
        int32_t d = tg_idmap_get(&c->kernel_pids, k->pid);
        if (d >= 0) {
            if (k->start < c->first_kernel[d]) c->first_kernel[d] = k->start;
            continue;
        }
        if (!TG_PUSH(c->first_kernel, c->n_first_kernel, cap, k->start) ||
            !tg_idmap_put(&c->kernel_pids, k->pid, (int32_t)(c->n_first_kernel - 1)))
            return false;
    }
    return true;
}

/* The launches past a process's last op: not yet run at the capture's end
** when its GPU worked until then (the last twentieth of the capture),
** else lost with the rest. */
static void gpu_pids_settle(launch_pass *c)
{
    tg_model_priv *p = tg_model_priv_of(c->m);
    const tg_trace *t = c->m->trace;
    int64_t tail = t->last_ns != TG_NULL_I64 && t->first_ns != TG_NULL_I64 ? (t->last_ns - t->first_ns) / 20 : 0;
    for (size_t i = 0; i < c->n_gpu_of; i++) {
        const pid_gpu *g = &c->gpu_of[i];
        bool ran_after = g->last_end != TG_NULL_I64 && t->last_ns != TG_NULL_I64 && g->last_end >= t->last_ns - tail;
        for (int k = 0; k < TG_TABLE_COUNT; k++) {
            if (ran_after) p->launch_pending[k] += g->pending[k];
            else p->launch_unmatched[k] += g->pending[k];
        }
        if (!ran_after && g->pending_first != TG_NULL_I64) {
            note_unmatched(p, g->pending_first);
            note_unmatched(p, g->pending_last);
        }
    }
}

int tg_model_launch_calls(tg_model *m, const tg_model_params *params, tg_diag *diag)
{
    tg_trace *t = m->trace;
    launch_pass c = {.m = m, .p = params, .streamed = t->apis_deferred};
    if (!op_index_build(&c.ops, m) || !tg_model_finder_init(&c.finder, m) ||
        !(*(&c.seen) = (tg_idmap){0}, true) || !gpu_pids_build(&c) || !first_kernels_build(&c)) {
        tg_idmap_free(&c.gpu_pids);
        free(c.gpu_of);
        tg_idmap_free(&c.kernel_pids);
        free(c.first_kernel);
        op_index_free(&c.ops);
        tg_model_finder_free(&c.finder);
        tg_idmap_free(&c.seen);
        return 0;
    }
    /* ops no call launches are in no iteration */
    int32_t no_iteration;
    for (size_t i = 0; i < t->n_kernels; i++)
        tg_model_mark_row(m, -1, t->kernels ? &t->kernels[i].iteration : &no_iteration,
                          &tg_model_ks(tg_model_priv_of(m), i)->steady);
    for (size_t i = 0; i < t->n_memcpys; i++) tg_model_mark_row(m, -1, &t->memcpys[i].iteration, &t->memcpys[i].steady);
    for (size_t i = 0; i < t->n_memsets; i++) tg_model_mark_row(m, -1, &t->memsets[i].iteration, &t->memsets[i].steady);
    int rc = 1;
    if (c.streamed) {
        tg_api_reader_cb cb = {visit, ahead, &c};
        tg_stream_status st = tg_trace_stream_apis(t, &cb, diag);
        rc = c.oom || st == TG_STREAM_FAILED ? 0 : st == TG_STREAM_STOPPED ? -1 : 1;
    } else {
        for (c.index = 0; c.index < t->n_apis && !c.oom; c.index++) {
            if (c.index + PREFETCH < t->n_apis) ahead(&c, &t->apis[c.index + PREFETCH]);
            visit(&c, &t->apis[c.index]);
        }
        rc = c.oom ? 0 : 1;
    }
    if (rc == 1) gpu_pids_settle(&c);
    tg_idmap_free(&c.gpu_pids);
    free(c.gpu_of);
    tg_idmap_free(&c.kernel_pids);
    free(c.first_kernel);
    op_index_free(&c.ops);
    tg_model_finder_free(&c.finder);
    tg_idmap_free(&c.seen);
    return rc;
}
