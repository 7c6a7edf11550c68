/*
** The rule compiler, on whole rule files: the first example of the language (data/design-example.yaml) and a
** team's custom file (tests/unit/rules/data), overrides and appends,
** directories, typed trees (fields bound, units folded, params folded),
** value names, --set, lint warnings and `explain`.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/expr.h"
#include "tg_config.h"

static char design_path[4096], custom_path[4096];

static int setup_paths(void **state)
{
    (void)state;
    const char *root = getenv("TG_SOURCE_ROOT");
    if (!root) root = TG_SOURCE_ROOT;
    snprintf(design_path, sizeof design_path, "%s/tests/unit/rules/data/design-example.yaml", root);
    snprintf(custom_path, sizeof custom_path, "%s/tests/unit/rules/data/custom.yaml", root);
    return 0;
}

static void dump(const tg_diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        char *s = tg_diag_format(&d->msgs[i], false);
        print_message("%s\n", s ? s : "?");
        free(s);
    }
}

static tg_ruleset *load_ok(const char *const *paths, size_t n, const tg_param_set *sets, size_t n_sets)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_ruleset *rs = tg_rules_load(paths, n, sets, n_sets, &d);
    if (!rs) dump(&d);
    assert_non_null(rs);
    assert_int_equal(d.n_errors, 0);
    tg_diag_clear(&d);
    return rs;
}

static tg_ruleset *text_ok(const char *text)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"t.yaml", text};
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
    if (!rs) dump(&d);
    assert_non_null(rs);
    tg_diag_clear(&d);
    return rs;
}

/* The first error's text when loading fails, "" when it loads. */
static char *text_error(const char *text, const tg_param_set *sets, size_t n_sets)
{
    static char buf[1024];
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"t.yaml", text};
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, sets, n_sets, &d);
    snprintf(buf, sizeof buf, "%s", d.n_errors && d.n ? d.msgs[0].text : "");
    assert_true((rs == NULL) == (d.n_errors > 0));
    tg_rules_free(rs);
    tg_diag_clear(&d);
    return buf;
}

static const tg_rule *rule(const tg_ruleset *rs, const char *id)
{
    long i = tg_rules_find(rs, id);
    assert_true(i >= 0);
    return &rs->rules[i];
}

static void test_design_example(void **state)
{
    (void)state;
    const char *paths[] = {design_path};
    tg_ruleset *rs = load_ok(paths, 1, NULL, 0);
    assert_int_equal(tg_rules_count(rs), 1);
    const tg_rule_info *info = tg_rules_info(rs, 0);
    assert_string_equal(info->id, "sync-memcpy");
    assert_string_equal(info->title, "Synchronous memcpy blocks the host");
    assert_int_equal(info->severity, TG_SEV_ERROR);
    assert_string_equal(info->source, "memcpy");
    assert_int_equal(info->n_tags, 2);
    assert_string_equal(info->tags[1], "host-sync");
    assert_int_equal(info->line, 9);
    assert_true(info->enabled);
    const tg_rule *r = rule(rs, "sync-memcpy");
    /* where: api_sync and not (kind == "HtoD" and bytes <= 64KB) */
    const tg_expr *w = r->where;
    assert_int_equal(w->op, TG_N_AND);
    assert_int_equal(w->a->op, TG_N_FIELD);
    assert_string_equal(w->a->field->name, "api_sync");
    assert_int_equal(w->b->op, TG_N_NOT);
    const tg_expr *le = w->b->a->b;
    assert_int_equal(le->op, TG_N_LE);
    assert_int_equal(le->b->op, TG_N_CONST);
    assert_int_equal(le->b->k.u.i, 64000);
    assert_int_equal(le->b->unit, TG_UNIT_BYTES);
    const tg_expr *eq = w->b->a->a;
    assert_int_equal(eq->op, TG_N_EQ);
    assert_true(eq->slot >= 0);            /* string literal resolved per evaluation */
    assert_int_equal(r->n_aggs, 2);
    assert_string_equal(r->aggs[0].value_name, "count");
    assert_string_equal(r->aggs[1].value_name, "sum_duration_ns");
    assert_int_equal(r->aggs[1].unit, TG_UNIT_NS);
    assert_ptr_equal(r->order_field, tg_field_find(TG_SRC_MEMCPY, "duration"));
    assert_true(r->order_desc);
    assert_int_equal(r->evidence_limit, 10);
    assert_int_equal(r->n_message, 3);      /* {count} text {sum(duration)} */
    assert_string_equal(r->message[1].text, " synchronous copies blocked the host for ");
    tg_rules_free(rs);
}

