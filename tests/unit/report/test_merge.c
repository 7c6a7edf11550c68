/*
** `tracegate merge` building blocks: a JSON result read back
** (tg_result_read_json) renders the same JSON again — the round trip keeps
** every member of the contract — and the cross-rank straggler check flags
** exactly the rank above the median by more than the threshold.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "common/sha256.h"
#include "report/json_read.h"
#include "run_fixture.h"
#include "schema_check.h"
#include "tg_config.h"

static const tg_report_opts plain = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

static void expect_in(const char *text, const char *part)
{
    if (!strstr(text, part)) fail_msg("'%s' lacks '%s'", text, part);
}

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/tg-merge-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void test_round_trip(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    /* an idle gap's entry: its interval, the cited row's own span and the
    ** row after it come back too (docs/formats.md) */
    tg_evidence *gap = &run.traces[0].results[0].evidence[1];
    tg_named_value *f = tg_arena_alloc(run.arena, 2 * sizeof *f);
    f[0] = (tg_named_value){"next_table", tg_str("CUPTI_ACTIVITY_KIND_KERNEL")};
    f[1] = (tg_named_value){"next_rowid", tg_int(41, TG_UNIT_NONE)};
    *gap = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 40, .start = 6000, .end = 9000,
                         .interval = TG_INTERVAL_IDLE, .row_start = 5000, .row_end = 6000,
                         .next_table = "CUPTI_ACTIVITY_KIND_KERNEL", .next_rowid = 41, .fields = f, .n_fields = 2};
    char *json = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    char *path = write_temp(json);

    tg_run_result back = {.arena = tg_arena_new()};
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_int_equal(back.n_traces, EXPECT_TRACES);
    char *again = fixture_render(TG_FMT_JSON, &back, NULL, &plain);
    json_error_t err;
    json_t *a = json_loads(json, 0, &err), *b = json_loads(again, 0, &err);
    assert_non_null(a);
    assert_non_null(b);
    /* locations are written from the rule file, which the fixture has */
    assert_true(json_equal(a, b));
    /* units come back with the numbers: the text report reads the same */
    char *text = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    char *text_back = fixture_render(TG_FMT_TEXT, &back, NULL, &plain);
    assert_non_null(strstr(text_back, "sum_duration=1.2 s"));
    assert_non_null(strstr(text_back, "idle 3 us (6000..9000 ns) after CUPTI_ACTIVITY_KIND_MEMCPY rowid 40 (1 us), "
                                      "before CUPTI_ACTIVITY_KIND_KERNEL rowid 41\n"));
    assert_string_equal(text, text_back);
    free(text);
    free(text_back);
    /* the same file twice merges into twice the traces */
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_int_equal(back.n_traces, 2 * EXPECT_TRACES);
    json_decref(a);
    json_decref(b);
    free(again);
    free(json);
    unlink(path);
    free(path);
    tg_diag_clear(&diag);
    tg_arena_free(back.arena);
    tg_arena_free(run.arena);
}

static void test_not_a_result(void **state)
{
    (void)state;
    const char *docs[] = {"{\"tool\": \"other\", \"schema\": 1, \"traces\": []}", "[1, 2", "{}"};
    for (size_t i = 0; i < 3; i++) {
        char *path = write_temp(docs[i]);
        tg_run_result run = {.arena = tg_arena_new()};
        tg_diag diag;
        tg_diag_init(&diag);
        assert_int_equal(tg_result_read_json(path, &run, &diag), TG_EUSAGE);
        assert_int_equal(diag.n_errors, 1);
        assert_string_equal(diag.msgs[0].pos.file, path);
        assert_int_equal(run.n_traces, 0);
        tg_diag_clear(&diag);
        tg_arena_free(run.arena);
        unlink(path);
        free(path);
    }
}

/* A result that judged nothing cannot pass a merge: no traces, or a trace
** with neither rule results nor an error, is refused (TG_EUSAGE). */
static void test_results_that_judged_nothing(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"tool\": \"tracegate\", \"schema\": 1, \"status\": \"pass\", \"traces\": []}",
        "{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [{\"file\": \"r.sqlite\"}]}",
        "{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [{\"file\": \"r.sqlite\", \"results\": []}]}",
        "{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [7]}",
        "{\"traces\": []}",
    };
    static const char *const why[] = {"holds no traces", "has no rule results and no error",
                                      "has no rule results and no error", "has no rule results",
                                      "not a tracegate JSON result"};
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        char *path = write_temp(docs[i]);
        tg_run_result run = {.arena = tg_arena_new()};
        tg_diag diag;
        tg_diag_init(&diag);
        assert_int_equal(tg_result_read_json(path, &run, &diag), TG_EUSAGE);
        assert_true(diag.n > 0);
        if (!strstr(diag.msgs[0].text, why[i])) fail_msg("'%s' lacks '%s'", diag.msgs[0].text, why[i]);
        tg_diag_clear(&diag);
        tg_arena_free(run.arena);
        unlink(path);
        free(path);
    }
}

