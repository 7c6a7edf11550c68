/*
** The JSON result: its contract (docs/formats.md) checked against
** docs/result-schema.json with the subset checker, its key order, the
** mapping of nulls, NaN, baselines and evidence, and the run status rules
** (tg_run_status) that every format shares.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "run_fixture.h"
#include "schema_check.h"
#include "tg_config.h"

static json_t *load_schema(void)
{
    json_error_t jerr;
    json_t *schema = json_load_file(TG_SOURCE_ROOT "/docs/result-schema.json", 0, &jerr);
    if (!schema) fail_msg("docs/result-schema.json: %s (line %d)", jerr.text, jerr.line);
    return schema;
}

static json_t *render_json(const tg_run_result *run, const tg_report_opts *opts)
{
    char *text = fixture_render(TG_FMT_JSON, run, NULL, opts);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc) fail_msg("JSON does not parse: %s at line %d", jerr.text, jerr.line);
    free(text);
    return doc;
}

static const tg_report_opts default_opts = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

static void test_schema_valid(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    json_t *schema = load_schema(), *doc = render_json(&run, &default_opts);
    char err[512];
    if (!schema_check(schema, doc, true, err, sizeof err)) fail_msg("schema: %s", err);
    json_decref(doc);

    /* The other statuses validate too. */
    tg_run_result clean = run;
    clean.n_traces = 1;
    clean.traces = tg_arena_alloc(run.arena, sizeof *clean.traces);
    clean.traces[0] = run.traces[1];
    doc = render_json(&clean, &default_opts);
    if (!schema_check(schema, doc, true, err, sizeof err)) fail_msg("schema: %s", err);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "fail");
    json_decref(doc);
    json_decref(schema);
    tg_arena_free(run.arena);
}

