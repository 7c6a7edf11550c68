/*
** Hostile PyTorch profiler (Kineto) traces, through the binary (issue #17,
** docs/kineto.md): a truncated gzip stream, corrupt gzip data, JSON cut
** short, invalid JSON, JSON that is not a trace, a 2 GiB file, a deeply
** nested document, and the raw control characters some profiler versions
** wrote into strings. Each bad file makes check, info and metrics exit 3
** with one line naming the file and the problem, within the deadline; the
** control characters load with one warning; --max-memory refuses a trace
** whose JSON is too big before reading it; a key the reader uses given
** twice in one object (jq and Python would read the last) is refused,
** plain and gzip. Fixtures are written here.
*/
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "hostile.h"

/* A small real-shaped trace: one step, a launch, its kernel and a copy. */
static const char trace_json[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": 132}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"iteration\", \"pid\": 7, \"tid\": 7, \"ts\": 1000.000, \"dur\": 100.0},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 7, \"tid\": 7, \"ts\": 1001.5, \"dur\": 2.25, \"args\": {\"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void saxpy<float>(int)\", \"pid\": 0, \"tid\": 7, \"ts\": 1005.125, \"dur\": 40.5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 11, \"grid\": [64, 1, 1], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 7, \"tid\": 7, \"ts\": 1050, \"dur\": 30, \"args\": {\"correlation\": 12}},\n"
    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 1051, \"dur\": 25, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 12, \"bytes\": 16777216}}\n"
    "]}\n";

typedef struct world {
    char *dir;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->dir = hx_tempdir();
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    free(w->dir);
    free(w);
    return 0;
}


/* gzip of data into *out (malloc'd). */
static size_t gzip_of(const char *data, size_t len, unsigned char **out)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    *out = malloc(cap);
    assert_non_null(*out);
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

static void test_good_trace_loads(void **state)
{
    world *w = *state;
    char *plain = hx_path(w->dir, "run.json"), *gz = hx_path(w->dir, "run.json.gz");
    hx_write_file(plain, trace_json, sizeof trace_json - 1);
    unsigned char *z;
    size_t n = gzip_of(trace_json, sizeof trace_json - 1, &z);
    hx_write_file(gz, z, n);
    free(z);
    /* also under a name that says nothing: recognised by content */
    char *anon = hx_path(w->dir, "capture.bin");
    hx_write_file(anon, trace_json, sizeof trace_json - 1);
    const char *paths[] = {plain, gz, anon};
    for (size_t i = 0; i < 3; i++) {
        hx_result r;
        hx_run(&r, "info", paths[i]);
        hx_expect_warnings(paths[i], &r, 0, 0, NULL);
        if (!strstr(r.out, "1 kernels") || !strstr(r.out, "NVIDIA H200"))
            fail_msg("%s: info does not show the trace:\n%s", paths[i], r.out);
        hx_free(&r);
    }
    free(plain);
    free(gz);
    free(anon);
}

static void test_duplicate_keys(void **state)
{
    world *w = *state;
    /* the trace with a key doubled: traceEvents at the top, ts in an event, stream in its args */
    static const struct { const char *from, *to, *part; } cases[] = {
        {"]}\n", "], \"traceEvents\": []}\n", "has the key \"traceEvents\" twice at the top level"},
        {"\"ts\": 1005.125,", "\"ts\": 1005.125, \"ts\": 9,", "has the key \"ts\" twice in trace event 2"},
        {"\"stream\": 7, \"correlation\": 11,", "\"stream\": 7, \"stream\": 8, \"correlation\": 11,",
         "has the key \"stream\" twice in the args of trace event 2"},
        {"\"numSms\": 132}", "\"numSms\": 132, \"id\": 1}", "has the key \"id\" twice in a deviceProperties entry"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *at = strstr(trace_json, cases[i].from);
        assert_non_null(at);
        size_t head = (size_t)(at - trace_json), flen = strlen(cases[i].from), tlen = strlen(cases[i].to);
        size_t len = sizeof trace_json - 1 - flen + tlen;
        char *text = malloc(len + 1);
        assert_non_null(text);
        memcpy(text, trace_json, head);
        memcpy(text + head, cases[i].to, tlen);
        strcpy(text + head + tlen, at + flen);
        char *p = hx_path(w->dir, "dup.json"), *gz = hx_path(w->dir, "dup.json.gz");
        hx_write_file(p, text, len);
        hx_expect_bad_trace(cases[i].part, p, cases[i].part);
        unsigned char *z;
        size_t n = gzip_of(text, len, &z);
        hx_write_file(gz, z, n);
        hx_expect_bad_trace(cases[i].part, gz, cases[i].part);
        free(z);
        free(p);
        free(gz);
        free(text);
    }
}

static void test_truncated_gzip(void **state)
{
    world *w = *state;
    unsigned char *z;
    size_t n = gzip_of(trace_json, sizeof trace_json - 1, &z);
    char *p = hx_path(w->dir, "cut.json.gz");
    hx_write_file(p, z, n / 2);
    hx_expect_bad_trace("gzip cut in half", p, "gzip stream is truncated");
    hx_write_file(p, z, n - 4);   /* only the trailer's size missing */
    hx_expect_bad_trace("gzip without its trailer", p, "gzip stream is truncated");
    hx_write_file(p, z, 2);       /* the magic alone */
    hx_expect_bad_trace("gzip magic alone", p, "gzip stream is truncated");
    free(z);
    free(p);
}

static void test_corrupt_gzip(void **state)
{
    world *w = *state;
    unsigned char *z;
    size_t n = gzip_of(trace_json, sizeof trace_json - 1, &z);
    for (size_t i = 12; i < n - 8; i++) z[i] ^= 0x5a;
    char *p = hx_path(w->dir, "bad.json.gz");
    hx_write_file(p, z, n);
    hx_expect_bad_trace("corrupt gzip data", p, "gzip data is corrupt");
    free(z);
    free(p);
}

static void test_truncated_json(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "cut.json");
    hx_write_file(p, trace_json, sizeof trace_json / 2);
    hx_expect_bad_trace("JSON cut in half", p, "the trace is truncated");
    hx_write_file(p, "{\"traceEvents\": [", 17);
    hx_expect_bad_trace("JSON head alone", p, "the trace is truncated");
    free(p);
}

static void test_invalid_json(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "bad.json");
    const char bad[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 12,, \"dur\": 3}]}";
    hx_write_file(p, bad, sizeof bad - 1);
    hx_expect_bad_trace("invalid JSON", p, "is not valid JSON");
    const char trailing[] = "{\"traceEvents\": []} {\"traceEvents\": []}";
    hx_write_file(p, trailing, sizeof trailing - 1);
    hx_expect_bad_trace("two documents", p, "is not valid JSON");
    free(p);
}

static void test_not_a_trace(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "package.json");
    const char doc[] = "{\"name\": \"tracegate\", \"version\": \"1.0.0\", \"dependencies\": {}}";
    hx_write_file(p, doc, sizeof doc - 1);
    hx_expect_bad_trace("JSON that is not a trace", p, "not a PyTorch profiler trace");
    free(p);
}

