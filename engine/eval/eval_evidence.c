/*
** Evidence: the rows a finding cites. During the pass every row that
** passed `where` is offered to a bounded heap that keeps the best `limit`
** rows by the rule's order (evidence.order_by; by default the field of the
** rule's first aggregate, descending -- the outliers behind it -- else
** duration descending, else source order). After the pass the kept rows
** become tg_evidence entries (export table name as in the file, rowid,
** start, end, the evidence columns) and a `reproduce` query that selects
** exactly those rows with the sqlite3 shell.
**
** Derived rows cite the export rows they come from: a gap cites the ops
** that bound it, a device the first and last op that ran on it.
**
** A rule with `group_by` cites groups instead (eval_group.c).
**
** A Kineto JSON trace has no tables: a row's rowid is its event's index in
** traceEvents, every cite names the table "traceEvents", each evidence
** entry carries the event's ts as the file writes it (us), and `reproduce`
** is a jq program that prints the finding's values and then the cited
** rows (eval_jq.c, docs/kineto.md); where it cannot, one that selects
** the cited events with their durations in ns, count and total.
*/
#include "eval_int.h"
#include "../model/model_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tg_evidence_setup(tg_rule_state *st, size_t default_limit)
{
    const tg_rule *r = st->rule;
    st->limit = r->evidence_limit == (size_t)-1 ? 0 : r->evidence_limit ? r->evidence_limit : default_limit;
    if (r->source == TG_SRC_TRACE) st->limit = 0;
    if (r->n_group_by) return;          /* groups, not rows: eval_group.c */
    st->order_field = r->order_field;
    st->order_desc = r->order_desc;
    if (!st->order_field) {
        for (size_t i = 0; i < r->n_value_aggs && !st->order_field; i++)
            if (r->aggs[i].field && r->aggs[i].field->type != TG_TY_STRING) st->order_field = r->aggs[i].field;
        if (!st->order_field) st->order_field = tg_field_find(r->source, "duration");
        st->order_desc = st->order_field != NULL;
    }
    st->order_expr = (tg_expr){.op = TG_N_FIELD, .field = st->order_field, .slot = -1};
    if (st->limit) {
        st->heap = malloc(st->limit * sizeof *st->heap);
        if (!st->heap) st->oom = true;
    }
}

/* a comes before b in the output order (ties: earlier row first). */
static bool before(const tg_rule_state *st, const tg_heap_item *a, const tg_heap_item *b)
{
    if (st->order_field) {
        bool an = a->key.t == TG_RV_NULL, bn = b->key.t == TG_RV_NULL;
        if (an != bn) return bn;                  /* nulls last */
        if (!an) {
            int c;
            if (a->key.t == TG_RV_SID) {
                const char *x = tg_strpool_get(st->m->trace->strings, a->key.u.sid);
                const char *y = tg_strpool_get(st->m->trace->strings, b->key.u.sid);
                c = strcmp(x ? x : "", y ? y : "");
            } else {
                double x = tg_rv_num(a->key), y = tg_rv_num(b->key);
                c = (x > y) - (x < y);
            }
            if (c) return st->order_desc ? c > 0 : c < 0;
        }
    }
    return a->row < b->row;
}

/* The heap keeps the worst kept row on top, to be replaced first. */
static void sift_down(tg_rule_state *st, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, worst = i;
        if (l < st->n_heap && before(st, &st->heap[worst], &st->heap[l])) worst = l;
        if (r < st->n_heap && before(st, &st->heap[worst], &st->heap[r])) worst = r;
        if (worst == i) return;
        tg_heap_item t = st->heap[i];
        st->heap[i] = st->heap[worst];
        st->heap[worst] = t;
        i = worst;
    }
}

static void sift_up(tg_rule_state *st, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(st, &st->heap[p], &st->heap[i])) return;
        tg_heap_item t = st->heap[i];
        st->heap[i] = st->heap[p];
        st->heap[p] = t;
        i = p;
    }
}

