/*
** `tracegate explain RULE`: a rule's text (title, severity, source, advice,
** explanation, params with their defaults) followed by its compiled trees
** printed one node per line, indented, each with its type and unit -- the
** form the evaluator actually runs, after macros, params and constant
** folding. Node names come from nodes.def and aggregates.def, so a new
** kind of node is printed without touching this file. Text from the rule
** file (ids, titles, advice, expressions, string constants, file names)
** goes through tg_text_escape (engine/common/text.h, docs/formats.md), so
** a rule file cannot drive the terminal or forge a line of a CI log.
*/
#include "expr.h"
#include "../common/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (*len + (size_t)n + 1 <= *cap || tg_grow((void **)buf, cap, *len + (size_t)n + 1, 1))) {
        vsnprintf(*buf + *len, *cap - *len, fmt, ap2);
        *len += (size_t)n;
    }
    va_end(ap2);
}

/* Text from the rule file, escaped and capped (TG_TEXT_CAP_LONG: a rule's
** scalars are at most 64 KiB, so nothing of a valid rule is cut). */
static void put_text(char **buf, size_t *len, size_t *cap, const char *s)
{
    char *clean = tg_text_dup(s ? s : "", TG_TEXT_CAP_LONG, 0);
    put(buf, len, cap, "%s", clean ? clean : "?");
    free(clean);
}

/* A constant as it would be written: 64KB, 500ms, 20%, "HtoD". */
static void put_value(char **buf, size_t *len, size_t *cap, tg_value v, int suffix)
{
    switch (v.type) {
    case TG_TY_NULL: put(buf, len, cap, "null"); break;
    case TG_TY_BOOL: put(buf, len, cap, "%s", v.u.b ? "true" : "false"); break;
    case TG_TY_STRING:
        put(buf, len, cap, "\"");
        put_text(buf, len, cap, v.u.s);
        put(buf, len, cap, "\"");
        break;
    case TG_TY_INT:
    case TG_TY_FLOAT: {
        double x = tg_value_num(v);
        if (suffix >= 0)
            put(buf, len, cap, "%.15g%s", x / tg_unit_suffixes[suffix].scale, tg_unit_suffixes[suffix].suffix);
        else if (v.type == TG_TY_INT)
            put(buf, len, cap, "%lld", (long long)v.u.i);
        else
            put(buf, len, cap, "%.15g", x);
        if (suffix >= 0 && tg_unit_suffixes[suffix].scale != 1.0) {
            put(buf, len, cap, " (= %.15g %s)", x, tg_unit_base_suffix(v.unit) ? tg_unit_base_suffix(v.unit) : "as a fraction");
            break;
        }
        if (suffix >= 0 || v.unit == TG_UNIT_NONE) break;
        /* show the base unit of a computed constant */
        put(buf, len, cap, "%s", tg_unit_base_suffix(v.unit) ? tg_unit_base_suffix(v.unit) : " (ratio)");
        break;
    }
    }
}

static void put_type(char **buf, size_t *len, size_t *cap, const tg_expr *e)
{
    if (e->type == TG_TY_INT || e->type == TG_TY_FLOAT)
        put(buf, len, cap, " : %s%s%s\n", tg_type_name(e->type), e->unit ? " " : "",
            e->unit ? tg_unit_name(e->unit) : "");
    else
        put(buf, len, cap, " : %s\n", tg_type_name(e->type));
}

