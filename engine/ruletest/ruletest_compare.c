/*
** The comparer of rule tests: a case's expectations against its rule's
** result, as a list of differences (status, count, each expected value,
** the message, each cited row) that a reporter prints as a diff. Numbers
** are shown as literals of the rule language in the unit of the value
** (2ms, 1500us, 16777216B, 0.25), so an author can paste an actual value
** into the test.
**
** Numbers compare within the tolerance the test gives (absolute in the
** value's unit, or relative when written as a percentage); without one
** they must agree to 1e-9 relative, which absorbs floating-point noise in
** aggregates such as cv and nothing else.
*/
#include "ruletest_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* An integer as a literal (tg_fmt_literal): 2ms, 1500us, 16777216B. */
static const char *format_literal(tg_arena *a, int64_t x, tg_unit unit)
{
    char buf[TG_FMT_BUF];
    return tg_arena_printf(a, "%s", tg_fmt_literal(buf, sizeof buf, x, unit));
}

static const char *format_value(tg_arena *a, tg_value v)
{
    switch (v.type) {
    case TG_TY_NULL: return "null";
    case TG_TY_BOOL: return v.u.b ? "true" : "false";
    case TG_TY_STRING: return tg_arena_printf(a, "\"%s\"", v.u.s ? v.u.s : "");
    case TG_TY_INT: return format_literal(a, v.u.i, v.unit);
    case TG_TY_FLOAT:
        if (isnan(v.u.f)) return "nan";
        return tg_arena_printf(a, "%.10g%s", v.u.f, tg_unit_base_suffix(v.unit) ? tg_unit_base_suffix(v.unit) : "");
    }
    return "?";
}

static const char *format_expected(tg_arena *a, const tg_rt_value_expect *e)
{
    if (e->value.type == TG_TY_STRING) return tg_arena_printf(a, "\"%s\"", e->text);
    if (e->relative) return tg_arena_printf(a, "%s +- %.6g%%", e->text, e->tolerance * 100);
    if (e->tolerance > 0) {
        tg_value t = e->value.unit != TG_UNIT_RATIO && e->tolerance == nearbyint(e->tolerance) && e->tolerance < 9e15
                         ? tg_int((int64_t)e->tolerance, e->value.unit) : tg_float(e->tolerance, e->value.unit);
        if (e->value.unit == TG_UNIT_RATIO) return tg_arena_printf(a, "%s +- %.6g%%", e->text, e->tolerance * 100);
        return tg_arena_printf(a, "%s +- %s", e->text, format_value(a, t));
    }
    return e->text;
}

static double number_of(tg_value v)
{
    return v.type == TG_TY_INT ? (double)v.u.i : v.u.f;
}

static bool is_number(tg_value v)
{
    return v.type == TG_TY_INT || v.type == TG_TY_FLOAT;
}

/* Does an actual value satisfy an expectation? */
static bool matches(const tg_rt_value_expect *e, tg_value actual)
{
    tg_value x = e->value;
    if (x.type == TG_TY_NULL || actual.type == TG_TY_NULL) return x.type == actual.type;
    if (x.type == TG_TY_BOOL) return actual.type == TG_TY_BOOL && actual.u.b == x.u.b;
    if (x.type == TG_TY_STRING) return actual.type == TG_TY_STRING && actual.u.s && strcmp(actual.u.s, x.u.s) == 0;
    if (!is_number(actual)) return false;
    /* a unit written in the test must be the value's (a plain number matches any) */
    if (x.unit != TG_UNIT_NONE && actual.unit != TG_UNIT_NONE && x.unit != actual.unit) return false;
    if (x.type == TG_TY_INT && actual.type == TG_TY_INT && e->tolerance == 0) return x.u.i == actual.u.i;
    double want = number_of(x), got = number_of(actual);
    if (isnan(got)) return false;
    double tol = e->relative ? e->tolerance * fabs(want) : e->tolerance;
    double slack = 1e-9 * fmax(fabs(want), fabs(got));
    return fabs(got - want) <= tol + slack;
}

