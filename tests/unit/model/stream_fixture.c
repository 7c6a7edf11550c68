/*
** The helpers of stream_fixture.h: SQL row writers for the fixture builder,
** model builds, field-by-field comparisons of a full and a streamed build,
** and the logging keep_api the lean-load tests stream with.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "stream_fixture.h"

static const char *const strings[S_COUNT] = {
    [S_LAUNCH] = "cudaLaunchKernel_v7000", [S_GRAPH] = "cudaGraphLaunch_v10000",
    [S_MEMCPY] = "cudaMemcpy_v3020", [S_MEMCPY_ASYNC] = "cudaMemcpyAsync_v3020",
    [S_MEMSET_ASYNC] = "cudaMemsetAsync_v3020", [S_STREAM_SYNC] = "cudaStreamSynchronize_v3020",
    [S_GET_LAST_ERROR] = "cudaGetLastError_v3020", [S_DEVICE_SYNC] = "cudaDeviceSynchronize_v3020",
    [S_MALLOC] = "cudaMalloc_v3020",
    [S_GEMM] = "void gemm_kernel<float>(int, const float*, float*)", [S_GEMM_SHORT] = "gemm_kernel",
    [S_RELU] = "void relu_kernel(float*, int)", [S_RELU_SHORT] = "relu_kernel",
    [S_NCCL] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    [S_NCCL_SHORT] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL", [S_ITERATION] = "iteration",
    [S_ORPHAN] = "orphan_kernel", [S_OVERHEAD] = "CUDA profiling overhead",
    [S_MEMCPY_OUTER] = "cudaMemcpy", [S_DEVICE_SYNC_OUTER] = "cudaDeviceSynchronize",
    [S_LAUNCH_OUTER] = "cudaLaunchKernel",
};

/* ---------------------------------------------------------------- fixture SQL */

void sql_strings(char **sql)
{
    for (int i = 1; i < S_COUNT; i++)
        assert_true(tg_fixture_append(sql, "INSERT INTO StringIds VALUES (%d, '%s');\n", i, strings[i]));
}

void sql_call(char **sql, long long start, long long end, long long corr, int name)
{
    assert_true(tg_fixture_append(sql,
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,"
        " nameId, returnValue) VALUES (%lld, %lld, 1, " GTID ", %lld, %d, 0);\n", start, end, corr, name));
}

void sql_kernel(char **sql, long long start, long long end, int device, int stream, long long corr,
                int name, int short_name)
{
    assert_true(tg_fixture_append(sql,
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
        " globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,"
        " blockZ, staticSharedMemory, dynamicSharedMemory) VALUES (%lld, %lld, %d, 1, %d, %lld, " GPID
        ", %d, %d, 64, 128, 1, 1, 256, 1, 1, 0, 4096);\n", start, end, device, stream, corr, name, short_name));
}

void sql_memcpy(char **sql, long long start, long long end, long long corr, long long bytes, int kind,
                int src_kind, int dst_kind)
{
    assert_true(tg_fixture_append(sql,
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
        " globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) VALUES (%lld, %lld, 0,"
        " 1, 7, %lld, " GPID ", %lld, %d, %d, %d, 0, 0);\n", start, end, corr, bytes, kind, src_kind,
        dst_kind));
}

void sql_range(char **sql, long long start, long long end, const char *text, int text_id)
{
    if (text)
        assert_true(tg_fixture_append(sql, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid,"
                                      " domainId) VALUES (%lld, %lld, 59, '%s', " GTID ", 0);\n", start, end, text));
    else
        assert_true(tg_fixture_append(sql, "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid,"
                                      " domainId) VALUES (%lld, %lld, 59, %d, " GTID ", 0);\n", start, end, text_id));
}

void sql_devices(char **sql)
{
    assert_true(tg_fixture_append(sql,
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, computeMajor, computeMinor)"
        " VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 85045460992, 132, 9, 0),"
        " (0, 1, 'NVIDIA H100 80GB HBM3', 85045460992, 132, 9, 0);\n"
        "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (" GPID ", 1234, 'train.py');\n"
        "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs) VALUES (1700000000000000000);\n"));
}

