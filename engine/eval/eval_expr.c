/*
** Evaluating compiled expression trees. Row context (where, samples,
** aggregate arguments) reads fields straight out of the row struct at the
** offsets of fields.def and compares strings as pool ids: a literal is
** looked up in the trace's string pool once per evaluation (absent: no row
** can equal it), and regex / startswith / contains / `in` results are
** memoised per string id, so ten million rows cost ten million lookups,
** not ten million regex matches.
**
** Null semantics: a comparison with null is false, `x == null` tests for
** null, arithmetic with null gives null, a null condition counts as false.
** The aggregate context (fail_when, message, metric) runs once per rule on
** tg_value with the constant operations of fold.c, so folding at compile
** time and evaluating at run time agree.
*/
#include "eval_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tg_rv_num(tg_rv v)
{
    switch (v.t) {
    case TG_RV_INT: return (double)v.u.i;
    case TG_RV_FLOAT: return v.u.f;
    case TG_RV_BOOL: return v.u.b ? 1.0 : 0.0;
    default: return NAN;
    }
}

static tg_rv rv_null(void) { return (tg_rv){.t = TG_RV_NULL}; }

static tg_rv read_field(const tg_rule_state *st, const char *row, const tg_field_def *f)
{
    const char *p = row + f->offset;
    tg_rv v = {.t = TG_RV_NULL};
    switch (f->store) {
    case TG_STORE_SPAN: {
        int64_t x = tg_field_computed(st->m, row, f);
        if (x == TG_NULL_I64) return v;
        v.t = TG_RV_INT;
        v.u.i = x;
        break;
    }
    case TG_STORE_SITE: case TG_STORE_SITE_MODULE: {
        int32_t sid = tg_field_site(st->m, row, f);
        if (sid < 0) return v;
        v.t = TG_RV_SID;
        v.u.sid = sid;
        return v;
    }
    case TG_STORE_I64: {
        int64_t x;
        memcpy(&x, p, 8);
        if (x == TG_NULL_I64) return v;
        v.t = TG_RV_INT;
        v.u.i = x;
        break;
    }
    case TG_STORE_I32: {
        int32_t x;
        memcpy(&x, p, 4);
        if (f->type == TG_TY_STRING) {
            if (x < 0) return v;
            v.t = TG_RV_SID;
            v.u.sid = x;
            return v;
        }
        if (f->nullable && x == -1) return v;
        v.t = TG_RV_INT;
        v.u.i = x;
        break;
    }
    case TG_STORE_I8: {
        int8_t x;
        memcpy(&x, p, 1);
        if (x < 0) return v;
        v.t = TG_RV_INT;
        v.u.i = x;
        break;
    }
    case TG_STORE_F64: {
        double x;
        memcpy(&x, p, 8);
        if (isnan(x)) return v;
        v.t = TG_RV_FLOAT;
        v.u.f = x;
        return v;
    }
    }
    if (f->type == TG_TY_BOOL) {
        v.t = TG_RV_BOOL;
        v.u.b = v.u.i != 0;
    }
    return v;
}

static tg_rv from_value(tg_value k)
{
    tg_rv v = {.t = TG_RV_NULL};
    switch (k.type) {
    case TG_TY_BOOL: v.t = TG_RV_BOOL; v.u.b = k.u.b; break;
    case TG_TY_INT: v.t = TG_RV_INT; v.u.i = k.u.i; break;
    case TG_TY_FLOAT: v.t = TG_RV_FLOAT; v.u.f = k.u.f; break;
    case TG_TY_STRING: v.t = TG_RV_STR; v.u.s = k.u.s; break;
    default: break;
    }
    return v;
}

