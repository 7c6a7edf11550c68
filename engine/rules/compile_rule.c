/*
** Compiling one rule: checks each key of a rule definition (after
** overrides) and builds the tg_rule the evaluator runs -- title, severity
** and source; params with their --set overrides; where (and appended
** clauses), fail_when, metric and samples through compile.c; the message
** template with its {expression} placeholders; evidence order, limit and
** columns (grouped evidence: compile_group.c). Keys are compiled in dependency order: params before the
** expressions that read them, metric before baseline.STAT references.
*/
#include "load.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_columns[TG_SRC_COUNT][8] = {
    [TG_SRC_KERNEL] = {"name", "duration", "device", "stream", "queue", "api"},
    [TG_SRC_MEMCPY] = {"kind", "bytes", "duration", "src_kind", "dst_kind", "api", "device"},
    [TG_SRC_MEMSET] = {"bytes", "mem_kind", "duration", "api", "device"},
    [TG_SRC_API] = {"name", "duration", "pid", "tid"},
    [TG_SRC_NVTX] = {"name", "duration", "depth", "gpu_time"},
    [TG_SRC_ITERATION] = {"index", "pid", "duration", "period", "gpu_time"},
    [TG_SRC_GAP] = {"duration", "device", "pid"},
    [TG_SRC_DEVICE] = {"device", "name", "busy_frac", "busy_frac_steady", "span", "kernel_time"},
    [TG_SRC_TRACE] = {"duration"},
    [TG_SRC_OSRT] = {"name", "duration", "thread", "tid", "call_site"},
    [TG_SRC_CUDNN] = {"name", "duration", "kernels", "kernel_time", "tid"},
    [TG_SRC_CUBLAS] = {"name", "duration", "kernels", "kernel_time", "tid"},
};

typedef struct rule_cc {
    tg_rules_loader *ld;
    const tg_rule_def *def;
    tg_rule *r;
    tg_cstate cs;
    bool source_ok;
} rule_cc;

#define ERR(cc, pos, ...) tg_rules_error(&(cc)->ld->ctx, (pos), __VA_ARGS__)

static const char *scalar_text(rule_cc *cc, tg_rule_key key, bool required)
{
    const tg_ynode *n = cc->def->key[key];
    if (!n) {
        if (required) ERR(cc, cc->def->pos, "rule '%s' has no '%s'", cc->def->id, tg_rule_key_names[key]);
        return NULL;
    }
    if (n->kind != TG_Y_SCALAR) {
        ERR(cc, n->pos, "'%s' must be text, not %s", tg_rule_key_names[key], tg_ynode_kind_name(n));
        return NULL;
    }
    return n->value;
}

static const tg_ast *parse_node(rule_cc *cc, const tg_ynode *n, const char *what)
{
    if (n->kind != TG_Y_SCALAR) {
        ERR(cc, n->pos, "'%s' must be an expression (a string), not %s", what, tg_ynode_kind_name(n));
        return NULL;
    }
    const tg_srcmap *map = tg_yaml_scalar_map(cc->ld->ctx.arena, n);
    return map ? tg_parse_expr(&cc->ld->ctx, map) : NULL;
}

/* ---------------------------------------------------------------- header */

