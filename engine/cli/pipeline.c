/*
** The evaluation pipeline shared by `check` and `baseline record`: for each
** trace, open it (engine/trace), derive the sources (engine/model) and run
** the rules (engine/eval) into that trace's slot of the run result. With
** --jobs N, N worker threads take traces from a shared counter; each trace
** has its own arena, so workers never share mutable state but the counter.
*/
#include "cli.h"
#include "../model/source.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct pipeline {
    const char *const *traces;
    size_t n_traces;
    const tg_ruleset *rs;
    const tg_eval_opts *eval_opts;
    const tg_model_params *model_params;
    bool load_all;             /* --load all: every row of every table */
    tg_run_result *run;
    tg_diag *diags;            /* one per trace, printed in order at the end */
    atomic_size_t next;
} pipeline;

/* Distinct GPU names of the devices that ran work, comma-separated. */
static const char *gpu_names(const tg_model *m, tg_arena *a)
{
    const tg_trace *t = m->trace;
    char buf[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < t->n_gpus; i++) {
        const char *name = tg_trace_str(t, t->gpus[i].name);
        if (!name || strstr(buf, name)) continue;
        int n = snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", name);
        if (n < 0 || (size_t)n >= sizeof buf - len) break;
        len += (size_t)n;
    }
    return len ? tg_arena_strdup(a, buf) : NULL;
}

/* Does an enabled rule read source src? */
static bool rules_read(const tg_ruleset *rs, tg_source_id src)
{
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        if (r->enabled && tg_source_find(r->source) && tg_source_find(r->source)->id == src) return true;
    }
    return false;
}

tg_load_opts tg_cli_load_opts(const tg_ruleset *rs, bool load_all)
{
    /* what the rules need: kernel rows only for rules on `kernel`, the API
    ** table streamed, keeping the calls a rule can count */
    return (tg_load_opts){.kernel_rows = load_all || rules_read(rs, TG_SRC_KERNEL), .defer_api = !load_all};
}

static tg_status evaluate_one(pipeline *p, size_t i)
{
    tg_trace_result *out = &p->run->traces[i];
    tg_diag *diag = &p->diags[i];
    out->arena = tg_arena_new();
    if (!out->arena) return TG_EINTERNAL;
    out->file = tg_arena_strdup(out->arena, p->traces[i]);

    tg_load_opts load = tg_cli_load_opts(p->rs, p->load_all);
    bool kernel_rows = load.kernel_rows;
    tg_model_params mp = *p->model_params;
    tg_row_keeper keep = {.rs = p->rs};
    if (!p->load_all) {
        /* a rule that may count any call: the table is read whole */
        mp.keep_api = tg_row_filter_keeps_all(p->rs, TG_SRC_API) ? NULL : tg_row_keep_api;
        mp.keep_ctx = &keep;
        mp.skip_nvtx_gpu = !kernel_rows && !rules_read(p->rs, TG_SRC_NVTX);
    }
    tg_trace *t = tg_trace_open_with(p->traces[i], &load, diag);
    if (!t) {
        out->status = diag->n_errors ? diag->status : TG_ETRACE;
        out->error = diag->n ? tg_arena_strdup(out->arena, diag->msgs[0].text)
                             : "the trace could not be read";
        return out->status;
    }
    if (t->nsys_version) out->nsys_version = tg_arena_strdup(out->arena, t->nsys_version);
    if (t->schema_version) out->schema_version = tg_arena_strdup(out->arena, t->schema_version);

    tg_status st = TG_OK;
    tg_model *m = tg_model_build(t, &mp, diag);
    tg_row_filter_free(keep.filter);
    if (!m) {
        st = diag->n_errors ? diag->status : TG_EINTERNAL;
        out->status = st;
        out->error = diag->n ? tg_arena_strdup(out->arena, diag->msgs[0].text)
                             : "the trace model could not be built";
    } else {
        out->gpu_names = gpu_names(m, out->arena);
        st = tg_eval_model(p->rs, m, p->eval_opts, out->arena, out, diag);
        if (st != TG_OK) {
            out->status = st;
            out->error = diag->n ? tg_arena_strdup(out->arena, diag->msgs[0].text)
                                 : "evaluation failed";
        }
        tg_model_free(m);
    }
    tg_trace_close(t);
    return st;
}

static void *worker(void *arg)
{
    pipeline *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n_traces) break;
        evaluate_one(p, i);
    }
    return NULL;
}

int tg_cli_evaluate(const char *const *traces, size_t n_traces, const tg_ruleset *rs,
                    const tg_eval_opts *eval_opts, const tg_model_params *model_params,
                    int jobs, bool load_all, tg_run_result *run)
{
    run->traces = tg_arena_alloc(run->arena, (n_traces ? n_traces : 1) * sizeof *run->traces);
    tg_diag *diags = calloc(n_traces ? n_traces : 1, sizeof *diags);
    if (!run->traces || !diags) {
        free(diags);
        tg_cli_say("out of memory");
        return TG_EINTERNAL;
    }
    run->n_traces = n_traces;
    /* Predicate pushdown: the model materialises only the gap rows some
    ** rule can see (long captures have tens of millions of short gaps; the
    ** built-in rule looks at those of 500 ms and more). */
    tg_model_params mp = model_params ? *model_params : (tg_model_params){0};
    int64_t gap_floor = tg_rules_lower_bound(rs, TG_SRC_GAP, "duration");
    if (gap_floor > mp.gap_rows_min_ns) mp.gap_rows_min_ns = gap_floor;
    pipeline p = {traces, n_traces, rs, eval_opts, &mp, load_all, run, diags, 0};

    if (jobs < 1) jobs = 1;
    if ((size_t)jobs > n_traces) jobs = (int)n_traces;
    pthread_t *threads = jobs > 1 ? calloc((size_t)jobs, sizeof *threads) : NULL;
    int started = 0;
    for (int j = 0; threads && j < jobs; j++)
        if (pthread_create(&threads[j], NULL, worker, &p) == 0) started++;
    worker(&p); /* the main thread works too (and alone when jobs == 1) */
    for (int j = 0; j < started; j++) pthread_join(threads[j], NULL);
    free(threads);

    int worst = TG_OK;
    for (size_t i = 0; i < n_traces; i++) {
        tg_cli_report_diag(&diags[i], TG_OK);
        tg_diag_clear(&diags[i]);
        int st = run->traces[i].status;
        if (st == TG_EINTERNAL || (st == TG_ETRACE && worst != TG_EINTERNAL)) worst = st;
        else if (st == TG_EUSAGE && worst == TG_OK) worst = st;   /* a bad pattern: not a pass */
    }
    free(diags);
    return worst;
}

void tg_cli_run_free(tg_run_result *run)
{
    for (size_t i = 0; i < run->n_traces; i++) tg_arena_free(run->traces[i].arena);
    tg_arena_free(run->arena);
    memset(run, 0, sizeof *run);
}
