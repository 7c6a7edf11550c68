/*
** The reproduce query of a finding on an nsys export (docs/evidence.md):
** SQL that, run with `sqlite3 -readonly -header EXPORT`, prints every
** value of the finding and then the rows it cites, computed from the
** export's own tables. It has three parts:
**
**   1. a temporary table per source the query reads (tg_kernel, tg_device,
**      tg_trace, ...), filled from the model's views of
**      engine/model/model_sql.h;
**   2. the values: the rows that pass the rule's `where` (compiled from
**      the rule's tree), and over them count and every aggregate of
**      fail_when, message and metric, named as in the result's `values`,
**      plus the trace.FIELD values they read;
**   3. the cited rows with the columns that made them match (the fields
**      `where` reads: the API name through the launch join, decoded copy
**      and memory kinds, steady), times in ns with `_ns` in their names;
**      for grouped evidence the groups, each column computed in SQL.
**
** A rule that reads what has no SQL form (model_sql.h: kernel.nvtx, ...)
** gets a comment saying which field, and part 3 alone.
**
** Semantics kept from the evaluator: a comparison with null is false, so
** `not` reads null as false (NOT coalesce(x, 0)); `/` is a float division,
** null for a zero divisor; sum over no rows is 0; percentiles interpolate
** between the closest ranks (numpy's default) and stddev is the
** population one.
*/
#include "eval_int.h"
#include "../model/model_sql.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sqlq {
    tg_rule_state *st;
    FILE *f;
    unsigned need;             /* source views read (1u << tg_source_id) */
    uint64_t fields[TG_SRC_COUNT];   /* their columns read (tg_model_sql_field_bit) */
    char why[160];             /* a field with no SQL form ("kernel.nvtx"), or "" */
} sqlq;

static void put_expr(sqlq *q, const tg_expr *e, const char *row);

static void put_number(FILE *f, tg_value v)
{
    if (v.type == TG_TY_INT) fprintf(f, "%lld", (long long)v.u.i);
    else if (v.type == TG_TY_BOOL) fputs(v.u.b ? "1" : "0", f);
    else if (v.type == TG_TY_FLOAT && isfinite(v.u.f)) fprintf(f, "%.17g", v.u.f);
    else if (v.type == TG_TY_STRING) tg_sql_put_string(f, v.u.s);
    else fputs("NULL", f);
}

/* The name of a column: ns fields end in _ns (start_ns, queue_p50_ns). */
static void put_column_name(FILE *f, const tg_field_def *fd)
{
    size_t n = strlen(fd->name);
    bool ns = fd->unit == TG_UNIT_NS && !(n > 3 && strcmp(fd->name + n - 3, "_ns") == 0);
    fprintf(f, "%s%s", fd->name, ns ? "_ns" : "");
}

static void put_field(sqlq *q, const tg_field_def *fd, const char *row)
{
    q->fields[fd->source] |= tg_model_sql_field_bit(fd);
    if (!tg_model_sql_has_field(fd) && !q->why[0])
        snprintf(q->why, sizeof q->why, "%s.%s", tg_source_defs[fd->source].name, fd->name);
    if (row) fprintf(q->f, "%s.", row);
    tg_sql_put_ident(q->f, fd->name);
}

void tg_eval_sql_put_quantile(FILE *f, const char *v, const char *rows, double quantile)
{
    /* the form put_subquery_agg writes for a rule's percentiles */
    fprintf(f, "SELECT min(v) + (max(h) - CAST(max(h) AS INTEGER)) * (max(v) - min(v)) FROM (SELECT %s AS v, "
            "row_number() OVER (ORDER BY %s) - 1 AS i, (count(*) OVER () - 1) * %.2f AS h FROM %s AND %s IS NOT "
            "NULL) WHERE i IN (CAST(h AS INTEGER), CAST(h AS INTEGER) + 1)", v, v, quantile, rows, v);
}

