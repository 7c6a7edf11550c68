/*
** The markdown report within GitHub's limits (report.h,
** TG_REPORT_COMMENT_MAX for -o markdown, TG_REPORT_SUMMARY_MAX for the job
** summary of -f github), on runs of many traces and findings: the size
** bound (in bytes and in UTF-16 code units), the findings that fail the
** run first, the remainder counted in the closing line with the reports
** that hold it, and well-formed markdown (md_check.h) however it was cut.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "md_check.h"
#include "run_fixture.h"

static const tg_report_opts plain = {.fail_on = TG_SEV_ERROR, .tool_version = "9.9.9"};

/* A run of n_traces traces, each with per_trace results cycling through a
** gating error finding (rule "gate-T-I"), a warning finding that does not
** gate ("warn-T-I"), a pass, a skip and a rule error; findings carry
** evidence, a reproduce query holding a backtick fence and non-ASCII text
** (2-, 3- and 4-byte UTF-8). *gating and *others count the findings. */
static void big_run(tg_run_result *run, size_t n_traces, size_t per_trace, size_t *gating, size_t *others)
{
    tg_arena *a = tg_arena_new();
    *run = (tg_run_result){.arena = a, .n_traces = n_traces};
    run->traces = tg_arena_alloc(a, n_traces * sizeof *run->traces);
    *gating = *others = 0;
    char *sql = tg_arena_alloc(a, 2001);
    memset(sql, 'x', 2000);
    memcpy(sql, "SELECT '```' AS f, '", 20);
    sql[1999] = '\'';
    for (size_t t = 0; t < n_traces; t++) {
        tg_trace_result *tr = &run->traces[t];
        tr->file = tg_arena_printf(a, "runs/rank%zu.sqlite", t);
        tr->n_results = per_trace;
        tr->results = tg_arena_alloc(a, per_trace * sizeof *tr->results);
        for (size_t i = 0; i < per_trace; i++) {
            tg_rule_result *r = &tr->results[i];
            static const tg_verdict verdicts[] = {TG_V_FAIL, TG_V_FAIL, TG_V_PASS, TG_V_SKIP, TG_V_ERROR};
            r->verdict = verdicts[i % 5];
            r->severity = i % 5 == 1 ? TG_SEV_WARNING : TG_SEV_ERROR;
            r->rule = tg_arena_printf(a, "%s-%zu-%zu", i % 5 == 0 ? "gate" : i % 5 == 1 ? "warn" : "rule", t, i);
            r->message = tg_arena_printf(a, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80 finding %zu of "
                                            "trace %zu, with | and `ticks`", i, t);
            r->metric_value = r->baseline.p_value = NAN;
            r->count = TG_NULL_I64;
            if (r->verdict != TG_V_FAIL) continue;
            ++*(i % 5 == 0 ? gating : others);
            r->advice = "Do less of it.";
            r->reproduce = sql;
            r->n_evidence = 8;
            r->evidence = tg_arena_alloc(a, r->n_evidence * sizeof *r->evidence);
            for (size_t e = 0; e < r->n_evidence; e++)
                r->evidence[e] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_KERNEL", .rowid = (int64_t)e,
                                               .start = 1000, .end = 5000, .next_rowid = -1, .row = -1};
            if (i % 10 == 0) {   /* some comparisons */
                r->baseline.present = true;
                r->baseline.regression = true;
                r->baseline.value = 10;
                r->baseline.current = 12;
                r->baseline.change = 0.2;
                r->baseline.workload_match = NAN;
                r->metric = "p50(period)";
            }
        }
    }
}