void tg_evidence_offer(tg_rule_state *st, const char *row, size_t i)
{
    if (!st->heap) return;
    tg_heap_item it = {.row = i};
    if (st->order_field) it.key = tg_eval_row(st, row, &st->order_expr);
    if (st->n_heap < st->limit) {
        st->heap[st->n_heap++] = it;
        sift_up(st, st->n_heap - 1);
    } else if (before(st, &it, &st->heap[0])) {
        st->heap[0] = it;
        sift_down(st, 0);
    }
}

/* ------------------------------------------------------------ building */

typedef struct cite {
    int table;
    int64_t rowid;
    int64_t start, end;
} cite;

/* First and last op (by start, by end) on a device, for device evidence. */
static void device_bounds(const tg_model *m, int32_t device, cite *first, cite *last)
{
    const tg_trace *t = m->trace;
    first->rowid = last->rowid = -1;
    int64_t best_start = INT64_MAX, best_end = INT64_MIN;
    struct { const char *base; size_t n, stride; int table; } arrays[] = {
        {t->kernels ? (const char *)t->kernels : (const char *)t->kspans, t->n_kernels,
         t->kernels ? sizeof(tg_kernel) : sizeof(tg_kspan), TG_TABLE_KERNEL},
        {(const char *)t->memcpys, t->n_memcpys, sizeof(tg_memop), TG_TABLE_MEMCPY},
        {(const char *)t->memsets, t->n_memsets, sizeof(tg_memop), TG_TABLE_MEMSET},
    };
    for (size_t a = 0; a < 3; a++)
        for (size_t i = 0; i < arrays[a].n; i++) {
            const char *row = arrays[a].base + i * arrays[a].stride;
            int32_t dev;
            int64_t rowid, start, end;
            if (arrays[a].table == TG_TABLE_KERNEL && t->kernels) {
                const tg_kernel *k = (const tg_kernel *)(const void *)row;
                dev = k->device, rowid = k->rowid, start = k->start, end = k->end;
            } else if (arrays[a].table == TG_TABLE_KERNEL) {
                const tg_kspan *k = (const tg_kspan *)(const void *)row;
                dev = k->device, rowid = k->rowid, start = k->start, end = k->end;
            } else {
                const tg_memop *o = (const tg_memop *)(const void *)row;
                dev = o->device, rowid = o->rowid, start = o->start, end = o->end;
            }
            if (dev != device) continue;
            if (start < best_start) {
                best_start = start;
                *first = (cite){arrays[a].table, rowid, start, end};
            }
            if (end > best_end) {
                best_end = end;
                *last = (cite){arrays[a].table, rowid, start, end};
            }
        }
}

static void add_field(tg_evidence *ev, const char *name, tg_value v, size_t cap)
{
    if (ev->n_fields < cap) ev->fields[ev->n_fields++] = (tg_named_value){name, v};
}

static tg_value own(tg_arena *arena, tg_value v)
{
    if (v.type == TG_TY_STRING && v.u.s) v.u.s = tg_arena_strdup(arena, v.u.s);
    return v;
}

static bool push_cite(cite **cites, size_t *n, size_t *cap, cite c)
{
    if (c.rowid < 0 || c.table < 0 || c.table >= TG_TABLE_COUNT) return true;
    for (size_t i = 0; i < *n; i++)
        if ((*cites)[i].table == c.table && (*cites)[i].rowid == c.rowid) return true;
    return TG_PUSH(*cites, *n, *cap, c);
}

static const char *fixed_columns(int table);

/* The columns a listing of one table shows beside the times, into buf;
** false out of memory. */
static bool rich_columns(const tg_trace *t, int table, char *buf, size_t size)
{
    if (table == TG_TABLE_NVTX) {
        char *name = tg_sql_nvtx_name(t, "");
        if (name) snprintf(buf, size, ", %s AS name, globalTid", name);
        free(name);
        return name != NULL;
    }
    snprintf(buf, size, "%s", fixed_columns(table));
    return true;
}

