/*
** Busy time over time (tg_model_busy_bins, engine/model/model_timeline.c),
** what the HTML report draws per device: overlapping ops count once, an op
** spread over the slices it covers, copies and memsets are busy too, and
** each device has its own row.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "mtrace.h"

#define EPS 1e-9

static void test_bins(void **state)
{
    (void)state;
    tg_trace *t = mt_new();
    mt_gpu(t, 0, "NVIDIA H200");
    mt_gpu(t, 1, "NVIDIA H200");
    mt_launch(t, 1, 1, 0, 1, "a", 0, 1, 0, 100);      /* slice 0 whole */
    mt_launch(t, 1, 1, 0, 2, "b", 2, 3, 50, 150);     /* overlaps a: slice 1 half */
    mt_memcpy(t, 1, 0, 77, 1, 1, 2, 8, 250, 350);     /* half of slice 2, half of 3 */
    mt_memset(t, 1, 0, 78, 2, 8, 300, 320);           /* inside the copy: nothing more */
    mt_launch(t, 1, 1, 1, 3, "c", 4, 5, 0, 400);      /* device 1: busy throughout */
    tg_model *m = mt_build(t);
    assert_int_equal(m->n_devices, 2);
    double busy[2 * 4];
    assert_true(tg_model_busy_bins(m, 0, 400, 4, busy));
    const double want0[] = {1.0, 0.5, 0.5, 0.5};
    for (int i = 0; i < 4; i++) {
        assert_true(fabs(busy[i] - want0[i]) < EPS);
        assert_true(fabs(busy[4 + i] - 1.0) < EPS);
    }
    /* a window that cuts ops: only their part inside counts */
    assert_true(tg_model_busy_bins(m, 100, 300, 2, busy));
    assert_true(fabs(busy[0] - 0.5) < EPS);   /* [100, 200): b until 150 */
    assert_true(fabs(busy[1] - 0.5) < EPS);   /* [200, 300): the copy from 250 */
    /* an empty span draws nothing */
    assert_false(tg_model_busy_bins(m, 10, 10, 4, busy));
    tg_model_free(m);
    mt_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bins)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
