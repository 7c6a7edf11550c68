/*
** The Kineto reader (engine/trace/trace_kineto*.c, docs/kineto.md) on JSON
** written here: every row field it maps (kernels, copies and memsets with
** their kinds from the name, API calls, ranges, ProfilerStep#N among the
** cpu_ops, process names, deviceProperties, distributedInfo), exact us ->
** ns conversion, rowids as traceEvents indices, the launching process of
** GPU work by correlation, the 2021 spellings, keys in any order, a bare
** array, what is not loaded (cpu_op, gpu_user_annotation, flows), the
** tables a trace without CUDA lacks, and the format and lean-load options.
** Big plain files are parsed in two halves (trace_kineto.c): a 20 MiB trace
** must read the same plain and gzip-compressed (one parser), also when the
** split falls inside an event's args (the halves are given up) and when
** the second half is invalid (the same sentence as one parser's).
** Duplicate keys (docs/kineto.md): every key the reader uses, met twice in
** its object (top level, event, args, deviceProperties entry,
** distributedInfo), is refused with one sentence naming it, also inside an
** event the reader would elide and across the two halves; other keys may
** repeat.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/trace.h"

static char *write_temp(const char *text)
{
    char path[] = "/tmp/tg-kineto-unit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    char *p = strdup(path);
    assert_non_null(p);
    return p;
}

static tg_trace *open_text(const char *text, const tg_load_opts *opts)
{
    char *path = write_temp(text);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = opts ? tg_trace_open_with(path, opts, &d) : tg_trace_open(path, &d);
    if (!t) fail_msg("not loaded: %s", d.n ? d.msgs[0].text : "?");
    tg_diag_clear(&d);
    unlink(path);
    free(path);
    return t;
}

static const char modern[] =
    "{\"schemaVersion\": 1,\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#3\", \"pid\": 50, \"tid\": 50, \"ts\": 100.0005, \"dur\": 900},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 50, \"tid\": 50, \"ts\": 101, \"dur\": 5, \"args\": {\"device\": 9}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"train_step\", \"pid\": 50, \"tid\": 50, \"ts\": 102, \"dur\": 800.25},\n"
    "  {\"args\": {\"correlation\": 7, \"cbid\": 211}, \"dur\": 2.0004, \"ts\": 110.123, \"tid\": 51, \"pid\": 50, \"name\": \"cudaLaunchKernel\", \"cat\": \"cuda_runtime\", \"ph\": \"X\"},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<float, 128>(float const*, int)\", \"pid\": 1, \"tid\": 20, \"ts\": 5137409743004.483, \"dur\": 3.84,\n"
    "   \"args\": {\"queued\": 0, \"device\": 1, \"context\": 3, \"stream\": 20, \"correlation\": 7, \"registers per thread\": 18, \"shared memory\": 1024, \"grid\": [4096, 2, 1], \"block\": [128, 1, 1]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuMemcpyDtoHAsync_v2\", \"pid\": 50, \"tid\": 50, \"ts\": 200, \"dur\": 3, \"args\": {\"correlation\": 8}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\", \"pid\": 1, \"tid\": 20, \"ts\": 201, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 20, \"correlation\": 8, \"bytes\": 4096}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 1, \"tid\": 20, \"ts\": 205, \"dur\": 1, \"args\": {\"device\": 1, \"correlation\": 99, \"bytes\": 16}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 1, \"tid\": 20, \"ts\": 210, \"dur\": 0.5, \"args\": {\"device\": 1, \"stream\": 20, \"bytes\": 4}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"train_step\", \"pid\": 1, \"tid\": 20, \"ts\": 110, \"dur\": 100},\n"
    "  {\"ph\": \"s\", \"id\": 7, \"pid\": 50, \"tid\": 51, \"ts\": 110.123, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
    "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 50, \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n"
    "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n"
    "  {\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": 1, \"pid\": 1, \"tid\": 0, \"args\": {\"labels\": \"GPU 1\"}}\n"
    " ],\n"
    " \"deviceProperties\": [{\"id\": 1, \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150109880320, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
    " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8}\n"
    "}\n";

static const char *str(const tg_trace *t, int32_t id)
{
    const char *s = tg_trace_str(t, id);
    return s ? s : "(null)";
}

static void test_kernel_row(void **state)
{
    (void)state;
    tg_trace *t = open_text(modern, NULL);
    assert_int_equal(t->format, TG_FORMAT_KINETO);
    assert_int_equal(t->n_kernels, 1);
    const tg_kernel *k = &t->kernels[0];
    assert_int_equal(k->rowid, 4);                  /* its index in traceEvents */
    assert_int_equal(k->start, 5137409743004483LL); /* exact, not via a double */
    assert_int_equal(k->end - k->start, 3840);
    assert_int_equal(k->device, 1);
    assert_int_equal(k->context, 3);
    assert_int_equal(k->stream, 20);
    assert_int_equal(k->correlation, 7);
    assert_int_equal(k->pid, 50);                   /* the launching process, not pid 1 (the GPU) */
    assert_int_equal(k->grid_x, 4096);
    assert_int_equal(k->grid_y, 2);
    assert_int_equal(k->block_x, 128);
    assert_int_equal(k->registers, 18);
    assert_int_equal(k->static_smem, 1024);
    assert_string_equal(str(t, k->name), "void gemm<float, 128>(float const*, int)");
    assert_string_equal(str(t, k->short_name), "gemm");
    tg_trace_close(t);
}

