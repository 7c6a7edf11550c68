/*
** The direct reader of a rowid table's B-tree pages (engine/trace/trace_btree.c)
** against SQLite itself:
**
**  - cell by cell, on files written here with the sqlite3 API, it must
**    give what `SELECT rowid, cols FROM t` gives: every serial type, reals
**    (NaN read as NULL), NULLs, texts with NUL bytes, blobs, empty values,
**    payloads that spill into overflow pages (512, 1024, 4096 and 65536
**    byte pages, with and without reserved bytes), rows older than an
**    ALTER TABLE ADD COLUMN, negative and huge rowids, trees of one to
**    four levels (the schema table, whose root is page 1, too), tables
**    after deletes and with auto-vacuum's pointer-map pages, and any
**    choice of positions (out of order, repeated, -1, past the record);
**  - the loader (tg_trace_open_with) gives the same rows with
**    .sqlite_reads and without, and takes the direct path only for the
**    tables it should (this executable is linked with
**    -Wl,--wrap=tg_btree_open to see which tables it opens directly);
**  - a damaged file ends in TG_BT_CORRUPT, never in a crash, a loop or a
**    read out of bounds (run it under valgrind or ASan), and the loader
**    says "database disk image is malformed"; a payload over
**    TG_MAX_VALUE_BYTES ends in TG_BT_TOOBIG.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_test.h"
#include "trace/trace_int.h"

/* ---------------------------------------------------------------- the wrap */

/* Every tg_btree_open of the process (the loader's and this file's): its
** root page and whether it gave a reader. */
tg_btree *__real_tg_btree_open(const char *path, uint32_t root, const int *pos, int n);
tg_btree *__wrap_tg_btree_open(const char *path, uint32_t root, const int *pos, int n);

#define MAX_OPENS 1024
static pthread_mutex_t opens_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint32_t root;
    bool ok;
} opens[MAX_OPENS];
static int n_opens;

tg_btree *__wrap_tg_btree_open(const char *path, uint32_t root, const int *pos, int n)
{
    tg_btree *b = __real_tg_btree_open(path, root, pos, n);
    pthread_mutex_lock(&opens_lock);
    if (n_opens < MAX_OPENS) {
        opens[n_opens].root = root;
        opens[n_opens].ok = b != NULL;
        n_opens++;
    }
    pthread_mutex_unlock(&opens_lock);
    return b;
}

static void opens_reset(void)
{
    pthread_mutex_lock(&opens_lock);
    n_opens = 0;
    pthread_mutex_unlock(&opens_lock);
}

/* Whether a direct reader was opened on the tree at root. */
static bool opened_directly(uint32_t root)
{
    bool found = false;
    pthread_mutex_lock(&opens_lock);
    for (int i = 0; i < n_opens; i++)
        if (opens[i].root == root && opens[i].ok) found = true;
    pthread_mutex_unlock(&opens_lock);
    return found;
}

/* ---------------------------------------------------------------- files */

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) fail_msg("%.300s: %s", sql, err ? err : "?");
    sqlite3_free(err);
}

/* A new database (in a private tg-fixture-* directory: tg_fixture_remove
** it): `pragmas` run first, outside a transaction (page_size, encoding,
** auto_vacuum), then `reserve` bytes are reserved at the end of each page,
** then `sql` runs in one transaction. */
static char *make_db(const char *pragmas, int reserve, const char *sql)
{
    char *path = tg_fixture_from_sql("");
    assert_non_null(path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 0x7FFFFFFF);      /* raised to SQLite's build maximum */
    if (pragmas) exec(db, pragmas);
    if (reserve) {
        int r = reserve;
        assert_int_equal(sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &r), SQLITE_OK);
    }
    exec(db, "BEGIN");
    exec(db, sql);
    exec(db, "COMMIT");
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    return path;
}

/* Read-only and immutable, as the loader opens an export (tg_trace_uri). */
static sqlite3 *open_ro(const char *path)
{
    sqlite3 *db = NULL;
    char *uri = tg_trace_uri(path);
    assert_non_null(uri);
    assert_int_equal(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
    free(uri);
    return db;
}

static int64_t query_int(const char *path, const char *sql)
{
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static uint32_t root_of(const char *path, const char *table)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = '%s'", table);
    if (strcmp(table, "sqlite_master") == 0) return 1;
    int64_t r = query_int(path, sql);
    assert_true(r > 0);
    return (uint32_t)r;
}

/* A whole file in memory, to read and damage its pages. */
typedef struct dbfile {
    unsigned char *d;
    size_t n;
    uint32_t ps, usable;
} dbfile;

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)(v >> 8); p[1] = (unsigned char)v; }
static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static dbfile file_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    dbfile db = {.n = (size_t)ftell(f)};
    fseek(f, 0, SEEK_SET);
    db.d = malloc(db.n);
    assert_non_null(db.d);
    assert_int_equal(fread(db.d, 1, db.n, f), db.n);
    fclose(f);
    db.ps = be16(db.d + 16) == 1 ? 65536 : be16(db.d + 16);
    db.usable = db.ps - db.d[20];
    return db;
}

static dbfile file_copy(const dbfile *src)
{
    dbfile c = *src;
    c.d = malloc(src->n);
    assert_non_null(c.d);
    memcpy(c.d, src->d, src->n);
    return c;
}

static void file_save(const char *path, const unsigned char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Page pg, and the offset of its B-tree header (page 1's follows the file header). */
static unsigned char *page(const dbfile *f, uint32_t pg) { return f->d + (size_t)(pg - 1) * f->ps; }
static uint32_t hdr(uint32_t pg) { return pg == 1 ? 100 : 0; }
static int page_type(const dbfile *f, uint32_t pg) { return page(f, pg)[hdr(pg)]; }
static uint32_t n_cells(const dbfile *f, uint32_t pg) { return be16(page(f, pg) + hdr(pg) + 3); }
/* Cell i's pointer (in the page's cell pointer array). */
static unsigned char *cell_ptr(const dbfile *f, uint32_t pg, uint32_t i)
{
    return page(f, pg) + hdr(pg) + (page_type(f, pg) == 0x05 ? 12 : 8) + 2 * i;
}
static unsigned char *cell(const dbfile *f, uint32_t pg, uint32_t i) { return page(f, pg) + be16(cell_ptr(f, pg, i)); }
static unsigned char *right_ptr(const dbfile *f, uint32_t pg) { return page(f, pg) + hdr(pg) + 8; }

/* The leaves of the tree at pg in key order, and its depth. */
static void collect_leaves(const dbfile *f, uint32_t pg, uint32_t *out, size_t *n, size_t cap, int level, int *depth)
{
    assert_true(level < 20);
    if (level + 1 > *depth) *depth = level + 1;
    if (page_type(f, pg) == 0x0D) {
        assert_true(*n < cap);
        out[(*n)++] = pg;
        return;
    }
    assert_int_equal(page_type(f, pg), 0x05);
    for (uint32_t i = 0; i < n_cells(f, pg); i++) collect_leaves(f, be32(cell(f, pg, i)), out, n, cap, level + 1, depth);
    collect_leaves(f, be32(right_ptr(f, pg)), out, n, cap, level + 1, depth);
}

static int tree_depth(const char *path, uint32_t root)
{
    dbfile f = file_load(path);
    size_t cap = f.n / f.ps + 1, n = 0;
    uint32_t *leaves = malloc(cap * sizeof *leaves);
    int depth = 0;
    collect_leaves(&f, root, leaves, &n, cap, 0, &depth);
    free(leaves);
    free(f.d);
    return depth;
}

/* ---------------------------------------------------------------- agreement */

static void check_cell(sqlite3_stmt *st, int col, const tg_cellv *v, size_t row, const char *what)
{
    long long rowid = sqlite3_column_int64(st, 0);
    int type = sqlite3_column_type(st, col);
    if (v->type != type)
        fail_msg("%s: row %zu (rowid %lld) cell %d: type %d, SQLite's %d", what, row, rowid, col, v->type, type);
    switch (type) {
    case SQLITE_INTEGER:
        if (v->i != sqlite3_column_int64(st, col))
            fail_msg("%s: row %zu (rowid %lld) cell %d: %lld, SQLite's %lld", what, row, rowid, col, (long long)v->i,
                     (long long)sqlite3_column_int64(st, col));
        break;
    case SQLITE_FLOAT: {
        double d = sqlite3_column_double(st, col);
        if (memcmp(&d, &v->d, sizeof d) != 0)
            fail_msg("%s: row %zu (rowid %lld) cell %d: %.17g, SQLite's %.17g", what, row, rowid, col, v->d, d);
        break;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
        const void *s = type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, col) : sqlite3_column_blob(st, col);
        int n = sqlite3_column_bytes(st, col);
        if (v->n != n)
            fail_msg("%s: row %zu (rowid %lld) cell %d: %d bytes, SQLite's %d", what, row, rowid, col, v->n, n);
        if (n && memcmp(v->p, s, (size_t)n) != 0)
            fail_msg("%s: row %zu (rowid %lld) cell %d: the bytes differ", what, row, rowid, col);
        if (v->p[n] != 0) fail_msg("%s: row %zu (rowid %lld) cell %d: not NUL-terminated", what, row, rowid, col);
        break;
    }
    default:
        break;
    }
}

/* Scan table with the direct reader (positions pos[0..n), NULL: every
** column in order) and with SQLite, cell by cell; the rows read. */
static size_t compare_positions(const char *path, const char *table, const int *pos, int n)
{
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st = NULL;
    char *names[256];
    int ncols = 0;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW && ncols < 256) names[ncols++] = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    assert_true(ncols > 0);
    int all[256];
    if (!pos) {
        for (int i = 0; i < ncols; i++) all[i] = i;
        pos = all;
        n = ncols;
    }
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "SELECT rowid"));
    for (int i = 0; i < n; i++) {
        if (pos[i] >= 0 && pos[i] < ncols) assert_true(tg_fixture_append(&sql, ", \"%s\"", names[pos[i]]));
        else assert_true(tg_fixture_append(&sql, ", NULL"));
    }
    assert_true(tg_fixture_append(&sql, " FROM \"%s\" ORDER BY rowid", table));
    for (int i = 0; i < ncols; i++) free(names[i]);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);

    tg_btree *b = tg_btree_open(path, root_of(path, table), pos, n);
    assert_non_null(b);
    const tg_cellv *cells = tg_btree_cells(b);
    size_t rows = 0;
    for (;;) {
        int rs = sqlite3_step(st), rb = tg_btree_next(b);
        if (rs != SQLITE_ROW) {
            assert_int_equal(rs, SQLITE_DONE);
            if (rb != 0) fail_msg("%s: SQLite ends after %zu rows, the direct reader says %d", sql, rows, rb);
            break;
        }
        if (rb != 1) fail_msg("%s: row %zu: the direct reader says %d", sql, rows, rb);
        assert_ptr_equal(tg_btree_cells(b), cells);
        for (int c = 0; c <= n; c++) check_cell(st, c, &cells[c], rows, sql);
        rows++;
    }
    assert_int_equal(tg_btree_next(b), 0);         /* and stays at the end */
    assert_int_equal(tg_btree_next(b), 0);
    tg_btree_close(b);
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(sql);
    return rows;
}

static size_t compare(const char *path, const char *table)
{
    return compare_positions(path, table, NULL, 0);
}

#define SEQ(n) "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < (" #n ") - 1) "

/* ---------------------------------------------------------------- tests: agreement */

