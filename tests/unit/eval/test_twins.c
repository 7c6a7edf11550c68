/*
** Calls recorded twice (old nsys exports: an outer `cudaMalloc` row and,
** nested inside it under the same correlation id, `cudaMalloc_v3020`)
** count once everywhere: in the api source's rows, counts and durations,
** in the evidence rows a finding cites (the inner rows), in the launch join
** of copies and kernels, and in the reproduce SQL, which must give back
** every value the evaluator reports (docs/formats.md, engine/model/
** model_join.c). The export is written here: LOOPS iterations of a
** program that allocates, copies, launches, synchronizes and frees, every
** call twice but cudaGetLastError, plus a cudaFree and a cudaMalloc that
** share an id (two calls, not twins). What the program made is known from
** the constants below, so the expected values are computed from them.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "fixture.h"
#include "sqlrun.h"

#define LOOPS 6
#define PID 7
#define TID 8

enum { S_MALLOC = 1, S_MALLOC_V, S_FREE, S_FREE_V, S_MEMCPY, S_MEMCPY_V, S_LAUNCH, S_LAUNCH_V, S_KERNEL,
       S_SYNC, S_SYNC_V, S_ERROR };
static const char *const strings[] = {NULL, "cudaMalloc", "cudaMalloc_v3020", "cudaFree", "cudaFree_v3020",
                                      "cudaMemcpy", "cudaMemcpy_v3020", "cudaLaunchKernel", "cudaLaunchKernel_v7000",
                                      "saxpy", "cudaDeviceSynchronize", "cudaDeviceSynchronize_v3020",
                                      "cudaGetLastError"};

/* What the program did, for the expectations. */
typedef struct program {
    int64_t malloc_time, alloc_free_time, api_time, sync_time;
    int api_calls, runtime_rows;
    int64_t inner_malloc_rowid[LOOPS];
} program;

static void call(char **sql, int *rows, int64_t start, int64_t end, int64_t corr, int name)
{
    assert_true(tg_fixture_append(sql, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, "
                                       "nameId) VALUES (%lld, %lld, %lld, %lld, %d);\n", (long long)start,
                                  (long long)end, (long long)tg_fixture_gtid(PID, TID), (long long)corr, name));
    ++*rows;
}

/* One call recorded twice: the outer row around the inner, which lasts
** `inner` ns and is what the program spent. Returns the inner row's rowid. */
static int64_t twice(char **sql, program *p, int64_t start, int64_t inner, int64_t corr, int outer_name)
{
    call(sql, &p->runtime_rows, start, start + inner + 20, corr, outer_name);
    call(sql, &p->runtime_rows, start + 10, start + 10 + inner, corr, outer_name + 1);
    p->api_calls++;
    p->api_time += inner;
    return p->runtime_rows;
}