static bool add_diff(tg_arena *a, tg_rt_result *r, size_t *cap, const char *what, const char *expected,
                     const char *actual)
{
    if (!what || !expected || !actual) return false;
    if (r->n_diffs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        tg_rt_diff *d = tg_arena_alloc(a, ncap * sizeof *d);
        if (!d) return false;
        if (r->n_diffs) memcpy(d, r->diffs, r->n_diffs * sizeof *d);
        r->diffs = d;
        *cap = ncap;
    }
    r->diffs[r->n_diffs++] = (tg_rt_diff){what, expected, actual};
    return true;
}

/* "count, sum_duration_ns, ..." : what a rule's result does hold. */
static const char *names_of(tg_arena *a, const tg_named_value *v, size_t n, const char *extra)
{
    size_t len = extra ? strlen(extra) + 2 : 0;
    for (size_t i = 0; i < n; i++) len += strlen(v[i].name) + 2;
    char *s = tg_arena_alloc(a, len + 1);
    if (!s) return NULL;
    size_t at = 0;
    if (extra) at += (size_t)sprintf(s, "%s", extra);
    for (size_t i = 0; i < n; i++) at += (size_t)sprintf(s + at, "%s%s", at ? ", " : "", v[i].name);
    return s;
}

/* The value of an evidence key: table, rowid, start, end, or a column. */
static bool evidence_value(const tg_evidence *ev, const char *key, tg_value *out)
{
    if (!strcmp(key, "table")) *out = tg_str(ev->table);
    else if (!strcmp(key, "rowid")) *out = tg_int(ev->rowid, TG_UNIT_NONE);
    else if (!strcmp(key, "start")) *out = ev->start == TG_NULL_I64 ? tg_null() : tg_int(ev->start, TG_UNIT_NS);
    else if (!strcmp(key, "end")) *out = ev->end == TG_NULL_I64 ? tg_null() : tg_int(ev->end, TG_UNIT_NS);
    else {
        for (size_t i = 0; i < ev->n_fields; i++)
            if (!strcmp(ev->fields[i].name, key)) {
                *out = ev->fields[i].value;
                return true;
            }
        return false;
    }
    return true;
}

static const char *describe_row(tg_arena *a, const tg_evidence *ev)
{
    return tg_arena_printf(a, "%s rowid %" PRId64 " start %s", ev->table ? ev->table : "?", ev->rowid,
                           ev->start == TG_NULL_I64 ? "null" : format_literal(a, ev->start, TG_UNIT_NS));
}

static const char *describe_expected_row(tg_arena *a, const tg_rt_evidence_expect *e)
{
    const char *s = "";
    for (size_t k = 0; k < e->n_keys && s; k++)
        s = tg_arena_printf(a, "%s%s%s: %s", s, k ? ", " : "", e->keys[k].name, format_expected(a, &e->keys[k]));
    return s ? tg_arena_printf(a, "{%s}", s) : NULL;
}

static bool compare_evidence(const tg_rt_case *c, const tg_rule_result *res, tg_arena *a, tg_rt_result *r,
                             size_t *cap)
{
    bool ok = true;
    if (c->n_evidence != res->n_evidence)
        ok &= add_diff(a, r, cap, "evidence", tg_arena_printf(a, "%zu row%s", c->n_evidence, c->n_evidence == 1 ? "" : "s"),
                       tg_arena_printf(a, "%zu row%s", res->n_evidence, res->n_evidence == 1 ? "" : "s"));
    size_t n = c->n_evidence > res->n_evidence ? c->n_evidence : res->n_evidence;
    for (size_t i = 0; i < n && ok; i++) {
        const char *what = tg_arena_printf(a, "evidence[%zu]", i);
        if (i >= res->n_evidence) {
            ok &= add_diff(a, r, cap, what, describe_expected_row(a, &c->evidence[i]), "(no such row)");
            continue;
        }
        if (i >= c->n_evidence) {
            ok &= add_diff(a, r, cap, what, "(no such row)", describe_row(a, &res->evidence[i]));
            continue;
        }
        const tg_rt_evidence_expect *e = &c->evidence[i];
        const tg_evidence *ev = &res->evidence[i];
        for (size_t k = 0; k < e->n_keys && ok; k++) {
            tg_value v;
            const char *key_what = tg_arena_printf(a, "evidence[%zu].%s", i, e->keys[k].name);
            if (!evidence_value(ev, e->keys[k].name, &v)) {
                const char *have = names_of(a, ev->fields, ev->n_fields, "table, rowid, start, end");
                ok &= have && add_diff(a, r, cap, key_what, format_expected(a, &e->keys[k]),
                                       tg_arena_printf(a, "(no such column; the row has %s)", have));
            } else if (!matches(&e->keys[k], v)) {
                ok &= add_diff(a, r, cap, key_what, format_expected(a, &e->keys[k]), format_value(a, v));
            }
        }
    }
    return ok;
}

