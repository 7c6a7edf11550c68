/*
** The public face of engine/rules (rules.h): load files, directories or
** in-memory texts into a loader (load.c), compile every rule definition
** (compile_rule.c), check that each --set named a rule that exists, and
** hand back a read-only rule set -- or NULL when any file had an error,
** after every error of every file has been recorded. Lint is the same load
** plus warnings about what is defined but never used.
*/
#include "load.h"
#include "../common/sha256.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A param the engine reads itself (params.def): never "unused". */
static bool engine_param(const char *name)
{
    static const char *const names[] = {
#define TG_ENGINE_PARAM(name, lo, lo_open, hi, hi_open, meaning) name,
#include "params.def"
#undef TG_ENGINE_PARAM
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

static void lint_warnings(tg_rules_loader *ld, const tg_ruleset *rs)
{
    tg_rules_ctx *ctx = &ld->ctx;
    for (size_t i = 0; i < ld->n_macros; i++) {
        const tg_macro *m = &ld->macros[i];
        if (!m->used) tg_rules_warning(ctx, m->pos, "macro '%s' is never used", m->name);
        char srcs[256] = "";
        size_t len = 0;
        for (int s = 0; s < TG_SRC_COUNT && len < sizeof srcs - 32; s++)
            if (tg_field_find((tg_source_id)s, m->name))
                len += (size_t)snprintf(srcs + len, sizeof srcs - len, "%s%s", len ? ", " : "", tg_source_defs[s].name);
        if (len)
            tg_rules_warning(ctx, m->pos, "macro '%s' has the name of a field of %s; in rules on those sources "
                             "'%s' means the field, not the macro", m->name, srcs, m->name);
    }
    for (size_t i = 0; i < ld->n_lists; i++)
        if (!ld->lists[i].used) tg_rules_warning(ctx, ld->lists[i].pos, "list '%s' is never used", ld->lists[i].name);
    for (size_t i = 0; i < rs->n; i++) {
        const tg_rule *r = &rs->rules[i];
        for (size_t p = 0; p < r->n_params; p++)
            if (!r->params[p].used && !engine_param(r->params[p].name))
                tg_rules_warning(ctx, r->params[p].pos, "param '%s' of rule '%s' is never used", r->params[p].name,
                                 r->info.id);
        if (!r->info.advice)
            tg_rules_warning(ctx, r->pos, "rule '%s' has no 'advice' (what to do when it fires)", r->info.id);
    }
}

static void check_sets(tg_rules_loader *ld, const tg_ruleset *rs, const tg_param_set *sets, size_t n_sets,
                       const bool *used)
{
    for (size_t i = 0; i < n_sets; i++) {
        if (used[i]) continue;
        const char *names[512];
        size_t n = 0;
        for (size_t k = 0; k < rs->n && n < 512; k++) names[n++] = rs->rules[k].info.id;
        const char *hint = tg_suggest(sets[i].rule, names, n);
        tg_diag_add(ld->ctx.diag, TG_DIAG_ERROR, TG_EUSAGE, (tg_pos){.file = "--set"}, NULL,
                    "%s.%s=%s: there is no rule '%s'%s%s%s", sets[i].rule, sets[i].param, sets[i].value,
                    sets[i].rule, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
    }
}

static void loader_free(tg_rules_loader *ld)
{
    for (size_t i = 0; i < ld->n_defs; i++) {
        free(ld->defs[i].where_more);
        free(ld->defs[i].tags_more);
    }
    free(ld->defs);
    free(ld->macros);
    free(ld->lists);
    for (size_t i = 0; i < ld->n_regexes; i++) tg_regex_free(ld->regexes[i]);   /* not handed over */
    free(ld->files);
    free(ld->regexes);
    tg_src_release_all(&ld->ctx);
}

static tg_ruleset *load_all(const char *const *paths, const tg_rules_text *texts, size_t n,
                            const tg_param_set *sets, size_t n_sets, bool lint, tg_diag *diag)
{
    int errors = diag->n_errors;
    tg_ruleset *rs = calloc(1, sizeof *rs);
    if (rs) rs->arena = tg_arena_new();
    bool *set_used = calloc(n_sets + 1, sizeof *set_used);
    if (!rs || !rs->arena || !set_used) {
        free(set_used);
        if (rs) tg_arena_free(rs->arena);
        free(rs);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    tg_rules_loader ld = {.ctx = {.arena = rs->arena, .diag = diag}, .lint = lint,
                          .nodes_left = TG_RULESET_NODE_BUDGET};
    for (size_t i = 0; i < n; i++) {
        if (paths) tg_rfile_path(&ld, paths[i]);
        else tg_rfile_text(&ld, texts[i].name, texts[i].text, strlen(texts[i].text));
    }
    rs->rules = tg_arena_alloc(rs->arena, (ld.n_defs ? ld.n_defs : 1) * sizeof *rs->rules);
    for (size_t i = 0; rs->rules && i < ld.n_defs; i++)
        tg_compile_rule(&ld, &ld.defs[i], sets, n_sets, set_used, &rs->rules[rs->n++]);
    check_sets(&ld, rs, sets, n_sets, set_used);
    if (lint) lint_warnings(&ld, rs);
    rs->files = tg_arena_alloc(rs->arena, (ld.n_files ? ld.n_files : 1) * sizeof *rs->files);
    if (rs->files && ld.n_files) memcpy(rs->files, ld.files, ld.n_files * sizeof *rs->files);
    rs->n_files = rs->files ? ld.n_files : 0;
    if (!rs->files) tg_diag_error(diag, TG_EINTERNAL, "out of memory");
    rs->lists = tg_arena_alloc(rs->arena, (ld.n_lists ? ld.n_lists : 1) * sizeof *rs->lists);
    for (size_t i = 0; rs->lists && i < ld.n_lists; i++)
        rs->lists[rs->n_lists++] = (struct tg_ruleset_list){ld.lists[i].name, ld.lists[i].items, ld.lists[i].n};
    if (!rs->lists) tg_diag_error(diag, TG_EINTERNAL, "out of memory");
    rs->regexes = ld.regexes;
    rs->n_regexes = ld.n_regexes;
    ld.regexes = NULL;
    ld.n_regexes = 0;
    loader_free(&ld);
    free(set_used);
    if (diag->n_errors > errors || !rs->rules) {
        tg_rules_free(rs);
        return NULL;
    }
    return rs;
}

tg_ruleset *tg_rules_load(const char *const *paths, size_t n_paths, const tg_param_set *sets, size_t n_sets,
                          tg_diag *diag)
{
    return load_all(paths, NULL, n_paths, sets, n_sets, false, diag);
}

tg_ruleset *tg_rules_load_texts(const tg_rules_text *texts, size_t n_texts, const tg_param_set *sets,
                                size_t n_sets, tg_diag *diag)
{
    return load_all(NULL, texts, n_texts, sets, n_sets, false, diag);
}

tg_status tg_rules_lint(const char *const *paths, size_t n_paths, tg_diag *diag)
{
    int errors = diag->n_errors;
    tg_rules_free(load_all(paths, NULL, n_paths, NULL, 0, true, diag));
    return diag->n_errors > errors ? TG_EUSAGE : TG_OK;
}

tg_status tg_rules_lint_texts(const tg_rules_text *texts, size_t n_texts, tg_diag *diag)
{
    int errors = diag->n_errors;
    tg_rules_free(load_all(NULL, texts, n_texts, NULL, 0, true, diag));
    return diag->n_errors > errors ? TG_EUSAGE : TG_OK;
}

void tg_rules_free(tg_ruleset *rs)
{
    if (!rs) return;
    for (size_t i = 0; i < rs->n_regexes; i++) tg_regex_free(rs->regexes[i]);
    free(rs->regexes);
    tg_arena_free(rs->arena);
    free(rs);
}

size_t tg_rules_count(const tg_ruleset *rs) { return rs ? rs->n : 0; }

size_t tg_rules_file_count(const tg_ruleset *rs) { return rs ? rs->n_files : 0; }

const char *tg_rules_file(const tg_ruleset *rs, size_t i)
{
    return rs && i < rs->n_files ? rs->files[i] : NULL;
}

const tg_rule_info *tg_rules_info(const tg_ruleset *rs, size_t i)
{
    return rs && i < rs->n ? &rs->rules[i].info : NULL;
}

long tg_rules_find(const tg_ruleset *rs, const char *id)
{
    for (size_t i = 0; rs && i < rs->n; i++)
        if (strcmp(rs->rules[i].info.id, id) == 0) return (long)i;
    return -1;
}

bool tg_rules_param_value(const tg_ruleset *rs, const char *rule, const char *param, tg_value *out)
{
    long i = tg_rules_find(rs, rule);
    if (i < 0) return false;
    const tg_rule *r = &rs->rules[i];
    for (size_t p = 0; p < r->n_params; p++)
        if (strcmp(r->params[p].name, param) == 0) return *out = r->params[p].value, true;
    return false;
}

const tg_value *tg_rules_list(const tg_ruleset *rs, const char *name, size_t *n)
{
    for (size_t i = 0; rs && i < rs->n_lists; i++)
        if (strcmp(rs->lists[i].name, name) == 0) return *n = rs->lists[i].n, rs->lists[i].items;
    return NULL;
}

double tg_rules_param(const tg_ruleset *rs, const char *rule, const char *param, double dflt)
{
    long i = tg_rules_find(rs, rule);
    if (i < 0) return dflt;
    const tg_rule *r = &rs->rules[i];
    for (size_t p = 0; p < r->n_params; p++)
        if (strcmp(r->params[p].name, param) == 0) {
            double v = tg_value_num(r->params[p].value);
            return isnan(v) ? dflt : v;
        }
    return dflt;
}

/* ------------------------------------------------------------ pushdown */

/* Lower bound a comparison puts on field f (INT64_MIN: none). `field >= X`,
** `field > X`, `X <= field`, `X < field` with X a constant; a real X is
** rounded down, which can only keep more rows. */
static int64_t compare_bound(const tg_expr *e, const tg_field_def *f)
{
    tg_node_kind op = e->op;
    const tg_expr *field = e->a, *k = e->b;
    if (op == TG_N_LE || op == TG_N_LT) {
        field = e->b;
        k = e->a;
        op = op == TG_N_LE ? TG_N_GE : TG_N_GT;
    }
    if ((op != TG_N_GE && op != TG_N_GT) || !field || !k || field->op != TG_N_FIELD || field->field != f ||
        k->op != TG_N_CONST)
        return INT64_MIN;
    if (k->k.type == TG_TY_INT)
        return op == TG_N_GT && k->k.u.i < INT64_MAX ? k->k.u.i + 1 : k->k.u.i;
    if (k->k.type == TG_TY_FLOAT && k->k.u.f > -9.2e18 && k->k.u.f < 9.2e18) return (int64_t)floor(k->k.u.f);
    return INT64_MIN;
}

/* The largest bound any conjunct of an `and` tree puts on f. */
static int64_t where_bound(const tg_expr *e, const tg_field_def *f)
{
    if (!e) return INT64_MIN;
    if (e->op == TG_N_AND) {
        int64_t a = where_bound(e->a, f), b = where_bound(e->b, f);
        return a > b ? a : b;
    }
    return compare_bound(e, f);
}

int64_t tg_rules_lower_bound(const tg_ruleset *rs, int source, const char *field)
{
    const tg_field_def *f = source >= 0 && source < TG_SRC_COUNT ? tg_field_find((tg_source_id)source, field) : NULL;
    if (!f || f->type != TG_TY_INT) return INT64_MIN;
    int64_t bound = INT64_MAX;
    for (size_t i = 0; rs && i < rs->n; i++) {
        const tg_rule *r = &rs->rules[i];
        if (!r->info.enabled || r->source != (tg_source_id)source) continue;
        int64_t b = where_bound(r->where, f);
        if (b < bound) bound = b;
    }
    return bound;
}

/* ------------------------------------------------------------------ reads */

static bool expr_reads(const tg_expr *e, bool (*pred)(const tg_field_def *))
{
    if (!e) return false;
    if (e->field && pred(e->field)) return true;
    return expr_reads(e->a, pred) || expr_reads(e->b, pred);
}

static bool rule_reads(const tg_rule *r, bool (*pred)(const tg_field_def *))
{
    if (expr_reads(r->where, pred) || expr_reads(r->fail_when, pred) || expr_reads(r->metric, pred) ||
        expr_reads(r->samples, pred) || (r->order_field && pred(r->order_field)))
        return true;
    for (size_t i = 0; i < r->n_aggs; i++)
        if (expr_reads(r->aggs[i].arg, pred) || (r->aggs[i].field && pred(r->aggs[i].field))) return true;
    for (size_t i = 0; i < r->n_columns; i++)
        if (pred(r->columns[i])) return true;
    for (size_t i = 0; i < r->n_group_by; i++)
        if (pred(r->group_by[i])) return true;
    for (size_t i = 0; i < r->n_group_cols; i++)
        if (expr_reads(r->group_cols[i].expr, pred) || (r->group_cols[i].field && pred(r->group_cols[i].field)))
            return true;
    return false;
}

bool tg_rules_read_field(const tg_ruleset *rs, bool (*pred)(const tg_field_def *))
{
    for (size_t i = 0; rs && i < rs->n; i++)
        if (rs->rules[i].info.enabled && rule_reads(&rs->rules[i], pred)) return true;
    return false;
}

/* ------------------------------------------------------------- digest */

static int cmp_rule_id(const void *pa, const void *pb)
{
    const tg_rule *a = *(const tg_rule *const *)pa, *b = *(const tg_rule *const *)pb;
    return strcmp(a->info.id, b->info.id);
}

static int cmp_list_name(const void *pa, const void *pb)
{
    const struct tg_ruleset_list *a = *(const struct tg_ruleset_list *const *)pa;
    const struct tg_ruleset_list *b = *(const struct tg_ruleset_list *const *)pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a > b) - (a < b);
}

static void digest_value(tg_sha256 *h, tg_value v)
{
    char buf[64];
    int n = 0;
    switch (v.type) {
    case TG_TY_STRING: tg_sha256_str(h, v.u.s ? v.u.s : ""); return;
    case TG_TY_BOOL: n = snprintf(buf, sizeof buf, "b%d", v.u.b); break;
    case TG_TY_INT: n = snprintf(buf, sizeof buf, "i%lld:%d", (long long)v.u.i, (int)v.unit); break;
    case TG_TY_FLOAT: n = snprintf(buf, sizeof buf, "f%a:%d", v.u.f, (int)v.unit); break;
    default: n = snprintf(buf, sizeof buf, "null"); break;
    }
    tg_sha256_field(h, buf, n > 0 ? (size_t)n : 0);
}

/* The text of explain without where the rule was defined (the same rules
** read from another path, or moved in their file, are the same rules) and
** without "(from --set)" (a param's value counts, not who set it). */
static bool digest_rule(tg_sha256 *h, const tg_ruleset *rs, const tg_rule *r)
{
    char *text = tg_rules_explain(rs, r->info.id);
    if (!text) return false;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        static const char from_set[] = "   (from --set)";
        if (strncmp(line, "  defined:  ", 12) != 0) {
            size_t keep = n;
            if (keep >= sizeof from_set - 1 && !memcmp(line + keep - (sizeof from_set - 1), from_set, sizeof from_set - 1))
                keep -= sizeof from_set - 1;
            tg_sha256_field(h, line, keep);
        }
        line += n + (end != NULL);
    }
    free(text);
    return true;
}

bool tg_rules_digest(const tg_ruleset *rs, struct tg_sha256 *h)
{
    const tg_rule **rules = malloc((rs->n ? rs->n : 1) * sizeof *rules);
    const struct tg_ruleset_list **lists = malloc((rs->n_lists ? rs->n_lists : 1) * sizeof *lists);
    bool ok = rules && lists;
    if (ok) {
        for (size_t i = 0; i < rs->n; i++) rules[i] = &rs->rules[i];
        for (size_t i = 0; i < rs->n_lists; i++) lists[i] = &rs->lists[i];
        qsort(rules, rs->n, sizeof *rules, cmp_rule_id);
        qsort(lists, rs->n_lists, sizeof *lists, cmp_list_name);
        tg_sha256_str(h, "rules");
        for (size_t i = 0; ok && i < rs->n; i++) {
            tg_sha256_str(h, "rule");
            ok = digest_rule(h, rs, rules[i]);
        }
        tg_sha256_str(h, "lists");
        for (size_t i = 0; i < rs->n_lists; i++) {
            tg_sha256_str(h, lists[i]->name);
            for (size_t k = 0; k < lists[i]->n; k++) digest_value(h, lists[i]->items[k]);
            tg_sha256_str(h, NULL);
        }
    }
    free(rules);
    free(lists);
    return ok;
}
