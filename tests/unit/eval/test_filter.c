/*
** Row filters (eval_filter.c): which `api` rows some enabled rule's
** `where` admits, as `tracegate check` asks while the API table streams.
** On hand-built models (world.h): a where on a flag, on a name constant
** that enters the string pool only after the filter is made (as base names
** do while a table streams), on a regex, two rules (either admits), rules
** that make every row count (no where, a where on trace.* or baseline.*), a disabled rule
** and a rule set without api rules. Where a filter decides, the rows it
** passes are the rows the evaluator counts.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "world.h"

#define RULE(id, source, where) HEAD(id, source) where "    fail_when: count > 0\n    message: \"{count}\"\n"
#define WHERE(text) "    where: " text "\n"
#define NO_WHERE ""
#define DISABLED "    enabled: false\n"

static tg_ruleset *load(const char *text)
{
    tg_diag d;
    tg_diag_init(&d);
    tg_rules_text t = {"filter.yaml", text};
    tg_ruleset *rs = tg_rules_load_texts(&t, 1, NULL, 0, &d);
    if (!rs && d.n) fail_msg("%s\n%s", d.msgs[0].text, text);
    assert_non_null(rs);
    tg_diag_clear(&d);
    return rs;
}

static tg_row_filter *filter_of(world *w, const tg_ruleset *rs)
{
    bool all = true;           /* must be cleared */
    tg_row_filter *f = tg_row_filter_new(rs, TG_SRC_API, &w->model, &all);
    assert_non_null(f);
    assert_false(all);
    return f;
}

static bool pass(tg_row_filter *f, const tg_api *row)
{
    return tg_row_filter_pass(f, (const char *)row);
}

/* Rows the rule counts when evaluated (same world, same rule set). */
static int64_t counted(world *w, const char *rule)
{
    return world_eval(w, NULL, rule)->count;
}

static void test_blocking(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *sync = add_api(w, 1, 100, 50, "cudaStreamSynchronize");
    sync->blocking = 1;
    tg_api *launch = add_api(w, 2, 200, 5, "cudaLaunchKernel");
    tg_api *dev = add_api(w, 3, 300, 80, "cuCtxSynchronize");
    dev->blocking = 1;
    dev->driver = 1;
    world_rules(w, "version: 1\nrules:\n" RULE("syncs", "api", WHERE("blocking")));
    tg_row_filter *f = filter_of(w, w->rs);
    assert_true(pass(f, sync));
    assert_false(pass(f, launch));
    assert_true(pass(f, dev));
    assert_int_equal(counted(w, "syncs"), 2);
    tg_row_filter_free(f);
    world_free(w);
}

/* The constant is not in the pool when the filter is made; the row's name
** is interned afterwards, so ids cannot be compared: the text must. */
static void test_name_interned_later(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *launch = add_api(w, 1, 100, 5, "cudaLaunchKernel");
    world_rules(w, "version: 1\nrules:\n" RULE("mallocs", "api", WHERE("name == \"cudaMalloc\"")));
    assert_true(tg_strpool_find(w->trace.strings, "cudaMalloc", 10) < 0);
    tg_row_filter *f = filter_of(w, w->rs);
    assert_false(pass(f, launch));
    tg_api *mal = add_api(w, 2, 200, 30, "cudaMalloc");           /* interned now */
    tg_api *host = add_api(w, 3, 300, 30, "cudaMallocHost");
    assert_true(tg_strpool_find(w->trace.strings, "cudaMalloc", 10) >= 0);
    assert_true(pass(f, mal));
    assert_false(pass(f, host));
    assert_false(pass(f, launch));
    /* a filter made now compares ids, with the same answers */
    tg_row_filter *g = filter_of(w, w->rs);
    assert_true(pass(g, mal));
    assert_false(pass(g, host));
    assert_false(pass(g, launch));
    assert_int_equal(counted(w, "mallocs"), 1);
    tg_row_filter_free(g);
    tg_row_filter_free(f);
    world_free(w);
}

/* != against a constant absent when the filter is made: by text too. */
static void test_not_equal_interned_later(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *launch = add_api(w, 1, 100, 5, "cudaLaunchKernel");
    world_rules(w, "version: 1\nrules:\n" RULE("not-free", "api", WHERE("name != \"cudaFree\"")));
    tg_row_filter *f = filter_of(w, w->rs);
    tg_api *fr = add_api(w, 2, 200, 30, "cudaFree");
    assert_true(pass(f, launch));
    assert_false(pass(f, fr));
    assert_int_equal(counted(w, "not-free"), 1);
    tg_row_filter_free(f);
    world_free(w);
}

static void test_matches(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *copy_async = add_api(w, 1, 100, 5, "cudaMemcpyAsync");
    tg_api *copy = add_api(w, 2, 200, 5, "cudaMemcpy");
    tg_api *driver = add_api(w, 3, 300, 5, "cuMemcpyAsync");
    world_rules(w, "version: 1\nrules:\n" RULE("async", "api", WHERE("name matches \"^cuda.*Async$\"")));
    tg_row_filter *f = filter_of(w, w->rs);
    for (int twice = 0; twice < 2; twice++) {      /* the second time from the memo */
        assert_true(pass(f, copy_async));
        assert_false(pass(f, copy));
        assert_false(pass(f, driver));
    }
    /* names interned after the filter was made (beyond its memo) */
    tg_api *set_async = add_api(w, 4, 400, 5, "cudaMemsetAsync");
    tg_api *set_async_x = add_api(w, 5, 500, 5, "cudaMemsetAsyncX");
    for (int twice = 0; twice < 2; twice++) {
        assert_true(pass(f, set_async));
        assert_false(pass(f, set_async_x));
    }
    assert_int_equal(counted(w, "async"), 2);
    tg_row_filter_free(f);
    world_free(w);
}

