/*
** The evaluator on hand-built models: verdicts, counts and aggregates
** computed on paper from the rows below (count, sum, mean, percentiles
** with linear interpolation, population stddev, cv, ratio), null
** handling, string predicates, trace.FIELD, missing data and regression
** rules without a baseline.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "world.h"
#include "rules/expr.h"

static const char *const sync_memcpy =
    "version: 1\nrules:\n"
    "  - id: sync-memcpy\n"
    "    title: Synchronous memcpy blocks the host\n"
    "    severity: error\n"
    "    source: memcpy\n"
    "    where: api_sync and not (kind == \"HtoD\" and bytes <= 64KB)\n"
    "    fail_when: count > 0\n"
    "    evidence: {order_by: duration desc, limit: 10}\n"
    "    message: \"{count} synchronous copies blocked the host for {sum(duration)}\"\n"
    "    advice: Use pinned host memory.\n";

static void five_copies(world *w)
{
    add_memcpy(w, 11, 1000, 500, 16777216, "HtoD", "cuMemcpyHtoD", 1);  /* in: HtoD > 64KB */
    add_memcpy(w, 12, 2000, 100, 1000, "HtoD", "cudaMemcpy", 1);        /* out: small HtoD */
    add_memcpy(w, 13, 3000, 2000, 16, "DtoH", "cuMemcpyDtoH", 1);       /* in */
    add_memcpy(w, 14, 4000, 300, 64000, "HtoD", "cudaMemcpy", 1);       /* out: exactly 64 KB */
    add_memcpy(w, 15, 5000, 700, 1000000, "DtoD", "cudaMemcpyAsync", 0); /* out: async */
}

static void test_sync_memcpy(void **state)
{
    (void)state;
    world *w = world_new();
    five_copies(w);
    world_rules(w, sync_memcpy);
    tg_rule_result *r = world_eval(w, NULL, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->severity, TG_SEV_ERROR);
    assert_int_equal(r->count, 2);
    assert_string_equal(r->message, "2 synchronous copies blocked the host for 2.5 us");
    assert_string_equal(r->advice, "Use pinned host memory.");
    assert_string_equal(r->rule_file, "rules.yaml");
    assert_int_equal(r->rule_line, 3);
    assert_int_equal(r->n_values, 2);
    assert_string_equal(r->values[0].name, "count");
    assert_int_equal(r->values[0].value.u.i, 2);
    const tg_value *sum = value_of(r, "sum_duration_ns");
    assert_int_equal(sum->type, TG_TY_INT);
    assert_int_equal(sum->unit, TG_UNIT_NS);
    assert_int_equal(sum->u.i, 2500);
    assert_true(isnan(r->metric_value));
    /* evidence: duration desc */
    assert_int_equal(r->n_evidence, 2);
    assert_int_equal(r->evidence[0].rowid, 13);
    assert_int_equal(r->evidence[1].rowid, 11);
    assert_string_equal(r->evidence[0].table, "CUPTI_ACTIVITY_KIND_MEMCPY");
    assert_int_equal(r->evidence[0].start, 3000);
    assert_int_equal(r->evidence[0].end, 5000);
    assert_string_equal(field_of(&r->evidence[0], "kind")->u.s, "DtoH");
    assert_int_equal(field_of(&r->evidence[0], "bytes")->u.i, 16);
    assert_string_equal(field_of(&r->evidence[1], "api")->u.s, "cuMemcpyHtoD");
    /* reproduce: the where compiled (a null-safe `not`), the values named
    ** as in the result, then the cited rows with what made them match */
    assert_non_null(strstr(r->reproduce, "WITH matched AS (SELECT r.* FROM tg_memcpy r WHERE (r.\"api_sync\" AND NOT "
                                         "coalesce(((r.\"kind\" = 'HtoD') AND (r.\"bytes\" <= 64000)), 0))) SELECT "
                                         "count(*) AS count, coalesce(sum(matched.\"duration\"), 0) AS "
                                         "\"sum_duration_ns\" FROM matched; "));
    assert_non_null(strstr(r->reproduce, "SELECT rowid, \"start\" AS start_ns, \"end\" AS end_ns, \"duration\" AS "
                                         "duration_ns, \"kind\", \"bytes\", \"src_kind\", \"dst_kind\", \"api\", "
                                         "\"device\", \"api_sync\" FROM tg_memcpy WHERE rowid IN (13, 11) ORDER BY "
                                         "\"duration\" DESC, start;"));
    world_free(w);
}

