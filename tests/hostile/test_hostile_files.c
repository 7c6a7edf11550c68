/*
** Hostile trace files, through the binary: things that are not an export
** (a directory, a FIFO, /dev/zero, /dev/null, an empty, truncated, damaged
** or foreign file, an SQLite database of something else), an export that a
** writer still holds (exclusive lock, -journal, -wal), and a read-only
** export in a read-only directory. check, info and metrics must each exit
** 3 with one line naming the file and the problem, within the deadline,
** and never write beside the input.
*/
#include <fcntl.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "hostile.h"

static const char rows[] =
    "INSERT INTO StringIds VALUES (1, 'saxpy'), (2, 'cudaLaunchKernel'), (3, 'cudaMemcpy');"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
    "  demangledName, shortName) VALUES (1000, 2000, 0, 7, 1, 1 << 24, 1, 1), (3000, 4000, 0, 7, 2, 1 << 24, 1, 1);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
    "  VALUES (500, 900, (1 << 24) | 1, 1, 2), (2500, 2900, (1 << 24) | 1, 2, 2), (5000, 6000, (1 << 24) | 1, 3, 3);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid, bytes,"
    "  copyKind, srcKind, dstKind) VALUES (5100, 5900, 0, 7, 3, 1 << 24, 16777216, 1, 0, 2);";

typedef struct world {
    char *dir;          /* private directory for the case's files */
    char *export_path;  /* a valid export (fixture) */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->dir = hx_tempdir();
    w->export_path = tg_fixture_build(tg_fixture_schema_3_0, rows);
    if (!w->export_path) return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    free(w->dir);
    tg_fixture_remove(w->export_path);
    free(w);
    return 0;
}


static void test_directory(void **state)
{
    world *w = *state;
    hx_expect_bad_trace("directory", w->dir, "is a directory");
}

static void test_fifo(void **state)
{
    world *w = *state;
    char *fifo = hx_path(w->dir, "trace.sqlite");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    hx_expect_bad_trace("FIFO (nobody writes)", fifo, "not a regular file");
    unlink(fifo);
    free(fifo);
}

static void test_devices(void **state)
{
    (void)state;
    hx_expect_bad_trace("/dev/zero", "/dev/zero", "not a regular file");
    hx_expect_bad_trace("/dev/null", "/dev/null", "not a regular file");
}

static void test_empty_file(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "empty.sqlite");
    hx_write_file(p, "", 0);
    hx_expect_bad_trace("empty file", p, "is empty (0 bytes)");
    free(p);
}

static void test_truncated(void **state)
{
    world *w = *state;
    FILE *f = fopen(w->export_path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    char *p = hx_path(w->dir, "cut.sqlite");
    hx_write_file(p, buf, (size_t)size / 2);
    hx_expect_bad_trace("truncated export (half)", p, "truncated");
    hx_write_file(p, buf, 50);   /* inside the 100-byte header */
    hx_expect_bad_trace("truncated export (50 bytes)", p, "truncated");
    free(buf);
    free(p);
}

static void test_not_sqlite(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "notes.sqlite");
    const char text[] = "this is a text file, not a database\n";
    hx_write_file(p, text, sizeof text - 1);
    hx_expect_bad_trace("text file", p, "not an SQLite database");
    free(p);
    p = hx_path(w->dir, "run.nsys-rep");
    hx_write_file(p, "\x00\x01QdstrmReport", 15);
    hx_expect_bad_trace(".nsys-rep report", p, "nsys export --type sqlite");
    free(p);
}

static void test_damaged(void **state)
{
    world *w = *state;
    char *p = hx_copy_fixture(w->export_path, w->dir, "damaged.sqlite");
    FILE *f = fopen(p, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    /* keep the header, overwrite every page after the schema page */
    char junk[512];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 37 + 11);
    for (long off = 4096; off + (long)sizeof junk <= size; off += (long)sizeof junk) {
        fseek(f, off, SEEK_SET);
        fwrite(junk, 1, sizeof junk, f);
    }
    fclose(f);
    hx_expect_bad_trace("damaged pages", p, "malformed");
    free(p);
}

static void test_foreign_sqlite(void **state)
{
    (void)state;
    char *p = tg_fixture_from_sql("CREATE TABLE accounts (id INTEGER, owner TEXT);"
                                  "INSERT INTO accounts VALUES (1, 'a');");
    assert_non_null(p);
    hx_expect_bad_trace("SQLite file that is not an export", p, "not an nsys export");
    tg_fixture_remove(p);
}

static void test_missing_file(void **state)
{
    world *w = *state;
    char *p = hx_path(w->dir, "never-written.sqlite");
    hx_expect_bad_trace("nonexistent file", p, "No such file");
    free(p);
}

