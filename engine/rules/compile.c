/*
** The expression compiler: turns an AST (parse.c) into a typed, resolved
** tree (expr.h) for one rule. Names bind to the fields of the rule's
** source (fields.def), then to macros (compiled at their first use in a
** clause and shared by the others, cycles reported), params.NAME, trace.FIELD, device.FIELD (the row's device,
** for sources with a `device` field), baseline.STAT and, after `in`, to
** named lists.
** Types and units are checked -- a duration compared with a byte count is
** an error, and so is a plain number compared with a duration unless it
** is 0 -- constants are folded, and `matches` patterns are compiled once.
**
** Two contexts: row context (where, samples, aggregate arguments) sees one
** row and may not aggregate; aggregate context (fail_when, message,
** metric) sees aggregates over the rows and may not name a row field
** outside an aggregate. Errors are reported where the offending text
** starts; compilation goes on with sibling sub-expressions so that one
** run reports every independent error.
*/
#include "load.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tg_expr *compile_node(tg_cstate *cs, const tg_ast *ast);

/* Macro sizes are capped just above the rule's budget (macro_size). */
#define SIZE_CAP ((size_t)TG_COMPILE_NODE_BUDGET + 1)

static void cerr(tg_cstate *cs, tg_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cerr(tg_cstate *cs, tg_pos pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg_rules_vmsg(&cs->ld->ctx, TG_DIAG_ERROR, pos, fmt, ap);
    va_end(ap);
}

/* Whether n more nodes fit the rule's budgets and the rule set's (load.h):
** m, when they are the expansion of macro m (or nodes compiled inside one,
** depth > 0), also counts them against what macros may add. When they do
** not fit, the error is said once and the rule stops compiling. */
static bool fits(tg_cstate *cs, size_t n, tg_pos pos, const tg_macro *m)
{
    if (cs->budget == 0 || cs->ld->nodes_left == 0) return false;   /* said once */
    bool from_macro = m || cs->depth > 0;
    if (n >= cs->budget || (from_macro && n >= cs->macro_budget)) {
        bool macro_cap = n < cs->budget;
        char what[96];
        if (macro_cap)
            snprintf(what, sizeof what, "macros may add at most %d nodes to a rule, each use counted in full",
                     TG_MACRO_NODE_BUDGET);
        else
            snprintf(what, sizeof what, "more than %d nodes after macro expansion", TG_COMPILE_NODE_BUDGET);
        if (m)
            cerr(cs, pos, "expression too large (%s): macro '%s' expands to %s%zu nodes", what, m->name,
                 n >= SIZE_CAP ? "more than " : "", n >= SIZE_CAP ? (size_t)TG_COMPILE_NODE_BUDGET : n);
        else
            cerr(cs, pos, "expression too large (%s)", what);
        cs->budget = 0;
        return false;
    }
    if (n >= cs->ld->nodes_left) {
        cerr(cs, pos, "the rules are too large: together they may hold %d nodes after macro expansion, and rule "
             "'%s' goes past that%s%s%s (docs/limits.md)", TG_RULESET_NODE_BUDGET, cs->rule->info.id,
             m ? " with macro '" : "", m ? m->name : "", m ? "'" : "");
        cs->ld->nodes_left = 0;
        cs->budget = 0;
        return false;
    }
    return true;
}

static bool charge(tg_cstate *cs, size_t n, tg_pos pos, const tg_macro *m)
{
    if (!fits(cs, n, pos, m)) return false;
    cs->budget -= n;
    if (m || cs->depth > 0) cs->macro_budget -= n;
    cs->ld->nodes_left -= n;
    return true;
}

static tg_expr *new_expr(tg_cstate *cs, tg_node_kind op, tg_pos pos)
{
    if (!charge(cs, 1, pos, NULL)) return NULL;
    tg_expr *e = tg_arena_alloc(cs->ld->ctx.arena, sizeof *e);
    if (!e) return NULL;
    e->op = op;
    e->pos = pos;
    e->slot = -1;
    e->suffix = -1;
    return e;
}

static tg_expr *make_const(tg_cstate *cs, tg_pos pos, tg_value v)
{
    tg_expr *e = new_expr(cs, TG_N_CONST, pos);
    if (!e) return NULL;
    e->k = v;
    e->type = v.type;
    e->unit = v.unit;
    return e;
}

static bool is_num(const tg_expr *e) { return e->type == TG_TY_INT || e->type == TG_TY_FLOAT; }
static bool is_const(const tg_expr *e) { return e->op == TG_N_CONST; }

static const char *describe(const tg_expr *e)
{
    switch (e->type) {
    case TG_TY_NULL: return "null";
    case TG_TY_BOOL: return "a condition (true/false)";
    case TG_TY_STRING: return "a string";
    default: break;
    }
    switch (e->unit) {
    case TG_UNIT_NS: return "a duration";
    case TG_UNIT_BYTES: return "a byte count";
    case TG_UNIT_RATIO: return "a ratio";
    case TG_UNIT_RATE: return "a rate (bytes per second)";
    default: return "a plain number";
    }
}

/* The text of an AST for messages. */
static const char *text_of(tg_cstate *cs, const tg_ast *ast) { return tg_ast_text(cs->ld->ctx.arena, ast); }

static bool zero_literal(const tg_expr *e)
{
    return is_const(e) && e->unit == TG_UNIT_NONE && is_num(e) && tg_value_num(e->k) == 0;
}

static bool units_agree(const tg_expr *a, const tg_expr *b)
{
    if (a->unit == b->unit || zero_literal(a) || zero_literal(b)) return true;
    tg_unit x = a->unit, y = b->unit;
    return (x == TG_UNIT_RATIO && y == TG_UNIT_NONE) || (x == TG_UNIT_NONE && y == TG_UNIT_RATIO);
}

/* A suggestion of how to write a plain number with the other side's unit. */
static const char *unit_hint(const tg_expr *plain, const tg_expr *other)
{
    if (!(is_const(plain) && plain->unit == TG_UNIT_NONE)) return "";
    switch (other->unit) {
    case TG_UNIT_NS: return "; write the number with a time unit, e.g. 500ms or 20us";
    case TG_UNIT_BYTES: return "; write the number with a size unit, e.g. 64KB or 16MiB";
    case TG_UNIT_RATE: return "; write the number with a rate unit, e.g. 10GB/s";
    default: return "";
    }
}

/* ---------------------------------------------------------------- names */

/* Sizes with macros expanded, counted before expanding: 16 macros each
** using the previous one 4 times are a 662-byte file and 4^16 nodes, and
** expanding first to count them took minutes. Each macro's size is
** computed once per source (a name is a field of some sources and the
** macro elsewhere), bottom-up, capped just above the budget. */

static size_t size_add(size_t a, size_t b) { return a + b > SIZE_CAP ? SIZE_CAP : a + b; }

static size_t macro_size(tg_cstate *cs, tg_macro *m);

static size_t ast_size(tg_cstate *cs, const tg_ast *ast)
{
    if (!ast) return 0;
    if (ast->kind == TG_N_NAME && !ast->member && !tg_field_find(cs->rule->source, ast->name)) {
        tg_macro *m = tg_rfile_macro(cs->ld, ast->name);
        if (m) return macro_size(cs, m);
    }
    size_t n = size_add(1, size_add(ast_size(cs, ast->a), ast_size(cs, ast->b)));
    for (size_t i = 0; i < ast->n_items && n < SIZE_CAP; i++) n = size_add(n, ast_size(cs, ast->items[i]));
    return n;
}

static size_t macro_size(tg_cstate *cs, tg_macro *m)
{
    int src = (int)cs->rule->source + 1;
    m->used = true;   /* reached from a use, as its expansion would be */
    if (m->size_src == src) return m->size;
    if (m->sizing || !m->ast) return 1;   /* a cycle, or a syntax error: the compile reports it */
    m->sizing = true;
    size_t n = ast_size(cs, m->ast);
    m->sizing = false;
    m->size = n;
    m->size_src = src;
    return n;
}

/* The current clause's record of macro m (in or outside an aggregate's
** argument); NULL when it could not be allocated, and each use is then
** compiled anew. */
static tg_macro_use *macro_use(tg_cstate *cs, const tg_macro *m)
{
    if (!cs->macro_uses) return NULL;
    return &cs->macro_uses[(size_t)(m - cs->ld->macros) * 2 + cs->in_agg];
}

/* Is e worth computing once per row when shared: an operator, not a leaf
** that is read directly? */
static bool shared_memo(const tg_expr *e)
{
    switch (tg_node_classes[e->op]) {
    case TG_NC_UNARY: case TG_NC_LOGIC: case TG_NC_CMP: case TG_NC_ARITH: return true;
    default: return false;
    }
}

/* A macro is compiled at its first use in a clause; later uses share that
** tree, and are charged the nodes it stands for expanded (the budgets
** bound whatever walks the tree whole). Its root is marked so that the
** evaluator computes it once per row however often the rule uses it:
** m6 using m5 four times, m5 using m4 four times ... costs one evaluation
** of each macro per row, not 4^6 (docs/limits.md, "Macros"). */
static tg_expr *expand_macro(tg_cstate *cs, const tg_ast *ast, tg_macro *m)
{
    if (cs->budget == 0 || cs->ld->nodes_left == 0) return NULL;   /* "too large" was said once */
    tg_macro_use *use = macro_use(cs, m);
    if (use && use->done) {
        if (!use->e) return NULL;   /* its errors were reported at its first use */
        return charge(cs, use->size, ast->pos, m) ? use->e : NULL;
    }
    for (int i = 0; i < cs->depth; i++) {
        if (strcmp(cs->stack[i], m->name) != 0) continue;
        char chain[512] = "";
        size_t len = 0;
        for (int j = i; j < cs->depth && len < sizeof chain - 64; j++)
            len += (size_t)snprintf(chain + len, sizeof chain - len, "%s -> ", cs->stack[j]);
        snprintf(chain + len, sizeof chain - len, "%s", m->name);
        cerr(cs, ast->pos, "macro '%s' expands to itself (%s)", m->name, chain);
        return NULL;
    }
    if (cs->depth >= (int)(sizeof cs->stack / sizeof *cs->stack)) {
        cerr(cs, ast->pos, "macros nested more than %d deep", (int)(sizeof cs->stack / sizeof *cs->stack));
        return NULL;
    }
    m->used = true;
    if (!m->ast) return NULL;   /* its syntax error was reported where it is defined */
    if (!fits(cs, macro_size(cs, m), ast->pos, m)) return NULL;
    int errors = cs->ld->ctx.diag->n_errors;
    size_t before = cs->budget;
    cs->stack[cs->depth++] = m->name;
    tg_expr *e = compile_node(cs, m->ast);
    cs->depth--;
    if (!e && cs->ld->ctx.diag->n_errors > errors)
        tg_rules_msg(&cs->ld->ctx, TG_DIAG_NOTE, ast->pos, "in macro '%s', used in '%s' of rule '%s'", m->name,
                     cs->clause, cs->rule->info.id);
    if (e && !e->memo && shared_memo(e)) e->memo = ++cs->rule->n_memos;
    if (use) *use = (tg_macro_use){.e = e, .size = before - cs->budget, .done = true};
    return e;
}

static void add_trace_ref(tg_cstate *cs, const tg_field_def *f)
{
    for (size_t i = 0; i < cs->n_trace_refs; i++)
        if (cs->trace_refs[i] == f) return;
    TG_PUSH(cs->trace_refs, cs->n_trace_refs, cs->cap_trace_refs, f);
}

/* Names of the fields of a source, for suggestions. */
static size_t field_names(tg_source_id src, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < tg_field_count && n < cap; i++)
        if (tg_field_defs[i].source == src) names[n++] = tg_field_defs[i].name;
    return n;
}