static void compile_header(rule_cc *cc)
{
    tg_rule *r = cc->r;
    tg_arena *a = cc->ld->ctx.arena;
    r->info.title = scalar_text(cc, TG_RK_TITLE, true);
    r->info.advice = scalar_text(cc, TG_RK_ADVICE, false);
    r->info.explain = scalar_text(cc, TG_RK_EXPLAIN, false);
    const char *sev = scalar_text(cc, TG_RK_SEVERITY, true);
    if (sev) {
        tg_severity parsed;
        int k = tg_severity_parse(sev, &parsed) ? (int)parsed : -1;
        if (k < 0) {
            const char *hint = tg_suggest(sev, tg_severity_names, TG_SEV_COUNT);
            char all[64];
            ERR(cc, cc->def->key[TG_RK_SEVERITY]->pos, "severity must be %s, not '%s'%s%s%s",
                tg_vocab_join(tg_severity_names, all, sizeof all), sev,
                hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
        }
        r->info.severity = k < 0 ? TG_SEV_WARNING : (tg_severity)k;
    }
    const char *src = scalar_text(cc, TG_RK_SOURCE, true);
    if (src) {
        const tg_source_def *d = tg_source_find(src);
        if (!d) {
            const char *names[TG_SRC_COUNT + 1] = {0};
            for (int i = 0; i < TG_SRC_COUNT; i++) names[i] = tg_source_defs[i].name;
            const char *hint = tg_suggest(src, names, TG_SRC_COUNT);
            char list[256];
            if (hint) ERR(cc, cc->def->key[TG_RK_SOURCE]->pos, "unknown source '%s' (did you mean '%s'?)", src, hint);
            else ERR(cc, cc->def->key[TG_RK_SOURCE]->pos, "unknown source '%s' (sources: %s)", src,
                     tg_vocab_join(names, list, sizeof list));
        } else {
            r->source = d->id;
            r->info.source = d->name;
            cc->source_ok = true;
        }
    }
    r->info.enabled = true;
    const tg_ynode *en = cc->def->key[TG_RK_ENABLED];
    if (en) {
        if (tg_yscalar_is(en, "false")) r->info.enabled = false;
        else if (!tg_yscalar_is(en, "true")) ERR(cc, en->pos, "'enabled' must be true or false");
    }
    /* tags: a list (or one scalar), plus appended ones */
    const tg_ynode *groups[65];
    size_t ng = 0;
    if (cc->def->key[TG_RK_TAGS]) groups[ng++] = cc->def->key[TG_RK_TAGS];
    for (size_t i = 0; i < cc->def->n_tags_more && ng < 65; i++) groups[ng++] = cc->def->tags_more[i];
    size_t total = 0;
    for (size_t g = 0; g < ng; g++) total += groups[g]->kind == TG_Y_SEQ ? groups[g]->n : 1;
    const char **tags = tg_arena_alloc(a, (total ? total : 1) * sizeof *tags);
    for (size_t g = 0; tags && g < ng; g++) {
        const tg_ynode *t = groups[g];
        size_t n = t->kind == TG_Y_SEQ ? t->n : 1;
        for (size_t i = 0; i < n; i++) {
            const tg_ynode *x = t->kind == TG_Y_SEQ ? t->items[i] : t;
            if (x->kind != TG_Y_SCALAR) {
                ERR(cc, x->pos, "tags must be words, not %s", tg_ynode_kind_name(x));
                continue;
            }
            tags[r->info.n_tags++] = x->value;
        }
    }
    r->info.tags = tags;
}

/* ---------------------------------------------------------------- params */

static tg_param *find_param(tg_rule *r, const char *name)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].name, name) == 0) return &r->params[i];
    return NULL;
}

/* The params every rule takes (params.def, TG_RULE_PARAM). */
static const struct {
    const char *name;
    double dflt;
    tg_unit unit;
} rule_params[] = {
#define TG_RULE_PARAM(name, dflt, unit) {name, dflt, unit},
#include "params.def"
#undef TG_RULE_PARAM
};
#define N_RULE_PARAMS (sizeof rule_params / sizeof *rule_params)

/* A param every rule takes that rule r does not declare, added with its
** default (r->params has room: compile_params); NULL when name is no such
** param. */
static tg_param *add_rule_param(tg_rule *r, const char *name)
{
    for (size_t i = 0; i < N_RULE_PARAMS; i++) {
        if (strcmp(rule_params[i].name, name)) continue;
        tg_param *p = &r->params[r->n_params++];
        *p = (tg_param){.name = rule_params[i].name, .value = tg_float(rule_params[i].dflt, rule_params[i].unit),
                        .suffix = -1, .used = true};
        return p;
    }
    return NULL;
}

static void apply_set(rule_cc *cc, const tg_param_set *s)
{
    tg_rule *r = cc->r;
    tg_pos at = {.file = "--set"};
    tg_param *p = find_param(r, s->param);
    if (!p && r->params) p = add_rule_param(r, s->param);
    if (!p) {
        const char *names[64];
        size_t n = 0;
        for (size_t i = 0; i < r->n_params && n < 64; i++) names[n++] = r->params[i].name;
        const char *hint = tg_suggest(s->param, names, n);
        ERR(cc, at, "%s.%s=%s: rule '%s' has no param '%s'%s%s%s", s->rule, s->param, s->value, s->rule, s->param,
            hint ? " (did you mean '" : n ? "" : " (it has no params)", hint ? hint : "", hint ? "'?)" : "");
        return;
    }
    tg_value v = p->value;
    if (v.type == TG_TY_STRING) {
        p->value = tg_str(tg_arena_strdup(cc->ld->ctx.arena, s->value));
    } else if (v.type == TG_TY_BOOL) {
        if (strcmp(s->value, "true") && strcmp(s->value, "false")) {
            ERR(cc, at, "%s.%s=%s: the value must be true or false", s->rule, s->param, s->value);
            return;
        }
        p->value = tg_bool(strcmp(s->value, "true") == 0);
    } else {
        double num;
        bool is_int;
        int64_t ival;
        tg_unit unit;
        if (!tg_lex_number_literal(s->value, &num, &is_int, &ival, &unit)) {
            if (tg_lex_number_out_of_range(s->value, NULL))
                ERR(cc, at, "%s.%s=%s: '%s' is out of range: it does not fit a double (too large, or "
                    "longer than 400 characters)", s->rule, s->param, s->value, s->value);
            else
                ERR(cc, at, "%s.%s=%s: '%s' is not a number (write e.g. 200ms, 64KB, 0.5%%)", s->rule,
                    s->param, s->value, s->value);
            return;
        }
        bool agree = unit == v.unit || (v.unit == TG_UNIT_RATIO && unit == TG_UNIT_NONE) ||
                     (v.unit == TG_UNIT_NONE && unit == TG_UNIT_RATIO);
        if (!agree) {
            ERR(cc, at, "%s.%s=%s: the param is a %s (default %s%s) and '%s' is a %s", s->rule, s->param, s->value,
                tg_unit_name(v.unit), p->suffix >= 0 ? "with unit " : "a plain number",
                p->suffix >= 0 ? tg_unit_suffixes[p->suffix].suffix : "", s->value,
                unit == TG_UNIT_NONE ? "plain number" : tg_unit_name(unit));
            return;
        }
        p->value = is_int ? tg_int(ival, v.unit) : tg_float(num, v.unit);
        p->suffix = -1;
        size_t len = strlen(s->value);
        for (size_t i = 0; i < tg_unit_suffix_count; i++) {
            size_t sl = strlen(tg_unit_suffixes[i].suffix);
            if (len > sl && strcmp(s->value + len - sl, tg_unit_suffixes[i].suffix) == 0 &&
                isdigit((unsigned char)s->value[len - sl - 1]))
                p->suffix = (int)i;
        }
    }
    p->from_cli = true;
}

