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

/* ---------------------------------------------------------------- ops */

enum { TG_OPK_KERNEL, TG_OPK_MEMCPY, TG_OPK_MEMSET, TG_OPK_COUNT };

/* One GPU operation as the interval passes see it. */
typedef struct tg_op {
    int kind;                  /* TG_OPK_* */
    size_t index;              /* row index in its table */
    int64_t rowid, start, end;
    int32_t device, pid;
    int64_t api;               /* launching call, -1 */
} tg_op;

/* Table id (tg_table_id) of an op kind. */
int tg_model_op_table(int kind);
size_t tg_model_op_count(const tg_trace *t, int kind);
/* Fill *op with row `index` of table `kind`. */
void tg_model_op_get(const tg_trace *t, int kind, size_t index, tg_op *op);

typedef struct tg_op_stream {
    const tg_trace *t;
    size_t pos[TG_OPK_COUNT];
    size_t *order[TG_OPK_COUNT];   /* NULL when the table is sorted by start */
    tg_op head[TG_OPK_COUNT];
    bool has_head[TG_OPK_COUNT];
} tg_op_stream;

/* Visit every op in (start, kind, index) order. A table that is not sorted
** by start gets an index array sorted once. Returns false on OOM. */
bool tg_model_ops_open(tg_op_stream *s, const tg_trace *t);
bool tg_model_ops_next(tg_op_stream *s, tg_op *op);
void tg_model_ops_close(tg_op_stream *s);

/* ---------------------------------------------------------------- id map */

/* Open-addressing map from int64 keys to dense ids 0, 1, 2, ... */
typedef struct tg_model_idmap {
    int64_t *keys;
    int32_t *ids;              /* -1 = empty slot */
    size_t cap, n;
} tg_model_idmap;

bool tg_model_idmap_init(tg_model_idmap *m, size_t expected);
void tg_model_idmap_free(tg_model_idmap *m);
/* Dense id of key, inserting it when absent; -1 on OOM. */
int32_t tg_model_idmap_put(tg_model_idmap *m, int64_t key);
/* Dense id of key or -1. */
int32_t tg_model_idmap_get(const tg_model_idmap *m, int64_t key);

static inline int64_t tg_key2(int32_t a, int32_t b)
{
    return (int64_t)(((uint64_t)(uint32_t)a << 32) | (uint32_t)b);
}

/* ---------------------------------------------------------------- model */

/* Per-process slice of m->iterations (sorted by pid, start). */
typedef struct tg_pid_slice {
    int32_t pid;
    size_t first, count;
    int64_t first_steady_start;    /* start of its first steady iteration, or null */
} tg_pid_slice;

/* The model with the private state its passes share; tg_model_build hands
** out &priv->pub. */
typedef struct tg_model_priv {
    tg_model pub;
    tg_pid_slice *slices; size_t n_slices;
    int64_t *max_end;              /* running max of iteration end within a slice */
} tg_model_priv;

static inline tg_model_priv *tg_model_priv_of(tg_model *m) { return (tg_model_priv *)(void *)m; }
static inline const tg_model_priv *tg_model_cpriv_of(const tg_model *m)
{
    return (const tg_model_priv *)(const void *)m;
}

/* ---------------------------------------------------------------- passes */

/* Iteration lookup: index into m->iterations of the iteration of process
** pid whose host range contains t (the latest-starting one), or -1. */
int64_t tg_model_find_iteration(const tg_model *m, int32_t pid, int64_t t);

/* Start of the first steady iteration of process pid; the first steady
** start of any process when pid has none; null without iterations. */
int64_t tg_model_first_steady_start(const tg_model *m, int32_t pid);

/* model_join.c: api/api_name/tid/launch_end/queue of ops, dup_of of calls
** (duplicates stop being blocking). False on OOM. */
bool tg_model_join_launches(tg_trace *t);

/* model_iter.c: build m->iterations from NVTX ranges, attribute ops and API
** calls to them, fill .iteration/.steady of rows, periods, the steady window. */
bool tg_model_build_iterations(tg_model *m, const tg_model_params *p, tg_diag *diag);
void tg_model_free_iterations(tg_model *m);

/* model_nvtx.c: NVTX depth, gpu_time, gpu_span; innermost range at launch. */
bool tg_model_build_nvtx(tg_model *m);

/* model_device.c: gap rows and device rows. */
bool tg_model_build_devices(tg_model *m, const tg_model_params *p);

/* Names of PROFILER_OVERHEAD rows that count as busy device time. */
bool tg_model_is_busy_overhead(const char *name);

#endif
