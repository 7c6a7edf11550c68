/*
** The rule-test file loader (engine/ruletest/ruletest_load.c and
** ruletest_events.c): malformed files, table-driven, each with the line,
** column and a piece of the message its first error must have (positions
** worked out by hand from the texts: 1-based byte columns); then what a
** valid file reads into -- defaults, units, `repeat`, `launch`,
** correlation ids, params and paths.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruletest/ruletest_int.h"

/* Lines 1-4 of most cases; the case's own lines start at line 5. */
#define P "version: 1\ntests:\n  - name: t\n    rule: sync-memcpy\n"
#define IN "    input:\n      events:\n"
#define EX "    expect: {status: fail}\n"

typedef struct bad_case {
    const char *text;
    int line, col;
    const char *msg;
} bad_case;

static const bad_case cases[] = {
    /* the file */
    {"", 1, 1, "the test file is empty"},
    {"- a\n", 1, 1, "a rule test file must be a mapping"},
    {"version: 1\ntest:\n  - x\n", 2, 1, "unknown key 'test' in the test file (did you mean 'tests'?)"},
    {"version: 2\ntests: []\n", 1, 10, "unsupported test file version '2'"},
    {"tests:\n  - name: t\n", 1, 1, "needs 'version: 1'"},
    {"version: 1\n", 1, 1, "needs 'tests:'"},
    {"version: 1\ntests: []\n", 2, 8, "tests: is an empty list"},
    {"version: 1\ntests: {a: 1}\n", 2, 8, "tests must be a list"},
    {"version: 1\nrules: []\ntests: [x]\n", 2, 8, "rules: is an empty list"},
    {"version: 1\ntests: [\n", 3, 1, "YAML syntax error"},
    {"version: 1\nversion: 1\ntests: [x]\n", 2, 1, "duplicate key 'version'"},
    /* a case */
    {"version: 1\ntests:\n  - rule: x\n" IN "        kernels: []\n" EX, 3, 5, "a test needs 'name:'"},
    {"version: 1\ntests:\n  - name: t\n" IN "        kernels: []\n" EX, 3, 5, "a test needs 'rule:'"},
    {P EX, 3, 5, "a test needs 'input:'"},
    {P IN "        kernels: []\n", 3, 5, "a test needs 'expect:'"},
    {P "    rules: x\n" IN "        kernels: []\n" EX, 5, 5, "unknown key 'rules' in a test (did you mean 'rule'?)"},
    {P "    name: u\n" IN "        kernels: []\n" EX, 5, 5, "duplicate key 'name' in a test (first at line 3)"},
    {P "    input: {trace: a.sqlite, events: {}}\n" EX, 5, 30, "not both"},
    {P "    input: {}\n" EX, 5, 12, "input needs 'trace: PATH' or 'events:'"},
    {P "    input: {tarce: x}\n" EX, 5, 13, "did you mean 'trace'"},
    {P "    input: {trace: ''}\n" EX, 5, 20, "input.trace must not be empty"},
    {P "    missing_data: maybe\n" IN "        kernels: []\n" EX, 5, 19, "missing_data must be fail or skip"},
    {P "    iteration_pattern: \"(\"\n" IN "        kernels: []\n" EX, 5, 24, "not a valid POSIX extended regular expression"},
    {P "    set: {min_gap: 1ms}\n" IN "        kernels: []\n" EX, 5, 11, "set keys are RULE.PARAM"},
    {P "    params: [1]\n" IN "        kernels: []\n" EX, 5, 13, "params must be a mapping"},
    {P "    params: {min_gap: [1]}\n" IN "        kernels: []\n" EX, 5, 23, "a param value must be a scalar"},
    /* expect */
    {P IN "        kernels: []\n    expect: {count: 1}\n", 8, 13, "expect needs 'status:'"},
    {P IN "        kernels: []\n    expect: {status: fial}\n", 8, 22, "did you mean 'fail'"},
    {P IN "        kernels: []\n    expect: {status: fail, count: -1}\n", 8, 35, "expect.count must be between 0"},
    {P IN "        kernels: []\n    expect: {status: fail, severity: loud}\n", 8, 38,
     "severity must be info, warning or error"},
    {P IN "        kernels: []\n    expect: {status: fail, count: 1.5}\n", 8, 35, "must be a whole number"},
    {P IN "        kernels: []\n    expect: {status: fail, values: [1]}\n", 8, 36, "expect.values must be a mapping"},
    {P IN "        kernels: []\n    expect: {status: fail, values: {a: {tolerance: 1}}}\n", 8, 40,
     "expected value 'a' needs 'value:'"},
    {P IN "        kernels: []\n    expect: {status: fail, values: {a: {value: 2ms, tolerance: 1KB}}}\n", 8, 64,
     "tolerance '1KB' is not in the unit of the value '2ms'"},
    {P IN "        kernels: []\n    expect: {status: fail, values: {a: {value: x, tolerance: 1}}}\n", 8, 62,
     "a tolerance needs a number"},
    {P IN "        kernels: []\n    expect: {status: fail, values: {a: {value: 1, tolerance: -1}}}\n", 8, 62,
     "non-negative"},
    {P IN "        kernels: []\n    expect: {status: fail, evidence: {rowid: 1}}\n", 8, 38, "expect.evidence must be a list"},
    {P IN "        kernels: []\n    expect: {status: fail, evidence: [{}]}\n", 8, 39, "names at least one"},
    {P IN "        kernels: []\n    expect: {status: fail, mesage: x}\n", 8, 28, "did you mean 'message'"},
    /* events */
    {P IN "        kernel: []\n" EX, 7, 9, "unknown key 'kernel' in input.events (did you mean 'kernels'?)"},
    {P IN "        kernels: {start: 1ms}\n" EX, 7, 18, "kernels must be a list"},
    {P IN "        kernels: [3]\n" EX, 7, 19, "a kernel entry must be a mapping"},
    {P IN "        kernels:\n          - {duration: 1ms}\n" EX, 8, 13, "a kernel needs 'start:'"},
    {P IN "        kernels:\n          - {start: 1ms}\n" EX, 8, 13, "a kernel needs 'end:' or 'duration:'"},
    {P IN "        kernels:\n          - {start: 1MiB, duration: 1ms}\n" EX, 8, 21, "start wants a duration"},
    {P IN "        kernels:\n          - {start: 1.5ns, duration: 1ms}\n" EX, 8, 21, "whole number of nanoseconds"},
    {P IN "        kernels:\n          - {start: 2ms, end: 1ms}\n" EX, 8, 31, "end 1ms is before start 2ms"},
    {P IN "        kernels:\n          - {start: 1ms, end: 2ms, duration: 1ms}\n" EX, 8, 46, "a kernel takes 'end:' or 'duration:', not both"},
    {P IN "        kernels:\n          - {start: 1ms, duration: 1ms, grid: [1, 2, 3, 4]}\n" EX, 8, 47,
     "grid takes 1 to 3 sizes"},
    {P IN "        kernels:\n          - {start: 1ms, duration: 1ms, pid: 16777216}\n" EX, 8, 46, "24 bits"},
    {P IN "        kernels:\n          - {start: 1ms, duration: 1ms, strem: 3}\n" EX, 8, 41, "did you mean 'stream'"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, kind: HtoX}\n" EX, 8, 47,
     "unknown copy kind 'HtoX' (did you mean 'HtoD'?)"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, src_kind: pined}\n" EX, 8, 51,
     "unknown memory kind 'pined' (did you mean 'pinned'?)"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, bytes: 10ms}\n" EX, 8, 48, "bytes wants a size"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, correlation: 2, launch: cudaMemcpy}\n" EX,
     8, 65, "give 'launch:' or 'correlation:', not both"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, launch: {start: 1ms, end: 2ms}}\n" EX, 8, 49,
     "launch needs 'name:'"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, repeat: {count: 2}}\n" EX, 8, 49,
     "repeat needs 'count:' and 'every:'"},
    {P IN "        memcpys:\n          - {start: 1ms, duration: 1ms, repeat: {count: 0, every: 1ms}}\n" EX, 8, 57,
     "repeat.count must be between 1"},
    {P IN "        api:\n          - {name: x, start: 1ms, duration: 1ms, correlation: 4, repeat: {count: 2, every: 1ms}}\n" EX,
     8, 63, "a repeated item cannot give 'correlation:'"},
    {P IN "        api:\n          - {start: 1ms, duration: 1ms}\n" EX, 8, 13, "an api entry needs 'name:'"},
    {P IN "        nvtx:\n          - {name: m, start: 1ms, end: 2ms, type: mark}\n" EX, 8, 13, "an nvtx mark has a start only"},
    {P IN "        nvtx:\n          - {name: r, start: 1ms, duration: 1ms, type: push}\n" EX, 8, 56,
     "unknown nvtx type 'push' (did you mean 'pushpop'?)"},
    {P IN "        devices:\n          - {id: 0, compute_capability: 9}\n" EX, 8, 41, "MAJOR.MINOR"},
    {P IN "        devices:\n          - {id: 0}\n          - {id: 0}\n" EX, 9, 13, "device 0 is described twice"},
    {P IN "        overhead:\n          - {name: x, start: 1ms}\n" EX, 8, 13, "needs 'end:' or 'duration:'"},
    {P IN "        kernels:\n          - {start: 1ms, duration: 1ms, repeat: {count: 1000000, every: 1ms}}\n"
          "          - {start: 1ms, duration: 1ms}\n" EX, 9, 13, "more than 1000000 rows"},
};

