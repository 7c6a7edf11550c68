/*
** The model as SQL (engine/model/model_sql.c) against the model itself:
** on exports written from inline events (the rule tests' writer), every
** field with an SQL form of every row of every source -- kernel, memcpy,
** memset, api, nvtx, iteration, gap, device, trace -- must be what
** tg_model_build computed. The events are the edge cases of the interval
** union (nested ops, touching ops, ops crossing the steady window and
** iteration bounds, nothing at all), of the NCCL overlap (nested and
** partly overlapping NCCL and compute kernels), of the queue-time median
** (odd and even counts, launches that end after their kernel starts,
** kernels no call launched), of the launch join (calls recorded twice),
** of profiling overhead (clipped to each process's span) and of
** iterations (warmup, an open range, iterations without GPU work).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "model/model_sql.h"
#include "ruletest/ruletest.h"
#include "sqlrun.h"

typedef struct built {
    char path[64];
    tg_ruletest_file *file;
    tg_trace *trace;
    tg_model *model;
} built;

/* Write `events` (the YAML of input.events, indented by 8) as an export,
** run `extra` (SQL, or NULL) on it and build its model. */
static void build_with(built *b, const char *events, const char *extra)
{
    char text[16384];
    snprintf(text, sizeof text, "version: 1\ntests:\n  - name: sql\n    rule: gpu-idle-gap\n    input:\n"
                                "      events:\n%s    expect: {status: pass}\n", events);
    tg_diag diag;
    tg_diag_init(&diag);
    b->file = tg_ruletest_load_text("sql.test.yaml", text, strlen(text), &diag);
    if (!b->file) fail_msg("events: %s", diag.n ? diag.msgs[0].text : "?");
    snprintf(b->path, sizeof b->path, "/tmp/tg-sql-XXXXXX");
    int fd = mkstemp(b->path);
    assert_true(fd >= 0);
    close(fd);
    unlink(b->path);
    assert_int_equal(tg_ruletest_write_events(b->file->cases[0].events, b->path, &diag), TG_OK);
    if (extra) {
        sqlite3 *db = NULL;
        assert_int_equal(sqlite3_open(b->path, &db), SQLITE_OK);
        char *err = NULL;
        if (sqlite3_exec(db, extra, NULL, NULL, &err) != SQLITE_OK) fail_msg("extra SQL: %s", err);
        sqlite3_close(db);
    }
    b->trace = tg_trace_open(b->path, &diag);
    assert_non_null(b->trace);
    b->model = tg_model_build(b->trace, NULL, &diag);
    assert_non_null(b->model);
    tg_diag_clear(&diag);
}

static void unbuild(built *b)
{
    tg_model_free(b->model);
    tg_trace_close(b->trace);
    tg_ruletest_free(b->file);
    unlink(b->path);
}

/* A model value as JSON, to compare with the SQL's. */
static json_t *as_json(tg_value v)
{
    switch (v.type) {
    case TG_TY_NULL: return json_null();
    case TG_TY_BOOL: return json_integer(v.u.b);
    case TG_TY_INT: return json_integer(v.u.i);
    case TG_TY_FLOAT: return json_real(v.u.f);
    case TG_TY_STRING: return v.u.s ? json_string(v.u.s) : json_null();
    default: return json_null();
    }
}

/* The SQL row of C row i: by rowid, or a derived source's key. */
static json_t *sql_row(json_t *rows, const tg_model *m, const tg_source_view *v, size_t i)
{
    const char *row = v->base + i * v->def->stride;
    for (size_t k = 0; k < json_array_size(rows); k++) {
        json_t *r = json_array_get(rows, k);
        switch (v->def->id) {
        case TG_SRC_TRACE: return r;
        case TG_SRC_DEVICE:
            if (json_integer_value(json_object_get(r, "device")) == ((const tg_device *)(const void *)row)->device)
                return r;
            break;
        case TG_SRC_GAP: {
            const tg_gap *g = (const tg_gap *)(const void *)row;
            if (json_integer_value(json_object_get(r, "device")) == g->device &&
                json_integer_value(json_object_get(r, "pid")) == g->pid &&
                json_integer_value(json_object_get(r, "start")) == g->start)
                return r;
            break;
        }
        default:
            if (json_integer_value(json_object_get(r, "rowid")) == tg_source_row_id(v, i)) return r;
        }
    }
    (void)m;
    return NULL;
}

