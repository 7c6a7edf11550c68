/*
** tg_sort_rows_by_i64 (engine/trace/trace_sort.c) on its three paths:
** already sorted (untouched), a few long sorted runs (merged into a new
** array; the big ones here live in mappings of their own (trace_mem.c)
** and span many 2 MiB blocks, whose pages move from the old array to the
** new one as the merge goes, copying stretches of a run at a time) and many short runs (radix sort in place).
** Every result is checked against a reference: the rows must come out
** ordered by key, ties in their original order, every row exactly once.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "trace/trace_int.h"

/* An odd-sized row: the key is not at offset 0 and rows straddle blocks. */
typedef struct row {
    uint32_t tag;              /* original position */
    int64_t key;
    char pad[37];
} row;

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Rows in a row array as the loaders make them (mapped when big). */
static size_t mapped;

static row *make_rows(size_t n)
{
    row *r = NULL;
    size_t cap = 0;
    mapped = 0;
    assert_true(tg_rows_grow((void **)&r, &mapped, &cap, n ? n : 1, sizeof *r));
    assert_true(cap >= n);
    for (size_t i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].tag = (uint32_t)i;
        memset(r[i].pad, (int)(i & 0x7F), sizeof r[i].pad);
    }
    return r;
}

/* Sorted by key, stable, a permutation, payload intact. */
static void check_sorted(const row *r, size_t n, const int64_t *key_of_tag)
{
    bool *seen = calloc(n ? n : 1, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        assert_true(r[i].tag < n);
        assert_false(seen[r[i].tag]);
        seen[r[i].tag] = true;
        assert_int_equal(r[i].key, key_of_tag[r[i].tag]);
        assert_int_equal((unsigned char)r[i].pad[36], r[i].tag & 0x7F);
        if (i > 0) {
            assert_true(r[i - 1].key <= r[i].key);
            if (r[i - 1].key == r[i].key) assert_true(r[i - 1].tag < r[i].tag);
        }
    }
    free(seen);
}

static void sort_and_check(row *r, size_t n)
{
    int64_t *keys = malloc((n ? n : 1) * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < n; i++) keys[r[i].tag] = r[i].key;
    void *p = r;
    assert_true(tg_sort_rows_by_i64(&p, &mapped, n, sizeof(row), offsetof(row, key)));
    check_sorted(p, n, keys);
    tg_rows_free(p, mapped);
    free(keys);
}

static void test_sorted_untouched(void **state)
{
    (void)state;
    size_t n = 1000;
    row *r = make_rows(n);
    for (size_t i = 0; i < n; i++) r[i].key = (int64_t)(i / 3);   /* ties */
    void *p = r;
    assert_true(tg_sort_rows_by_i64(&p, &mapped, n, sizeof(row), offsetof(row, key)));
    assert_ptr_equal(p, r);                                       /* no copy */
    for (size_t i = 0; i < n; i++) assert_int_equal(r[i].tag, i);
    tg_rows_free(r, mapped);
    void *none = NULL;
    size_t none_mapped = 0;
    assert_true(tg_sort_rows_by_i64(&none, &none_mapped, 0, sizeof(row), offsetof(row, key)));
    assert_null(none);
}

/* Four interleaved runs like an export's, with ties across and inside runs
** and negative keys; about 40 MiB, so the merge gives back whole blocks. */
static void test_long_runs_merged(void **state)
{
    (void)state;
    size_t n = 700000, runs = 4;
    row *r = make_rows(n);
    assert_true(mapped > 0);
    size_t per = n / runs;
    for (size_t i = 0; i < n; i++) {
        size_t in_run = i % per, which = i / per;
        r[i].key = (int64_t)(in_run * 10 / 4) * (int64_t)(which + 1) - 1000000 + (int64_t)(which % 2);
    }
    sort_and_check(r, n);
}

/* Copies of one capture after another, like bench/scale-trace's replicas:
** hundreds of runs, each short against a block. */
static void test_many_runs_merged(void **state)
{
    (void)state;
    size_t n = 300000;
    row *r = make_rows(n);
    assert_true(mapped > 0);
    for (size_t i = 0; i < n; i++) {
        size_t copy = i / 3000, k = i % 3000;
        r[i].key = (int64_t)copy * 100000 + (int64_t)((k % 4) * 20000 + k / 4 * 7);
    }
    sort_and_check(r, n);
}