/* A percentile or the standard deviation: a subquery over the matched
** rows (alias p; `corr` restricts it to one group). */
static void put_subquery_agg(sqlq *q, const tg_agg_use *u, const char *corr)
{
    FILE *f = q->f;
    if (u->kind == TG_AGG_STDDEV || u->kind == TG_AGG_CV) {
        fputs("(SELECT sqrt(avg((s.v - m.mu) * (s.v - m.mu))) FROM (SELECT ", f);
        put_expr(q, u->arg, "p");
        fputs(" AS v FROM matched p WHERE ", f);
        put_expr(q, u->arg, "p");
        fputs(" IS NOT NULL", f);
        fputs(corr, f);
        fputs(") s, (SELECT avg(", f);
        put_expr(q, u->arg, "p");
        fprintf(f, ") AS mu FROM matched p WHERE 1%s) m)", corr);
        return;
    }
    /* rank h = q (n - 1); the value at floor(h), plus the fraction of the
    ** step to the next one */
    fputs("(SELECT min(v) + (max(h) - CAST(max(h) AS INTEGER)) * (max(v) - min(v)) FROM (SELECT ", f);
    put_expr(q, u->arg, "p");
    fputs(" AS v, row_number() OVER (ORDER BY ", f);
    put_expr(q, u->arg, "p");
    fprintf(f, ") - 1 AS i, (count(*) OVER () - 1) * %.2f AS h FROM matched p WHERE ",
            (double)tg_agg_defs[u->kind].quantile / 100.0);
    put_expr(q, u->arg, "p");
    fprintf(f, " IS NOT NULL%s) WHERE i IN (CAST(h AS INTEGER), CAST(h AS INTEGER) + 1))", corr);
}

/* An aggregate over the matched rows (FROM matched, maybe grouped). */
static void put_agg(sqlq *q, const tg_agg_use *u, const char *corr)
{
    FILE *f = q->f;
    switch (u->kind) {
    case TG_AGG_COUNT:
        if (!u->arg) {
            fputs("count(*)", f);
            return;
        }
        fputs("count(CASE WHEN ", f);
        put_expr(q, u->arg, "matched");
        fputs(" THEN 1 END)", f);
        return;
    case TG_AGG_N:
        fputs("count(", f);
        put_expr(q, u->arg, "matched");
        fputs(")", f);
        return;
    case TG_AGG_RATIO:
        fputs("CASE WHEN count(*) > 0 THEN count(CASE WHEN ", f);
        put_expr(q, u->arg, "matched");
        fputs(" THEN 1 END) * 1.0 / count(*) END", f);
        return;
    case TG_AGG_SUM: case TG_AGG_MEAN: case TG_AGG_MIN: case TG_AGG_MAX:
        fputs(u->kind == TG_AGG_SUM ? "coalesce(sum(" : u->kind == TG_AGG_MEAN ? "avg(" :
              u->kind == TG_AGG_MIN ? "min(" : "max(", f);
        put_expr(q, u->arg, "matched");
        fputs(u->kind == TG_AGG_SUM ? "), 0)" : ")", f);
        return;
    case TG_AGG_STDDEV:
        put_subquery_agg(q, u, corr);
        return;
    case TG_AGG_CV:
        put_subquery_agg(q, u, corr);
        fputs(" / nullif(abs(avg(", f);
        put_expr(q, u->arg, "matched");
        fputs(")), 0)", f);
        return;
    default:
        if (tg_agg_defs[u->kind].quantile) {
            put_subquery_agg(q, u, corr);
            return;
        }
        TG_UNREACHABLE();
        fputs("NULL", f);
    }
}

static const char *binary_op(tg_node_kind op)
{
    switch (op) {
    case TG_N_OR: return " OR ";
    case TG_N_AND: return " AND ";
    case TG_N_EQ: return " = ";
    case TG_N_NE: return " != ";
    case TG_N_LT: return " < ";
    case TG_N_LE: return " <= ";
    case TG_N_GT: return " > ";
    case TG_N_GE: return " >= ";
    case TG_N_ADD: return " + ";
    case TG_N_SUB: return " - ";
    case TG_N_MUL: return " * ";
    case TG_N_DIV: return " * 1.0 / ";
    default: return NULL;   /* not a binary operator: put_expr_corr's switch has the rest */
    }
}

