/*
** Corpus test: "no number without its source". For every built-in rule, on
** a real trace where it fires, the `reproduce` SQL of the finding, run with
** the sqlite3 C API on the (read-only) trace, must return exactly the rows
** the evidence cites: the same (table, rowid) pairs, no more, no fewer.
** Derived rows cite the ops they stand on: a gap its bounding ops
** (rowid, next_rowid), a device its first and last op (rowid, last_rowid).
** Regression rules are covered through a baseline recorded on the fly.
** Skips with a message when ../shared is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


typedef struct pair {
    char table[128];
    long long rowid;
} pair;

typedef struct pairs {
    pair v[4096];
    size_t n;
} pairs;

static void add(pairs *p, const char *table, long long rowid)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].rowid == rowid && strcmp(p->v[i].table, table) == 0) return;
    if (p->n < sizeof p->v / sizeof *p->v) {
        snprintf(p->v[p->n].table, sizeof p->v[p->n].table, "%s", table);
        p->v[p->n++].rowid = rowid;
    }
}

static bool same(const pairs *a, const pairs *b)
{
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        bool found = false;
        for (size_t j = 0; j < b->n && !found; j++)
            found = a->v[i].rowid == b->v[j].rowid && !strcmp(a->v[i].table, b->v[j].table);
        if (!found) return false;
    }
    return true;
}

/* The rows the reproduce SQL returns, as (table, rowid). */
static bool run_sql(const char *trace, const char *sql, const char *default_table, pairs *out)
{
    char uri[4096];
    snprintf(uri, sizeof uri, "file:%s?mode=ro&immutable=1", trace);
    sqlite3 *db;
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) return false;
    sqlite3_stmt *st;
    bool ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK;
    if (!ok) print_error("reproduce SQL does not prepare: %s\n  %s\n", sqlite3_errmsg(db), sql);
    int table_col = -1, rowid_col = -1;
    for (int c = 0; ok && c < sqlite3_column_count(st); c++) {
        const char *name = sqlite3_column_name(st, c);
        if (!strcmp(name, "source_table")) table_col = c;
        if (!strcmp(name, "rowid")) rowid_col = c;
    }
    if (ok && rowid_col < 0) {
        print_error("reproduce SQL returns no rowid column: %s\n", sql);
        ok = false;
    }
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        const char *table = table_col >= 0 ? (const char *)sqlite3_column_text(st, table_col) : default_table;
        add(out, table ? table : "?", sqlite3_column_int64(st, rowid_col));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ok;
}

/* The rows the evidence cites. */
static void cited(json_t *evidence, pairs *out, const char **first_table)
{
    size_t i;
    json_t *e;
    json_array_foreach(evidence, i, e) {
        const char *table = json_string_value(json_object_get(e, "table"));
        if (!*first_table) *first_table = table;
        add(out, table, (long long)json_integer_value(json_object_get(e, "rowid")));
        json_t *f = json_object_get(e, "fields");
        const char *links[][2] = {{"next_table", "next_rowid"}, {"last_table", "last_rowid"}};
        for (int k = 0; k < 2; k++) {
            json_t *t = json_object_get(f, links[k][0]), *r = json_object_get(f, links[k][1]);
            if (json_is_string(t) && json_is_integer(r))
                add(out, json_string_value(t), (long long)json_integer_value(r));
        }
    }
}

static json_t *check(const char *trace, const char *extra)
{
    return corpus_json(NULL, "check --format json --missing-data=skip %s '%s'", extra, trace);
}

static const char *builtin_rules[] = {
    "sync-memcpy", "pageable-async-memcpy", "sync-memset", "blocking-sync-api", "gpu-idle-gap",
    "low-gpu-utilization", "gpu-starvation", "iteration-variance", "low-nccl-overlap",
    "iteration-time-regression", "gpu-time-regression",
};
#define N_RULES (sizeof builtin_rules / sizeof *builtin_rules)

static int verify_trace(const char *rel, const char *extra, bool covered[N_RULES])
{
    char trace[2048];
    snprintf(trace, sizeof trace, "%s/%s", corpus_traces, rel);
    json_t *doc = check(trace, extra);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    int bad = 0;
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        json_t *evidence = json_object_get(r, "evidence");
        const char *sql = json_string_value(json_object_get(r, "reproduce"));
        const char *rule = json_string_value(json_object_get(r, "rule"));
        if (json_array_size(evidence) == 0) continue;
        if (!sql) {
            print_error("%s %s: evidence without a reproduce statement\n", rel, rule);
            bad++;
            continue;
        }
        /* grouped evidence cites groups: its GROUP BY query is checked
        ** against the groups' counts by test_copy_share_corpus.c */
        if (strstr(sql, " GROUP BY ")) continue;
        pairs want = {0}, got = {0};
        const char *first_table = NULL;
        cited(evidence, &want, &first_table);
        if (!run_sql(trace, sql, first_table, &got) || !same(&want, &got)) {
            print_error("%s %s: reproduce returns %zu rows, evidence cites %zu\n  %s\n", rel, rule, got.n,
                        want.n, sql);
            bad++;
            continue;
        }
        for (size_t k = 0; k < N_RULES; k++)
            if (!strcmp(builtin_rules[k], rule)) covered[k] = true;
    }
    json_decref(doc);
    return bad;
}

static void test_reproduce_returns_cited_rows(void **state)
{
    (void)state;
    static const char *traces[] = {
        "h200-nsys/drv_sync_memcpy.sqlite", "h200-nsys/drv_pageable_async.sqlite",
        "h200-nsys/drv_memset_pinned.sqlite", "h200-nsys/drv_sync_api.sqlite",
        "h200-nsys/drv_gaps.sqlite", "h200-nsys/drv_starve.sqlite", "h200-nsys/drv_jitter.sqlite",
        "h200-torch/ddp_bad.sqlite", "h200-torch/gpu_idle_bad.sqlite",
        "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    };
    bool covered[N_RULES] = {0};
    int bad = 0;
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) bad += verify_trace(traces[i], "", covered);

    /* regression rules cite the iterations behind their metric */
    char dir[] = "/tmp/tg-reproduce-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char base[256], extra[512];
    snprintf(base, sizeof base, "%s/base.yaml", dir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/h200-torch/realistic_baseline_run1.sqlite' "
                                "'%s/h200-torch/realistic_baseline_run2.sqlite'", base, corpus_traces,
                                corpus_traces), 0);
    snprintf(extra, sizeof extra, "--baseline '%s'", base);
    bad += verify_trace("h200-torch/realistic_regressed.sqlite", extra, covered);
    unlink(base);
    rmdir(dir);

    for (size_t k = 0; k < N_RULES; k++)
        if (!covered[k]) {
            print_error("rule %s: no finding with evidence was verified\n", builtin_rules[k]);
            bad++;
        }
    assert_int_equal(bad, 0);
}

int main(void)
{
    if (!corpus_init("reproduce SQL")) return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reproduce_returns_cited_rows)};
    return cmocka_run_group_tests_name("reproduce SQL", tests, NULL, NULL);
}
