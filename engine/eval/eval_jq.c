/*
** The reproduce program of a finding on a PyTorch profiler (Kineto) JSON
** trace (docs/kineto.md): the counterpart of eval_sql.c. A jq program
** that, run with `jq -c PROGRAM trace.json` (gunzip -c first for .gz),
** prints every value of the finding -- one object, named as the result's
** `values` -- and then the rows it cites, one object a line. It has the
** same three parts as the SQL:
**
**   1. a binding per source the program reads ($memcpy, $device, $trace,
**      ...), computed from traceEvents by engine/model/model_jq.c;
**   2. the values: the rows that pass the rule's `where` (compiled from
**      the rule's tree) as $m, and over them count and every aggregate of
**      fail_when, message and metric, plus the trace.FIELD values read;
**   3. the cited rows with the columns that made them match, times in ns
**      with `_ns` in their names, each row event's index, cat, name and
**      ts as the file writes them; for grouped evidence the groups.
**
** A rule that reads what has no jq form (model_jq.h) prints a note saying
** which field, and part 3 alone.
**
** Semantics kept from the evaluator, as in eval_sql.c: a comparison with
** null is false, `not` reads null as false; arithmetic with null is null,
** `/` a float division, null for a zero divisor; sum over no rows is 0;
** percentiles interpolate between the closest ranks, stddev is the
** population one. Booleans are true/false in the views and 1/0 in
** arithmetic and comparisons (tg_n), as in SQL.
*/
#include "eval_int.h"
#include "../model/model_jq.h"
#include "../model/model_sql.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jqq {
    tg_rule_state *st;
    FILE *f;
    unsigned need;             /* sources read (1u << tg_source_id) */
    uint64_t fields[TG_SRC_COUNT];
    char why[160];             /* a field with no jq form ("kernel.nvtx"), or "" */
    char note[320];            /* a pattern jq reads otherwise, or "" */
} jqq;

/* The evaluator's semantics as jq functions (see the head of this file). */
static const char jq_funcs[] =
    "def tg_n: if type == \"boolean\" then (if . then 1 else 0 end) else . end; "
    "def tg_t: if type == \"boolean\" then . elif type == \"number\" then . != 0 else . != null end; "
    "def tg_vals: map(select(. != null) | tg_n); "
    "def tg_sum: tg_vals | add // 0; "
    "def tg_mean: tg_vals | if length > 0 then add / length else null end; "
    "def tg_sd: tg_vals | if length == 0 then null else (add / length) as $mu | map((. - $mu) * (. - $mu)) | "
    "add / length | sqrt end; "
    "def tg_cv: tg_sd as $s | tg_mean as $mu | if $s == null or $mu == null or $mu == 0 then null else "
    "$s / (if $mu < 0 then 0 - $mu else $mu end) end; "
    "def tg_q($q): tg_vals | sort | if length == 0 then null else ($q * (length - 1)) as $h | ($h | floor) as $f | "
    ".[$f] + ($h - $f) * ((if $f + 1 < length then .[$f + 1] else .[$f] end) - .[$f]) end; ";

const char *tg_eval_jq_funcs(void) { return jq_funcs; }

static void put_expr(jqq *q, const tg_expr *e, const char *rows);

static void put_value(FILE *f, tg_value v)
{
    if (v.type == TG_TY_INT) fprintf(f, "%lld", (long long)v.u.i);
    else if (v.type == TG_TY_BOOL) fputs(v.u.b ? "true" : "false", f);
    else if (v.type == TG_TY_FLOAT && isfinite(v.u.f)) fprintf(f, "%.17g", v.u.f);
    else if (v.type == TG_TY_STRING) tg_jq_put_string(f, v.u.s);
    else fputs("null", f);
}

static void put_key(FILE *f, const char *name)
{
    tg_jq_put_string(f, name);
}

/* The name of a column: ns fields end in _ns (start_ns, queue_p50_ns). */
static void put_column_name(FILE *f, const tg_field_def *fd)
{
    size_t n = strlen(fd->name);
    bool ns = fd->unit == TG_UNIT_NS && !(n > 3 && strcmp(fd->name + n - 3, "_ns") == 0);
    char name[160];
    snprintf(name, sizeof name, "%s%s", fd->name, ns ? "_ns" : "");
    put_key(f, name);
}