static void test_memops(void **state)
{
    (void)state;
    tg_trace *t = open_text(modern, NULL);
    assert_int_equal(t->n_memcpys, 2);
    const tg_memop *d2h = &t->memcpys[0], *h2d = &t->memcpys[1];
    assert_int_equal(d2h->copy_kind, 2);            /* DtoH */
    assert_int_equal(d2h->src_kind, 2);             /* Device */
    assert_int_equal(d2h->dst_kind, 1);             /* Pinned */
    assert_int_equal(d2h->bytes, 4096);
    assert_int_equal(d2h->pid, 50);
    assert_int_equal(h2d->copy_kind, 1);            /* HtoD */
    assert_int_equal(h2d->src_kind, 0);             /* Pageable */
    assert_int_equal(h2d->dst_kind, 2);
    assert_int_equal(h2d->stream, 20);              /* no args.stream: the tid */
    assert_int_equal(t->n_memsets, 1);
    assert_int_equal(t->memsets[0].copy_kind, -1);
    assert_int_equal(t->memsets[0].src_kind, 2);
    assert_int_equal(t->memsets[0].end - t->memsets[0].start, 500);
    tg_trace_close(t);
}

static void test_apis_ranges_meta(void **state)
{
    (void)state;
    tg_trace *t = open_text(modern, NULL);
    assert_int_equal(t->n_apis, 2);
    assert_string_equal(str(t, t->apis[0].name), "cudaLaunchKernel");   /* keys in any order */
    assert_int_equal(t->apis[0].start, 110123);
    assert_int_equal(t->apis[0].end - t->apis[0].start, 2000);          /* 2.0004 us rounds down */
    assert_int_equal(t->apis[0].tid, 51);
    assert_string_equal(str(t, t->apis[1].name), "cuMemcpyDtoHAsync_v2");
    /* ProfilerStep#3 and train_step; not aten::mm, not the GPU annotation */
    assert_int_equal(t->n_nvtx, 2);
    assert_string_equal(str(t, t->nvtx[0].name), "ProfilerStep#3");
    assert_int_equal(t->nvtx[0].start, 100001);                         /* .0005 rounds up */
    assert_int_equal(t->nvtx[0].event_type, 59);
    assert_string_equal(str(t, t->nvtx[1].name), "train_step");
    assert_int_equal(t->n_processes, 1);
    assert_int_equal(t->processes[0].pid, 50);
    assert_string_equal(str(t, t->processes[0].name), "python3");
    assert_int_equal(t->n_gpus, 1);
    assert_int_equal(t->gpus[0].id, 1);
    assert_string_equal(str(t, t->gpus[0].name), "NVIDIA H200");
    assert_int_equal(t->gpus[0].sm_count, 132);
    assert_int_equal(t->gpus[0].compute_major, 9);
    assert_int_equal(t->rank, 3);
    assert_int_equal(t->world_size, 8);
    assert_string_equal(t->schema_version, "1");
    assert_true(t->has_table[TG_TABLE_KERNEL] && t->has_table[TG_TABLE_RUNTIME] && t->has_table[TG_TABLE_NVTX]);
    assert_false(t->has_table[TG_TABLE_SYNC]);
    assert_string_equal(tg_trace_table_label(t, TG_TABLE_KERNEL), "kernel events");
    assert_non_null(strstr(tg_trace_table_option(t, TG_TABLE_KERNEL), "ProfilerActivity.CUDA"));
    /* what the layers above read instead of the format (trace.h) */
    assert_int_equal(tg_trace_query_lang(t), TG_QUERY_JQ);
    assert_string_equal(tg_trace_cite_table(t, TG_TABLE_KERNEL), "traceEvents");
    assert_string_equal(tg_trace_cite_table(t, TG_TABLE_NVTX), "traceEvents");
    assert_string_equal(tg_trace_rank_source(t), "distributedInfo");
    assert_non_null(strstr(tg_trace_never_records(t, TG_TABLE_OSRT), "does not record"));
    assert_non_null(strstr(tg_trace_never_records(t, TG_TABLE_CALLCHAINS), "no call stacks"));
    assert_null(tg_trace_never_records(t, TG_TABLE_KERNEL));
    assert_string_equal(tg_trace_table_also(t, TG_TABLE_NVTX), "");
    tg_trace_close(t);
}

