/*
** One loader per table of the export: each states the columns it needs and
** the decode of one row; tg_load_rows (trace_int.h) prepares the single
** SELECT (trace_cols.c resolves the names) and steps through the table
** once, and the decode appends typed rows to the trace's arrays, which grow
** geometrically (no allocation per row). NVTX lives in trace_nvtx.c, the
** API table in trace_api.c. Kernel and copy loaders note the devices their
** rows name as they go (tg_load_note_device), for the GPUs no table
** describes.
**
** Robustness: a cell of the wrong type never crashes a loader. A row whose
** start or end is missing, not a number or out of range is skipped; an end before its
** start is clamped to the start; other fields read as null. The counts go
** into one warning per table (trace.c). DERIVED fields are set to their
** null values here and filled later by engine/model.
*/
#include "trace_kineto.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- strings */

static bool string_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    (void)ctx;
    int64_t id;
    if (!tg_cell_int(st, COL(0), &id)) return true;
    int32_t s = tg_load_text(ld, st, COL(1));
    if (ld->failed) return false;
    return s < 0 || tg_idmap_put(&ld->strings, id, s) || tg_load_oom(ld);
}

bool tg_load_strings(tg_loader *ld)
{
    static const tg_colspec cols[] = {{"id", NULL, true}, {"value", NULL, true}};
    return tg_load_rows(ld, ld->t->table_name[TG_TABLE_STRINGS], cols, 2, string_row, NULL);
}

/* ---------------------------------------------------------------- kernels */

enum {
    KC_START, KC_END, KC_DEVICE, KC_CORR, KC_GPID, KC_DEMANGLED, KC_SHORT,
    KC_LEAN_N,                 /* the columns of a tg_kspan end here */
    KC_CONTEXT = KC_LEAN_N, KC_STREAM, KC_GRID_X, KC_GRID_Y, KC_GRID_Z, KC_BLOCK_X, KC_BLOCK_Y,
    KC_BLOCK_Z, KC_REGS, KC_SSMEM, KC_DSMEM, KC_N
};

static const tg_colspec kernel_cols[KC_N] = {
    [KC_START] = {"start", NULL, true},
    [KC_END] = {"end", NULL, true},
    [KC_DEVICE] = {"deviceId", NULL, false},
    [KC_CONTEXT] = {"contextId", NULL, false},
    [KC_STREAM] = {"streamId", NULL, false},
    [KC_CORR] = {"correlationId", NULL, false},
    [KC_GPID] = {"globalPid", NULL, false},
    [KC_DEMANGLED] = {"demangledName", NULL, false},
    [KC_SHORT] = {"shortName", NULL, false},
    [KC_GRID_X] = {"gridX", NULL, false},
    [KC_GRID_Y] = {"gridY", NULL, false},
    [KC_GRID_Z] = {"gridZ", NULL, false},
    [KC_BLOCK_X] = {"blockX", NULL, false},
    [KC_BLOCK_Y] = {"blockY", NULL, false},
    [KC_BLOCK_Z] = {"blockZ", NULL, false},
    [KC_REGS] = {"registersPerThread", NULL, false},
    [KC_SSMEM] = {"staticSharedMemory", NULL, false},
    [KC_DSMEM] = {"dynamicSharedMemory", NULL, false},
};

