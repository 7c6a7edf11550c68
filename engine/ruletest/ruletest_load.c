/*
** Reading a rule test file: the YAML tree (yaml_doc.c, the rule files'
** bounded reader with positions) walked into a tg_ruletest_file: `version`,
** `rules` and the list of `tests`, each case with its rule, input (a trace
** path, or inline events handed to ruletest_events.c), options (params,
** set, baseline, iteration_pattern, missing_data) and expectations.
**
** Like the rule loader, it reports every problem of the file with
** file:line:col and the offending line before giving up, and suggests the
** key that was probably meant. Relative paths are resolved against the
** folder of the test file, so a test runs the same from any directory.
*/
#include "ruletest_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The file plus what outlives the load: the texts, so that errors found
** while running still show the offending line. */
typedef struct rt_file_priv {
    tg_ruletest_file pub;
    tg_rules_ctx ctx;
} rt_file_priv;

/* ---------------------------------------------------------------- helpers */

void tg_rt_error(tg_rt_reader *rd, tg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(&rd->ctx, TG_DIAG_ERROR, pos, fmt, ap);
    va_end(ap);
    rd->failed = true;
}

bool tg_rt_check_keys(tg_rt_reader *rd, const tg_ynode *map, const char *const *allowed,
                      size_t n_allowed, const char *where)
{
    bool ok = true;
    for (size_t i = 0; i < map->n; i++) {
        const tg_ynode *k = map->items[i];
        if (k->kind != TG_Y_SCALAR) {
            tg_rt_error(rd, k->pos, "keys of %s must be plain names, not %s", where, tg_ynode_kind_name(k));
            ok = false;
            continue;
        }
        bool known = false;
        for (size_t j = 0; j < n_allowed && !known; j++) known = strcmp(allowed[j], k->value) == 0;
        if (!known) {
            const char *hint = tg_suggest(k->value, allowed, n_allowed);
            if (hint)
                tg_rt_error(rd, k->pos, "unknown key '%s' in %s (did you mean '%s'?)", k->value, where, hint);
            else
                tg_rt_error(rd, k->pos, "unknown key '%s' in %s", k->value, where);
            ok = false;
        }
        for (size_t j = 0; j < i; j++)
            if (map->items[j]->kind == TG_Y_SCALAR && strcmp(map->items[j]->value, k->value) == 0) {
                tg_rt_error(rd, k->pos, "duplicate key '%s' in %s (first at line %d)", k->value, where,
                            map->items[j]->pos.line);
                ok = false;
                break;
            }
    }
    return ok;
}

bool tg_rt_expect_kind(tg_rt_reader *rd, const tg_ynode *n, tg_ynode_kind kind, const char *what)
{
    if (n && n->kind == kind) return true;
    static const char *const names[] = {"a scalar", "a list", "a mapping"};
    tg_rt_error(rd, n ? n->pos : (tg_pos){0}, "%s must be %s, not %s", what, names[kind], tg_ynode_kind_name(n));
    return false;
}

static const char *unit_wanted(tg_unit unit)
{
    switch (unit) {
    case TG_UNIT_NS: return "a duration such as 1ms, 20us or 1500ns";
    case TG_UNIT_BYTES: return "a size such as 64KB, 16MiB or 4096B";
    case TG_UNIT_RATIO: return "a percentage such as 20%";
    case TG_UNIT_RATE: return "a rate such as 10GB/s";
    default: return "a plain number";
    }
}

bool tg_rt_number(tg_rt_reader *rd, const tg_ynode *n, tg_unit unit, bool allow_plain,
                  const char *what, tg_value *out)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_SCALAR, what)) return false;
    double num;
    bool is_int;
    int64_t ival;
    tg_unit u;
    if (!tg_lex_number_literal(n->value, &num, &is_int, &ival, &u)) {
        tg_rt_error(rd, n->pos, "%s wants %s, not '%s'", what, unit_wanted(unit), n->value);
        return false;
    }
    if (u != unit && !(u == TG_UNIT_NONE && allow_plain)) {
        tg_rt_error(rd, n->pos, "%s wants %s, not '%s'", what, unit_wanted(unit), n->value);
        return false;
    }
    *out = is_int ? tg_int(ival, unit) : tg_float(num, unit);
    return true;
}

