/*
** Corpus test: where the real exports say they were recorded
** (docs/formats.md, "Where a result comes from"). None of them records a
** rank: every one is checked and its rank, world size and job are null --
** unknown, never guessed (ddp_good holds two ranks' processes in one
** export). Hosts and GPU processes are what TARGET_INFO_SYSTEM_ENV and the
** activity tables hold; check's options give the rank; and a merge of
** real results with a rank missing is an error naming it. Skips with a
** message when ../shared is absent. Kineto traces say their rank in
** distributedInfo, and it is read.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"

static json_t *trace_of(json_t *doc)
{
    return json_array_get(json_object_get(doc, "traces"), 0);
}

/* Every export of the corpus's nsys folders: rank unknown. */
static void test_no_export_records_a_rank(void **state)
{
    (void)state;
    static const char *const dirs[] = {"public", "h200-nsys", "h200-torch"};
    size_t checked = 0;
    for (size_t d = 0; d < 3; d++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", corpus_traces, dirs[d]);
        DIR *h = opendir(dir);
        assert_non_null(h);
        struct dirent *e;
        while ((e = readdir(h))) {
            size_t n = strlen(e->d_name);
            if (n < 7 || strcmp(e->d_name + n - 7, ".sqlite")) continue;
            int st;
            json_t *doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", dir, e->d_name);
            json_t *t = trace_of(doc);
            if (!json_is_null(json_object_get(t, "rank")) || json_object_get(t, "rank_from") ||
                !json_is_null(json_object_get(t, "world_size")) || !json_is_null(json_object_get(t, "job")))
                fail_msg("%s/%s: a rank, world size or job where the export records none", dirs[d], e->d_name);
            assert_true(json_is_array(json_object_get(t, "pids")));
            json_decref(doc);
            checked++;
        }
        closedir(h);
    }
    assert_true(checked >= 30);
}

/* Hosts from Hostname, GPU processes from the activity. */
static void test_hosts_and_processes(void **state)
{
    (void)state;
    static const struct {
        const char *file, *host;
        json_int_t pids[2];
        size_t n_pids;
    } cases[] = {
        {"public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "nid001608", {1230493}, 1},
        {"public/nvfuser-h200-nsys2025.1-nvtx-heavy.sqlite", "ipp2-0047.nvidia.com", {0}, 0},
        {"h200-torch/ddp_good.sqlite", NULL, {1813, 1814}, 2},
        {"h200-nsys/drv_train_run1.sqlite", NULL, {0}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st;
        json_t *doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", corpus_traces, cases[i].file);
        json_t *t = trace_of(doc), *host = json_object_get(t, "host"), *pids = json_object_get(t, "pids");
        if (cases[i].host ? !json_is_string(host) || strcmp(json_string_value(host), cases[i].host) : !json_is_null(host))
            fail_msg("%s: host %s", cases[i].file, json_is_string(host) ? json_string_value(host) : "null");
        if (cases[i].n_pids) {
            assert_int_equal(json_array_size(pids), cases[i].n_pids);
            for (size_t k = 0; k < cases[i].n_pids; k++)
                assert_int_equal(json_integer_value(json_array_get(pids, k)), cases[i].pids[k]);
        }
        json_decref(doc);
    }
}

/* The options tell the rank; a merge with a rank missing names it. */
static void test_ranks_told_and_missing(void **state)
{
    (void)state;
    char dir[] = "/tmp/tg-origin-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[3][64];
    int st;
    for (int r = 0; r < 3; r++) {
        json_t *res = corpus_json(&st, "check --format json --rank %d --world-size 4 --job nightly "
                                       "'%s/h200-nsys/drv_train_run%d.sqlite'", r, corpus_traces, r + 1);
        assert_int_equal(st, 0);
        snprintf(path[r], sizeof path[r], "%s/rank%d.json", dir, r);
        assert_int_equal(json_dump_file(res, path[r], JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
        json_decref(res);
    }
    json_t *doc = corpus_json(&st, "merge --format json '%s'", dir);
    assert_int_equal(st, 3);
    json_t *traces = json_object_get(doc, "traces");
    assert_int_equal(json_array_size(traces), 4);
    json_t *t1 = json_array_get(traces, 1), *missing = json_array_get(traces, 3);
    assert_int_equal(json_integer_value(json_object_get(t1, "rank")), 1);
    assert_string_equal(json_string_value(json_object_get(t1, "rank_from")), "--rank");
    assert_string_equal(json_string_value(json_object_get(t1, "job")), "nightly");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(missing, "missing_ranks"), 0)), 3);
    const char *err = json_string_value(json_object_get(missing, "error"));
    assert_non_null(err);
    assert_non_null(strstr(err, "no result for 1 of the 4 ranks of job nightly (rank 3)"));
    json_decref(doc);
    for (int r = 0; r < 3; r++) unlink(path[r]);
    rmdir(dir);
}

/* Kineto: the rank and world size of distributedInfo; a trace without it
** knows none. The two ranks of ddp_good, merged alone, miss each other. */
static void test_kineto_distributed_info(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        json_int_t rank, world;
    } cases[] = {
        {"kineto/public/hta-v100-ddp-rank1of2-nccl.pt.trace.json.gz", 1, 2},
        {"kineto/public/tracelens-b200-eager-rank0of8-nccl.pt.trace.json.gz", 0, 8},
        {"kineto/h200-exported/ddp_good_rank1.json.gz", 1, 2},
        {"kineto/h200/sync_memcpy_good.json.gz", -1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st;
        json_t *doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", corpus_traces, cases[i].file);
        json_t *t = trace_of(doc), *rank = json_object_get(t, "rank"), *world = json_object_get(t, "world_size");
        if (cases[i].rank < 0) {
            assert_true(json_is_null(rank) && json_is_null(world) && !json_object_get(t, "rank_from"));
        } else {
            assert_int_equal(json_integer_value(rank), cases[i].rank);
            assert_int_equal(json_integer_value(world), cases[i].world);
            assert_string_equal(json_string_value(json_object_get(t, "rank_from")), "distributedInfo");
        }
        json_decref(doc);
    }
    char dir[] = "/tmp/tg-origin-kineto-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    int st;
    json_t *res = corpus_json(&st, "check --format json '%s/kineto/h200-exported/ddp_good_rank0.json.gz'", corpus_traces);
    snprintf(path, sizeof path, "%s/rank0.json", dir);
    assert_int_equal(json_dump_file(res, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    json_decref(res);
    json_t *doc = corpus_json(&st, "merge --format json '%s'", path);
    assert_int_equal(st, 3);
    const char *err = json_string_value(json_object_get(json_array_get(json_object_get(doc, "traces"), 1), "error"));
    assert_non_null(err);
    assert_non_null(strstr(err, "no result for 1 of the 2 ranks (rank 1)"));
    json_decref(doc);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    if (!corpus_init("origin_corpus")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_export_records_a_rank),
        cmocka_unit_test(test_hosts_and_processes),
        cmocka_unit_test(test_ranks_told_and_missing),
        cmocka_unit_test(test_kineto_distributed_info),
    };
    return cmocka_run_group_tests_name("origin_corpus", tests, NULL, NULL);
}
