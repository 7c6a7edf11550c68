/*
** Corpus test: every report format on real traces. One `check` run per
** trace writes all six formats (-o FORMAT=FILE); the JSON must validate
** against docs/result-schema.json (strict: no undocumented members), the
** JUnit XML must be well-formed (xmllint, when installed) and count the
** same testcases, failures and skips, the SARIF must hold one result per
** failing finding with a ruleIndex into its rules, the github commands one
** annotation per failure with %, newline, : and , escaped, and the text and
** markdown reports the same failures. A Kineto result merged keeps its
** format in the text header and the HTML. Skips with a message when
** ../shared is absent.
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
#include "schema_check.h"
#include "tg_config.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, len) == 0) n++;
    return n;
}

typedef struct tally {
    size_t results, failed, skipped;
} tally;

static tally json_tally(json_t *doc)
{
    tally t = {0};
    json_t *traces = json_object_get(doc, "traces");
    size_t i, k;
    json_t *tr, *r;
    json_array_foreach(traces, i, tr) {
        json_array_foreach(json_object_get(tr, "results"), k, r) {
            const char *s = json_string_value(json_object_get(r, "status"));
            t.results++;
            t.failed += strcmp(s, "fail") == 0;
            t.skipped += strcmp(s, "skip") == 0;
        }
    }
    return t;
}

/* Every github annotation's message part keeps %, CR, LF escaped: no raw
** newline inside a command, and a '%' only as %25, %0A or %0D. */
static void check_github_escaping(const char *gh, const char *trace)
{
    for (const char *p = gh; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "::", 2) != 0) continue;
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *props_end = strstr(p + 2, "::");
        assert_non_null(props_end);
        for (const char *q = p; q < p + len; q++)
            if (*q == '%' && strncmp(q, "%25", 3) && strncmp(q, "%0A", 3) && strncmp(q, "%0D", 3) &&
                strncmp(q, "%3A", 3) && strncmp(q, "%2C", 3))
                fail_msg("%s: unescaped %% in a github command: %.*s", trace, (int)len, p);
        /* properties: between the command name and "::" no raw ':' or ',' inside values */
        const char *title = strstr(p, "title=");
        if (title && title < props_end) {
            for (const char *q = title + 6; q < props_end; q++)
                if (*q == ':' ) fail_msg("%s: unescaped ':' in a property: %.*s", trace, (int)len, p);
        }
    }
}

static void test_formats(void **state)
{
    (void)state;
    static const char *traces[] = {
        "h200-nsys/drv_sync_memcpy.sqlite", "h200-nsys/drv_gaps.sqlite", "h200-torch/ddp_bad.sqlite",
        "h200-torch/realistic_regressed.sqlite", "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        "public/dynamicvit-rtxa2000-empty-capture.sqlite",
    };
    json_error_t jerr;
    json_t *schema = json_load_file(TG_SOURCE_ROOT "/docs/result-schema.json", 0, &jerr);
    if (!schema) fail_msg("docs/result-schema.json: %s", jerr.text);
    char dir[] = "/tmp/tg-formats-XXXXXX";
    assert_non_null(mkdtemp(dir));
    bool have_xmllint = system("command -v xmllint >/dev/null 2>&1") == 0;

    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        int st = corpus_run("check --missing-data=skip --format text -o json=%s/r.json -o junit=%s/r.xml "
                            "-o sarif=%s/r.sarif -o github=%s/r.gh -o markdown=%s/r.md -o text=%s/r.txt "
                            "-o html=%s/r.html '%s/%s'",
                            dir, dir, dir, dir, dir, dir, dir, corpus_traces, traces[i]);
        assert_true(st == 0 || st == 1);
        char path[512];
        snprintf(path, sizeof path, "%s/r.json", dir);
        json_t *doc = json_load_file(path, 0, &jerr);
        if (!doc) fail_msg("%s: JSON does not parse: %s", traces[i], jerr.text);
        char err[512];
        if (!schema_check(schema, doc, true, err, sizeof err))
            fail_msg("%s: JSON against the schema: %s", traces[i], err);
        tally t = json_tally(doc);
        assert_true(t.results >= 11);

        snprintf(path, sizeof path, "%s/r.xml", dir);
        char *xml = slurp(path);
        assert_non_null(xml);
        if (have_xmllint) {
            char cmd[600];
            snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
            if (system(cmd) != 0) fail_msg("%s: JUnit XML is not well-formed", traces[i]);
        }
        assert_int_equal(count(xml, "<testcase "), t.results);
        /* a finding below --fail-on is a passing test case with <system-out> */
        assert_int_equal(count(xml, "<failure ") + count(xml, "<system-out>"), t.failed);
        assert_int_equal(count(xml, "<skipped "), t.skipped);

        snprintf(path, sizeof path, "%s/r.sarif", dir);
        json_t *sarif = json_load_file(path, 0, &jerr);
        if (!sarif) fail_msg("%s: SARIF does not parse: %s", traces[i], jerr.text);
        assert_string_equal(json_string_value(json_object_get(sarif, "version")), "2.1.0");
        json_t *run = json_array_get(json_object_get(sarif, "runs"), 0);
        json_t *rules = json_object_get(json_object_get(json_object_get(run, "tool"), "driver"), "rules");
        json_t *results = json_object_get(run, "results");
        assert_int_equal(json_array_size(results), t.failed);
        size_t k;
        json_t *r;
        json_array_foreach(results, k, r) {
            size_t idx = (size_t)json_integer_value(json_object_get(r, "ruleIndex"));
            const char *id = json_string_value(json_object_get(r, "ruleId"));
            assert_true(idx < json_array_size(rules));
            assert_string_equal(json_string_value(json_object_get(json_array_get(rules, idx), "id")), id);
            assert_non_null(json_object_get(json_object_get(r, "partialFingerprints"), "tracegate/v1"));
        }

        snprintf(path, sizeof path, "%s/r.gh", dir);
        char *gh = slurp(path);
        assert_non_null(gh);
        assert_int_equal(count_lines(gh, "::error ") + count_lines(gh, "::warning ") +
                         count_lines(gh, "::notice "), t.failed);
        check_github_escaping(gh, traces[i]);

        snprintf(path, sizeof path, "%s/r.txt", dir);
        char *txt = slurp(path);
        assert_int_equal(count_lines(txt, "  FAIL "), t.failed);
        snprintf(path, sizeof path, "%s/r.md", dir);
        char *md = slurp(path);
        assert_non_null(md);
        assert_int_equal(count(md, "| **FAIL** |"), t.failed);

        snprintf(path, sizeof path, "%s/r.html", dir);
        char *html = slurp(path);
        assert_non_null(html);
        if (!strcmp(traces[i], "h200-nsys/drv_gaps.sqlite")) {
            /* the gap as an interval apart from its row, with units, and
            ** the host's activity in it, as the text report has them */
            static const char gap[] = "idle 720 ms (3.386898..4.107360 s) after CUPTI_ACTIVITY_KIND_KERNEL "
                                      "rowid 75 (18.6 us), before CUPTI_ACTIVITY_KIND_KERNEL rowid 76";
            assert_non_null(strstr(txt, gap));
            assert_non_null(strstr(html, gap));
            assert_non_null(strstr(html, "<li>osrt usleep  2 calls, 720 ms (100%), thread drvload (tid 1063, launches "
                                         "GPU work), from main in drvload  OSRT_API rowids 1002, 1001</li>"));
            assert_non_null(strstr(html, "<code>sum_duration</code> = 2.16 s"));
        }

        free(xml);
        free(gh);
        free(txt);
        free(md);
        free(html);
        json_decref(sarif);
        json_decref(doc);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    json_decref(schema);
}