static void test_column_ok(void **state)
{
    (void)state;
    static const char *const direct[] = {"INTEGER", "INT", "BIGINT", "TEXT", "VARCHAR(20)", "CLOB", "BLOB", "",
                                         "NUMERIC", "DECIMAL(10,5)", "BOOLEAN", "DATETIME", "FLOATING POINT",
                                         "ANY"};
    static const char *const real[] = {"REAL", "real", "FLOAT", "DOUBLE", "DOUBLE PRECISION", "FLOAT8"};
    for (size_t i = 0; i < sizeof direct / sizeof *direct; i++)
        if (!tg_btree_column_ok(direct[i], false, false, false)) fail_msg("'%s' should be read directly", direct[i]);
    assert_true(tg_btree_column_ok(NULL, false, false, false));
    for (size_t i = 0; i < sizeof real / sizeof *real; i++)
        if (tg_btree_column_ok(real[i], false, false, false)) fail_msg("'%s' has REAL affinity", real[i]);
    assert_false(tg_btree_column_ok("INTEGER", true, false, false));
    assert_false(tg_btree_column_ok("INTEGER", false, true, false));
    assert_false(tg_btree_column_ok("INTEGER", false, false, true));
}

static void test_open_refuses(void **state)
{
    (void)state;
    int pos[] = {0};
    assert_null(tg_btree_open("/nonexistent/trace.sqlite", 2, pos, 1));
    char *path = make_db("PRAGMA page_size = 1024", 0, "CREATE TABLE t (a); INSERT INTO t VALUES (1);");
    uint32_t root = root_of(path, "t");
    int64_t pages = query_int(path, "PRAGMA page_count");
    tg_btree *b = tg_btree_open(path, root, pos, 1);
    assert_non_null(b);
    tg_btree_close(b);
    tg_btree_close(NULL);
    assert_null(tg_btree_open(path, 0, pos, 1));
    assert_null(tg_btree_open(path, (uint32_t)pages + 1, pos, 1));
    assert_null(tg_btree_open(path, root, pos, -1));
    assert_null(tg_btree_open(NULL, root, pos, 1));

    /* not an SQLite file; a page size SQLite refuses; too few usable bytes
    ** a page; shorter than the header */
    dbfile f = file_load(path);
    char *bad = malloc(strlen(path) + 16);
    sprintf(bad, "%s.bad", path);
    dbfile c = file_copy(&f);
    memset(c.d, 'x', 200);
    file_save(bad, c.d, c.n);
    assert_null(tg_btree_open(bad, root, pos, 1));
    memcpy(c.d, f.d, f.n);
    put16(c.d + 16, 1000);
    file_save(bad, c.d, c.n);
    assert_null(tg_btree_open(bad, root, pos, 1));
    memcpy(c.d, f.d, f.n);
    c.d[20] = 200;                                  /* 824 usable bytes: SQLite reads it */
    file_save(bad, c.d, c.n);
    b = tg_btree_open(bad, root, pos, 1);
    assert_non_null(b);
    tg_btree_close(b);
    file_save(bad, f.d, 99);
    assert_null(tg_btree_open(bad, root, pos, 1));
    free(c.d);
    free(f.d);
    free(bad);
    tg_fixture_remove(path);

    /* UTF-16 text: SQLite converts it, the direct reader does not read it */
    path = make_db("PRAGMA encoding = 'UTF-16le'", 0, "CREATE TABLE t (a); INSERT INTO t VALUES ('x');");
    assert_null(tg_btree_open(path, root_of(path, "t"), pos, 1));
    tg_fixture_remove(path);
    path = make_db("PRAGMA encoding = 'UTF-16be'", 0, "CREATE TABLE t (a); INSERT INTO t VALUES ('x');");
    assert_null(tg_btree_open(path, root_of(path, "t"), pos, 1));
    tg_fixture_remove(path);
}

/* 200,000 rows on 512-byte pages: a tree of at least three levels. */
static void test_big_tree(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b, c, d);"
                         SEQ(200000)
                         "INSERT INTO t SELECT x,"
                         " CASE x % 8 WHEN 0 THEN 0 WHEN 1 THEN 1 WHEN 2 THEN -x WHEN 3 THEN x * 65536"
                         "  WHEN 4 THEN x * 4294967296 WHEN 5 THEN -x * 1099511627776 WHEN 6 THEN x * 0.25 END,"
                         " CASE x % 3 WHEN 0 THEN 't' || x WHEN 1 THEN CAST('b' || x AS BLOB) ELSE '' END,"
                         " CASE WHEN x % 1000 = 0 THEN hex(zeroblob(300 + x % 7)) END FROM c;");
    uint32_t root = root_of(path, "t");
    int depth = tree_depth(path, root);
    print_message("200000 rows on 512-byte pages: %d levels\n", depth);
    assert_true(depth >= 3);
    assert_int_equal(compare(path, "t"), 200000);
    static const int pos[] = {3, 0, 0, -1, 2, 9, 1};
    assert_int_equal(compare_positions(path, "t", pos, 7), 200000);
    assert_int_equal(compare_positions(path, "t", pos, 0), 200000);   /* the rowid alone */
    tg_fixture_remove(path);
}

/* Every serial type: integers of 0 to 8 bytes, 0 and 1 (no bytes), reals,
** NULL, text (with NULs, empty, UTF-8), blobs (empty too). */
static void test_serial_types(void **state)
{
    (void)state;
    char *path = make_db(NULL, 0,
                         "CREATE TABLE v (a, b, c);"
                         "INSERT INTO v (a) VALUES (0), (1), (-1), (2), (127), (-128), (128), (-129), (255), (32767),"
                         " (-32768), (32768), (-32769), (8388607), (-8388608), (8388608), (-8388609), (2147483647),"
                         " (-2147483648), (2147483648), (-2147483649), (140737488355327), (-140737488355328),"
                         " (140737488355328), (-140737488355329), (9223372036854775807), (-9223372036854775807 - 1),"
                         " (1.5), (-0.0), (0.0), (1e308), (-1e-308), (4.9e-324), (3.141592653589793), (1e300 * 1e10),"
                         " (-1e300 * 1e10), (100.0), (NULL), (''), (x''), (CAST(x'610062' AS TEXT)), (x'00ff00'),"
                         " ('h\xc3\xa9llo'), (CAST(x'00' AS TEXT)), (CAST(x'6100' AS TEXT)), (x'00');"
                         "UPDATE v SET b = CASE rowid % 3 WHEN 0 THEN a WHEN 1 THEN rowid END, c = -rowid;");
    assert_int_equal(compare(path, "v"), 46);
    /* a few cells as expected, not only as SQLite reads them */
    int pos[] = {0};
    tg_btree *b = tg_btree_open(path, root_of(path, "v"), pos, 1);
    assert_non_null(b);
    const tg_cellv *v = tg_btree_cells(b);
    int64_t ints[27];
    for (int i = 0; i < 27; i++) {
        assert_int_equal(tg_btree_next(b), 1);
        assert_int_equal(v[0].i, i + 1);
        assert_int_equal(v[1].type, SQLITE_INTEGER);
        ints[i] = v[1].i;
    }
    assert_true(ints[0] == 0 && ints[1] == 1 && ints[2] == -1 && ints[5] == -128);
    assert_true(ints[13] == 8388607 && ints[14] == -8388608);
    assert_true(ints[21] == 140737488355327LL && ints[22] == -140737488355328LL && ints[23] == 140737488355328LL);
    assert_true(ints[25] == INT64_MAX && ints[26] == INT64_MIN);
    assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(v[1].type, SQLITE_FLOAT);
    assert_true(v[1].d == 1.5);
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(v[1].type == SQLITE_FLOAT && v[1].d == 0 && signbit(v[1].d));
    for (int i = 29; i < 38; i++) assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(v[1].type, SQLITE_NULL);       /* row 38 */
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(v[1].type == SQLITE_TEXT && v[1].n == 0 && v[1].p[0] == 0);
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(v[1].type == SQLITE_BLOB && v[1].n == 0);
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(v[1].type == SQLITE_TEXT && v[1].n == 3 && memcmp(v[1].p, "a\0b", 4) == 0);
    tg_btree_close(b);
    tg_fixture_remove(path);
}

/* NaN cannot be written through SQLite (it binds NULL): patched into the
** file, it reads as NULL both ways; infinities read as reals. */
static void test_nan(void **state)
{
    (void)state;
    char *path = make_db(NULL, 0, "CREATE TABLE v (a, b); INSERT INTO v VALUES (1234.5678, 1), (8765.4321, 2),"
                                  " (1111.5, 3), (2222.5, 4);");
    dbfile f = file_load(path);
    static const double from[] = {1234.5678, 8765.4321, 1111.5, 2222.5};
    static const uint64_t to[] = {0x7FF8000000000000ULL, 0xFFF8000000000000ULL, 0x7FF0000000000001ULL,
                                  0x7FF0000000000000ULL};
    for (int k = 0; k < 4; k++) {
        uint64_t u;
        memcpy(&u, &from[k], 8);
        unsigned char be[8], nb[8];
        for (int i = 0; i < 8; i++) be[i] = (unsigned char)(u >> (56 - 8 * i));
        for (int i = 0; i < 8; i++) nb[i] = (unsigned char)(to[k] >> (56 - 8 * i));
        unsigned char *at = memmem(f.d, f.n, be, 8);
        assert_non_null(at);
        memcpy(at, nb, 8);
    }
    file_save(path, f.d, f.n);
    free(f.d);
    assert_int_equal(compare(path, "v"), 4);
    int pos[] = {0};
    tg_btree *b = tg_btree_open(path, root_of(path, "v"), pos, 1);
    assert_non_null(b);
    const tg_cellv *v = tg_btree_cells(b);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(tg_btree_next(b), 1);
        assert_int_equal(v[1].type, SQLITE_NULL);
    }
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(v[1].type == SQLITE_FLOAT && isinf(v[1].d));
    tg_btree_close(b);
    tg_fixture_remove(path);
}

/* Payloads on either side of every local/overflow boundary, and long ones. */
static void overflow_case(int page_size, int reserve, int from, int to, int step)
{
    char pragma[64], *sql = NULL;
    snprintf(pragma, sizeof pragma, "PRAGMA page_size = %d", page_size);
    assert_true(tg_fixture_append(&sql, "CREATE TABLE o (a, b, c);"
                                        SEQ((%d - %d) / %d + 1)
                                        "INSERT INTO o SELECT substr(hex(randomblob(%d / 2 + x * %d)), 1, %d + x * %d),"
                                        " x, NULL FROM c;"
                                        SEQ((%d - %d) / %d + 1)
                                        "INSERT INTO o SELECT x, randomblob(%d + x * %d), 'z' FROM c;"
                                        "INSERT INTO o VALUES (hex(randomblob(51200)), randomblob(3), 'after');"
                                        "INSERT INTO o VALUES (randomblob(307200), substr(hex(randomblob(50000)), 2),"
                                        " hex(randomblob(40000)));"
                                        "INSERT INTO o VALUES (CAST(randomblob(100000) AS TEXT), NULL, 1);",
                                  to, from, step, from + 2, step, from, step, to, from, step, from, step));
    char *path = make_db(pragma, reserve, sql);
    free(sql);
    dbfile f = file_load(path);
    assert_int_equal(f.ps, (uint32_t)page_size);
    assert_int_equal(f.ps - f.usable, (uint32_t)reserve);
    free(f.d);
    int rows = 2 * ((to - from) / step + 1) + 3;
    print_message("page %d, %d reserved: %d rows\n", page_size, reserve, rows);
    assert_int_equal(compare(path, "o"), rows);
    static const int pos[] = {2, 1, 0};
    assert_int_equal(compare_positions(path, "o", pos, 3), rows);
    tg_fixture_remove(path);
}

