/*
** Kernel families (engine/model/model_family.h): the definition over the
** names of the real traces (family_names.tsv: templates, lambdas,
** `(anonymous namespace)` and `<unnamed>` namespaces, nvFuser, cutlass,
** mangled, Triton, cuBLAS and cuDNN kernels) and over the edge cases of
** its steps; and its SQL and jq mirrors, which must select for each
** family exactly the names the definition puts in it (the reproduce
** queries of the workload's entries are built from them).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model_family.h"

typedef struct kcase {
    char *name, *family;
} kcase;

static kcase cases[256];
static size_t n_cases;
static const char *names_file;

/* Names that the traces do not hold, one per step of the definition. */
static const char *const edge[][2] = {
    {"CudaCodeGen::kernel1(CudaCodeGen::Tensor<float, 2>, CudaCodeGen::Tensor<float, 2>)", "kernel1"},
    {"(anonymous namespace)::softmax_warp_forward<float>(float*)", "softmax_warp_forward"},
    {"saxpy", "saxpy"},
    {"<weird>", "<weird>"},       /* no head: the whole name */
    {"", ""},
    {"void ", "void "},           /* the head ends in a separator */
    {"a::", "a::"},
    {"triton__5", "triton__5"},   /* no op list before the index */
    {"triton_x_1_2", "triton_x_1"},
    {"triton_x12", "triton_x12"},
    {"void triton_poi_fused_mul_3(float*)", "triton_poi_fused_mul"},
    {"foo::bar_7", "bar_7"},      /* the index is only dropped for Triton */
};

static char *copy_of(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int setup(void **state)
{
    (void)state;
    FILE *f = fopen(names_file, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", names_file);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0 && n_cases < sizeof cases / sizeof *cases) {
        if (line[0] == '#') continue;
        if (line[len - 1] == '\n') line[--len] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        cases[n_cases].name = copy_of(tab + 1, strlen(tab + 1));
        cases[n_cases].family = strncmp(line, "=", (size_t)(tab - line)) || tab - line != 1
                                    ? copy_of(line, (size_t)(tab - line)) : copy_of(tab + 1, strlen(tab + 1));
        n_cases++;
    }
    free(line);
    fclose(f);
    for (size_t i = 0; i < sizeof edge / sizeof *edge && n_cases < sizeof cases / sizeof *cases; i++) {
        cases[n_cases].name = copy_of(edge[i][0], strlen(edge[i][0]));
        cases[n_cases].family = copy_of(edge[i][1], strlen(edge[i][1]));
        n_cases++;
    }
    return n_cases > 20 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < n_cases; i++) {
        free(cases[i].name);
        free(cases[i].family);
    }
    return 0;
}

static void test_definition(void **state)
{
    (void)state;
    for (size_t i = 0; i < n_cases; i++) {
        size_t from, n;
        tg_kernel_family_span(cases[i].name, strlen(cases[i].name), &from, &n);
        char *got = copy_of(cases[i].name + from, n);
        if (strcmp(got, cases[i].family))
            fail_msg("'%.200s': family '%s', expected '%s'", cases[i].name, got, cases[i].family);
        free(got);
    }
}

/* For each family, the SQL test over all the names selects its own. */
static void test_sql_agrees(void **state)
{
    (void)state;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE k(name TEXT)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO k VALUES (?)", -1, &ins, NULL), SQLITE_OK);
    for (size_t i = 0; i < n_cases; i++) {
        sqlite3_bind_text(ins, 1, cases[i].name, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    for (size_t i = 0; i < n_cases; i++) {
        char *sql = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&sql, &len);
        assert_non_null(f);
        fputs("SELECT op.name FROM (", f);
        tg_family_sql_put_rows(f, "SELECT name FROM k");
        fputs(") op WHERE ", f);
        tg_family_sql_put_test(f, "op", cases[i].family);
        assert_int_equal(fclose(f), 0);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sqlite3_errmsg(db), sql);
        size_t want = 0, got = 0;
        for (size_t k = 0; k < n_cases; k++) want += !strcmp(cases[k].family, cases[i].family);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 0);
            got++;
            bool member = false;
            for (size_t k = 0; k < n_cases && !member; k++)
                member = !strcmp(cases[k].name, name) && !strcmp(cases[k].family, cases[i].family);
            if (!member) fail_msg("family '%s': the SQL selects '%.200s'", cases[i].family, name);
        }
        sqlite3_finalize(st);
        if (got != want) fail_msg("family '%s': the SQL selects %zu names, the definition %zu", cases[i].family, got, want);
        free(sql);
    }
    sqlite3_close(db);
}

/* jq's tg_family gives each name's family. */
static void test_jq_agrees(void **state)
{
    (void)state;
    if (system("command -v jq >/dev/null 2>&1") != 0) {
        fprintf(stderr, "jq is not installed: the jq mirror is not run\n");
        skip();
    }
    char dir[] = "/tmp/tg-family-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char in[64], prog[64], cmd[256];
    snprintf(in, sizeof in, "%s/names.json", dir);
    snprintf(prog, sizeof prog, "%s/family.jq", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n_cases; i++) {
        json_t *s = json_string(cases[i].name);
        char *text = json_dumps(s, JSON_ENCODE_ANY);
        fprintf(f, "%s\n", text);
        free(text);
        json_decref(s);
    }
    fclose(f);
    f = fopen(prog, "w");
    assert_non_null(f);
    fprintf(f, "%s tg_family", tg_family_jq_def);
    fclose(f);
    snprintf(cmd, sizeof cmd, "jq -c -f '%s' '%s'", prog, in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0, i = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, p)) > 0 && i < n_cases) {
        json_t *got = json_loads(line, JSON_DECODE_ANY, NULL);
        assert_non_null(got);
        if (strcmp(json_string_value(got), cases[i].family))
            fail_msg("'%.200s': jq's family '%s', expected '%s'", cases[i].name, json_string_value(got),
                     cases[i].family);
        json_decref(got);
        i++;
    }
    free(line);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(i, n_cases);
    unlink(in);
    unlink(prog);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    names_file = argc > 1 ? argv[1] : "family_names.tsv";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition),
        cmocka_unit_test(test_sql_agrees),
        cmocka_unit_test(test_jq_agrees),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