bool tg_rt_int(tg_rt_reader *rd, const tg_ynode *n, tg_unit unit, int64_t lo, int64_t hi,
               const char *what, int64_t *out)
{
    tg_value v;
    if (!tg_rt_number(rd, n, unit, true, what, &v)) return false;
    if (v.type == TG_TY_FLOAT && (v.u.f < (double)lo || v.u.f > (double)hi)) {
        tg_rt_error(rd, n->pos, "%s must be between %lld and %lld, not %s", what, (long long)lo,
                    (long long)hi, n->value);
        return false;
    }
    if (v.type != TG_TY_INT) {
        tg_rt_error(rd, n->pos, "%s must be a whole number%s, not '%s'", what,
                    unit == TG_UNIT_NS ? " of nanoseconds" : unit == TG_UNIT_BYTES ? " of bytes" : "",
                    n->value);
        return false;
    }
    if (v.u.i < lo || v.u.i > hi) {
        tg_rt_error(rd, n->pos, "%s must be between %lld and %lld, not %s", what, (long long)lo,
                    (long long)hi, n->value);
        return false;
    }
    *out = v.u.i;
    return true;
}

bool tg_rt_string(tg_rt_reader *rd, const tg_ynode *n, const char *what, const char **out)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_SCALAR, what)) return false;
    if (n->len == 0) {
        tg_rt_error(rd, n->pos, "%s must not be empty", what);
        return false;
    }
    if (strlen(n->value) != n->len) {
        tg_rt_error(rd, n->pos, "%s must not contain a NUL character", what);
        return false;
    }
    *out = n->value;   /* already in the file's arena */
    return true;
}

/* A path as written, resolved against the folder of the test file. */
static const char *resolve(tg_rt_reader *rd, const char *p)
{
    if (p[0] == '/' || !rd->dir) return p;
    return tg_arena_printf(rd->ctx.arena, "%.*s/%s", tg_path_dir_len(rd->dir), rd->dir, p);
}

/* --------------------------------------------------------- expectations */


/* One expected value: a literal, null, a string, or {value, tolerance}. */
static bool read_value(tg_rt_reader *rd, const tg_ynode *n, const char *name, tg_rt_value_expect *out)
{
    *out = (tg_rt_value_expect){.name = name, .pos = n->pos};
    const tg_ynode *v = n, *tol = NULL;
    if (n->kind == TG_Y_MAP) {
        static const char *const keys[] = {"value", "tolerance"};
        if (!tg_rt_check_keys(rd, n, keys, 2, "an expected value")) return false;
        v = tg_ymap_get(n, "value");
        tol = tg_ymap_get(n, "tolerance");
        if (!v) {
            tg_rt_error(rd, n->pos, "expected value '%s' needs 'value:'", name);
            return false;
        }
    }
    if (!tg_rt_expect_kind(rd, v, TG_Y_SCALAR, "an expected value")) return false;
    out->text = v->value;
    double num;
    bool is_int;
    int64_t ival;
    tg_unit unit;
    if (v->style == TG_YS_PLAIN && tg_lex_number_literal(v->value, &num, &is_int, &ival, &unit)) {
        out->value = is_int ? tg_int(ival, unit) : tg_float(num, unit);
    } else if (v->style == TG_YS_PLAIN && (!strcmp(v->value, "null") || !strcmp(v->value, "~") || v->len == 0)) {
        out->value = tg_null();
    } else if (v->style == TG_YS_PLAIN && (!strcmp(v->value, "true") || !strcmp(v->value, "false"))) {
        out->value = tg_bool(v->value[0] == 't');
    } else {
        out->value = tg_str(v->value);
    }
    if (tol) {
        if (out->value.type != TG_TY_INT && out->value.type != TG_TY_FLOAT) {
            tg_rt_error(rd, tol->pos, "a tolerance needs a number as the value, not '%s'", v->value);
            return false;
        }
        if (!tg_rt_expect_kind(rd, tol, TG_Y_SCALAR, "tolerance")) return false;
        double t;
        if (!tg_lex_number_literal(tol->value, &t, &is_int, &ival, &unit) || t < 0) {
            tg_rt_error(rd, tol->pos, "tolerance wants a non-negative number (with the value's unit, or a "
                                      "percentage for a relative one), not '%s'", tol->value);
            return false;
        }
        if (unit == TG_UNIT_RATIO && out->value.unit != TG_UNIT_RATIO) {
            out->relative = true;
        } else if (unit != TG_UNIT_NONE && unit != out->value.unit) {
            tg_rt_error(rd, tol->pos, "tolerance '%s' is not in the unit of the value '%s'", tol->value, v->value);
            return false;
        }
        out->tolerance = t;
    }
    return true;
}