/* device.FIELD: a field of the device source's row for the row's own
** device (kernel, memcpy, memset, gap rows carry one), e.g.
** `device.copy_frac_steady > 50%` on copies. A row value: inside
** aggregates only in aggregate context, like a field. */
static tg_expr *compile_device_ref(tg_cstate *cs, const tg_ast *ast)
{
    const char *names[128];
    tg_rule *r = cs->rule;
    const tg_field_def *id = tg_field_find(r->source, "device");
    if (!id || id->type != TG_TY_INT) {
        cerr(cs, ast->pos, "device.%s needs a source whose rows name a device (kernel, memcpy, memset, gap); "
             "'%s' rows do not", ast->member, tg_source_defs[r->source].name);
        return NULL;
    }
    const tg_field_def *f = tg_field_find(TG_SRC_DEVICE, ast->member);
    if (!f) {
        size_t n = field_names(TG_SRC_DEVICE, names, 128);
        const char *hint = tg_suggest(ast->member, names, n);
        cerr(cs, ast->pos, "the device source has no field '%s'%s%s%s", ast->member, hint ? " (did you mean '" : "",
             hint ? hint : "", hint ? "'?)" : "");
        return NULL;
    }
    if (cs->mode == TG_CM_AGG && !cs->in_agg) {
        cerr(cs, ast->pos, "'device.%s' is a value of a single %s row's device; '%s' works on aggregates of the "
             "rows, e.g. max(device.%s)", ast->member, tg_source_defs[r->source].name, cs->clause, ast->member);
        return NULL;
    }
    tg_expr *e = new_expr(cs, TG_N_DEVICE_REF, ast->pos);
    tg_expr *key = e ? new_expr(cs, TG_N_FIELD, ast->pos) : NULL;
    if (!key) return NULL;
    key->field = id;
    key->type = id->type;
    key->unit = id->unit;
    e->a = key;
    e->field = f;
    e->type = f->type;
    e->unit = f->unit;
    return e;
}