/* Another process holds a write transaction: here, this test process
** (fcntl locks belong to a process, and tracegate is another one). */
static void test_locked_by_writer(void **state)
{
    world *w = *state;
    char *p = hx_copy_fixture(w->export_path, w->dir, "locked.sqlite");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    hx_expect_bad_trace("export locked by a writer", p, "is locked by a process writing to it");
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);

    /* a writer in the middle of its transaction: a hot -journal beside it */
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA cache_size=1; BEGIN;"
                                      "INSERT INTO StringIds SELECT id + 1000, value FROM StringIds;", NULL, NULL, NULL),
                     SQLITE_OK);
    char *journal = hx_path(w->dir, "locked.sqlite-journal");
    struct stat st;
    assert_int_equal(stat(journal, &st), 0);
    hx_expect_bad_trace("export in a write transaction", p, "wait until the export is complete");
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    free(journal);
    free(p);
}

static void test_wal_writer(void **state)
{
    world *w = *state;
    char *p = hx_copy_fixture(w->export_path, w->dir, "wal.sqlite");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=WAL; INSERT INTO StringIds VALUES (99, 'late');",
                                  NULL, NULL, NULL), SQLITE_OK);
    hx_expect_bad_trace("export with a live -wal", p, "-wal");
    sqlite3_close(db);   /* checkpoints and removes the -wal */
    free(p);
}

/* One bad trace among good ones: every trace is still reported, the bad
** one in one line, and the run exits 3. */
static void test_bad_among_good(void **state)
{
    world *w = *state;
    char *bad = hx_path(w->dir, "bad.sqlite");
    hx_write_file(bad, "garbage", 7);
    hx_result r;
    /* the good traces' findings fail the gate: 1 wins over the unreadable
    ** trace's 3 (docs/formats.md), which the report still lists */
    hx_run(&r, "check", "--format", "json", w->export_path, bad, w->export_path);
    hx_expect_line("check good bad good", &r, 1, "not an SQLite database");
    assert_non_null(strstr(r.out, "\"traces\""));
    assert_non_null(strstr(r.out, "\"error\": \""));
    hx_free(&r);
    /* without a gating finding the unreadable trace decides: 3 */
    hx_run(&r, "check", "--fail-on", "never", "--format", "json", w->export_path, bad, w->export_path);
    hx_expect_line("check --fail-on never good bad good", &r, 3, "not an SQLite database");
    hx_free(&r);
    free(bad);
}

/* A report that cannot be written (full disk) is said on stderr, not only
** in the exit status (it was exit 4 and silence). */
static void test_report_unwritable(void **state)
{
    world *w = *state;
    hx_result r;
    hx_run(&r, "check", "--fail-on", "never", "-o", "json=/dev/full", w->export_path);
    hx_expect_line("check -o json=/dev/full", &r, 4, "cannot write the json report to /dev/full");
    hx_free(&r);
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_mode == b->st_mode;
}

static size_t count_entries(const char *dir)
{
    size_t n = 0;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%zu", &n), 1);
    pclose(p);
    return n;
}

/* A read-only export in a read-only directory: as root, permission bits do
** not stop writes, so the directory is also remounted read-only for the
** child when the kernel allows it; either way the file, its directory and
** its timestamps must be unchanged afterwards. */
static void test_read_only_dir(void **state)
{
    world *w = *state;
    char *sub = hx_path(w->dir, "ro");
    assert_int_equal(mkdir(sub, 0755), 0);
    char *p = hx_copy_fixture(w->export_path, sub, "trace.sqlite");
    assert_int_equal(chmod(p, 0444), 0);
    assert_int_equal(chmod(sub, 0555), 0);
    struct stat before, dir_before;
    assert_int_equal(stat(p, &before), 0);
    assert_int_equal(stat(sub, &dir_before), 0);
    size_t entries = count_entries(sub);
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < 3; i++) {
        bool mounted = false;
        hx_result r;
        hx_run_in(&r, sub, &mounted, (const char *const[]){cmds[i], p, NULL});
        char label[96];
        snprintf(label, sizeof label, "%s read-only export%s", cmds[i], mounted ? " (ro mount)" : " (chmod only)");
        /* the fixture holds a blocking 16 MiB copy: check fails the gate */
        if (i == 0) {
            hx_expect_warnings(label, &r, 1, 0, NULL);
        } else {
            hx_expect_warnings(label, &r, 0, 0, NULL);
        }
        hx_free(&r);
    }
    struct stat after, dir_after;
    assert_int_equal(stat(p, &after), 0);
    assert_int_equal(stat(sub, &dir_after), 0);
    assert_true(same_stat(&before, &after));
    assert_true(same_stat(&dir_before, &dir_after));
    assert_int_equal(count_entries(sub), entries);
    chmod(sub, 0755);
    free(p);
    free(sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_sqlite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_sqlite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locked_by_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_among_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_unwritable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
