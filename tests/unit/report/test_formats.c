/*
** The human and CI formats (text, junit, sarif, github, markdown, html) on the
** fixture run: each is produced, parsed or scanned, its escaping checked
** with strings that break naive writers, and all of them must state the
** same counts of passes, failures, skips and errors as the tally.
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

#include "run_fixture.h"

static const tg_report_opts plain = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

/* ---------------------------------------------------------------- junit */

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/tg-report-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* Output of a shell command, or NULL when it failed. */
static char *run_command(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) {
        buf = realloc(buf, cap = len + n + 1);
        memcpy(buf + len, chunk, n);
        len += n;
        buf[len] = 0;
    }
    int rc = pclose(p);
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    if (buf && len && buf[len - 1] == '\n') buf[len - 1] = 0;   /* as $(...) would */
    return buf ? buf : strdup("");
}

static char *xpath(const char *file, const char *expr)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --xpath '%s' '%s' 2>&1", expr, file);
    return run_command(cmd);
}

static void test_junit(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *xml = fixture_render(TG_FMT_JUNIT, &run, NULL, &plain);
    assert_true(strncmp(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 50) == 0);
    /* failures: what gates (the error and the warning-severity regression);
    ** the warning and the info below --fail-on are passing test cases */
    assert_non_null(strstr(xml, "tests=\"10\" failures=\"2\" errors=\"2\" skipped=\"1\""));
    assert_int_equal(fixture_count(xml, "<testsuite "), EXPECT_TRACES);
    assert_int_equal(fixture_count(xml, "</testsuite>"), EXPECT_TRACES);
    assert_int_equal(fixture_count(xml, "<testcase "), EXPECT_RESULTS + EXPECT_UNREADABLE);
    assert_int_equal(fixture_count(xml, "</testcase>") + fixture_count(xml, "time=\"0\"/>"),
                     EXPECT_RESULTS + EXPECT_UNREADABLE);
    assert_int_equal(fixture_count(xml, "<failure "), 2);
    assert_int_equal(fixture_count(xml, "<system-out>"), EXPECT_FAILED - 2);
    assert_non_null(strstr(xml, "<system-out>warning finding below --fail-on, not failing the gate: device 0: busy 31%"));
    assert_non_null(strstr(xml, "cause: 300 of the 400 copies were made from step(int) in train.so\n"
                                "  unknown: 100 of the 400 copies have no recorded stack\n"));
    assert_non_null(strstr(xml, "cause: the thread cuMemcpy &quot;x&quot;") ||
                    strstr(xml, "cause: the thread cuMemcpy \"x\""));
    assert_int_equal(fixture_count(xml, "<skipped "), EXPECT_SKIPPED);
    assert_int_equal(fixture_count(xml, "<error "), EXPECT_ERRORS + EXPECT_UNREADABLE);
    /* escaping: no raw specials from the trace, control characters shown escaped */
    assert_null(strstr(xml, "<y>"));
    assert_null(strchr(xml, '\x01'));
    assert_non_null(strstr(xml, "a:b,c|d \\x01"));
    assert_non_null(strstr(xml, "cuMemcpy \"x\" 'q' &lt;y&gt; &amp; z\n100% a:b,c|d"));   /* body */
    assert_non_null(strstr(xml, "reproduce: SELECT rowid, start, end, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
    assert_non_null(strstr(xml, "<failure message=\"400 synchronous copies blocked the host for 1.2 s\" type=\"error\">"));
    assert_non_null(strstr(xml, "baseline: 12.3 ms -> 13.1 ms (+6.5%), p=0.0012, n=50 baseline / 48 now, regression"));

    if (access("/usr/bin/xmllint", X_OK) != 0) {
        fprintf(stderr, "note: /usr/bin/xmllint absent; well-formedness checked by counts only\n");
    } else {
        char *path = write_temp(xml);
        char cmd[512];
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", path);
        char *out = run_command(cmd);
        if (!out) fail_msg("xmllint rejects the JUnit document");
        free(out);
        char *n = xpath(path, "count(//testsuite/testcase)");
        assert_string_equal(n, "10");
        free(n);
        n = xpath(path, "count(//testcase/failure[@type=\"warning\"])");
        assert_string_equal(n, "1");   /* the regression: regressions gate whatever their severity */
        free(n);
        n = xpath(path, "count(//testsuite/testcase[failure])");
        assert_string_equal(n, "2");
        free(n);
        n = xpath(path, "string(//testcase[@name=\"low-gpu-utilization\"]/system-out)");
        assert_non_null(n);
        /* the text round-trips, the control character shown escaped */
        assert_non_null(strstr(n, "device 0: busy 31% of steady time, below 50% | see cuMemcpy \"x\" 'q' <y> & z\n100% a:b,c|d \\x01"));
        free(n);
        unlink(path);
        free(path);
        /* with --fail-on warning the warnings are failures */
        tg_report_opts warn = plain;
        warn.fail_on = TG_SEV_WARNING;
        char *xml_warn = fixture_render(TG_FMT_JUNIT, &run, NULL, &warn);
        path = write_temp(xml_warn);
        n = xpath(path, "string(//testcase[@name=\"low-gpu-utilization\"]/failure/@message)");
        assert_string_equal(n, "device 0: busy 31% of steady time, below 50% | see cuMemcpy \"x\" 'q' <y> & z\n100% a:b,c|d \\x01");
        free(n);
        assert_non_null(strstr(xml_warn, "failures=\"3\""));
        assert_non_null(strstr(xml_warn, "&quot;x&quot; &apos;q&apos; &lt;y&gt; &amp; z&#10;100%"));  /* attr */
        free(xml_warn);
        n = xpath(path, "string(//testsuite[@name=\"runs/broken.sqlite\"]/testcase[@name=\"load\"]/error/@type)");
        assert_string_equal(n, "trace-unreadable");
        free(n);
        unlink(path);
        free(path);
    }
    free(xml);
    tg_arena_free(run.arena);
}

/* ---------------------------------------------------------------- sarif */

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc) fail_msg("does not parse: %s at line %d", jerr.text, jerr.line);
    return doc;
}

