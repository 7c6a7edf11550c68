/*
** Grouped evidence (docs/rule-language.md, "Grouped evidence"): instead of
** the top rows, one evidence row per distinct value of the rule's
** group_by fields. During the pass every row that passed `where` goes to
** its group -- a hash table keyed by the fields' row values (string pool
** ids, integers) -- whose own accumulators take the rule's aggregates
** over the group's rows (the same code as the rule's, eval_agg.c). After
** the pass each group's columns are evaluated in aggregate context, the
** groups are ordered by the rule's order column and the first `limit`
** become tg_evidence rows: the group_by fields, the columns, and as
** table/rowid/start/end the group's longest row (its first row when the
** source has no duration), so a finding still cites export rows.
**
** The reproduce query is a GROUP BY over the source's table (a CTE gives
** each row its group_by fields in SQL form) with each group's count,
** total and longest duration (and bytes for copies and memsets). When
** the groups hold at most TG_GROUP_ROWIDS rows in all, it names their
** rowids and gives exactly the evidence's counts. Past that, it takes the
** cited groups' rows whose start lies between the first and last start of
** the rows the groups hold: rows inside that window that the rule's
** `where` left out (between iterations, on another thread, below a
** threshold) count there too, and the query says so in a comment. A group_by field with no SQL form (derived fields
** such as iteration or steady), a derived source, or a null key: the
** query lists the cited rows instead.
**
** More than TG_GROUPS_MAX distinct keys: the rows of further keys pool
** in one last group whose keys read null (docs/rule-language.md).
*/
#include "eval_int.h"
#include "../model/model_sql.h"
#include "../trace/nsys_enums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_GROUPS_MAX 65536
#define TG_GROUP_ROWIDS 2000

typedef struct group {
    tg_rv key[TG_GROUP_KEYS];
    tg_rule_state acc;          /* count, accumulators, kept values of its rows */
    tg_value *vals;             /* its aggregates once finished */
    tg_value order;             /* its order column's value */
    size_t cite;                /* its longest row */
    tg_rv cite_len;
    int64_t first_start, last_start;
    int64_t *rowids;            /* its rows' rowids while all groups hold <= TG_GROUP_ROWIDS */
    size_t n_rowids, cap_rowids;
    bool overflow;              /* the pool of keys past TG_GROUPS_MAX */
} group;

struct tg_groups {
    group *g;
    size_t n, cap;
    int32_t *slots;             /* open addressing: group index + 1, 0 empty */
    size_t n_slots;
    tg_expr key_expr[TG_GROUP_KEYS];
    tg_expr len_expr, start_expr;   /* duration and start of a row, when the source has them */
    bool has_len, has_start;
    size_t n_rowids;            /* kept over all groups */
    bool too_many_rows;         /* more than TG_GROUP_ROWIDS: the query uses the window */
};

static tg_expr field_expr(const tg_field_def *f)
{
    return (tg_expr){.op = TG_N_FIELD, .field = f, .type = f->type, .unit = f->unit, .slot = -1};
}

bool tg_group_setup(tg_rule_state *st)
{
    const tg_rule *r = st->rule;
    if (!r->n_group_by) return true;
    struct tg_groups *gs = calloc(1, sizeof *gs);
    if (!gs) return false;
    st->groups = gs;
    for (size_t k = 0; k < r->n_group_by; k++) gs->key_expr[k] = field_expr(r->group_by[k]);
    const tg_field_def *len = tg_field_find(r->source, "duration"), *start = tg_field_find(r->source, "start");
    if ((gs->has_len = len != NULL)) gs->len_expr = field_expr(len);
    if ((gs->has_start = start != NULL)) gs->start_expr = field_expr(start);
    gs->n_slots = 64;
    gs->slots = calloc(gs->n_slots, sizeof *gs->slots);
    return gs->slots != NULL;
}

static uint64_t rv_hash(const tg_rv *k, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)k[i].t;
        switch (k[i].t) {
        case TG_RV_BOOL: x ^= (uint64_t)k[i].u.b << 8; break;
        case TG_RV_INT: x ^= (uint64_t)k[i].u.i * 0x9e3779b97f4a7c15ull; break;
        case TG_RV_FLOAT: { uint64_t b; memcpy(&b, &k[i].u.f, 8); x ^= b * 0x9e3779b97f4a7c15ull; break; }
        case TG_RV_SID: x ^= (uint64_t)(uint32_t)k[i].u.sid * 0x9e3779b97f4a7c15ull; break;
        default: break;
        }
        h = (h ^ x) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static bool rv_same(const tg_rv *a, const tg_rv *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].t != b[i].t) return false;
        switch (a[i].t) {
        case TG_RV_BOOL: if (a[i].u.b != b[i].u.b) return false; break;
        case TG_RV_INT: if (a[i].u.i != b[i].u.i) return false; break;
        case TG_RV_FLOAT: if (memcmp(&a[i].u.f, &b[i].u.f, 8) != 0) return false; break;
        case TG_RV_SID: if (a[i].u.sid != b[i].u.sid) return false; break;
        default: break;
        }
    }
    return true;
}

