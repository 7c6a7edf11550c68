/*
** The lean load on old exports, which record each runtime call twice: an
** outer row and the inner versioned one (cudaMemcpy and cudaMemcpy_v3020),
** one correlation id, one thread, the inner nested in the outer. Only the
** whole table can say which row is the outer one, so a streamed table that
** turns out to hold twins is loaded whole and the launch pass rerun: the
** streamed build must equal the full one, count each call once (blocking
** time from the inner call) and hold every row. The SQL row writers,
** builds and comparisons are in stream_fixture.c.
**
** The fixture: one NVTX `iteration` range; a kernel launch (first in the
** table), a blocking copy and a cudaDeviceSynchronize, each recorded twice;
** a cudaGetLastError. Each mode leaves the twins to one detector:
**
**   TWINS_SIDE_BY_SIDE  the trace layer, whose window holds the last 32 rows
**   TWINS_APART         40 other calls between the launch twins: the join,
**                       when the inner call finds its kernel taken
**   TWINS_SYNC_ONLY     only the synchronize recorded twice, side by side:
**                       the trace layer (it launches nothing to join)
**   TWINS_SYNC_FAR      only the synchronize recorded twice, FAR_CALLS
**                       other calls between: neither of those; the launch
**                       pass, which remembers the (pid, id) of every call it
**                       keeps or counts as blocking, sees the id again
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "fixture.h"
#include "model/model.h"
#include "stream_fixture.h"

/* Calls between the twins of TWINS_APART and of TWINS_SYNC_FAR: more than
** the trace layer's window. */
#define APART_CALLS 40
#define FAR_CALLS 45

typedef enum twin_mode { TWINS_SIDE_BY_SIDE, TWINS_APART, TWINS_SYNC_ONLY, TWINS_SYNC_FAR } twin_mode;

/* n cudaGetLastError calls (ids 100, 101, ...) after the iteration. */
static void other_calls(char **sql, int n)
{
    for (int i = 0; i < n; i++)
        sql_call(sql, 30000 + 10 * i, 30005 + 10 * i, 100 + i, S_GET_LAST_ERROR);
}

static char *twin_fixture(twin_mode mode)
{
    bool all_twice = mode == TWINS_SIDE_BY_SIDE || mode == TWINS_APART;
    char *sql = NULL;
    sql_strings(&sql);
    sql_devices(&sql);
    sql_range(&sql, 500, 20000, NULL, S_ITERATION);
    if (all_twice) sql_call(&sql, 6000, 6100, 11, S_LAUNCH_OUTER);
    if (mode == TWINS_APART) other_calls(&sql, APART_CALLS);
    sql_call(&sql, 6010, 6090, 11, S_LAUNCH);
    sql_kernel(&sql, 6200, 7000, 0, 7, 11, S_GEMM, S_GEMM_SHORT);
    if (all_twice) {
        sql_call(&sql, 1000, 5000, 10, S_MEMCPY_OUTER);
        sql_call(&sql, 1010, 4990, 10, S_MEMCPY);
        sql_memcpy(&sql, 1500, 4000, 10, 8388608, 1, 0, 2);
    }
    sql_call(&sql, 8000, 9000, 12, S_DEVICE_SYNC_OUTER);
    if (mode == TWINS_SYNC_FAR) other_calls(&sql, FAR_CALLS);
    sql_call(&sql, 8010, 8990, 12, S_DEVICE_SYNC);
    sql_call(&sql, 9100, 9110, 13, S_GET_LAST_ERROR);
    char *path = tg_fixture_build(tg_fixture_schema_3_0, sql);
    free(sql);
    assert_non_null(path);
    return path;
}

/* TWINS_SYNC_FAR: the twins really are beyond the trace layer's window
** (rowids number the runtime table's rows in table order), and the stream
** ran past them: the outer synchronize was kept as a blocking call, and the
** last call keep_api was asked about is the inner one. */
static void check_sync_far(const tg_trace *full, const keep_log *log, size_t asked)
{
    /* the model kept the inner row alone (model_join.c drops the outer) */
    const tg_api *inner = NULL;
    for (size_t i = 0; i < full->n_apis; i++)
        if (full->apis[i].correlation == 12) {
            assert_null(inner);
            inner = &full->apis[i];
        }
    assert_non_null(inner);
    assert_true(inner->rowid - log->seen[1].rowid > 40);
    SAME(log->seen[1].blocking, 1);
    assert_string_equal(log->seen[1].name, "cudaDeviceSynchronize");
    SAME(log->seen[asked - 1].rowid, inner->rowid);
    SAME(log->seen[asked - 1].blocking, 1);
}

