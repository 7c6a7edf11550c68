/*
** Corpus test (issue 38, item 1): an old export that records each runtime
** call twice under one correlation id (public/saxpy-mpi-cuda_nsys_
** perlmutter0: `cudaMalloc` around `cudaMalloc_v3020`, nsys 2022.2) counts
** every call once: `info`'s API calls, the api source's rows (`name ==
** "cudaMemcpy"`), alloc-in-loop's count and time, sync-memcpy's copies,
** the rows a finding cites, and the reproduce SQL of each finding, run on
** the export. The expected values come from the export by SQL written
** here, which groups the rows of one call (thread, correlation id, name
** without its _vNNNN suffix) and takes the nested row's time (the shortest
** of the group): not tracegate's rule, the program's calls.
**
** Skips with a message when ../shared/traces is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"
#include "sqlrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAXPY "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"

static char path[4096];

/* The calls of the export as the program made them: one row per (thread,
** correlation id, base name), its time the nested row's. */
#define CALLS                                                                                                  \
    "WITH rows AS (SELECT r.rowid, r.globalTid AS tid, r.correlationId AS corr, r.end - r.start AS d, "        \
    "CASE WHEN instr(s.value, '_v') > 0 THEN substr(s.value, 1, instr(s.value, '_v') - 1) ELSE s.value END "   \
    "AS base FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId), "                        \
    "calls AS (SELECT tid, corr, base, min(d) AS d, count(*) AS rows FROM rows GROUP BY tid, corr, base) "

/* One row of numbers from sql on the export. */
static json_t *query(const char *sql)
{
    char err[512];
    json_t *sets = sqlrun(path, sql, err, sizeof err);
    if (!sets) fail_msg("%s: %s", sql, err);
    json_t *row = json_incref(json_array_get(json_array_get(sets, 0), 0));
    json_decref(sets);
    assert_non_null(row);
    return row;
}

static long long num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) fail_msg("no number %s", key);
    return (long long)json_number_value(v);
}

/* The values of a finding from its reproduce SQL, and its cited rows. */
static void reproduced(const json_t *r)
{
    const char *sql = json_string_value(json_object_get(r, "reproduce"));
    if (!sql) fail_msg("%s has no reproduce query", json_string_value(json_object_get(r, "rule")));
    char err[512];
    json_t *sets = sqlrun(path, sql, err, sizeof err);
    if (!sets) fail_msg("%s: %s", json_string_value(json_object_get(r, "rule")), err);
    json_t *got = json_array_get(json_array_get(sets, 0), 0);
    const char *key;
    json_t *want;
    json_object_foreach(json_object_get(r, "values"), key, want) {
        if (!strncmp(key, "trace_", 6)) continue;    /* trace.FIELD values: columns of their own name */
        if (!sqlrun_agrees(want, json_object_get(got, key), 1e-9))
            fail_msg("%s: %s differs in its SQL", json_string_value(json_object_get(r, "rule")), key);
    }
    json_decref(sets);
}

/* The rows a finding cites are the nested row of their call. */
static void cites_inner_rows(const json_t *r)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "evidence"), i, e) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) AS later FROM CUPTI_ACTIVITY_KIND_RUNTIME r, CUPTI_ACTIVITY_KIND_RUNTIME o "
                 "WHERE r.rowid = %lld AND o.correlationId = r.correlationId AND o.globalTid = r.globalTid "
                 "AND o.rowid != r.rowid AND o.start > r.start", num(e, "rowid"));
        json_t *row = query(sql);
        assert_int_equal(num(row, "later"), 0);
        json_decref(row);
    }
}

static json_t *result(json_t *doc, const char *rule)
{
    json_t *r = corpus_result(doc, rule);
    if (!r) fail_msg("no result for %s", rule);
    return r;
}

static void test_info_counts_calls(void **state)
{
    (void)state;
    int status;
    json_t *doc = corpus_json(&status, "info --format json '%s'", path);
    json_t *t = json_array_get(json_object_get(doc, "traces"), 0);
    json_t *want = query(CALLS "SELECT count(*) AS calls, sum(rows) - count(*) AS twins FROM calls");
    assert_int_equal(num(json_object_get(t, "counts"), "api"), num(want, "calls"));
    assert_int_equal(num(t, "api_twin_rows"), num(want, "twins"));
    assert_true(num(want, "twins") > 0);
    json_decref(want);
    json_decref(doc);
}

