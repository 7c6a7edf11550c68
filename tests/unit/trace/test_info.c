/*
** The info document (engine/report/info.c) on fixtures, and the `tracegate
** info` command run as a user would ($TG_BINARY): the JSON keys and
** values, the "missing" sentences, the text rendering, and the exit
** status and stderr line for a trace that cannot be read.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <sys/wait.h>

#include "report/info.h"
#include "trace_test.h"

static json_int_t jint_at(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a);
    if (b) x = json_object_get(x, b);
    if (!json_is_integer(x)) fail_msg("%s.%s is not an integer", a, b ? b : "");
    return json_integer_value(x);
}

static void test_info_json(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0,
        TT_ROWS "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
        " (1000, 1100, 59, 'iteration', " TT_GTID "), (1200, 1300, 59, 'iteration', " TT_GTID ");"
        "INSERT INTO PROCESSES (pid, name) VALUES (4321, 'idle daemon');"
        "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;",
        &path, &d);
    assert_non_null(t);
    json_t *doc = tg_info_json(t, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "file")), path);
    assert_string_equal(json_string_value(json_object_get(doc, "nsys_version")), "2022.4.2.1");
    assert_string_equal(json_string_value(json_object_get(doc, "schema_version")), "3.0.0");
    assert_int_equal(jint_at(doc, "counts", "kernel"), 1);
    assert_int_equal(jint_at(doc, "counts", "memcpy"), 1);
    assert_int_equal(jint_at(doc, "counts", "memset"), 0);
    assert_int_equal(jint_at(doc, "counts", "api"), 4);
    assert_int_equal(jint_at(doc, "counts", "nvtx"), 5);
    assert_int_equal(jint_at(doc, "counts", "nvtx_ranges"), 4);
    assert_int_equal(jint_at(doc, "counts", "nvtx_marks"), 1);
    assert_int_equal(jint_at(doc, "counts", "sync"), 1);
    assert_int_equal(jint_at(doc, "counts", "gpu"), 1);
    assert_int_equal(jint_at(doc, "span_ns", NULL), 1300 - 90);
    assert_int_equal(jint_at(doc, "nvtx_ranges", "iteration"), 3);
    assert_int_equal(jint_at(doc, "nvtx_ranges", "registered range"), 1);
    assert_null(json_object_get(json_object_get(doc, "nvtx_ranges"), "a mark"));
    assert_int_equal(jint_at(doc, "nvtx_range_names", NULL), 2);
    /* Most frequent first. */
    void *it = json_object_iter(json_object_get(doc, "nvtx_ranges"));
    assert_string_equal(json_object_iter_key(it), "iteration");

    const json_t *gpus = json_object_get(doc, "gpus");
    assert_int_equal(json_array_size(gpus), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 0), "name")), "NVIDIA H200");
    assert_int_equal(jint_at(json_array_get(gpus, 0), "sm_count", NULL), 132);
    assert_int_equal(jint_at(json_array_get(gpus, 0), "memory", NULL), 150109880320LL);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(gpus, 0), "compute_capability")), "9.0");

    /* Only processes with activity (not the idle daemon). */
    const json_t *procs = json_object_get(doc, "processes");
    assert_int_equal(json_array_size(procs), 1);
    assert_int_equal(jint_at(json_array_get(procs, 0), "pid", NULL), TT_PID);
    assert_string_equal(json_string_value(json_object_get(json_array_get(procs, 0), "name")), "train.py");

    const json_t *missing = json_object_get(doc, "missing");
    assert_int_equal(json_array_size(missing), 1);
    const char *sentence = json_string_value(json_array_get(missing, 0));
    assert_non_null(strstr(sentence, "no CUDA memsets"));
    assert_non_null(strstr(sentence, "CUPTI_ACTIVITY_KIND_MEMSET"));
    assert_true(json_is_null(json_object_get(json_object_get(doc, "tables"), "CUPTI_ACTIVITY_KIND_MEMSET")));

    char *text = json_dumps(doc, 0);     /* serialisable */
    assert_non_null(text);
    free(text);
    json_decref(doc);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Nothing recorded: every kind of missing data is named with its option. */
static void test_info_empty_capture(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);", NULL, &path, &d);
    assert_non_null(t);
    json_t *doc = tg_info_json(t, NULL);
    assert_non_null(doc);
    assert_true(json_is_null(json_object_get(doc, "nsys_version")));
    assert_true(json_is_null(json_object_get(doc, "span_ns")));
    const json_t *missing = json_object_get(doc, "missing");
    assert_int_equal(json_array_size(missing), 6);
    assert_non_null(strstr(json_string_value(json_array_get(missing, 0)), "no CUDA kernels"));
    assert_non_null(strstr(json_string_value(json_array_get(missing, 0)), "nsys profile -t cuda"));
    assert_non_null(strstr(json_string_value(json_array_get(missing, 4)), "nsys profile -t nvtx"));
    char *text = tg_info_text(t, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "no events"));
    assert_non_null(strstr(text, "missing:"));
    free(text);
    json_decref(doc);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* Names from the profiled program may be any bytes. */