/* An expression; row: the alias whose columns fields read (row context),
** or the matched rows' alias inside aggregates. corr: see put_agg. */
static void put_expr_corr(sqlq *q, const tg_expr *e, const char *row, const char *corr)
{
    FILE *f = q->f;
    const char *op = binary_op(e->op);
    if (op) {
        fputc('(', f);
        put_expr_corr(q, e->a, row, corr);
        fputs(op, f);
        put_expr_corr(q, e->b, row, corr);
        fputc(')', f);
        return;
    }
    switch (e->op) {
    case TG_N_CONST:
        put_number(f, e->k);
        if (e->param) fprintf(f, " /* params.%s */", e->param);
        return;
    case TG_N_FIELD: put_field(q, e->field, row); return;
    case TG_N_TRACE_REF:
        q->need |= 1u << TG_SRC_TRACE;
        fputs("(SELECT ", f);
        put_field(q, e->field, NULL);
        fputs(" FROM tg_trace)", f);
        return;
    case TG_N_DEVICE_REF:
        /* the row's device, joined to the matched rows as dv: its
        ** columns travel with them as "device.FIELD" */
        q->need |= 1u << TG_SRC_DEVICE;
        if (strcmp(row, "r") == 0) {
            put_field(q, e->field, "dv");
        } else {
            q->fields[TG_SRC_DEVICE] |= tg_model_sql_field_bit(e->field);
            fprintf(f, "%s.\"device.%s\"", row, e->field->name);
        }
        return;
    case TG_N_BASELINE:
        put_number(f, tg_eval_baseline_value(q->st, e->stat, e->unit));
        fprintf(f, " /* baseline.%s, from the baseline file */", tg_baseline_stat_names[e->stat]);
        return;
    case TG_N_AGGREGATE: put_agg(q, &q->st->rule->aggs[e->agg], corr); return;
    case TG_N_NOT:
        fputs("NOT coalesce(", f);
        put_expr_corr(q, e->a, row, corr);
        fputs(", 0)", f);
        return;
    case TG_N_NEG:
        fputs("-(", f);
        put_expr_corr(q, e->a, row, corr);
        fputc(')', f);
        return;
    case TG_N_IS_NULL: case TG_N_NOT_NULL:
        fputc('(', f);
        put_expr_corr(q, e->a, row, corr);
        fputs(e->op == TG_N_IS_NULL ? " IS NULL)" : " IS NOT NULL)", f);
        return;
    case TG_N_IN:
        fputc('(', f);
        put_expr_corr(q, e->a, row, corr);
        fputs(" IN (", f);
        for (size_t i = 0; i < e->n_list; i++) {
            fputs(i ? ", " : "", f);
            put_number(f, e->list[i]);
        }
        fputs("))", f);
        return;
    case TG_N_MATCHES: case TG_N_STARTSWITH: case TG_N_CONTAINS: {
        const char *k = e->b && e->b->k.type == TG_TY_STRING ? e->b->k.u.s : "";
        fputc('(', f);
        if (e->op == TG_N_MATCHES) {
            /* in the sqlite3 shell's regexp() syntax (regex.c), else as
            ** written, and said so */
            char why[160];
            char *re = tg_regex_translate(k, TG_REGEX_SQLITE, why, sizeof why);
            put_expr_corr(q, e->a, row, corr);
            fputs(" REGEXP ", f);
            tg_sql_put_string(f, re ? re : k);
            if (!re) fprintf(f, " /* the pattern %s: run with a POSIX ERE regexp() (docs/evidence.md) */", why);
            free(re);
        } else if (e->op == TG_N_STARTSWITH) {
            fputs("substr(", f);
            put_expr_corr(q, e->a, row, corr);
            fprintf(f, ", 1, %zu) = ", strlen(k));
            tg_sql_put_string(f, k);
        } else {
            fputs("instr(", f);
            put_expr_corr(q, e->a, row, corr);
            fputs(", ", f);
            tg_sql_put_string(f, k);
            fputs(") > 0", f);
        }
        fputc(')', f);
        return;
    }
    default:
        TG_UNREACHABLE();
        fputs("NULL", f);
    }
}

static void put_expr(sqlq *q, const tg_expr *e, const char *row)
{
    put_expr_corr(q, e, row, "");
}

/* ------------------------------------------------------------ statements */

/* The device fields the rule reads (device.FIELD), each once. */
static void device_refs(const tg_expr *e, const tg_field_def **list, size_t *n, size_t cap)
{
    if (!e) return;
    if (e->op == TG_N_DEVICE_REF && e->field) {
        bool seen = false;
        for (size_t i = 0; i < *n && !seen; i++) seen = list[i] == e->field;
        if (!seen && *n < cap) list[(*n)++] = e->field;
    }
    device_refs(e->a, list, n, cap);
    device_refs(e->b, list, n, cap);
}