static const char *fixed_columns(int table)
{
    switch (table) {
    case TG_TABLE_KERNEL:
        return ", deviceId, streamId, correlationId, (SELECT value FROM StringIds WHERE id = demangledName) AS name";
    case TG_TABLE_MEMCPY: return ", bytes, copyKind, srcKind, dstKind, deviceId, streamId, correlationId";
    case TG_TABLE_MEMSET: return ", bytes, memKind, deviceId, streamId, correlationId";
    case TG_TABLE_RUNTIME: return ", (SELECT value FROM StringIds WHERE id = nameId) AS name, globalTid, correlationId";
    default: return "";
    }
}

static int cmp_cite(const void *a, const void *b)
{
    const cite *x = a, *y = b;
    if (x->table != y->table) return x->table - y->table;
    return (x->rowid > y->rowid) - (x->rowid < y->rowid);
}

static const char *reproduce_sql(const tg_model *m, cite *cites, size_t n, tg_arena *arena)
{
    if (n == 0) return NULL;
    qsort(cites, n, sizeof *cites, cmp_cite);
    size_t tables = 1;
    for (size_t i = 1; i < n; i++) tables += cites[i].table != cites[i - 1].table;
    char *sql = NULL;
    size_t len = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        char head[512] = "", num[32];
        bool first_of_table = i == 0 || cites[i].table != cites[i - 1].table;
        bool last_of_table = i + 1 == n || cites[i + 1].table != cites[i].table;
        const char *t = tg_trace_cite_table(m->trace, cites[i].table);
        if (first_of_table) {
            char rich[256];
            if (tables == 1 && !rich_columns(m->trace, cites[i].table, rich, sizeof rich)) {
                free(sql);
                return NULL;
            }
            if (tables == 1)
                snprintf(head, sizeof head, "SELECT rowid, start, end, end - start AS duration%s FROM %s WHERE rowid IN (",
                         rich, t);
            else
                snprintf(head, sizeof head, "%sSELECT '%s' AS source_table, rowid, start, end, end - start AS duration "
                         "FROM %s WHERE rowid IN (", i ? " UNION ALL " : "", t, t);
        }
        snprintf(num, sizeof num, "%s%lld%s", first_of_table ? "" : ", ", (long long)cites[i].rowid,
                 last_of_table ? ")" : "");
        size_t need = len + strlen(head) + strlen(num) + 32;
        if (!tg_grow((void **)&sql, &cap, need, 1)) {
            free(sql);
            return NULL;
        }
        len += (size_t)sprintf(sql + len, "%s%s", head, num);
    }
    len += (size_t)sprintf(sql + len, " ORDER BY start;");
    const char *out = tg_arena_strdup(arena, sql);
    free(sql);
    return out;
}

static const char *reproduce_jq(const tg_model *m, cite *cites, size_t n, tg_arena *arena);

/* The query that lists cited rows, in each query language of trace.h. */
static const char *(*const reproduce_cites[TG_QUERY_COUNT])(const tg_model *, cite *, size_t, tg_arena *) = {
    [TG_QUERY_SQL] = reproduce_sql,
    [TG_QUERY_JQ] = reproduce_jq,
};

/* The query printing a finding's values and cited rows, in each query
** language of trace.h. */
static const char *(*const reproduce_values[TG_QUERY_COUNT])(tg_rule_state *, const size_t *, size_t, tg_arena *) = {
    [TG_QUERY_SQL] = tg_sql_reproduce,
    [TG_QUERY_JQ] = tg_jq_reproduce,
};

const char *tg_values_reproduce(tg_rule_state *st, const size_t *rows, size_t n, tg_arena *arena)
{
    return reproduce_values[tg_trace_query_lang(st->m->trace)](st, rows, n, arena);
}

