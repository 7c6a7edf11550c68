/*
** Kineto events onto the trace's rows (docs/kineto.md has the table):
**
**   kernel / Kernel                 -> a kernel (device from args.device,
**                                      else pid; stream from args.stream,
**                                      else tid; grid, block, registers,
**                                      shared memory from args)
**   gpu_memcpy / Memcpy             -> a copy; kind and memory kinds from
**                                      the name: `Memcpy HtoD (Pageable -> Device)`
**   gpu_memset / Memset             -> a memset; memory kind from the name
**   cuda_runtime, cuda_driver,
**   Runtime, Driver                 -> an API call (pid, tid, correlation)
**   user_annotation, and cpu_op /
**   Operator named ProfilerStep#N   -> a range (NVTX push/pop on its thread)
**   cuda_sync                       -> a synchronization event
**   M process_name / process_labels -> process names; "GPU n" pids are devices
**
** The row's rowid is the event's index in traceEvents, which evidence
** cites. Every other event (cpu_op, python_function, flows, ...) is
** skipped. gpu_user_annotation events mirror user_annotation ranges on the
** GPU timeline; they are counted, not loaded, so a step is marked once.
** cuda_profiler_range events are the kernels of a capture made with the
** CUPTI range profiler (torch.profiler's experimental_config with
** profiler_metrics): counters per kernel, without the correlation id, the
** stream or measured times a kernel row needs (the ranges are laid end to
** end, all of one length); they are counted, so that a rule missing its
** kernels can say how they were recorded (tg_trace_range_profiled).
**
** GPU events carry the device as pid, not the launching process: the
** finishing step gives each kernel, copy and memset the process of the API
** call with its correlation id (the trace's one CPU process when all calls
** come from one), as an export's globalPid would.
*/
#include "trace_kineto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; size_t len; tg_kin_cat cat; } cat_names[] = {
#define X(cat, name) {name, sizeof name - 1, TG_KIN_##cat},
    TG_KIN_CAT_LIST(X)
#undef X
};

tg_kin_cat tg_kin_cat_of(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof cat_names / sizeof *cat_names; i++)
        if (cat_names[i].len == len && memcmp(cat_names[i].name, s, len) == 0)
            return cat_names[i].cat;
    return TG_KIN_OTHER;
}

static int32_t i32_or_null(int64_t v)
{
    return v == TG_NULL_I64 || v < INT32_MIN || v > INT32_MAX ? -1 : (int32_t)v;
}

static bool intern(tg_kin_rows *r, const char *s, size_t len, int32_t *id)
{
    tg_strpool *pool = r->ld->t->strings;
    int32_t before = tg_strpool_count(pool);
    *id = tg_strpool_intern(pool, s, len);
    /* a new name: its text, its slot and its hash entry (--max-memory) */
    if (*id >= 0 && tg_strpool_count(pool) != before && !tg_mem_charge(len + 32)) {
        *id = -1;
        return tg_mem_fail(r->ld), false;
    }
    if (*id < 0) tg_load_fail(r->ld, TG_EINTERNAL, "out of memory");
    return *id >= 0;
}

/* start/end of an X event; false (counted) when it cannot be placed. */
static bool times(tg_kin_rows *r, tg_table_id table, const tg_kin_event *e, int64_t *start, int64_t *end)
{
    tg_rowstats *rs = &r->ld->stats[table];
    if (e->ts == TG_NULL_I64 || e->ts <= -TG_TIME_LIMIT / 2 || e->ts >= TG_TIME_LIMIT / 2 ||
        (e->dur != TG_NULL_I64 && (e->dur <= -TG_TIME_LIMIT / 2 || e->dur >= TG_TIME_LIMIT / 2))) {
        rs->skipped++;
        return false;
    }
    *start = e->ts;
    *end = e->dur == TG_NULL_I64 ? e->ts : e->ts + e->dur;
    if (*end < *start) {
        *end = *start;
        rs->clamped++;
    }
    return true;
}