/* WITH matched AS (the rows that pass where, with their device's fields
** the rule reads) */
static void put_matched(sqlq *q)
{
    const tg_rule *r = q->st->rule;
    const tg_field_def *dev[32];
    size_t n_dev = 0;
    device_refs(r->where, dev, &n_dev, 32);
    for (size_t i = 0; i < r->n_aggs; i++) device_refs(r->aggs[i].arg, dev, &n_dev, 32);
    q->need |= 1u << r->source;
    fputs("WITH matched AS (SELECT r.*", q->f);
    for (size_t i = 0; i < n_dev; i++) {
        fputs(", ", q->f);
        put_field(q, dev[i], "dv");
        fprintf(q->f, " AS \"device.%s\"", dev[i]->name);
    }
    fprintf(q->f, " FROM tg_%s r", tg_model_sql_view(r->source));
    if (n_dev) {
        q->need |= 1u << TG_SRC_DEVICE;
        fputs(" LEFT JOIN tg_device dv ON dv.device = r.device", q->f);
    }
    if (r->where) {
        fputs(" WHERE ", q->f);
        put_expr(q, r->where, "r");
    }
    fputs(")", q->f);
    /* the rows except set aside (docs/rules.md, "Rows set aside") */
    if (r->except) {
        tg_expr buf;
        fprintf(q->f, ", set_aside AS (SELECT r.* FROM tg_%s r", tg_model_sql_view(r->source));
        if (n_dev) fputs(" LEFT JOIN tg_device dv ON dv.device = r.device", q->f);
        fputs(" WHERE ", q->f);
        put_expr(q, tg_rule_set_aside_test(r, &buf), "r");
        fputs(")", q->f);
    }
    fputs(" ", q->f);
}

/* ", (SELECT count(*) FROM set_aside) AS set_aside, ...": the values of
** except (eval.c set_values). */
static void put_set_aside(sqlq *q)
{
    const tg_rule *r = q->st->rule;
    if (!r->except) return;
    fputs(", (SELECT count(*) FROM set_aside) AS set_aside", q->f);
    if (tg_field_find(r->source, "duration"))
        fputs(", (SELECT coalesce(sum(\"duration\"), 0) FROM set_aside) AS set_aside_duration_ns", q->f);
}

/* ", AGG AS name": one value of part 2. */
static void put_value_agg(void *writer, const tg_agg_use *a)
{
    sqlq *q = writer;
    fputs(", ", q->f);
    put_agg(q, a, "");
    fputs(" AS ", q->f);
    tg_sql_put_ident(q->f, a->value_name);
}

/* ", (SELECT FIELD FROM tg_trace) AS trace_FIELD" */
static void put_value_trace(void *writer, const tg_field_def *fd)
{
    sqlq *q = writer;
    q->need |= 1u << TG_SRC_TRACE;
    fputs(", (SELECT ", q->f);
    put_field(q, fd, NULL);
    fprintf(q->f, " FROM tg_trace) AS trace_%s", fd->name);
}

/* Part 2: the values, named as in the result. */
static void put_values(sqlq *q)
{
    put_matched(q);
    fputs("SELECT count(*) AS count", q->f);
    tg_eval_each_value(q->st->rule, q, put_value_agg, put_value_trace);
    put_set_aside(q);
    fputs(" FROM matched;", q->f);
}

void tg_eval_each_value(const tg_rule *r, void *q, void (*put_agg)(void *q, const tg_agg_use *a),
                        void (*put_trace)(void *q, const tg_field_def *f))
{
    for (size_t i = 0; i < r->n_value_aggs; i++)
        if (r->aggs[i].kind != TG_AGG_COUNT || r->aggs[i].arg) put_agg(q, &r->aggs[i]);
    for (size_t i = 0; i < r->n_trace_refs; i++) put_trace(q, r->trace_refs[i]);
}

/* The fields of e, each once, into list (at most cap). */
void tg_eval_fields_of(const tg_expr *e, const tg_field_def **list, size_t *n, size_t cap)
{
    if (!e) return;
    if (e->op == TG_N_FIELD && e->field) {
        bool seen = false;
        for (size_t i = 0; i < *n && !seen; i++) seen = list[i] == e->field;
        if (!seen && *n < cap) list[(*n)++] = e->field;
    }
    tg_eval_fields_of(e->a, list, n, cap);
    tg_eval_fields_of(e->b, list, n, cap);
}

