/*
** Malformed rules, table-driven: each case is a rule file text and the
** error it must produce -- line, column and a piece of the message. The
** positions were worked out by hand from the texts below (columns are
** 1-based byte columns), so a case failing here means the caret would
** point somewhere else than where the mistake is.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/expr.h"

/* Lines 1-6 of most cases; the case's own lines start at line 7. */
#define P "version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: memcpy\n"
#define FW "    fail_when: count > 0\n"

typedef struct bad_case {
    const char *text;
    int line, col;
    const char *msg;
} bad_case;

static const bad_case cases[] = {
    /* expressions: lexer */
    {P "    where: bytes > 64kb\n" FW, 7, 22, "unknown unit 'kb'"},
    {P "    where: kind = \"HtoD\"\n" FW, 7, 17, "compare with '=='"},
    {P "    where: api_sync && api_async\n" FW, 7, 21, "use 'and'"},
    {P "    where: api_sync or kind == \"HtoD\n" FW, 7, 32, "unterminated string"},
    /* expressions: parser */
    {P "    where: bytes > 1 < 2\n" FW, 7, 22, "do not chain"},
    {P "    where: (api_sync\n" FW, 7, 21, "expected ')'"},
    {P "    where: api_sync api_async\n" FW, 7, 21, "unexpected 'api_async'"},
    {P "    where: bytes >\n" FW, 7, 19, "expected an expression"},
    {P "    where: api_sync and\n" FW, 7, 24, "expected an expression"},
    /* names */
    {P "    where: bites > 0\n" FW, 7, 12, "did you mean 'bytes'"},
    {P "    where: memcpy.bytes > 0\n" FW, 7, 12, "write 'bytes'"},
    {P "    where: kernel.duration > 0\n" FW, 7, 12, "this rule's source is 'memcpy'"},
    {P "    where: duration > params.min_gap\n" FW, 7, 23, "has no param 'min_gap'"},
    {P FW "    message: \"{count} of {trace.iters}\"\n", 8, 27, "the trace has no field 'iters'"},
    {P "    fail_when: count > baseline.p50\n", 7, 24, "needs the rule to declare a 'metric'"},
    {P "    metric: p50(duration)\n    fail_when: p50(duration) > baseline.p51\n", 8, 32, "unknown baseline statistic"},
    {P "    where: api in blokcing\n" FW, 7, 19, "unknown list 'blokcing'"},
    {P "    where: kind in [HtoD, DtoH]\n" FW, 7, 21, "quote it"},
    {P "    where: kind in 3\n" FW, 7, 20, "'in' needs a list"},
    /* types and units */
    {P "    where: duration > 64KB\n" FW, 7, 23, "cannot compare a duration"},
    {P "    where: duration > 5\n" FW, 7, 23, "with a time unit"},
    {P "    where: bytes < 2\n" FW, 7, 20, "with a size unit"},
    {P "    where: kind == 3\n" FW, 7, 20, "cannot compare a string"},
    {P "    where: kind < \"x\"\n" FW, 7, 19, "compares numbers"},
    {P "    where: bytes > null\n" FW, 7, 20, "null can only be compared"},
    {P "    where: bytes > 64KB / 0\n" FW, 7, 20, "division by zero"},
    {P "    where: kind + 1 > 0\n" FW, 7, 12, "needs numbers"},
    {P "    where: duration * bytes > 0\n" FW, 7, 12, "cannot multiply"},
    {P "    where: bytes + 1KB\n" FW, 7, 12, "must be a condition"},
    {P "    where: api matches \"[a-\"\n" FW, 7, 24, "bad regular expression"},
    {P "    where: bytes matches \"x\"\n" FW, 7, 12, "needs a string on its left"},
    {P "    where: api startswith kind\n" FW, 7, 27, "constant string"},
    /* aggregates */
    {P "    where: count > 2\n" FW, 7, 12, "not allowed in 'where'"},
    {P "    fail_when: bytes > 0\n", 7, 16, "field of a single memcpy row"},
    {P "    fail_when: p55(duration) > 1ms\n", 7, 16, "unknown function 'p55'"},
    {P "    fail_when: sum(max(duration)) > 1ms\n", 7, 20, "do not nest"},
    {P "    fail_when: p50 > 1ms\n", 7, 16, "needs an argument"},
    {P "    fail_when: count(api_sync, api_async) > 0\n", 7, 16, "at most one argument"},
    {P "    fail_when: sum(kind) > 0\n", 7, 20, "needs a number"},
    {P "    fail_when: ratio(bytes) > 10%\n", 7, 22, "must be a condition"},
    /* positions inside quoted and block scalars */
    {P "    where: \"kind == \\\"HtoD\\\" and bites > 0\"\n" FW, 7, 34, "unknown field 'bites'"},
    {P "    where: 'kind == ''HtoD'' and bites > 0'\n" FW, 7, 34, "unknown field 'bites'"},
    {P "    where: >\n      api_sync and\n      bites > 0\n" FW, 9, 7, "unknown field 'bites'"},
    {P "    where: |\n      api_sync and\n        bites > 0\n" FW, 9, 9, "unknown field 'bites'"},
    {P "    where: api_sync and\n      bites > 0\n" FW, 8, 7, "unknown field 'bites'"},
    {P "    where: >-\n      api_sync\n\n      and bites > 0\n" FW, 10, 11, "unknown field 'bites'"},
    {P "    where: |+\n      api_sync and bites\n\n" FW, 8, 20, "unknown field 'bites'"},
    {P "    where: \"api_sync and\n      bites > 0\"\n" FW, 8, 7, "unknown field 'bites'"},
    {P "    where: \"api_sync \\\n      and bites > 0\"\n" FW, 8, 11, "unknown field 'bites'"},
    {P "    where: \"api_sync\\tand bites > 0\"\n" FW, 7, 27, "unknown field 'bites'"},
    {P "    where: \"kind == \\\"\\u00e9t\\u00e9\\\" or bites > 0\"\n" FW, 7, 42, "unknown field 'bites'"},
    {P "    where: \"\\u00e9t\\u00e9 == 1\"\n" FW, 7, 13, "non-ASCII character"},
    /* message cases (docs/rules.md, "Messages") */
    {P FW "    message:\n      - {when: count > 0, text: a}\n", 9, 7, "at least two cases"},
    {P FW "    message:\n      - {text: a}\n      - {text: b}\n", 9, 9, "only the last case"},
    {P FW "    message:\n      - {when: count > 0, text: a}\n      - {when: count > 1, text: b}\n", 10, 9,
     "the last case of 'message' has no 'when'"},
    {P FW "    message:\n      - {when: duration > 0, text: a}\n      - {text: b}\n", 9, 16,
     "works on aggregates"},
    {P FW "    message:\n      - {when: count > 0, txt: a}\n      - {text: b}\n", 9, 9, "a case of 'message' is"},
    {P FW "    message:\n      - {when: count, text: a}\n      - {text: b}\n", 9, 16, "must be a condition"},
    /* except (docs/rules.md, "Rows set aside") */
    {P FW "    except: steady\n", 8, 13, "'except' is a mapping"},
    {P FW "    except: {when: steady, rows: start-up calls}\n", 8, 13, "'except' is a mapping"},
    {P FW "    except: {when: count > 0, rows: a|b}\n", 8, 20, "not allowed in 'except'"},
    {P FW "    except: {when: duration, rows: a|b}\n", 8, 20, "'except' must be a condition"},
    /* message templates */
    {P FW "    message: \"{} copies\"\n", 8, 16, "empty expression"},
    {P FW "    message: \"{count copies\"\n", 8, 15, "unterminated '{'"},
    {P FW "    message: \"count} copies\"\n", 8, 20, "unmatched '}'"},
    {P FW "    message: \"{sum(durration)} total\"\n", 8, 20, "unknown field 'durration'"},
    {P FW "    message: \"\xc3\xa9t\xc3\xa9 {sum(bites)}\"\n", 8, 26, "unknown field 'bites'"},   /* byte columns */
    /* rule keys */
    {P "    fail_whn: count > 0\n", 7, 5, "did you mean 'fail_when'"},
    {P FW "    enabled: maybe\n", 8, 14, "true or false"},
    {P "    where: api_sync\n    where: api_async\n" FW, 8, 5, "duplicate key 'where'"},
    {"version: 1\nrules:\n  - id: r\n    title: t\n    severity: fatal\n    source: memcpy\n" FW, 5, 15,
     "severity must be"},
    {"version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: memcopy\n" FW, 6, 13,
     "did you mean 'memcpy'"},
    {P FW "    evidence: {order_by: durtion desc}\n", 8, 26, "unknown field 'durtion'"},
    {P FW "    evidence: {order_by: duration down}\n", 8, 35, "'asc' or 'desc'"},
    {P FW "    evidence: {limit: lots}\n", 8, 23, "limit must be"},
    {P FW "    evidence: {colums: [bytes]}\n", 8, 16, "did you mean 'columns'"},
    {P "    metric: p50(duration)\n    regression: {direction: up}\n", 8, 29, "higher_is_worse or lower_is_worse"},
    /* cause (docs/host.md): a known kind, on a source it applies to, host without groups */
    {P FW "    cause: hots\n", 8, 12, "cause must be none, host, call_site or launch, not 'hots' (did you mean 'host'?)"},
    {P FW "    cause: [host]\n", 8, 12, "cause must be none, host, call_site or launch, not 'a list'"},
    {P FW "    cause: host\n", 8, 12, "cause 'host' needs a rule on source gap, device, iteration, not memcpy"},
    {P FW "    cause: launch\n", 8, 12, "cause 'launch' needs a rule on source iteration, not memcpy"},
    {"version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: gap\n" FW
     "    evidence: {group_by: [device]}\n    cause: host\n", 9, 12, "cause 'host' explains each cited row"},
    {P FW "    params: {min_gap: }\n", 8, 23, "needs a default value"},
    /* file structure */
    {"rules: []\n", 1, 1, "missing 'version: 1'"},
    {"version: 2\nrules: []\n", 1, 10, "unsupported rule file version"},
    {"version: 1\nrulez: []\n", 2, 1, "did you mean 'rules'"},
    {"version: 1\nrules:\n  - id: a\n    title: t\n    severity: info\n    source: kernel\n" FW
     "  - id: a\n", 8, 9, "duplicate rule id 'a'"},
    {"version: 1\nrules:\n  - id: a b\n", 3, 9, "a rule id is"},
    {"version: 1\nmacros:\n  a: b and api_sync\n  b: a\nrules:\n  - id: r\n    title: t\n    severity: error\n"
     "    source: memcpy\n    where: a\n" FW, 4, 6, "expands to itself"},
    {"version: 1\nmacros:\n  and: api_sync\n", 3, 3, "reserved word"},
    {"version: 1\nlists:\n  l: api_sync\n", 3, 6, "must be a sequence"},
    {"version: 1\n\tfoo: 1\n", 2, 1, "YAML syntax error"},
    {"version: 1\nrules:\n  - id: a\n   title: x\n", 4, 4, "YAML syntax error"},
    {"version: 1\noverride:\n  - id: nope\n    severity: info\n", 3, 9, "override of unknown rule 'nope'"},
    {P FW "override:\n  - id: r\n    append: {fail_when: count > 1}\n", 10, 14, "only 'where' and 'tags'"},
    {"version: 1\nrules: {id: x}\n", 2, 8, "must be a list of rules"},
};

