/*
** In-memory traces and models for the evaluator's tests: rows are filled
** by hand (no loader, no SQLite), so every expected aggregate in the tests
** can be computed on paper from the rows written here.
*/
#ifndef TG_TEST_EVAL_WORLD_H
#define TG_TEST_EVAL_WORLD_H

#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "model/source.h"

#define WMAX 32

typedef struct world {
    tg_trace trace;
    tg_model model;
    tg_kernel kernels[WMAX];
    tg_memop memcpys[WMAX];
    tg_api apis[WMAX];
    tg_iteration iters[WMAX];
    tg_gap gaps[WMAX];
    tg_device devices[WMAX];
    tg_arena *arena;
    tg_diag diag;
    tg_ruleset *rs;
    tg_trace_result result;
} world;

static inline int32_t wstr(world *w, const char *s)
{
    return s ? tg_strpool_intern(w->trace.strings, s, strlen(s)) : TG_NO_STR;
}

static inline world *world_new(void)
{
    world *w = calloc(1, sizeof *w);
    w->trace.strings = tg_strpool_new();
    w->trace.path = "mem.sqlite";
    for (int t = 0; t < TG_TABLE_COUNT; t++) w->trace.has_table[t] = true;
    /* the rows' launch fields (api_sync, queue, ...) are set by hand as if
    ** the launch join had run on a recorded API table: say it was */
    w->trace.n_api_rows = 1;
    w->trace.kernels = w->kernels;
    w->trace.memcpys = w->memcpys;
    w->trace.apis = w->apis;
    w->model.trace = &w->trace;
    w->model.iterations = w->iters;
    w->model.gaps = w->gaps;
    w->model.devices = w->devices;
    w->model.facts.rowid = -1;
    w->model.facts.schema_version = w->model.facts.nsys_version = TG_NO_STR;
    w->arena = tg_arena_new();
    tg_diag_init(&w->diag);
    return w;
}

static inline void world_free(world *w)
{
    tg_rules_free(w->rs);
    tg_arena_free(w->arena);
    tg_diag_clear(&w->diag);
    tg_strpool_free(w->trace.strings);
    free(w);
}

static inline tg_memop *add_memcpy(world *w, int64_t rowid, int64_t start, int64_t dur, int64_t bytes,
                                   const char *kind, const char *api, int sync)
{
    tg_memop *m = &w->memcpys[w->trace.n_memcpys++];
    *m = (tg_memop){.rowid = rowid, .start = start, .end = start + dur, .bytes = bytes,
                    .kind_name = wstr(w, kind), .api_name = wstr(w, api), .api_sync = (int8_t)sync,
                    .api_async = (int8_t)!sync, .src_kind_name = wstr(w, "pageable"),
                    .dst_kind_name = wstr(w, "device"), .api = -1, .tid = -1, .iteration = -1,
                    .copy_kind = 1, .correlation = rowid};
    return m;
}

static inline tg_kernel *add_kernel(world *w, int64_t rowid, int64_t start, int64_t dur, const char *name,
                                    int64_t queue, int device)
{
    tg_kernel *k = &w->kernels[w->trace.n_kernels++];
    *k = (tg_kernel){.rowid = rowid, .start = start, .end = start + dur, .device = device,
                     .name = wstr(w, name), .short_name = wstr(w, name), .api = -1, .api_name = TG_NO_STR,
                     .tid = -1, .queue = queue, .nvtx = TG_NO_STR, .iteration = -1};
    return k;
}

static inline tg_api *add_api(world *w, int64_t rowid, int64_t start, int64_t dur, const char *name)
{
    tg_api *a = &w->apis[w->trace.n_apis++];
    *a = (tg_api){.rowid = rowid, .start = start, .end = start + dur, .pid = 1, .tid = 2,
                  .name = wstr(w, name), .base_name = wstr(w, name), .iteration = -1, .dup_of = -1};
    return a;
}

static inline tg_iteration *add_iter(world *w, int64_t rowid, int64_t period, int64_t gpu_time, int warmup)
{
    size_t i = w->model.n_iterations++;
    tg_iteration *it = &w->iters[i];
    *it = (tg_iteration){.rowid = rowid, .index = (int32_t)i, .name = wstr(w, "iteration"), .pid = 1,
                         .start = 1000 * (int64_t)i, .end = 1000 * (int64_t)i + 900, .duration = 900,
                         .warmup = (int8_t)warmup, .period = period,
                         .gpu_end = gpu_time > 0 ? 1000 * (int64_t)i + gpu_time : TG_NULL_I64,
                         .gpu_time = gpu_time, .gpu_span = TG_NULL_I64};
    return it;
}

/* Load rules from one text; fails the test on errors. */
static inline void world_rules(world *w, const char *text)
{
    tg_rules_text t = {"rules.yaml", text};
    w->rs = tg_rules_load_texts(&t, 1, NULL, 0, &w->diag);
    for (size_t i = 0; i < w->diag.n; i++) {
        char *s = tg_diag_format(&w->diag.msgs[i], false);
        print_message("%s\n", s);
        free(s);
    }
    assert_non_null(w->rs);
}

static inline tg_rule_result *world_eval(world *w, const tg_eval_opts *opts, const char *rule)
{
    memset(&w->result, 0, sizeof w->result);
    assert_int_equal(tg_eval_model(w->rs, &w->model, opts, w->arena, &w->result, &w->diag), TG_OK);
    for (size_t i = 0; i < w->result.n_results; i++)
        if (strcmp(w->result.results[i].rule, rule) == 0) return &w->result.results[i];
    fail_msg("no result for rule %s", rule);
    return NULL;
}

static inline const tg_value *value_of(const tg_rule_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_values; i++)
        if (strcmp(r->values[i].name, name) == 0) return &r->values[i].value;
    fail_msg("no value %s", name);
    return NULL;
}

static inline const tg_value *field_of(const tg_evidence *e, const char *name)
{
    for (size_t i = 0; i < e->n_fields; i++)
        if (strcmp(e->fields[i].name, name) == 0) return &e->fields[i].value;
    fail_msg("no evidence field %s", name);
    return NULL;
}

#define HEAD(id, source) "  - id: " id "\n    title: " id "\n    severity: error\n    source: " source "\n"

#endif
