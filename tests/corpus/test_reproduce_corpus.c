/*
** Corpus test: every number a finding states comes back from its
** reproduce SQL (docs/evidence.md). On every nsys export of ../shared/traces,
** every result that carries a reproduce text (failures, and the regression
** rules, which cite their iterations) has it run through SQLite on the
** read-only export, statement by statement, and:
**
**   - the values statement names every member of the result's `values`
**     and gives it: counts and other integers exactly, other numbers within
**     0.1%;
**   - the cited-rows statement returns one row per evidence entry, by its
**     key (rowid; a gap's device, process and start; a device; a group's
**     fields), with every evidence field (and the cited rows: a gap's
**     bounding ops, a device's first and last op) as the evidence says.
**
** Device rules are also run on the pass side: where one passes, again with
** its thresholds moved so that every device matches (--set), which checks
** the busy fractions, queue-time medians and NCCL overlaps of busy, fed and
** overlapped devices too. The regression rules are covered with a baseline
** recorded on the fly. Every built-in rule must have been verified on a
** finding. Skips with a message when ../shared is absent.
**
** TG_CORPUS_QUICK=1 (the sanitizer and valgrind runs of ci/test.sh, where
** SQLite itself runs 5-50x slower): the small exports that make every
** rule but alloc-in-loop fire and the device rules pass (ddp_good's NCCL
** overlap) (alloc-in-loop fires only on realistic_nocache, whose
** queries take seconds; tests/unit/eval/test_sql_values.c covers grouped
** evidence there), and the regression rules on the drv_train series.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"
#include "sqlrun.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REL 1e-3    /* 0.1% */

static const char *builtin_rules[] = {
    "sync-memcpy", "pageable-async-memcpy", "sync-memset", "blocking-sync-api", "gpu-idle-gap",
    "low-gpu-utilization", "gpu-starvation", "iteration-variance", "low-nccl-overlap", "alloc-in-loop",
    "copy-dominated", "iteration-time-regression", "gpu-time-regression", "kernel-launch-bound",
};
#define N_RULES (sizeof builtin_rules / sizeof *builtin_rules)

/* The device rules and the --set that makes every device match. */
static const char *const device_rules[][2] = {
    {"low-gpu-utilization", "--set low-gpu-utilization.min_busy=101%"},
    {"gpu-starvation", "--set gpu-starvation.max_queue=1h --set gpu-starvation.min_busy=101%"},
    {"low-nccl-overlap", "--set low-nccl-overlap.min_overlap=101%"},
};

typedef struct tally {
    bool finding[N_RULES];     /* verified on a finding (count > 0) */
    bool pass_side[N_RULES];   /* a device rule verified where it passes */
    int bad;
    size_t results;
} tally;

static int rule_index(const char *rule)
{
    for (size_t k = 0; rule && k < N_RULES; k++)
        if (!strcmp(builtin_rules[k], rule)) return (int)k;
    return -1;
}

/* The SQL column of an evidence field: ns fields end in _ns. */
static json_t *column_of(json_t *row, const char *field)
{
    json_t *v = json_object_get(row, field);
    if (v) return v;
    char name[160];
    snprintf(name, sizeof name, "%s_ns", field);
    return json_object_get(row, name);
}

/* Count a problem and say it; false, for `return bad(...)`. */
static bool __attribute__((format(printf, 2, 3))) bad(tally *t, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("%s", msg);
    t->bad++;
    return false;
}

/* The values statement gives every value of the finding. */
static bool check_values(tally *t, const char *where, json_t *values, json_t *set)
{
    json_t *row = json_array_get(set, 0);
    if (json_array_size(set) != 1) return bad(t, "%s: the values statement gives %zu rows\n", where, json_array_size(set));
    const char *name;
    json_t *v;
    json_object_foreach(values, name, v) {
        json_t *got = json_object_get(row, name);
        if (!got) bad(t, "%s: the reproduce query does not give %s\n", where, name);
        else if (!sqlrun_agrees(v, got, REL)) {
            char *a = json_dumps(v, JSON_ENCODE_ANY), *b = json_dumps(got, JSON_ENCODE_ANY);
            bad(t, "%s: %s is %s in the finding, %s in SQL\n", where, name, a, b);
            free(a);
            free(b);
        }
    }
    return true;
}

