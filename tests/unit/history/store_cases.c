/*
** The history store's cases (store_cases.h), for every store: what is
** appended reads back exactly, in history order, one transaction at a
** time, under labels and workload keys that keep runs apart; ten writers
** at once lose nothing; a writer killed mid-append leaves only complete
** runs. The SQLite-only cases (bad files) are in store_cases_sqlite below.
**
** Children (fork) report through their exit status only: cmocka's
** assertions belong to the parent.
*/
#include "store_cases.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "history/history.h"

static struct {
    const char *(*fresh)(void *ctx);
    void *ctx;
    /* what a forked child inherits from the case that forked it: held
    ** here, so that a child's leak check (valgrind's at _exit) finds it */
    char *inherited[4];
} g;

/* Before fork: the case's allocations the child will see. */
static void inherit(char *a, char *b, char *c, char *d)
{
    g.inherited[0] = a, g.inherited[1] = b, g.inherited[2] = c, g.inherited[3] = d;
}

/* A fresh database's name, malloc'd. */
static char *fresh(void)
{
    const char *name = g.fresh(g.ctx);
    assert_non_null(name);
    char *copy = strdup(name);
    assert_non_null(copy);
    return copy;
}

/* ---------------------------------------------------------------- runs */

#define N_METRICS 3
#define N_OPS 3
#define N_SAMPLES 5

/* A run of workload family `family` (its kernels' names), seed varying
** its values. Everything in arena. */
static tg_hist_run make_run(tg_arena *a, const char *family, const char *label, const char *time, int seed)
{
    static const char *const rules[N_METRICS] = {"gpu-time-regression", "iteration-time-regression", "kernel-count"};
    tg_hist_run r = {
        .label = label, .time = time, .branch = "main", .gpu = "NVIDIA H100 80GB HBM3", .format = "nsys-sqlite",
        .marker = "train_step", .nsys_version = "2024.5.1", .schema_version = "3.11",
        .trace = tg_arena_printf(a, "%s.sqlite", label ? label : "trace"), .rules_digest = "sha256:r",
        .metrics_digest = "sha256:m", .tool_version = "0.1.0", .verdict = "pass", .n_metrics = N_METRICS,
    };
    r.metrics = tg_arena_alloc(a, N_METRICS * sizeof *r.metrics);
    for (int i = 0; i < N_METRICS; i++) {
        tg_hist_metric *m = &r.metrics[i];
        *m = (tg_hist_metric){.rule = rules[i], .metric = "p50(gpu_time)", .samples_field = "gpu_time",
                              .unit = TG_UNIT_NS, .direction = 1, .value = 1e7 + seed * 1000.0 + i / 3.0,
                              .verdict = "pass", .n_samples = N_SAMPLES};
        m->samples = tg_arena_alloc(a, N_SAMPLES * sizeof *m->samples);
        for (int k = 0; k < N_SAMPLES; k++) m->samples[k] = m->value + k * 0.1;
    }
    tg_workload *w = tg_arena_alloc(a, sizeof *w);
    *w = (tg_workload){.steady_iterations = 20, .gpu_time = 9e6, .period = 1.2e7, .idle = 3e6, .total = 2e8,
                       .n_ops = N_OPS, .n_ranges = 1};
    w->ops = tg_arena_alloc(a, N_OPS * sizeof *w->ops);
    for (int i = 0; i < N_OPS; i++)
        w->ops[i] = (tg_work_entry){.name = tg_arena_printf(a, "%s_kernel_%d", family, i), .kind = TG_WORK_KERNEL,
                                    .count = 100 - i, .total = (3 - i) * 1e8, .time = (3 - i) * 1e6, .launches = 5};
    w->ranges = tg_arena_alloc(a, sizeof *w->ranges);
    w->ranges[0] = (tg_work_entry){.name = "forward", .kind = TG_WORK_NVTX, .count = 20, .total = 1e8,
                                   .time = 5e6, .launches = 1};
    r.work = w;
    return r;
}

static tg_history *open_ok(const char *db, tg_history_mode mode)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, mode, &d);
    if (!h) print_error("open %s: %s\n", db, d.n ? d.msgs[0].text : "(no message)");
    assert_non_null(h);
    tg_diag_clear(&d);
    return h;
}

static void append_ok(tg_history *h, tg_hist_run *runs, size_t n, bool replace)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_status st = tg_history_append(h, runs, n, replace, &d);
    if (st != TG_OK) print_error("append: %s\n", d.n ? d.msgs[0].text : "(no message)");
    assert_int_equal(st, TG_OK);
    tg_diag_clear(&d);
}

static size_t load_ok(tg_history *h, const char *workload, unsigned what, tg_arena *a, tg_hist_run **runs)
{
    tg_diag d;
    tg_diag_init(&d);
    size_t n = 0;
    tg_status st = tg_history_load(h, workload, what, a, runs, &n, &d);
    if (st != TG_OK) print_error("load: %s\n", d.n ? d.msgs[0].text : "(no message)");
    assert_int_equal(st, TG_OK);
    tg_diag_clear(&d);
    return n;
}

