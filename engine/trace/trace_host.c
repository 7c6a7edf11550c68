/*
** The host side of an export (docs/host.md): OS runtime calls (OSRT_API,
** `nsys profile -t osrt`), call stacks (CUDA_CALLCHAINS with
** `--cudabacktrace`, OSRT_CALLCHAINS), cuDNN and cuBLAS library calls
** (CUDNN_EVENTS, CUBLAS_EVENTS) and thread names (ThreadNames).
**
** None of them is read unless asked for: at open (tg_load_opts.host), when
** a rule reads their sources or fields, or afterwards (tg_trace_load_host),
** when a failing finding wants to name its cause. The export is then
** opened again read-only, its string table mapped once more, and only the
** tables asked for are read. A table the capture lacks reads as empty: the
** findings say so, and which nsys option records it.
**
** Robustness as in trace_load.c: a row whose times are unusable is skipped
** (and counted in the table's warning), other bad cells read as null.
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- OSRT */

enum { OC_START, OC_END, OC_GTID, OC_NAME, OC_RET, OC_NEST, OC_CHAIN, OC_N };

static const tg_colspec osrt_cols[OC_N] = {
    [OC_START] = {"start", NULL, true},
    [OC_END] = {"end", NULL, true},
    [OC_GTID] = {"globalTid", NULL, false},
    [OC_NAME] = {"nameId", NULL, false},
    [OC_RET] = {"returnValue", NULL, false},
    [OC_NEST] = {"nestingLevel", NULL, false},
    [OC_CHAIN] = {"callchainId", NULL, false},
};

static bool osrt_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_trace *t = ld->t;
    tg_osrt o;
    if (!tg_load_times(&ld->stats[TG_TABLE_OSRT], st, &o.start, &o.end, false)) return true;
    o.rowid = tg_row_id(st);
    int64_t gtid = tg_cell_i64(st, COL(OC_GTID));
    o.pid = tg_global_pid(gtid);
    o.tid = tg_global_tid(gtid);
    o.name = tg_load_strid(ld, st, COL(OC_NAME));
    o.return_value = tg_cell_i64(st, COL(OC_RET));
    int32_t nest = tg_cell_i32(st, COL(OC_NEST));
    o.nesting = (int8_t)(nest < 0 ? -1 : nest > 127 ? 127 : nest);
    o.callchain = tg_cell_i32(st, COL(OC_CHAIN));
    o.thread = TG_NO_STR;
    o.iteration = -1;
    o.steady = 0;
    if (ld->failed) return false;
    return TG_PUSH_ROWS(t->osrts, t->n_osrts, *(size_t *)cap, t->rows_mapped[TG_TABLE_OSRT], o) || tg_load_oom(ld);
}

static bool load_osrt(tg_loader *ld)
{
    size_t cap = 0;
    return tg_load_rows(ld, ld->t->table_name[TG_TABLE_OSRT], osrt_cols, OC_N, osrt_row, &cap);
}

/* ---------------------------------------------------------------- libraries */

enum { LC_START, LC_END, LC_GTID, LC_NAME, LC_N };

static const tg_colspec libcall_cols[LC_N] = {
    [LC_START] = {"start", NULL, true},
    [LC_END] = {"end", NULL, true},
    [LC_GTID] = {"globalTid", NULL, false},
    [LC_NAME] = {"nameId", NULL, false},
};

/* The library (TG_LIB_*) a table read is of, and its table. */
typedef struct libcall_read {
    int lib;
    tg_table_id id;
    size_t cap;
} libcall_read;

static bool libcall_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    libcall_read *r = ctx;
    tg_libcall c;
    if (!tg_load_times(&ld->stats[r->id], st, &c.start, &c.end, false)) return true;
    c.rowid = tg_row_id(st);
    int64_t gtid = tg_cell_i64(st, COL(LC_GTID));
    c.pid = tg_global_pid(gtid);
    c.tid = tg_global_tid(gtid);
    c.name = tg_load_strid(ld, st, COL(LC_NAME));
    c.kernel_time = 0;
    c.kernels = 0;
    c.thread = TG_NO_STR;
    c.iteration = -1;
    c.steady = 0;
    if (ld->failed) return false;
    return TG_PUSH_ROWS(t->libcalls[r->lib], t->n_libcalls[r->lib], r->cap, t->rows_mapped[r->id], c) ||
           tg_load_oom(ld);
}

static bool load_libcalls(tg_loader *ld, int lib)
{
    libcall_read r = {.lib = lib, .id = lib == TG_LIB_CUDNN ? TG_TABLE_CUDNN : TG_TABLE_CUBLAS, .cap = 0};
    return tg_load_rows(ld, ld->t->table_name[r.id], libcall_cols, LC_N, libcall_row, &r);
}

