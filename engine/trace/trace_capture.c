/*
** The profiler's own account of a capture (tg_capture_info; docs/formats.md,
** "coverage"): what an export records beside the activity tables, read so
** that a capture that lost data can be told why (engine/model/model.c,
** tg_coverage_diagnosis):
**
**   - ANALYSIS_DETAILS startTime/stopTime: the capture's window;
**   - DIAGNOSTIC_EVENT rows of severity Warning (2) or Error (3), once per
**     distinct text with a count ("CUDA profiling might have not been
**     started correctly.", "Not all CUDA events might have been
**     collected."); Info and Verbose rows are the profiler's log;
**   - OSRT_API start/end: the OS runtime calls' window, read whatever the
**     host-side load (two integer cells a row, by the direct reader);
**   - CudaDriverVersion and NvDriverVersion come with TARGET_INFO_SYSTEM_ENV
**     in trace_origin.c, which scans that table already.
**
** Each read is of a table the export may lack: nothing is then set.
*/
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

/* The first row only: false stops the read there. */
static bool analysis_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    (void)ctx;
    ld->t->capture.start_ns = tg_cell_i64(st, COL(0));
    ld->t->capture.stop_ns = tg_cell_i64(st, COL(1));
    return false;
}

/* Diagnostics kept: at most this many distinct texts (an export holds a
** few dozen; a flood of one message is one entry with its count). */
#define TG_CAPTURE_NOTES_MAX 64

typedef struct notes_read {
    size_t cap;
} notes_read;

static bool note_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    notes_read *r = ctx;
    tg_capture_info *c = &ld->t->capture;
    int64_t sev = tg_cell_i64(st, COL(1));
    if (sev != 2 && sev != 3) return true;
    const char *text;
    size_t len;
    char *owned = NULL;
    if (!tg_cell_text(st, COL(2), &text, &len, &owned)) return tg_load_oom(ld);
    if (!text) return true;
    int64_t ts = tg_cell_i64(st, COL(0));
    for (size_t i = 0; i < c->n_notes; i++) {
        tg_prof_note *n = &c->notes[i];
        if (n->severity != sev || strlen(n->text) != len || memcmp(n->text, text, len)) continue;
        n->count++;
        if (ts != TG_NULL_I64 && (n->first_ns == TG_NULL_I64 || ts < n->first_ns)) n->first_ns = ts;
        free(owned);
        return true;
    }
    if (c->n_notes == TG_CAPTURE_NOTES_MAX) {
        free(owned);
        return true;
    }
    if (c->n_notes == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        tg_prof_note *grown = realloc(c->notes, cap * sizeof *grown);
        if (!grown) {
            free(owned);
            return tg_load_oom(ld);
        }
        c->notes = grown;
        r->cap = cap;
    }
    char *copy = owned ? owned : strndup(text, len);
    if (!copy) return tg_load_oom(ld);
    c->notes[c->n_notes++] = (tg_prof_note){.severity = (int32_t)sev, .text = copy, .count = 1, .first_ns = ts};
    return true;
}

static bool osrt_window_row(tg_loader *ld, const tg_row *st, void *ctx)
{
    (void)ctx;
    tg_capture_info *c = &ld->t->capture;
    int64_t s = tg_cell_i64(st, COL(0)), e = tg_cell_i64(st, COL(1));
    if (s == TG_NULL_I64) return true;
    if (e == TG_NULL_I64 || e < s) e = s;
    c->osrt_records++;
    if (c->osrt_first == TG_NULL_I64 || s < c->osrt_first) c->osrt_first = s;
    if (c->osrt_last == TG_NULL_I64 || e > c->osrt_last) c->osrt_last = e;
    return true;
}

void tg_capture_init(tg_capture_info *c)
{
    *c = (tg_capture_info){.cuda_driver = TG_NULL_I64, .cuda_runtime = TG_NULL_I64, .cupti = TG_NULL_I64,
                           .start_ns = TG_NULL_I64, .stop_ns = TG_NULL_I64,
                           .osrt_first = TG_NULL_I64, .osrt_last = TG_NULL_I64};
}

void tg_capture_free(tg_capture_info *c)
{
    for (size_t i = 0; i < c->n_notes; i++) free(c->notes[i].text);
    free(c->notes);
    free(c->nv_driver);
    tg_capture_init(c);
}

bool tg_load_capture(tg_loader *ld)
{
    static const tg_colspec analysis[] = {{"startTime", NULL, false}, {"stopTime", NULL, false}};
    static const tg_colspec diag[] = {{"timestamp", NULL, false}, {"severity", NULL, false}, {"text", NULL, false}};
    static const tg_colspec osrt[] = {{"start", NULL, false}, {"end", NULL, false}};
    notes_read nr = {0};
    return tg_load_rows(ld, tg_load_find_table(ld, "ANALYSIS_DETAILS"), analysis, 2, analysis_row, NULL) &&
           tg_load_rows(ld, tg_load_find_table(ld, "DIAGNOSTIC_EVENT"), diag, 3, note_row, &nr) &&
           tg_load_rows(ld, ld->t->table_name[TG_TABLE_OSRT], osrt, 2, osrt_window_row, NULL);
}
