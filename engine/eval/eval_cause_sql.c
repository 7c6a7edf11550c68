/*
** The reproduce queries of causes (docs/host.md): run with
** `sqlite3 -readonly EXPORT`, each returns the numbers its cause states.
**
** - host: per window (win = the evidence entry's number, as `evidence` in
**   the JSON) the rows of the process overlapping it, by source, name and
**   thread: count and the ns inside the window (min(end, e) - max(start,
**   s)), from OSRT_API, the CUDA API table (calls of 100 us or more) and
**   NVTX_EVENTS; a call recorded twice (old exports) counts once, as the
**   model counts it (tg_sql_put_api_calls).
** - call_site: the rows of the finding (by rowid; the first
**   TG_CAUSE_SQL_ROWS of them, a comment says when more were left out),
**   each one's call site derived from CUDA_CALLCHAINS through its
**   launching call's callchainId (the first frame outside modules.def's
**   libraries), then per call site their count and total duration.
** - launch: per kernel name, the kernels launched in steady iterations that
**   ran shorter than their launching call: count, kernel and call time.
**
** A Kineto trace has no tables: its host query is a jq program over the
** cited events (their time inside the window, not the totals of entries
** with more rows than cited); it has no stacks, so no call-site query;
** its launch query is left out.
*/
#include "eval_cause.h"
#include "../model/model_jq.h"
#include "../model/model_sql.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_CAUSE_SQL_ROWS 5000   /* rowids a call-site query lists */

typedef struct sqlbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sqlbuf;

static void put(sqlbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sqlbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !tg_grow((void **)&b->s, &b->cap, b->len + (size_t)n + 1, 1)) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static const char *finish(sqlbuf *b, tg_arena *arena)
{
    const char *out = b->oom || !b->s ? NULL : tg_arena_strdup(arena, b->s);
    free(b->s);
    return out;
}

static const char *table(const tg_model *m, tg_table_id id)
{
    return m->trace->table_name[id] ? m->trace->table_name[id] : tg_table_names[id];
}

/* The CUDA API table with each call once (model_sql.h), in the arena;
** NULL when memory runs out. */
static const char *api_calls(const tg_model *m, tg_arena *arena)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    tg_sql_put_api_calls(f, m->trace);
    const char *out = fclose(f) == 0 ? tg_arena_strdup(arena, text) : NULL;
    free(text);
    return out;
}

/* ---------------------------------------------------------------- host */

#define PID_OF(col) "((" col " >> 24) & 16777215)"
#define TID_OF(col) "(" col " & 16777215)"
#define INSIDE(alias) "min(" alias ".end, w.e) - max(" alias ".start, w.s)"

static const char *host_jq(tg_cause_cc *cc, const tg_cause *c)
{
    sqlbuf b = {0};
    /* a call by its base name, as the cause names it (tg_model_host_call) */
    char *def = NULL;
    size_t def_len = 0;
    FILE *f = open_memstream(&def, &def_len);
    if (!f) return NULL;
    tg_jq_put_base_name(f);
    if (fclose(f) != 0) {
        free(def);
        return NULL;
    }
    put(&b, "%s.traceEvents as $e | [", def);
    free(def);
    for (size_t w = 0; w < c->n_windows; w++) {
        const tg_cause_window *win = &c->windows[w];
        put(&b, "%s[%zu, %lld, %lld, [", w ? ", " : "", win->evidence, (long long)win->start, (long long)win->end);
        size_t k = 0;
        for (size_t i = 0; i < win->n_items; i++)
            for (size_t j = 0; j < win->items[i].n_rowids; j++)
                put(&b, "%s%lld", k++ ? "," : "", (long long)win->items[i].rowids[j]);
        put(&b, "]]");
    }
    put(&b, "] | map(. as [$w, $s, $t, $ix] | {window: $w, events: [$ix[] | . as $i | $e[$i] | "
            "{index: $i, name: (if IN(.cat; \"cuda_runtime\", \"cuda_driver\", \"Runtime\", \"Driver\") and "
            "(.name | type) == \"string\" then .name | tg_base else .name end), cat, tid, ts, dur, inside_ns: ((([((.ts + (.dur // 0)) * 1000), $t] | min) - "
            "([(.ts * 1000), $s] | max)) | round)}]})");
    return finish(&b, cc->arena);
}