/* A kernel row: a tg_kspan, or (ld->kernel_rows) a whole tg_kernel; ctx
** is the capacity of the array. */
static bool kernel_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    tg_trace *t = ld->t;
    size_t *cap = ctx;
    int64_t start, end;
    if (!tg_load_times(&ld->stats[TG_TABLE_KERNEL], st, &start, &end, false)) return true;
    int32_t short_name = tg_load_strid(ld, st, COL(KC_SHORT));
    int32_t name = tg_load_strid(ld, st, COL(KC_DEMANGLED));
    if (name < 0) name = short_name;
    bool pushed;
    if (!ld->kernel_rows) {
        tg_kspan k = {
            .rowid = tg_row_id(st), .start = start, .end = end,
            .correlation = tg_cell_i64(st, COL(KC_CORR)), .queue = TG_NULL_I64,
            .pid = tg_global_pid(tg_cell_i64(st, COL(KC_GPID))),
            .device = tg_cell_i32(st, COL(KC_DEVICE)), .name = name,
        };
        if (ld->failed || !tg_load_note_device(ld, k.device)) return false;
        pushed = TG_PUSH_ROWS(t->kspans, t->n_kernels, *cap, t->rows_mapped[TG_TABLE_KERNEL], k);
    } else {
        tg_kernel k = {
            .rowid = tg_row_id(st), .start = start, .end = end,
            .correlation = tg_cell_i64(st, COL(KC_CORR)),
            .queue = TG_NULL_I64, .launch_end = TG_NULL_I64,
            .pid = tg_global_pid(tg_cell_i64(st, COL(KC_GPID))),
            .device = tg_cell_i32(st, COL(KC_DEVICE)),
            .context = tg_cell_i32(st, COL(KC_CONTEXT)),
            .stream = tg_cell_i32(st, COL(KC_STREAM)),
            .name = name, .short_name = short_name,
            .grid_x = tg_cell_i32(st, COL(KC_GRID_X)),
            .grid_y = tg_cell_i32(st, COL(KC_GRID_Y)),
            .grid_z = tg_cell_i32(st, COL(KC_GRID_Z)),
            .block_x = tg_cell_i32(st, COL(KC_BLOCK_X)),
            .block_y = tg_cell_i32(st, COL(KC_BLOCK_Y)),
            .block_z = tg_cell_i32(st, COL(KC_BLOCK_Z)),
            .registers = tg_cell_i32(st, COL(KC_REGS)),
            .static_smem = tg_cell_i32(st, COL(KC_SSMEM)),
            .dynamic_smem = tg_cell_i32(st, COL(KC_DSMEM)),
            .api = -1, .api_name = TG_NO_STR, .tid = -1, .nvtx = TG_NO_STR, .iteration = -1,
            .callchain = -1,
        };
        if (ld->failed || !tg_load_note_device(ld, k.span.device)) return false;
        pushed = TG_PUSH_ROWS(t->kernels, t->n_kernels, *cap, t->rows_mapped[TG_TABLE_KERNEL], k);
    }
    return pushed || tg_load_oom(ld);
}

bool tg_load_kernels(tg_loader *ld)
{
    size_t cap = 0;
    /* without kernel rows, only the columns of a tg_kspan are read */
    return tg_load_rows(ld, ld->t->table_name[TG_TABLE_KERNEL], kernel_cols, ld->kernel_rows ? KC_N : KC_LEAN_N,
                        kernel_row, &cap);
}

/* ---------------------------------------------------------------- memops */

enum {
    MC_START, MC_END, MC_DEVICE, MC_CONTEXT, MC_STREAM, MC_CORR, MC_GPID, MC_BYTES,
    MC_COPY_KIND, MC_SRC_KIND, MC_DST_KIND, MC_SRC_DEV, MC_DST_DEV, MC_VALUE, MC_MEM_KIND, MC_N
};

/* Copies and memsets share one column list; the columns one table lacks
** read as NULL (memKind on MEMCPY, copyKind on MEMSET, ...). */
static const tg_colspec memop_cols[MC_N] = {
    [MC_START] = {"start", NULL, true},
    [MC_END] = {"end", NULL, true},
    [MC_DEVICE] = {"deviceId", NULL, false},
    [MC_CONTEXT] = {"contextId", NULL, false},
    [MC_STREAM] = {"streamId", NULL, false},
    [MC_CORR] = {"correlationId", NULL, false},
    [MC_GPID] = {"globalPid", NULL, false},
    [MC_BYTES] = {"bytes", NULL, false},
    [MC_COPY_KIND] = {"copyKind", NULL, false},
    [MC_SRC_KIND] = {"srcKind", NULL, false},
    [MC_DST_KIND] = {"dstKind", NULL, false},
    [MC_SRC_DEV] = {"srcDeviceId", NULL, false},
    [MC_DST_DEV] = {"dstDeviceId", NULL, false},
    [MC_VALUE] = {"value", NULL, false},
    [MC_MEM_KIND] = {"memKind", NULL, false},
};

/* Where the rows of a copy or memset table go. */
typedef struct memop_read {
    tg_table_id id;
    tg_memop **rows;
    size_t *n, cap;
} memop_read;

