/*
** Evidence: order and limit (streaming top-N), default order, the export
** table as named in the file, derived rows citing the export rows behind
** them (a gap its bounding ops, a device its first and last op, each
** entry keeping the cited row's span apart from the interval), and the
** reproduce query: the values over the rows `where` admits, compiled
** from the rule, then the cited rows or groups (eval_sql.c; what its SQL
** computes is checked against the model on real exports by
** tests/unit/model/test_sql.c and tests/corpus/test_reproduce_corpus.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"
#include "rules/expr.h"

static void ten_copies(world *w)
{
    /* durations 30, 10, 50, 20, 40, 50, ... rowids 1..10 */
    static const int64_t dur[] = {30, 10, 50, 20, 40, 50, 5, 45, 15, 25};
    for (int i = 0; i < 10; i++) add_memcpy(w, i + 1, 100 * i, dur[i], 1000 * (10 - i), "HtoD", "cudaMemcpy", 1);
}

static void test_order_and_limit(void **state)
{
    (void)state;
    world *w = world_new();
    ten_copies(w);
    world_rules(w, "version: 1\nrules:\n"
                   HEAD("top3", "memcpy") "    fail_when: count > 0\n    evidence: {order_by: duration desc, limit: 3}\n"
                   HEAD("asc", "memcpy") "    fail_when: count > 0\n    evidence: {order_by: bytes, limit: 2, columns: [bytes]}\n"
                   HEAD("none", "memcpy") "    fail_when: count > 0\n    evidence: {limit: 0}\n"
                   HEAD("dflt", "memcpy") "    fail_when: max(bytes) > 0\n"
                   HEAD("kind", "memcpy") "    fail_when: count > 0\n    evidence: {order_by: kind desc, limit: 2}\n");
    tg_eval_opts opts = {.evidence_limit = 4};
    tg_rule_result *r = world_eval(w, &opts, "top3");
    /* duration desc; the tie 50/50 keeps row order (rowid 3 before 6) */
    assert_int_equal(r->n_evidence, 3);
    assert_int_equal(r->evidence[0].rowid, 3);
    assert_int_equal(r->evidence[1].rowid, 6);
    assert_int_equal(r->evidence[2].rowid, 8);
    const char *rows = "FROM tg_memcpy WHERE rowid IN (3, 6, 8) ORDER BY \"duration\" DESC, start;";
    assert_string_equal(r->reproduce + strlen(r->reproduce) - strlen(rows), rows);
    assert_non_null(strstr(r->reproduce, "WITH matched AS (SELECT r.* FROM tg_memcpy r) SELECT count(*) AS count "
                                         "FROM matched;"));
    r = &w->result.results[1];
    assert_int_equal(r->n_evidence, 2);
    assert_int_equal(r->evidence[0].rowid, 10);      /* bytes asc: 1000 */
    assert_int_equal(r->evidence[1].rowid, 9);
    assert_int_equal(r->evidence[0].n_fields, 1);
    assert_string_equal(r->evidence[0].fields[0].name, "bytes");
    assert_int_equal(r->evidence[0].fields[0].value.unit, TG_UNIT_BYTES);
    r = &w->result.results[2];
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_int_equal(r->n_evidence, 0);
    /* no order_by: the first aggregate's field (bytes) desc; limit from opts */
    r = &w->result.results[3];
    assert_int_equal(r->n_evidence, 4);
    assert_int_equal(r->evidence[0].rowid, 1);
    assert_int_equal(r->evidence[3].rowid, 4);
    /* string order: all "HtoD", so row order */
    r = &w->result.results[4];
    assert_int_equal(r->evidence[0].rowid, 1);
    assert_int_equal(r->evidence[1].rowid, 2);
    world_free(w);
}