static void test_custom_over_design(void **state)
{
    (void)state;
    const char *paths[] = {design_path, custom_path};
    tg_ruleset *rs = load_ok(paths, 2, NULL, 0);
    assert_int_equal(tg_rules_count(rs), 4);
    const tg_rule *sm = rule(rs, "sync-memcpy");
    assert_int_equal(sm->info.severity, TG_SEV_WARNING);      /* replaced */
    assert_int_equal(sm->info.n_tags, 3);                      /* appended */
    assert_string_equal(sm->info.tags[2], "team-tuned");
    assert_int_equal(sm->where->op, TG_N_AND);                 /* where and (bytes > 1KB) */
    assert_int_equal(sm->where->b->op, TG_N_GT);
    assert_int_equal(sm->where->b->b->k.u.i, 1000);
    assert_non_null(strstr(sm->where_text, "bytes > 1KB"));
    assert_non_null(strstr(sm->info.file, "design-example.yaml"));   /* still defined there */
    const tg_rule *big = rule(rs, "large-dtoh-copy");
    /* the macros expand: kind == "DtoH" and bytes >= 1MiB and (iteration != null and steady) */
    assert_int_equal(big->where->a->b->op, TG_N_GE);
    assert_int_equal(big->where->a->b->b->k.u.i, 1048576);
    assert_int_equal(big->where->b->a->op, TG_N_NOT_NULL);
    /* params fold into the comparison */
    assert_int_equal(big->fail_when->b->op, TG_N_CONST);
    assert_string_equal(big->fail_when->b->param, "max_total");
    assert_int_equal(big->fail_when->b->k.u.i, 10000000);
    assert_int_equal(big->evidence_limit, 5);
    assert_int_equal(big->n_columns, 4);
    assert_string_equal(big->columns[3]->name, "iteration");
    const tg_rule *gemm = rule(rs, "slow-gemm");
    assert_int_equal(gemm->where->b->op, TG_N_MATCHES);
    assert_non_null(gemm->where->b->re);
    assert_string_equal(gemm->aggs[0].value_name, "p99_duration_ns");
    assert_string_equal(gemm->aggs[1].value_name, "cv_duration");
    assert_int_equal(gemm->aggs[1].unit, TG_UNIT_NONE);
    assert_string_equal(gemm->aggs[2].value_name, "p50_duration_ns");
    /* p50 and p99 of the same argument share the kept values */
    assert_int_equal(gemm->aggs[0].collect, gemm->aggs[2].collect);
    assert_int_equal(gemm->n_collect, 1);
    const tg_rule *step = rule(rs, "step-gpu-time");
    assert_int_equal(step->info.regression, 1);
    assert_string_equal(step->info.metric, "p50(gpu_time)");
    assert_string_equal(step->info.samples, "gpu_time");
    assert_null(step->fail_when);
    assert_float_equal(tg_rules_param(rs, "step-gpu-time", "min_change", -1), 0.02, 1e-12);
    assert_float_equal(tg_rules_param(rs, "step-gpu-time", "nope", -1), -1, 0);
    /* baseline.p50 takes the metric's unit */
    const tg_expr *bl = step->message[3].expr;
    assert_int_equal(bl->op, TG_N_BASELINE);
    assert_int_equal(bl->unit, TG_UNIT_NS);
    tg_rules_free(rs);
}