/* Does SQL row `row` hold evidence entry e (its key and every field)? */
static bool row_holds(json_t *e, json_t *row, bool grouped, const char **why)
{
    json_t *f = json_object_get(e, "fields");
    const char *interval = json_string_value(json_object_get(e, "interval"));
    if (!grouped && !interval) {
        if (!sqlrun_agrees(json_object_get(e, "rowid"), json_object_get(row, "rowid"), 0)) return *why = "rowid", false;
        if (!sqlrun_agrees(json_object_get(e, "start"), json_object_get(row, "start_ns"), 0)) return *why = "start", false;
        if (!sqlrun_agrees(json_object_get(e, "end"), json_object_get(row, "end_ns"), 0)) return *why = "end", false;
    } else if (interval && !strcmp(interval, "idle")) {
        /* a gap: its bounding ops */
        if (!sqlrun_agrees(json_object_get(e, "start"), json_object_get(row, "start_ns"), 0)) return *why = "start", false;
        if (!sqlrun_agrees(json_object_get(e, "rowid"), json_object_get(row, "before_rowid"), 0) ||
            !sqlrun_agrees(json_object_get(e, "table"), json_object_get(row, "before_table"), 0))
            return *why = "the op before the gap", false;
        if (!sqlrun_agrees(json_object_get(f, "next_rowid"), json_object_get(row, "after_rowid"), 0))
            return *why = "the op after the gap", false;
        json_t *len = json_object_get(row, "before_duration_ns");
        json_int_t own = json_integer_value(json_object_get(e, "row_end")) -
                         json_integer_value(json_object_get(e, "row_start"));
        if (!json_is_integer(len) || json_integer_value(len) != own) return *why = "the cited op's span", false;
    } else if (interval && !strcmp(interval, "device")) {
        if (!sqlrun_agrees(json_object_get(e, "rowid"), json_object_get(row, "first_rowid"), 0))
            return *why = "the device's first op", false;
    }
    const char *name;
    json_t *v;
    json_object_foreach(f, name, v) {
        if (!strcmp(name, "next_table") || !strcmp(name, "next_rowid") || !strcmp(name, "other_groups")) continue;
        if (!sqlrun_agrees(v, column_of(row, name), REL)) return *why = name, false;
    }
    return true;
}

/* The cited-rows statement: one row per evidence entry. */
static void check_rows(tally *t, const char *where, json_t *evidence, json_t *set, bool grouped)
{
    if (json_array_size(set) != json_array_size(evidence)) {
        bad(t, "%s: %zu rows in SQL, %zu cited\n", where, json_array_size(set), json_array_size(evidence));
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(evidence, i, e) {
        const char *why = "no row", *first_why = NULL;
        bool found = false;
        for (size_t k = 0; k < json_array_size(set) && !found; k++) {
            found = row_holds(e, json_array_get(set, k), grouped, &why);
            if (!found && !first_why && k == i) first_why = why;
        }
        if (!found) {
            char *a = json_dumps(e, JSON_COMPACT), *b = json_dumps(json_array_get(set, i), JSON_COMPACT);
            bad(t, "%s: evidence entry %zu has no row in SQL (%s differs)\n  cited: %s\n  SQL:   %s\n", where, i,
                first_why ? first_why : why, a, b);
            free(a);
            free(b);
        }
    }
}

/* Run one result's reproduce text and check it; true when it was a
** finding whose numbers all came back. */
static bool verify_result(tally *t, const char *trace, const char *label, json_t *r)
{
    const char *rule = json_string_value(json_object_get(r, "rule"));
    const char *sql = json_string_value(json_object_get(r, "reproduce"));
    json_t *values = json_object_get(r, "values"), *evidence = json_object_get(r, "evidence");
    char where[512], err[512];
    snprintf(where, sizeof where, "%s %s%s", label, rule, strstr(label, "--set") ? " (pass side)" : "");
    if (!sql) return false;
    t->results++;
    if (!strncmp(sql, "/*", 2)) return bad(t, "%s: the values are not reproduced: %.200s\n", where, sql);
    json_t *sets = sqlrun(trace, sql, err, sizeof err);
    if (!sets) return bad(t, "%s: the reproduce query fails: %s\n", where, err);
    int before = t->bad;
    check_values(t, where, values, json_array_get(sets, 0));
    bool grouped = strstr(sql, " GROUP BY matched.") != NULL;
    if (json_array_size(evidence)) check_rows(t, where, evidence, json_array_get(sets, 1), grouped);
    else if (json_array_size(sets) != 1) bad(t, "%s: %zu result sets without evidence\n", where, json_array_size(sets));
    json_decref(sets);
    return t->bad == before && json_integer_value(json_object_get(values, "count")) > 0;
}

/* Check every result of `check EXTRA TRACE` that has a reproduce text;
** only = a rule id to check alone (NULL: all). */
static void verify_run(tally *t, const char *trace, const char *label, const char *extra, const char *only,
                       bool *pass_side)
{
    json_t *doc = corpus_json(NULL, "check --format json --missing-data=skip %s '%s'", extra, trace);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *rule = json_string_value(json_object_get(r, "rule"));
        if (only && strcmp(only, rule)) continue;
        int k = rule_index(rule);
        bool ok = verify_result(t, trace, label, r);
        if (ok && k >= 0) (pass_side ? pass_side : t->finding)[k] = true;
    }
    json_decref(doc);
}

