/*
** The history store on PostgreSQL (engine/history/store_pg.c), against
** the throwaway cluster pg_test.sh starts: TG_PG_URI is the maintenance
** URI of the test's role (tg_test, which may create databases), TG_PG_READER
** a role the read-only case grants SELECT only, TG_PG_PW_ROLE and
** TG_PG_PW the one role that needs a password and its password.
**
** First the store's cases of both stores (store_cases.h), each on a fresh
** empty database (tg_case_N, created here); then what only PostgreSQL
** has: a server that is not there or does not answer (one sentence, no
** hang beyond the connect timeout), a refused password or role (the
** password never shown), a database holding other tables or a search_path
** without a schema (refused, nothing created), a newer schema (refused), a
** role granted SELECT only (read, never written), two first writers
** creating the schema at once (ten processes: every run lands), a writer
** waiting for the writers' lock past TG_HISTORY_BUSY_MS (refused; a reader
** does not wait), and the row itself: settings, doubles exact through
** text, a read transaction that may not write, a failed transaction that
** cannot commit.
**
** Run by hand: bash tests/unit/history/pg_test.sh BUILD/tests/unit/history/history_test_store_pg
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <libpq-fe.h>

#include "history/history.h"
#include "history/store.h"
#include "store_cases.h"

#define PG_WRITERS 10             /* first writers racing to create the schema */

/* The cluster, from pg_test.sh's environment. */
typedef struct pg_cluster {
    PGconn *admin;              /* the maintenance connection (tg_test on postgres) */
    char host[512];             /* the socket directory, percent-encoded */
    char port[16];
    const char *user, *reader, *pw_role, *pw;
    int n_dbs;
    char name[64];              /* the latest database made */
    char uri[1024];             /* and its URI */
} pg_cluster;

static pg_cluster cluster;

/* ------------------------------------------------------------- helpers */

/* s percent-encoded for a URI's query value. */
static void pg_encode(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s && n + 4 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("/._-", c))
            out[n++] = (char)c;
        else
            n += (size_t)snprintf(out + n, size - n, "%%%02X", c);
    }
    out[n] = '\0';
}

/* Run sql on conn; the test fails on an error. */
static void sql_ok(PGconn *conn, const char *sql)
{
    PGresult *res = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail_msg("%s: %s", sql, PQerrorMessage(conn));
    PQclear(res);
}

/* The URI of database db as role user (NULL: the test's), with a password
** in the user information when given, into out. */
static const char *uri_of(const char *db, const char *user, const char *password, char *out, size_t size)
{
    if (password)
        snprintf(out, size, "postgresql://%s:%s@/%s?host=%s&port=%s", user, password, db, cluster.host, cluster.port);
    else
        snprintf(out, size, "postgresql:///%s?host=%s&port=%s&user=%s", db, cluster.host, cluster.port,
                 user ? user : cluster.user);
    return out;
}

