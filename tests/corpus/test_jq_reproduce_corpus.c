/*
** Corpus test: every number a finding on a PyTorch profiler (Kineto) JSON
** trace states comes back from its jq reproduce program (docs/kineto.md,
** "Evidence and reproduce"), run by the real `jq` on the trace file, as
** tests/corpus/test_reproduce_corpus.c does with the SQL of exports:
**
**   - the program's first output names every member of the result's
**     `values` and gives it: integers (counts, ns sums of these clocks)
**     exactly, other numbers within 0.1%;
**   - one output per evidence entry follows, by its key (the event's index;
**     a gap's start and bounding ops; a device's first and last op; a
**     group's columns), with every evidence field as the evidence says,
**     times exactly (to a microsecond where the file's clock passes 2^53
**     ns: jq's doubles, docs/kineto.md).
**
** The traces: the small H200 workloads (every failing rule there), the ddp
** ranks (NCCL overlap), public captures with an epoch clock and with NCCL,
** the device rules on the pass side (thresholds moved so that every device
** matches), and alloc-in-loop's grouped evidence on the series'
** realistic_nocache (113 MB of JSON: jq 1.6 needs about 8 s of CPU to parse
** it, so that trace runs that rule only). Each trace is read by jq once,
** all its programs run side by side. Every built-in rule that fires on a
** Kineto trace of ../shared must have been verified on a finding;
** sync-memcpy and sync-memset fire on none (torch copies are async).
** TG_CORPUS_QUICK=1 (the sanitizer and valgrind runs of ci/test.sh): the
** five small traces that make every rule but alloc-in-loop fire.
** Skips with a message when ../shared is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REL 1e-3    /* 0.1% */

static const char *const checked_rules[] = {
    "pageable-async-memcpy", "blocking-sync-api", "gpu-idle-gap", "low-gpu-utilization", "gpu-starvation",
    "kernel-launch-bound", "iteration-variance", "iteration-time-regression", "gpu-time-regression",
    "low-nccl-overlap", "alloc-in-loop", "copy-dominated",
};
#define N_RULES (sizeof checked_rules / sizeof *checked_rules)

typedef struct run_spec {
    const char *trace;         /* under kineto/ */
    const char *extra;         /* check options */
    const char *only;          /* one rule, or NULL */
    bool quick;                /* also in the TG_CORPUS_QUICK run */
} run_spec;

static const run_spec runs[] = {
    {"h200/sync_memcpy_bad.json.gz", "", NULL, true},
    {"h200/gpu_idle_bad.json.gz", "", NULL, true},
    {"h200/low_queue_bad.json.gz", "", NULL, true},
    {"h200/iter_variance_bad.json.gz", "", NULL, false},
    {"h200/sync_memcpy_good.json.gz", "", NULL, false},
    {"h200/low_queue_good.json.gz",
     "--set low-gpu-utilization.min_busy=101% --set gpu-starvation.max_queue=1h --set gpu-starvation.min_busy=101%",
     NULL, false},
    {"h200-exported/ddp_bad_rank0.json.gz", "", NULL, true},
    {"h200-exported/ddp_good_rank1.json.gz", "--set low-nccl-overlap.min_overlap=101%", "low-nccl-overlap", false},
    {"public/hta-alexnet-a100.pt.trace.json.gz", "", NULL, true},
    {"public/hta-simple-add-a100.pt.trace.json.gz", "", NULL, false},
    {"public/hta-a100-rank0of2-nccl.pt.trace.json.gz", "", NULL, false},
    {"public/tracelens-b200-eager-rank0of8-nccl.pt.trace.json.gz", "", NULL, false},
    {"h200-series/realistic_nocache.json.gz", "", "alloc-in-loop", false},
};

typedef struct tally {
    bool finding[N_RULES];
    int bad;
    size_t results;
} tally;

static char tmpdir[256];

static int rule_index(const char *rule)
{
    for (size_t k = 0; rule && k < N_RULES; k++)
        if (!strcmp(checked_rules[k], rule)) return (int)k;
    return -1;
}

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

/* A time on the file's clock past 2^53 ns is a double in jq: to 1 us. */
static bool is_time_key(const char *key)
{
    size_t n = strlen(key);
    return !strcmp(key, "start") || !strcmp(key, "end") || (n > 3 && !strcmp(key + n - 3, "_ns"));
}

