/*
** The Pratt parser: precedence and associativity (checked by printing
** the tree back with the minimum of parentheses), `not in` sugar, node
** positions (every node knows its line and column), and syntax errors.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "rules/ast.h"

typedef struct fixture {
    tg_arena *arena;
    tg_diag diag;
    tg_rules_ctx ctx;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->arena = tg_arena_new();
    tg_diag_init(&f->diag);
    f->ctx = (tg_rules_ctx){.arena = f->arena, .diag = &f->diag};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tg_diag_clear(&f->diag);
    tg_arena_free(f->arena);
    free(f);
    return 0;
}

/* Parse at line 3, column 10 (as if after "  where: "). */
static tg_ast *parse(fixture *f, const char *text)
{
    tg_srcmap *map = tg_srcmap_flat(f->arena, NULL, text, 3, 10);
    return tg_parse_expr(&f->ctx, map);
}

static void roundtrip(fixture *f, const char *text, const char *expected)
{
    tg_ast *a = parse(f, text);
    if (!a) print_message("parse failed: %s\n", f->diag.n ? f->diag.msgs[0].text : "?");
    assert_non_null(a);
    const char *printed = tg_ast_text(f->arena, a);
    if (strcmp(printed, expected)) print_message("'%s' printed as '%s'\n", text, printed);
    assert_string_equal(printed, expected);
    /* the canonical text parses back to itself */
    assert_string_equal(tg_ast_text(f->arena, parse(f, printed)), expected);
}

static void test_precedence(void **state)
{
    fixture *f = *state;
    roundtrip(f, "a or b and c", "a or b and c");
    roundtrip(f, "(a or b) and c", "(a or b) and c");
    roundtrip(f, "a and (b or c)", "a and (b or c)");
    roundtrip(f, "not a and b", "not a and b");
    roundtrip(f, "not (a and b)", "not (a and b)");
    roundtrip(f, "x + y * z", "x + y * z");
    roundtrip(f, "(x + y) * z", "(x + y) * z");
    roundtrip(f, "x - (y - z)", "x - (y - z)");
    roundtrip(f, "x - y - z", "x - y - z");
    roundtrip(f, "x / y / z", "x / y / z");
    roundtrip(f, "-x * y", "-x * y");
    roundtrip(f, "-(x + y)", "-(x + y)");
    roundtrip(f, "a + 1 > b * 2 and c", "a + 1 > b * 2 and c");
    roundtrip(f, "((a))", "a");
    roundtrip(f, "count / trace.steady_iterations > 1", "count / trace.steady_iterations > 1");
    roundtrip(f, "p50(gpu_time)  >  baseline.p50*(1+params.min_change)",
              "p50(gpu_time) > baseline.p50 * (1 + params.min_change)");
    roundtrip(f, "kind in [\"HtoD\",\"DtoH\"]", "kind in [\"HtoD\", \"DtoH\"]");
    roundtrip(f, "x not in blocking_apis", "not x in blocking_apis");
    roundtrip(f, "name not matches \"^nccl\"", "not name matches \"^nccl\"");
    roundtrip(f, "bytes <= 64KB and duration >= 1.5ms", "bytes <= 64KB and duration >= 1.5ms");
    roundtrip(f, "ratio(api_sync) > 20%", "ratio(api_sync) > 20%");
    roundtrip(f, "iteration != null and not warmup", "iteration != null and not warmup");
    roundtrip(f, "count()", "count()");
    roundtrip(f, "name == 'say \"hi\"'", "name == \"say \\\"hi\\\"\"");
}

static void test_shape(void **state)
{
    fixture *f = *state;
    tg_ast *a = parse(f, "api_sync and not (kind == \"HtoD\" and bytes <= 64KB)");
    assert_non_null(a);
    assert_int_equal(a->kind, TG_N_AND);
    assert_int_equal(a->a->kind, TG_N_NAME);
    assert_int_equal(a->b->kind, TG_N_NOT);
    const tg_ast *inner = a->b->a;
    assert_int_equal(inner->kind, TG_N_AND);
    assert_int_equal(inner->a->kind, TG_N_EQ);
    assert_int_equal(inner->a->b->kind, TG_N_STRING);
    assert_string_equal(inner->a->b->name, "HtoD");
    assert_int_equal(inner->b->kind, TG_N_LE);
    assert_int_equal(inner->b->b->kind, TG_N_NUMBER);
    assert_int_equal(inner->b->b->ival, 64000);
    assert_int_equal(inner->b->b->unit, TG_UNIT_BYTES);
    /* positions: column 10 is offset 0 */
    assert_int_equal(a->pos.line, 3);
    assert_int_equal(a->pos.col, 10);
    assert_int_equal(a->b->pos.col, 10 + 13);            /* not */
    assert_int_equal(inner->pos.col, 10 + 18);            /* kind (the '(' is not a node) */
    assert_int_equal(inner->a->b->pos.col, 10 + 26);      /* "HtoD" */
    assert_int_equal(inner->b->pos.col, 10 + 37);         /* bytes */
    assert_int_equal(inner->b->b->pos.col, 10 + 46);      /* 64KB */
    tg_ast *c = parse(f, "params.min_gap");
    assert_int_equal(c->kind, TG_N_NAME);
    assert_string_equal(c->name, "params");
    assert_string_equal(c->member, "min_gap");
    tg_ast *call = parse(f, "p99(end - start)");
    assert_int_equal(call->kind, TG_N_CALL);
    assert_int_equal(call->n_items, 1);
    assert_int_equal(call->items[0]->kind, TG_N_SUB);
    assert_int_equal(call->items[0]->pos.col, 14);
    assert_int_equal(f->diag.n, 0);
}

static void expect_error(fixture *f, const char *text, int col, const char *msg)
{
    size_t before = f->diag.n;
    assert_null(parse(f, text));
    assert_int_equal(f->diag.n, before + 1);    /* one error per expression */
    const tg_diag_msg *m = &f->diag.msgs[before];
    if (m->pos.col != col || !strstr(m->text, msg))
        print_message("'%s': got %d:%d %s\n", text, m->pos.line, m->pos.col, m->text);
    assert_int_equal(m->pos.line, 3);
    assert_int_equal(m->pos.col, col);
    assert_non_null(strstr(m->text, msg));
}

static void test_errors(void **state)
{
    fixture *f = *state;
    expect_error(f, "", 10, "empty expression");
    expect_error(f, "a < b < c", 16, "do not chain");
    expect_error(f, "a == b != c", 17, "do not chain");
    expect_error(f, "a +", 13, "expected an expression");
    expect_error(f, "(a and b", 18, "expected ')'");
    expect_error(f, "a and b)", 17, "unbalanced ')'");
    expect_error(f, "a b", 12, "after a complete expression");
    expect_error(f, "f(a, b", 16, "expected ',' or ')'");
    expect_error(f, "[a, b", 15, "expected ',' or ']'");
    expect_error(f, "params.", 17, "expected a name after 'params.'");
    expect_error(f, "a.b.c", 13, "at most one dot");
    expect_error(f, "* a", 10, "expected an expression before '*'");
    expect_error(f, "a and or b", 16, "expected an expression");
    expect_error(f, "a in", 14, "expected an expression");
    char deep[1024];
    memset(deep, '(', 400);
    strcpy(deep + 400, "a");
    expect_error(f, deep, 10 + 200, "nested more than 200");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