static void test_table_name(void **state)
{
    (void)state;
    world *w = world_new();
    ten_copies(w);
    w->trace.table_name[TG_TABLE_MEMCPY] = "CUPTI_ACTIVITY_KIND_MEMCPY_V2";
    world_rules(w, "version: 1\nrules:\n" HEAD("a", "memcpy") "    where: duration >= 50ns\n"
                   "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "a");
    assert_string_equal(r->evidence[0].table, "CUPTI_ACTIVITY_KIND_MEMCPY_V2");
    assert_non_null(strstr(r->reproduce, "FROM \"CUPTI_ACTIVITY_KIND_MEMCPY_V2\" m LEFT JOIN launch"));
    assert_non_null(strstr(r->reproduce, "FROM tg_memcpy r WHERE (r.\"duration\" >= 50)"));
    assert_non_null(strstr(r->reproduce, "FROM tg_memcpy WHERE rowid IN (3, 6) "));
    world_free(w);
}

static void test_gap_cites_bounding_ops(void **state)
{
    (void)state;
    world *w = world_new();
    w->gaps[0] = (tg_gap){.rowid = 7, .table = TG_TABLE_KERNEL, .prev_start = 400, .next_rowid = 3,
                          .next_table = TG_TABLE_MEMCPY,
                          .start = 1000, .end = 801000, .duration = 800000, .device = 0, .pid = 1,
                          .in_steady_state = 1};
    w->gaps[1] = (tg_gap){.rowid = 8, .table = TG_TABLE_KERNEL, .next_rowid = 9, .next_table = TG_TABLE_KERNEL,
                          .start = 900000, .end = 910000, .duration = 10000, .device = 0, .pid = 1,
                          .in_steady_state = 1};
    w->model.n_gaps = 2;
    world_rules(w, "version: 1\nrules:\n" HEAD("idle", "gap")
                   "    where: in_steady_state and duration >= params.min_gap\n"
                   "    params: {min_gap: 500us}\n"
                   "    fail_when: count > 0\n"
                   "    message: \"{count} idle gap of {max(duration)}\"\n");
    tg_rule_result *r = world_eval(w, NULL, "idle");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_string_equal(r->message, "1 idle gap of 800 us");
    assert_int_equal(r->n_evidence, 1);
    assert_string_equal(r->evidence[0].table, "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_int_equal(r->evidence[0].rowid, 7);
    assert_int_equal(r->evidence[0].start, 1000);
    assert_int_equal(r->evidence[0].end, 801000);
    assert_string_equal(field_of(&r->evidence[0], "next_table")->u.s, "CUPTI_ACTIVITY_KIND_MEMCPY");
    assert_int_equal(field_of(&r->evidence[0], "next_rowid")->u.i, 3);
    /* start..end is the gap; the cited kernel's own span is apart */
    assert_int_equal(r->evidence[0].interval, TG_INTERVAL_IDLE);
    assert_int_equal(r->evidence[0].row_start, 400);
    assert_int_equal(r->evidence[0].row_end, 1000);
    assert_string_equal(r->evidence[0].next_table, "CUPTI_ACTIVITY_KIND_MEMCPY");
    assert_int_equal(r->evidence[0].next_rowid, 3);
    assert_non_null(strstr(r->reproduce, "WITH matched AS (SELECT r.* FROM tg_gap r WHERE (r.\"in_steady_state\" AND "
                                         "(r.\"duration\" >= 500000 /* params.min_gap */))) SELECT count(*) AS count, "
                                         "max(matched.\"duration\") AS \"max_duration_ns\" FROM matched;"));
    assert_non_null(strstr(r->reproduce, "before_table, before_rowid, before_duration AS before_duration_ns, "
                                         "after_table, after_rowid FROM tg_gap WHERE (device, pid, start) IN "
                                         "(VALUES (0, 1, 1000)) ORDER BY"));
    world_free(w);
}

static void test_device_cites_first_and_last_op(void **state)
{
    (void)state;
    world *w = world_new();
    /* times of milliseconds: a window under 1 ms or of fewer than 3 ops is
    ** too little to judge (docs/rules.md) */
    add_kernel(w, 21, 1000000, 500000, "k", 1000, 0);
    add_kernel(w, 22, 5000000, 500000, "k", 1000, 1);       /* other device */
    add_kernel(w, 24, 5600000, 500000, "k", 1000, 1);
    add_kernel(w, 25, 6200000, 300000, "k", 1000, 1);
    add_kernel(w, 23, 9000000, 500000, "k", 1000, 0);
    add_memcpy(w, 31, 500000, 100000, 4, "HtoD", "cudaMemcpy", 1);   /* device 0 (zeroed), first op */
    w->devices[0] = (tg_device){.rowid = -1, .device = 0, .name = wstr(w, "NVIDIA H200"), .start = 500000,
                                .end = 9500000, .span = 9000000, .busy_frac = 0.12, .busy_frac_steady = 0.12,
                                .kernels = 2, .nccl_overlap = NAN, .queue_p50 = 1000};
    w->devices[1] = (tg_device){.rowid = -1, .device = 1, .name = wstr(w, "NVIDIA H200"), .start = 5000000,
                                .end = 6500000, .span = 1500000, .busy_frac = 1.0, .busy_frac_steady = 1.0,
                                .kernels = 3, .nccl_overlap = NAN, .queue_p50 = 1000};
    w->model.n_devices = 2;
    world_rules(w, "version: 1\nrules:\n" HEAD("util", "device")
                   "    where: busy_frac_steady < 50% and nccl_overlap == null\n"
                   "    fail_when: count > 0\n"
                   "    message: \"{count} device busy {max(busy_frac_steady)}\"\n");
    tg_rule_result *r = world_eval(w, NULL, "util");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_string_equal(r->message, "1 device busy 12%");
    assert_int_equal(r->n_evidence, 1);
    assert_string_equal(r->evidence[0].table, "CUPTI_ACTIVITY_KIND_MEMCPY");
    assert_int_equal(r->evidence[0].rowid, 31);
    assert_int_equal(r->evidence[0].start, 500000);
    assert_int_equal(r->evidence[0].end, 9500000);
    assert_string_equal(field_of(&r->evidence[0], "last_table")->u.s, "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_int_equal(field_of(&r->evidence[0], "last_rowid")->u.i, 23);
    assert_string_equal(field_of(&r->evidence[0], "name")->u.s, "NVIDIA H200");
    assert_float_equal(field_of(&r->evidence[0], "busy_frac")->u.f, 0.12, 0);
    assert_int_equal(r->evidence[0].interval, TG_INTERVAL_DEVICE);   /* the device's window ... */
    assert_int_equal(r->evidence[0].row_start, 500000);              /* ... and its first op */
    assert_int_equal(r->evidence[0].row_end, 600000);
    assert_string_equal(r->evidence[0].next_table, "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_int_equal(r->evidence[0].next_rowid, 23);
    /* the where compiled: a null test, the values named as in the result */
    assert_non_null(strstr(r->reproduce, "FROM tg_device r WHERE ((r.\"busy_frac_steady\" < 0.5) AND "
                                         "(r.\"nccl_overlap\" IS NULL))) SELECT count(*) AS count, "
                                         "max(matched.\"busy_frac_steady\") AS \"max_busy_frac_steady\""));
    assert_non_null(strstr(r->reproduce, "first_table, first_rowid, last_table, last_rowid FROM tg_device "
                                         "WHERE device IN (0) ORDER BY"));
    world_free(w);
}

/* Grouped evidence: one row per (kind, api) with its own aggregates, the
** groups ordered by a column, limited, each citing its longest row; the
** aggregates only the columns use are not the rule's values. */
static void test_grouped(void **state)
{
    (void)state;
    world *w = world_new();
    add_memcpy(w, 1, 0, 100, 1000, "HtoD", "cudaMemcpy", 1);
    add_memcpy(w, 2, 200, 300, 3000, "HtoD", "cudaMemcpy", 1);
    add_memcpy(w, 3, 600, 50, 500, "DtoH", "cudaMemcpy", 1);
    add_memcpy(w, 4, 700, 400, 8000, "HtoD", "cudaMemcpyAsync", 0);
    add_memcpy(w, 5, 1200, 10, 10, "DtoD", "cudaMemcpy", 1);
    add_memcpy(w, 6, 1300, 20, 20, "DtoD", "cudaMemcpy", 1);
    add_memcpy(w, 7, 1400, 99, 99, "DtoD", "cudaMemcpy", 1);
    w->model.facts.steady_iterations = 2;
    world_rules(w, "version: 1\nrules:\n"
                   HEAD("by-kind", "memcpy")
                   "    fail_when: count > 0\n"
                   "    message: \"{count} copies\"\n"
                   "    evidence:\n"
                   "      group_by: [kind, api]\n"
                   "      columns: [count, sum(bytes), {per_iteration: sum(duration) / trace.steady_iterations},\n"
                   "                {gb_per_s: sum(bytes) / (sum(duration) / 1s) / 1GB}]\n"
                   "      order_by: sum_bytes desc\n"
                   "      limit: 3\n"
                   HEAD("default-order", "memcpy")
                   "    fail_when: count > 0\n"
                   "    evidence: {group_by: kind, order_by: kind asc}\n");
    tg_rule_result *r = world_eval(w, NULL, "by-kind");
    assert_int_equal(r->count, 7);
    /* values: count and the trace reference, not the columns' aggregates */
    assert_int_equal(r->n_values, 2);
    assert_string_equal(r->values[1].name, "trace_steady_iterations");
    assert_int_equal(r->n_evidence, 3);
    /* by bytes: HtoD/cudaMemcpy 4000, HtoD/cudaMemcpyAsync 8000, DtoD 129, DtoH 500 */
    const tg_evidence *e = &r->evidence[0];
    assert_int_equal(e->n_fields, 6);
    assert_string_equal(e->fields[0].name, "kind");
    assert_string_equal(e->fields[0].value.u.s, "HtoD");
    assert_string_equal(e->fields[1].name, "api");
    assert_string_equal(e->fields[1].value.u.s, "cudaMemcpyAsync");
    assert_string_equal(e->fields[2].name, "count");
    assert_int_equal(e->fields[2].value.u.i, 1);
    assert_int_equal(e->rowid, 4);
    e = &r->evidence[1];
    assert_string_equal(e->fields[1].value.u.s, "cudaMemcpy");
    assert_int_equal(e->fields[2].value.u.i, 2);
    assert_string_equal(e->fields[3].name, "sum_bytes");
    assert_int_equal(e->fields[3].value.u.i, 4000);
    assert_int_equal(e->fields[3].value.unit, TG_UNIT_BYTES);
    assert_string_equal(e->fields[4].name, "per_iteration");
    assert_float_equal(tg_value_num(e->fields[4].value), 200, 1e-9);   /* (100 + 300) / 2 */
    assert_int_equal(e->fields[4].value.unit, TG_UNIT_NS);
    assert_string_equal(e->fields[5].name, "gb_per_s");
    assert_float_equal(tg_value_num(e->fields[5].value), 10.0, 1e-9);   /* 4000 B in 400 ns */
    assert_int_equal(e->rowid, 2);                                      /* its longest copy */
    assert_int_equal(e->start, 200);
    assert_int_equal(e->end, 500);
    e = &r->evidence[2];
    assert_string_equal(e->fields[0].value.u.s, "DtoH");
    /* the groups in SQL: keys (api through the launch join) and every
    ** column, the trace value from the trace's table */
    assert_non_null(strstr(r->reproduce, "SELECT matched.\"kind\" AS \"kind\", matched.\"api\" AS \"api\", "
                                         "count(*) AS \"count\", coalesce(sum(matched.\"bytes\"), 0) AS \"sum_bytes\", "
                                         "(coalesce(sum(matched.\"duration\"), 0) * 1.0 / (SELECT \"steady_iterations\" "
                                         "FROM tg_trace)) AS \"per_iteration\""));
    assert_non_null(strstr(r->reproduce, "FROM matched GROUP BY matched.\"kind\", matched.\"api\" ORDER BY "
                                         "\"sum_bytes\" DESC LIMIT 3;"));
    assert_non_null(strstr(r->reproduce, "SELECT count(*) AS count, (SELECT \"steady_iterations\" FROM tg_trace) "
                                         "AS trace_steady_iterations FROM matched;"));
    /* the default column is the count; order_by a group_by field */
    r = &w->result.results[1];
    assert_int_equal(r->n_evidence, 3);
    assert_string_equal(r->evidence[0].fields[0].value.u.s, "DtoD");
    assert_string_equal(r->evidence[0].fields[1].name, "count");
    assert_int_equal(r->evidence[0].fields[1].value.u.i, 3);
    assert_int_equal(r->evidence[0].rowid, 7);
    assert_string_equal(r->evidence[2].fields[0].value.u.s, "HtoD");
    assert_non_null(strstr(r->reproduce, "SELECT matched.\"kind\" AS \"kind\", count(*) AS \"count\" FROM matched "
                                         "GROUP BY matched.\"kind\" ORDER BY \"kind\" LIMIT 3;"));
    world_free(w);
}

/* A rule reading a field with no SQL form (kernel.nvtx): the query says
** so; grouped evidence then falls back to a GROUP BY over the table, kinds
** by name, the cited keys, the groups' rows by rowid (few: exact; past
** 2000 rows, the window of their starts). */
static void test_grouped_without_sql_form(void **state)
{
    (void)state;
    world *w = world_new();
    add_kernel(w, 1, 0, 100, "gemm", 1000, 0);
    add_kernel(w, 2, 200, 300, "gemm", 1000, 0);
    add_kernel(w, 3, 600, 50, "relu", 1000, 0);
    world_rules(w, "version: 1\nrules:\n"
                   HEAD("by-name", "kernel")
                   "    where: nvtx == null\n"
                   "    fail_when: count > 0\n"
                   "    evidence: {group_by: [name], columns: [count]}\n"
                   HEAD("rows", "kernel")
                   "    where: nvtx == null\n"
                   "    fail_when: count > 0\n");
    tg_rule_result *r = world_eval(w, NULL, "by-name");
    assert_int_equal(r->n_evidence, 2);
    assert_non_null(strstr(r->reproduce, "WITH r AS (SELECT start, end, (SELECT value FROM StringIds WHERE id = "
                                         "demangledName) AS name FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid IN "
                                         "(1, 2, 3)) SELECT name, count(*) AS count"));
    r = &w->result.results[1];
    assert_non_null(strstr(r->reproduce, "/* the values of this finding are not reproduced: field kernel.nvtx has no "
                                         "SQL form (docs/evidence.md) */ SELECT rowid"));
    world_free(w);
}

/* A derived group_by field (iteration, by the launching call's start)
** groups in SQL too. */
static void test_grouped_derived_key(void **state)
{
    (void)state;
    world *w = world_new();
    add_api(w, 1, 0, 10, "cudaMalloc")->iteration = 0;
    add_api(w, 2, 20, 30, "cudaMalloc")->iteration = 1;
    add_api(w, 3, 60, 5, "cudaFree")->iteration = 1;
    world_rules(w, "version: 1\nrules:\n" HEAD("per-iteration", "api")
                   "    fail_when: count > 0\n"
                   "    evidence: {group_by: [iteration], columns: [count, max(duration)]}\n");
    tg_rule_result *r = world_eval(w, NULL, "per-iteration");
    assert_int_equal(r->n_evidence, 2);
    assert_int_equal(r->evidence[0].fields[0].value.u.i, 1);      /* 2 calls first */
    assert_int_equal(r->evidence[0].rowid, 2);
    assert_non_null(strstr(r->reproduce, "SELECT matched.\"iteration\" AS \"iteration\", count(*) AS \"count\", "
                                         "max(matched.\"duration\") AS \"max_duration_ns\" FROM matched GROUP BY "
                                         "matched.\"iteration\" ORDER BY \"count\" DESC LIMIT 2;"));
    world_free(w);
}

/* More than 65,536 distinct keys: the rows of further keys pool in one
** last group whose keys read null, marked other_groups. */
static void test_grouped_overflow(void **state)
{
    (void)state;
    world *w = world_new();
    enum { N = 65540 };
    tg_kernel *k = calloc(N, sizeof *k);
    assert_non_null(k);
    int32_t name = wstr(w, "k");
    for (int i = 0; i < N; i++)
        k[i] = (tg_kernel){.rowid = i + 1, .start = i, .end = i + 10, .name = name, .short_name = name, .api = -1,
                           .api_name = TG_NO_STR, .tid = -1, .queue = TG_NULL_I64, .nvtx = TG_NO_STR,
                           .iteration = -1};
    w->trace.kernels = k;
    w->trace.n_kernels = N;
    world_rules(w, "version: 1\nrules:\n" HEAD("by-start", "kernel")
                   "    fail_when: count > 0\n"
                   "    evidence: {group_by: [start], columns: [count], limit: 2}\n");
    tg_rule_result *r = world_eval(w, NULL, "by-start");
    assert_int_equal(r->count, N);
    assert_int_equal(r->n_evidence, 2);
    const tg_evidence *e = &r->evidence[0];           /* the pool: 4 rows */
    assert_int_equal(e->n_fields, 3);
    assert_int_equal(e->fields[0].value.type, TG_TY_NULL);
    assert_int_equal(e->fields[1].value.u.i, 4);
    assert_string_equal(e->fields[2].name, "other_groups");
    assert_true(e->fields[2].value.u.b);
    assert_int_equal(e->rowid, 65537);                  /* its first row (equal durations) */
    assert_int_equal(r->evidence[1].fields[1].value.u.i, 1);
    /* a pooled group has no SQL form: the query lists the cited rows */
    assert_non_null(strstr(r->reproduce, "WHERE rowid IN (1, 65537)"));
    world_free(w);
    free(k);
}

static void test_trace_rule_has_no_rows(void **state)
{
    (void)state;
    world *w = world_new();
    w->model.facts.duration = 10000000000;
    w->model.facts.blocked_time = 2000000000;
    world_rules(w, "version: 1\nrules:\n" HEAD("blocked", "trace")
                   "    fail_when: max(blocked_time) / max(duration) > 10%\n"
                   "    message: \"blocked {max(blocked_time)} of {max(duration)} ({max(blocked_time) / max(duration) * 100}%)\"\n");
    tg_rule_result *r = world_eval(w, NULL, "blocked");
    assert_int_equal(r->verdict, TG_V_FAIL);
    assert_string_equal(r->message, "blocked 2 s of 10 s (20%)");
    assert_int_equal(r->n_evidence, 0);
    /* no rows to cite, but the values: from the trace's own view */
    assert_non_null(strstr(r->reproduce, "WITH matched AS (SELECT r.* FROM tg_trace r) SELECT count(*) AS count, "
                                         "max(matched.\"blocked_time\") AS \"max_blocked_time_ns\", "
                                         "max(matched.\"duration\") AS \"max_duration_ns\" FROM matched;"));
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_limit),
        cmocka_unit_test(test_table_name),
        cmocka_unit_test(test_gap_cites_bounding_ops),
        cmocka_unit_test(test_device_cites_first_and_last_op),
        cmocka_unit_test(test_trace_rule_has_no_rows),
        cmocka_unit_test(test_grouped),
        cmocka_unit_test(test_grouped_derived_key),
        cmocka_unit_test(test_grouped_without_sql_form),
        cmocka_unit_test(test_grouped_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
