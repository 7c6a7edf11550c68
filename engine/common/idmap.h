/*
** The one map from int64 keys (ids an export or a trace chose: string ids,
** pids, device ids, pairs of them) to int32 values >= 0. A dense array while
** the keys stay small and compact (they are in every export seen), then an
** open-addressing hash seeded per map (tg_hash_seed), so keys a hostile
** file chose cannot make it quadratic. Any int64 is a key.
*/
#ifndef TG_IDMAP_H
#define TG_IDMAP_H

#include "common.h"

typedef struct tg_idmap {
    int32_t *dense;            /* dense[key] = value or -1 */
    int64_t dense_n, dense_count;
    int64_t *keys;             /* hash mode: slots with vals[i] >= 0 are used */
    int32_t *vals;
    size_t slots, used;
    uint64_t seed;
} tg_idmap;

/* A zeroed tg_idmap is an empty map. */
bool tg_idmap_put(tg_idmap *m, int64_t key, int32_t val);   /* val >= 0; false on OOM */
int32_t tg_idmap_get(const tg_idmap *m, int64_t key);       /* -1 when absent */
/* The dense id of key (0, 1, 2, ... in first-seen order), inserting it;
** -1 on OOM. */
int32_t tg_idmap_intern(tg_idmap *m, int64_t key);
size_t tg_idmap_count(const tg_idmap *m);
/* Every entry, in no particular order: start with *pos = 0; false at the
** end. */
bool tg_idmap_next(const tg_idmap *m, size_t *pos, int64_t *key, int32_t *val);
void tg_idmap_free(tg_idmap *m);

/* Two int32 ids as one key (a device and a pid, a pid and a tid). */
static inline int64_t tg_key2(int32_t a, int32_t b)
{
    return (int64_t)(((uint64_t)(uint32_t)a << 32) | (uint32_t)b);
}

#endif