/* Runs that overlap only at their ends, the way buffer flushes do, with
** equal keys where they meet: the merge copies stretches of a run at a
** time, and a tie must still go to the earlier run first. */
static void test_overlapping_stretches(void **state)
{
    (void)state;
    size_t n = 200000, runs = 7, per = n / runs + 1;
    row *r = make_rows(n);
    for (size_t i = 0; i < n; i++) {
        size_t which = i / per, k = i % per;
        /* run w covers keys [w*1000*per - 500, ...): its first rows fall
        ** among the last rows of run w-1, some on exactly equal keys */
        r[i].key = (int64_t)(which * 1000 * per) + (int64_t)k * 1000 - (k < 40 ? 40000 : 0) -
                   (k % 2 ? 0 : 500);
    }
    sort_and_check(r, n);
}

/* Another thread maps and writes memory all along while big tables are
** merged (a trace is read by two threads, docs/architecture.md): the
** holes the merge's moved blocks leave may hold that thread's mappings,
** which the merge must not unmap when it frees its source. */
typedef struct mapper {
    atomic_bool stop;
    size_t rounds;
} mapper;

static void *map_and_write(void *arg)
{
    mapper *mp = arg;
    size_t len = (size_t)2 << 20;
    while (!atomic_load(&mp->stop)) {
        unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) continue;
        for (int pass = 0; pass < 8; pass++)
            for (size_t i = 0; i < len; i += 4096) p[i] = (unsigned char)(pass + 1);
        munmap(p, len);
        mp->rounds++;
    }
    return NULL;
}

static void test_merge_beside_mappings(void **state)
{
    (void)state;
    mapper mp = {.rounds = 0};
    atomic_init(&mp.stop, false);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, map_and_write, &mp), 0);
    for (int round = 0; round < 12; round++) {
        size_t n = 400000, runs = 4, per = n / runs;
        row *r = make_rows(n);
        for (size_t i = 0; i < n; i++) r[i].key = (int64_t)((i % per) * 4 + i / per);
        sort_and_check(r, n);
    }
    atomic_store(&mp.stop, true);
    pthread_join(th, NULL);
    assert_true(mp.rounds > 0);
}

/* Random keys: runs of about two rows, sorted in place. */
static void test_random_in_place(void **state)
{
    (void)state;
    size_t n = 200000;
    row *r = make_rows(n);
    for (size_t i = 0; i < n; i++) r[i].key = (int64_t)(next_rand() % 50000) - 25000;
    int64_t *keys = malloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = r[i].key;
    void *p = r;
    assert_true(tg_sort_rows_by_i64(&p, &mapped, n, sizeof(row), offsetof(row, key)));
    assert_ptr_equal(p, r);                                       /* in place */
    check_sorted(p, n, keys);
    free(keys);
    tg_rows_free(r, mapped);
}

/* Extreme keys (the sign flip of the radix sort, INT64_MIN as null). */
static void test_extreme_keys(void **state)
{
    (void)state;
    static const int64_t ks[] = {INT64_MAX, 0, INT64_MIN, -1, 1, INT64_MIN + 1, INT64_MAX - 1, 0};
    size_t n = sizeof ks / sizeof ks[0];
    for (int shape = 0; shape < 2; shape++) {
        size_t m = shape ? n * 64 : n;               /* shape 1: long runs, merged */
        row *r = make_rows(m);
        for (size_t i = 0; i < m; i++) r[i].key = shape ? ks[i / 64] : ks[i];
        sort_and_check(r, m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorted_untouched),
        cmocka_unit_test(test_long_runs_merged),
        cmocka_unit_test(test_many_runs_merged),
        cmocka_unit_test(test_overlapping_stretches),
        cmocka_unit_test(test_merge_beside_mappings),
        cmocka_unit_test(test_random_in_place),
        cmocka_unit_test(test_extreme_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
