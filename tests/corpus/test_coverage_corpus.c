/*
** Captures that lost data (issue 32; docs/rules.md, "Lost data"): captures
** cut from the shared exports in a temporary folder (copies, never the
** shared files) get, on every rule that reads GPU work, an error (exit 3,
** also under --missing-data=skip) whose sentence says how many launch calls
** lack a GPU record, from when, and how much of the run is left unjudged;
** `info` gives the same numbers; the lean load and --load all count the
** same; and no unmodified shared trace is called damaged.
**
** The cuts (sqlite3 on the copy):
**   (a) kernels after the midpoint of the kernels' span removed, the API
**       calls, copies and NVTX ranges kept;
**   (b) 5% of the kernels removed, picked by a fixed hash of their rowid
**       (rowid * 2654435761 mod 1000 < 50: the same rows every run);
**   (d) every CUDA record (API calls, kernels, copies, memsets) after the
**       first twentieth of the NVTX ranges' span removed, the ranges
**       kept: CUDA activity that stops early.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "corpus.h"

static char tmpdir[256];

#define TAIL "; the data was recorded and then lost, so this is an error, not a skip"
/* the diagnosis of records dropped, for a capture torch.profiler recorded
** (realistic_*: converted by kineto2nsys) and for one nsys recorded */
#define KINETO_BUFFERS "records dropped from full activity buffers: give libkineto more buffer with " \
    "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB in the file KINETO_CONFIG names, or profile fewer steps"
#define NSYS_BUFFERS "records dropped from full activity buffers: have nsys save them while the program runs " \
    "with 'nsys profile --cuda-flush-interval=MS', or capture a shorter range"
#define STOPPED "CUDA recording stopped while the program ran: a profiler that stops recording (CUPTI failing on " \
    "this driver, or a capture range ended early) or "

/* (d)'s sentence after "rule R " */
#define STOP_SENTENCE \
    "reads GPU work and the calls that launched it, but the capture's GPU activity (kernels, copies, memsets) " \
    "stop 0.301 s into it while its NVTX ranges go on to 2.564 s: 88.3% of the run (2.263 s of 2.564 s) is " \
    "left unjudged; 55 of the 55 iterations are cut, those starting from 0.893 s to 2.531 s; " STOPPED \
    KINETO_BUFFERS TAIL

#define MID "(SELECT (min(start) + max(\"end\")) / 2 FROM CUPTI_ACTIVITY_KIND_KERNEL)"
#define EARLY "(SELECT min(start) + (max(\"end\") - min(start)) / 20 FROM NVTX_EVENTS)"
#define DROP "(rowid * 2654435761) % 1000 < 50"

/* Copy the shared trace rel to tmpdir/name; false when it cannot. */
static bool copy_trace(const char *rel, const char *name, char *out, size_t size)
{
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", corpus_traces, rel);
    snprintf(out, size, "%s/%s", tmpdir, name);
    FILE *in = fopen(src, "rb"), *to = fopen(out, "wb");
    bool ok = in && to;
    char buf[1 << 16];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, to) == n;
    if (in) fclose(in);
    if (to && fclose(to) != 0) ok = false;
    return ok;
}

/* Run sql on the copy; the number the first statement's SELECT gives (a
** count before the cut), or -1. */
static long long on_copy(const char *path, const char *count_sql, const char *cut_sql)
{
    sqlite3 *db;
    long long n = -1;
    if (sqlite3_open(path, &db) != SQLITE_OK) return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, count_sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    char *err = NULL;
    if (sqlite3_exec(db, cut_sql, NULL, NULL, &err) != SQLITE_OK) {
        print_error("cut fails: %s\n", err ? err : "?");
        n = -1;
    }
    sqlite3_free(err);
    sqlite3_close(db);
    return n;
}

static json_t *coverage_of(json_t *doc)
{
    json_t *t = json_array_get(json_object_get(doc, "traces"), 0);
    json_t *c = json_object_get(t, "coverage");
    if (!c) fail_msg("no coverage object in the result");
    return c;
}

