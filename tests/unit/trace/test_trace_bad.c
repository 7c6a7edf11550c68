/*
** Bad input to tg_trace_open: every case returns NULL with exactly one
** error, status TG_ETRACE, whose sentence names the file; nothing crashes
** or hangs. Covers missing files, directories, devices and FIFOs, empty
** and non-SQLite files, SQLite files that are not exports, exports that
** lack a required column, truncated and randomly damaged exports, a file
** a writer holds locked or has a journal beside it, and an unreadable one.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_test.h"

/* Open path, expect failure with one sentence naming it; returns that
** sentence's text in msg for further checks. */
static void expect_bad(const char *path, char *msg, size_t size)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    if (t) fail_msg("%s: opened, but it should have been rejected", path);
    assert_int_equal(d.status, TG_ETRACE);
    assert_int_equal(d.n_errors, 1);
    assert_int_equal(d.n, 1);
    if (!strstr(d.msgs[0].text, path)) fail_msg("message does not name %s: %s", path, d.msgs[0].text);
    if (msg) snprintf(msg, size, "%s", d.msgs[0].text);
    tg_diag_clear(&d);
}

/* A file beside a fixture's trace (same private directory). */
static char *sibling(const char *trace, const char *name)
{
    char *p = malloc(strlen(trace) + strlen(name) + 2);
    strcpy(p, trace);
    strcpy(strrchr(p, '/') + 1, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(*n);
    assert_int_equal(fread(buf, 1, *n, f), *n);
    fclose(f);
    return buf;
}

/* A realistic export of several pages: 3000 kernels and their calls. */
static char *big_fixture(void)
{
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "%s", TT_ROWS));
    for (int i = 0; i < 3000; i++)
        assert_true(tg_fixture_append(&sql,
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, correlationId, demangledName)"
            " VALUES (%d, %d, %d, 1);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId, nameId, globalTid)"
            " VALUES (%d, %d, %d, 3, " TT_GTID ");",
            1000 + i * 10, 1005 + i * 10, 100 + i, 990 + i * 10, 995 + i * 10, 100 + i));
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

static void test_nonexistent(void **state)
{
    (void)state;
    char msg[1024];
    expect_bad("/nonexistent/dir/trace.sqlite", msg, sizeof msg);
    assert_non_null(strstr(msg, "No such file"));
}

static void test_directory(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, NULL);
    char *dir = sibling(path, "");
    dir[strlen(dir) - 1] = 0;       /* drop the trailing slash */
    char msg[1024];
    expect_bad(dir, msg, sizeof msg);
    assert_non_null(strstr(msg, "directory"));
    free(dir);
    tg_fixture_remove(path);
}

static void test_devices_and_fifos(void **state)
{
    (void)state;
    expect_bad("/dev/zero", NULL, 0);
    expect_bad("/dev/null", NULL, 0);
    char *path = tg_fixture_build(tg_fixture_schema_3_0, NULL);
    char *fifo = sibling(path, "pipe.sqlite");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char msg[1024];
    expect_bad(fifo, msg, sizeof msg);          /* must not block on open/read */
    assert_non_null(strstr(msg, "not a regular file"));
    free(fifo);
    tg_fixture_remove(path);
}

static void test_not_sqlite(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, NULL);
    char msg[1024];

    char *text = sibling(path, "notes.sqlite");
    const char *words = "this is a text file, not a database\n";
    write_file(text, words, strlen(words));
    expect_bad(text, msg, sizeof msg);
    assert_non_null(strstr(msg, "not an SQLite database"));

    char *zeros = sibling(path, "zeros.sqlite");
    static const unsigned char zero[8192];
    write_file(zeros, zero, sizeof zero);
    expect_bad(zeros, NULL, 0);

    char *empty = sibling(path, "empty.sqlite");
    write_file(empty, "", 0);
    expect_bad(empty, msg, sizeof msg);
    assert_non_null(strstr(msg, "empty"));

    char *header_only = sibling(path, "header.sqlite");
    write_file(header_only, "SQLite format 3", 16);
    expect_bad(header_only, msg, sizeof msg);
    assert_non_null(strstr(msg, "truncated"));

    char *rep = sibling(path, "profile.nsys-rep");
    write_file(rep, "\x01\x02qdstrm", 8);
    expect_bad(rep, msg, sizeof msg);
    assert_non_null(strstr(msg, "nsys export --type sqlite"));
    char *qdrep = sibling(path, "profile.qdrep");   /* the name before nsys 2021.4 */
    write_file(qdrep, "\x01\x02qdstrm", 8);
    expect_bad(qdrep, msg, sizeof msg);
    assert_non_null(strstr(msg, "is an Nsight Systems report"));

    free(qdrep);
    free(text);
    free(zeros);
    free(empty);
    free(header_only);
    free(rep);
    tg_fixture_remove(path);
}