static void test_lean_load(void **state)
{
    (void)state;
    tg_load_opts lean = {.kernel_rows = false, .defer_api = true};
    tg_trace *t = open_text(modern, &lean);
    assert_null(t->kernels);
    assert_non_null(t->kspans);
    assert_int_equal(t->n_kernels, 1);
    assert_int_equal(t->kspans[0].pid, 50);
    assert_int_equal(t->kspans[0].device, 1);
    assert_false(t->apis_deferred);                 /* read as rows: a JSON is read once */
    assert_int_equal(t->n_apis, 2);
    tg_trace_close(t);
}

/* Two CPU processes: GPU work gets the process of the call with its
** correlation id (the later call when two carry one; a sparse id as
** well as small ones), the busiest process when no call carries it. */
static void test_two_processes(void **state)
{
    (void)state;
    static const char two[] =
        "{\"traceEvents\": [\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 50, \"tid\": 50, \"ts\": 10, \"dur\": 1, \"args\": {\"correlation\": 7}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 60, \"tid\": 60, \"ts\": 11, \"dur\": 1, \"args\": {\"correlation\": 8}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 50, \"tid\": 50, \"ts\": 12, \"dur\": 1, \"args\": {\"correlation\": 9}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 60, \"tid\": 60, \"ts\": 13, \"dur\": 1, \"args\": {\"correlation\": 9}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 60, \"tid\": 60, \"ts\": 14, \"dur\": 1, \"args\": {\"correlation\": 1099511627776}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 50, \"tid\": 50, \"ts\": 15, \"dur\": 1, \"args\": {\"correlation\": 10}},\n"
        " {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 50, \"tid\": 50, \"ts\": 16, \"dur\": 1, \"args\": {\"correlation\": 11}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k7\", \"pid\": 1, \"tid\": 7, \"ts\": 20, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 7}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k8\", \"pid\": 1, \"tid\": 7, \"ts\": 21, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 8}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k9\", \"pid\": 1, \"tid\": 7, \"ts\": 22, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 9}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kbig\", \"pid\": 1, \"tid\": 7, \"ts\": 23, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 1099511627776}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"knone\", \"pid\": 1, \"tid\": 7, \"ts\": 24, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 99}},\n"
        " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 1, \"tid\": 7, \"ts\": 25, \"dur\": 1, \"args\": {\"device\": 1, \"stream\": 7, \"correlation\": 8, \"bytes\": 16}}\n"
        "]}";
    tg_trace *t = open_text(two, NULL);
    assert_int_equal(t->n_apis, 7);
    assert_int_equal(t->n_kernels, 5);
    static const struct { const char *name; int32_t pid; } want[] = {
        {"k7", 50}, {"k8", 60}, {"k9", 60}, {"kbig", 60}, {"knone", 50}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_string_equal(str(t, t->kernels[i].name), want[i].name);
        assert_int_equal(t->kernels[i].pid, want[i].pid);
    }
    assert_int_equal(t->n_memcpys, 1);
    assert_int_equal(t->memcpys[0].pid, 60);
    tg_trace_close(t);
}