/* Position of the first line starting with prefix at or after from; NULL if none. */
static const char *line_at(const char *text, const char *from, const char *prefix)
{
    size_t len = strlen(prefix);
    for (const char *p = from; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if ((p == text || p[-1] == '\n') && strncmp(p, prefix, len) == 0) return p;
    return NULL;
}

/* The number after `words` in text, or -1. */
static long number_before(const char *text, const char *words)
{
    const char *p = strstr(text, words);
    if (!p) return -1;
    while (p > text && p[-1] == ' ') p--;
    while (p > text && p[-1] >= '0' && p[-1] <= '9') p--;
    return strtol(p, NULL, 10);
}

/* The checks every cut report passes: size, form, gating first, and a
** remainder that counts exactly what is not shown. */
static void check_cut(const char *md, size_t limit, size_t gating, size_t others)
{
    assert_true(strlen(md) <= limit);
    assert_true(md_utf16_units(md) <= limit);
    const char *why = md_problem(md);
    if (why) fail_msg("not well-formed: %s", why);
    size_t gate_shown = fixture_count(md, "\n### FAIL `gate-"), warn_shown = fixture_count(md, "\n### FAIL `warn-");
    assert_true(gate_shown > 0);
    /* every gating section comes before every other one */
    const char *first_warn = strstr(md, "\n### FAIL `warn-"), *last_gate = NULL;
    for (const char *p = strstr(md, "\n### FAIL `gate-"); p; p = strstr(p + 1, "\n### FAIL `gate-")) last_gate = p;
    if (first_warn) assert_true(last_gate < first_warn);
    assert_true(strstr(md, "\n### ") == strstr(md, "\n### FAIL `gate-"));
    /* the closing line counts the rest */
    const char *closing = line_at(md, md, "_\xe2\x80\xa6 and ");
    assert_non_null(closing);
    assert_int_equal(strchr(closing, '\n')[1], 0);    /* the last line */
    long more = number_before(closing, "more finding");
    assert_int_equal(more < 0 ? 0 : more, (long)(gating + others - gate_shown - warn_shown));
    long gate_left = number_before(closing, "of them failing the run");
    assert_int_equal(gate_left < 0 ? 0 : gate_left, (long)(gating - gate_shown));
    long briefs = (long)fixture_count(md, "_Its values, evidence and query");
    const char *details = strstr(closing, "the details of ");
    if (details) assert_int_equal(strtol(details + strlen("the details of "), NULL, 10), briefs);
    else assert_int_equal(briefs, 0);
}

/* -o markdown: 40 traces of 50 results (800 findings, each 3 KB or more)
** within a comment, naming the reports given, else saying how to get one. */
static void test_comment_budget(void **state)
{
    (void)state;
    tg_run_result run;
    size_t gating, others;
    big_run(&run, 40, 50, &gating, &others);
    tg_report_opts o = plain;
    o.html_path = "out/report.html";
    o.json_path = "out/result.json";
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &o);
    check_cut(md, TG_REPORT_COMMENT_MAX, gating, others);
    assert_true(strlen(md) > TG_REPORT_COMMENT_MAX - 4096);   /* filled, not cut far below */
    assert_non_null(strstr(md, "left out to stay within the 65,536 characters of a GitHub comment: see the HTML "
                               "report `out/report.html` or the JSON report `out/result.json`, which hold every "
                               "result._\n"));
    free(md);

    o.html_path = o.json_path = NULL;
    md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &o);
    check_cut(md, TG_REPORT_COMMENT_MAX, gating, others);
    assert_non_null(strstr(md, ": see the HTML or JSON report (`-o html=FILE`, `-o json=FILE`), which hold"));
    free(md);
    tg_arena_free(run.arena);
}

/* Findings so large that none fits whole: each is shown short (heading
** and message), gating ones first, and counted as such. */
static void test_comment_short_forms(void **state)
{
    (void)state;
    tg_run_result run;
    size_t gating, others;
    big_run(&run, 3, 10, &gating, &others);
    char *huge = tg_arena_alloc(run.arena, 70001);
    memset(huge, 's', 70000);
    for (size_t t = 0; t < run.n_traces; t++)
        for (size_t i = 0; i < run.traces[t].n_results; i++)
            if (run.traces[t].results[i].reproduce) run.traces[t].results[i].reproduce = huge;
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    check_cut(md, TG_REPORT_COMMENT_MAX, gating, others);
    assert_int_equal(fixture_count(md, "\n### FAIL "), gating + others);
    assert_int_equal(fixture_count(md, "_Its values, evidence and query did not fit here"), gating + others);
    assert_null(strstr(md, "more finding"));
    free(md);
    tg_arena_free(run.arena);
}