static bool pushed(tg_kin_rows *r, bool ok)
{
    if (!ok && !tg_mem_fail(r->ld)) tg_load_fail(r->ld, TG_EINTERNAL, "out of memory");
    return ok;
}

/* "void at::native::foo<128>(int)" -> "at::native::foo" (the export's shortName). */
static void short_name_of(const char *s, size_t len, size_t *from, size_t *to)
{
    size_t b = 0;
    if (len > 5 && memcmp(s, "void ", 5) == 0) b = 5;
    size_t e = b;
    while (e < len && s[e] != '<' && s[e] != '(') e++;
    *from = b;
    *to = e > b ? e : len;
    if (e == b) *from = 0;
}

static bool emit_kernel(tg_kin_rows *r, const tg_kin_event *e)
{
    tg_trace *t = r->ld->t;
    int64_t start, end;
    int32_t name;
    if (!times(r, TG_TABLE_KERNEL, e, &start, &end)) return true;
    if (!intern(r, e->has_name ? e->name : "", e->has_name ? e->name_len : 0, &name)) return false;
    int32_t device = i32_or_null(e->device != TG_NULL_I64 ? e->device : e->pid);
    if (!r->ld->kernel_rows) {
        tg_kspan k = {.rowid = e->index, .start = start, .end = end, .correlation = e->correlation,
                      .queue = TG_NULL_I64, .pid = -1, .device = device, .name = name};
        return pushed(r, TG_PUSH_ROWS(t->kspans, t->n_kernels, r->cap_kernels,
                                      t->rows_mapped[TG_TABLE_KERNEL], k));
    }
    size_t from, to;
    int32_t short_name = name;
    short_name_of(e->name ? e->name : "", e->name_len, &from, &to);
    if ((from || to != e->name_len) && !intern(r, e->name + from, to - from, &short_name)) return false;
    tg_kernel k = {
        .rowid = e->index, .start = start, .end = end, .correlation = e->correlation,
        .queue = TG_NULL_I64, .launch_end = TG_NULL_I64, .pid = -1, .device = device,
        .context = i32_or_null(e->context),
        .stream = i32_or_null(e->stream != TG_NULL_I64 ? e->stream : e->tid),
        .name = name, .short_name = short_name,
        .grid_x = i32_or_null(e->grid[0]), .grid_y = i32_or_null(e->grid[1]),
        .grid_z = i32_or_null(e->grid[2]), .block_x = i32_or_null(e->block[0]),
        .block_y = i32_or_null(e->block[1]), .block_z = i32_or_null(e->block[2]),
        .registers = i32_or_null(e->registers), .static_smem = i32_or_null(e->smem),
        .dynamic_smem = e->smem == TG_NULL_I64 ? -1 : 0,
        .api = -1, .api_name = TG_NO_STR, .tid = -1, .nvtx = TG_NO_STR, .iteration = -1, .callchain = -1,
    };
    return pushed(r, TG_PUSH_ROWS(t->kernels, t->n_kernels, r->cap_kernels, t->rows_mapped[TG_TABLE_KERNEL], k));
}

/* ENUM_CUDA_MEM_KIND of a word in a copy's or memset's name. */
static int32_t mem_kind(const char *s, size_t len)
{
    static const struct { const char *word; int32_t kind; } kinds[] = {
        {"Pageable", 0}, {"Pinned", 1}, {"Device", 2}, {"Array", 3}, {"Managed", 4},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t n = strlen(kinds[i].word);
        if (len >= n && memcmp(s, kinds[i].word, n) == 0) return kinds[i].kind;
    }
    return 7;   /* unknown */
}