/* A new empty database (tg_case_N), as store_cases.h asks. */
static const char *fresh_db(void *ctx)
{
    (void)ctx;
    char sql[128];
    snprintf(cluster.name, sizeof cluster.name, "tg_case_%d", ++cluster.n_dbs);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", cluster.name);
    sql_ok(cluster.admin, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", cluster.name);
    sql_ok(cluster.admin, sql);
    return uri_of(cluster.name, NULL, NULL, cluster.uri, sizeof cluster.uri);
}

/* A connection of the test's role to the latest database, to look inside. */
static PGconn *inspect(void)
{
    char uri[1024];
    PGconn *c = PQconnectdb(uri_of(cluster.name, NULL, NULL, uri, sizeof uri));
    if (PQstatus(c) != CONNECTION_OK) fail_msg("cannot inspect %s: %s", cluster.name, PQerrorMessage(c));
    return c;
}

/* Run sql in the latest database as the test's role. */
static void sql_in_case(const char *sql)
{
    PGconn *c = inspect();
    sql_ok(c, sql);
    PQfinish(c);
}

/* Every table of the latest database with its number of rows, and every
** other relation (indexes, sequences), as one string: what "nothing
** written" compares. malloc'd. */
static char *db_contents(void)
{
    PGconn *c = inspect();
    PGresult *rels = PQexec(c, "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n"
                               " ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1");
    assert_int_equal(PQresultStatus(rels), PGRES_TUPLES_OK);
    size_t cap = 64, len = 0;
    char *out = calloc(1, cap);
    assert_non_null(out);
    for (int i = 0; i < PQntuples(rels); i++) {
        char item[256], sql[160];
        const char *name = PQgetvalue(rels, i, 0), *kind = PQgetvalue(rels, i, 1);
        if (strcmp(kind, "r") == 0) {
            snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", name);
            PGresult *n = PQexec(c, sql);
            assert_int_equal(PQresultStatus(n), PGRES_TUPLES_OK);
            snprintf(item, sizeof item, "%s:%s rows;", name, PQgetvalue(n, 0, 0));
            PQclear(n);
        } else {
            snprintf(item, sizeof item, "%s(%s);", name, kind);
        }
        while (len + strlen(item) + 1 > cap) assert_non_null(out = realloc(out, cap *= 2));
        strcpy(out + len, item);
        len += strlen(item);
    }
    PQclear(rels);
    PQfinish(c);
    return out;
}

/* The diag holds one error, one sentence (no line break) containing want
** (NULL: anything) and never not (NULL: nothing to miss), of status st. */
static void one_sentence(const tg_diag *d, tg_status st, const char *want, const char *not)
{
    assert_int_equal(d->n_errors, 1);
    assert_int_equal(d->status, st);
    const char *text = d->msgs[0].text;
    if (strchr(text, '\n')) fail_msg("more than one line: %s", text);
    if (want && !strstr(text, want)) fail_msg("'%s' not in: %s", want, text);
    if (not && strstr(text, not)) fail_msg("'%s' shown in: %s", not, text);
}

/* The history at uri (the latest database) is refused for reading and for
** writing with one sentence containing want, and nothing in it changes. */
static void refused_as_is(const char *uri, const char *want)
{
    char *before = db_contents();
    for (int mode = TG_HISTORY_READ; mode <= TG_HISTORY_WRITE; mode++) {
        tg_diag d;
        tg_diag_init(&d);
        assert_null(tg_history_open(uri, (tg_history_mode)mode, &d));
        one_sentence(&d, TG_EUSAGE, want, NULL);
        tg_diag_clear(&d);
    }
    char *after = db_contents();
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* A run with one metric, of a fixed workload. */
static tg_hist_run a_run(const char *label, double value, tg_hist_metric *m)
{
    *m = (tg_hist_metric){.rule = "gpu-time-regression", .metric = "iteration.gpu_time", .unit = TG_UNIT_NS,
                          .direction = 1, .value = value, .verdict = "pass"};
    return (tg_hist_run){.label = label, .time = "2026-12-07T03:00:00Z", .workload = "wpgtest",
                         .workload_name = "saxpy", .gpu = "NVIDIA H200", .format = "nsys-sqlite", .marker = "",
                         .trace = "run.sqlite", .rules_digest = "sha256:00", .metrics_digest = "sha256:01",
                         .tool_version = "test", .verdict = "pass", .metrics = m, .n_metrics = 1};
}

static tg_status append_one(const char *uri, const char *label, tg_diag *d)
{
    tg_history *h = tg_history_open(uri, TG_HISTORY_WRITE, d);
    if (!h) return d->status;
    tg_hist_metric m;
    tg_hist_run run = a_run(label, 1e6, &m);
    tg_status st = tg_history_append(h, &run, 1, false, d);
    tg_history_close(h);
    return st;
}

/* The labels of the history at uri, in history order, "a,b,c" (malloc'd). */
static char *labels_of(const char *uri)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(uri, TG_HISTORY_READ, &d);
    if (!h) fail_msg("cannot read %s: %s", uri, d.n ? d.msgs[0].text : "?");
    tg_arena *a = tg_arena_new();
    tg_hist_run *runs;
    size_t n;
    assert_int_equal(tg_history_load(h, NULL, 0, a, &runs, &n, &d), TG_OK);
    char *out = calloc(1, 64 * (n + 1));
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, ",");
        strncat(out, runs[i].label, 60);
    }
    tg_arena_free(a);
    tg_history_close(h);
    tg_diag_clear(&d);
    return out;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ------------------------------------------------------- connections */