/* The natural range of a param (params.def): NULL when v is within it,
** else what the param is, for the message. */
static const char *param_out_of_range(const tg_param *p, double v)
{
    static const struct {
        const char *name;
        double lo, hi;
        bool lo_open, hi_open;
        const char *meaning;
    } engine_params[] = {
#define TG_ENGINE_PARAM(name, lo, lo_open, hi, hi_open, meaning) {name, lo, hi, lo_open, hi_open, meaning},
#include "params.def"
#undef TG_ENGINE_PARAM
    };
    for (size_t i = 0; i < sizeof engine_params / sizeof *engine_params; i++) {
        if (strcmp(engine_params[i].name, p->name)) continue;
        bool above = engine_params[i].lo_open ? v > engine_params[i].lo : v >= engine_params[i].lo;
        bool below = engine_params[i].hi_open ? v < engine_params[i].hi : v <= engine_params[i].hi;
        if (!above || !below) return engine_params[i].meaning;
    }
    if (v < 0 && p->value.unit == TG_UNIT_NS) return "a duration, which cannot be negative";
    if (v < 0 && p->value.unit == TG_UNIT_BYTES) return "a size, which cannot be negative";
    return NULL;
}

static void check_param_ranges(rule_cc *cc)
{
    tg_rule *r = cc->r;
    for (size_t i = 0; i < r->n_params; i++) {
        const tg_param *p = &r->params[i];
        double v = tg_value_num(p->value);
        if (isnan(v)) continue;   /* strings and booleans */
        const char *meaning = param_out_of_range(p, v);
        if (!meaning) continue;
        char shown[64];
        if (p->suffix >= 0)
            snprintf(shown, sizeof shown, "%.6g%s", v / tg_unit_suffixes[p->suffix].scale,
                     tg_unit_suffixes[p->suffix].suffix);
        else
            snprintf(shown, sizeof shown, "%.6g", v);
        ERR(cc, p->from_cli ? (tg_pos){.file = "--set"} : p->pos, "param '%s' of rule '%s' is %s%s, but %s is %s",
            p->name, r->info.id, shown, p->from_cli ? " (from --set)" : "", p->name, meaning);
    }
}

static void compile_params(rule_cc *cc, const tg_param_set *sets, size_t n_sets, bool *set_used)
{
    tg_rule *r = cc->r;
    const tg_ynode *ps = cc->def->key[TG_RK_PARAMS];
    if (ps && ps->kind != TG_Y_MAP) {
        ERR(cc, ps->pos, "'params' must map names to values, not %s", tg_ynode_kind_name(ps));
        ps = NULL;
    }
    /* room for the params every rule takes (add_rule_param) */
    size_t declared = ps ? ps->n : 0;
    r->params = tg_arena_alloc(cc->ld->ctx.arena, (declared + N_RULE_PARAMS) * sizeof *r->params);
    if (declared) {
        for (size_t i = 0; r->params && i < ps->n; i++) {
            const tg_ynode *k = ps->items[i], *v = ps->vals[i];
            if (k->kind != TG_Y_SCALAR || v->kind != TG_Y_SCALAR) {
                ERR(cc, k->kind != TG_Y_SCALAR ? k->pos : v->pos, "a param is 'name: value' with a literal value");
                continue;
            }
            if (find_param(r, k->value)) {
                ERR(cc, k->pos, "duplicate param '%s'", k->value);
                continue;
            }
            tg_param p = {.name = k->value, .pos = k->pos};
            p.value = tg_rfile_scalar_value(cc->ld, v, &p.suffix);
            if (p.value.type == TG_TY_NULL) {
                ERR(cc, v->pos, "param '%s' needs a default value", k->value);
                continue;
            }
            r->params[r->n_params++] = p;
        }
    }
    for (size_t i = 0; i < n_sets; i++) {
        if (strcmp(sets[i].rule, r->info.id) != 0) continue;
        set_used[i] = true;
        apply_set(cc, &sets[i]);
    }
    check_param_ranges(cc);
}