/* SQLite, but no StringIds and none of the export's tables. */
static void test_not_an_export(void **state)
{
    (void)state;
    char msg[1024];
    char *path = tg_fixture_from_sql("CREATE TABLE customers (id INTEGER, name TEXT);"
                                     "INSERT INTO customers VALUES (1, 'ada');");
    assert_non_null(path);
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "not an nsys export"));
    tg_fixture_remove(path);

    path = tg_fixture_from_sql("PRAGMA user_version = 7;");   /* a database with no tables */
    assert_non_null(path);
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "not an nsys export"));
    tg_fixture_remove(path);
}

/* A table the export needs without a column it cannot do without. */
static void test_missing_required_column(void **state)
{
    (void)state;
    char msg[1024];
    char *path = tg_fixture_from_sql(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin INTEGER, end INTEGER, deviceId INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0);");
    assert_non_null(path);
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "CUPTI_ACTIVITY_KIND_KERNEL"));
    assert_non_null(strstr(msg, "'start'"));
    tg_fixture_remove(path);
}

/* The step budget (tg_load_opts.max_steps; by default 100 SQLite steps per
** byte of the file, docs/limits.md) stops a read that runs over it, in the
** load, in a deferred API table's stream and in the memory estimate. */
static void test_step_budget(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) "
        "SELECT x * 10, x * 10 + 5, (1 << 24) | 1, x, 2 FROM c;");
    assert_non_null(path);
    tg_diag d;
    tg_diag_init(&d);
    tg_load_opts opts = {.max_steps = 100000};
    assert_null(tg_trace_open_with(path, &opts, &d));
    assert_int_equal(d.status, TG_ETRACE);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.msgs[0].text, path));
    assert_non_null(strstr(d.msgs[0].text, "reading CUPTI_ACTIVITY_KIND_RUNTIME took more than the 0 million "
                                           "SQLite steps allowed"));
    tg_diag_clear(&d);

    /* deferred: the open reads the small tables, the stream runs over */
    opts.defer_api = true;
    tg_trace *t = tg_trace_open_with(path, &opts, &d);
    assert_non_null(t);
    assert_int_equal(tg_trace_stream_apis(t, NULL, &d), TG_STREAM_FAILED);
    assert_int_equal(d.status, TG_ETRACE);
    assert_non_null(strstr(d.msgs[0].text, "SQLite steps allowed"));
    tg_trace_close(t);
    tg_diag_clear(&d);

    /* the default budget reads it, as it reads any plain table */
    t = tg_trace_open(path, &d);
    assert_non_null(t);
    assert_int_equal(t->n_apis, 50000);
    assert_true(tg_trace_estimate_bytes(path) > 0);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);

    /* the estimate sums the NVTX texts: over the budget, it cannot tell */
    path = tg_fixture_build(tg_fixture_schema_3_0,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000) "
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
        "SELECT x * 10, x * 10 + 5, 59, 'step ' || x, (1 << 24) | 1 FROM c;");
    assert_non_null(path);
    opts = (tg_load_opts){.max_steps = 100000};
    assert_int_equal(tg_trace_estimate_bytes_with(path, &opts), -1);
    assert_true(tg_trace_estimate_bytes(path) > 0);
    tg_fixture_remove(path);
}

/* An export cut short anywhere ("database disk image is malformed"). */
static void test_truncated(void **state)
{
    (void)state;
    char *path = big_fixture();
    size_t n;
    unsigned char *data = read_file(path, &n);
    assert_true(n > 64 * 1024);
    char *cut = sibling(path, "cut.sqlite");
    const size_t sizes[] = {1, 100, 511, 512, 1000, 4095, 4096, 4097, 10000, n / 3, n / 2, n - 4096,
                            n - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        print_message("cut at %zu of %zu bytes\n", sizes[i], n);
        write_file(cut, data, sizes[i]);
        expect_bad(cut, NULL, 0);
    }
    write_file(cut, data, n / 2);
    char msg[1024];
    expect_bad(cut, msg, sizeof msg);
    assert_non_null(strstr(msg, "malformed"));
    free(cut);
    free(data);
    tg_fixture_remove(path);
}