static void test_legacy_2021(void **state)
{
    (void)state;
    static const char legacy[] =
        "{\"schemaVersion\": 1, \"traceEvents\": [\n"
        " {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#5\", \"pid\": 25738, \"tid\": \"25738\", \"ts\": 1623142623529000, \"dur\": 5000},\n"
        " {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 25738, \"tid\": \"25738\", \"ts\": 1623142623529088, \"dur\": 2022, \"args\": {\"correlation\": 34417, \"external id\": 537}},\n"
        " {\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1623142623529248, \"dur\": 1940, \"args\": {\"device\": 0, \"correlation\": 34417, \"bytes\": 19267584}},\n"
        " {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1623142623531625, \"dur\": 2, \"args\": {\"correlation\": 1}}\n"
        "]}";
    tg_trace *t = open_text(legacy, NULL);
    assert_int_equal(t->n_apis, 1);
    assert_int_equal(t->apis[0].tid, 25738);
    assert_int_equal(t->n_memcpys, 1);
    assert_int_equal(t->memcpys[0].stream, 7);      /* "stream 7" */
    assert_int_equal(t->memcpys[0].pid, 25738);
    assert_int_equal(t->n_kernels, 1);
    assert_int_equal(t->kernels[0].device, 0);      /* no args.device: the pid */
    assert_int_equal(t->kernels[0].stream, 7);
    assert_int_equal(t->n_nvtx, 1);
    assert_false(t->has_table[TG_TABLE_GPU]);
    tg_trace_close(t);
}

static void test_bare_array_and_cpu_only(void **state)
{
    (void)state;
    tg_trace *t = open_text("[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": 1.5e3, \"dur\": 10}]", NULL);
    assert_int_equal(t->n_nvtx, 1);
    assert_int_equal(t->nvtx[0].start, 1500000);   /* exponent form */
    assert_false(t->has_table[TG_TABLE_KERNEL]);   /* CUDA not recorded */
    assert_false(t->has_table[TG_TABLE_RUNTIME]);
    assert_true(t->has_table[TG_TABLE_NVTX]);
    tg_trace_close(t);
}

/* ---------------------------------------------------------------- elided events */

static void expect_refused(const char *text, const char *part)
{
    char *path = write_temp(text);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    if (t) fail_msg("loaded, but should have been refused: %s", text);
    assert_int_equal(d.n, 1);
    if (!strstr(d.msgs[0].text, part)) fail_msg("\"%s\" lacks \"%s\"", d.msgs[0].text, part);
    tg_diag_clear(&d);
    unlink(path);
    free(path);
}