/* "Memcpy HtoD (Pageable -> Device)": ENUM_CUDA_MEMCPY_OPER and the two
** memory kinds; "Memset (Device)": the memory kind in *src. */
static void parse_memop_name(const char *s, size_t len, int32_t *copy, int32_t *src, int32_t *dst)
{
    static const struct { const char *word; int32_t kind; } copies[] = {
        {"HtoD", 1}, {"DtoH", 2}, {"HtoA", 3}, {"AtoH", 4}, {"AtoA", 5}, {"AtoD", 6},
        {"DtoA", 7}, {"DtoD", 8}, {"HtoH", 9}, {"PtoP", 10},
    };
    *copy = 0;
    *src = *dst = 7;
    const char *end = s + len;
    const char *sp = memchr(s, ' ', len);
    if (sp && end - sp > 4)
        for (size_t i = 0; i < sizeof copies / sizeof *copies; i++)
            if (memcmp(sp + 1, copies[i].word, 4) == 0) *copy = copies[i].kind;
    const char *open = memchr(s, '(', len);
    if (!open) return;
    open++;
    *src = mem_kind(open, (size_t)(end - open));
    for (const char *a = open; a + 4 <= end; a++)
        if (memcmp(a, " -> ", 4) == 0) {
            *dst = mem_kind(a + 4, (size_t)(end - a - 4));
            break;
        }
}

static bool emit_memop(tg_kin_rows *r, const tg_kin_event *e, bool memset_op)
{
    tg_trace *t = r->ld->t;
    tg_table_id table = memset_op ? TG_TABLE_MEMSET : TG_TABLE_MEMCPY;
    int64_t start, end;
    if (!times(r, table, e, &start, &end)) return true;
    int32_t copy, src, dst;
    parse_memop_name(e->has_name ? e->name : "", e->has_name ? e->name_len : 0, &copy, &src, &dst);
    tg_memop m = {
        .rowid = e->index, .start = start, .end = end, .correlation = e->correlation, .bytes = e->bytes,
        .value = TG_NULL_I64, .pid = -1, .device = i32_or_null(e->device != TG_NULL_I64 ? e->device : e->pid),
        .context = i32_or_null(e->context),
        .stream = i32_or_null(e->stream != TG_NULL_I64 ? e->stream : e->tid),
        .copy_kind = memset_op ? -1 : copy, .src_kind = src, .dst_kind = memset_op ? -1 : dst,
        .src_device = -1, .dst_device = -1,
        .kind_name = TG_NO_STR, .src_kind_name = TG_NO_STR, .dst_kind_name = TG_NO_STR,
        .api = -1, .api_name = TG_NO_STR, .tid = -1, .iteration = -1, .callchain = -1,
    };
    if (memset_op)
        return pushed(r, TG_PUSH_ROWS(t->memsets, t->n_memsets, r->cap_memsets, t->rows_mapped[table], m));
    return pushed(r, TG_PUSH_ROWS(t->memcpys, t->n_memcpys, r->cap_memcpys, t->rows_mapped[table], m));
}

static bool emit_api(tg_kin_rows *r, const tg_kin_event *e)
{
    tg_trace *t = r->ld->t;
    int64_t start, end;
    int32_t name;
    if (!times(r, TG_TABLE_RUNTIME, e, &start, &end)) return true;
    if (!intern(r, e->has_name ? e->name : "", e->has_name ? e->name_len : 0, &name)) return false;
    tg_api a = {.rowid = e->index, .start = start, .end = end, .correlation = e->correlation,
                .pid = i32_or_null(e->pid), .tid = i32_or_null(e->tid), .name = name,
                .return_value = -1, .callchain = -1, .base_name = TG_NO_STR, .iteration = -1, .dup_of = -1};
    return pushed(r, TG_PUSH_ROWS(t->apis, t->n_apis, r->cap_apis, t->rows_mapped[TG_TABLE_RUNTIME], a));
}

