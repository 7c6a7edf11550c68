/*
** Where a trace says it was recorded (engine/trace/trace_origin.c): the
** host of TARGET_INFO_SYSTEM_ENV, the rank, world size and job id of the
** recorded environment by the variables of origin.def and their order,
** and what is not believed: a rank when several processes did GPU work,
** values that are not numbers, a rank outside its world, a name that only
** ends like a rank variable.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace_test.h"

#define ENV_TABLE                                                                              \
    "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL,"     \
    " name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL);\n"

/* The fixture capture plus a system-env table holding host and env. */
static tg_trace *open_env(const char *host, const char *env, const char *extra, char **path)
{
    char rows[8192];
    snprintf(rows, sizeof rows,
             TT_ROWS ENV_TABLE
             "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'CpuCores', 1, '128');\n"
             "%s%s%s"
             "%s%s%s"
             "%s",
             host ? "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'Hostname', 619, '" : "",
             host ? host : "", host ? "');\n" : "",
             env ? "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'DeviceEnvironment', 610, '" : "",
             env ? env : "", env ? "');\n" : "", extra ? extra : "");
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0, rows, path, &d);
    if (!t) fail_msg("fixture did not open: %s", tt_first_error(&d));
    tg_diag_clear(&d);
    return t;
}

static void done(tg_trace *t, char *path)
{
    tg_trace_close(t);
    tg_fixture_remove(path);
}

static void test_host_rank_job(void **state)
{
    (void)state;
    char *path;
    tg_trace *t = open_env("nid001608", "SHELL=/bin/bash;RANK=3;WORLD_SIZE=8;SLURM_JOB_ID=4242;SLURM_PROCID=0", NULL,
                           &path);
    assert_string_equal(t->host, "nid001608");
    assert_int_equal(t->rank, 3);
    assert_int_equal(t->world_size, 8);
    assert_string_equal(t->rank_source, "env RANK");   /* before SLURM_PROCID: origin.def's order */
    assert_string_equal(tg_trace_rank_source(t), "env RANK");
    assert_string_equal(t->job, "4242");
    done(t, path);
}

static void test_launchers(void **state)
{
    (void)state;
    static const struct {
        const char *env;
        int rank, size;
        const char *source;
    } cases[] = {
        {"SLURM_PROCID=5;SLURM_NTASKS=16", 5, 16, "env SLURM_PROCID"},
        {"OMPI_COMM_WORLD_SIZE=4;OMPI_COMM_WORLD_RANK=2;SLURM_PROCID=0", 2, 4, "env OMPI_COMM_WORLD_RANK"},
        {"PMI_RANK=1", 1, -1, "env PMI_RANK"},
        {"MV2_COMM_WORLD_RANK=0;MV2_COMM_WORLD_SIZE=1", 0, 1, "env MV2_COMM_WORLD_RANK"},
        /* only whole names count: these end like RANK */
        {"LOCAL_RANK=1;MY_RANK=7;XRANK=4", -1, -1, NULL},
        /* a bad value at the first launcher set is not a reason to believe the next */
        {"RANK=abc;SLURM_PROCID=2", -1, -1, NULL},
        {"RANK=;SLURM_PROCID=2", -1, -1, NULL},
        {"RANK=-1", -1, -1, NULL},
        {"RANK=9;WORLD_SIZE=8", -1, -1, NULL},
        {"RANK=99999999999", -1, -1, NULL},
        /* the last variable, without a trailing ';' */
        {"A=1;RANK=12", 12, -1, "env RANK"},
        {"RANK=2;WORLD_SIZE=zero", 2, -1, "env RANK"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *path;
        tg_trace *t = open_env(NULL, cases[i].env, NULL, &path);
        if (t->rank != cases[i].rank || t->world_size != cases[i].size ||
            (cases[i].source ? !t->rank_source || strcmp(t->rank_source, cases[i].source) : t->rank_source != NULL))
            fail_msg("'%s': rank %d of %d from %s", cases[i].env, t->rank, t->world_size,
                     t->rank_source ? t->rank_source : "(none)");
        assert_null(t->host);
        assert_null(t->job);
        done(t, path);
    }
}

/* `nsys profile torchrun ...`: one recorded environment, several processes
** doing GPU work: the rank is not theirs. The job id still is. */
static void test_several_gpu_processes(void **state)
{
    (void)state;
    char *path;
    tg_trace *t = open_env("node7", "SLURM_PROCID=1;SLURM_NTASKS=2;SLURM_JOB_ID=77",
                           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
                           " correlationId, globalPid, demangledName, shortName) VALUES"
                           " (300, 310, 1, 1, 7, 99, (555 << 24), 1, 2);\n",
                           &path);
    assert_int_equal(t->rank, -1);
    assert_int_equal(t->world_size, -1);
    assert_null(t->rank_source);
    assert_string_equal(t->job, "77");
    assert_string_equal(t->host, "node7");
    int32_t *pids;
    assert_int_equal(tg_trace_gpu_pids(t, &pids), 2);
    assert_int_equal(pids[0], 555);
    assert_int_equal(pids[1], TT_PID);
    free(pids);
    done(t, path);
}

/* Without the table, or with a table that says nothing: nothing known. */
static void test_nothing_recorded(void **state)
{
    (void)state;
    char *path;
    tg_diag d;
    tg_trace *t = tt_open(tg_fixture_schema_3_0, TT_ROWS, &path, &d);
    assert_non_null(t);
    assert_null(t->host);
    assert_null(t->job);
    assert_int_equal(t->rank, -1);
    assert_null(t->rank_source);
    assert_null(tg_trace_rank_source(t));
    /* what the layers above read instead of the format (trace.h) */
    assert_int_equal(tg_trace_query_lang(t), TG_QUERY_SQL);
    assert_string_equal(tg_trace_cite_table(t, TG_TABLE_KERNEL), "CUPTI_ACTIVITY_KIND_KERNEL");
    assert_string_equal(tg_trace_cite_table(t, TG_TABLE_OSRT), "OSRT_API");   /* absent: its canonical name */
    assert_string_equal(tg_trace_cite_table(t, -1), "?");
    assert_null(tg_trace_never_records(t, TG_TABLE_OSRT));
    assert_string_equal(tg_trace_table_also(t, TG_TABLE_NVTX), " and NVTX annotations in the program");
    assert_string_equal(tg_trace_table_also(t, TG_TABLE_KERNEL), "");
    int32_t *pids;
    assert_int_equal(tg_trace_gpu_pids(t, &pids), 1);
    assert_int_equal(pids[0], TT_PID);
    free(pids);
    tg_diag_clear(&d);
    done(t, path);
    t = open_env("", "", NULL, &path);
    assert_null(t->host);
    assert_int_equal(t->rank, -1);
    done(t, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_rank_job),
        cmocka_unit_test(test_launchers),
        cmocka_unit_test(test_several_gpu_processes),
        cmocka_unit_test(test_nothing_recorded),
    };
    return cmocka_run_group_tests_name("trace_origin", tests, NULL, NULL);
}