static int count_errors(const tg_diag *d)
{
    int n = 0;
    for (size_t i = 0; i < d->n; i++) n += d->msgs[i].level == TG_DIAG_ERROR;
    return n;
}

static void test_cases(void **state)
{
    (void)state;
    size_t n = sizeof cases / sizeof cases[0];
    assert_true(n >= 40);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &cases[i];
        tg_diag d;
        tg_diag_init(&d);
        tg_rules_text t = {"case.yaml", c->text};
        tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
        bool found = false;
        for (size_t k = 0; k < d.n && !found; k++)
            found = d.msgs[k].level == TG_DIAG_ERROR && d.msgs[k].pos.line == c->line &&
                    d.msgs[k].pos.col == c->col && strstr(d.msgs[k].text, c->msg) != NULL;
        bool verbose = getenv("TG_TEST_VERBOSE") != NULL;
        if (verbose || rs || !found || d.status != TG_EUSAGE || count_errors(&d) < 1) {
            if (!verbose) failures++;
            print_message("case %zu: expected error at %d:%d containing \"%s\"; got:\n", i, c->line, c->col, c->msg);
            for (size_t k = 0; k < d.n; k++) {
                char *s = tg_diag_format(&d.msgs[k], false);
                print_message("  %s\n", s ? s : "?");
                free(s);
            }
        }
        tg_rules_free(rs);
        tg_diag_clear(&d);
    }
    assert_int_equal(failures, 0);
}