/* ---------------------------------------------------------------- stacks */

enum { FC_ID, FC_DEPTH, FC_SYMBOL, FC_MODULE, FC_UNRESOLVED, FC_N };

static const tg_colspec frame_cols[FC_N] = {
    [FC_ID] = {"id", NULL, true},
    [FC_DEPTH] = {"stackDepth", NULL, true},
    [FC_SYMBOL] = {"symbol", NULL, false},
    [FC_MODULE] = {"module", NULL, false},
    [FC_UNRESOLVED] = {"unresolved", NULL, false},
};

static int cmp_frame(const void *a, const void *b)
{
    const tg_frame *x = a, *y = b;
    if (x->chain != y->chain) return (x->chain > y->chain) - (x->chain < y->chain);
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* The stacks (TG_STACKS_*) a table read is of, its table, and whether
** its rows came in (chain, depth) order. */
typedef struct frame_read {
    int which;
    tg_table_id id;
    size_t cap;
    bool sorted;
} frame_read;

static bool frame_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    frame_read *r = ctx;
    tg_frame f = {
        .chain = tg_cell_i32(st, COL(FC_ID)), .depth = tg_cell_i32(st, COL(FC_DEPTH)),
        .symbol = tg_load_strid(ld, st, COL(FC_SYMBOL)), .module = tg_load_strid(ld, st, COL(FC_MODULE)),
    };
    int64_t unresolved = tg_cell_i64(st, COL(FC_UNRESOLVED));
    f.unresolved = unresolved != TG_NULL_I64 && unresolved != 0;
    if (ld->failed) return false;
    if (f.chain < 0 || f.depth < 0) {
        ld->stats[r->id].skipped++;
        return true;
    }
    size_t n = t->n_frames[r->which];
    if (n && cmp_frame(&t->frames[r->which][n - 1], &f) > 0) r->sorted = false;
    return TG_PUSH(t->frames[r->which], t->n_frames[r->which], r->cap, f) || tg_load_oom(ld);
}

static bool load_frames(tg_loader *ld, int which)
{
    tg_trace *t = ld->t;
    frame_read r = {.which = which, .cap = 0, .sorted = true,
                    .id = which == TG_STACKS_CUDA ? TG_TABLE_CALLCHAINS : TG_TABLE_OSRT_CALLCHAINS};
    /* the columns are not times: nothing here reads a row's first two
    ** cells as start and end */
    if (!tg_load_rows(ld, t->table_name[r.id], frame_cols, FC_N, frame_row, &r)) return false;
    if (!r.sorted) qsort(t->frames[which], t->n_frames[which], sizeof(tg_frame), cmp_frame);
    return true;
}

/* ---------------------------------------------------------------- threads */

static int cmp_thread(const void *a, const void *b)
{
    const tg_thread_name *x = a, *y = b;
    if (x->pid != y->pid) return (x->pid > y->pid) - (x->pid < y->pid);
    return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool thread_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_trace *t = ld->t;
    int64_t gtid = tg_cell_i64(st, COL(0));
    tg_thread_name n = {.pid = tg_global_pid(gtid), .tid = tg_global_tid(gtid),
                        .name = tg_load_strid(ld, st, COL(1))};
    if (ld->failed) return false;
    if (n.pid < 0 || n.tid < 0 || n.name < 0) return true;
    return TG_PUSH(t->threads, t->n_threads, *(size_t *)cap, n) || tg_load_oom(ld);
}

bool tg_load_threads(tg_loader *ld)
{
    tg_trace *t = ld->t;
    const char *table = tg_load_find_table(ld, "ThreadNames");
    if (!table || t->threads) return true;
    static const tg_colspec cols[] = {{"globalTid", NULL, false}, {"nameId", NULL, false}};
    size_t cap = 0;
    if (!tg_load_rows(ld, table, cols, 2, thread_row, &cap)) return false;
    if (t->n_threads > 1) {
        /* stable by name order of the table: the first name of a thread wins */
        qsort(t->threads, t->n_threads, sizeof *t->threads, cmp_thread);
        size_t w = 0;
        for (size_t i = 0; i < t->n_threads; i++)
            if (!w || cmp_thread(&t->threads[w - 1], &t->threads[i]) != 0) t->threads[w++] = t->threads[i];
        t->n_threads = w;
    }
    return true;
}

int32_t tg_trace_thread_name(const tg_trace *t, int32_t pid, int32_t tid)
{
    size_t lo = 0, hi = t->n_threads;
    tg_thread_name key = {.pid = pid, .tid = tid};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_thread(&t->threads[mid], &key);
        if (c == 0) return t->threads[mid].name;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return TG_NO_STR;
}

