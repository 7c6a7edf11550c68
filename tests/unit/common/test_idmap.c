/*
** The one int64 -> int32 map (engine/common/idmap.h): dense keys, sparse
** and negative keys (the move from the dense array to the hash keeps every
** entry), the null sentinel as a key, interning in first-seen order,
** iteration over every entry.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/idmap.h"

static void test_dense_then_hash(void **state)
{
    (void)state;
    tg_idmap m = {0};
    assert_int_equal(tg_idmap_get(&m, 5), -1);
    for (int64_t k = 0; k < 5000; k++) assert_true(tg_idmap_put(&m, k, (int32_t)(k * 2)));
    assert_non_null(m.dense);
    assert_int_equal(tg_idmap_count(&m), 5000);
    /* a far key moves everything to the hash */
    assert_true(tg_idmap_put(&m, (int64_t)1 << 40, 7));
    assert_true(tg_idmap_put(&m, -3, 8));
    assert_true(tg_idmap_put(&m, TG_NULL_I64, 9));
    assert_null(m.dense);
    for (int64_t k = 0; k < 5000; k++) assert_int_equal(tg_idmap_get(&m, k), k * 2);
    assert_int_equal(tg_idmap_get(&m, (int64_t)1 << 40), 7);
    assert_int_equal(tg_idmap_get(&m, -3), 8);
    assert_int_equal(tg_idmap_get(&m, TG_NULL_I64), 9);
    assert_int_equal(tg_idmap_get(&m, 5000), -1);
    assert_true(tg_idmap_put(&m, 17, 1));   /* overwrite */
    assert_int_equal(tg_idmap_get(&m, 17), 1);
    assert_int_equal(tg_idmap_count(&m), 5003);
    size_t pos = 0, seen = 0;
    int64_t key;
    int32_t val;
    while (tg_idmap_next(&m, &pos, &key, &val)) {
        assert_int_equal(tg_idmap_get(&m, key), val);
        seen++;
    }
    assert_int_equal(seen, 5003);
    tg_idmap_free(&m);
}

static void test_intern(void **state)
{
    (void)state;
    tg_idmap m = {0};
    assert_int_equal(tg_idmap_intern(&m, tg_key2(4, 100)), 0);
    assert_int_equal(tg_idmap_intern(&m, tg_key2(4, 101)), 1);
    assert_int_equal(tg_idmap_intern(&m, tg_key2(4, 100)), 0);
    assert_int_equal(tg_idmap_intern(&m, 3), 2);
    assert_int_equal(tg_idmap_count(&m), 3);
    /* keys spaced by 2^32 (pairs with one part fixed) stay distinct */
    for (int32_t a = 0; a < 1000; a++) assert_int_equal(tg_idmap_intern(&m, tg_key2(a, 7)), a == 0 ? 3 : 3 + a);
    tg_idmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_then_hash),
        cmocka_unit_test(test_intern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