static bool grow_slots(struct tg_groups *gs, size_t nk)
{
    size_t n = gs->n_slots * 2;
    int32_t *s = calloc(n, sizeof *s);
    if (!s) return false;
    for (size_t i = 0; i < gs->n; i++) {
        size_t h = (size_t)rv_hash(gs->g[i].key, nk) & (n - 1);
        while (s[h]) h = (h + 1) & (n - 1);
        s[h] = (int32_t)i + 1;
    }
    free(gs->slots);
    gs->slots = s;
    gs->n_slots = n;
    return true;
}

static group *new_group(tg_rule_state *st, const tg_rv *key, bool overflow)
{
    struct tg_groups *gs = st->groups;
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 16;
        group *g = realloc(gs->g, cap * sizeof *g);
        if (!g) return NULL;
        gs->g = g;
        gs->cap = cap;
    }
    group *g = &gs->g[gs->n++];
    memset(g, 0, sizeof *g);
    memcpy(g->key, key, sizeof g->key);
    g->overflow = overflow;
    g->first_start = INT64_MAX;
    g->last_start = INT64_MIN;
    g->acc = (tg_rule_state){.rule = st->rule, .m = st->m, .baseline = st->baseline, .slots = st->slots};
    tg_acc_init(&g->acc);
    return g->acc.oom ? NULL : g;
}

/* The group of a key, made on first sight. */
static group *find_group(tg_rule_state *st, const tg_rv *key)
{
    struct tg_groups *gs = st->groups;
    size_t nk = st->rule->n_group_by;
    size_t h = (size_t)rv_hash(key, nk) & (gs->n_slots - 1);
    for (; gs->slots[h]; h = (h + 1) & (gs->n_slots - 1)) {
        group *g = &gs->g[gs->slots[h] - 1];
        if (!g->overflow && rv_same(g->key, key, nk)) return g;
    }
    if (gs->n >= TG_GROUPS_MAX) {       /* pool the rest in the last group */
        group *last = &gs->g[gs->n - 1];
        if (last->overflow) return last;
        tg_rv none[TG_GROUP_KEYS] = {{0}};
        return new_group(st, none, true);
    }
    if (2 * (gs->n + 1) > gs->n_slots && !grow_slots(gs, nk)) return NULL;
    h = (size_t)rv_hash(key, nk) & (gs->n_slots - 1);
    while (gs->slots[h]) h = (h + 1) & (gs->n_slots - 1);
    group *g = new_group(st, key, false);
    if (g) gs->slots[h] = (int32_t)gs->n;
    return g;
}

void tg_group_row(tg_rule_state *st, const char *row, size_t i)
{
    struct tg_groups *gs = st->groups;
    if (!gs || st->oom) return;
    tg_rv key[TG_GROUP_KEYS] = {{0}};
    for (size_t k = 0; k < st->rule->n_group_by; k++) key[k] = tg_eval_row(st, row, &gs->key_expr[k]);
    group *g = find_group(st, key);
    if (!g) {
        st->oom = true;
        return;
    }
    g->acc.count++;
    tg_acc_row(&g->acc, row);
    st->oom |= g->acc.oom;
    tg_rv len = gs->has_len ? tg_eval_row(st, row, &gs->len_expr) : (tg_rv){.t = TG_RV_NULL};
    if (g->acc.count == 1 || (len.t != TG_RV_NULL && (g->cite_len.t == TG_RV_NULL ||
                                                      tg_rv_num(len) > tg_rv_num(g->cite_len)))) {
        g->cite = i;
        g->cite_len = len;
    }
    if (!gs->too_many_rows && ++gs->n_rowids > TG_GROUP_ROWIDS) {
        gs->too_many_rows = true;
        for (size_t k = 0; k < gs->n; k++) {
            free(gs->g[k].rowids);
            gs->g[k].rowids = NULL;
        }
    }
    if (!gs->too_many_rows) {
        tg_source_view view = tg_model_source(st->m, st->rule->source);
        if (!TG_PUSH(g->rowids, g->n_rowids, g->cap_rowids, tg_source_row_id(&view, i))) st->oom = true;
    }
    tg_rv s = gs->has_start ? tg_eval_row(st, row, &gs->start_expr) : (tg_rv){.t = TG_RV_NULL};
    if (s.t == TG_RV_INT) {
        if (s.u.i < g->first_start) g->first_start = s.u.i;
        if (s.u.i > g->last_start) g->last_start = s.u.i;
    }
}