static bool memop_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    memop_read *r = ctx;
    bool memset_table = r->id == TG_TABLE_MEMSET;
    tg_memop m;
    if (!tg_load_times(&ld->stats[r->id], st, &m.start, &m.end, false)) return true;
    m.rowid = tg_row_id(st);
    m.correlation = tg_cell_i64(st, COL(MC_CORR));
    m.bytes = tg_cell_i64(st, COL(MC_BYTES));
    m.pid = tg_global_pid(tg_cell_i64(st, COL(MC_GPID)));
    m.device = tg_cell_i32(st, COL(MC_DEVICE));
    m.context = tg_cell_i32(st, COL(MC_CONTEXT));
    m.stream = tg_cell_i32(st, COL(MC_STREAM));
    if (memset_table) {
        m.copy_kind = -1;
        m.src_kind = tg_cell_i32(st, COL(MC_MEM_KIND));
        m.dst_kind = -1;
        m.src_device = m.dst_device = -1;
        m.value = tg_cell_i64(st, COL(MC_VALUE));
    } else {
        m.copy_kind = tg_cell_i32(st, COL(MC_COPY_KIND));
        m.src_kind = tg_cell_i32(st, COL(MC_SRC_KIND));
        m.dst_kind = tg_cell_i32(st, COL(MC_DST_KIND));
        m.src_device = tg_cell_i32(st, COL(MC_SRC_DEV));
        m.dst_device = tg_cell_i32(st, COL(MC_DST_DEV));
        m.value = TG_NULL_I64;
    }
    m.kind_name = m.src_kind_name = m.dst_kind_name = TG_NO_STR;
    m.api = -1;
    m.api_name = TG_NO_STR;
    m.tid = -1;
    m.api_sync = 0;
    m.api_async = 0;
    m.steady = 0;
    m.launched = 0;
    m.iteration = -1;
    m.callchain = -1;
    if (!tg_load_note_device(ld, m.device)) return false;
    return TG_PUSH_ROWS(*r->rows, *r->n, r->cap, ld->t->rows_mapped[r->id], m) || tg_load_oom(ld);
}

static bool load_memops(tg_loader *ld, tg_table_id id, tg_memop **rows, size_t *n)
{
    memop_read r = {.id = id, .rows = rows, .n = n, .cap = 0};
    return tg_load_rows(ld, ld->t->table_name[id], memop_cols, MC_N, memop_row, &r);
}

bool tg_load_memcpys(tg_loader *ld)
{
    return load_memops(ld, TG_TABLE_MEMCPY, &ld->t->memcpys, &ld->t->n_memcpys);
}

bool tg_load_memsets(tg_loader *ld)
{
    return load_memops(ld, TG_TABLE_MEMSET, &ld->t->memsets, &ld->t->n_memsets);
}

/* ---------------------------------------------------------------- sync */

enum {
    SC_START, SC_END, SC_DEVICE, SC_CONTEXT, SC_STREAM, SC_CORR, SC_GPID, SC_TYPE,
    SC_OLD_TYPE, SC_N
};

static const tg_colspec sync_cols[SC_N] = {
    [SC_START] = {"start", NULL, true},
    [SC_END] = {"end", NULL, true},
    [SC_DEVICE] = {"deviceId", NULL, false},
    [SC_CONTEXT] = {"contextId", NULL, false},
    [SC_STREAM] = {"streamId", NULL, false},
    [SC_CORR] = {"correlationId", NULL, false},
    [SC_GPID] = {"globalPid", NULL, false},
    [SC_TYPE] = {"syncType", NULL, false},
    [SC_OLD_TYPE] = {"deprecatedSyncType", NULL, false},
};

static bool sync_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_trace *t = ld->t;
    tg_sync s;
    if (!tg_load_times(&ld->stats[TG_TABLE_SYNC], st, &s.start, &s.end, false)) return true;
    s.rowid = tg_row_id(st);
    s.correlation = tg_cell_i64(st, COL(SC_CORR));
    s.pid = tg_global_pid(tg_cell_i64(st, COL(SC_GPID)));
    s.device = tg_cell_i32(st, COL(SC_DEVICE));
    s.context = tg_cell_i32(st, COL(SC_CONTEXT));
    s.stream = tg_cell_i32(st, COL(SC_STREAM));
    s.sync_type = tg_cell_i32(st, COL(SC_TYPE));
    if (s.sync_type < 0) s.sync_type = tg_cell_i32(st, COL(SC_OLD_TYPE));
    return TG_PUSH_ROWS(t->syncs, t->n_syncs, *(size_t *)cap, t->rows_mapped[TG_TABLE_SYNC], s) || tg_load_oom(ld);
}