static void test_overflow(void **state)
{
    (void)state;
    overflow_case(512, 0, 0, 1600, 1);        /* max local 477, min local 39 */
    overflow_case(512, 32, 380, 1500, 1);     /* usable 480 */
    overflow_case(1024, 0, 900, 3200, 3);
    overflow_case(4096, 0, 3900, 8500, 7);
    overflow_case(4096, 17, 3900, 4200, 1);
    overflow_case(65536, 0, 65470, 65530, 1); /* the header stores 1 */
    overflow_case(65536, 0, 8150, 8250, 1);
}

/* Rows written before ALTER TABLE ADD COLUMN have shorter records. */
static void test_added_column(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b);" SEQ(1000) "INSERT INTO t SELECT x, 'old ' || x FROM c;"
                         "ALTER TABLE t ADD COLUMN c INTEGER;"
                         SEQ(500) "INSERT INTO t SELECT x, 'mid', x * 3 FROM c;"
                         "ALTER TABLE t ADD COLUMN d TEXT;"
                         SEQ(500) "INSERT INTO t SELECT x, 'new', NULL, 'd' || x FROM c;"
                         "UPDATE t SET d = 'updated' WHERE rowid % 100 = 7;");
    assert_int_equal(compare(path, "t"), 2000);
    static const int pos[] = {3, 2, 2, 0, 5};
    assert_int_equal(compare_positions(path, "t", pos, 5), 2000);
    int p[] = {2, 3};
    tg_btree *b = tg_btree_open(path, root_of(path, "t"), p, 2);
    const tg_cellv *v = tg_btree_cells(b);
    assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(v[1].type, SQLITE_NULL);
    assert_int_equal(v[2].type, SQLITE_NULL);
    tg_btree_close(b);
    tg_fixture_remove(path);
}

static void test_rowids(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a);"
                         "INSERT INTO t (rowid, a) VALUES (-9223372036854775807 - 1, 'min'), (9223372036854775807,"
                         " 'max'), (-1, 'm1'), (0, 'zero'), (1, 'one'), (1099511627776, 'big'), (-72057594037927936,"
                         " 'neg56'), (72057594037927935, 'pos56'), (128, 'x'), (-128, 'y'), (16383, 'z'), (16384, 'w');"
                         SEQ(3000) "INSERT INTO t (rowid, a) SELECT (x - 1500) * 6148914691236517, x FROM c"
                         " WHERE x <> 1500;");
    assert_int_equal(compare(path, "t"), 12 + 2999);
    int pos[] = {0};
    tg_btree *b = tg_btree_open(path, root_of(path, "t"), pos, 1);
    assert_int_equal(tg_btree_next(b), 1);
    assert_true(tg_btree_cells(b)[0].i == INT64_MIN);
    tg_btree_close(b);
    tg_fixture_remove(path);
}

static void test_small_and_empty(void **state)
{
    (void)state;
    char *path = make_db(NULL, 0,
                         "CREATE TABLE leaf (a, b); INSERT INTO leaf VALUES (1, 'one'), (2, NULL), (NULL, x'ff');"
                         "CREATE TABLE empty (a, b);"
                         "CREATE TABLE emptied (a); INSERT INTO emptied VALUES (1), (2); DELETE FROM emptied;");
    assert_int_equal(tree_depth(path, root_of(path, "leaf")), 1);
    assert_int_equal(compare(path, "leaf"), 3);
    assert_int_equal(compare(path, "empty"), 0);
    assert_int_equal(compare(path, "emptied"), 0);
    int pos[] = {0, 1};
    tg_btree *b = tg_btree_open(path, root_of(path, "empty"), pos, 2);
    assert_non_null(b);
    assert_int_equal(tg_btree_next(b), 0);
    assert_int_equal(tg_btree_next(b), 0);
    tg_btree_close(b);
    tg_fixture_remove(path);
}

/* Positions out of order, repeated, -1 and past the record; none at all. */
static void test_positions(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 1024", 0,
                         "CREATE TABLE t (a, b, c, d, e);"
                         SEQ(3000) "INSERT INTO t SELECT x, 'b' || x, CASE WHEN x % 2 THEN x * 1.5 END,"
                         " CASE WHEN x % 50 = 0 THEN hex(zeroblob(700)) ELSE x'0001' END, -x FROM c;");
    static const int sets[][8] = {{4, 3, 2, 1, 0, -1, -1, -1}, {1, 1, 1, 3, 3, 0, 4, 4}, {-1, -1, -1, -1, -1, -1, -1, -1},
                                  {7, 100, 2, -1, 0, 6, 5, 3}, {3, 3, 3, 3, 3, 3, 3, 3}};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) assert_int_equal(compare_positions(path, "t", sets[i], 8), 3000);
    assert_int_equal(compare_positions(path, "t", sets[0], 1), 3000);
    assert_int_equal(compare_positions(path, "t", sets[0], 0), 3000);
    tg_fixture_remove(path);
}

/* The schema table: its root is page 1, whose B-tree header follows the
** file header; with many tables on 512-byte pages it is an interior page. */
static void test_schema_table(void **state)
{
    (void)state;
    char *sql = NULL;
    for (int i = 0; i < 150; i++)
        assert_true(tg_fixture_append(&sql, "CREATE TABLE table_with_a_long_name_%03d (some_column INTEGER, another_one TEXT,"
                                            " a_third_column BLOB); INSERT INTO table_with_a_long_name_%03d VALUES (%d, 'x', NULL);",
                                      i, i, i));
    char *path = make_db("PRAGMA page_size = 512", 0, sql);
    free(sql);
    dbfile f = file_load(path);
    assert_int_equal(page_type(&f, 1), 0x05);
    free(f.d);
    assert_int_equal(compare(path, "sqlite_master"), 150);
    assert_int_equal(compare(path, "table_with_a_long_name_149"), 1);
    tg_fixture_remove(path);
}

/* After deletes (merged and freed pages), with auto-vacuum's pointer-map pages. */
static void test_deletes_and_autovacuum(void **state)
{
    (void)state;
    static const char *const pragmas[] = {"PRAGMA page_size = 512", "PRAGMA page_size = 512; PRAGMA auto_vacuum = FULL",
                                          "PRAGMA page_size = 1024; PRAGMA auto_vacuum = INCREMENTAL"};
    for (int i = 0; i < 3; i++) {
        char *path = make_db(pragmas[i], 0,
                             "CREATE TABLE t (a, b); CREATE TABLE u (a);"
                             SEQ(20000) "INSERT INTO t SELECT x, CASE WHEN x % 97 = 0 THEN hex(zeroblob(2000)) ELSE x END FROM c;"
                             SEQ(5000) "INSERT INTO u SELECT hex(zeroblob(x % 300)) FROM c;"
                             "DELETE FROM t WHERE a % 3 = 0 OR a BETWEEN 5000 AND 9000;"
                             "DELETE FROM u WHERE rowid % 2 = 0;"
                             SEQ(1000) "INSERT INTO t SELECT -x, 'again' FROM c;");
        assert_int_equal(compare(path, "t"), query_int(path, "SELECT count(*) FROM t"));
        assert_int_equal(compare(path, "u"), 2500);
        tg_fixture_remove(path);
    }
}

/* How a damaged copy read: both readers the same rows, both refusing, only
** the reader refusing (allowed: fuzz/README.md), only SQLite refusing (the
** reader lenient: never allowed). */
enum { MUT_SAME, MUT_BOTH, MUT_STRICT, MUT_LENIENT, MUT_OUTCOMES };
static const char *const mut_outcome[] = {"same rows", "both refuse", "reader stricter", "READER LENIENT"};

/* The columns of table the reader takes, as positions (at most 64), and
** the SELECT of them; 0 when a column is hidden (the loader then never
** reads the table directly). */
static int mut_columns(sqlite3 *db, const char *table, int *pos, char **sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT name, type, pk, dflt_value IS NOT NULL, hidden FROM"
                                            " pragma_table_xinfo(?1)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int n = 0, cid = 0;
    bool hidden = false;
    *sql = NULL;
    assert_true(tg_fixture_append(sql, "SELECT rowid"));
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_int(st, 4)) hidden = true;
        if (n < 64 && tg_btree_column_ok((const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2) != 0,
                                         sqlite3_column_int(st, 3) != 0, false)) {
            pos[n++] = cid;
            assert_true(tg_fixture_append(sql, ", \"%s\"", (const char *)sqlite3_column_text(st, 0)));
        }
        cid++;
    }
    sqlite3_finalize(st);
    assert_true(tg_fixture_append(sql, " FROM \"%s\"", table));
    return hidden ? 0 : n;
}

/* Read table both ways (its root at root, the columns at pos) and say how
** they compare; a row or cell that differs where neither refuses fails. */
static int mut_compare(const char *path, const char *sql, uint32_t root, const int *pos, int n, int *strict_rc)
{
    sqlite3 *db = open_ro(path);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, TG_MAX_VALUE_BYTES);   /* as the loader (trace_guard.c) */
    sqlite3_stmt *st = NULL;
    int rs = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    tg_btree *b = tg_btree_open(path, root, pos, n);
    assert_non_null(b);
    int rb = 1;
    size_t row = 0;
    bool differ = false;
    if (rs == SQLITE_OK) {
        for (;; row++) {
            rs = sqlite3_step(st);
            rb = tg_btree_next(b);
            if (rs != SQLITE_ROW || rb != 1) break;
            const tg_cellv *c = tg_btree_cells(b);
            for (int k = 0; k <= n && !differ; k++) {
                int t = sqlite3_column_type(st, k);
                if (t != c[k].type) differ = true;
                else if (t == SQLITE_INTEGER) differ = sqlite3_column_int64(st, k) != c[k].i;
                else if (t == SQLITE_FLOAT) differ = memcmp(&(double){sqlite3_column_double(st, k)}, &c[k].d, 8) != 0;
                else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
                    const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, k) : sqlite3_column_blob(st, k);
                    int len = sqlite3_column_bytes(st, k);
                    differ = len != c[k].n || (len && memcmp(p, c[k].p, (size_t)len) != 0);
                }
            }
        }
    }
    while (rs == SQLITE_ROW) rs = sqlite3_step(st);
    while (rb == 1) rb = tg_btree_next(b);
    bool stricter = tg_btree_stricter(b);
    tg_btree_close(b);
    sqlite3_finalize(st);
    sqlite3_close(db);
    bool sqlite_ok = rs == SQLITE_DONE, reader_ok = rb == 0;
    if (sqlite_ok && reader_ok && differ) fail_msg("%s: row %zu differs, and neither reader refuses", path, row);
    if (!sqlite_ok && !reader_ok) return MUT_BOTH;
    if (!sqlite_ok) return MUT_LENIENT;
    if (!reader_ok) {
        /* allowed only where SQLite's scan is known to read past damage
        ** (tg_btree_stricter; docs/limits.md) */
        if (!stricter) fail_msg("%s: SQLite reads %s whole, the reader says %d", path, sql, rb);
        *strict_rc = rb;
        return MUT_STRICT;
    }
    return MUT_SAME;
}

/* ---------------------------------------------------------------- tests: damage */

/* SQLite's scan of table: SQLITE_DONE or its error, and the rows before. */
static int sqlite_scan(const char *path, const char *table, size_t *rows)
{
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st = NULL;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT rowid, * FROM \"%s\"", table);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    *rows = 0;
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(st); i++) sqlite3_column_text(st, i);
            (*rows)++;
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* The end of a scan of the file at path: the rows it read before (*rows)
** and its last result (0 or a TG_BT_* error); fails when it does not end. */
static int scan(const char *path, uint32_t root, int n, size_t *rows)
{
    int pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    tg_btree *b = tg_btree_open(path, root, pos, n);
    assert_non_null(b);
    size_t got = 0;
    int rc;
    while ((rc = tg_btree_next(b)) == 1)
        if (++got > 10000000) fail_msg("%s: the scan does not end", path);
    assert_int_equal(tg_btree_next(b), 0);          /* the scan is over */
    tg_btree_close(b);
    if (rows) *rows = got;
    return rc;
}

