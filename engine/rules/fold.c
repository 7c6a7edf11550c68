/*
** Operations on constant values: arithmetic, comparison and list
** membership on tg_value. The compiler folds constant sub-expressions with
** them (64KB * 2, params.min_gap / 2), and the evaluator uses the same
** functions for the aggregate context (fail_when, message, metric), so a
** folded expression and an evaluated one can never disagree.
*/
#include "expr.h"

#include <math.h>
#include <string.h>

double tg_value_num(tg_value v)
{
    switch (v.type) {
    case TG_TY_INT: return (double)v.u.i;
    case TG_TY_FLOAT: return v.u.f;
    case TG_TY_BOOL: return v.u.b ? 1.0 : 0.0;
    default: return NAN;
    }
}

bool tg_value_truthy(tg_value v)
{
    switch (v.type) {
    case TG_TY_BOOL: return v.u.b;
    case TG_TY_INT: return v.u.i != 0;
    case TG_TY_FLOAT: return v.u.f != 0 && !isnan(v.u.f);
    default: return false;
    }
}

tg_value tg_value_arith(tg_node_kind op, tg_value a, tg_value b, tg_unit unit)
{
    bool num_a = a.type == TG_TY_INT || a.type == TG_TY_FLOAT;
    bool num_b = b.type == TG_TY_INT || b.type == TG_TY_FLOAT;
    if (!num_a || !num_b) return tg_null();
    if (a.type == TG_TY_INT && b.type == TG_TY_INT && op != TG_N_DIV) {
        int64_t r;
        bool overflow;
        switch (op) {
        case TG_N_ADD: overflow = __builtin_add_overflow(a.u.i, b.u.i, &r); break;
        case TG_N_SUB: overflow = __builtin_sub_overflow(a.u.i, b.u.i, &r); break;
        case TG_N_MUL: overflow = __builtin_mul_overflow(a.u.i, b.u.i, &r); break;
        default: TG_UNREACHABLE(); return tg_null();   /* op is arithmetic */
        }
        if (!overflow && r != TG_NULL_I64) return tg_int(r, unit);
    }
    double x = tg_value_num(a), y = tg_value_num(b), r;
    switch (op) {
    case TG_N_ADD: r = x + y; break;
    case TG_N_SUB: r = x - y; break;
    case TG_N_MUL: r = x * y; break;
    case TG_N_DIV:
        if (y == 0) return tg_null();
        r = x / y;
        break;
    default: TG_UNREACHABLE(); return tg_null();
    }
    if (isnan(r)) return tg_null();
    return tg_float(r, unit);
}

int tg_num_order(double x, double y, bool *ok)
{
    *ok = !isnan(x) && !isnan(y);
    return (x > y) - (x < y);
}

bool tg_cmp_holds(tg_node_kind op, int c)
{
    switch (op) {
    case TG_N_EQ: return c == 0;
    case TG_N_NE: return c != 0;
    case TG_N_LT: return c < 0;
    case TG_N_LE: return c <= 0;
    case TG_N_GT: return c > 0;
    case TG_N_GE: return c >= 0;
    default: TG_UNREACHABLE(); return false;   /* op is a comparison */
    }
}

bool tg_value_compare(tg_node_kind op, tg_value a, tg_value b)
{
    if (a.type == TG_TY_NULL || b.type == TG_TY_NULL) return false;
    bool text_op = op == TG_N_STARTSWITH || op == TG_N_CONTAINS;
    if (text_op && (a.type != TG_TY_STRING || b.type != TG_TY_STRING)) return false;
    int c;
    if (a.type == TG_TY_STRING && b.type == TG_TY_STRING) {
        if (!a.u.s || !b.u.s) return false;
        if (op == TG_N_STARTSWITH) return strncmp(a.u.s, b.u.s, strlen(b.u.s)) == 0;
        if (op == TG_N_CONTAINS) return strstr(a.u.s, b.u.s) != NULL;
        c = strcmp(a.u.s, b.u.s);
    } else if (a.type == TG_TY_BOOL && b.type == TG_TY_BOOL) {
        c = (int)a.u.b - (int)b.u.b;
    } else if (a.type == TG_TY_INT && b.type == TG_TY_INT) {
        c = (a.u.i > b.u.i) - (a.u.i < b.u.i);
    } else {
        if (a.type == TG_TY_STRING || b.type == TG_TY_STRING) return false;
        bool ok;
        c = tg_num_order(tg_value_num(a), tg_value_num(b), &ok);
        if (!ok) return false;
    }
    return tg_cmp_holds(op, c);
}

bool tg_value_in(tg_value a, const tg_value *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tg_value_compare(TG_N_EQ, a, list[i])) return true;
    return false;
}