/* A timestamp on the file's clock: views keep them from a base (model_jq.h). */
static bool is_timestamp(const tg_field_def *fd)
{
    return fd->unit == TG_UNIT_NS && (!strcmp(fd->name, "start") || !strcmp(fd->name, "end") ||
                                      !strcmp(fd->name, "launch_end"));
}

/* A field of the row that is `.` (prefix: a row expression, or ""). */
static void put_field(jqq *q, const tg_field_def *fd, const char *prefix)
{
    q->fields[fd->source] |= tg_model_sql_field_bit(fd);
    if (!tg_model_jq_has_field(fd) && !q->why[0])
        snprintf(q->why, sizeof q->why, "%s.%s", tg_source_defs[fd->source].name, fd->name);
    bool ts = is_timestamp(fd);
    fprintf(q->f, "%s%s.", ts ? "(" : "", prefix);
    put_key(q->f, fd->name);
    if (ts) fputs(" | tg_abs)", q->f);
}

/* An aggregate over the rows array `rows` ($m, or a group's $g). */
static void put_agg(jqq *q, const tg_agg_use *u, const char *rows)
{
    FILE *f = q->f;
    if (u->kind == TG_AGG_COUNT && !u->arg) {
        fprintf(f, "(%s | length)", rows);
        return;
    }
    fprintf(f, "(%s | ", rows);
    switch (u->kind) {
    case TG_AGG_COUNT:
        fputs("map(select(", f);
        put_expr(q, u->arg, rows);
        fputs(" | tg_t)) | length)", f);
        return;
    case TG_AGG_RATIO:
        fputs("if length > 0 then (map(select(", f);
        put_expr(q, u->arg, rows);
        fputs(" | tg_t)) | length) / length else null end)", f);
        return;
    default: break;
    }
    fputs("map(", f);
    put_expr(q, u->arg, rows);
    fputs(") | ", f);
    switch (u->kind) {
    case TG_AGG_N: fputs("tg_vals | length)", f); return;
    case TG_AGG_SUM: fputs("tg_sum)", f); return;
    case TG_AGG_MEAN: fputs("tg_mean)", f); return;
    case TG_AGG_MIN: fputs("tg_vals | min)", f); return;
    case TG_AGG_MAX: fputs("tg_vals | max)", f); return;
    case TG_AGG_STDDEV: fputs("tg_sd)", f); return;
    case TG_AGG_CV: fputs("tg_cv)", f); return;
    default:
        if (tg_agg_defs[u->kind].quantile) {
            fprintf(f, "tg_q(%.17g))", (double)tg_agg_defs[u->kind].quantile / 100.0);
            return;
        }
        TG_UNREACHABLE();
        fputs("null)", f);
    }
}

static const char *compare_op(tg_node_kind op)
{
    switch (op) {
    case TG_N_EQ: return "==";
    case TG_N_NE: return "!=";
    case TG_N_LT: return "<";
    case TG_N_LE: return "<=";
    case TG_N_GT: return ">";
    case TG_N_GE: return ">=";
    default: return NULL;
    }
}

static const char *arith_op(tg_node_kind op)
{
    switch (op) {
    case TG_N_ADD: return "+";
    case TG_N_SUB: return "-";
    case TG_N_MUL: return "*";
    case TG_N_DIV: return "/";
    default: return NULL;
    }
}

/* a and b bound as $a and $b (numbers for booleans), then `body`. */
static void put_pair(jqq *q, const tg_expr *e, const char *rows)
{
    fputs("((", q->f);
    put_expr(q, e->a, rows);
    fputs(" | tg_n) as $a | (", q->f);
    put_expr(q, e->b, rows);
    fputs(" | tg_n) as $b | ", q->f);
}

/* `matches`: the pattern in jq's (Oniguruma) syntax (regex.c); one it
** cannot translate is kept as written and said so in the values. */
static void put_matches(jqq *q, const tg_expr *e, const char *rows, const char *pattern)
{
    FILE *f = q->f;
    char why[160];
    char *re = tg_regex_translate(pattern, TG_REGEX_ONIGURUMA, why, sizeof why);
    if (!re && !q->note[0])
        snprintf(q->note, sizeof q->note, "the pattern %.60s %s: jq reads it as written (docs/evidence.md)", pattern,
                 why);
    fputs("(", f);
    put_expr(q, e->a, rows);
    fputs(" | if type == \"string\" then test(", f);
    tg_jq_put_string(f, re ? re : pattern);
    fputs(") else false end)", f);
    free(re);
}