static void test_malformed(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const bad_case *c = &cases[i];
        tg_diag d;
        tg_diag_init(&d);
        tg_ruletest_file *f = tg_ruletest_load_text("bad.test.yaml", c->text, strlen(c->text), &d);
        if (f || d.n_errors == 0 || d.msgs[0].pos.line != c->line || d.msgs[0].pos.col != c->col ||
            !strstr(d.msgs[0].text, c->msg) || d.status != TG_EUSAGE ||
            strcmp(d.msgs[0].pos.file, "bad.test.yaml") != 0) {
            print_error("case %zu: want %d:%d '%s'\n", i, c->line, c->col, c->msg);
            for (size_t k = 0; k < d.n; k++)
                print_error("  got %d:%d %s\n", d.msgs[k].pos.line, d.msgs[k].pos.col, d.msgs[k].text);
            failures++;
        }
        tg_ruletest_free(f);
        tg_diag_clear(&d);
    }
    assert_int_equal(failures, 0);
}

/* Every mistake of a file is reported, not only the first, with the
** offending line for the caret. */
static void test_all_errors_reported(void **state)
{
    (void)state;
    const char *text = P IN "        kernels:\n          - {start: 1xs, duration: 1ms}\n"
                       "    expect: {status: nope}\n"
                       "  - name: u\n    rule: r\n    input: {trace: x.sqlite}\n    expect: {}\n";
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_ruletest_load_text("many.test.yaml", text, strlen(text), &d));
    assert_int_equal(d.n_errors, 3);
    assert_int_equal(d.msgs[0].pos.line, 8);
    assert_string_equal(d.msgs[0].line_text, "          - {start: 1xs, duration: 1ms}");
    assert_int_equal(d.msgs[1].pos.line, 9);
    assert_int_equal(d.msgs[2].pos.line, 13);
    assert_non_null(strstr(d.msgs[2].text, "expect needs 'status:'"));
    char *s = tg_diag_format(&d.msgs[0], false);
    assert_non_null(strstr(s, "many.test.yaml:8:21: error:"));
    assert_non_null(strstr(s, "\n            - {start: 1xs, duration: 1ms}\n                      ^"));
    free(s);
    tg_diag_clear(&d);
}

