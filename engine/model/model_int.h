/*
** Internals shared by the files of engine/model: the stream that visits the
** GPU operations (kernels, copies, memsets) of a trace in start order, a
** small id map (int64 key -> dense index) used to number devices, processes
** and threads, and the passes tg_model_build runs one after the other.
**
** Nothing here allocates per row: every pass works on flat arrays sized
** once from the row counts, and the op stream is a k-way merge of the trace
** tables, which the trace layer keeps sorted by start.
*/
#ifndef TG_MODEL_INT_H
#define TG_MODEL_INT_H

#include "model.h"
#include "../common/idmap.h"


/* ---------------------------------------------------------------- ops */

typedef enum tg_op_kind { TG_OPK_KERNEL, TG_OPK_MEMCPY, TG_OPK_MEMSET, TG_OPK_COUNT } tg_op_kind;

/* One GPU operation as the interval passes see it. */
typedef struct tg_op {
    tg_op_kind kind;
    size_t index;              /* row index in its table */
    int64_t rowid, start, end;
    int32_t device, pid;
} tg_op;

/* Table id (tg_table_id) of an op kind. */
int tg_model_op_table(tg_op_kind kind);
size_t tg_model_op_count(const tg_model *m, tg_op_kind kind);
/* Fill *op with row `index` of table `kind`. */
void tg_model_op_get(const tg_model *m, tg_op_kind kind, size_t index, tg_op *op);

typedef struct tg_op_stream {
    const tg_model *m;
    size_t pos[TG_OPK_COUNT];
    size_t *order[TG_OPK_COUNT];   /* NULL when the table is sorted by start */
    tg_op head[TG_OPK_COUNT];
    bool has_head[TG_OPK_COUNT];
} tg_op_stream;

/* Visit every op in (start, kind, index) order. A table that is not sorted
** by start gets an index array sorted once. Returns false on OOM. */
bool tg_model_ops_open(tg_op_stream *s, const tg_model *m);
bool tg_model_ops_next(tg_op_stream *s, tg_op *op);
void tg_model_ops_close(tg_op_stream *s);


/* ---------------------------------------------------------------- model */

/* Per-process slice of m->iterations (sorted by pid, start). */
typedef struct tg_pid_slice {
    int32_t pid;
    size_t first, count;
    int64_t first_steady_start;    /* start of its first steady iteration, or null */
} tg_pid_slice;

/* The model with the private state its passes share; tg_model_build hands
** out &priv->pub. */
/* Per raw name id: what its base name says (model.c). */
enum {
    TG_NAME_DRIVER = 1,        /* cu* but not cuda*: driver API */
    TG_NAME_BLOCKING = 2,      /* host-blocking synchronize call */
    TG_NAME_SYNC_MEMOP = 4,    /* cudaMemcpy* / cuMemcpy* / cudaMemset* / cuMemset* without Async */
    TG_NAME_ASYNC = 8,         /* contains "Async" */
    TG_NAME_KNOWN = 16,        /* cache slot filled */
    TG_NAME_OPS_KERNEL = 32,   /* launches kernels (TG_OP_CALL_PREFIXES) */
    TG_NAME_OPS_MEMCPY = 64,   /* makes copies */
    TG_NAME_OPS_MEMSET = 128   /* makes memsets */
};

typedef struct tg_name_cache {
    int32_t n;                 /* ids covered; grows with the pool */
    int32_t *base;             /* raw name id -> base name id */
    uint8_t *flags;            /* raw name id -> TG_NAME_* */
    int8_t *nccl;              /* kernel name id -> contains "nccl" (-1 unknown) */
    int32_t *family;           /* kernel name id -> its family's id (-1 unknown) */
} tg_name_cache;

typedef struct tg_nvtx_ctx tg_nvtx_ctx;
typedef struct tg_host_ctx tg_host_ctx;