/* One run reports every independent error of a file, in order. */
static void test_all_errors_reported(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"multi.yaml",
                       "version: 1\nrules:\n"
                       "  - id: a\n    title: t\n    severity: error\n    source: memcpy\n"
                       "    where: bites > 0 and kind == 3\n" FW
                       "  - id: b\n    title: t\n    severity: error\n    source: kernel\n"
                       "    fail_when: p50(queue) > 5\n"};
    assert_null(tg_rules_load_texts(&t, 1, NULL, 0, &d));
    assert_int_equal(count_errors(&d), 3);
    assert_int_equal(d.msgs[0].pos.line, 7);
    assert_int_equal(d.msgs[0].pos.col, 12);
    assert_int_equal(d.msgs[1].pos.line, 7);
    assert_int_equal(d.msgs[1].pos.col, 34);
    assert_int_equal(d.msgs[2].pos.line, 13);
    assert_int_equal(d.msgs[2].pos.col, 29);
    /* the offending line travels with the message for the caret */
    assert_non_null(d.msgs[0].line_text);
    assert_string_equal(d.msgs[0].line_text, "    where: bites > 0 and kind == 3");
    char *s = tg_diag_format(&d.msgs[0], false);
    assert_non_null(strstr(s, "multi.yaml:7:12: error: unknown field 'bites'"));
    assert_non_null(strstr(s, "\n             ^"));
    free(s);
    tg_diag_clear(&d);
}