/* A hand-edited result whose gpus hold things other than names: only the
** names are joined (a NULL once went to printf's %s). */
static void test_gpus_not_strings(void **state)
{
    (void)state;
    char *path = write_temp("{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [{\"file\": \"r.sqlite\","
                            " \"gpus\": [1, \"H100\", null, {\"a\": 1}, \"A100\"], \"results\": [{\"rule\": \"x\","
                            " \"severity\": \"error\", \"status\": \"pass\", \"values\": {}, \"evidence\": []}]}]}");
    tg_run_result run = {.arena = tg_arena_new()};
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_result_read_json(path, &run, &diag), TG_OK);
    assert_int_equal(run.n_traces, 1);
    assert_string_equal(run.traces[0].gpu_names, "H100,A100");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
    unlink(path);
    free(path);
}

/* Three ranks with p50 periods 10, 10.5 and 13 ms: the median is 10.5 ms and
** 13 ms is 23.8% above it. */
static void test_stragglers(void **state)
{
    (void)state;
    tg_run_result run = {.arena = tg_arena_new()};
    static tg_trace_result traces[4];
    static tg_rule_result results[4][2];
    const double periods[] = {10e6, 10.5e6, 13e6};
    for (int i = 0; i < 4; i++) {
        memset(&results[i], 0, sizeof results[i]);
        traces[i] = (tg_trace_result){.file = "rank", .results = results[i], .n_results = 1};
        results[i][0] = (tg_rule_result){.rule = "iteration-time-regression", .verdict = TG_V_SKIP,
                                         .metric_value = i < 3 ? periods[i] : NAN};
    }
    run.traces = traces;
    run.n_traces = 4; /* the fourth has no iterations: not compared */
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, NULL), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(traces[i].n_results, 2);
        tg_rule_result *r = &traces[i].results[1];
        assert_string_equal(r->rule, "rank-straggler");
        assert_int_equal(r->verdict, i == 2 ? TG_V_FAIL : TG_V_PASS);
        assert_true(fabs(r->baseline.value - 10.5e6) < 1e-6);
        assert_true(fabs(r->baseline.change - (periods[i] - 10.5e6) / 10.5e6) < 1e-12);
    }
    assert_int_equal(traces[3].n_results, 1);
    assert_non_null(strstr(traces[2].results[1].message, "+23.8% from the median rank"));
    /* a looser threshold passes everyone */
    for (int i = 0; i < 3; i++) traces[i].n_results = 1;
    tg_merge_stragglers(&run, 0.25, TG_SEV_WARNING, NULL);
    assert_int_equal(traces[2].results[1].verdict, TG_V_PASS);
    /* a single rank cannot straggle */
    for (int i = 0; i < 3; i++) traces[i].n_results = 1;
    run.n_traces = 1;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, NULL), 0);
    assert_int_equal(traces[0].n_results, 1);
    tg_arena_free(run.arena);
}

