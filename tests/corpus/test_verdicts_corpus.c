/*
** Corpus test: the expected-verdicts table of ../shared/traces/README.md.
** Runs the built `tracegate check --format json` (the JSON contract of
** docs/formats.md) on every listed real trace and asserts which built-in rules
** must fire and which must not, with the counts the README gives; then the
** public captures: every one loads, a rule lacking data exits 3 naming the
** table and the nsys option, and --missing-data=skip evaluates the rest.
** Skips with a message when ../shared/traces is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

typedef struct expect {
    const char *file;          /* relative to the traces folder */
    const char *fire[6];       /* must fail */
    const char *quiet[6];      /* must pass */
    const char *count_rule;    /* optional: a rule whose count is checked */
    long count;
} expect;

static const expect table[] = {
    {"h200-nsys/drv_sync_memcpy.sqlite", {"sync-memcpy", "copy-dominated"}, {"pageable-async-memcpy", "alloc-in-loop"},
     "sync-memcpy", 400},
    {"h200-nsys/drv_pageable_async.sqlite", {"pageable-async-memcpy", "copy-dominated"}, {"sync-memcpy", "alloc-in-loop"},
     "pageable-async-memcpy", 190},
    /* the async fix still moves 16 MiB per step: 95% of the busy time is copies (issue #22) */
    {"h200-nsys/drv_pinned_async.sqlite", {"copy-dominated"},
     {"sync-memcpy", "pageable-async-memcpy", "gpu-idle-gap", "alloc-in-loop"}, "copy-dominated", 190},
    {"h200-nsys/drv_sync_memset.sqlite", {0}, {"sync-memset", "alloc-in-loop", "copy-dominated"}, 0, 0},
    {"h200-nsys/drv_memset_pinned.sqlite", {"sync-memset"}, {"alloc-in-loop", "copy-dominated"}, "sync-memset", 200},
    {"h200-nsys/drv_sync_api.sqlite", {"blocking-sync-api"}, {"alloc-in-loop", "copy-dominated"}, 0, 0},
    {"h200-nsys/drv_steady.sqlite", {0},
     {"blocking-sync-api", "iteration-variance", "gpu-idle-gap", "alloc-in-loop", "copy-dominated"}, 0, 0},
    {"h200-nsys/drv_gaps.sqlite", {"gpu-idle-gap", "low-gpu-utilization"}, {"alloc-in-loop", "copy-dominated"},
     "gpu-idle-gap", 3},
    /* issue #18: 50 kernels of 1.8 us per step, launched by 11 us calls */
    {"h200-nsys/drv_starve.sqlite", {"gpu-starvation", "kernel-launch-bound"},
     {"iteration-variance", "alloc-in-loop", "copy-dominated"}, "kernel-launch-bound", 50},
    {"h200-nsys/drv_busy.sqlite", {0},
     {"gpu-starvation", "low-gpu-utilization", "gpu-idle-gap", "iteration-variance", "alloc-in-loop",
      "kernel-launch-bound"}, 0, 0},
    /* issue #22: copy-dominated is quiet on drv_busy (no copies: 0% of the
    ** busy time); a second row, the first's quiet list is full */
    {"h200-nsys/drv_busy.sqlite", {0}, {"copy-dominated", "sync-memcpy", "blocking-sync-api"}, "copy-dominated", 0},
    {"h200-nsys/drv_jitter.sqlite", {"iteration-variance"}, {"gpu-idle-gap", "alloc-in-loop", "copy-dominated"}, 0, 0},
    /* issue #22: copies are 13% of the busy time of the training runs */
    {"h200-nsys/drv_train_run1.sqlite", {0}, {"copy-dominated", "alloc-in-loop"}, 0, 0},
    {"h200-nsys/drv_train_run2.sqlite", {0}, {"copy-dominated", "alloc-in-loop"}, 0, 0},
    {"h200-nsys/drv_train_run3.sqlite", {0}, {"copy-dominated", "alloc-in-loop"}, 0, 0},
    {"h200-torch/sync_memcpy_bad.sqlite", {"pageable-async-memcpy", "blocking-sync-api"}, {"sync-memcpy"}, 0, 0},
    {"h200-torch/sync_memcpy_good.sqlite", {0},
     {"pageable-async-memcpy", "blocking-sync-api", "sync-memcpy"}, 0, 0},
    {"h200-torch/gpu_idle_bad.sqlite", {"gpu-idle-gap", "low-gpu-utilization", "iteration-variance"}, {0},
     "gpu-idle-gap", 3},
    {"h200-torch/gpu_idle_good.sqlite", {0}, {"gpu-idle-gap", "low-gpu-utilization", "iteration-variance"}, 0, 0},
    /* issue #18: 300 kernels of 0.9 us per step, launched by 7 us calls */
    {"h200-torch/low_queue_bad.sqlite", {"gpu-starvation", "kernel-launch-bound"}, {0}, "kernel-launch-bound", 55},
    {"h200-torch/low_queue_good.sqlite", {0}, {"gpu-starvation", "iteration-variance", "kernel-launch-bound"}, 0, 0},
    {"h200-torch/iter_variance_bad.sqlite", {"iteration-variance"}, {0}, 0, 0},
    {"h200-torch/iter_variance_good.sqlite", {0}, {"iteration-variance"}, 0, 0},
    {"h200-torch/ddp_bad.sqlite", {"low-nccl-overlap"}, {0}, 0, 0},
    {"h200-torch/ddp_good.sqlite", {0}, {"low-nccl-overlap"}, 0, 0},
    {"public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", {"sync-memcpy"}, {0}, "sync-memcpy", 15},
    /* ProfilerStep#N around train_step: one iteration per step, 45 steady */
    {"h200-torch/realistic_nocache.sqlite", {0}, {"iteration-variance"}, "iteration-variance", 45},
    /* the caching allocator off (issue #22): 570 cudaMalloc and 568 cudaFree per steady step */
    {"h200-torch/realistic_nocache.sqlite", {"alloc-in-loop"}, {"copy-dominated"}, "alloc-in-loop", 51210},
    {"h200-torch/realistic_baseline_run1.sqlite", {0}, {"alloc-in-loop", "copy-dominated", "kernel-launch-bound"},
     0, 0},
    {"h200-torch/realistic_baseline_run2.sqlite", {0}, {"alloc-in-loop", "copy-dominated", "kernel-launch-bound"},
     0, 0},
    /* 1075 kernels per step, 65% shorter than their launches, yet launches take 70% of the kernel time */
    {"h200-torch/realistic_regressed.sqlite", {0}, {"alloc-in-loop", "copy-dominated", "kernel-launch-bound"}, 0, 0},
    {"h200-torch/realistic_nocache.sqlite", {"alloc-in-loop"}, {"kernel-launch-bound"}, 0, 0},
    /* issue #19: pageable-async-memcpy's min_bytes (64 KB) -- 33 copies of
    ** 8 bytes no longer fire; of dlprof's 11, the one of 192 KB does; the
    ** 50 copies of 64 KiB of the regressed run still do */
    {"public/nsysai-h100-2gpu-nccl-sendrecv-before-0.3s-window-nsys2026.2.sqlite", {0}, {"pageable-async-memcpy"}, 0, 0},
    {"public/nsysai-h100-2gpu-sp2-fa3-1s-window-nsys2026.2.sqlite", {0}, {"pageable-async-memcpy"}, 0, 0},
    {"public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1.sqlite", {"pageable-async-memcpy"}, {0},
     "pageable-async-memcpy", 1},
    {"h200-torch/realistic_regressed.sqlite", {"pageable-async-memcpy"}, {0}, "pageable-async-memcpy", 50},
};