static void test_findings_count_calls(void **state)
{
    (void)state;
    char rules[] = "/tmp/tg-twins-XXXXXX";
    int fd = mkstemp(rules);
    assert_true(fd >= 0);
    static const char text[] =
        "version: 1\nrules:\n"
        "  - {id: memcpy-calls, title: t, severity: warning, source: api, where: 'name == \"cudaMemcpy\"',\n"
        "     fail_when: count >= 0, message: '{sum(duration)}'}\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    int status;
    /* alloc-in-loop made to fail (it then has its query): with no
    ** iterations it counts every allocation call of the capture */
    json_t *doc = corpus_json(&status,
                              "check --format json --rules builtin --rules '%s' --set alloc-in-loop.min_calls=0 "
                              "--set alloc-in-loop.max_alloc_time=0 --set sync-memcpy.small_htod=0KB '%s'",
                              rules, path);
    unlink(rules);

    json_t *want = query(CALLS "SELECT count(*) AS n, sum(d) AS time FROM calls WHERE base = 'cudaMemcpy'");
    json_t *r = result(doc, "memcpy-calls");
    assert_int_equal(num(r, "count"), num(want, "n"));
    assert_int_equal(num(json_object_get(r, "values"), "sum_duration_ns"), num(want, "time"));
    assert_int_equal(num(want, "n"), 15);
    reproduced(r);
    cites_inner_rows(r);
    json_decref(want);

    want = query(CALLS "SELECT count(*) AS n, sum(d) AS time FROM calls WHERE base GLOB 'cudaMalloc*' "
                       "OR base GLOB 'cudaFree*'");
    r = result(doc, "alloc-in-loop");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "fail");
    /* the calls before the first kernel are set aside as start-up
    ** (docs/rules.md, "Start-up calls"): counted and timed once too */
    json_t *vals = json_object_get(r, "values");
    assert_int_equal(num(r, "count") + num(vals, "set_aside"), num(want, "n"));
    assert_int_equal(num(vals, "sum_duration_ns") + num(vals, "set_aside_duration_ns"), num(want, "time"));
    reproduced(r);
    json_decref(want);

    /* every copy launched by a cudaMemcpy call blocks */
    want = query("SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_MEMCPY m WHERE EXISTS (SELECT 1 FROM "
                 "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE r.correlationId = "
                 "m.correlationId AND s.value GLOB 'cudaMemcpy*' AND instr(s.value, 'Async') = 0)");
    r = result(doc, "sync-memcpy");
    assert_int_equal(num(r, "count"), num(want, "n"));
    assert_int_equal(num(want, "n"), 15);
    reproduced(r);
    json_decref(want);

    /* the host cause names each call once: as many as the export holds
    ** of 100 us or more, by the nested rows */
    r = result(doc, "low-gpu-utilization");
    const char *sql = json_string_value(json_object_get(json_object_get(r, "cause"), "reproduce"));
    assert_non_null(sql);
    char err[512];
    json_t *sets = sqlrun(path, sql, err, sizeof err);
    if (!sets) fail_msg("host cause: %s", err);
    size_t i;
    json_t *row;
    /* both rows of a twin spell cudaMemcpy (the base name, as the cause
    ** names calls): counted once each, 15, not 30 */
    long long calls = 0;
    json_array_foreach(json_array_get(sets, 0), i, row) {
        const char *name = json_string_value(json_object_get(row, "name"));
        if (!name || strcmp(json_string_value(json_object_get(row, "source")), "cuda") != 0) continue;
        if (!strcmp(name, "cudaMemcpy")) calls += num(row, "count");
        assert_string_not_equal(name, "cudaMemcpy_v3020");
    }
    assert_int_equal(calls, 15);
    json_decref(sets);
    json_decref(doc);
}

int main(void)
{
    if (!corpus_init("calls recorded twice counted once (issue 38)")) return 77;
    snprintf(path, sizeof path, "%s/%s", corpus_traces, SAXPY);
    if (access(path, R_OK) != 0) {
        printf("SKIP: %s is absent\n", path);
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_info_counts_calls),
                                       cmocka_unit_test(test_findings_count_calls)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
