/*
** Inline events of a rule test (`input.events`): kernels, memcpys,
** memsets, api calls, nvtx ranges, devices, profiler overhead and the host
** side (OS runtime calls, thread names, cuDNN / cuBLAS calls, call stacks
** on api entries, launches and OS runtime calls: docs/host.md) written
** in YAML with units (`start: 1ms`, `duration: 20us`, `bytes: 16MiB`),
** read into the plain rows of ruletest_int.h with every unspecified column
** defaulted (device 0, stream 7, context 1, pid 1000, tid 1000).
**
** Two helpers make realistic traces short to write: `launch:` on a kernel,
** copy or memset creates the API call that launched it (same process,
** matching correlation id), and `repeat: {count: N, every: T}` writes an
** item N times, each shifted by T (its launch too), so an iteration series
** is one entry. Correlation ids written by hand (`correlation: N`, on an
** api entry and on the operations it launched) are kept; every other row
** gets a fresh id that no hand-written one uses.
*/
#include "ruletest_int.h"
#include "../trace/nsys_enums.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tg_rt_cat_names[TG_RT_CAT_COUNT] = {
    "kernels", "memcpys", "memsets", "api", "nvtx", "devices", "overhead", "osrt", "threads", "cudnn", "cublas",
};

/* ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND: the ids are the indexes
** (engine/trace/nsys_enums.h, as the model names them). */
#define copy_kinds tg_copy_kind_names
#define mem_kinds tg_mem_kind_names
enum { MK_PAGEABLE = 0, MK_DEVICE = 2, MK_ARRAY = 3, MK_MANAGED = 4, MK_UNKNOWN = 7 };

/* Default source and destination memory of each copy kind: host memory is
** pageable (plain malloc) unless the test says pinned. */
static const int8_t copy_default_kinds[][2] = {
    {MK_UNKNOWN, MK_UNKNOWN}, {MK_PAGEABLE, MK_DEVICE}, {MK_DEVICE, MK_PAGEABLE},
    {MK_PAGEABLE, MK_ARRAY}, {MK_ARRAY, MK_PAGEABLE}, {MK_ARRAY, MK_ARRAY}, {MK_ARRAY, MK_DEVICE},
    {MK_DEVICE, MK_ARRAY}, {MK_DEVICE, MK_DEVICE}, {MK_PAGEABLE, MK_PAGEABLE}, {MK_DEVICE, MK_DEVICE},
    {MK_MANAGED, MK_MANAGED}, {MK_MANAGED, MK_MANAGED}, {MK_MANAGED, MK_MANAGED},
};
_Static_assert(sizeof copy_default_kinds / sizeof *copy_default_kinds == TG_COPY_KIND_COUNT,
               "a default for every copy kind");

#define N_OF(a) (sizeof (a) / sizeof *(a))
/* Literals are exact integers up to 2^53 (104 days in ns); sums of two stay in range. */
#define TIME_MAX ((INT64_C(1) << 53) - 1)

typedef struct ev_reader {
    tg_rt_reader *rd;
    tg_rt_events *ev;
    tg_rt_call *launches;      /* calls made by `launch:`, appended after api at the end */
    size_t n_launches, cap_launches;
    bool oom;
} ev_reader;

static bool count_row(ev_reader *er, const tg_ynode *at)
{
    if (++er->ev->n_rows <= TG_RT_MAX_ROWS) return true;
    if (er->ev->n_rows == TG_RT_MAX_ROWS + 1)
        tg_rt_error(er->rd, at->pos, "the events expand to more than %d rows; refusing them", TG_RT_MAX_ROWS);
    return false;
}

static bool enum_value(tg_rt_reader *rd, const tg_ynode *n, const char *const *names, size_t count,
                       const char *what, int32_t *out)
{
    if (!tg_rt_expect_kind(rd, n, TG_Y_SCALAR, what)) return false;
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i], n->value) == 0) {
            *out = (int32_t)i;
            return true;
        }
    const char *hint = tg_suggest(n->value, names, count);
    if (hint) {
        tg_rt_error(rd, n->pos, "unknown %s '%s' (did you mean '%s'?)", what, n->value, hint);
        return false;
    }
    char list[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < count && len < sizeof list; i++) {
        int k = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
        if (k < 0) break;
        len += (size_t)k;
    }
    tg_rt_error(rd, n->pos, "unknown %s '%s' (one of: %s)", what, n->value, list);
    return false;
}