void tg_expr_print(char **buf, size_t *len, size_t *cap, const tg_rule *r, const tg_expr *e, int indent)
{
    if (!e) return;
    put(buf, len, cap, "%*s", indent * 2, "");
    switch (e->op) {
    case TG_N_CONST:
        if (e->param) {
            put(buf, len, cap, "params.");
            put_text(buf, len, cap, e->param);
            put(buf, len, cap, " = ");
        }
        else put(buf, len, cap, "const ");
        put_value(buf, len, cap, e->k, e->suffix);
        put_type(buf, len, cap, e);
        return;
    case TG_N_FIELD:
        put(buf, len, cap, "field %s.%s", tg_source_defs[e->field->source].name, e->field->name);
        put_type(buf, len, cap, e);
        return;
    case TG_N_TRACE_REF:
        put(buf, len, cap, "trace.%s", e->field->name);
        put_type(buf, len, cap, e);
        return;
    case TG_N_DEVICE_REF:
        put(buf, len, cap, "device.%s (the row's device)", e->field->name);
        put_type(buf, len, cap, e);
        return;
    case TG_N_BASELINE:
        put(buf, len, cap, "baseline.%s", tg_baseline_stat_names[e->stat]);
        put_type(buf, len, cap, e);
        return;
    case TG_N_AGGREGATE: {
        const tg_agg_use *u = &r->aggs[e->agg];
        put(buf, len, cap, "aggregate %s -> ", tg_agg_defs[u->kind].name);
        put_text(buf, len, cap, u->value_name);
        put_type(buf, len, cap, e);
        tg_expr_print(buf, len, cap, r, u->arg, indent + 1);
        return;
    }
    case TG_N_IN:
        if (e->list_name) {
            put(buf, len, cap, "in list ");
            put_text(buf, len, cap, e->list_name);
            put(buf, len, cap, " (%zu items)", e->n_list);
        } else {
            put(buf, len, cap, "in [");
            for (size_t i = 0; i < e->n_list; i++) {
                if (i) put(buf, len, cap, ", ");
                put_value(buf, len, cap, e->list[i], -1);
            }
            put(buf, len, cap, "]");
        }
        put_type(buf, len, cap, e);
        tg_expr_print(buf, len, cap, r, e->a, indent + 1);
        return;
    default:
        put(buf, len, cap, "%s", tg_node_spelling[e->op]);
        put_type(buf, len, cap, e);
        tg_expr_print(buf, len, cap, r, e->a, indent + 1);
        tg_expr_print(buf, len, cap, r, e->b, indent + 1);
        return;
    }
}

static void put_wrapped(char **buf, size_t *len, size_t *cap, const char *label, const char *text)
{
    if (!text) return;
    put(buf, len, cap, "\n%s:\n", label);
    /* indent every line of the text by two spaces, each escaped alone */
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *one = strndup(s, n);
        put(buf, len, cap, "  ");
        put_text(buf, len, cap, one ? one : "?");
        put(buf, len, cap, "\n");
        free(one);
        s += n + (e ? 1 : 0);
    }
}

/* Grouped evidence: the keys, each column's tree, the order. */
static void explain_groups(char **buf, size_t *len, size_t *cap, const tg_rule *r)
{
    put(buf, len, cap, "one row per group of");
    for (size_t i = 0; i < r->n_group_by; i++) put(buf, len, cap, " %s", r->group_by[i]->name);
    if (r->group_order >= 0)
        put(buf, len, cap, ", groups ordered by %s %s", r->group_cols[r->group_order].name,
            r->order_desc ? "desc" : "asc");
    if (r->evidence_limit == (size_t)-1) put(buf, len, cap, ", no rows");
    else put(buf, len, cap, ", limit %zu", r->evidence_limit ? r->evidence_limit : 10);
    put(buf, len, cap, ", each citing its longest row; columns:\n");
    for (size_t i = 0; i < r->n_group_cols; i++) {
        put(buf, len, cap, "  ");
        put_text(buf, len, cap, r->group_cols[i].name);
        if (!r->group_cols[i].expr) {
            put(buf, len, cap, " (group key)\n");
            continue;
        }
        put(buf, len, cap, "\n");
        tg_expr_print(buf, len, cap, r, r->group_cols[i].expr, 2);
    }
}

