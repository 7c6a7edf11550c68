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

#include <stdio.h>
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

/* Every production of the grammar heading parse.c (and docs/rules.md),
** one at a time, and the readings its comment promises. */
static void test_grammar(void **state)
{
    fixture *f = *state;
    /* disjunction, conjunction: left-associative, and binds tighter */
    roundtrip(f, "a or b or c", "a or b or c");
    assert_int_equal(parse(f, "a or b or c")->a->kind, TG_N_OR);
    assert_int_equal(parse(f, "a or b and c")->kind, TG_N_OR);
    /* comparison: every comparator, with and without not */
    const char *cmps[] = {"==", "!=", "<", "<=", ">", ">=", "in", "matches", "startswith", "contains"};
    for (size_t i = 0; i < sizeof cmps / sizeof *cmps; i++) {
        char text[64], negated[64], canon[64];
        snprintf(text, sizeof text, "x %s y", cmps[i]);
        roundtrip(f, text, text);
        if (i < 6) continue;
        snprintf(negated, sizeof negated, "x not %s y", cmps[i]);
        snprintf(canon, sizeof canon, "not x %s y", cmps[i]);
        roundtrip(f, negated, canon);
        assert_int_equal(parse(f, negated)->kind, TG_N_NOT);
    }
    /* sum and product: left-associative, * / over + - */
    assert_int_equal(parse(f, "a - b + c")->kind, TG_N_ADD);
    assert_int_equal(parse(f, "a / b * c")->kind, TG_N_MUL);
    assert_int_equal(parse(f, "a + b * c")->kind, TG_N_ADD);
    /* prefix: not takes the longest comparison after it, wherever it is */
    tg_ast *n = parse(f, "not a == b and c");
    assert_int_equal(n->kind, TG_N_AND);
    assert_int_equal(n->a->kind, TG_N_NOT);
    assert_int_equal(n->a->a->kind, TG_N_EQ);
    n = parse(f, "a + not b < c");
    assert_int_equal(n->kind, TG_N_ADD);
    assert_int_equal(n->b->kind, TG_N_NOT);
    assert_int_equal(n->b->a->kind, TG_N_LT);
    roundtrip(f, "a + not b < c", "a + (not b < c)");
    roundtrip(f, "not not a", "not not a");
    n = parse(f, "- -x * y");
    assert_int_equal(n->kind, TG_N_MUL);
    assert_int_equal(n->a->kind, TG_N_NEG);
    assert_int_equal(n->a->a->kind, TG_N_NEG);
    /* primary: each alternative */
    assert_int_equal(parse(f, "12")->kind, TG_N_NUMBER);
    assert_int_equal(parse(f, "'s'")->kind, TG_N_STRING);
    assert_int_equal(parse(f, "null")->kind, TG_N_NULL_LIT);
    assert_int_equal(parse(f, "true")->kind, TG_N_BOOL_LIT);
    assert_int_equal(parse(f, "false")->kind, TG_N_BOOL_LIT);
    assert_int_equal(parse(f, "[]")->kind, TG_N_LIST);
    assert_int_equal(parse(f, "[1, 2, 3]")->n_items, 3);
    assert_int_equal(parse(f, "f()")->kind, TG_N_CALL);
    assert_int_equal(parse(f, "f (a, b or c)")->n_items, 2);
    assert_int_equal(parse(f, "_x1")->kind, TG_N_NAME);
    assert_string_equal(parse(f, "trace.duration")->member, "duration");
    assert_int_equal(parse(f, "(a or b)")->kind, TG_N_OR);
    /* number: digits, fraction, exponent, unit */
    n = parse(f, "1.5e3ms");
    assert_true(n->num == 1.5e9 && n->unit == TG_UNIT_NS);
    n = parse(f, "2E-1");
    assert_true(n->num == 0.2 && n->unit == TG_UNIT_NONE);
    assert_true(parse(f, "20%")->num == 0.2);
    /* string: both quotes, the decoded escapes and the kept ones */
    assert_string_equal(parse(f, "'a\\'b\\\"c'")->name, "a'b\"c");
    assert_string_equal(parse(f, "\"\\n\\t\\\\\"")->name, "\n\t\\");
    assert_string_equal(parse(f, "\"\\d\\.\"")->name, "\\d\\.");
    assert_int_equal(f->diag.n, 0);
}

/* What the grammar does not produce is a syntax error. */
static void test_grammar_rejects(void **state)
{
    fixture *f = *state;
    const char *bad[] = {
        "a < b > c",          /* comparisons do not chain */
        "a not == b",         /* not only before in, matches, startswith, contains */
        "[1, 2,]",            /* no trailing comma */
        "f(a,)",
        "a.b(c)",             /* a call's name has no dot */
        "a.b.c",              /* one dot at most */
        "trace.in",           /* a keyword is no identifier */
        "in",
        ".5",                 /* digits before the point */
        "5 ms",               /* a unit is glued to its number */
        "1e",                 /* an exponent needs digits */
        "a = b",
        "'open",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t before = f->diag.n;
        if (parse(f, bad[i])) print_message("'%s' parsed\n", bad[i]);
        assert_null(parse(f, bad[i]));
        assert_true(f->diag.n > before);
    }
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
        cmocka_unit_test_setup_teardown(test_grammar, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grammar_rejects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
