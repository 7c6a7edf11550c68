/*
** The int64 -> int32 map (idmap.h): dense while the keys allow, then a
** seeded open-addressing hash with linear probing, at most half full.
*/
#include "idmap.h"

#include <stdlib.h>
#include <string.h>

/* Keys up to this bound use the dense array when it stays compact. */
#define DENSE_MAX ((int64_t)1 << 26)

static size_t slot_of(const tg_idmap *m, const int64_t *keys, const int32_t *vals, size_t slots, int64_t key)
{
    size_t j = (size_t)tg_hash_mix((uint64_t)key ^ m->seed) & (slots - 1);
    while (vals[j] >= 0 && keys[j] != key) j = (j + 1) & (slots - 1);
    return j;
}

static bool hash_put(tg_idmap *m, int64_t key, int32_t val)
{
    if ((m->used + 1) * 2 > m->slots) {
        if (!m->slots) m->seed = tg_hash_seed();
        size_t ns = m->slots ? m->slots * 2 : 1024;
        int64_t *keys = malloc(ns * sizeof *keys);
        int32_t *vals = malloc(ns * sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return false;
        }
        for (size_t i = 0; i < ns; i++) vals[i] = -1;
        for (size_t i = 0; i < m->slots; i++) {
            if (m->vals[i] < 0) continue;
            size_t j = slot_of(m, keys, vals, ns, m->keys[i]);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->slots = ns;
    }
    size_t j = slot_of(m, m->keys, m->vals, m->slots, key);
    if (m->vals[j] < 0) m->used++;
    m->keys[j] = key;
    m->vals[j] = val;
    return true;
}

bool tg_idmap_put(tg_idmap *m, int64_t key, int32_t val)
{
    TG_ASSERT(val >= 0);
    if (!m->slots) {
        /* Dense while the keys stay compact; a sparse key set moves to the
        ** hash instead of allocating an array that dwarfs the values. */
        if (key >= 0 && key < m->dense_n) {
            if (m->dense[key] < 0) m->dense_count++;
            m->dense[key] = val;
            return true;
        }
        if (key >= 0 && key < DENSE_MAX) {
            int64_t want = m->dense_n ? m->dense_n : 1024;
            while (want <= key) want *= 2;
            if (want <= ((int64_t)1 << 20) || want <= 16 * (m->dense_count + 1)) {
                int32_t *d = realloc(m->dense, (size_t)want * sizeof *d);
                if (!d) return false;
                for (int64_t i = m->dense_n; i < want; i++) d[i] = -1;
                m->dense = d;
                m->dense_n = want;
                m->dense[key] = val;
                m->dense_count++;
                return true;
            }
        }
        int32_t *dense = m->dense;
        int64_t dense_n = m->dense_n;
        m->dense = NULL;
        m->dense_n = m->dense_count = 0;
        bool ok = true;
        for (int64_t i = 0; ok && i < dense_n; i++)
            if (dense[i] >= 0) ok = hash_put(m, i, dense[i]);
        free(dense);
        if (!ok) return false;
    }
    return hash_put(m, key, val);
}

int32_t tg_idmap_get(const tg_idmap *m, int64_t key)
{
    if (!m->slots) return (key >= 0 && key < m->dense_n) ? m->dense[key] : -1;
    size_t j = slot_of(m, m->keys, m->vals, m->slots, key);
    return m->vals[j];
}

size_t tg_idmap_count(const tg_idmap *m)
{
    return m->slots ? m->used : (size_t)m->dense_count;
}

int32_t tg_idmap_intern(tg_idmap *m, int64_t key)
{
    int32_t v = tg_idmap_get(m, key);
    if (v >= 0) return v;
    size_t n = tg_idmap_count(m);
    if (n >= INT32_MAX || !tg_idmap_put(m, key, (int32_t)n)) return -1;
    return (int32_t)n;
}

bool tg_idmap_next(const tg_idmap *m, size_t *pos, int64_t *key, int32_t *val)
{
    size_t end = m->slots ? m->slots : (size_t)m->dense_n;
    for (; *pos < end; (*pos)++) {
        int32_t v = m->slots ? m->vals[*pos] : m->dense[*pos];
        if (v < 0) continue;
        *key = m->slots ? m->keys[*pos] : (int64_t)*pos;
        *val = v;
        (*pos)++;
        return true;
    }
    return false;
}

void tg_idmap_free(tg_idmap *m)
{
    free(m->dense);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