static void test_missing_file(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    assert_null(tg_ruletest_load("/nonexistent/x.test.yaml", &d));
    assert_int_equal(d.status, TG_EUSAGE);
    assert_non_null(strstr(d.msgs[0].text, "cannot open the test file"));
    tg_diag_clear(&d);
}

/* ------------------------------------------------------------ valid */

static tg_ruletest_file *load_ok(const char *name, const char *text)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_ruletest_file *f = tg_ruletest_load_text(name, text, strlen(text), &d);
    for (size_t k = 0; k < d.n; k++) print_error("%d:%d %s\n", d.msgs[k].pos.line, d.msgs[k].pos.col, d.msgs[k].text);
    assert_non_null(f);
    assert_int_equal(d.n, 0);
    tg_diag_clear(&d);
    return f;
}

static void test_case_fields(void **state)
{
    (void)state;
    const char *text =
        "version: 1\n"
        "rules: [team.yaml, builtin, /abs/r.yaml]\n"
        "tests:\n"
        "  - name: first\n"
        "    rule: gpu-idle-gap\n"
        "    params: {min_gap: 200ms}\n"
        "    set: {sync-memcpy.small_htod: 1MB, a.b.c: 2}\n"
        "    baseline: base/b.yaml\n"
        "    iteration_pattern: \"^step$\"\n"
        "    missing_data: skip\n"
        "    input: {trace: traces/t.sqlite}\n"
        "    expect:\n"
        "      status: skip\n"
        "      count: 3\n"
        "      values: {sum_duration_ns: 2ms, cv: {value: 0.2, tolerance: 1%}, busy: 20%,\n"
        "               x: null, name: \"HtoD\", flag: true, lat: {value: 10us, tolerance: 1us},\n"
        "               share: {value: 20%, tolerance: 0.5%}}\n"
        "      evidence: [{rowid: 4, table: CUPTI_ACTIVITY_KIND_KERNEL}]\n"
        "      message: \"idle gaps\"\n";
    tg_ruletest_file *f = load_ok("dir/sub/x.test.yaml", text);
    assert_int_equal(f->n_rule_paths, 3);
    assert_string_equal(f->rule_paths[0], "dir/sub/team.yaml");
    assert_string_equal(f->rule_paths[1], "builtin");
    assert_string_equal(f->rule_paths[2], "/abs/r.yaml");
    assert_int_equal(f->n_cases, 1);
    const tg_rt_case *c = &f->cases[0];
    assert_string_equal(c->name, "first");
    assert_int_equal(c->pos.line, 4);
    assert_string_equal(c->rule, "gpu-idle-gap");
    assert_int_equal(c->n_sets, 3);
    assert_string_equal(c->sets[0].rule, "gpu-idle-gap");
    assert_string_equal(c->sets[0].param, "min_gap");
    assert_string_equal(c->sets[0].value, "200ms");
    assert_string_equal(c->sets[1].rule, "sync-memcpy");
    assert_string_equal(c->sets[1].param, "small_htod");
    assert_string_equal(c->sets[2].rule, "a.b");
    assert_string_equal(c->sets[2].param, "c");
    assert_string_equal(c->baseline, "dir/sub/base/b.yaml");
    assert_string_equal(c->iteration_pattern, "^step$");
    assert_int_equal(c->missing, TG_MISSING_SKIP);
    assert_string_equal(c->trace, "dir/sub/traces/t.sqlite");
    assert_null(c->events);
    assert_true(c->has_status);
    assert_int_equal(c->status, TG_V_SKIP);
    assert_true(c->has_count);
    assert_int_equal(c->count, 3);
    assert_int_equal(c->n_values, 8);
    assert_int_equal(c->values[0].value.type, TG_TY_INT);
    assert_int_equal(c->values[0].value.unit, TG_UNIT_NS);
    assert_int_equal(c->values[0].value.u.i, 2000000);
    assert_true(c->values[1].relative);
    assert_true(c->values[1].tolerance > 0.0099 && c->values[1].tolerance < 0.0101);
    assert_int_equal(c->values[2].value.type, TG_TY_FLOAT);
    assert_int_equal(c->values[2].value.unit, TG_UNIT_RATIO);
    assert_int_equal(c->values[3].value.type, TG_TY_NULL);
    assert_int_equal(c->values[4].value.type, TG_TY_STRING);
    assert_string_equal(c->values[4].value.u.s, "HtoD");
    assert_int_equal(c->values[5].value.type, TG_TY_BOOL);
    assert_false(c->values[6].relative);
    assert_true(c->values[6].tolerance == 1000);
    /* a percentage tolerance on a percentage is absolute (percentage points) */
    assert_false(c->values[7].relative);
    assert_true(c->values[7].tolerance > 0.00499 && c->values[7].tolerance < 0.00501);
    assert_true(c->has_evidence);
    assert_int_equal(c->n_evidence, 1);
    assert_int_equal(c->evidence[0].n_keys, 2);
    assert_string_equal(c->evidence[0].keys[1].value.u.s, "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_string_equal(c->message, "idle gaps");
    tg_ruletest_free(f);
}

static void test_events(void **state)
{
    (void)state;
    const char *text =
        P IN
        "        api:\n"
        "          - {name: cudaMemcpy, start: 0.5ms, end: 3ms, correlation: 1}\n"
        "          - {name: cudaMemcpy_v3020, start: 0.5ms, end: 3ms, correlation: 3}\n"
        "        kernels:\n"
        "          - {name: k, start: 1ms, duration: 2us, launch: cudaLaunchKernel, repeat: {count: 3, every: 1ms}}\n"
        "          - {start: 10ms, duration: 1ms, correlation: 3, device: 1, stream: 9, grid: [4, 2], block: 64}\n"
        "          - {start: 20ms, duration: 1ms}\n"
        "        memcpys:\n"
        "          - {start: 1ms, duration: 1ms, kind: DtoH, bytes: 64KB,\n"
        "             launch: {name: cuMemcpyDtoH_v2, start: 0.9ms, end: 2.1ms, tid: 7}}\n"
        "        memsets:\n"
        "        nvtx:\n"
        "          - {name: iteration, start: 0, duration: 9ms, repeat: {count: 2, every: 10ms}, pid: 5, tid: 6}\n"
        "          - {name: mark, start: 3ms, type: mark, domain: app}\n"
        "        devices:\n"
        "          - {name: NVIDIA A100-SXM4-80GB, compute_capability: 8.0, sm_count: 108, memory: 80GiB}\n"
        "        overhead:\n"
        "          - {start: 2ms, duration: 1ms}\n"
        "        osrt:\n"
        "          - {name: usleep, start: 4ms, duration: 2ms, tid: 8, return_value: -1,\n"
        "             stack: [\"usleep (libc.so.6)\", {symbol: main, module: /opt/app}]}\n"
        "        threads:\n"
        "          - {tid: 8, name: loader}\n"
        "        cudnn:\n"
        "          - {name: cudnnConvolutionForward, start: 5ms, duration: 1ms}\n"
        "        cublas:\n"
        "          - {name: cublasSgemm_v2, start: 6ms, duration: 1ms, repeat: {count: 2, every: 2ms}}\n"
        EX;
    tg_ruletest_file *f = load_ok("e.test.yaml", text);
    const tg_rt_events *ev = f->cases[0].events;
    /* the host side (docs/host.md): calls, names and stacks as written */
    assert_int_equal(ev->n_osrts, 1);
    assert_string_equal(ev->osrts[0].name, "usleep");
    assert_int_equal(ev->osrts[0].tid, 8);
    assert_int_equal(ev->osrts[0].return_value, -1);
    assert_int_equal(ev->osrts[0].end - ev->osrts[0].start, 2000000);
    assert_int_equal(ev->n_stacks, 1);
    assert_int_equal(ev->osrts[0].stack, 0);
    assert_int_equal(ev->stacks[0].n, 2);
    assert_string_equal(ev->stacks[0].frames[0].symbol, "usleep");
    assert_string_equal(ev->stacks[0].frames[0].module, "libc.so.6");
    assert_string_equal(ev->stacks[0].frames[1].symbol, "main");
    assert_string_equal(ev->stacks[0].frames[1].module, "/opt/app");
    assert_int_equal(ev->n_threads, 1);
    assert_string_equal(ev->threads[0].name, "loader");
    assert_int_equal(ev->n_libcalls[0], 1);
    assert_int_equal(ev->n_libcalls[1], 2);
    assert_int_equal(ev->libcalls[1][1].start, 8000000);
    assert_non_null(ev);
    for (int c = 0; c < TG_RT_CAT_COUNT; c++) assert_true(ev->listed[c]);
    /* api entries first, then the launches in the order written */
    assert_int_equal(ev->n_calls, 6);
    assert_string_equal(ev->calls[0].name, "cudaMemcpy");
    assert_int_equal(ev->calls[0].correlation, 1);
    assert_int_equal(ev->calls[1].correlation, 3);
    for (size_t i = 2; i < 5; i++) {
        assert_string_equal(ev->calls[i].name, "cudaLaunchKernel");
        /* shorthand: 1 us, ending as the kernel starts */
        assert_int_equal(ev->calls[i].end, 1000000 + (int64_t)(i - 2) * 1000000);
        assert_int_equal(ev->calls[i].start, ev->calls[i].end - 1000);
        assert_int_equal(ev->calls[i].pid, TG_RT_DEFAULT_PID);
        assert_int_equal(ev->calls[i].tid, TG_RT_DEFAULT_TID);
    }
    assert_string_equal(ev->calls[5].name, "cuMemcpyDtoH_v2");
    assert_int_equal(ev->calls[5].tid, 7);
    /* fresh ids skip the hand-written 1 and 3 */
    assert_int_equal(ev->calls[2].correlation, 2);
    assert_int_equal(ev->calls[3].correlation, 4);
    assert_int_equal(ev->calls[4].correlation, 5);
    assert_int_equal(ev->calls[5].correlation, 6);
    const tg_rt_op *k = ev->ops[TG_RT_KERNELS];
    assert_int_equal(ev->n_ops[TG_RT_KERNELS], 5);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(k[i].start, 1000000 + i * 1000000);
        assert_int_equal(k[i].end, k[i].start + 2000);
        assert_int_equal(k[i].launch, 2 + i);
        assert_int_equal(k[i].correlation, ev->calls[2 + i].correlation);
        assert_string_equal(k[i].name, "k");
        assert_int_equal(k[i].device, TG_RT_DEFAULT_DEVICE);
        assert_int_equal(k[i].stream, TG_RT_DEFAULT_STREAM);
        assert_int_equal(k[i].context, TG_RT_DEFAULT_CONTEXT);
    }
    assert_int_equal(k[3].correlation, 3);
    assert_int_equal(k[3].launch, -1);
    assert_int_equal(k[3].device, 1);
    assert_int_equal(k[3].stream, 9);
    assert_int_equal(k[3].grid[0], 4);
    assert_int_equal(k[3].grid[1], 2);
    assert_int_equal(k[3].grid[2], 1);
    assert_int_equal(k[3].block[0], 64);
    assert_string_equal(k[3].name, "kernel");
    assert_int_equal(k[4].correlation, 7);   /* the next fresh id after the launches 2, 4, 5, 6 */
    const tg_rt_op *m = ev->ops[TG_RT_MEMCPYS];
    assert_int_equal(ev->n_ops[TG_RT_MEMCPYS], 1);
    assert_int_equal(m[0].bytes, 64000);
    assert_int_equal(m[0].copy_kind, 2);
    assert_int_equal(m[0].src_kind, 2);      /* device */
    assert_int_equal(m[0].dst_kind, 0);      /* pageable */
    assert_int_equal(m[0].correlation, 6);
    assert_int_equal(ev->n_ops[TG_RT_MEMSETS], 0);
    assert_int_equal(ev->n_ranges, 3);
    assert_int_equal(ev->ranges[1].start, 10000000);
    assert_int_equal(ev->ranges[1].end, 19000000);
    assert_int_equal(ev->ranges[1].pid, 5);
    assert_int_equal(ev->ranges[1].tid, 6);
    assert_int_equal(ev->ranges[1].event_type, 59);
    assert_int_equal(ev->ranges[2].event_type, 34);
    assert_int_equal(ev->ranges[2].end, TG_NULL_I64);
    assert_string_equal(ev->ranges[2].domain, "app");
    assert_int_equal(ev->n_gpus, 1);
    assert_int_equal(ev->gpus[0].id, 0);
    assert_int_equal(ev->gpus[0].cc_major, 8);
    assert_int_equal(ev->gpus[0].sm_count, 108);
    assert_int_equal(ev->gpus[0].memory, INT64_C(85899345920));
    assert_int_equal(ev->n_overheads, 1);
    assert_string_equal(ev->overheads[0].name, TG_RT_OVERHEAD_NAME);
    tg_ruletest_free(f);
}

/* Fresh ids come from one counter over calls then operations. */
static void test_unlaunched_ids(void **state)
{
    (void)state;
    const char *text = P IN "        memsets:\n          - {start: 1ms, duration: 1ms, repeat: {count: 3, every: 1ms}}\n" EX;
    tg_ruletest_file *f = load_ok("u.test.yaml", text);
    const tg_rt_events *ev = f->cases[0].events;
    assert_int_equal(ev->n_calls, 0);
    assert_int_equal(ev->n_ops[TG_RT_MEMSETS], 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ev->ops[TG_RT_MEMSETS][i].correlation, i + 1);
        assert_int_equal(ev->ops[TG_RT_MEMSETS][i].mem_kind, 2);   /* device */
        assert_int_equal(ev->ops[TG_RT_MEMSETS][i].bytes, TG_RT_DEFAULT_BYTES);
    }
    assert_false(ev->listed[TG_RT_KERNELS]);
    assert_false(ev->listed[TG_RT_API]);
    tg_ruletest_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_all_errors_reported),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_case_fields),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_unlaunched_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
