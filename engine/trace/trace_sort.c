/*
** Ordering rows by start time. Exports are usually stored in start order
** already, so the common case is one linear check. Otherwise an LSD radix
** sort of (start, position) pairs gives a stable order in O(n) passes
** (byte positions every key shares are skipped), and the rows are moved
** into place along the permutation's cycles with one spare row, so a
** 10-million-kernel array is never copied whole.
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct sort_pair {
    uint64_t key;              /* start with the sign bit flipped */
    size_t pos;                /* original position */
} sort_pair;

static int64_t key_at(const void *rows, size_t i, size_t esz, size_t off)
{
    int64_t v;
    memcpy(&v, (const char *)rows + i * esz + off, sizeof v);
    return v;
}

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

bool tg_sort_rows_by_i64(void *rows, size_t n, size_t esz, size_t key_off)
{
    size_t i = 1;
    while (i < n && key_at(rows, i - 1, esz, key_off) <= key_at(rows, i, esz, key_off)) i++;
    if (i >= n) return true;

    sort_pair *pairs = malloc(n * sizeof *pairs);
    sort_pair *tmp = malloc(n * sizeof *tmp);
    char *spare = malloc(esz);
    if (!pairs || !tmp || !spare) {
        free(pairs);
        free(tmp);
        free(spare);
        return false;
    }
    for (i = 0; i < n; i++) {
        pairs[i].key = (uint64_t)key_at(rows, i, esz, key_off) ^ ((uint64_t)1 << 63);
        pairs[i].pos = i;
    }
    radix_sort(pairs, tmp, n);
    free(tmp);

    /* Row i must receive the row now at pairs[i].pos. Follow each cycle,
    ** marking finished slots with pos == SIZE_MAX. */
    char *base = rows;
    for (i = 0; i < n; i++) {
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