static const char *str_at(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s) fail_msg("missing string member %s", key);
    return s;
}

static void test_sarif(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *under_cwd = tg_arena_printf(run.arena, "%s/rules.d/memcpy.yaml", cwd);
    run.traces[0].results[0].rule_file = under_cwd;   /* absolute below cwd: made relative */
    char *text = fixture_render(TG_FMT_SARIF, &run, NULL, &plain);
    json_t *doc = parse(text);
    assert_string_equal(str_at(doc, "version"), "2.1.0");
    assert_string_equal(str_at(doc, "$schema"), "https://json.schemastore.org/sarif-2.1.0.json");
    json_t *runs = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(runs), 1);
    json_t *r0 = json_array_get(runs, 0);
    json_t *driver = json_object_get(json_object_get(r0, "tool"), "driver");
    assert_string_equal(str_at(driver, "name"), "tracegate");
    assert_string_equal(str_at(driver, "version"), "9.9.9");

    /* rules: every distinct id once, in order of first appearance */
    json_t *rules = json_object_get(driver, "rules");
    static const char *const ids[] = {"sync-memcpy", "pageable-async-memcpy", "gpu-idle-gap",
                                      "low-gpu-utilization", "iteration-variance", "gpu-time-regression",
                                      "iteration-time-regression", "team:note,rule"};
    assert_int_equal(json_array_size(rules), 8);
    for (size_t i = 0; i < 8; i++) {
        json_t *rule = json_array_get(rules, i);
        assert_string_equal(str_at(rule, "id"), ids[i]);
        assert_non_null(json_object_get(json_object_get(rule, "shortDescription"), "text"));
        assert_non_null(json_object_get(json_object_get(rule, "help"), "text"));
        assert_true(json_is_array(json_object_get(json_object_get(rule, "properties"), "tags")));
    }
    assert_string_equal(str_at(json_array_get(rules, 0), "name"), "SyncMemcpy");
    assert_string_equal(str_at(json_object_get(json_array_get(rules, 3), "defaultConfiguration"), "level"),
                        "warning");
    assert_string_equal(str_at(json_object_get(json_array_get(rules, 7), "defaultConfiguration"), "level"),
                        "note");

    /* results: failures only, ruleIndex consistent, level from severity */
    json_t *results = json_object_get(r0, "results");
    assert_int_equal(json_array_size(results), EXPECT_FAILED);
    static const char *const levels[] = {"error", "warning", "warning", "note"};
    const char *fps[4];
    for (size_t i = 0; i < json_array_size(results); i++) {
        json_t *res = json_array_get(results, i);
        json_int_t idx = json_integer_value(json_object_get(res, "ruleIndex"));
        assert_true(idx >= 0 && (size_t)idx < json_array_size(rules));
        assert_string_equal(str_at(json_array_get(rules, (size_t)idx), "id"), str_at(res, "ruleId"));
        assert_string_equal(str_at(res, "level"), levels[i]);
        assert_non_null(json_object_get(json_object_get(res, "message"), "text"));
        assert_int_equal(json_array_size(json_object_get(res, "locations")), 1);
        fps[i] = str_at(json_object_get(res, "partialFingerprints"), "tracegate/v1");
        assert_int_equal(strlen(fps[i]), 16);
        for (size_t j = 0; j < i; j++) assert_string_not_equal(fps[i], fps[j]);
    }
    json_t *first = json_array_get(results, 0);
    json_t *phys = json_object_get(json_array_get(json_object_get(first, "locations"), 0), "physicalLocation");
    assert_string_equal(str_at(json_object_get(phys, "artifactLocation"), "uri"), "rules.d/memcpy.yaml");
    assert_string_equal(str_at(json_object_get(phys, "artifactLocation"), "uriBaseId"), "SRCROOT");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(phys, "region"), "startLine")), 12);
    /* the base a relative location uses is defined, as the working directory */
    char want[4200];
    snprintf(want, sizeof want, "file://%s/", cwd);
    if (!strpbrk(cwd, " %#?"))   /* no byte the URI escapes */
        assert_string_equal(str_at(json_object_get(json_object_get(r0, "originalUriBaseIds"), "SRCROOT"), "uri"), want);
    assert_string_equal(str_at(json_object_get(first, "properties"), "trace"), "runs/rank0.sqlite");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(first, "properties"), "count")), 400);
    assert_non_null(strstr(str_at(json_object_get(first, "message"), "text"), "rank0.sqlite: 400 synchronous"));
    assert_non_null(strstr(str_at(json_object_get(first, "message"), "text"),
                           "\nCause: 300 of the 400 copies were made from step(int) in train.so\n"));
    assert_string_equal(str_at(json_object_get(first, "properties"), "cause"),
                        "300 of the 400 copies were made from step(int) in train.so");
    json_t *util = json_array_get(results, 1);
    phys = json_object_get(json_array_get(json_object_get(util, "locations"), 0), "physicalLocation");
    assert_string_equal(str_at(json_object_get(phys, "artifactLocation"), "uri"),
                        "file:///nonexistent/team%20rules/util.yaml");
    assert_null(json_object_get(json_object_get(phys, "artifactLocation"), "uriBaseId"));
    /* no rule file: the trace is the location, without a region */
    json_t *note = json_array_get(results, 3);
    phys = json_object_get(json_array_get(json_object_get(note, "locations"), 0), "physicalLocation");
    assert_string_equal(str_at(json_object_get(phys, "artifactLocation"), "uri"), "runs/rank1.sqlite");
    assert_null(json_object_get(phys, "region"));

    /* unreadable trace and rule error: notifications, unsuccessful run */
    json_t *inv = json_array_get(json_object_get(r0, "invocations"), 0);
    assert_true(json_is_false(json_object_get(inv, "executionSuccessful")));
    json_t *notes = json_object_get(inv, "toolExecutionNotifications");
    assert_int_equal(json_array_size(notes), EXPECT_ERRORS + EXPECT_UNREADABLE);
    json_t *assoc = json_object_get(json_array_get(notes, 0), "associatedRule");
    assert_string_equal(str_at(assoc, "id"), "iteration-variance");
    assert_int_equal(json_integer_value(json_object_get(assoc, "index")), 4);

    /* fingerprints depend on rule id and trace basename only: stable */
    char *fp0 = strdup(fps[0]);
    json_decref(doc);
    free(text);
    run.traces[0].file = "/elsewhere/rank0.sqlite";
    run.traces[0].results[0].message = "401 synchronous copies";
    text = fixture_render(TG_FMT_SARIF, &run, NULL, &plain);
    doc = parse(text);
    json_t *again = json_array_get(json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "results"), 0);
    assert_string_equal(str_at(json_object_get(again, "partialFingerprints"), "tracegate/v1"), fp0);
    free(fp0);
    json_decref(doc);
    free(text);
    tg_arena_free(run.arena);
}