void tg_group_free(tg_rule_state *st)
{
    struct tg_groups *gs = st->groups;
    if (!gs) return;
    for (size_t i = 0; i < gs->n; i++) {
        gs->g[i].acc.slots = NULL;      /* shared with st */
        tg_acc_free(&gs->g[i].acc);
        free(gs->g[i].rowids);
    }
    free(gs->g);
    free(gs->slots);
    free(gs);
    st->groups = NULL;
}

/* ------------------------------------------------------------ reproduce */

#define RAW_API_NAME "(SELECT value FROM StringIds WHERE id = nameId)"

/* The SQL form of a group_by field over its table's columns; "@COL" means
** the kind names of nsys's enums (trace/nsys_enums.h: tg_copy_kind_names
** for copyKind, else tg_mem_kind_names) as a CASE on COL, "=base" the base
** name of the raw API name and "=nvtx" an NVTX row's name, each by its one
** SQL writer (model_sql.h). */
static const struct { tg_source_id src; const char *field, *sql; } key_sqls[] = {
    {TG_SRC_KERNEL, "name", "(SELECT value FROM StringIds WHERE id = demangledName)"},
    {TG_SRC_KERNEL, "short_name", "(SELECT value FROM StringIds WHERE id = shortName)"},
    {TG_SRC_KERNEL, "device", "deviceId"},
    {TG_SRC_KERNEL, "stream", "streamId"},
    {TG_SRC_MEMCPY, "kind", "@copyKind"},
    {TG_SRC_MEMCPY, "src_kind", "@srcKind"},
    {TG_SRC_MEMCPY, "dst_kind", "@dstKind"},
    {TG_SRC_MEMCPY, "bytes", "bytes"},
    {TG_SRC_MEMCPY, "device", "deviceId"},
    {TG_SRC_MEMCPY, "stream", "streamId"},
    {TG_SRC_MEMSET, "mem_kind", "@memKind"},
    {TG_SRC_MEMSET, "bytes", "bytes"},
    {TG_SRC_MEMSET, "device", "deviceId"},
    {TG_SRC_MEMSET, "stream", "streamId"},
    {TG_SRC_API, "name", "=base"},
    {TG_SRC_API, "raw_name", RAW_API_NAME},
    {TG_SRC_NVTX, "name", "=nvtx"},
};

static const char *key_sql(const tg_field_def *f)
{
    for (size_t i = 0; i < sizeof key_sqls / sizeof *key_sqls; i++)
        if (key_sqls[i].src == f->source && strcmp(key_sqls[i].field, f->name) == 0) return key_sqls[i].sql;
    return NULL;
}

static void put_key_expr(FILE *f, const tg_trace *t, const char *sql)
{
    if (strcmp(sql, "=base") == 0) {
        tg_sql_put_base_name(f, RAW_API_NAME);
        return;
    }
    if (strcmp(sql, "=nvtx") == 0) {
        tg_sql_put_nvtx_name(f, t, "");
        return;
    }
    if (sql[0] != '@') {
        fputs(sql, f);
        return;
    }
    bool copy = strcmp(sql + 1, "copyKind") == 0;
    fprintf(f, "CASE %s", sql + 1);
    const char *const *names = copy ? tg_copy_kind_names : tg_mem_kind_names;
    for (int id = 0; names[id]; id++) {
        const char *name = names[id];
        fprintf(f, " WHEN %d THEN ", id);
        tg_sql_put_string(f, name);
    }
    fputs(" END", f);
}

static bool put_sql_value(FILE *f, tg_value v)
{
    switch (v.type) {
    case TG_TY_STRING: tg_sql_put_string(f, v.u.s); return v.u.s != NULL;
    case TG_TY_INT: fprintf(f, "%lld", (long long)v.u.i); return true;
    case TG_TY_BOOL: fputs(v.u.b ? "1" : "0", f); return true;
    default: return false;          /* null, float: no exact SQL match */
    }
}

