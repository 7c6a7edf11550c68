/*
** What the files of the history store share (not part of the public
** header): history_store.c opens a history and writes it, history_load.c
** reads its runs back. Both run every statement through the store's row
** (store.h).
*/
#ifndef TG_HISTORY_INT_H
#define TG_HISTORY_INT_H

#include <inttypes.h>
#include <stdlib.h>

#include "history.h"
#include "store.h"

struct tg_history {
    const tg_store_ops *ops;
    tg_store *s;
    char *shown;                /* the name messages give: a URI's password masked */
    tg_arena *arena;            /* the strings append gives the caller's runs */
};

#define HS_RUN_COLS                                                                                    \
    "id, workload, workload_name, label, time, branch, gpu, format, marker, nsys_version,"             \
    " schema_version, trace, rules_digest, metrics_digest, tool_version, verdict, regressed, epoch," \
    " has_work, steady_iterations, gpu_time, period, idle, work_total"
enum { HS_N_RUN_COLS = 24, HS_N_METRIC_COLS = 9, HS_N_WORK_COLS = 8 };

static inline tg_status hs_exec(tg_history *h, const char *sql, const char *const *params, size_t n,
                                tg_store_row_fn row, void *ctx, tg_diag *diag)
{
    return h->ops->exec(h->s, sql, params, n, row, ctx, diag);
}

static inline tg_status hs_oom(tg_history *h, tg_diag *diag)
{
    tg_diag_error(diag, TG_EINTERNAL, "out of memory working on the history %s", h->shown);
    return TG_EINTERNAL;
}

static inline const char *hs_i64(tg_arena *a, int64_t v)
{
    return tg_arena_printf(a, "%" PRId64, v);
}

static inline int64_t hs_parse_i64(const char *s)
{
    return s ? strtoll(s, NULL, 10) : 0;
}

/* The runs a new run's workload is matched against: the latest run of
** every key in the store (loaded with work when a run needs a match),
** then each run appended earlier in the same call. malloc'd. */
typedef struct hs_cands {
    tg_hist_run *runs;
    size_t n, cap;
} hs_cands;

/* The latest run of every workload key in the store, their work entries
** loaded when with_work (history_load.c). Inside a transaction. */
tg_status tg_hs_candidates(tg_history *h, bool with_work, tg_arena *arena, hs_cands *out, tg_diag *diag);

#endif