static char *write_export(program *p)
{
    *p = (program){0};
    char *sql = NULL;
    for (size_t i = 1; i < sizeof strings / sizeof *strings; i++)
        assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (%zu, '%s');\n", i, strings[i]));
    int64_t corr = 1;
    for (int i = 0; i < LOOPS; i++) {
        int64_t t0 = 1000000 * (int64_t)(i + 1);
        int64_t m = 3000 + 100 * i, c = 50000 + 1000 * i, s = 7000 + 10 * i, f = 2000 + 50 * i;
        p->inner_malloc_rowid[i] = twice(&sql, p, t0, m, corr++, S_MALLOC);
        p->malloc_time += m;
        int64_t copy_corr = corr++;
        twice(&sql, p, t0 + 10000, c, copy_corr, S_MEMCPY);
        assert_true(tg_fixture_append(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, correlationId, "
                                            "globalPid, bytes, copyKind, srcKind, dstKind) VALUES "
                                            "(%lld, %lld, %lld, %lld, 1048576, 1, 0, 2);\n",
                                      (long long)(t0 + 20000), (long long)(t0 + 30000), (long long)copy_corr,
                                      (long long)tg_fixture_gpid(PID)));
        int64_t launch_corr = corr++;
        twice(&sql, p, t0 + 70000, 400, launch_corr, S_LAUNCH);
        assert_true(tg_fixture_append(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, "
                                            "correlationId, globalPid, demangledName, shortName) VALUES "
                                            "(%lld, %lld, 0, 7, %lld, %lld, %d, %d);\n",
                                      (long long)(t0 + 71000), (long long)(t0 + 75000), (long long)launch_corr,
                                      (long long)tg_fixture_gpid(PID), S_KERNEL, S_KERNEL));
        twice(&sql, p, t0 + 80000, s, corr++, S_SYNC);
        p->sync_time += s;
        call(&sql, &p->runtime_rows, t0 + 90000, t0 + 90005, corr++, S_ERROR);
        p->api_calls++;
        p->api_time += 5;
        twice(&sql, p, t0 + 100000, f, corr++, S_FREE);
        p->alloc_free_time += m + f;
    }
    /* one id, two calls of other names: not twins, both count */
    int64_t shared = corr++;
    call(&sql, &p->runtime_rows, 9000000, 9000100, shared, S_FREE_V);
    call(&sql, &p->runtime_rows, 9000200, 9000300, shared, S_MALLOC_V);
    p->api_calls += 2;
    p->api_time += 200;
    p->malloc_time += 100;
    p->alloc_free_time += 200;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

static const char rules[] =
    "version: 1\nrules:\n"
    "  - {id: mallocs, title: t, severity: warning, source: api, where: 'name == \"cudaMalloc\"',\n"
    "     fail_when: count >= 0, message: '{sum(duration)} {n(duration)} {p50(duration)}'}\n"
    "  - {id: allocs, title: t, severity: warning, source: api, where: 'name in [\"cudaMalloc\", \"cudaFree\"]',\n"
    "     fail_when: count >= 0, message: '{sum(duration)}',\n"
    "     evidence: {group_by: [name], columns: [count, sum(duration)], order_by: count desc, limit: 10}}\n"
    "  - {id: calls, title: t, severity: warning, source: api, fail_when: count >= 0,\n"
    "     message: '{sum(duration)} {max(trace.api_calls)} {max(trace.blocking_calls)} {max(trace.blocked_time)}'}\n"
    "  - {id: blocking, title: t, severity: warning, source: api, where: blocking, fail_when: count >= 0,\n"
    "     message: '{sum(duration)}'}\n"
    "  - {id: copies, title: t, severity: warning, source: memcpy, where: api_sync, fail_when: count >= 0,\n"
    "     message: '{sum(duration)}'}\n"
    "  - {id: queues, title: t, severity: warning, source: kernel, where: 'api == \"cudaLaunchKernel\"',\n"
    "     fail_when: count >= 0, message: '{p50(queue)} {max(launch_end)}'}\n";

static const tg_rule_result *result(const tg_trace_result *out, const char *id)
{
    for (size_t i = 0; i < out->n_results; i++)
        if (!strcmp(out->results[i].rule, id)) return &out->results[i];
    fail_msg("no result for %s", id);
    return NULL;
}

static tg_value value(const tg_rule_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_values; i++)
        if (!strcmp(r->values[i].name, name)) return r->values[i].value;
    fail_msg("%s: no value %s", r->rule, name);
    return (tg_value){0};
}

static int64_t ivalue(const tg_rule_result *r, const char *name)
{
    tg_value v = value(r, name);
    return v.type == TG_TY_FLOAT ? (int64_t)v.u.f : v.u.i;
}

static json_t *as_json(tg_value v)
{
    switch (v.type) {
    case TG_TY_BOOL: return json_integer(v.u.b);
    case TG_TY_INT: return json_integer(v.u.i);
    case TG_TY_FLOAT: return json_real(v.u.f);
    case TG_TY_STRING: return v.u.s ? json_string(v.u.s) : json_null();
    default: return json_null();
    }
}

/* Every value of r, and for grouped evidence every group's columns, from
** its reproduce SQL. */
static void reproduced(const char *path, const tg_rule_result *r)
{
    char err[512];
    assert_non_null(r->reproduce);
    json_t *sets = sqlrun(path, r->reproduce, err, sizeof err);
    if (!sets) fail_msg("%s: %s", r->rule, err);
    json_t *row = json_array_get(json_array_get(sets, 0), 0);
    for (size_t k = 0; k < r->n_values; k++) {
        json_t *want = as_json(r->values[k].value);
        if (!sqlrun_agrees(want, json_object_get(row, r->values[k].name), 1e-9))
            fail_msg("%s: %s differs in its SQL", r->rule, r->values[k].name);
        json_decref(want);
    }
    json_t *cited = json_array_get(sets, 1);
    assert_int_equal(json_array_size(cited), r->n_evidence);
    for (size_t e = 0; e < r->n_evidence; e++) {
        const tg_evidence *ev = &r->evidence[e];
        json_t *match = NULL;
        for (size_t g = 0; g < json_array_size(cited) && !match; g++) {
            json_t *c = json_array_get(cited, g);
            if (ev->row >= 0 ? json_integer_value(json_object_get(c, "rowid")) == ev->rowid
                             : !strcmp(json_string_value(json_object_get(c, "name")), ev->fields[0].value.u.s))
                match = c;
        }
        if (!match) fail_msg("%s: evidence %zu is not in its SQL", r->rule, e);
        for (size_t f = 0; ev->row < 0 && f < ev->n_fields; f++) {
            json_t *want = as_json(ev->fields[f].value);
            if (!sqlrun_agrees(want, json_object_get(match, ev->fields[f].name), 1e-9))
                fail_msg("%s: group column %s differs in its SQL", r->rule, ev->fields[f].name);
            json_decref(want);
        }
    }
    json_decref(sets);
}