/* The model with the private state its passes share; tg_model_build hands
** out &priv->pub. */
typedef struct tg_model_priv {
    tg_model pub;
    tg_pid_slice *slices; size_t n_slices;
    int64_t *max_end;              /* running max of iteration end within a slice */
    /* The kernels as every pass reads them (tg_model_ks): the trace's
    ** tg_kspan array, or the tg_kspan head of each of its tg_kernel rows. */
    char *ks;
    size_t ks_stride;
    tg_name_cache names;
    int64_t *gpu_first;            /* per iteration: earliest start of its GPU work */
    tg_nvtx_ctx *nvtx;             /* launches collected for NVTX attribution, or NULL */
    tg_host_ctx *host;             /* the host side (model_host.c) */
    /* facts counted while the calls go by (a streamed table keeps few rows) */
    int64_t api_calls, blocking_calls, blocked_time;
    int64_t op_calls[TG_TABLE_COUNT];  /* tg_model.op_calls, while they go by */
    /* coverage (tg_model.coverage), while the calls go by: per op table the
    ** launch calls with a correlation id, and those whose id has no op;
    ** the calls' window */
    int64_t launch_calls[TG_TABLE_COUNT], launch_unmatched[TG_TABLE_COUNT];
    int64_t launch_pending[TG_TABLE_COUNT];   /* not yet run at the capture's end (model_join.c) */
    int64_t api_first, api_last;
    int64_t unmatched_first, unmatched_last;  /* starts of the first and last launch without an op */
} tg_model_priv;

static inline tg_model_priv *tg_model_priv_of(tg_model *m) { return (tg_model_priv *)(void *)m; }

/* Kernel i as the passes read it. */
static inline tg_kspan *tg_model_ks(const tg_model_priv *p, size_t i)
{
    return (tg_kspan *)(void *)(p->ks + i * p->ks_stride);
}
static inline const tg_model_priv *tg_model_cpriv_of(const tg_model *m)
{
    return (const tg_model_priv *)(const void *)m;
}

/* ---------------------------------------------------------------- passes */

/* Start of the first steady iteration of process pid; the first steady
** start of any process when pid has none; null without iterations. */
int64_t tg_model_first_steady_start(const tg_model *m, int32_t pid);

/* model.c: base name and flags of raw API name id (grows the cache with the
** pool); false on OOM. The name's flags, 0 when unknown. */
bool tg_model_resolve_name(tg_model *m, int32_t id);
uint8_t tg_model_name_flags(const tg_model *m, int32_t id);
/* Fill the DERIVED name fields of a call (base_name, driver, blocking). */
bool tg_model_derive_call(tg_model *m, tg_api *a);

/* model_join.c: calls recorded twice by old exports (dup_of; the outer copy
** stops being blocking), on a trace whose API table is loaded. False on OOM. */
bool tg_model_mark_duplicates(tg_trace *t);
/* Of two rows of one call (same process, correlation id and base name),
** whether a is the call itself, the inner row: it starts later, or at the
** same time with the larger rowid. The one rule; tg_sql_put_api_calls
** (model_sql.h) is its SQL form. */
bool tg_model_twin_inner(const tg_api *a, const tg_api *b);
/* Drop the outer twins marked (dup_of >= 0) from the loaded table, so that
** each call is one row for every reader after the launch pass; counted in
** t->n_api_twins; the ops' launching call indices follow. False on OOM. */
bool tg_model_drop_twins(tg_trace *t);
/* The launch join and everything that follows a call: every call of the
** trace (loaded rows, or the deferred table streamed through
** params->keep_api) is matched to the kernels, copies and memsets it
** launched (same process and correlation id) and attributed to its
** iteration; facts are counted. Returns 1 done, 0 OOM (or a failed read,
** in diag), -1 when a streamed table turned out to record calls twice:
** the caller loads it whole and runs again. */
int tg_model_launch_calls(tg_model *m, const tg_model_params *p, tg_diag *diag);

