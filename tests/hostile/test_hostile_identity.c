/*
** Sidecars behind a symlink (docs/limits.md, "One file per run"): the
** binary on a symlink, and on a chain of them, to an export whose live
** writer left a -wal (committed rows SQLite would read) or a hot -journal
** beside the target is refused with exit 3, as the export named directly
** is; nothing lies beside the links themselves. The mid-run replacement
** half of the rule is tested in-process (tests/unit/trace/test_trace_identity.c),
** where the swap can be placed between two opens.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "hostile.h"

static const char rows[] =
    "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000');\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId, returnValue)"
    " VALUES (100, 150, (1234 << 24) | 1235, 11, 2, 0), (1000100, 1000150, (1234 << 24) | 1235, 12, 2, 0),"
    " (2000100, 2000150, (1234 << 24) | 1235, 13, 2, 0);\n"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
    " globalPid, demangledName, shortName) VALUES (200, 260, 0, 1, 7, 11, 1234 << 24, 1, 1),"
    /* three kernels over 2 ms: enough to judge (docs/rules.md, "Too little to judge") */
    " (1000200, 1000260, 0, 1, 7, 12, 1234 << 24, 1, 1), (2000200, 2000260, 0, 1, 7, 13, 1234 << 24, 1, 1);\n";

/* The export in dir/real/, links to it in dir/links/: the absolute link
** links/abs.sqlite, and links/chain.sqlite -> abs.sqlite (relative). */
typedef struct world {
    char *dir, *export_path, *target, *abs_link, *chain;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w || !hx_binary()) return -1;
    w->dir = hx_tempdir();
    w->export_path = tg_fixture_build(tg_fixture_schema_3_0, rows);
    char *real = hx_path(w->dir, "real"), *links = hx_path(w->dir, "links");
    if (!w->export_path || mkdir(real, 0700) || mkdir(links, 0700)) return -1;
    w->target = hx_copy_fixture(w->export_path, real, "trace.sqlite");
    w->abs_link = hx_path(links, "abs.sqlite");
    w->chain = hx_path(links, "chain.sqlite");
    if (symlink(w->target, w->abs_link) || symlink("abs.sqlite", w->chain)) return -1;
    free(real);
    free(links);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    tg_fixture_remove(w->export_path);
    free(w->dir);
    free(w->target);
    free(w->abs_link);
    free(w->chain);
    free(w);
    return 0;
}

/* The untouched export reads through either link as named directly. */
static void test_links_read(void **state)
{
    world *w = *state;
    const char *paths[] = {w->target, w->abs_link, w->chain};
    for (size_t i = 0; i < 3; i++) {
        hx_result r;
        hx_run(&r, "check", "--format", "json", paths[i]);
        hx_expect_in_time(paths[i], &r);
        assert_int_not_equal(r.status, 3);
        assert_non_null(strstr(r.out, "\"traces\""));
        hx_free(&r);
    }
}

/* Three paths of one export, each refused with the sidecar named. */
static void expect_all_refused(const world *w, const char *what, const char *suffix)
{
    const char *paths[] = {w->target, w->abs_link, w->chain};
    const char *names[] = {"direct", "symlink", "symlink chain"};
    for (size_t i = 0; i < 3; i++) {
        char label[256];
        snprintf(label, sizeof label, "%s, %s", what, names[i]);
        hx_expect_bad_trace(label, paths[i], suffix);
    }
}

static void test_wal_behind_links(void **state)
{
    world *w = *state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(w->target, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=WAL; INSERT INTO StringIds VALUES (99, 'late');", NULL,
                                  NULL, NULL), SQLITE_OK);
    /* SQLite through the link sees the committed row: it reads the -wal
    ** beside the target, so tracegate must not read past it */
    sqlite3 *via;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(w->chain, &via, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(via, "SELECT count(*) FROM StringIds WHERE id = 99", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    sqlite3_close(via);
    expect_all_refused(w, "live -wal beside the target", "-wal");
    sqlite3_close(db);   /* checkpoints and removes the -wal */
}

static void test_journal_behind_links(void **state)
{
    world *w = *state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(w->target, &db), SQLITE_OK);
    /* a writer mid-transaction: its journal (and its lock) beside the target */
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN; "
                                      "INSERT INTO StringIds SELECT id + 1000, value FROM StringIds;",
                                  NULL, NULL, NULL), SQLITE_OK);
    char *journal = hx_path(w->dir, "real/trace.sqlite-journal");
    struct stat sb;
    assert_int_equal(stat(journal, &sb), 0);
    expect_all_refused(w, "writer mid-transaction", "wait until the export is complete");
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    /* a crashed writer's hot journal, no lock: the -journal sentence */
    hx_write_file(journal, "a journal a writer left", 23);
    expect_all_refused(w, "hot -journal beside the target", "-journal");
    unlink(journal);
    free(journal);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links_read),
        cmocka_unit_test(test_wal_behind_links),
        cmocka_unit_test(test_journal_behind_links),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