/* The checker must be able to say no, or the test above proves nothing. */
static void test_schema_checker_rejects(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    json_t *schema = load_schema(), *doc = render_json(&run, &default_opts);
    char err[512];
    json_t *result = json_array_get(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results"), 0);

    json_object_set_new(result, "status", json_string("maybe"));
    assert_false(schema_check(schema, doc, true, err, sizeof err));
    assert_non_null(strstr(err, "/traces/0/results/0/status"));
    json_object_set_new(result, "status", json_string("fail"));
    assert_true(schema_check(schema, doc, true, err, sizeof err));

    json_object_del(result, "reproduce");
    assert_false(schema_check(schema, doc, true, err, sizeof err));
    assert_non_null(strstr(err, "reproduce"));
    json_object_set_new(result, "reproduce", json_integer(3));
    assert_false(schema_check(schema, doc, true, err, sizeof err));
    json_object_set_new(result, "reproduce", json_null());

    json_object_set_new(result, "undocumented", json_true());
    assert_false(schema_check(schema, doc, true, err, sizeof err));
    assert_true(schema_check(schema, doc, false, err, sizeof err));
    json_object_del(result, "undocumented");

    json_object_set_new(json_object_get(result, "values"), "list", json_array());
    assert_false(schema_check(schema, doc, false, err, sizeof err));
    json_decref(doc);
    json_decref(schema);
    tg_arena_free(run.arena);
}

static void assert_keys(const json_t *obj, const char *const *keys, size_t n)
{
    assert_int_equal(json_object_size(obj), n);
    size_t i = 0;
    for (void *it = json_object_iter((json_t *)obj); it; it = json_object_iter_next((json_t *)obj, it), i++)
        assert_string_equal(json_object_iter_key(it), keys[i]);
}

static void test_contract(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    json_t *doc = render_json(&run, &default_opts);
    static const char *const top[] = {"tool", "version", "schema", "status", "traces"};
    assert_keys(doc, top, 5);
    assert_string_equal(json_string_value(json_object_get(doc, "tool")), "tracegate");
    assert_string_equal(json_string_value(json_object_get(doc, "version")), "9.9.9");
    assert_int_equal(json_integer_value(json_object_get(doc, "schema")), 1);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "error");

    json_t *traces = json_object_get(doc, "traces");
    assert_int_equal(json_array_size(traces), EXPECT_TRACES);
    json_t *t0 = json_array_get(traces, 0);
    json_t *gpus = json_object_get(t0, "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    assert_string_equal(json_string_value(json_array_get(gpus, 1)), "NVIDIA A100-SXM4-80GB");
    assert_null(json_object_get(t0, "error"));

    json_t *r = json_array_get(json_object_get(t0, "results"), 0);
    static const char *const keys[] = {"rule", "title", "status", "severity", "count", "message",
                                       "advice", "values", "units", "evidence", "reproduce", "cause", "location"};
    assert_keys(r, keys, 13);
    /* the cause (docs/host.md): kind, summary, unknown, sites, reproduce */
    json_t *cause = json_object_get(r, "cause");
    static const char *const cause_keys[] = {"kind", "summary", "unknown", "sites", "reproduce"};
    assert_keys(cause, cause_keys, 5);
    assert_string_equal(json_string_value(json_object_get(cause, "kind")), "call_site");
    json_t *site = json_array_get(json_object_get(cause, "sites"), 0);
    static const char *const site_keys[] = {"call_site", "call_module", "count", "time_ns", "share", "table",
                                            "rowids", "stack"};
    assert_keys(site, site_keys, 8);
    assert_string_equal(json_string_value(json_object_get(site, "call_module")), "train.so");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(site, "rowids"), 1)), 40);
    assert_string_equal(json_string_value(json_array_get(json_object_get(site, "stack"), 1)), "step(int) (train.so)");
    json_t *host = json_object_get(json_array_get(json_object_get(t0, "results"), 3), "cause");
    json_t *win = json_array_get(json_object_get(host, "windows"), 0);
    assert_int_equal(json_integer_value(json_object_get(win, "duration_ns")), 720000000);
    json_t *act = json_array_get(json_object_get(win, "activity"), 0);
    static const char *const act_keys[] = {"source", "name", "tid", "thread", "launch_thread", "count", "time_ns",
                                           "share", "call_site", "call_module", "table", "rowids"};
    assert_keys(act, act_keys, 12);
    assert_string_equal(json_string_value(json_object_get(act, "thread")), NASTY);
    /* units beside values: the duration's, not count's (a plain number) */
    json_t *units = json_object_get(r, "units");
    assert_int_equal(json_object_size(units), 1);
    assert_string_equal(json_string_value(json_object_get(units, "sum_duration_ns")), "ns");
    assert_int_equal(json_integer_value(json_object_get(r, "count")), 400);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "values"), "sum_duration_ns")),
                     1200000000);
    json_t *ev = json_object_get(r, "evidence");
    assert_int_equal(json_array_size(ev), 2);
    json_t *e0 = json_array_get(ev, 0), *e1 = json_array_get(ev, 1);
    assert_string_equal(json_string_value(json_object_get(e0, "table")), "CUPTI_ACTIVITY_KIND_MEMCPY");
    assert_int_equal(json_integer_value(json_object_get(e0, "rowid")), 12);
    assert_int_equal(json_integer_value(json_object_get(e0, "end")), 5000);
    json_t *fields = json_object_get(e0, "fields");
    assert_string_equal(json_string_value(json_object_get(fields, "api")), NASTY);
    assert_true(json_is_false(json_object_get(fields, "pinned")));
    assert_int_equal(json_integer_value(json_object_get(fields, "bytes")), 16777216);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e0, "units"), "bytes")), "bytes");
    assert_null(json_object_get(json_object_get(e0, "units"), "pinned"));
    assert_true(json_is_null(json_object_get(e1, "start")));
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "location"), "file")),
                        "rules.d/memcpy.yaml");

    /* skip with missing data: count null, flag present; NaN values are null */
    json_t *skip = json_array_get(json_object_get(t0, "results"), 2);
    assert_string_equal(json_string_value(json_object_get(skip, "status")), "skip");
    assert_true(json_is_null(json_object_get(skip, "count")));
    assert_true(json_is_true(json_object_get(skip, "missing_data")));
    assert_true(json_is_null(json_object_get(skip, "reproduce")));
    json_t *util = json_array_get(json_object_get(t0, "results"), 3);
    assert_true(json_is_null(json_object_get(json_object_get(util, "values"), "weird")));
    assert_float_equal(json_real_value(json_object_get(json_object_get(util, "values"), "busy_frac_steady")),
                       0.31, 1e-12);

    json_t *bad = json_array_get(traces, 2);
    assert_non_null(strstr(json_string_value(json_object_get(bad, "error")), "not an SQLite database"));
    assert_true(json_is_null(json_object_get(bad, "schema_version")));
    assert_int_equal(json_array_size(json_object_get(bad, "results")), 0);
    json_decref(doc);
    tg_arena_free(run.arena);
}