/* ----------------------------------------------------------- expressions */

static tg_expr *compile_key(rule_cc *cc, tg_rule_key key, tg_cmode mode, tg_type want)
{
    const tg_ynode *n = cc->def->key[key];
    if (!n || !cc->source_ok) return NULL;
    const char *what = tg_rule_key_names[key];
    const tg_ast *ast = parse_node(cc, n, what);
    if (!ast) return NULL;
    tg_expr *e = tg_compile_expr(&cc->cs, ast, mode, what);
    if (e && !tg_compile_expect(&cc->cs, e, want, what)) return NULL;
    if (e && key == TG_RK_METRIC) {
        cc->r->info.metric = tg_ast_text(cc->ld->ctx.arena, ast);
        cc->r->info.metric_unit = e->unit;
    }
    if (e && key == TG_RK_SAMPLES) cc->r->info.samples = tg_ast_text(cc->ld->ctx.arena, ast);
    return e;
}

static void compile_where(rule_cc *cc)
{
    tg_rule *r = cc->r;
    r->where = compile_key(cc, TG_RK_WHERE, TG_CM_ROW, TG_TY_BOOL);
    const tg_ynode *w = cc->def->key[TG_RK_WHERE];
    r->where_text = w && w->kind == TG_Y_SCALAR ? w->value : NULL;
    for (size_t i = 0; cc->source_ok && i < cc->def->n_where_more; i++) {
        const tg_ynode *n = cc->def->where_more[i];
        const tg_ast *ast = parse_node(cc, n, "where");
        tg_expr *e = ast ? tg_compile_expr(&cc->cs, ast, TG_CM_ROW, "where") : NULL;
        if (!e || !tg_compile_expect(&cc->cs, e, TG_TY_BOOL, "where")) continue;
        r->where = tg_compile_and(&cc->cs, r->where, e);
        r->where_text = r->where_text ? tg_arena_printf(cc->ld->ctx.arena, "(%s) and (%s)", r->where_text, n->value)
                                      : n->value;
    }
}

/* except: {when: ROW-CONDITION, rows: "ONE|MANY", note: TEXT}: rows that
** pass the where but are set aside (docs/rules.md, "Rows set aside"). The
** rule's where becomes `where and not (when)`, so the reproduce queries and
** the evidence see what the aggregates see; the evaluator tests the two
** parts apart to count what was set aside. */
static void compile_except(rule_cc *cc)
{
    const tg_ynode *n = cc->def->key[TG_RK_EXCEPT];
    tg_rule *r = cc->r;
    if (!n || !cc->source_ok) return;
    const tg_ynode *when = n->kind == TG_Y_MAP ? tg_ymap_get(n, "when") : NULL;
    const tg_ynode *rows = n->kind == TG_Y_MAP ? tg_ymap_get(n, "rows") : NULL;
    const tg_ynode *note = n->kind == TG_Y_MAP ? tg_ymap_get(n, "note") : NULL;
    const char *bar = rows && rows->kind == TG_Y_SCALAR ? strchr(rows->value, '|') : NULL;
    if (!when || !bar || strchr(bar + 1, '|') || (note && note->kind != TG_Y_SCALAR) ||
        n->n != 2u + (note != NULL)) {
        ERR(cc, n->pos, "'except' is a mapping {when: ROW-CONDITION, rows: \"ONE|MANY\", note: TEXT}, note optional");
        return;
    }
    const tg_ast *ast = parse_node(cc, when, "except");
    tg_expr *e = ast ? tg_compile_expr(&cc->cs, ast, TG_CM_ROW, "except") : NULL;
    if (!e || !tg_compile_expect(&cc->cs, e, TG_TY_BOOL, "except")) return;
    tg_arena *a = cc->ld->ctx.arena;
    r->except = e;
    r->except_text = when->kind == TG_Y_SCALAR ? when->value : NULL;
    r->except_one = tg_arena_strndup(a, rows->value, (size_t)(bar - rows->value));
    r->except_many = tg_arena_strdup(a, bar + 1);
    r->except_note = note ? note->value : NULL;
    r->where_kept = r->where;
    r->where = tg_compile_and(&cc->cs, r->where, tg_compile_not(&cc->cs, e));
    r->where_text = tg_arena_printf(a, r->where_text ? "(%s) and not (%s)" : "%snot (%s)",
                                    r->where_text ? r->where_text : "", r->except_text ? r->except_text : "?");
}