const char *tg_cause_host_query(tg_cause_cc *cc, const tg_cause *c)
{
    const tg_model *m = cc->m;
    const tg_trace *t = m->trace;
    if (!c->n_windows) return NULL;
    if (tg_trace_query_lang(t) == TG_QUERY_JQ) return host_jq(cc, c);
    sqlbuf b = {0};
    put(&b, "WITH w(win, pid, s, e) AS (VALUES ");
    for (size_t w = 0; w < c->n_windows; w++)
        put(&b, "%s(%zu, %lld, %lld, %lld)", w ? ", " : "", c->windows[w].evidence, (long long)c->windows[w].pid,
            (long long)c->windows[w].start, (long long)c->windows[w].end);
    put(&b, ") ");
    const char *sep = "";
    if (t->table_name[TG_TABLE_OSRT]) {
        put(&b, "SELECT w.win, 'osrt' AS source, (SELECT value FROM StringIds WHERE id = o.nameId) AS name, "
                TID_OF("o.globalTid") " AS tid, count(*) AS count, sum(" INSIDE("o") ") AS time_ns "
                "FROM w JOIN %s o ON " PID_OF("o.globalTid") " = w.pid AND " INSIDE("o") " > 0 "
                "GROUP BY 1, 3, 4", table(m, TG_TABLE_OSRT));
        sep = " UNION ALL ";
    }
    const char *calls = t->table_name[TG_TABLE_RUNTIME] ? api_calls(m, cc->arena) : NULL;
    if (t->table_name[TG_TABLE_RUNTIME] && !calls) b.oom = true;
    /* calls by base name, as the cause names them (tg_model_host_call) */
    char *name = calls ? tg_sql_base_name("(SELECT value FROM StringIds WHERE id = a.nameId)") : NULL;
    if (calls && !name) b.oom = true;
    if (name) {
        put(&b, "%sSELECT w.win, 'cuda', %s AS name, "
                TID_OF("a.globalTid") " AS tid, count(*), sum(" INSIDE("a") ") "
                "FROM w JOIN %s a ON " PID_OF("a.globalTid") " = w.pid AND a.end - a.start >= %d AND "
                INSIDE("a") " > 0 GROUP BY 1, 3, 4", sep, name, calls, TG_HOST_CUDA_MIN_NS);
        sep = " UNION ALL ";
    }
    free(name);
    char *nvtx = t->table_name[TG_TABLE_NVTX] ? tg_sql_nvtx_name(t, "n.") : NULL;
    if (t->table_name[TG_TABLE_NVTX] && !nvtx) b.oom = true;
    if (nvtx) {
        put(&b, "%sSELECT w.win, 'nvtx', %s AS name, "
                TID_OF("n.globalTid") " AS tid, count(*), sum(" INSIDE("n") ") "
                "FROM w JOIN %s n ON " PID_OF("n.globalTid") " = w.pid AND n.end IS NOT NULL AND "
                "n.eventType NOT IN (33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99) AND " INSIDE("n") " > 0 "
                "GROUP BY 1, 3, 4", sep, nvtx, table(m, TG_TABLE_NVTX));
        sep = " UNION ALL ";
    }
    free(nvtx);
    if (!*sep) {
        free(b.s);
        return NULL;
    }
    put(&b, " ORDER BY 1, 6 DESC;");
    return finish(&b, cc->arena);
}

/* ---------------------------------------------------------------- call sites */