tg_value tg_eval_baseline_value(const tg_rule_state *st, tg_baseline_stat stat, tg_unit unit)
{
    const tg_baseline_cmp *b = st->baseline;
    if (!b || !b->present) return tg_null();
    double x;
    switch (stat) {
    case TG_BSTAT_VALUE: case TG_BSTAT_P50: case TG_BSTAT_MEDIAN: x = b->value; break;
    case TG_BSTAT_CURRENT: x = b->current; break;
    case TG_BSTAT_CHANGE: x = b->change; break;
    case TG_BSTAT_P_VALUE: x = b->p_value; break;
    case TG_BSTAT_N: return tg_int((int64_t)b->n_baseline, TG_UNIT_NONE);
    case TG_BSTAT_BAND_LO: x = b->band_lo; break;
    case TG_BSTAT_BAND_HI: x = b->band_hi; break;
    default: TG_UNREACHABLE(); return tg_null();
    }
    return isnan(x) ? tg_null() : tg_float(x, unit);
}

static const char *rv_string(const tg_rule_state *st, tg_rv v)
{
    if (v.t == TG_RV_STR) return v.u.s;
    if (v.t == TG_RV_SID) return tg_strpool_get(st->m->trace->strings, v.u.sid);
    return NULL;
}

/* Three-way comparison of two non-null values; false in *ok when they are
** not comparable. */
static int rv_cmp(const tg_rule_state *st, const tg_expr *e, tg_rv a, tg_rv b, bool *ok)
{
    *ok = true;
    if (a.t == TG_RV_INT && b.t == TG_RV_INT) return (a.u.i > b.u.i) - (a.u.i < b.u.i);
    if (a.t == TG_RV_SID && b.t == TG_RV_SID) {
        if (a.u.sid == b.u.sid) return 0;
        if (e->op == TG_N_EQ || e->op == TG_N_NE) return 1;
    }
    /* against a constant already in the pool, ids compare; a constant
    ** absent when the rule started may be interned since: compare text */
    bool by_id = e->slot >= 0 && st->slots[e->slot].sid >= 0 && (e->op == TG_N_EQ || e->op == TG_N_NE);
    if (by_id && a.t == TG_RV_SID && b.t == TG_RV_STR) return a.u.sid == st->slots[e->slot].sid ? 0 : 1;
    if (by_id && a.t == TG_RV_STR && b.t == TG_RV_SID) return b.u.sid == st->slots[e->slot].sid ? 0 : 1;
    const char *sa = rv_string(st, a), *sb = rv_string(st, b);
    if (sa && sb) return strcmp(sa, sb);
    if (sa || sb) {
        *ok = false;
        return 0;
    }
    return tg_num_order(tg_rv_num(a), tg_rv_num(b), ok);
}

/* `matches`: 1, 0, or -1 when the matcher hit a limit, which is
** remembered (the rule will error: the test is never decided). */
static int regex_test(tg_rule_state *st, const tg_expr *e, const char *s)
{
    size_t len = strlen(s);
    int m = tg_regex_match(e->re, s, len, &st->regex_budget);
    if (m < 0 && !st->regex_limit) {
        st->regex_limit = e;
        st->regex_limit_len = len;
    }
    return m;
}

/* String predicate of node e on pool id sid, memoised (not when the
** matcher hit a limit). */
static bool string_test(tg_rule_state *st, const tg_expr *e, int32_t sid, const char *s)
{
    const tg_slot *slot = e->slot >= 0 ? &st->slots[e->slot] : NULL;
    /* ids interned after the memo was sized (names of a streamed table) are
    ** tested without it */
    int8_t *memo = slot && sid >= 0 && sid < slot->n_memo ? slot->memo : NULL;
    if (memo && memo[sid]) return memo[sid] == 2;
    bool r;
    if (!s) {
        r = false;
    } else if (e->op == TG_N_MATCHES) {
        int m = regex_test(st, e, s);
        r = m > 0;
        if (m < 0) memo = NULL;
    } else if (e->op == TG_N_IN) {
        r = tg_value_in(tg_str(s), e->list, e->n_list);
    } else {
        r = tg_value_compare(e->op, tg_str(s), e->b->k);
    }
    if (memo) memo[sid] = r ? 2 : 1;
    return r;
}