bool tg_load_syncs(tg_loader *ld)
{
    size_t cap = 0;
    return tg_load_rows(ld, ld->t->table_name[TG_TABLE_SYNC], sync_cols, SC_N, sync_row, &cap);
}

/* ---------------------------------------------------------------- overhead */

enum { OC_START, OC_END, OC_GTID, OC_NAME, OC_N };

static const tg_colspec overhead_cols[OC_N] = {
    [OC_START] = {"start", NULL, true},
    [OC_END] = {"end", NULL, true},
    [OC_GTID] = {"globalTid", NULL, false},
    [OC_NAME] = {"nameId", NULL, false},
};

static bool overhead_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_trace *t = ld->t;
    tg_overhead o;
    if (!tg_load_times(&ld->stats[TG_TABLE_OVERHEAD], st, &o.start, &o.end, false)) return true;
    o.rowid = tg_row_id(st);
    int64_t gtid = tg_cell_i64(st, COL(OC_GTID));
    o.pid = tg_global_pid(gtid);
    o.tid = tg_global_tid(gtid);
    o.name = tg_load_strid(ld, st, COL(OC_NAME));
    if (ld->failed) return false;
    return TG_PUSH_ROWS(t->overheads, t->n_overheads, *(size_t *)cap, t->rows_mapped[TG_TABLE_OVERHEAD], o) ||
           tg_load_oom(ld);
}

bool tg_load_overheads(tg_loader *ld)
{
    size_t cap = 0;
    return tg_load_rows(ld, ld->t->table_name[TG_TABLE_OVERHEAD], overhead_cols, OC_N, overhead_row, &cap);
}

/* ---------------------------------------------------------------- GPUs */

static tg_gpu *find_gpu(tg_trace *t, int32_t id)
{
    for (size_t i = 0; i < t->n_gpus; i++)
        if (t->gpus[i].id == id) return &t->gpus[i];
    return NULL;
}

/* Real captures name a handful of GPUs (72 on the largest nodes); an
** export whose rows name thousands of device ids is corrupt, and every
** per-device step downstream would pay for each of them. */

bool tg_load_add_gpu(tg_loader *ld, size_t *cap, tg_gpu g)
{
    if (g.id < 0 || find_gpu(ld->t, g.id)) return true;
    if (ld->t->n_gpus >= TG_MAX_GPUS) {
        tg_load_fail(ld, TG_ETRACE, "names more than %d distinct GPU devices (device id %d): the export is corrupt",
                     TG_MAX_GPUS, (int)g.id);
        return false;
    }
    return TG_PUSH(ld->t->gpus, ld->t->n_gpus, *cap, g) || tg_load_oom(ld);
}

enum { GC_ID, GC_NAME, GC_SMS, GC_MEM, GC_MAJOR, GC_MINOR, GC_N };

static const tg_colspec gpu_cols[GC_N] = {
    [GC_ID] = {"id", NULL, true},
    [GC_NAME] = {"name", NULL, false},
    [GC_SMS] = {"smCount", NULL, false},
    [GC_MEM] = {"totalMemory", NULL, false},
    [GC_MAJOR] = {"computeMajor", NULL, false},
    [GC_MINOR] = {"computeMinor", NULL, false},
};

/* TARGET_INFO_CUDA_DEVICE (newer exports): ids and SM counts, no names. */
static const tg_colspec cuda_device_cols[] = {
    {"gpuId", "cudaId", true},
    {"numMultiprocessors", NULL, false},
};