/* cpu_op, python_function and flow events are elided unparsed: the
** indices of the others stay their positions, a ProfilerStep#N operator is
** kept, and a file cut or broken inside an elided event is refused with
** the sentence a full parse gives. */
static void test_elided_events(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"args\": {\"Input Dims\": [[1, 2]], \"s\": \"}]{[\\\"\"}},\n"
        "  {\"ph\": \"f\", \"id\": 1, \"cat\": \"ac2g\"},\n"
        "  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\"},\n"
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#7\", \"pid\": 3, \"tid\": 3, \"ts\": 10, \"dur\": 5},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 3, \"tid\": 3, \"ts\": 11, \"dur\": 1, \"args\": {\"correlation\": 1}},\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 12, \"dur\": 1, \"args\": {\"correlation\": 1}}\n"
        "]}";
    tg_trace *t = open_text(text, NULL);
    assert_int_equal(t->n_nvtx, 1);
    assert_int_equal(t->nvtx[0].rowid, 3);
    assert_int_equal(t->n_apis, 1);
    assert_int_equal(t->apis[0].rowid, 4);
    assert_int_equal(t->n_kernels, 1);
    assert_int_equal(t->kernels[0].rowid, 5);
    assert_true(t->has_table[TG_TABLE_NVTX]);
    tg_trace_close(t);
    /* cut inside an elided event */
    char cut[sizeof text];
    memcpy(cut, text, sizeof text);
    cut[strstr(cut, "\"s\"") - cut + 6] = '\0';   /* inside the args string, past the head */
    expect_refused(cut, "the trace is truncated");
    /* an extra closing brace inside one: reported as a full parse says it */
    expect_refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\"}}, {\"ph\": \"X\"}]}",
                   "is not valid JSON: parse error: ");
}

/* A capture made with the CUPTI range profiler (torch.profiler's
** experimental_config profiler_metrics): its kernels are
** cuda_profiler_range events, counters without a correlation id or a
** stream, laid end to end. They are not kernels; the trace says how they
** were recorded, for kernels and for the copies the mode does not record. */
static void test_range_profiler(void **state)
{
    (void)state;
    static const char text[] =
        "{\"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, \"ts\": 10, "
        "\"dur\": 3, \"args\": {\"correlation\": 1}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 9, \"tid\": 9, \"ts\": 20, "
        "\"dur\": 3, \"args\": {\"correlation\": 2}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"void k(int)\", \"pid\": 0, \"tid\": 0, \"ts\": 100, "
        "\"dur\": 50, \"args\": {\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\": 4}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"__missing__\", \"pid\": 0, \"tid\": 0, \"ts\": 150, "
        "\"dur\": 50, \"args\": {\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\": 0}}\n"
        "]}\n";
    tg_trace *t = open_text(text, NULL);
    assert_int_equal(t->n_kernels, 0);
    assert_int_equal(t->n_profiler_ranges, 2);
    assert_true(t->has_table[TG_TABLE_KERNEL]);
    char buf[1024];
    assert_true(tg_trace_range_profiled(t, TG_TABLE_KERNEL, buf, sizeof buf));
    assert_non_null(strstr(buf, "they were recorded as 2 CUPTI range-profiler events (cuda_profiler_range"));
    assert_non_null(strstr(buf, "which tracegate does not read as GPU activity"));
    assert_true(tg_trace_range_profiled(t, TG_TABLE_MEMCPY, buf, sizeof buf));
    assert_non_null(strstr(buf, "no CUDA memory copies"));
    assert_false(tg_trace_range_profiled(t, TG_TABLE_RUNTIME, buf, sizeof buf));
    assert_string_equal(buf, "");
    tg_trace_close(t);
    /* an ordinary trace: no such sentence */
    t = open_text(modern, NULL);
    assert_int_equal(t->n_profiler_ranges, 0);
    assert_false(tg_trace_range_profiled(t, TG_TABLE_KERNEL, buf, sizeof buf));
    tg_trace_close(t);
}

/* ---------------------------------------------------------------- two halves */

typedef struct big {
    char *text;
    size_t len, cap;
} big;

static void put(big *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->text = realloc(b->text, b->cap);
        assert_non_null(b->text);
    }
    memcpy(b->text + b->len, line, (size_t)n + 1);
    b->len += (size_t)n;
}