/* model_iter.c: compile an iteration pattern (tg_regex_free it), or NULL
** with one TG_EUSAGE error. */
tg_regex *tg_model_compile_pattern(const char *pattern, tg_diag *diag);

/* model_iter.c: build m->iterations from NVTX ranges (numbered, warmup,
** slices) and the iteration of every NVTX row; the calls and ops are
** attributed by the launch pass, then tg_model_finish_iterations sets
** gpu_span, periods and the steady window. */
bool tg_model_build_iterations(tg_model *m, const tg_model_params *p, tg_diag *diag);
void tg_model_reset_attribution(tg_model *m);
bool tg_model_finish_iterations(tg_model *m);
void tg_model_free_iterations(tg_model *m);

/* Iteration lookups for a stream of (pid, time): a cursor per process. */
typedef struct tg_iter_finder {
    const tg_model *m;
    size_t *at;                    /* per slice */
    int32_t last_pid;
    int64_t last_slice;            /* of last_pid; -2 = none yet */
} tg_iter_finder;

bool tg_model_finder_init(tg_iter_finder *f, const tg_model *m);
void tg_model_finder_free(tg_iter_finder *f);
/* Index into m->iterations of the iteration of process pid whose host
** range contains t (the latest-starting one), or -1. */
int64_t tg_model_finder_find(tg_iter_finder *f, int32_t pid, int64_t t);
/* The iteration numbered `index` in process pid, or NULL. */
const tg_iteration *tg_model_iteration_at(const tg_model *m, int32_t pid, int32_t index);
/* .iteration and .steady of a row in iteration it (-1: none). */
void tg_model_mark_row(const tg_model *m, int64_t it, int32_t *iteration, int8_t *steady);
/* One GPU op [start, end) launched in iteration it (>= 0). */
void tg_model_attribute_op(tg_model *m, int64_t it, int64_t start, int64_t end, bool kernel);

/* model_nvtx.c: NVTX depth, gpu_time, gpu_span; innermost range at launch.
** begin groups the ranges by thread, the launch pass reports every op
** launched (tg_model_nvtx_launch), end computes; abort drops it all. */
bool tg_model_nvtx_begin(tg_model *m);
bool tg_model_nvtx_launch(tg_model *m, const tg_api *call, tg_op_kind kind, size_t row, int64_t start,
                          int64_t end);
bool tg_model_nvtx_end(tg_model *m);
void tg_model_nvtx_reset(tg_model *m);
void tg_model_nvtx_free(tg_model *m);

/* model_host.c: the host side (docs/host.md). begin before the launch
** pass, reset when it reruns, end after it; the launch pass shows every
** call (host_call, after its iteration is known) and every kernel a call
** launched (host_launch). */
typedef struct tg_host_call {
    int64_t rowid, start, end;
    int32_t pid, tid, name, callchain;   /* name: the base name (model.h) */
} tg_host_call;

bool tg_model_host_begin(tg_model *m);
void tg_model_host_reset(tg_model *m);
void tg_model_host_call(tg_model *m, const tg_api *a);
/* The kernels one call launched: one for most calls, a graph's for a
** graph launch (model_join.c). */
typedef struct tg_launch_group {
    int32_t kernels;
    int64_t kernel_time;       /* their durations, summed */
} tg_launch_group;
void tg_model_host_launch(tg_model *m, const tg_api *a, int64_t it, const tg_kspan *k, const tg_launch_group *g);
bool tg_model_host_end(tg_model *m);
void tg_model_host_free(tg_model *m);
/* CUDA calls of TG_HOST_CUDA_MIN_NS or more, by start (after end). */
const tg_host_call *tg_model_host_calls(const tg_model *m, size_t *n);

/* model_device.c: gap rows and device rows. */
bool tg_model_build_devices(tg_model *m, const tg_model_params *p);

/* Names of PROFILER_OVERHEAD rows that count as busy device time. */
bool tg_model_is_busy_overhead(const char *name);

#endif
