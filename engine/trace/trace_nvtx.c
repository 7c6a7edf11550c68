/*
** NVTX_EVENTS: ranges and marks, their names and their domains.
**
** A name is coalesce(StringIds via textId, text): registered strings land in
** textId, plain ones in text. Domains are not a table of their own: a row
** of eventType 75 (NvtxDomainCreate) defines one, its domainId naming the
** domain and its text holding the name; ranges refer to it by domainId
** (0 = default domain). Definition rows (domain, category, thread and
** CUDA-resource naming events) describe other rows and are not loaded;
** every other row is, with its eventType (59 push/pop, 60 start/end,
** 34 mark, ...) and a NULL end for marks.
**
** Domains are resolved after the single scan, per process first (domain
** ids are handed out per process), then by id alone. A domain whose
** definition the capture lacks (windowed exports) is named "domain N".
*/
#include "trace_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ENUM_NSYS_EVENT_TYPE ids of NVTX definition events. */
#define NVTX_DOMAIN_CREATE 75

static bool is_definition(int32_t event_type)
{
    switch (event_type) {
#define X(type) case type:
    TG_NVTX_DEFINITION_TYPES(X)
#undef X
        return true;
    default:
        return false;
    }
}

typedef struct domain_def {
    int32_t pid;
    int32_t id;
    int32_t name;
} domain_def;

static int cmp_def(const void *a, const void *b)
{
    const domain_def *x = a, *y = b;
    if (x->pid != y->pid) return (x->pid > y->pid) - (x->pid < y->pid);
    return (x->id > y->id) - (x->id < y->id);
}

static int32_t find_def(const domain_def *defs, size_t n, int32_t pid, int32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        domain_def key = {.pid = pid, .id = id};
        int c = cmp_def(&defs[mid], &key);
        if (c == 0) return defs[mid].name;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = 0; i < n; i++)      /* another process's definition */
        if (defs[i].id == id) return defs[i].name;
    return TG_NO_STR;
}

/* Replace the raw domain ids parked in row.domain by domain names. */
static bool resolve_domains(tg_loader *ld, domain_def *defs, size_t n_defs)
{
    tg_trace *t = ld->t;
    if (n_defs > 1) qsort(defs, n_defs, sizeof *defs, cmp_def);
    int32_t last_pid = -1, last_id = -1, last_name = TG_NO_STR;
    for (size_t i = 0; i < t->n_nvtx; i++) {
        tg_nvtx *r = &t->nvtx[i];
        if (r->domain <= 0) {
            r->domain = TG_NO_STR;      /* default domain */
            continue;
        }
        if (r->domain != last_id || r->pid != last_pid) {
            last_pid = r->pid;
            last_id = r->domain;
            last_name = find_def(defs, n_defs, r->pid, r->domain);
            if (last_name < 0) {
                char buf[32];
                int len = snprintf(buf, sizeof buf, "domain %d", (int)r->domain);
                last_name = tg_load_intern(ld, buf, (size_t)len);
                if (last_name < 0) return tg_load_oom(ld);
            }
        }
        r->domain = last_name;
    }
    return true;
}

enum { NC_START, NC_END, NC_TYPE, NC_TEXT, NC_TEXT_ID, NC_GTID, NC_DOMAIN, NC_N };

static const tg_colspec nvtx_cols[NC_N] = {
    [NC_START] = {"start", NULL, true},
    [NC_END] = {"end", NULL, true},
    [NC_TYPE] = {"eventType", NULL, true},
    [NC_TEXT] = {"text", NULL, false},
    [NC_TEXT_ID] = {"textId", NULL, false},
    [NC_GTID] = {"globalTid", NULL, false},
    [NC_DOMAIN] = {"domainId", NULL, false},
};

/* What the scan keeps besides the rows: the domain definitions. */
typedef struct nvtx_read {
    domain_def *defs;
    size_t n_defs, defs_cap, cap;
} nvtx_read;

/* The name of a row: textId's string, else text (the one C form of the
** rule; its SQL form is tg_sql_put_nvtx_name, engine/model/model_sql.h). */
static int32_t row_name(tg_loader *ld, const tg_row *st)
{
    int32_t name = tg_load_strid(ld, st, COL(NC_TEXT_ID));
    return name >= 0 ? name : tg_load_text(ld, st, COL(NC_TEXT));
}

/* A domain definition row (r: its decoded process and domain id). */
static bool domain_row(tg_loader *ld, const tg_row *st, nvtx_read *nr, const tg_nvtx *r)
{
    if (r->event_type != NVTX_DOMAIN_CREATE || r->domain <= 0) return true;
    domain_def d = {.pid = r->pid, .id = r->domain};
    d.name = row_name(ld, st);
    if (ld->failed) return false;
    return d.name < 0 || TG_PUSH(nr->defs, nr->n_defs, nr->defs_cap, d) || tg_load_oom(ld);
}

static bool nvtx_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    nvtx_read *nr = ctx;
    tg_nvtx r;
    r.event_type = tg_cell_i32(st, COL(NC_TYPE));
    int64_t gtid = tg_cell_i64(st, COL(NC_GTID));
    r.pid = tg_global_pid(gtid);
    r.tid = tg_global_tid(gtid);
    r.domain = tg_cell_i32(st, COL(NC_DOMAIN));  /* raw id until resolved */
    if (is_definition(r.event_type)) return domain_row(ld, st, nr, &r);
    if (!tg_load_times(&ld->stats[TG_TABLE_NVTX], st, &r.start, &r.end, true)) return true;
    r.rowid = tg_row_id(st);
    r.name = row_name(ld, st);
    r.duration = TG_NULL_I64;
    r.depth = -1;
    r.gpu_time = TG_NULL_I64;
    r.gpu_span = TG_NULL_I64;
    r.iteration = -1;
    if (ld->failed) return false;
    return TG_PUSH_ROWS(t->nvtx, t->n_nvtx, nr->cap, t->rows_mapped[TG_TABLE_NVTX], r) || tg_load_oom(ld);
}

bool tg_load_nvtx(tg_loader *ld)
{
    nvtx_read nr = {.defs = NULL};
    if (tg_load_rows(ld, ld->t->table_name[TG_TABLE_NVTX], nvtx_cols, NC_N, nvtx_row, &nr))
        resolve_domains(ld, nr.defs, nr.n_defs);
    free(nr.defs);
    return !ld->failed;
}