const char *tg_evidence_rows_query(const tg_model *m, const int *tables, const int64_t *rowids, size_t n,
                                   tg_arena *arena)
{
    cite *cites = NULL;
    size_t n_cites = 0, cap = 0;
    for (size_t i = 0; i < n; i++)
        if (!push_cite(&cites, &n_cites, &cap, (cite){tables[i], rowids[i], 0, 0})) {
            free(cites);
            return NULL;
        }
    const char *q = reproduce_cites[tg_trace_query_lang(m->trace)](m, cites, n_cites, arena);
    free(cites);
    return q;
}

/* The counterpart of reproduce_sql for a JSON trace, run as
** `jq -c PROGRAM trace.json` (or `gunzip -c trace.json.gz | jq -c PROGRAM`):
** the cited entries of the format's cite list (traceEvents) by index,
** ordered by ts, each with its duration in ns, and their count and total
** duration. */
static const char *reproduce_jq(const tg_model *m, cite *cites, size_t n, tg_arena *arena)
{
    const char *list_name = tg_trace_cite_table(m->trace, -1);
    if (n == 0) return NULL;
    qsort(cites, n, sizeof *cites, cmp_cite);
    char *list = malloc(n * 24 + 8);
    if (!list) return NULL;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(list + len, "%s%lld", i ? "," : "", (long long)cites[i].rowid);
    const char *out = tg_arena_printf(
        arena,
        ".%s as $e | [%s] | map($e[.] + {index: .}) | sort_by(.ts) | "
        "map({index, name, cat, ts, dur, duration_ns: ((.dur // 0) * 1000 | round)}) | "
        "{events: ., count: length, total_duration_ns: (map(.duration_ns) | add)}",
        list_name, list);
    free(list);
    return out;
}

/* Microseconds as Kineto writes them ("5137410032058.477"), from integer
** ns: text, since a double prints 16 digits inexactly. */
static tg_value ts_us(tg_arena *arena, int64_t ns)
{
    if (ns == TG_NULL_I64) return tg_null();
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    const char *text = tg_arena_printf(arena, "%s%llu.%03llu", ns < 0 ? "-" : "",
                                       (unsigned long long)(mag / 1000), (unsigned long long)(mag % 1000));
    return text ? tg_str(text) : tg_null();
}

/* Evidence that cites an index into one event list (a Kineto trace's
** traceEvents) names its event: the row's name when the rule's columns do
** not show it already, and its timestamp as the file writes it. */
static void add_event_identity(tg_evidence *ev, const tg_rule *r, const tg_model *m, const tg_source_view *view,
                                size_t i, int64_t start, size_t cap, tg_arena *arena)
{
    bool has_name = false;
    for (size_t c = 0; c < r->n_columns; c++) has_name |= strcmp(r->columns[c]->name, "name") == 0;
    const tg_field_def *fn = has_name ? NULL : tg_field_find(r->source, "name");
    if (fn) add_field(ev, "name", own(arena, tg_field_get(m, view, fn, i)), cap);
    add_field(ev, "ts", ts_us(arena, start), cap);
}

static int cmp_heap(const void *a, const void *b, void *ctx)
{
    return before(ctx, a, b) ? -1 : before(ctx, b, a) ? 1 : 0;
}