/* Raw control characters (invalid JSON some profiler versions wrote) in
** names: the trace loads, with one warning, and reads as the clean one. */
static void test_control_characters(void **state)
{
    world *w = *state;
    char *text = strdup(trace_json);
    assert_non_null(text);
    char *name = strstr(text, "saxpy");
    assert_non_null(name);
    name[2] = '\t';
    name[3] = '\x01';
    char *p = hx_path(w->dir, "ctl.json");
    hx_write_file(p, text, strlen(text));
    hx_result r;
    hx_run(&r, "info", p);
    hx_expect_warnings("control characters", &r, 0, 1, "raw control characters");
    if (!strstr(r.out, "1 kernels")) fail_msg("control characters: the kernel is lost:\n%s", r.out);
    hx_free(&r);
    free(text);
    free(p);
}

/* 2 GiB of file (sparse) after a valid head: read until the first bad byte,
** not into memory; --max-memory refuses it before reading. */
static void test_two_gib(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "huge.json");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    const char head[] = "{\"traceEvents\": [";
    assert_int_equal(write(fd, head, sizeof head - 1), (ssize_t)(sizeof head - 1));
    assert_int_equal(ftruncate(fd, ((off_t)2 << 30) + 1), 0);
    close(fd);
    hx_expect_bad_trace("2 GiB of NULs", p, "is not valid JSON");
    hx_result r;
    hx_run(&r, "check", "--max-memory", "256MiB", p);
    hx_expect_line("2 GiB with --max-memory", &r, 3, "needs more than 256 MiB");
    hx_free(&r);
    unlink(p);
    free(p);
}

/* A million nested arrays inside an event: skipped by depth, no stack.
** Under AddressSanitizer 200,000: yajl grows its nesting stack 128 bytes
** at a time, and ASan's realloc copies every time (a million took 15 s
** there, 0.03 s plain). */
static void test_deep_nesting(void **state)
{
    world *w = *state;
    size_t depth = hx_sanitized() ? 200000 : 1000000;
    const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"args\": ";
    const char tail[] = "}]}";
    size_t len = sizeof head - 1 + 2 * depth + sizeof tail - 1;
    char *doc = malloc(len);
    assert_non_null(doc);
    memcpy(doc, head, sizeof head - 1);
    memset(doc + sizeof head - 1, '[', depth);
    memset(doc + sizeof head - 1 + depth, ']', depth);
    memcpy(doc + sizeof head - 1 + 2 * depth, tail, sizeof tail - 1);
    char *p = hx_path(w->dir, "deep.json");
    hx_write_file(p, doc, len);
    hx_result r;
    hx_run(&r, "info", p);
    hx_expect_warnings("deep nesting", &r, 0, 0, NULL);
    hx_free(&r);
    free(doc);
    free(p);
}

int main(void)
{
    if (!hx_binary()) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_trace_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_characters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_gib, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
    };
    return cmocka_run_group_tests_name("hostile kineto traces", tests, NULL, NULL);
}
