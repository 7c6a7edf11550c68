/*
** Untimed GPU work (issue 32, items 4 and 6; docs/rules.md, "Untimed GPU
** work"): memsets whose launch calls have no GPU record beside timed
** kernels.
**
**   - The Kineto cut: a shared torch.profiler trace (sync_memcpy_bad, CPU
**     and CUDA activity) with every gpu_memset event removed (read with
**     zlib, edited with jansson, written to a temporary folder: never the
**     shared file). sync-memset, which reads memsets exactly, is missing
**     data naming them, with advice true for the trace (exit 3; a skip
**     under --missing-data=skip, exit 0 as the uncut trace); the rules on
**     the GPU's busy time give the verdicts of the uncut trace and say
**     what was not timed; the uncut trace's busy fraction lies inside the
**     bound the cut one states.
**   - The same with every gpu_memcpy event removed: the copy rules are
**     missing data, the other busy-time rules judged and qualified.
**   - The real case: param-resnet-rtx2080ti, whose 210 size-0 memsets
**     Kineto left out of 572 calls: judged, every GPU rule saying so.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <zlib.h>

#include "corpus.h"

static char tmpdir[256];
static char cut_path[512];

#define SYNC_MEMSET_SENTENCE                                                                                    \
    "rule sync-memset reads CUDA memsets, but the trace holds no Kineto gpu_memset events while Kineto "         \
    "cuda_runtime/cuda_driver events holds 203 calls that launch them: they were not recorded; the capture "     \
    "recorded CUDA activity (8152 kernels), so CUDA memsets were traced and the profiler left these out (CUPTI " \
    "and Kineto leave out memsets that did no work, of size 0); judge them on a capture that times them (Nsight " \
    "Systems: 'nsys profile -t cuda'), or drop this rule for such captures"

#define UNTIMED_HEAD                                                                                           \
    "203 memset launch calls have no GPU record (CUPTI and Kineto leave out memsets that did no work, of size " \
    "0: counted here too): the numbers count only the GPU work that was timed; the untimed ops could fill at "  \
    "most the "

/* The rules that read memsets only through the GPU's busy time. */
static const char *const busy_rules[] = {"gpu-idle-gap", "low-gpu-utilization", "gpu-starvation",
                                         "kernel-launch-bound", "iteration-variance", "copy-dominated"};