static bool read_values(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "expect.values")) return false;
    c->values = tg_arena_alloc(rd->ctx.arena, (n->n ? n->n : 1) * sizeof *c->values);
    if (!c->values) return false;
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        if (!tg_rt_expect_kind(rd, n->items[i], TG_Y_SCALAR, "a value name")) {
            ok = false;
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (tg_yscalar_is(n->items[j], n->items[i]->value)) {
                tg_rt_error(rd, n->items[i]->pos, "duplicate key '%s' in expect.values (first at line %d)",
                            n->items[i]->value, n->items[j]->pos.line);
                ok = false;
            }
        if (read_value(rd, n->vals[i], n->items[i]->value, &c->values[c->n_values])) c->n_values++;
        else ok = false;
    }
    return ok;
}

/* A list of expected rows (evidence, cause items): mappings of keys to
** values, only the keys given compared. */
static bool read_rows(tg_rt_reader *rd, const tg_ynode *n, const char *what, tg_rt_evidence_expect **out,
                      size_t *n_out)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_SEQ, what)) return false;
    *out = tg_arena_alloc(rd->ctx.arena, (n->n ? n->n : 1) * sizeof **out);
    if (!*out) return false;
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        const tg_ynode *row = n->items[i];
        if (!tg_rt_expect_kind(rd, row, TG_Y_MAP, what) || row->n == 0) {
            if (row->kind == TG_Y_MAP) tg_rt_error(rd, row->pos, "an entry of %s names at least one key", what);
            ok = false;
            continue;
        }
        tg_rt_evidence_expect *e = &(*out)[(*n_out)++];
        e->pos = row->pos;
        e->keys = tg_arena_alloc(rd->ctx.arena, row->n * sizeof *e->keys);
        if (!e->keys) return false;
        for (size_t k = 0; k < row->n; k++) {
            if (!tg_rt_expect_kind(rd, row->items[k], TG_Y_SCALAR, "a key")) {
                ok = false;
                continue;
            }
            if (read_value(rd, row->vals[k], row->items[k]->value, &e->keys[e->n_keys])) e->n_keys++;
            else ok = false;
        }
    }
    return ok;
}

/* expect.cause: null, or {kind, summary, unknown, items}. */
static bool read_cause(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    static const char *const keys[] = {"kind", "summary", "unknown", "items"};
    c->has_cause = true;
    c->cause_pos = n->pos;
    if (n->kind == TG_Y_SCALAR && n->style == TG_YS_PLAIN && (!strcmp(n->value, "null") || n->len == 0)) {
        c->cause_none = true;
        return true;
    }
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "expect.cause") || !tg_rt_check_keys(rd, n, keys, 4, "expect.cause"))
        return false;
    const tg_ynode *v;
    bool ok = true;
    if ((v = tg_ymap_get(n, "kind"))) {
        tg_cause_kind k;
        if (v->kind != TG_Y_SCALAR || !tg_cause_parse(v->value, &k) || k == TG_CAUSE_NONE) {
            tg_rt_error(rd, v->pos, "cause kind must be host, call_site or launch");
            ok = false;
        } else {
            c->cause_kind = v->value;
        }
    }
    if ((v = tg_ymap_get(n, "summary"))) ok &= tg_rt_string(rd, v, "expect.cause.summary", &c->cause_summary);
    if ((v = tg_ymap_get(n, "unknown"))) {
        c->has_cause_unknown = true;
        if (v->kind == TG_Y_SEQ && v->n == 0) c->cause_unknown = NULL;   /* []: none */
        else ok &= tg_rt_string(rd, v, "expect.cause.unknown (text one sentence contains, or [] for none)",
                                &c->cause_unknown);
    }
    if ((v = tg_ymap_get(n, "items"))) {
        c->has_cause_items = true;
        ok &= read_rows(rd, v, "expect.cause.items", &c->cause_items, &c->n_cause_items);
    }
    return ok;
}