static bool i32_key(tg_rt_reader *rd, const tg_ynode *map, const char *key, int64_t lo, int32_t *out)
{
    const tg_ynode *n = tg_ymap_get(map, key);
    int64_t v;
    if (!n) return true;
    if (!tg_rt_int(rd, n, TG_UNIT_NONE, lo, INT32_MAX, key, &v)) return false;
    *out = (int32_t)v;
    return true;
}

/* A plain `null` (or `~`): an NVTX range that never closed. */
static bool is_null_scalar(const tg_ynode *n)
{
    return n->kind == TG_Y_SCALAR && n->style == TG_YS_PLAIN &&
           (!strcmp(n->value, "null") || !strcmp(n->value, "~"));
}

/* start plus end or duration; marks (end_optional) may have neither;
** `end: null` (open_ok) is a range the capture stopped before it closed. */
static bool read_span(tg_rt_reader *rd, const tg_ynode *map, const char *what, bool end_optional,
                      bool open_ok, int64_t *start, int64_t *end)
{
    const tg_ynode *s = tg_ymap_get(map, "start"), *e = tg_ymap_get(map, "end"),
                   *d = tg_ymap_get(map, "duration");
    if (!s) {
        tg_rt_error(rd, map->pos, "%s needs 'start:' (a time such as 1ms)", what);
        return false;
    }
    if (!tg_rt_int(rd, s, TG_UNIT_NS, 0, TIME_MAX, "start", start)) return false;
    if (e && d) {
        tg_rt_error(rd, d->pos, "%s takes 'end:' or 'duration:', not both", what);
        return false;
    }
    *end = TG_NULL_I64;
    if (e && open_ok && is_null_scalar(e)) {
        return true;
    } else if (e) {
        if (!tg_rt_int(rd, e, TG_UNIT_NS, 0, TIME_MAX, "end", end)) return false;
        if (*end < *start) {
            tg_rt_error(rd, e->pos, "end %s is before start %s", e->value, s->value);
            return false;
        }
    } else if (d) {
        int64_t dur;
        if (!tg_rt_int(rd, d, TG_UNIT_NS, 0, TIME_MAX, "duration", &dur)) return false;
        *end = *start + dur;
    } else if (!end_optional) {
        tg_rt_error(rd, map->pos, "%s needs 'end:' or 'duration:'", what);
        return false;
    }
    return true;
}

typedef struct repeat {
    int64_t count, every;
} repeat;

static bool read_repeat(tg_rt_reader *rd, const tg_ynode *map, int64_t last_time, repeat *out)
{
    static const char *const keys[] = {"count", "every"};
    *out = (repeat){1, 0};
    const tg_ynode *n = tg_ymap_get(map, "repeat");
    if (!n) return true;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "repeat") || !tg_rt_check_keys(rd, n, keys, 2, "repeat")) return false;
    const tg_ynode *c = tg_ymap_get(n, "count"), *e = tg_ymap_get(n, "every");
    if (!c || !e) {
        tg_rt_error(rd, n->pos, "repeat needs 'count:' and 'every:' (e.g. {count: 20, every: 30ms})");
        return false;
    }
    if (!tg_rt_int(rd, c, TG_UNIT_NONE, 1, TG_RT_MAX_ROWS, "repeat.count", &out->count) ||
        !tg_rt_int(rd, e, TG_UNIT_NS, 0, TIME_MAX, "repeat.every", &out->every))
        return false;
    if (out->every && (out->count - 1) > (TIME_MAX - last_time) / out->every) {
        tg_rt_error(rd, n->pos, "repeat runs past the largest time tracegate accepts");
        return false;
    }
    if (tg_ymap_get(map, "correlation")) {
        tg_rt_error(rd, tg_ymap_get(map, "correlation")->pos,
                    "a repeated item cannot give 'correlation:' (each copy needs its own id; use launch:)");
        return false;
    }
    return true;
}

static int64_t shifted(int64_t t, int64_t by)
{
    return t == TG_NULL_I64 ? t : t + by;
}

/* ---------------------------------------------------------------- stacks */