/* Random damage: either it loads or it fails with one sentence naming the
** file. Never a crash (run under ASan/UBSan). */
static void test_damaged(void **state)
{
    (void)state;
    char *path = big_fixture();
    size_t n;
    unsigned char *data = read_file(path, &n);
    unsigned char *copy = malloc(n);
    char *bad = sibling(path, "damaged.sqlite");
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int loaded = 0, rejected = 0;
    for (int round = 0; round < 150; round++) {
        memcpy(copy, data, n);
        int flips = 1 + round % 16;
        for (int k = 0; k < flips; k++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t at = round % 3 == 0 ? (size_t)(rng % 4096) : (size_t)(rng % n);
            copy[at] = (unsigned char)(rng >> 40);
        }
        write_file(bad, copy, n);
        tg_diag d;
        tg_diag_init(&d);
        tg_trace *t = tg_trace_open(bad, &d);
        if (t) {
            loaded++;
            assert_int_equal(d.n_errors, 0);
            for (size_t i = 1; i < t->n_kernels; i++)
                assert_true(t->kernels[i - 1].start <= t->kernels[i].start);
            tg_trace_close(t);
        } else {
            rejected++;
            assert_int_equal(d.n_errors, 1);
            assert_true(d.status == TG_ETRACE);
            assert_non_null(strstr(d.msgs[0].text, bad));
        }
        tg_diag_clear(&d);
    }
    print_message("damaged exports: %d loaded, %d rejected\n", loaded, rejected);
    assert_true(rejected > 0);
    free(bad);
    free(copy);
    free(data);
    tg_fixture_remove(path);
}

/* A writer holding the database (SQLite RESERVED lock) in another process. */
static void test_locked_by_writer(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    assert_non_null(path);
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(ready[0]);
        close(done[1]);     /* else the read below never sees EOF */
        /* never outlive a broken parent: a safety net only (the parent's
        ** closing `done`, or its death, ends this child), long enough
        ** for a loaded machine or valgrind */
        alarm(600);
        sqlite3 *db = NULL;
        char ok = 0;
        if (sqlite3_open(path, &db) == SQLITE_OK &&
            sqlite3_exec(db, "BEGIN IMMEDIATE; INSERT INTO StringIds VALUES (99, 'w');", NULL, NULL,
                         NULL) == SQLITE_OK)
            ok = 1;
        if (write(ready[1], &ok, 1) != 1) _exit(2);
        char c;
        while (read(done[0], &c, 1) > 0) {}
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char ok = 0;
    assert_int_equal(read(ready[0], &ok, 1), 1);
    assert_int_equal(ok, 1);
    char msg[1024];
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "locked"));
    close(done[1]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(ready[0]);

    /* The writer is gone: the same file opens. */
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    assert_non_null(t);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

/* A rollback journal or WAL beside the export: a write is in progress or
** crashed, and immutable reading would miss it. */
static void test_journal_beside(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    char *journal = sibling(path, "trace.sqlite-journal");
    write_file(journal, "hot journal", 11);
    char msg[1024];
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "-journal"));
    unlink(journal);
    char *wal = sibling(path, "trace.sqlite-wal");
    write_file(wal, "wal frames", 10);
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "-wal"));
    free(journal);
    free(wal);
    tg_fixture_remove(path);
}

static void test_unreadable(void **state)
{
    (void)state;
    if (geteuid() == 0) {
        print_message("skipped: running as root, which reads files whatever their mode\n");
        skip();
    }
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    assert_int_equal(chmod(path, 0), 0);
    char msg[1024];
    expect_bad(path, msg, sizeof msg);
    assert_non_null(strstr(msg, "Permission denied"));
    chmod(path, 0600);
    tg_fixture_remove(path);
}

/* A path with characters a URI must escape still opens. */
static void test_uri_escaping(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    char *odd = sibling(path, "a b?c#d%20e&mode=rw.sqlite");
    assert_int_equal(rename(path, odd), 0);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(odd, &d);
    assert_non_null(t);
    assert_int_equal(t->n_kernels, 1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    char listing[1024];
    tt_dir_listing(odd, listing, sizeof listing);
    assert_string_equal(listing, "a b?c#d%20e&mode=rw.sqlite");
    assert_int_equal(rename(odd, path), 0);
    free(odd);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nonexistent),
        cmocka_unit_test(test_directory),
        cmocka_unit_test(test_devices_and_fifos),
        cmocka_unit_test(test_not_sqlite),
        cmocka_unit_test(test_not_an_export),
        cmocka_unit_test(test_missing_required_column),
        cmocka_unit_test(test_step_budget),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_locked_by_writer),
        cmocka_unit_test(test_journal_beside),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_uri_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