static bool read_evidence(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_SEQ, "expect.evidence")) return false;
    c->has_evidence = true;
    c->evidence = tg_arena_alloc(rd->ctx.arena, (n->n ? n->n : 1) * sizeof *c->evidence);
    if (!c->evidence) return false;
    bool ok = true;
    for (size_t i = 0; i < n->n; i++) {
        const tg_ynode *row = n->items[i];
        if (!tg_rt_expect_kind(rd, row, TG_Y_MAP, "an expected evidence row")) {
            ok = false;
            continue;
        }
        if (row->n == 0) {
            tg_rt_error(rd, row->pos, "an expected evidence row names at least one of rowid, start, end, "
                                      "table or an evidence column");
            ok = false;
            continue;
        }
        tg_rt_evidence_expect *e = &c->evidence[c->n_evidence++];
        e->pos = row->pos;
        e->keys = tg_arena_alloc(rd->ctx.arena, row->n * sizeof *e->keys);
        if (!e->keys) return false;
        for (size_t k = 0; k < row->n; k++) {
            if (!tg_rt_expect_kind(rd, row->items[k], TG_Y_SCALAR, "an evidence key")) {
                ok = false;
                continue;
            }
            if (read_value(rd, row->vals[k], row->items[k]->value, &e->keys[e->n_keys])) e->n_keys++;
            else ok = false;
        }
    }
    return ok;
}

static bool read_expect(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    static const char *const keys[] = {"status", "count", "values", "evidence", "message", "severity", "cause"};
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "expect")) return false;
    bool ok = tg_rt_check_keys(rd, n, keys, 7, "expect");
    const tg_ynode *v;
    c->has_status = c->has_severity = false;
    char all[128];
    tg_vocab_join(tg_verdict_names, all, sizeof all);
    if ((v = tg_ymap_get(n, "status"))) {
        c->has_status = v->kind == TG_Y_SCALAR && tg_verdict_parse(v->value, &c->status);
        if (!c->has_status) {
            const char *hint = v->kind == TG_Y_SCALAR ? tg_suggest(v->value, tg_verdict_names, TG_V_COUNT) : NULL;
            tg_rt_error(rd, v->pos, "status must be %s, not '%s'%s%s%s", all,
                        v->kind == TG_Y_SCALAR ? v->value : tg_ynode_kind_name(v), hint ? " (did you mean '" : "",
                        hint ? hint : "", hint ? "'?)" : "");
            ok = false;
        }
    } else {
        tg_rt_error(rd, n->pos, "expect needs 'status:' (%s)", all);
        ok = false;
    }
    if ((v = tg_ymap_get(n, "count"))) {
        ok &= tg_rt_int(rd, v, TG_UNIT_NONE, 0, INT64_MAX, "expect.count", &c->count);
        c->has_count = true;
    }
    if ((v = tg_ymap_get(n, "values"))) ok &= read_values(rd, v, c);
    if ((v = tg_ymap_get(n, "evidence"))) ok &= read_evidence(rd, v, c);
    if ((v = tg_ymap_get(n, "message"))) ok &= tg_rt_string(rd, v, "expect.message", &c->message);
    if ((v = tg_ymap_get(n, "cause"))) ok &= read_cause(rd, v, c);
    if ((v = tg_ymap_get(n, "severity"))) {
        c->has_severity = v->kind == TG_Y_SCALAR && tg_severity_parse(v->value, &c->severity);
        if (!c->has_severity) {
            tg_vocab_join(tg_severity_names, all, sizeof all);
            tg_rt_error(rd, v->pos, "severity must be %s", all);
            ok = false;
        }
    }
    return ok;
}