/* One frame: "SYMBOL (MODULE)" or {symbol, module}. */
static bool read_frame(tg_rt_reader *rd, const tg_ynode *n, tg_rt_frame *f)
{
    static const char *const keys[] = {"symbol", "module"};
    if (n->kind == TG_Y_SCALAR) {
        const char *open = strrchr(n->value, '(');
        size_t len = n->len;
        if (!open || open == n->value || open[-1] != ' ' || len < 2 || n->value[len - 1] != ')') {
            tg_rt_error(rd, n->pos, "a stack frame is 'SYMBOL (MODULE)' or {symbol: S, module: M}, not '%s'",
                        n->value);
            return false;
        }
        f->symbol = tg_arena_strndup(rd->ctx.arena, n->value, (size_t)(open - 1 - n->value));
        f->module = tg_arena_strndup(rd->ctx.arena, open + 1, len - (size_t)(open + 1 - n->value) - 1);
        return f->symbol && f->module;
    }
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "a stack frame") || !tg_rt_check_keys(rd, n, keys, 2, "a stack frame"))
        return false;
    const tg_ynode *sym = tg_ymap_get(n, "symbol"), *mod = tg_ymap_get(n, "module");
    if (!sym || !mod) {
        tg_rt_error(rd, n->pos, "a stack frame needs 'symbol:' and 'module:'");
        return false;
    }
    return tg_rt_string(rd, sym, "symbol", &f->symbol) && tg_rt_string(rd, mod, "module", &f->module);
}

/* `stack: [frame, ...]` of map, innermost first: its index, or -1 without. */
static bool read_stack(ev_reader *er, const tg_ynode *map, int32_t *out)
{
    *out = -1;
    const tg_ynode *n = tg_ymap_get(map, "stack");
    if (!n) return true;
    if (!tg_rt_expect_kind(er->rd, n, TG_Y_SEQ, "stack")) return false;
    if (n->n == 0) {
        tg_rt_error(er->rd, n->pos, "a stack has at least one frame (the innermost first)");
        return false;
    }
    tg_rt_stack st = {.frames = calloc(n->n, sizeof *st.frames), .n = n->n};
    if (!st.frames) return er->oom = true, false;
    for (size_t i = 0; i < n->n; i++)
        if (!read_frame(er->rd, n->items[i], &st.frames[i])) {
            free(st.frames);
            return false;
        }
    if (!TG_PUSH(er->ev->stacks, er->ev->n_stacks, er->ev->cap_stacks, st)) {
        free(st.frames);
        return er->oom = true, false;
    }
    *out = (int32_t)er->ev->n_stacks - 1;
    return true;
}

/* ------------------------------------------------------------- launches */

/* `launch: NAME` or `launch: {name, start, end|duration, tid, return_value, stack}`. */
static bool read_launch(ev_reader *er, const tg_ynode *n, const tg_rt_op *op, tg_rt_call *out)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "tid", "return_value", "stack"};
    tg_rt_reader *rd = er->rd;
    *out = (tg_rt_call){.correlation = -1, .pid = op->pid, .tid = TG_RT_DEFAULT_TID, .stack = -1};
    if (n->kind == TG_Y_SCALAR) {
        /* shorthand: a 1 us call that returns as the operation starts */
        out->start = op->start >= 1000 ? op->start - 1000 : 0;
        out->end = op->start;
        return tg_rt_string(rd, n, "launch", &out->name);
    }
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "launch") || !tg_rt_check_keys(rd, n, keys, N_OF(keys), "launch"))
        return false;
    const tg_ynode *name = tg_ymap_get(n, "name");
    if (!name) {
        tg_rt_error(rd, n->pos, "launch needs 'name:' (the API call, e.g. cudaLaunchKernel)");
        return false;
    }
    bool ok = tg_rt_string(rd, name, "launch.name", &out->name);
    ok = ok && read_span(rd, n, "launch", false, false, &out->start, &out->end);
    ok = ok && i32_key(rd, n, "tid", 0, &out->tid) && i32_key(rd, n, "return_value", INT32_MIN, &out->return_value);
    return ok && read_stack(er, n, &out->stack);
}

/* ------------------------------------------------------------ operations */

static bool read_dims(tg_rt_reader *rd, const tg_ynode *n, const char *what, int32_t dims[3])
{
    if (!n) return true;
    int64_t v;
    if (n->kind == TG_Y_SCALAR) {
        if (!tg_rt_int(rd, n, TG_UNIT_NONE, 1, INT32_MAX, what, &v)) return false;
        dims[0] = (int32_t)v;
        dims[1] = dims[2] = 1;
        return true;
    }
    if (!tg_rt_expect_kind(rd, n, TG_Y_SEQ, what)) return false;
    if (n->n < 1 || n->n > 3) {
        tg_rt_error(rd, n->pos, "%s takes 1 to 3 sizes ([x, y, z]), not %zu", what, n->n);
        return false;
    }
    dims[0] = dims[1] = dims[2] = 1;
    for (size_t i = 0; i < n->n; i++) {
        if (!tg_rt_int(rd, n->items[i], TG_UNIT_NONE, 1, INT32_MAX, what, &v)) return false;
        dims[i] = (int32_t)v;
    }
    return true;
}

