/*
** Corpus test of issue #18 (docs/host.md): what the findings say about
** their cause, on the real traces.
**
** - drv_gaps: each of the three gap findings names usleep on the thread
**   that launches GPU work (drvload, tid 1063), for at least the 700 ms
**   stall of the gap, called from main in drvload; the helpers' poll and
**   sem_wait come after it; low-gpu-utilization names usleep over the
**   steady window.
** - saxpy: the 15 blocking copies were made from main in saxpy-mpi-cuda
**   (the 2022.2 export numbers callchainId one below CUDA_CALLCHAINS.id).
** - Every cause's reproduce query on every export where one fires gives
**   the numbers the cause states: each host window's activity (count and
**   ns inside the window), each call site (derived from each row's
**   stack) with its count and time, each short kernel's count, kernel
**   and launch time.
** - Captures without OS runtime calls (the torch-converted exports, a
**   Kineto trace) say the cause is unknown and which option records it;
**   the exit status is the verdict's, never missing data.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

static json_t *cause_of(json_t *doc, const char *rule)
{
    json_t *r = corpus_result(doc, rule);
    if (!r) fail_msg("no result for %s", rule);
    json_t *c = json_object_get(r, "cause");
    if (!c) fail_msg("%s has no cause (status %s)", rule, json_string_value(json_object_get(r, "status")));
    return c;
}

static const char *sget(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void test_gaps_name_usleep(void **state)
{
    (void)state;
    int status;
    json_t *doc = corpus_json(&status, "check --format json '%s/h200-nsys/drv_gaps.sqlite'", corpus_traces);
    assert_int_equal(status, 1);
    json_t *c = cause_of(doc, "gpu-idle-gap");
    assert_string_equal(sget(c, "kind"), "host");
    assert_non_null(strstr(sget(c, "summary"), "in 3 of the 3 cited gaps the thread that launches GPU work "
                                                 "(drvload, tid 1063) was in usleep"));
    assert_non_null(strstr(sget(c, "summary"), "called from main in drvload"));
    assert_int_equal(json_array_size(json_object_get(c, "unknown")), 0);
    json_t *wins = json_object_get(c, "windows");
    assert_int_equal(json_array_size(wins), 3);
    size_t i;
    json_t *w;
    json_array_foreach(wins, i, w) {
        json_t *first = json_array_get(json_object_get(w, "activity"), 0);
        assert_string_equal(sget(first, "source"), "osrt");
        assert_string_equal(sget(first, "name"), "usleep");
        assert_string_equal(sget(first, "thread"), "drvload");
        assert_true(json_is_true(json_object_get(first, "launch_thread")));
        assert_string_equal(sget(first, "call_site"), "main");
        assert_string_equal(sget(first, "call_module"), "drvload");
        double ns = json_number_value(json_object_get(first, "time_ns"));
        assert_true(ns >= 700e6 && ns <= json_number_value(json_object_get(w, "duration_ns")));
        /* the helpers' waits come after the launching thread's calls */
        json_t *x;
        size_t k;
        bool helper = false;
        json_array_foreach(json_object_get(w, "activity"), k, x)
            if (!json_is_true(json_object_get(x, "launch_thread"))) helper = true;
            else assert_false(helper);
        assert_true(helper);
    }
    c = cause_of(doc, "low-gpu-utilization");
    assert_non_null(strstr(sget(c, "summary"), "was in usleep"));
    json_decref(doc);
}

static void test_saxpy_call_site(void **state)
{
    (void)state;
    int status;
    json_t *doc = corpus_json(&status, "check --format json '%s/public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite'",
                              corpus_traces);
    json_t *c = cause_of(doc, "sync-memcpy");
    assert_string_equal(sget(c, "kind"), "call_site");
    assert_string_equal(sget(c, "summary"), "all 15 copies were made from main in saxpy-mpi-cuda");
    json_t *site = json_array_get(json_object_get(c, "sites"), 0);
    assert_string_equal(sget(site, "call_site"), "main");
    assert_string_equal(sget(site, "call_module"), "saxpy-mpi-cuda");
    assert_int_equal(json_integer_value(json_object_get(site, "count")), 15);
    json_t *stack = json_object_get(site, "stack");
    bool runtime = false, main_frame = false;
    size_t i;
    json_t *f;
    json_array_foreach(stack, i, f) {
        runtime |= strncmp(json_string_value(f), "cudaMemcpy (libcudart", 21) == 0;
        main_frame |= strcmp(json_string_value(f), "main (saxpy-mpi-cuda)") == 0;
    }
    assert_true(runtime && main_frame);
    /* the query derives each copy's site from CUDA_CALLCHAINS (issue 18
    ** item 5): the site's name is nowhere in it as a literal */
    const char *sql = sget(c, "reproduce");
    assert_non_null(strstr(sql, "CUDA_CALLCHAINS"));
    assert_null(strstr(sql, "'main'"));
    json_decref(doc);
}