static void test_override_needs_earlier_rule(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    const char *paths[] = {custom_path, design_path};
    assert_null(tg_rules_load(paths, 2, NULL, 0, &d));
    assert_int_equal(d.n_errors, 1);
    assert_non_null(strstr(d.msgs[0].text, "override of unknown rule 'sync-memcpy'"));
    assert_int_equal(d.msgs[0].pos.line, 49);
    tg_diag_clear(&d);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/tg_rules_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[4200], b[4200], c[4200];
    snprintf(a, sizeof a, "%s/20-team.yml", dir);
    snprintf(b, sizeof b, "%s/10-base.yaml", dir);
    snprintf(c, sizeof c, "%s/notes.txt", dir);
    write_file(a, "version: 1\noverride:\n  - id: base\n    enabled: false\n");
    write_file(b, "version: 1\nrules:\n  - id: base\n    title: t\n    severity: info\n    source: gap\n"
                  "    fail_when: max(duration) >= 500ms\n");
    write_file(c, "not yaml at all: [\n");
    const char *paths[] = {dir};
    tg_ruleset *rs = load_ok(paths, 1, NULL, 0);
    assert_int_equal(tg_rules_count(rs), 1);
    assert_false(tg_rules_info(rs, 0)->enabled);
    tg_rules_free(rs);
    unlink(a);
    unlink(b);
    unlink(c);
    rmdir(dir);
    tg_diag d;
    tg_diag_init(&d);
    const char *missing[] = {"/nonexistent/rules.yaml"};
    assert_null(tg_rules_load(missing, 1, NULL, 0, &d));
    assert_non_null(strstr(d.msgs[0].text, "cannot open"));
    tg_diag_clear(&d);
}

#define HEAD "version: 1\nrules:\n  - id: r\n    title: t\n    severity: error\n"

static void test_types_and_folding(void **state)
{
    (void)state;
    tg_ruleset *rs = text_ok(HEAD "    source: memcpy\n"
                             "    where: bytes > 1KB * 64 and duration > 0 and duration >= params.gap / 2\n"
                             "    params: {gap: 1ms}\n"
                             "    fail_when: count / trace.steady_iterations > 1 and ratio(api_sync) > 20%\n");
    const tg_rule *r = rule(rs, "r");
    const tg_expr *gt = r->where->a->a;
    assert_int_equal(gt->b->op, TG_N_CONST);
    assert_int_equal(gt->b->k.u.i, 64000);
    assert_int_equal(gt->b->unit, TG_UNIT_BYTES);
    const tg_expr *half = r->where->b->b;
    assert_int_equal(half->op, TG_N_CONST);
    assert_float_equal(tg_value_num(half->k), 500000, 0);
    assert_int_equal(half->unit, TG_UNIT_NS);
    const tg_expr *div = r->fail_when->a->a;
    assert_int_equal(div->op, TG_N_DIV);
    assert_int_equal(div->type, TG_TY_FLOAT);
    assert_int_equal(div->b->op, TG_N_TRACE_REF);
    assert_int_equal(r->n_trace_refs, 1);
    assert_string_equal(r->aggs[1].value_name, "ratio_api_sync");
    assert_int_equal(r->aggs[1].unit, TG_UNIT_RATIO);
    tg_rules_free(rs);

    /* ratio against a plain number is fine; constant conditions fold away */
    rs = text_ok(HEAD "    source: device\n    where: busy_frac < 0.5 and true\n"
                 "    fail_when: count > 0 or 1 > 2\n");
    r = rule(rs, "r");
    assert_int_equal(r->where->op, TG_N_LT);
    assert_int_equal(r->fail_when->op, TG_N_GT);
    tg_rules_free(rs);

    /* null tests and lists */
    rs = text_ok("version: 1\nlists:\n  sizes: [1KB, 64KB]\n  apis: [cudaMemcpy, cuMemcpyHtoD]\n"
                 "rules:\n  - id: r\n    title: t\n    severity: error\n    source: memcpy\n"
                 "    where: iteration == null and bytes in sizes and api not in apis\n"
                 "    fail_when: count > 0\n");
    r = rule(rs, "r");
    assert_int_equal(r->where->a->a->op, TG_N_IS_NULL);
    assert_int_equal(r->where->a->b->op, TG_N_IN);
    assert_int_equal(r->where->a->b->list[1].u.i, 64000);
    assert_int_equal(r->where->b->op, TG_N_NOT);
    assert_string_equal(r->where->b->a->list_name, "apis");
    tg_rules_free(rs);
}

