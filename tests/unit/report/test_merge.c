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

#include "report/json_read.h"
#include "run_fixture.h"

static const tg_report_opts plain = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

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
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING), 3);
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
    tg_merge_stragglers(&run, 0.25, TG_SEV_WARNING);
    assert_int_equal(traces[2].results[1].verdict, TG_V_PASS);
    /* a single rank cannot straggle */
    for (int i = 0; i < 3; i++) traces[i].n_results = 1;
    run.n_traces = 1;
    assert_int_equal(tg_merge_stragglers(&run, 0.10, TG_SEV_WARNING), 0);
    assert_int_equal(traces[0].n_results, 1);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_not_a_result),
        cmocka_unit_test(test_gpus_not_strings),
        cmocka_unit_test(test_results_that_judged_nothing),
        cmocka_unit_test(test_stragglers),
    };
    return cmocka_run_group_tests_name("merge", tests, NULL, NULL);
}
