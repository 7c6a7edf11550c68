/*
** --max-memory SIZE for check, info and metrics: an export whose loading
** is estimated (tg_trace_estimate_bytes: row counts and name lengths, read
** with cheap SQL counts) to need more than SIZE is refused before it is
** read, with exit 3 and "FILE: needs more than SIZE (--max-memory)",
** instead of meeting the OOM killer half way through a CI job. A limit
** above the need changes nothing; a malformed size is a usage error.
**
** A Kineto trace's estimate cannot be exact (gzip's ISIZE is the last
** member's, mod 4 GiB), so the reader also meters what it holds while
** reading and stops with the same sentence (docs/limits.md): for each
** input kind the reader's count (Kineto) or the child's peak RSS less a
** baseline (exports) must stay within the estimate (factor 1 for exports,
** 2 for Kineto: its rows per byte of text vary with the events; a gzip
** member appended to hide the size is the reader's to stop), and a trace
** just over the limit is refused by whichever catches it. On the shared
** corpus (when present) the reader's count of the big captures is printed
** and held within the estimate.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "fixture.h"
#include "hostile.h"
#include "trace/trace.h"

static char *big_export(void)
{
    /* 200000 NVTX ranges with distinct names and as many kernels: about
    ** 120 MiB by the estimate (peak RSS of check about 80 MiB) */
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)"
        " INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)"
        " SELECT i * 10, i * 10 + 5, 59, 'range_' || i, (1 << 24) | 1 FROM c;"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)"
        " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName, shortName) SELECT i * 10, i * 10 + 4, 0, 7, i, 1 << 24, 1, 1 FROM c;"
        /* one call: an empty API table beside kernels would be missing data */
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (1, 2, (1 << 24) | 1, 1, 2);");
    assert_non_null(p);
    return p;
}

static void test_estimate(void **state)
{
    (void)state;
    char *p = big_export();
    int64_t need = tg_trace_estimate_bytes(p);
    printf("  estimate for 200000 kernels + 200000 named ranges: %.1f MiB\n", (double)need / 1048576.0);
    assert_true(need > 40 * 1048576LL && need < 200 * 1048576LL);
    assert_int_equal(tg_trace_estimate_bytes("/dev/zero"), -1);
    assert_int_equal(tg_trace_estimate_bytes("/nonexistent/trace.sqlite"), -1);
    tg_diag d;
    tg_diag_init(&d);
    assert_true(tg_trace_fits(p, 0, &d));              /* no limit */
    assert_true(tg_trace_fits(p, need, &d));
    assert_false(tg_trace_fits(p, need - 1, &d));      /* just over: the estimate refuses */
    tg_diag_clear(&d);
    tg_diag_init(&d);
    assert_false(tg_trace_fits(p, 16 * 1048576LL, &d));
    assert_int_equal(d.n_errors, 1);
    assert_int_equal(d.status, TG_ETRACE);
    assert_non_null(strstr(d.msgs[0].text, "needs more than 16 MiB (--max-memory)"));
    tg_diag_clear(&d);
    tg_fixture_remove(p);
}

static void test_refused_over_the_limit(void **state)
{
    (void)state;
    char *p = big_export();
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < 3; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s --max-memory 16MiB (needs ~120 MiB)", cmds[i]);
        hx_result r;
        hx_run(&r, cmds[i], "--max-memory", "16MiB", p);
        hx_expect_line(label, &r, 3, "needs more than 16 MiB (--max-memory)");
        assert_non_null(strstr(r.err, p));
        hx_free(&r);
        snprintf(label, sizeof label, "%s --max-memory=4GiB", cmds[i]);
        hx_run(&r, cmds[i], "--max-memory=4GiB", p);
        hx_expect_warnings(label, &r, 0, 0, NULL);
        hx_free(&r);
    }
    tg_fixture_remove(p);
}

/* Peak RSS (KiB) of the binary run with args, or -1. */
static long child_rss_kb(const char *const *args)
{
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[16] = {hx_binary()};
        for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) return -1;
    return ru.ru_maxrss;
}