static const char *const kernel_keys[] = {
    "name", "short_name", "start", "end", "duration", "device", "stream", "context", "pid", "correlation",
    "launch", "grid", "block", "registers", "static_smem", "dynamic_smem", "repeat",
};
static const char *const memcpy_keys[] = {
    "start", "end", "duration", "device", "stream", "context", "pid", "correlation", "launch",
    "kind", "src_kind", "dst_kind", "bytes", "repeat",
};
static const char *const memset_keys[] = {
    "start", "end", "duration", "device", "stream", "context", "pid", "correlation", "launch",
    "mem_kind", "bytes", "value", "repeat",
};

static bool read_op_fields(tg_rt_reader *rd, const tg_ynode *n, int cat, tg_rt_op *op)
{
    const tg_ynode *v;
    static const char *const what[3] = {"a kernel", "a copy", "a memset"};
    bool ok = read_span(rd, n, what[cat], false, false, &op->start, &op->end);
    ok = ok && i32_key(rd, n, "device", 0, &op->device) && i32_key(rd, n, "stream", 0, &op->stream) &&
         i32_key(rd, n, "context", 0, &op->context) && i32_key(rd, n, "pid", 1, &op->pid);
    if (ok && op->pid > 0xFFFFFF) {
        tg_rt_error(rd, tg_ymap_get(n, "pid")->pos, "pid must fit in 24 bits (nsys's GlobalId), not %d", op->pid);
        ok = false;
    }
    if (ok && (v = tg_ymap_get(n, "correlation")))
        ok = tg_rt_int(rd, v, TG_UNIT_NONE, 1, INT32_MAX, "correlation", &op->correlation);
    if (cat == TG_RT_KERNELS) {
        if (ok && (v = tg_ymap_get(n, "name"))) ok = tg_rt_string(rd, v, "name", &op->name);
        op->short_name = op->name;
        if (ok && (v = tg_ymap_get(n, "short_name"))) ok = tg_rt_string(rd, v, "short_name", &op->short_name);
        ok = ok && read_dims(rd, tg_ymap_get(n, "grid"), "grid", op->grid) &&
             read_dims(rd, tg_ymap_get(n, "block"), "block", op->block) &&
             i32_key(rd, n, "registers", 0, &op->registers) && i32_key(rd, n, "static_smem", 0, &op->static_smem) &&
             i32_key(rd, n, "dynamic_smem", 0, &op->dynamic_smem);
    } else {
        if (ok && (v = tg_ymap_get(n, "bytes")))
            ok = tg_rt_int(rd, v, TG_UNIT_BYTES, 0, INT64_MAX / 2, "bytes", &op->bytes);
    }
    if (cat == TG_RT_MEMCPYS && ok) {
        if ((v = tg_ymap_get(n, "kind"))) ok = enum_value(rd, v, copy_kinds, tg_copy_kind_count, "copy kind", &op->copy_kind);
        op->src_kind = copy_default_kinds[op->copy_kind][0];
        op->dst_kind = copy_default_kinds[op->copy_kind][1];
        if (ok && (v = tg_ymap_get(n, "src_kind")))
            ok = enum_value(rd, v, mem_kinds, tg_mem_kind_count, "memory kind", &op->src_kind);
        if (ok && (v = tg_ymap_get(n, "dst_kind")))
            ok = enum_value(rd, v, mem_kinds, tg_mem_kind_count, "memory kind", &op->dst_kind);
    }
    if (cat == TG_RT_MEMSETS && ok) {
        if ((v = tg_ymap_get(n, "mem_kind")))
            ok = enum_value(rd, v, mem_kinds, tg_mem_kind_count, "memory kind", &op->mem_kind);
        if (ok && (v = tg_ymap_get(n, "value")))
            ok = tg_rt_int(rd, v, TG_UNIT_NONE, INT32_MIN, UINT32_MAX, "value", &op->value);
    }
    return ok;
}

