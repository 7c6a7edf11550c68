/*
** The naming rules in every language they are written in, on the same
** names: the API base name (tg_model_base_name_len in C,
** tg_sql_put_base_name in SQL, tg_jq_put_base_name in jq) and the NVTX
** name (the reader's row_name in C, tg_sql_put_nvtx_name in SQL). A rule
** written twice drifts (the SQL once stripped one _v<digits> where C
** strips them all), so each form is run, not read: the SQL in a real
** SQLite, the jq by the jq binary the reproduce programs are run with.
**
** The base names are the cases that drifted or sit on an edge, then every
** sequence of up to four pieces from the characters the rule looks at
** (_, v, digits, the suffixes, a control character the SQL form uses as a
** mark, a newline, a multi-byte character), so the class is covered, not
** the examples.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "fixture.h"
#include "model/model.h"
#include "model/model_jq.h"
#include "model/model_sql.h"
#include "trace/trace.h"

/* Base names by the rule as docs/rules.md states it (api.name). */
static const struct { const char *raw, *base; } spec[] = {
    {"cudaLaunchKernel_v7000", "cudaLaunchKernel"},
    {"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync"},
    {"cudaMemcpyAsync_ptsz_v7000", "cudaMemcpyAsync"},
    {"cudaGetDeviceProperties_v2_v12000", "cudaGetDeviceProperties"},
    {"cudaDeviceSynchronize_v3020", "cudaDeviceSynchronize"},
    {"cuda_vector", "cuda_vector"},
    {"cuda_v", "cuda_v"},
    {"cuda12_v3", "cuda12"},
    {"cuda12", "cuda12"},
    {"a_ptsz12_v3", "a_ptsz12"},
    {"x_v_ptsz", "x_v"},
    {"_ptsz_v7000", "_ptsz"},   /* something stays before the suffixes */
    {"_v2_v3", "_v2"},
    {"_ptsz", "_ptsz"},
    {"", ""},
};

static const char *const pieces[] = {"a", "_", "v", "_v", "1", "12", "_ptsz", "_ptds", "ptsz", "_v0",
                                     "\x01", "\x02", "\n", "\xc3\xa9"};
#define N_PIECES (sizeof pieces / sizeof *pieces)
#define MAX_PIECES 4

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static void add(names *ns, const char *s)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 1024;
        ns->v = realloc(ns->v, ns->cap * sizeof *ns->v);
        assert_non_null(ns->v);
    }
    ns->v[ns->n] = strdup(s);
    assert_non_null(ns->v[ns->n++]);
}

static void add_sequences(names *ns, char *buf, size_t len, int depth)
{
    buf[len] = 0;
    add(ns, buf);
    if (depth == MAX_PIECES) return;
    for (size_t i = 0; i < N_PIECES; i++) {
        size_t k = strlen(pieces[i]);
        memcpy(buf + len, pieces[i], k);
        add_sequences(ns, buf, len + k, depth + 1);
    }
}

static names all_names(void)
{
    names ns = {0};
    for (size_t i = 0; i < sizeof spec / sizeof *spec; i++) add(&ns, spec[i].raw);
    char buf[64];
    add_sequences(&ns, buf, 0, 0);
    return ns;
}

static void names_free(names *ns)
{
    for (size_t i = 0; i < ns->n; i++) free(ns->v[i]);
    free(ns->v);
}

static char *c_base(const char *s)
{
    char *b = strndup(s, tg_model_base_name_len(s, strlen(s)));
    assert_non_null(b);
    return b;
}

