/*
** One file per run (docs/limits.md, "One file per run"; trace_guard.c): a
** run opens its trace many times, and each later open must find the file
** the first one found (device, inode, size, modification time), or the
** read stops with one sentence, status TG_ETRACE. Each kind of later open
** is covered with the export replaced by a rename just before it: the
** deferred API table's direct reader, the reopen for host-side tables, a
** second SQLite connection of the open itself (sqlite3_open_v2 is wrapped,
** -Wl,--wrap, so the swap happens between two connections), the direct
** reader of a table in the middle of the open (tg_btree_open wrapped), the
** early API reader's connection, and a Kineto trace's read pass; then a
** file rewritten in place (same inode, another size; same size, another
** mtime). An untouched file reads as always.
**
** Sidecars behind a symlink: a -wal or hot -journal beside the file a
** symlink (or a chain of them) resolves to is refused exactly as beside
** the file named directly, and one beside the link alone (which SQLite
** never reads) is not.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_test.h"

#define CHANGED "the file changed while tracegate was reading it (replaced or rewritten); re-run on a stable copy"

/* ---------------------------------------------------------------- the swap hook */

/* When set, the file `swap_from` is renamed over `swap_to` just before
** the swap_at-th call (1-based) of the wrapped open counted below. */
static const char *swap_from, *swap_to;
static int swap_at, sqlite_opens, btree_opens;
static enum { HOOK_NONE, HOOK_SQLITE, HOOK_BTREE } hook;

static void maybe_swap(int n)
{
    if (swap_from && n == swap_at) {
        assert_int_equal(rename(swap_from, swap_to), 0);
        swap_from = NULL;
    }
}

int __real_sqlite3_open_v2(const char *name, sqlite3 **db, int flags, const char *vfs);
int __wrap_sqlite3_open_v2(const char *name, sqlite3 **db, int flags, const char *vfs);
int __wrap_sqlite3_open_v2(const char *name, sqlite3 **db, int flags, const char *vfs)
{
    ++sqlite_opens;
    if (hook == HOOK_SQLITE) maybe_swap(sqlite_opens);
    return __real_sqlite3_open_v2(name, db, flags, vfs);
}

typedef struct tg_btree tg_btree;
tg_btree *__real_tg_btree_open(const char *path, uint32_t root, const int *pos, int n);
tg_btree *__wrap_tg_btree_open(const char *path, uint32_t root, const int *pos, int n);
tg_btree *__wrap_tg_btree_open(const char *path, uint32_t root, const int *pos, int n)
{
    ++btree_opens;
    if (hook == HOOK_BTREE) maybe_swap(btree_opens);
    return __real_tg_btree_open(path, root, pos, n);
}

static void arm(int kind, int at, const char *from, const char *to)
{
    sqlite_opens = btree_opens = 0;
    hook = kind;
    swap_at = at;
    swap_from = from;
    swap_to = to;
}

/* ---------------------------------------------------------------- helpers */

/* Another valid export, of another layout (its tables at other root
** pages), to swap in: the first one's rows would read half from each. */
static char *other_export(void)
{
    return tg_fixture_build(tg_fixture_schema_3_25, TT_ROWS
                            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId,"
                            " returnValue) VALUES (600, 650, " TT_GTID ", 15, 3, 0);\n");
}

static void expect_changed(const tg_diag *d, const char *path)
{
    const char *msg = tt_first_error(d);
    if (!strstr(msg, CHANGED) || strncmp(msg, path, strlen(path)) != 0)
        fail_msg("expected the file-changed sentence naming %s, got: %s", path, msg);
    assert_int_equal(d->status, TG_ETRACE);
    assert_int_equal(d->n_errors, 1);
}

