/*
** Ordering rows by start time, stably. Exports store a table as a few long
** runs already sorted by start (one per buffer flush: about four per
** capture), so the common cases are one linear check (sorted) and a merge
** of those runs.
**
** The merge writes the rows in order into a new array, one sequential
** pass, reading every run front to back. Done naively it would hold the
** table twice and fault in as many fresh pages as the table has. Big
** tables live in mappings of their own (trace_mem.c), so as soon as every
** row of a 2 MiB block of the source has been copied, the block's pages
** are moved (mremap) to where the output is about to be written: the two
** arrays together stay one table big and almost no page is faulted twice.
** The moved blocks leave holes in the source's range, which another
** thread's mapping may fill meanwhile, so the source is unmapped part by
** part at the end, never whole.
**
** A table in many short runs (no export seen does this) is sorted in place
** instead: an LSD radix sort of (start, position) pairs, then the rows are
** moved along the permutation's cycles with one spare row.
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCK ((size_t)2 << 20)            /* pages move between arrays 2 MiB at a time */
#define MERGE_MIN_RUN 16                   /* average run length needed to merge */
#define MOVED UINT32_MAX                   /* merge.left of a block whose pages moved */

static int64_t key_at(const char *rows, size_t i, size_t esz, size_t off)
{
    int64_t v;
    memcpy(&v, rows + i * esz + off, sizeof v);
    return v;
}

/* ---------------------------------------------------------------- merge */

typedef struct run {
    size_t pos, end;                       /* next row, one past the last */
    int64_t key;                           /* key of row pos */
} run;

typedef struct merge {
    const char *src;
    char *dst;
    size_t esz, off;
    run *runs;
    uint32_t *heap;                        /* run numbers, smallest (key, run) on top */
    size_t n_heap;
    /* page recycling (mapped arrays): the source's whole blocks, bytes of
    ** each not copied yet, and the fully copied ones ready to move */
    bool recycle;
    size_t n_blocks, dst_blocks, placed;   /* placed: destination blocks set up */
    uint32_t *left;
    uint32_t *spare;
    size_t n_spare;
} merge;

static bool run_before(const merge *m, uint32_t a, uint32_t b)
{
    int64_t ka = m->runs[a].key, kb = m->runs[b].key;
    return ka < kb || (ka == kb && a < b);   /* earlier run first: stable */
}