/* Every field with an SQL form of every row of src agrees; returns the
** rows compared. */
static size_t same_source(const built *b, tg_source_id src, const char *label)
{
    const tg_model *m = b->model;
    char *with = tg_model_sql_with(m, src, ~(uint64_t)0);
    assert_non_null(with);
    char *sql = malloc(strlen(with) + 64);
    sprintf(sql, "%s SELECT * FROM %s;", with, tg_model_sql_view(src));
    char err[512];
    json_t *sets = sqlrun(b->path, sql, err, sizeof err);
    if (!sets) fail_msg("%s: %s view: %s", label, tg_model_sql_view(src), err);
    json_t *rows = json_array_get(sets, 0);
    tg_source_view v = tg_model_source(m, src);
    size_t n = src == TG_SRC_NVTX ? 0 : v.n;    /* nvtx: marks and ranges alike; below */
    if (src != TG_SRC_NVTX && json_array_size(rows) != v.n)
        fail_msg("%s: %zu %s rows in SQL, %zu in the model", label, json_array_size(rows), tg_model_sql_view(src), v.n);
    for (size_t i = 0; i < v.n; i++) {
        json_t *r = sql_row(rows, m, &v, i);
        if (!r) fail_msg("%s: %s row %zu (rowid %lld) has no SQL row", label, tg_model_sql_view(src), i,
                         (long long)tg_source_row_id(&v, i));
        n += src == TG_SRC_NVTX;
        for (size_t f = 0; f < tg_field_count; f++) {
            const tg_field_def *fd = &tg_field_defs[f];
            if (fd->source != src || !tg_model_sql_has_field(fd)) continue;
            json_t *want = as_json(tg_field_get(m, &v, fd, i)), *got = json_object_get(r, fd->name);
            if (!sqlrun_agrees(want, got, 1e-12)) {
                char *a = json_dumps(want, JSON_ENCODE_ANY), *g = json_dumps(got, JSON_ENCODE_ANY);
                fail_msg("%s: %s row %zu, %s: model %s, SQL %s", label, tg_model_sql_view(src), i, fd->name, a,
                         g ? g : "(no column)");
            }
            json_decref(want);
        }
    }
    /* a gap cites the ops that bound it, a device its first op */
    for (size_t i = 0; src == TG_SRC_GAP && i < v.n; i++) {
        const tg_gap *g = &m->gaps[i];
        json_t *r = sql_row(rows, m, &v, i);
        assert_int_equal(json_integer_value(json_object_get(r, "before_rowid")), g->rowid);
        assert_int_equal(json_integer_value(json_object_get(r, "after_rowid")), g->next_rowid);
        assert_int_equal(json_integer_value(json_object_get(r, "before_duration")), g->start - g->prev_start);
    }
    json_decref(sets);
    free(sql);
    free(with);
    return n;
}

/* Every source; the derived ones must have rows (the case is about them). */
static void same_everywhere_with(const char *events, const char *extra, const char *label, bool expect_devices)
{
    built b;
    build_with(&b, events, extra);
    size_t devices = 0;
    for (int s = 0; s < TG_SRC_COUNT; s++) {
        if (!tg_model_sql_has_source((tg_source_id)s)) continue;
        size_t n = same_source(&b, (tg_source_id)s, label);
        if (s == TG_SRC_DEVICE) devices = n;
    }
    if (expect_devices) assert_true(devices > 0);
    else assert_int_equal(devices, 0);
    unbuild(&b);
}

static void same_everywhere(const char *events, const char *label, bool expect_devices)
{
    same_everywhere_with(events, NULL, label, expect_devices);
}