static char *sibling(const char *trace, const char *name)
{
    char *p = malloc(strlen(trace) + strlen(name) + 2);
    assert_non_null(p);
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

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* ---------------------------------------------------------------- replaced mid-run */

/* The untouched file: the same calls read it whole. */
static void test_unchanged_reads(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    for (int sql = 0; sql < 2; sql++) {
        tg_diag d;
        tg_diag_init(&d);
        tg_load_opts o = {.defer_api = true, .threads = 2, .sqlite_reads = sql};
        tg_trace *t = tg_trace_open_with(path, &o, &d);
        assert_non_null(t);
        assert_true(tg_trace_load_apis(t, &d));
        assert_int_equal(t->n_apis, 4);
        assert_true(tg_trace_load_host(t, TG_HOST_OSRT, &d));
        assert_int_equal(d.n_errors, 0);
        tg_trace_close(t);
        tg_diag_clear(&d);
    }
    tg_fixture_remove(path);
}

/* Replaced before the deferred API table is read: its read (the direct
** reader's open, or a statement on the open's connection) refuses. */
static void test_replaced_before_api_table(void **state)
{
    (void)state;
    for (int sql = 0; sql < 2; sql++) {
        char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
        char *other = other_export();
        tg_diag d;
        tg_diag_init(&d);
        tg_load_opts o = {.defer_api = true, .sqlite_reads = sql};
        tg_trace *t = tg_trace_open_with(path, &o, &d);
        assert_non_null(t);
        assert_int_equal(rename(other, path), 0);
        assert_false(tg_trace_load_apis(t, &d));
        expect_changed(&d, path);
        tg_trace_close(t);
        tg_diag_clear(&d);
        tg_fixture_remove(path);
        tg_fixture_remove(other);
    }
}

/* Replaced before a failing finding's cause reopens it for the host side
** (tg_trace_load_host: a new SQLite connection). */
static void test_replaced_before_host_reopen(void **state)
{
    (void)state;
    char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
    char *other = other_export();
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    assert_non_null(t);
    assert_int_equal(rename(other, path), 0);
    assert_false(tg_trace_load_host(t, TG_HOST_OSRT, &d));
    expect_changed(&d, path);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
    tg_fixture_remove(other);
}

/* Replaced in the middle of the open: before each of its SQLite
** connections after the first (kernels on a side connection, the early API
** reader), and before each direct read of a table. Every one refuses; the
** open never returns a trace read from two files. */
static void test_replaced_during_open(void **state)
{
    (void)state;
    int kinds[] = {HOOK_SQLITE, HOOK_BTREE};
    int swaps[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        for (int at = 1; at <= 16; at++) {
            char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
            char *other = other_export();
            tg_diag d;
            tg_diag_init(&d);
            tg_load_opts o = {.defer_api = true, .threads = 2, .kernel_rows = true};
            arm(kinds[k], at, other, path);
            tg_trace *t = tg_trace_open_with(path, &o, &d);
            bool read = t && tg_trace_load_apis(t, &d);
            bool swapped = swap_from == NULL;
            arm(HOOK_NONE, 0, NULL, NULL);
            if (swapped) {
                /* refused at the open, or when the API table is read */
                assert_false(read);
                expect_changed(&d, path);
                swaps[k]++;
            } else {
                /* fewer opens than `at`: nothing swapped, all read */
                assert_true(read);
                assert_int_equal(d.n_errors, 0);
                assert_int_equal(t->n_apis, 4);
            }
            tg_trace_close(t);
            tg_diag_clear(&d);
            tg_fixture_remove(path);
            tg_fixture_remove(other);
        }
    }
    /* the open makes three SQLite connections (the open's, the kernels'
    ** side, the early API reader) and reads some tables directly (a
    ** fixture's columns with a DEFAULT are read through SQLite) */
    assert_int_equal(swaps[0], 3);
    assert_true(swaps[1] >= 1);
}

/* Rewritten in place: the same inode, other bytes of another size; then
** the same bytes with another modification time. */
static void test_rewritten_in_place(void **state)
{
    (void)state;
    for (int same_size = 0; same_size < 2; same_size++) {
        char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
        char *other = other_export();
        struct stat before, after;
        assert_int_equal(stat(path, &before), 0);
        tg_diag d;
        tg_diag_init(&d);
        tg_load_opts o = {.defer_api = true};
        tg_trace *t = tg_trace_open_with(path, &o, &d);
        assert_non_null(t);
        size_t n;
        unsigned char *bytes = slurp(same_size ? path : other, &n);
        int fd = open(path, O_WRONLY | O_TRUNC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, bytes, n), (ssize_t)n);
        /* a modification time the first open cannot have seen */
        struct timespec times[2] = {{.tv_sec = 1000000000, .tv_nsec = 1}, {.tv_sec = 1000000000, .tv_nsec = 1}};
        assert_int_equal(futimens(fd, times), 0);
        close(fd);
        free(bytes);
        assert_int_equal(stat(path, &after), 0);
        assert_true(after.st_ino == before.st_ino);
        assert_true(same_size ? after.st_size == before.st_size : after.st_size != before.st_size);
        assert_false(tg_trace_load_apis(t, &d));
        expect_changed(&d, path);
        tg_trace_close(t);
        tg_diag_clear(&d);
        tg_fixture_remove(path);
        tg_fixture_remove(other);
    }
}