static long long num(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    if (b) x = json_object_get(x, b);
    return (long long)json_integer_value(x);
}

/* a and b are the same document, numbers within 1e-12 (check writes 15
** digits, info 17) */
static bool same_json(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        double d = json_number_value(a) - json_number_value(b);
        return d < 1e-12 && d > -1e-12;
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b)) return false;
        const char *key;
        json_t *v;
        json_object_foreach(a, key, v) if (!same_json(v, json_object_get(b, key))) return false;
        return true;
    }
    return json_equal(a, b);
}

/* Every rule that ran on the damaged copy is an error saying `sentence`
** (its own id in front); at least min of them. */
static void all_lost(json_t *doc, const char *sentence, size_t min)
{
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    size_t n = 0, i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *status = json_string_value(json_object_get(r, "status"));
        const char *msg = json_string_value(json_object_get(r, "message"));
        char want[2048];
        snprintf(want, sizeof want, "rule %s %s", json_string_value(json_object_get(r, "rule")), sentence);
        if (strcmp(status, "error") || !msg || strcmp(msg, want))
            fail_msg("%s: %s \"%s\", not the error \"%s\"", json_string_value(json_object_get(r, "rule")), status,
                     msg ? msg : "", want);
        n++;
    }
    assert_true(n >= min);
}

/* check, check --load all, check --missing-data=skip and info on a cut
** copy: exit 3, the sentence, the same coverage everywhere. Returns the
** coverage (a reference the caller drops). */
static json_t *check_damaged(const char *path, const char *sentence)
{
    int st;
    json_t *doc = corpus_json(&st, "check --format json '%s'", path);
    assert_int_equal(st, 3);
    all_lost(doc, sentence, 10);
    json_t *cov = json_incref(coverage_of(doc));
    json_decref(doc);

    json_t *all = corpus_json(&st, "check --format json --load all '%s'", path);
    assert_int_equal(st, 3);
    if (!same_json(cov, coverage_of(all))) fail_msg("%s: --load all counts another coverage", path);
    json_decref(all);

    json_t *skip = corpus_json(&st, "check --format json --missing-data=skip '%s'", path);
    assert_int_equal(st, 3);   /* lost, not missing: never a skip */
    all_lost(skip, sentence, 10);
    json_decref(skip);

    json_t *info = corpus_json(&st, "info --format json '%s'", path);
    assert_int_equal(st, 0);
    json_t *t = json_array_get(json_object_get(info, "traces"), 0);
    if (!same_json(cov, json_object_get(t, "coverage"))) fail_msg("%s: info counts another coverage", path);
    /* info's account is check's: the same clause */
    const char *lost = json_string_value(json_array_get(json_object_get(t, "lost"), 0));
    const char *clause = strstr(sentence, "but ");
    assert_non_null(lost);
    assert_non_null(clause);
    char head[1024];
    assert_non_null(strstr(clause, TAIL));
    size_t len = (size_t)(strstr(clause, TAIL) - (clause + 4));
    snprintf(head, sizeof head, "%.*s", (int)len, clause + 4);
    /* the whole account, diagnosis included, and nothing else before
    ** info's pointer to check */
    if (strncmp(lost, head, strlen(head)) || strncmp(lost + strlen(head), ": check reports", 15))
        fail_msg("info says \"%s\", check \"%s\"", lost, head);
    json_decref(info);
    return cov;
}

/* The run is every activity's records, OS runtime calls included: the
** drv_* exports' run starts with the process's start-up calls, 0.73 s
** before its first CUDA call. */

/* One cut: the shared trace, the copy's name, the rows it removes (a
** count, then the DELETEs), how many, and the sentence every rule on GPU
** work must give after "rule R ". */
typedef struct cut_case {
    const char *trace, *copy, *count_sql, *cut_sql;
    long long removed;
    const char *sentence;
} cut_case;