/* Ranks with workloads, by rank and host: each states its GPU and idle
** time per iteration beside the median rank's; the slowest, failing, names
** what it ran differently from the median rank (the new kernel, its
** launches, the SQL on its own export) and how much of its extra time its
** GPU waited. Two jobs are compared each on its own. */
static void test_stragglers_by_rank(void **state)
{
    (void)state;
    tg_run_result run = {.arena = tg_arena_new()};
    static tg_trace_result traces[5];
    static tg_rule_result results[5][2];
    static tg_work_entry ops[5][2];
    static tg_workload work[5];
    static const char *const hosts[] = {"node-a", "node-b", "node-c", "node-x", "node-y"};
    /* job 7: 10, 10.5 and 14 ms; rank 2 runs an extra 1 ms kernel and waits 2.4 ms more */
    const double period[] = {10e6, 10.5e6, 14e6, 50e6, 51e6}, gemm[] = {6e6, 6e6, 6e6, 1e6, 1e6};
    for (int i = 0; i < 5; i++) {
        ops[i][0] = (tg_work_entry){.name = "gemm", .kind = TG_WORK_KERNEL, .count = 100, .time = gemm[i], .launches = 4};
        ops[i][1] = (tg_work_entry){.name = "dropout_kernel", .kind = TG_WORK_KERNEL, .count = 10, .time = 1e6,
                                    .launches = 1};
        work[i] = (tg_workload){.steady_iterations = 90, .period = period[i], .gpu_time = gemm[i] + (i == 2) * 1e6,
                                .idle = period[i] - gemm[i] - (i == 2) * 1e6, .ops = ops[i], .n_ops = 1 + (i == 2),
                                .sql_steady = "SELECT 1 AS pid, 0 AS start, 1 AS end", .table_kernel = "K",
                                .table_runtime = "R"};
        results[i][0] = (tg_rule_result){.rule = "x", .verdict = TG_V_PASS, .metric_value = NAN};
        traces[i] = (tg_trace_result){.file = "t", .results = results[i], .n_results = 1, .workload = &work[i],
                                      .origin = {.rank = i < 3 ? i : i - 3, .rank_from = "--rank",
                                                 .job = i < 3 ? "7" : "8", .host = hosts[i], .world_size = -1}};
    }
    run.traces = traces;
    run.n_traces = 5;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, NULL), 5);
    const tg_rule_result *slow = &traces[2].results[1], *mid = &traces[1].results[1];
    assert_int_equal(slow->verdict, TG_V_FAIL);
    expect_in(slow->message, "rank 2 on node-c: p50 iteration period 14 ms is +33.3% from the median rank "
                             "(10.5 ms over 3 ranks; limit +10%); per iteration 7 ms GPU, 7 ms idle "
                             "(the median rank, rank 1 on node-b: 6 ms GPU, 4.5 ms idle)");
    expect_in(slow->message, "GPU busy per iteration 6 ms -> 7 ms, the rest of the change (+2.5 ms) is time the "
                             "GPU waited");
    expect_in(slow->message, "dropout_kernel +1 ms per iteration (0 -> 1 launches, new)");
    assert_int_equal(slow->baseline.n_contributors, 1);
    assert_string_equal(slow->baseline.contributors[0].name, "dropout_kernel");
    assert_int_equal(slow->baseline.contributors[0].status, TG_CONTRIB_NEW);
    assert_non_null(slow->baseline.contributors[0].query);
    expect_in(slow->baseline.contributors[0].query, "FROM K");
    /* the values side by side */
    assert_string_equal(slow->values[2].name, "gpu_time_ns");
    assert_true(fabs(slow->values[2].value.u.f - 7e6) < 1);
    assert_string_equal(slow->values[5].name, "median_rank_idle_ns");
    assert_true(fabs(slow->values[5].value.u.f - 4.5e6) < 1);
    /* the median rank passes and names no contributors */
    assert_int_equal(mid->verdict, TG_V_PASS);
    assert_int_equal(mid->baseline.n_contributors, 0);
    /* job 8: its own median (50.5 ms), nobody 10% above it */
    assert_int_equal(traces[4].results[1].verdict, TG_V_PASS);
    expect_in(traces[4].results[1].message, "rank 1 on node-y: p50 iteration period 51 ms is +0.99% from the median "
                                            "rank (50.5 ms over 2 ranks");
    tg_arena_free(run.arena);
}