static int scan_damaged(const char *bad, const dbfile *f, uint32_t root, size_t *rows)
{
    file_save(bad, f->d, f->n);
    return scan(bad, root, 3, rows);
}

static char *beside(const char *path, const char *name)
{
    char *p = malloc(strlen(path) + strlen(name) + 2);
    strcpy(p, path);
    strcpy(strrchr(p, '/') + 1, name);
    return p;
}

/* A varint at p (9 bytes at most); its length. */
static int put_varint(unsigned char *p, uint64_t v)
{
    unsigned char tmp[9];
    int n = 0;
    if (v >> 56) {
        p[8] = (unsigned char)v;
        v >>= 8;
        for (int i = 7; i >= 0; i--, v >>= 7) p[i] = (unsigned char)((v & 0x7F) | 0x80);
        return 9;
    }
    do {
        tmp[n++] = (unsigned char)((v & 0x7F) | 0x80);
        v >>= 7;
    } while (v);
    tmp[0] &= 0x7F;
    for (int i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

static int get_varint(const unsigned char *p, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < 8; i++) {
        *v = *v << 7 | (p[i] & 0x7F);
        if (!(p[i] & 0x80)) return i + 1;
    }
    *v = *v << 8 | p[8];
    return 9;
}

static void test_damaged_leaf(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b, c);"
                         SEQ(5000) "INSERT INTO t SELECT x, 'row ' || x, x * 7 FROM c;");
    uint32_t root = root_of(path, "t");
    dbfile f = file_load(path);
    size_t cap = f.n / f.ps, nl = 0;
    uint32_t *leaves = malloc(cap * sizeof *leaves);
    int depth = 0;
    collect_leaves(&f, root, leaves, &nl, cap, 0, &depth);
    assert_true(depth >= 3 && nl > 10);
    uint32_t leaf = leaves[nl / 2];
    size_t before = 0;                               /* rows of the leaves read before it */
    for (size_t i = 0; i < nl / 2; i++) before += n_cells(&f, leaves[i]);
    char *bad = beside(path, "damaged.sqlite");
    size_t rows;
    assert_int_equal(scan_damaged(bad, &f, root, &rows), 0);
    assert_int_equal(rows, 5000);

    /* the page's type: not a table page */
    static const unsigned char types[] = {0x00, 0x02, 0x0A, 0x0C, 0x0E, 0xFF, 0x85};
    for (size_t i = 0; i < sizeof types; i++) {
        dbfile c = file_copy(&f);
        page(&c, leaf)[0] = types[i];
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_int_equal(rows, before);
        free(c.d);
    }
    /* no cells: only an empty table's root may be a page without cells
    ** (SQLite: "database disk image is malformed") */
    {
        dbfile c = file_copy(&f);
        put16(page(&c, leaf) + 3, 0);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_int_equal(rows, before);
        size_t srows;
        assert_int_equal(sqlite_scan(bad, "t", &srows) & 0xFF, SQLITE_CORRUPT);
        free(c.d);
    }
    /* more cells than the page holds */
    static const uint32_t counts[] = {0xFFFF, 253, 300};
    for (size_t i = 0; i < 3; i++) {
        dbfile c = file_copy(&f);
        put16(page(&c, leaf) + 3, counts[i]);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        free(c.d);
    }
    /* ... even when every pointer in the page leads to a well-formed cell
    ** (the page's first): the pointers past the page are never read (under
    ** ASan or valgrind). SQLite allows (page size - 8) / 6 cells (84 on
    ** 512-byte pages: a cell takes 6 bytes at least); one more is
    ** malformed, though the pointers fit */
    {
        dbfile c = file_copy(&f);
        unsigned char *pg = page(&c, leaf);
        uint32_t far = 0;                            /* the cell nearest the page's end */
        for (uint32_t i = 0; i < n_cells(&c, leaf); i++)
            if (be16(cell_ptr(&c, leaf, i)) > far) far = be16(cell_ptr(&c, leaf, i));
        assert_true(far > 8 + 2 * 85);
        for (uint32_t at = 8; at < 8 + 2 * 85; at += 2) put16(pg + at, far);
        static const struct { uint32_t n; int rc; } fill[] = {{300, TG_BT_CORRUPT}, {85, TG_BT_CORRUPT}, {84, 0}};
        for (size_t i = 0; i < 3; i++) {
            put16(pg + 3, fill[i].n);
            assert_int_equal(scan_damaged(bad, &c, root, &rows), fill[i].rc);
            assert_int_equal(rows, fill[i].rc ? before : 5000 - n_cells(&f, leaf) + 84);
            size_t srows;
            assert_int_equal(sqlite_scan(bad, "t", &srows) & 0xFF, fill[i].rc ? SQLITE_CORRUPT : SQLITE_DONE);
        }
        free(c.d);
    }
    /* a cell pointer past the page, or at its last bytes: SQLite masks it
    ** to the page (findCell), and so does the reader; the cell it leads
    ** to reads as SQLite reads it, or is refused */
    static const uint32_t offs[] = {0xFFFF, 512, 513, 511, 510, 1024 + 8};
    static const char *const abc = "SELECT rowid, a, b, c FROM t";
    static const int pos3[] = {0, 1, 2};
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        dbfile c = file_copy(&f);
        put16(cell_ptr(&c, leaf, 1), offs[i]);
        file_save(bad, c.d, c.n);
        int strict = 0, o = mut_compare(bad, abc, root, pos3, 3, &strict);
        assert_true(o != MUT_LENIENT);
        free(c.d);
    }
    /* payload sizes the page cannot hold (local, or with an overflow pointer
    ** off the page): on the cell nearest the page's end */
    uint32_t last = 0, first = 0;
    for (uint32_t i = 0; i < n_cells(&f, leaf); i++) {
        if (be16(cell_ptr(&f, leaf, i)) > be16(cell_ptr(&f, leaf, last))) last = i;
        if (be16(cell_ptr(&f, leaf, i)) < be16(cell_ptr(&f, leaf, first))) first = i;
    }
    assert_true(be16(cell_ptr(&f, leaf, last)) > 512 - 40);
    static const uint64_t sizes[] = {40, 100, 400, 477, 478, 1000, 100000, 16 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        dbfile c = file_copy(&f);
        unsigned char *p = cell(&c, leaf, last);
        uint64_t size, rowid;
        int a = get_varint(p, &size);
        get_varint(p + a, &rowid);
        int w = put_varint(p, sizes[i]);
        put_varint(p + w, rowid);                   /* the rowid after it */
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_int_equal(rows, before + last);
        free(c.d);
    }
    /* a payload of no bytes. SQLite takes the byte after the cell's
    ** varints for the record's header size: 0, a record of no columns (all
    ** NULL), which the reader reads too; else malformed, and so is it to
    ** the reader (issue 31: it read the NULLs, and the loader skipped the
    ** row with a warning) */
    for (int k = 0; k < 2; k++) {
        dbfile c = file_copy(&f);
        unsigned char *p = cell(&c, leaf, 1);
        uint64_t size, rowid;
        int a = get_varint(p, &size);
        a += get_varint(p + a, &rowid);
        assert_true(p[0] < 0x80 && p[a] != 0);       /* a one-byte size: the rowid stays where it is */
        p[0] = 0;
        if (k == 0) p[a] = 0;
        file_save(bad, c.d, c.n);
        size_t srows;
        int rs = sqlite_scan(bad, "t", &srows);
        if (k == 0) {
            assert_int_equal(rs, SQLITE_DONE);
            assert_int_equal(compare(bad, "t"), 5000);
        } else {
            assert_int_equal(rs & 0xFF, SQLITE_CORRUPT);
            assert_int_equal(scan(bad, root, 3, &rows), TG_BT_CORRUPT);
            assert_int_equal(rows, before + 1);
        }
        free(c.d);
    }
    /* a payload size over TG_MAX_VALUE_BYTES on a cell that holds no such
    ** value (a garbage varint): damage, not "a value longer than 16 MiB"
    ** (that is test_too_big's, for a cell that does); on the cell furthest
    ** from the page's end */
    static const uint64_t huge[] = {(16 << 20) + 1, 1ULL << 31, 1ULL << 40, UINT64_MAX, 0x0FFFFFFFFFFFFFFFULL};
    for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
        dbfile c = file_copy(&f);
        unsigned char *p = cell(&c, leaf, first);
        int w = put_varint(p, huge[i]);
        p[w] = 5;                                    /* a rowid */
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_int_equal(rows, before + first);
        free(c.d);
    }
    /* the payload-size and rowid varints of a cell zeroed (issue 31): an
    ** empty payload, so SQLite reads the header size from the byte after
    ** them: the record's (not 0), malformed; or, when the rowid took two
    ** bytes, one zeroed (a record of no columns, NULLs), read alike */
    for (int k = 0; k < 2; k++) {
        dbfile c = file_copy(&f);
        unsigned char *p = cell(&c, leaf, 2);
        uint64_t size, rowid;
        int a = get_varint(p, &size), r = get_varint(p + a, &rowid);
        assert_true(r == 2);                         /* rowids 128 and up */
        memset(p, 0, (size_t)(k == 0 ? a + r : a + 1));
        if (k == 1) p[a + 1] = 0x05;                 /* a rowid of one byte, then the record's header */
        file_save(bad, c.d, c.n);
        size_t srows;
        assert_int_equal(sqlite_scan(bad, "t", &srows) & 0xFF, k == 0 ? SQLITE_DONE : SQLITE_CORRUPT);
        assert_int_equal(scan(bad, root, 3, &rows), k == 0 ? 0 : TG_BT_CORRUPT);
        assert_int_equal(rows, k == 0 ? 5000 : before + 2);
        if (k == 0) assert_int_equal(compare(bad, "t"), 5000);
        free(c.d);
    }
    /* the record's header: longer than the payload, of size 0 (a record of
    ** no columns, SQLite reads NULLs: k == 1), a serial type past the
    ** payload's end, a bad varint, of size 1 (no serial type: SQLite reads
    ** one all the same, past the header), values that end short of the
    ** payload (a's integer made a NULL, the header read whole) */
    for (int k = 0; k < 7; k++) {
        dbfile c = file_copy(&f);
        unsigned char *p = cell(&c, leaf, 2);
        uint64_t size, rowid;
        int a = get_varint(p, &size);
        a += get_varint(p + a, &rowid);
        unsigned char *rec = p + a;                 /* header size, then a's, b's, c's serial types */
        switch (k) {
        case 0: rec[0] = (unsigned char)(size + 1); break;
        case 1: rec[0] = 0; break;
        case 2: rec[2] = 0x7F; break;               /* b: 57 bytes of text */
        case 3: rec[3] = 0x6F; break;               /* c: 49 bytes of blob */
        case 4: memset(rec + 1, 0xFF, 3); break;    /* a varint that runs past the header */
        case 5: rec[0] = 1; break;
        case 6: assert_true(rec[1] >= 1 && rec[1] <= 6); rec[1] = 0; break;
        }
        int rc = scan_damaged(bad, &c, root, &rows);
        size_t srows;
        assert_int_equal(sqlite_scan(bad, "t", &srows) & 0xFF, k == 1 ? SQLITE_DONE : SQLITE_CORRUPT);
        assert_int_equal(rc, k == 1 ? 0 : TG_BT_CORRUPT);
        assert_int_equal(rows, k == 1 ? 5000 : before + 2);
        if (k == 1) assert_int_equal(compare(bad, "t"), 5000);
        free(c.d);
    }
    free(bad);
    free(leaves);
    free(f.d);
    tg_fixture_remove(path);
}