/* Is source `name` one of a comma-separated list ("gap, device")? */
static bool source_listed(const char *list, const char *name)
{
    if (!strcmp(list, "any")) return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) return true;
    return false;
}

/* cause: what a failure names about its cause (docs/host.md). */
static void compile_cause(rule_cc *cc)
{
    const tg_ynode *n = cc->def->key[TG_RK_CAUSE];
    if (!n) return;
    char all[128];
    if (n->kind != TG_Y_SCALAR || !tg_cause_parse(n->value, &cc->r->info.cause)) {
        const char *v = n->kind == TG_Y_SCALAR ? n->value : "";
        const char *hint = tg_suggest(v, tg_cause_names, TG_CAUSE_COUNT);
        ERR(cc, n->pos, "cause must be %s, not '%s'%s%s%s", tg_vocab_join(tg_cause_names, all, sizeof all),
            n->kind == TG_Y_SCALAR ? v : tg_ynode_kind_name(n), hint ? " (did you mean '" : "", hint ? hint : "",
            hint ? "'?)" : "");
        return;
    }
    tg_cause_kind k = cc->r->info.cause;
    if (cc->source_ok && !source_listed(tg_cause_sources(k), cc->r->info.source))
        ERR(cc, n->pos, "cause '%s' needs a rule on source %s, not %s", tg_cause_name(k), tg_cause_sources(k),
            cc->r->info.source);
}

static void compile_regression(rule_cc *cc)
{
    const tg_ynode *reg = cc->def->key[TG_RK_REGRESSION];
    if (!reg) return;
    static const char *const keys[] = {"direction"};
    if (reg->kind != TG_Y_MAP) {
        ERR(cc, reg->pos, "'regression' must be a mapping such as {direction: higher_is_worse}");
        return;
    }
    for (size_t i = 0; i < reg->n; i++)
        if (!tg_yscalar_is(reg->items[i], "direction")) {
            const char *k = reg->items[i]->kind == TG_Y_SCALAR ? reg->items[i]->value : "?";
            const char *hint = tg_suggest(k, keys, 1);
            ERR(cc, reg->items[i]->pos, "unknown key '%s' in regression%s", k, hint ? " (did you mean 'direction'?)" : "");
        }
    const tg_ynode *dir = tg_ymap_get(reg, "direction");
    if (tg_yscalar_is(dir, "higher_is_worse")) cc->r->info.regression = 1;
    else if (tg_yscalar_is(dir, "lower_is_worse")) cc->r->info.regression = -1;
    else ERR(cc, dir ? dir->pos : reg->pos, "regression direction must be higher_is_worse or lower_is_worse");
    if (!cc->def->key[TG_RK_METRIC])
        ERR(cc, reg->pos, "a rule with 'regression' needs a 'metric' (e.g. p50(period))");
}

/* Placeholder end: the first `stop` character ('}', or '|' before the
** plural words) outside quoted strings; len when there is none. */
static size_t placeholder_scan(const char *s, size_t i, size_t len, char stop)
{
    char quote = 0;
    for (; i < len; i++) {
        if (quote) {
            if (s[i] == '\\') i++;
            else if (s[i] == quote) quote = 0;
        } else if (s[i] == '"' || s[i] == '\'') {
            quote = s[i];
        } else if (s[i] == stop || s[i] == '}') {
            return i;
        }
    }
    return len;
}

static size_t placeholder_end(const char *s, size_t i, size_t len)
{
    return placeholder_scan(s, i, len, '}');
}

/* {expr|one|many}: the word for 1 and the word for any other value
** (docs/rule-language.md, "Messages"). Returns false with an error when
** the words are not exactly two. */
static bool plural_words(rule_cc *cc, const tg_srcmap *map, const char *text, size_t bar, size_t end,
                         tg_msg_part *part)
{
    tg_arena *a = cc->ld->ctx.arena;
    const char *second = memchr(text + bar + 1, '|', end - bar - 1);
    if (!second || memchr(second + 1, '|', (size_t)(text + end - second - 1))) {
        ERR(cc, map->pos[bar], "a plural placeholder takes two words: {count|GPU|GPUs}");
        return false;
    }
    size_t mid = (size_t)(second - text);
    part->one = tg_arena_strndup(a, text + bar + 1, mid - bar - 1);
    part->many = tg_arena_strndup(a, text + mid + 1, end - mid - 1);
    return part->one && part->many;
}