static void test_twins_count_once(void **state)
{
    (void)state;
    program p;
    char *path = write_export(&p);
    tg_diag diag;
    tg_diag_init(&diag);
    tg_trace *t = tg_trace_open(path, &diag);
    assert_non_null(t);
    tg_model *m = tg_model_build(t, NULL, &diag);
    assert_non_null(m);
    assert_true(t->mixed_duplicate_api);
    assert_int_equal(t->n_apis, p.api_calls);
    assert_int_equal(t->n_api_twins, p.runtime_rows - p.api_calls);
    assert_int_equal(m->facts.api_calls, p.api_calls);
    tg_rules_text rt = {"twins.yaml", rules};
    tg_ruleset *rs = tg_rules_load_texts(&rt, 1, NULL, 0, &diag);
    if (!rs) fail_msg("rules: %s", diag.n ? diag.msgs[0].text : "?");
    tg_arena *arena = tg_arena_new();
    tg_trace_result out = {0};
    assert_int_equal(tg_eval_model(rs, m, NULL, arena, &out, &diag), TG_OK);

    const tg_rule_result *r = result(&out, "mallocs");
    assert_int_equal(r->count, LOOPS + 1);
    assert_int_equal(ivalue(r, "sum_duration_ns"), p.malloc_time);
    /* the rows cited are the inner ones (and the lone cudaMalloc_v3020) */
    assert_int_equal(r->n_evidence, LOOPS + 1);
    for (size_t e = 0; e < r->n_evidence; e++) {
        bool inner = r->evidence[e].rowid == p.runtime_rows;
        for (int i = 0; i < LOOPS; i++) inner |= r->evidence[e].rowid == p.inner_malloc_rowid[i];
        if (!inner) fail_msg("mallocs cites rowid %lld, not an inner row", (long long)r->evidence[e].rowid);
    }
    r = result(&out, "allocs");
    assert_int_equal(r->count, 2 * LOOPS + 2);
    assert_int_equal(ivalue(r, "sum_duration_ns"), p.alloc_free_time);
    assert_int_equal(r->n_evidence, 2);
    for (size_t e = 0; e < r->n_evidence; e++) {
        assert_string_equal(r->evidence[e].fields[0].name, "name");
        assert_int_equal(r->evidence[e].fields[1].value.u.i, LOOPS + 1);   /* per name: count */
    }
    r = result(&out, "calls");
    assert_int_equal(r->count, p.api_calls);
    assert_int_equal(ivalue(r, "sum_duration_ns"), p.api_time);
    assert_int_equal(ivalue(r, "max_trace_api_calls"), p.api_calls);
    assert_int_equal(ivalue(r, "max_trace_blocking_calls"), LOOPS);
    assert_int_equal(ivalue(r, "max_trace_blocked_time_ns"), p.sync_time);
    r = result(&out, "blocking");
    assert_int_equal(r->count, LOOPS);
    assert_int_equal(ivalue(r, "sum_duration_ns"), p.sync_time);
    r = result(&out, "copies");
    assert_int_equal(r->count, LOOPS);
    r = result(&out, "queues");
    assert_int_equal(r->count, LOOPS);
    /* from the inner launch's end (start + 10 + 400) to the kernel (start + 1000) */
    assert_int_equal(ivalue(r, "p50_queue_ns"), 1000 - 410);
    for (size_t i = 0; i < out.n_results; i++) reproduced(path, &out.results[i]);

    tg_arena_free(arena);
    tg_rules_free(rs);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&diag);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_twins_count_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
