/*
** Memory for the row arrays of a trace. Touching a fresh page is what big
** exports cost most after SQLite itself (a page fault per 4 KiB, about
** half a second per GiB on the machines measured), so the arrays are
** built to be touched once:
**
** - while small they are plain malloc'd arrays (sanitizers see them);
** - from TG_ROWS_MAP_MIN bytes on, each lives in an anonymous mapping of
**   its own that grows with mremap (the kernel moves page tables, nothing
**   is copied), and trace_sort.c can move whole pages of it into the
**   sorted array with tg_rows_move instead of faulting in new ones.
**
** `mapped` is the size of an array's mapping, 0 when it is malloc'd; the
** trace keeps it per table (tg_trace.rows_mapped).
**
** --max-memory while reading (docs/limits.md): a reader attaches a meter
** to its threads (tg_mem_attach) and every byte its row arrays grow by,
** and whatever else it charges (tg_mem_charge: interned names, a second
** parser's record), is counted against the limit; a growth past it fails
** as out of memory would, and tg_mem_fail says why. Nothing is taken off
** when freed: the count is an upper bound of what the reader holds at once.
*/
#include "trace_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

size_t tg_rows_page(void)
{
    /* atomic: the loaders of one trace may ask from two threads */
    static _Atomic size_t page;
    size_t v = atomic_load_explicit(&page, memory_order_relaxed);
    if (!v) {
        long p = sysconf(_SC_PAGESIZE);
        v = p > 0 ? (size_t)p : 4096;
        atomic_store_explicit(&page, v, memory_order_relaxed);
    }
    return v;
}

static _Thread_local tg_mem_meter *meter;

tg_mem_meter *tg_mem_attach(tg_mem_meter *m)
{
    tg_mem_meter *was = meter;
    meter = m;
    return was;
}

bool tg_mem_charge(size_t bytes)
{
    tg_mem_meter *m = meter;
    if (!m) return true;
    int64_t add = bytes > (size_t)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)bytes;
    int64_t now = atomic_fetch_add_explicit(&m->held, add, memory_order_relaxed) + add;
    int64_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&m->peak, &peak, now, memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
    if (m->limit > 0 && (now > m->limit || atomic_load_explicit(&m->over, memory_order_relaxed))) {
        atomic_store_explicit(&m->over, true, memory_order_relaxed);
        return false;
    }
    return true;
}

bool tg_mem_fail(tg_loader *ld)
{
    tg_mem_meter *m = meter;
    if (!m || !atomic_load_explicit(&m->over, memory_order_relaxed)) return false;
    char limit[32], held[32];
    tg_format_size(m->limit, limit, sizeof limit);
    tg_format_size(atomic_load_explicit(&m->peak, memory_order_relaxed), held, sizeof held);
    tg_load_fail(ld, TG_ETRACE, TG_MAX_MEMORY_SENTENCE, limit, "at least", held);
    return true;
}

static size_t round_pages(size_t bytes)
{
    size_t page = tg_rows_page();
    return bytes > SIZE_MAX - page ? 0 : (bytes + page - 1) / page * page;
}

void *tg_rows_map(size_t bytes, size_t *mapped)
{
    size_t len = round_pages(bytes ? bytes : 1);
    if (!len) return NULL;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    *mapped = len;
    return p;
}

void tg_rows_free(void *rows, size_t mapped)
{
    if (!rows) return;
    if (mapped) munmap(rows, mapped);
    else free(rows);
}

bool tg_rows_grow(void **rows, size_t *mapped, size_t *cap, size_t need, size_t esz)
{
    if (need <= *cap) return true;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 4 / esz) return false;
        ncap *= 2;
    }
    size_t bytes = ncap * esz;
    if (!tg_mem_charge(bytes - *cap * esz)) return false;
    if (bytes < TG_ROWS_MAP_MIN && !*mapped) {
        void *p = realloc(*rows, bytes);
        if (!p) return false;
        *rows = p;
    } else if (!*mapped) {
        size_t len = 0;
        void *p = tg_rows_map(bytes, &len);
        if (!p) return false;
        if (*rows) memcpy(p, *rows, *cap * esz);
        free(*rows);
        *rows = p;
        *mapped = len;
    } else {
        size_t len = round_pages(bytes);
        void *p = len ? mremap(*rows, *mapped, len, MREMAP_MAYMOVE) : MAP_FAILED;
        if (p == MAP_FAILED) return false;
        *rows = p;
        *mapped = len;
    }
    *cap = ncap;
    return true;
}

int tg_rows_move(void *from, void *to, size_t bytes)
{
    if (mremap(from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED) return 1;
    /* A failed move may have unmapped the target already (too many
    ** mappings, ...): map it afresh, to be written from scratch. */
    void *p = mmap(to, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? -1 : 0;
}