/* Ranks that cannot be compared say why, one sentence per job, counted
** by what they lack: no steady iteration, one (no period between two),
** no workload at all; nothing when a job has one rank or was compared.
** And the straggler found is one finding of the merged verdict: a
** warning-severity regression counted once, as a regression. */
static void test_stragglers_not_compared(void **state)
{
    (void)state;
    tg_run_result run = {.arena = tg_arena_new()};
    static tg_trace_result traces[8];
    static tg_rule_result results[8][2];
    static tg_workload work[8];
    /* job 1: 3 ranks of 1 steady iteration; job 2: 0, 1 iteration and a rank
    ** with a period; job 3: a rank of 1 iteration and a result without a
    ** workload */
    const char *jobs[] = {"1", "1", "1", "2", "2", "2", "3", "3"};
    const int64_t iters[] = {1, 1, 1, 0, 1, 5, 1, 0};
    const int64_t ranks[] = {0, 1, 2, 0, 1, 2, 0, 0};
    for (int i = 0; i < 8; i++) {
        work[i] = (tg_workload){.steady_iterations = iters[i], .period = iters[i] > 1 ? 10e6 : NAN,
                                .gpu_time = NAN, .idle = NAN};
        results[i][0] = (tg_rule_result){.rule = "x", .verdict = TG_V_PASS, .metric_value = NAN};
        traces[i] = (tg_trace_result){.file = "t", .results = results[i], .n_results = 1,
                                      .workload = i == 7 ? NULL : &work[i],
                                      .origin = {.rank = i == 7 ? 1 : ranks[i], .rank_from = "--rank",
                                                 .job = jobs[i], .world_size = -1}};
    }
    run.traces = traces;
    run.n_traces = 8;
    const char *why = NULL;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, &why), 0);
    assert_non_null(why);
    expect_in(why, "job 1: ranks not compared: each of the 3 ranks has 1 steady iteration; the straggler "
                   "comparison needs a p50 iteration period, 2 or more steady iterations, on at least 2 ranks");
    expect_in(why, "job 2: ranks not compared: 1 of the 3 ranks has a p50 iteration period (1 with no steady "
                   "iteration, 1 with 1 steady iteration)");
    expect_in(why, "on at least 2 ranks. job 2: ");
    expect_in(why, "job 3: ranks not compared: 0 of the 2 ranks have a p50 iteration period (1 with 1 steady "
                   "iteration, 1 with no p50 iteration period)");
    /* a job of one rank: nothing to say */
    run.n_traces = 7;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, &why), 0);
    assert_null(strstr(why, "job 3"));
    for (int i = 0; i < 8; i++) assert_int_equal(traces[i].n_results, 1);
    /* compared: nothing said */
    for (int i = 0; i < 3; i++) {
        work[i].steady_iterations = 5;
        work[i].period = i == 2 ? 20e6 : 10e6;
    }
    run.n_traces = 3;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, &why), 3);
    assert_null(why);
    /* the straggler (rank 2), a warning, is one finding: a regression */
    assert_int_equal(traces[2].results[1].verdict, TG_V_FAIL);
    char line[512];
    tg_report_verdict_line(&run, &plain, line, sizeof line);
    expect_in(line, "1 regression");
    if (strstr(line, "warning finding")) fail_msg("the straggler is counted twice: %s", line);
    tg_arena_free(run.arena);
}

/* ------------------------------------------------------------ ranks */

/* A run of traces with these ranks (-1: unknown), world sizes (-1) and
** jobs; each has one passing result and room for the straggler's. */
typedef struct rank_spec {
    int64_t rank, world;
    const char *job;
} rank_spec;

static tg_run_result ranked_run(const rank_spec *spec, size_t n)
{
    tg_run_result run = {.arena = tg_arena_new()};
    run.traces = tg_arena_alloc(run.arena, n * sizeof *run.traces);
    for (size_t i = 0; i < n; i++) {
        tg_trace_result *t = &run.traces[i];
        t->file = tg_arena_printf(run.arena, "trace%zu.sqlite", i);
        t->source = tg_arena_printf(run.arena, "results/r%zu.json", i);
        t->origin = (tg_origin){.rank = spec[i].rank, .world_size = spec[i].world, .job = spec[i].job,
                                .rank_from = spec[i].rank >= 0 ? "--rank" : NULL};
        t->results = tg_arena_alloc(run.arena, 2 * sizeof *t->results);
        t->results[0] = (tg_rule_result){.rule = "x", .verdict = TG_V_PASS, .metric_value = NAN};
        t->n_results = 1;
    }
    run.n_traces = n;
    return run;
}

/* The first error's text, or fail. */
static const char *first_error(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->msgs[i].level == TG_DIAG_ERROR) return d->msgs[i].text;
    fail_msg("no error in the diag");
    return "";
}