/* An expression over the row `.`; rows: the array aggregates read. */
static void put_expr(jqq *q, const tg_expr *e, const char *rows)
{
    FILE *f = q->f;
    const char *op = compare_op(e->op);
    if (op) {
        put_pair(q, e, rows);
        fprintf(f, "$a != null and $b != null and $a %s $b)", op);
        return;
    }
    if ((op = arith_op(e->op))) {
        put_pair(q, e, rows);
        fprintf(f, "if $a == null or $b == null%s then null else $a %s $b end)", e->op == TG_N_DIV ? " or $b == 0" : "",
                op);
        return;
    }
    switch (e->op) {
    case TG_N_OR: case TG_N_AND:
        fputs("((", f);
        put_expr(q, e->a, rows);
        fprintf(f, " | tg_t) %s (", e->op == TG_N_OR ? "or" : "and");
        put_expr(q, e->b, rows);
        fputs(" | tg_t))", f);
        return;
    case TG_N_CONST:
        put_value(f, e->k);
        return;
    case TG_N_FIELD: put_field(q, e->field, ""); return;
    case TG_N_TRACE_REF:
        q->need |= 1u << TG_SRC_TRACE;
        put_field(q, e->field, "$trace");
        return;
    case TG_N_DEVICE_REF:
        q->need |= 1u << TG_SRC_DEVICE;
        put_field(q, e->field, "$dev[.device | tostring]");
        return;
    case TG_N_BASELINE:
        put_value(f, tg_eval_baseline_value(q->st, e->stat, e->unit));
        return;
    case TG_N_AGGREGATE: put_agg(q, &q->st->rule->aggs[e->agg], rows); return;
    case TG_N_NOT:
        fputs("(", f);
        put_expr(q, e->a, rows);
        fputs(" | tg_t | not)", f);
        return;
    case TG_N_NEG:
        fputs("((", f);
        put_expr(q, e->a, rows);
        fputs(" | tg_n) as $a | if $a == null then null else 0 - $a end)", f);
        return;
    case TG_N_IS_NULL: case TG_N_NOT_NULL:
        fputs("(", f);
        put_expr(q, e->a, rows);
        fputs(e->op == TG_N_IS_NULL ? " == null)" : " != null)", f);
        return;
    case TG_N_IN:
        fputs("((", f);
        put_expr(q, e->a, rows);
        fputs(" | tg_n) as $a | $a != null and any(", f);
        for (size_t i = 0; i < e->n_list; i++) {
            fputs(i ? ", " : "", f);
            tg_value v = e->list[i];
            if (v.type == TG_TY_BOOL) v = tg_int(v.u.b, TG_UNIT_NONE);
            put_value(f, v);
        }
        fputs(e->n_list ? "; . == $a))" : "empty; true))", f);
        return;
    case TG_N_MATCHES: case TG_N_STARTSWITH: case TG_N_CONTAINS: {
        const char *k = e->b && e->b->k.type == TG_TY_STRING ? e->b->k.u.s : "";
        if (e->op == TG_N_MATCHES) {
            put_matches(q, e, rows, k);
            return;
        }
        fputs("(", f);
        put_expr(q, e->a, rows);
        fputs(" | type == \"string\" and ", f);
        fputs(e->op == TG_N_STARTSWITH ? "startswith(" : "(index(", f);
        tg_jq_put_string(f, k);
        fputs(e->op == TG_N_STARTSWITH ? "))" : ") != null))", f);
        return;
    }
    default:
        TG_UNREACHABLE();
        fputs("null", f);
    }
}

/* ------------------------------------------------------------ statements */

/* The array of a source's rows: its view, or the one trace row. */
static const char *rows_of(tg_source_id src)
{
    return src == TG_SRC_TRACE ? "trace_rows" : tg_model_sql_view(src);
}

/* ($SRC | map(select(where))) as $m */
static void put_matched(jqq *q)
{
    const tg_rule *r = q->st->rule;
    q->need |= 1u << r->source;
    fprintf(q->f, "($%s", rows_of(r->source));
    if (r->where) {
        fputs(" | map(select(", q->f);
        put_expr(q, r->where, "$m");
        fputs(" | tg_t))", q->f);
    }
    fputs(") as $m | ", q->f);
    /* the rows except set aside (docs/rules.md, "Rows set aside") */
    if (r->except) {
        tg_expr buf;
        fprintf(q->f, "($%s | map(select(", rows_of(r->source));
        put_expr(q, tg_rule_set_aside_test(r, &buf), "$m");
        fputs(" | tg_t))) as $set_aside | ", q->f);
    }
}