/* ------------------------------------------------------------------ cases */

static bool push_set(tg_rt_reader *rd, tg_rt_case *c, size_t cap, const char *rule, const char *param,
                     const tg_ynode *value)
{
    if (!tg_rt_expect_kind(rd, value, TG_Y_SCALAR, "a param value")) return false;
    if (c->n_sets >= cap) return false;
    c->sets[c->n_sets++] = (tg_param_set){.rule = rule, .param = param, .value = value->value};
    return true;
}

static bool read_sets(tg_rt_reader *rd, const tg_ynode *params, const tg_ynode *set, tg_rt_case *c)
{
    size_t cap = (params && params->kind == TG_Y_MAP ? params->n : 0) + (set && set->kind == TG_Y_MAP ? set->n : 0);
    c->sets = tg_arena_alloc(rd->ctx.arena, (cap ? cap : 1) * sizeof *c->sets);
    if (!c->sets) return false;
    c->sets_pos = params ? params->pos : set ? set->pos : c->pos;
    bool ok = true;
    if (params && tg_rt_expect_kind(rd, params, TG_Y_MAP, "params")) {
        for (size_t i = 0; i < params->n; i++) {
            const tg_ynode *k = params->items[i];
            if (!tg_rt_expect_kind(rd, k, TG_Y_SCALAR, "a param name")) ok = false;
            else if (c->rule) ok &= push_set(rd, c, cap, c->rule, k->value, params->vals[i]);
        }
    } else if (params) {
        ok = false;
    }
    if (set && tg_rt_expect_kind(rd, set, TG_Y_MAP, "set")) {
        for (size_t i = 0; i < set->n; i++) {
            const tg_ynode *k = set->items[i];
            if (!tg_rt_expect_kind(rd, k, TG_Y_SCALAR, "a set key")) {
                ok = false;
                continue;
            }
            const char *dot = strrchr(k->value, '.');
            if (!dot || dot == k->value || !dot[1]) {
                tg_rt_error(rd, k->pos, "set keys are RULE.PARAM (e.g. gpu-idle-gap.min_gap), not '%s'", k->value);
                ok = false;
                continue;
            }
            const char *rule = tg_arena_strndup(rd->ctx.arena, k->value, (size_t)(dot - k->value));
            ok &= rule && push_set(rd, c, cap, rule, dot + 1, set->vals[i]);
        }
    } else if (set) {
        ok = false;
    }
    return ok;
}

static bool read_input(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    static const char *const keys[] = {"trace", "events"};
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "input")) return false;
    c->input_pos = n->pos;
    bool ok = tg_rt_check_keys(rd, n, keys, 2, "input");
    const tg_ynode *trace = tg_ymap_get(n, "trace"), *events = tg_ymap_get(n, "events");
    if (trace && events) {
        tg_pos at = events->pos;
        for (size_t i = 0; i < n->n; i++)
            if (n->vals[i] == events) at = n->items[i]->pos;
        tg_rt_error(rd, at, "input takes 'trace:' or 'events:', not both");
        return false;
    }
    if (!trace && !events) {
        if (ok) tg_rt_error(rd, n->pos, "input needs 'trace: PATH' or 'events:'");
        return false;
    }
    if (trace) {
        const char *p;
        if (!tg_rt_string(rd, trace, "input.trace", &p)) return false;
        c->trace = resolve(rd, p);
        return ok && c->trace;
    }
    c->events = tg_rt_events_read(rd, events);
    return ok && c->events;
}

