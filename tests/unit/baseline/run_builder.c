/*
** Hand-built evaluation results for the baseline tests (see run_builder.h).
** Everything lives in the run's arena, as in a real evaluation.
*/
#include "run_builder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TB_MAX_TRACES 16
#define TB_MAX_RULES 16

tg_run_result *tb_run_new(void)
{
    tg_run_result *run = calloc(1, sizeof *run);
    run->arena = tg_arena_new();
    run->traces = tg_arena_alloc(run->arena, TB_MAX_TRACES * sizeof *run->traces);
    return run;
}

void tb_run_free(tg_run_result *run)
{
    tg_arena_free(run->arena);
    free(run);
}

tg_trace_result *tb_trace(tg_run_result *run, const char *file, const char *gpus,
                          const char *schema)
{
    if (run->n_traces == TB_MAX_TRACES) abort();
    tg_trace_result *t = &run->traces[run->n_traces++];
    *t = (tg_trace_result){
        .file = file, .nsys_version = "2024.5.1.113", .schema_version = schema,
        .gpu_names = gpus, .status = TG_OK,
        .results = tg_arena_alloc(run->arena, TB_MAX_RULES * sizeof *t->results),
    };
    /* what ran: one kernel, so that a recorded baseline carries its
    ** fingerprint (compare.c); no GPU time, so no attribution */
    tg_workload *w = tg_arena_alloc(run->arena, sizeof *w);
    tg_work_entry *k = tg_arena_alloc(run->arena, sizeof *k);
    *k = (tg_work_entry){.name = "train_kernel", .kind = TG_WORK_KERNEL, .count = 100, .total = 1e9,
                         .time = 1e7, .launches = 1};
    *w = (tg_workload){.steady_iterations = 100, .gpu_time = NAN, .period = NAN, .idle = NAN,
                       .ops = k, .n_ops = 1};
    t->workload = w;
    return t;
}

/* The unit the rule compiler gives each metric these tests use; any other
** (the fuzz targets build results from arbitrary text) is a plain number. */
static tg_unit unit_of(const char *metric)
{
    static const struct { const char *metric; tg_unit unit; } known[] = {
        {"p50(period)", TG_UNIT_NS}, {"p50(gpu_time)", TG_UNIT_NS},
        {"mean(duration)", TG_UNIT_NS}, {"mean(kernels)", TG_UNIT_NONE},
        {"count", TG_UNIT_NONE},
    };
    if (!metric) return TG_UNIT_NONE;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(known[i].metric, metric)) return known[i].unit;
    return TG_UNIT_NONE;
}

tg_rule_result *tb_rule(tg_run_result *run, tg_trace_result *t, const char *id,
                        const char *metric, int regression, double value,
                        const double *samples, size_t n_samples)
{
    if (t->n_results == TB_MAX_RULES) abort();
    tg_rule_result *r = &t->results[t->n_results++];
    *r = (tg_rule_result){
        .rule = id, .title = id, .severity = TG_SEV_ERROR,
        .verdict = regression ? TG_V_SKIP : TG_V_PASS,
        .message = regression ? "no baseline given" : "ok",
        .metric = metric, .metric_unit = unit_of(metric), .metric_value = value, .regression = regression,
    };
    if (n_samples) {
        r->samples = tg_arena_alloc(run->arena, n_samples * sizeof *r->samples);
        memcpy(r->samples, samples, n_samples * sizeof *samples);
        r->n_samples = n_samples;
    }
    return r;
}

double *tb_values(tg_run_result *run, size_t n, double centre, double spread, unsigned seed)
{
    double *v = tg_arena_alloc(run->arena, (n ? n : 1) * sizeof *v);
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        double u = (double)(s >> 8) / (double)(1u << 24) * 2.0 - 1.0;
        v[i] = centre + spread * u;
    }
    return v;
}
