/*
** The expression lexer: numbers scaled by their unit suffix (decimal KB,
** binary KiB, % as a fraction, GB/s a rate), operators and keyword operators from
** nodes.def, strings with escapes, and errors at the offending column.
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
    tg_lexer lx;
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

static void start(fixture *f, const char *text)
{
    tg_srcmap *map = tg_srcmap_flat(f->arena, NULL, text, 1, 1);
    tg_lex_init(&f->lx, &f->ctx, map);
}

static tg_token one(fixture *f, const char *text)
{
    start(f, text);
    tg_token t = tg_lex_next(&f->lx);
    assert_int_equal(tg_lex_next(&f->lx).kind, TG_TK_EOF);
    return t;
}

static void check_int(fixture *f, const char *text, int64_t v, tg_unit unit)
{
    tg_token t = one(f, text);
    assert_int_equal(t.kind, TG_TK_NUMBER);
    assert_true(t.is_int);
    assert_int_equal(t.ival, v);
    assert_int_equal(t.unit, unit);
}

static void check_float(fixture *f, const char *text, double v, tg_unit unit)
{
    tg_token t = one(f, text);
    assert_int_equal(t.kind, TG_TK_NUMBER);
    assert_false(t.is_int);
    assert_float_equal(t.num, v, 1e-12);
    assert_int_equal(t.unit, unit);
}

static void test_units(void **state)
{
    fixture *f = *state;
    check_int(f, "64KB", 64000, TG_UNIT_BYTES);
    check_int(f, "64KiB", 65536, TG_UNIT_BYTES);
    check_int(f, "16MiB", 16777216, TG_UNIT_BYTES);
    check_int(f, "16MB", 16000000, TG_UNIT_BYTES);
    check_int(f, "2GiB", 2147483648LL, TG_UNIT_BYTES);
    check_int(f, "3B", 3, TG_UNIT_BYTES);
    check_int(f, "500ms", 500000000, TG_UNIT_NS);
    check_int(f, "20us", 20000, TG_UNIT_NS);
    check_int(f, "3s", 3000000000LL, TG_UNIT_NS);
    check_int(f, "7ns", 7, TG_UNIT_NS);
    check_int(f, "2min", 120000000000LL, TG_UNIT_NS);
    check_int(f, "1.5ms", 1500000, TG_UNIT_NS);
    check_int(f, "0.5us", 500, TG_UNIT_NS);
    check_int(f, "42", 42, TG_UNIT_NONE);
    check_int(f, "1e3", 1000, TG_UNIT_NONE);
    check_float(f, "20%", 0.2, TG_UNIT_RATIO);
    check_float(f, "0.5%", 0.005, TG_UNIT_RATIO);
    check_float(f, "100%", 1.0, TG_UNIT_RATIO);
    check_float(f, "0.25", 0.25, TG_UNIT_NONE);
    check_float(f, "0.5ns", 0.5, TG_UNIT_NS);
    check_int(f, "10GB/s", 10000000000LL, TG_UNIT_RATE);
    check_int(f, "512B/s", 512, TG_UNIT_RATE);
    check_int(f, "1.5KB/s", 1500, TG_UNIT_RATE);
    check_float(f, "0.5B/s", 0.5, TG_UNIT_RATE);
    tg_token t = one(f, "64KB");
    assert_string_equal(tg_unit_suffixes[t.suffix].suffix, "KB");
    t = one(f, "2.5TB/s");
    assert_string_equal(tg_unit_suffixes[t.suffix].suffix, "TB/s");
    /* a size divided by a name stays a division */
    start(f, "64KB/steady");
    assert_int_equal(tg_lex_next(&f->lx).unit, TG_UNIT_BYTES);
    t = tg_lex_next(&f->lx);
    assert_int_equal(t.kind, TG_TK_OP);
    assert_int_equal(t.op, TG_N_DIV);
    assert_int_equal(tg_lex_next(&f->lx).kind, TG_TK_IDENT);
    assert_int_equal(f->diag.n, 0);
}