/* About 20 MiB of events, one per line as torch.profiler writes them; with
** nested_middle, an event in the middle whose args hold a multi-line array
** of objects (where a split would land inside an event); tail_key: a
** top-level member after the rest (a duplicate of one before the split). */
static big make_big(bool nested_middle, bool broken_tail, const char *tail_key)
{
    big b = {0};
    put(&b, "{\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n\"traceEvents\": [\n");
    int n = 100000;
    for (int i = 0; i < n; i++) {
        if (nested_middle && i == n / 2) {
            put(&b, "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"list\": [\n");
            for (int j = 0; j < 40000; j++) put(&b, "    {\"x\": %d, \"padding\": \"................................\"},\n", j);
            put(&b, "    {\"x\": 0}]}},\n");
        }
        if (broken_tail && i == n - 10) put(&b, "  {\"ph\": \"X\", \"ts\": 12,, \"dur\": 1},\n");
        if (i == 10 || i == n - 20)   /* one in each half: counted by both parsers */
            put(&b, "  {\"ph\": \"X\", \"cat\": \"cuda_profiler_range\", \"name\": \"k\", \"pid\": 0, \"tid\": 0, "
                    "\"ts\": %d, \"dur\": 5, \"args\": {\"smsp__inst_executed.sum\": 12}},\n", 1000 + i);
        switch (i % 4) {
        case 0:
            put(&b, "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, "
                    "\"ts\": %d.%03d, \"dur\": 2.5, \"args\": {\"correlation\": %d}},\n", 1000 + i, i % 1000, i);
            break;
        case 1:
            put(&b, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void kernel_%d<float>(int)\", \"pid\": 0, \"tid\": 7, "
                    "\"ts\": %d.5, \"dur\": 1.25, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": %d, "
                    "\"grid\": [1, 1, 1], \"block\": [32, 1, 1]}},\n", i % 7, 1003 + i, i - 1);
            break;
        case 2:
            put(&b, "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\", \"pid\": 1, \"tid\": 1, "
                    "\"ts\": %d, \"dur\": 1}, \n", 1000 + i);
            break;
        default:
            put(&b, "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::%d\", \"pid\": 1, \"tid\": 1, \"ts\": %d, "
                    "\"dur\": 1, \"args\": {\"External id\": %d, \"Input Dims\": [[1, 2], [3, 4]], \"Ev Idx\": %d,"
                    " \"pad\": \"%0100d\"}},\n", i % 50, 1000 + i, i, i, i);
            break;
        }
    }
    put(&b, "  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 1}\n],\n\"distributedInfo\": {\"rank\": 5}, \"schemaVersion\": 2%s}\n",
        tail_key ? tail_key : "");
    assert_true(b.len > ((size_t)17 << 20));
    return b;
}

/* The trace from plain text (two halves) and from gzip (one parser): both
** loaded, or both refused with the same sentence (the path aside). */
static void same_both_ways(const big *b)
{
    char *plain = write_temp(b->text);
    char gzpath[] = "/tmp/tg-kineto-unit-XXXXXX";
    int fd = mkstemp(gzpath);
    assert_true(fd >= 0);
    gzFile gz = gzdopen(fd, "wb1");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, b->text, (unsigned)b->len), (int)b->len);
    gzclose(gz);
    tg_diag d1, d2;
    tg_diag_init(&d1);
    tg_diag_init(&d2);
    tg_trace *a = tg_trace_open(plain, &d1), *z = tg_trace_open(gzpath, &d2);
    assert_int_equal(a != NULL, z != NULL);
    if (a) {
        assert_int_equal(a->n_kernels, z->n_kernels);
        assert_int_equal(a->n_apis, z->n_apis);
        assert_int_equal(a->n_nvtx, z->n_nvtx);
        assert_int_equal(a->n_profiler_ranges, 2);
        assert_int_equal(z->n_profiler_ranges, 2);
        assert_int_equal(a->rank, 5);
        assert_int_equal(z->rank, 5);
        assert_string_equal(a->schema_version, "2");   /* met by the second half's parser */
        assert_string_equal(z->schema_version, "2");
        assert_int_equal(a->n_gpus, z->n_gpus);
        for (size_t i = 0; i < a->n_kernels; i++) {
            assert_int_equal(a->kernels[i].rowid, z->kernels[i].rowid);
            assert_int_equal(a->kernels[i].start, z->kernels[i].start);
            assert_string_equal(tg_trace_str(a, a->kernels[i].name), tg_trace_str(z, z->kernels[i].name));
        }
        for (size_t i = 0; i < a->n_apis; i++) assert_int_equal(a->apis[i].rowid, z->apis[i].rowid);
        assert_int_equal(a->kernels[0].rowid, 1);   /* rowid = index: the second event */
    } else {
        assert_true(d1.n >= 1 && d2.n >= 1);
        const char *m1 = strstr(d1.msgs[0].text, ": "), *m2 = strstr(d2.msgs[0].text, ": ");
        assert_non_null(m1);
        assert_non_null(m2);
        assert_string_equal(m1, m2);
    }
    tg_trace_close(a);
    tg_trace_close(z);
    tg_diag_clear(&d1);
    tg_diag_clear(&d2);
    unlink(plain);
    unlink(gzpath);
    free(plain);
}

