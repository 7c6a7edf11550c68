/*
** How `info` and `metrics` read a trace (check.h, "facts"): no rule set
** plans their load, what they report does. Both open it the lean way
** check does (kernels as 56-byte spans, the API table left to one
** stream) after the --max-memory estimate of that load. info streams the
** API table once, for its row count and the processes that made calls,
** keeping one row per new process (a 15-million-call table costs a few
** rows); metrics reads the host side it reports too (OS runtime calls,
** cuDNN and cuBLAS) and builds a model whose streamed API table keeps
** only the blocking calls it counts as rows.
*/
#include "check.h"

#include "../common/idmap.h"

#include <string.h>

/* Open path with load, measured first against plan->max_memory. */
static tg_trace *open_measured(const tg_facts_plan *plan, const char *path, tg_load_opts *load, tg_diag *diag)
{
    load->threads = tg_trace_read_threads(path, plan->threads);
    load->max_memory = plan->max_memory;   /* held while reading too */
    if (!tg_trace_fits_with(path, load, plan->max_memory, diag)) return NULL;
    return tg_trace_open_with(path, load, diag);
}

/* A call is kept as a row only when its process is new to the map; out
** of memory keeps it too (still right, just bigger). */
static int keep_new_process(void *ctx, tg_api *row)
{
    tg_idmap *pids = ctx;
    if (tg_idmap_get(pids, row->pid) >= 0) return 0;
    tg_idmap_put(pids, row->pid, 0);
    return 1;
}

tg_trace *tg_check_open_info(const tg_facts_plan *plan, const char *path, tg_diag *diag)
{
    tg_load_opts load = {.defer_api = true};
    tg_trace *t = open_measured(plan, path, &load, diag);
    if (!t) return NULL;
    tg_idmap pids = {0};
    tg_api_reader_cb cb = {.visit = keep_new_process, .ctx = &pids};
    tg_stream_status st = tg_trace_stream_apis(t, &cb, diag);
    tg_idmap_free(&pids);
    /* a table that records calls twice (old exports) is read whole */
    if (st == TG_STREAM_DONE || (st == TG_STREAM_STOPPED && tg_trace_load_apis(t, diag))) return t;
    tg_trace_close(t);
    return NULL;
}

/* The model's keep_api for info: one row per new process, as above. */
static bool keep_new_process_row(void *ctx, const tg_model *m, const tg_api *row)
{
    (void)m;
    return keep_new_process(ctx, (tg_api *)row) != 0;
}

tg_trace *tg_check_open_info_with(const tg_facts_plan *plan, const char *path, tg_coverage *cov, tg_diag *diag)
{
    if (!cov) return tg_check_open_info(plan, path, diag);
    memset(cov, 0, sizeof *cov);
    tg_load_opts load = {.defer_api = true};
    tg_trace *t = open_measured(plan, path, &load, diag);
    if (!t) return NULL;
    /* the launch pass counts what check counts (the same lean load and
    ** stream), so info and check give one account */
    tg_idmap pids = {0};
    tg_model_params params = {.iteration_pattern = plan->iteration_pattern, .keep_api = keep_new_process_row,
                              .keep_ctx = &pids, .skip_nvtx_gpu = true};
    tg_model *m = tg_model_build(t, &params, diag);
    tg_idmap_free(&pids);
    if (!m) {
        /* info never needed the model before: read it as ever, without
        ** the coverage, and say nothing of the model */
        tg_trace_close(t);
        tg_diag_clear(diag);
        tg_diag_init(diag);
        return tg_check_open_info(plan, path, diag);
    }
    *cov = m->coverage;
    tg_model_free(m);
    return t;
}

tg_trace *tg_check_open_metrics(const tg_facts_plan *plan, const char *path, tg_diag *diag)
{
    tg_load_opts load = {.defer_api = true, .host = TG_HOST_OSRT | TG_HOST_LIBRARIES};
    return open_measured(plan, path, &load, diag);
}

/* The calls metrics counts as rows: blocking ones (the rest it reads from
** the model's facts and the ops' derived fields). */
static bool keep_blocking(void *ctx, const tg_model *m, const tg_api *row)
{
    (void)ctx;
    (void)m;
    return row->blocking;
}

tg_model *tg_check_model_metrics(const tg_facts_plan *plan, tg_trace *t, tg_diag *diag)
{
    tg_model_params params = {.iteration_pattern = plan->iteration_pattern, .keep_api = keep_blocking,
                              .skip_nvtx_gpu = true};
    return tg_model_build(t, &params, diag);
}