static bool emit_range(tg_kin_rows *r, const tg_kin_event *e)
{
    tg_trace *t = r->ld->t;
    int64_t start, end;
    int32_t name;
    if (!times(r, TG_TABLE_NVTX, e, &start, &end)) return true;
    if (!intern(r, e->has_name ? e->name : "", e->has_name ? e->name_len : 0, &name)) return false;
    tg_nvtx n = {.rowid = e->index, .start = start, .end = end, .event_type = 59,
                 .pid = i32_or_null(e->pid), .tid = i32_or_null(e->tid), .name = name,
                 .domain = TG_NO_STR, .duration = TG_NULL_I64, .depth = -1, .gpu_time = TG_NULL_I64,
                 .gpu_span = TG_NULL_I64, .iteration = -1};
    return pushed(r, TG_PUSH_ROWS(t->nvtx, t->n_nvtx, r->cap_nvtx, t->rows_mapped[TG_TABLE_NVTX], n));
}

/* CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE of a cuda_sync name. */
static bool emit_sync(tg_kin_rows *r, const tg_kin_event *e)
{
    tg_trace *t = r->ld->t;
    int64_t start, end;
    if (!times(r, TG_TABLE_SYNC, e, &start, &end)) return true;
    const char *n = e->has_name ? e->name : "";
    int32_t type = strstr(n, "Wait") ? 2 : strstr(n, "Event") ? 1 : strstr(n, "Stream") ? 3
                 : strstr(n, "Context") || strstr(n, "Device") ? 4 : 0;
    tg_sync s = {.rowid = e->index, .start = start, .end = end, .correlation = e->correlation, .pid = -1,
                 .device = i32_or_null(e->device != TG_NULL_I64 ? e->device : e->pid),
                 .context = i32_or_null(e->context), .stream = i32_or_null(e->stream), .sync_type = type};
    return pushed(r, TG_PUSH_ROWS(t->syncs, t->n_syncs, r->cap_syncs, t->rows_mapped[TG_TABLE_SYNC], s));
}

/* Process metadata (ph M): names of CPU pids, GPU pids marked. */
#define MAX_META 65536

static bool emit_meta(tg_kin_rows *r, const tg_kin_event *e)
{
    if (e->pid == TG_NULL_I64 || !e->has_name || r->n_meta >= MAX_META) return true;
    bool is_name = e->name_len == 12 && memcmp(e->name, "process_name", 12) == 0;
    bool is_labels = e->name_len == 14 && memcmp(e->name, "process_labels", 14) == 0;
    if (!is_name && !is_labels) return true;
    tg_kin_meta *m = NULL;
    for (size_t i = 0; i < r->n_meta; i++)
        if (r->meta[i].pid == e->pid) m = &r->meta[i];
    if (!m) {
        tg_kin_meta fresh = {.pid = e->pid, .name = TG_NO_STR};
        if (!pushed(r, TG_PUSH(r->meta, r->n_meta, r->cap_meta, fresh))) return false;
        m = &r->meta[r->n_meta - 1];
    }
    if (is_name && e->arg_name_len && !intern(r, e->arg_name, e->arg_name_len, &m->name)) return false;
    if (is_labels && e->labels_len >= 3 && memcmp(e->labels, "GPU", 3) == 0) m->gpu = true;
    return true;
}

static bool is_profiler_step(const tg_kin_event *e)
{
    return e->has_name && e->name_len > 13 && memcmp(e->name, "ProfilerStep#", 13) == 0;
}

bool tg_kin_emit(tg_kin_rows *r, const tg_kin_event *e)
{
    r->n_events++;
    if (e->ph == 'M') return emit_meta(r, e);
    if (e->ph != 'X') return true;
    switch (e->cat) {
    case TG_KIN_KERNEL: return emit_kernel(r, e);
    case TG_KIN_MEMCPY: return emit_memop(r, e, false);
    case TG_KIN_MEMSET: return emit_memop(r, e, true);
    case TG_KIN_API: return emit_api(r, e);
    case TG_KIN_RANGE: return emit_range(r, e);
    case TG_KIN_GPU_RANGE: r->n_gpu_ranges++; return true;
    case TG_KIN_PROFILER_RANGE: r->ld->t->n_profiler_ranges++; return true;
    case TG_KIN_OP:
        r->n_cpu_ops++;
        return is_profiler_step(e) ? emit_range(r, e) : true;
    case TG_KIN_SYNC: return emit_sync(r, e);
    case TG_KIN_OTHER: return true;
    }
    return true;
}