/* Where each trace comes from, and its workload: the members merge reads
** (docs/formats.md, "Where a result comes from" and "Workload"). */
static void test_origin_and_workload(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    json_t *doc = render_json(&run, &default_opts);
    json_t *t0 = json_array_get(json_object_get(doc, "traces"), 0), *t1 = json_array_get(json_object_get(doc, "traces"), 1);
    static const char *const keys[] = {"file", "nsys_version", "schema_version", "trace_format", "rank", "rank_from",
                                       "world_size", "job", "host", "pids", "gpus", "workload", "results"};
    assert_keys(t0, keys, 13);
    /* a trace that names no format is of an export (docs/formats.md) */
    assert_string_equal(json_string_value(json_object_get(t0, "trace_format")), "nsys-sqlite");
    assert_int_equal(json_integer_value(json_object_get(t0, "rank")), 0);
    assert_string_equal(json_string_value(json_object_get(t0, "rank_from")), "env SLURM_PROCID");
    assert_int_equal(json_integer_value(json_object_get(t0, "world_size")), 2);
    assert_string_equal(json_string_value(json_object_get(t0, "job")), "31337");
    assert_string_equal(json_string_value(json_object_get(t0, "host")), "node-a");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(t0, "pids"), 1)), 4243);
    /* unknown is null, and an unknown rank has no rank_from */
    assert_true(json_is_null(json_object_get(t1, "rank")));
    assert_null(json_object_get(t1, "rank_from"));
    assert_true(json_is_null(json_object_get(t1, "world_size")));
    assert_true(json_is_null(json_object_get(t1, "host")));
    assert_int_equal(json_array_size(json_object_get(t1, "pids")), 0);
    assert_null(json_object_get(t1, "workload"));
    json_t *w = json_object_get(t0, "workload");
    assert_float_equal(json_number_value(json_object_get(w, "period_p50_ns")), 2.5e6, 1e-6);
    assert_float_equal(json_number_value(json_object_get(w, "idle_ns")), 1.9e6, 1e-6);
    json_t *op = json_array_get(json_object_get(w, "ops"), 1), *rng = json_array_get(json_object_get(w, "ranges"), 0);
    assert_string_equal(json_string_value(json_object_get(op, "kind")), "memcpy");
    assert_float_equal(json_number_value(json_object_get(op, "launches")), 1, 1e-12);
    assert_string_equal(json_string_value(json_object_get(rng, "kind")), "nvtx");
    assert_null(json_object_get(rng, "launches"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(w, "sql"), "kernel")),
                        "CUPTI_ACTIVITY_KIND_KERNEL");
    json_decref(doc);
    tg_arena_free(run.arena);
}

/* A workload keeps its 32 busiest ops and sums the rest as "(other)". */
static void test_workload_cap(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_work_entry ops[40];
    for (int i = 0; i < 40; i++)
        ops[i] = (tg_work_entry){.name = tg_arena_printf(run.arena, "k%02d", i), .kind = TG_WORK_KERNEL, .count = 1,
                                 .total = 100 - i, .time = 40 - i, .launches = 1};
    tg_workload w = *run.traces[0].workload;
    w.ops = ops;
    w.n_ops = 40;
    run.traces[0].workload = &w;
    json_t *doc = render_json(&run, &default_opts);
    json_t *list = json_object_get(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "workload"), "ops");
    assert_int_equal(json_array_size(list), 33);
    json_t *other = json_array_get(list, 32);
    assert_string_equal(json_string_value(json_object_get(other, "name")), "(other)");
    assert_int_equal(json_integer_value(json_object_get(other, "count")), 8);
    assert_float_equal(json_number_value(json_object_get(other, "time_ns")), 8 + 7 + 6 + 5 + 4 + 3 + 2 + 1, 1e-9);
    json_decref(doc);
    tg_arena_free(run.arena);
}

/* The report is written one trace at a time: its bytes are those of
** json_dumpf on the whole document, for a run of traces and for none. */
static void test_streamed_bytes(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    for (int empty = 0; empty < 2; empty++) {
        if (empty) run.n_traces = 0;
        char *text = fixture_render(TG_FMT_JSON, &run, NULL, &default_opts);
        json_error_t jerr;
        json_t *doc = json_loads(text, 0, &jerr);
        assert_non_null(doc);
        char *again = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
        size_t n = strlen(again);
        assert_true(strlen(text) == n + 1 && text[n] == '\n' && !strncmp(text, again, n));
        if (empty) assert_non_null(strstr(text, "\"traces\": []\n}"));
        free(again);
        free(text);
        json_decref(doc);
    }
    tg_arena_free(run.arena);
}