/* A run that fits is whole: no closing line, nothing counted. */
static void test_whole_when_it_fits(void **state)
{
    (void)state;
    tg_run_result run;
    size_t gating, others;
    big_run(&run, 2, 5, &gating, &others);
    char *md = fixture_render(TG_FMT_MARKDOWN, &run, NULL, &plain);
    assert_null(md_problem(md));
    assert_null(strstr(md, "left out to stay within"));
    assert_int_equal(fixture_count(md, "\n### FAIL "), gating + others);
    /* the results table: what fails the run first, passes last */
    const char *row = strstr(md, "| trace | rule | severity | status | count | message |\n");
    assert_non_null(row);
    row = strchr(strchr(row, '\n') + 1, '\n') + 1;
    assert_true(strncmp(row, "| `rank0.sqlite` | `gate-0-0` | error | **FAIL** |", 49) == 0);
    row = strchr(row, '\n') + 1;
    assert_true(strncmp(row, "| `rank1.sqlite` | `gate-1-0` | error | **FAIL** |", 49) == 0);
    assert_true(strstr(md, "| **PASS** |") == NULL);
    assert_true(strstr(md, "`rule-1-2` | error | PASS |") > strstr(md, "`rule-1-4` | error | ERROR |"));
    free(md);
    tg_arena_free(run.arena);
}

static size_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (size_t)st.st_size;
}

static char *read_from(const char *path, size_t offset)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = file_size(path) - offset;
    char *buf = malloc(n + 1);
    assert_int_equal(fseek(f, (long)offset, SEEK_SET), 0);
    assert_int_equal(fread(buf, 1, n, f), n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* -f github: the summary file, with what earlier steps wrote, stays
** within 1 MiB; the part appended passes the same checks. */
static void test_summary_budget(void **state)
{
    (void)state;
    tg_run_result run;
    size_t gating, others;
    big_run(&run, 200, 50, &gating, &others);   /* 4000 findings: megabytes whole */
    static const size_t earlier[] = {0, 900000, (1u << 20) - 3000};
    for (size_t k = 0; k < sizeof earlier / sizeof *earlier; k++) {
        char path[] = "/tmp/tg-summary-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        for (size_t i = 0; i < earlier[k]; i++) fputc(i % 64 == 63 ? '\n' : 'e', f);
        assert_int_equal(fclose(f), 0);
        tg_report_opts o = plain;
        o.step_summary_path = path;
        o.html_path = "report.html";
        free(fixture_render(TG_FMT_GITHUB, &run, NULL, &o));
        assert_true(file_size(path) <= TG_REPORT_SUMMARY_MAX);
        char *md = read_from(path, earlier[k]);
        check_cut(md, TG_REPORT_SUMMARY_MAX - earlier[k], gating, others);
        assert_non_null(strstr(md, "left out to stay within the 1 MiB of a GitHub job summary"));
        free(md);
        unlink(path);
    }
    tg_arena_free(run.arena);
}

/* A summary already too full for even the closing line gets nothing. */
static void test_summary_full(void **state)
{
    (void)state;
    tg_run_result run;
    size_t gating, others;
    big_run(&run, 1, 5, &gating, &others);
    char path[] = "/tmp/tg-summary-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < TG_REPORT_SUMMARY_MAX - 100; i++) fputc('e', f);
    assert_int_equal(fclose(f), 0);
    tg_report_opts o = plain;
    o.step_summary_path = path;
    free(fixture_render(TG_FMT_GITHUB, &run, NULL, &o));
    assert_int_equal(file_size(path), TG_REPORT_SUMMARY_MAX - 100);
    unlink(path);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comment_budget),
        cmocka_unit_test(test_comment_short_forms),
        cmocka_unit_test(test_whole_when_it_fits),
        cmocka_unit_test(test_summary_budget),
        cmocka_unit_test(test_summary_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