static bool read_op(ev_reader *er, const tg_ynode *n, int cat)
{
    tg_rt_reader *rd = er->rd;
    const char *const *keys = cat == TG_RT_KERNELS ? kernel_keys : cat == TG_RT_MEMCPYS ? memcpy_keys : memset_keys;
    size_t n_keys = cat == TG_RT_KERNELS ? N_OF(kernel_keys) : cat == TG_RT_MEMCPYS ? N_OF(memcpy_keys)
                                                                                    : N_OF(memset_keys);
    char where[32];
    snprintf(where, sizeof where, "a %s entry", cat == TG_RT_KERNELS ? "kernel" : cat == TG_RT_MEMCPYS ? "memcpy" : "memset");
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, where) || !tg_rt_check_keys(rd, n, keys, n_keys, where)) return false;
    tg_rt_op op = {
        .device = TG_RT_DEFAULT_DEVICE, .context = TG_RT_DEFAULT_CONTEXT, .stream = TG_RT_DEFAULT_STREAM,
        .pid = TG_RT_DEFAULT_PID, .correlation = -1, .launch = -1, .name = "kernel",
        .grid = {1, 1, 1}, .block = {256, 1, 1}, .registers = 32, .bytes = TG_RT_DEFAULT_BYTES,
        .copy_kind = 1, .mem_kind = MK_DEVICE,
    };
    if (!read_op_fields(rd, n, cat, &op)) return false;
    const tg_ynode *ln = tg_ymap_get(n, "launch");
    tg_rt_call launch = {0};
    if (ln) {
        if (op.correlation >= 0) {
            tg_rt_error(rd, ln->pos, "give 'launch:' or 'correlation:', not both");
            return false;
        }
        if (!read_launch(er, ln, &op, &launch)) return false;
    }
    repeat rep;
    int64_t last = op.end > launch.end ? op.end : launch.end;
    if (!read_repeat(rd, n, last, &rep)) return false;
    tg_rt_events *ev = er->ev;
    for (int64_t k = 0; k < rep.count; k++) {
        int64_t by = k * rep.every;
        tg_rt_op copy = op;
        copy.start += by;
        copy.end += by;
        if (ln) {
            tg_rt_call c = launch;
            c.start += by;
            c.end += by;
            if (!count_row(er, n)) return false;
            if (!TG_PUSH(er->launches, er->n_launches, er->cap_launches, c)) goto oom;
            copy.launch = (int64_t)er->n_launches - 1;
        }
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(ev->ops[cat], ev->n_ops[cat], ev->cap_ops[cat], copy)) goto oom;
    }
    return true;
oom:
    er->oom = true;
    return false;
}

/* ------------------------------------------------------ host-side events */

static bool read_thread(tg_rt_reader *rd, const tg_ynode *n, int32_t *pid, int32_t *tid)
{
    *pid = TG_RT_DEFAULT_PID;
    *tid = TG_RT_DEFAULT_TID;
    if (!i32_key(rd, n, "pid", 1, pid) || !i32_key(rd, n, "tid", 0, tid)) return false;
    if (*pid > 0xFFFFFF || *tid > 0xFFFFFF) {
        tg_rt_error(rd, n->pos, "pid and tid must fit in 24 bits (nsys's GlobalId)");
        return false;
    }
    return true;
}

static bool read_call(ev_reader *er, const tg_ynode *n)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "pid", "tid", "correlation",
                                       "return_value", "repeat", "stack"};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "an api entry") || !tg_rt_check_keys(rd, n, keys, N_OF(keys), "an api entry"))
        return false;
    tg_rt_call c = {.correlation = -1, .stack = -1};
    const tg_ynode *v = tg_ymap_get(n, "name");
    if (!v) {
        tg_rt_error(rd, n->pos, "an api entry needs 'name:' (e.g. cudaStreamSynchronize)");
        return false;
    }
    bool ok = tg_rt_string(rd, v, "name", &c.name) && read_span(rd, n, "an api entry", false, false, &c.start, &c.end) &&
              read_thread(rd, n, &c.pid, &c.tid) && i32_key(rd, n, "return_value", INT32_MIN, &c.return_value);
    if (ok && (v = tg_ymap_get(n, "correlation")))
        ok = tg_rt_int(rd, v, TG_UNIT_NONE, 1, INT32_MAX, "correlation", &c.correlation);
    repeat rep;
    if (!ok || !read_repeat(rd, n, c.end, &rep) || !read_stack(er, n, &c.stack)) return false;
    for (int64_t k = 0; k < rep.count; k++) {
        tg_rt_call copy = c;
        copy.start += k * rep.every;
        copy.end += k * rep.every;
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(er->ev->calls, er->ev->n_calls, er->ev->cap_calls, copy)) {
            er->oom = true;
            return false;
        }
    }
    return true;
}