static bool read_case(tg_rt_reader *rd, const tg_ynode *n, tg_rt_case *c)
{
    static const char *const keys[] = {"name", "rule", "input", "params", "set", "baseline",
                                       "iteration_pattern", "missing_data", "expect"};
    *c = (tg_rt_case){.pos = n->pos};
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "a test")) return false;
    bool ok = tg_rt_check_keys(rd, n, keys, sizeof keys / sizeof *keys, "a test");
    const tg_ynode *v;
    if ((v = tg_ymap_get(n, "name"))) ok &= tg_rt_string(rd, v, "name", &c->name);
    else {
        tg_rt_error(rd, n->pos, "a test needs 'name:'");
        ok = false;
    }
    if ((v = tg_ymap_get(n, "rule"))) {
        ok &= tg_rt_string(rd, v, "rule", &c->rule);
        c->rule_pos = v->pos;
    } else {
        tg_rt_error(rd, n->pos, "a test needs 'rule:' (the id of the rule it tests)");
        ok = false;
    }
    if ((v = tg_ymap_get(n, "input"))) ok &= read_input(rd, v, c);
    else {
        tg_rt_error(rd, n->pos, "a test needs 'input:' (trace: PATH, or events:)");
        ok = false;
    }
    const tg_ynode *params = tg_ymap_get(n, "params"), *set = tg_ymap_get(n, "set");
    if (params || set) ok &= read_sets(rd, params, set, c);
    if ((v = tg_ymap_get(n, "baseline"))) {
        const char *p;
        if (tg_rt_string(rd, v, "baseline", &p)) c->baseline = resolve(rd, p);
        else ok = false;
        c->baseline_pos = v->pos;
    }
    if ((v = tg_ymap_get(n, "iteration_pattern"))) {
        tg_regex *re = NULL;
        char why[256];
        if (!tg_rt_string(rd, v, "iteration_pattern", &c->iteration_pattern)) {
            ok = false;
        } else if (!(re = tg_regex_compile(c->iteration_pattern, why, sizeof why))) {
            tg_rt_error(rd, v->pos, "iteration_pattern '%s' is not a valid POSIX extended regular expression: it %s",
                        c->iteration_pattern, why);
            ok = false;
        }
        tg_regex_free(re);
    }
    if ((v = tg_ymap_get(n, "missing_data"))) {
        if (tg_yscalar_is(v, "skip")) c->missing = TG_MISSING_SKIP;
        else if (!tg_yscalar_is(v, "fail")) {
            tg_rt_error(rd, v->pos, "missing_data must be fail or skip, not '%s'",
                        v->kind == TG_Y_SCALAR ? v->value : tg_ynode_kind_name(v));
            ok = false;
        }
    }
    if ((v = tg_ymap_get(n, "expect"))) ok &= read_expect(rd, v, c);
    else {
        tg_rt_error(rd, n->pos, "a test needs 'expect:' (at least status:)");
        ok = false;
    }
    return ok;
}

/* ------------------------------------------------------------------- file */

static bool read_rules(tg_rt_reader *rd, const tg_ynode *n, tg_ruletest_file *f)
{
    f->rules_pos = n->pos;
    const tg_ynode *one[1] = {n};
    const tg_ynode *const *items = one;
    size_t count = 1;
    if (n->kind == TG_Y_SEQ) {
        items = (const tg_ynode *const *)n->items;
        count = n->n;
        if (count == 0) {
            tg_rt_error(rd, n->pos, "rules: is an empty list (leave it out for the default rules)");
            return false;
        }
    }
    f->rule_paths = tg_arena_alloc(rd->ctx.arena, count * sizeof *f->rule_paths);
    if (!f->rule_paths) return false;
    bool ok = true;
    for (size_t i = 0; i < count; i++) {
        const char *p;
        if (!tg_rt_string(rd, items[i], "a rules path", &p)) {
            ok = false;
            continue;
        }
        f->rule_paths[f->n_rule_paths++] = strcmp(p, "builtin") == 0 ? p : resolve(rd, p);
    }
    return ok;
}