/* Read the gzip file path whole (NUL-terminated); NULL when it cannot. */
static char *gunzip(const char *path, size_t *len)
{
    gzFile z = gzopen(path, "rb");
    if (!z) return NULL;
    size_t cap = 1 << 24, n = 0;
    char *buf = malloc(cap + 1);
    int got;
    while (buf && (got = gzread(z, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            char *more = realloc(buf, cap * 2 + 1);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    gzclose(z);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

/* The shared Kineto trace rel without its events of category cat, as
** JSON in out; how many were removed, or -1. */
static long long cut_category(const char *rel, const char *cat, const char *out)
{
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", corpus_traces, rel);
    size_t len;
    char *text = gunzip(src, &len);
    if (!text) return -1;
    json_error_t err;
    json_t *doc = json_loadb(text, len, 0, &err);
    free(text);
    json_t *events = json_object_get(doc, "traceEvents");
    if (!json_is_array(events)) {
        json_decref(doc);
        return -1;
    }
    json_t *kept = json_array();
    long long removed = 0;
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        const char *c = json_string_value(json_object_get(e, "cat"));
        if (c && !strcmp(c, cat)) removed++;
        else json_array_append(kept, e);
    }
    json_object_set_new(doc, "traceEvents", kept);
    int rc = json_dump_file(doc, out, JSON_COMPACT);
    json_decref(doc);
    return rc == 0 ? removed : -1;
}

static json_t *result_of(json_t *doc, const char *rule)
{
    json_t *r = corpus_result(doc, rule);
    if (!r) fail_msg("no result for %s", rule);
    return r;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* low-gpu-utilization's busy_frac_steady for device 0 with min_busy 100%
** (so that it fails and cites the device), on path. */
static double busy_of(const char *path)
{
    int st;
    json_t *doc = corpus_json(&st, "check --format json --set low-gpu-utilization.min_busy=100%% '%s'",
                              path);
    json_t *r = result_of(doc, "low-gpu-utilization");
    json_t *ev = json_array_get(json_object_get(r, "evidence"), 0);
    double v = json_number_value(json_object_get(json_object_get(ev, "fields"), "busy_frac_steady"));
    if (!ev) fail_msg("%s: low-gpu-utilization cites no device: %s", path, str(r, "message"));
    json_decref(doc);
    return v;
}

static void test_kineto_memsets_removed(void **state)
{
    (void)state;
    char orig[1024];
    snprintf(orig, sizeof orig, "%s/kineto/h200/sync_memcpy_bad.json.gz", corpus_traces);
    snprintf(cut_path, sizeof cut_path, "%s/sync_memcpy_bad-nomemset.json", tmpdir);
    assert_int_equal(cut_category("kineto/h200/sync_memcpy_bad.json.gz", "gpu_memset", cut_path), 203);

    int st, st_orig;
    json_t *before = corpus_json(&st_orig, "check --format json '%s'", orig);
    json_t *doc = corpus_json(&st, "check --format json '%s'", cut_path);
    assert_int_equal(st, 3);   /* sync-memset cannot be judged */
    json_t *sm = result_of(doc, "sync-memset");
    assert_string_equal(str(sm, "status"), "error");
    assert_true(json_is_true(json_object_get(sm, "missing_data")));
    assert_string_equal(str(sm, "message"), SYNC_MEMSET_SENTENCE);
    assert_null(json_object_get(sm, "untimed"));

    for (size_t i = 0; i < sizeof busy_rules / sizeof *busy_rules; i++) {
        json_t *r = result_of(doc, busy_rules[i]), *o = result_of(before, busy_rules[i]);
        /* judged as the uncut trace is: its memsets are a few microseconds */
        if (strcmp(str(r, "status"), str(o, "status")))
            fail_msg("%s: %s on the cut, %s uncut (%s)", busy_rules[i], str(r, "status"), str(o, "status"),
                     str(r, "message"));
        if (strncmp(str(r, "untimed"), UNTIMED_HEAD, strlen(UNTIMED_HEAD)))
            fail_msg("%s: untimed \"%s\"", busy_rules[i], str(r, "untimed"));
        assert_null(json_object_get(o, "untimed"));
    }
    /* a skipped regression rule judged nothing: no untimed sentence */
    assert_null(json_object_get(result_of(doc, "gpu-time-regression"), "untimed"));

    /* the bound holds: the uncut busy fraction is within the cut's plus it */
    const char *u = str(result_of(doc, "low-gpu-utilization"), "untimed");
    const char *at = strstr(u, "could be up to ");
    assert_non_null(at);
    double points = strtod(at + strlen("could be up to "), NULL);
    double cut = busy_of(cut_path), full = busy_of(orig);
    if (!(cut <= full && full <= cut + points / 100.0 + 1e-9))
        fail_msg("busy fraction uncut %.6f outside [%.6f, %.6f + %.1f points]", full, cut, cut, points);
    json_decref(doc);
    json_decref(before);

    /* a skip under --missing-data=skip: the run gates as the uncut one */
    json_t *skip = corpus_json(&st, "check --format json --missing-data=skip '%s'", cut_path);
    assert_int_equal(st, st_orig);
    assert_string_equal(str(result_of(skip, "sync-memset"), "status"), "skip");
    json_decref(skip);

    /* the text report says it under each result */
    FILE *p;
    char cmd[2048], line[8192];
    snprintf(cmd, sizeof cmd, "'%s' check '%s' 2>/dev/null", corpus_binary, cut_path);
    p = popen(cmd, "r");
    assert_non_null(p);
    int untimed_lines = 0;
    while (fgets(line, sizeof line, p))
        if (strstr(line, "        untimed: " UNTIMED_HEAD)) untimed_lines++;
    assert_int_equal(pclose(p) >> 8, 3);
    assert_int_equal(untimed_lines, (int)(sizeof busy_rules / sizeof *busy_rules));
}

/* The class, not the one table: the same trace without its gpu_memcpy
** events. The copy rules read copies exactly (sync-memcpy,
** pageable-async-memcpy; copy-dominated's copy share): missing data; the
** other busy-time rules are judged and say what was not timed. */
static void test_kineto_copies_removed(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/sync_memcpy_bad-nocopy.json", tmpdir);
    assert_int_equal(cut_category("kineto/h200/sync_memcpy_bad.json.gz", "gpu_memcpy", path), 614);
    int st;
    json_t *doc = corpus_json(&st, "check --format json '%s'", path);
    unlink(path);
    assert_int_equal(st, 3);
    static const char *const copy_rules[] = {"sync-memcpy", "pageable-async-memcpy", "copy-dominated"};
    for (size_t i = 0; i < 3; i++) {
        json_t *r = result_of(doc, copy_rules[i]);
        char want[1024];
        snprintf(want, sizeof want,
                 "rule %s reads CUDA memory copies, but the trace holds no Kineto gpu_memcpy events while Kineto "
                 "cuda_runtime/cuda_driver events holds 614 calls that launch them: they were not recorded; the "
                 "capture recorded CUDA activity (8152 kernels), so CUDA memory copies were traced and the profiler "
                 "left these out; judge them on a capture that times them (Nsight Systems: 'nsys profile -t cuda'), "
                 "or drop this rule for such captures", copy_rules[i]);
        assert_string_equal(str(r, "status"), "error");
        assert_string_equal(str(r, "message"), want);
    }
    for (size_t i = 0; i < sizeof busy_rules / sizeof *busy_rules; i++) {
        if (!strcmp(busy_rules[i], "copy-dominated")) continue;
        json_t *r = result_of(doc, busy_rules[i]);
        if (!strcmp(str(r, "status"), "error")) fail_msg("%s: %s", busy_rules[i], str(r, "message"));
        if (strncmp(str(r, "untimed"), "614 copy launch calls have no GPU record: the numbers count only", 64))
            fail_msg("%s: untimed \"%s\"", busy_rules[i], str(r, "untimed"));
    }
    /* sync-memset reads memsets, all timed here */
    assert_null(json_object_get(result_of(doc, "sync-memset"), "untimed"));
    json_decref(doc);
}

/* A real capture: Kineto left 210 of 572 memsets out (size 0). */
static void test_real_size_zero_memsets(void **state)
{
    (void)state;
    int st;
    json_t *doc = corpus_json(&st, "check --format json '%s/kineto/public/param-resnet-rtx2080ti.pt.trace.json.gz'",
                              corpus_traces);
    assert_true(st == 0 || st == 1);
    json_t *sm = result_of(doc, "sync-memset");
    assert_string_equal(str(sm, "status"), "pass");
    assert_string_equal(str(sm, "untimed"),
                        "210 memset launch calls have no GPU record (CUPTI and Kineto leave out memsets that did no "
                        "work, of size 0): this verdict is over the 362 that were timed, and the others are not "
                        "judged");
    for (size_t i = 0; i < sizeof busy_rules / sizeof *busy_rules; i++) {
        json_t *r = result_of(doc, busy_rules[i]);
        if (!strcmp(str(r, "status"), "error")) fail_msg("%s: %s", busy_rules[i], str(r, "message"));
        if (strncmp(str(r, "untimed"), "210 memset launch calls have no GPU record", 42))
            fail_msg("%s: untimed \"%s\"", busy_rules[i], str(r, "untimed"));
    }
    /* rules that read no GPU op say nothing of it */
    assert_null(json_object_get(result_of(doc, "blocking-sync-api"), "untimed"));
    json_decref(doc);
}

int main(void)
{
    if (!corpus_init("untimed_corpus")) return 77;
    snprintf(tmpdir, sizeof tmpdir, "%s/tg-untimed-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kineto_memsets_removed),
        cmocka_unit_test(test_kineto_copies_removed),
        cmocka_unit_test(test_real_size_zero_memsets),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (*cut_path) unlink(cut_path);
    rmdir(tmpdir);
    return rc;
}