/* ---------------------------------------------------------------- builds */

void build(built *b, const char *path, const tg_load_opts *opts, const tg_model_params *p)
{
    tg_diag_init(&b->d);
    b->t = opts ? tg_trace_open_with(path, opts, &b->d) : tg_trace_open(path, &b->d);
    assert_non_null(b->t);
    b->m = tg_model_build(b->t, p, &b->d);
    if (!b->m && b->d.n) fail_msg("%s", b->d.msgs[0].text);
    assert_non_null(b->m);
    assert_int_equal(b->d.n_errors, 0);
}

void unbuild(built *b)
{
    tg_model_free(b->m);
    tg_trace_close(b->t);
    tg_diag_clear(&b->d);
}

/* ---------------------------------------------------------------- comparisons */

const char *str_of(const tg_trace *t, int32_t id)
{
    const char *s = tg_trace_str(t, id);
    return s ? s : "<null>";
}

/* Doubles of rows x and y: equal, or both NaN. */
#define FD(f) same_double(x->f, y->f)

static void same_double(double x, double y)
{
    if (isnan(x) || isnan(y)) assert_true(isnan(x) && isnan(y));
    else assert_true(x == y);
}

void same_kspans(const tg_model *a, const tg_model *b)
{
    const tg_trace *ta = a->trace, *tb = b->trace;
    SAME(ta->n_kernels, tb->n_kernels);
    for (size_t i = 0; i < ta->n_kernels; i++) {
        const tg_kspan *x = tg_model_kernel(a, i), *y = tg_model_kernel(b, i);
        F(rowid); F(start); F(end); F(correlation); F(queue); F(pid); F(device); FS(name); F(nccl);
        F(launched);
        /* a trace's own kernel rows carry the queue the model read */
        if (ta->kernels) SAME(ta->kernels[i].queue, y->queue);
        if (tb->kernels) SAME(tb->kernels[i].queue, y->queue);
    }
}

/* Kernel rows of both traces (when both hold tg_kernel rows). */
static void same_kernel_rows(const tg_trace *ta, const tg_trace *tb, bool b_streamed)
{
    for (size_t i = 0; i < ta->n_kernels; i++) {
        const tg_kernel *x = &ta->kernels[i], *y = &tb->kernels[i];
        F(rowid); F(queue); F(launch_end); FS(api_name); F(tid); FS(nvtx); F(iteration); F(nccl); F(steady);
        if (b_streamed) SAME(y->api, -1);       /* no index into a streamed table */
        else F(api);
        if (x->api >= 0) SAME(ta->apis[x->api].correlation, x->correlation);
        else SAME(x->launch_end, TG_NULL_I64);
    }
}

static void same_memops(const tg_trace *ta, const tg_memop *x, const tg_trace *tb, const tg_memop *y, size_t n,
                        bool b_streamed)
{
    for (size_t i = 0; i < n; i++, x++, y++) {
        F(rowid); F(start); F(end); F(correlation); F(bytes); F(device);
        FS(kind_name); FS(src_kind_name); FS(dst_kind_name);
        FS(api_name); F(tid); F(iteration); F(api_sync); F(api_async); F(steady); F(launched);
        if (b_streamed) SAME(y->api, -1);
        else F(api);
    }
}

void same_iterations(const tg_model *a, const tg_model *b)
{
    const tg_trace *ta = a->trace, *tb = b->trace;
    SAME(a->n_iterations, b->n_iterations);
    for (size_t i = 0; i < a->n_iterations; i++) {
        const tg_iteration *x = &a->iterations[i], *y = &b->iterations[i];
        F(rowid); F(index); FS(name); F(pid); F(tid); F(start); F(end); F(duration); F(warmup);
        F(period); F(gpu_end); F(gpu_time); F(gpu_span); F(kernels); F(blocking_calls);
    }
}