/* The estimate holds an export's measured peak: RSS of check less that of
** a check of nothing (the binary, its libraries). */
static void test_export_peak(void **state)
{
    (void)state;
    if (!hx_rss_is_the_binarys() || getenv("TG_CORPUS_QUICK")) {
        printf("  skipped: the binary is sanitized or wrapped (valgrind): its RSS is not the reader's\n");
        return;
    }
    char *p = big_export();
    int64_t need = tg_trace_estimate_bytes(p);
    long base = child_rss_kb((const char *const[]){"--version", NULL});
    long peak = child_rss_kb((const char *const[]){"check", p, NULL});
    printf("  export: peak RSS %ld KiB less %ld KiB baseline, estimate %lld KiB\n", peak, base,
           (long long)(need / 1024));
    assert_true(base > 0 && peak > 0);
    assert_true((peak - base) * 1024LL <= need);
    tg_fixture_remove(p);
}

/* gzip of data into *out (malloc'd), one member. */
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

/* A Kineto trace of n kernels (a name in 16 distinct) and their launches:
** the densest rows per byte of text a trace holds (nothing elided). */
static char *kineto_text(size_t n, size_t *len)
{
    size_t cap = n * 640 + 256, o = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    o += (size_t)snprintf(s + o, cap - o, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o,
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm_%zu<128>(float*)\", \"pid\": 0, "
            "\"tid\": 7, \"ts\": %zu.5, \"dur\": 4.0, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7, "
            "\"correlation\": %zu, \"registers per thread\": 32, \"shared memory\": 0, \"grid\": [1, 1, 1], "
            "\"block\": [128, 1, 1]}},\n"
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, "
            "\"tid\": 100, \"ts\": %zu.1, \"dur\": 2.0, \"args\": {\"correlation\": %zu}},\n",
            i % 16, 10 * i + 5, i + 1, 10 * i, i + 1);
    o += (size_t)snprintf(s + o, cap - o, "{\"ph\": \"i\", \"name\": \"end\", \"pid\": 0, \"tid\": 0, \"ts\": 1}\n]}\n");
    *len = o;
    return s;
}

/* The Kineto kinds: JSON, gzip, and gzip with a 1-byte member appended
** (ISIZE then says 1). Each: the reader's count within the estimate; a
** limit under that count refused while reading, by the library and by
** check, info and metrics (exit 3, the estimate's sentence). */
static void test_kineto_kinds(void **state)
{
    (void)state;
    char *dir = hx_tempdir();
    size_t n = getenv("TG_CORPUS_QUICK") ? 5000 : 100000, len;
    char *text = kineto_text(n, &len);
    unsigned char *z, *tail;
    size_t zn = gzip_of(text, len, &z), tn = gzip_of(" ", 1, &tail);
    char *paths[3] = {hx_path(dir, "k.json"), hx_path(dir, "k.json.gz"), hx_path(dir, "k2.json.gz")};
    hx_write_file(paths[0], text, len);
    hx_write_file(paths[1], z, zn);
    unsigned char *multi = malloc(zn + tn);
    assert_non_null(multi);
    memcpy(multi, z, zn);
    memcpy(multi + zn, tail, tn);
    hx_write_file(paths[2], multi, zn + tn);
    static const char *const kinds[] = {"Kineto JSON", "Kineto gzip", "Kineto gzip, 2 members"};
    bool caught_reading = false;
    for (int k = 0; k < 3; k++) {
        /* what check opens with (no rule reads kernel rows) and --load all */
        for (int all = 0; all < 2; all++) {
            tg_load_opts o = {.kernel_rows = all, .defer_api = !all};
            int64_t need = tg_trace_estimate_bytes_with(paths[k], &o);
            tg_diag d;
            tg_diag_init(&d);
            tg_trace *t = tg_trace_open_with(paths[k], &o, &d);
            assert_non_null(t);
            int64_t held = t->read_bytes;
            tg_trace_close(t);
            printf("  %s%s: %zu bytes of text, reader held %.1f MiB, estimate %.1f MiB\n", kinds[k],
                   all ? " (--load all)" : "", len, held / 1048576.0, need / 1048576.0);
            /* docs/limits.md: the reader's count within twice the estimate; a
            ** member appended to hide the size may pass it (the meter refuses) */
            assert_true(held > 0);
            if (k < 2) assert_true(held <= 2 * need);
            /* just under what the reader holds: refused while reading */
            o.max_memory = held - 1;
            t = tg_trace_open_with(paths[k], &o, &d);
            assert_null(t);
            assert_int_equal(d.status, TG_ETRACE);
            assert_non_null(strstr(d.msgs[d.n - 1].text, "(--max-memory): loading it takes at least"));
            tg_diag_clear(&d);
            if (all && held > need) {
                /* the estimate passes it (ISIZE hid the text), the reader stops it */
                char limit[32];
                snprintf(limit, sizeof limit, "%lld", (long long)(need + (held - need) / 2));
                hx_result r;
                hx_run(&r, "check", "--load", "all", "--max-memory", limit, paths[k]);
                hx_expect_line("check --load all, over the limit only while reading", &r, 3,
                               "(--max-memory): loading it takes at least");
                hx_free(&r);
                caught_reading = true;
            }
            if (all) continue;
            char limit[32];
            snprintf(limit, sizeof limit, "%lld", (long long)(held - 1));
            static const char *const cmds[] = {"check", "info", "metrics"};
            for (int c = 0; c < 3; c++) {
                char label[96];
                snprintf(label, sizeof label, "%s --max-memory %s %s", cmds[c], limit, kinds[k]);
                hx_result r;
                hx_run(&r, cmds[c], "--max-memory", limit, paths[k]);
                hx_expect_line(label, &r, 3, "(--max-memory)");
                hx_free(&r);
            }
        }
    }
    /* at full size the two-member file is one the estimate misjudges */
    if (!getenv("TG_CORPUS_QUICK")) assert_true(caught_reading);
    for (int k = 0; k < 3; k++) free(paths[k]);
    free(text);
    free(z);
    free(tail);
    free(multi);
    hx_rmtree(dir);
    free(dir);
}

