/*
** Gap predicate pushdown: tg_rules_lower_bound (engine/rules/ruleset.c)
** finds the smallest `duration >= X` every enabled gap rule demands, and
** tg_model_build with gap_rows_min_ns materialises only those gap rows,
** while device.gaps and everything else stay what they are without it.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"
#include "model/source.h"
#include "rules/rules.h"

/* Bound on gap.duration of a rule file holding the given gap rules
** ("WHERE" or "-" for a rule without where; "!WHERE" for a disabled one). */
static int64_t bound_of(const char *const *wheres, size_t n, const tg_param_set *sets, size_t n_sets)
{
    char text[4096];
    size_t len = (size_t)snprintf(text, sizeof text, "version: 1\nrules:\n");
    for (size_t i = 0; i < n; i++) {
        const char *w = wheres[i];
        bool disabled = w[0] == '!';
        if (disabled) w++;
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "  - id: r%zu\n    title: t\n    severity: error\n    source: gap\n"
                                "    params:\n      min_gap: 500ms\n%s%s%s%s    fail_when: count > 0\n"
                                "    message: m\n    advice: a\n",
                                i, strcmp(w, "-") ? "    where: \"" : "", strcmp(w, "-") ? w : "",
                                strcmp(w, "-") ? "\"\n" : "", disabled ? "    enabled: false\n" : "");
    }
    /* a rule on another source never matters */
    snprintf(text + len, sizeof text - len,
             "  - id: other\n    title: t\n    severity: error\n    source: kernel\n"
             "    fail_when: count > 0\n    message: m\n    advice: a\n");
    tg_rules_text t = {"pushdown.yaml", text};
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, sets, n_sets, &d);
    if (!rs && d.n) fail_msg("%s\n%s", d.msgs[0].text, text);
    assert_non_null(rs);
    int64_t b = tg_rules_lower_bound(rs, TG_SRC_GAP, "duration");
    /* other fields and sources: no bound (none needed without gap rules) */
    assert_int_equal(tg_rules_lower_bound(rs, TG_SRC_GAP, "device"), b == INT64_MAX ? INT64_MAX : INT64_MIN);
    assert_int_equal(tg_rules_lower_bound(rs, TG_SRC_GAP, "no_such_field"), INT64_MIN);
    assert_int_equal(tg_rules_lower_bound(rs, TG_SRC_KERNEL, "duration"), INT64_MIN);
    assert_int_equal(tg_rules_lower_bound(rs, TG_SRC_MEMCPY, "duration"), INT64_MAX);
    tg_rules_free(rs);
    tg_diag_clear(&d);
    return b;
}

#define BOUND(...) bound_of((const char *const[]){__VA_ARGS__}, \
                            sizeof (const char *const[]){__VA_ARGS__} / sizeof(const char *), NULL, 0)

static void test_lower_bound(void **state)
{
    (void)state;
    const int64_t ms = 1000000;
    assert_int_equal(BOUND("duration >= params.min_gap and in_steady_state"), 500 * ms);
    assert_int_equal(BOUND("in_steady_state and duration > 2ms"), 2 * ms + 1);
    assert_int_equal(BOUND("3ms <= duration"), 3 * ms);
    assert_int_equal(BOUND("3ms < duration"), 3 * ms + 1);
    assert_int_equal(BOUND("duration >= 2.5ns"), 2);                   /* rounded down */
    assert_int_equal(BOUND("device == 0 and (in_steady_state and duration >= 1s)"), 1000 * ms);
    assert_int_equal(BOUND("duration >= 1ms and duration >= 4ms"), 4 * ms);    /* the tighter */
    assert_int_equal(BOUND("duration >= 1s", "duration >= 10ms"), 10 * ms);     /* the looser rule */
    assert_int_equal(BOUND("duration >= 1s", "!duration >= 10ms"), 1000 * ms);  /* disabled: ignored */
    /* anything that is not a conjunct lower bound keeps every row */
    assert_int_equal(BOUND("duration >= 1s", "-"), INT64_MIN);
    assert_int_equal(BOUND("duration >= 1s or device == 1"), INT64_MIN);
    assert_int_equal(BOUND("not (duration < 1s)"), INT64_MIN);
    assert_int_equal(BOUND("duration <= 1s"), INT64_MIN);
    assert_int_equal(BOUND("duration + 1ns >= 1s"), INT64_MIN);
    assert_int_equal(BOUND("in_steady_state"), INT64_MIN);
    /* no enabled gap rule: no row is needed */
    assert_int_equal(BOUND("!duration >= 1s"), INT64_MAX);
    /* --set changes the bound with the param */
    tg_param_set set = {"r0", "min_gap", "20ms"};
    assert_int_equal(bound_of((const char *const[]){"duration >= params.min_gap"}, 1, &set, 1), 20 * ms);
}