/* Issue 31, class 8: a world size is a claim; missing ranks are runs, so
** the entry for them is bounded by the results, not by the world. The cap
** (TG_MERGE_WORLD_MAX, docs/limits.md) refuses a larger --world-size; a
** result claiming more is a warning and its world size is not used. */
static void test_world_size_bounded(void **state)
{
    (void)state;
    const rank_spec spec[] = {{0, -1, "big"}, {5, -1, "big"}};
    tg_run_result run = ranked_run(spec, 2);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, TG_MERGE_WORLD_MAX, &diag), TG_OK);
    assert_int_equal(run.n_traces, 3);
    const tg_trace_result *x = &run.traces[2];
    assert_int_equal(x->n_missing_ranks, 2);   /* 1-4 and 6-1048575: two runs, not a million ranks */
    assert_int_equal(x->missing_ranks[0], 1);
    assert_int_equal(x->missing_ranks[1], 4);
    assert_int_equal(x->missing_ranks[2], 6);
    assert_int_equal(x->missing_ranks[3], TG_MERGE_WORLD_MAX - 1);
    expect_in(x->error, "no result for 1048574 of the 1048576 ranks of job big (ranks 1-4, 6-1048575)");
    const char *note = "a note about the whole run";
    const tg_report_opts with = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9", .notes = &note, .n_notes = 1,
                                 .rules_digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
    char *json = fixture_render(TG_FMT_JSON, &run, NULL, &with);
    assert_true(strlen(json) < 8192);
    /* the new members are those docs/result-schema.json describes */
    json_error_t jerr;
    json_t *schema = json_load_file(TG_SOURCE_ROOT "/docs/result-schema.json", 0, &jerr);
    json_t *doc = json_loads(json, 0, &jerr);
    char err[512];
    assert_non_null(schema);
    assert_non_null(doc);
    if (!schema_check(schema, doc, true, err, sizeof err)) fail_msg("schema: %s", err);
    json_decref(doc);
    json_decref(schema);
    assert_non_null(strstr(json, "\"missing_rank_count\": 1048574"));
    assert_null(strstr(json, "\"missing_ranks\""));   /* too many to list one by one */
    free(json);
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    run = ranked_run(spec, 2);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, TG_MERGE_WORLD_MAX + 1, &diag), TG_EUSAGE);
    expect_in(first_error(&diag), "--world-size 1048577 is more than the 1048576 ranks merge accepts");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    const rank_spec claims[] = {{0, 100000000, "c"}, {1, 100000000, "c"}};
    run = ranked_run(claims, 2);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_OK);
    assert_int_equal(run.n_traces, 2);          /* no entry for 10^8 - 2 ranks */
    assert_int_equal(diag.n_errors, 0);
    assert_int_equal(diag.msgs[0].level, TG_DIAG_WARNING);
    expect_in(diag.msgs[0].text, "says the world of job c has 100000000 ranks, more than the 1048576 merge accepts");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* The rule-set digest's hash: FIPS 180-4's test vectors. */