/* The big captures of the shared corpus (docs/limits.md has the figures):
** the reader's count within the estimate, lean and --load all. */
static void test_kineto_corpus_peaks(void **state)
{
    (void)state;
    const char *dir = getenv("TG_SHARED_TRACES");
    if (getenv("TG_CORPUS_QUICK") || !dir || !*dir) {
        printf("  skipped: ../shared/traces is absent, or TG_CORPUS_QUICK\n");
        return;
    }
    static const char *const files[] = {"kineto/h200-series/realistic_nocache.json.gz",
                                        "kineto/h200-series/realistic_baseline_run1.json.gz",
                                        "kineto/public/hta-v100-ddp-rank1of2-nccl.pt.trace.json.gz",
                                        "kineto/public/kineto-resnet50-v100-legacy2021.pt.trace.json.gz"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *path = hx_path(dir, files[i]);
        if (access(path, R_OK) != 0) {
            printf("  skipped: %s is absent\n", path);
            free(path);
            continue;
        }
        for (int all = 0; all < 2; all++) {
            tg_load_opts o = {.kernel_rows = all, .defer_api = !all};
            int64_t need = tg_trace_estimate_bytes_with(path, &o);
            tg_diag d;
            tg_diag_init(&d);
            tg_trace *t = tg_trace_open_with(path, &o, &d);
            assert_non_null(t);
            printf("  %s%s: reader held %.1f MiB, estimate %.1f MiB\n", files[i], all ? " (--load all)" : "",
                   t->read_bytes / 1048576.0, need / 1048576.0);
            assert_true(t->read_bytes > 0 && t->read_bytes <= need);
            tg_trace_close(t);
            tg_diag_clear(&d);
        }
        free(path);
    }
}

static void test_bad_sizes(void **state)
{
    (void)state;
    static const char *const bad[] = {"0", "-5MiB", "12XB", "lots", "1e30GiB", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char label[64];
        snprintf(label, sizeof label, "check --max-memory '%s'", bad[i]);
        hx_result r;
        hx_run(&r, "check", "--max-memory", bad[i], "/dev/null");
        hx_expect_line(label, &r, 2, "--max-memory");
        hx_free(&r);
    }
    int64_t b;
    assert_true(tg_parse_size("512MiB", &b) && b == 512LL << 20);
    assert_true(tg_parse_size("2gib", &b) && b == 2LL << 30);
    assert_true(tg_parse_size("1.5GB", &b) && b == 1500000000LL);
    assert_true(tg_parse_size("800M", &b) && b == 800LL << 20);
    assert_true(tg_parse_size("4096", &b) && b == 4096);
    assert_false(tg_parse_size("0.1", &b));
    char buf[32];
    tg_format_size(512LL << 20, buf, sizeof buf);
    assert_string_equal(buf, "512 MiB");
    tg_format_size(1536LL << 20, buf, sizeof buf);
    assert_string_equal(buf, "1.5 GiB");
    tg_format_size(900, buf, sizeof buf);
    assert_string_equal(buf, "900 bytes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_refused_over_the_limit),
        cmocka_unit_test(test_export_peak),
        cmocka_unit_test(test_kineto_kinds),
        cmocka_unit_test(test_kineto_corpus_peaks),
        cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