/* The one error of text, which must contain `want`; its message. */
static char *one_error(const char *text, const char *want)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"hint.yaml", text};
    assert_null(tg_rules_load_texts(&t, 1, NULL, 0, &d));
    char *msg = NULL;
    for (size_t k = 0; k < d.n && !msg; k++)
        if (d.msgs[k].level == TG_DIAG_ERROR && strstr(d.msgs[k].text, want)) msg = strdup(d.msgs[k].text);
    if (!msg) print_message("no error containing \"%s\"\n", want);
    assert_non_null(msg);
    tg_diag_clear(&d);
    return msg;
}

/* Each name as a word of msg's list: "(... a, b or c)". */
static void lists_every(const char *msg, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char a[64], b[64], c[64], d[64];
        snprintf(a, sizeof a, " %s,", names[i]);
        snprintf(b, sizeof b, " %s)", names[i]);
        snprintf(c, sizeof c, "(%s,", names[i]);
        snprintf(d, sizeof d, " %s or ", names[i]);
        bool listed = strstr(msg, a) || strstr(msg, b) || strstr(msg, c) || strstr(msg, d);
        if (!listed) print_message("'%s' missing from: %s\n", names[i], msg);
        assert_true(listed);
    }
}

/* Without a close name to suggest, an unknown unit, aggregate, baseline
** statistic or source lists what there is, generated from its list
** (units.def, aggregates.def, TG_BASELINE_STATS, fields.def). */
static void test_hints_list_the_vocabulary(void **state)
{
    (void)state;
    const char *names[64];
    char *msg = one_error(P "    where: bytes > 64qq\n" FW, "unknown unit 'qq'");
    for (size_t i = 0; i < tg_unit_suffix_count; i++) names[i] = tg_unit_suffixes[i].suffix;
    lists_every(msg, names, tg_unit_suffix_count);
    free(msg);
    msg = one_error(P "    fail_when: zzzzzz(duration) > 1ms\n", "unknown function 'zzzzzz'");
    for (int i = 0; i < TG_AGG_COUNT_KINDS; i++) names[i] = tg_agg_defs[i].name;
    lists_every(msg, names, TG_AGG_COUNT_KINDS);
    free(msg);
    msg = one_error(P "    metric: p50(duration)\n    fail_when: count > baseline.zzzzzz\n",
                    "unknown baseline statistic 'zzzzzz'");
    lists_every(msg, tg_baseline_stat_names, TG_BSTAT_COUNT);
    free(msg);
    msg = one_error("version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n    source: zzz\n" FW,
                    "unknown source 'zzz'");
    for (int i = 0; i < TG_SRC_COUNT; i++) names[i] = tg_source_defs[i].name;
    lists_every(msg, names, TG_SRC_COUNT);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_all_errors_reported),
        cmocka_unit_test(test_hints_list_the_vocabulary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