/* A row value read as a condition: a null counts as false. */
static bool rv_truthy(tg_rv v) { return v.t == TG_RV_BOOL ? v.u.b : (v.t == TG_RV_INT ? v.u.i != 0 : false); }

static tg_rv row_value_raw(tg_rule_state *st, const char *row, const tg_expr *e);
static bool row_test_raw(tg_rule_state *st, const char *row, const tg_expr *e);

/* A shared macro tree (expr.h, `memo`) is computed once per evaluation:
** its later uses in the same row read the kept value. */
static tg_rv row_memo(tg_rule_state *st, const char *row, const tg_expr *e)
{
    tg_memo *m = &st->memos[e->memo - 1];
    if (m->gen != st->memo_gen) {
        m->rv = row_value_raw(st, row, e);
        m->gen = st->memo_gen;
    }
    return m->rv;
}

static tg_rv row_value(tg_rule_state *st, const char *row, const tg_expr *e)
{
    return e->memo && st->memos ? row_memo(st, row, e) : row_value_raw(st, row, e);
}

static bool row_test(tg_rule_state *st, const char *row, const tg_expr *e)
{
    return e->memo && st->memos ? rv_truthy(row_memo(st, row, e)) : row_test_raw(st, row, e);
}

static bool row_test_raw(tg_rule_state *st, const char *row, const tg_expr *e)
{
    switch (e->op) {
    case TG_N_AND: return row_test(st, row, e->a) && row_test(st, row, e->b);
    case TG_N_OR: return row_test(st, row, e->a) || row_test(st, row, e->b);
    case TG_N_NOT: return !row_test(st, row, e->a);
    case TG_N_IS_NULL: return row_value(st, row, e->a).t == TG_RV_NULL;
    case TG_N_NOT_NULL: return row_value(st, row, e->a).t != TG_RV_NULL;
    case TG_N_EQ: case TG_N_NE: case TG_N_LT: case TG_N_LE: case TG_N_GT: case TG_N_GE: {
        tg_rv a = row_value(st, row, e->a);
        if (a.t == TG_RV_NULL) return false;
        tg_rv b = row_value(st, row, e->b);
        if (b.t == TG_RV_NULL) return false;
        bool ok;
        int c = rv_cmp(st, e, a, b, &ok);
        return ok && tg_cmp_holds(e->op, c);
    }
    case TG_N_IN: case TG_N_MATCHES: case TG_N_STARTSWITH: case TG_N_CONTAINS: {
        tg_rv a = row_value(st, row, e->a);
        if (a.t == TG_RV_NULL) return false;
        if (a.t == TG_RV_SID || a.t == TG_RV_STR)
            return string_test(st, e, a.t == TG_RV_SID ? a.u.sid : -1, rv_string(st, a));
        if (e->op != TG_N_IN) return false;
        tg_value x = a.t == TG_RV_INT ? tg_int(a.u.i, TG_UNIT_NONE) : tg_float(tg_rv_num(a), TG_UNIT_NONE);
        return tg_value_in(x, e->list, e->n_list);
    }
    default:
        return rv_truthy(row_value_raw(st, row, e));
    }
}

static tg_value to_value(tg_rv v)
{
    switch (v.t) {
    case TG_RV_INT: return tg_int(v.u.i, TG_UNIT_NONE);
    case TG_RV_FLOAT: return tg_float(v.u.f, TG_UNIT_NONE);
    case TG_RV_BOOL: return tg_bool(v.u.b);
    default: return tg_null();
    }
}

/* Row arithmetic is fold.c's tg_value_arith, so a where clause computes
** exactly what constant folding and the aggregate context compute. */
static tg_rv arith(tg_node_kind op, tg_rv a, tg_rv b)
{
    return from_value(tg_value_arith(op, to_value(a), to_value(b), TG_UNIT_NONE));
}

