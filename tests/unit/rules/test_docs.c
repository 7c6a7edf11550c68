/*
** The design documents against the lists they describe: docs/rules.md
** names (in backquotes) every rule key, operator, aggregate, unit suffix,
** baseline statistic, engine param and severity of the rule language, and
** docs/architecture.md every folder of engine/ and every .def list in it.
** A name added to a list without its documentation fails here. (The field
** reference is checked whole by the `docs` test: tools/rules-doc.sh.)
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rules/load.h"
#include "tg_config.h"

static const char *root(void)
{
    const char *r = getenv("TG_SOURCE_ROOT");
    return r && *r ? r : TG_SOURCE_ROOT;
}

/* The whole of root/rel, NUL-terminated (malloc'd). */
static char *slurp(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root(), rel);
    FILE *f = fopen(path, "rb");
    if (!f) print_message("cannot open %s\n", path);
    assert_non_null(f);
    size_t len = 0, cap = 1 << 16;
    char *s = malloc(cap);
    size_t got;
    while ((got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) s = realloc(s, cap *= 2);
    }
    s[len] = 0;
    fclose(f);
    return s;
}

static int missing;

/* doc holds `prefix NAME` in backquotes. */
static void expect_code(const char *doc, const char *what, const char *prefix, const char *name)
{
    char pat[768];
    snprintf(pat, sizeof pat, "`%s%s`", prefix, name);
    if (strstr(doc, pat)) return;
    print_message("%s: %s is not documented\n", what, pat);
    missing++;
}

static void test_rules_md(void **state)
{
    (void)state;
    char *doc = slurp("docs/rules.md");
    missing = 0;
    for (int i = 0; i < TG_RK_COUNT; i++) expect_code(doc, "rule key", "", tg_rule_key_names[i]);
    for (int i = 0; i < TG_N_COUNT; i++) {
        tg_node_class c = tg_node_classes[i];
        if (c == TG_NC_CMP || c == TG_NC_LOGIC || c == TG_NC_ARITH) expect_code(doc, "operator", "", tg_node_spelling[i]);
    }
    expect_code(doc, "operator", "", "not");
    for (int i = 0; i < TG_AGG_COUNT_KINDS; i++) expect_code(doc, "aggregate", "", tg_agg_defs[i].name);
    for (size_t i = 0; i < tg_unit_suffix_count; i++) expect_code(doc, "unit suffix", "", tg_unit_suffixes[i].suffix);
    for (int i = 0; i < TG_BSTAT_COUNT; i++) expect_code(doc, "baseline statistic", "baseline.", tg_baseline_stat_names[i]);
    static const char *const engine_params[] = {
#define TG_ENGINE_PARAM(name, lo, lo_open, hi, hi_open, meaning) name,
#include "rules/params.def"
#undef TG_ENGINE_PARAM
    };
    for (size_t i = 0; i < sizeof engine_params / sizeof *engine_params; i++)
        expect_code(doc, "engine param", "", engine_params[i]);
    for (int i = 0; i < TG_SEV_COUNT; i++) expect_code(doc, "severity", "", tg_severity_names[i]);
    for (int i = 0; i < TG_SRC_COUNT; i++) expect_code(doc, "source", "", tg_source_defs[i].name);
    static const char *const file_keys[] = {"version", "lists", "macros", "rules", "override", "append"};
    for (size_t i = 0; i < sizeof file_keys / sizeof *file_keys; i++) expect_code(doc, "file key", "", file_keys[i]);
    free(doc);
    assert_int_equal(missing, 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_architecture_md(void **state)
{
    (void)state;
    char *doc = slurp("docs/architecture.md");
    missing = 0;
    char engine[4096];
    snprintf(engine, sizeof engine, "%s/engine", root());
    DIR *d = opendir(engine);
    assert_non_null(d);
    char *layers[64];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;) {
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", engine, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) layers[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(layers, n, sizeof *layers, cmp_str);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        char name[640];
        snprintf(name, sizeof name, "engine/%s", layers[i]);
        expect_code(doc, "layer", "", name);
        snprintf(engine, sizeof engine, "%s/engine/%s", root(), layers[i]);
        DIR *ld = opendir(engine);
        for (struct dirent *e; ld && (e = readdir(ld));) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 4, ".def")) continue;
            snprintf(name, sizeof name, "engine/%s/%s", layers[i], e->d_name);
            expect_code(doc, "vocabulary list", "", name);
        }
        if (ld) closedir(ld);
        free(layers[i]);
    }
    expect_code(doc, "the layer matrix", "", "ci/layers.sh");
    free(doc);
    assert_int_equal(missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_md),
        cmocka_unit_test(test_architecture_md),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
