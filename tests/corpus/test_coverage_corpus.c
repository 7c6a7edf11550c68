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
**       kept: CUDA activity that stops early;
**   (e) the capture: an nsys 2022.4 export whose CUDA API calls
**       stop while its OS runtime calls go on, its kernel table dropped,
**       with and without the rows a CUDA 13 driver leaves
**       (TARGET_INFO_SYSTEM_ENV CudaDriverVersion 13000) and a profiler
**       warning (DIAGNOSTIC_EVENT): the diagnosis says the profiler is
**       older than the driver only when the export says so, and neither
**       check nor info advises recording CUDA, which was on.
** Also: the param coverage_tolerance, and the profiler's account
** (versions, capture window, warnings) read from shared captures.
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

/* (e) The capture, made from drv_gaps (nsys 2022.4.2.1, 4.8 s of
** NVTX ranges, OS runtime calls to 5.3 s): the CUDA API calls after the
** first twentieth of the ranges' span removed, the kernel table dropped
** whole (nsys writes none when CUPTI recorded no kernel), and, when
** `driver` is set, the rows a CUDA 13 driver leaves in
** TARGET_INFO_SYSTEM_ENV and a DIAGNOSTIC_EVENT table with one warning
** (and an Info row, the profiler's log, that is not kept). */
#define CUT_EARLY "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start > " EARLY ";" \
    "DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE start > " EARLY ";" \
    "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
#define NEW_DRIVER \
    "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (281474976710656, 'Local (CLI)', 'CudaDriverVersion', 611, '13000');" \
    "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (281474976710656, 'Local (CLI)', 'NvDriverVersion', 205, '580.95.05');" \
    "CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER NOT NULL, timestampType INTEGER NOT NULL, source INTEGER NOT NULL," \
    " severity INTEGER NOT NULL, text TEXT NOT NULL, globalPid INTEGER);" \
    "INSERT INTO DIAGNOSTIC_EVENT VALUES (2000000000, 1, 3, 2, 'Not all CUDA events might have been collected.', NULL);" \
    "INSERT INTO DIAGNOSTIC_EVENT VALUES (2000000001, 1, 3, 2, 'Not all CUDA events might have been collected.', NULL);" \
    "INSERT INTO DIAGNOSTIC_EVENT VALUES (1000, 1, 1, 1, 'CUDA injection initialized successfully.', NULL);"

#define EARLY_LOST(why) \
    "reads GPU work and the calls that launched it, but the capture's CUDA API calls stop 0.711 s into it while " \
    "its OS runtime calls go on to 5.316 s: 86.6% of the run (4.604 s of 5.316 s) is left unjudged; 89 of the " \
    "95 iterations are cut, those starting from 0.711 s to 4.593 s; " why TAIL
#define OLD_NSYS "nsys 2022.4.2.1 supports CUDA up to 12.0 while the driver supports CUDA 13.0 (CudaDriverVersion " \
    "13000): a profiler older than the driver stops recording CUDA activity; record the run again with an nsys " \
    "release that supports CUDA 13.0 (the profiler said: \"Not all CUDA events might have been collected.\", " \
    "more than once)"

/* No message of check or info advises recording CUDA with -t cuda. */
static void no_record_cuda_advice(json_t *check, json_t *info)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_array_get(json_object_get(check, "traces"), 0), "results"), i, r) {
        const char *msg = json_string_value(json_object_get(r, "message"));
        if (msg && strstr(msg, "-t cuda")) fail_msg("check advises recording what was recorded: %s", msg);
    }
    json_array_foreach(json_object_get(json_array_get(json_object_get(info, "traces"), 0), "missing"), i, r)
        if (strstr(json_string_value(r), "-t cuda")) fail_msg("info advises recording what was recorded: %s",
                                                               json_string_value(r));
}

static void early_case(const char *copy, bool driver, const char *sentence)
{
    char path[512];
    assert_true(copy_trace("h200-nsys/drv_gaps.sqlite", copy, path, sizeof path));
    long long kept = on_copy(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start <= " EARLY,
                             driver ? CUT_EARLY NEW_DRIVER : CUT_EARLY);
    assert_int_equal(kept, 30);
    json_t *cov = check_damaged(path, sentence);
    json_t *s = json_object_get(cov, "stops_early");
    assert_string_equal(json_string_value(json_object_get(s, "activity")), "cuda_api");
    assert_string_equal(json_string_value(json_object_get(s, "went_on")), "osrt");
    assert_int_equal(num(cov, "osrt", "records"), 1050);   /* SELECT count(*) FROM OSRT_API */
    assert_int_equal(num(cov, "iterations_cut", "count"), 89);
    assert_int_equal(num(cov, "driver", "cuda"), driver ? 13000 : 0);
    assert_int_equal(num(cov, "profiler", "cuda"), 12000);
    assert_int_equal(num(cov, "diagnostics_total", NULL), driver ? 1 : 0);
    if (driver) {
        json_t *d = json_array_get(json_object_get(cov, "diagnostics"), 0);
        assert_string_equal(json_string_value(json_object_get(d, "severity")), "warning");
        assert_int_equal(num(d, "count", NULL), 2);
        assert_string_equal(json_string_value(json_object_get(json_object_get(cov, "driver"), "version")), "580.95.05");
    }
    json_decref(cov);
    /* info and check: the same account of the dropped kernel table, no
    ** advice to record CUDA, which was on */
    int st;
    json_t *check = corpus_json(&st, "check --format json '%s'", path);
    assert_int_equal(st, 3);
    json_t *info = corpus_json(&st, "info --format json '%s'", path);
    assert_int_equal(st, 0);
    no_record_cuda_advice(check, info);
    const char *k = json_string_value(json_array_get(json_object_get(json_array_get(json_object_get(info, "traces"), 0),
                                                                     "missing"), 0));
    assert_non_null(k);
    assert_non_null(strstr(k, "no CUDA kernels: the capture has no table CUPTI_ACTIVITY_KIND_KERNEL while table "
                              "CUPTI_ACTIVITY_KIND_RUNTIME holds "));
    assert_non_null(strstr(k, "calls that launch them: CUDA was traced, so they were recorded and then lost"));
    json_decref(check);
    json_decref(info);
}