bool tg_kin_add_gpu(tg_kin_rows *r, int64_t id, const char *name, size_t name_len, int64_t sms,
                    int64_t memory, int64_t major, int64_t minor)
{
    tg_gpu g = {.id = i32_or_null(id), .name = TG_NO_STR, .sm_count = i32_or_null(sms),
                .memory = memory, .compute_major = i32_or_null(major), .compute_minor = i32_or_null(minor)};
    if (name && name_len && !intern(r, name, name_len, &g.name)) return false;
    r->ld->t->has_table[TG_TABLE_GPU] = true;
    return tg_load_add_gpu(r->ld, &r->cap_gpus, g);
}

/* ---------------------------------------------------------------- finishing */

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* correlation id -> index of the API call that carries it (the last in
** t->apis when several do), in the one int64 -> int32 map
** (common/idmap.h); false on OOM. The index, not the pid: a map value is
** >= 0 and a call's pid may be -1 (none recorded). */
static bool corr_map_build(tg_idmap *m, const tg_trace *t)
{
    if (t->n_apis > INT32_MAX) return false;
    for (size_t i = 0; i < t->n_apis; i++) {
        int64_t c = t->apis[i].correlation;
        if (c != TG_NULL_I64 && !tg_idmap_put(m, c, (int32_t)i)) return false;
    }
    return true;
}

static int32_t corr_map_pid(const tg_idmap *m, const tg_trace *t, int64_t c, int32_t fallback)
{
    int32_t i = c == TG_NULL_I64 ? -1 : tg_idmap_get(m, c);
    return i < 0 ? fallback : t->apis[i].pid;
}

/* The CPU pids of the trace, sorted and distinct (*n of them), and the
** busiest one in *main. NULL with *n 0 when there are none. */
static int32_t *cpu_pids(const tg_trace *t, size_t *n, int32_t *main_pid, bool *oom)
{
    size_t total = t->n_apis + t->n_nvtx, k = 0;
    *n = 0;
    *main_pid = -1;
    if (total == 0) return NULL;
    int32_t *pids = malloc(total * sizeof *pids);
    if (!pids) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < t->n_apis; i++) pids[k++] = t->apis[i].pid;
    for (size_t i = 0; i < t->n_nvtx; i++) pids[k++] = t->nvtx[i].pid;
    qsort(pids, total, sizeof *pids, cmp_i32);
    size_t best = 0, run = 0, u = 0;
    for (size_t i = 0; i < total; i++) {
        run = i > 0 && pids[i] == pids[i - 1] ? run + 1 : 1;
        if (run > best && pids[i] >= 0) best = run, *main_pid = pids[i];
        if (i == 0 || pids[i] != pids[i - 1]) pids[u++] = pids[i];
    }
    *n = u;
    return pids;
}

/* GPU work gets the pid of its launching call (or the busiest CPU pid). */
static bool assign_pids(tg_kin_rows *r, const int32_t *pids, size_t n_pids, int32_t main_pid)
{
    tg_trace *t = r->ld->t;
    tg_idmap m = {0};
    bool single = n_pids <= 1 || (n_pids == 2 && pids[0] < 0);
    if (!single && !corr_map_build(&m, t)) {
        tg_idmap_free(&m);
        return pushed(r, false);
    }
    size_t n = t->n_kernels;
    for (size_t i = 0; i < n; i++) {
        tg_kspan *k = t->kernels ? &t->kernels[i].span : &t->kspans[i];
        k->pid = single ? main_pid : corr_map_pid(&m, t, k->correlation, main_pid);
    }
    tg_memop *sets[] = {t->memcpys, t->memsets};
    size_t counts[] = {t->n_memcpys, t->n_memsets};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < counts[s]; i++)
            sets[s][i].pid = single ? main_pid : corr_map_pid(&m, t, sets[s][i].correlation, main_pid);
    for (size_t i = 0; i < t->n_syncs; i++)
        t->syncs[i].pid = single ? main_pid : corr_map_pid(&m, t, t->syncs[i].correlation, main_pid);
    tg_idmap_free(&m);
    return true;
}