/* An error: status st, one sentence (no line break) that holds each of
** the NULL-terminated words (the database's name among them). */
static void expect_error(const tg_diag *d, tg_status got, tg_status st, ...)
{
    if (got != st || d->n_errors != 1) print_error("status %d, %d errors: %s\n", got, d->n_errors,
                                                   d->n ? d->msgs[0].text : "(none)");
    assert_int_equal(got, st);
    assert_int_equal(d->n_errors, 1);
    const char *text = d->msgs[0].text;
    assert_null(strchr(text, '\n'));
    va_list ap;
    va_start(ap, st);
    for (const char *w; (w = va_arg(ap, const char *));) {
        if (!strstr(text, w)) print_error("\"%s\" does not say \"%s\"\n", text, w);
        assert_non_null(strstr(text, w));
    }
    va_end(ap);
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_str(const char *want, const char *got)
{
    if (!str_eq(want, got)) print_error("want \"%s\", got \"%s\"\n", want ? want : "(null)", got ? got : "(null)");
    assert_true(str_eq(want, got));
}

static void assert_entries(const tg_work_entry *want, const tg_work_entry *got, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_str(want[i].name, got[i].name);
        assert_int_equal(want[i].kind, got[i].kind);
        assert_int_equal(want[i].count, got[i].count);
        assert_true(same_double(want[i].total, got[i].total));
        assert_true(same_double(want[i].time, got[i].time));
        assert_true(same_double(want[i].launches, got[i].launches));
    }
}

/* got is want as stored: every field (samples and work when loaded). */
static void assert_run(const tg_hist_run *want, const tg_hist_run *got, unsigned what)
{
    assert_int_equal(want->id, got->id);
    const char *const w[] = {want->label, want->time, want->branch, want->workload, want->workload_name,
                             want->gpu, want->format, want->marker, want->nsys_version, want->schema_version,
                             want->trace, want->rules_digest, want->metrics_digest, want->tool_version, want->verdict};
    const char *const g2[] = {got->label, got->time, got->branch, got->workload, got->workload_name,
                              got->gpu, got->format, got->marker, got->nsys_version, got->schema_version,
                              got->trace, got->rules_digest, got->metrics_digest, got->tool_version, got->verdict};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) assert_str(w[i], g2[i]);
    assert_int_equal(want->regressed, got->regressed);
    assert_int_equal(want->epoch, got->epoch);
    assert_int_equal(want->n_metrics, got->n_metrics);
    for (size_t i = 0; i < want->n_metrics; i++) {
        const tg_hist_metric *a = &want->metrics[i], *b = &got->metrics[i];
        assert_str(a->rule, b->rule);
        assert_str(a->metric, b->metric);
        assert_str(a->samples_field, b->samples_field);
        assert_str(a->verdict, b->verdict);
        assert_int_equal(a->unit, b->unit);
        assert_int_equal(a->direction, b->direction);
        assert_true(same_double(a->value, b->value));
        if (!(what & TG_HIST_LOAD_SAMPLES) || !a->n_samples) {
            assert_null(b->samples);
            assert_int_equal(b->n_samples, 0);
            continue;
        }
        assert_int_equal(a->n_samples, b->n_samples);
        for (size_t k = 0; k < a->n_samples; k++) assert_true(same_double(a->samples[k], b->samples[k]));
    }
    if (!(what & TG_HIST_LOAD_WORK) || !want->work) {
        assert_null(got->work);
        return;
    }
    assert_non_null(got->work);
    const tg_workload *x = want->work, *y = got->work;
    assert_int_equal(x->steady_iterations, y->steady_iterations);
    assert_true(same_double(x->gpu_time, y->gpu_time));
    assert_true(same_double(x->period, y->period));
    assert_true(same_double(x->idle, y->idle));
    assert_true(same_double(x->total, y->total));
    assert_int_equal(x->n_ops, y->n_ops);
    assert_int_equal(x->n_ranges, y->n_ranges);
    assert_entries(x->ops, y->ops, x->n_ops);
    assert_entries(x->ranges, y->ranges, x->n_ranges);
}

/* ---------------------------------------------------------------- cases */