/* (e): a new driver and an old nsys, said as such; without the driver's
** rows, no such claim */
static void test_old_nsys_new_driver(void **state)
{
    (void)state;
    early_case("early_driver.sqlite", true, EARLY_LOST(OLD_NSYS));
    early_case("early_plain.sqlite", false, EARLY_LOST(STOPPED NSYS_BUFFERS));
}

/* coverage_tolerance: a rule given 5% judges the copy that lost 3.8% of
** its launches, the others stay errors (exit 3); out of range is exit 2;
** a rule that declares no such param takes it all the same */
static void test_coverage_tolerance(void **state)
{
    (void)state;
    char path[512];
    assert_true(copy_trace("h200-nsys/drv_train_run1.sqlite", "tol_drv.sqlite", path, sizeof path));
    assert_int_equal(on_copy(path, cases[3].count_sql, cases[3].cut_sql), cases[3].removed);
    int st;
    json_t *doc = corpus_json(&st, "check --format json --set sync-memcpy.coverage_tolerance=5%% '%s'", path);
    assert_int_equal(st, 3);
    size_t i, lost = 0;
    json_t *r;
    json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results"), i, r) {
        const char *id = json_string_value(json_object_get(r, "rule"));
        const char *msg = json_string_value(json_object_get(r, "message"));
        bool is_lost = msg && strstr(msg, "recorded and then lost");
        if (!strcmp(id, "sync-memcpy")) {
            assert_false(is_lost);
            assert_string_not_equal(json_string_value(json_object_get(r, "status")), "error");
        } else if (is_lost) {
            lost++;
        }
    }
    assert_true(lost >= 10);
    json_decref(doc);
    /* 3% is below the 3.8% lost: an error, which names that tolerance */
    doc = corpus_json(&st, "check --format json --set sync-memcpy.coverage_tolerance=3%% '%s'", path);
    assert_int_equal(st, 3);
    json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results"), i, r)
        if (!strcmp(json_string_value(json_object_get(r, "rule")), "sync-memcpy"))
            assert_non_null(strstr(json_string_value(json_object_get(r, "message")), "more than the 3% tolerated"));
    json_decref(doc);
    assert_int_equal(corpus_run("check --set sync-memcpy.coverage_tolerance=150%% '%s'", path), 2);
}

/* What the profiler recorded of itself, read from the shared captures
** as they are: versions, the capture window, warnings; none of them is
** diagnosed (test_shared_traces_not_damaged: none is damaged). */
static void test_profiler_account(void **state)
{
    (void)state;
    int st;
    json_t *doc = corpus_json(&st, "check --format json '%s/public/nvfuser-h200-nsys2025.1-nvtx-heavy.sqlite'",
                              corpus_traces);
    json_t *cov = coverage_of(doc);
    assert_string_equal(json_string_value(json_object_get(json_object_get(cov, "profiler"), "version")), "2025.1.1.110");
    assert_int_equal(num(cov, "profiler", "cuda"), 12080);
    assert_int_equal(num(cov, "driver", "cuda"), 12080);
    assert_int_equal(num(cov, "capture", "start_ns"), 566135859);
    assert_int_equal(num(cov, "capture", "stop_ns"), 11220081301);
    /* SELECT severity, text, count(*) FROM DIAGNOSTIC_EVENT WHERE severity IN (2, 3) GROUP BY 1, 2 */
    assert_int_equal(num(cov, "diagnostics_total", NULL), 3);
    json_decref(doc);
    doc = corpus_json(&st, "check --format json '%s/kineto/h200/gpu_idle_bad.json.gz'", corpus_traces);
    cov = coverage_of(doc);
    assert_int_equal(num(cov, "profiler", "cupti_version"), 130001);
    assert_int_equal(num(cov, "profiler", "cuda_runtime_version"), 13000);
    assert_int_equal(num(cov, "driver", "cuda"), 13000);
    json_decref(doc);
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
        /* a capture with a CUDA table traced CUDA: neither command
        ** advises recording it */
        json_t *info = corpus_json(&st, "info --format json '%s/%s'", corpus_traces, files[i]);
        json_t *tables = json_object_get(json_array_get(json_object_get(info, "traces"), 0), "tables");
        if (json_is_string(json_object_get(tables, "CUPTI_ACTIVITY_KIND_RUNTIME")) ||
            json_is_string(json_object_get(tables, "CUPTI_ACTIVITY_KIND_KERNEL")))
            no_record_cuda_advice(doc, info);
        json_decref(info);
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
        cmocka_unit_test(test_old_nsys_new_driver),
        cmocka_unit_test(test_coverage_tolerance),
        cmocka_unit_test(test_profiler_account),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    static const char *const names[] = {"mid_torch", "mid_drv", "drop_torch", "drop_drv", "stop_torch",
                                        "early_driver", "early_plain", "tol_drv"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s.sqlite", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
    return rc;
}
