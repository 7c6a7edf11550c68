/*
** Busy time over time (model.h, tg_model_busy_bins): what the HTML report
** draws as each device's utilization. One pass of the op stream in start
** order keeps one open union segment per device (as model_device.c does
** for the busy fraction); each closed segment is spread over the equal
** time slices it covers, so overlapping ops count once and a slice's value
** is the share of it the device was busy.
*/
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct bins {
    int64_t from, to;
    size_t n;
    double width;               /* ns per slice */
    double *busy;               /* this device's row */
} bins;

/* Add [s, e) to the slices it overlaps, as fractions of each slice. */
static void spread(const bins *b, int64_t s, int64_t e)
{
    if (s < b->from) s = b->from;
    if (e > b->to) e = b->to;
    if (e <= s) return;
    size_t i = (size_t)((double)(s - b->from) / b->width);
    for (; i < b->n; i++) {
        double lo = (double)b->from + b->width * (double)i, hi = lo + b->width;
        if ((double)s >= hi) continue;
        if ((double)e <= lo) break;
        double from = (double)s > lo ? (double)s : lo, to = (double)e < hi ? (double)e : hi;
        b->busy[i] += (to - from) / b->width;
    }
}

/* The index of device id in m->devices (sorted by id), or -1. */
static long device_index(const tg_model *m, int32_t device)
{
    size_t lo = 0, hi = m->n_devices;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->devices[mid].device == device) return (long)mid;
        if (m->devices[mid].device < device) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

typedef struct open_seg {
    bool open;
    int64_t s, e;
} open_seg;

bool tg_model_busy_bins(const tg_model *m, int64_t from, int64_t to, size_t n_bins, double *busy)
{
    if (!n_bins || to <= from) return false;
    memset(busy, 0, m->n_devices * n_bins * sizeof *busy);
    open_seg *segs = calloc(m->n_devices ? m->n_devices : 1, sizeof *segs);
    tg_op_stream s;
    if (!segs || !tg_model_ops_open(&s, m)) {
        free(segs);
        return false;
    }
    bins b = {from, to, n_bins, (double)(to - from) / (double)n_bins, NULL};
    tg_op op;
    while (tg_model_ops_next(&s, &op)) {
        long d = device_index(m, op.device);
        if (d < 0 || op.start == TG_NULL_I64 || op.end == TG_NULL_I64 || op.end < op.start) continue;
        open_seg *g = &segs[d];
        if (g->open && op.start > g->e) {   /* a gap: the segment closes */
            b.busy = busy + (size_t)d * n_bins;
            spread(&b, g->s, g->e);
            g->open = false;
        }
        if (!g->open) *g = (open_seg){true, op.start, op.end};
        else if (op.end > g->e) g->e = op.end;
    }
    tg_model_ops_close(&s);
    for (size_t d = 0; d < m->n_devices; d++)
        if (segs[d].open) {
            b.busy = busy + d * n_bins;
            spread(&b, segs[d].s, segs[d].e);
        }
    free(segs);
    for (size_t i = 0; i < m->n_devices * n_bins; i++)
        if (busy[i] > 1) busy[i] = 1;   /* rounding at slice edges */
    return true;
}