static bool add_processes(tg_kin_rows *r, const int32_t *pids, size_t n_pids)
{
    tg_trace *t = r->ld->t;
    size_t cap = 0;
    for (size_t i = 0; i < n_pids; i++) {
        if (pids[i] < 0) continue;
        tg_process p = {.pid = pids[i], .name = TG_NO_STR};
        for (size_t j = 0; j < r->n_meta; j++)
            if (r->meta[j].pid == pids[i] && !r->meta[j].gpu) p.name = r->meta[j].name;
        if (!pushed(r, TG_PUSH(t->processes, t->n_processes, cap, p))) return false;
    }
    return true;
}

static int cmp_gpu(const void *a, const void *b)
{
    const tg_gpu *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

bool tg_kin_finish(tg_kin_rows *r)
{
    tg_trace *t = r->ld->t;
    size_t n_pids = 0;
    int32_t main_pid = -1;
    bool oom = false;
    int32_t *pids = cpu_pids(t, &n_pids, &main_pid, &oom);
    bool ok = !oom && assign_pids(r, pids, n_pids, main_pid) && add_processes(r, pids, n_pids) &&
              tg_load_note_row_devices(r->ld) && tg_load_activity_gpus(r->ld, &r->cap_gpus);
    free(pids);
    if (oom) return pushed(r, false);
    if (!ok) return false;
    if (t->n_gpus > 1) qsort(t->gpus, t->n_gpus, sizeof *t->gpus, cmp_gpu);
    /* What was recorded: CUDA activity (kernels, copies, memsets and the
    ** calls, as one switch in torch.profiler), CPU ranges, sync events. */
    bool cuda = t->n_kernels || t->n_memcpys || t->n_memsets || t->n_apis || t->n_syncs || r->n_gpu_ranges ||
                t->n_profiler_ranges;
    t->has_table[TG_TABLE_KERNEL] = t->has_table[TG_TABLE_MEMCPY] = cuda;
    t->has_table[TG_TABLE_MEMSET] = t->has_table[TG_TABLE_RUNTIME] = cuda;
    t->has_table[TG_TABLE_NVTX] = t->n_nvtx > 0 || r->n_cpu_ops > 0;
    t->has_table[TG_TABLE_SYNC] = t->n_syncs > 0;
        for (int i = 0; i < TG_TABLE_COUNT; i++)
        t->table_name[i] = t->has_table[i] ? tg_table_kineto[i] : NULL;
    return true;
}

void tg_kin_rows_free(tg_kin_rows *r)
{
    free(r->meta);
    r->meta = NULL;
    r->n_meta = r->cap_meta = 0;
}

/* ---------------------------------------------------------------- recorded events */

enum { REC_EVENT, REC_GPU };

typedef struct rec_head {
    uint32_t kind, size;       /* size: the whole record, 8-aligned */
    tg_kin_event ev;           /* REC_GPU: index = id, pid = sms, tid = memory,
                                  device = major, context = minor */
} rec_head;

static bool rec_put(tg_kin_rec *rec, uint32_t kind, const tg_kin_event *e, const char *a, size_t alen,
                    const char *b, size_t blen, const char *c, size_t clen)
{
    size_t size = (sizeof(rec_head) + alen + blen + clen + 7) & ~(size_t)7;
    if (size > UINT32_MAX) return true;                 /* a 4 GiB name: dropped */
    size_t cap = rec->cap;
    if (!tg_grow((void **)&rec->buf, &rec->cap, rec->len + size, 1) || !tg_mem_charge(rec->cap - cap)) {
        rec->oom = true;
        return false;
    }
    rec_head h = {.kind = kind, .size = (uint32_t)size, .ev = *e};
    h.ev.name_len = alen;
    h.ev.arg_name_len = blen;
    h.ev.labels_len = clen;
    h.ev.name = h.ev.arg_name = h.ev.labels = NULL;
    unsigned char *dst = rec->buf + rec->len;
    memcpy(dst, &h, sizeof h);
    if (alen) memcpy(dst + sizeof h, a, alen);
    if (blen) memcpy(dst + sizeof h + alen, b, blen);
    if (clen) memcpy(dst + sizeof h + alen + blen, c, clen);
    rec->len += size;
    return true;
}

bool tg_kin_rec_event(tg_kin_rec *rec, const tg_kin_event *e)
{
    if (e->ph == 'X') {
        if (e->cat == TG_KIN_OTHER) return true;
        if (e->cat == TG_KIN_GPU_RANGE) return rec->n_gpu_ranges++, true;
        if (e->cat == TG_KIN_PROFILER_RANGE) return rec->n_profiler_ranges++, true;
        if (e->cat == TG_KIN_OP && !is_profiler_step(e)) return rec->n_cpu_ops++, true;
    } else if (e->ph != 'M') {
        return true;
    }
    return rec_put(rec, REC_EVENT, e, e->has_name ? e->name : NULL, e->has_name ? e->name_len : 0, e->arg_name,
                   e->arg_name_len, e->labels, e->labels_len);
}

bool tg_kin_rec_gpu(tg_kin_rec *rec, int64_t id, const char *name, size_t name_len, int64_t sms,
                    int64_t memory, int64_t major, int64_t minor)
{
    tg_kin_event e = {.index = id, .pid = sms, .tid = memory, .device = major, .context = minor};
    return rec_put(rec, REC_GPU, &e, name, name ? name_len : 0, NULL, 0, NULL, 0);
}

bool tg_kin_rec_replay(tg_kin_rows *r, const tg_kin_rec *rec, int64_t index_offset)
{
    for (size_t at = 0; at < rec->len;) {
        rec_head h;
        memcpy(&h, rec->buf + at, sizeof h);
        const char *text = (const char *)rec->buf + at + sizeof h;
        tg_kin_event e = h.ev;
        if (h.kind == REC_GPU) {
            if (!tg_kin_add_gpu(r, e.index, text, e.name_len, e.pid, e.tid, e.device, e.context)) return false;
        } else {
            e.name = text;
            e.arg_name = text + e.name_len;
            e.labels = text + e.name_len + e.arg_name_len;
            e.index += index_offset;
            if (!tg_kin_emit(r, &e)) return false;
        }
        at += h.size;
    }
    r->n_cpu_ops += rec->n_cpu_ops;
    r->n_gpu_ranges += rec->n_gpu_ranges;
    tg_trace *t = r->ld->t;
    t->n_profiler_ranges += rec->n_profiler_ranges;
    if (rec->rank != TG_NULL_I64) t->rank = (int32_t)rec->rank;
    if (rec->world_size != TG_NULL_I64) t->world_size = (int32_t)rec->world_size;
    if (rec->schema != TG_NULL_I64) tg_kin_set_schema(t, rec->schema);
    for (int k = 0; k < 3; k++)
        if (rec->versions[k] != TG_NULL_I64) tg_kin_set_version(t, k, rec->versions[k]);
    return true;
}

void tg_kin_set_schema(tg_trace *t, int64_t v)
{
    if (t->schema_version) return;
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    t->schema_version = strdup(buf);   /* NULL on OOM: the schema stays unknown */
}

void tg_kin_set_version(tg_trace *t, int k, int64_t v)
{
    int64_t *slot = k == 0 ? &t->capture.cuda_driver : k == 1 ? &t->capture.cuda_runtime : &t->capture.cupti;
    *slot = v;
}

void tg_kin_rec_free(tg_kin_rec *rec)
{
    free(rec->buf);
    *rec = (tg_kin_rec){.rank = TG_NULL_I64, .world_size = TG_NULL_I64, .schema = TG_NULL_I64,
                        .versions = {TG_NULL_I64, TG_NULL_I64, TG_NULL_I64}};
}