/* One template: literal text and {expression} pieces, into *out. */
static void compile_template(rule_cc *cc, const tg_ynode *n, tg_msg_part **out, size_t *n_out)
{
    tg_arena *a = cc->ld->ctx.arena;
    const char *text = n->value;
    const tg_srcmap *map = tg_yaml_scalar_map(a, n);
    char *lit = malloc(n->len + 1);
    tg_msg_part *parts = NULL;
    size_t len = n->len, nl = 0, np = 0, cap = 0;
    bool ok = map && lit;
    for (size_t i = 0; ok && i < len;) {
        char c = text[i];
        if ((c == '{' || c == '}') && i + 1 < len && text[i + 1] == c) {   /* {{ and }} */
            lit[nl++] = c;
            i += 2;
            continue;
        }
        if (c == '}') {
            ERR(cc, map->pos[i], "unmatched '}' in message (write '}}' for a literal brace)");
            ok = false;
            break;
        }
        if (c != '{') {
            lit[nl++] = c;
            i++;
            continue;
        }
        if (nl) {
            tg_msg_part lp = {.text = tg_arena_strndup(a, lit, nl)};
            ok = TG_PUSH(parts, np, cap, lp);
            nl = 0;
        }
        size_t end = placeholder_end(text, i + 1, len);
        if (end >= len) {
            ERR(cc, map->pos[i], "unterminated '{' in message (write '{{' for a literal brace)");
            ok = false;
            break;
        }
        size_t bar = placeholder_scan(text, i + 1, end, '|');
        tg_msg_part ep = {0};
        if (bar < end && !plural_words(cc, map, text, bar, end, &ep)) {
            i = end + 1;
            continue;
        }
        tg_srcmap *sub = tg_arena_alloc(a, sizeof *sub);
        if (!sub) break;
        *sub = (tg_srcmap){.src = map->src, .text = tg_arena_strndup(a, text + i + 1, bar - i - 1),
                           .len = bar - i - 1, .pos = map->pos + i + 1};
        const tg_ast *ast = sub->text ? tg_parse_expr(&cc->ld->ctx, sub) : NULL;
        tg_expr *e = ast ? tg_compile_expr(&cc->cs, ast, TG_CM_AGG, "message") : NULL;
        if (e) {
            ep.text = sub->text;
            ep.expr = e;
            ok = TG_PUSH(parts, np, cap, ep);
        }
        i = end + 1;
    }
    if (ok && nl) {
        tg_msg_part lp = {.text = tg_arena_strndup(a, lit, nl)};
        ok = TG_PUSH(parts, np, cap, lp);
    }
    if (ok && np) {
        *out = tg_arena_alloc(a, np * sizeof *parts);
        if (*out) {
            memcpy(*out, parts, np * sizeof *parts);
            *n_out = np;
        }
    }
    free(parts);
    free(lit);
}

/* One case of a message list: {when: CONDITION, text: TEMPLATE}, or
** {text: TEMPLATE} last (docs/rules.md, "Messages"). */
static void compile_case(rule_cc *cc, const tg_ynode *item, bool last)
{
    tg_rule *r = cc->r;
    const tg_ynode *when = item->kind == TG_Y_MAP ? tg_ymap_get(item, "when") : NULL;
    const tg_ynode *text = item->kind == TG_Y_MAP ? tg_ymap_get(item, "text") : NULL;
    if (item->kind != TG_Y_MAP || !text || text->kind != TG_Y_SCALAR || item->n != 1u + (when != NULL)) {
        ERR(cc, item->pos, "a case of 'message' is a mapping {when: CONDITION, text: TEMPLATE}, the last one "
                           "without 'when'");
        return;
    }
    if (!when) {
        if (!last) ERR(cc, item->pos, "only the last case of 'message' may leave out 'when'");
        else {
            r->message_text = text->value;
            compile_template(cc, text, &r->message, &r->n_message);
        }
        return;
    }
    if (last) {
        ERR(cc, item->pos, "the last case of 'message' has no 'when': it is the message when no case holds");
        return;
    }
    const tg_ast *ast = parse_node(cc, when, "message");
    tg_expr *e = ast ? tg_compile_expr(&cc->cs, ast, TG_CM_AGG, "message") : NULL;
    if (!e || !tg_compile_expect(&cc->cs, e, TG_TY_BOOL, "message")) return;
    tg_msg_case mc = {.when = e, .when_text = when->kind == TG_Y_SCALAR ? when->value : NULL,
                      .text = text->value};
    compile_template(cc, text, &mc.parts, &mc.n_parts);
    tg_msg_case *grown = tg_arena_alloc(cc->ld->ctx.arena, (r->n_message_cases + 1) * sizeof *grown);
    if (!grown) return;
    if (r->n_message_cases) memcpy(grown, r->message_cases, r->n_message_cases * sizeof *grown);
    grown[r->n_message_cases++] = mc;
    r->message_cases = grown;
}