static void test_baseline(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    json_t *doc = render_json(&run, &default_opts);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "traces"), 1), "results");
    assert_null(json_object_get(json_array_get(results, 0), "baseline"));

    json_t *reg = json_array_get(results, 1);
    json_t *b = json_object_get(reg, "baseline");
    static const char *const keys[] = {"value", "current", "change", "p_value", "n_baseline", "n_current",
                                       "regression", "improvement", "inconclusive", "outside_band", "band_lo",
                                       "band_hi", "band_measured", "spread", "n_runs", "workload_match"};
    assert_keys(b, keys, 16);
    assert_true(json_is_true(json_object_get(b, "band_measured")));
    assert_int_equal(json_integer_value(json_object_get(b, "n_runs")), 3);
    assert_float_equal(json_number_value(json_object_get(b, "value")), 12.3e6, 1e-6);
    assert_float_equal(json_number_value(json_object_get(b, "p_value")), 0.0012, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(b, "n_current")), 48);
    assert_true(json_is_true(json_object_get(b, "regression")));
    assert_string_equal(json_string_value(json_object_get(reg, "metric")), "p50(gpu_time)");
    assert_float_equal(json_number_value(json_object_get(reg, "metric_value")), 13.1e6, 1e-6);

    /* no p-value and no band: p_value null, band members absent */
    json_t *imp = json_object_get(json_array_get(results, 2), "baseline");
    assert_true(json_is_null(json_object_get(imp, "p_value")));
    assert_true(json_is_true(json_object_get(imp, "improvement")));
    assert_null(json_object_get(imp, "band_lo"));
    assert_null(json_object_get(imp, "outside_band"));
    json_decref(doc);
    tg_arena_free(run.arena);
}

/* Trace strings are arbitrary bytes: invalid UTF-8 must not lose the key. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    run.traces[0].results[0].evidence[0].fields[1].value = tg_str("ker\xff\xfe" "nel");
    run.traces[0].results[0].message = "bad \xc3";
    json_t *doc = render_json(&run, &default_opts);
    json_t *r = json_array_get(json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results"), 0);
    assert_string_equal(json_string_value(json_object_get(r, "message")), "bad \xef\xbf\xbd");
    json_t *e = json_array_get(json_object_get(r, "evidence"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(e, "fields"), "api")),
                        "ker\xef\xbf\xbd\xef\xbf\xbdnel");
    json_decref(doc);
    tg_arena_free(run.arena);
}

/* Reals without binary noise; keys in document order, two-space indent. */
static void test_number_text(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *text = fixture_render(TG_FMT_JSON, &run, NULL, &default_opts);
    assert_true(strncmp(text, "{\n  \"tool\": \"tracegate\",\n  \"version\": \"9.9.9\",\n", 45) == 0);
    assert_non_null(strstr(text, "\"change\": 0.065,"));
    assert_non_null(strstr(text, "\"p_value\": 0.0012,"));
    assert_non_null(strstr(text, "\"busy_frac_steady\": 0.31,"));
    assert_int_equal(text[strlen(text) - 1], '\n');
    free(text);
    tg_arena_free(run.arena);
}

static void test_run_status(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_report_opts o = {.fail_on = TG_SEV_ERROR};
    assert_string_equal(tg_run_status(&run, &o), "error");   /* unreadable trace, rule error */

    run.traces[2].status = TG_OK;
    assert_string_equal(tg_run_status(&run, &o), "error");   /* rule error remains */
    run.traces[0].results[4].verdict = TG_V_PASS;
    assert_string_equal(tg_run_status(&run, &o), "fail");

    /* only warnings, infos and a warning-severity regression fail */
    run.traces[0].results[0].verdict = TG_V_PASS;
    assert_string_equal(tg_run_status(&run, &o), "fail");
    tg_report_tally t;
    tg_report_tally_run(&run, &o, &t);
    assert_int_equal(t.gating, 1);
    run.traces[1].results[1].verdict = TG_V_PASS;
    assert_string_equal(tg_run_status(&run, &o), "pass");
    o.fail_on = TG_SEV_WARNING;
    assert_string_equal(tg_run_status(&run, &o), "fail");
    o.fail_on = TG_SEV_INFO;
    tg_report_tally_run(&run, &o, &t);
    assert_int_equal(t.gating, 2);
    o.fail_never = true;
    assert_string_equal(tg_run_status(&run, &o), "pass");
    run.traces[1].results[1].verdict = TG_V_FAIL;
    assert_string_equal(tg_run_status(&run, &o), "pass");    /* never means never */
    assert_string_equal(tg_run_status(&run, NULL), "fail");  /* the regression */
    tg_arena_free(run.arena);
}