#define LOST(calls, of, pct, from, to, run, span, cut, why) \
    "reads GPU work and the calls that launched it, but " calls " of the capture's " of " kernel and copy launch " \
    "calls (" pct "%, more than the 1% tolerated) have no GPU record, from " from " s to " to " s into the " \
    "capture: " run "% of the run (" span " s) is left unjudged; " cut "; " why TAIL

#define KERNELS_AFTER_MID "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > " MID, \
                          "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > " MID
#define KERNELS_DROPPED "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " DROP, \
                        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " DROP

static const cut_case cases[] = {
    /* (a) */
    {"h200-torch/realistic_baseline_run1.sqlite", "mid_torch.sqlite", KERNELS_AFTER_MID, 18429,
     LOST("18414", "30180", "61.0", "1.424", "2.562", "44.1", "1.139",
          "39 of the 55 iterations are cut, those starting from 1.405 s to 2.531 s", KINETO_BUFFERS)},
    {"h200-nsys/drv_train_run1.sqlite", "mid_drv.sqlite", KERNELS_AFTER_MID, 901,
     LOST("901", "2400", "37.5", "0.881", "0.976", "9.6", "0.095",
          "151 of the 295 iterations are cut, those starting from 0.881 s to 0.976 s", NSYS_BUFFERS)},
    /* (b) */
    {"h200-torch/realistic_baseline_run1.sqlite", "drop_torch.sqlite", KERNELS_DROPPED, 1448,
     LOST("1448", "30180", "4.8", "0.527", "2.562", "78.7", "2.035",
          "55 of the 55 iterations are cut, those starting from 0.893 s to 2.531 s", KINETO_BUFFERS)},
    {"h200-nsys/drv_train_run1.sqlite", "drop_drv.sqlite", KERNELS_DROPPED, 90,
     LOST("90", "2400", "3.8", "0.786", "0.976", "19.2", "0.190",
          "83 of the 295 iterations are cut, those starting from 0.790 s to 0.976 s", NSYS_BUFFERS)},
};

/* Cut case i from its shared trace and check it (check_damaged); its
** coverage. */
static json_t *run_case(size_t i)
{
    const cut_case *c = &cases[i];
    char path[512];
    assert_true(copy_trace(c->trace, c->copy, path, sizeof path));
    assert_int_equal(on_copy(path, c->count_sql, c->cut_sql), c->removed);
    return check_damaged(path, c->sentence);
}

static void test_kernels_after_midpoint(void **state)
{
    (void)state;
    json_t *cov = run_case(0);
    /* every removed kernel's launch is counted: lost, or (the last 15, past
    ** the last copy of a GPU busy to the end) run after the capture */
    json_t *k = json_object_get(cov, "kernels");
    assert_int_equal(num(k, "launch_calls", NULL), 28965);
    assert_int_equal(num(k, "launches_without_gpu_record", "count"), 18414);
    assert_int_equal(num(k, "launches_after_capture", NULL) + num(k, "launches_without_gpu_record", "count"),
                     cases[0].removed);
    assert_int_equal(num(cov, "memcpy", "records"), 1215);
    assert_true(json_is_null(json_object_get(cov, "stops_early")));
    json_decref(cov);

    cov = run_case(1);
    k = json_object_get(cov, "kernels");
    assert_int_equal(num(k, "launches_without_gpu_record", "count"), 901);
    assert_int_equal(num(k, "launch_calls", NULL), 1800);
    json_decref(cov);
}

static void test_five_percent_dropped(void **state)
{
    (void)state;
    for (size_t i = 2; i < 4; i++) {
        json_t *cov = run_case(i);
        json_t *k = json_object_get(cov, "kernels");
        assert_int_equal(num(k, "launches_without_gpu_record", "count"), cases[i].removed);
        assert_int_equal(num(k, "launches_after_capture", NULL), 0);
        json_decref(cov);
    }
}