static bool read_range(ev_reader *er, const tg_ynode *n)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "pid", "tid", "type", "domain", "repeat"};
    static const char *const types[] = {"pushpop", "startend", "mark"};
    static const int32_t type_ids[] = {59, 60, 34};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "an nvtx entry") || !tg_rt_check_keys(rd, n, keys, N_OF(keys), "an nvtx entry"))
        return false;
    tg_rt_range r = {.event_type = 59};
    const tg_ynode *v = tg_ymap_get(n, "type");
    int32_t t = 0;
    if (v && !enum_value(rd, v, types, 3, "nvtx type", &t)) return false;
    r.event_type = type_ids[t];
    if (!(v = tg_ymap_get(n, "name"))) {
        tg_rt_error(rd, n->pos, "an nvtx entry needs 'name:' (e.g. iteration)");
        return false;
    }
    bool ok = tg_rt_string(rd, v, "name", &r.name) && read_thread(rd, n, &r.pid, &r.tid) &&
              read_span(rd, n, "an nvtx range", r.event_type == 34, r.event_type != 34, &r.start, &r.end);
    if (ok && r.event_type == 34 && r.end != TG_NULL_I64) {
        tg_rt_error(rd, n->pos, "an nvtx mark has a start only");
        ok = false;
    }
    if (ok && (v = tg_ymap_get(n, "domain"))) ok = tg_rt_string(rd, v, "domain", &r.domain);
    repeat rep;
    if (!ok || !read_repeat(rd, n, r.end == TG_NULL_I64 ? r.start : r.end, &rep)) return false;
    for (int64_t k = 0; k < rep.count; k++) {
        tg_rt_range copy = r;
        copy.start += k * rep.every;
        copy.end = shifted(copy.end, k * rep.every);
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(er->ev->ranges, er->ev->n_ranges, er->ev->cap_ranges, copy)) {
            er->oom = true;
            return false;
        }
    }
    return true;
}

static bool read_overhead(ev_reader *er, const tg_ynode *n)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "pid", "tid", "repeat"};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "an overhead entry") ||
        !tg_rt_check_keys(rd, n, keys, N_OF(keys), "an overhead entry"))
        return false;
    tg_rt_overhead o = {.name = TG_RT_OVERHEAD_NAME};
    const tg_ynode *v = tg_ymap_get(n, "name");
    bool ok = (!v || tg_rt_string(rd, v, "name", &o.name)) && read_thread(rd, n, &o.pid, &o.tid) &&
              read_span(rd, n, "an overhead entry", false, false, &o.start, &o.end);
    repeat rep;
    if (!ok || !read_repeat(rd, n, o.end, &rep)) return false;
    for (int64_t k = 0; k < rep.count; k++) {
        tg_rt_overhead copy = o;
        copy.start += k * rep.every;
        copy.end += k * rep.every;
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(er->ev->overheads, er->ev->n_overheads, er->ev->cap_overheads, copy)) {
            er->oom = true;
            return false;
        }
    }
    return true;
}

static bool read_osrt(ev_reader *er, const tg_ynode *n)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "pid", "tid", "return_value", "stack",
                                       "repeat"};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "an osrt entry") || !tg_rt_check_keys(rd, n, keys, N_OF(keys), "an osrt entry"))
        return false;
    tg_rt_osrt o = {.stack = -1};
    const tg_ynode *v = tg_ymap_get(n, "name");
    if (!v) {
        tg_rt_error(rd, n->pos, "an osrt entry needs 'name:' (e.g. usleep, poll, pthread_cond_wait)");
        return false;
    }
    bool ok = tg_rt_string(rd, v, "name", &o.name) && read_thread(rd, n, &o.pid, &o.tid) &&
              read_span(rd, n, "an osrt entry", false, false, &o.start, &o.end);
    if (ok && (v = tg_ymap_get(n, "return_value")))
        ok = tg_rt_int(rd, v, TG_UNIT_NONE, INT64_MIN / 2, INT64_MAX / 2, "return_value", &o.return_value);
    repeat rep;
    if (!ok || !read_repeat(rd, n, o.end, &rep) || !read_stack(er, n, &o.stack)) return false;
    for (int64_t k = 0; k < rep.count; k++) {
        tg_rt_osrt copy = o;
        copy.start += k * rep.every;
        copy.end += k * rep.every;
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(er->ev->osrts, er->ev->n_osrts, er->ev->cap_osrts, copy)) return er->oom = true, false;
    }
    return true;
}