static void test_tokens(void **state)
{
    fixture *f = *state;
    start(f, "api_sync and not (kind == \"HtoD\") or x in [1, 2] matches startswith contains "
             "<= >= != < > + - * / . null true false");
    static const tg_tok_kind kinds[] = {
        TG_TK_IDENT, TG_TK_OP, TG_TK_NOT, TG_TK_LPAREN, TG_TK_IDENT, TG_TK_OP, TG_TK_STRING, TG_TK_RPAREN,
        TG_TK_OP, TG_TK_IDENT, TG_TK_OP, TG_TK_LBRACK, TG_TK_NUMBER, TG_TK_COMMA, TG_TK_NUMBER, TG_TK_RBRACK,
        TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_OP,
        TG_TK_OP, TG_TK_OP, TG_TK_OP, TG_TK_DOT, TG_TK_NULL, TG_TK_TRUE, TG_TK_FALSE, TG_TK_EOF};
    static const tg_node_kind ops[] = {TG_N_AND, TG_N_EQ, TG_N_OR, TG_N_IN, TG_N_MATCHES, TG_N_STARTSWITH,
                                       TG_N_CONTAINS, TG_N_LE, TG_N_GE, TG_N_NE, TG_N_LT, TG_N_GT, TG_N_ADD,
                                       TG_N_SUB, TG_N_MUL, TG_N_DIV};
    size_t op = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        tg_token t = tg_lex_next(&f->lx);
        assert_int_equal(t.kind, kinds[i]);
        if (t.kind == TG_TK_OP) assert_int_equal(t.op, ops[op++]);
        if (i == 0) assert_string_equal(t.str, "api_sync");
        if (i == 6) {
            assert_string_equal(t.str, "HtoD");
            assert_int_equal(t.off, 26);
            assert_int_equal(t.len, 6);
        }
    }
    assert_int_equal(op, sizeof ops / sizeof *ops);
    assert_int_equal(f->diag.n, 0);
}

static void test_strings(void **state)
{
    fixture *f = *state;
    tg_token t = one(f, "'it\\'s \\\"x\\\" \\d+\\.'");
    assert_int_equal(t.kind, TG_TK_STRING);
    /* known escapes unescaped, unknown ones kept for regexes */
    assert_string_equal(t.str, "it's \"x\" \\d+\\.");
    t = one(f, "\"a\\tb\\nc\"");
    assert_string_equal(t.str, "a\tb\nc");
}

static void expect_error(fixture *f, const char *text, int col, const char *msg)
{
    start(f, text);
    tg_token t;
    do t = tg_lex_next(&f->lx);
    while (t.kind != TG_TK_EOF && t.kind != TG_TK_ERROR);
    assert_int_equal(t.kind, TG_TK_ERROR);
    assert_true(f->diag.n >= 1);
    const tg_diag_msg *m = &f->diag.msgs[f->diag.n - 1];
    assert_int_equal(m->pos.col, col);
    if (!strstr(m->text, msg)) print_message("message: %s\n", m->text);
    assert_non_null(strstr(m->text, msg));
    /* after an error the lexer stays stopped */
    assert_int_equal(tg_lex_next(&f->lx).kind, TG_TK_ERROR);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    expect_error(f, "bytes > 64kb", 11, "did you mean 'KB'");
    expect_error(f, "x > 5sec", 6, "unknown unit 'sec'");
    expect_error(f, "a = b", 3, "'=='");
    expect_error(f, "a || b", 3, "use 'or'");
    expect_error(f, "!a", 1, "'not'");
    expect_error(f, "name == \"abc", 9, "unterminated string");
    expect_error(f, "a # b", 3, "unexpected character '#'");
    expect_error(f, "{count}", 1, "placeholders");
}

static void test_number_literal(void **state)
{
    (void)state;
    double num;
    bool is_int;
    int64_t ival;
    tg_unit unit;
    assert_true(tg_lex_number_literal("-200ms", &num, &is_int, &ival, &unit));
    assert_true(is_int);
    assert_int_equal(ival, -200000000);
    assert_int_equal(unit, TG_UNIT_NS);
    assert_true(tg_lex_number_literal(" 64KB ", &num, &is_int, &ival, &unit));
    assert_int_equal(ival, 64000);
    assert_true(tg_lex_number_literal("0.5%", &num, &is_int, &ival, &unit));
    assert_false(is_int);
    assert_float_equal(num, 0.005, 1e-15);
    assert_int_equal(unit, TG_UNIT_RATIO);
    assert_false(tg_lex_number_literal("abc", &num, &is_int, &ival, &unit));
    assert_false(tg_lex_number_literal("12xyz", &num, &is_int, &ival, &unit));
    assert_false(tg_lex_number_literal("12 ms", &num, &is_int, &ival, &unit));
    assert_false(tg_lex_number_literal("", &num, &is_int, &ival, &unit));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test(test_number_literal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