static void test_sha256(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        tg_sha256 h;
        char hex[TG_SHA256_HEX];
        tg_sha256_init(&h);
        tg_sha256_update(&h, v[i].in, strlen(v[i].in));
        tg_sha256_hex(&h, hex);
        assert_string_equal(hex, v[i].out);
    }
    tg_sha256 h;   /* a million 'a', fed in odd pieces */
    char hex[TG_SHA256_HEX], a[997];
    memset(a, 'a', sizeof a);
    tg_sha256_init(&h);
    for (size_t left = 1000000; left;) {
        size_t n = left < sizeof a ? left : sizeof a;
        tg_sha256_update(&h, a, n);
        left -= n;
    }
    tg_sha256_hex(&h, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Each rank once, the world complete: nothing added, no message; job
** "other" (rank 0, no world size) cannot be accounted for above its
** highest rank, which a warning says. */
static void test_ranks_complete(void **state)
{
    (void)state;
    const rank_spec spec[] = {{2, 3, "j"}, {0, 3, "j"}, {1, -1, "j"}, {0, -1, "other"}};
    tg_run_result run = ranked_run(spec, 4);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_OK);
    assert_int_equal(diag.n, 1);
    assert_int_equal(diag.n_errors, 0);
    assert_int_equal(diag.msgs[0].level, TG_DIAG_WARNING);
    expect_in(diag.msgs[0].text, "the results of job other name ranks 0 to 0 but not the world size");
    assert_int_equal(run.n_traces, 4);
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* No world size anywhere: ranks 0, 1, 3 and 6 leave 2, 4 and 5 missing
** whatever the world is (ranks count from 0 without gaps); the entry says
** that ranks above 6 are not accounted for; no warning besides. */
static void test_ranks_gap_without_world(void **state)
{
    (void)state;
    const rank_spec spec[] = {{3, -1, "9"}, {0, -1, "9"}, {6, -1, "9"}, {1, -1, "9"}};
    tg_run_result run = ranked_run(spec, 4);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_OK);
    assert_int_equal(diag.n, 0);
    assert_int_equal(run.n_traces, 5);
    const tg_trace_result *x = &run.traces[4];
    assert_int_equal(x->status, TG_ETRACE);
    assert_int_equal(x->origin.world_size, -1);
    assert_int_equal(x->n_missing_ranks, 2);   /* runs: 2-2, 4-5 */
    assert_int_equal(x->missing_ranks[0], 2);
    assert_int_equal(x->missing_ranks[1], 2);
    assert_int_equal(x->missing_ranks[2], 4);
    assert_int_equal(x->missing_ranks[3], 5);
    expect_in(x->error, "no result for 3 of the ranks 0 to 6 of job 9 (ranks 2, 4-5)");
    expect_in(x->error, "the world size is unknown (no result records it and no --world-size is given), so ranks "
                        "above 6 are not accounted for either");
    const tg_report_opts opts = {.fail_on = TG_SEV_ERROR};
    assert_string_equal(tg_run_status(&run, &opts), "error");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* Two results for one rank of a job: a usage error naming both files.
** The same rank in two jobs, or in a job and in results without one, is
** not a duplicate. */
static void test_ranks_duplicate(void **state)
{
    (void)state;
    const rank_spec spec[] = {{0, 4, "77"}, {3, 4, "77"}, {3, 4, "77"}, {3, 4, "78"}, {3, -1, NULL}};
    tg_run_result run = ranked_run(spec, 5);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_EUSAGE);
    assert_int_equal(diag.n_errors, 1);
    const char *e = first_error(&diag);
    expect_in(e, "rank 3 of job 77 has two results, results/r1.json (trace1.sqlite) and results/r2.json (trace2.sqlite)");
    assert_int_equal(run.n_traces, 5);   /* nothing added */
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    /* without job ids: one job */
    const rank_spec plain[] = {{5, -1, NULL}, {5, -1, NULL}};
    run = ranked_run(plain, 2);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_EUSAGE);
    expect_in(first_error(&diag), "rank 5 has two results");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* Thousands of duplicates: five messages and a count, not thousands. */
static void test_ranks_many_duplicates(void **state)
{
    (void)state;
    rank_spec spec[200];
    for (size_t i = 0; i < 200; i++) spec[i] = (rank_spec){(int64_t)(i / 2), -1, NULL};
    tg_run_result run = ranked_run(spec, 200);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_EUSAGE);
    assert_int_equal(diag.n_errors, 6);
    expect_in(diag.msgs[5].text, "95 more such problems");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* A known world with ranks missing: one unreadable entry per job naming
** them (runs of ranks), the merged status an error; results without a rank
** are said not to count. */
static void test_ranks_missing(void **state)
{
    (void)state;
    const rank_spec spec[] = {{0, 16, "77"}, {1, 16, "77"}, {4, 16, "77"}, {8, -1, "77"}, {-1, -1, "77"},
                              {0, 2, "78"}};
    tg_run_result run = ranked_run(spec, 6);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_OK);
    assert_int_equal(diag.n, 0);
    assert_int_equal(run.n_traces, 8);
    const tg_trace_result *x = &run.traces[6], *y = &run.traces[7];
    assert_int_equal(x->status, TG_ETRACE);
    assert_string_equal(x->file, "(ranks without a result of job 77)");
    assert_int_equal(x->n_missing_ranks, 3);   /* runs: 2-3, 5-7, 9-15 */
    assert_int_equal(x->missing_ranks[0], 2);
    assert_int_equal(x->missing_ranks[5], 15);
    expect_in(x->error, "no result for 12 of the 16 ranks of job 77 (ranks 2-3, 5-7, 9-15)");
    expect_in(x->error, "a missing rank is not a pass (1 result names no rank: give check --rank or --rank-pattern)");
    assert_int_equal(x->n_results, 0);
    assert_int_equal(y->n_missing_ranks, 1);
    expect_in(y->error, "no result for 1 of the 2 ranks of job 78 (rank 1)");
    const tg_report_opts opts = {.fail_on = TG_SEV_ERROR};
    assert_string_equal(tg_run_status(&run, &opts), "error");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    /* the world size from the merge's option: every rank counts */
    const rank_spec none[] = {{0, -1, NULL}};
    run = ranked_run(none, 1);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, 3, &diag), TG_OK);
    assert_int_equal(run.n_traces, 2);
    expect_in(run.traces[1].error, "no result for 2 of the 3 ranks (ranks 1-2)");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* A world the results disagree on, a rank outside it, --world-size that
