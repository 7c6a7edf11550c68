/*
** Fuzz target: whole SQLite files. The input is written to a scratch file
** and goes through what `tracegate check` does to a trace: tg_trace_open
** (file checks, schema detection, every table loader), tg_model_build,
** evaluation of the built-in rules in both --missing-data modes, every
** report format, a baseline round trip, info and metrics. Seeds are small
** generated exports (ci/fuzz.sh makes them with fuzz-mkseeds).
*/
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_run_path(fz_scratch_write(data, size), NULL);
    return 0;
}