/* A Kineto trace: the file check's open is the first, the read pass's the
** next; another JSON file (the same text) renamed over it between the two
** (by the wrapped tg_file_open) is refused. */
static const char kineto_a[] = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                               "\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"device\":0,\"stream\":7}}]}";

int __real_tg_file_open(const void *id, const char *path);
int __wrap_tg_file_open(const void *id, const char *path);
static const char *kin_swap_from, *kin_swap_to;
int __wrap_tg_file_open(const void *id, const char *path)
{
    if (kin_swap_from) {
        assert_int_equal(rename(kin_swap_from, kin_swap_to), 0);
        kin_swap_from = NULL;
    }
    return __real_tg_file_open(id, path);
}

static void test_kineto_replaced(void **state)
{
    (void)state;
    char *dir = tg_fixture_build(tg_fixture_schema_3_0, NULL);   /* a scratch directory */
    char *a = sibling(dir, "run.json"), *b = sibling(dir, "other.json");
    write_file(a, kineto_a, sizeof kineto_a - 1);
    write_file(b, kineto_a, sizeof kineto_a - 1);   /* the same text, another file */
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(a, &d);             /* untouched: reads */
    assert_non_null(t);
    assert_int_equal(t->n_kernels, 1);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_diag_init(&d);
    kin_swap_from = b;
    kin_swap_to = a;
    t = tg_trace_open(a, &d);
    assert_null(t);
    expect_changed(&d, a);
    tg_diag_clear(&d);
    free(a);
    free(b);
    tg_fixture_remove(dir);
}

/* ---------------------------------------------------------------- sidecars behind a symlink */

static void expect_sidecar(const char *open_path, const char *suffix, char *msg, size_t size)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(open_path, &d);
    if (t) fail_msg("%s: opened with a %s beside the file it names", open_path, suffix);
    assert_int_equal(d.status, TG_ETRACE);
    assert_int_equal(d.n_errors, 1);
    snprintf(msg, size, "%s", tt_first_error(&d));
    if (!strstr(msg, suffix) || strncmp(msg, open_path, strlen(open_path)) != 0)
        fail_msg("%s: expected a sentence naming it and %s, got: %s", open_path, suffix, msg);
    tg_diag_clear(&d);
}

static void test_sidecar_behind_symlinks(void **state)
{
    (void)state;
    static const char *const suffixes[] = {"-wal", "-journal"};
    for (size_t s = 0; s < 2; s++) {
        char *path = tg_fixture_build(tg_fixture_schema_3_0, TT_ROWS);
        char *elsewhere = tg_fixture_build(tg_fixture_schema_3_0, NULL);   /* another directory */
        char *link1 = sibling(elsewhere, "link.sqlite"), *link2 = sibling(elsewhere, "chain.sqlite");
        char rel[4096];
        assert_int_equal(symlink(path, link1), 0);
        snprintf(rel, sizeof rel, "link.sqlite");                       /* a relative link in the chain */
        assert_int_equal(symlink(rel, link2), 0);
        char name[64];
        snprintf(name, sizeof name, "trace.sqlite%s", suffixes[s]);
        char *car = sibling(path, name);
        write_file(car, "frames of a writer", 18);
        char msg[1024];
        expect_sidecar(path, suffixes[s], msg, sizeof msg);
        expect_sidecar(link1, suffixes[s], msg, sizeof msg);
        expect_sidecar(link2, suffixes[s], msg, sizeof msg);
        /* beside the link only: SQLite never reads it, nor does tracegate */
        unlink(car);
        char lname[64];
        snprintf(lname, sizeof lname, "link.sqlite%s", suffixes[s]);
        char *lcar = sibling(elsewhere, lname);
        write_file(lcar, "frames of a writer", 18);
        tg_diag d;
        tg_diag_init(&d);
        tg_trace *t = tg_trace_open(link1, &d);
        assert_non_null(t);
        assert_int_equal(t->n_kernels, 1);
        assert_string_equal(t->path, link1);       /* named as given */
        tg_trace_close(t);
        tg_diag_clear(&d);
        free(car);
        free(lcar);
        free(link1);
        free(link2);
        tg_fixture_remove(path);
        tg_fixture_remove(elsewhere);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unchanged_reads),
        cmocka_unit_test(test_replaced_before_api_table),
        cmocka_unit_test(test_replaced_before_host_reopen),
        cmocka_unit_test(test_replaced_during_open),
        cmocka_unit_test(test_rewritten_in_place),
        cmocka_unit_test(test_kineto_replaced),
        cmocka_unit_test(test_sidecar_behind_symlinks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
