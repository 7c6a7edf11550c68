/*
** The timeline of a trace for the HTML report (eval.h, tg_eval_timeline):
** each device's utilization over the trace in TG_TIMELINE_BINS slices
** (model_timeline.c), the gap rows the model kept (longest first, each
** naming the op before it as the gap rule's evidence does, so the report
** can link a drawn gap to its cited row), the steady window, and the
** iterations of the process with the most steady ones: period and GPU
** time per iteration, the series the regression rules' baseline band is
** drawn over. Everything goes to the trace's arena.
*/
#include "eval_int.h"

#include <stdlib.h>
#include <string.h>

static bool devices(const tg_model *m, tg_arena *a, tg_timeline *tl)
{
    tl->from = INT64_MAX;
    tl->to = INT64_MIN;
    for (size_t d = 0; d < m->n_devices; d++) {
        if (m->devices[d].start != TG_NULL_I64 && m->devices[d].start < tl->from) tl->from = m->devices[d].start;
        if (m->devices[d].end != TG_NULL_I64 && m->devices[d].end > tl->to) tl->to = m->devices[d].end;
    }
    if (!m->n_devices || tl->to <= tl->from) {
        tl->from = tl->to = 0;
        return true;   /* nothing ran on a GPU: no rows to draw */
    }
    tl->n_bins = TG_TIMELINE_BINS;
    tl->n_devices = m->n_devices;
    tl->devices = tg_arena_alloc(a, m->n_devices * sizeof *tl->devices);
    tl->device_names = tg_arena_alloc(a, m->n_devices * sizeof *tl->device_names);
    tl->busy = tg_arena_alloc(a, m->n_devices * tl->n_bins * sizeof *tl->busy);
    if (!tl->devices || !tl->device_names || !tl->busy) return false;
    for (size_t d = 0; d < m->n_devices; d++) {
        tl->devices[d] = m->devices[d].device;
        const char *name = tg_trace_str(m->trace, m->devices[d].name);
        tl->device_names[d] = name ? tg_arena_strdup(a, name) : NULL;
    }
    return tg_model_busy_bins(m, tl->from, tl->to, tl->n_bins, tl->busy);
}

static int cmp_gap_length(const void *x, const void *y)
{
    const tg_gap *a = *(const tg_gap *const *)x, *b = *(const tg_gap *const *)y;
    if (a->duration != b->duration) return a->duration > b->duration ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

static bool gaps(const tg_model *m, tg_arena *a, tg_timeline *tl)
{
    if (!m->n_gaps) return true;
    const tg_gap **order = malloc(m->n_gaps * sizeof *order);
    if (!order) return false;
    for (size_t i = 0; i < m->n_gaps; i++) order[i] = &m->gaps[i];
    qsort(order, m->n_gaps, sizeof *order, cmp_gap_length);
    size_t n = m->n_gaps < TG_TIMELINE_MAX_GAPS ? m->n_gaps : TG_TIMELINE_MAX_GAPS;
    tl->gaps = tg_arena_alloc(a, n * sizeof *tl->gaps);
    for (size_t i = 0; tl->gaps && i < n; i++) {
        const tg_gap *g = order[i];
        tl->gaps[i] = (tg_timeline_gap){g->device, g->start, g->end, tg_trace_cite_table(m->trace, g->table), g->rowid};
    }
    free(order);
    tl->n_gaps = tl->gaps ? n : 0;
    return tl->gaps != NULL;
}

/* The process with the most steady iterations (the lowest pid on a tie). */
static bool pick_process(const tg_model *m, int32_t *pid, size_t *first, size_t *count)
{
    size_t best = 0;
    bool found = false;
    for (size_t i = 0; i < m->n_iterations;) {
        size_t j = i, steady = 0;
        for (; j < m->n_iterations && m->iterations[j].pid == m->iterations[i].pid; j++)
            steady += m->iterations[j].steady != 0;
        if (!found || steady > best) {
            found = true;
            best = steady;
            *pid = m->iterations[i].pid;
            *first = i;
            *count = j - i;
        }
        i = j;
    }
    return found;
}

static bool iterations(const tg_model *m, tg_arena *a, tg_timeline *tl)
{
    size_t first = 0, count = 0;
    if (!m->has_iterations || !pick_process(m, &tl->iter_pid, &first, &count)) return true;
    if (count > TG_TIMELINE_MAX_POINTS) count = TG_TIMELINE_MAX_POINTS;
    tl->iterations = tg_arena_alloc(a, count * sizeof *tl->iterations);
    if (!tl->iterations) return false;
    for (size_t k = 0; k < count; k++) {
        const tg_iteration *it = &m->iterations[first + k];
        tl->iterations[k] = (tg_iter_point){it->rowid, it->index, it->start, it->duration, it->period,
                                            it->gpu_end != TG_NULL_I64 ? it->gpu_time : TG_NULL_I64,
                                            it->steady != 0};
    }
    tl->n_iterations = count;
    tl->iter_table = tg_trace_cite_table(m->trace, TG_TABLE_NVTX);
    return true;
}

tg_timeline *tg_eval_timeline(const tg_model *m, tg_arena *a)
{
    tg_timeline *tl = tg_arena_alloc(a, sizeof *tl);
    if (!tl) return NULL;
    tl->steady_start = m->steady_start;
    tl->steady_end = m->steady_end;
    tl->has_iterations = m->has_iterations;
    tl->iter_pid = -1;
    if (!devices(m, a, tl) || !gaps(m, a, tl) || !iterations(m, a, tl)) return NULL;
    return tl;
}