static void test_damaged_interior(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b, c);"
                         SEQ(5000) "INSERT INTO t SELECT x, 'row ' || x, x * 7 FROM c;");
    uint32_t root = root_of(path, "t");
    dbfile f = file_load(path);
    uint32_t pages = (uint32_t)(f.n / f.ps);
    assert_int_equal(page_type(&f, root), 0x05);
    uint32_t mid = be32(cell(&f, root, 0));          /* a page of the second level */
    assert_int_equal(page_type(&f, mid), 0x05);
    char *bad = beside(path, "damaged.sqlite");
    size_t rows;
    /* a child that is the page itself, its parent, outside the file, 0 */
    const struct {
        uint32_t page;
        int cell;                                    /* -1: the right-most pointer */
        uint32_t to;
    } cases[] = {{root, 0, root}, {root, -1, root}, {mid, 0, mid}, {mid, -1, root}, {mid, 1, root},
                 {root, 0, pages + 1}, {root, -1, 0xFFFFFFFF}, {mid, -1, pages + 1}, {mid, 0, 0}, {root, -1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dbfile c = file_copy(&f);
        put32(cases[i].cell < 0 ? right_ptr(&c, cases[i].page) : cell(&c, cases[i].page, (uint32_t)cases[i].cell),
              cases[i].to);
        int rc = scan_damaged(bad, &c, root, &rows);
        if (rc != TG_BT_CORRUPT) fail_msg("case %zu: %d after %zu rows", i, rc, rows);
        free(c.d);
    }
    /* an interior page's type, cell count (none: only its right-most
    ** child, which SQLite finds malformed) and cell pointer */
    for (int k = 0; k < 6; k++) {
        dbfile c = file_copy(&f);
        switch (k) {
        case 0: page(&c, mid)[0] = 0x02; break;
        case 1: put16(page(&c, mid) + 3, 0xFFFF); break;
        case 2: put16(cell_ptr(&c, mid, 1), 0xFFFF); break;
        case 3: put16(cell_ptr(&c, root, 0), 509); break;
        case 4: put16(page(&c, mid) + 3, 0); break;
        case 5: put16(page(&c, root) + 3, 0); break;
        }
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        if (k >= 4) {
            size_t srows;
            assert_int_equal(sqlite_scan(bad, "t", &srows) & 0xFF, SQLITE_CORRUPT);
        }
        free(c.d);
    }
    /* every interior page made its own right-most child: no hang */
    {
        dbfile c = file_copy(&f);
        for (uint32_t pg = 2; pg <= pages; pg++)
            if (page_type(&c, pg) == 0x05) put32(right_ptr(&c, pg), pg);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        free(c.d);
    }
    /* a leaf swapped for a page of the second level: it points back up */
    {
        dbfile c = file_copy(&f);
        uint32_t leaf = be32(cell(&f, mid, 0));
        memcpy(page(&c, leaf), page(&f, root), f.ps);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        free(c.d);
    }
    /* shared subtrees, no cycle: every pointer of the root to its first
    ** child, every pointer of that child to the root's second child (a
    ** page of the same level, whose leaves stay as they are): SQLite would
    ** read those leaves over and over, fan-out squared times; the reader
    ** stops once it has read more pages than the file holds */
    {
        dbfile c = file_copy(&f);
        uint32_t mid2 = be32(cell(&f, root, 1));
        assert_int_equal(page_type(&f, mid2), 0x05);
        for (uint32_t i = 0; i < n_cells(&c, root); i++) put32(cell(&c, root, i), mid);
        put32(right_ptr(&c, root), mid);
        for (uint32_t i = 0; i < n_cells(&c, mid); i++) put32(cell(&c, mid, i), mid2);
        put32(right_ptr(&c, mid), mid2);
        uint64_t leaf_reads = (uint64_t)(n_cells(&c, root) + 1) * (n_cells(&c, mid) + 1) * (n_cells(&c, mid2) + 1);
        print_message("shared subtrees: %llu leaf reads, %u pages in the file\n", (unsigned long long)leaf_reads, pages);
        assert_true(leaf_reads > 10 * (uint64_t)pages);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_true(rows <= (size_t)pages * 40);
        free(c.d);
    }
    free(bad);
    free(f.d);
    tg_fixture_remove(path);
}

static void test_truncated(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b, c);"
                         SEQ(5000) "INSERT INTO t SELECT x, 'row ' || x, hex(zeroblob(x % 400)) FROM c;");
    uint32_t root = root_of(path, "t");
    dbfile f = file_load(path);
    char *bad = beside(path, "cut.sqlite");
    size_t rows;
    /* cut at a page's end: the pages after it are missing, the tree points
    ** past the file's end; cut inside a page: the rest of the page reads as
    ** zeros, as in SQLite, so the reader does what SQLite's scan does */
    const size_t cuts[] = {(size_t)root * 512, (size_t)(root + 1) * 512, (size_t)(root + 1) * 512 + 100,
                           f.n / 3 / 512 * 512, f.n / 2 / 512 * 512, f.n / 2 + 1, f.n / 2 + 300, f.n - 512,
                           f.n - 511, f.n - 1};
    int corrupt = 0, whole = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        for (int patch = 0; patch < 2; patch++) {
            /* the header's page count as it was (larger than the file), or
            ** made to agree with the file (its whole pages) */
            dbfile c = file_copy(&f);
            c.n = cuts[i];
            if (patch) put32(c.d + 28, (uint32_t)(c.n / 512));
            int rc = scan_damaged(bad, &c, root, &rows);
            size_t srows;
            int rs = sqlite_scan(bad, "t", &srows);
            print_message("cut at %zu (header %s): %d after %zu rows; SQLite: %d after %zu\n", cuts[i],
                          patch ? "patched" : "as is", rc, rows, rs, srows);
            if (cuts[i] % 512 == 0 || patch) {
                /* whole pages of the table missing */
                if (rc != TG_BT_CORRUPT) fail_msg("cut at %zu: %d after %zu rows", cuts[i], rc, rows);
                assert_true(rows < 5000);
            }
            if (rs == SQLITE_DONE) {
                assert_int_equal(rc, 0);
                assert_int_equal(compare(bad, "t"), srows);
                whole++;
            } else {
                assert_int_equal(rs & 0xFF, SQLITE_CORRUPT);
                assert_int_equal(rc, TG_BT_CORRUPT);
                corrupt++;
            }
            free(c.d);
        }
    }
    assert_true(corrupt >= 14);
    /* the header's count invalid (its version-valid-for differs): the
    ** file's size counts */
    dbfile c = file_copy(&f);
    c.n = f.n / 2;
    put32(c.d + 92, be32(c.d + 92) + 1);
    assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
    free(c.d);
    free(bad);
    free(f.d);
    tg_fixture_remove(path);

    /* a file longer than its header says: the header counts, as in SQLite
    ** (a small table after a big one, its pages past the count) */
    path = make_db("PRAGMA page_size = 512", 0,
                   "CREATE TABLE big (a);" SEQ(20000) "INSERT INTO big SELECT x FROM c;"
                   "CREATE TABLE t (a, b);" SEQ(300) "INSERT INTO t SELECT x, 'row ' || x FROM c;");
    root = root_of(path, "t");
    f = file_load(path);
    bad = beside(path, "short-header.sqlite");
    assert_int_equal(scan_damaged(bad, &f, root, &rows), 0);
    assert_int_equal(rows, 300);
    c = file_copy(&f);
    put32(c.d + 28, root);
    assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
    assert_int_equal(rows, 0);
    put32(c.d + 92, be32(c.d + 92) + 1);            /* the count invalid: the file's size counts */
    assert_int_equal(scan_damaged(bad, &c, root, &rows), 0);
    assert_int_equal(rows, 300);
    free(c.d);
    free(bad);
    free(f.d);
    tg_fixture_remove(path);
}

/* An overflow chain that ends early, leaves the file or loops. */
static void test_damaged_overflow(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, hex(randomblob(50000))), (2, 'short');");
    uint32_t root = root_of(path, "t");
    dbfile f = file_load(path);
    uint32_t pages = (uint32_t)(f.n / f.ps);
    assert_int_equal(page_type(&f, root), 0x0D);
    /* the first cell's first overflow page */
    uint32_t u = f.usable, min_local = (u - 12) * 32 / 255 - 23;
    const unsigned char *p = cell(&f, root, 0);
    uint64_t size, rowid;
    int a = get_varint(p, &size);
    a += get_varint(p + a, &rowid);
    assert_int_equal(rowid, 1);
    uint32_t local = min_local + (uint32_t)((size - min_local) % (u - 4));
    if (local > u - 35) local = min_local;
    size_t first_at = (size_t)(p - f.d) + (size_t)a + local;
    uint32_t first = be32(f.d + first_at), second = be32(page(&f, first));
    assert_true(first >= 2 && first <= pages && second >= 2 && second <= pages);
    char *bad = beside(path, "damaged.sqlite");
    size_t rows;
    assert_int_equal(scan_damaged(bad, &f, root, &rows), 0);
    assert_int_equal(rows, 2);
    static const uint32_t firsts[] = {0, 1, 0xFFFFFFFF};
    for (size_t i = 0; i < 3; i++) {
        dbfile c = file_copy(&f);
        put32(c.d + first_at, firsts[i] == 1 ? pages + 1 : firsts[i]);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        assert_int_equal(rows, 0);
        free(c.d);
    }
    static const uint32_t nexts[] = {0, 1, 0xFFFFFFFF};
    for (size_t i = 0; i < 3; i++) {
        dbfile c = file_copy(&f);
        put32(page(&c, second), nexts[i] == 1 ? pages + 1 : nexts[i]);
        assert_int_equal(scan_damaged(bad, &c, root, &rows), TG_BT_CORRUPT);
        free(c.d);
    }
    /* a chain that loops back (to itself, to its first page): the scan
    ** ends, and reads what SQLite's does (which does not see it either:
    ** only PRAGMA integrity_check does, "2nd reference to page") */
    for (int k = 0; k < 2; k++) {
        dbfile c = file_copy(&f);
        put32(page(&c, second), k ? first : second);
        file_save(bad, c.d, c.n);
        assert_int_equal(compare(bad, "t"), 2);
        free(c.d);
    }
    free(bad);
    free(f.d);
    tg_fixture_remove(path);
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random bytes of the table's pages overwritten: every scan ends, in rows
** or an error (under valgrind or ASan: never a read out of bounds). */
static void test_random_damage(void **state)
{
    (void)state;
    char *path = make_db("PRAGMA page_size = 512", 0,
                         "CREATE TABLE t (a, b, c);"
                         SEQ(1500) "INSERT INTO t SELECT x, CASE WHEN x % 100 = 0 THEN hex(zeroblob(900)) ELSE"
                         " 'r' || x END, x * 1e10 FROM c;");
    uint32_t root = root_of(path, "t");
    dbfile f = file_load(path);
    size_t pages = f.n / f.ps;
    char *bad = beside(path, "damaged.sqlite");
    int counts[5] = {0};
    for (int round = 0; round < 300; round++) {
        dbfile c = file_copy(&f);
        int flips = 1 + round % 12;
        for (int k = 0; k < flips; k++) {
            size_t pg = 1 + next_rand() % (pages - 1);   /* not page 1: the schema */
            size_t at = (size_t)pg * f.ps + next_rand() % f.ps;
            c.d[at] = (unsigned char)next_rand();
        }
        size_t rows;
        int rc = scan_damaged(bad, &c, root, &rows);
        assert_true(rc <= 0 && rc >= TG_BT_IO);
        counts[-rc]++;
        free(c.d);
    }
    print_message("300 damaged copies: %d read whole, %d corrupt, %d too big\n", counts[0], counts[1], counts[2]);
    assert_true(counts[1] > 0);
    free(bad);
    free(f.d);
    tg_fixture_remove(path);
}