/* Which status wins when several apply (docs/formats.md): 4, then 2, then
** a gating finding (1), then an unreadable trace or missing data (3). */
static void test_exit_precedence(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_report_opts o = {.fail_on = TG_SEV_ERROR};
    tg_rule_result *rule_error = &run.traces[0].results[4];
    assert_int_equal(rule_error->verdict, TG_V_ERROR);
    /* the fixture's rule error is internal: 4 whatever else */
    assert_int_equal(tg_report_exit_status(&run, &o), TG_EINTERNAL);
    assert_string_equal(tg_run_status(&run, &o), "error");
    /* a rule lacking data and an unreadable trace beside a gating finding: 1 */
    rule_error->missing_data = true;
    assert_int_equal(tg_report_exit_status(&run, &o), TG_FAIL);
    assert_string_equal(tg_run_status(&run, &o), "fail");
    char line[256];
    assert_non_null(strstr(tg_report_verdict_line(&run, &o, line, sizeof line), "FAIL \xe2\x80\x94 1 error finding"));
    assert_non_null(strstr(line, "1 unreadable trace, 1 rule lacking data"));
    /* nothing gates: the missing data decides, 3 */
    o.fail_never = true;
    assert_int_equal(tg_report_exit_status(&run, &o), TG_ETRACE);
    assert_string_equal(tg_run_status(&run, &o), "error");
    /* a trace that does not fit the baseline: 2, over the finding */
    o.fail_never = false;
    rule_error->error_status = TG_EUSAGE;
    assert_int_equal(tg_report_exit_status(&run, &o), TG_EUSAGE);
    tg_arena_free(run.arena);
}

static void test_tally_and_verdict_line(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_report_tally t;
    tg_report_tally_run(&run, &default_opts, &t);
    assert_int_equal(t.traces, EXPECT_TRACES);
    assert_int_equal(t.traces_unreadable, EXPECT_UNREADABLE);
    assert_int_equal(t.results, EXPECT_RESULTS);
    assert_int_equal(t.passed, EXPECT_PASSED);
    assert_int_equal(t.failed, EXPECT_FAILED);
    assert_int_equal(t.skipped, EXPECT_SKIPPED);
    assert_int_equal(t.errors, EXPECT_ERRORS);
    assert_int_equal(t.failed_by_severity[TG_SEV_ERROR], 1);
    assert_int_equal(t.failed_by_severity[TG_SEV_WARNING], 2);
    assert_int_equal(t.failed_by_severity[TG_SEV_INFO], 1);
    assert_int_equal(t.gating, 2);
    assert_int_equal(t.regressions, 1);
    assert_int_equal(t.failed_regressions[TG_SEV_WARNING], 1);
    assert_int_equal(t.improvements, 1);
    char line[256];
    /* the failing regression (a warning) is said once, as a regression */
    assert_string_equal(tg_report_verdict_line(&run, &default_opts, line, sizeof line),
                        "ERROR \xe2\x80\x94 1 error finding, 1 warning finding, 1 info finding, "
                        "1 regression, 1 unreadable trace, 1 rule not evaluated, 1 skipped in 3 traces");
    tg_run_result empty = {.arena = run.arena};
    assert_string_equal(tg_report_verdict_line(&empty, NULL, line, sizeof line),
                        "PASS \xe2\x80\x94 0 rules passed in 0 traces");
    tg_arena_free(run.arena);
}

static void test_format_names(void **state)
{
    (void)state;
    for (int f = 0; f < TG_FMT_COUNT; f++) assert_int_equal(tg_format_parse(tg_format_name(f)), f);
    assert_int_equal(tg_format_parse("sarif"), TG_FMT_SARIF);
    assert_int_equal(tg_format_parse("yaml"), -1);
    assert_int_equal(tg_format_parse(NULL), -1);
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    if (!full) skip();
    tg_run_result run;
    fixture_run(&run);
    for (int f = 0; f < TG_FMT_COUNT; f++) {
        assert_int_equal(tg_report_write(f, &run, NULL, &default_opts, full), TG_EINTERNAL);
        clearerr(full);
    }
    fclose(full);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_valid),
        cmocka_unit_test(test_schema_checker_rejects),
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_origin_and_workload),
        cmocka_unit_test(test_workload_cap),
        cmocka_unit_test(test_streamed_bytes),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_number_text),
        cmocka_unit_test(test_run_status),
        cmocka_unit_test(test_exit_precedence),
        cmocka_unit_test(test_tally_and_verdict_line),
        cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