/* A message is a template, or a list of cases each guarded by an
** aggregate condition: the first whose condition holds is rendered, so a
** rule whose fail_when has branches (with iterations, without) says the
** limit and number of the branch that applied. */
static void compile_message(rule_cc *cc)
{
    const tg_ynode *n = cc->def->key[TG_RK_MESSAGE];
    tg_rule *r = cc->r;
    if (!n || !cc->source_ok) return;
    if (n->kind == TG_Y_SEQ) {
        if (n->n < 2) ERR(cc, n->pos, "a 'message' list has at least two cases (else write the template alone)");
        for (size_t i = 0; n->n >= 2 && i < n->n; i++) compile_case(cc, n->items[i], i + 1 == n->n);
        return;
    }
    if (n->kind != TG_Y_SCALAR) {
        ERR(cc, n->pos, "'message' must be text or a list of cases, not %s", tg_ynode_kind_name(n));
        return;
    }
    r->message_text = n->value;
    compile_template(cc, n, &r->message, &r->n_message);
}

/* ---------------------------------------------------------------- evidence */

static const tg_field_def *field_at(rule_cc *cc, const char *name, tg_pos pos)
{
    const tg_field_def *f = tg_field_find(cc->r->source, name);
    if (f) return f;
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < tg_field_count && n < 64; i++)
        if (tg_field_defs[i].source == cc->r->source) names[n++] = tg_field_defs[i].name;
    const char *hint = tg_suggest(name, names, n);
    ERR(cc, pos, "unknown field '%s' of source '%s'%s%s%s", name, cc->r->info.source, hint ? " (did you mean '" : "",
        hint ? hint : "", hint ? "'?)" : "");
    return NULL;
}

static void add_column(tg_rule *r, const tg_field_def *f, size_t cap)
{
    for (size_t i = 0; i < r->n_columns; i++)
        if (r->columns[i] == f) return;
    if (r->n_columns < cap) r->columns[r->n_columns++] = f;
}

static void compile_order_by(rule_cc *cc, const tg_ynode *v)
{
    const tg_srcmap *map = v->kind == TG_Y_SCALAR ? tg_yaml_scalar_map(cc->ld->ctx.arena, v) : NULL;
    if (!map) {
        ERR(cc, v->pos, "order_by must be 'FIELD [asc|desc]'");
        return;
    }
    const char *s = v->value;
    size_t i = 0, len = v->len;
    while (i < len && isspace((unsigned char)s[i])) i++;
    size_t fb = i;
    while (i < len && !isspace((unsigned char)s[i])) i++;
    char *field = tg_arena_strndup(cc->ld->ctx.arena, s + fb, i - fb);
    while (i < len && isspace((unsigned char)s[i])) i++;
    size_t db = i;
    while (i < len && !isspace((unsigned char)s[i])) i++;
    const char *dir = s + db;
    size_t dl = i - db;
    while (i < len && isspace((unsigned char)s[i])) i++;
    if (!field || !*field) {
        ERR(cc, v->pos, "order_by must be 'FIELD [asc|desc]'");
        return;
    }
    cc->r->order_field = field_at(cc, field, map->pos[fb]);
    if (dl == 4 && strncmp(dir, "desc", 4) == 0) cc->r->order_desc = true;
    else if (dl && !(dl == 3 && strncmp(dir, "asc", 3) == 0))
        ERR(cc, map->pos[db], "order_by direction must be 'asc' or 'desc', not '%.*s'", (int)dl, dir);
    if (i < len) ERR(cc, map->pos[i], "unexpected text after order_by direction");
}

static void compile_evidence(rule_cc *cc)
{
    tg_rule *r = cc->r;
    const tg_ynode *ev = cc->def->key[TG_RK_EVIDENCE];
    static const char *const keys[] = {"order_by", "limit", "columns", "group_by"};
    const tg_ynode *cols = NULL, *group_by = NULL, *order_by = NULL;
    if (ev && ev->kind != TG_Y_MAP) {
        ERR(cc, ev->pos, "'evidence' must be a mapping such as {order_by: duration desc, limit: 10}");
        ev = NULL;
    }
    for (size_t i = 0; ev && i < ev->n; i++) {
        const tg_ynode *k = ev->items[i], *v = ev->vals[i];
        if (tg_yscalar_is(k, "order_by")) {
            order_by = v;
        } else if (tg_yscalar_is(k, "group_by")) {
            group_by = v;
        } else if (tg_yscalar_is(k, "limit")) {
            char *end = NULL;
            long lim = v->kind == TG_Y_SCALAR ? strtol(v->value, &end, 10) : -1;
            if (!end || *end || lim < 0 || lim > 1000) ERR(cc, v->pos, "evidence limit must be a whole number from 0 to 1000");
            else r->evidence_limit = lim == 0 ? (size_t)-1 : (size_t)lim;
        } else if (tg_yscalar_is(k, "columns")) {
            cols = v;
        } else {
            const char *name = k->kind == TG_Y_SCALAR ? k->value : "?";
            const char *hint = tg_suggest(name, keys, 4);
            ERR(cc, k->pos, "unknown key '%s' in evidence%s%s%s", name,
                hint ? " (did you mean '" : " (order_by, limit, columns, group_by)", hint ? hint : "",
                hint ? "'?)" : "");
        }
    }
    if (group_by) {
        tg_compile_group_evidence(&cc->cs, group_by, cols, order_by);
        return;
    }
    if (order_by) compile_order_by(cc, order_by);
    if (cols && cols->kind != TG_Y_SEQ) {
        ERR(cc, cols->pos, "evidence columns must be a list of field names");
        cols = NULL;
    }
    size_t cap = (cols ? cols->n : 8) + 3;
    r->columns = tg_arena_alloc(cc->ld->ctx.arena, cap * sizeof *r->columns);
    if (!r->columns) return;
    if (cols) {
        for (size_t i = 0; i < cols->n; i++) {
            const tg_ynode *c = cols->items[i];
            const tg_field_def *f = c->kind == TG_Y_SCALAR ? field_at(cc, c->value, c->pos) : NULL;
            if (c->kind != TG_Y_SCALAR) ERR(cc, c->pos, "evidence columns must be field names");
            if (f) add_column(r, f, cap);
        }
        return;
    }
    for (int i = 0; i < 8 && default_columns[r->source][i]; i++) {
        const tg_field_def *f = tg_field_find(r->source, default_columns[r->source][i]);
        if (f) add_column(r, f, cap);
    }
    if (r->order_field) add_column(r, r->order_field, cap);
    for (size_t i = 0; i < cc->cs.n_aggs; i++)     /* collected so far: copied out after this */
        if (cc->cs.aggs[i].field) {
            add_column(r, cc->cs.aggs[i].field, cap);
            break;
        }
}

