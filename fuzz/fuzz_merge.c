/*
** Fuzz target: `tracegate merge` input. The bytes are one to four JSON
** result documents (split at NUL bytes; the seeds are real `check --format
** json` outputs, ci/fuzz.sh makes them), each read with
** tg_result_read_json as merge reads its RESULT.json files, then the
** ranks accounted for (tg_merge_ranks), the cross-rank straggler check
** over what loaded and every report format.
** Merge inputs come from other jobs, so besides surviving (no crash, leak
** or sanitizer report) the outputs must keep their promises whatever the
** documents hold (fz_report_checked): the human formats log-safe, the
** markdown within 1 MiB, the JSON and SARIF parseable.
**
** Only the reading path is exercised, not merge's verdict semantics.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "report/json_read.h"
#include "report/report.h"

#define MAX_DOCS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_run_result run = {.arena = tg_arena_new()};
    if (!run.arena) return 0;
    tg_diag diag;
    tg_diag_init(&diag);
    size_t docs = 0;
    tg_status st = TG_OK;
    for (size_t off = 0; off <= size && docs < MAX_DOCS && st == TG_OK; docs++) {
        const uint8_t *nul = memchr(data + off, 0, size - off);
        size_t len = nul ? (size_t)(nul - (data + off)) : size - off;
        st = tg_result_read_json(fz_scratch_write(data + off, len), &run, &diag);
        off += len + 1;
    }
    for (size_t i = 0; i < diag.n; i++) free(tg_diag_format(&diag.msgs[i], false));
    tg_diag_clear(&diag);
    /* the ranks accounted for as merge does (duplicates and disagreeing
    ** worlds refuse the merge; missing ranks add an entry) */
    if (st == TG_OK && run.n_traces) {
        st = tg_merge_ranks(&run, size % 5 ? -1 : (int64_t)(size % 7) + 1, &diag);
        for (size_t i = 0; i < diag.n; i++) free(tg_diag_format(&diag.msgs[i], false));
        tg_diag_clear(&diag);
    }
    if (st == TG_OK) {
        /* threshold and severity from the input, so every branch is reachable */
        double threshold = (double)(size % 41) / 100.0;
        tg_merge_stragglers(&run, threshold, (tg_severity)(size % 3), NULL);
        /* a note about the whole run (merge --allow-mixed-rules), of text
        ** the input chose: every format writes it */
        const char *note = run.n_traces && run.traces[0].file ? run.traces[0].file : "fuzz";
        tg_report_opts ro = {.fail_on = (tg_severity)((size / 3) % 3), .tool_version = "fuzz",
                             .quiet = size & 1, .notes = &note, .n_notes = (size >> 1) & 1,
                             .rules_digest = size & 4 ? "sha256:fuzz" : NULL};
        for (int f = 0; f < TG_FMT_COUNT; f++) fz_report_checked((tg_format)f, &run, NULL, &ro);
    }
    tg_arena_free(run.arena);
    return 0;
}