static void check_twins(twin_mode mode)
{
    /* by mode: keep_api calls before the stream stopped, calls counted,
    ** rows, outer rows */
    static const size_t asked[] = {1, 1 + APART_CALLS, 2, 3 + FAR_CALLS},
                        calls[] = {4, 4 + APART_CALLS, 3, 3 + FAR_CALLS},
                        rows[] = {7, 7 + APART_CALLS, 4, 4 + FAR_CALLS}, outers[] = {3, 3, 1, 1};
    for (int threads = 1; threads <= 2; threads++) {
    char *path = twin_fixture(mode);
    built full, lean;
    build(&full, path, NULL, NULL);
    keep_log log = {0};
    tg_model_params p = {.keep_api = keep_blocking, .keep_ctx = &log};
    /* on two threads the stream stops with its producer running */
    build(&lean, path, &(tg_load_opts){.defer_api = true, .threads = threads}, &p);
    /* the stream stopped at the first inner call seen (the trace layer saw
    ** the twin side by side, the join found the kernel taken, or the pass
    ** had kept a call with its id); the rerun on the whole table is not
    ** streamed: keep_api is not asked again */
    SAME(log.calls, asked[mode]);
    if (mode == TWINS_SYNC_FAR) check_sync_far(full.t, &log, asked[mode]);

    for (int i = 0; i < 2; i++) {
        const tg_model *m = i ? lean.m : full.m;
        const tg_trace *t = m->trace;
        SAME(t->n_nvtx, 1);
        SAME(t->nvtx[0].iteration, 0);                     /* the range is in its own iteration */
        SAME(tg_model_kernel(m, 0)->queue, 6200 - 6090);    /* from the inner call's end */
        SAME(m->facts.api_calls, calls[mode]);             /* each twin pair counted once */
        SAME(m->facts.blocked_time, 980);                  /* the inner call's duration */
        SAME(m->facts.blocking_calls, 1); SAME(m->iterations[0].blocking_calls, 1);
        SAME(m->iterations[0].kernels, 1);
        if (mode == TWINS_SIDE_BY_SIDE || mode == TWINS_APART) {
            assert_string_equal(str_of(t, t->memcpys[0].api_name), "cudaMemcpy");
            SAME(t->memcpys[0].api_sync, 1);
            SAME(t->memcpys[0].iteration, 0);
        }
        assert_true(t->mixed_duplicate_api);
    }
    same_models(full.m, lean.m, false);
    /* the stream gave up: the table was read whole, every call is there
    ** once, the outer twins dropped and counted */
    assert_false(lean.t->apis_partial);
    SAME(lean.t->n_apis, full.t->n_apis);
    SAME(lean.t->n_apis, rows[mode] - outers[mode]);
    SAME(lean.t->n_api_twins, outers[mode]);
    SAME(full.t->n_api_twins, outers[mode]);
    SAME(tg_trace_api_rows(lean.t), rows[mode] - outers[mode]);
    for (size_t i = 0; i < full.t->n_apis; i++) same_api(full.t, &full.t->apis[i], lean.t, &lean.t->apis[i]);
    for (size_t i = 0; i < lean.t->n_apis; i++) {
        SAME(lean.t->apis[i].dup_of, -1);
        for (size_t j = 0; j < i; j++)
            assert_false(lean.t->apis[j].correlation == lean.t->apis[i].correlation &&
                         lean.t->apis[j].base_name == lean.t->apis[i].base_name);
    }
    /* the stream dropped nothing (the twins went by the rule), so a second
    ** model on this trace is allowed and equal */
    tg_diag d;
    tg_diag_init(&d);
    tg_model *again = tg_model_build(lean.t, NULL, &d);
    assert_non_null(again);
    same_facts(full.m, again);
    tg_model_free(again);
    tg_diag_clear(&d);
    unbuild(&full);
    unbuild(&lean);
    tg_fixture_remove(path);
    }
}

/* c. Streamed builds on old exports equal the full build. */
static void test_twins(void **state)
{
    (void)state;
    check_twins(TWINS_SIDE_BY_SIDE);
}

static void test_twins_apart(void **state)
{
    (void)state;
    check_twins(TWINS_APART);
}

static void test_twins_sync_only(void **state)
{
    (void)state;
    check_twins(TWINS_SYNC_ONLY);
}

/* The twins a streamed table can only find by the ids it has seen. */
static void test_twins_sync_far(void **state)
{
    (void)state;
    check_twins(TWINS_SYNC_FAR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twins),
        cmocka_unit_test(test_twins_apart),
        cmocka_unit_test(test_twins_sync_only),
        cmocka_unit_test(test_twins_sync_far),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