/* Nested, touching and overlapping ops on one device; NCCL kernels nested
** in compute and partly overlapping it; copies and memsets busy too; a
** second device with one kernel; queue times 0 (a launch ending after its
** kernel starts), odd and even counts, a kernel no call launched. */
static void test_unions_and_overlap(void **state)
{
    (void)state;
    same_everywhere(
        "        kernels:\n"
        "          - {name: gemm, start: 0, end: 100us, launch: {name: cudaLaunchKernel, start: 0, end: 5us}}\n"
        "          - {name: inner, start: 10us, end: 50us, launch: {name: cudaLaunchKernel, start: 1us, end: 3us}}\n"
        "          - {name: touch, start: 100us, end: 200us, launch: {name: cuLaunchKernel_v2, start: 40us, end: 41us}}\n"
        "          - {name: ncclKernel_AllReduce, start: 500us, end: 600us, stream: 9,\n"
        "             launch: {name: cudaLaunchKernel, start: 490us, end: 495us}}\n"
        "          - {name: ncclDevKernel_Nested, start: 520us, end: 530us, stream: 9,\n"
        "             launch: {name: cudaLaunchKernel, start: 491us, end: 492us}}\n"
        "          - {name: relu, start: 550us, end: 650us, launch: {name: cudaLaunchKernel, start: 540us, end: 541us}}\n"
        "          - {name: inside, start: 560us, end: 570us, launch: {name: cudaLaunchKernel, start: 541us, end: 542us}}\n"
        "          - {name: orphan, start: 900us, end: 950us}\n"
        "          - {name: other, start: 0, end: 10us, device: 1, launch: {name: cudaLaunchKernel, start: 0, end: 1us}}\n"
        "          - {name: other, start: 20us, end: 30us, device: 1, launch: {name: cudaLaunchKernel, start: 2us, end: 3us}}\n"
        "        memcpys:\n"
        "          - {start: 150us, end: 300us, kind: HtoD, src_kind: pageable, launch: cudaMemcpy}\n"
        "          - {start: 300us, end: 320us, kind: DtoH, dst_kind: pinned, launch: cudaMemcpyAsync}\n"
        "        memsets:\n"
        "          - {start: 400us, end: 410us, mem_kind: pinned, launch: cudaMemset}\n",
        "nested and touching ops", true);
}

/* Twelve iterations (five warmup) on one process, ops launched in one
** iteration running into the next, a graph launch of a kernel shorter and
** one longer than the call (launch overhead, once per call), ops before the first iteration and
** after the last, an iteration that launched nothing, a long idle gap
** before the steady window and one inside it, two processes on a device. */
static void test_iteration_bounds(void **state)
{
    (void)state;
    same_everywhere(
        "        nvtx:\n"
        "          - {name: iteration, start: 10ms, duration: 6ms, repeat: {count: 12, every: 10ms}}\n"
        "          - {name: forward, start: 11ms, duration: 2ms, repeat: {count: 12, every: 10ms}}\n"
        "          - {name: iteration, start: 10ms, duration: 4ms, pid: 2000, tid: 2000, repeat: {count: 3, every: 10ms}}\n"
        "        kernels:\n"
        "          - {start: 1ms, duration: 1ms, launch: {name: cudaLaunchKernel, start: 0.5ms, end: 0.51ms}}\n"
        "          - {start: 14ms, duration: 9ms, launch: {name: cudaLaunchKernel, start: 11ms, end: 11.01ms},\n"
        "             repeat: {count: 6, every: 10ms}}\n"
        "          - {start: 92ms, duration: 2ms, launch: {name: cudaLaunchKernel, start: 91ms, end: 93ms},\n"
        "             repeat: {count: 3, every: 10ms}}\n"
        "          - {start: 900ms, duration: 1ms, launch: {name: cudaLaunchKernel, start: 121ms, end: 121.01ms}}\n"
        "          - {start: 15ms, duration: 1ms, pid: 2000, launch: {name: cudaLaunchKernel, start: 12ms, end: 12.1ms},\n"
        "             repeat: {count: 3, every: 10ms}}\n"
        "          - {start: 33ms, duration: 5us, correlation: 77}\n"
        "          - {start: 33.01ms, duration: 80us, correlation: 77}\n"
        "        memcpys:\n"
        "          - {start: 55ms, duration: 7ms, kind: HtoD, launch: {name: cuMemcpyHtoD_v2, start: 54ms, end: 62ms}}\n"
        "        api:\n"
        "          - {name: cudaStreamSynchronize, start: 15ms, duration: 1ms, repeat: {count: 12, every: 10ms}}\n"
        "          - {name: cuCtxSynchronize, start: 2ms, duration: 1ms}\n"
        "          - {name: cudaGraphLaunch, start: 32ms, duration: 50us, correlation: 77}\n",
        "iteration bounds", true);
}