/* want (the finding's) against got (jq's): integers exactly, other numbers
** within REL, booleans as true/false or 1/0, strings and nulls exactly. */
static bool agrees(const char *key, const json_t *want, const json_t *got)
{
    if (!got) return false;
    if (json_is_null(want) || json_is_null(got)) return json_is_null(want) && json_is_null(got);
    if (json_is_string(want)) return json_is_string(got) && !strcmp(json_string_value(want), json_string_value(got));
    if (json_is_boolean(want) || json_is_boolean(got)) {
        double w = json_is_boolean(want) ? json_is_true(want) : json_number_value(want);
        double g = json_is_boolean(got) ? json_is_true(got) : json_number_value(got);
        return (w != 0) == (g != 0) && (json_is_boolean(want) || json_is_number(want)) &&
               (json_is_boolean(got) || json_is_number(got));
    }
    if (!json_is_number(want) || !json_is_number(got)) return false;
    double x = json_number_value(want), y = json_number_value(got);
    if (key && is_time_key(key) && fabs(x) > 9007199254740992.0) return fabs(x - y) <= 1000;
    if (json_is_integer(want) && json_is_integer(got)) return json_integer_value(want) == json_integer_value(got);
    return fabs(x - y) <= REL * fabs(x) + 1e-9;
}

/* A row's column for an evidence field: ns fields end in _ns. */
static json_t *column_of(json_t *row, const char *field)
{
    json_t *v = json_object_get(row, field);
    if (v) return v;
    char name[160];
    snprintf(name, sizeof name, "%s_ns", field);
    return json_object_get(row, name);
}

static bool check_values(tally *t, const char *where, json_t *values, json_t *got)
{
    if (!json_is_object(got)) return bad(t, "%s: the program's first output is not the values\n", where);
    const char *name;
    json_t *v;
    bool ok = true;
    json_object_foreach(values, name, v) {
        json_t *g = json_object_get(got, name);
        if (agrees(NULL, v, g)) continue;
        char *a = json_dumps(v, JSON_ENCODE_ANY), *b = g ? json_dumps(g, JSON_ENCODE_ANY) : NULL;
        ok = bad(t, "%s: %s is %s in the finding, %s in jq\n", where, name, a, b ? b : "(absent)");
        free(a);
        free(b);
    }
    return ok;
}

/* Does jq's row hold evidence entry e (its key and every field)? */
static bool row_holds(json_t *e, json_t *row, const char **why)
{
    json_t *f = json_object_get(e, "fields");
    const char *interval = json_string_value(json_object_get(e, "interval"));
    const char *ri = json_string_value(json_object_get(row, "interval"));
    if (!ri && !json_object_get(row, "rowid")) {
        /* a group (grouped evidence): its columns alone */
    } else if (!interval) {
        if (ri) return *why = "kind", false;
        if (!agrees(NULL, json_object_get(e, "rowid"), json_object_get(row, "rowid"))) return *why = "rowid", false;
        if (!agrees("start", json_object_get(e, "start"), json_object_get(row, "start_ns"))) return *why = "start", false;
        if (!agrees("end", json_object_get(e, "end"), json_object_get(row, "end_ns"))) return *why = "end", false;
    } else if (!strcmp(interval, "idle")) {
        if (!ri || strcmp(ri, "idle")) return *why = "kind", false;
        if (!agrees("start", json_object_get(e, "start"), json_object_get(row, "start_ns"))) return *why = "start", false;
        if (!agrees(NULL, json_object_get(e, "rowid"), json_object_get(row, "before_rowid")))
            return *why = "the op before the gap", false;
        if (!agrees(NULL, json_object_get(f, "next_rowid"), json_object_get(row, "after_rowid")))
            return *why = "the op after the gap", false;
        json_int_t own = json_integer_value(json_object_get(e, "row_end")) -
                         json_integer_value(json_object_get(e, "row_start"));
        json_t *len = json_object_get(row, "before_duration_ns");
        if (!json_is_integer(len) || json_integer_value(len) != own) return *why = "the cited op's span", false;
    } else if (!strcmp(interval, "device")) {
        if (!ri || strcmp(ri, "device")) return *why = "kind", false;
        if (!agrees(NULL, json_object_get(e, "rowid"), json_object_get(row, "first_rowid")))
            return *why = "the device's first op", false;
        json_t *last = json_object_get(f, "last_rowid");
        if (last && !agrees(NULL, last, json_object_get(row, "last_rowid"))) return *why = "the device's last op", false;
    }
    const char *name;
    json_t *v;
    json_object_foreach(f, name, v) {
        static const char *const skip[] = {"ts", "next_table", "next_rowid", "last_table", "last_rowid",
                                           "other_groups"};
        bool skipped = false;
        for (size_t i = 0; i < sizeof skip / sizeof *skip; i++) skipped |= !strcmp(name, skip[i]);
        if (!skipped && !agrees(name, v, column_of(row, name))) return *why = name, false;
    }
    return true;
}

