/*
** The join of every kernel, copy and memset to its launching call: same
** process, same correlation id (SCHEMA.md), and the duplicate API rows of
** old exports found on the way.
**
** CUPTI hands out correlation ids per process from a counter, so a
** process's ids are nearly dense: the index is a direct-addressed array per
** process (slot = id - smallest id), filled and read in roughly increasing
** id order, which keeps millions of lookups in cache. A process whose ids
** are sparse (range over 4x its call count; PyTorch traces converted from
** CUPTI are) goes to an open-addressing hash table instead, whose slots
** carry a fingerprint of the key so that a probe reads the call's row only
** on a likely match, and whose loops prefetch the slots they will need a
** few dozen rows ahead. Never a nested scan.
**
** Duplicates: old exports record a runtime call twice under one correlation
** id, an outer `cudaMemcpy` row and, nested inside it, `cudaMemcpy_v3020`.
** The inner (later-starting) row is the call itself; NVIDIA's tools and the
** reference metrics time queue and blocking from it. The outer row gets
** dup_of = the inner row and stops counting as blocking.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct pid_ids {
    int32_t pid;
    int64_t min, max;
    size_t count, base;        /* base: first slot in the direct array */
    bool direct;
} pid_ids;

/* A slot holds call index + 1 (0 = empty): 32 bits in the direct array;
** in the hash table the high 32 bits hold the key's fingerprint. */
typedef struct launch_index {
    tg_model_idmap pids;
    pid_ids *ranges;
    uint32_t *direct;
    uint64_t *hash;            /* for sparse processes */
    size_t hash_mask;
    int32_t last_pid, last_dense;
    bool duplicates;           /* mark_duplicate ran */
} launch_index;

/* Where the call of one (pid, correlation id) is, or goes. */
typedef struct slot {
    uint32_t *direct;          /* one of these two */
    uint64_t *hashed;
    uint32_t fp;               /* fingerprint (hashed) */
} slot;

#define PREFETCH 64

static uint32_t call_of(uint64_t slot) { return (uint32_t)slot; }

/* Call index + 1 in the slot, 0 when empty. */
static uint32_t slot_call(const slot *s) { return s->direct ? *s->direct : call_of(*s->hashed); }

static void slot_set(const slot *s, size_t index)
{
    if (s->direct) *s->direct = (uint32_t)(index + 1);
    else *s->hashed = (uint64_t)s->fp << 32 | (uint32_t)(index + 1);
}

static bool joinable(int64_t corr) { return corr != TG_NULL_I64 && corr != 0; }

static int32_t dense_pid(launch_index *li, int32_t pid)
{
    if (li->last_dense >= 0 && li->last_pid == pid) return li->last_dense;
    int32_t d = tg_model_idmap_get(&li->pids, pid);
    li->last_pid = pid;
    li->last_dense = d;
    return d;
}

static size_t hash_of(int32_t pid, int64_t corr)
{
    uint64_t x = (uint64_t)corr * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uint32_t)pid * 0xc2b2ae3d27d4eb4fULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    return (size_t)(x ^ (x >> 32));
}

/* The slot of (pid, corr): holding that call, or the empty one it would
** take; false when the process made no calls or the id is out of its range. */
static bool slot_of(launch_index *li, const tg_api *apis, int32_t pid, int64_t corr, slot *out)
{
    int32_t d = dense_pid(li, pid);
    if (d < 0) return false;
    const pid_ids *r = &li->ranges[d];
    if (r->direct) {
        if (corr < r->min || corr > r->max) return false;
        *out = (slot){.direct = &li->direct[r->base + (size_t)(corr - r->min)]};
        return true;
    }
    size_t h = hash_of(pid, corr), i = h & li->hash_mask;
    uint32_t fp = (uint32_t)(h >> 32);
    for (uint64_t s; (s = li->hash[i]) != 0; i = (i + 1) & li->hash_mask) {
        if ((uint32_t)(s >> 32) != fp) continue;
        const tg_api *a = &apis[call_of(s) - 1];
        if (a->pid == pid && a->correlation == corr) break;
    }
    *out = (slot){.hashed = &li->hash[i], .fp = fp};
    return true;
}

static void prefetch(launch_index *li, int32_t pid, int64_t corr)
{
    int32_t d = dense_pid(li, pid);
    if (d < 0) return;
    const pid_ids *r = &li->ranges[d];
    if (!r->direct) __builtin_prefetch(&li->hash[hash_of(pid, corr) & li->hash_mask]);
}