/* The marker of each trace's iterations (docs/iterations.md): the
** outermost matching ranges; "" for none. */
static const struct { const char *file, *marker; } markers[] = {
    {"h200-nsys/drv_sync_memcpy.sqlite", "iteration"},
    {"h200-torch/ddp_good.sqlite", "iteration"},
    {"h200-torch/realistic_baseline_run1.sqlite", "train_step"},
    {"h200-torch/realistic_nocache.sqlite", "ProfilerStep#N"},
    {"public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", ""},
    {"public/nvfuser-h200-nsys2025.1-nvtx-heavy.sqlite", ""},
};

static const char *public_captures[] = {
    "public/nsysai-h100-2gpu-sp2-fa3-1s-window-nsys2026.2.sqlite",
    "public/nsysai-h100-2gpu-nccl-sendrecv-before-0.3s-window-nsys2026.2.sqlite",
    "public/nsysai-rtx3080-mock-minimal-nsys2026.1.sqlite",
    "public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1.sqlite",
    "public/dynamicvit-rtxa2000-empty-capture.sqlite",
    "public/uvmtorch-rtxa5000-nokernels-nsys2025.3.sqlite",
    "public/alpa-rtx3090-nccl-init-nokernels.sqlite",
    "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    "public/nvfuser-h200-nsys2025.1-nvtx-heavy.sqlite",
};