/* A server that is not there: a socket directory without a socket, and a
** socket that accepts the connection and never answers (a hung server):
** refused with one sentence naming the URI, exit 2, after the connect
** timeout at the latest (the bound below is a safety net for a hang,
** not a speed test). */
static void test_server_absent(void **state)
{
    (void)state;
    char dir[] = "/tmp/tg-pg-absent-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s/.s.PGSQL.5999", dir);
    int mute = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(mute >= 0);
    assert_int_equal(bind(mute, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(mute, 8), 0);
    setenv("TG_HISTORY_CONNECT_S", "2", 1);
    const char *ports[] = {"5998", "5999"};   /* no socket; the mute one */
    for (size_t i = 0; i < 2; i++)
        for (int mode = TG_HISTORY_READ; mode <= TG_HISTORY_WRITE; mode++) {
            char uri[256];
            snprintf(uri, sizeof uri, "postgresql:///tg_nowhere?host=%s&port=%s", dir, ports[i]);
            tg_diag d;
            tg_diag_init(&d);
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            assert_null(tg_history_open(uri, (tg_history_mode)mode, &d));
            double took = seconds_since(&t0);
            one_sentence(&d, TG_EUSAGE, uri, NULL);
            print_message("  %s: %s (%.1f s)\n", ports[i], d.msgs[0].text, took);
            assert_true(took < 120);
            tg_diag_clear(&d);
        }
    unsetenv("TG_HISTORY_CONNECT_S");
    close(mute);
    unlink(addr.sun_path);
    rmdir(dir);
}

/* A wrong password, in the user information (with URI delimiters in it,
** which libpq misreads) or as a parameter, a role that does not exist:
** one sentence, exit 2, the password masked and never shown, not even in
** libpq's own words. The right password opens. */
static void test_refused_login(void **state)
{
    (void)state;
    fresh_db(NULL);
    static const char *const wrong[] = {"wrong-secret-1", "wrong%2Fsecret-2", "wr0ngsecret/3@x", "wrong%3Ase%40cret-4"};
    char uri[1024];
    tg_diag d;
    tg_diag_init(&d);
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        uri_of(cluster.name, cluster.pw_role, wrong[i], uri, sizeof uri);
        assert_null(tg_history_open(uri, TG_HISTORY_READ, &d));
        const char *shown = strstr(d.msgs[0].text, ":***@");
        if (!shown) fail_msg("password not masked: %s", d.msgs[0].text);
        one_sentence(&d, TG_EUSAGE, NULL, "secret");
        print_message("  %s\n", d.msgs[0].text);
        tg_diag_clear(&d);
    }
    snprintf(uri, sizeof uri, "postgresql:///%s?host=%s&port=%s&user=%s&password=wrong-secret-5", cluster.name,
             cluster.host, cluster.port, cluster.pw_role);
    assert_null(tg_history_open(uri, TG_HISTORY_WRITE, &d));
    one_sentence(&d, TG_EUSAGE, "password=***", "secret");
    tg_diag_clear(&d);

    assert_null(tg_history_open(uri_of(cluster.name, "tg_no_such_role", NULL, uri, sizeof uri), TG_HISTORY_READ, &d));
    one_sentence(&d, TG_EUSAGE, "tg_no_such_role", NULL);
    tg_diag_clear(&d);

    /* the right password: the row opens, and its errors mask it too */
    bool exists = true;
    tg_store *s = tg_store_pg_ops.open(uri_of(cluster.name, cluster.pw_role, cluster.pw, uri, sizeof uri), true,
                                       &exists, &d);
    assert_non_null(s);
    assert_false(exists);
    assert_int_equal(tg_store_pg_ops.exec(s, "SELECT no_such_column", NULL, 0, NULL, NULL, &d), TG_EINTERNAL);
    one_sentence(&d, TG_EINTERNAL, ":***@", cluster.pw);
    tg_store_pg_ops.close(s);
    tg_diag_clear(&d);
}