** contradicts a result: usage errors. */
static void test_ranks_world(void **state)
{
    (void)state;
    const rank_spec disagree[] = {{0, 8, "j"}, {1, 16, "j"}};
    tg_run_result run = ranked_run(disagree, 2);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_EUSAGE);
    expect_in(first_error(&diag), "the results of job j disagree on the world size: results/r0.json (trace0.sqlite) "
                                  "says 8 ranks, results/r1.json (trace1.sqlite) says 16");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    const rank_spec outside[] = {{0, 4, NULL}, {4, -1, NULL}};
    run = ranked_run(outside, 2);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_EUSAGE);
    expect_in(first_error(&diag), "results/r1.json (trace1.sqlite): rank 4 is not a rank, whose world has 4 ranks");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);

    const rank_spec told[] = {{0, 4, NULL}};
    run = ranked_run(told, 1);
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, 2, &diag), TG_EUSAGE);
    expect_in(first_error(&diag), "--world-size 2, but results/r0.json (trace0.sqlite) says the world has 4 ranks");
    tg_diag_clear(&diag);
    tg_arena_free(run.arena);
}

/* A merged result names its missing ranks (JSON missing_ranks); read back,
** the entry is dropped and the merge says it again, so merging the merged
** result with the missing rank's own result passes. */
static void test_missing_not_read_back(void **state)
{
    (void)state;
    const rank_spec spec[] = {{0, 2, NULL}};
    tg_run_result run = ranked_run(spec, 1);
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_merge_ranks(&run, -1, &diag), TG_OK);
    assert_int_equal(run.n_traces, 2);
    char *json = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    assert_non_null(strstr(json, "\"missing_ranks\": [\n        1\n      ]"));
    assert_non_null(strstr(json, "\"missing_rank_runs\": [\n        [\n          1,\n          1\n        ]\n      ]"));
    assert_non_null(strstr(json, "\"missing_rank_count\": 1"));
    char *path = write_temp(json);
    tg_run_result back = {.arena = tg_arena_new()};
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_int_equal(back.n_traces, 1);
    assert_int_equal(back.traces[0].origin.rank, 0);
    assert_string_equal(back.traces[0].origin.rank_from, "--rank");
    assert_int_equal(back.traces[0].origin.world_size, 2);
    assert_string_equal(back.traces[0].source, path);
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
    free(json);
    tg_arena_free(back.arena);
    tg_arena_free(run.arena);
}

/* A merged result read back leaves out the rank-straggler results the
** merge added (the next merge judges the ranks again, once). */
static void test_straggler_not_read_back(void **state)
{
    (void)state;
    const rank_spec spec[] = {{0, 2, NULL}, {1, 2, NULL}};
    tg_run_result run = ranked_run(spec, 2);
    static tg_workload work[2];
    for (int i = 0; i < 2; i++) {
        work[i] = (tg_workload){.period = i ? 30e6 : 10e6, .gpu_time = NAN, .idle = NAN};
        run.traces[i].workload = &work[i];
    }
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING, NULL), 2);
    assert_int_equal(run.traces[1].n_results, 2);
    char *json = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    assert_non_null(strstr(json, "\"rule\": \"rank-straggler\""));
    char *path = write_temp(json);
    tg_run_result back = {.arena = tg_arena_new()};
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_int_equal(back.n_traces, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(back.traces[i].n_results, 1);
        assert_string_equal(back.traces[i].results[0].rule, "x");
    }
    /* merged again: one rank-straggler each */
    tg_merge_stragglers(&back, 0.10, TG_SEV_WARNING, NULL);
    assert_int_equal(back.traces[1].n_results, 2);
    assert_int_equal(back.traces[1].results[1].verdict, TG_V_FAIL);
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
    free(json);
    tg_arena_free(back.arena);
    tg_arena_free(run.arena);
}

