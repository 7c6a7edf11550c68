/*
** Injection into what people and CI read (issue #16): kernel, API and GPU
** names, the nsys version, trace and rule file names and rule texts that
** carry terminal sequences (CSI, OSC titles and hyperlinks), C1 controls,
** invalid UTF-8, encoded surrogates, noncharacters, bidi overrides, a
** newline followed by `::error::`, GitHub's `##[command]` and megabyte
** lengths. Through the binary, every human-facing output (the text report,
** github annotations and job summary, markdown, JUnit, SARIF message
** texts, info, metrics, explain, rules list, baseline show, stderr) must
** stay log-safe:
** valid UTF-8 without controls (but line feeds), C1, noncharacters or
** "##[", and no line that a CI runner would read as a command. JUnit must
** parse (xmllint), names are capped with "…(N bytes)", the job summary
** stays within 1 MiB, and JSON still holds the exact values.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "hostile.h"
#include "logsafe.h"

/* What a hostile upstream puts in a name. */
#define HOSTILE "\x1b[2J\x1b[1;31m\x1b]0;owned\x07\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\" \
                "\xc2\x9b" "31m\x9b" "2J\xef\xbf\xbe\xef\xbf\xbf\xef\xb7\x90\x01\x08\x7f\xff\xfe\xed\xa0\x80" \
                "\xc0\x80\xe2\x80\xae\n::error::forged\r\n  ::warning::forged ##[add-mask]secret"

/* The rule file's own hostile texts (YAML escapes: \e ESC, \a BEL, \x9b,
** \N U+0085, \L U+2028). */
static const char team_rules[] =
    "version: 1\n"
    "rules:\n"
    "  - id: named-kernels\n"
    "    title: \"Kernels \\e[2J\\e]0;t\\a \\x9b31m \\uFFFE\\uFFFF\\n::error::rule-title ##[add-mask]t\"\n"
    "    severity: warning\n"
    "    source: kernel\n"
    "    fail_when: count > 0\n"
    "    evidence: {columns: [name, api, duration]}\n"
    "    message: \"{count} kernels \\e[31m\\n::error::rule-message ##[add-mask]m \\u202E\"\n"
    "    advice: \"Look \\e]8;;http://evil\\e\\\\here\\e]8;;\\e\\\\ \\N \\L\\n  ::warning::advice\"\n";

/* ---------------------------------------------------------------- fixtures */