static void test_two_halves(void **state)
{
    (void)state;
    big b = make_big(false, false, NULL);
    same_both_ways(&b);
    free(b.text);
}

static void test_two_halves_given_up_inside_an_event(void **state)
{
    (void)state;
    big b = make_big(true, false, NULL);
    same_both_ways(&b);
    free(b.text);
}

static void test_two_halves_invalid_tail(void **state)
{
    (void)state;
    big b = make_big(false, true, NULL);
    same_both_ways(&b);
    free(b.text);
}

static void test_two_halves_duplicate_key(void **state)
{
    (void)state;
    /* deviceProperties before the split, again after it; traceEvents again */
    static const char *const tails[] = {", \"deviceProperties\": []", ", \"traceEvents\": []"};
    for (int i = 0; i < 2; i++) {
        big b = make_big(false, false, tails[i]);
        if (!getenv("TG_CORPUS_QUICK")) same_both_ways(&b);   /* one parse each under valgrind */
        char *plain = write_temp(b.text);
        tg_diag d;
        tg_diag_init(&d);
        assert_null(tg_trace_open(plain, &d));
        assert_non_null(strstr(d.msgs[0].text, i ? "has the key \"traceEvents\" twice at the top level"
                                                 : "has the key \"deviceProperties\" twice at the top level"));
        tg_diag_clear(&d);
        unlink(plain);
        free(plain);
        free(b.text);
    }
}