/* The callchainId behind row `alias` of the rule's source: its own (api),
** or its launching call's (memcpy, memset, kernel); exports that record a
** call twice keep it on one twin. */
static void put_chain(sqlbuf *b, const tg_model *m, tg_source_id src, const char *alias)
{
    const char *api = table(m, TG_TABLE_RUNTIME);
    if (src == TG_SRC_API)
        put(b, "coalesce(%s.callchainId, (SELECT t.callchainId FROM %s t WHERE t.correlationId = %s.correlationId "
               "AND t.globalTid = %s.globalTid AND t.callchainId IS NOT NULL LIMIT 1))", alias, api, alias, alias);
    else
        put(b, "(SELECT t.callchainId FROM %s t WHERE t.correlationId = %s.correlationId AND "
               PID_OF("t.globalTid") " = " PID_OF("%s.globalPid") " AND t.callchainId IS NOT NULL LIMIT 1)",
            api, alias, alias);
}

/* "the frame is in one of modules.def's libraries", for file name `file`. */
static void put_library_test(sqlbuf *b, const char *file)
{
    const char *sep = "";
    put(b, "(");
#define TG_MODULE(prefix, kind) \
    put(b, "%ssubstr(%s, 1, %zu) = '%s'", sep, file, sizeof prefix - 1, prefix), sep = " OR ";
#include "../model/modules.def"
#undef TG_MODULE
    put(b, ")");
}

/* Each cited row's call site derived from the export (model_host.c): its
** stack (callchainId through its launching call, plus the id offset
** tracegate read the table with), and in it the first frame, by depth,
** that is resolved, has a symbol, is no CUDA API wrapper (the last word
** outside <...> before '(' starts with cuda, __cuda, __device_stub or
** cu + capital: cuda_runtime.h's cudaMalloc<T>, a kernel's host stub) and
** whose module's file name starts with none of modules.def's prefixes;
** then the rows grouped by it. */
const char *tg_cause_sites_query(tg_cause_cc *cc, const tg_site_group *groups, size_t n, const tg_site_row *rows,
                                 size_t n_rows)
{
    const tg_model *m = cc->m;
    if (tg_trace_query_lang(m->trace) != TG_QUERY_SQL || !n || !n_rows) return NULL;
    tg_source_id src = cc->rule->source;
    const char *tbl = cc->res->evidence && cc->res->n_evidence && cc->res->evidence[0].table
                          ? cc->res->evidence[0].table
                          : table(m, (tg_table_id)tg_source_defs[src].table);
    (void)groups;
    sqlbuf b = {0};
    put(&b, "WITH r AS (SELECT c.rowid, c.end - c.start AS duration, ");
    put_chain(&b, m, src, "c");
    put(&b, " + %d /* CUDA_CALLCHAINS ids as tracegate matched them: docs/host.md */ AS chain FROM %s c "
            "WHERE c.rowid IN (", tg_model_stack_offset(m, TG_STACKS_CUDA), tbl);
    size_t listed = 0;
    for (size_t i = 0; i < n_rows && listed < TG_CAUSE_SQL_ROWS; i++, listed++)
        put(&b, "%s%lld", i ? ", " : "", (long long)rows[i].rowid);
    put(&b, ")), frame AS (SELECT f.id, f.stackDepth AS depth, s.value AS symbol, "
            "coalesce(p.value, '[Unknown]') AS path FROM %s f JOIN StringIds s ON s.id = f.symbol "
            "LEFT JOIN StringIds p ON p.id = f.module WHERE f.id IN (SELECT chain FROM r) "
            "AND coalesce(f.unresolved, 0) = 0 AND s.value != ''), ", table(m, TG_TABLE_CALLCHAINS));
    /* the function's name: a walk over each symbol's characters, tracking
    ** <...> nesting, to the start of its last word before '(' */
    put(&b, "sym(s, len) AS (SELECT DISTINCT symbol, CASE WHEN instr(symbol, '(') > 0 THEN instr(symbol, '(') - 1 "
            "ELSE length(symbol) END FROM frame), "
            "walk(s, len, i, depth, start) AS (SELECT s, len, 1, 0, 1 FROM sym UNION ALL SELECT s, len, i + 1, "
            "CASE WHEN substr(s, i, 1) = '<' THEN depth + 1 WHEN substr(s, i, 1) = '>' AND depth > 0 THEN depth - 1 "
            "ELSE depth END, CASE WHEN substr(s, i, 1) = ' ' AND depth = 0 THEN i + 1 ELSE start END FROM walk "
            "WHERE i <= len), "
            "fn(s, name) AS (SELECT s, substr(s, start) FROM walk WHERE i = len + 1), "
            "outside AS (SELECT f.id, f.depth, f.symbol, substr(f.path, length(rtrim(f.path, replace(f.path, '/', ''))) "
            "+ 1) AS module FROM frame f JOIN fn ON fn.s = f.symbol WHERE NOT (fn.name GLOB 'cuda*' OR fn.name GLOB "
            "'__cuda*' OR fn.name GLOB '__device_stub*' OR fn.name GLOB 'cu[A-Z]*')), "
            "site AS (SELECT o.id, o.symbol, o.module FROM outside o WHERE NOT ");
    put_library_test(&b, "o.module");
    put(&b, " AND o.depth = (SELECT min(x.depth) FROM outside x WHERE x.id = o.id AND NOT ");
    put_library_test(&b, "x.module");
    put(&b, ")) SELECT s.symbol AS call_site, s.module AS call_module, count(*) AS count, sum(r.duration) AS time_ns "
            "FROM r LEFT JOIN site s ON s.id = r.chain GROUP BY 1, 2 ORDER BY count DESC, call_site;");
    if (n_rows > TG_CAUSE_SQL_ROWS)
        put(&b, " -- lists the first %d of the %zu rows: counts past them are not reproduced", TG_CAUSE_SQL_ROWS,
            n_rows);
    return finish(&b, cc->arena);
}