static void test_iteration_markers(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof markers / sizeof *markers; i++) {
        int st;
        json_t *doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", corpus_traces,
                                  markers[i].file);
        json_t *tr = json_array_get(json_object_get(doc, "traces"), 0);
        const char *got = json_string_value(json_object_get(tr, "iteration_marker"));
        if (strcmp(got ? got : "", markers[i].marker) != 0) {
            print_error("%s: iteration marker '%s', expected '%s'\n", markers[i].file, got ? got : "",
                        markers[i].marker);
            failures++;
        }
        json_decref(doc);
    }
    /* metrics and info say how: nocache's 50 train_step ranges are nested */
    int st;
    json_t *m = corpus_json(&st, "metrics --format json '%s/h200-torch/realistic_nocache.sqlite'", corpus_traces);
    json_t *doc = json_array_get(json_object_get(m, "traces"), 0);
    if (!doc) doc = m;
    json_t *tr = json_object_get(doc, "trace");
    if (json_integer_value(json_object_get(tr, "iterations")) != 50 ||
        json_integer_value(json_object_get(tr, "steady_iterations")) != 45) {
        print_error("realistic_nocache: %lld iterations (%lld steady), expected 50 (45)\n",
                    (long long)json_integer_value(json_object_get(tr, "iterations")),
                    (long long)json_integer_value(json_object_get(tr, "steady_iterations")));
        failures++;
    }
    json_t *proc = json_array_get(json_object_get(json_object_get(doc, "iteration_markers"), "processes"), 0);
    json_t *list = json_object_get(proc, "markers");
    json_t *first = json_array_get(list, 0), *second = json_array_get(list, 1);
    if (json_array_size(list) != 2 ||
        strcmp(json_string_value(json_object_get(first, "marker")), "ProfilerStep#N") != 0 ||
        json_integer_value(json_object_get(first, "ranges")) != 50 ||
        strcmp(json_string_value(json_object_get(second, "marker")), "train_step") != 0 ||
        strcmp(json_string_value(json_object_get(second, "role")), "nested") != 0 ||
        !json_is_true(json_object_get(proc, "main_thread"))) {
        print_error("realistic_nocache: metrics' iteration_markers do not say ProfilerStep#N x50, train_step nested x50\n");
        failures++;
    }
    json_decref(m);
    assert_int_equal(failures, 0);
}

static void test_expected_verdicts(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const expect *e = &table[i];
        json_t *doc;
        int st;
        doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", corpus_traces, e->file);
        if (st != 0 && st != 1) {
            print_error("%s: exit status %d\n", e->file, st);
            failures++;
        }
        for (int k = 0; k < 6 && e->fire[k]; k++) {
            const char *s = corpus_status(doc, e->fire[k]);
            if (strcmp(s, "fail") != 0) {
                print_error("%s: %s must fire, is %s\n", e->file, e->fire[k], s);
                failures++;
            }
        }
        for (int k = 0; k < 6 && e->quiet[k]; k++) {
            const char *s = corpus_status(doc, e->quiet[k]);
            if (strcmp(s, "pass") != 0) {
                print_error("%s: %s must not fire, is %s\n", e->file, e->quiet[k], s);
                failures++;
            }
        }
        if (e->count_rule) {
            json_t *r = corpus_result(doc, e->count_rule);
            long n = r ? (long)json_integer_value(json_object_get(r, "count")) : -1;
            if (n != e->count) {
                print_error("%s: %s count %ld, expected %ld\n", e->file, e->count_rule, n, e->count);
                failures++;
            }
        }
        if (e->fire[0] && st != 1) {
            /* an error-severity finding must fail the gate */
            for (int k = 0; k < 6 && e->fire[k]; k++) {
                json_t *r = corpus_result(doc, e->fire[k]);
                const char *sev = r ? json_string_value(json_object_get(r, "severity")) : "";
                if (sev && strcmp(sev, "error") == 0) {
                    print_error("%s: %s fired at error severity but exit status is %d\n", e->file,
                                e->fire[k], st);
                    failures++;
                }
            }
        }
        json_decref(doc);
    }
    assert_int_equal(failures, 0);
}