/* Refused with one sentence holding part (exit 3's status). */
static void refused(const char *text, const char *part)
{
    char *path = write_temp(text);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    if (t) fail_msg("loaded, expected refusal '%s': %.200s", part, text);
    assert_int_equal(d.status, TG_ETRACE);
    assert_int_equal(d.n_errors, 1);
    if (!strstr(d.msgs[0].text, part)) fail_msg("'%s' not in '%s'", part, d.msgs[0].text);
    tg_diag_clear(&d);
    unlink(path);
    free(path);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    static const char args[] = "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 1, \"bytes\": 4, "
        "\"registers per thread\": 8, \"shared memory\": 0, \"grid\": [1, 1, 1], \"block\": [1, 1, 1], "
        "\"name\": \"n\", \"labels\": \"l\"";
    static const char event[] = "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 1, \"dur\": 2";
    static const char dev[] = "\"id\": 0, \"name\": \"G\", \"numSms\": 1, \"totalGlobalMem\": 1, "
        "\"computeMajor\": 9, \"computeMinor\": 0";
    static const struct { const char *key, *value; int where; } cases[] = {
        /* where: 0 top, 1 event, 2 args, 3 deviceProperties entry, 4 distributedInfo */
        {"traceEvents", "[]", 0}, {"deviceProperties", "[]", 0}, {"distributedInfo", "{}", 0},
        {"schemaVersion", "2", 0},
        {"ph", "\"i\"", 1}, {"cat", "\"cpu_op\"", 1}, {"name", "\"other\"", 1}, {"pid", "3", 1},
        {"tid", "\"stream 9\"", 1}, {"ts", "null", 1}, {"dur", "7", 1}, {"args", "{}", 1},
        {"device", "1", 2}, {"context", "2", 2}, {"stream", "8", 2}, {"correlation", "9", 2},
        {"bytes", "1", 2}, {"registers per thread", "1", 2}, {"shared memory", "1", 2},
        {"grid", "[2, 2, 2]", 2}, {"block", "[2]", 2}, {"name", "\"x\"", 2}, {"labels", "\"GPU 0\"", 2},
        {"id", "1", 3}, {"name", "\"H\"", 3}, {"numSms", "2", 3}, {"totalGlobalMem", "2", 3},
        {"computeMajor", "8", 3}, {"computeMinor", "6", 3},
        {"rank", "1", 4}, {"world_size", "4", 4},
    };
    static const char *const where[] = {"at the top level", "in trace event 0", "in the args of trace event 0",
                                        "in a deviceProperties entry", "in distributedInfo"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dup[128], text[2048], part[160];
        snprintf(dup, sizeof dup, ", \"%s\": %s", cases[i].key, cases[i].value);
        int w = cases[i].where;
        snprintf(text, sizeof text,
                 "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0, \"world_size\": 2%s}, "
                 "\"deviceProperties\": [{%s%s}], \"traceEvents\": [{%s, \"args\": {%s%s}%s}]%s}",
                 w == 4 ? dup : "", dev, w == 3 ? dup : "", event, args, w == 2 ? dup : "", w == 1 ? dup : "",
                 w == 0 ? dup : "");
        snprintf(part, sizeof part, "has the key \"%s\" twice %s", cases[i].key, where[w]);
        refused(text, part);
    }
    /* inside events the reader elides unparsed: a second cat or name, an escaped key */
    refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"cat\": \"kernel\", \"ts\": 1}]}",
            "has the key \"cat\" twice in trace event 0");
    refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1}, "
            "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1, \"name\": \"ProfilerStep#1\"}]}",
            "has the key \"name\" twice in trace event 1");
    refused("{\"traceEvents\": [{\"ph\": \"f\", \"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1}]}",
            "has the key \"ph\" twice in trace event 0");
    refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"python_function\", \"c\\u0061t\": \"kernel\", \"ts\": 1}]}",
            "has the key \"cat\" twice in trace event 0");
    /* an escape in an elided event's value, a value spelling a key: no doubt, it loads */
    tg_trace *w = open_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"C:\\\\x\\\\a.py(1): f\", "
                            "\"ts\": 1, \"args\": {\"name\": \"cat\"}}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                            "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7, "
                            "\"correlation\": 1}}]}", NULL);
    assert_int_equal(w->n_kernels, 1);
    tg_trace_close(w);
    /* keys the reader does not use may repeat; so may a used key in two objects */
    tg_trace *t = open_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
                            "\"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"queued\": 0, \"queued\": 1, \"device\": 0, "
                            "\"stream\": 7, \"correlation\": 1}}, {\"ph\": \"s\", \"id\": 1, \"id\": 2, \"ts\": 1}], "
                            "\"displayTimeUnit\": \"ms\", \"displayTimeUnit\": \"ns\"}", NULL);
    assert_int_equal(t->n_kernels, 1);
    tg_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_row),
        cmocka_unit_test(test_memops),
        cmocka_unit_test(test_apis_ranges_meta),
        cmocka_unit_test(test_lean_load),
        cmocka_unit_test(test_two_processes),
        cmocka_unit_test(test_legacy_2021),
        cmocka_unit_test(test_bare_array_and_cpu_only),
        cmocka_unit_test(test_elided_events),
        cmocka_unit_test(test_range_profiler),
        cmocka_unit_test(test_two_halves),
        cmocka_unit_test(test_two_halves_given_up_inside_an_event),
        cmocka_unit_test(test_two_halves_invalid_tail),
        cmocka_unit_test(test_two_halves_duplicate_key),
        cmocka_unit_test(test_duplicate_keys),
    };
    return cmocka_run_group_tests_name("trace kineto", tests, NULL, NULL);
}
