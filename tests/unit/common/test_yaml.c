/*
** The one YAML reader (engine/common/yaml.h): trees with positions, each
** limit refused with the caller's name for the file, duplicate keys found
** in n log n, nulls as YAML spells them.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/yaml.h"

static const tg_yaml_limits small = {
    .what = "test file", .max_scalar = 16, .max_depth = 3, .max_nodes = 50, .max_expanded = 20,
    .one_document = true,
};

/* Read text; returns the root (or NULL). The text is released at once:
** nodes own their values (positions and scalars stay valid). */
static const tg_ynode *read_text(tg_arena *a, tg_diag *d, const char *text, const tg_yaml_limits *lim, bool *ok)
{
    tg_src *src = tg_src_new(a, d, "t.yaml", strdup(text), strlen(text));
    assert_non_null(src);
    const tg_ynode *root = tg_yaml_read(a, d, src, lim, ok);
    tg_src_release(src);
    return root;
}

static void refused(const char *text, const tg_yaml_limits *lim, const char *want)
{
    tg_arena *a = tg_arena_new();
    tg_diag d;
    tg_diag_init(&d);
    bool ok;
    assert_null(read_text(a, &d, text, lim, &ok));
    assert_false(ok);
    assert_int_equal(d.status, TG_EUSAGE);
    if (!strstr(d.msgs[0].text, want)) print_message("got: %s\n", d.msgs[0].text);
    assert_non_null(strstr(d.msgs[0].text, want));
    tg_diag_clear(&d);
    tg_arena_free(a);
}

static void test_tree_and_positions(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_diag d;
    tg_diag_init(&d);
    bool ok;
    const tg_ynode *root = read_text(a, &d, "a: 1\nb: [x, ~]\nc: 'q'\n", &small, &ok);
    assert_true(ok);
    assert_non_null(root);
    assert_int_equal(root->kind, TG_Y_MAP);
    assert_int_equal(root->n, 3);
    const tg_ynode *b = tg_ymap_get(root, "b");
    assert_int_equal(b->kind, TG_Y_SEQ);
    assert_int_equal(b->pos.line, 2);
    assert_int_equal(b->pos.col, 4);
    assert_true(tg_yscalar_is(b->items[0], "x"));
    assert_true(tg_ynode_is_null(b->items[1]));
    assert_false(tg_ynode_is_null(tg_ymap_get(root, "c")));   /* quoted: a string */
    assert_string_equal(tg_ynode_kind_name(root), "a mapping");
    assert_int_equal(tg_ymap_duplicate(root), -1);
    tg_diag_clear(&d);
    tg_arena_free(a);
}

static void test_limits(void **state)
{
    (void)state;
    refused("a: [[[[1]]]]\n", &small, "YAML nested deeper than 3 levels; refusing the test file");
    refused("a: 12345678901234567890\n", &small, "a scalar of 20 bytes is more than the 16 bytes allowed");
    refused("a: &x [1, 2, 3, 4, 5]\nb: [*x, *x, *x, *x, *x]\n", &small, "YAML aliases expand to more than 20 nodes");
    refused("[1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1]\n",
            &small, "the test file holds more than 50 YAML nodes");
    refused("a: 1\n---\nb: 2\n", &small, "a test file holds one YAML document");
    refused("a: [1, 2\n", &small, "YAML syntax error");
    refused("a: *nope\n", &small, "alias *nope has no anchor");
}

/* Duplicate keys: the first key (in file order) that repeats an earlier
** one, found by sorting, so 100000 keys cost milliseconds. */
static void test_duplicates(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_diag d;
    tg_diag_init(&d);
    bool ok;
    const tg_ynode *root = read_text(a, &d, "x: 1\ny: 2\nz: 3\ny: 4\nx: 5\n", &small, &ok);
    assert_int_equal(tg_ymap_duplicate(root), 3);
    size_t n = 100000, len = 0;
    char *big = malloc(n * 16 + 32);
    for (size_t i = 0; i < n; i++) len += (size_t)sprintf(big + len, "k%zu: %zu\n", i, i);
    len += (size_t)sprintf(big + len, "k17: again\n");
    tg_yaml_limits roomy = small;
    roomy.max_nodes = 1000000;
    roomy.max_depth = 64;
    root = read_text(a, &d, big, &roomy, &ok);
    assert_true(ok);
    assert_int_equal(root->n, n + 1);
    assert_int_equal(tg_ymap_duplicate(root), (long)n);
    free(big);
    tg_diag_clear(&d);
    tg_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_positions),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
