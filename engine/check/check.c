/*
** tg_check_trace (check.h): the pipeline of one trace. The load is planned
** from the rules: kernel rows (tg_kernel) only when a rule reads the kernel
** source, else 56-byte spans; the API table streamed through the model's
** launch join, keeping only the calls some rule's `where` admits (the
** evaluator's own row test, tg_row_keep_api), or loaded whole when a rule
** may count any call; NVTX GPU attribution only when a rule reads nvtx or
** kernel rows; gap rows only as long as some rule can see. load_all keeps
** every row of every table instead, for the same results
** (tests/corpus/test_load_corpus.c holds that).
*/
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct GPU names of the devices the trace describes, comma-separated. */
static const char *gpu_names(const tg_trace *t, tg_arena *a)
{
    char buf[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < t->n_gpus; i++) {
        const char *name = tg_trace_str(t, t->gpus[i].name);
        bool seen = false;   /* by whole name: "H100" is not "H100 NVL" */
        for (size_t j = 0; j < i && !seen; j++) {
            const char *other = tg_trace_str(t, t->gpus[j].name);
            seen = other && name && !strcmp(other, name);
        }
        if (!name || seen) continue;
        int n = snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", name);
        if (n < 0 || (size_t)n >= sizeof buf - len) break;
        len += (size_t)n;
    }
    return len ? tg_arena_strdup(a, buf) : NULL;
}

/* What the trace says about where it was recorded (trace_origin.c). */
static bool origin_of(const tg_trace *t, tg_arena *a, tg_origin *o)
{
    *o = (tg_origin){.rank = -1, .world_size = -1};
    /* a Kineto trace's distributedInfo, an export's recorded environment */
    const char *from = tg_trace_rank_source(t);
    if (from && t->rank >= 0 && (t->world_size <= 0 || t->rank < t->world_size)) {
        o->rank = t->rank;
        o->rank_from = from;
        if (t->world_size > 0) o->world_size = t->world_size;
    }
    if (t->host && !(o->host = tg_arena_strdup(a, t->host))) return false;
    if (t->job && !(o->job = tg_arena_strdup(a, t->job))) return false;
    int32_t *pids;
    int64_t n = tg_trace_gpu_pids(t, &pids);
    if (n < 0) return false;
    o->pids = tg_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *o->pids);
    if (o->pids) memcpy(o->pids, pids, (size_t)n * sizeof *pids);
    o->n_pids = (size_t)n;
    free(pids);
    return o->pids != NULL;
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

tg_check_plan tg_check_plan_for(const tg_ruleset *rs)
{
    /* Predicate pushdown: the model materialises only the gap rows some
    ** rule can see (long captures have tens of millions of short gaps;
    ** the built-in rule looks at those of 500 ms and more). */
    int64_t floor = tg_rules_lower_bound(rs, TG_SRC_GAP, "duration");
    return (tg_check_plan){.rs = rs, .eval = {.missing = TG_MISSING_FAIL}, .gap_rows_min_ns = floor > 0 ? floor : 0};
}

/* call_site, call_module and callchain read the stacks: loaded with them,
** a rule on them over a capture without stacks reports missing data
** (engine/eval/eval_missing.c) the same way under --load all */
static bool site_field(const tg_field_def *f)
{
    return tg_field_stack_table(f) >= 0;
}

/* The host-side tables (docs/host.md) read at open: those a rule's source
** or fields need. A failure's cause reads its own later (tg_eval_causes). */
static unsigned host_tables(const tg_check_plan *plan)
{
    if (plan->load_all) return TG_HOST_ALL;
    unsigned host = 0;
    if (rules_read(plan->rs, TG_SRC_OSRT)) host |= TG_HOST_OSRT;
    if (rules_read(plan->rs, TG_SRC_CUDNN) || rules_read(plan->rs, TG_SRC_CUBLAS)) host |= TG_HOST_LIBRARIES;
    if (tg_rules_read_field(plan->rs, site_field)) host |= TG_HOST_STACKS;
    return host;
}