/* ---------------------------------------------------------------- github */

static void test_github(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *out = fixture_render(TG_FMT_GITHUB, &run, NULL, &plain);
    assert_int_equal(fixture_count_lines(out, "::"), EXPECT_FAILED + EXPECT_ERRORS + EXPECT_UNREADABLE);
    assert_int_equal(fixture_count(out, "\n"), EXPECT_FAILED + EXPECT_ERRORS + EXPECT_UNREADABLE);
    assert_int_equal(fixture_count_lines(out, "::error "), 3);
    assert_int_equal(fixture_count_lines(out, "::warning "), 2);
    assert_int_equal(fixture_count_lines(out, "::notice "), 1);
    assert_non_null(strstr(out,
        "::warning title=tracegate low-gpu-utilization::rank0.sqlite: device 0: busy 31%25 of steady time, "
        "below 50%25 | see cuMemcpy \"x\" 'q' <y> & z%0A100%25 a:b,c|d \\x01%0A"
        "Cause: the thread cuMemcpy \"x\" 'q' <y> & z%0A100%25 a:b,c|d \\x01 was in usleep%0A"
        "Feed the GPU: larger batches, fewer host syncs.\n"));
    assert_non_null(strstr(out, "::notice title=tracegate team%3Anote%2Crule::rank1.sqlite: 2 kernels named "
                                "`__global__` ran\n"));
    assert_non_null(strstr(out, "::error title=tracegate::runs/broken.sqlite: runs/broken.sqlite is not an "
                                "SQLite database (file is not a database)\n"));
    assert_non_null(strstr(out, "::error title=tracegate iteration-variance::rank0.sqlite: regular expression"));
    assert_null(strchr(out, '\x01'));
    free(out);

    /* the step summary is appended, and it is the markdown report */
    char *path = write_temp("previous step\n");
    tg_report_opts o = plain;
    o.step_summary_path = path;
    out = fixture_render(TG_FMT_GITHUB, &run, NULL, &o);
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *summary = calloc(1, 1 << 20);
    size_t n = fread(summary, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_int_equal(n, strlen("previous step\n") + strlen(md));
    assert_true(strncmp(summary, "previous step\n", 14) == 0);
    assert_string_equal(summary + 14, md);
    free(summary);
    free(md);
    free(out);
    unlink(path);
    o.step_summary_path = "/nonexistent-dir/summary.md";
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(tg_report_write(TG_FMT_GITHUB, &run, NULL, &o, sink), TG_EINTERNAL);
    fclose(sink);
    free(path);
    tg_arena_free(run.arena);
}

/* ---------------------------------------------------------------- markdown */

/* Rows of the markdown table whose header line starts with header. */
static size_t table_rows(const char *md, const char *header, const char **first_row)
{
    const char *p = strstr(md, header);
    if (!p) return 0;
    p = strchr(p, '\n') + 1;              /* separator */
    assert_true(strncmp(p, "| ---", 5) == 0);
    p = strchr(p, '\n') + 1;
    *first_row = p;
    size_t n = 0;
    while (strncmp(p, "| ", 2) == 0) {
        n++;
        p = strchr(p, '\n') + 1;
    }
    return n;
}

/* Unescaped | in one line. */
static size_t cell_bars(const char *line)
{
    size_t n = 0;
    for (const char *p = line; *p && *p != '\n'; p++)
        if (*p == '|' && (p == line || p[-1] != '\\')) n++;
    return n;
}

static void test_markdown(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    assert_true(strncmp(md, "## tracegate: ERROR \xe2\x80\x94 1 error finding", 37) == 0);
    assert_non_null(strstr(md, "**Cause:** 300 of the 400 copies were made from step(int) in train.so\n\n"
                               "- 100 of the 400 copies have no recorded stack\n\n"
                               "| name | module | count | time | share |\n|---|---|---|---|---|\n"
                               "| `step(int)` | `train.so` | 300 | 900 ms | 75% |\n"));
    const char *row;
    assert_int_equal(table_rows(md, "| trace | rule | severity | status | count | message |", &row), EXPECT_RESULTS);
    for (size_t i = 0; i < EXPECT_RESULTS; i++) {
        assert_int_equal(cell_bars(row), 7);
        row = strchr(row, '\n') + 1;
    }
    assert_non_null(strstr(md, "| `rank0.sqlite` | `sync-memcpy` | error | **FAIL** | 400 | "
                               "400 synchronous copies blocked the host for 1.2 s |\n"));
    /* the trace text: | escaped, newline a <br>, markdown specials inert */
    assert_non_null(strstr(md, "below 50% \\| see cuMemcpy \"x\" 'q' \\<y\\> \\& z<br>100% a:b,c\\|d \\\\x01 |"));
    assert_non_null(strstr(md, "2 kernels named \\`\\_\\_global\\_\\_\\` ran"));
    assert_int_equal(fixture_count_lines(md, "### FAIL "), EXPECT_FAILED);
    assert_non_null(strstr(md, "```sql\nSELECT rowid, start, end, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                               "WHERE rowid IN (12, 40)\n```\n"));
    assert_int_equal(table_rows(md, "| evidence | fields |", &row), 2);
    assert_non_null(strstr(row, "| CUPTI\\_ACTIVITY\\_KIND\\_MEMCPY rowid 12: 1000..5000 ns (4 us) | "
                                "bytes = 16.8 MB, api = `"));
    /* a value printed in its unit reads without the unit JSON names it by */
    assert_non_null(strstr(md, "count = 400, sum\\_duration = 1.2 s"));
    assert_int_equal(table_rows(md, "| trace | rule | metric | baseline |", &row), 2);
    assert_non_null(strstr(row, "| `rank1.sqlite` | `gpu-time-regression` | `p50(gpu_time)` | 12.3 ms | "
                                "13.1 ms | +6.5% | 0.0012 | 50/48 | 100% | **regression** |"));
    assert_non_null(strstr(md, "| -9.09% | n/a | 50/48 | n/a | improvement |"));
    assert_non_null(strstr(md, "- `runs/broken.sqlite`: runs/broken.sqlite is not an SQLite database"));
    free(md);
    tg_arena_free(run.arena);
}

/* Thousands of ranks in the job summary's 1 MiB: the table and the
** details are capped and counted; the fence of the SQL block outgrows
** backticks inside it. */
static void test_markdown_limits(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_run_result run = {.arena = a, .n_traces = 1};
    run.traces = tg_arena_alloc(a, sizeof *run.traces);
    tg_trace_result *t = run.traces;
    t->file = "big.sqlite";
    t->n_results = 1200;
    t->results = tg_arena_alloc(a, t->n_results * sizeof *t->results);
    for (size_t i = 0; i < t->n_results; i++) {
        tg_rule_result *r = &t->results[i];
        r->rule = tg_arena_printf(a, "rule-%zu", i);
        r->verdict = i % 2 ? TG_V_FAIL : TG_V_PASS;
        r->severity = TG_SEV_WARNING;
        r->message = "m";
        r->metric_value = r->baseline.p_value = NAN;
        r->reproduce = "SELECT '```' AS fence";
    }
    char *path = write_temp("");
    tg_report_opts o = plain;
    o.step_summary_path = path;
    free(fixture_render(TG_FMT_GITHUB, &run, NULL, &o));
    FILE *f = fopen(path, "r");
    char *md = calloc(1, TG_REPORT_SUMMARY_MAX + 1);
    assert_true(fread(md, 1, TG_REPORT_SUMMARY_MAX, f) > 0);
    fclose(f);
    unlink(path);
    free(path);
    const char *row;
    assert_int_equal(table_rows(md, "| trace | rule | severity | status | count | message |", &row), 1000);
    assert_int_equal(fixture_count_lines(md, "### FAIL "), 50);
    assert_non_null(strstr(md, "\n_\xe2\x80\xa6 and 550 more findings, 200 more result rows, left out to stay within "
                               "the 1 MiB of a GitHub job summary"));
    assert_non_null(strstr(md, "\n````sql\nSELECT '```' AS fence\n````\n"));
    free(md);
    tg_arena_free(a);
}

/* A run whose markdown would take megabytes (1000 rows of 4 KB messages,
** failures with 1 MB evidence names) within a comment's 65,536: blocks
** left out whole and counted, near the limit; names capped with their
** length. */
static void test_markdown_size_cap(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_run_result run = {.arena = a, .n_traces = 1};
    run.traces = tg_arena_alloc(a, sizeof *run.traces);
    tg_trace_result *t = run.traces;
    t->file = "big.sqlite";
    t->n_results = 1000;
    t->results = tg_arena_alloc(a, t->n_results * sizeof *t->results);
    char *message = tg_arena_alloc(a, 5000 + 1);
    memset(message, 'm', 5000);
    char *name = tg_arena_alloc(a, (1 << 20) + 1);
    memset(name, 'k', 1 << 20);
    for (size_t i = 0; i < t->n_results; i++) {
        tg_rule_result *r = &t->results[i];
        r->rule = tg_arena_printf(a, "rule-%zu", i);
        r->verdict = TG_V_FAIL;
        r->severity = TG_SEV_WARNING;
        r->message = message;
        r->metric_value = r->baseline.p_value = NAN;
        r->n_evidence = 1;
        r->evidence = tg_arena_alloc(a, sizeof *r->evidence);
        r->evidence->table = "CUPTI_ACTIVITY_KIND_KERNEL";
        r->evidence->start = r->evidence->end = TG_NULL_I64;
        r->evidence->n_fields = 1;
        r->evidence->fields = tg_arena_alloc(a, sizeof *r->evidence->fields);
        r->evidence->fields[0] = (tg_named_value){"name", tg_str(name)};
    }
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    size_t len = strlen(md);
    assert_true(len <= TG_REPORT_COMMENT_MAX);
    assert_true(len > TG_REPORT_COMMENT_MAX - 8192);   /* filled near the limit, not far below */
    const char *note = strstr(md, "\n---\n\n_\xe2\x80\xa6 and ");
    assert_non_null(note);
    assert_non_null(strstr(note, "left out to stay within the 65,536 characters of a GitHub comment"));
    assert_non_null(strstr(md, "m\xe2\x80\xa6(5000 bytes) |\n"));
    /* every table row shown is whole */
    const char *row;
    size_t rows = table_rows(md, "| trace | rule | severity | status | count | message |", &row);
    assert_true(rows > 0 && rows < 1000);
    for (size_t i = 0; i < rows; i++, row = strchr(row, '\n') + 1) assert_int_equal(cell_bars(row), 7);
    free(md);

    /* the same run within a roomy budget is not cut, and then shows the
    ** capped name in the failure details */
    t->n_results = 3;
    md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    assert_null(strstr(md, "left out to stay within"));
    assert_non_null(strstr(md, "kkkk\xe2\x80\xa6(1048576 bytes)`"));
    assert_true(strlen(md) < 32 * 1024);
    free(md);
    tg_arena_free(a);
}

/* ---------------------------------------------------------------- text */

/* The verdict column holds INCONCLUSIVE and SUPPRESSED: the severity
** and rule columns after them start where they do after FAIL. */
static void test_text_columns(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_run_result run = {.arena = a, .n_traces = 1};
    run.traces = tg_arena_alloc(a, sizeof *run.traces);
    tg_trace_result *t = run.traces;
    t->file = "r.sqlite";
    t->n_results = 3;
    t->results = tg_arena_alloc(a, 3 * sizeof *t->results);
    static const tg_verdict v[] = {TG_V_FAIL, TG_V_INCONCLUSIVE, TG_V_FAIL};
    for (size_t i = 0; i < 3; i++) {
        tg_rule_result *r = &t->results[i];
        *r = (tg_rule_result){.rule = tg_arena_printf(a, "rule-%zu", i), .verdict = v[i], .severity = TG_SEV_WARNING,
                              .message = "msg", .count = TG_NULL_I64};
        r->metric_value = r->baseline.p_value = NAN;
    }
    t->results[2].suppressed = "accepted";
    char *txt = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    const char *fail = strstr(txt, "  FAIL "), *inc = strstr(txt, "  INCONCLUSIVE "), *sup = strstr(txt, "  SUPPRESSED ");
    assert_non_null(fail);
    assert_non_null(inc);
    assert_non_null(sup);
    assert_int_equal(strstr(fail, "warning") - fail, strstr(inc, "warning") - inc);
    assert_int_equal(strstr(fail, "warning") - fail, strstr(sup, "warning") - sup);
    assert_int_equal(strstr(fail, "rule-0") - fail, strstr(inc, "rule-1") - inc);
    free(txt);
    tg_arena_free(a);
}

static void test_text(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    char *txt = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    assert_null(strchr(txt, '\033'));
    assert_null(strchr(txt, '\x01'));
    /* causes (docs/host.md): the sentence, the items, what is unknown, the query */
    assert_non_null(strstr(txt, "        cause: 300 of the 400 copies were made from step(int) in train.so\n"
                                "          step(int) in train.so  300 rows, 900 ms (75%)  "
                                "CUPTI_ACTIVITY_KIND_MEMCPY rowids 12, 40, ...\n"
                                "          unknown: 100 of the 400 copies have no recorded stack\n"
                                "          reproduce: "));
    /* a query is one line saying how to get it (docs/formats.md, "Reproduce queries in text") */
    assert_null(strstr(txt, "reproduce: SELECT"));
    assert_non_null(strstr(txt, " of SQL: --reproduce prints it, -o sql=DIR saves it\n"));
    assert_non_null(strstr(txt, "        cause: the thread cuMemcpy \"x\" 'q' <y> & z\\n100% a:b,c|d \\x01 was in usleep\n"
                                "          evidence row 1: 1000..720001000 ns (720 ms), pid 1063;"));
    assert_non_null(strstr(txt, "          osrt usleep  1 call, 700 ms (97%), thread cuMemcpy"));
    assert_int_equal(fixture_count_lines(txt, "  FAIL "), EXPECT_FAILED);
    assert_int_equal(fixture_count_lines(txt, "  PASS "), EXPECT_PASSED);
    assert_int_equal(fixture_count_lines(txt, "  SKIP "), EXPECT_SKIPPED);
    assert_int_equal(fixture_count_lines(txt, "  ERROR "), EXPECT_ERRORS + EXPECT_UNREADABLE);
    assert_int_equal(fixture_count_lines(txt, "runs/rank0.sqlite  (nsys 2024.5.1.113, schema 3.11.1, NVIDIA H100"), 1);
    /* aligned: every rule line's message starts in the same column */
    /* the verdict column is as wide as the longest label shown (at least 5) */
    size_t vw = strstr(txt, "\n  INCONCLUSIVE ") ? 12 : strstr(txt, "\n  SUPPRESSED ") ? 10 : 5;
    size_t col = 2 + vw + 1 + 9 + strlen("iteration-time-regression") + 1;
    for (const char *p = txt; *p; p = strchr(p, '\n') + 1) {
        bool result_line = !strncmp(p, "  FAIL ", 7) || !strncmp(p, "  PASS ", 7) || !strncmp(p, "  SKIP ", 7) ||
                           !strncmp(p, "  INCONCLUSIVE ", 15) || !strncmp(p, "  SUPPRESSED ", 13) ||
                           (!strncmp(p, "  ERROR ", 8) && strncmp(p, "  ERROR unreadable", 18));
        if (!result_line) continue;
        assert_true((size_t)(strchr(p, '\n') - p) > col);
        assert_int_equal(p[col - 1], ' ');
        assert_int_not_equal(p[col], ' ');
    }
    assert_non_null(strstr(txt, "  FAIL  error    sync-memcpy               400 synchronous copies blocked the host for 1.2 s\n"));
    assert_non_null(strstr(txt, "values: count=400  sum_duration=1.2 s\n"));
    assert_non_null(strstr(txt, "CUPTI_ACTIVITY_KIND_MEMCPY rowid 12: 1000..5000 ns (4 us)  bytes=16.8 MB  "
                                "api=\"cuMemcpy \\\"x\\\" 'q' <y> & z\\n100% a:b,c|d \\x01\"  pinned=false\n"));
    assert_non_null(strstr(txt, "advice: Use pinned host memory"));
    assert_non_null(strstr(txt, "busy_frac_steady=31%"));
    assert_non_null(strstr(txt, "baseline: 12.3 ms \xe2\x86\x92 13.1 ms (+6.5%), p=0.0012, n=50 baseline / 48 now, "
                                "band 12 ms..12.6 ms (outside)  regression\n"));
    assert_non_null(strstr(txt, "baseline: 22 ms \xe2\x86\x92 20 ms (-9.09%), p n/a, n=50 baseline / 48 now  improvement\n"));
    assert_non_null(strstr(txt, "  ERROR unreadable: runs/broken.sqlite is not an SQLite database"));
    const char *last = txt + strlen(txt) - 2;
    while (last > txt && *last != '\n') last--;
    assert_string_equal(last + 1, "tracegate: ERROR \xe2\x80\x94 1 error finding, 1 warning finding, "
                                  "1 info finding, 1 regression, 1 unreadable trace, 1 rule not evaluated, "
                                  "1 skipped in 3 traces\n");
    free(txt);

    /* --reproduce: whole; -o sql=DIR: the file it is in; --quiet: one line a rule */
    tg_report_opts inl = plain;
    inl.reproduce_inline = true;
    txt = fixture_render(TG_FMT_TEXT, &run, NULL, &inl);
    assert_non_null(strstr(txt, "        reproduce: SELECT rowid"));
    assert_non_null(strstr(txt, "          reproduce: SELECT 'step(int)' AS call_site"));
    free(txt);
    tg_report_opts dir = plain;
    dir.sql_dir = "out/sql";
    txt = fixture_render(TG_FMT_TEXT, &run, NULL, &dir);
    char name[256];
    assert_true(tg_report_reproduce_name(&run, 0, 0, false, name, sizeof name) > 0);
    assert_string_equal(name, "01-rank0.sqlite-sync-memcpy.sql");
    assert_true(tg_report_reproduce_name(&run, 0, 0, true, name, sizeof name) > 0);
    assert_string_equal(name, "01-rank0.sqlite-sync-memcpy.cause.sql");
    assert_non_null(strstr(txt, "        reproduce: out/sql/01-rank0.sqlite-sync-memcpy.sql\n"));
    assert_non_null(strstr(txt, "          reproduce: out/sql/01-rank0.sqlite-sync-memcpy.cause.sql\n"));
    free(txt);
    char *file = NULL;
    size_t file_len = 0;
    FILE *f = open_memstream(&file, &file_len);
    assert_int_equal(tg_report_reproduce_file(&run, 0, 0, false, f), TG_OK);
    fclose(f);
    assert_true(!strncmp(file, "-- tracegate finding: sync-memcpy (fail) on runs/rank0.sqlite\n-- 400 synchronous", 75));
    assert_non_null(strstr(file, "\n-- run with sqlite3 on the export: sqlite3 -readonly TRACE < THIS_FILE\nSELECT rowid"));
    free(file);
    tg_report_opts quiet = plain;
    quiet.quiet = true;
    txt = fixture_render(TG_FMT_TEXT, &run, NULL, &quiet);
    assert_null(strstr(txt, "evidence ("));
    assert_null(strstr(txt, "reproduce:"));
    assert_int_equal(fixture_count_lines(txt, "  FAIL "), EXPECT_FAILED);
    free(txt);

    tg_report_opts o = plain;
    o.quiet = true;
    txt = fixture_render(TG_FMT_TEXT, &run, NULL, &o);
    assert_int_equal(fixture_count_lines(txt, "  PASS "), 0);
    assert_int_equal(fixture_count_lines(txt, "  SKIP "), 0);
    assert_int_equal(fixture_count_lines(txt, "  FAIL "), EXPECT_FAILED);
    assert_int_equal(fixture_count_lines(txt, "tracegate: ERROR"), 1);
    assert_null(strstr(txt, "improvement"));
    free(txt);

    o = plain;
    o.color = true;
    txt = fixture_render(TG_FMT_TEXT, &run, NULL, &o);
    assert_non_null(strstr(txt, "\033[1;31mFAIL \033[0m"));
    assert_non_null(strstr(txt, "\033[32mPASS \033[0m"));
    free(txt);
    tg_arena_free(run.arena);
}

/* ---------------------------------------------------------------- all */

static void test_same_counts(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_report_tally t;
    tg_report_tally_run(&run, &plain, &t);

    char *s = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    json_t *doc = parse(s);
    size_t counts[4] = {0}, unreadable = 0;
    size_t ti;
    json_t *tr;
    json_array_foreach(json_object_get(doc, "traces"), ti, tr) {
        unreadable += json_object_get(tr, "error") != NULL;
        size_t ri;
        json_t *r;
        json_array_foreach(json_object_get(tr, "results"), ri, r) {
            const char *st = str_at(r, "status");
            counts[!strcmp(st, "pass") ? 0 : !strcmp(st, "fail") ? 1 : !strcmp(st, "skip") ? 2 : 3]++;
        }
    }
    assert_int_equal(counts[0], t.passed);
    assert_int_equal(counts[1], t.failed);
    assert_int_equal(counts[2], t.skipped);
    assert_int_equal(counts[3], t.errors);
    assert_int_equal(unreadable, t.traces_unreadable);
    json_decref(doc);
    free(s);

    s = fixture_render(TG_FMT_JUNIT, &run, NULL, &plain);
    assert_int_equal(fixture_count(s, "<failure "), t.gating);
    assert_int_equal(fixture_count(s, "<system-out>"), t.failed - t.gating);
    assert_int_equal(fixture_count(s, "<skipped "), t.skipped);
    assert_int_equal(fixture_count(s, "<error "), t.errors + t.traces_unreadable);
    assert_int_equal(fixture_count(s, "<testcase "), t.results + t.traces_unreadable);
    free(s);

    s = fixture_render(TG_FMT_SARIF, &run, NULL, &plain);
    doc = parse(s);
    json_t *r0 = json_array_get(json_object_get(doc, "runs"), 0);
    assert_int_equal(json_array_size(json_object_get(r0, "results")), t.failed);
    assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(r0, "invocations"), 0),
                                                     "toolExecutionNotifications")),
                     t.errors + t.traces_unreadable);
    json_decref(doc);
    free(s);

    s = fixture_render(TG_FMT_GITHUB, &run, NULL, &plain);
    assert_int_equal(fixture_count_lines(s, "::"), t.failed + t.errors + t.traces_unreadable);
    free(s);

    s = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    assert_int_equal(fixture_count(s, "| **FAIL** |"), t.failed);
    assert_int_equal(fixture_count(s, "| PASS |"), t.passed);
    assert_int_equal(fixture_count(s, "| SKIP |"), t.skipped);
    assert_int_equal(fixture_count(s, "| ERROR |"), t.errors);
    free(s);

    s = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    assert_int_equal(fixture_count_lines(s, "  FAIL "), t.failed);
    assert_int_equal(fixture_count_lines(s, "  PASS "), t.passed);
    assert_int_equal(fixture_count_lines(s, "  SKIP "), t.skipped);
    assert_int_equal(fixture_count_lines(s, "  ERROR "), t.errors + t.traces_unreadable);
    free(s);
    tg_arena_free(run.arena);
}