size_t tg_eval_cited_fields(const tg_rule *r, const char *const *lead, size_t n_lead, const tg_field_def **cols,
                            size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < n_lead; i++) {
        const tg_field_def *fd = tg_field_find(r->source, lead[i]);
        if (fd && n < cap) cols[n++] = fd;
    }
    for (size_t i = 0; i < r->n_columns && n < cap; i++) {
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = cols[k] == r->columns[i];
        if (!seen) cols[n++] = r->columns[i];
    }
    tg_eval_fields_of(r->where, cols, &n, cap);
    return n;
}

/* The columns of a cited row: its key, its span, the evidence columns,
** then every field `where` reads: why it matched. */
static void put_row_columns(sqlq *q, const char *const *lead, size_t n_lead)
{
    const tg_rule *r = q->st->rule;
    FILE *f = q->f;
    const tg_field_def *cols[64];
    size_t n = tg_eval_cited_fields(r, lead, n_lead, cols, 64);
    bool first = true;
    if (r->source != TG_SRC_GAP && r->source != TG_SRC_DEVICE) {
        fputs("rowid", f);
        first = false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!tg_model_sql_has_field(cols[i])) continue;
        q->fields[cols[i]->source] |= tg_model_sql_field_bit(cols[i]);
        fputs(first ? "" : ", ", f);
        first = false;
        tg_sql_put_ident(f, cols[i]->name);
        if (cols[i]->unit == TG_UNIT_NS) {
            fputs(" AS ", f);
            put_column_name(f, cols[i]);
        }
    }
}

static void put_order(sqlq *q)
{
    const tg_rule_state *st = q->st;
    FILE *f = q->f;
    fputs(" ORDER BY ", f);
    if (st->order_field && tg_model_sql_has_field(st->order_field)) {
        q->fields[st->order_field->source] |= tg_model_sql_field_bit(st->order_field);
        tg_sql_put_ident(f, st->order_field->name);
        fputs(st->order_desc ? " DESC, " : ", ", f);
    }
    fputs(st->rule->source == TG_SRC_DEVICE ? "device;" : "start;", f);
}

/* Part 3 for rows: those cited, by their key. */
static void put_cited_rows(sqlq *q, const size_t *rows, size_t n)
{
    static const char *const lead_row[] = {"start", "end", "duration"};
    static const char *const lead_gap[] = {"device", "pid", "start", "end", "duration"};
    static const char *const lead_device[] = {"device", "name", "start", "end", "span"};
    const tg_rule *r = q->st->rule;
    const tg_model *m = q->st->m;
    FILE *f = q->f;
    tg_source_view view = tg_model_source(m, r->source);
    q->need |= 1u << r->source;
    fputs(" SELECT ", f);
    if (r->source == TG_SRC_GAP) {
        put_row_columns(q, lead_gap, 5);
        fputs(", before_table, before_rowid, before_duration AS before_duration_ns, after_table, after_rowid", f);
    } else if (r->source == TG_SRC_DEVICE) {
        put_row_columns(q, lead_device, 5);
        fputs(", first_table, first_rowid, last_table, last_rowid", f);
    } else {
        put_row_columns(q, lead_row, 3);
    }
    fprintf(f, " FROM tg_%s WHERE ", tg_model_sql_view(r->source));
    if (r->source == TG_SRC_GAP) {
        fputs("(device, pid, start) IN (VALUES ", f);
        for (size_t i = 0; i < n; i++) {
            const tg_gap *g = (const tg_gap *)(const void *)(view.base + rows[i] * view.def->stride);
            fprintf(f, "%s(%d, %d, %lld)", i ? ", " : "", g->device, g->pid, (long long)g->start);
        }
    } else if (r->source == TG_SRC_DEVICE) {
        fputs("device IN (", f);
        for (size_t i = 0; i < n; i++) {
            const tg_device *d = (const tg_device *)(const void *)(view.base + rows[i] * view.def->stride);
            fprintf(f, "%s%d", i ? ", " : "", d->device);
        }
    } else {
        fputs("rowid IN (", f);
        for (size_t i = 0; i < n; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)tg_source_row_id(&view, rows[i]));
    }
    fputc(')', f);
    put_order(q);
}