/* (d) */
static void test_cuda_stops_early(void **state)
{
    (void)state;
    char path[512];
    assert_true(copy_trace("h200-torch/realistic_baseline_run1.sqlite", "stop_torch.sqlite", path, sizeof path));
    long long cut = on_copy(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start > " EARLY,
                            "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > " EARLY ";"
                            "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start > " EARLY ";"
                            "DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start > " EARLY ";"
                            "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start > " EARLY ";");
    assert_true(cut > 0);
    json_t *cov = check_damaged(path, STOP_SENTENCE);
    json_t *s = json_object_get(cov, "stops_early");
    assert_string_equal(json_string_value(json_object_get(s, "activity")), "gpu");
    json_decref(cov);
}

/* Every shared trace as recorded: a coverage object, and none of them
** damaged (the public captures too: a window's last launches run after
** it, Kineto's memsets without GPU events are not counted as lost). */
static void test_shared_traces_not_damaged(void **state)
{
    (void)state;
    static const char *const files[] = {
        "h200-nsys/drv_train_run1.sqlite", "h200-nsys/drv_sync_memcpy.sqlite", "h200-nsys/drv_gaps.sqlite",
        "h200-torch/realistic_baseline_run1.sqlite", "h200-torch/ddp_good.sqlite",
        "public/nsysai-h100-2gpu-sp2-fa3-1s-window-nsys2026.2.sqlite",
        "public/nsysai-h100-2gpu-nccl-sendrecv-before-0.3s-window-nsys2026.2.sqlite",
        "public/alpa-rtx3090-nccl-init-nokernels.sqlite", "public/uvmtorch-rtxa5000-nokernels-nsys2025.3.sqlite",
        "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1.sqlite",
        "kineto/public/param-resnet-rtx2080ti.pt.trace.json.gz", "kineto/public/hta-alexnet-a100.pt.trace.json.gz",
        "kineto/h200/gpu_idle_bad.json.gz",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        int st;
        json_t *doc = corpus_json(&st, "check --format json '%s/%s'", corpus_traces, files[i]);
        json_t *t = json_array_get(json_object_get(doc, "traces"), 0);
        json_t *cov = json_object_get(t, "coverage");
        if (!cov) fail_msg("%s: no coverage", files[i]);
        if (!json_is_null(json_object_get(cov, "stops_early"))) fail_msg("%s: said to stop early", files[i]);
        size_t j;
        json_t *r;
        json_array_foreach(json_object_get(t, "results"), j, r) {
            const char *msg = json_string_value(json_object_get(r, "message"));
            if (msg && strstr(msg, "recorded and then lost")) fail_msg("%s: %s", files[i], msg);
        }
        json_decref(doc);
    }
}

/* The 1 s window of a 2-GPU FSDP run: its GPUs run half a second behind
** the host, so the last 2280 launches ran after the capture: counted as
** such, not as lost. */
static void test_window_after_capture(void **state)
{
    (void)state;
    int st;
    json_t *doc = corpus_json(&st, "check --format json '%s/public/nsysai-h100-2gpu-sp2-fa3-1s-window-nsys2026.2.sqlite'",
                              corpus_traces);
    json_t *cov = coverage_of(doc);
    assert_int_equal(num(cov, "launch_calls", NULL), 4372);
    assert_int_equal(num(cov, "launches_after_capture", NULL), 2280);
    assert_int_equal(num(cov, "launches_without_gpu_record", "count"), 0);
    assert_int_equal(num(cov, "kernels", "records"), 3442);
    json_decref(doc);
}

int main(void)
{
    if (!corpus_init("coverage_corpus")) return 77;
    snprintf(tmpdir, sizeof tmpdir, "%s/tg-coverage-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_after_midpoint),
        cmocka_unit_test(test_five_percent_dropped),
        cmocka_unit_test(test_cuda_stops_early),
        cmocka_unit_test(test_shared_traces_not_damaged),
        cmocka_unit_test(test_window_after_capture),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    static const char *const names[] = {"mid_torch", "mid_drv", "drop_torch", "drop_drv", "stop_torch"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s.sqlite", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return rc;
}
