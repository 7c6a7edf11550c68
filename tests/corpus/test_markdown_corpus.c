/*
** Corpus test: the markdown report of the shared realistic regression
** within GitHub's limits (report.h). A baseline is recorded from
** realistic_baseline_run1 and run2, then `check` runs on those two and
** realistic_regressed with -o markdown (a pull-request comment, 65,536)
** and with -f github into a job summary file (1 MiB, after what an earlier
** step wrote). Each must fit, in bytes and UTF-16 code units, be well-
** formed (md_check.h: fences closed, tables whole), show every finding
** that fails the run (from the JSON written beside it) in the section
** before the results table, and count what it left out, naming the HTML
** and JSON reports. Skips with a message when ../shared is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corpus.h"
#include "md_check.h"
#include "report/report.h"

static char tmpdir[256];

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    if (size) *size = got;
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The checks on one markdown report: md is what tracegate wrote, within
** limit; json the result written with it. */
static void check_report(const char *md, size_t limit, const char *json_path, const char *html_path)
{
    assert_true(strlen(md) <= limit);
    assert_true(md_utf16_units(md) <= limit);
    const char *why = md_problem(md);
    if (why) fail_msg("not well-formed: %s", why);
    json_error_t err;
    json_t *doc = json_load_file(json_path, 0, &err);
    assert_non_null(doc);
    const char *results = strstr(md, "\n## Results\n");
    size_t gating = 0, findings = 0;
    size_t i, k;
    json_t *tr, *r;
    json_array_foreach(json_object_get(doc, "traces"), i, tr)
        json_array_foreach(json_object_get(tr, "results"), k, r) {
            const char *st = json_string_value(json_object_get(r, "status"));
            if (strcmp(st, "fail") && strcmp(st, "inconclusive")) continue;
            findings++;
            json_t *b = json_object_get(r, "baseline");
            bool gates = !strcmp(st, "fail") && (!strcmp(json_string_value(json_object_get(r, "severity")), "error")
                                                 || json_is_true(json_object_get(b, "regression")));
            if (!gates) continue;
            gating++;
            char heading[512];
            snprintf(heading, sizeof heading, "\n### FAIL `%s` in `%s` (",
                     json_string_value(json_object_get(r, "rule")),
                     base(json_string_value(json_object_get(tr, "file"))));
            const char *at = strstr(md, heading);
            if (!at) fail_msg("the gating finding %s is not shown", heading + 1);
            if (results) assert_true(at < results);
        }
    assert_true(gating > 0);
    size_t shown = count(md, "\n### ");
    const char *closing = strstr(md, "\n_\xe2\x80\xa6 and ");
    if (shown < findings) {
        assert_non_null(closing);
        const char *more = strstr(closing, " more finding");
        assert_non_null(more);
        while (more[-1] >= '0' && more[-1] <= '9') more--;
        assert_int_equal(strtol(more, NULL, 10), findings - shown);
    }
    if (closing) {
        char names[512];
        snprintf(names, sizeof names, "see the HTML report `%s` or the JSON report `%s`", html_path, json_path);
        assert_non_null(strstr(closing, names));
    }
    json_decref(doc);
}

static void test_comment(void **state)
{
    (void)state;
    char md[300], json[300], html[300];
    snprintf(md, sizeof md, "%s/x.md", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    snprintf(html, sizeof html, "%s/r.html", tmpdir);
    int st = corpus_run("check --baseline '%s/b.yaml' -o markdown='%s' -o json='%s' -o html='%s' "
                        "'%s/h200-torch/realistic_baseline_run1.sqlite' '%s/h200-torch/realistic_baseline_run2.sqlite' "
                        "'%s/h200-torch/realistic_regressed.sqlite'",
                        tmpdir, md, json, html, corpus_traces, corpus_traces, corpus_traces);
    assert_int_equal(st, 1);
    size_t size;
    char *text = slurp(md, &size);
    printf("markdown of the three realistic traces: %zu bytes, %zu UTF-16 code units (limit %zu)\n", size,
           md_utf16_units(text), TG_REPORT_COMMENT_MAX);
    check_report(text, TG_REPORT_COMMENT_MAX, json, html);
    free(text);
}

static void test_summary(void **state)
{
    (void)state;
    char summary[300], json[300], html[300];
    snprintf(summary, sizeof summary, "%s/summary.md", tmpdir);
    snprintf(json, sizeof json, "%s/s.json", tmpdir);
    snprintf(html, sizeof html, "%s/s.html", tmpdir);
    /* an earlier step left all but 40 KB of the summary's 1 MiB */
    size_t earlier = TG_REPORT_SUMMARY_MAX - 40000;
    FILE *f = fopen(summary, "w");
    assert_non_null(f);
    for (size_t i = 0; i < earlier; i++) fputc(i % 80 == 79 ? '\n' : 'e', f);
    assert_int_equal(fclose(f), 0);
    setenv("GITHUB_STEP_SUMMARY", summary, 1);
    int st = corpus_run("check --baseline '%s/b.yaml' -f github -o json='%s' -o html='%s' "
                        "'%s/h200-torch/realistic_baseline_run1.sqlite' '%s/h200-torch/realistic_baseline_run2.sqlite' "
                        "'%s/h200-torch/realistic_regressed.sqlite'",
                        tmpdir, json, html, corpus_traces, corpus_traces, corpus_traces);
    unsetenv("GITHUB_STEP_SUMMARY");
    assert_int_equal(st, 1);
    size_t size;
    char *text = slurp(summary, &size);
    assert_true(size <= TG_REPORT_SUMMARY_MAX);
    assert_true(size > earlier);
    check_report(text + earlier, TG_REPORT_SUMMARY_MAX - earlier, json, html);
    assert_non_null(strstr(text + earlier, "left out to stay within the 1 MiB of a GitHub job summary"));
    free(text);
}

int main(void)
{
    if (!corpus_init("markdown corpus")) return 77;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-md-corpus-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    if (corpus_run("baseline record -o '%s/b.yaml' '%s/h200-torch/realistic_baseline_run1.sqlite' "
                   "'%s/h200-torch/realistic_baseline_run2.sqlite'", tmpdir, corpus_traces, corpus_traces) != 0) {
        fprintf(stderr, "cannot record the baseline\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comment),
        cmocka_unit_test(test_summary),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