static void verify_trace(tally *t, const char *rel)
{
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/%s", corpus_traces, rel);
    verify_run(t, trace, rel, "", NULL, NULL);
    /* device rules where they pass: with every device matching */
    json_t *doc = corpus_json(NULL, "check --format json --missing-data=skip '%s'", trace);
    for (size_t d = 0; d < sizeof device_rules / sizeof *device_rules; d++) {
        if (strcmp(corpus_status(doc, device_rules[d][0]), "pass")) continue;
        char label[4400];
        snprintf(label, sizeof label, "%s %s", rel, device_rules[d][1]);
        verify_run(t, trace, label, device_rules[d][1], device_rules[d][0], t->pass_side);
    }
    json_decref(doc);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The exports (*.sqlite) of the corpus's folders, sorted. */
static size_t list_exports(char **out, size_t cap)
{
    static const char *const dirs[] = {"h200-nsys", "h200-torch", "public"};
    size_t n = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus_traces, dirs[d]);
        DIR *dir = opendir(path);
        for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
            size_t len = strlen(e->d_name);
            if (len < 8 || strcmp(e->d_name + len - 7, ".sqlite") || n == cap) continue;
            out[n] = malloc(strlen(dirs[d]) + len + 2);
            sprintf(out[n++], "%s/%s", dirs[d], e->d_name);
        }
        if (dir) closedir(dir);
    }
    qsort(out, n, sizeof *out, cmp_str);
    return n;
}

/* The quick run's exports (see the head of this file). */
static const char *const quick_exports[] = {
    "h200-nsys/drv_busy.sqlite", "h200-nsys/drv_gaps.sqlite", "h200-nsys/drv_memset_pinned.sqlite",
    "h200-nsys/drv_pageable_async.sqlite", "h200-nsys/drv_starve.sqlite", "h200-nsys/drv_sync_api.sqlite",
    "h200-nsys/drv_sync_memcpy.sqlite",
    "h200-torch/ddp_bad.sqlite", "h200-torch/ddp_good.sqlite",
};

static void test_reproduce_gives_every_value(void **state)
{
    (void)state;
    tally t = {0};
    const char *quick_env = getenv("TG_CORPUS_QUICK");
    bool quick = quick_env && !strcmp(quick_env, "1");
    char *exports[256];
    size_t n;
    if (quick) {
        n = sizeof quick_exports / sizeof *quick_exports;
        for (size_t i = 0; i < n; i++) exports[i] = strdup(quick_exports[i]);
        printf("reproduce corpus: TG_CORPUS_QUICK=1: %zu exports, alloc-in-loop not checked\n", n);
    } else {
        n = list_exports(exports, 256);
        assert_true(n >= 30);
    }
    for (size_t i = 0; i < n; i++) {
        verify_trace(&t, exports[i]);
        free(exports[i]);
    }

    /* regression rules against a baseline: their iterations and p50s */
    const char *series = quick ? "h200-nsys/drv_train_run" : "h200-torch/realistic_baseline_run";
    const char *now = quick ? "h200-nsys/drv_train_run3.sqlite" : "h200-torch/realistic_regressed.sqlite";
    char dir[] = "/tmp/tg-reproduce-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char base[256], extra[512], trace[4096], label[4400];
    snprintf(base, sizeof base, "%s/base.yaml", dir);
    assert_int_equal(corpus_run("baseline record -o '%s' '%s/%s1.sqlite' '%s/%s2.sqlite'", base, corpus_traces,
                                series, corpus_traces, series), 0);
    snprintf(extra, sizeof extra, "--baseline '%s'", base);
    snprintf(trace, sizeof trace, "%s/%s", corpus_traces, now);
    snprintf(label, sizeof label, "%s --baseline %s1+2", now, series);
    verify_run(&t, trace, label, extra, "iteration-time-regression", NULL);
    verify_run(&t, trace, label, extra, "gpu-time-regression", NULL);
    unlink(base);
    rmdir(dir);

    for (size_t k = 0; k < N_RULES; k++)
        if (!t.finding[k] && !(quick && !strcmp(builtin_rules[k], "alloc-in-loop"))) {
            print_error("rule %s: no finding had its values reproduced\n", builtin_rules[k]);
            t.bad++;
        }
    for (size_t d = 0; d < sizeof device_rules / sizeof *device_rules; d++)
        if (!t.pass_side[rule_index(device_rules[d][0])]) {
            print_error("rule %s: never checked where it passes\n", device_rules[d][0]);
            t.bad++;
        }
    printf("reproduce corpus: %zu exports, %zu results' reproduce queries run, %d problems\n", n, t.results, t.bad);
    assert_int_equal(t.bad, 0);
}

int main(void)
{
    if (!corpus_init("reproduce SQL")) return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_reproduce_gives_every_value)};
    return cmocka_run_group_tests_name("reproduce SQL", tests, NULL, NULL);
}