static void same_gaps(const tg_model *a, const tg_model *b)
{
    SAME(a->n_gaps, b->n_gaps);
    for (size_t i = 0; i < a->n_gaps; i++) {
        const tg_gap *x = &a->gaps[i], *y = &b->gaps[i];
        F(rowid); F(table); F(next_rowid); F(next_table); F(start); F(end); F(duration); F(device);
        F(pid); F(in_steady_state);
    }
}

void same_devices(const tg_model *a, const tg_model *b)
{
    const tg_trace *ta = a->trace, *tb = b->trace;
    SAME(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        const tg_device *x = &a->devices[i], *y = &b->devices[i];
        F(rowid); F(device); FS(name); F(start); F(end); F(span); FD(busy_frac); FD(busy_frac_steady);
        F(kernels); F(kernel_time); F(nccl_time); F(exposed_nccl_time); FD(nccl_overlap); F(queue_p50);
        F(gaps); F(busy_time_steady); F(copy_time_steady); FD(copy_frac_steady);
    }
}

void same_facts(const tg_model *a, const tg_model *b)
{
    const tg_trace *ta = a->trace, *tb = b->trace;
    const tg_trace_facts *x = &a->facts, *y = &b->facts;
    F(rowid); F(duration); FS(schema_version); FS(nsys_version); F(kernels); F(memcpys); F(memsets);
    F(api_calls); F(nvtx_ranges); F(devices); F(iterations); F(steady_iterations); F(steady_duration);
    F(blocking_calls); F(blocked_time);
}

static void same_nvtx(const tg_trace *ta, const tg_trace *tb)
{
    SAME(ta->n_nvtx, tb->n_nvtx);
    for (size_t i = 0; i < ta->n_nvtx; i++) {
        const tg_nvtx *x = &ta->nvtx[i], *y = &tb->nvtx[i];
        F(rowid); F(duration); F(depth); F(gpu_time); F(gpu_span); F(iteration);
    }
}

void same_api(const tg_trace *ta, const tg_api *x, const tg_trace *tb, const tg_api *y)
{
    F(rowid); F(start); F(end); F(correlation); F(pid); F(tid); FS(name); F(return_value);
    FS(base_name); F(iteration); F(dup_of); F(driver); F(blocking); F(steady);
}

/* Everything but the api rows (b may hold a subset of them). */
void same_models(const tg_model *a, const tg_model *b, bool b_streamed)
{
    const tg_trace *ta = a->trace, *tb = b->trace;
    SAME(ta->first_ns, tb->first_ns);
    SAME(ta->last_ns, tb->last_ns);
    SAME(a->steady_start, b->steady_start);
    SAME(a->steady_end, b->steady_end);
    SAME(a->has_iterations, b->has_iterations);
    same_kspans(a, b);
    if (ta->kernels && tb->kernels) same_kernel_rows(ta, tb, b_streamed);
    SAME(ta->n_memcpys, tb->n_memcpys);
    same_memops(ta, ta->memcpys, tb, tb->memcpys, ta->n_memcpys, b_streamed);
    SAME(ta->n_memsets, tb->n_memsets);
    same_memops(ta, ta->memsets, tb, tb->memsets, ta->n_memsets, b_streamed);
    same_iterations(a, b);
    same_gaps(a, b);
    same_devices(a, b);
    same_facts(a, b);
    same_nvtx(ta, tb);
}

/* ---------------------------------------------------------------- keep_api */

bool keep_blocking(void *ctx, const tg_model *m, const tg_api *row)
{
    keep_log *k = ctx;
    if (k->calls < LOG_MAX) {
        k->seen[k->calls].rowid = row->rowid;
        k->seen[k->calls].iteration = row->iteration;
        k->seen[k->calls].steady = row->steady;
        k->seen[k->calls].blocking = row->blocking;
        snprintf(k->seen[k->calls].name, sizeof k->seen[0].name, "%s", str_of(m->trace, row->base_name));
    }
    k->calls++;
    return row->blocking;
}
