/*
** The hostile runner's own bounds (hostile.h): a case is bounded by the
** CPU time its child uses, not by the wall clock, so that a loaded
** machine cannot fail it. Here the child is /bin/sh, not tracegate:
**   - a child that spins is stopped at its CPU budget (RLIMIT_CPU) and
**     reported as over it, long before the wall-clock safety net;
**   - a child that takes longer than its CPU budget in wall-clock time
**     but uses no CPU (it sleeps, as a starved process on a loaded
**     machine would wait) is not stopped;
**   - the CPU time reported is the child's (wait4), not the runner's.
*/
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hostile.h"

/* A budget of 1 s of CPU, whatever the build (the child is a shell). */
static int small_budget(void **state)
{
    (void)state;
    hx_budget_scale(1);
    hx_budget_scale(1.0 / hx_cpu_budget());
    return 0;
}

static int restore_budget(void **state)
{
    (void)state;
    hx_budget_scale(1);
    return 0;
}

static void test_spinning_child_is_stopped_by_cpu(void **state)
{
    (void)state;
    hx_result r;
    hx_run(&r, "-c", "while :; do :; done");
    printf("  spin: stopped %d, over CPU %d, signal %d, %.2f s wall, %.2f s CPU (budget %.1f s)\n", r.timed_out,
           r.over_cpu, r.signal, r.seconds, r.cpu_seconds, r.cpu_budget);
    assert_true(r.timed_out);
    assert_true(r.over_cpu);
    assert_true(r.cpu_seconds >= r.cpu_budget);
    /* by the kernel a little past the budget (SIGXCPU, or SIGKILL at the
    ** hard limit); on a machine slowed past the net, by the net */
    assert_true(r.signal == SIGXCPU || r.signal == SIGKILL);
    hx_free(&r);
}

static void test_waiting_child_is_not_stopped(void **state)
{
    (void)state;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "sleep %.0f; echo done", hx_cpu_budget() + 1);
    hx_result r;
    hx_run(&r, "-c", cmd);
    printf("  sleep: %.2f s wall, %.2f s CPU (budget %.1f s)\n", r.seconds, r.cpu_seconds, r.cpu_budget);
    hx_expect_in_time("sleep past the CPU budget", &r);
    assert_true(r.seconds > r.cpu_budget);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "done\n");
    assert_true(r.cpu_seconds < r.cpu_budget);
    hx_free(&r);
}

int main(void)
{
    /* the runner starts $TG_BINARY: here a shell */
    setenv("TG_BINARY", "/bin/sh", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spinning_child_is_stopped_by_cpu, small_budget, restore_budget),
        cmocka_unit_test_setup_teardown(test_waiting_child_is_not_stopped, small_budget, restore_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
