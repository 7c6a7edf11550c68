/*
** A finding's values against its reproduce SQL (engine/eval/eval_sql.c),
** on exports written from inline events: every aggregate of the rule
** language -- count, count(pred), n, sum, mean, min, max, p50/p90/p95/p99
** (linear interpolation between the closest ranks), stddev and cv
** (population), ratio -- over odd and even counts, a single row, no row at
** all, null arguments; `where` with `not` over nulls, `in`, string tests,
** arithmetic with a float division, device.FIELD and trace.FIELD; and
** grouped evidence, whose percentiles are per group. Each value the
** evaluator reports must come back from the SQL (integers exactly, other
** numbers within 1e-9), and each grouped row's columns too.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"
#include "ruletest/ruletest.h"
#include "sqlrun.h"

/* Kernels with durations 10, 20, 30, 40, 100 us on device 0 (queues 1, 2,
** 3, 4 us and one unlaunched: null), 5 and 7 us on device 1, an NCCL
** kernel; twelve iterations around them. */
static const char events[] =
    "        nvtx:\n"
    "          - {name: iteration, start: 0, duration: 9ms, repeat: {count: 12, every: 10ms}}\n"
    "        kernels:\n"
    "          - {name: gemm, start: 61ms, duration: 10us, launch: {name: cudaLaunchKernel, start: 60ms, end: 60.999ms}}\n"
    "          - {name: gemm, start: 71ms, duration: 20us, launch: {name: cudaLaunchKernel, start: 70ms, end: 70.998ms}}\n"
    "          - {name: relu, start: 81ms, duration: 30us, launch: {name: cudaLaunchKernel, start: 80ms, end: 80.997ms}}\n"
    "          - {name: relu, start: 91ms, duration: 40us, launch: {name: cudaLaunchKernel, start: 90ms, end: 90.996ms}}\n"
    "          - {name: gemm, start: 101ms, duration: 100us}\n"
    "          - {name: small, start: 62ms, duration: 5us, device: 1, launch: {name: cuLaunchKernel, start: 61ms, end: 62.5ms}}\n"
    "          - {name: small, start: 72ms, duration: 7us, device: 1, launch: {name: cuLaunchKernel, start: 71ms, end: 71.9ms}}\n"
    "          - {name: ncclKernel_AllReduce, start: 81.5ms, duration: 60us, device: 1,\n"
    "             launch: {name: cudaLaunchKernel, start: 81ms, end: 81.1ms}}\n"
    "        memcpys:\n"
    "          - {start: 63ms, duration: 30us, kind: HtoD, bytes: 1MB, launch: cudaMemcpy}\n"
    "          - {start: 73ms, duration: 50us, kind: DtoH, bytes: 3MB, launch: cudaMemcpyAsync}\n";

#define KERNEL_RULE(id, where)                                                                   \
    "  - id: " id "\n    title: t\n    severity: warning\n    source: kernel\n" where               \
    "    fail_when: count >= 0\n"                                                                \
    "    message: \"{p50(duration)} {p90(duration)} {p95(duration)} {p99(queue)} {cv(duration)}"   \
    " {stddev(duration)} {mean(duration)} {min(duration)} {max(duration)} {sum(duration)}"         \
    " {ratio(nccl)} {count(queue == null)} {n(queue)} {max(device.busy_frac)}"                     \
    " {sum(duration) / trace.steady_iterations} {count / 3}\"\n"

static const char rules[] =
    "version: 1\nrules:\n"
    KERNEL_RULE("all", "")
    KERNEL_RULE("odd", "    where: device == 0 and queue != null\n")
    KERNEL_RULE("one", "    where: name == \"small\" and duration < 6us\n")
    KERNEL_RULE("none", "    where: duration > 1s\n")
    KERNEL_RULE("nulls", "    where: not (queue < 2500ns) and name in [\"gemm\", \"relu\", \"small\"]\n")
    KERNEL_RULE("strings", "    where: name matches \"^(gemm|nccl)\" or (name startswith \"re\" and not (name contains \"x\"))\n")
    KERNEL_RULE("steady", "    where: steady and iteration >= 6\n")
    "  - id: grouped\n    title: t\n    severity: warning\n    source: kernel\n    fail_when: count > 0\n"
    "    evidence:\n      group_by: [device, name]\n"
    "      columns: [count, p50(duration), cv(duration), max(queue), {per_step: sum(duration) / trace.steady_iterations}]\n"
    "      order_by: count desc\n      limit: 10\n"
    "  - id: copies\n    title: t\n    severity: warning\n    source: memcpy\n"
    "    where: device.busy_frac_steady < 100% and api_sync\n    fail_when: count >= 0\n"
    "    message: \"{sum(bytes)} {max(device.copy_frac_steady)} {p50(bytes)}\"\n";