static bool read_file(tg_rt_reader *rd, const tg_ynode *root, tg_ruletest_file *f)
{
    static const char *const keys[] = {"version", "rules", "tests"};
    if (!root) {
        tg_rt_error(rd, (tg_pos){.file = f->path, .line = 1, .col = 1},
                    "the test file is empty; it needs 'version: 1' and 'tests:'");
        return false;
    }
    if (!tg_rt_expect_kind(rd, root, TG_Y_MAP, "a rule test file")) return false;
    bool ok = tg_rt_check_keys(rd, root, keys, 3, "the test file");
    const tg_ynode *v = tg_ymap_get(root, "version");
    if (!v) {
        tg_rt_error(rd, root->pos, "the test file needs 'version: 1'");
        ok = false;
    } else if (!tg_yscalar_is(v, "1")) {
        tg_rt_error(rd, v->pos, "unsupported test file version '%s' (this tracegate reads version 1)",
                    v->kind == TG_Y_SCALAR ? v->value : tg_ynode_kind_name(v));
        ok = false;
    }
    if ((v = tg_ymap_get(root, "rules"))) ok &= read_rules(rd, v, f);
    v = tg_ymap_get(root, "tests");
    if (!v) {
        tg_rt_error(rd, root->pos, "the test file needs 'tests:', a list of tests");
        return false;
    }
    if (!tg_rt_expect_kind(rd, v, TG_Y_SEQ, "tests")) return false;
    if (v->n == 0) {
        tg_rt_error(rd, v->pos, "tests: is an empty list");
        return false;
    }
    f->cases = tg_arena_alloc(rd->ctx.arena, v->n * sizeof *f->cases);
    if (!f->cases) return false;
    for (size_t i = 0; i < v->n; i++) {
        ok &= read_case(rd, v->items[i], &f->cases[i]);
        f->n_cases++;
    }
    return ok;
}

void tg_ruletest_free(tg_ruletest_file *f)
{
    if (!f) return;
    rt_file_priv *p = (rt_file_priv *)f;
    for (size_t i = 0; i < f->n_cases; i++) tg_rt_events_free(f->cases[i].events);
    tg_src_release_all(&p->ctx);
    tg_arena_free(f->arena);
    free(p);
}

tg_ruletest_file *tg_ruletest_load_text(const char *name, const char *text, size_t len, tg_diag *diag)
{
    rt_file_priv *p = calloc(1, sizeof *p);
    tg_arena *arena = tg_arena_new();
    if (!p || !arena) {
        free(p);
        tg_arena_free(arena);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    tg_ruletest_file *f = &p->pub;
    f->arena = arena;
    p->ctx = (tg_rules_ctx){.arena = arena, .diag = diag};
    tg_rt_reader rd = {.ctx = p->ctx};
    f->path = tg_arena_strdup(arena, name);
    const char *slash = f->path ? strrchr(f->path, '/') : NULL;
    rd.dir = slash ? tg_arena_strndup(arena, f->path, (size_t)(slash - f->path)) : NULL;
    int errors_before = diag->n_errors;
    const tg_src *src = f->path ? tg_src_from_text(&rd.ctx, f->path, text, len) : NULL;
    bool ok = false;
    if (src) {
        tg_ynode *root = tg_yaml_parse(&rd.ctx, src, &ok);
        if (ok) ok = read_file(&rd, root, f) && !rd.failed;
    }
    p->ctx = rd.ctx;   /* the texts registered while reading */
    if (!ok || diag->n_errors > errors_before) {
        if (diag->n_errors == errors_before) tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        tg_ruletest_free(f);
        return NULL;
    }
    return f;
}

tg_ruletest_file *tg_ruletest_load(const char *path, tg_diag *diag)
{
    tg_pos at = {.file = path};
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "cannot open the test file: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "not a regular file");
        return NULL;
    }
    if ((uintmax_t)st.st_size > TG_YAML_MAX_FILE) {
        fclose(fp);
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL,
                    "the test file is %lld bytes, more than the 4 MiB a test file may hold",
                    (long long)st.st_size);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    char *text = malloc(len + 1);
    if (!text) {
        fclose(fp);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    size_t got = fread(text, 1, len, fp);
    bool bad = ferror(fp) != 0;
    fclose(fp);
    if (bad || got != len) {
        free(text);
        tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, at, NULL, "cannot read the test file");
        return NULL;
    }
    tg_ruletest_file *f = tg_ruletest_load_text(path, text, len, diag);
    free(text);
    return f;
}

tg_rules_ctx *tg_rt_file_ctx(const tg_ruletest_file *f)
{
    return &((rt_file_priv *)f)->ctx;
}