/* SQL for a text value holding exactly these bytes. */
static void append_text(char **sql, const char *bytes, size_t n)
{
    char *hex = malloc(2 * n + 1);
    assert_non_null(hex);
    for (size_t i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02X", (unsigned char)bytes[i]);
    hex[2 * n] = 0;
    assert_true(tg_fixture_append(sql, "CAST(X'%s' AS TEXT)", hex));
    free(hex);
}

/* prefix + fill repeated to fill_len bytes + suffix. */
static char *make_name(const char *prefix, char fill, size_t fill_len, const char *suffix, size_t *len)
{
    size_t pl = strlen(prefix), sl = strlen(suffix);
    *len = pl + fill_len + sl;
    char *s = malloc(*len + 1);
    assert_non_null(s);
    memcpy(s, prefix, pl);
    memset(s + pl, fill, fill_len);
    memcpy(s + pl + fill_len, suffix, sl);
    s[*len] = 0;
    return s;
}

/* An export whose kernel, launch API, memcpy API, OS runtime call and GPU
** names and nsys version are prefix + `fill` x fill_len + suffix. Ten
** kernels launched by the hostile call, a blocking copy from it, and a GPU
** busy far less than half the time while the launching thread sleeps in
** the hostile OS call: sync-memcpy, low-gpu-utilization (whose cause
** names that call) and the team rule fail, each citing the names. */
static char *hostile_export(size_t fill_len, const char *suffix)
{
    static const struct { int id; const char *prefix; } names[] = {
        {1, "kernel_"}, {2, "cudaLaunchKernel"}, {3, "cudaMemcpy"}, {4, "usleep"},
    };
    char *sql = NULL;
    size_t len;
    char *s = make_name("2024.5.1 ", 'v', fill_len, suffix, &len);
    assert_true(tg_fixture_append(&sql, "UPDATE EXPORT_META_DATA SET value = "));
    append_text(&sql, s, len);
    assert_true(tg_fixture_append(&sql, " WHERE name = 'EXPORT_PRODUCT_VERSION';"));
    free(s);
    for (size_t i = 0; i < 4; i++) {
        s = make_name(names[i].prefix, 'n', fill_len, suffix, &len);
        assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (%d, ", names[i].id));
        append_text(&sql, s, len);
        assert_true(tg_fixture_append(&sql, ");"));
        free(s);
    }
    s = make_name("NVIDIA H100 ", 'g', fill_len, suffix, &len);
    assert_true(tg_fixture_append(&sql, "INSERT INTO TARGET_INFO_GPU (id, name) VALUES (0, "));
    append_text(&sql, s, len);
    assert_true(tg_fixture_append(&sql, ");"));
    free(s);
    for (int k = 0; k < 10; k++) {
        long long t = 1000000LL * k * 100;
        assert_true(tg_fixture_append(&sql,
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
            " VALUES (%lld, %lld, (1 << 24) | 1, %d, 2);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
            " demangledName, shortName) VALUES (%lld, %lld, 0, 7, %d, 1 << 24, 1, 1);",
            t, t + 500, k + 1, t + 1000, t + 2000, k + 1));
    }
    assert_true(tg_fixture_append(&sql,
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (5000, 6000, (1 << 24) | 1, 100, 3);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid,"
        " bytes, copyKind, srcKind, dstKind) VALUES (5100, 5900, 0, 7, 100, 1 << 24, 16777216, 1, 0, 2);"
        /* the launching thread asleep in the hostile call: low-gpu-utilization's cause names it */
        "INSERT INTO OSRT_API (start, end, globalTid, nameId) VALUES (10000, 899000000, (1 << 24) | 1, 4);"));
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

typedef struct world {
    char *dir;            /* the case's files */
    char *trace;          /* hostile names, and a hostile file name */
    char *rules;          /* team_rules, under a hostile file name */
    char *big;            /* 1 MiB names (a fixture: teardown removes it, failed case or not) */
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->dir = hx_tempdir();
    char *fixture = hostile_export(0, HOSTILE);
    w->trace = hx_copy_fixture(fixture, w->dir, "rank\x1b[31m\n::error::path\xff ##[add-mask]p.sqlite");
    tg_fixture_remove(fixture);
    w->rules = hx_path(w->dir, "team\x1b]0;t\x07\n::error::rules.yaml");
    hx_write_file(w->rules, team_rules, strlen(team_rules));
    w->big = hostile_export(1 << 20, "");
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    hx_rmtree(w->dir);
    free(w->dir);
    free(w->trace);
    free(w->rules);
    tg_fixture_remove(w->big);
    free(w);
    return 0;
}

/* ---------------------------------------------------------------- checks */

/* Log-safe (tests/unit/logsafe.h): valid UTF-8; no control but LF, no
** DEL, C1, noncharacter, bidi control or line separator; no line a runner
** reads as a command (github: every line one of ours). */
static void expect_log_safe(const char *what, const char *text, size_t len, bool github)
{
    size_t at = 0;
    const char *why = tg_logsafe_problem(text, len, github, &at);
    if (why) fail_msg("%s: %s at byte %zu: %.60s", what, why, at, text + (at > 20 ? at - 20 : 0));
}

/* stderr: log-safe, every line a "tracegate: " message. */
static void expect_stderr_safe(const char *what, const hx_result *r)
{
    expect_log_safe(what, r->err, r->err_len, false);
    for (const char *line = r->err; *line;) {
        if (strncmp(line, "tracegate: ", 11) != 0) fail_msg("%s: stderr line without the prefix: %.80s", what, line);
        const char *nl = strchr(line, '\n');
        if (!nl) break;
        line = nl + 1;
    }
}

static char *slurp(const char *path, size_t *len)
{
    char *text = hx_slurp(path, len);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

static void expect_contains(const char *what, const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("%s lacks \"%s\"", what, needle);
}

static bool have_xmllint(void)
{
    if (access("/usr/bin/xmllint", X_OK) == 0) return true;
    fprintf(stderr, "note: /usr/bin/xmllint absent (ci/deps.sh installs libxml2-utils); JUnit not parsed\n");
    return false;
}

static void expect_xml_parses(const char *path)
{
    if (!have_xmllint()) return;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    if (rc != 0) fail_msg("xmllint rejects the JUnit report: %s", out);
}

/* ---------------------------------------------------------------- cases */

/* check with every format: the human ones log-safe and showing the names
** escaped, JUnit well-formed, JSON exact. */
static void test_check_formats(void **state)
{
    world *w = *state;
    char *junit = hx_path(w->dir, "report.xml"), *gh = hx_path(w->dir, "gh.txt");
    char *md = hx_path(w->dir, "report.md"), *sarif = hx_path(w->dir, "report.sarif");
    char *json = hx_path(w->dir, "report.json");
    char o_junit[4200], o_gh[4200], o_md[4200], o_sarif[4200], o_json[4200];
    snprintf(o_junit, sizeof o_junit, "junit=%s", junit);
    snprintf(o_gh, sizeof o_gh, "github=%s", gh);
    snprintf(o_md, sizeof o_md, "markdown=%s", md);
    snprintf(o_sarif, sizeof o_sarif, "sarif=%s", sarif);
    snprintf(o_json, sizeof o_json, "json=%s", json);
    hx_result r;
    hx_run(&r, "check", "--rules", "builtin", "--rules", w->rules, "-o", o_junit, "-o", o_gh, "-o", o_md,
           "-o", o_sarif, "-o", o_json, w->trace);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.status, 1);
    expect_stderr_safe("check stderr", &r);
    expect_log_safe("text report", r.out, r.out_len, false);
    expect_contains("text report", r.out, "\\x1b[2J");                       /* the names are there, escaped */
    expect_contains("text report", r.out, "\\ufffe\\uffff");
    expect_contains("text report", r.out, "\\n::error::forged");
    expect_contains("text report", r.out, "rank\\x1b[31m\\n::error::path\\xff #\\x23[add-mask]p.sqlite");
    expect_contains("text report", r.out, "kernels \\x1b[31m\\n::error::rule-message");
    hx_free(&r);

    size_t len;
    char *text = slurp(gh, &len);
    expect_log_safe("github annotations", text, len, true);
    assert_int_equal(hx_lines(text), 4);   /* one per failing rule */
    expect_contains("github annotations", text, "::error title=tracegate sync-memcpy::");
    expect_contains("github annotations", text, "::warning title=tracegate named-kernels::");
    expect_contains("github annotations", text, "%0A\\x3a:error::rule-message");
    free(text);
    text = slurp(md, &len);
    expect_log_safe("markdown", text, len, false);
    expect_contains("markdown", text, "\\ufffe");
    free(text);

    text = slurp(junit, &len);
    expect_log_safe("junit", text, len, false);
    free(text);

    json_error_t jerr;
    json_t *doc = json_load_file(sarif, 0, &jerr);
    if (!doc) fail_msg("the SARIF report does not parse: %s", jerr.text);
    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "results"), i, res) {
        const char *msg = json_string_value(json_object_get(json_object_get(res, "message"), "text"));
        assert_non_null(msg);
        expect_log_safe("sarif message", msg, strlen(msg), false);
    }
    json_decref(doc);

    /* the machine contract keeps the exact bytes (invalid UTF-8 as U+FFFD) */
    doc = json_load_file(json, 0, &jerr);
    if (!doc) fail_msg("the JSON report does not parse: %s", jerr.text);
    char *dump = json_dumps(doc, JSON_ENSURE_ASCII);
    expect_contains("json", dump, "\\u001B[2J\\u001B[1;31m\\u001B]0;owned\\u0007");
    expect_contains("json", dump, "\\n::error::forged\\r\\n  ::warning::forged ##[add-mask]secret");
    free(dump);
    json_decref(doc);

    /* merge reads the exact bytes back: its human formats escape them too */
    static const char *const formats[] = {"text", "github", "markdown", "junit"};
    for (size_t f = 0; f < 4; f++) {
        hx_run(&r, "merge", "--format", formats[f], json);
        assert_int_equal(r.signal, 0);
        assert_int_equal(r.status, 1);
        expect_log_safe(formats[f], r.out, r.out_len, f == 1);
        expect_stderr_safe("merge", &r);
        if (f == 0) expect_contains("merge text", r.out, "\\x1b[2J");
        hx_free(&r);
    }
    free(junit), free(gh), free(md), free(sarif), free(json);
}

/* xmllint --xpath EXPR FILE, or NULL when xmllint fails. */
static char *xpath(const char *file, const char *expr)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "xmllint --xpath '%s' '%s' 2>/dev/null", expr, file);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = calloc(1, 1 << 16);
    size_t n = fread(out, 1, (1 << 16) - 1, p);
    out[n] = 0;
    if (pclose(p) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* JUnit with every XML-forbidden input in the kernel, API and GPU names:
** well formed, and the names read back escaped. */
static void test_junit_parses(void **state)
{
    world *w = *state;
    char *junit = hx_path(w->dir, "only.xml");
    char o_junit[4200];
    snprintf(o_junit, sizeof o_junit, "junit=%s", junit);
    hx_result r;
    hx_run(&r, "check", "--rules", "builtin", "--rules", w->rules, "-o", o_junit, w->trace);
    assert_int_equal(r.status, 1);
    hx_free(&r);
    expect_xml_parses(junit);
    if (!have_xmllint()) return;
    static const char every[] = "\\x1b[2J\\x1b[1;31m\\x1b]0;owned\\x07\\x1b]8;;http://evil.example\\x1b\\link"
                                "\\x1b]8;;\\x1b\\\\u009b31m\\x9b2J\\ufffe\\uffff\\ufdd0\\x01\\x08\\x7f\\xff\\xfe"
                                "\\xed\\xa0\\x80\\xc0\\x80\\u202e\n\\x3a:error::forged\\r\n  \\x3a:warning::forged "
                                "#\\x23[add-mask]secret";
    static const char *const exprs[] = {
        "string(//property[@name=\"gpus\"]/@value)",                                   /* GPU name */
        "string(//testcase[@name=\"named-kernels\"]/system-out)",                      /* kernel and API names (a warning: below --fail-on) */
        "string(//testcase[@name=\"sync-memcpy\"]/failure)",                           /* memcpy API name */
        "string(//property[@name=\"nsys_version\"]/@value)",
    };
    for (size_t i = 0; i < 4; i++) {
        char *v = xpath(junit, exprs[i]);
        if (!v) fail_msg("xmllint cannot evaluate %s", exprs[i]);
        if (!strstr(v, every)) fail_msg("%s does not hold the escaped name: %.600s", exprs[i], v);
        free(v);
    }
    char *v = xpath(junit, "string(//testcase[@name=\"named-kernels\"]/system-out)");
    expect_contains("junit", v, "kernel_\\x1b[2J");
    expect_contains("junit", v, "cudaLaunchKernel\\x1b[2J");
    free(v);
    free(junit);
}

/* --format github on stdout and --format markdown, the way CI runs them. */
static void test_check_stdout_formats(void **state)
{
    world *w = *state;
    static const char *const formats[] = {"github", "markdown", "junit", "text"};
    for (size_t f = 0; f < 4; f++) {
        hx_result r;
        hx_run(&r, "check", "--rules", "builtin", "--rules", w->rules, "--format", formats[f], w->trace);
        assert_int_equal(r.status, 1);
        expect_log_safe(formats[f], r.out, r.out_len, f == 0);
        expect_stderr_safe(formats[f], &r);
        hx_free(&r);
    }
}

static void test_info_metrics(void **state)
{
    world *w = *state;
    static const char *const cmds[] = {"info", "metrics"};
    for (size_t c = 0; c < 2; c++) {
        hx_result r;
        hx_run(&r, cmds[c], w->trace);
        assert_int_equal(r.signal, 0);
        assert_int_equal(r.status, 0);
        expect_log_safe(cmds[c], r.out, r.out_len, false);
        expect_stderr_safe(cmds[c], &r);
        expect_contains(cmds[c], r.out, "2024.5.1 \\x1b[2J");              /* nsys version */
        expect_contains(cmds[c], r.out, "NVIDIA H100 \\x1b[2J");           /* device name */
        expect_contains(cmds[c], r.out, "rank\\x1b[31m\\n::error::path");  /* file name */
        hx_free(&r);
    }
}

static void test_rules_texts(void **state)
{
    world *w = *state;
    hx_result r;
    hx_run(&r, "explain", "--rules", w->rules, "named-kernels");
    assert_int_equal(r.status, 0);
    expect_log_safe("explain", r.out, r.out_len, false);
    expect_contains("explain", r.out, "Kernels \\x1b[2J\\x1b]0;t\\x07 \\u009b31m \\ufffe\\uffff\\n::error::rule-title");
    expect_contains("explain", r.out, "\\x3a:warning::advice");     /* a line of the advice that starts "::" */
    expect_contains("explain", r.out, "team\\x1b]0;t\\x07\\n::error::rules.yaml:3");
    hx_free(&r);
    hx_run(&r, "rules", "list", w->rules);
    assert_int_equal(r.status, 0);
    expect_log_safe("rules list", r.out, r.out_len, false);
    expect_contains("rules list", r.out, "#\\x23[add-mask]t");
    hx_free(&r);
}

/* `baseline show` on a baseline whose recorded names and versions carry
** the same (a baseline is a committed file another job may have written). */
static void test_baseline_show(void **state)
{
    world *w = *state;
    static const char baseline[] =
        "date: \"2026-12-01\\e[2J\"\n"
        "format_version: 1\n"
        "metrics:\n"
        "  iteration-time-regression:\n"
        "    direction: higher_is_worse\n"
        "    mad: 0\n"
        "    median: 30007919\n"
        "    metric: \"p50(period)\\e]0;t\\a\"\n"
        "    n_runs: 1\n"
        "    n_samples: 2\n"
        "    runs: [30007919]\n"
        "    samples: [30007919, 30007919]\n"
        "    samples_field: \"period\\e[5m\"\n"
        "    unit: ns\n"
        "runs:\n"
        "- gpu_names: \"H200\\e]0;t\\a\\n::error::gpu\"\n"
        "  nsys_version: \"2022\\x9b2J\\uFFFE\"\n"
        "  schema_version: \"3.0\\N\"\n"
        "  trace: \"rank\\e[2J\\n  ::error::trace ##[add-mask]x.sqlite\"\n"
        "tool_version: \"0.1\\e[31m\\L\"\n";
    char *path = hx_path(w->dir, "hostile\x1b[2J\n::error::baseline.yaml");
    hx_write_file(path, baseline, strlen(baseline));
    hx_result r;
    hx_run(&r, "baseline", "show", path);
    assert_int_equal(r.status, 0);
    expect_log_safe("baseline show", r.out, r.out_len, false);
    expect_contains("baseline show", r.out, "rank\\x1b[2J\\n  ::error::trace #\\x23[add-mask]x.sqlite");
    expect_contains("baseline show", r.out, "GPU H200\\x1b]0;t\\x07\\n::error::gpu  nsys 2022\\u009b2J\\ufffe");
    expect_contains("baseline show", r.out, "hostile\\x1b[2J\\n::error::baseline.yaml");
    hx_free(&r);
    free(path);
}

/* stderr: a trace that cannot be read, a missing one, a rule file whose
** error line starts with "::" after blanks, a bad option value. */
static void test_diagnostics(void **state)
{
    world *w = *state;
    char *bad = hx_path(w->dir, "bad\x1b[2J\n::error::forged\xc2\x9b.sqlite");
    hx_write_file(bad, "not an export\n", 14);
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t c = 0; c < 3; c++) {
        hx_result r;
        hx_run(&r, cmds[c], bad);
        assert_int_equal(r.status, 3);
        expect_stderr_safe(cmds[c], &r);
        assert_int_equal(hx_lines(r.err), 1);
        expect_contains(cmds[c], r.err, "bad\\x1b[2J\\n::error::forged\\u009b.sqlite");
        expect_log_safe(cmds[c], r.out, r.out_len, false);
        hx_free(&r);
    }
    char *missing = hx_path(w->dir, "gone\n::error::x.sqlite");
    hx_result r;
    hx_run(&r, "check", missing);
    assert_int_equal(r.status, 3);
    expect_stderr_safe("missing trace", &r);
    hx_free(&r);

    char *broken = hx_path(w->dir, "broken\x1b[2J.yaml");
    static const char broken_rules[] =
        "version: 1\nrules:\n  - id: b\n    title: t\n    severity: warning\n    source: kernel\n"
        "    where: >\n      ::error::forged and\n    fail_when: count > 0\n";
    hx_write_file(broken, broken_rules, strlen(broken_rules));
    hx_run(&r, "rules", "lint", broken);
    assert_int_equal(r.status, 2);
    expect_log_safe("rule error", r.err, r.err_len, false);
    expect_contains("rule error", r.err, "broken\\x1b[2J.yaml:");
    hx_free(&r);

    hx_run(&r, "check", "--fail-on", "x\n::error::opt\x1b[2J", w->trace);
    assert_int_equal(r.status, 2);
    expect_stderr_safe("bad option", &r);
    assert_int_equal(hx_lines(r.err), 1);
    hx_free(&r);
    free(bad), free(missing), free(broken);
}

