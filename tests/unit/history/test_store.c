/*
** The history store's cases (store_cases.h) on SQLite files: each case's
** databases are new files in one temporary directory ($TMPDIR or /tmp),
** removed at the end; the SQLite-only cases (files that are not a history
** or cannot be written) run too. Then what the rows share without a
** server: the name a history is shown by (store.h, shown: the PostgreSQL
** row's masking of a URI's password, the SQLite row's name as given) and
** the one rule for TG_HISTORY_BUSY_MS (tg_store_busy_ms), which a malformed
** value is refused by, with the sentence the PostgreSQL row gives too.
*/
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "history/history.h"
#include "history/store.h"
#include "store_cases.h"

typedef struct files {
    char dir[4096];
    char name[4200];
    unsigned next;
} files;

/* dir/hN.sqlite: a name no case has used. */
static const char *fresh_db(void *ctx)
{
    files *f = ctx;
    snprintf(f->name, sizeof f->name, "%s/h%u.sqlite", f->dir, f->next++);
    return f->name;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    chmod(path, 0700);
    return remove(path);
}

static files f;

/* ------------------------------------------------------------ names */

/* The PostgreSQL row's name of a URI: the password of the user
** information masked up to the last '@' (a password may hold '@' and
** '/'), every password= parameter's value masked, the rest as written. */
static void test_pg_shown(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"postgresql://u:secret@host/db", "postgresql://u:***@host/db"},
        {"postgresql://u:p@ss@host:5432/db", "postgresql://u:***@host:5432/db"},
        {"postgresql://u:pa/ss@host/db", "postgresql://u:***@host/db"},
        {"postgres://u:p@ss/w@rd@/db?host=/tmp/s", "postgres://u:***@/db?host=/tmp/s"},
        {"postgresql://u@host/db?password=se@cret&sslmode=require",
         "postgresql://u@host/db?password=***&sslmode=require"},
        {"postgresql:///db?user=u&password=a&password=b", "postgresql:///db?user=u&password=***&password=***"},
        {"postgresql://host/db?options=-cpassword=x", "postgresql://host/db?options=-cpassword=x"},
        {"postgresql://u@host/db", "postgresql://u@host/db"},
        {"postgresql://u:@host/db", "postgresql://u:@host/db"},
    };
    assert_non_null(tg_store_pg_ops.shown);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *shown = tg_store_pg_ops.shown(cases[i][0]);
        assert_non_null(shown);
        assert_string_equal(shown, cases[i][1]);
        free(shown);
    }
}

/* An SQLite history is named as given, whatever its path holds. */
static void test_sqlite_name(void **state)
{
    (void)state;
    assert_null(tg_store_sqlite_ops.shown);
    char db[4300];
    snprintf(db, sizeof db, "%s/u:p@ss.sqlite", f.dir);
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, TG_HISTORY_WRITE, &d);
    assert_non_null(h);
    assert_string_equal(tg_history_name(h), db);
    tg_history_close(h);
    tg_diag_clear(&d);
    remove(db);
}

/* ------------------------------------------------------ busy timeout */

/* A TG_HISTORY_BUSY_MS that is not a whole number from 0 to 86400000 is
** refused with one sentence, the PostgreSQL row's (test_store_pg.c,
** test_row_settings), before anything is made; unset, empty or in range
** it opens. */
static void test_busy_setting(void **state)
{
    (void)state;
    static const char *const bad[] = {"-5", "10s", "abc", "1.5", "86400001", "99999999999999999999", "0x10"};
    char db[4300];
    snprintf(db, sizeof db, "%s/busy.sqlite", f.dir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        for (int mode = TG_HISTORY_READ; mode <= TG_HISTORY_WRITE; mode++) {
            char want[160];
            snprintf(want, sizeof want,
                     "TG_HISTORY_BUSY_MS must be a whole number of milliseconds from 0 to 86400000, not '%s'", bad[i]);
            tg_diag d;
            tg_diag_init(&d);
            setenv("TG_HISTORY_BUSY_MS", bad[i], 1);
            assert_null(tg_history_open(db, (tg_history_mode)mode, &d));
            unsetenv("TG_HISTORY_BUSY_MS");
            assert_int_equal(d.n_errors, 1);
            assert_int_equal(d.status, TG_EUSAGE);
            assert_string_equal(d.msgs[0].text, want);
            assert_int_equal(access(db, F_OK), -1);   /* nothing made */
            tg_diag_clear(&d);
        }
    static const char *const good[] = {"", "0", "200", "86400000"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        tg_diag d;
        tg_diag_init(&d);
        setenv("TG_HISTORY_BUSY_MS", good[i], 1);
        tg_history *h = tg_history_open(db, TG_HISTORY_WRITE, &d);
        unsetenv("TG_HISTORY_BUSY_MS");
        if (!h) fail_msg("TG_HISTORY_BUSY_MS='%s' refused: %s", good[i], d.n ? d.msgs[0].text : "?");
        tg_history_close(h);
        tg_diag_clear(&d);
    }
    long ms = 0;
    tg_diag d;
    tg_diag_init(&d);
    assert_true(tg_store_busy_ms(&ms, &d));
    assert_int_equal(ms, TG_STORE_BUSY_MS_DEFAULT);
    tg_diag_clear(&d);
    remove(db);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(f.dir, sizeof f.dir, "%s/tg-history-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f.dir)) {
        perror("mkdtemp");
        return 1;
    }
    int failed = tg_store_cases_run(fresh_db, &f, true);
    const struct CMUnitTest rows[] = {
        cmocka_unit_test(test_pg_shown),
        cmocka_unit_test(test_sqlite_name),
        cmocka_unit_test(test_busy_setting),
    };
    failed += cmocka_run_group_tests_name("history_store_rows", rows, NULL, NULL);
    nftw(f.dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? 1 : 0;
}