/* ---------------------------------------------------------------- launch */

const char *tg_cause_launch_query(tg_cause_cc *cc, const tg_cause *c)
{
    const tg_model *m = cc->m;
    (void)c;
    if (tg_trace_query_lang(m->trace) != TG_QUERY_SQL || !m->trace->table_name[TG_TABLE_RUNTIME]) return NULL;
    const char *calls = api_calls(m, cc->arena);
    if (!calls) return NULL;
    sqlbuf b = {0};
    put(&b, "WITH steady(pid, s, e) AS (VALUES ");
    size_t n = 0;
    for (size_t i = 0; i < m->n_iterations; i++) {
        const tg_iteration *it = &m->iterations[i];
        if (!it->steady) continue;
        put(&b, "%s(%d, %lld, %lld)", n++ ? ", " : "", it->pid, (long long)it->start, (long long)it->end);
    }
    if (!n) put(&b, "(-1, 0, 0)");
    /* without iterations every kernel is steady (docs/iterations.md) */
    /* a call is short when its kernels together ran shorter than it (a
    ** graph launch against its graph: model_host.c tg_model_host_launch) */
    put(&b, ") SELECT name, count(*) AS kernels, sum(kernel_ns) AS kernel_ns, sum(launch_ns) AS launch_ns FROM "
            "(SELECT (SELECT value FROM StringIds WHERE id = k.demangledName) AS name, k.end - k.start AS kernel_ns, "
            "a.end - a.start AS launch_ns, sum(k.end - k.start) OVER (PARTITION BY a.correlationId, "
            PID_OF("a.globalTid") ") AS call_kernel_ns FROM %s k JOIN %s a ON "
            "a.correlationId = k.correlationId AND " PID_OF("a.globalTid") " = " PID_OF("k.globalPid") "%s) "
            "WHERE call_kernel_ns < launch_ns GROUP BY 1 ORDER BY kernels DESC, kernel_ns DESC;",
        table(m, TG_TABLE_KERNEL), calls,
        m->has_iterations ? " WHERE EXISTS (SELECT 1 FROM steady WHERE steady.pid = " PID_OF("a.globalTid")
                            " AND a.start >= steady.s AND a.start <= steady.e)" : "");
    return finish(&b, cc->arena);
}