/* The SQL form on every name, in an in-memory database: out[i] malloc'd. */
static char **sql_bases(const names *ns)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE n(i INTEGER PRIMARY KEY, s TEXT)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *ins = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO n VALUES (?, ?)", -1, &ins, NULL), SQLITE_OK);
    for (size_t i = 0; i < ns->n; i++) {
        sqlite3_bind_int64(ins, 1, (sqlite3_int64)i);
        sqlite3_bind_text(ins, 2, ns->v[i], -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    char *expr = tg_sql_base_name("s");
    assert_non_null(expr);
    char *q = NULL;
    assert_true(asprintf(&q, "SELECT i, %s FROM n ORDER BY i", expr) > 0);
    free(expr);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
    if (rc != SQLITE_OK) fail_msg("%s: %s", sqlite3_errmsg(db), q);
    free(q);
    char **out = calloc(ns->n, sizeof *out);
    assert_non_null(out);
    size_t k = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        assert_int_equal(sqlite3_column_int64(st, 0), (sqlite3_int64)k);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        assert_non_null(v);
        out[k++] = strdup(v);
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_int_equal(k, ns->n);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The jq form on every name, by the jq binary; NULL when there is none. */
static char **jq_bases(const names *ns)
{
    if (system("jq --version >/dev/null 2>&1") != 0) return NULL;
    char dir[] = "/tmp/tg-naming-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char in[64], prog[64];
    snprintf(in, sizeof in, "%s/names.json", dir);
    snprintf(prog, sizeof prog, "%s/base.jq", dir);
    json_t *arr = json_array();
    for (size_t i = 0; i < ns->n; i++) assert_int_equal(json_array_append_new(arr, json_string(ns->v[i])), 0);
    assert_int_equal(json_dump_file(arr, in, 0), 0);
    json_decref(arr);
    FILE *f = fopen(prog, "w");
    assert_non_null(f);
    tg_jq_put_base_name(f);
    fputs(".[] | tg_base", f);
    assert_int_equal(fclose(f), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "jq -c -f '%s' '%s'", prog, in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char **out = calloc(ns->n, sizeof *out);
    assert_non_null(out);
    char *line = NULL;
    size_t cap = 0, k = 0;
    while (getline(&line, &cap, p) > 0) {
        json_error_t err;
        json_t *v = json_loads(line, JSON_DECODE_ANY, &err);
        if (!v || !json_is_string(v) || k >= ns->n) fail_msg("jq printed %s", line);
        out[k++] = strdup(json_string_value(v));
        json_decref(v);
    }
    free(line);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(k, ns->n);
    unlink(in);
    unlink(prog);
    rmdir(dir);
    return out;
}

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* The rule's own cases, in C. */
static void test_base_name_spec(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof spec / sizeof *spec; i++) {
        char *b = c_base(spec[i].raw);
        if (strcmp(b, spec[i].base) != 0) fail_msg("%s: base %s, want %s", spec[i].raw, b, spec[i].base);
        free(b);
    }
}

/* C, SQL and jq agree on every name. */
static void test_base_name_three_languages(void **state)
{
    (void)state;
    names ns = all_names();
    char **sql = sql_bases(&ns), **jq = jq_bases(&ns);
    size_t differ = 0;
    for (size_t i = 0; i < ns.n; i++) {
        char *c = c_base(ns.v[i]);
        bool sql_ok = strcmp(c, sql[i]) == 0, jq_ok = !jq || strcmp(c, jq[i]) == 0;
        if ((!sql_ok || !jq_ok) && differ++ < 10)
            print_error("name \"%s\": C \"%s\", SQL \"%s\", jq \"%s\"\n", ns.v[i], c, sql[i], jq ? jq[i] : "-");
        free(c);
    }
    printf("base names: %zu names, C against SQL%s, %zu differ\n", ns.n, jq ? " and jq" : " (no jq on PATH)", differ);
    free_all(sql, ns.n);
    free_all(jq, ns.n);
    names_free(&ns);
    assert_int_equal(differ, 0);
    if (!jq) {
        print_message("SKIP: no jq on PATH: the jq form was not run\n");
        skip();
    }
}

/* NVTX names: text only, textId only, both (textId wins), neither, and a
** textId naming no string (text then); read by the reader and by the SQL
** on the same export. */
static void test_nvtx_name_c_and_sql(void **state)
{
    (void)state;
    static const struct { const char *text, *text_id, *want; } rows[] = {
        {"'plain'", "NULL", "plain"},
        {"NULL", "1", "registered"},
        {"'inline'", "2", "wins"},
        {"NULL", "NULL", NULL},
        {"'fallback'", "99", "fallback"},
        {"''", "NULL", ""},
    };
    size_t n = sizeof rows / sizeof *rows;
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (1, 'registered'), (2, 'wins');"));
    for (size_t i = 0; i < n; i++)
        assert_true(tg_fixture_append(&sql, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid) "
                                            "VALUES (%zu, %zu, 59, %s, %s, %lld);",
                                      100 * (i + 1), 100 * (i + 1) + 50, rows[i].text, rows[i].text_id,
                                      (long long)tg_fixture_gtid(7, 7)));
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    tg_diag d;
    tg_diag_init(&d);
    tg_trace *t = tg_trace_open(path, &d);
    assert_non_null(t);
    assert_int_equal(t->n_nvtx, n);

    char *expr = tg_sql_nvtx_name(t, "");
    assert_non_null(expr);
    char *q = NULL;
    assert_true(asprintf(&q, "SELECT rowid, %s FROM NVTX_EVENTS", expr) > 0);
    free(expr);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    free(q);
    size_t seen = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t rowid = sqlite3_column_int64(st, 0);
        const char *got = (const char *)sqlite3_column_text(st, 1);
        const tg_nvtx *r = NULL;
        for (size_t i = 0; i < t->n_nvtx; i++)
            if (t->nvtx[i].rowid == rowid) r = &t->nvtx[i];
        assert_non_null(r);
        size_t k = (size_t)(r->start / 100 - 1);
        assert_true(k < n);
        const char *c = r->name >= 0 ? tg_strpool_get(t->strings, r->name) : NULL;
        if (!rows[k].want) {
            assert_null(c);
            assert_null(got);
        } else {
            assert_non_null(c);
            assert_non_null(got);
            assert_string_equal(c, rows[k].want);
            assert_string_equal(got, rows[k].want);
        }
        seen++;
    }
    assert_int_equal(seen, n);
    sqlite3_finalize(st);
    sqlite3_close(db);
    tg_trace_close(t);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_name_spec),
        cmocka_unit_test(test_base_name_three_languages),
        cmocka_unit_test(test_nvtx_name_c_and_sql),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