/* An idle gap and a device window are intervals of their own: every human
** format says what the interval is and keeps the cited row's own span
** apart ("idle 711 ms ... after ... rowid 20 (15 ms)"), and JSON carries
** interval, row_start and row_end. */
static void test_evidence_intervals(void **state)
{
    (void)state;
    tg_arena *a = tg_arena_new();
    tg_named_value *f = tg_arena_alloc(a, 3 * sizeof *f);
    f[0] = (tg_named_value){"duration", tg_int(711000000, TG_UNIT_NS)};
    f[1] = (tg_named_value){"next_table", tg_str("CUPTI_ACTIVITY_KIND_KERNEL")};
    f[2] = (tg_named_value){"next_rowid", tg_int(21, TG_UNIT_NONE)};
    tg_evidence *ev = tg_arena_alloc(a, 2 * sizeof *ev);
    ev[0] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_KERNEL", .rowid = 20, .start = 1590150461,
                          .end = 2301150461, .interval = TG_INTERVAL_IDLE, .row_start = 1575150461,
                          .row_end = 1590150461, .next_table = "CUPTI_ACTIVITY_KIND_KERNEL", .next_rowid = 21,
                          .fields = f, .n_fields = 3};
    ev[1] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 1, .start = 1000, .end = 844001000,
                          .interval = TG_INTERVAL_DEVICE, .row_start = 1000, .row_end = 2200,
                          .next_table = "CUPTI_ACTIVITY_KIND_KERNEL", .next_rowid = 3000};
    tg_rule_result *r = tg_arena_alloc(a, sizeof *r);
    *r = (tg_rule_result){.rule = "gpu-idle-gap", .verdict = TG_V_FAIL, .severity = TG_SEV_ERROR, .count = 1,
                          .message = "1 idle gap", .evidence = ev, .n_evidence = 2, .metric_value = NAN};
    tg_trace_result *t = tg_arena_alloc(a, sizeof *t);
    *t = (tg_trace_result){.file = "x.sqlite", .results = r, .n_results = 1};
    tg_run_result run = {.arena = a, .traces = t, .n_traces = 1};
    static const char idle[] = "idle 711 ms (1590150461..2301150461 ns) after CUPTI_ACTIVITY_KIND_KERNEL rowid 20 "
                               "(15 ms), before CUPTI_ACTIVITY_KIND_KERNEL rowid 21";
    static const char device[] = "device window 844 ms (1000..844001000 ns), first op CUPTI_ACTIVITY_KIND_MEMCPY "
                                 "rowid 1 (1.2 us), last op CUPTI_ACTIVITY_KIND_KERNEL rowid 3000";
    char *txt = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    char line[512];
    snprintf(line, sizeof line, "%s  duration=711 ms\n", idle);       /* next_* said once, not twice */
    assert_non_null(strstr(txt, line));
    assert_non_null(strstr(txt, device));
    free(txt);
    char *xml = fixture_render(TG_FMT_JUNIT, &run, NULL, &plain);
    assert_non_null(strstr(xml, idle));
    free(xml);
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    assert_non_null(strstr(md, "| idle 711 ms (1590150461..2301150461 ns) after CUPTI\\_ACTIVITY\\_KIND\\_KERNEL "
                               "rowid 20 (15 ms), before CUPTI\\_ACTIVITY\\_KIND\\_KERNEL rowid 21 | duration = 711 ms |"));
    free(md);
    /* HTML: the sentence in the row's first cell, units on every time,
    ** the fields the sentence has not said (next_* once) beside it */
    char *html = fixture_render(TG_FMT_HTML, &run, NULL, &plain);
    snprintf(line, sizeof line, "<tr id=\"t1-r1-e1\"><td>%s</td><td><code>duration</code> = 711 ms</td></tr>", idle);
    assert_non_null(strstr(html, line));
    snprintf(line, sizeof line, "<tr id=\"t1-r1-e2\"><td>%s</td><td></td></tr>", device);
    assert_non_null(strstr(html, line));
    assert_null(strstr(html, "next_rowid"));
    free(html);
    char *js = fixture_render(TG_FMT_JSON, &run, NULL, &plain);
    json_t *doc = json_loads(js, 0, NULL);
    assert_non_null(doc);
    json_t *e = json_array_get(json_object_get(json_array_get(json_object_get(
        json_array_get(json_object_get(doc, "traces"), 0), "results"), 0), "evidence"), 0);
    assert_string_equal(json_string_value(json_object_get(e, "interval")), "idle");
    assert_int_equal(json_integer_value(json_object_get(e, "row_start")), 1575150461);
    assert_int_equal(json_integer_value(json_object_get(e, "row_end")), 1590150461);
    json_decref(doc);
    free(js);
    tg_arena_free(a);
}