static void check_rows(tally *t, const char *where, json_t *evidence, json_t *out)
{
    size_t rows = json_array_size(out) - 1;
    if (rows != json_array_size(evidence)) {
        bad(t, "%s: %zu rows in jq, %zu cited\n", where, rows, json_array_size(evidence));
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(evidence, i, e) {
        const char *why = "no row", *first_why = NULL;
        bool found = false;
        for (size_t k = 1; k <= rows && !found; k++) {
            found = row_holds(e, json_array_get(out, k), &why);
            if (!found && !first_why && k == i + 1) first_why = why;
        }
        if (!found) {
            char *a = json_dumps(e, JSON_COMPACT), *b = json_dumps(json_array_get(out, i + 1), JSON_COMPACT);
            bad(t, "%s: evidence entry %zu has no row in jq (%s differs)\n  cited: %s\n  jq:    %s\n", where, i,
                first_why ? first_why : why, a, b);
            free(a);
            free(b);
        }
    }
}

/* The results of `check` to verify, and their programs side by side in
** one file, each one's outputs collected into one array a line. */
static size_t write_programs(tally *t, const char *label, json_t *results, const char *only, json_t *picked,
                             const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    size_t n = 0, i;
    json_t *r;
    json_array_foreach(results, i, r) {
        const char *rule = json_string_value(json_object_get(r, "rule"));
        const char *prog = json_string_value(json_object_get(r, "reproduce"));
        if (!prog || (only && strcmp(only, rule))) continue;
        if (strncmp(prog, "def ", 4)) {
            bad(t, "%s %s: the reproduce program does not compute the values: %.120s\n", label, rule, prog);
            continue;
        }
        fprintf(f, "%s[(%s)]", n ? ",\n" : "", prog);
        json_array_append(picked, r);
        n++;
    }
    fclose(f);
    return n;
}

static void verify_run(tally *t, const run_spec *spec)
{
    char trace[4096], label[4400], prog[512], cmd[8192];
    snprintf(trace, sizeof trace, "%s/kineto/%s", corpus_traces, spec->trace);
    snprintf(label, sizeof label, "%s%s%s", spec->trace, spec->extra[0] ? " " : "", spec->extra);
    json_t *doc = corpus_json(NULL, "check --format json --missing-data=skip %s '%s'", spec->extra, trace);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
    json_t *picked = json_array();
    snprintf(prog, sizeof prog, "%s/prog.jq", tmpdir);
    size_t n = write_programs(t, label, results, spec->only, picked, prog);
    if (n == 0) {
        bad(t, "%s: no result to verify\n", label);
        json_decref(picked);
        json_decref(doc);
        return;
    }
    snprintf(cmd, sizeof cmd, "gunzip -cf '%s' | jq -c -f '%s'", trace, prog);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0, k = 0;
    for (ssize_t len; (len = getline(&line, &cap, p)) > 0 && k < n; k++) {
        json_t *r = json_array_get(picked, k);
        const char *rule = json_string_value(json_object_get(r, "rule"));
        char where[4600];
        snprintf(where, sizeof where, "%s %s", label, rule);
        json_error_t err;
        json_t *out = json_loads(line, 0, &err);
        t->results++;
        int before = t->bad;
        if (!json_is_array(out) || json_array_size(out) == 0) {
            bad(t, "%s: jq printed no array: %.200s\n", where, line);
        } else {
            json_t *values = json_object_get(r, "values");
            check_values(t, where, values, json_array_get(out, 0));
            check_rows(t, where, json_object_get(r, "evidence"), out);
            int idx = rule_index(rule);
            if (t->bad == before && idx >= 0 && json_integer_value(json_object_get(values, "count")) > 0)
                t->finding[idx] = true;
        }
        json_decref(out);
    }
    free(line);
    int st = pclose(p);
    if (st != 0 || k != n) bad(t, "%s: jq exited %d after %zu of %zu programs\n", label, st, k, n);
    json_decref(picked);
    json_decref(doc);
}

static void test_jq_reproduces_every_value(void **state)
{
    (void)state;
    if (system("jq --version >/dev/null 2>&1") != 0) {
        print_message("SKIP: no jq on PATH\n");
        skip();
    }
    tally t = {0};
    const char *quick_env = getenv("TG_CORPUS_QUICK");
    bool quick = quick_env && !strcmp(quick_env, "1");
    size_t n = 0;
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
        if (!quick || runs[i].quick) verify_run(&t, &runs[i]), n++;
    for (size_t k = 0; k < N_RULES; k++)
        if (!t.finding[k] && !(quick && !strcmp(checked_rules[k], "alloc-in-loop")))
            bad(&t, "rule %s: no finding had its values reproduced by jq\n", checked_rules[k]);
    printf("jq reproduce corpus: %s%zu runs, %zu results' programs run, %d problems\n",
           quick ? "TG_CORPUS_QUICK=1: " : "", n, t.results, t.bad);
    assert_int_equal(t.bad, 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-jq-reproduce-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/prog.jq", tmpdir);
    unlink(path);
    return rmdir(tmpdir);
}

int main(void)
{
    if (!corpus_init("jq reproduce")) return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_jq_reproduces_every_value)};
    return cmocka_run_group_tests_name("jq reproduce", tests, setup, teardown);
}
