/*
** Suppressions (engine/suppress, docs/suppressions.md): every malformed
** file is refused with file:line:col and a sentence (data-driven, like
** jq.test's %%FAIL blocks); a suppression accepts the findings it names
** and only those (rule, trace glob, max_count, expiry day), never a rule
** error; what each one did is recorded (used, unused, expired, exceeded);
** a suppressed finding stops gating but stays in the result, and the JSON
** report carries it and reads it back (merge).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_fixture.h"
#include "report/json_read.h"
#include "report/report.h"
#include "suppress/suppress.h"
#include "schema_check.h"
#include "tg_config.h"

/* Write text to a temporary file named like a suppression file. */
static char *temp_file(const char *text)
{
    char *path = strdup("/tmp/tg-suppress-XXXXXX.yaml");
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static tg_suppressions *load_text(const char *text, tg_diag *diag, char **path)
{
    *path = temp_file(text);
    const char *paths[] = {*path};
    return tg_suppress_load(paths, 1, diag);
}

/* ------------------------------------------------------------ malformed */

#define HEAD "version: 1\nsuppressions:\n"
static const struct {
    const char *text;
    int line, col;
    const char *message;
} malformed[] = {
    {HEAD "  - rule: sync-memcpy\n", 3, 5, "a suppression needs reason: which rule, and why the finding is accepted"},
    {HEAD "  - reason: because\n", 3, 5, "a suppression needs rule"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, reson: x}\n", 3, 37, "unknown key 'reson' in a suppression (did you mean 'reason'?)"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, max_count: -1}\n", 3, 48, "max_count wants a whole number of findings (0 or more), not '-1'"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, max_count: many}\n", 3, 48, "not 'many'"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, expires: 2025-02-30}\n", 3, 46, "expires wants a day as YYYY-MM-DD, not '2025-02-30'"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, expires: next week}\n", 3, 46, "not 'next week'"},
    {HEAD "  - {rule: sync-memcpy, reason: ''}\n", 3, 33, "reason wants a text, not nothing"},
    {HEAD "  - {rule: [a, b], reason: ok}\n", 3, 12, "rule wants a text, not a list"},
    {HEAD "  - sync-memcpy\n", 3, 5, "a suppression is a mapping"},
    {HEAD "  - {rule: sync-memcpy, reason: ok, rule: x}\n", 3, 37, "'rule' is given twice in a suppression"},
    {"version: 2\nsuppressions: []\n", 1, 10, "a suppression file starts with 'version: 1'"},
    {"suppressions: []\n", 1, 1, "a suppression file starts with 'version: 1'"},
    {"version: 1\nsupressions: []\n", 2, 1, "unknown key 'supressions' in a suppression file (did you mean 'suppressions'?)"},
    {"version: 1\nsuppressions: {rule: x}\n", 2, 15, "'suppressions' wants a list of suppressions"},
    {"- just a list\n", 1, 1, "a suppression file is a mapping with 'version: 1' and a 'suppressions' list"},
    {HEAD "  - {rule: x, reason: [unclosed\n", 0, 0, "YAML"},
};

static void test_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
        tg_diag diag;
        tg_diag_init(&diag);
        char *path;
        tg_suppressions *s = load_text(malformed[i].text, &diag, &path);
        if (s) fail_msg("case %zu: loaded", i);
        bool found = false;
        for (size_t k = 0; k < diag.n && !found; k++) {
            const tg_diag_msg *m = &diag.msgs[k];
            found = m->level == TG_DIAG_ERROR && strstr(m->text, malformed[i].message) &&
                    (!malformed[i].line || (m->pos.line == malformed[i].line && m->pos.col == malformed[i].col));
        }
        if (!found)
            fail_msg("case %zu: want %d:%d '%s', got %d:%d '%s'", i, malformed[i].line, malformed[i].col,
                     malformed[i].message, diag.n ? diag.msgs[0].pos.line : 0, diag.n ? diag.msgs[0].pos.col : 0,
                     diag.n ? diag.msgs[0].text : "(nothing)");
        assert_int_equal(diag.status, TG_EUSAGE);
        tg_diag_clear(&diag);
        unlink(path);
        free(path);
    }
}

static void test_missing_file(void **state)
{
    (void)state;
    tg_diag diag;
    tg_diag_init(&diag);
    const char *paths[] = {"/nonexistent/suppressions.yaml"};
    assert_null(tg_suppress_load(paths, 1, &diag));
    assert_int_equal(diag.status, TG_EUSAGE);
    assert_non_null(strstr(diag.msgs[0].text, "the suppression file cannot be opened"));
    tg_diag_clear(&diag);
}