/* ---------------------------------------------------------------- reproduce */

typedef struct row {
    char key[1024];
    double a, b, c;
} row;

/* Rows of a query: key = the text columns joined, numbers after them. */
static size_t run_query(const char *path, const char *sql, row *out, size_t cap)
{
    sqlite3 *db;
    char uri[4096];
    snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", path);
    assert_int_equal(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s\n%s", sqlite3_errmsg(db), sql);
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < cap) {
        row *r = &out[n++];
        memset(r, 0, sizeof *r);
        double *nums[3] = {&r->a, &r->b, &r->c};
        int k = 0;
        for (int col = 0; col < sqlite3_column_count(st); col++) {
            if (sqlite3_column_type(st, col) == SQLITE_TEXT) {
                size_t len = strlen(r->key);
                snprintf(r->key + len, sizeof r->key - len, "%s|", (const char *)sqlite3_column_text(st, col));
            } else if (k < 3 && col > 0) {
                *nums[k++] = sqlite3_column_double(st, col);
            } else {
                size_t len = strlen(r->key);
                snprintf(r->key + len, sizeof r->key - len, "%lld|", sqlite3_column_int64(st, col));
            }
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static const row *find(const row *rows, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, key)) return &rows[i];
    return NULL;
}

#define MAX_ROWS 4096

/* Host windows: (win, source, name, tid) -> count, ns inside. */
static void check_host(const char *path, json_t *c, row *rows)
{
    size_t n = run_query(path, sget(c, "reproduce"), rows, MAX_ROWS);
    size_t i, k, checked = 0;
    json_t *w, *x;
    json_array_foreach(json_object_get(c, "windows"), i, w)
        json_array_foreach(json_object_get(w, "activity"), k, x) {
            char key[1024];
            /* win is an integer column; tid too: both land in the key */
            snprintf(key, sizeof key, "%lld|%s|%s|", (long long)json_integer_value(json_object_get(w, "evidence")),
                     sget(x, "source"), sget(x, "name"));
            /* the numbers: tid (an integer, read as the first number), count, time */
            const row *r = NULL;
            for (size_t j = 0; j < n && !r; j++)
                if (!strcmp(rows[j].key, key) && rows[j].a == (double)json_integer_value(json_object_get(x, "tid")))
                    r = &rows[j];
            if (!r) fail_msg("%s: no reproduce row for %s tid %lld", path, key,
                             (long long)json_integer_value(json_object_get(x, "tid")));
            assert_int_equal((long long)r->b, json_integer_value(json_object_get(x, "count")));
            assert_true(fabs(r->c - json_number_value(json_object_get(x, "time_ns"))) < 0.5);
            checked++;
        }
    assert_true(checked > 0);
}

static void check_sites(const char *path, json_t *c, row *rows)
{
    size_t n = run_query(path, sget(c, "reproduce"), rows, MAX_ROWS);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(c, "sites"), i, x) {
        char key[1024];
        snprintf(key, sizeof key, "%s|%s|", sget(x, "call_site"), sget(x, "call_module"));
        const row *r = find(rows, n, key);
        if (!r) fail_msg("%s: no reproduce row %s", path, key);
        assert_int_equal((long long)r->a, json_integer_value(json_object_get(x, "count")));
        assert_true(fabs(r->b - json_number_value(json_object_get(x, "time_ns"))) < 0.5);
    }
}

static void check_kernels(const char *path, json_t *c, row *rows)
{
    size_t n = run_query(path, sget(c, "reproduce"), rows, MAX_ROWS);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(c, "kernels"), i, x) {
        char key[1024];
        snprintf(key, sizeof key, "%s|", sget(x, "name"));
        const row *r = find(rows, n, key);
        if (!r) fail_msg("%s: no reproduce row %s", path, key);
        assert_int_equal((long long)r->a, json_integer_value(json_object_get(x, "count")));
        assert_true(fabs(r->b - json_number_value(json_object_get(x, "kernel_time_ns"))) < 0.5);
        assert_true(fabs(r->c - json_number_value(json_object_get(x, "launch_time_ns"))) < 0.5);
    }
}