/* A payload just under TG_MAX_VALUE_BYTES reads; one over it is too big. */
static void test_too_big(void **state)
{
    (void)state;
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 'small'), (2, randomblob(%d)),"
                                        " (3, 'after'), (4, randomblob(%d)), (5, 'never read');",
                                  TG_MAX_VALUE_BYTES - 64, TG_MAX_VALUE_BYTES + 1));
    char *path = make_db("PRAGMA page_size = 65536", 0, sql);
    free(sql);
    int pos[] = {0, 1};
    tg_btree *b = tg_btree_open(path, root_of(path, "t"), pos, 2);
    assert_non_null(b);
    const tg_cellv *v = tg_btree_cells(b);
    assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(v[0].i, 2);
    assert_int_equal(v[2].type, SQLITE_BLOB);
    assert_int_equal(v[2].n, TG_MAX_VALUE_BYTES - 64);
    /* the same bytes as SQLite's */
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT b FROM t WHERE rowid = 2", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_bytes(st, 0), v[2].n);
    assert_memory_equal(sqlite3_column_blob(st, 0), v[2].p, (size_t)v[2].n);
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_int_equal(tg_btree_next(b), 1);
    assert_int_equal(v[0].i, 3);
    assert_int_equal(tg_btree_next(b), TG_BT_TOOBIG);
    assert_int_equal(tg_btree_next(b), 0);
    tg_btree_close(b);
    tg_fixture_remove(path);
}

/* ---------------------------------------------------------------- tests: the loader */

/* The 3.0 shape without its DEFAULTs (the fixtures add them so that an
** INSERT may name only some columns; a column with a default is read
** through SQLite): every NOT NULL DEFAULT column becomes nullable. */
static char *schema_without_defaults(const char *replace, const char *with)
{
    static const char *const drop[] = {" NOT NULL DEFAULT 0", " NOT NULL DEFAULT ''", " DEFAULT 0", " DEFAULT ''"};
    char *s = strdup(tg_fixture_schema_3_0);
    assert_non_null(s);
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
        size_t n = strlen(drop[i]);
        for (char *p; (p = strstr(s, drop[i]));) memmove(p, p + n, strlen(p + n) + 1);
    }
    assert_null(strstr(s, "DEFAULT"));
    if (replace) {
        char *p = strstr(s, replace);
        assert_non_null(p);
        assert_int_equal(strlen(with), strlen(replace));
        memcpy(p, with, strlen(with));
    }
    return s;
}

#define LOADER_ROWS                                                                                              \
    TT_ROWS                                                                                                      \
    SEQ(40) "INSERT INTO StringIds SELECT 100 + x, 'kernel_' || x || '(float*, int)' FROM c;"                    \
    "INSERT INTO StringIds VALUES (140, CAST(x'6375644D656D6370790041737963' AS TEXT)),"                         \
    " (141, CAST(x'6E616D6500' AS TEXT)), (142, '');"                                                            \
    SEQ(300) "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"  \
    " globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,"     \
    " staticSharedMemory, dynamicSharedMemory) SELECT 10000 + x * 100, 10050 + x * 100 + x % 7, x % 2, 1,"       \
    " 7 + x % 3, CASE WHEN x % 11 = 5 THEN NULL ELSE 1000 + x END, " TT_GPID ", CASE x % 13 WHEN 0 THEN"        \
    " 'an inline kernel name' WHEN 1 THEN 140 WHEN 2 THEN 141 ELSE 100 + x % 40 END, 100 + (x + 1) % 40,"        \
    " 32 + x % 64, 1 + x, 2, 1, 128, 1, 1, x * 8, x * 1024 FROM c;"                                              \
    SEQ(300) "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId,"           \
    " returnValue, callchainId) SELECT 9970 + x * 100, 9980 + x * 100, " TT_GTID ", 1000 + x, 3, 0,"             \
    " CASE WHEN x % 10 = 0 THEN x / 10 + 1 END FROM c;"                                                          \
    SEQ(100) "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId,"           \
    " returnValue) SELECT 49990 + x * 150, 50100 + x * 150, " TT_GTID ", 2000 + x, 4, x % 2 FROM c;"             \
    SEQ(50) "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId,"            \
    " returnValue) SELECT 69990 + x * 100, 69995 + x * 100, " TT_GTID ", 3000 + x, 5, 0 FROM c;"                 \
    SEQ(100) "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId," \
    " globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) SELECT 50000 + x * 150,"           \
    " 50040 + x * 150, x % 2, 1, 7, 2000 + x, " TT_GPID ", x * 4294967296 + 17, 1 + x % 4, x % 3, 2, 0, x % 2"   \
    " FROM c;"                                                                                                   \
    SEQ(50) "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId,"  \
    " globalPid, value, bytes, memKind) SELECT 70000 + x * 100, 70020 + x * 100, 0, 1, 8, 3000 + x, " TT_GPID    \
    ", x % 256, 4096 * x, 2 FROM c;"                                                                             \
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (1, NULL, 75,"            \
    " 'my domain', " TT_GTID ", 5);"                                                                             \
    SEQ(150) "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId)"               \
    " SELECT 9000 + x * 500, CASE WHEN x % 5 = 4 THEN NULL ELSE 9400 + x * 500 END, CASE x % 5 WHEN 4 THEN 34"   \
    " WHEN 3 THEN 60 ELSE 59 END, CASE x % 5 WHEN 0 THEN 'range ' || x WHEN 2 THEN CAST(x'6100620063' AS TEXT)"  \
    " WHEN 3 THEN 'long ' || hex(zeroblob(1500 + x)) WHEN 4 THEN 'mark ' || x END, CASE x % 5 WHEN 1 THEN"       \
    " 100 + x % 40 END, " TT_GTID ", CASE WHEN x % 7 = 0 THEN 5 ELSE 0 END FROM c;"                              \
    SEQ(60) "INSERT INTO OSRT_API (start, end, globalTid, nameId, returnValue, nestingLevel, callchainId)"      \
    " SELECT 12000 + x * 300, 12100 + x * 300, " TT_GTID ", 100 + x % 40, x % 3 - 1, x % 2,"                     \
    " CASE WHEN x % 4 = 0 THEN x / 4 + 1 ELSE 0 END FROM c;"                                                     \
    SEQ(20) "INSERT INTO OSRT_CALLCHAINS (id, symbol, module, unresolved, stackDepth)"                          \
    " SELECT x / 2 + 1, 100 + x % 40, 101, x % 2, x % 2 FROM c;"                                                 \
    SEQ(20) "INSERT INTO CUDA_CALLCHAINS (id, symbol, module, unresolved, stackDepth)"                          \
    " SELECT x / 2 + 1, 102 + x % 30, 103, 0, x % 2 FROM c;"                                                     \
    SEQ(20) "INSERT INTO CUDNN_EVENTS (start, end, globalTid, nameId) SELECT 10000 + x * 1000, 10500 + x * 1000,"\
    " " TT_GTID ", 100 + x % 40 FROM c;"                                                                         \
    SEQ(20) "INSERT INTO CUBLAS_EVENTS (start, end, globalTid, nameId) SELECT 10200 + x * 1000,"                \
    " 10400 + x * 1000, " TT_GTID ", 120 + x % 20 FROM c;"                                                       \
    "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (9, 0, " TT_GTID "), (141, 0,"                 \
    " ((1234 << 24) | 1236));"

static char *loader_fixture(const char *pragmas, const char *schema, const char *extra)
{
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "%s\n%s\n%s", schema, LOADER_ROWS, extra ? extra : ""));
    char *path = make_db(pragmas, 0, sql);
    free(sql);
    return path;
}

static void diag_print(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++) print_message("  diag: %s\n", d->msgs[i].text);
}

static tg_trace *load(const char *path, bool sqlite_reads, int threads)
{
    tg_load_opts o = {.kernel_rows = true, .host = TG_HOST_ALL, .threads = threads, .sqlite_reads = sqlite_reads};
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open_with(path, &o, &d);
    if (!t) {
        diag_print(&d);
        fail_msg("%s: did not load", path);
    }
    tg_diag_clear(&d);
    return t;
}