static void test_info_invalid_utf8(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0,
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES"
        " (1, 2, 59, CAST(x'6C6F6F70FF0A7374657000' AS TEXT)), (3, 4, 59, 'loop?\nstep');",
        &path, &d);
    assert_non_null(t);
    json_t *doc = tg_info_json(t, NULL);
    assert_non_null(doc);
    char *s = json_dumps(doc, 0);
    assert_non_null(s);
    free(s);
    /* The invalid byte becomes U+FFFD, so the name stays apart from a
     * valid one that happens to hold '?' there. */
    assert_int_equal(jint_at(doc, "nvtx_ranges", "loop\xef\xbf\xbd\nstep"), 1);
    assert_int_equal(jint_at(doc, "nvtx_ranges", "loop?\nstep"), 1);
    char *text = tg_info_text(t, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "loop?\\nstep"));  /* one line per name: the newline shown escaped */
    free(text);
    json_decref(doc);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

static void test_info_text(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_25, TT_ROWS, &path, &d);
    assert_non_null(t);
    char *text = tg_info_text(t, NULL);
    assert_non_null(text);
    assert_true(strncmp(text, path, strlen(path)) == 0);
    assert_non_null(strstr(text, "NVIDIA Nsight Systems 2026.2.1.210, schema 3.25.0"));
    assert_non_null(strstr(text, "0: NVIDIA H200, 132 SMs, 150 GB, compute 9.0"));
    assert_non_null(strstr(text, "1234 train.py"));
    assert_non_null(strstr(text, "1 kernels, 1 copies, 1 memsets, 4 API calls"));
    assert_non_null(strstr(text, "iteration"));
    assert_null(strstr(text, "missing:"));
    free(text);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* ---------------------------------------------------------------- the command */

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (n + 2 > cap) buf = realloc(buf, cap = cap ? cap * 2 : 4096);
        buf[n++] = (char)c;
    }
    fclose(f);
    if (!buf) return strdup("");
    buf[n] = 0;
    return buf;
}

static run_result run(const char *dir, const char *args)
{
    const char *bin = getenv("TG_BINARY");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s >%s/out.txt 2>%s/err.txt", bin, args, dir, dir);
    int st = system(cmd);
    run_result r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1};
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    r.out = slurp(cmd);
    snprintf(cmd, sizeof cmd, "%s/err.txt", dir);
    r.err = slurp(cmd);
    return r;
}

static void test_command(void **state)
{
    (void)state;
    if (!getenv("TG_BINARY")) {
        print_message("skipped: TG_BINARY is not set (run through meson test)\n");
        skip();
    }
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    assert_non_null(path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    char args[8192];

    snprintf(args, sizeof args, "info --format json '%s' '%s/missing.sqlite' '%s'", path, dir, path);
    run_result r = run(dir, args);
    assert_int_equal(r.status, 3);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    if (!doc) fail_msg("stdout is not JSON: %s\n%s", jerr.text, r.out);
    assert_string_equal(json_string_value(json_object_get(doc, "tool")), "tracegate");
    const json_t *traces = json_object_get(doc, "traces");
    assert_int_equal(json_array_size(traces), 3);
    assert_int_equal(jint_at(json_array_get(traces, 0), "counts", "kernel"), 1);
    assert_non_null(json_object_get(json_array_get(traces, 1), "error"));
    assert_int_equal(jint_at(json_array_get(traces, 2), "counts", "api"), 4);
    /* One line on stderr naming the bad file. */
    assert_non_null(strstr(r.err, "missing.sqlite"));
    assert_int_equal(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err));
    json_decref(doc);
    free(r.out);
    free(r.err);

    snprintf(args, sizeof args, "info '%s'", path);
    r = run(dir, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "1 kernels"));
    assert_string_equal(r.err, "");
    free(r.out);
    free(r.err);

    r = run(dir, "info --format yaml x.sqlite");
    assert_int_equal(r.status, 2);
    free(r.out);
    free(r.err);
    r = run(dir, "info");
    assert_int_equal(r.status, 2);
    free(r.out);
    free(r.err);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_json),
        cmocka_unit_test(test_info_empty_capture),
        cmocka_unit_test(test_info_invalid_utf8),
        cmocka_unit_test(test_info_text),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