/* ", name: AGG": one value of part 2. */
static void put_value_agg(void *writer, const tg_agg_use *a)
{
    jqq *q = writer;
    fputs(", ", q->f);
    put_key(q->f, a->value_name);
    fputs(": ", q->f);
    put_agg(q, a, "$m");
}

/* ", trace_FIELD: $trace's FIELD" */
static void put_value_trace(void *writer, const tg_field_def *fd)
{
    jqq *q = writer;
    char name[160];
    snprintf(name, sizeof name, "trace_%s", fd->name);
    fputs(", ", q->f);
    put_key(q->f, name);
    fputs(": ", q->f);
    q->need |= 1u << TG_SRC_TRACE;
    put_field(q, fd, "$trace");
}

/* Part 2: the values, named as in the result. */
static void put_values(jqq *q)
{
    put_matched(q);
    fputs("{count: ($m | length)", q->f);
    tg_eval_each_value(q->st->rule, q, put_value_agg, put_value_trace);
    if (q->st->rule->except) {
        fputs(", set_aside: ($set_aside | length)", q->f);
        if (tg_field_find(q->st->rule->source, "duration"))
            fputs(", set_aside_duration_ns: ($set_aside | map(.duration) | add // 0)", q->f);
    }
    if (q->note[0]) {
        fputs(", note: ", q->f);
        tg_jq_put_string(q->f, q->note);
    }
    fputs("}", q->f);
}

/* The columns of a cited row: its key, its span, the evidence columns,
** then every field `where` reads: why it matched. */
static void put_row_columns(jqq *q, const char *const *lead, size_t n_lead)
{
    FILE *f = q->f;
    const tg_field_def *cols[64];
    size_t n = tg_eval_cited_fields(q->st->rule, lead, n_lead, cols, 64);
    for (size_t i = 0; i < n; i++) {
        if (!tg_model_jq_has_field(cols[i])) continue;
        q->fields[cols[i]->source] |= tg_model_sql_field_bit(cols[i]);
        fputs(", ", f);
        put_column_name(f, cols[i]);
        fputs(": ", f);
        put_field(q, cols[i], "");
    }
}

/* Sort the rows array by the rule's order, then by start. */
static void put_order(jqq *q)
{
    const tg_rule_state *st = q->st;
    FILE *f = q->f;
    const char *tie = st->rule->source == TG_SRC_DEVICE ? ".device" : ".start";
    if (st->order_field && tg_model_jq_has_field(st->order_field)) {
        q->fields[st->order_field->source] |= tg_model_sql_field_bit(st->order_field);
        if (st->order_desc) {
            /* stable sorts: ties keep the tie order */
            fprintf(f, " | sort_by(%s) | reverse | sort_by(.", tie);
            put_key(f, st->order_field->name);
            fputs(") | reverse", f);
        } else {
            fputs(" | sort_by(.", f);
            put_key(f, st->order_field->name);
            fprintf(f, ", %s)", tie);
        }
    } else {
        fprintf(f, " | sort_by(%s)", tie);
    }
}