char *tg_rules_explain(const tg_ruleset *rs, const char *id)
{
    long idx = tg_rules_find(rs, id);
    if (idx < 0) return NULL;
    const tg_rule *r = &rs->rules[idx];
    char *buf = NULL;
    size_t len = 0, cap = 0;
    put_text(&buf, &len, &cap, r->info.id);
    put(&buf, &len, &cap, ": ");
    put_text(&buf, &len, &cap, r->info.title);
    put(&buf, &len, &cap, "\n");
    put(&buf, &len, &cap, "  severity: %s%s\n", tg_severity_name(r->info.severity), r->info.enabled ? "" : " (disabled)");
    put(&buf, &len, &cap, "  source:   %s (%s)\n", tg_source_defs[r->source].name, tg_source_defs[r->source].doc);
    if (r->info.n_tags) {
        put(&buf, &len, &cap, "  tags:     ");
        for (size_t i = 0; i < r->info.n_tags; i++) {
            put(&buf, &len, &cap, "%s", i ? ", " : "");
            put_text(&buf, &len, &cap, r->info.tags[i]);
        }
        put(&buf, &len, &cap, "\n");
    }
    put(&buf, &len, &cap, "  defined:  ");
    put_text(&buf, &len, &cap, r->info.file);
    put(&buf, &len, &cap, ":%d\n", r->info.line);
    if (r->info.regression)
        put(&buf, &len, &cap, "  regression: %s\n", r->info.regression > 0 ? "higher_is_worse" : "lower_is_worse");
    if (r->info.cause != TG_CAUSE_NONE)
        put(&buf, &len, &cap, "  cause:    %s: %s\n", tg_cause_name(r->info.cause), tg_cause_doc(r->info.cause));
    put_wrapped(&buf, &len, &cap, "explain", r->info.explain);
    put_wrapped(&buf, &len, &cap, "advice", r->info.advice);
    if (r->n_params) {
        put(&buf, &len, &cap, "\nparams:\n");
        for (size_t i = 0; i < r->n_params; i++) {
            put(&buf, &len, &cap, "  ");
            put_text(&buf, &len, &cap, r->params[i].name);
            put(&buf, &len, &cap, " = ");
            put_value(&buf, &len, &cap, r->params[i].value, r->params[i].suffix);
            put(&buf, &len, &cap, "%s\n", r->params[i].from_cli ? "   (from --set)" : "");
        }
    }
    struct { const char *label; const char *text; const tg_expr *e; } trees[] = {
        {"where", r->where_text, r->where},
        {"fail_when", r->fail_when_text, r->fail_when},
        {"metric", r->info.metric, r->metric},
        {"samples", r->info.samples, r->samples},
    };
    for (size_t t = 0; t < sizeof trees / sizeof *trees; t++) {
        if (!trees[t].e && !trees[t].text) continue;
        put(&buf, &len, &cap, "\n%s: ", trees[t].label);
        put_text(&buf, &len, &cap, trees[t].text);
        put(&buf, &len, &cap, "\n");
        if (trees[t].e) tg_expr_print(&buf, &len, &cap, r, trees[t].e, 1);
        else put(&buf, &len, &cap, "  (always true)\n");
    }
    if (!r->where) put(&buf, &len, &cap, "\nwhere: (every row)\n");
    for (size_t c = 0; c < r->n_message_cases; c++) {
        put(&buf, &len, &cap, "\nmessage when ");
        put_text(&buf, &len, &cap, r->message_cases[c].when_text ? r->message_cases[c].when_text : "?");
        put(&buf, &len, &cap, ": ");
        put_text(&buf, &len, &cap, r->message_cases[c].text);
        put(&buf, &len, &cap, "\n");
        tg_expr_print(&buf, &len, &cap, r, r->message_cases[c].when, 1);
    }
    if (r->message_text) {
        put(&buf, &len, &cap, r->n_message_cases ? "\nmessage otherwise: " : "\nmessage: ");
        put_text(&buf, &len, &cap, r->message_text);
        put(&buf, &len, &cap, "\n");
        for (size_t i = 0; i < r->n_message; i++)
            if (r->message[i].expr) {
                put(&buf, &len, &cap, "  {");
                put_text(&buf, &len, &cap, r->message[i].text);
                put(&buf, &len, &cap, "}\n");
                tg_expr_print(&buf, &len, &cap, r, r->message[i].expr, 2);
            }
    }
    put(&buf, &len, &cap, "\nvalues reported: count");
    for (size_t i = 0; i < r->n_value_aggs; i++)
        if (r->aggs[i].kind != TG_AGG_COUNT || r->aggs[i].arg) {
            put(&buf, &len, &cap, " ");
            put_text(&buf, &len, &cap, r->aggs[i].value_name);
        }
    for (size_t i = 0; i < r->n_trace_refs; i++) put(&buf, &len, &cap, " trace_%s", r->trace_refs[i]->name);
    put(&buf, &len, &cap, "\n");
    put(&buf, &len, &cap, "\nevidence: ");
    if (r->n_group_by) {
        explain_groups(&buf, &len, &cap, r);
        return buf;
    }
    if (r->order_field) put(&buf, &len, &cap, "order by %s %s", r->order_field->name, r->order_desc ? "desc" : "asc");
    else put(&buf, &len, &cap, "default order");
    if (r->evidence_limit == (size_t)-1) put(&buf, &len, &cap, ", no rows");
    else if (r->evidence_limit) put(&buf, &len, &cap, ", limit %zu", r->evidence_limit);
    else put(&buf, &len, &cap, ", limit 10");
    if (r->n_columns) {
        put(&buf, &len, &cap, ", columns:");
        for (size_t i = 0; i < r->n_columns; i++) put(&buf, &len, &cap, " %s", r->columns[i]->name);
    }
    put(&buf, &len, &cap, "\n");
    return buf;
}