/* Origins a result cannot hold are refused, not read as unknown. */
static void test_bad_origin(void **state)
{
    (void)state;
    static const char *const bad[] = {"\"rank\": -1", "\"rank\": \"3\"", "\"world_size\": 0", "\"job\": 7",
                                      "\"pids\": 7"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[512];
        snprintf(doc, sizeof doc, "{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [{\"file\": \"r.sqlite\", %s,"
                 " \"results\": [{\"rule\": \"x\", \"severity\": \"error\", \"status\": \"pass\"}]}]}", bad[i]);
        char *path = write_temp(doc);
        tg_run_result run = {.arena = tg_arena_new()};
        tg_diag diag;
        tg_diag_init(&diag);
        assert_int_equal(tg_result_read_json(path, &run, &diag), TG_EUSAGE);
        expect_in(first_error(&diag), "rank, world_size, job, host or pids is not what tracegate writes");
        tg_diag_clear(&diag);
        tg_arena_free(run.arena);
        unlink(path);
        free(path);
    }
}

/* The format a trace was in comes back (docs/formats.md, trace_format):
** a Kineto result merged names it in the text header and says its queries
** run with jq, as the direct report does; a result without the key is of
** an export; a name tracegate does not know is refused. */
static void test_trace_format(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    run.traces[0].trace_format = "kineto-json";
    run.traces[0].nsys_version = NULL;
    char *json = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    expect_in(json, "\"trace_format\": \"kineto-json\"");
    expect_in(json, "\"trace_format\": \"nsys-sqlite\"");   /* the fixture's other traces */
    char *path = write_temp(json);
    tg_run_result back = {.arena = tg_arena_new()};
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_string_equal(back.traces[0].trace_format, "kineto-json");
    char *text = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    char *text_back = fixture_render(TG_FMT_TEXT, &back, NULL, &plain);
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    *nl = 0;
    expect_in(text, "  (Kineto JSON, schema ");
    assert_true(strncmp(text_back, text, strlen(text)) == 0 && text_back[strlen(text)] == '\n');
    char *html = fixture_render(TG_FMT_HTML, &back, NULL, &plain);
    expect_in(html, "<p class=\"meta\">Kineto JSON, schema ");
    expect_in(html, "<strong>Reproduce</strong> (jq on the trace)");
    free(text), free(text_back), free(html), free(json);
    tg_diag_clear(&diag);
    tg_arena_free(back.arena);
    tg_arena_free(run.arena);
    unlink(path);
    free(path);

    static const char *const docs[] = {"", "\"trace_format\": \"rocprof\", ", "\"trace_format\": 3, "};
    for (size_t i = 0; i < 3; i++) {
        char doc[512];
        snprintf(doc, sizeof doc, "{\"tool\": \"tracegate\", \"schema\": 1, \"traces\": [{\"file\": \"r.sqlite\", %s"
                 "\"results\": [{\"rule\": \"x\", \"severity\": \"error\", \"status\": \"pass\"}]}]}", docs[i]);
        path = write_temp(doc);
        back = (tg_run_result){.arena = tg_arena_new()};
        tg_diag_init(&diag);
        if (i == 0) {
            assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
            text = fixture_render(TG_FMT_TEXT, &back, NULL, &plain);
            expect_in(text, "r.sqlite  (nsys (version not recorded), schema not recorded)");
            free(text);
        } else {
            assert_int_equal(tg_result_read_json(path, &back, &diag), TG_EUSAGE);
            expect_in(first_error(&diag), "trace r.sqlite: trace_format is not a format tracegate reads "
                                          "(nsys-sqlite or kineto-json)");
        }
        tg_diag_clear(&diag);
        tg_arena_free(back.arena);
        unlink(path);
        free(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_not_a_result),
        cmocka_unit_test(test_gpus_not_strings),
        cmocka_unit_test(test_results_that_judged_nothing),
        cmocka_unit_test(test_stragglers),
        cmocka_unit_test(test_stragglers_by_rank),
        cmocka_unit_test(test_stragglers_not_compared),
        cmocka_unit_test(test_ranks_complete),
        cmocka_unit_test(test_ranks_gap_without_world),
        cmocka_unit_test(test_ranks_duplicate),
        cmocka_unit_test(test_ranks_many_duplicates),
        cmocka_unit_test(test_ranks_missing),
        cmocka_unit_test(test_ranks_world),
        cmocka_unit_test(test_missing_not_read_back),
        cmocka_unit_test(test_straggler_not_read_back),
        cmocka_unit_test(test_bad_origin),
        cmocka_unit_test(test_trace_format),
        cmocka_unit_test(test_world_size_bounded),
        cmocka_unit_test(test_sha256),
    };
    return cmocka_run_group_tests_name("merge", tests, NULL, NULL);
}
