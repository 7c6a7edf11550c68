/*
** Compiling grouped evidence (docs/rule-language.md, "Grouped evidence"):
**
**   evidence:
**     group_by: [kind, src_kind]            # 1 to 4 fields of the source
**     columns:                              # aggregates over each group
**       - count                             # named by its value name: count
**       - time: sum(duration)               # or NAME: EXPRESSION
**     order_by: time desc                   # a column or group_by field
**     limit: 10                             # groups
**
** The group_by fields become the first columns; every other column is an
** expression in aggregate context (what fail_when and message may say:
** aggregates, trace.FIELD, params.NAME), evaluated once per group over
** the group's rows. Its aggregates join the rule's list (they are
** accumulated per group by the evaluator); those that only evidence uses
** stay out of the result's values (tg_rule.n_value_aggs).
*/
#include "load.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ERR(cs, pos, ...) tg_rules_error(&(cs)->ld->ctx, (pos), __VA_ARGS__)

static bool push_col(tg_cstate *cs, tg_group_col col, size_t cap)
{
    tg_rule *r = cs->rule;
    if (r->n_group_cols >= cap) return false;
    r->group_cols[r->n_group_cols++] = col;
    return true;
}

static long col_index(const tg_rule *r, const char *name)
{
    for (size_t i = 0; i < r->n_group_cols; i++)
        if (strcmp(r->group_cols[i].name, name) == 0) return (long)i;
    return -1;
}