/* An empty list is a valid file: nothing to suppress. */
static void test_empty_list(void **state)
{
    (void)state;
    tg_diag diag;
    tg_diag_init(&diag);
    char *path;
    tg_suppressions *s = load_text("version: 1\nsuppressions: []\n", &diag, &path);
    assert_non_null(s);
    assert_int_equal(tg_suppress_count(s), 0);
    tg_suppress_free(s);
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
}

/* ------------------------------------------------------------ rule ids */

static void test_unknown_rule(void **state)
{
    (void)state;
    tg_diag diag;
    tg_diag_init(&diag);
    char *path;
    tg_suppressions *s = load_text(HEAD "  - {rule: sync-memcpy, reason: a}\n"
                                        "  - {rule: gpu-idle-gaps, reason: b}\n"
                                        "  - {rule: low-gpu-utilization, reason: c, expires: 2001-01-01}\n",
                                   &diag, &path);
    assert_non_null(s);
    static const char *const ids[] = {"sync-memcpy", "gpu-idle-gap", "low-gpu-utilization"};
    assert_int_equal(tg_suppress_check_rules(s, ids, 3, "2024-05-01", true, &diag), TG_EUSAGE);
    assert_int_equal(diag.n, 2);
    assert_int_equal(diag.msgs[0].pos.line, 4);
    assert_non_null(strstr(diag.msgs[0].text, "suppression of unknown rule 'gpu-idle-gaps' (did you mean 'gpu-idle-gap'?)"));
    /* lint: the expired one is a warning */
    assert_int_equal(diag.msgs[1].level, TG_DIAG_WARNING);
    assert_non_null(strstr(diag.msgs[1].text, "expired on 2001-01-01"));
    tg_suppress_free(s);
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
}

/* --------------------------------------------------------------- apply */

static const tg_report_opts gate = {.fail_on = TG_SEV_ERROR};

/* The fixture with the suppressions of text applied on today. */
static void apply(const char *text, const char *today, tg_run_result *run)
{
    fixture_run(run);
    tg_diag diag;
    tg_diag_init(&diag);
    char *path;
    tg_suppressions *s = load_text(text, &diag, &path);
    if (!s) fail_msg("%s", diag.n ? diag.msgs[0].text : "not loaded");
    assert_true(tg_suppress_apply(s, run, today));
    tg_suppress_warn(s, run, &diag);
    for (size_t i = 0; i < diag.n; i++) assert_int_equal(diag.msgs[i].level, TG_DIAG_WARNING);
    tg_suppress_free(s);
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
}

static void test_matching(void **state)
{
    (void)state;
    tg_run_result run;
    /* rank0's sync-memcpy fails (error, count 400): it gates */
    fixture_run(&run);
    assert_true(tg_report_gates(&run.traces[0].results[0], &gate));
    tg_arena_free(run.arena);

    apply(HEAD "  - {rule: sync-memcpy, reason: known loader copies, trace: 'rank0*'}\n"
               "  - {rule: sync-memcpy, reason: other ranks, trace: 'runs/rank9.sqlite'}\n"
               "  - {rule: iteration-variance, reason: a rule error is not a finding}\n"
               "  - {rule: gpu-time-regression, reason: accepted, max_count: 48}\n",
          "2024-05-01", &run);
    const tg_rule_result *r = &run.traces[0].results[0];
    assert_string_equal(r->suppressed, "known loader copies");
    assert_non_null(strstr(r->suppressed_at, ".yaml:3"));
    assert_int_equal(r->verdict, TG_V_FAIL);   /* still a finding, still reported */
    assert_false(tg_report_gates(r, &gate));
    assert_int_equal(run.n_suppressions, 4);
    assert_int_equal(run.suppressions[0].status, TG_SUPPRESSION_USED);
    assert_int_equal(run.suppressions[0].matched, 1);
    assert_int_equal(run.suppressions[1].status, TG_SUPPRESSION_UNUSED);   /* the glob matches no trace */
    assert_int_equal(run.suppressions[2].status, TG_SUPPRESSION_UNUSED);   /* errors are never suppressed */
    assert_null(run.traces[0].results[4].suppressed);
    assert_int_equal(run.traces[0].results[4].verdict, TG_V_ERROR);
    /* gpu-time-regression counts 48: exactly max_count is accepted */
    assert_int_equal(run.suppressions[3].status, TG_SUPPRESSION_USED);
    tg_report_tally t;
    tg_report_tally_run(&run, &gate, &t);
    assert_int_equal(t.suppressed, 2);
    assert_int_equal(t.gating, 0);
    /* the unreadable trace and the rule error still decide: never a pass */
    assert_string_equal(tg_run_status(&run, &gate), "error");
    char line[256];
    assert_non_null(strstr(tg_report_verdict_line(&run, &gate, line, sizeof line), "2 suppressed"));
    char sentence[256];
    assert_string_equal(tg_suppression_sentence(&run.suppressions[1], sentence, sizeof sentence),
                        "the suppression of sync-memcpy matched no finding in this run; remove it if the finding is gone");
    tg_arena_free(run.arena);
}