/* The workload fingerprint (docs/regressions.md) is reported by every
** format, not only JSON, and SARIF's contributors carry what JSON's do:
** kind, status, time and launches then and now, delta and share. */
static void test_workload_and_contributors(void **state)
{
    (void)state;
    tg_run_result run;
    fixture_run(&run);
    tg_baseline_cmp *b = &run.traces[1].results[1].baseline;   /* rank1's gpu-time-regression */
    b->workload_match = 0.873;
    b->contributors = tg_arena_alloc(run.arena, 2 * sizeof *b->contributors);
    b->contributors[0] = (tg_contributor){.name = "fused_adam", .kind = TG_WORK_KERNEL, .status = TG_CONTRIB_NEW,
                                          .then_time = 0, .now_time = 1.5e6, .then_launches = 0, .now_launches = 60,
                                          .delta = 1.5e6, .share = 0.8, .query = "SELECT 1"};
    b->contributors[1] = (tg_contributor){.name = "step", .kind = TG_WORK_NVTX, .status = TG_CONTRIB_GREW,
                                          .then_time = 2e6, .now_time = 2.4e6, .then_launches = NAN,
                                          .now_launches = NAN, .delta = 0.4e6, .share = NAN};
    b->n_contributors = 2;
    static const char sentence[] = "this trace's kernels account for 87.3% of the baseline's GPU time";
    char want[256];

    char *txt = fixture_render(TG_FMT_TEXT, &run, NULL, &plain);
    snprintf(want, sizeof want, "        workload: %s\n", sentence);
    assert_non_null(strstr(txt, want));
    free(txt);

    char *xml = fixture_render(TG_FMT_JUNIT, &run, NULL, &plain);
    snprintf(want, sizeof want, "regression\nworkload: %s\n", sentence);
    assert_non_null(strstr(xml, want));
    assert_non_null(strstr(xml, "changed: new fused_adam 0 ns -> 1.5 ms per iteration (+1.5 ms, 80% of the change; "
                                "0 -> 60 launches)\n"));
    assert_non_null(strstr(xml, "         grew step 2 ms -> 2.4 ms per iteration (+400 us)\n"));
    free(xml);

    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    snprintf(want, sizeof want, "**Workload:** %s\n", sentence);
    assert_non_null(strstr(md, want));
    assert_non_null(strstr(md, "| 0.0012 | 50/48 | 87.3% | **regression** |"));
    free(md);

    char *gh = fixture_render(TG_FMT_GITHUB, &run, NULL, &plain);
    /* after the message (the rule has no advice); % is %25 in a workflow command */
    assert_non_null(strstr(gh, "p=0.0012)%0AWorkload: this trace's kernels account for 87.3%25 of the baseline's "
                               "GPU time\n"));
    assert_int_equal(fixture_count(gh, "Workload: "), 1);   /* the regression only */
    free(gh);

    char *html = fixture_render(TG_FMT_HTML, &run, NULL, &plain);
    snprintf(want, sizeof want, "<p><strong>Workload:</strong> %s</p>", sentence);
    assert_non_null(strstr(html, want));
    free(html);

    char *sarif = fixture_render(TG_FMT_SARIF, &run, NULL, &plain);
    json_t *doc = parse(sarif);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "results"), *res = NULL;
    for (size_t i = 0; i < json_array_size(results); i++)
        if (!strcmp(str_at(json_array_get(results, i), "ruleId"), "gpu-time-regression")) res = json_array_get(results, i);
    assert_non_null(res);
    snprintf(want, sizeof want, "\nWorkload: %s", sentence);
    assert_non_null(strstr(str_at(json_object_get(res, "message"), "text"), want));
    json_t *props = json_object_get(res, "properties");
    assert_true(json_real_value(json_object_get(props, "workload_match")) == 0.873);
    json_t *c0 = json_array_get(json_object_get(props, "contributors"), 0);
    json_t *c1 = json_array_get(json_object_get(props, "contributors"), 1);
    assert_string_equal(str_at(c0, "kind"), "kernel");
    assert_string_equal(str_at(c0, "status"), "new");
    assert_true(json_real_value(json_object_get(c0, "delta_ns")) == 1.5e6);
    assert_true(json_real_value(json_object_get(c0, "share")) == 0.8);
    assert_true(json_real_value(json_object_get(c0, "baseline_launches")) == 0);
    assert_true(json_real_value(json_object_get(c0, "current_launches")) == 60);
    assert_string_equal(str_at(c0, "query"), "SELECT 1");
    assert_string_equal(str_at(c1, "status"), "grew");
    assert_true(json_is_null(json_object_get(c1, "share")));
    assert_null(json_object_get(c1, "baseline_launches"));   /* an NVTX range launches nothing */
    json_decref(doc);
    free(sarif);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_and_contributors),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_sarif),
        cmocka_unit_test(test_github),
        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_markdown_limits),
        cmocka_unit_test(test_markdown_size_cap),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_columns),
        cmocka_unit_test(test_same_counts),
        cmocka_unit_test(test_evidence_intervals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