/* device.FIELD: the row's device looked up in the device source (sorted
** by id); null when the row names no device the model knows. */
static tg_rv read_device(tg_rule_state *st, const char *row, const tg_expr *e)
{
    tg_rv id = row_value(st, row, e->a);
    if (id.t != TG_RV_INT) return rv_null();
    const tg_device *d = st->m->devices;
    size_t lo = 0, hi = st->m->n_devices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d[mid].device < id.u.i) lo = mid + 1;
        else hi = mid;
    }
    if (lo == st->m->n_devices || d[lo].device != id.u.i) return rv_null();
    return read_field(st, (const char *)&d[lo], e->field);
}

static tg_rv row_value_raw(tg_rule_state *st, const char *row, const tg_expr *e)
{
    switch (e->op) {
    case TG_N_FIELD: return read_field(st, row, e->field);
    case TG_N_CONST: return from_value(e->k);
    case TG_N_TRACE_REF: return read_field(st, (const char *)&st->m->facts, e->field);
    case TG_N_DEVICE_REF: return read_device(st, row, e);
    case TG_N_BASELINE: return from_value(tg_eval_baseline_value(st, e->stat, e->unit));
    case TG_N_ADD: case TG_N_SUB: case TG_N_MUL: case TG_N_DIV:
        return arith(e->op, row_value(st, row, e->a), row_value(st, row, e->b));
    case TG_N_NEG: {
        tg_rv a = row_value(st, row, e->a);
        if (a.t == TG_RV_INT && a.u.i != INT64_MIN) a.u.i = -a.u.i;
        else if (a.t == TG_RV_INT) a = (tg_rv){.t = TG_RV_FLOAT, .u.f = -(double)a.u.i};
        else if (a.t == TG_RV_FLOAT) a.u.f = -a.u.f;
        return a;
    }
    case TG_N_AGGREGATE:
        TG_UNREACHABLE();   /* the compiler keeps aggregates out of row context */
        return rv_null();
    default:
        return (tg_rv){.t = TG_RV_BOOL, .u.b = row_test_raw(st, row, e)};
    }
}

/* Each call from outside is a new evaluation: the memo of shared trees
** starts afresh, so a row never reads the value another row left. */
bool tg_eval_row_test(tg_rule_state *st, const char *row, const tg_expr *e)
{
    st->memo_gen++;
    return row_test(st, row, e);
}

tg_rv tg_eval_row(tg_rule_state *st, const char *row, const tg_expr *e)
{
    st->memo_gen++;
    return row_value(st, row, e);
}

/* ------------------------------------------------------------ aggregates */

static tg_value agg_value_raw(tg_rule_state *st, const tg_value *aggs, const tg_expr *e);

static tg_value agg_value(tg_rule_state *st, const tg_value *aggs, const tg_expr *e)
{
    if (!e->memo || !st->memos) return agg_value_raw(st, aggs, e);
    tg_memo *m = &st->memos[e->memo - 1];
    if (m->gen != st->memo_gen) {
        m->v = agg_value_raw(st, aggs, e);
        m->gen = st->memo_gen;
    }
    return m->v;
}