static void test_pass_and_no_rows(void **state)
{
    (void)state;
    world *w = world_new();
    add_memcpy(w, 12, 2000, 100, 1000, "HtoD", "cudaMemcpy", 1);
    world_rules(w, sync_memcpy);
    tg_rule_result *r = world_eval(w, NULL, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_int_equal(r->count, 0);
    /* the sum over no rows is 0 (not null), count is 0; a pass over no
    ** rows says so instead of rendering the template */
    assert_int_equal(value_of(r, "sum_duration_ns")->type, TG_TY_INT);
    assert_int_equal(value_of(r, "sum_duration_ns")->u.i, 0);
    assert_string_equal(r->message, "no finding: no memcpy row matches");
    assert_int_equal(r->n_evidence, 0);
    assert_null(r->reproduce);
    world_free(w);
}

static void test_iteration_statistics(void **state)
{
    (void)state;
    world *w = world_new();
    add_iter(w, 100, TG_NULL_I64, 10, 0);   /* first of its process: no period */
    add_iter(w, 101, 100, 20, 0);
    add_iter(w, 102, 200, 30, 0);
    add_iter(w, 103, 300, 40, 0);
    add_iter(w, 104, 400, 50, 1);           /* warmup: filtered out */
    add_iter(w, 105, 400, 60, 0);
    add_iter(w, 106, 1000, 70, 0);
    add_kernel(w, 1, 0, 10, "step", 100, 0);    /* the capture holds GPU work */
    world_rules(w, "version: 1\nrules:\n" HEAD("variance", "iteration")
                   "    where: not warmup\n"
                   "    fail_when: cv(period) > 0.2 or max(period) / p50(period) > 3\n"
                   "    message: \"p50 {p50(period)} p90 {p90(period)} p95 {p95(period)} p99 {p99(period)} "
                   "mean {mean(period)} sd {stddev(period)} cv {cv(period)} min {min(period)} sum {sum(period)} "
                   "gpu p50 {p50(gpu_time)}\"\n");
    tg_rule_result *r = world_eval(w, NULL, "variance");
    /* periods of the 6 non-warmup rows: null, 100, 200, 300, 400, 1000 (null skipped, n = 5) */
    assert_int_equal(r->count, 6);
    assert_float_equal(value_of(r, "p50_period_ns")->u.f, 300, 1e-9);
    assert_float_equal(value_of(r, "p90_period_ns")->u.f, 760, 1e-9);   /* rank 3.6: 400 + 0.6 * 600 */
    assert_float_equal(value_of(r, "p95_period_ns")->u.f, 880, 1e-9);
    assert_float_equal(value_of(r, "p99_period_ns")->u.f, 976, 1e-9);
    assert_float_equal(value_of(r, "mean_period_ns")->u.f, 400, 1e-9);
    /* population variance: (300^2 + 200^2 + 100^2 + 0 + 600^2) / 5 = 100000 */
    assert_float_equal(value_of(r, "stddev_period_ns")->u.f, sqrt(100000.0), 1e-9);
    assert_float_equal(value_of(r, "cv_period")->u.f, sqrt(100000.0) / 400, 1e-12);
    assert_int_equal(value_of(r, "min_period_ns")->u.i, 100);
    assert_int_equal(value_of(r, "max_period_ns")->u.i, 1000);
    assert_int_equal(value_of(r, "sum_period_ns")->u.i, 2000);
    /* gpu_time of the 6 rows: 10 20 30 40 60 70 -> p50 at rank 2.5 = 35 */
    assert_float_equal(value_of(r, "p50_gpu_time_ns")->u.f, 35, 1e-9);
    assert_int_equal(r->verdict, TG_V_FAIL);   /* cv 0.79 */
    assert_string_equal(r->message, "p50 300 ns p90 760 ns p95 880 ns p99 976 ns mean 400 ns sd 316 ns cv 0.791 "
                                    "min 100 ns sum 2 us gpu p50 35 ns");
    /* default evidence: the first aggregate's field, descending */
    assert_int_equal(r->n_evidence, 6);
    assert_int_equal(r->evidence[0].rowid, 106);
    assert_int_equal(r->evidence[1].rowid, 105);
    assert_int_equal(r->evidence[5].rowid, 100);     /* null period last */
    assert_string_equal(r->evidence[0].table, "NVTX_EVENTS");
    world_free(w);
}

static void test_nulls_and_ratio(void **state)
{
    (void)state;
    world *w = world_new();
    add_kernel(w, 1, 100, 10, "gemm", 5000, 0);
    add_kernel(w, 2, 200, 10, "gemm", TG_NULL_I64, 0);
    add_kernel(w, 3, 300, 10, "ncclAllReduce", 20000, 0)->nccl = 1;
    add_kernel(w, 4, 400, 10, "gemm", 30000, 0);
    world_rules(w, "version: 1\nrules:\n" HEAD("q", "kernel")
                   "    fail_when: ratio(queue > 10us) >= 50% and count(queue == null) == 1\n"
                   "    message: \"{ratio(queue > 10us)} slow, mean {mean(queue)}, {count(queue == null)} unmatched, "
                   "{ratio(nccl)} nccl\"\n"
                   HEAD("fast", "kernel")
                   "    where: queue < 10us\n"
                   "    fail_when: count > 0\n"
                   HEAD("none", "kernel")
                   "    where: duration > 1s\n"
                   "    fail_when: mean(queue) > 1ms or not (max(queue) != null)\n");
    tg_rule_result *r = world_eval(w, NULL, "q");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_float_equal(value_of(r, "ratio_queue_10us")->u.f, 0.5, 1e-12);
    assert_int_equal(value_of(r, "ratio_queue_10us")->unit, TG_UNIT_RATIO);
    assert_float_equal(value_of(r, "mean_queue_ns")->u.f, 55000.0 / 3, 1e-9);
    assert_int_equal(value_of(r, "count_queue_null")->u.i, 1);
    assert_string_equal(r->message, "50% slow, mean 18.3 us, 1 unmatched, 25% nccl");
    /* a comparison with null is false: the unmatched kernel is not "fast" */
    tg_rule_result *fast = &w->result.results[1];
    assert_int_equal(fast->count, 1);
    assert_int_equal(fast->evidence[0].rowid, 1);
    /* aggregates over no rows are null; fail_when on null is a pass */
    tg_rule_result *none = &w->result.results[2];
    assert_int_equal(none->count, 0);
    assert_int_equal(value_of(none, "mean_queue_ns")->type, TG_TY_NULL);
    assert_int_equal(none->verdict, TG_V_FAIL);   /* not (null != null): is-null tests see the null */
    assert_string_equal(none->message, "0 matching kernel rows");
    world_free(w);
}

static void test_strings_and_shared_pass(void **state)
{
    (void)state;
    world *w = world_new();
    add_api(w, 1, 0, 10, "cudaStreamSynchronize");
    add_api(w, 2, 20, 30, "cuCtxSynchronize");
    add_api(w, 3, 60, 5, "cudaLaunchKernel");
    add_api(w, 4, 70, 40, "cudaStreamSynchronize");
    add_api(w, 5, 120, 1, "cuStreamSynchronize");
    w->model.facts.steady_iterations = 2;
    world_rules(w, "version: 1\nlists:\n  blocking: [cudaStreamSynchronize, cuCtxSynchronize, cuStreamSynchronize]\n"
                   "rules:\n" HEAD("in-list", "api")
                   "    where: name in blocking\n"
                   "    fail_when: count / trace.steady_iterations > 1\n"
                   "    message: \"{count / trace.steady_iterations} per iteration\"\n"
                   HEAD("regex", "api")
                   "    where: name matches \"^cu(da)?Stream\" and not (name startswith \"cuda\")\n"
                   "    fail_when: count > 0\n"
                   HEAD("contains", "api")
                   "    where: name contains \"Sync\" and name != \"cuCtxSynchronize\" and name != \"absent\"\n"
                   "    fail_when: sum(duration) > 50ns\n"
                   HEAD("absent", "api")
                   "    where: name == \"cudaDeviceSynchronize\" or \"nope\" == name\n"
                   "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "in-list");
    assert_int_equal(r->count, 4);
    assert_int_equal(r->verdict, TG_V_FAIL);                 /* 4 / 2 = 2 > 1 */
    assert_string_equal(r->message, "2 per iteration");
    assert_int_equal(value_of(r, "trace_steady_iterations")->u.i, 2);
    assert_int_equal(w->result.results[1].count, 1);         /* cuStreamSynchronize */
    assert_int_equal(w->result.results[1].evidence[0].rowid, 5);
    assert_int_equal(w->result.results[2].count, 3);         /* 10 + 40 + 1 = 51 ns */
    assert_int_equal(w->result.results[2].verdict, TG_V_FAIL);
    assert_int_equal(w->result.results[3].count, 0);         /* literals absent from the pool */
    assert_int_equal(w->result.results[3].verdict, TG_V_PASS);
    /* evidence of an api rule: the runtime table */
    assert_string_equal(r->evidence[0].table, "CUPTI_ACTIVITY_KIND_RUNTIME");
    assert_int_equal(r->evidence[0].rowid, 4);               /* longest first */
    assert_non_null(strstr(r->reproduce, "FROM tg_api r WHERE (r.\"name\" IN ('cudaStreamSynchronize', "
                                         "'cuCtxSynchronize', 'cuStreamSynchronize'))) SELECT count(*) AS count, "
                                         "(SELECT \"steady_iterations\" FROM tg_trace) AS trace_steady_iterations"));
    assert_non_null(strstr(r->reproduce, "FROM tg_api WHERE rowid IN (4, 2, 1, 5) "));
    /* string tests: REGEXP, a prefix, a substring */
    assert_non_null(strstr(w->result.results[1].reproduce, "WHERE ((r.\"name\" REGEXP '^cu(da)?Stream') AND NOT "
                                                           "coalesce((substr(r.\"name\", 1, 4) = 'cuda'), 0))"));
    assert_non_null(strstr(w->result.results[2].reproduce, "(instr(r.\"name\", 'Sync') > 0)"));
    world_free(w);
}

/* device.FIELD reads the device row of each copy's own device; a copy on
** a device the model does not know reads null (and so never matches). */
static void test_device_ref(void **state)
{
    (void)state;
    world *w = world_new();
    add_memcpy(w, 1, 1000, 500, 4096, "HtoD", "cudaMemcpyAsync", 0)->device = 0;
    add_memcpy(w, 2, 2000, 300, 8192, "DtoH", "cudaMemcpyAsync", 0)->device = 0;
    add_memcpy(w, 3, 3000, 200, 64, "HtoD", "cudaMemcpyAsync", 0)->device = 1;
    add_memcpy(w, 4, 4000, 900, 64, "HtoD", "cudaMemcpyAsync", 0)->device = 7;
    w->devices[0] = (tg_device){.rowid = -1, .device = 0, .copy_frac_steady = 0.9, .copy_time_steady = 900};
    w->devices[1] = (tg_device){.rowid = -1, .device = 1, .copy_frac_steady = 0.1, .copy_time_steady = 10};
    w->model.n_devices = 2;
    world_rules(w, "version: 1\nrules:\n" HEAD("copy-bound", "memcpy")
                   "    where: device.copy_frac_steady > 50%\n"
                   "    fail_when: count > 0\n"
                   "    message: \"{count} copies on devices copying {max(device.copy_frac_steady)} of the time\"\n"
                   HEAD("unknown-device", "memcpy")
                   "    where: device.copy_frac_steady == null\n"
                   "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "copy-bound");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->count, 2);
    assert_string_equal(r->message, "2 copies on devices copying 90% of the time");
    r = world_eval(w, NULL, "unknown-device");
    assert_int_equal(r->count, 1);
    assert_int_equal(r->evidence[0].rowid, 4);
    world_free(w);
}

static void test_missing_data(void **state)
{
    (void)state;
    world *w = world_new();
    five_copies(w);
    w->trace.has_table[TG_TABLE_RUNTIME] = false;
    world_rules(w, sync_memcpy);
    tg_eval_opts skip = {.missing = TG_MISSING_SKIP};
    tg_rule_result *r = world_eval(w, &skip, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_SKIP);
    assert_true(r->missing_data);
    assert_non_null(strstr(r->message, "sync-memcpy"));
    assert_non_null(strstr(r->message, "CUPTI_ACTIVITY_KIND_RUNTIME"));
    /* the copies are there, so CUDA was traced: never "record them with
    ** nsys profile -t cuda" (issue 32), the account info gives */
    assert_string_equal(r->message, "rule sync-memcpy needs CUDA API calls, but the capture has no table "
                        "CUPTI_ACTIVITY_KIND_RUNTIME while the capture holds 5 GPU operations (kernels, copies, "
                        "memsets): CUDA was traced, so the CUDA API calls were recorded and then lost, or left out "
                        "by the exporter");
    assert_int_equal(r->count, 0);
    tg_eval_opts fail = {.missing = TG_MISSING_FAIL};
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_true(r->missing_data);
    /* a table that is present but empty is "no such events": a pass */
    w->trace.has_table[TG_TABLE_RUNTIME] = true;
    w->trace.n_memcpys = 0;
    add_api(w, 21, 100, 10, "cudaLaunchKernel");   /* other events were recorded */
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_false(r->missing_data);
    /* ... but a capture without any event has nothing to check: missing data */
    w->trace.n_apis = 0;
    w->trace.n_api_rows = 0;
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_true(r->missing_data);
    assert_non_null(strstr(r->message, "no events at all"));
    r = world_eval(w, &skip, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_SKIP);
    world_free(w);

    /* the API table present but empty while copies are recorded: the calls
    ** were not captured, the copies' api_sync says nothing: missing data */
    w = world_new();
    five_copies(w);
    w->trace.n_api_rows = 0;
    world_rules(w, sync_memcpy);
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_true(r->missing_data);
    assert_non_null(strstr(r->message, "CUPTI_ACTIVITY_KIND_RUNTIME is empty while the capture holds 5 GPU operations"));
    assert_null(strstr(r->message, "record them with"));
    world_free(w);
}

/* Data the trace does not hold (docs/rules.md, "Missing data"): an op
** table emptied beside its calls, the API table empty on a Kineto trace
** (its own events and torch.profiler setting named, not nsys's), a field
** the format never fills, call sites without stacks. */
static void test_unrecorded_data(void **state)
{
    (void)state;
    tg_eval_opts fail = {.missing = TG_MISSING_FAIL};
    world *w = world_new();
    five_copies(w);
    w->trace.n_memcpys = 0;
    w->model.op_calls[TG_TABLE_MEMCPY] = 5;
    world_rules(w, sync_memcpy);
    tg_rule_result *r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_true(r->missing_data);
    assert_string_equal(r->message, "rule sync-memcpy reads CUDA memory copies, but table "
                        "CUPTI_ACTIVITY_KIND_MEMCPY is empty while table CUPTI_ACTIVITY_KIND_RUNTIME holds 5 calls "
                        "that launch them: CUDA was traced, so they were recorded and then lost, or left out by the "
                        "exporter");
    /* no copy calls either: a program that copied nothing */
    w->model.op_calls[TG_TABLE_MEMCPY] = 0;
    w->model.op_calls[TG_TABLE_KERNEL] = 9;   /* kernels are not what the rule reads */
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_PASS);
    world_free(w);

    /* Kineto: copies without cuda_runtime events name the Kineto events and
    ** the torch.profiler setting */
    w = world_new();
    w->trace.format = TG_FORMAT_KINETO;
    five_copies(w);
    w->trace.n_api_rows = 0;
    world_rules(w, sync_memcpy);
    r = world_eval(w, &fail, "sync-memcpy");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_string_equal(r->message, "rule sync-memcpy reads the calls that launched GPU work, but the trace holds no "
                        "Kineto cuda_runtime/cuda_driver events while the capture holds 0 kernels, 5 copies and 0 "
                        "memsets: the CUDA API calls were not recorded; record them with "
                        "'torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])'");
    world_free(w);

    /* a return code a Kineto trace never records; the call's name it does */
    w = world_new();
    w->trace.format = TG_FORMAT_KINETO;
    add_api(w, 1, 0, 10, "cudaMalloc")->return_value = -1;
    world_rules(w, "version: 1\nrules:\n" HEAD("failed", "api") "    where: return_value != 0\n"
                   "    fail_when: count > 0\n" HEAD("mallocs", "api") "    where: name == \"cudaMalloc\"\n"
                   "    fail_when: count > 5\n    evidence: {columns: [name, return_value]}\n");
    r = world_eval(w, &fail, "failed");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_true(r->missing_data);
    assert_string_equal(r->message, "rule failed reads api.return_value, which a PyTorch profiler (Kineto) JSON "
                        "trace never records (the PyTorch profiler does not record return codes); record the run "
                        "with 'nsys profile -t cuda'");
    r = world_eval(w, &fail, "mallocs");   /* return_value only in the evidence */
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_int_equal(r->count, 1);
    world_free(w);

    /* call sites: without CUDA_CALLCHAINS, or with it read and empty */
    w = world_new();
    five_copies(w);
    w->trace.has_table[TG_TABLE_CALLCHAINS] = false;
    world_rules(w, "version: 1\nrules:\n" HEAD("from-step", "memcpy") "    where: call_site == \"step\"\n"
                   "    fail_when: count > 0\n" HEAD("grouped", "memcpy") "    where: api_sync\n"
                   "    fail_when: count > 0\n    evidence: {group_by: [call_site], columns: [{n: count}]}\n");
    r = world_eval(w, &fail, "from-step");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_string_equal(r->message, "rule from-step reads memcpy.call_site, which needs CUDA call stacks, but the "
                        "capture has no table CUDA_CALLCHAINS; record them with 'nsys profile --cudabacktrace=all "
                        "-s cpu'");
    /* every recording setting is a command alone: no prose aside inside the quote */
    for (int t = 0; t < TG_TABLE_COUNT; t++) {
        assert_null(strstr(tg_table_option[t], " ("));
        assert_null(strstr(tg_table_torch_option[t], " ("));
    }
    r = world_eval(w, &fail, "grouped");   /* grouped by it: the verdict does not read it */
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->count, 4);
    w->trace.has_table[TG_TABLE_CALLCHAINS] = true;
    w->trace.table_name[TG_TABLE_CALLCHAINS] = "CUDA_CALLCHAINS";
    w->trace.host_loaded = TG_HOST_STACKS;
    r = world_eval(w, &fail, "from-step");
    assert_int_equal(r->verdict, TG_V_ERROR);
    assert_non_null(strstr(r->message, "but table CUDA_CALLCHAINS is empty; record them with"));
    world_free(w);
}

static const char *const step_rule =
    "version: 1\nrules:\n" HEAD("step", "iteration")
    "    where: not warmup\n"
    "    metric: p50(gpu_time)\n"
    "    samples: gpu_time\n"
    "    regression: {direction: higher_is_worse}\n"
    "    params: {min_change: 2%}\n"
    "    message: \"p50 {p50(gpu_time)} vs baseline {baseline.p50} ({baseline.change})\"\n";

static void test_regression_rule(void **state)
{
    (void)state;
    world *w = world_new();
    add_iter(w, 1, TG_NULL_I64, 1000, 1);
    add_iter(w, 2, 100, 2000, 0);
    add_iter(w, 3, 100, 4000, 0);
    add_iter(w, 4, 100, 3000, 0);
    add_memcpy(w, 1, 0, 10, 100, "HtoD", "cudaMemcpyAsync", 0);   /* the capture holds GPU work */
    world_rules(w, step_rule);
    tg_rule_result *r = world_eval(w, NULL, "step");
    assert_int_equal(r->verdict, TG_V_SKIP);
    assert_string_equal(r->message, "no baseline given");
    assert_int_equal(r->regression, 1);
    assert_string_equal(r->metric, "p50(gpu_time)");
    assert_float_equal(r->metric_value, 3000, 0);
    assert_int_equal(r->n_samples, 3);
    assert_float_equal(r->samples[0], 2000, 0);
    assert_float_equal(r->samples[2], 3000, 0);
    /* with a baseline: evaluated, baseline.STAT readable, verdict left to the baseline module */
    tg_baseline_cmp cmp = {.present = true, .value = 2500, .current = 3000, .change = 0.2};
    tg_eval_opts opts = {.has_baseline = true, .baselines = &cmp};
    r = world_eval(w, &opts, "step");
    assert_int_equal(r->verdict, TG_V_PASS);
    assert_string_equal(r->message, "p50 3 us vs baseline 2.5 us (20%)");
    assert_true(r->baseline.present);
    assert_float_equal(r->baseline.value, 2500, 0);
    assert_int_equal(r->n_evidence, 3);          /* cited for the regression report */
    assert_int_equal(r->evidence[0].rowid, 3);   /* largest gpu_time first */
    world_free(w);
}

static void test_disabled_and_order(void **state)
{
    (void)state;
    world *w = world_new();
    five_copies(w);
    world_rules(w, "version: 1\nrules:\n" HEAD("a", "memcpy") "    fail_when: count > 0\n"
                   HEAD("b", "memcpy") "    fail_when: count > 100\n    enabled: false\n"
                   HEAD("c", "kernel") "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "a");
    assert_int_equal(w->result.n_results, 2);
    assert_string_equal(w->result.results[1].rule, "c");
    assert_int_equal(r->count, 5);
    assert_int_equal(w->result.results[1].verdict, TG_V_PASS);
    assert_string_equal(w->result.file, "mem.sqlite");
    world_free(w);
}

/* api.return_value: a failed call is found; a call whose code was not
** recorded (null) is neither 0 nor anything else. */
static void test_return_value(void **state)
{
    (void)state;
    world *w = world_new();
    add_api(w, 1, 0, 10, "cudaMalloc");                      /* 0: success */
    add_api(w, 2, 20, 10, "cudaMalloc")->return_value = 2;   /* cudaErrorMemoryAllocation */
    add_api(w, 3, 40, 10, "cudaFree")->return_value = -1;    /* not recorded */
    world_rules(w, "version: 1\nrules:\n" HEAD("failed", "api")
                   "    where: return_value != 0\n"
                   "    fail_when: count > 0\n"
                   "    evidence: {columns: [name, return_value]}\n"
                   "    message: \"{count} failed, first code {min(return_value)}\"\n"
                   HEAD("unknown", "api")
                   "    where: return_value == null\n"
                   "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "failed");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->count, 1);
    assert_string_equal(r->message, "1 failed, first code 2");
    assert_int_equal(r->evidence[0].rowid, 2);
    assert_int_equal(field_of(&r->evidence[0], "return_value")->u.i, 2);
    assert_int_equal(w->result.results[1].count, 1);
    assert_int_equal(w->result.results[1].evidence[0].rowid, 3);
    world_free(w);
}

/* Macros used many times share one compiled tree, computed once per row
** (and once per aggregate evaluation): the values are those of the
** expanded rule, so no row reads another row's value. Kernels of 1..6 us;
** long: rows 3-6, big: rows 3, 4, 6. */
static void test_shared_macros(void **state)
{
    (void)state;
    world *w = world_new();
    static const char *const names[] = {"a", "b", "gemm", "gemm", "c", "gemm"};
    for (int i = 0; i < 6; i++) add_kernel(w, i + 1, 10000 * i, 1000 * (i + 1), names[i], 0, 0);
    world_rules(w, "version: 1\nmacros:\n"
                   "  long: duration > 2500ns\n"
                   "  big: long and name == \"gemm\"\n"
                   "  either: big or big or long or long\n"
                   "  twice: duration * 2\n"
                   "  many: count > 3\n"
                   "rules:\n" HEAD("shared", "kernel")
                   "    where: either and (big or not big) and twice + twice > 10us\n"
                   "    fail_when: many and many and count(big) == 3\n"
                   "    message: \"{count} long, {count(big)} big, {sum(twice)} doubled\"\n");
    const tg_rule *rule = &w->rs->rules[0];
    /* one shared tree per macro and clause: where (long, big, either,
    ** twice), fail_when (many; long and big inside count), the two
    ** placeholders (long and big; twice) */
    assert_int_equal(rule->n_memos, 10);
    tg_rule_result *r = world_eval(w, NULL, "shared");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->count, 4);
    assert_int_equal(value_of(r, "count_big")->u.i, 3);
    assert_int_equal(value_of(r, "sum_twice_ns")->u.i, 2 * (3000 + 4000 + 5000 + 6000));
    assert_int_equal(r->n_evidence, 4);
    /* the reproduce SQL spells every use out */
    assert_non_null(strstr(r->reproduce, "(r.\"duration\" > 2500)"));
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_memcpy),
        cmocka_unit_test(test_pass_and_no_rows),
        cmocka_unit_test(test_iteration_statistics),
        cmocka_unit_test(test_nulls_and_ratio),
        cmocka_unit_test(test_strings_and_shared_pass),
        cmocka_unit_test(test_missing_data),
        cmocka_unit_test(test_unrecorded_data),
        cmocka_unit_test(test_regression_rule),
        cmocka_unit_test(test_disabled_and_order),
        cmocka_unit_test(test_return_value),
        cmocka_unit_test(test_device_ref),
        cmocka_unit_test(test_shared_macros),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