static json_t *as_json(tg_value v)
{
    switch (v.type) {
    case TG_TY_BOOL: return json_integer(v.u.b);
    case TG_TY_INT: return json_integer(v.u.i);
    case TG_TY_FLOAT: return json_real(v.u.f);
    case TG_TY_STRING: return v.u.s ? json_string(v.u.s) : json_null();
    default: return json_null();
    }
}

static void agree(const char *what, const char *name, tg_value want, json_t *got)
{
    json_t *w = as_json(want);
    if (!sqlrun_agrees(w, got, 1e-9)) {
        char *a = json_dumps(w, JSON_ENCODE_ANY), *b = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
        fail_msg("%s: %s is %s, SQL gives %s", what, name, a, b ? b : "(no column)");
    }
    json_decref(w);
}

static void test_values_come_back(void **state)
{
    (void)state;
    char text[8192], path[] = "/tmp/tg-sqlvalues-XXXXXX";
    snprintf(text, sizeof text, "version: 1\ntests:\n  - name: v\n    rule: gpu-idle-gap\n    input:\n      events:\n"
                                "%s    expect: {status: pass}\n", events);
    tg_diag diag;
    tg_diag_init(&diag);
    tg_ruletest_file *file = tg_ruletest_load_text("v.test.yaml", text, strlen(text), &diag);
    assert_non_null(file);
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    assert_int_equal(tg_ruletest_write_events(file->cases[0].events, path, &diag), TG_OK);
    tg_trace *t = tg_trace_open(path, &diag);
    tg_model *m = t ? tg_model_build(t, NULL, &diag) : NULL;
    tg_rules_text rt = {"r.yaml", rules};
    tg_ruleset *rs = tg_rules_load_texts(&rt, 1, NULL, 0, &diag);
    if (!rs) fail_msg("rules: %s", diag.n ? diag.msgs[0].text : "?");
    assert_non_null(m);
    tg_arena *arena = tg_arena_new();
    tg_trace_result out = {0};
    assert_int_equal(tg_eval_model(rs, m, NULL, arena, &out, &diag), TG_OK);
    size_t checked = 0;
    for (size_t i = 0; i < out.n_results; i++) {
        const tg_rule_result *r = &out.results[i];
        assert_non_null(r->reproduce);
        char err[512];
        json_t *sets = sqlrun(path, r->reproduce, err, sizeof err);
        if (!sets) fail_msg("%s: %s", r->rule, err);
        json_t *row = json_array_get(json_array_get(sets, 0), 0);
        for (size_t k = 0; k < r->n_values; k++, checked++)
            agree(r->rule, r->values[k].name, r->values[k].value, json_object_get(row, r->values[k].name));
        if (!strcmp(r->rule, "grouped")) {
            json_t *groups = json_array_get(sets, 1);
            assert_int_equal(json_array_size(groups), r->n_evidence);
            assert_int_equal(r->n_evidence, 4);   /* (0, gemm), (0, relu), (1, small), (1, nccl) */
            for (size_t e = 0; e < r->n_evidence; e++) {
                const tg_evidence *ev = &r->evidence[e];
                json_t *match = NULL;
                for (size_t g = 0; g < json_array_size(groups) && !match; g++) {
                    json_t *sg = json_array_get(groups, g);
                    if (!strcmp(json_string_value(json_object_get(sg, "name")), ev->fields[1].value.u.s) &&
                        json_integer_value(json_object_get(sg, "device")) == ev->fields[0].value.u.i)
                        match = sg;
                }
                assert_non_null(match);
                for (size_t f = 0; f < ev->n_fields; f++, checked++)
                    agree("grouped", ev->fields[f].name, ev->fields[f].value, json_object_get(match, ev->fields[f].name));
            }
        }
        json_decref(sets);
    }
    assert_int_equal(out.n_results, 9);
    assert_true(checked > 100);
    tg_arena_free(arena);
    tg_rules_free(rs);
    tg_model_free(m);
    tg_trace_close(t);
    tg_ruletest_free(file);
    tg_diag_clear(&diag);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_values_come_back)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