static tg_value agg_value_raw(tg_rule_state *st, const tg_value *aggs, const tg_expr *e)
{
    switch (e->op) {
    case TG_N_CONST: return e->k;
    case TG_N_AGGREGATE: return aggs[e->agg];
    case TG_N_BASELINE: return tg_eval_baseline_value(st, e->stat, e->unit);
    case TG_N_TRACE_REF: {
        tg_source_view v = tg_model_source(st->m, TG_SRC_TRACE);
        return tg_field_get(st->m, &v, e->field, 0);
    }
    case TG_N_AND: return tg_bool(tg_value_truthy(agg_value(st, aggs, e->a)) &&
                                  tg_value_truthy(agg_value(st, aggs, e->b)));
    case TG_N_OR: return tg_bool(tg_value_truthy(agg_value(st, aggs, e->a)) ||
                                 tg_value_truthy(agg_value(st, aggs, e->b)));
    case TG_N_NOT: return tg_bool(!tg_value_truthy(agg_value(st, aggs, e->a)));
    case TG_N_IS_NULL: return tg_bool(agg_value(st, aggs, e->a).type == TG_TY_NULL);
    case TG_N_NOT_NULL: return tg_bool(agg_value(st, aggs, e->a).type != TG_TY_NULL);
    case TG_N_NEG: return tg_value_arith(TG_N_SUB, tg_int(0, e->unit), agg_value(st, aggs, e->a), e->unit);
    case TG_N_ADD: case TG_N_SUB: case TG_N_MUL: case TG_N_DIV:
        return tg_value_arith(e->op, agg_value(st, aggs, e->a), agg_value(st, aggs, e->b), e->unit);
    case TG_N_IN: {
        tg_value a = agg_value(st, aggs, e->a);
        return tg_bool(a.type != TG_TY_NULL && tg_value_in(a, e->list, e->n_list));
    }
    case TG_N_MATCHES: {
        tg_value a = agg_value(st, aggs, e->a);
        return tg_bool(a.type == TG_TY_STRING && a.u.s && regex_test(st, e, a.u.s) > 0);
    }
    case TG_N_FIELD:
        TG_UNREACHABLE();   /* fields live inside aggregates */
        return tg_null();
    default:
        if (tg_node_classes[e->op] == TG_NC_CMP)
            return tg_bool(tg_value_compare(e->op, agg_value(st, aggs, e->a), agg_value(st, aggs, e->b)));
        TG_UNREACHABLE();   /* a node the compiler does not put in aggregate context */
        return tg_null();
    }
}

tg_value tg_eval_agg(tg_rule_state *st, const tg_value *aggs, const tg_expr *e)
{
    st->memo_gen++;
    return agg_value(st, aggs, e);
}

/* ------------------------------------------------------------ scratch */

static bool init_node(tg_rule_state *st, const tg_expr *e, int32_t n_strings)
{
    if (!e) return true;
    if (e->slot >= 0) {
        tg_slot *s = &st->slots[e->slot];
        const tg_expr *k = e->b && e->b->op == TG_N_CONST ? e->b : e->a && e->a->op == TG_N_CONST ? e->a : NULL;
        if ((e->op == TG_N_EQ || e->op == TG_N_NE) && k && k->k.type == TG_TY_STRING) {
            s->sid = tg_strpool_find(st->m->trace->strings, k->k.u.s, strlen(k->k.u.s));
        } else if (!s->memo && n_strings > 0) {
            s->memo = calloc((size_t)n_strings, 1);
            if (!s->memo) return false;
            s->n_memo = n_strings;
        }
    }
    return init_node(st, e->a, n_strings) && init_node(st, e->b, n_strings);
}

bool tg_eval_slots_init(tg_rule_state *st)
{
    const tg_rule *r = st->rule;
    st->regex_budget = TG_REGEX_STEP_BUDGET;
    if (r->n_memos > 0 && !(st->memos = calloc((size_t)r->n_memos, sizeof *st->memos))) return false;
    if (r->n_slots == 0) return true;
    st->slots = calloc((size_t)r->n_slots, sizeof *st->slots);
    if (!st->slots) return false;
    for (int i = 0; i < r->n_slots; i++) st->slots[i].sid = -1;
    int32_t n = tg_strpool_count(st->m->trace->strings);
    bool ok = init_node(st, r->where, n) && init_node(st, r->samples, n);
    for (size_t i = 0; ok && i < r->n_aggs; i++) ok = init_node(st, r->aggs[i].arg, n);
    return ok;
}

void tg_eval_slots_free(tg_rule_state *st)
{
    for (int i = 0; st->slots && i < st->rule->n_slots; i++) free(st->slots[i].memo);
    free(st->slots);
    st->slots = NULL;
    free(st->memos);
    st->memos = NULL;
}
