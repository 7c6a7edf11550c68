/*
** CUDA graph launches on generated traces (issue 35, item 2; docs/rules.md,
** "CUDA graphs"): one timeline written twice, as an nsys-shaped SQLite
** export (tests/unit/fixture.c) and as a Kineto JSON trace, both built
** here. Three ProfilerStep ranges, each with
**
**   graph A  cudaGraphLaunch_v10000, 50 us, 4 kernels of 5 us back to
**            back from 40 us after the call returned: 20 us < 50 us, so
**            the launch is short and its 4 kernels count as short;
**   graph B  cuGraphLaunch, 50 us, 3 kernels of 30 us, the first starting
**            1 us before the call returned (queue 0, clamped): 90 us >
**            50 us, none short, although each node is shorter than 50 us;
**   plain 1  cudaLaunchKernel_v7000, 5 us, one 10 us kernel 3 us later;
**   plain 2  the same call, one 2 us kernel 7 us later (short).
**
** So per step 9 kernels, 4 launches, 2 graph launches of 7 kernels, 5
** short kernels (4 + 1), and 4 queue times (40, 0, 3, 7 us): only the
** first kernel of each launch has one. Over the 3 steps: 12 queue times,
** 3 of them clamped, median (3 + 7) / 2 = 5 us; 15 kernels without one.
** Every number is asserted from this arithmetic, for both formats, and the
** finding's reproduce program (SQL through sqlrun, jq through the real jq)
** must give the engine's values back.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"
#include "fixture.h"
#include "sqlrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 3
#define STEP_NS 1000000LL
#define BASE_NS 1000000000LL
#define PID 4242
#define US 1000LL

static char tmpdir[256];

/* One launch call and its kernels, relative to the step's start (ns). */
typedef struct {
    const char *api;           /* as recorded (version suffix and all) */
    bool driver;
    long long call_start, call_end;
    int n;
    long long first, every, dur;
} launch;

static const launch launches[] = {
    {"cudaGraphLaunch_v10000", false, 10 * US, 60 * US, 4, 100 * US, 5 * US, 5 * US},
    {"cuGraphLaunch", true, 70 * US, 120 * US, 3, 119 * US, 30 * US, 30 * US},
    {"cudaLaunchKernel_v7000", false, 200 * US, 205 * US, 1, 208 * US, 0, 10 * US},
    {"cudaLaunchKernel_v7000", false, 300 * US, 305 * US, 1, 312 * US, 0, 2 * US},
};
#define N_LAUNCHES (sizeof launches / sizeof *launches)

static long long corr_of(int step, size_t l) { return 100 + 10 * step + (long long)l; }

/* ------------------------------------------------------------ the two traces */

static char *write_export(void)
{
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (1, 'ProfilerStep#1'), (2, 'graph_node'), "
                                        "(3, 'plain_kernel');\n"));
    for (size_t l = 0; l < N_LAUNCHES; l++)
        assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (%zu, '%s');\n", 10 + l, launches[l].api));
    assert_true(tg_fixture_append(&sql, "INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, "
                                        "computeMajor, computeMinor) VALUES (0, 0, 'NVIDIA H100 80GB HBM3', "
                                        "85045460992, 132, 9, 0);\n"));
    for (int s = 0; s < STEPS; s++) {
        long long b = BASE_NS + s * STEP_NS;
        assert_true(tg_fixture_append(&sql, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, "
                                            "domainId) VALUES (%lld, %lld, 59, 'ProfilerStep#%d', %lld, 0);\n",
                                      b, b + 500 * US, s + 1, (long long)tg_fixture_gtid(PID, PID)));
        for (size_t l = 0; l < N_LAUNCHES; l++) {
            const launch *x = &launches[l];
            assert_true(tg_fixture_append(&sql, "INSERT INTO %s (start, end, eventClass, globalTid, correlationId, "
                                                "nameId, returnValue) VALUES (%lld, %lld, 1, %lld, %lld, %zu, 0);\n",
                                          "CUPTI_ACTIVITY_KIND_RUNTIME",
                                          b + x->call_start, b + x->call_end, (long long)tg_fixture_gtid(PID, PID),
                                          corr_of(s, l), 10 + l));
            for (int k = 0; k < x->n; k++) {
                long long ks = b + x->first + k * x->every;
                assert_true(tg_fixture_append(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, "
                                                    "contextId, streamId, correlationId, globalPid, demangledName, "
                                                    "shortName, graphNodeId) VALUES (%lld, %lld, 0, 1, 7, %lld, %lld, "
                                                    "%d, %d, %s);\n",
                                              ks, ks + x->dur, corr_of(s, l), (long long)tg_fixture_gpid(PID),
                                              x->n > 1 ? 2 : 3, x->n > 1 ? 2 : 3, x->n > 1 ? "7" : "NULL"));
            }
        }
    }
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