tg_load_opts tg_check_load_opts(const tg_check_plan *plan)
{
    return (tg_load_opts){.kernel_rows = plan->load_all || rules_read(plan->rs, TG_SRC_KERNEL),
                          .defer_api = !plan->load_all, .host = host_tables(plan),
                          .max_memory = plan->max_memory};
}

static tg_status failed(tg_trace_result *out, const tg_diag *diag, tg_status fallback, const char *why)
{
    out->status = diag->n_errors ? diag->status : fallback;
    out->error = diag->n ? tg_arena_strdup(out->arena, diag->msgs[0].text) : why;
    return out->status;
}

tg_status tg_check_trace(const tg_check_plan *plan, const char *path, tg_trace_result *out, tg_diag *diag)
{
    out->arena = tg_arena_new();
    if (!out->arena) return out->status = TG_EINTERNAL;
    out->file = tg_arena_strdup(out->arena, path);
    out->origin = (tg_origin){.rank = -1, .world_size = -1};

    tg_load_opts load = tg_check_load_opts(plan);
    load.threads = tg_trace_read_threads(path, plan->threads);
    tg_model_params mp = {.iteration_pattern = plan->iteration_pattern, .gap_rows_min_ns = plan->gap_rows_min_ns};
    tg_row_keeper keep = {.rs = plan->rs};
    if (!plan->load_all) {
        /* a rule that may count any call: the table is read whole */
        mp.keep_api = tg_row_filter_keeps_all(plan->rs, TG_SRC_API) ? NULL : tg_row_keep_api;
        mp.keep_ctx = &keep;
        mp.skip_nvtx_gpu = !load.kernel_rows && !rules_read(plan->rs, TG_SRC_NVTX);
    }
    tg_trace *t = tg_trace_open_with(path, &load, diag);
    if (!t) return failed(out, diag, TG_ETRACE, "the trace could not be read");
    if (t->nsys_version) out->nsys_version = tg_arena_strdup(out->arena, t->nsys_version);
    if (t->schema_version) out->schema_version = tg_arena_strdup(out->arena, t->schema_version);
    if (!origin_of(t, out->arena, &out->origin)) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory");
        tg_trace_close(t);
        return failed(out, diag, TG_EINTERNAL, "out of memory");
    }

    tg_status st = TG_OK;
    tg_model *m = tg_model_build(t, &mp, diag);
    tg_row_filter_free(keep.filter);
    if (!m) {
        st = failed(out, diag, TG_EINTERNAL, "the trace model could not be built");
    } else {
        out->api_streamed = t->apis_partial;
        out->coverage = m->coverage;
        out->gpu_names = gpu_names(t, out->arena);
        st = tg_eval_model(plan->rs, m, &plan->eval, out->arena, out, diag);
        if (st == TG_OK) st = tg_eval_causes(plan->rs, m, &plan->eval, out->arena, out, diag);
        /* every checked trace carries its workload, regression rules or
        ** not: merge compares ranks with it (docs/formats.md, "Workload") */
        if (st == TG_OK && !out->workload && !(out->workload = tg_eval_workload(m, out->arena))) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while evaluating rules");
            st = TG_EINTERNAL;
        }
        /* the ranks a trace holds, after the workload: merge reads both */
        if (st == TG_OK && !tg_eval_ranks(m, plan->straggler, out->arena, out)) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while splitting %s by rank", path);
            st = TG_EINTERNAL;
        }
        if (st != TG_OK) failed(out, diag, st, "evaluation failed");
        if (st == TG_OK && plan->timeline && !(out->timeline = tg_eval_timeline(m, out->arena))) {
            tg_diag_error(diag, TG_EINTERNAL, "out of memory while drawing the timeline of %s", path);
            st = failed(out, diag, TG_EINTERNAL, "out of memory");
        }
        tg_model_free(m);
    }
    tg_trace_close(t);
    return st;
}