static const tg_field_def *source_field(tg_cstate *cs, const tg_ynode *n)
{
    const tg_field_def *f = n->kind == TG_Y_SCALAR ? tg_field_find(cs->rule->source, n->value) : NULL;
    if (f) return f;
    const char *names[64];
    size_t k = 0;
    for (size_t i = 0; i < tg_field_count && k < 64; i++)
        if (tg_field_defs[i].source == cs->rule->source) names[k++] = tg_field_defs[i].name;
    const char *name = n->kind == TG_Y_SCALAR ? n->value : "?";
    const char *hint = tg_suggest(name, names, k);
    ERR(cs, n->pos, "group_by needs fields of source '%s'; '%s' is not one%s%s%s", cs->rule->info.source, name,
        hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
    return NULL;
}

static void compile_keys(tg_cstate *cs, const tg_ynode *group_by, size_t cap)
{
    tg_rule *r = cs->rule;
    const tg_ynode *one[1] = {group_by};
    const tg_ynode *const *items = group_by->kind == TG_Y_SEQ ? (const tg_ynode *const *)group_by->items : one;
    size_t n = group_by->kind == TG_Y_SEQ ? group_by->n : 1;
    if (group_by->kind == TG_Y_MAP || n == 0 || n > TG_GROUP_KEYS) {
        ERR(cs, group_by->pos, "group_by must be a list of 1 to %d field names, such as [kind, src_kind]",
            TG_GROUP_KEYS);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const tg_field_def *f = source_field(cs, items[i]);
        if (!f) continue;
        if (col_index(r, f->name) >= 0) {
            ERR(cs, items[i]->pos, "group_by names '%s' twice", f->name);
            continue;
        }
        r->group_by[r->n_group_by++] = f;
        push_col(cs, (tg_group_col){.name = f->name, .field = f}, cap);
    }
}

/* A column's default name: the value name of a lone aggregate
** ("sum_duration_ns", as in the result's values), else its text. */
static const char *default_name(tg_cstate *cs, const tg_expr *e, const char *text)
{
    if (e->op == TG_N_AGGREGATE) return cs->aggs[e->agg].value_name;
    return tg_arena_strdup(cs->ld->ctx.arena, text);
}

static void compile_column(tg_cstate *cs, const tg_ynode *item, size_t cap)
{
    tg_rule *r = cs->rule;
    const tg_ynode *text = item, *name = NULL;
    if (item->kind == TG_Y_MAP && item->n == 1 && item->items[0]->kind == TG_Y_SCALAR) {
        name = item->items[0];
        text = item->vals[0];
    }
    if (text->kind != TG_Y_SCALAR) {
        ERR(cs, item->pos, "a grouped evidence column is an aggregate expression or NAME: EXPRESSION, "
            "such as 'time: sum(duration)'");
        return;
    }
    /* a group_by field is already a column */
    if (!name && r->n_group_by && col_index(r, text->value) >= 0 && tg_field_find(r->source, text->value)) return;
    if (name && !tg_rules_valid_id(name->value)) {
        ERR(cs, name->pos, "a column name is letters, digits, '_' and '-', not '%s'", name->value);
        return;
    }
    const tg_srcmap *map = tg_yaml_scalar_map(cs->ld->ctx.arena, text);
    const tg_ast *ast = map ? tg_parse_expr(&cs->ld->ctx, map) : NULL;
    tg_expr *e = ast ? tg_compile_expr(cs, ast, TG_CM_AGG, "evidence columns") : NULL;
    if (!e) return;
    const char *col = name ? name->value : default_name(cs, e, text->value);
    if (col && col_index(r, col) >= 0) {
        ERR(cs, item->pos, "two evidence columns are named '%s'; name one with '%s-2: ...'", col, col);
        return;
    }
    if (col) push_col(cs, (tg_group_col){.name = col, .expr = e}, cap);
}

/* order_by: 'COLUMN [asc|desc]'; default: the first aggregate column,
** descending (the groups that weigh most first). */
static void compile_group_order(tg_cstate *cs, const tg_ynode *order_by)
{
    tg_rule *r = cs->rule;
    r->group_order = -1;
    r->order_desc = true;
    for (size_t i = 0; i < r->n_group_cols && r->group_order < 0; i++)
        if (r->group_cols[i].expr) r->group_order = (int)i;
    if (!order_by) return;
    char word[128] = "", dir[16] = "", extra[2] = "";
    int n = order_by->kind == TG_Y_SCALAR ? sscanf(order_by->value, "%127s %15s %1s", word, dir, extra) : 0;
    if (n < 1 || n > 2 || (n == 2 && strcmp(dir, "asc") != 0 && strcmp(dir, "desc") != 0)) {
        ERR(cs, order_by->pos, "order_by of grouped evidence must be 'COLUMN [asc|desc]'");
        return;
    }
    long k = col_index(r, word);
    if (k < 0) {
        const char *names[TG_GROUP_KEYS + 64];
        size_t m = 0;
        for (size_t i = 0; i < r->n_group_cols && m < TG_GROUP_KEYS + 64; i++) names[m++] = r->group_cols[i].name;
        const char *hint = tg_suggest(word, names, m);
        ERR(cs, order_by->pos, "order_by names no column of the grouped evidence: '%s'%s%s%s", word,
            hint ? " (did you mean '" : " (a group_by field or a column's name)", hint ? hint : "",
            hint ? "'?)" : "");
        return;
    }
    r->group_order = (int)k;
    r->order_desc = n == 2 ? strcmp(dir, "desc") == 0 : true;
}

void tg_compile_group_evidence(tg_cstate *cs, const tg_ynode *group_by, const tg_ynode *columns,
                               const tg_ynode *order_by)
{
    tg_rule *r = cs->rule;
    if (r->source == TG_SRC_TRACE) {
        ERR(cs, group_by->pos, "the trace source has one row: there is nothing to group");
        return;
    }
    size_t cap = TG_GROUP_KEYS + (columns && columns->kind == TG_Y_SEQ ? columns->n : 0) + 1;
    r->group_cols = tg_arena_alloc(cs->ld->ctx.arena, cap * sizeof *r->group_cols);
    if (!r->group_cols) return;
    compile_keys(cs, group_by, cap);
    if (columns && columns->kind != TG_Y_SEQ) {
        ERR(cs, columns->pos, "evidence columns must be a list");
        columns = NULL;
    }
    for (size_t i = 0; columns && i < columns->n; i++) compile_column(cs, columns->items[i], cap);
    if (!columns) {                     /* the rows' count, by default */
        tg_ast count = {.kind = TG_N_NAME, .name = "count", .pos = group_by->pos};
        tg_expr *e = tg_compile_expr(cs, &count, TG_CM_AGG, "evidence columns");
        if (e) push_col(cs, (tg_group_col){.name = "count", .expr = e}, cap);
    }
    compile_group_order(cs, order_by);
}