/* Every field comes back as it went in: NaN, NULL strings, all 17 digits,
** UTF-8, samples and work; what a load leaves out stays out. */
static void test_round_trip(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_hist_run runs[3];
    runs[0] = make_run(a, "gemm", "c0ffee1", "2000-01-01T03:00:00Z", 1);
    runs[0].branch = "ünïcødé/ブランチ ✓";
    runs[0].regressed = true;
    runs[0].epoch = 7;
    runs[0].verdict = "fail";
    runs[0].metrics[0].value = NAN;
    runs[0].metrics[0].samples = NULL;
    runs[0].metrics[0].n_samples = 0;
    runs[0].metrics[1].samples_field = NULL;
    runs[0].metrics[1].unit = TG_UNIT_RATIO;
    runs[0].metrics[1].direction = -1;
    runs[0].metrics[1].value = 0.1 + 0.2;
    runs[0].metrics[1].samples[0] = 1.0 / 3.0;
    runs[0].metrics[1].samples[4] = 123456789.123456789e200;
    runs[0].metrics[2].direction = 0;
    runs[0].metrics[2].unit = TG_UNIT_NONE;
    runs[0].metrics[2].samples[1] = 2.2250738585072014e-240;
    runs[0].metrics[2].value = INFINITY;
    runs[0].work->idle = -INFINITY;
    runs[0].work->ops[1].kind = TG_WORK_MEMCPY;
    runs[0].work->ops[1].name = "[memcpy HtoD]";
    runs[0].work->ops[2].name = "(other)";
    runs[0].work->ops[2].time = NAN;
    runs[0].work->period = NAN;
    runs[0].work->ranges[0].name = "前向き";
    /* NULL strings, no work, no metrics; its label and time assigned */
    runs[1] = (tg_hist_run){.trace = "night 2.sqlite", .workload = "custom-key", .format = "kineto-json"};
    /* an invalid byte is kept as U+FFFD */
    runs[2] = make_run(a, "gemm", "bad\xff" "byte", "2000-01-01T04:00:00Z", 2);
    runs[2].trace = "night-4.sqlite";
    tg_hist_run want[3];
    memcpy(want, runs, sizeof want);
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    assert_true(strcmp(tg_history_kind(h), "sqlite") == 0 || strcmp(tg_history_kind(h), "postgresql") == 0);
    append_ok(h, runs, 3, false);
    /* what the store assigned */
    for (int i = 0; i < 3; i++) assert_int_equal(runs[i].id, i + 1);
    assert_non_null(runs[0].workload);
    assert_int_equal(strlen(runs[0].workload), 13);
    assert_int_equal(runs[0].workload[0], 'w');
    assert_string_equal(runs[0].workload_name, "gemm_kernel_0");
    assert_string_equal(runs[1].label, "night 2.sqlite");
    assert_string_equal(runs[1].workload, "custom-key");
    assert_int_equal(strlen(runs[1].time), 20);
    assert_string_equal(runs[2].label, "bad\xef\xbf\xbd" "byte");
    assert_string_equal(runs[2].workload, runs[0].workload);
    /* what the store gave the runs lives as long as the history */
    for (int i = 0; i < 3; i++) {
        want[i].id = runs[i].id;
        want[i].workload = tg_arena_strdup(a, runs[i].workload);
        want[i].workload_name = tg_arena_strdup(a, runs[i].workload_name);
        want[i].label = tg_arena_strdup(a, runs[i].label);
        want[i].time = tg_arena_strdup(a, runs[i].time);
    }
    tg_history_close(h);

    h = open_ok(db, TG_HISTORY_READ);
    static const unsigned whats[] = {0, TG_HIST_LOAD_SAMPLES, TG_HIST_LOAD_WORK,
                                     TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK};
    for (size_t k = 0; k < 4; k++) {
        tg_arena *la = tg_arena_new();
        tg_hist_run *got;
        /* history order: run 1 (the time of now) is last */
        assert_int_equal(load_ok(h, NULL, whats[k], la, &got), 3);
        assert_run(&want[0], &got[0], whats[k]);
        assert_run(&want[2], &got[1], whats[k]);
        assert_run(&want[1], &got[2], whats[k]);
        tg_arena_free(la);
    }
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* History order: by time, then id, whatever the order of appending. */
static void test_history_order(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    static const char *const times[] = {"2026-12-03T00:00:00Z", "2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z",
                                        "2026-12-01T00:00:00Z", "2025-12-31T23:59:59Z"};
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    for (int i = 0; i < 5; i++) {
        tg_hist_run r = make_run(a, "gemm", tg_arena_printf(a, "r%d", i + 1), times[i], i);
        r.workload = "w1";
        append_ok(h, &r, 1, false);
    }
    tg_hist_run *got;
    assert_int_equal(load_ok(h, "w1", 0, a, &got), 5);
    static const int64_t order[] = {5, 2, 4, 3, 1};
    for (int i = 0; i < 5; i++) assert_int_equal(got[i].id, order[i]);
    assert_int_equal(load_ok(h, "no-such-key", 0, a, &got), 0);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* Times: ISO 8601 in the forms people and date(1) write, kept in one
** (UTC to the second, Z), so that history order is time order; what is
** no time refused, naming the run and the text. */
static void test_times(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    static const char *const given[][2] = {
        {"2026-12-07T05:00:00+02:00", "2026-12-07T03:00:00Z"}, {"2026-12-07", "2026-12-07T00:00:00Z"},
        {"2026-12-07T03:00:00.999Z", "2026-12-07T03:00:00Z"}, {"2026-12-06T22:00:00-0530", "2026-12-07T03:30:00Z"},
        {"2024-02-29T23:59:59Z", "2024-02-29T23:59:59Z"}, {"2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00Z"},
    };
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
        tg_hist_run r = make_run(a, "gemm", tg_arena_printf(a, "t%zu", i), given[i][0], (int)i);
        append_ok(h, &r, 1, false);
        assert_string_equal(r.time, given[i][1]);
    }
    static const char *const refused[] = {"yesterday", "2026-02-30T00:00:00Z", "2026-12-07T03:00:00",
                                          "2026-12-07T25:00:00Z", "2026-12-07T03:00:00+0:00", "2026-12-07 03:00:00Z",
                                          "2026-12-07T03:00:00Z trailing", ""};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        tg_hist_run r = make_run(a, "gemm", "bad-time", refused[i], 1);
        tg_diag d;
        tg_diag_init(&d);
        expect_error(&d, tg_history_append(h, &r, 1, false, &d), TG_EUSAGE, "bad-time", refused[i], (char *)NULL);
        tg_diag_clear(&d);
    }
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(tg_history_accept(h, "t0", "moved", "2026-12-08T01:00:00+01:00", &d), TG_OK);
    expect_error(&d, tg_history_accept(h, "t1", "moved", "soon", &d), TG_EUSAGE, "soon", (char *)NULL);
    tg_diag_clear(&d);
    tg_diag_init(&d);
    tg_hist_accept *acc;
    size_t n_acc;
    assert_int_equal(tg_history_accepts(h, a, &acc, &n_acc, &d), TG_OK);
    tg_diag_clear(&d);
    assert_int_equal(n_acc, 1);
    assert_string_equal(acc[0].time, "2026-12-08T00:00:00Z");
    tg_hist_run *got;
    size_t n = load_ok(h, NULL, 0, a, &got);
    assert_int_equal(n, sizeof given / sizeof *given);
    for (size_t i = 1; i < n; i++) assert_true(strcmp(got[i - 1].time, got[i].time) <= 0);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* One transaction: an append that fails on its third run stores none of
** the three, and the caller's runs are as they were. */
static void test_one_transaction(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    tg_hist_run first = make_run(a, "gemm", "base", "2026-12-01T00:00:00Z", 0);
    append_ok(h, &first, 1, false);
    tg_hist_run runs[3] = {make_run(a, "gemm", "n1", "2026-12-02T00:00:00Z", 1),
                           make_run(a, "gemm", "n2", "2026-12-03T00:00:00Z", 2),
                           make_run(a, "gemm", "n3", "yesterday", 3)};
    tg_diag d;
    tg_diag_init(&d);
    expect_error(&d, tg_history_append(h, runs, 3, false, &d), TG_EUSAGE, "n3", "yesterday", (char *)NULL);
    tg_diag_clear(&d);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(runs[i].id, 0);
        assert_null(runs[i].workload);
    }
    /* the same label twice in one call: the second is refused, the first
    ** goes with it */
    runs[2] = make_run(a, "gemm", "n1", "2026-12-04T00:00:00Z", 3);
    tg_diag_init(&d);
    expect_error(&d, tg_history_append(h, runs, 3, false, &d), TG_EUSAGE, "n1", "--replace", (char *)NULL);
    tg_diag_clear(&d);
    tg_hist_run *got;
    assert_int_equal(load_ok(h, NULL, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK, a, &got), 1);
    assert_string_equal(got[0].label, "base");
    /* and the history still takes appends, with the next id */
    runs[2].label = "n3";
    append_ok(h, runs, 3, false);
    assert_int_equal(runs[0].id, 2);
    assert_int_equal(runs[2].id, 4);
    assert_int_equal(load_ok(h, NULL, 0, a, &got), 4);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* A label given twice is refused (naming it, the key and the database),
** unless replace, which replaces the run and moves its acceptance. */
static void test_label_and_replace(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    tg_hist_run r1 = make_run(a, "gemm", "abc123", "2026-12-01T00:00:00Z", 1);
    tg_hist_run r2 = make_run(a, "gemm", "def456", "2026-12-02T00:00:00Z", 2);
    r2.epoch = 1;   /* judged by a baseline that starts at abc123 */
    append_ok(h, &r1, 1, false);
    append_ok(h, &r2, 1, false);
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(tg_history_accept(h, "abc123", "new normal", "2026-12-05T00:00:00Z", &d), TG_OK);
    tg_diag_clear(&d);

    tg_hist_run again = make_run(a, "gemm", "abc123", "2026-12-03T00:00:00Z", 9);
    tg_diag_init(&d);
    expect_error(&d, tg_history_append(h, &again, 1, false, &d), TG_EUSAGE, "abc123", r1.workload, "--replace",
                 (char *)NULL);
    tg_diag_clear(&d);
    assert_int_equal(again.id, 0);
    tg_hist_run *got;
    assert_int_equal(load_ok(h, NULL, 0, a, &got), 2);

    again.work->ops[0].count = 4242;
    append_ok(h, &again, 1, true);
    assert_int_equal(again.id, 3);
    assert_string_equal(again.workload, r1.workload);
    assert_int_equal(load_ok(h, NULL, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK, a, &got), 2);
    assert_string_equal(got[0].label, "def456");
    assert_int_equal(got[0].epoch, 3);
    tg_hist_run want = again;
    assert_run(&want, &got[1], TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK);
    tg_hist_accept *acc;
    size_t n_acc;
    tg_diag_init(&d);
    assert_int_equal(tg_history_accepts(h, a, &acc, &n_acc, &d), TG_OK);
    tg_diag_clear(&d);
    assert_int_equal(n_acc, 1);
    assert_int_equal(acc[0].run_id, 3);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* Workload keys: runs of one workload (by its kernels, GPU, format and
** marker) share a key, another workload gets its own, and a load of one
** key never holds another's runs. A label may repeat across workloads. */
static void test_workload_keys(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    tg_hist_run a1 = make_run(a, "attention", "n1", "2026-12-01T00:00:00Z", 1);
    tg_hist_run b1 = make_run(a, "convolution", "n1", "2026-12-01T00:00:00Z", 1);
    append_ok(h, &a1, 1, false);
    append_ok(h, &b1, 1, false);
    assert_string_not_equal(a1.workload, b1.workload);
    assert_string_equal(a1.workload_name, "attention_kernel_0");
    assert_string_equal(b1.workload_name, "convolution_kernel_0");
    /* the same kernels on another GPU: another workload */
    tg_hist_run c1 = make_run(a, "attention", "n1", "2026-12-01T00:00:00Z", 1);
    c1.gpu = "NVIDIA A100-SXM4-80GB";
    /* later runs of each, two in one call */
    tg_hist_run more[3] = {make_run(a, "attention", "n2", "2026-12-02T00:00:00Z", 2),
                           make_run(a, "convolution", "n2", "2026-12-02T00:00:00Z", 2), c1};
    append_ok(h, more, 3, false);
    assert_string_equal(more[0].workload, a1.workload);
    assert_string_equal(more[1].workload, b1.workload);
    assert_string_not_equal(more[2].workload, a1.workload);
    assert_string_not_equal(more[2].workload, b1.workload);
    /* in one call, a new workload's first run gives the key to its second */
    tg_hist_run d[2] = {make_run(a, "softmax", "n1", "2026-12-03T00:00:00Z", 1),
                        make_run(a, "softmax", "n2", "2026-12-04T00:00:00Z", 2)};
    append_ok(h, d, 2, false);
    assert_string_equal(d[0].workload, d[1].workload);
    tg_hist_run *got;
    const char *keys[] = {a1.workload, b1.workload, more[2].workload, d[0].workload};
    const char *names[] = {"attention_kernel_0", "convolution_kernel_0", "attention_kernel_0", "softmax_kernel_0"};
    size_t total = 0;
    for (int k = 0; k < 4; k++) {
        size_t n = load_ok(h, keys[k], TG_HIST_LOAD_WORK, a, &got);
        assert_int_equal(n, k == 2 ? 1 : 2);
        total += n;
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(got[i].workload, keys[k]);
            assert_string_equal(got[i].workload_name, names[k]);
            assert_string_equal(got[i].work->ops[0].name, names[k]);
        }
    }
    assert_int_equal(load_ok(h, NULL, 0, a, &got), total);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* Accept: the runs labelled L in every workload holding it, with the
** reason; unknown labels, empty reasons and a second acceptance refused. */
static void test_accept(void **state)
{
    (void)state;
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    tg_hist_run runs[3] = {make_run(a, "attention", "v1", "2026-12-01T00:00:00Z", 1),
                           make_run(a, "convolution", "v2", "2026-12-01T00:00:00Z", 1),
                           make_run(a, "attention", "v2", "2026-12-02T00:00:00Z", 2)};
    append_ok(h, runs, 3, false);
    tg_hist_accept *acc;
    size_t n_acc = 9;
    tg_diag d;
    tg_diag_init(&d);
    assert_int_equal(tg_history_accepts(h, a, &acc, &n_acc, &d), TG_OK);
    assert_int_equal(n_acc, 0);
    assert_int_equal(tg_history_accept(h, "v2", "the new allocator: +3% accepted", "2026-12-06T10:00:00Z", &d),
                     TG_OK);
    assert_int_equal(tg_history_accept(h, "v1", "first", NULL, &d), TG_OK);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(tg_history_accepts(h, a, &acc, &n_acc, &d), TG_OK);
    tg_diag_clear(&d);
    assert_int_equal(n_acc, 3);
    assert_string_equal(acc[0].label, "v2");
    assert_string_equal(acc[0].workload, runs[1].workload);
    assert_int_equal(acc[0].run_id, 2);
    assert_string_equal(acc[0].reason, "the new allocator: +3% accepted");
    assert_string_equal(acc[0].time, "2026-12-06T10:00:00Z");
    assert_string_equal(acc[1].workload, runs[2].workload);
    assert_int_equal(acc[1].run_id, 3);
    assert_int_equal(acc[2].run_id, 1);
    assert_int_equal(strlen(acc[2].time), 20);

    tg_diag_init(&d);
    expect_error(&d, tg_history_accept(h, "nope", "why", NULL, &d), TG_EUSAGE, "nope", db, (char *)NULL);
    tg_diag_clear(&d);
    tg_diag_init(&d);
    expect_error(&d, tg_history_accept(h, "v1", "", NULL, &d), TG_EUSAGE, "reason", (char *)NULL);
    tg_diag_clear(&d);
    tg_diag_init(&d);
    expect_error(&d, tg_history_accept(h, "v1", "again", NULL, &d), TG_EUSAGE, "v1", "already", (char *)NULL);
    tg_diag_clear(&d);
    tg_diag_init(&d);
    assert_int_equal(tg_history_accepts(h, a, &acc, &n_acc, &d), TG_OK);
    tg_diag_clear(&d);
    assert_int_equal(n_acc, 3);
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

/* ---------------------------------------------------------------- writers */

#define N_WRITERS 10
#define RUNS_PER_WRITER 5

/* A child: open db and append its runs one call at a time; the exit
** status says how it went (0: all stored). */
static void writer_child(const char *db, int k)
{
    tg_arena *a = tg_arena_new();
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, TG_HISTORY_WRITE, &d);
    if (!h) {
        fprintf(stderr, "writer %d: %s\n", k, d.n ? d.msgs[0].text : "?");
        _exit(2);
    }
    for (int i = 0; i < RUNS_PER_WRITER; i++) {
        char time[32];
        snprintf(time, sizeof time, "2026-12-%02dT%02d:00:00Z", 1 + i, k);
        tg_hist_run r = make_run(a, "gemm", tg_arena_printf(a, "p%d-r%d", k, i), time, k * 10 + i);
        if (tg_history_append(h, &r, 1, false, &d) != TG_OK) {
            fprintf(stderr, "writer %d: %s\n", k, d.n ? d.msgs[0].text : "?");
            _exit(3);
        }
    }
    tg_history_close(h);
    tg_arena_free(a);
    _exit(0);
}

/* Ten processes append five runs each at once, the first of them into a
** database that holds no history yet: nothing is lost, ids are unique,
** and all fifty runs (one workload) share one key. */
static void test_ten_writers(void **state)
{
    (void)state;
    char *db = fresh();
    pid_t pids[N_WRITERS];
    for (int k = 0; k < N_WRITERS; k++) {
        inherit(db, NULL, NULL, NULL);
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) writer_child(db, k);
    }
    for (int k = 0; k < N_WRITERS; k++) {
        int status;
        assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tg_arena *a = tg_arena_new();
    tg_history *h = open_ok(db, TG_HISTORY_READ);
    tg_hist_run *got;
    size_t n = load_ok(h, NULL, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK, a, &got);
    assert_int_equal(n, N_WRITERS * RUNS_PER_WRITER);
    bool seen_id[N_WRITERS * RUNS_PER_WRITER + 1] = {0}, seen_label[N_WRITERS][RUNS_PER_WRITER] = {{0}};
    for (size_t i = 0; i < n; i++) {
        assert_true(got[i].id >= 1 && got[i].id <= (int64_t)n);
        assert_false(seen_id[got[i].id]);
        seen_id[got[i].id] = true;
        int k, r;
        assert_int_equal(sscanf(got[i].label, "p%d-r%d", &k, &r), 2);
        assert_false(seen_label[k][r]);
        seen_label[k][r] = true;
        assert_string_equal(got[i].workload, got[0].workload);
        assert_int_equal(got[i].n_metrics, N_METRICS);
        assert_int_equal(got[i].work->n_ops, N_OPS);
    }
    tg_history_close(h);
    tg_arena_free(a);
    free(db);
}

#define KILL_ROUNDS 8
#define RUNS_PER_CALL 3
#define MAX_CALLS 1000          /* then the child waits to be killed: work, not time, bounds it */

/* A child appending calls of RUNS_PER_CALL runs until it is killed; it
** writes a byte on ready once its first call is stored. */
static void appender_child(const char *db, int round, int ready)
{
    tg_arena *a = tg_arena_new();
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, TG_HISTORY_WRITE, &d);
    if (!h) _exit(2);
    for (int call = 0; call < MAX_CALLS; call++) {
        tg_hist_run runs[RUNS_PER_CALL];
        for (int i = 0; i < RUNS_PER_CALL; i++)
            runs[i] = make_run(a, "gemm", tg_arena_printf(a, "k%d-%d-%d", round, call, i), "2026-12-01T00:00:00Z",
                               call);
        if (tg_history_append(h, runs, RUNS_PER_CALL, false, &d) != TG_OK) _exit(3);
        if (call == 0 && write(ready, "x", 1) != 1) _exit(4);
    }
    for (;;) pause();
}

/* A writer killed (SIGKILL) at random moments while appending: the
** history still opens, for reading and for writing, and holds complete
** calls only: every run with all its metrics and work, every call with
** all its runs. */
static void test_killed_writer(void **state)
{
    (void)state;
    char *db = fresh();
    char journal[4200];
    snprintf(journal, sizeof journal, "%s-journal", db);
    int hot = 0;
    srand(20261207);
    for (int round = 0; round < KILL_ROUNDS; round++) {
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        inherit(db, NULL, NULL, NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            appender_child(db, round, ready[1]);
        }
        close(ready[1]);
        char c;
        assert_int_equal(read(ready[0], &c, 1), 1);
        close(ready[0]);
        /* a moment anywhere in the next few calls */
        struct timespec ts = {0, (long)(rand() % 20000) * 1000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        hot += access(journal, F_OK) == 0;   /* an SQLite file killed mid-transaction */
        /* a reader first: a read-only connection meets what the killed
        ** writer left */
        tg_arena *a = tg_arena_new();
        tg_history *h = open_ok(db, round % 2 ? TG_HISTORY_WRITE : TG_HISTORY_READ);
        tg_hist_run *got;
        size_t n = load_ok(h, NULL, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK, a, &got);
        assert_true(n >= RUNS_PER_CALL);
        assert_int_equal(n % RUNS_PER_CALL, 0);
        static int per_call[KILL_ROUNDS][MAX_CALLS];
        memset(per_call, 0, sizeof per_call);
        for (size_t i = 0; i < n; i++) {
            int r, call, k;
            assert_int_equal(sscanf(got[i].label, "k%d-%d-%d", &r, &call, &k), 3);
            assert_true(r >= 0 && r <= round && call >= 0 && call < MAX_CALLS);
            per_call[r][call]++;
            assert_int_equal(got[i].n_metrics, N_METRICS);
            for (size_t m = 0; m < N_METRICS; m++) assert_int_equal(got[i].metrics[m].n_samples, N_SAMPLES);
            assert_non_null(got[i].work);
            assert_int_equal(got[i].work->n_ops, N_OPS);
            assert_int_equal(got[i].work->n_ranges, 1);
        }
        for (int r = 0; r <= round; r++)
            for (int call = 0; call < MAX_CALLS; call++)
                assert_true(per_call[r][call] == 0 || per_call[r][call] == RUNS_PER_CALL);
        tg_history_close(h);
        tg_arena_free(a);
    }
    if (hot) print_message("%d of %d writers were killed mid-transaction (a hot journal was left)\n", hot, KILL_ROUNDS);
    free(db);
}

/* ---------------------------------------------------------------- bad files */

/* What SQLite-only cases start from: files beside a fresh name. */
static char *dir_of_fresh(void)
{
    char *db = fresh();
    char *slash = strrchr(db, '/');
    assert_non_null(slash);
    *slash = 0;
    return db;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A file's bytes as they are now (exists false when absent), to compare
** with what they are after a refusal. */
typedef struct snap {
    char *path;
    bool exists;
    char *bytes;
    size_t len;
} snap;

static snap take_snap(const char *path)
{
    snap s = {.path = strdup(path)};
    FILE *f = fopen(path, "rb");
    if (!f) return s;
    s.exists = true;
    size_t cap = 0;
    for (;;) {
        if (s.len == cap) {
            cap = cap ? cap * 2 : 65536;
            s.bytes = realloc(s.bytes, cap);
            assert_non_null(s.bytes);
        }
        size_t got = fread(s.bytes + s.len, 1, cap - s.len, f);
        if (!got) break;
        s.len += got;
    }
    fclose(f);
    return s;
}

/* The file is as it was, and no journal is left beside it. */
static void assert_unchanged(snap *before)
{
    snap now = take_snap(before->path);
    assert_int_equal(now.exists, before->exists);
    assert_int_equal(now.len, before->len);
    if (now.len) assert_memory_equal(now.bytes, before->bytes, now.len);
    char journal[4200];
    snprintf(journal, sizeof journal, "%s-journal", before->path);
    assert_int_equal(access(journal, F_OK), -1);
    free(now.path);
    free(now.bytes);
    free(before->path);
    free(before->bytes);
}

/* Opening db in mode is refused with status st, one sentence naming db
** and saying word. */
static void expect_refused(const char *db, tg_history_mode mode, tg_status st, const char *word)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, mode, &d);
    if (h) print_error("%s opened in mode %d\n", db, mode);
    assert_null(h);
    expect_error(&d, d.status, st, db, word, (char *)NULL);
    tg_diag_clear(&d);
}

static void sql_on(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) print_error("%s: %s\n", path, err);
    assert_int_equal(rc, SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A history of n runs, at a fresh name. */
static char *make_history(size_t n)
{
    char *db = fresh();
    tg_arena *a = tg_arena_new();
    tg_hist_run *runs = tg_arena_alloc(a, n * sizeof *runs);
    for (size_t i = 0; i < n; i++)
        runs[i] = make_run(a, "gemm", tg_arena_printf(a, "h%zu", i), "2026-12-01T00:00:00Z", (int)i);
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    append_ok(h, runs, n, false);
    tg_history_close(h);
    tg_arena_free(a);
    return db;
}

/* Files that are not a history, in both modes: one sentence naming the
** file, status 2, the bytes untouched. */
static void test_not_a_history(void **state)
{
    (void)state;
    char *dir = dir_of_fresh();
    char *export = path_in(dir, "report.sqlite"), *random = path_in(dir, "random.bin"),
         *json = path_in(dir, "trace.json"), *sub = path_in(dir, "a-directory");
    sql_on(export, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                   " deviceId INTEGER, shortName INTEGER);"
                   "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
                   "INSERT INTO StringIds VALUES (1, 'saxpy');"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1);");
    unsigned char noise[8192];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        noise[i] = (unsigned char)x;
    }
    write_file(random, noise, sizeof noise);
    static const char trace[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"gemm\", \"ts\": 1, \"dur\": 2}]}\n";
    write_file(json, trace, sizeof trace - 1);
    assert_int_equal(mkdir(sub, 0755), 0);
    const struct { const char *path, *word; } cases[] = {
        {export, "CUPTI_ACTIVITY_KIND_KERNEL"}, {export, "StringIds"},
        {random, "not an SQLite database"}, {json, "not an SQLite database"}, {sub, "directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int mode = 0; mode < 2; mode++) {
            snap before = take_snap(cases[i].path);
            expect_refused(cases[i].path, mode ? TG_HISTORY_WRITE : TG_HISTORY_READ, TG_EUSAGE, cases[i].word);
            assert_unchanged(&before);
        }
    /* absent: READ creates nothing; an empty file is no history to read,
    ** and one WRITE makes a history of */
    char *absent = path_in(dir, "absent.sqlite"), *empty = path_in(dir, "empty.sqlite");
    expect_refused(absent, TG_HISTORY_READ, TG_EUSAGE, "no such history");
    assert_int_equal(access(absent, F_OK), -1);
    write_file(empty, "", 0);
    snap before = take_snap(empty);
    expect_refused(empty, TG_HISTORY_READ, TG_EUSAGE, "holds no table");
    assert_unchanged(&before);
    tg_history_close(open_ok(empty, TG_HISTORY_WRITE));
    tg_history_close(open_ok(empty, TG_HISTORY_READ));
    char *paths[] = {export, random, json, sub, absent, empty, dir};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) free(paths[i]);
}

/* A history of a newer schema, or another program's tg_meta: refused
** in both modes, untouched. */
static void test_newer_schema(void **state)
{
    (void)state;
    char *db = make_history(1);
    sql_on(db, "UPDATE tg_meta SET value = '2' WHERE key = 'schema_version'");
    for (int mode = 0; mode < 2; mode++) {
        snap before = take_snap(db);
        expect_refused(db, mode ? TG_HISTORY_WRITE : TG_HISTORY_READ, TG_EUSAGE, "newer tracegate");
        assert_unchanged(&before);
    }
    sql_on(db, "UPDATE tg_meta SET value = '1' WHERE key = 'schema_version';"
               "UPDATE tg_meta SET value = 'another program' WHERE key = 'application'");
    snap before = take_snap(db);
    expect_refused(db, TG_HISTORY_WRITE, TG_EUSAGE, "not a tracegate history");
    assert_unchanged(&before);
    free(db);
}

typedef enum { CUT_HALF, OVERWRITE_PAGES, OVERWRITE_HEADER, N_DAMAGE } damage;

/* A damaged copy of the history good (its bytes) at path. */
static void damage_copy(const snap *good, const char *path, damage how)
{
    char *bytes = malloc(good->len);
    assert_non_null(bytes);
    memcpy(bytes, good->bytes, good->len);
    size_t len = good->len, page = 4096;
    assert_true(len > 8 * page);
    if (how == CUT_HALF) len = len / 2;
    if (how == OVERWRITE_PAGES)
        for (size_t i = page; i < len; i++) bytes[i] = (char)(0xa5 ^ (i * 7));
    if (how == OVERWRITE_HEADER) memset(bytes, 0x5a, 100);
    write_file(path, bytes, len);
    free(bytes);
}

/* A corrupt history: refused when opened or when read (a load) or
** written (an append), one sentence naming it, its bytes untouched. */
static void test_corrupt(void **state)
{
    (void)state;
    char *good = make_history(120);
    snap g0 = take_snap(good);
    for (int how = 0; how < N_DAMAGE; how++) {
        char *path = malloc(strlen(good) + 32);
        assert_non_null(path);
        sprintf(path, "%s.damaged-%d", good, how);
        damage_copy(&g0, path, how);
        for (int mode = 0; mode < 2; mode++) {
            snap before = take_snap(path);
            tg_diag d;
            tg_diag_init(&d);
            tg_history *h = tg_history_open(path, mode ? TG_HISTORY_WRITE : TG_HISTORY_READ, &d);
            tg_status st = h ? TG_OK : d.status;
            tg_arena *a = tg_arena_new();
            if (h && mode == 0) {
                tg_hist_run *runs;
                size_t n;
                st = tg_history_load(h, NULL, TG_HIST_LOAD_SAMPLES | TG_HIST_LOAD_WORK, a, &runs, &n, &d);
            } else if (h) {
                tg_hist_run r = make_run(a, "gemm", "after-damage", "2026-12-09T00:00:00Z", 1);
                st = tg_history_append(h, &r, 1, false, &d);
            }
            tg_history_close(h);
            if (st == TG_OK) print_error("damage %d, mode %d: not refused\n", how, mode);
            expect_error(&d, st, TG_EUSAGE, path, (char *)NULL);
            tg_diag_clear(&d);
            tg_arena_free(a);
            assert_unchanged(&before);
        }
        free(path);
    }
    free(g0.path);
    free(g0.bytes);
    free(good);
}

/* In a child: remount dir read-only for this process (root), as
** tests/hostile/hostile.c does; false when the kernel does not allow it. */
static bool remount_readonly(const char *dir)
{
    return unshare(CLONE_NEWNS) == 0 && mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
           mount(dir, dir, "none", MS_BIND, NULL) == 0 &&
           mount("none", dir, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0;
}

/* The child of test_read_only: WRITE refused (the history and a new file
** beside it), READ still reads. Exit 0 when so; 77: no read-only mount. */
static void read_only_child(const char *db, const char *dir)
{
    if (geteuid() == 0 && !remount_readonly(dir)) _exit(77);
    tg_diag d;
    tg_diag_init(&d);
    tg_history *h = tg_history_open(db, TG_HISTORY_WRITE, &d);
    if (h || d.status != TG_EUSAGE || d.n_errors != 1 || !strstr(d.msgs[0].text, db)) _exit(2);
    fprintf(stderr, "read-only: %s\n", d.msgs[0].text);
    tg_diag_clear(&d);
    char *absent = path_in(dir, "new.sqlite");
    h = tg_history_open(absent, TG_HISTORY_WRITE, &d);
    if (h || d.status != TG_EUSAGE || !strstr(d.msgs[0].text, absent) || access(absent, F_OK) == 0) _exit(3);
    tg_diag_clear(&d);
    free(absent);
    h = tg_history_open(db, TG_HISTORY_READ, &d);
    tg_arena *a = tg_arena_new();
    tg_hist_run *runs;
    size_t n = 0;
    if (!h || tg_history_load(h, NULL, 0, a, &runs, &n, &d) != TG_OK || n != 2) _exit(4);
    tg_history_close(h);
    tg_arena_free(a);
    _exit(0);
}

/* A read-only history (and directory) for WRITE: refused, untouched; for
** READ: read. Root writes through permission bits, so as root the
** directory is remounted read-only in a child, and the case is skipped
** with a message when the kernel does not allow it. */
static void test_read_only(void **state)
{
    (void)state;
    char *db = make_history(2);
    char *dir = strdup(db);
    *strrchr(dir, '/') = 0;
    /* a directory of its own, so that the mount covers nothing else */
    char *sub = path_in(dir, "ro");
    assert_int_equal(mkdir(sub, 0755), 0);
    char *moved = path_in(sub, "history.sqlite");
    assert_int_equal(rename(db, moved), 0);
    assert_int_equal(chmod(moved, 0444), 0);
    assert_int_equal(chmod(sub, 0555), 0);
    snap before = take_snap(moved);
    inherit(db, dir, sub, moved);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) read_only_child(moved, sub);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        print_message("SKIP read-only sub-case: running as root and the kernel refused a read-only bind mount"
                      " (root writes through permission bits)\n");
    else
        assert_int_equal(WEXITSTATUS(status), 0);
    assert_unchanged(&before);
    /* a read-only file in a writable directory: root writes through it */
    assert_int_equal(chmod(sub, 0755), 0);
    if (geteuid() != 0) {
        before = take_snap(moved);
        expect_refused(moved, TG_HISTORY_WRITE, TG_EUSAGE, "read-only");
        assert_unchanged(&before);
    }
    chmod(sub, 0755);
    chmod(moved, 0644);
    free(db);
    free(dir);
    free(sub);
    free(moved);
}

/* A locked history: another connection holds an exclusive lock past the
** busy timeout (no one may read), then a write lock (readers read, a
** writer is refused). One sentence naming the file; untouched. */
static void test_locked(void **state)
{
    (void)state;
    char *db = make_history(1);
    snap before = take_snap(db);
    setenv("TG_HISTORY_BUSY_MS", "200", 1);
    sqlite3 *other;
    assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    expect_refused(db, TG_HISTORY_READ, TG_EUSAGE, "locked");
    expect_refused(db, TG_HISTORY_WRITE, TG_EUSAGE, "locked");
    assert_int_equal(sqlite3_exec(other, "ROLLBACK; BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    tg_history *h = open_ok(db, TG_HISTORY_WRITE);
    tg_arena *a = tg_arena_new();
    tg_hist_run *runs;
    assert_int_equal(load_ok(h, NULL, 0, a, &runs), 1);
    tg_hist_run r = make_run(a, "gemm", "while-locked", "2026-12-09T00:00:00Z", 1);
    tg_diag d;
    tg_diag_init(&d);
    expect_error(&d, tg_history_append(h, &r, 1, false, &d), TG_EUSAGE, db, "locked", (char *)NULL);
    tg_diag_clear(&d);
    assert_int_equal(r.id, 0);
    tg_history_close(h);
    assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(other), SQLITE_OK);
    unsetenv("TG_HISTORY_BUSY_MS");
    assert_unchanged(&before);
    tg_arena_free(a);
    free(db);
}

static int store_cases_sqlite(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_a_history), cmocka_unit_test(test_newer_schema), cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_read_only), cmocka_unit_test(test_locked),
    };
    return cmocka_run_group_tests_name("history store: SQLite files", tests, NULL, NULL);
}

int tg_store_cases_run(const char *(*fresh_db)(void *ctx), void *ctx, bool sqlite_only_cases)
{
    g.fresh = fresh_db;
    g.ctx = ctx;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_history_order), cmocka_unit_test(test_times),
        cmocka_unit_test(test_one_transaction), cmocka_unit_test(test_label_and_replace),
        cmocka_unit_test(test_workload_keys), cmocka_unit_test(test_accept),
        cmocka_unit_test(test_ten_writers),   cmocka_unit_test(test_killed_writer),
    };
    int failed = cmocka_run_group_tests_name("history store", tests, NULL, NULL);
    if (sqlite_only_cases) failed += store_cases_sqlite();
    return failed;
}