/* The type and unit of baseline.STAT, from the kind column of
** TG_BASELINE_STATS (expr.h): METRIC statistics are in the unit of the
** rule's metric, RATIO a ratio, PLAIN a plain number, COUNT an integer. */
static void baseline_stat_type(tg_baseline_stat stat, tg_unit metric_unit, tg_type *type, tg_unit *unit)
{
    enum { KIND_METRIC, KIND_RATIO, KIND_PLAIN, KIND_COUNT };
    static const int kinds[TG_BSTAT_COUNT] = {
#define X(id, name, kind, doc) [TG_BSTAT_##id] = KIND_##kind,
        TG_BASELINE_STATS(X)
#undef X
    };
    *type = kinds[stat] == KIND_COUNT ? TG_TY_INT : TG_TY_FLOAT;
    switch (kinds[stat]) {
    case KIND_METRIC: *unit = metric_unit; break;
    case KIND_RATIO: *unit = TG_UNIT_RATIO; break;
    case KIND_PLAIN: case KIND_COUNT: *unit = TG_UNIT_NONE; break;
    default: TG_UNREACHABLE(); *unit = TG_UNIT_NONE; break;
    }
}

static tg_expr *compile_dotted(tg_cstate *cs, const tg_ast *ast)
{
    const char *names[128];
    size_t n = 0;
    tg_rule *r = cs->rule;
    if (strcmp(ast->name, "params") == 0) {
        for (size_t i = 0; i < r->n_params; i++) {
            if (strcmp(r->params[i].name, ast->member) != 0) continue;
            r->params[i].used = true;
            tg_expr *e = make_const(cs, ast->pos, r->params[i].value);
            if (e) {
                e->param = r->params[i].name;
                e->suffix = r->params[i].suffix;
            }
            return e;
        }
        for (size_t i = 0; i < r->n_params && n < 128; i++) names[n++] = r->params[i].name;
        const char *hint = tg_suggest(ast->member, names, n);
        cerr(cs, ast->pos, "rule '%s' has no param '%s'%s%s%s", r->info.id, ast->member,
             hint ? " (did you mean '" : " (declare it under 'params:')", hint ? hint : "", hint ? "'?)" : "");
        return NULL;
    }
    if (strcmp(ast->name, "trace") == 0) {
        const tg_field_def *f = tg_field_find(TG_SRC_TRACE, ast->member);
        if (!f) {
            n = field_names(TG_SRC_TRACE, names, 128);
            const char *hint = tg_suggest(ast->member, names, n);
            cerr(cs, ast->pos, "the trace has no field '%s'%s%s%s", ast->member, hint ? " (did you mean '" : "",
                 hint ? hint : "", hint ? "'?)" : "");
            return NULL;
        }
        tg_expr *e = new_expr(cs, TG_N_TRACE_REF, ast->pos);
        if (!e) return NULL;
        e->field = f;
        e->type = f->type;
        e->unit = f->unit;
        if (cs->mode == TG_CM_AGG && !cs->in_agg) add_trace_ref(cs, f);
        return e;
    }
    if (strcmp(ast->name, "device") == 0 && r->source != TG_SRC_DEVICE) return compile_device_ref(cs, ast);
    if (strcmp(ast->name, "baseline") == 0) {
        int stat = -1;
        for (int i = 0; i < TG_BSTAT_COUNT; i++)
            if (strcmp(tg_baseline_stat_names[i], ast->member) == 0) stat = i;
        if (stat < 0) {
            const char *hint = tg_suggest(ast->member, tg_baseline_stat_names, TG_BSTAT_COUNT);
            const char *all[TG_BSTAT_COUNT + 1] = {0};
            for (int i = 0; i < TG_BSTAT_COUNT; i++) all[i] = tg_baseline_stat_names[i];
            char list[256];
            if (hint)
                cerr(cs, ast->pos, "unknown baseline statistic '%s' (did you mean '%s'?)", ast->member, hint);
            else
                cerr(cs, ast->pos, "unknown baseline statistic '%s' (%s)", ast->member,
                     tg_vocab_join(all, list, sizeof list));
            return NULL;
        }
        if (!r->metric) {
            cerr(cs, ast->pos, "baseline.%s needs the rule to declare a 'metric'", ast->member);
            return NULL;
        }
        tg_expr *e = new_expr(cs, TG_N_BASELINE, ast->pos);
        if (!e) return NULL;
        e->stat = (tg_baseline_stat)stat;
        baseline_stat_type(e->stat, r->metric->unit, &e->type, &e->unit);
        return e;
    }
    const tg_source_def *src = tg_source_find(ast->name);
    if (src && src->id == r->source)
        cerr(cs, ast->pos, "write '%s', not '%s.%s': the fields of the rule's source are used by name",
             ast->member, ast->name, ast->member);
    else if (src)
        cerr(cs, ast->pos, "a rule reads one source, and this rule's source is '%s', not '%s'",
             tg_source_defs[r->source].name, ast->name);
    else
        cerr(cs, ast->pos, "unknown name '%s.%s' (dotted names are params.NAME, trace.FIELD, device.FIELD and baseline.STAT)",
             ast->name, ast->member);
    return NULL;
}