static void test_max_count_and_expiry(void **state)
{
    (void)state;
    tg_run_result run;
    apply(HEAD "  - {rule: sync-memcpy, reason: up to 399, max_count: 399}\n"
               "  - {rule: low-gpu-utilization, reason: until may, expires: 2024-05-01}\n",
          "2024-05-01", &run);
    assert_null(run.traces[0].results[0].suppressed);   /* 400 > 399 */
    assert_int_equal(run.suppressions[0].status, TG_SUPPRESSION_EXCEEDED);
    assert_true(tg_report_gates(&run.traces[0].results[0], &gate));
    assert_non_null(run.traces[0].results[3].suppressed);   /* the day itself still counts */
    assert_int_equal(run.suppressions[1].status, TG_SUPPRESSION_USED);
    tg_arena_free(run.arena);

    apply(HEAD "  - {rule: sync-memcpy, reason: exactly 400, max_count: 400}\n"
               "  - {rule: low-gpu-utilization, reason: until may, expires: 2024-05-01}\n",
          "2024-05-02", &run);
    assert_non_null(run.traces[0].results[0].suppressed);
    assert_null(run.traces[0].results[3].suppressed);   /* the day after: expired */
    assert_int_equal(run.suppressions[1].status, TG_SUPPRESSION_EXPIRED);
    assert_int_equal(run.suppressions[1].matched, 1);
    char sentence[256];
    assert_string_equal(tg_suppression_sentence(&run.suppressions[1], sentence, sizeof sentence),
                        "the suppression of low-gpu-utilization expired on 2024-05-01: its 1 finding counts again; "
                        "renew or remove it");
    tg_arena_free(run.arena);
}

/* The JSON report carries the suppression and merge reads it back. */
static void test_json_round_trip(void **state)
{
    (void)state;
    tg_run_result run;
    apply(HEAD "  - {rule: sync-memcpy, reason: \"known \\\"copies\\\"\"}\n", "2024-05-01", &run);
    char *text = fixture_render(TG_FMT_JSON, &run, NULL, &gate);
    assert_non_null(strstr(text, "\"suppressed\": {\n"));
    assert_non_null(strstr(text, "\"reason\": \"known \\\"copies\\\"\""));
    assert_non_null(strstr(text, "\"suppressions\": ["));
    assert_non_null(strstr(text, "\"status\": \"used\""));
    /* the contract: docs/result-schema.json, strictly (no unknown member) */
    json_error_t jerr;
    json_t *schema = json_load_file(TG_SOURCE_ROOT "/docs/result-schema.json", 0, &jerr);
    json_t *doc = json_loads(text, 0, &jerr);
    assert_non_null(schema);
    assert_non_null(doc);
    char err[512];
    if (!schema_check(schema, doc, true, err, sizeof err)) fail_msg("schema: %s", err);
    json_decref(doc);
    json_decref(schema);
    char *path = temp_file(text);
    tg_run_result back = {.arena = tg_arena_new()};
    tg_diag diag;
    tg_diag_init(&diag);
    assert_int_equal(tg_result_read_json(path, &back, &diag), TG_OK);
    assert_string_equal(back.traces[0].results[0].suppressed, "known \"copies\"");
    assert_false(tg_report_gates(&back.traces[0].results[0], &gate));
    tg_diag_clear(&diag);
    unlink(path);
    free(path);
    free(text);
    tg_arena_free(back.arena);
    tg_arena_free(run.arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_empty_list),
        cmocka_unit_test(test_unknown_rule),
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_max_count_and_expiry),
        cmocka_unit_test(test_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