/* Megabyte names: every human format is capped, JSON keeps them whole. */
static void test_name_caps(void **state)
{
    world *w = *state;
    const char *fixture = w->big;
    char *json = hx_path(w->dir, "big.json"), *junit = hx_path(w->dir, "big.xml"), *md = hx_path(w->dir, "big.md");
    char *gh = hx_path(w->dir, "big.gh"), *sarif = hx_path(w->dir, "big.sarif");
    char o_json[4200], o_junit[4200], o_md[4200], o_gh[4200], o_sarif[4200];
    snprintf(o_json, sizeof o_json, "json=%s", json);
    snprintf(o_junit, sizeof o_junit, "junit=%s", junit);
    snprintf(o_md, sizeof o_md, "markdown=%s", md);
    snprintf(o_gh, sizeof o_gh, "github=%s", gh);
    snprintf(o_sarif, sizeof o_sarif, "sarif=%s", sarif);
    hx_result r;
    hx_run(&r, "check", "--rules", "builtin", "--rules", w->rules, "-o", o_json, "-o", o_junit, "-o", o_md,
           "-o", o_gh, "-o", o_sarif, fixture);
    assert_int_equal(r.status, 1);
    /* without caps: ten evidence rows of two 1 MB names, the GPU name... */
    if (r.out_len > 256 * 1024) fail_msg("the text report takes %zu bytes", r.out_len);
    expect_contains("text", r.out, "nnnn\xe2\x80\xa6(1048583 bytes)");        /* kernel_ + 1 MiB */
    expect_contains("text", r.out, "vvvv\xe2\x80\xa6(1048585 bytes)");        /* "2024.5.1 " + 1 MiB */
    hx_free(&r);
    const char *const capped[] = {junit, md, gh, sarif};
    for (size_t i = 0; i < 4; i++) {
        struct stat st;
        assert_int_equal(stat(capped[i], &st), 0);
        if (st.st_size > 256 * 1024) fail_msg("%s takes %lld bytes", capped[i], (long long)st.st_size);
    }
    /* SARIF's properties.cause is a sentence for people: capped like the
    ** message, so the cause naming the 1 MB OS call stays a few KB */
    json_error_t jerr;
    json_t *doc = json_load_file(sarif, 0, &jerr);
    if (!doc) fail_msg("SARIF does not parse: %s", jerr.text);
    json_t *results = json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "results");
    const char *cause = NULL;
    for (size_t i = 0; i < json_array_size(results); i++) {
        json_t *res = json_array_get(results, i);
        if (!strcmp(json_string_value(json_object_get(res, "ruleId")), "low-gpu-utilization"))
            cause = json_string_value(json_object_get(json_object_get(res, "properties"), "cause"));
    }
    if (!cause) fail_msg("low-gpu-utilization has no cause in the SARIF report");
    expect_contains("SARIF cause", cause, "was in usleepnnnn");
    expect_contains("SARIF cause", cause, "nnnn\xe2\x80\xa6(");   /* the sentence cut, with its full length */
    if (strlen(cause) > 4096 + 32) fail_msg("SARIF cause takes %zu bytes", strlen(cause));   /* cap + "…(N bytes)" */
    json_decref(doc);
    struct stat st;
    assert_int_equal(stat(json, &st), 0);
    assert_true(st.st_size > 10 * (1 << 20));   /* the contract: every name whole */
    static const char *const cmds[] = {"info", "metrics"};
    for (size_t c = 0; c < 2; c++) {
        hx_run(&r, cmds[c], fixture);
        assert_int_equal(r.status, 0);
        if (r.out_len > 64 * 1024) fail_msg("%s takes %zu bytes", cmds[c], r.out_len);
        expect_contains(cmds[c], r.out, "\xe2\x80\xa6(1048588 bytes)");   /* "NVIDIA H100 " + 1 MiB */
        hx_free(&r);
    }
    free(json), free(junit), free(md), free(gh), free(sarif);
}