/* A password holding '@' (which the test's role, trusted on the socket,
** does not need), in the user information and as a parameter: the
** history's own sentences (tg_history_open's refusal of another program's
** database) and its name (tg_history_name) mask all of it, as the row
** does (store.h, shown). */
static void test_password_with_at(void **state)
{
    (void)state;
    fresh_db(NULL);
    sql_in_case("CREATE TABLE orders (id integer PRIMARY KEY)");
    const char *db = cluster.name;
    char uri[1024], param[1100], want[1024];
    uri_of(db, cluster.user, "tg-s3cr@t-wo@rd", uri, sizeof uri);
    snprintf(param, sizeof param, "%s&password=tg-s3cr@t-wo@rd", uri_of(db, NULL, NULL, want, sizeof want));
    const char *const uris[] = {uri, param};
    for (size_t i = 0; i < 2; i++) {
        tg_diag d;
        tg_diag_init(&d);
        assert_null(tg_history_open(uris[i], TG_HISTORY_READ, &d));
        one_sentence(&d, TG_EUSAGE, "it holds other tables: orders", "s3cr");
        if (i == 0)
            snprintf(want, sizeof want, "postgresql://%s:***@/%s?host=%s&port=%s is not", cluster.user, db,
                     cluster.host, cluster.port);
        else
            snprintf(want, sizeof want, "postgresql:///%s?host=%s&port=%s&user=%s&password=*** is not", db,
                     cluster.host, cluster.port, cluster.user);
        one_sentence(&d, TG_EUSAGE, want, "wo@rd");
        print_message("  %s\n", d.msgs[0].text);
        tg_diag_clear(&d);
    }
    /* a history there: its name masked the same way */
    sql_in_case("DROP TABLE orders");
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(uri, TG_HISTORY_WRITE, &d);
    if (!h) fail_msg("cannot open %s: %s", uri, d.n ? d.msgs[0].text : "?");
    snprintf(want, sizeof want, "postgresql://%s:***@/%s?host=%s&port=%s", cluster.user, db, cluster.host,
             cluster.port);
    assert_string_equal(tg_history_name(h), want);
    tg_history_close(h);
    tg_diag_clear(&d);
}

/* ------------------------------------------------------ not a history */

/* A database of another program: refused for reading and for writing,
** naming its table; nothing created in it. */
static void test_other_tables(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    sql_in_case("CREATE TABLE orders (id integer PRIMARY KEY, item text); INSERT INTO orders VALUES (1, 'gpu')");
    refused_as_is(uri, "orders");
}

/* A search_path naming no schema that exists: nowhere to make a history,
** so writing is refused with one sentence (exit 2) and nothing made. */
static void test_no_schema(void **state)
{
    (void)state;
    char uri[1200];
    snprintf(uri, sizeof uri, "%s&options=-csearch_path%%3Dtg_no_such_schema", fresh_db(NULL));
    char *before = db_contents();
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_history_open(uri, TG_HISTORY_WRITE, &d));
    one_sentence(&d, TG_EUSAGE, "3F000", NULL);
    tg_diag_clear(&d);
    char *after = db_contents();
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* A history written by a newer tracegate: refused, and left as it was. */
static void test_newer_schema(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(append_one(uri, "r1", &d), TG_OK);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE tg_meta SET value = '%d' WHERE key = 'schema_version'", TG_HISTORY_SCHEMA + 1);
    sql_in_case(sql);
    refused_as_is(uri, "newer");
}

/* ------------------------------------------------------------ writers */