static bool read_libcall(ev_reader *er, const tg_ynode *n, int lib)
{
    static const char *const keys[] = {"name", "start", "end", "duration", "pid", "tid", "repeat"};
    const char *what = lib == 0 ? "a cudnn entry" : "a cublas entry";
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, what) || !tg_rt_check_keys(rd, n, keys, N_OF(keys), what)) return false;
    tg_rt_libcall c = {0};
    const tg_ynode *v = tg_ymap_get(n, "name");
    if (!v) {
        tg_rt_error(rd, n->pos, "%s needs 'name:' (e.g. %s)", what,
                    lib == 0 ? "cudnnConvolutionForward" : "cublasSgemm_v2");
        return false;
    }
    bool ok = tg_rt_string(rd, v, "name", &c.name) && read_thread(rd, n, &c.pid, &c.tid) &&
              read_span(rd, n, what, false, false, &c.start, &c.end);
    repeat rep;
    if (!ok || !read_repeat(rd, n, c.end, &rep)) return false;
    for (int64_t k = 0; k < rep.count; k++) {
        tg_rt_libcall copy = c;
        copy.start += k * rep.every;
        copy.end += k * rep.every;
        if (!count_row(er, n)) return false;
        if (!TG_PUSH(er->ev->libcalls[lib], er->ev->n_libcalls[lib], er->ev->cap_libcalls[lib], copy))
            return er->oom = true, false;
    }
    return true;
}

static bool read_thread_name(ev_reader *er, const tg_ynode *n)
{
    static const char *const keys[] = {"pid", "tid", "name"};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "a threads entry") || !tg_rt_check_keys(rd, n, keys, 3, "a threads entry"))
        return false;
    tg_rt_thread t = {0};
    const tg_ynode *v = tg_ymap_get(n, "name");
    if (!v) {
        tg_rt_error(rd, n->pos, "a threads entry needs 'name:' (e.g. dataloader)");
        return false;
    }
    if (!tg_rt_string(rd, v, "name", &t.name) || !read_thread(rd, n, &t.pid, &t.tid)) return false;
    for (size_t i = 0; i < er->ev->n_threads; i++)
        if (er->ev->threads[i].pid == t.pid && er->ev->threads[i].tid == t.tid) {
            tg_rt_error(rd, n->pos, "thread %d of process %d is named twice", t.tid, t.pid);
            return false;
        }
    if (!TG_PUSH(er->ev->threads, er->ev->n_threads, er->ev->cap_threads, t)) return er->oom = true, false;
    return true;
}

static bool read_gpu(ev_reader *er, const tg_ynode *n, size_t index)
{
    static const char *const keys[] = {"id", "name", "sm_count", "memory", "compute_capability"};
    tg_rt_reader *rd = er->rd;
    if (!tg_rt_expect_kind(rd, n, TG_Y_MAP, "a devices entry") ||
        !tg_rt_check_keys(rd, n, keys, N_OF(keys), "a devices entry"))
        return false;
    tg_rt_gpu g = {.id = (int32_t)index, .name = TG_RT_DEFAULT_GPU_NAME, .sm_count = 132,
                   .memory = INT64_C(150109880320), .cc_major = 9, .cc_minor = 0};
    const tg_ynode *v;
    bool ok = i32_key(rd, n, "id", 0, &g.id) && i32_key(rd, n, "sm_count", 1, &g.sm_count);
    if (ok && (v = tg_ymap_get(n, "name"))) ok = tg_rt_string(rd, v, "name", &g.name);
    if (ok && (v = tg_ymap_get(n, "memory"))) ok = tg_rt_int(rd, v, TG_UNIT_BYTES, 0, INT64_MAX / 2, "memory", &g.memory);
    if (ok && (v = tg_ymap_get(n, "compute_capability"))) {
        int major, minor, used = 0;
        if (v->kind != TG_Y_SCALAR || sscanf(v->value, "%d.%d%n", &major, &minor, &used) != 2 ||
            (size_t)used != v->len || major < 0 || minor < 0) {
            tg_rt_error(rd, v->pos, "compute_capability wants MAJOR.MINOR such as 9.0");
            return false;
        }
        g.cc_major = major;
        g.cc_minor = minor;
    }
    for (size_t i = 0; ok && i < er->ev->n_gpus; i++)
        if (er->ev->gpus[i].id == g.id) {
            tg_rt_error(rd, n->pos, "device %d is described twice", g.id);
            ok = false;
        }
    if (ok && !TG_PUSH(er->ev->gpus, er->ev->n_gpus, er->ev->cap_gpus, g)) er->oom = true;
    return ok && !er->oom;
}

/* ---------------------------------------------------------- correlation */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct fresh_ids {
    int64_t *taken;            /* hand-written ids, sorted */
    size_t n, at;
    int64_t next;
} fresh_ids;

static int64_t fresh_id(fresh_ids *f)
{
    for (;;) {
        int64_t id = f->next++;
        while (f->at < f->n && f->taken[f->at] < id) f->at++;
        if (f->at >= f->n || f->taken[f->at] != id) return id;
    }
}