/* Gaps of 50, 100, 200, 400 and 800 ns on device 0; 300 on device 1. */
static tg_trace *gappy(void)
{
    tg_trace *t = mt_new();
    int64_t at = 0, corr = 1;
    static const int64_t gaps[] = {50, 100, 200, 400, 800};
    mt_launch(t, 1, 1, 0, corr++, "k", at, at + 1, at, at + 10);
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
        at += 10 + gaps[i];
        mt_launch(t, 1, 1, 0, corr++, "k", at - 5, at - 4, at, at + 10);
    }
    mt_launch(t, 1, 1, 1, corr++, "k", 0, 1, 0, 10);
    mt_launch(t, 1, 1, 1, corr++, "k", 2, 3, 310, 320);
    mt_finish(t);
    return t;
}

static void test_model_gap_rows(void **state)
{
    (void)state;
    tg_trace *t = gappy();
    tg_diag d;
    tg_diag_init(&d);
    tg_model_params all = {.gap_min_ns = 150};
    tg_model *full = tg_model_build(t, &all, &d);
    assert_non_null(full);
    assert_int_equal(full->n_gaps, 6);
    tg_model_params some = {.gap_min_ns = 150, .gap_rows_min_ns = 200};
    tg_model *cut = tg_model_build(t, &some, &d);
    assert_non_null(cut);
    /* the rows kept are the full model's rows of 200 ns and more, in order */
    size_t k = 0;
    for (size_t i = 0; i < full->n_gaps; i++) {
        if (full->gaps[i].duration < 200) continue;
        assert_true(k < cut->n_gaps);
        const tg_gap *a = &cut->gaps[k], *b = &full->gaps[i];
        assert_int_equal(a->rowid, b->rowid);
        assert_int_equal(a->table, b->table);
        assert_int_equal(a->next_rowid, b->next_rowid);
        assert_int_equal(a->next_table, b->next_table);
        assert_int_equal(a->start, b->start);
        assert_int_equal(a->end, b->end);
        assert_int_equal(a->duration, b->duration);
        assert_int_equal(a->device, b->device);
        assert_int_equal(a->pid, b->pid);
        assert_int_equal(a->in_steady_state, b->in_steady_state);
        k++;
    }
    assert_int_equal(k, cut->n_gaps);
    assert_int_equal(cut->n_gaps, 4);
    /* device.gaps counts by gap_min_ns, whatever rows are kept */
    assert_int_equal(cut->n_devices, 2);
    assert_int_equal(cut->devices[0].gaps, 3);       /* 200, 400, 800 */
    assert_int_equal(cut->devices[1].gaps, 1);       /* 300 */
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(cut->devices[i].gaps, full->devices[i].gaps);
        assert_int_equal(cut->devices[i].span, full->devices[i].span);
        assert_near(cut->devices[i].busy_frac, full->devices[i].busy_frac, 0);
    }
    assert_int_equal(cut->facts.kernels, full->facts.kernels);
    tg_model_free(cut);
    /* no rule reads gaps: no rows at all */
    tg_model_params none = {.gap_min_ns = 150, .gap_rows_min_ns = INT64_MAX};
    cut = tg_model_build(t, &none, &d);
    assert_non_null(cut);
    assert_int_equal(cut->n_gaps, 0);
    assert_int_equal(cut->devices[0].gaps, full->devices[0].gaps);
    tg_model_free(cut);
    tg_model_free(full);
    tg_diag_clear(&d);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lower_bound),
        cmocka_unit_test(test_model_gap_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