/* ns as Kineto's microseconds, exactly (three decimals). */
static void put_us(FILE *f, long long ns) { fprintf(f, "%lld.%03lld", ns / 1000, ns % 1000); }

static char *write_kineto(void)
{
    char *path = malloc(strlen(tmpdir) + 32);
    assert_non_null(path);
    sprintf(path, "%s/graphs.pt.trace.json", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    for (int s = 0; s < STEPS; s++) {
        long long b = BASE_NS + s * STEP_NS;
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": %d, "
                   "\"tid\": %d, \"ts\": ", s + 1, PID, PID);
        put_us(f, b);
        fputs(", \"dur\": ", f);
        put_us(f, 500 * US);
        fputs("},\n", f);
        for (size_t l = 0; l < N_LAUNCHES; l++) {
            const launch *x = &launches[l];
            /* Kineto writes the call's name without the version suffix */
            char name[64];
            snprintf(name, sizeof name, "%s", x->api);
            char *v = strstr(name, "_v");
            if (v) *v = 0;
            fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": ",
                    x->driver ? "cuda_driver" : "cuda_runtime", name, PID, PID);
            put_us(f, b + x->call_start);
            fputs(", \"dur\": ", f);
            put_us(f, x->call_end - x->call_start);
            fprintf(f, ", \"args\": {\"correlation\": %lld}},\n", corr_of(s, l));
            for (int k = 0; k < x->n; k++) {
                long long ks = b + x->first + k * x->every;
                fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": ",
                        x->n > 1 ? "graph_node" : "plain_kernel");
                put_us(f, ks);
                fputs(", \"dur\": ", f);
                put_us(f, x->dur);
                fprintf(f, ", \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": %lld}},\n",
                        corr_of(s, l));
            }
        }
    }
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": %d, \"tid\": 0, \"args\": "
               "{\"name\": \"python3\"}}\n], \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", "
               "\"totalGlobalMem\": 85045460992, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}]}\n", PID);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* ------------------------------------------------------------ the rules */

static const char rules_yaml[] =
    "version: 1\n"
    "rules:\n"
    "  - id: graph-steps\n"
    "    title: launches per step\n"
    "    severity: warning\n"
    "    source: iteration\n"
    "    where: steady\n"
    "    fail_when: count > 0\n"
    "    evidence: {order_by: index asc, columns: [index, kernels, short_kernels, graph_launches, graph_kernels, "
    "launches, launch_time, kernel_time]}\n"
    "    message: \"{count} {sum(kernels)} {sum(short_kernels)} {sum(graph_launches)} {sum(graph_kernels)} "
    "{sum(launches)} {sum(launch_time)} {sum(kernel_time)}\"\n"
    "  - id: graph-queue\n"
    "    title: the device's queue median\n"
    "    severity: warning\n"
    "    source: device\n"
    "    where: kernels > 0\n"
    "    fail_when: count > 0\n"
    "    evidence: {columns: [device, queue_p50, queue_kernels, queue_clamped]}\n"
    "    message: \"{max(queue_p50)} {sum(queue_kernels)} {sum(queue_clamped)}\"\n"
    "  - id: graph-queued-kernels\n"
    "    title: kernels with a queue time\n"
    "    severity: warning\n"
    "    source: kernel\n"
    "    where: queue != null\n"
    "    fail_when: count > 0\n"
    "    evidence: {order_by: start asc, limit: 20, columns: [name, queue, api]}\n"
    "    message: \"{count} {sum(queue)} {max(queue)}\"\n"
    "  - id: graph-unqueued-kernels\n"
    "    title: kernels without one\n"
    "    severity: warning\n"
    "    source: kernel\n"
    "    where: queue == null\n"
    "    fail_when: count > 0\n"
    "    message: \"{count}\"\n";