/* ------------------------------------------------------------------ rule */

bool tg_compile_rule(tg_rules_loader *ld, const tg_rule_def *def, const tg_param_set *sets, size_t n_sets,
                     bool *set_used, tg_rule *r)
{
    int errors = ld->ctx.diag->n_errors;
    tg_arena *a = ld->ctx.arena;
    memset(r, 0, sizeof *r);
    r->info.id = def->id;
    r->info.file = def->pos.file;
    r->info.line = def->pos.line;
    r->pos = def->pos;
    rule_cc cc = {.ld = ld, .def = def, .r = r};
    cc.cs = (tg_cstate){.ld = ld, .rule = r, .budget = TG_COMPILE_NODE_BUDGET, .macro_budget = TG_MACRO_NODE_BUDGET};
    compile_header(&cc);
    compile_params(&cc, sets, n_sets, set_used);
    compile_regression(&cc);
    compile_cause(&cc);
    r->metric = compile_key(&cc, TG_RK_METRIC, TG_CM_AGG, TG_TY_FLOAT);
    r->samples = compile_key(&cc, TG_RK_SAMPLES, TG_CM_ROW, TG_TY_FLOAT);
    compile_where(&cc);
    compile_except(&cc);
    r->fail_when = compile_key(&cc, TG_RK_FAIL_WHEN, TG_CM_AGG, TG_TY_BOOL);
    const tg_ynode *fw = def->key[TG_RK_FAIL_WHEN];
    r->fail_when_text = fw && fw->kind == TG_Y_SCALAR ? fw->value : NULL;
    if (!fw && !def->key[TG_RK_REGRESSION])
        ERR(&cc, def->pos, "rule '%s' has no 'fail_when' (a condition on aggregates such as 'count > 0')", def->id);
    compile_message(&cc);
    /* grouped evidence may add aggregates of its own (not the result's values) */
    r->n_value_aggs = cc.cs.n_aggs;
    if (cc.source_ok) compile_evidence(&cc);
    if (r->info.cause == TG_CAUSE_HOST && r->n_group_by)
        ERR(&cc, def->key[TG_RK_CAUSE]->pos, "cause 'host' explains each cited row; it cannot be used with "
            "evidence.group_by, which cites groups");
    /* aggregates and trace references collected while compiling */
    tg_cstate *cs = &cc.cs;
    if (cs->n_aggs) {
        r->aggs = tg_arena_alloc(a, cs->n_aggs * sizeof *r->aggs);
        if (r->aggs) memcpy(r->aggs, cs->aggs, cs->n_aggs * sizeof *r->aggs);
        r->n_aggs = r->aggs ? cs->n_aggs : 0;
    }
    if (cs->n_trace_refs) {
        r->trace_refs = tg_arena_alloc(a, cs->n_trace_refs * sizeof *r->trace_refs);
        if (r->trace_refs) memcpy(r->trace_refs, cs->trace_refs, cs->n_trace_refs * sizeof *r->trace_refs);
        r->n_trace_refs = r->trace_refs ? cs->n_trace_refs : 0;
    }
    r->n_collect = (int)cs->n_collect;
    free(cs->aggs);
    free(cs->trace_refs);
    free(cs->collect_keys);
    free(cs->macro_uses);
    return ld->ctx.diag->n_errors == errors;
}