/* Append the launches after the api entries and give every row its id. */
static bool finish(ev_reader *er)
{
    tg_rt_events *ev = er->ev;
    size_t n_api = ev->n_calls;
    for (size_t i = 0; i < er->n_launches; i++)
        if (!TG_PUSH(ev->calls, ev->n_calls, ev->cap_calls, er->launches[i])) return false;
    fresh_ids f = {.next = 1};
    size_t cap = 0;
    for (size_t i = 0; i < ev->n_calls; i++)
        if (ev->calls[i].correlation >= 0 && !TG_PUSH(f.taken, f.n, cap, ev->calls[i].correlation)) goto oom;
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < ev->n_ops[c]; i++)
            if (ev->ops[c][i].correlation >= 0 && !TG_PUSH(f.taken, f.n, cap, ev->ops[c][i].correlation)) goto oom;
    if (f.n) qsort(f.taken, f.n, sizeof *f.taken, cmp_i64);
    for (size_t i = 0; i < ev->n_calls; i++)
        if (ev->calls[i].correlation < 0) ev->calls[i].correlation = fresh_id(&f);
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < ev->n_ops[c]; i++) {
            tg_rt_op *op = &ev->ops[c][i];
            if (op->launch >= 0) {
                op->launch += (int64_t)n_api;
                op->correlation = ev->calls[op->launch].correlation;
            } else if (op->correlation < 0) {
                op->correlation = fresh_id(&f);
            }
        }
    free(f.taken);
    return true;
oom:
    free(f.taken);
    return false;
}

/* ------------------------------------------------------------------ entry */

void tg_rt_events_free(tg_rt_events *ev)
{
    if (!ev) return;
    for (int c = 0; c < 3; c++) free(ev->ops[c]);
    free(ev->calls);
    free(ev->ranges);
    free(ev->gpus);
    free(ev->overheads);
    free(ev->osrts);
    for (int i = 0; i < 2; i++) free(ev->libcalls[i]);
    free(ev->threads);
    for (size_t i = 0; i < ev->n_stacks; i++) free(ev->stacks[i].frames);
    free(ev->stacks);
    free(ev);
}

tg_rt_events *tg_rt_events_read(tg_rt_reader *rd, const tg_ynode *events)
{
    if (!tg_rt_expect_kind(rd, events, TG_Y_MAP, "input.events")) return NULL;
    if (!tg_rt_check_keys(rd, events, tg_rt_cat_names, TG_RT_CAT_COUNT, "input.events")) return NULL;
    ev_reader er = {.rd = rd, .ev = calloc(1, sizeof *er.ev)};
    if (!er.ev) {
        tg_diag_error(rd->ctx.diag, TG_EINTERNAL, "out of memory");
        return NULL;
    }
    bool ok = true;
    for (size_t i = 0; i < events->n && !er.oom; i++) {
        const char *key = events->items[i]->value;
        const tg_ynode *list = events->vals[i];
        int cat = 0;
        while (cat < TG_RT_CAT_COUNT && strcmp(tg_rt_cat_names[cat], key) != 0) cat++;
        er.ev->listed[cat] = true;
        /* `memsets:` with nothing after it: recorded, but none happened */
        if (list->kind == TG_Y_SCALAR && list->len == 0 && list->style == TG_YS_PLAIN) continue;
        if (!tg_rt_expect_kind(rd, list, TG_Y_SEQ, key)) {
            ok = false;
            continue;
        }
        for (size_t j = 0; j < list->n && !er.oom; j++) {
            const tg_ynode *item = list->items[j];
            switch (cat) {
            case TG_RT_KERNELS: case TG_RT_MEMCPYS: case TG_RT_MEMSETS: ok &= read_op(&er, item, cat); break;
            case TG_RT_API: ok &= read_call(&er, item); break;
            case TG_RT_NVTX: ok &= read_range(&er, item); break;
            case TG_RT_DEVICES: ok &= read_gpu(&er, item, j); break;
            case TG_RT_OSRT: ok &= read_osrt(&er, item); break;
            case TG_RT_THREADS: ok &= read_thread_name(&er, item); break;
            case TG_RT_CUDNN: ok &= read_libcall(&er, item, 0); break;
            case TG_RT_CUBLAS: ok &= read_libcall(&er, item, 1); break;
            default: ok &= read_overhead(&er, item); break;
            }
            if (er.ev->n_rows > TG_RT_MAX_ROWS) break;
        }
    }
    if (ok && !er.oom && !finish(&er)) er.oom = true;
    free(er.launches);
    if (er.oom) tg_diag_error(rd->ctx.diag, TG_EINTERNAL, "out of memory");
    if (!ok || er.oom) {
        rd->failed = true;
        tg_rt_events_free(er.ev);
        return NULL;
    }
    return er.ev;
}
