/*
** Fuzz target: the baseline reader (tg_baseline_load_string) on YAML text,
** and, when a baseline loads, its validation and a write of it back out.
** Baselines are committed files that a CI job reads: hostile or damaged
** ones must be refused with a message, never crash or hang the gate.
*/
#include <stdio.h>
#include <stdlib.h>

#include "baseline/baseline.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_baseline *b = tg_baseline_load_string((const char *)data, size, "fuzz-baseline.yaml", &diag);
    for (size_t i = 0; i < diag.n; i++) free(tg_diag_format(&diag.msgs[i], false));
    tg_diag_clear(&diag);
    if (b) {
        tg_baseline_check_runs(b, size & 1, &diag);
        tg_diag_clear(&diag);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            tg_baseline_write(b, devnull);
            fclose(devnull);
        }
        tg_baseline_free(b);
    }
    return 0;
}