/* The value of a cause item's key (docs/host.md). */
static bool item_value(const tg_cause_item *it, const char *key, tg_value *out)
{
    static const struct { const char *key; size_t off; } strs[] = {
        {"source", offsetof(tg_cause_item, source)}, {"name", offsetof(tg_cause_item, name)},
        {"module", offsetof(tg_cause_item, module)}, {"thread", offsetof(tg_cause_item, thread)},
        {"call_site", offsetof(tg_cause_item, call_site)}, {"call_module", offsetof(tg_cause_item, call_module)},
        {"table", offsetof(tg_cause_item, table)},
    };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (!strcmp(key, strs[i].key)) {
            const char *s;
            memcpy(&s, (const char *)it + strs[i].off, sizeof s);
            *out = s ? tg_str(s) : tg_null();
            return true;
        }
    if (!strcmp(key, "tid")) *out = it->tid < 0 ? tg_null() : tg_int(it->tid, TG_UNIT_NONE);
    else if (!strcmp(key, "launch_thread")) *out = tg_bool(it->launch_thread);
    else if (!strcmp(key, "count")) *out = tg_int(it->count, TG_UNIT_NONE);
    else if (!strcmp(key, "time")) *out = tg_float(it->time, TG_UNIT_NS);
    else if (!strcmp(key, "launch_time")) *out = isnan(it->launch_time) ? tg_null() : tg_float(it->launch_time, TG_UNIT_NS);
    else if (!strcmp(key, "share")) *out = isnan(it->share) ? tg_null() : tg_float(it->share, TG_UNIT_RATIO);
    else return false;
    return true;
}