/* The first line of a file (the text report's header of its first trace). */
static char *first_line(const char *path)
{
    char *text = slurp(path);
    if (!text) fail_msg("cannot read %s", path);
    char *nl = strchr(text, '\n');
    if (nl) *nl = 0;
    return text;
}

/* A Kineto result merged reads as the trace did (docs/formats.md,
** trace_format): the text header names it "Kineto JSON", not "nsys
** unknown", and the HTML says its queries run with jq, as the direct
** reports do. */
static void test_merged_kineto(void **state)
{
    (void)state;
    const char *trace = "kineto/h200/sync_memcpy_bad.json.gz";
    char dir[] = "/tmp/tg-kmerge-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int st = corpus_run("check --fail-on warning -o json=%s/k.json -o text=%s/k.txt -o html=%s/k.html '%s/%s'",
                        dir, dir, dir, corpus_traces, trace);
    assert_true(st == 1);   /* the pageable copies: findings with jq reproduce queries */
    st = corpus_run("merge --fail-on warning -o text=%s/m.txt -o html=%s/m.html -o json=%s/m.json %s/k.json", dir,
                    dir, dir, dir);
    assert_true(st == 1);
    char path[512];
    snprintf(path, sizeof path, "%s/k.txt", dir);
    char *direct = first_line(path);
    snprintf(path, sizeof path, "%s/m.txt", dir);
    char *merged = first_line(path);
    if (!strstr(direct, "  (Kineto JSON, schema ")) fail_msg("direct header: %s", direct);
    assert_string_equal(merged, direct);
    free(direct);
    free(merged);
    snprintf(path, sizeof path, "%s/k.html", dir);
    char *html = slurp(path);
    snprintf(path, sizeof path, "%s/m.html", dir);
    char *mhtml = slurp(path);
    size_t jq = count(html, "<strong>Reproduce</strong> (jq on the trace)");
    assert_true(jq > 0);
    assert_int_equal(count(mhtml, "<strong>Reproduce</strong> (jq on the trace)"), jq);
    assert_int_equal(count(mhtml, "sqlite3 on the export"), 0);
    free(html);
    free(mhtml);
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/m.json", dir);
    json_t *doc = json_load_file(path, 0, &jerr);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "traces"), 0),
                                                          "trace_format")), "kineto-json");
    json_decref(doc);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    if (!corpus_init("report formats on real traces")) return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_formats), cmocka_unit_test(test_merged_kineto)};
    return cmocka_run_group_tests_name("formats on real traces", tests, NULL, NULL);
}