/* Part 3 for groups: each group's keys and columns, as many as cited. */
static void put_groups(sqlq *q, size_t n)
{
    const tg_rule *r = q->st->rule;
    FILE *f = q->f;
    fputc(' ', f);
    put_matched(q);
    fputs("SELECT ", f);
    char corr[512] = "";
    size_t len = 0;
    for (size_t k = 0; k < r->n_group_by; k++)
        len += (size_t)snprintf(corr + len, sizeof corr - len, " AND p.\"%s\" IS matched.\"%s\"",
                                r->group_by[k]->name, r->group_by[k]->name);
    for (size_t c = 0; c < r->n_group_cols; c++) {
        const tg_group_col *col = &r->group_cols[c];
        fputs(c ? ", " : "", f);
        if (col->expr) put_expr_corr(q, col->expr, "matched", corr);
        else put_field(q, col->field, "matched");
        fputs(" AS ", f);
        tg_sql_put_ident(f, col->name);
    }
    fputs(" FROM matched GROUP BY ", f);
    for (size_t k = 0; k < r->n_group_by; k++) {
        fputs(k ? ", " : "", f);
        put_field(q, r->group_by[k], "matched");
    }
    if (r->group_order >= 0) {
        fputs(" ORDER BY ", f);
        tg_sql_put_ident(f, r->group_cols[r->group_order].name);
        fputs(r->order_desc ? " DESC" : "", f);
    }
    fprintf(f, " LIMIT %zu;", n);
}

/* Part 1: a temporary table per source read, in front of the rest:
** computed once for both statements (the export is only read; a temporary
** table lives in the connection's temp store). */
static char *with_views(const tg_model *m, unsigned need, const uint64_t *fields, const char *rest)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    bool ok = true;
    for (int s = 0; s < TG_SRC_COUNT && ok; s++) {
        if (!(need & (1u << s))) continue;
        char *with = tg_model_sql_with(m, (tg_source_id)s, fields[s]);
        ok = with != NULL;
        if (ok)
            fprintf(f, "DROP TABLE IF EXISTS temp.tg_%s; CREATE TEMP TABLE tg_%s AS %s SELECT * FROM %s; ",
                    tg_model_sql_view((tg_source_id)s), tg_model_sql_view((tg_source_id)s), with,
                    tg_model_sql_view((tg_source_id)s));
        free(with);
    }
    fputs(rest, f);
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* One part of a query into its own buffer (its size in *len, which the
** stream keeps updating until tg_eval_part_end): false when out of memory. */
bool tg_eval_part(FILE **f, char **buf, size_t *len)
{
    *buf = NULL;
    *f = open_memstream(buf, len);
    return *f != NULL;
}

bool tg_eval_part_end(FILE **f, char **buf)
{
    bool ok = fclose(*f) == 0 && *buf;
    *f = NULL;
    if (!ok) {
        free(*buf);
        *buf = NULL;
    }
    return ok;
}

const char *tg_sql_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    if (tg_trace_query_lang(st->m->trace) != TG_QUERY_SQL || !tg_model_sql_has_source(r->source)) return NULL;
    sqlq q = {.st = st};
    char *values = NULL, *cited = NULL;
    size_t values_len = 0, cited_len = 0;
    bool ok = tg_eval_part(&q.f, &values, &values_len);
    if (ok) put_values(&q);
    ok = ok && tg_eval_part_end(&q.f, &values);
    bool exact = !q.why[0];
    if (!exact && r->n_group_by) {
        /* grouped rows need the values' where: the caller cites the groups' rows */
        free(values);
        return NULL;
    }
    if (ok && !exact) {
        /* the values have no SQL form: say which field, and cite the rows */
        free(values);
        values = malloc(sizeof q.why + 128);
        ok = values != NULL;
        if (ok)
            snprintf(values, sizeof q.why + 128, "/* the values of this finding are not reproduced: field %s "
                     "has no SQL form (docs/evidence.md) */", q.why);
        q.need = 0;
    }
    if (ok && n) {
        ok = tg_eval_part(&q.f, &cited, &cited_len);
        if (ok) {
            if (r->n_group_by) put_groups(&q, n);
            else put_cited_rows(&q, rows, n);
        }
        ok = ok && tg_eval_part_end(&q.f, &cited);
    }
    char *sql = NULL;
    if (ok) {
        size_t need = strlen(values) + (cited ? strlen(cited) : 0) + 1;
        char *body = malloc(need);
        if (body) {
            snprintf(body, need, "%s%s", values, cited ? cited : "");
            sql = with_views(st->m, q.need, q.fields, body);
        }
        free(body);
    }
    free(values);
    free(cited);
    const char *out = sql ? tg_arena_strdup(arena, sql) : NULL;
    free(sql);
    return out;
}