/* Public captures: load on every schema; lacking data means exit 3 with the
** table named, and skip mode evaluates the rest. */
static void test_public_captures(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof public_captures / sizeof *public_captures; i++) {
        const char *file = public_captures[i];
        json_t *doc;
        int st;
        doc = corpus_json(&st, "check --format json '%s/%s'", corpus_traces, file);
        if (st != 0 && st != 1 && st != 3) {
            print_error("%s: exit status %d\n", file, st);
            failures++;
        }
        json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
        bool any_missing = false;
        size_t k;
        json_t *r;
        json_array_foreach(results, k, r) {
            if (strcmp(json_string_value(json_object_get(r, "status")), "error") != 0) continue;
            any_missing = true;
            const char *msg = json_string_value(json_object_get(r, "message"));
            /* the table, and how to record it, or (CUDA traced) why it
            ** holds nothing: never advice to record what was recorded */
            if (!msg || (!strstr(msg, "nsys profile") && !strstr(msg, "CUDA was traced")) ||
                (!strstr(msg, "CUPTI_ACTIVITY_KIND") && !strstr(msg, "NVTX_EVENTS"))) {
                print_error("%s: missing-data message lacks the table or option: %s\n", file,
                            msg ? msg : "(none)");
                failures++;
            }
        }
        /* missing data is 3 unless a finding fails the gate, which wins
        ** (1, status "fail"; docs/formats.md) */
        const char *status = json_string_value(json_object_get(doc, "status"));
        bool gated = st == 1 && status && !strcmp(status, "fail");
        if (any_missing ? !(st == 3 || gated) : st == 3) {
            print_error("%s: exit %d but missing data %s\n", file, st, any_missing ? "yes" : "no");
            failures++;
        }
        json_decref(doc);

        doc = corpus_json(&st, "check --format json --missing-data=skip '%s/%s'", corpus_traces, file);
        if (st != 0 && st != 1) {
            print_error("%s: with --missing-data=skip, exit status %d\n", file, st);
            failures++;
        }
        results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
        if (json_array_size(results) < 11) {
            print_error("%s: only %zu rule results\n", file, json_array_size(results));
            failures++;
        }
        json_array_foreach(results, k, r) {
            const char *s = json_string_value(json_object_get(r, "status"));
            if (strcmp(s, "error") == 0) {
                print_error("%s: rule %s errored in skip mode\n", file,
                            json_string_value(json_object_get(r, "rule")));
                failures++;
            }
        }
        json_decref(doc);
    }
    assert_int_equal(failures, 0);
}

/* A team's own rule file (not a built-in), run alone with --rules, gives
** the right verdicts on real traces. */
static void test_custom_rules(void **state)
{
    (void)state;
    static const struct {
        const char *file, *big_copies, *sync_calls;
        long big_count;
    } cases[] = {
        {"h200-nsys/drv_sync_memcpy.sqlite", "fail", "pass", 190},   /* 16 MiB HtoD per steady iteration */
        {"h200-nsys/drv_pinned_async.sqlite", "pass", "pass", 0},
        {"h200-nsys/drv_sync_api.sqlite", "pass", "fail", 0},         /* 5 per iteration */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st;
        json_t *doc = corpus_json(&st, "check --format json --rules '%s/tests/corpus/team-rules.yaml' '%s/%s'",
                                  getenv("TG_SOURCE_ROOT"), corpus_traces, cases[i].file);
        json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
        assert_int_equal(json_array_size(results), 2); /* the built-ins are not loaded */
        assert_string_equal(corpus_status(doc, "team-big-sync-copies"), cases[i].big_copies);
        assert_string_equal(corpus_status(doc, "team-sync-calls"), cases[i].sync_calls);
        assert_int_equal(json_integer_value(json_object_get(corpus_result(doc, "team-big-sync-copies"), "count")),
                         cases[i].big_count);
        assert_int_equal(st, strcmp(cases[i].big_copies, "fail") == 0 ? 1 : 0);
        json_decref(doc);
    }
}

int main(void)
{
    if (!corpus_init("corpus verdicts")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iteration_markers),
        cmocka_unit_test(test_expected_verdicts),
        cmocka_unit_test(test_public_captures),
        cmocka_unit_test(test_custom_rules),
    };
    return cmocka_run_group_tests_name("corpus verdicts", tests, NULL, NULL);
}