/* The one comparison the folder and the evaluator share: NaN compares
** with nothing, and each operator reads the three-way order. */
static void test_comparison(void **state)
{
    (void)state;
    assert_false(tg_value_compare(TG_N_EQ, tg_float(NAN, TG_UNIT_NONE), tg_float(NAN, TG_UNIT_NONE)));
    assert_false(tg_value_compare(TG_N_LE, tg_float(NAN, TG_UNIT_NONE), tg_int(1, TG_UNIT_NONE)));
    assert_false(tg_value_compare(TG_N_NE, tg_null(), tg_int(1, TG_UNIT_NONE)));
    assert_true(tg_value_compare(TG_N_LT, tg_int(1, TG_UNIT_NONE), tg_float(1.5, TG_UNIT_NONE)));
    assert_true(tg_value_compare(TG_N_GE, tg_str("b"), tg_str("a")));
    assert_false(tg_value_compare(TG_N_EQ, tg_str("1"), tg_int(1, TG_UNIT_NONE)));
    bool ok;
    assert_int_equal(tg_num_order(2, 1, &ok), 1);
    assert_true(ok);
    tg_num_order(NAN, 1, &ok);
    assert_false(ok);
    static const struct { tg_node_kind op; bool lt, eq, gt; } ops[] = {
        {TG_N_EQ, 0, 1, 0}, {TG_N_NE, 1, 0, 1}, {TG_N_LT, 1, 0, 0},
        {TG_N_LE, 1, 1, 0}, {TG_N_GT, 0, 0, 1}, {TG_N_GE, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        assert_int_equal(tg_cmp_holds(ops[i].op, -1), ops[i].lt);
        assert_int_equal(tg_cmp_holds(ops[i].op, 0), ops[i].eq);
        assert_int_equal(tg_cmp_holds(ops[i].op, 1), ops[i].gt);
    }
}

/* A metric's unit is the compiler's typing of its expression: baselines
** record it and reports print the metric with it. */
static void test_metric_unit(void **state)
{
    (void)state;
    static const struct { const char *source, *metric; tg_unit unit; } cases[] = {
        {"iteration", "p50(period)", TG_UNIT_NS},
        {"iteration", "mean( gpu_time )", TG_UNIT_NS},
        {"iteration", "p50(period) / 2", TG_UNIT_NS},
        {"memcpy", "sum(bytes)", TG_UNIT_BYTES},
        {"memcpy", "ratio(api_sync)", TG_UNIT_RATIO},
        {"iteration", "cv(period)", TG_UNIT_NONE},
        {"iteration", "count", TG_UNIT_NONE},
        {"iteration", "p90(period) / p50(period)", TG_UNIT_NONE},
        {"memcpy", "sum(bytes) / sum(duration)", TG_UNIT_RATE},       /* a rate, not a size */
        {"memcpy", "sum(bytes) / sum(duration) / 2", TG_UNIT_RATE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, HEAD "    source: %s\n    fail_when: count > 0\n    metric: %s\n",
                 cases[i].source, cases[i].metric);
        tg_ruleset *rs = text_ok(text);
        const tg_rule_info *info = tg_rules_info(rs, 0);
        if (info->metric_unit != cases[i].unit) print_message("%s\n", cases[i].metric);
        assert_int_equal(info->metric_unit, cases[i].unit);
        tg_rules_free(rs);
    }
}

/* Bytes over a duration is a rate in bytes per second (units.def's base):
** the compiler scales bytes per ns by 1e9, folds constants, compares a
** rate with rate literals only, and refuses what has no unit. */
static void test_rate(void **state)
{
    (void)state;
    tg_ruleset *rs = text_ok(HEAD "    source: memcpy\n    where: bytes / duration > 10GB/s\n"
                             "    fail_when: count > 0 and 1GB / 1s == 1000MB/s\n");
    const tg_rule *r = rule(rs, "r");
    const tg_expr *rate = r->where->a;
    assert_int_equal(rate->op, TG_N_MUL);
    assert_int_equal(rate->unit, TG_UNIT_RATE);
    assert_int_equal(rate->a->op, TG_N_DIV);
    assert_int_equal(rate->b->op, TG_N_CONST);
    assert_float_equal(tg_value_num(rate->b->k), 1e9, 0);
    assert_float_equal(tg_value_num(r->where->b->k), 10e9, 0);
    assert_int_equal(r->where->b->unit, TG_UNIT_RATE);
    assert_int_equal(r->fail_when->op, TG_N_GT);   /* the constant comparison folded to true */
    tg_rules_free(rs);
    assert_non_null(strstr(text_error(HEAD "    source: memcpy\n    where: bytes / duration > 10GB\n", NULL, 0),
                           "a rate (bytes per second)"));
    assert_non_null(strstr(text_error(HEAD "    source: memcpy\n    where: bytes / duration > 100\n", NULL, 0),
                           "write the number with a rate unit, e.g. 10GB/s"));
    assert_non_null(strstr(text_error(HEAD "    source: memcpy\n    where: duration / bytes > 1\n", NULL, 0),
                           "cannot divide a duration"));
}

/* baseline.STAT's type and unit follow the kind column of
** TG_BASELINE_STATS: the metric's unit (a byte count here), a ratio, a
** plain number, an integer count. Every statistic of the list is here. */
static void test_baseline_stat_types(void **state)
{
    (void)state;
    static const struct { const char *stat; tg_type type; tg_unit unit; } cases[] = {
        {"value", TG_TY_FLOAT, TG_UNIT_BYTES},   {"p50", TG_TY_FLOAT, TG_UNIT_BYTES},
        {"median", TG_TY_FLOAT, TG_UNIT_BYTES},  {"current", TG_TY_FLOAT, TG_UNIT_BYTES},
        {"change", TG_TY_FLOAT, TG_UNIT_RATIO},  {"p_value", TG_TY_FLOAT, TG_UNIT_NONE},
        {"n", TG_TY_INT, TG_UNIT_NONE},          {"band_lo", TG_TY_FLOAT, TG_UNIT_BYTES},
        {"band_hi", TG_TY_FLOAT, TG_UNIT_BYTES},
    };
    assert_int_equal(sizeof cases / sizeof *cases, TG_BSTAT_COUNT);
    for (size_t i = 0; i < TG_BSTAT_COUNT; i++) {
        assert_string_equal(cases[i].stat, tg_baseline_stat_names[i]);
        char text[512];
        snprintf(text, sizeof text, HEAD "    source: memcpy\n    metric: sum(bytes)\n"
                 "    regression: {direction: higher_is_worse}\n    message: \"{baseline.%s}\"\n", cases[i].stat);
        tg_ruleset *rs = text_ok(text);
        const tg_expr *e = rs->rules[0].message[0].expr;
        assert_int_equal(e->op, TG_N_BASELINE);
        if (e->type != cases[i].type || e->unit != cases[i].unit) print_message("baseline.%s\n", cases[i].stat);
        assert_int_equal(e->type, cases[i].type);
        assert_int_equal(e->unit, cases[i].unit);
        tg_rules_free(rs);
    }
}

/* device.FIELD: the row's device, for sources whose rows name one. */
static void test_device_ref(void **state)
{
    (void)state;
    tg_ruleset *rs = text_ok(HEAD "    source: memcpy\n"
                             "    where: device.copy_frac_steady > 50% and steady\n"
                             "    fail_when: max(device.copy_time_steady) > 1ms\n");
    const tg_rule *r = rule(rs, "r");
    const tg_expr *ref = r->where->a->a;
    assert_int_equal(ref->op, TG_N_DEVICE_REF);
    assert_string_equal(ref->field->name, "copy_frac_steady");
    assert_int_equal(ref->field->source, TG_SRC_DEVICE);
    assert_int_equal(ref->unit, TG_UNIT_RATIO);
    assert_int_equal(ref->a->op, TG_N_FIELD);              /* the row's own device id */
    assert_int_equal(ref->a->field->source, TG_SRC_MEMCPY);
    assert_string_equal(ref->a->field->name, "device");
    assert_int_equal(r->aggs[0].arg->op, TG_N_DEVICE_REF);
    assert_int_equal(r->aggs[0].unit, TG_UNIT_NS);
    char *text = tg_rules_explain(rs, "r");
    assert_non_null(strstr(text, "device.copy_frac_steady (the row's device)"));
    free(text);
    tg_rules_free(rs);

    assert_string_equal(text_error(HEAD "    source: api\n    where: device.busy_frac < 1\n"
                                   "    fail_when: count > 0\n", NULL, 0),
                        "device.busy_frac needs a source whose rows name a device (kernel, memcpy, memset, gap); "
                        "'api' rows do not");
    assert_string_equal(text_error(HEAD "    source: kernel\n    where: device.copy_frak_steady > 0.5\n"
                                   "    fail_when: count > 0\n", NULL, 0),
                        "the device source has no field 'copy_frak_steady' (did you mean 'copy_frac_steady'?)");
    assert_string_equal(text_error(HEAD "    source: gap\n    fail_when: device.busy_frac < 0.5\n", NULL, 0),
                        "'device.busy_frac' is a value of a single gap row's device; 'fail_when' works on "
                        "aggregates of the rows, e.g. max(device.busy_frac)");
    assert_string_equal(text_error(HEAD "    source: device\n    where: device.busy_frac < 1\n"
                                   "    fail_when: count > 0\n", NULL, 0),
                        "write 'busy_frac', not 'device.busy_frac': the fields of the rule's source are used by name");
    /* units are checked as for any field: a duration is not a ratio */
    assert_true(text_error(HEAD "    source: memcpy\n    where: duration > device.busy_frac\n"
                           "    fail_when: count > 0\n", NULL, 0)[0] != 0);
}

/* Grouped evidence: keys first, named columns, the order column, the
** value aggregates apart from the columns' own; and its errors. */
static void test_grouped_evidence(void **state)
{
    (void)state;
    tg_ruleset *rs = text_ok(HEAD "    source: api\n    fail_when: count > 2\n"
                             "    evidence:\n      group_by: [name, tid]\n"
                             "      columns: [name, count, {time: sum(duration)}, max(duration) / 2]\n"
                             "      order_by: time asc\n      limit: 3\n");
    const tg_rule *r = rule(rs, "r");
    assert_int_equal(r->n_group_by, 2);
    assert_int_equal(r->n_group_cols, 5);
    assert_string_equal(r->group_cols[0].name, "name");
    assert_null(r->group_cols[0].expr);
    assert_string_equal(r->group_cols[1].name, "tid");
    assert_string_equal(r->group_cols[2].name, "count");
    assert_string_equal(r->group_cols[3].name, "time");
    assert_string_equal(r->group_cols[4].name, "max(duration) / 2");
    assert_int_equal(r->group_order, 3);
    assert_false(r->order_desc);
    assert_int_equal(r->evidence_limit, 3);
    assert_int_equal(r->n_value_aggs, 1);                  /* count */
    assert_int_equal(r->n_aggs, 3);                        /* + sum, max for the columns */
    char *text = tg_rules_explain(rs, "r");
    assert_non_null(strstr(text, "values reported: count\n"));
    assert_non_null(strstr(text, "evidence: one row per group of name tid, groups ordered by time asc, limit 3"));
    assert_non_null(strstr(text, "  time\n"));
    free(text);
    tg_rules_free(rs);

#define EV(x) HEAD "    source: memcpy\n    fail_when: count > 0\n    evidence: " x "\n"
    assert_string_equal(text_error(EV("{group_by: [kindd]}"), NULL, 0),
                        "group_by needs fields of source 'memcpy'; 'kindd' is not one (did you mean 'kind'?)");
    assert_string_equal(text_error(EV("{group_by: [kind, bytes, device, stream, pid]}"), NULL, 0),
                        "group_by must be a list of 1 to 4 field names, such as [kind, src_kind]");
    assert_string_equal(text_error(EV("{group_by: [kind, kind]}"), NULL, 0), "group_by names 'kind' twice");
    assert_string_equal(text_error(EV("{group_by: kind, columns: [duration]}"), NULL, 0),
                        "'duration' is a field of a single memcpy row; 'evidence columns' works on aggregates of "
                        "the rows, e.g. max(duration) or count");
    assert_string_equal(text_error(EV("{group_by: kind, columns: [count, {count: sum(bytes)}]}"), NULL, 0),
                        "two evidence columns are named 'count'; name one with 'count-2: ...'");
    assert_string_equal(text_error(EV("{group_by: kind, columns: [{a b: count}]}"), NULL, 0),
                        "a column name is letters, digits, '_' and '-', not 'a b'");
    assert_string_equal(text_error(EV("{group_by: kind, columns: [{time: sum(duration)}], order_by: tme}"), NULL, 0),
                        "order_by names no column of the grouped evidence: 'tme' (did you mean 'time'?)");
    assert_string_equal(text_error(EV("{group_by: kind, order_by: count up}"), NULL, 0),
                        "order_by of grouped evidence must be 'COLUMN [asc|desc]'");
    assert_string_equal(text_error(EV("{group_by: kind, columns: count}"), NULL, 0), "evidence columns must be a list");
    assert_string_equal(text_error(EV("{grop_by: kind}"), NULL, 0),
                        "unknown key 'grop_by' in evidence (did you mean 'group_by'?)");
    assert_string_equal(text_error(HEAD "    source: trace\n    fail_when: count > 0\n    evidence: {group_by: kernels}\n",
                                   NULL, 0),
                        "the trace source has one row: there is nothing to group");
#undef EV
}

static void test_set(void **state)
{
    (void)state;
    const char *paths[] = {design_path, custom_path};
    tg_param_set ok[] = {{"large-dtoh-copy", "max_total", "200ms"}, {"step-gpu-time", "min_change", "0.5%"},
                         {"slow-gemm", "max_cv", "0.25"}};
    tg_ruleset *rs = load_ok(paths, 2, ok, 3);
    assert_float_equal(tg_rules_param(rs, "large-dtoh-copy", "max_total", 0), 2e8, 0);
    assert_float_equal(tg_rules_param(rs, "step-gpu-time", "min_change", 0), 0.005, 1e-15);
    assert_float_equal(tg_rules_param(rs, "slow-gemm", "max_cv", 0), 0.25, 0);
    /* the folded comparison uses the --set value */
    assert_int_equal(rule(rs, "large-dtoh-copy")->fail_when->b->k.u.i, 200000000);
    tg_rules_free(rs);

    static const struct { tg_param_set set; const char *msg; } bad[] = {
        {{"large-dtoh-copy", "max_totl", "1ms"}, "did you mean 'max_total'"},
        {{"large-dtoh-cpy", "max_total", "1ms"}, "no rule 'large-dtoh-cpy' (did you mean 'large-dtoh-copy'"},
        {{"large-dtoh-copy", "max_total", "200"}, "is a plain number"},
        {{"large-dtoh-copy", "max_total", "64KB"}, "is a bytes"},
        {{"large-dtoh-copy", "max_total", "fast"}, "not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tg_diag d;
        tg_diag_init(&d);
        assert_null(tg_rules_load(paths, 2, &bad[i].set, 1, &d));
        assert_int_equal(d.n_errors, 1);
        if (!strstr(d.msgs[0].text, bad[i].msg)) print_message("got: %s\n", d.msgs[0].text);
        assert_non_null(strstr(d.msgs[0].text, bad[i].msg));
        assert_string_equal(d.msgs[0].pos.file, "--set");
        tg_diag_clear(&d);
    }
}

static void test_lint(void **state)
{
    (void)state;
    tg_diag d;
    tg_diag_init(&d);
    const char *paths[] = {design_path};
    assert_int_equal(tg_rules_lint(paths, 1, &d), TG_OK);
    int unused_macro = 0, unused_list = 0, hides = 0;
    for (size_t i = 0; i < d.n; i++) {
        assert_int_equal(d.msgs[i].level, TG_DIAG_WARNING);
        unused_macro += strstr(d.msgs[i].text, "macro 'steady' is never used") != NULL;
        unused_list += strstr(d.msgs[i].text, "list 'blocking_apis' is never used") != NULL;
        hides += strstr(d.msgs[i].text, "has the name of a field of kernel, memcpy, memset, api") != NULL;
    }
    assert_int_equal(unused_macro + unused_list + hides, 3);
    assert_int_equal(d.msgs[0].pos.line, 7);         /* the macro's definition */
    tg_diag_clear(&d);
    /* the custom file on top: no warnings of its own */
    tg_diag_init(&d);
    const char *both[] = {design_path, custom_path};
    assert_int_equal(tg_rules_lint(both, 2, &d), TG_OK);
    for (size_t i = 0; i < d.n; i++) assert_null(strstr(d.msgs[i].pos.file, "custom.yaml"));
    tg_diag_clear(&d);
    /* errors make lint fail */
    tg_diag_init(&d);
    tg_rules_text t = {"x.yaml", HEAD "    source: kernel\n    fail_when: count > 0\n    wher: nccl\n"};
    assert_int_equal(tg_rules_lint_texts(&t, 1, &d), TG_EUSAGE);
    tg_diag_clear(&d);
}

static void test_explain(void **state)
{
    (void)state;
    const char *paths[] = {design_path, custom_path};
    tg_ruleset *rs = load_ok(paths, 2, NULL, 0);
    char *text = tg_rules_explain(rs, "large-dtoh-copy");
    assert_non_null(text);
    static const char *const want[] = {
        "large-dtoh-copy: Large device-to-host copies inside the training loop",
        "  severity: warning",
        "  source:   memcpy",
        "A device-to-host copy inside the loop waits",
        "  max_total = 10ms",
        "where: kind == \"DtoH\" and big_copy and in_loop",
        "        field memcpy.kind : string",
        "        const 1MiB (= 1048576 B) : int bytes",
        "fail_when: sum(duration) > params.max_total",
        "    aggregate sum -> sum_duration_ns : int duration",
        "      field memcpy.duration : int duration",
        "    params.max_total = 10ms (= 10000000 ns) : int duration",
        "values reported: count sum_duration_ns sum_bytes",
        "evidence: order by bytes desc, limit 5, columns: bytes duration api iteration",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        if (!strstr(text, want[i])) print_message("missing line: %s\nin:\n%s\n", want[i], text);
        assert_non_null(strstr(text, want[i]));
    }
    free(text);
    assert_null(tg_rules_explain(rs, "no-such-rule"));
    tg_rules_free(rs);
}

static void test_errors_of_definitions(void **state)
{
    (void)state;
    assert_non_null(strstr(text_error("version: 1\nmacros:\n  a: nccl\n  a: nccl\n", NULL, 0), "duplicate key 'a'"));
    assert_non_null(strstr(text_error("version: 1\nmacros:\n  a: nccl\nlists:\n  a: [x]\n", NULL, 0),
                           "already defined as a list"));
    assert_non_null(strstr(text_error(HEAD "    source: kernel\n", NULL, 0), "has no 'fail_when'"));
    assert_non_null(strstr(text_error(HEAD "    source: iteration\n    regression: {direction: higher_is_worse}\n",
                                      NULL, 0), "needs a 'metric'"));
    assert_non_null(strstr(text_error("version: 1\nrules:\n  - id: r\n    source: kernel\n    fail_when: count > 0\n",
                                      NULL, 0), "has no 'title'"));
    /* a bad macro body is reported once, where it is written */
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"m.yaml", "version: 1\nmacros:\n  m: nccl and (\n" "rules:\n"
                                 "  - id: r\n    title: t\n    severity: info\n    source: kernel\n"
                                 "    where: m\n    fail_when: count > 0\n"};
    assert_null(tg_rules_load_texts(&t, 1, NULL, 0, &d));
    assert_int_equal(d.n_errors, 1);
    assert_int_equal(d.msgs[0].pos.line, 3);
    tg_diag_clear(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_design_example),
        cmocka_unit_test(test_custom_over_design),
        cmocka_unit_test(test_override_needs_earlier_rule),
        cmocka_unit_test(test_directory),
        cmocka_unit_test(test_types_and_folding),
        cmocka_unit_test(test_comparison),
        cmocka_unit_test(test_metric_unit),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_device_ref),
        cmocka_unit_test(test_grouped_evidence),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_lint),
        cmocka_unit_test(test_baseline_stat_types),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_errors_of_definitions),
    };
    return cmocka_run_group_tests(tests, setup_paths, NULL);
}