#define EQ(f)                                                                                                    \
    do {                                                                                                         \
        if ((int64_t)(x->f) != (int64_t)(y->f))                                                                  \
            fail_msg("%s[%zu].%s: %lld, through SQLite %lld", what, i, #f, (long long)(x->f), (long long)(y->f)); \
    } while (0)
#define STR(f)                                                                                                   \
    do {                                                                                                         \
        if ((x->f < 0) != (y->f < 0) || strcmp(tt_str(a, x->f), tt_str(b, y->f)) != 0)                          \
            fail_msg("%s[%zu].%s: '%s', through SQLite '%s'", what, i, #f, tt_str(a, x->f), tt_str(b, y->f));    \
    } while (0)
#define EACH(arr, count, label)                                                                                  \
    assert_int_equal(a->count, b->count);                                                                        \
    what = label;                                                                                                \
    for (size_t i = 0; i < a->count; i++)                                                                        \
        for (const __typeof__(*a->arr) *x = &a->arr[i], *y = &b->arr[i]; x; x = NULL)

/* Trace a (the direct reader's) and b (SQLite's) field by field. */
static void compare_traces(const tg_trace *a, const tg_trace *b)
{
    const char *what;
    EACH(kernels, n_kernels, "kernel") {
        EQ(rowid); EQ(start); EQ(end); EQ(correlation); EQ(queue); EQ(pid); EQ(device); STR(name);
        EQ(nccl); EQ(launched); EQ(steady); EQ(queue_clamped); EQ(launch_end); EQ(context); EQ(stream);
        STR(short_name); EQ(grid_x); EQ(grid_y); EQ(grid_z); EQ(block_x); EQ(block_y); EQ(block_z);
        EQ(registers); EQ(static_smem); EQ(dynamic_smem); EQ(api); STR(api_name); EQ(tid); STR(nvtx);
        EQ(iteration); EQ(callchain);
    }
    assert_true((a->kspans == NULL) == (b->kspans == NULL));
    for (int m = 0; m < 2; m++) {
        const tg_memop *xa = m ? a->memsets : a->memcpys, *xb = m ? b->memsets : b->memcpys;
        size_t n = m ? a->n_memsets : a->n_memcpys;
        assert_int_equal(n, m ? b->n_memsets : b->n_memcpys);
        what = m ? "memset" : "memcpy";
        for (size_t i = 0; i < n; i++) {
            const tg_memop *x = &xa[i], *y = &xb[i];
            EQ(rowid); EQ(start); EQ(end); EQ(correlation); EQ(bytes); EQ(value); EQ(pid); EQ(device);
            EQ(context); EQ(stream); EQ(copy_kind); EQ(src_kind); EQ(dst_kind); EQ(src_device); EQ(dst_device);
            STR(kind_name); STR(src_kind_name); STR(dst_kind_name); EQ(api); STR(api_name); EQ(tid);
            EQ(iteration); EQ(callchain); EQ(api_sync); EQ(api_async); EQ(steady); EQ(launched);
        }
    }
    assert_int_equal(a->n_api_rows, b->n_api_rows);
    EACH(apis, n_apis, "api") {
        EQ(rowid); EQ(start); EQ(end); EQ(correlation); EQ(pid); EQ(tid); STR(name); EQ(return_value);
        EQ(callchain); STR(base_name); EQ(iteration); EQ(dup_of); EQ(driver); EQ(blocking); EQ(steady);
    }
    EACH(nvtx, n_nvtx, "nvtx") {
        EQ(rowid); EQ(start); EQ(end); EQ(event_type); EQ(pid); EQ(tid); STR(name); STR(domain);
        EQ(duration); EQ(depth); EQ(gpu_time); EQ(gpu_span); EQ(iteration);
    }
    EACH(syncs, n_syncs, "sync") {
        EQ(rowid); EQ(start); EQ(end); EQ(correlation); EQ(pid); EQ(device); EQ(context); EQ(stream);
        EQ(sync_type);
    }
    EACH(overheads, n_overheads, "overhead") {
        EQ(rowid); EQ(start); EQ(end); EQ(pid); EQ(tid); STR(name);
    }
    EACH(gpus, n_gpus, "gpu") {
        EQ(id); STR(name); EQ(sm_count); EQ(memory); EQ(compute_major); EQ(compute_minor);
    }
    EACH(processes, n_processes, "process") {
        EQ(pid); STR(name);
    }
    EACH(osrts, n_osrts, "osrt") {
        EQ(rowid); EQ(start); EQ(end); EQ(return_value); EQ(pid); EQ(tid); STR(name); EQ(callchain);
        STR(thread); EQ(iteration); EQ(nesting); EQ(steady);
    }
    for (int l = 0; l < TG_LIB_COUNT; l++) {
        assert_int_equal(a->n_libcalls[l], b->n_libcalls[l]);
        what = l ? "cublas" : "cudnn";
        for (size_t i = 0; i < a->n_libcalls[l]; i++) {
            const tg_libcall *x = &a->libcalls[l][i], *y = &b->libcalls[l][i];
            EQ(rowid); EQ(start); EQ(end); EQ(kernel_time); EQ(pid); EQ(tid); STR(name); EQ(kernels);
            STR(thread); EQ(iteration); EQ(steady);
        }
    }
    for (int s = 0; s < TG_STACKS_COUNT; s++) {
        assert_int_equal(a->n_frames[s], b->n_frames[s]);
        what = s ? "osrt frame" : "cuda frame";
        for (size_t i = 0; i < a->n_frames[s]; i++) {
            const tg_frame *x = &a->frames[s][i], *y = &b->frames[s][i];
            EQ(chain); EQ(depth); STR(symbol); STR(module); EQ(unresolved);
        }
    }
    EACH(threads, n_threads, "thread") {
        EQ(pid); EQ(tid); STR(name);
    }
    assert_int_equal(a->host_loaded, b->host_loaded);
    assert_int_equal(a->first_ns, b->first_ns);
    assert_int_equal(a->last_ns, b->last_ns);
    assert_int_equal(a->session_start_ns, b->session_start_ns);
    assert_int_equal(a->mixed_duplicate_api, b->mixed_duplicate_api);
    assert_string_equal(a->nsys_version ? a->nsys_version : "", b->nsys_version ? b->nsys_version : "");
    for (int i = 0; i < TG_TABLE_COUNT; i++) {
        assert_int_equal(a->has_table[i], b->has_table[i]);
        if (a->columns[i] > 0 || b->columns[i] > 0)
            assert_string_equal(tt_str(a, a->columns[i] - 1), tt_str(b, b->columns[i] - 1));
    }
}

static bool has_nvtx_name(const tg_trace *t, const char *name, size_t len)
{
    for (size_t i = 0; i < t->n_nvtx; i++) {
        const char *s = tg_trace_str(t, t->nvtx[i].name);
        if (s && strlen(s) == len && memcmp(s, name, len) == 0) return true;
    }
    return false;
}

static void test_loader_same_rows(void **state)
{
    (void)state;
    char *schema = schema_without_defaults(NULL, NULL);
    static const char *const pragmas[] = {"PRAGMA page_size = 512", NULL};
    static const char *const direct_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                                "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                                                "NVTX_EVENTS", "PROCESSES", "OSRT_API", "CUDNN_EVENTS",
                                                "CUBLAS_EVENTS", "ThreadNames"};
    for (int p = 0; p < 2; p++) {
        char *path = loader_fixture(pragmas[p], schema, NULL);
        for (int threads = 1; threads <= 2; threads++) {
            opens_reset();
            tg_trace *b = load(path, true, threads);
            assert_int_equal(n_opens, 0);            /* .sqlite_reads: no direct reader at all */
            opens_reset();
            tg_trace *a = load(path, false, threads);
            for (size_t i = 0; i < sizeof direct_tables / sizeof *direct_tables; i++)
                if (!opened_directly(root_of(path, direct_tables[i])))
                    fail_msg("%s was not read directly", direct_tables[i]);
            assert_false(opened_directly(root_of(path, "StringIds")));   /* id is its primary key */
            assert_int_equal(a->n_kernels, 301);
            assert_int_equal(a->n_memcpys, 101);
            assert_int_equal(a->n_memsets, 51);
            assert_int_equal(a->n_api_rows, 454);
            assert_int_equal(a->n_nvtx, 153);
            assert_int_equal(a->n_osrts, 60);
            assert_int_equal(a->n_libcalls[TG_LIB_CUDNN], 20);
            assert_int_equal(a->n_frames[TG_STACKS_OSRT], 20);
            assert_true(has_nvtx_name(a, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c", 9));
            assert_true(has_nvtx_name(a, "range 10", 8));
            compare_traces(a, b);
            tg_trace_close(a);
            tg_trace_close(b);
        }
        tg_fixture_remove(path);
    }
    free(schema);
}

/* TRACEGATE_READER=sqlite (docs/architecture.md, "Reading an export"):
** every command's open reads through SQLite alone, as .sqlite_reads does,
** with the same rows; any other value leaves the direct reader on. */
static void test_reader_env(void **state)
{
    (void)state;
    char *schema = schema_without_defaults(NULL, NULL);
    char *path = loader_fixture(NULL, schema, NULL);
    opens_reset();
    tg_trace *a = load(path, false, 1);
    assert_true(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_KERNEL")));
    assert_false(a->sqlite_reads);
    assert_int_equal(setenv("TRACEGATE_READER", "sqlite", 1), 0);
    opens_reset();
    tg_trace *b = load(path, false, 2);
    assert_int_equal(n_opens, 0);
    assert_true(b->sqlite_reads);
    compare_traces(a, b);
    assert_int_equal(setenv("TRACEGATE_READER", "direct", 1), 0);
    opens_reset();
    tg_trace *c = load(path, false, 1);
    assert_true(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_KERNEL")));
    assert_int_equal(unsetenv("TRACEGATE_READER"), 0);
    tg_trace_close(a);
    tg_trace_close(b);
    tg_trace_close(c);
    tg_fixture_remove(path);
    free(schema);
}

/* A kernel column with REAL affinity: the kernel table is read through
** SQLite (which turns the integers stored there back into reals), the
** other tables directly; the rows are the same. So for the fixtures'
** own shape, whose columns have defaults. */
static void test_loader_fallback(void **state)
{
    (void)state;
    char *schema = schema_without_defaults("registersPerThread INTEGER,", "registersPerThread REAL,   ");
    char *path = loader_fixture("PRAGMA page_size = 1024", schema, NULL);
    free(schema);
    tg_trace *b = load(path, true, 1);
    opens_reset();
    tg_trace *a = load(path, false, 1);
    assert_false(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_KERNEL")));
    assert_true(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_RUNTIME")));
    assert_true(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_MEMCPY")));
    assert_int_equal(a->n_kernels, 301);
    compare_traces(a, b);
    for (size_t i = 0; i < a->n_kernels; i++) assert_true(a->kernels[i].registers >= 32 && a->kernels[i].registers < 96);
    tg_trace_close(a);
    tg_trace_close(b);
    tg_fixture_remove(path);

    /* what the fallback avoids: the direct reader gives the stored integer */
    path = make_db(NULL, 0, "CREATE TABLE r (x REAL); INSERT INTO r VALUES (32), (1.5);");
    int pos[] = {0};
    tg_btree *bt = tg_btree_open(path, root_of(path, "r"), pos, 1);
    assert_int_equal(tg_btree_next(bt), 1);
    assert_int_equal(tg_btree_cells(bt)[1].type, SQLITE_INTEGER);
    assert_int_equal(query_int(path, "SELECT typeof(x) = 'real' FROM r WHERE rowid = 1"), 1);
    tg_btree_close(bt);
    tg_fixture_remove(path);

    path = tg_fixture_build(tg_fixture_schema_3_0, LOADER_ROWS);
    assert_non_null(path);
    b = load(path, true, 1);
    opens_reset();
    a = load(path, false, 1);
    assert_false(opened_directly(root_of(path, "CUPTI_ACTIVITY_KIND_KERNEL")));   /* DEFAULT 0 columns */
    assert_true(opened_directly(root_of(path, "PROCESSES")));
    assert_int_equal(a->n_kernels, 301);
    compare_traces(a, b);
    tg_trace_close(a);
    tg_trace_close(b);
    tg_fixture_remove(path);
}

/* A failed load: one error, TG_ETRACE, whose sentence contains `words`. */
static void expect_load_error(const char *path, bool sqlite_reads, const char *words, const char *also)
{
    tg_load_opts o = {.kernel_rows = true, .sqlite_reads = sqlite_reads};
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open_with(path, &o, &d);
    if (t) fail_msg("%s loaded (%s), it should not have", path, sqlite_reads ? "SQLite" : "direct");
    diag_print(&d);
    assert_int_equal(d.status, TG_ETRACE);
    assert_int_equal(d.n_errors, 1);
    if (!strstr(tt_first_error(&d), words)) fail_msg("no '%s' in: %s", words, tt_first_error(&d));
    if (also && !strstr(tt_first_error(&d), also)) fail_msg("no '%s' in: %s", also, tt_first_error(&d));
    tg_diag_clear(&d);
}

static void test_loader_corrupt(void **state)
{
    (void)state;
    char *schema = schema_without_defaults(NULL, NULL);
    char *path = loader_fixture("PRAGMA page_size = 512", schema, NULL);
    free(schema);
    uint32_t root = root_of(path, "CUPTI_ACTIVITY_KIND_KERNEL");
    dbfile f = file_load(path);
    size_t cap = f.n / f.ps, nl = 0;
    uint32_t *leaves = malloc(cap * sizeof *leaves);
    int depth = 0;
    collect_leaves(&f, root, leaves, &nl, cap, 0, &depth);
    assert_true(nl > 4);
    uint32_t leaf = leaves[nl / 2];
    char *bad = beside(path, "damaged.sqlite");

    /* a leaf that is no table page: both readers find it malformed */
    dbfile c = file_copy(&f);
    page(&c, leaf)[0] = 0x0A;
    file_save(bad, c.d, c.n);
    opens_reset();
    expect_load_error(bad, false, "database disk image is malformed", "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_true(opened_directly(root));
    expect_load_error(bad, true, "database disk image is malformed", "CUPTI_ACTIVITY_KIND_KERNEL");
    /* a cell pointer past the page; a payload size the page cannot hold;
    ** an interior page that points to itself; a cell's payload-size and
    ** rowid varints zeroed (issue 31: the row read as NULLs, and the load
    ** passed with a warning) */
    for (int k = 0; k < 4; k++) {
        memcpy(c.d, f.d, f.n);
        if (k == 0) put16(cell_ptr(&c, leaf, 1), 0xFFF0);
        if (k == 1) {
            uint32_t end = 0;
            for (uint32_t i = 0; i < n_cells(&f, leaf); i++)
                if (be16(cell_ptr(&f, leaf, i)) > be16(cell_ptr(&f, leaf, end))) end = i;
            put_varint(cell(&c, leaf, end), 100000);
        }
        if (k == 2) put32(right_ptr(&c, root), root);
        if (k == 3) {
            unsigned char *p = cell(&c, leaves[0], 1);   /* the first leaf: rowids of one byte */
            uint64_t size, rowid;
            int a = get_varint(p, &size), r = get_varint(p + a, &rowid);
            assert_int_equal(r, 1);                  /* else the header's size would read as a zeroed byte */
            memset(p, 0, (size_t)(a + r));
        }
        file_save(bad, c.d, c.n);
        opens_reset();
        expect_load_error(bad, false, "database disk image is malformed", "CUPTI_ACTIVITY_KIND_KERNEL");
        assert_true(opened_directly(root));
        if (k == 3) expect_load_error(bad, true, "database disk image is malformed", "CUPTI_ACTIVITY_KIND_KERNEL");
    }
    /* cut short, the header's page count made to agree (else the open
    ** refuses it before any read) */
    uint32_t last = 0;
    for (size_t i = 0; i < nl; i++)
        if (leaves[i] > last) last = leaves[i];
    memcpy(c.d, f.d, f.n);
    c.n = (size_t)(last - 1) * f.ps;
    put32(c.d + 28, last - 1);
    file_save(bad, c.d, c.n);
    expect_load_error(bad, false, "database disk image is malformed", NULL);
    expect_load_error(bad, true, "database disk image is malformed", NULL);
    free(c.d);
    free(leaves);
    free(bad);
    free(f.d);
    tg_fixture_remove(path);

    /* a value over TG_MAX_VALUE_BYTES */
    schema = schema_without_defaults(NULL, NULL);
    char *extra = NULL;
    assert_true(tg_fixture_append(&extra, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES"
                                          " (5, 6, 59, hex(zeroblob(%d)), " TT_GTID ");",
                                  TG_MAX_VALUE_BYTES / 2 + 1));
    path = loader_fixture(NULL, schema, extra);
    free(extra);
    free(schema);
    opens_reset();
    expect_load_error(path, false, "longer than the 16 MiB", "NVTX_EVENTS");
    assert_true(opened_directly(root_of(path, "NVTX_EVENTS")));
    expect_load_error(path, true, "longer than the 16 MiB", "NVTX_EVENTS");
    tg_fixture_remove(path);
}

/* ---------------------------------------------------------------- tests: differential mutation */

/* The damage done to a leaf page, by class. */
enum {
    DMG_ZERO_VARINTS,          /* a cell's payload-size and rowid varints zeroed */
    DMG_CELL_BYTE,             /* a byte of a cell's first 12 (varints, record header) */
    DMG_POINTER,               /* a byte of the cell pointer array */
    DMG_ORDER,                 /* two cell pointers swapped, or one repeated */
    DMG_SIZE,                  /* a payload size larger or smaller */
    DMG_HEADER_SIZE,           /* a record header's size */
    DMG_SERIAL_TYPE,           /* a serial type */
    DMG_COUNT,                 /* the page's cell count */
    DMG_PAGE_BYTE,             /* any byte of the page */
    DMG_CLASSES
};
static const char *const dmg_name[] = {"zeroed varints", "cell byte", "cell pointer", "cell order", "payload size",
                                       "header size", "serial type", "cell count", "page byte"};

static void damage(dbfile *c, uint32_t leaf, int kind)
{
    unsigned char *pg = page(c, leaf);
    uint32_t n = n_cells(c, leaf), i = (uint32_t)(next_rand() % n), j = (uint32_t)(next_rand() % n);
    unsigned char *p = cell(c, leaf, i);
    if (p + 16 > pg + c->ps) p = pg + c->ps - 16;  /* keep within the page */
    uint64_t size, rowid, hsize;
    int a = get_varint(p, &size), r = get_varint(p + a, &rowid), h = get_varint(p + a + r, &hsize);
    switch (kind) {
    case DMG_ZERO_VARINTS: memset(p, 0, (size_t)(a + r)); break;
    case DMG_CELL_BYTE: p[next_rand() % 12] = (unsigned char)next_rand(); break;
    case DMG_POINTER: cell_ptr(c, leaf, i)[next_rand() % 2] = (unsigned char)next_rand(); break;
    case DMG_ORDER: {
        unsigned char t[2];
        memcpy(t, cell_ptr(c, leaf, i), 2);
        if (next_rand() % 2) memcpy(cell_ptr(c, leaf, i), cell_ptr(c, leaf, j), 2);
        memcpy(cell_ptr(c, leaf, j), t, 2);
        break;
    }
    case DMG_SIZE: {
        static const int64_t delta[] = {1, -1, 7, 100, 4096, 70000, 1 << 24, (1 << 24) + 1};
        unsigned char tail[32];
        memcpy(tail, p + a, sizeof tail);
        uint64_t v = size + (uint64_t)delta[next_rand() % 8];
        if (next_rand() % 4 == 0) v = next_rand() >> (next_rand() % 64);
        int w = put_varint(p, v);
        if (w != a && p + w + sizeof tail <= pg + c->ps) memcpy(p + w, tail, sizeof tail);
        break;
    }
    case DMG_HEADER_SIZE: p[a + r] = (unsigned char)(next_rand() % 2 ? hsize + 1 + next_rand() % 4 : next_rand() % 128); break;
    case DMG_SERIAL_TYPE: p[a + r + h + next_rand() % (hsize > (uint64_t)h ? hsize - (uint64_t)h : 1)] =
                              (unsigned char)(next_rand() % 2 ? next_rand() % 13 : next_rand() & 0x7F); break;
    case DMG_COUNT: put16(pg + hdr(leaf) + 3, (uint32_t)(next_rand() % 2 ? n + 1 + next_rand() % 8 : next_rand() % 0x10000)); break;
    default: pg[next_rand() % c->ps] = (unsigned char)next_rand(); break;
    }
}

/* `rounds` damaged copies of the file at path, each with one to three
** hits on a leaf of one of its tables (at most 16), read both ways; the
** outcomes by class into counts. The reader must refuse whatever SQLite's
** scan of the same columns refuses. */
static void mutate_file(const char *path, int rounds, int counts[DMG_CLASSES][MUT_OUTCOMES])
{
    dbfile f = file_load(path);
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND"
                                            " sql NOT LIKE '%WITHOUT ROWID%' AND rootpage > 0", -1, &st, NULL),
                     SQLITE_OK);
    struct { char *sql; uint32_t root, *leaves; size_t nl; int pos[64], n; } tabs[16];
    int nt = 0;
    size_t cap = f.n / f.ps;
    while (nt < 16 && sqlite3_step(st) == SQLITE_ROW) {
        tabs[nt].root = (uint32_t)sqlite3_column_int64(st, 1);
        tabs[nt].n = mut_columns(db, (const char *)sqlite3_column_text(st, 0), tabs[nt].pos, &tabs[nt].sql);
        tabs[nt].leaves = malloc(cap * sizeof *tabs[nt].leaves);
        tabs[nt].nl = 0;
        int depth = 0;
        collect_leaves(&f, tabs[nt].root, tabs[nt].leaves, &tabs[nt].nl, cap, 0, &depth);
        bool cells = tabs[nt].nl && n_cells(&f, tabs[nt].leaves[0]) > 0;
        if (tabs[nt].n > 0 && cells) nt++;
        else {
            free(tabs[nt].sql);
            free(tabs[nt].leaves);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_true(nt > 0);
    char *bad = beside(path, "mutated.sqlite");
    for (int round = 0; round < rounds; round++) {
        int t = (int)(next_rand() % (uint64_t)nt), kind = round % DMG_CLASSES, hits = 1 + (int)(next_rand() % 3);
        dbfile c = file_copy(&f);
        for (int k = 0; k < hits; k++) {
            uint32_t leaf = tabs[t].leaves[next_rand() % tabs[t].nl];
            if (n_cells(&c, leaf) > 0 && n_cells(&c, leaf) < c.ps / 2) damage(&c, leaf, kind);
        }
        file_save(bad, c.d, c.n);
        int strict = 0, o = mut_compare(bad, tabs[t].sql, tabs[t].root, tabs[t].pos, tabs[t].n, &strict);
        counts[kind][o]++;
        if (o == MUT_LENIENT || (o == MUT_STRICT && getenv("TG_TEST_VERBOSE")))
            print_message("round %d (%s, %d hits, %s): %s (reader %d)\n", round, dmg_name[kind], hits, tabs[t].sql,
                          mut_outcome[o], strict);
        free(c.d);
    }
    for (int i = 0; i < nt; i++) {
        free(tabs[i].sql);
        free(tabs[i].leaves);
    }
    unlink(bad);
    free(bad);
    free(f.d);
}

static void mutate_report(const char *what, int counts[DMG_CLASSES][MUT_OUTCOMES])
{
    print_message("%s:\n", what);
    for (int k = 0; k < DMG_CLASSES; k++)
        print_message("  %-15s %4d same, %4d both refuse, %4d reader stricter, %d reader lenient\n", dmg_name[k],
                      counts[k][MUT_SAME], counts[k][MUT_BOTH], counts[k][MUT_STRICT], counts[k][MUT_LENIENT]);
    for (int k = 0; k < DMG_CLASSES; k++) assert_int_equal(counts[k][MUT_LENIENT], 0);
}

/* Differential mutation: leaf pages of an export damaged by class, read by
** SQLite and by the reader; whatever SQLite's scan refuses, the reader
** must refuse too (exit 3 in the loader). On the loader's fixture (4096-
** byte pages, as nsys writes), a fixed seed; TG_BTREE_MUTATE=FILE[:N]
** runs N rounds (default 700) on another export instead. */
static void test_mutations(void **state)
{
    (void)state;
    int counts[DMG_CLASSES][MUT_OUTCOMES] = {{0}};
    rng = 0x9E3779B97F4A7C15ULL;
    const char *other = getenv("TG_BTREE_MUTATE");
    if (other && *other) {
        char file[4096];
        snprintf(file, sizeof file, "%s", other);
        char *colon = strrchr(file, ':');
        int rounds = colon ? atoi(colon + 1) : 700;
        if (colon) *colon = 0;
        /* a copy beside a fixture, never written next to the input */
        char *dir = tg_fixture_from_sql("");
        char *copy = beside(dir, "export.sqlite");
        dbfile f = file_load(file);
        file_save(copy, f.d, f.n);
        free(f.d);
        mutate_file(copy, rounds, counts);
        mutate_report(file, counts);
        unlink(copy);
        free(copy);
        tg_fixture_remove(dir);
        return;
    }
    char *schema = schema_without_defaults(NULL, NULL);
    char *path = loader_fixture(NULL, schema, NULL);
    free(schema);
    mutate_file(path, getenv("TG_CORPUS_QUICK") ? 90 : 270, counts);
    mutate_report("the loader's fixture", counts);
    tg_fixture_remove(path);
}

int main(void)
{
    unsetenv("TRACEGATE_READER");        /* it would make every load read through SQLite */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_column_ok),
        cmocka_unit_test(test_open_refuses),
        cmocka_unit_test(test_big_tree),
        cmocka_unit_test(test_serial_types),
        cmocka_unit_test(test_nan),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_added_column),
        cmocka_unit_test(test_rowids),
        cmocka_unit_test(test_small_and_empty),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_schema_table),
        cmocka_unit_test(test_deletes_and_autovacuum),
        cmocka_unit_test(test_damaged_leaf),
        cmocka_unit_test(test_damaged_interior),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_damaged_overflow),
        cmocka_unit_test(test_random_damage),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_loader_same_rows),
        cmocka_unit_test(test_reader_env),
        cmocka_unit_test(test_loader_fallback),
        cmocka_unit_test(test_loader_corrupt),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
