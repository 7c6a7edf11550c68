/*
** The in-memory trace builder of mtrace.h.
*/
#include "mtrace.h"
#include "model/source.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

tg_trace *mt_new(void)
{
    tg_trace *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->strings = tg_strpool_new();
    assert_non_null(t->strings);
    t->first_ns = t->last_ns = TG_NULL_I64;
    t->session_start_ns = TG_NULL_I64;
    return t;
}

void mt_free(tg_trace *t)
{
    if (!t) return;
    tg_strpool_free(t->strings);
    free(t->kernels); free(t->memcpys); free(t->memsets); free(t->apis); free(t->nvtx);
    free(t->syncs); free(t->overheads); free(t->gpus); free(t->processes);
    free(t);
}

int32_t mt_str(tg_trace *t, const char *s)
{
    if (!s) return -1;
    int32_t id = tg_strpool_intern(t->strings, s, strlen(s));
    assert_true(id >= 0);
    return id;
}

const char *mt_s(const tg_trace *t, int32_t id)
{
    return id < 0 ? "(null)" : tg_strpool_get(t->strings, id);
}

static void widen(tg_trace *t, int64_t start, int64_t end)
{
    if (t->first_ns == TG_NULL_I64 || start < t->first_ns) t->first_ns = start;
    if (end != TG_NULL_I64 && (t->last_ns == TG_NULL_I64 || end > t->last_ns)) t->last_ns = end;
}

#define APPEND(arr, n, row) do { \
        (arr) = realloc((arr), ((n) + 1) * sizeof *(arr)); \
        assert_non_null(arr); \
        (arr)[(n)] = (row); \
        (n)++; \
    } while (0)

size_t mt_api(tg_trace *t, int32_t pid, int32_t tid, int64_t corr, const char *name,
              int64_t start, int64_t end)
{
    tg_api a = {.rowid = (int64_t)t->n_apis + 1, .start = start, .end = end, .correlation = corr,
                .pid = pid, .tid = tid, .name = mt_str(t, name)};
    APPEND(t->apis, t->n_apis, a);
    widen(t, start, end);
    t->has_table[TG_TABLE_RUNTIME] = true;
    return t->n_apis - 1;
}

size_t mt_kernel(tg_trace *t, int32_t pid, int32_t device, int64_t corr, const char *name,
                 int64_t start, int64_t end)
{
    tg_kernel k = {.rowid = (int64_t)t->n_kernels + 1, .start = start, .end = end,
                   .correlation = corr, .pid = pid, .device = device, .stream = 7,
                   .name = mt_str(t, name), .short_name = mt_str(t, name)};
    APPEND(t->kernels, t->n_kernels, k);
    widen(t, start, end);
    t->has_table[TG_TABLE_KERNEL] = true;
    return t->n_kernels - 1;
}

size_t mt_memcpy(tg_trace *t, int32_t pid, int32_t device, int64_t corr, int32_t copy_kind,
                 int32_t src_kind, int32_t dst_kind, int64_t bytes, int64_t start, int64_t end)
{
    tg_memop r = {.rowid = (int64_t)t->n_memcpys + 1, .start = start, .end = end,
                  .correlation = corr, .bytes = bytes, .pid = pid, .device = device,
                  .copy_kind = copy_kind, .src_kind = src_kind, .dst_kind = dst_kind,
                  .src_device = device, .dst_device = device};
    APPEND(t->memcpys, t->n_memcpys, r);
    widen(t, start, end);
    t->has_table[TG_TABLE_MEMCPY] = true;
    return t->n_memcpys - 1;
}

size_t mt_memset(tg_trace *t, int32_t pid, int32_t device, int64_t corr, int32_t mem_kind,
                 int64_t bytes, int64_t start, int64_t end)
{
    tg_memop r = {.rowid = (int64_t)t->n_memsets + 1, .start = start, .end = end,
                  .correlation = corr, .bytes = bytes, .pid = pid, .device = device,
                  .copy_kind = -1, .src_kind = mem_kind, .dst_kind = -1};
    APPEND(t->memsets, t->n_memsets, r);
    widen(t, start, end);
    t->has_table[TG_TABLE_MEMSET] = true;
    return t->n_memsets - 1;
}

size_t mt_nvtx(tg_trace *t, int32_t pid, int32_t tid, int32_t event_type, const char *name,
               int64_t start, int64_t end)
{
    tg_nvtx r = {.rowid = (int64_t)t->n_nvtx + 1, .start = start, .end = end,
                 .event_type = event_type, .pid = pid, .tid = tid, .name = mt_str(t, name),
                 .domain = -1};
    APPEND(t->nvtx, t->n_nvtx, r);
    widen(t, start, end);
    t->has_table[TG_TABLE_NVTX] = true;
    return t->n_nvtx - 1;
}

size_t mt_overhead(tg_trace *t, int32_t pid, const char *name, int64_t start, int64_t end)
{
    tg_overhead o = {.rowid = (int64_t)t->n_overheads + 1, .start = start, .end = end,
                     .pid = pid, .tid = pid, .name = mt_str(t, name)};
    APPEND(t->overheads, t->n_overheads, o);
    t->has_table[TG_TABLE_OVERHEAD] = true;
    return t->n_overheads - 1;
}

void mt_gpu(tg_trace *t, int32_t id, const char *name)
{
    tg_gpu g = {.id = id, .name = mt_str(t, name), .sm_count = 132};
    APPEND(t->gpus, t->n_gpus, g);
    t->has_table[TG_TABLE_GPU] = true;
}

size_t mt_launch(tg_trace *t, int32_t pid, int32_t tid, int32_t device, int64_t corr,
                 const char *kernel, int64_t call_start, int64_t call_end,
                 int64_t start, int64_t end)
{
    mt_api(t, pid, tid, corr, "cuLaunchKernel", call_start, call_end);
    return mt_kernel(t, pid, device, corr, kernel, start, end);
}

void mt_finish(tg_trace *t)
{
    (void)t; /* first/last are kept current by every append */
}

tg_model *mt_build(tg_trace *t)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_model *m = tg_model_build(t, NULL, &d);
    if (!m && d.n) fail_msg("tg_model_build: %s", d.msgs[0].text);
    assert_non_null(m);
    tg_diag_clear(&d);
    return m;
}

int64_t mt_field(const tg_model *m, const char *source, const char *field, size_t row)
{
    const tg_source_def *s = tg_source_find(source);
    assert_non_null(s);
    const tg_field_def *f = tg_field_find(s->id, field);
    assert_non_null(f);
    tg_source_view v = tg_model_source(m, s->id);
    assert_true(row < v.n);
    tg_value x = tg_field_get(m, &v, f, row);
    if (x.type == TG_TY_NULL) return TG_NULL_I64;
    assert_int_equal(x.type, TG_TY_INT);
    return x.u.i;
}