static const char *const exports[] = {
    "h200-nsys/drv_gaps.sqlite", "h200-nsys/drv_starve.sqlite", "h200-nsys/drv_sync_memcpy.sqlite",
    "h200-nsys/drv_memset_pinned.sqlite", "h200-nsys/drv_sync_api.sqlite", "h200-nsys/drv_pageable_async.sqlite",
    "h200-torch/low_queue_bad.sqlite", "h200-torch/gpu_idle_bad.sqlite", "h200-torch/sync_memcpy_bad.sqlite",
    "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
};

static void test_reproduce(void **state)
{
    (void)state;
    row *rows = malloc(MAX_ROWS * sizeof *rows);
    assert_non_null(rows);
    size_t kinds[3] = {0};
    for (size_t t = 0; t < sizeof exports / sizeof *exports; t++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus_traces, exports[t]);
        int status;
        json_t *doc = corpus_json(&status, "check --format json '%s'", path);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results"), i, r) {
            json_t *c = json_object_get(r, "cause");
            if (!c || json_is_null(json_object_get(c, "reproduce"))) continue;
            const char *kind = sget(c, "kind");
            if (!strcmp(kind, "host")) check_host(path, c, rows), kinds[0]++;
            else if (!strcmp(kind, "call_site")) check_sites(path, c, rows), kinds[1]++;
            else check_kernels(path, c, rows), kinds[2]++;
        }
        json_decref(doc);
    }
    free(rows);
    /* every kind was checked somewhere */
    assert_true(kinds[0] >= 6 && kinds[1] >= 1 && kinds[2] >= 2);
}

/* No OS runtime calls: the cause is unknown, with the option; the exit
** status stays the verdict's (1), not missing data (3). */
static void test_unknown_without_osrt(void **state)
{
    (void)state;
    int status;
    json_t *doc = corpus_json(&status, "check --format json '%s/h200-torch/gpu_idle_bad.sqlite'", corpus_traces);
    assert_int_equal(status, 1);
    json_t *c = cause_of(doc, "gpu-idle-gap");
    assert_non_null(strstr(sget(c, "summary"), "unknown: the threads that launch GPU work made no traced call"));
    const char *u = json_string_value(json_array_get(json_object_get(c, "unknown"), 0));
    assert_non_null(u);
    assert_non_null(strstr(u, "OSRT_API is empty; record them with 'nsys profile -t osrt'"));
    json_decref(doc);

    doc = corpus_json(&status, "check --format json '%s/kineto/h200/gpu_idle_bad.json.gz'", corpus_traces);
    assert_int_equal(status, 1);
    c = cause_of(doc, "gpu-idle-gap");
    u = json_string_value(json_array_get(json_object_get(c, "unknown"), 0));
    assert_non_null(u);
    assert_non_null(strstr(u, "the PyTorch profiler does not record them"));
    assert_non_null(strstr(u, "nsys profile -t cuda,nvtx,osrt"));
    json_decref(doc);

    doc = corpus_json(&status, "check --format json '%s/kineto/h200/sync_memcpy_bad.json.gz'", corpus_traces);
    c = cause_of(doc, "blocking-sync-api");
    u = json_string_value(json_array_get(json_object_get(c, "unknown"), 0));
    assert_non_null(u);
    assert_non_null(strstr(u, "--cudabacktrace=all"));
    json_decref(doc);
}

/* metrics' host side: OS runtime time by call, as osrt_sum would list it. */
static void test_metrics_osrt(void **state)
{
    (void)state;
    int status;
    json_t *doc = corpus_json(&status, "metrics --format json '%s/h200-nsys/drv_gaps.sqlite'", corpus_traces);
    assert_int_equal(status, 0);
    json_t *osrt = json_object_get(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "host_side"), "osrt");
    assert_non_null(osrt);
    assert_int_equal(json_integer_value(json_object_get(osrt, "calls")), 1050);
    size_t i;
    json_t *x;
    bool usleep = false;
    json_array_foreach(json_object_get(osrt, "names"), i, x)
        if (!strcmp(sget(x, "name"), "usleep")) {
            usleep = true;
            assert_int_equal(json_integer_value(json_object_get(x, "calls")), 104);
            /* SELECT sum(end - start) FROM OSRT_API ... WHERE name = 'usleep' */
            assert_int_equal(json_integer_value(json_object_get(x, "total_ns")), 4811436234);
            assert_true(json_number_value(json_object_get(x, "max_ns")) > 700e6);
        }
    assert_true(usleep);
    json_decref(doc);
}

int main(void)
{
    if (!corpus_init("the host-side causes of findings (issue #18)")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaps_name_usleep), cmocka_unit_test(test_saxpy_call_site),
        cmocka_unit_test(test_reproduce), cmocka_unit_test(test_unknown_without_osrt),
        cmocka_unit_test(test_metrics_osrt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