static json_t *check_with(const char *rules, const char *trace, const char *extra)
{
    int st;
    json_t *doc = corpus_json(&st, "check --format json %s %s '%s'", rules, extra, trace);
    assert_non_null(doc);
    return doc;
}

static long long value(json_t *doc, const char *rule, const char *key)
{
    json_t *v = json_object_get(json_object_get(corpus_result(doc, rule), "values"), key);
    if (!json_is_number(v)) fail_msg("%s: values.%s is not a number", rule, key);
    return (long long)json_number_value(v);
}

/* The arithmetic of the head comment, on either format. */
static void expect_numbers(json_t *doc, const char *label)
{
    static const struct { const char *rule, *key; long long want; } nums[] = {
        {"graph-steps", "count", STEPS},
        {"graph-steps", "sum_kernels", 9 * STEPS},
        {"graph-steps", "sum_short_kernels", 5 * STEPS},
        {"graph-steps", "sum_graph_launches", 2 * STEPS},
        {"graph-steps", "sum_graph_kernels", 7 * STEPS},
        {"graph-steps", "sum_launches", 4 * STEPS},
        {"graph-steps", "sum_launch_time_ns", 110 * US * STEPS},
        {"graph-steps", "sum_kernel_time_ns", 122 * US * STEPS},
        {"graph-queue", "max_queue_p50_ns", 5 * US},
        {"graph-queue", "sum_queue_kernels", 4 * STEPS},
        {"graph-queue", "sum_queue_clamped", STEPS},
        {"graph-queued-kernels", "count", 4 * STEPS},
        {"graph-queued-kernels", "sum_queue_ns", 50 * US * STEPS},
        {"graph-queued-kernels", "max_queue_ns", 40 * US},
        {"graph-unqueued-kernels", "count", 5 * STEPS},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        long long got = value(doc, nums[i].rule, nums[i].key);
        if (got != nums[i].want) {
            fprintf(stderr, "  %s %s %s: %lld, want %lld\n", label, nums[i].rule, nums[i].key, got, nums[i].want);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* Every value of every result with a reproduce text, against what the
** text gives: set 0 (SQL) or the program's first output (jq). */
static int compare_values(const char *label, const char *rule, json_t *values, json_t *got)
{
    int wrong = 0;
    const char *key;
    json_t *want;
    json_object_foreach(values, key, want) {
        json_t *g = json_object_get(got, key);
        if (!g || !sqlrun_agrees(want, g, 1e-9)) {
            char *a = json_dumps(want, JSON_ENCODE_ANY), *b = g ? json_dumps(g, JSON_ENCODE_ANY) : NULL;
            fprintf(stderr, "  %s %s: %s is %s in the finding, %s reproduced\n", label, rule, key, a, b ? b : "absent");
            free(a);
            free(b);
            wrong++;
        }
    }
    return wrong;
}

static json_t *results_of(json_t *doc)
{
    return json_object_get(json_array_get(json_object_get(doc, "traces"), 0), "results");
}

static int reproduce_sql(const char *trace, json_t *doc)
{
    int wrong = 0, ran = 0;
    size_t i;
    json_t *r;
    json_array_foreach(results_of(doc), i, r) {
        const char *rule = json_string_value(json_object_get(r, "rule"));
        const char *sql = json_string_value(json_object_get(r, "reproduce"));
        if (!sql || strncmp(rule, "graph-", 6)) continue;
        char err[512];
        json_t *sets = sqlrun(trace, sql, err, sizeof err);
        if (!sets) fail_msg("%s: the reproduce SQL fails: %s", rule, err);
        wrong += compare_values("SQL", rule, json_object_get(r, "values"), json_array_get(json_array_get(sets, 0), 0));
        json_decref(sets);
        ran++;
    }
    assert_int_equal(ran, 4);
    return wrong;
}

static int reproduce_jq(const char *trace, json_t *doc)
{
    char prog[300], cmd[1200];
    snprintf(prog, sizeof prog, "%s/prog.jq", tmpdir);
    FILE *f = fopen(prog, "w");
    assert_non_null(f);
    json_t *picked = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(results_of(doc), i, r) {
        const char *rule = json_string_value(json_object_get(r, "rule"));
        const char *p = json_string_value(json_object_get(r, "reproduce"));
        if (!p || strncmp(rule, "graph-", 6)) continue;
        fprintf(f, "%s[(%s)]", json_array_size(picked) ? ",\n" : "", p);
        json_array_append(picked, r);
    }
    fclose(f);
    assert_int_equal(json_array_size(picked), 4);
    snprintf(cmd, sizeof cmd, "jq -c -f '%s' '%s'", prog, trace);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0, k = 0;
    int wrong = 0;
    for (ssize_t len; (len = getline(&line, &cap, p)) > 0 && k < json_array_size(picked); k++) {
        json_t *res = json_array_get(picked, k), *out = json_loads(line, 0, NULL);
        const char *rule = json_string_value(json_object_get(res, "rule"));
        if (!json_is_array(out)) fail_msg("%s: jq printed %.200s", rule, line);
        wrong += compare_values("jq", rule, json_object_get(res, "values"), json_array_get(out, 0));
        json_decref(out);
    }
    free(line);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(k, json_array_size(picked));
    json_decref(picked);
    return wrong;
}

static const char *rules_path(void)
{
    static char path[300], opt[400];
    snprintf(path, sizeof path, "%s/graphs.yaml", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(rules_yaml, f);
    fclose(f);
    snprintf(opt, sizeof opt, "--rules '%s'", path);
    return opt;
}

/* ------------------------------------------------------------ the tests */

static void test_export(void **state)
{
    (void)state;
    char *path = write_export();
    json_t *doc = check_with(rules_path(), path, "");
    expect_numbers(doc, "export");
    assert_int_equal(reproduce_sql(path, doc), 0);
    json_decref(doc);
    tg_fixture_remove(path);
}

static void test_kineto(void **state)
{
    (void)state;
    if (system("jq --version >/dev/null 2>&1") != 0) {
        print_message("SKIP: no jq on PATH; the Kineto half not checked\n");
        skip();
    }
    char *path = write_kineto();
    json_t *doc = check_with(rules_path(), path, "");
    expect_numbers(doc, "kineto");
    assert_int_equal(reproduce_jq(path, doc), 0);
    json_decref(doc);
    free(path);
}

/* The built-in kernel-launch-bound with its thresholds lowered to this
** fixture (9 kernels a step; launches 110 us against 122 us of kernels):
** it must count graph B's 3 kernels as not short (the graph ran longer
** than its launch), graph A's 4 as short, and say how graphs were counted. */
static void test_builtin_message(void **state)
{
    (void)state;
    char *path = write_export();
    json_t *doc = check_with("", path, "--set kernel-launch-bound.min_kernels=9 --set kernel-launch-bound.max_busy=100% "
                               "--set kernel-launch-bound.min_launch_ratio=0.5");
    json_t *r = corpus_result(doc, "kernel-launch-bound");
    const char *msg = json_string_value(json_object_get(r, "message"));
    assert_string_equal(json_string_value(json_object_get(r, "status")), "fail");
    assert_non_null(msg);
    if (!strstr(msg, "15 of 27 shorter than their launch call (graph launches: 6, their 21 kernels"))
        fail_msg("message: %s", msg);
    assert_non_null(strstr(msg, "15 of 27 shorter than their launch call (graph launches: 6, their 21 kernels"));
    json_decref(doc);
    tg_fixture_remove(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg_graphs_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    corpus_binary = getenv("TG_BINARY");
    if (!corpus_binary) {
        printf("SKIP: TG_BINARY unset; the graph fixtures not checked\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_kineto),
        cmocka_unit_test(test_builtin_message),
    };
    return cmocka_run_group_tests_name("graph launches", tests, setup, teardown);
}