/* The GROUP BY query of the cited groups, or NULL when it cannot say them
** exactly (see the head of this file). */
static char *group_by_sql(tg_rule_state *st, const tg_source_view *view, group *const *cited, size_t n)
{
    const tg_rule *r = st->rule;
    const tg_model *m = st->m;
    int table = n ? tg_source_row_table(view, cited[0]->cite) : -1;
    if (table < 0 || table >= TG_TABLE_COUNT || r->source == TG_SRC_GAP || r->source == TG_SRC_DEVICE ||
        r->source == TG_SRC_ITERATION || r->source == TG_SRC_TRACE)
        return NULL;
    const char *sql[TG_GROUP_KEYS];
    for (size_t k = 0; k < r->n_group_by; k++)
        if (!(sql[k] = key_sql(r->group_by[k]))) return NULL;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (cited[i]->overflow || cited[i]->first_start > cited[i]->last_start) return NULL;
        if (cited[i]->first_start < lo) lo = cited[i]->first_start;
        if (cited[i]->last_start > hi) hi = cited[i]->last_start;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    bool ok = true, bytes = r->source == TG_SRC_MEMCPY || r->source == TG_SRC_MEMSET;
    const char *tname = m->trace->table_name[table] ? m->trace->table_name[table] : tg_table_names[table];
    fputs("WITH r AS (SELECT start, end", f);
    if (bytes) fputs(", bytes", f);
    for (size_t k = 0; k < r->n_group_by; k++) {
        fputs(", ", f);
        put_key_expr(f, m->trace, sql[k]);
        fprintf(f, " AS %s", r->group_by[k]->name);
    }
    if (st->groups->too_many_rows) {
        fprintf(f, " FROM %s WHERE start BETWEEN %lld AND %lld) SELECT ", tname, (long long)lo, (long long)hi);
    } else {
        fprintf(f, " FROM %s WHERE rowid IN (", tname);
        bool first = true;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < cited[i]->n_rowids; k++, first = false)
                fprintf(f, "%s%lld", first ? "" : ", ", (long long)cited[i]->rowids[k]);
        fputs(")) SELECT ", f);
    }
    for (size_t k = 0; k < r->n_group_by; k++) fprintf(f, "%s, ", r->group_by[k]->name);
    fprintf(f, "count(*) AS count, sum(end - start) AS duration_ns, max(end - start) AS max_duration_ns%s "
               "FROM r WHERE (", bytes ? ", sum(bytes) AS bytes" : "");
    for (size_t k = 0; k < r->n_group_by; k++) fprintf(f, "%s%s", k ? ", " : "", r->group_by[k]->name);
    fputs(") IN (VALUES ", f);
    for (size_t i = 0; i < n && ok; i++) {
        fputs(i ? ", (" : "(", f);
        for (size_t k = 0; k < r->n_group_by && ok; k++) {
            fputs(k ? ", " : "", f);
            ok = put_sql_value(f, tg_field_get(m, view, r->group_by[k], cited[i]->cite));
        }
        fputc(')', f);
    }
    fputs(") GROUP BY ", f);
    for (size_t k = 0; k < r->n_group_by; k++) fprintf(f, "%s%zu", k ? ", " : "", k + 1);
    fputs(" ORDER BY duration_ns DESC;", f);
    if (st->groups->too_many_rows)
        fputs(" -- every row of these groups whose start lies in the window, also those the rule's where "
              "left out", f);
    ok &= fclose(f) == 0;
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

static const char *group_reproduce(tg_rule_state *st, const tg_source_view *view, group *const *cited, size_t n,
                                   tg_arena *arena)
{
    if (!n) return NULL;
    /* a key with no SQL (jq) form: the query lists the groups' rows,
    ** the cited events of a JSON trace */
    char *sql = tg_trace_query_lang(st->m->trace) == TG_QUERY_SQL ? group_by_sql(st, view, cited, n) : NULL;
    if (sql) {
        const char *out = tg_arena_strdup(arena, sql);
        free(sql);
        return out;
    }
    int *tables = malloc(n * sizeof *tables);
    int64_t *rowids = malloc(n * sizeof *rowids);
    const char *out = NULL;
    if (tables && rowids) {
        for (size_t i = 0; i < n; i++) {
            tables[i] = tg_source_row_table(view, cited[i]->cite);
            rowids[i] = tg_source_row_id(view, cited[i]->cite);
        }
        out = tg_evidence_rows_query(st->m, tables, rowids, n, arena);
    }
    free(tables);
    free(rowids);
    return out;
}

/* ------------------------------------------------------------ building */