void tg_evidence_build(tg_rule_state *st, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    const tg_model *m = st->m;
    tg_rule_result *out = st->out;
    if (r->n_group_by) {
        tg_group_build(st, arena);
        return;
    }
    if (!st->n_heap) {
        out->reproduce = tg_values_reproduce(st, NULL, 0, arena);
        return;
    }
    qsort_r(st->heap, st->n_heap, sizeof *st->heap, cmp_heap, st);
    tg_source_view view = tg_model_source(m, r->source);
    out->evidence = tg_arena_alloc(arena, st->n_heap * sizeof *out->evidence);
    if (!out->evidence) return;
    cite *cites = NULL;
    size_t n_cites = 0, cap_cites = 0;
    for (size_t k = 0; k < st->n_heap; k++) {
        size_t i = st->heap[k].row;
        const char *row = view.base + i * view.def->stride;
        tg_evidence *ev = &out->evidence[out->n_evidence++];
        *ev = (tg_evidence){.interval = TG_INTERVAL_ROW, .row_start = TG_NULL_I64, .row_end = TG_NULL_I64,
                            .next_rowid = -1};
        ev->row = (int64_t)i;      /* the cause of it (eval_cause.c) */
        size_t cap = r->n_columns + 4;
        ev->fields = tg_arena_alloc(arena, cap * sizeof *ev->fields);
        if (!ev->fields) return;
        for (size_t c = 0; c < r->n_columns; c++)
            add_field(ev, r->columns[c]->name, own(arena, tg_field_get(m, &view, r->columns[c], i)), cap);
        const tg_field_def *fs = tg_field_find(r->source, "start"), *fe = tg_field_find(r->source, "end");
        tg_value vs = fs ? tg_field_get(m, &view, fs, i) : tg_null();
        tg_value ve = fe ? tg_field_get(m, &view, fe, i) : tg_null();
        ev->start = vs.type == TG_TY_INT ? vs.u.i : TG_NULL_I64;
        ev->end = ve.type == TG_TY_INT ? ve.u.i : TG_NULL_I64;
        cite first = {tg_source_row_table(&view, i), tg_source_row_id(&view, i), ev->start, ev->end},
             second = {.rowid = -1};
        /* a gap and a device are intervals of their own: the entry keeps
        ** the cited row's span apart from them */
        if (r->source == TG_SRC_GAP) {
            const tg_gap *g = (const tg_gap *)(const void *)row;
            second = (cite){g->next_table, g->next_rowid, g->end, TG_NULL_I64};
            ev->interval = TG_INTERVAL_IDLE;
            ev->row_start = g->prev_start;
            ev->row_end = g->start;
            add_field(ev, "next_table", tg_str(tg_trace_cite_table(m->trace, g->next_table)), cap);
            add_field(ev, "next_rowid", tg_int(g->next_rowid, TG_UNIT_NONE), cap);
        } else if (r->source == TG_SRC_DEVICE) {
            const tg_device *d = (const tg_device *)(const void *)row;
            device_bounds(m, d->device, &first, &second);
            ev->interval = TG_INTERVAL_DEVICE;
            ev->row_start = first.start;
            ev->row_end = first.end;
            if (second.rowid >= 0) {
                add_field(ev, "last_table", tg_str(tg_trace_cite_table(m->trace, second.table)), cap);
                add_field(ev, "last_rowid", tg_int(second.rowid, TG_UNIT_NONE), cap);
            }
        }
        if (second.rowid >= 0) {
            ev->next_table = tg_trace_cite_table(m->trace, second.table);
            ev->next_rowid = second.rowid;
        }
        if (tg_trace_formats[m->trace->format].cite_list) add_event_identity(ev, r, m, &view, i, first.start, cap, arena);
        ev->table = first.rowid >= 0 ? tg_trace_cite_table(m->trace, first.table) : NULL;
        ev->rowid = first.rowid;
        if (!push_cite(&cites, &n_cites, &cap_cites, first) || !push_cite(&cites, &n_cites, &cap_cites, second))
            break;
    }
    size_t *rows = malloc(st->n_heap * sizeof *rows);
    for (size_t k = 0; rows && k < st->n_heap; k++) rows[k] = st->heap[k].row;
    out->reproduce = rows ? tg_values_reproduce(st, rows, st->n_heap, arena) : NULL;
    free(rows);
    if (!out->reproduce)
        out->reproduce = reproduce_cites[tg_trace_query_lang(m->trace)](m, cites, n_cites, arena);
    free(cites);
}