static tg_expr *compile_call(tg_cstate *cs, const tg_ast *ast);

static tg_expr *compile_name(tg_cstate *cs, const tg_ast *ast)
{
    if (ast->member) return compile_dotted(cs, ast);
    tg_rule *r = cs->rule;
    /* A source's own field wins over a macro of the same name: a macro
    ** fills in names a source lacks and never changes what a column means
    ** (lint warns about the shadowed macro). */
    const tg_field_def *f = tg_field_find(r->source, ast->name);
    tg_macro *m = f ? NULL : tg_rfile_macro(cs->ld, ast->name);
    if (m) return expand_macro(cs, ast, m);
    if (f) {
        if (cs->mode == TG_CM_AGG && !cs->in_agg) {
            cerr(cs, ast->pos,
                 "'%s' is a field of a single %s row; '%s' works on aggregates of the rows, e.g. max(%s) or count",
                 ast->name, tg_source_defs[r->source].name, cs->clause, ast->name);
            return NULL;
        }
        tg_expr *e = new_expr(cs, TG_N_FIELD, ast->pos);
        if (!e) return NULL;
        e->field = f;
        e->type = f->type;
        e->unit = f->unit;
        return e;
    }
    int agg = tg_agg_find(ast->name);
    if (agg == TG_AGG_COUNT) return compile_call(cs, ast);
    if (agg >= 0) {
        cerr(cs, ast->pos, "'%s' needs an argument, e.g. %s(duration)", ast->name, ast->name);
        return NULL;
    }
    if (tg_rfile_list(cs->ld, ast->name)) {
        cerr(cs, ast->pos, "list '%s' can only follow 'in' (x in %s)", ast->name, ast->name);
        return NULL;
    }
    if (!strcmp(ast->name, "params") || !strcmp(ast->name, "trace") || !strcmp(ast->name, "baseline")) {
        cerr(cs, ast->pos, "'%s' needs a name after a dot: %s.NAME", ast->name, ast->name);
        return NULL;
    }
    const char *names[160];
    size_t n = field_names(r->source, names, 128);
    for (size_t i = 0; i < cs->ld->n_macros && n < 159; i++) names[n++] = cs->ld->macros[i].name;
    names[n++] = "count";
    const char *hint = tg_suggest(ast->name, names, n);
    cerr(cs, ast->pos, "unknown field '%s' of source '%s'%s%s%s", ast->name, tg_source_defs[r->source].name,
         hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
    return NULL;
}

/* ----------------------------------------------------------- aggregates */

/* "sum" + "end - start" + ns -> "sum_end_start_ns" */
static const char *value_name(tg_cstate *cs, tg_agg_kind kind, const char *arg, tg_unit unit)
{
    if (!arg) return tg_agg_defs[kind].name;
    char buf[80];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s_", tg_agg_defs[kind].name);
    bool sep = true;
    for (const char *s = arg; *s && n < 64; s++) {
        if (isalnum((unsigned char)*s)) {
            buf[n++] = (char)tolower((unsigned char)*s);
            sep = false;
        } else if (!sep) {
            buf[n++] = '_';
            sep = true;
        }
    }
    while (n > 0 && buf[n - 1] == '_') n--;
    buf[n] = 0;
    const char *suffix = unit == TG_UNIT_NS ? "_ns" : unit == TG_UNIT_BYTES ? "_bytes" : "";
    size_t sl = strlen(suffix);
    if (sl && !(n >= sl - 1 && strcmp(buf + n - (sl - 1), suffix + 1) == 0)) strcat(buf, suffix);
    const char *name = tg_arena_strdup(cs->ld->ctx.arena, buf);
    for (int k = 2; name; k++) {           /* distinct texts may share a name */
        bool taken = false;
        for (size_t i = 0; i < cs->n_aggs && !taken; i++) taken = strcmp(cs->aggs[i].value_name, name) == 0;
        if (!taken) break;
        name = tg_arena_printf(cs->ld->ctx.arena, "%s_%d", buf, k);
    }
    return name;
}

static int collect_index(tg_cstate *cs, const char *key)
{
    for (size_t i = 0; i < cs->n_collect; i++)
        if (strcmp(cs->collect_keys[i], key) == 0) return (int)i;
    char *k = tg_arena_strdup(cs->ld->ctx.arena, key);
    if (!k || !TG_PUSH(cs->collect_keys, cs->n_collect, cs->cap_collect, k)) return -1;
    return (int)cs->n_collect - 1;
}

static tg_expr *compile_call(tg_cstate *cs, const tg_ast *ast)
{
    int k = tg_agg_find(ast->name);
    if (k < 0) {
        const char *names[TG_AGG_COUNT_KINDS + 1] = {0};
        for (int i = 0; i < TG_AGG_COUNT_KINDS; i++) names[i] = tg_agg_defs[i].name;
        const char *hint = tg_suggest(ast->name, names, TG_AGG_COUNT_KINDS);
        char list[256];
        if (hint) cerr(cs, ast->pos, "unknown function '%s' (did you mean '%s'?)", ast->name, hint);
        else cerr(cs, ast->pos, "unknown function '%s' (aggregates: %s)", ast->name, tg_vocab_join(names, list, sizeof list));
        return NULL;
    }
    const tg_agg_def *def = &tg_agg_defs[k];
    if (cs->in_agg) {
        cerr(cs, ast->pos, "aggregates do not nest: '%s' inside another aggregate's argument", def->name);
        return NULL;
    }
    if (cs->mode == TG_CM_ROW) {
        cerr(cs, ast->pos, "aggregate '%s' is not allowed in '%s', which looks at one row at a time; "
             "aggregates belong in fail_when, message and metric", def->name, cs->clause);
        return NULL;
    }
    size_t want_min = def->arg == TG_AGG_ARG_NONE || def->arg == TG_AGG_ARG_OPT_PRED ? 0 : 1;
    size_t want_max = def->arg == TG_AGG_ARG_NONE ? 0 : 1;
    if (ast->n_items < want_min || ast->n_items > want_max) {
        cerr(cs, ast->pos, "'%s' takes %s", def->name,
             want_max == 0 ? "no argument" : want_min == 0 ? "at most one argument (a condition)" : "one argument");
        return NULL;
    }
    tg_expr *arg = NULL;
    if (ast->n_items) {
        cs->in_agg = true;
        arg = compile_node(cs, ast->items[0]);
        cs->in_agg = false;
        if (!arg) return NULL;
        bool pred = def->arg == TG_AGG_ARG_PRED || def->arg == TG_AGG_ARG_OPT_PRED;
        if (pred && arg->type != TG_TY_BOOL) {
            cerr(cs, arg->pos, "the argument of '%s' must be a condition, but '%s' is %s", def->name,
                 text_of(cs, ast->items[0]), describe(arg));
            return NULL;
        }
        if (!pred && !is_num(arg)) {
            cerr(cs, arg->pos, "'%s' needs a number, but '%s' is %s", def->name, text_of(cs, ast->items[0]),
                 describe(arg));
            return NULL;
        }
    }
    const char *text = text_of(cs, ast);
    if (!ast->n_items) text = "count";
    int idx = -1;
    for (size_t i = 0; i < cs->n_aggs; i++)
        if (strcmp(cs->aggs[i].text, text) == 0) idx = (int)i;
    if (idx < 0) {
        tg_agg_use u = {.kind = (tg_agg_kind)k, .arg = arg, .text = text, .collect = -1};
        switch (def->result) {
        case TG_AGG_RES_COUNT: u.type = TG_TY_INT; u.unit = TG_UNIT_NONE; break;
        case TG_AGG_RES_SAME: u.type = arg->type; u.unit = arg->unit; break;
        case TG_AGG_RES_FLOAT: u.type = TG_TY_FLOAT; u.unit = arg->unit; break;
        case TG_AGG_RES_PLAIN: u.type = TG_TY_FLOAT; u.unit = TG_UNIT_NONE; break;
        case TG_AGG_RES_RATIO: u.type = TG_TY_FLOAT; u.unit = TG_UNIT_RATIO; break;
        }
        const char *arg_text = ast->n_items ? text_of(cs, ast->items[0]) : NULL;
        u.value_name = value_name(cs, u.kind, arg_text, def->result == TG_AGG_RES_RATIO ? TG_UNIT_NONE : u.unit);
        if (def->quantile) u.collect = collect_index(cs, arg_text);
        if (arg && arg->op == TG_N_FIELD) u.field = arg->field;
        if (!u.value_name || !TG_PUSH(cs->aggs, cs->n_aggs, cs->cap_aggs, u)) return NULL;
        idx = (int)cs->n_aggs - 1;
    }
    tg_expr *e = new_expr(cs, TG_N_AGGREGATE, ast->pos);
    if (!e) return NULL;
    e->agg = idx;
    e->type = cs->aggs[idx].type;
    e->unit = cs->aggs[idx].unit;
    e->a = cs->aggs[idx].arg;
    return e;
}


/* ------------------------------------------------------------ operators */

static tg_expr *fold_or_node(tg_cstate *cs, tg_node_kind op, tg_pos pos, tg_expr *a, tg_expr *b, tg_type type,
                             tg_unit unit)
{
    if (is_const(a) && (!b || is_const(b))) {
        tg_value v;
        switch (tg_node_classes[op]) {
        case TG_NC_ARITH: v = tg_value_arith(op, a->k, b->k, unit); break;
        case TG_NC_CMP: v = tg_bool(tg_value_compare(op, a->k, b->k)); break;
        default:
            if (op == TG_N_NOT) v = tg_bool(!tg_value_truthy(a->k));
            else if (op == TG_N_NEG) v = tg_value_arith(TG_N_SUB, tg_int(0, unit), a->k, unit);
            else if (op == TG_N_AND) v = tg_bool(tg_value_truthy(a->k) && tg_value_truthy(b->k));
            else if (op == TG_N_OR) v = tg_bool(tg_value_truthy(a->k) || tg_value_truthy(b->k));
            else if (op == TG_N_IS_NULL) v = tg_bool(a->k.type == TG_TY_NULL);
            else if (op == TG_N_NOT_NULL) v = tg_bool(a->k.type != TG_TY_NULL);
            else v = tg_null();
            break;
        }
        if (op == TG_N_DIV && v.type == TG_TY_NULL) {
            cerr(cs, pos, "division by zero");
            return NULL;
        }
        tg_expr *c = make_const(cs, pos, v);
        if (c && type != TG_TY_BOOL) c->unit = unit;
        return c;
    }
    tg_expr *e = new_expr(cs, op, pos);
    if (!e) return NULL;
    e->a = a;
    e->b = b;
    e->type = type;
    e->unit = unit;
    return e;
}

static bool expect_bool(tg_cstate *cs, const tg_expr *e, const tg_ast *ast, const char *op)
{
    if (e->type == TG_TY_BOOL) return true;
    cerr(cs, e->pos, "'%s' needs conditions, but '%s' is %s", op, text_of(cs, ast), describe(e));
    return false;
}

static tg_expr *compile_logic(tg_cstate *cs, const tg_ast *ast)
{
    tg_expr *a = compile_node(cs, ast->a);
    tg_expr *b = ast->b ? compile_node(cs, ast->b) : NULL;
    const char *op = tg_node_spelling[ast->kind];
    if (!a || (ast->b && !b)) return NULL;
    if (!expect_bool(cs, a, ast->a, op) || (b && !expect_bool(cs, b, ast->b, op))) return NULL;
    if (ast->kind == TG_N_NOT) return fold_or_node(cs, TG_N_NOT, ast->pos, a, NULL, TG_TY_BOOL, TG_UNIT_NONE);
    bool is_and = ast->kind == TG_N_AND;
    /* `true and x` is x; `false and x` is false (and dually for or). */
    if (is_const(a)) return tg_value_truthy(a->k) == is_and ? b : a;
    if (is_const(b) && tg_value_truthy(b->k) == is_and) return a;
    return fold_or_node(cs, ast->kind, ast->pos, a, b, TG_TY_BOOL, TG_UNIT_NONE);
}

static tg_expr *compile_null_cmp(tg_cstate *cs, const tg_ast *ast)
{
    bool a_null = ast->a->kind == TG_N_NULL_LIT;
    if (a_null && ast->b->kind == TG_N_NULL_LIT) {
        cerr(cs, ast->pos, "comparing null with null");
        return NULL;
    }
    tg_expr *x = compile_node(cs, a_null ? ast->b : ast->a);
    if (!x) return NULL;
    tg_node_kind op = ast->kind == TG_N_EQ ? TG_N_IS_NULL : TG_N_NOT_NULL;
    return fold_or_node(cs, op, ast->pos, x, NULL, TG_TY_BOOL, TG_UNIT_NONE);
}

static tg_expr *const_string(tg_cstate *cs, tg_expr *b, const tg_ast *ast, const char *op)
{
    if (is_const(b) && b->type == TG_TY_STRING) return b;
    cerr(cs, b->pos, "the right side of '%s' must be a constant string such as \"nccl\", but '%s' is %s", op,
         text_of(cs, ast), is_const(b) ? describe(b) : "computed from the row");
    return NULL;
}

static tg_expr *compile_string_op(tg_cstate *cs, const tg_ast *ast, tg_expr *a, tg_expr *b)
{
    const char *op = tg_node_spelling[ast->kind];
    if (a->type != TG_TY_STRING) {
        cerr(cs, a->pos, "'%s' needs a string on its left, but '%s' is %s", op, text_of(cs, ast->a), describe(a));
        return NULL;
    }
    if (!const_string(cs, b, ast->b, op)) return NULL;
    tg_regex *re = NULL;
    if (ast->kind == TG_N_MATCHES) {
        char why[256];
        re = tg_regex_compile(b->k.u.s, why, sizeof why);
        if (!re) {
            bool bad = tg_regex_refuse(b->k.u.s) == NULL;   /* invalid rather than over a limit */
            cerr(cs, b->pos, "%sregular expression \"%.80s%s\" %s", bad ? "bad " : "the ", b->k.u.s,
                 strlen(b->k.u.s) > 80 ? "..." : "", why);
            return NULL;
        }
        if (!TG_PUSH(cs->ld->regexes, cs->ld->n_regexes, cs->ld->cap_regexes, re)) {
            tg_regex_free(re);
            return NULL;
        }
    }
    if (is_const(a)) {
        const char *s = a->k.u.s ? a->k.u.s : "";
        uint64_t budget = TG_REGEX_STEP_BUDGET;
        int m = re ? tg_regex_match(re, s, strlen(s), &budget) : tg_value_compare(ast->kind, a->k, b->k);
        if (m < 0) {
            cerr(cs, b->pos, "the regular expression \"%.80s%s\" hit a limit of the matcher on the constant "
                 "it is applied to (docs/limits.md)", b->k.u.s, strlen(b->k.u.s) > 80 ? "..." : "");
            return NULL;
        }
        return make_const(cs, ast->pos, tg_bool(m > 0));
    }
    tg_expr *e = fold_or_node(cs, ast->kind, ast->pos, a, b, TG_TY_BOOL, TG_UNIT_NONE);
    if (e) {
        e->re = re;
        e->slot = cs->rule->n_slots++;
    }
    return e;
}

static bool check_comparable(tg_cstate *cs, const tg_ast *ast, const tg_expr *a, const tg_expr *b, tg_pos at)
{
    const char *op = tg_node_spelling[ast->kind];
    bool ordered = ast->kind != TG_N_EQ && ast->kind != TG_N_NE && ast->kind != TG_N_IN;
    if (is_num(a) && is_num(b)) {
        if (units_agree(a, b)) return true;
        const tg_expr *plain = a->unit == TG_UNIT_NONE ? a : b, *other = plain == a ? b : a;
        cerr(cs, at, "cannot compare %s ('%s') with %s ('%s')%s", describe(a), text_of(cs, ast->a), describe(b),
             text_of(cs, ast->b), unit_hint(plain, other));
        return false;
    }
    if (a->type == b->type && (a->type == TG_TY_STRING || a->type == TG_TY_BOOL)) {
        if (!ordered) return true;
        cerr(cs, at, "'%s' compares numbers, but '%s' is %s", op, text_of(cs, ast->a), describe(a));
        return false;
    }
    cerr(cs, at, "cannot compare %s ('%s') with %s ('%s')", describe(a), text_of(cs, ast->a), describe(b),
         text_of(cs, ast->b));
    return false;
}

static tg_expr *compile_in(tg_cstate *cs, const tg_ast *ast, tg_expr *a)
{
    const tg_ast *rhs = ast->b;
    tg_expr *e = new_expr(cs, TG_N_IN, ast->pos);
    if (!e) return NULL;
    e->a = a;
    e->type = TG_TY_BOOL;
    bool ok = true;
    if (rhs->kind == TG_N_LIST) {
        e->n_list = rhs->n_items;
        e->list = tg_arena_alloc(cs->ld->ctx.arena, (rhs->n_items ? rhs->n_items : 1) * sizeof *e->list);
        if (!e->list) return NULL;
        for (size_t i = 0; i < rhs->n_items; i++) {
            const tg_ast *it = rhs->items[i];
            if (it->kind == TG_N_NAME && !it->member && !tg_rfile_macro(cs->ld, it->name) &&
                !tg_field_find(cs->rule->source, it->name)) {
                cerr(cs, it->pos, "'%s' in a list is a name, not a string; quote it: \"%s\"", it->name, it->name);
                ok = false;
                continue;
            }
            tg_expr *x = compile_node(cs, it);
            if (!x) { ok = false; continue; }
            if (!is_const(x)) {
                cerr(cs, x->pos, "list elements must be constants, but '%s' depends on the row", text_of(cs, it));
                ok = false;
                continue;
            }
            if (!check_comparable(cs, ast, a, x, x->pos)) ok = false;
            e->list[i] = x->k;
        }
    } else if (rhs->kind == TG_N_NAME && !rhs->member) {
        tg_list *l = tg_rfile_list(cs->ld, rhs->name);
        if (!l) {
            const char *names[128];
            size_t n = 0;
            for (size_t i = 0; i < cs->ld->n_lists && n < 128; i++) names[n++] = cs->ld->lists[i].name;
            const char *hint = tg_suggest(rhs->name, names, n);
            cerr(cs, rhs->pos, "unknown list '%s'%s%s%s", rhs->name, hint ? " (did you mean '" : " (define it under 'lists:')",
                 hint ? hint : "", hint ? "'?)" : "");
            return NULL;
        }
        l->used = true;
        e->list = l->items;
        e->n_list = l->n;
        e->list_name = l->name;
        for (size_t i = 0; i < l->n && ok; i++) {
            tg_expr tmp = {.type = l->items[i].type, .unit = l->items[i].unit, .op = TG_N_CONST, .k = l->items[i]};
            ok = check_comparable(cs, ast, a, &tmp, rhs->pos);
        }
    } else {
        cerr(cs, rhs->pos, "'in' needs a list: [\"a\", \"b\"] or the name of a list from 'lists:'");
        return NULL;
    }
    if (!ok) return NULL;
    if (is_const(a)) return make_const(cs, ast->pos, tg_bool(tg_value_in(a->k, e->list, e->n_list)));
    if (a->type == TG_TY_STRING) e->slot = cs->rule->n_slots++;
    return e;
}

static tg_expr *compile_cmp(tg_cstate *cs, const tg_ast *ast)
{
    if ((ast->kind == TG_N_EQ || ast->kind == TG_N_NE) &&
        (ast->a->kind == TG_N_NULL_LIT || ast->b->kind == TG_N_NULL_LIT))
        return compile_null_cmp(cs, ast);
    tg_expr *a = compile_node(cs, ast->a);
    if (ast->kind == TG_N_IN) return a ? compile_in(cs, ast, a) : NULL;
    tg_expr *b = compile_node(cs, ast->b);
    if (!a || !b) return NULL;
    if (ast->kind == TG_N_MATCHES || ast->kind == TG_N_STARTSWITH || ast->kind == TG_N_CONTAINS)
        return compile_string_op(cs, ast, a, b);
    /* Point at the literal when one side is one: that is what to fix. */
    tg_pos at = is_const(b) && !is_const(a) ? b->pos : a->pos;
    if (!check_comparable(cs, ast, a, b, at)) return NULL;
    tg_expr *e = fold_or_node(cs, ast->kind, ast->pos, a, b, TG_TY_BOOL, TG_UNIT_NONE);
    if (e && !is_const(e) && a->type == TG_TY_STRING) e->slot = cs->rule->n_slots++;
    return e;
}

static bool arith_unit(tg_node_kind op, const tg_expr *a, const tg_expr *b, tg_unit *out)
{
    tg_unit x = a->unit, y = b->unit;
    switch (op) {
    case TG_N_ADD:
    case TG_N_SUB:
        if (x == y || zero_literal(b)) { *out = x; return true; }
        if (zero_literal(a)) { *out = y; return true; }
        if ((x == TG_UNIT_RATIO && y == TG_UNIT_NONE) || (x == TG_UNIT_NONE && y == TG_UNIT_RATIO)) {
            *out = TG_UNIT_RATIO;
            return true;
        }
        return false;
    case TG_N_MUL:
        if (x == TG_UNIT_NONE || x == TG_UNIT_RATIO) { *out = y == TG_UNIT_NONE ? x : y; return true; }
        if (y == TG_UNIT_NONE || y == TG_UNIT_RATIO) { *out = x; return true; }
        return false;
    case TG_N_DIV:
        if (x == y) { *out = TG_UNIT_NONE; return true; }
        if (y == TG_UNIT_NONE || y == TG_UNIT_RATIO) { *out = x; return true; }
        if (x == TG_UNIT_BYTES && y == TG_UNIT_NS) { *out = TG_UNIT_RATE; return true; }   /* see compile_arith */
        return false;
    default:
        return false;
    }
}

static tg_expr *compile_arith(tg_cstate *cs, const tg_ast *ast)
{
    tg_expr *a = compile_node(cs, ast->a);
    tg_expr *b = compile_node(cs, ast->b);
    if (!a || !b) return NULL;
    const char *op = tg_node_spelling[ast->kind];
    if (!is_num(a) || !is_num(b)) {
        const tg_expr *bad = is_num(a) ? b : a;
        cerr(cs, bad->pos, "'%s' needs numbers, but '%s' is %s", op, text_of(cs, bad == a ? ast->a : ast->b),
             describe(bad));
        return NULL;
    }
    tg_unit unit;
    if (!arith_unit(ast->kind, a, b, &unit)) {
        cerr(cs, ast->pos, "cannot %s %s ('%s') and %s ('%s')",
             ast->kind == TG_N_ADD ? "add" : ast->kind == TG_N_SUB ? "subtract" : ast->kind == TG_N_MUL ? "multiply" : "divide",
             describe(a), text_of(cs, ast->a), describe(b), text_of(cs, ast->b));
        return NULL;
    }
    tg_type type = ast->kind == TG_N_DIV || a->type == TG_TY_FLOAT || b->type == TG_TY_FLOAT ? TG_TY_FLOAT : TG_TY_INT;
    if (unit == TG_UNIT_RATE && a->unit == TG_UNIT_BYTES) {
        /* bytes over nanoseconds: a rate, in its base unit of bytes per
        ** second (units.def), so the quotient is scaled by 1e9 ns/s; explain
        ** and the reproduce SQL show the factor */
        tg_expr *per_ns = fold_or_node(cs, TG_N_DIV, ast->pos, a, b, TG_TY_FLOAT, TG_UNIT_NONE);
        tg_expr *ns_per_s = make_const(cs, ast->pos, tg_float(1e9, TG_UNIT_NONE));
        if (!per_ns || !ns_per_s) return NULL;
        return fold_or_node(cs, TG_N_MUL, ast->pos, per_ns, ns_per_s, TG_TY_FLOAT, TG_UNIT_RATE);
    }
    return fold_or_node(cs, ast->kind, ast->pos, a, b, type, unit);
}

static tg_expr *compile_node(tg_cstate *cs, const tg_ast *ast)
{
    tg_expr *e;
    switch (ast->kind) {
    case TG_N_NUMBER:
        e = make_const(cs, ast->pos, ast->is_int ? tg_int(ast->ival, ast->unit) : tg_float(ast->num, ast->unit));
        if (e) {
            e->suffix = ast->suffix;
            e->literal = true;
        }
        return e;
    case TG_N_STRING:
        e = make_const(cs, ast->pos, tg_str(ast->name));
        if (e) e->literal = true;
        return e;
    case TG_N_BOOL_LIT:
        return make_const(cs, ast->pos, tg_bool(ast->bval));
    case TG_N_NULL_LIT:
        cerr(cs, ast->pos, "null can only be compared: x == null or x != null");
        return NULL;
    case TG_N_LIST:
        cerr(cs, ast->pos, "a list [...] can only follow 'in'");
        return NULL;
    case TG_N_NAME: return compile_name(cs, ast);
    case TG_N_CALL: return compile_call(cs, ast);
    case TG_N_NEG: {
        tg_expr *a = compile_node(cs, ast->a);
        if (!a) return NULL;
        if (!is_num(a)) {
            cerr(cs, a->pos, "'-' needs a number, but '%s' is %s", text_of(cs, ast->a), describe(a));
            return NULL;
        }
        return fold_or_node(cs, TG_N_NEG, ast->pos, a, NULL, a->type, a->unit);
    }
    default:
        break;
    }
    switch (tg_node_classes[ast->kind]) {
    case TG_NC_LOGIC:
    case TG_NC_UNARY: return compile_logic(cs, ast);
    case TG_NC_CMP: return compile_cmp(cs, ast);
    case TG_NC_ARITH: return compile_arith(cs, ast);
    default:
        cerr(cs, ast->pos, "internal error: unexpected node '%s'", tg_node_spelling[ast->kind]);
        return NULL;
    }
}

tg_expr *tg_compile_expr(tg_cstate *cs, const tg_ast *ast, tg_cmode mode, const char *clause)
{
    size_t n_uses = cs->ld->n_macros * 2;
    if (n_uses && !cs->macro_uses) cs->macro_uses = calloc(n_uses, sizeof *cs->macro_uses);
    else if (n_uses) memset(cs->macro_uses, 0, n_uses * sizeof *cs->macro_uses);
    cs->mode = mode;
    cs->clause = clause;
    cs->in_agg = false;
    cs->depth = 0;
    return ast ? compile_node(cs, ast) : NULL;
}

bool tg_compile_expect(tg_cstate *cs, const tg_expr *e, tg_type type, const char *what)
{
    bool ok = type == TG_TY_BOOL ? e->type == TG_TY_BOOL : is_num(e);
    if (!ok)
        cerr(cs, e->pos, "'%s' must be %s, but this is %s", what,
             type == TG_TY_BOOL ? "a condition (true/false)" : "a number", describe(e));
    return ok;
}

tg_expr *tg_compile_not(tg_cstate *cs, tg_expr *a)
{
    return a ? fold_or_node(cs, TG_N_NOT, a->pos, a, NULL, TG_TY_BOOL, TG_UNIT_NONE) : NULL;
}

tg_expr *tg_compile_and(tg_cstate *cs, tg_expr *a, tg_expr *b)
{
    if (!a) return b;
    if (!b) return a;
    if (is_const(a)) return tg_value_truthy(a->k) ? b : a;
    if (is_const(b)) return tg_value_truthy(b->k) ? a : b;
    return fold_or_node(cs, TG_N_AND, a->pos, a, b, TG_TY_BOOL, TG_UNIT_NONE);
}