/* The job summary: what earlier steps wrote counts; the file never passes
** 1 MiB, and a cut report says so. */
static void test_summary_cap(void **state)
{
    world *w = *state;
    char *summary = hx_path(w->dir, "step_summary.md");
    size_t held = (1u << 20) - 6000;
    char *earlier = malloc(held);
    memset(earlier, 'x', held);
    for (size_t i = 99; i < held; i += 100) earlier[i] = '\n';
    hx_write_file(summary, earlier, held);
    free(earlier);
    setenv("GITHUB_STEP_SUMMARY", summary, 1);
    hx_result r;
    hx_run(&r, "check", "--rules", "builtin", "--rules", w->rules, "--format", "github", w->trace);
    unsetenv("GITHUB_STEP_SUMMARY");
    assert_int_equal(r.status, 1);
    hx_free(&r);
    size_t len;
    char *text = slurp(summary, &len);
    if (len > (1u << 20)) fail_msg("the job summary takes %zu bytes, more than 1 MiB", len);
    assert_true(len > held);
    expect_contains("summary", text + held, "## tracegate: FAIL");
    expect_contains("summary", text + held, "left out to stay within the 1 MiB of a GitHub job summary");
    expect_log_safe("summary", text + held, len - held, false);
    free(text);
    free(summary);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_junit_parses),
        cmocka_unit_test(test_check_formats),
        cmocka_unit_test(test_check_stdout_formats),
        cmocka_unit_test(test_info_metrics),
        cmocka_unit_test(test_rules_texts),
        cmocka_unit_test(test_baseline_show),
        cmocka_unit_test(test_diagnostics),
        cmocka_unit_test(test_name_caps),
        cmocka_unit_test(test_summary_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