static int cmp_gpu(const void *a, const void *b)
{
    const tg_gpu *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

bool tg_load_note_device_slow(tg_loader *ld, int32_t dev)
{
    tg_devset *d = ld->devs;
    if (!d) {
        if (!(d = ld->devs = malloc(sizeof *d))) return tg_load_oom(ld);
        d->n = 0;
        memset(d->slots, 0xFF, sizeof d->slots);
    }
    enum { SLOTS = sizeof d->slots / sizeof d->slots[0] };
    size_t slot = ((uint32_t)dev * 2654435761u) % SLOTS;
    while (d->slots[slot] != -1 && d->slots[slot] != dev) slot = (slot + 1) % SLOTS;
    if (d->slots[slot] == dev || d->n == TG_MAX_GPUS + 1) return true;   /* never fills: 2x the ids */
    d->slots[slot] = dev;
    d->ids[d->n++] = dev;
    return true;
}

bool tg_load_note_row_devices(tg_loader *ld)
{
    tg_trace *t = ld->t;
    const struct { const void *rows; size_t n, esz, off; } sets[] = {
        {t->kernels, t->kernels ? t->n_kernels : 0, sizeof(tg_kernel), offsetof(tg_kernel, device)},
        {t->kspans, t->kspans ? t->n_kernels : 0, sizeof(tg_kspan), offsetof(tg_kspan, device)},
        {t->memcpys, t->n_memcpys, sizeof(tg_memop), offsetof(tg_memop, device)},
        {t->memsets, t->n_memsets, sizeof(tg_memop), offsetof(tg_memop, device)},
    };
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        for (size_t i = 0; i < sets[s].n; i++) {
            int32_t dev;
            memcpy(&dev, (const char *)sets[s].rows + i * sets[s].esz + sets[s].off, sizeof dev);
            if (!tg_load_note_device(ld, dev)) return false;
        }
    }
    return true;
}

/* Add a bare description for every device id an activity row named but
** no GPU table describes (e.g. windowed exports that dropped the table):
** the ids another loader noted before (ld->devs_before: the kernels, when
** read beside the other tables), then those of ld. */
bool tg_load_activity_gpus(tg_loader *ld, size_t *cap)
{
    const tg_devset *sets[] = {ld->devs_before, ld->devs};
    for (size_t s = 0; s < 2; s++) {
        for (uint32_t i = 0; sets[s] && i < sets[s]->n; i++) {
            tg_gpu g = {.id = sets[s]->ids[i], .name = TG_NO_STR, .sm_count = -1, .memory = TG_NULL_I64,
                        .compute_major = -1, .compute_minor = -1};
            if (!tg_load_add_gpu(ld, cap, g)) return false;
        }
    }
    return true;
}

static bool gpu_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_gpu g = {
        .id = tg_cell_i32(st, COL(GC_ID)),
        .name = tg_load_text(ld, st, COL(GC_NAME)),
        .sm_count = tg_cell_i32(st, COL(GC_SMS)),
        .memory = tg_cell_i64(st, COL(GC_MEM)),
        .compute_major = tg_cell_i32(st, COL(GC_MAJOR)),
        .compute_minor = tg_cell_i32(st, COL(GC_MINOR)),
    };
    return !ld->failed && tg_load_add_gpu(ld, cap, g);
}

static bool cuda_device_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_gpu g = {.id = tg_cell_i32(st, COL(0)), .name = TG_NO_STR,
                .sm_count = tg_cell_i32(st, COL(1)), .memory = TG_NULL_I64,
                .compute_major = -1, .compute_minor = -1};
    return tg_load_add_gpu(ld, cap, g);
}

bool tg_load_gpus(tg_loader *ld)
{
    tg_trace *t = ld->t;
    size_t cap = 0;
    const char *table = t->table_name[TG_TABLE_GPU];
    if (!tg_load_rows(ld, table, gpu_cols, GC_N, gpu_row, &cap)) return false;
    if (!table && !tg_load_rows(ld, tg_load_find_table(ld, "TARGET_INFO_CUDA_DEVICE"), cuda_device_cols, 2,
                                cuda_device_row, &cap))
        return false;
    if (!tg_load_activity_gpus(ld, &cap)) return false;
    if (t->n_gpus > 1) qsort(t->gpus, t->n_gpus, sizeof *t->gpus, cmp_gpu);
    return true;
}

/* ---------------------------------------------------------------- processes */

static const tg_colspec process_cols[] = {
    {"pid", NULL, false},
    {"name", NULL, false},
    {"globalPid", NULL, false},
};

static bool process_row(tg_loader *ld, const tg_row *st, void *cap)
{
    tg_trace *t = ld->t;
    tg_process p = {.pid = tg_cell_i32(st, COL(0)), .name = tg_load_text(ld, st, COL(1))};
    if (p.pid < 0) p.pid = tg_global_pid(tg_cell_i64(st, COL(2)));
    if (ld->failed) return false;
    return p.pid < 0 || TG_PUSH(t->processes, t->n_processes, *(size_t *)cap, p) || tg_load_oom(ld);
}

bool tg_load_processes(tg_loader *ld)
{
    size_t cap = 0;
    return tg_load_rows(ld, tg_load_find_table(ld, "PROCESSES"), process_cols, 3, process_row, &cap);
}