/* Two rules on api: a row passes when either admits it. */
static void test_two_rules(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *sync = add_api(w, 1, 100, 50, "cudaDeviceSynchronize");
    sync->blocking = 1;
    tg_api *launch = add_api(w, 2, 200, 5, "cudaLaunchKernel");
    world_rules(w, "version: 1\nrules:\n" RULE("syncs", "api", WHERE("blocking"))
                   RULE("mallocs", "api", WHERE("name == \"cudaMalloc\" and duration > 10us")));
    tg_row_filter *f = filter_of(w, w->rs);
    tg_api *mal = add_api(w, 3, 300, 20000, "cudaMalloc");
    tg_api *quick = add_api(w, 4, 400, 2000, "cudaMalloc");
    assert_true(pass(f, sync));
    assert_true(pass(f, mal));
    assert_false(pass(f, quick));               /* a cudaMalloc, but only 2 us */
    assert_false(pass(f, launch));
    assert_int_equal(counted(w, "syncs"), 1);
    assert_int_equal(counted(w, "mallocs"), 1);
    tg_row_filter_free(f);
    world_free(w);
}

/* Every row may count: no filter, *all set. */
static void check_all(const char *text)
{
    world *w = world_new();
    add_api(w, 1, 100, 5, "cudaLaunchKernel");
    tg_ruleset *rs = load(text);
    bool all = false;
    assert_null(tg_row_filter_new(rs, TG_SRC_API, &w->model, &all));
    assert_true(all);
    tg_rules_free(rs);
    world_free(w);
}

static void test_no_where(void **state)
{
    (void)state;
    check_all("version: 1\nrules:\n" RULE("calls", "api", NO_WHERE));
    /* one rule without where is enough, whatever the others say */
    check_all("version: 1\nrules:\n" RULE("syncs", "api", WHERE("blocking")) RULE("calls", "api", NO_WHERE));
}

/* trace.* and baseline.* are final only after every row is in. */
static void test_where_reads_late(void **state)
{
    (void)state;
    check_all("version: 1\nrules:\n" RULE("long", "api", WHERE("duration > trace.duration / 10")));
    /* device.* too: the device rows are built after the rows stream by */
    tg_ruleset *rs = load("version: 1\nrules:\n" RULE("bound", "memcpy", WHERE("device.copy_frac_steady > 50%")));
    assert_true(tg_row_filter_keeps_all(rs, TG_SRC_MEMCPY));
    tg_rules_free(rs);
    check_all("version: 1\nrules:\n" RULE("syncs", "api", WHERE("blocking"))
              RULE("late", "api", WHERE("blocking and iteration >= trace.iterations - 1")));
    check_all("version: 1\nrules:\n" RULE("slow", "api", WHERE("duration > baseline.p50")
                                           "    metric: p50(duration)\n"));
}

/* A disabled rule neither makes every row count nor admits rows. */
static void test_disabled_rule(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *sync = add_api(w, 1, 100, 50, "cudaStreamSynchronize");
    sync->blocking = 1;
    tg_api *driver = add_api(w, 2, 200, 5, "cuLaunchKernel");
    driver->driver = 1;
    tg_ruleset *rs = load("version: 1\nrules:\n" RULE("syncs", "api", WHERE("blocking"))
                          RULE("calls", "api", NO_WHERE DISABLED)
                          RULE("drivers", "api", WHERE("driver") DISABLED)
                          RULE("late", "api", WHERE("duration > trace.duration") DISABLED));
    tg_row_filter *f = filter_of(w, rs);
    assert_true(pass(f, sync));
    assert_false(pass(f, driver));
    tg_row_filter_free(f);
    tg_rules_free(rs);
    world_free(w);
}

/* No rule reads api (rules on other sources, one without where): the
** filter passes nothing. */
static void test_no_api_rule(void **state)
{
    (void)state;
    world *w = world_new();
    tg_api *sync = add_api(w, 1, 100, 50, "cudaStreamSynchronize");
    sync->blocking = 1;
    tg_api *launch = add_api(w, 2, 200, 5, "cudaLaunchKernel");
    tg_ruleset *rs = load("version: 1\nrules:\n" RULE("copies", "memcpy", WHERE("api_sync"))
                          RULE("kernels", "kernel", NO_WHERE)
                          RULE("syncs", "api", WHERE("blocking") DISABLED));
    tg_row_filter *f = filter_of(w, rs);
    assert_false(pass(f, sync));
    assert_false(pass(f, launch));
    tg_row_filter_free(f);
    tg_row_filter_free(NULL);                   /* NULL-safe, as the pipeline relies on */
    tg_rules_free(rs);
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking),
        cmocka_unit_test(test_name_interned_later),
        cmocka_unit_test(test_not_equal_interned_later),
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_two_rules),
        cmocka_unit_test(test_no_where),
        cmocka_unit_test(test_where_reads_late),
        cmocka_unit_test(test_disabled_rule),
        cmocka_unit_test(test_no_api_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