static void sift_down(merge *m, size_t i)
{
    uint32_t *h = m->heap;
    size_t n = m->n_heap;
    uint32_t x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && run_before(m, h[c + 1], h[c])) c++;
        if (!run_before(m, h[c], x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static bool recycle_init(merge *m, size_t n)
{
    size_t bytes = n * m->esz;
    m->n_blocks = bytes / BLOCK;
    m->dst_blocks = bytes / BLOCK;
    if (m->n_blocks < 2 || BLOCK % tg_rows_page() != 0) return true;
    m->left = malloc(m->n_blocks * sizeof *m->left);
    m->spare = malloc(m->n_blocks * sizeof *m->spare);
    if (!m->left || !m->spare) return false;
    for (size_t b = 0; b < m->n_blocks; b++) m->left[b] = (uint32_t)BLOCK;
    m->recycle = true;
    return true;
}

/* Source bytes [at, at + len) were copied. */
static void consumed(merge *m, size_t at, size_t len)
{
    while (len > 0) {
        size_t b = at / BLOCK, part = (b + 1) * BLOCK - at;
        if (part > len) part = len;
        if (b < m->n_blocks && (m->left[b] -= (uint32_t)part) == 0) m->spare[m->n_spare++] = (uint32_t)b;
        at += part;
        len -= part;
    }
}

/* Before bytes up to `upto` of the destination are written: give each new
** destination block the pages of a fully copied source block, if one is
** free (else it is faulted in as usual). False when the destination could
** not be kept mapped. */
static bool place(merge *m, size_t upto)
{
    while (m->placed < m->dst_blocks && m->placed * BLOCK < upto) {
        if (m->n_spare) {
            size_t b = m->spare[--m->n_spare];
            int rc = tg_rows_move((void *)(m->src + b * BLOCK), m->dst + m->placed * BLOCK, BLOCK);
            if (rc < 0) return false;
            if (rc == 0) m->recycle = false;       /* e.g. too many mappings: stop trying */
            else m->left[b] = MOVED;
        }
        m->placed++;
    }
    return true;
}

/* Unmap what is left of the source: not its whole range, whose moved
** blocks are holes another thread's mapping may have taken since (a
** trace is read by two threads, docs/architecture.md). */
static void free_source(merge *m, size_t mapped)
{
    size_t from = 0;
    for (size_t b = 0; b <= m->n_blocks; b++) {
        bool end = b == m->n_blocks;
        if (!end && m->left[b] != MOVED) continue;
        if (b * BLOCK > from) munmap((void *)(m->src + from), b * BLOCK - from);
        from = (b + 1) * BLOCK;
    }
    if (mapped > m->n_blocks * BLOCK) munmap((void *)(m->src + m->n_blocks * BLOCK), mapped - m->n_blocks * BLOCK);
}

static void merge_free(merge *m)
{
    free(m->runs);
    free(m->heap);
    free(m->left);
    free(m->spare);
}

/* How many rows of the top run go out before any row of another run: those
** ordered before the smallest (key, run) of the rest, the top's children
** in the heap. Exports hold a table as a few long runs that overlap little,
** so the merge copies stretches of rows at a time, not a row. */
static size_t stretch(const merge *m, const run *top, uint32_t r_top)
{
    if (m->n_heap < 2) return top->end - top->pos;
    uint32_t next = m->heap[1];
    if (m->n_heap > 2 && run_before(m, m->heap[2], next)) next = m->heap[2];
    int64_t bound = m->runs[next].key;
    bool ties_first = r_top < next;            /* equal keys: the earlier run first */
    size_t i = top->pos + 1;
    while (i < top->end) {
        int64_t k = key_at(m->src, i, m->esz, m->off);
        if (k > bound || (k == bound && !ties_first)) break;
        i++;
    }
    return i - top->pos;
}

/* Merge the runs bounded by descents into a new array; false on OOM (then
** a mapped source may have lost pages: the caller gives up the trace). */
static bool merge_runs(void **rows, size_t *mapped, size_t n, size_t esz, size_t off, size_t n_runs)
{
    merge m = {.src = *rows, .esz = esz, .off = off};
    size_t dst_mapped = 0;
    m.dst = *mapped ? tg_rows_map(n * esz, &dst_mapped) : malloc(n * esz);
    m.runs = malloc(n_runs * sizeof *m.runs);
    m.heap = malloc(n_runs * sizeof *m.heap);
    bool ok = m.dst && m.runs && m.heap && (!*mapped || recycle_init(&m, n));
    size_t r = 0, begin = 0;
    for (size_t i = 1; ok && i <= n; i++) {
        if (i < n && key_at(m.src, i - 1, esz, off) <= key_at(m.src, i, esz, off)) continue;
        m.runs[r] = (run){.pos = begin, .end = i, .key = key_at(m.src, begin, esz, off)};
        m.heap[r] = (uint32_t)r;
        r++;
        begin = i;
    }
    m.n_heap = r;
    for (size_t i = m.n_heap / 2; ok && i-- > 0;) sift_down(&m, i);
    for (size_t i = 0; ok && i < n;) {
        uint32_t r_top = m.heap[0];
        run *top = &m.runs[r_top];
        size_t take = stretch(&m, top, r_top);
        size_t from = top->pos * esz, len = take * esz;
        if (m.recycle && !place(&m, i * esz + len)) {
            ok = false;
            break;
        }
        memcpy(m.dst + i * esz, m.src + from, len);
        if (m.recycle) consumed(&m, from, len);
        i += take;
        if ((top->pos += take) < top->end) {
            top->key = key_at(m.src, top->pos, esz, off);
        } else {
            m.heap[0] = m.heap[--m.n_heap];
        }
        if (m.n_heap > 1) sift_down(&m, 0);
    }
    bool moved = false;
    for (size_t b = 0; m.left && b < m.n_blocks; b++) moved |= m.left[b] == MOVED;
    if (!ok) {
        tg_rows_free(m.dst, dst_mapped);
        if (moved) {
            /* the source lost pages: nothing of it is usable (the caller
            ** gives up the trace), and it must not be unmapped whole */
            free_source(&m, *mapped);
            *rows = NULL;
            *mapped = 0;
        }
        merge_free(&m);
        return false;
    }
    if (moved) free_source(&m, *mapped);
    else tg_rows_free(*rows, *mapped);
    merge_free(&m);
    *rows = m.dst;
    *mapped = dst_mapped;
    return true;
}

/* ---------------------------------------------------------------- in place */

typedef struct sort_pair {
    uint64_t key;              /* start with the sign bit flipped */
    size_t pos;                /* original position */
} sort_pair;

static void radix_sort(sort_pair *a, sort_pair *tmp, size_t n)
{
    size_t count[256];
    for (int shift = 0; shift < 64; shift += 8) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++) count[(a[i].key >> shift) & 0xFF]++;
        if (count[(a[0].key >> shift) & 0xFF] == n) continue;   /* all equal */
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[count[(a[i].key >> shift) & 0xFF]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

static bool sort_in_place(char *base, size_t n, size_t esz, size_t off)
{
    sort_pair *pairs = malloc(n * sizeof *pairs);
    sort_pair *tmp = malloc(n * sizeof *tmp);
    char *spare = malloc(esz);
    if (!pairs || !tmp || !spare) {
        free(pairs);
        free(tmp);
        free(spare);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        pairs[i].key = (uint64_t)key_at(base, i, esz, off) ^ ((uint64_t)1 << 63);
        pairs[i].pos = i;
    }
    radix_sort(pairs, tmp, n);
    free(tmp);

    /* Row i must receive the row now at pairs[i].pos. Follow each cycle,
    ** marking finished slots with pos == SIZE_MAX. */
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].pos == SIZE_MAX || pairs[i].pos == i) continue;
        memcpy(spare, base + i * esz, esz);
        size_t dst = i;
        for (;;) {
            size_t src = pairs[dst].pos;
            pairs[dst].pos = SIZE_MAX;
            if (src == i) {
                memcpy(base + dst * esz, spare, esz);
                break;
            }
            memcpy(base + dst * esz, base + src * esz, esz);
            dst = src;
        }
    }
    free(pairs);
    free(spare);
    return true;
}

bool tg_sort_rows_by_i64(void **rows, size_t *mapped, size_t n, size_t esz, size_t key_off)
{
    const char *base = *rows;
    size_t runs = 1;
    for (size_t i = 1; i < n; i++) runs += key_at(base, i - 1, esz, key_off) > key_at(base, i, esz, key_off);
    if (runs == 1) return true;
    if (n / runs >= MERGE_MIN_RUN && runs <= UINT32_MAX) return merge_runs(rows, mapped, n, esz, key_off, runs);
    return sort_in_place(*rows, n, esz, key_off);
}