/* A role granted SELECT only reads the history; writing is refused with
** one sentence (at open or at the append) and nothing is written. */
static void test_read_only_role(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(append_one(uri, "r1", &d), TG_OK);
    char sql[160];
    snprintf(sql, sizeof sql, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s", cluster.reader);
    sql_in_case(sql);
    char reader[1024];
    uri_of(cluster.name, cluster.reader, NULL, reader, sizeof reader);
    char *labels = labels_of(reader);
    assert_string_equal(labels, "r1");
    free(labels);

    char *before = db_contents();
    tg_history *h = tg_history_open(reader, TG_HISTORY_WRITE, &d);
    if (h) {
        tg_hist_metric m;
        tg_hist_run run = a_run("r2", 2e6, &m);
        assert_int_equal(tg_history_append(h, &run, 1, false, &d), TG_EUSAGE);
        tg_history_close(h);
    }
    one_sentence(&d, TG_EUSAGE, "permission denied", NULL);
    print_message("  %s\n", d.msgs[0].text);
    tg_diag_clear(&d);
    char *after = db_contents();
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* Ten processes open an empty database for writing at once, each adding
** its run: one creates the schema, the others find it, and every run
** lands. They start together on a pipe closed by the parent. */
static void test_first_writers(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pids[PG_WRITERS];
    for (int i = 0; i < PG_WRITERS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char byte, label[32];
            close(go[1]);
            if (read(go[0], &byte, 1) != 0) _exit(3);
            snprintf(label, sizeof label, "first-%02d", i);
            tg_diag d;
            tg_diag_init(&d);
            tg_status st = append_one(uri, label, &d);
            if (st != TG_OK) fprintf(stderr, "writer %d: %s\n", i, d.n ? d.msgs[0].text : "?");
            tg_diag_clear(&d);
            _exit(st == TG_OK ? 0 : 1);
        }
    }
    close(go[0]);
    close(go[1]);
    int failed = 0;
    for (int i = 0; i < PG_WRITERS; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    assert_int_equal(failed, 0);
    char *labels = labels_of(uri);
    for (int i = 0; i < PG_WRITERS; i++) {
        char label[32];
        snprintf(label, sizeof label, "first-%02d", i);
        if (!strstr(labels, label)) fail_msg("%s lost: %s", label, labels);
    }
    assert_int_equal(strlen(labels), PG_WRITERS * 9 - 1);
    free(labels);
}

/* A writer that waits for the writers' lock past TG_HISTORY_BUSY_MS is
** refused ("locked by another writer"), having written nothing; a reader
** meanwhile reads without waiting; once the lock is free the append
** lands. */
static void test_writer_lock_timeout(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(append_one(uri, "r1", &d), TG_OK);
    bool exists;
    tg_store *holder = tg_store_pg_ops.open(uri, true, &exists, &d);
    assert_non_null(holder);
    assert_true(exists);
    assert_int_equal(tg_store_pg_ops.begin_write(holder, &d), TG_OK);

    setenv("TG_HISTORY_BUSY_MS", "200", 1);
    assert_int_equal(append_one(uri, "r2", &d), TG_EUSAGE);
    one_sentence(&d, TG_EUSAGE, "is locked by another writer", NULL);
    print_message("  %s\n", d.msgs[0].text);
    tg_diag_clear(&d);
    char *labels = labels_of(uri);
    assert_string_equal(labels, "r1");
    free(labels);
    unsetenv("TG_HISTORY_BUSY_MS");

    tg_store_pg_ops.rollback(holder);
    tg_store_pg_ops.close(holder);
    assert_int_equal(append_one(uri, "r2", &d), TG_OK);
    labels = labels_of(uri);
    assert_string_equal(labels, "r1,r2");
    free(labels);
    assert_int_equal(d.n_errors, 0);
}

/* ------------------------------------------------------------- the row */

typedef struct texts {
    char v[8][64];
    bool null[8];
    size_t n;
} texts;

static bool keep_row(void *ctx, size_t n, const char *const *cols)
{
    texts *t = ctx;
    for (size_t i = 0; i < n && t->n < 8; i++, t->n++) {
        t->null[t->n] = !cols[i];
        snprintf(t->v[t->n], sizeof t->v[t->n], "%s", cols[i] ? cols[i] : "");
    }
    return true;
}

/* Doubles go in as "%.17g" and come back as text that reads as the same
** double (extra_float_digits = 3), infinities and NaN included; NULL as
** NULL. The SQLite row returns "%.17g" itself: both read back alike. */
static void test_row_doubles(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    tg_diag d;
    tg_diag_init(&d);
    bool exists;
    tg_store *s = tg_store_pg_ops.open(uri, false, &exists, &d);
    assert_non_null(s);
    const double values[] = {0.1 + 0.2, 1.0 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -0.0,
                             123456789.123456789, 1e21, -1.5e-7, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char text[40];
        snprintf(text, sizeof text, "%.17g", values[i]);
        const char *const params[] = {text, NULL};
        texts t = {0};
        assert_int_equal(tg_store_pg_ops.exec(s, "SELECT CAST($1 AS DOUBLE PRECISION), CAST($2 AS DOUBLE PRECISION)",
                                              params, 2, keep_row, &t, &d),
                         TG_OK);
        assert_int_equal(t.n, 2);
        assert_false(t.null[0]);
        assert_true(t.null[1]);
        double back = strtod(t.v[0], NULL);
        if (isnan(values[i])) assert_true(isnan(back));
        else if (memcmp(&back, &values[i], sizeof back) != 0) fail_msg("%s came back as %s", text, t.v[0]);
    }
    tg_store_pg_ops.close(s);
    assert_int_equal(d.n_errors, 0);
}

/* A read transaction may not write (exit 2, one sentence); a transaction
** that failed cannot commit; the row is usable after both; a notice
** (CREATE TABLE IF NOT EXISTS of a table that is there) prints nothing. */
static void test_row_transactions(void **state)
{
    (void)state;
    const char *uri = fresh_db(NULL);
    tg_diag d;
    tg_diag_init(&d);
    bool exists = true;
    tg_store *s = tg_store_pg_ops.open(uri, true, &exists, &d);
    assert_non_null(s);
    assert_false(exists);
    assert_int_equal(tg_store_pg_ops.begin_write(s, &d), TG_OK);
    assert_int_equal(tg_store_pg_ops.script(s, "CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT);"
                                               "CREATE TABLE IF NOT EXISTS t (k TEXT)", &d), TG_OK);
    const char *const row1[] = {"a", NULL};
    assert_int_equal(tg_store_pg_ops.exec(s, "INSERT INTO t (k, v) VALUES ($1, $2)", row1, 2, NULL, NULL, &d), TG_OK);
    assert_int_equal(tg_store_pg_ops.commit(s, &d), TG_OK);

    assert_int_equal(tg_store_pg_ops.begin_read(s, &d), TG_OK);
    assert_int_equal(tg_store_pg_ops.exec(s, "INSERT INTO t (k) VALUES ('b')", NULL, 0, NULL, NULL, &d), TG_EUSAGE);
    one_sentence(&d, TG_EUSAGE, "read-only", NULL);
    tg_diag_clear(&d);
    tg_store_pg_ops.rollback(s);

    assert_int_equal(tg_store_pg_ops.begin_write(s, &d), TG_OK);
    assert_int_equal(tg_store_pg_ops.exec(s, "INSERT INTO t (k) VALUES ('a')", NULL, 0, NULL, NULL, &d), TG_EUSAGE);
    one_sentence(&d, TG_EUSAGE, "23505", NULL);   /* the constraint */
    tg_diag_clear(&d);
    assert_int_equal(tg_store_pg_ops.commit(s, &d), TG_EINTERNAL);
    one_sentence(&d, TG_EINTERNAL, "rolled the transaction back", NULL);
    tg_diag_clear(&d);
    tg_store_pg_ops.rollback(s);   /* nothing left to roll back: quiet */

    assert_int_equal(tg_store_pg_ops.begin_read(s, &d), TG_OK);
    texts t = {0};
    assert_int_equal(tg_store_pg_ops.exec(s, "SELECT k, v FROM t", NULL, 0, keep_row, &t, &d), TG_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.v[0], "a");
    assert_true(t.null[1]);
    assert_int_equal(tg_store_pg_ops.commit(s, &d), TG_OK);
    tg_store_pg_ops.close(s);
    assert_int_equal(d.n_errors, 0);
}

/* Which names the row claims: the two schemes, nothing else. */
static void test_row_claims(void **state)
{
    (void)state;
    assert_true(tg_store_pg_ops.claims("postgresql://host/db"));
    assert_true(tg_store_pg_ops.claims("postgres://u@host/db"));
    assert_false(tg_store_pg_ops.claims("postgresql:/host/db"));
    assert_false(tg_store_pg_ops.claims("history.sqlite"));
    assert_false(tg_store_pg_ops.claims("./postgresql://x"));
    assert_ptr_equal(tg_store_for("postgres://u@host/db"), &tg_store_pg_ops);
    assert_ptr_equal(tg_store_for("history.db"), &tg_store_sqlite_ops);
}

/* A setting that is not a number in its range is refused, naming it,
** before anything is connected; TG_HISTORY_BUSY_MS with the sentence the
** SQLite row gives (test_store.c, test_busy_setting). */
static void test_row_settings(void **state)
{
    (void)state;
    static const char *const bad[][2] = {{"TG_HISTORY_CONNECT_S", "abc"}, {"TG_HISTORY_CONNECT_S", "0"},
                                         {"TG_HISTORY_BUSY_MS", "-5"}, {"TG_HISTORY_BUSY_MS", "10s"}};
    char uri[1024];
    uri_of("postgres", NULL, NULL, uri, sizeof uri);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tg_diag d;
        tg_diag_init(&d);
        bool exists;
        setenv(bad[i][0], bad[i][1], 1);
        assert_null(tg_store_pg_ops.open(uri, false, &exists, &d));
        unsetenv(bad[i][0]);
        one_sentence(&d, TG_EUSAGE, bad[i][0], NULL);
        char want[200];
        snprintf(want, sizeof want,
                 "TG_HISTORY_BUSY_MS must be a whole number of milliseconds from 0 to 86400000, not '%s'", bad[i][1]);
        if (strcmp(bad[i][0], "TG_HISTORY_BUSY_MS") == 0) assert_string_equal(d.msgs[0].text, want);
        tg_diag_clear(&d);
    }
}

/* ------------------------------------------------------------- main */

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static bool pg_setup(void)
{
    const char *uri = getenv("TG_PG_URI");
    cluster.reader = getenv("TG_PG_READER");
    cluster.pw_role = getenv("TG_PG_PW_ROLE");
    cluster.pw = getenv("TG_PG_PW");
    if (!uri || !cluster.reader || !cluster.pw_role || !cluster.pw) return false;
    cluster.admin = PQconnectdb(uri);
    if (PQstatus(cluster.admin) != CONNECTION_OK) {
        fprintf(stderr, "test_store_pg: cannot connect to %s: %s", uri, PQerrorMessage(cluster.admin));
        exit(1);
    }
    PQsetNoticeProcessor(cluster.admin, quiet, NULL);
    pg_encode(PQhost(cluster.admin), cluster.host, sizeof cluster.host);
    snprintf(cluster.port, sizeof cluster.port, "%s", PQport(cluster.admin));
    cluster.user = PQuser(cluster.admin);
    return true;
}

int main(void)
{
    if (!pg_setup()) {
        printf("test_store_pg: SKIPPED: TG_PG_URI and the roles are set by tests/unit/history/pg_test.sh, which"
               " starts the server\n");
        return 77;
    }
    int failed = tg_store_cases_run(fresh_db, NULL, false);
    const struct CMUnitTest pg_tests[] = {
        cmocka_unit_test(test_row_claims),
        cmocka_unit_test(test_row_settings),
        cmocka_unit_test(test_row_doubles),
        cmocka_unit_test(test_row_transactions),
        cmocka_unit_test(test_server_absent),
        cmocka_unit_test(test_refused_login),
        cmocka_unit_test(test_password_with_at),
        cmocka_unit_test(test_other_tables),
        cmocka_unit_test(test_no_schema),
        cmocka_unit_test(test_newer_schema),
        cmocka_unit_test(test_read_only_role),
        cmocka_unit_test(test_writer_lock_timeout),
        cmocka_unit_test(test_first_writers),
    };
    failed += cmocka_run_group_tests_name("history_store_pg", pg_tests, NULL, NULL);
    PQfinish(cluster.admin);
    return failed ? 1 : 0;
}