/* An open iteration (the capture stopped inside it) after short ones, and
** profiling overhead: busy overhead clipped to each pair's span, other
** overhead not busy, overhead of a process without ops. */
static void test_overhead_and_open_range(void **state)
{
    (void)state;
    same_everywhere(
        "        nvtx:\n"
        "          - {name: train_step, start: 0, duration: 5ms, repeat: {count: 6, every: 6ms}}\n"
        "          - {name: train_step, start: 40ms, end: null}\n"
        "        kernels:\n"
        "          - {start: 1ms, duration: 1ms, launch: {name: cudaLaunchKernel, start: 0.5ms, end: 0.6ms},\n"
        "             repeat: {count: 7, every: 6ms}}\n"
        "          - {start: 1ms, duration: 100us, pid: 3000, repeat: {count: 3, every: 20ms}}\n"
        "        overhead:\n"
        "          - {start: 2.5ms, duration: 2ms}\n"
        "          - {start: 0, duration: 100ms}\n"
        "          - {name: CUDA profiling data flush overhead, start: 30ms, duration: 4ms, pid: 3000}\n"
        "          - {name: Some other overhead, start: 8ms, duration: 3ms}\n"
        "          - {start: 8ms, duration: 3ms, pid: 4000}\n",
        "overhead and an open range", true);
}

/* Old exports record a call twice under one correlation id, nested: the
** inner row launches and blocks, the outer counts for neither. */
static void test_twins(void **state)
{
    (void)state;
    same_everywhere(
        "        kernels:\n"
        "          - {start: 12ms, duration: 1ms, correlation: 13}\n"
        "        memcpys:\n"
        "          - {start: 2ms, duration: 1ms, kind: HtoD, correlation: 7}\n"
        "          - {start: 6ms, duration: 1ms, kind: DtoH, correlation: 9}\n"
        "        api:\n"
        "          - {name: cudaMemcpy, start: 1ms, duration: 3ms, correlation: 7}\n"
        "          - {name: cudaMemcpy_v3020, start: 1.1ms, duration: 2.8ms, correlation: 7}\n"
        "          - {name: cudaMemcpyAsync_ptsz, start: 5ms, duration: 0.5ms, correlation: 9}\n"
        "          - {name: cudaDeviceSynchronize, start: 8ms, duration: 2ms, correlation: 11}\n"
        "          - {name: cudaDeviceSynchronize_v3020, start: 8.1ms, duration: 1.8ms, correlation: 11}\n"
        "          - {name: cudaLaunchKernel, start: 11ms, duration: 0.5ms, correlation: 13}\n"
        "          - {name: cudaLaunchKernel_v7000, start: 11.1ms, duration: 0.2ms, correlation: 13}\n",
        "twins", true);
}

/* Nothing on any device: the device and gap views are empty, not wrong. */
static void test_empty(void **state)
{
    (void)state;
    same_everywhere(
        "        nvtx:\n"
        "          - {name: iteration, start: 0, duration: 6ms, repeat: {count: 12, every: 10ms}}\n"
        "        kernels: []\n"
        "        api:\n"
        "          - {name: cudaLaunchKernel, start: 1ms, duration: 10us, repeat: {count: 12, every: 10ms}}\n",
        "empty", false);
}

/* NVTX definition rows (a category, a thread name, an NVTX-text
** category: eventType 33, 39, 64) that carry an end as well as a start:
** the model does not load them, and the trace view's nvtx_ranges must not
** count them either. */
static void test_nvtx_definitions(void **state)
{
    (void)state;
    same_everywhere_with(
        "        nvtx:\n"
        "          - {name: iteration, start: 10ms, duration: 6ms, repeat: {count: 12, every: 10ms}}\n"
        "        kernels:\n"
        "          - {start: 11ms, duration: 1ms, launch: {name: cudaLaunchKernel, start: 10.5ms, end: 10.51ms},\n"
        "             repeat: {count: 12, every: 10ms}}\n",
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) SELECT start, \"end\", t.type, 'def', "
        "globalTid FROM NVTX_EVENTS, (SELECT 33 AS type UNION ALL SELECT 39 UNION ALL SELECT 64) t LIMIT 3;",
        "nvtx definitions", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unions_and_overlap),
        cmocka_unit_test(test_iteration_bounds),
        cmocka_unit_test(test_overhead_and_open_range),
        cmocka_unit_test(test_twins),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_nvtx_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