static bool compare_cause(const tg_rt_case *c, const tg_rule_result *res, tg_arena *a, tg_rt_result *r, size_t *cap)
{
    const tg_cause *x = res->cause;
    if (c->cause_none || !x)
        return c->cause_none == !x ||
               add_diff(a, r, cap, "cause", c->cause_none ? "none" : "a cause",
                        x ? tg_arena_printf(a, "\"%s\"", x->summary ? x->summary : "") : "none");
    bool ok = true;
    if (c->cause_kind && strcmp(c->cause_kind, tg_cause_name(x->kind)) != 0)
        ok &= add_diff(a, r, cap, "cause.kind", c->cause_kind, tg_cause_name(x->kind));
    if (ok && c->cause_summary && (!x->summary || !strstr(x->summary, c->cause_summary)))
        ok &= add_diff(a, r, cap, "cause.summary", tg_arena_printf(a, "contains \"%s\"", c->cause_summary),
                       tg_arena_printf(a, "\"%s\"", x->summary ? x->summary : ""));
    if (ok && c->has_cause_unknown) {
        bool found = false;
        for (size_t i = 0; i < x->n_unknown && c->cause_unknown; i++) found |= strstr(x->unknown[i], c->cause_unknown) != NULL;
        if (c->cause_unknown ? !found : x->n_unknown > 0)
            ok &= add_diff(a, r, cap, "cause.unknown",
                           c->cause_unknown ? tg_arena_printf(a, "contains \"%s\"", c->cause_unknown) : "none",
                           x->n_unknown ? tg_arena_printf(a, "\"%s\"%s", x->unknown[0], x->n_unknown > 1 ? ", ..." : "")
                                        : "none");
    }
    if (!ok || !c->has_cause_items) return ok;
    const tg_cause_item *items = x->n_windows ? x->windows[0].items : x->items;
    size_t n = x->n_windows ? x->windows[0].n_items : x->n_items;
    if (c->n_cause_items == 0 && n > 0)     /* items: [] -- none */
        return add_diff(a, r, cap, "cause.items", "none",
                        tg_arena_printf(a, "%zu item%s, the first %s", n, n == 1 ? "" : "s",
                                        items[0].name ? items[0].name : "?"));
    for (size_t i = 0; i < c->n_cause_items && ok; i++) {
        const tg_rt_evidence_expect *e = &c->cause_items[i];
        if (i >= n) {
            ok &= add_diff(a, r, cap, tg_arena_printf(a, "cause.items[%zu]", i), describe_expected_row(a, e),
                           "(no such item)");
            continue;
        }
        for (size_t k = 0; k < e->n_keys && ok; k++) {
            tg_value v;
            const char *what = tg_arena_printf(a, "cause.items[%zu].%s", i, e->keys[k].name);
            if (!item_value(&items[i], e->keys[k].name, &v))
                ok &= add_diff(a, r, cap, what, format_expected(a, &e->keys[k]),
                               "(no such key: source, name, module, thread, tid, launch_thread, count, time, "
                               "launch_time, share, call_site, call_module, table)");
            else if (!matches(&e->keys[k], v))
                ok &= add_diff(a, r, cap, what, format_expected(a, &e->keys[k]), format_value(a, v));
        }
    }
    return ok;
}

bool tg_ruletest_compare(const tg_rt_case *c, const tg_rule_result *res, tg_arena *a, tg_rt_result *r)
{
    size_t cap = 0;
    bool ok = true;
    r->c = c;
    r->verdict = res->verdict;
    r->count = res->count;
    r->message = res->message ? tg_arena_strdup(a, res->message) : NULL;
    if (res->message && !r->message) return false;
    r->n_diffs = 0;
    if (c->has_status && c->status != res->verdict)
        ok &= add_diff(a, r, &cap, "status", tg_verdict_name(c->status), tg_verdict_name(res->verdict));
    if (c->has_severity && c->severity != res->severity)
        ok &= add_diff(a, r, &cap, "severity", tg_severity_name(c->severity), tg_severity_name(res->severity));
    if (c->has_count && c->count != res->count)
        ok &= add_diff(a, r, &cap, "count", tg_arena_printf(a, "%" PRId64, c->count),
                       tg_arena_printf(a, "%" PRId64, res->count));
    for (size_t i = 0; i < c->n_values && ok; i++) {
        const tg_rt_value_expect *e = &c->values[i];
        const char *what = tg_arena_printf(a, "values.%s", e->name);
        const tg_named_value *found = NULL;
        for (size_t k = 0; k < res->n_values && !found; k++)
            if (!strcmp(res->values[k].name, e->name)) found = &res->values[k];
        if (!found) {
            const char *have = names_of(a, res->values, res->n_values, NULL);
            ok &= have && add_diff(a, r, &cap, what, format_expected(a, e),
                                   tg_arena_printf(a, "(no such value; the result has %s)", *have ? have : "none"));
        } else if (!matches(e, found->value)) {
            ok &= add_diff(a, r, &cap, what, format_expected(a, e), format_value(a, found->value));
        }
    }
    if (ok && c->message && (!res->message || !strstr(res->message, c->message)))
        ok &= add_diff(a, r, &cap, "message", tg_arena_printf(a, "contains \"%s\"", c->message),
                       tg_arena_printf(a, "\"%s\"", res->message ? res->message : ""));
    if (ok && c->has_evidence) ok &= compare_evidence(c, res, a, r, &cap);
    if (ok && c->has_cause) ok &= compare_cause(c, res, a, r, &cap);
    r->passed = ok && r->n_diffs == 0;
    return ok;
}