/* ---------------------------------------------------------------- driver */

static unsigned host_tables(unsigned what)
{
    unsigned tables = 0;
    if (what & TG_HOST_OSRT) tables |= 1u << TG_TABLE_OSRT;
    if (what & TG_HOST_STACKS) tables |= 1u << TG_TABLE_CALLCHAINS | 1u << TG_TABLE_OSRT_CALLCHAINS;
    if (what & TG_HOST_LIBRARIES) tables |= 1u << TG_TABLE_CUDNN | 1u << TG_TABLE_CUBLAS;
    return tables;
}

#define SORT_ROWS(arr, n, type, table) \
    tg_sort_rows_by_i64((void **)&(arr), &t->rows_mapped[table], (n), sizeof(type), offsetof(type, start))

bool tg_load_host(tg_loader *ld, unsigned what)
{
    tg_trace *t = ld->t;
    what &= ~t->host_loaded;
    bool ok = tg_load_threads(ld);
    if (ok && (what & TG_HOST_OSRT)) ok = load_osrt(ld) && SORT_ROWS(t->osrts, t->n_osrts, tg_osrt, TG_TABLE_OSRT);
    if (ok && (what & TG_HOST_STACKS)) ok = load_frames(ld, TG_STACKS_CUDA) && load_frames(ld, TG_STACKS_OSRT);
    for (int lib = 0; ok && (what & TG_HOST_LIBRARIES) && lib < TG_LIB_COUNT; lib++) {
        tg_table_id id = lib == TG_LIB_CUDNN ? TG_TABLE_CUDNN : TG_TABLE_CUBLAS;
        ok = load_libcalls(ld, lib) && SORT_ROWS(t->libcalls[lib], t->n_libcalls[lib], tg_libcall, id);
    }
    if (!ok) {
        if (!ld->failed) tg_load_fail(ld, TG_EINTERNAL, "out of memory");
        return false;
    }
    unsigned tables = host_tables(what);
    for (int i = 0; i < TG_TABLE_COUNT; i++)
        if (tables & (1u << i)) tg_load_warn_rows(ld, i, "start, end or id");
    t->host_loaded |= what;
    return true;
}

/* Free what a failed read of `what` left behind. */
static void drop_host(tg_trace *t, unsigned what)
{
    if (what & TG_HOST_OSRT) {
        tg_rows_free(t->osrts, t->rows_mapped[TG_TABLE_OSRT]);
        t->osrts = NULL;
        t->n_osrts = 0;
        t->rows_mapped[TG_TABLE_OSRT] = 0;
    }
    for (int i = 0; (what & TG_HOST_STACKS) && i < TG_STACKS_COUNT; i++) {
        free(t->frames[i]);
        t->frames[i] = NULL;
        t->n_frames[i] = 0;
    }
    for (int lib = 0; (what & TG_HOST_LIBRARIES) && lib < TG_LIB_COUNT; lib++) {
        tg_table_id id = lib == TG_LIB_CUDNN ? TG_TABLE_CUDNN : TG_TABLE_CUBLAS;
        tg_rows_free(t->libcalls[lib], t->rows_mapped[id]);
        t->libcalls[lib] = NULL;
        t->n_libcalls[lib] = 0;
        t->rows_mapped[id] = 0;
    }
}

bool tg_trace_load_host(tg_trace *t, unsigned what, tg_diag *diag)
{
    if (what & t->host_failed) {
        tg_diag_error(diag, TG_ETRACE, "%s: its host-side tables could not be read", t->path ? t->path : "trace");
        return false;
    }
    what &= TG_HOST_ALL & ~t->host_loaded;
    if (!what) return true;
    bool present = false;
    unsigned tables = host_tables(what);
    for (int i = 0; i < TG_TABLE_COUNT; i++) present |= (tables & (1u << i)) && t->table_name[i];
    if (t->format != TG_FORMAT_NSYS || !present || !t->path) {
        t->host_loaded |= what;   /* nothing to read: the tables are absent */
        return true;
    }
    /* the same guards as the first open (trace_guard.c: defensive
    ** settings, value cap, step budget) */
    tg_loader ld = {.t = t, .path = t->path, .diag = diag, .sqlite_reads = t->sqlite_reads};
    bool ok = tg_load_open(&ld, 0) && tg_load_strings(&ld) && tg_load_host(&ld, what);
    sqlite3_close(ld.db);
    tg_idmap_free(&ld.strings);
    tg_load_free_tables(&ld);
    if (!ok) {
        drop_host(t, what);
        t->host_failed |= what;
    }
    return ok;
}