/* a before b in the output: the order column (nulls last), then the
** order in which the groups first appeared. */
static int cmp_groups(const void *pa, const void *pb, void *ctx)
{
    const group *a = *(group *const *)pa, *b = *(group *const *)pb;
    const tg_rule *r = ctx;
    bool an = a->order.type == TG_TY_NULL, bn = b->order.type == TG_TY_NULL;
    if (an != bn) return an ? 1 : -1;
    int c = 0;
    if (!an && a->order.type == TG_TY_STRING) {
        c = strcmp(a->order.u.s ? a->order.u.s : "", b->order.u.s ? b->order.u.s : "");
    } else if (!an) {
        double x = tg_value_num(a->order), y = tg_value_num(b->order);
        c = (x > y) - (x < y);
    }
    if (c) return r->order_desc ? -c : c;
    return (a > b) - (a < b);
}

static tg_value owned(tg_arena *arena, tg_value v)
{
    if (v.type == TG_TY_STRING && v.u.s) v.u.s = tg_arena_strdup(arena, v.u.s);
    return v;
}

/* The value of column c for group g. */
static tg_value column_value(tg_rule_state *st, const tg_source_view *view, group *g, size_t c)
{
    const tg_group_col *col = &st->rule->group_cols[c];
    if (col->expr) return tg_eval_agg(&g->acc, g->vals, col->expr);
    if (g->overflow) return tg_null();
    return tg_field_get(st->m, view, col->field, g->cite);
}

static bool build_row(tg_rule_state *st, const tg_source_view *view, group *g, tg_evidence *ev, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    ev->fields = tg_arena_alloc(arena, (r->n_group_cols + 2) * sizeof *ev->fields);
    if (!ev->fields) return false;
    for (size_t c = 0; c < r->n_group_cols; c++)
        ev->fields[ev->n_fields++] = (tg_named_value){r->group_cols[c].name,
                                                       owned(arena, column_value(st, view, g, c))};
    if (g->overflow)
        ev->fields[ev->n_fields++] = (tg_named_value){"other_groups", tg_bool(true)};
    int t = tg_source_row_table(view, g->cite);
    ev->table = t >= 0 && t < TG_TABLE_COUNT ? (st->m->trace->table_name[t] ? st->m->trace->table_name[t]
                                                                           : tg_table_names[t]) : NULL;
    ev->rowid = tg_source_row_id(view, g->cite);
    const tg_field_def *fs = tg_field_find(r->source, "start"), *fe = tg_field_find(r->source, "end");
    tg_value vs = fs ? tg_field_get(st->m, view, fs, g->cite) : tg_null();
    tg_value ve = fe ? tg_field_get(st->m, view, fe, g->cite) : tg_null();
    ev->start = vs.type == TG_TY_INT ? vs.u.i : TG_NULL_I64;
    ev->end = ve.type == TG_TY_INT ? ve.u.i : TG_NULL_I64;
    return true;
}

void tg_group_build(tg_rule_state *st, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    struct tg_groups *gs = st->groups;
    tg_rule_result *out = st->out;
    if (!gs || !gs->n || !st->limit) return;
    tg_source_view view = tg_model_source(st->m, r->source);
    group **order = malloc(gs->n * sizeof *order);
    if (!order) {
        st->oom = true;
        return;
    }
    for (size_t i = 0; i < gs->n; i++) {
        group *g = &gs->g[i];
        order[i] = g;
        if (!(g->vals = tg_acc_finish(&g->acc, arena))) {
            st->oom = true;
            free(order);
            return;
        }
        g->order = r->group_order >= 0 ? owned(arena, column_value(st, &view, g, (size_t)r->group_order)) : tg_null();
    }
    qsort_r(order, gs->n, sizeof *order, cmp_groups, (void *)r);
    size_t n = gs->n < st->limit ? gs->n : st->limit;
    out->evidence = tg_arena_alloc(arena, n * sizeof *out->evidence);
    if (!out->evidence) {
        st->oom = true;
        free(order);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        tg_evidence *ev = &out->evidence[out->n_evidence];
        *ev = (tg_evidence){.interval = TG_INTERVAL_ROW, .row_start = TG_NULL_I64, .row_end = TG_NULL_I64,
                            .next_rowid = -1};
        ev->row = -1;              /* a group, not one row */
        if (!build_row(st, &view, order[k], ev, arena)) {
            st->oom = true;
            break;
        }
        out->n_evidence++;
    }
    /* pooled keys past TG_GROUPS_MAX are no group SQL can form */
    if (!gs->g[gs->n - 1].overflow) out->reproduce = tg_values_reproduce(st, NULL, out->n_evidence, arena);
    if (!out->reproduce) out->reproduce = group_reproduce(st, &view, order, out->n_evidence, arena);
    free(order);
}