/* Per process: id range and count, then direct or hashed storage. */
static bool index_init(launch_index *li, const tg_trace *t)
{
    size_t cap = 0, n = 0;
    li->last_dense = -1;
    if (!tg_model_idmap_init(&li->pids, 16)) return false;
    for (size_t i = 0; i < t->n_apis; i++) {
        const tg_api *a = &t->apis[i];
        if (!joinable(a->correlation)) continue;
        int32_t d = dense_pid(li, a->pid);
        if (d < 0) {
            d = tg_model_idmap_put(&li->pids, a->pid);
            li->last_dense = -1;
            pid_ids r = {.pid = a->pid, .min = a->correlation, .max = a->correlation};
            if (d < 0 || !TG_PUSH(li->ranges, n, cap, r)) return false;
        }
        pid_ids *r = &li->ranges[d];
        if (a->correlation < r->min) r->min = a->correlation;
        if (a->correlation > r->max) r->max = a->correlation;
        r->count++;
    }
    size_t direct = 0, hashed = 0;
    for (size_t d = 0; d < n; d++) {
        pid_ids *r = &li->ranges[d];
        uint64_t range = (uint64_t)(r->max - r->min) + 1;
        r->direct = range <= 4 * (uint64_t)r->count + 1024;
        if (r->direct) { r->base = direct; direct += (size_t)range; }
        else hashed += r->count;
    }
    li->direct = calloc(direct ? direct : 1, sizeof *li->direct);
    size_t hcap = 16;
    while (hcap < hashed + hashed / 2) hcap *= 2;     /* load <= 2/3 */
    li->hash = calloc(hcap, sizeof *li->hash);
    li->hash_mask = hcap - 1;
    return li->direct && li->hash;
}

static void index_free(launch_index *li)
{
    tg_model_idmap_free(&li->pids);
    free(li->ranges);
    free(li->direct);
    free(li->hash);
}

/* Call i has the id of the call in the slot: keep the inner one there. */
static void mark_duplicate(tg_trace *t, launch_index *li, const slot *s, size_t i)
{
    size_t j = slot_call(s) - 1;
    tg_api *a = &t->apis[i], *b = &t->apis[j];
    if (a->base_name != b->base_name) return;   /* distinct calls: keep the first for the join */
    bool a_inner = a->start > b->start || (a->start == b->start && i > j);
    size_t inner = a_inner ? i : j, outer = a_inner ? j : i;
    t->apis[outer].dup_of = (int32_t)inner;
    slot_set(s, inner);
    li->duplicates = true;
    t->mixed_duplicate_api = true;
}

static void join_kernels(tg_trace *t, launch_index *li)
{
    for (size_t i = 0; i < t->n_kernels; i++) {
        if (i + PREFETCH < t->n_kernels)
            prefetch(li, t->kernels[i + PREFETCH].pid, t->kernels[i + PREFETCH].correlation);
        tg_kernel *k = &t->kernels[i];
        slot s;
        if (!joinable(k->correlation) || !slot_of(li, t->apis, k->pid, k->correlation, &s)) continue;
        uint32_t call = slot_call(&s);
        if (!call) continue;
        const tg_api *a = &t->apis[call - 1];
        k->api = (int32_t)(call - 1);
        k->api_name = a->base_name;
        k->tid = a->tid;
        if (a->end != TG_NULL_I64 && k->start != TG_NULL_I64 && k->start >= a->end)
            k->queue = k->start - a->end;
    }
}

static void join_memops(tg_trace *t, launch_index *li, tg_memop *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) prefetch(li, rows[i + PREFETCH].pid, rows[i + PREFETCH].correlation);
        tg_memop *r = &rows[i];
        slot s;
        if (!joinable(r->correlation) || !slot_of(li, t->apis, r->pid, r->correlation, &s)) continue;
        uint32_t call = slot_call(&s);
        if (!call) continue;
        const tg_api *a = &t->apis[call - 1];
        r->api = (int32_t)(call - 1);
        r->api_name = a->base_name;
        r->tid = a->tid;
    }
}

bool tg_model_join_launches(tg_trace *t)
{
    if (t->n_apis > INT32_MAX) return false;   /* rows hold call indices as int32 */
    launch_index li = {0};
    if (!index_init(&li, t)) {
        index_free(&li);
        return false;
    }
    for (size_t i = 0; i < t->n_apis; i++) {
        if (i + PREFETCH < t->n_apis) prefetch(&li, t->apis[i + PREFETCH].pid, t->apis[i + PREFETCH].correlation);
        tg_api *a = &t->apis[i];
        slot s;
        if (!joinable(a->correlation) || !slot_of(&li, t->apis, a->pid, a->correlation, &s)) continue;
        if (slot_call(&s)) mark_duplicate(t, &li, &s, i);
        else slot_set(&s, i);
    }
    /* a call recorded three times leaves chains: point every row at the last */
    for (size_t i = 0; li.duplicates && i < t->n_apis; i++) {
        tg_api *a = &t->apis[i];
        while (a->dup_of >= 0 && t->apis[a->dup_of].dup_of >= 0) a->dup_of = t->apis[a->dup_of].dup_of;
        if (a->dup_of >= 0) a->blocking = 0;
    }
    join_kernels(t, &li);
    join_memops(t, &li, t->memcpys, t->n_memcpys);
    join_memops(t, &li, t->memsets, t->n_memsets);
    index_free(&li);
    return true;
}