/* Part 3 for rows: those cited, by their key, one object each. */
static void put_cited_rows(jqq *q, const size_t *rows, size_t n)
{
    static const char *const lead_row[] = {"start", "end", "duration", "name"};
    static const char *const lead_gap[] = {"device", "pid", "start", "end", "duration"};
    static const char *const lead_device[] = {"device", "name", "start", "end", "span"};
    const tg_rule *r = q->st->rule;
    tg_source_view view = tg_model_source(q->st->m, r->source);
    FILE *f = q->f;
    q->need |= 1u << r->source;
    if (r->source != TG_SRC_GAP && r->source != TG_SRC_DEVICE) {
        fputs("({", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\"%lld\": true", i ? ", " : "", (long long)tg_source_row_id(&view, rows[i]));
        fputs("} as $cited | ", f);
    } else {
        fputs("(", f);
    }
    fprintf(f, "$%s | map(select(", rows_of(r->source));
    if (r->source == TG_SRC_GAP) {
        /* the views' times count from the base */
        int64_t base_ns = tg_model_jq_base_us(q->st->m) * 1000;
        fputs("[.device, .pid, .start] as $k | any(", f);
        for (size_t i = 0; i < n; i++) {
            const tg_gap *g = (const tg_gap *)(const void *)(view.base + rows[i] * view.def->stride);
            fprintf(f, "%s[%d, %d, %lld]", i ? ", " : "", g->device, g->pid, (long long)(g->start - base_ns));
        }
        fputs("; . == $k)))", f);
    } else if (r->source == TG_SRC_DEVICE) {
        fputs(".device | IN(", f);
        for (size_t i = 0; i < n; i++) {
            const tg_device *d = (const tg_device *)(const void *)(view.base + rows[i] * view.def->stride);
            fprintf(f, "%s%d", i ? ", " : "", d->device);
        }
        fputs(")))", f);
    } else {
        fputs("$cited[.rowid | tostring]))", f);
    }
    put_order(q);
    fputs(" | .[] | {", f);
    if (r->source == TG_SRC_GAP) {
        fputs("interval: \"idle\"", f);
        put_row_columns(q, lead_gap, 5);
        fputs(", before_rowid, before_duration_ns: .before_duration, after_rowid}", f);
    } else if (r->source == TG_SRC_DEVICE) {
        fputs("interval: \"device\"", f);
        put_row_columns(q, lead_device, 5);
        fputs(", first_rowid, last_rowid}", f);
    } else {
        fputs("rowid, cat: $e[.rowid].cat, event: $e[.rowid].name, ts: $e[.rowid].ts", f);
        put_row_columns(q, lead_row, 4);
        fputs("})", f);
        return;
    }
    fputs(")", f);
}

/* Part 3 for groups: each group's keys and columns, as many as cited. */
static void put_groups(jqq *q, size_t n)
{
    const tg_rule *r = q->st->rule;
    FILE *f = q->f;
    fputs("($m | group_by([", f);
    for (size_t k = 0; k < r->n_group_by; k++) {
        fputs(k ? ", " : "", f);
        put_field(q, r->group_by[k], "");
    }
    fputs("]) | map(. as $g | .[0] | {", f);
    for (size_t c = 0; c < r->n_group_cols; c++) {
        const tg_group_col *col = &r->group_cols[c];
        fputs(c ? ", " : "", f);
        put_key(f, col->name);
        fputs(": ", f);
        if (col->expr) put_expr(q, col->expr, "$g");
        else put_field(q, col->field, "");
    }
    fputs("})", f);
    if (r->group_order >= 0) {
        fputs(" | sort_by(.", f);
        put_key(f, r->group_cols[r->group_order].name);
        fputs(r->order_desc ? ") | reverse" : ")", f);
    }
    fprintf(f, " | .[:%zu] | .[])", n);
}


const char *tg_jq_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    if (tg_trace_query_lang(st->m->trace) != TG_QUERY_JQ || !tg_model_jq_has_source(r->source)) return NULL;
    jqq q = {.st = st};
    char *values = NULL, *cited = NULL;
    size_t values_len = 0, cited_len = 0;
    bool ok = tg_eval_part(&q.f, &values, &values_len);
    if (ok) put_values(&q);
    ok = ok && tg_eval_part_end(&q.f, &values);
    bool exact = !q.why[0];
    if (!exact && r->n_group_by) {
        free(values);       /* groups need the values' where: the caller cites their rows */
        return NULL;
    }
    if (ok && !exact) {
        char *note = malloc(sizeof q.why + 160);
        ok = note != NULL;
        if (ok)
            snprintf(note, sizeof q.why + 160, "{note: \"the values of this finding are not reproduced: field %s "
                     "has no jq form (docs/kineto.md)\"}", q.why);
        free(values);
        values = note;
        q.need = 0;
        memset(q.fields, 0, sizeof q.fields);
    }
    if (ok && n) {
        ok = tg_eval_part(&q.f, &cited, &cited_len);
        if (ok) {
            if (r->n_group_by) put_groups(&q, n);
            else put_cited_rows(&q, rows, n);
        }
        ok = ok && tg_eval_part_end(&q.f, &cited);
    }
    char *views = ok ? tg_model_jq_with(st->m, q.need, q.fields) : NULL;
    const char *out = NULL;
    if (views)
        out = tg_arena_printf(arena, "%s%s%s%s%s", jq_funcs, views, values, cited ? ", " : "", cited ? cited : "");
    free(views);
    free(values);
    free(cited);
    return out;
}
