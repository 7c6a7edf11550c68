/*
** Missing data (docs/rules.md, "Missing data"): a rule whose verdict reads
** data the trace does not hold is an error saying what is missing and how
** to record it (a skip under --missing-data=skip), never a pass over rows
** that are not there. Before a rule's rows are scanned:
**
**   - a table its source needs is absent;
**   - the API table is empty while GPU work is recorded, and the rule reads
**     what the launch join derives;
**   - an op table (kernels, copies, memsets) the rule reads is empty or
**     absent while the API table holds calls that launch its ops (the
**     classic fail-open: copies emptied, 400 cuMemcpyHtoD calls left, "no
**     blocking copy");
**   - a field it reads is one the trace's format never fills (Kineto has
**     no return codes), or needs call stacks the capture did not record;
**   - its source is osrt and OSRT_API is empty (nsys writes the table
**     without -t osrt);
**   - the GPU side of iterations, on a capture without GPU work or whose
**     iterations launched none;
**   - the capture holds no events at all.
**
** After the scan, for rules on the GPU side of iterations: when half or
** more of the iterations that pass the rule's where launched no GPU work
** the capture recorded, or (for rules on `period`) fewer than half of them
** have a period, the rule has too little to judge: a cv "n/a over 0
** periods of 290 steady iterations" is not a pass. Below that, an
** iteration without GPU work has no period and 0 GPU time.
**
** What is read is the rule's verdict: where, fail_when, metric, samples
** and the aggregates (message ones included), not its evidence columns or
** groups, and not its cause: a cause without OS runtime calls or stacks
** says so (eval_cause.c) and never fails a run.
*/
#include "eval_int.h"

#include <string.h>

/* ------------------------------------------------------------- reading */

typedef void (*field_visit)(void *ctx, const tg_field_def *f);

static void expr_fields(const tg_expr *e, field_visit visit, void *ctx)
{
    if (!e) return;
    if (e->field) visit(ctx, e->field);
    expr_fields(e->a, visit, ctx);
    expr_fields(e->b, visit, ctx);
}

/* Every field the rule's verdict reads. */
static void verdict_fields(const tg_rule *r, field_visit visit, void *ctx)
{
    expr_fields(r->where, visit, ctx);
    expr_fields(r->fail_when, visit, ctx);
    expr_fields(r->metric, visit, ctx);
    expr_fields(r->samples, visit, ctx);
    for (size_t i = 0; i < r->n_aggs; i++) {
        expr_fields(r->aggs[i].arg, visit, ctx);
        if (r->aggs[i].field) visit(ctx, r->aggs[i].field);
    }
}

/* Does the verdict read a field pred accepts? */
typedef struct field_find {
    bool (*pred)(const tg_field_def *f);
    const tg_field_def *found;
} field_find;

static void find_visit(void *ctx, const tg_field_def *f)
{
    field_find *c = ctx;
    if (!c->found && c->pred(f)) c->found = f;
}

static const tg_field_def *verdict_reads(const tg_rule *r, bool (*pred)(const tg_field_def *))
{
    field_find c = {.pred = pred};
    verdict_fields(r, find_visit, &c);
    return c.found;
}

/* Fields the launch join fills (the call that launched an op): without the
** API table every one of them is null. */
static bool launch_field(const tg_field_def *f)
{
    static const char *const kernel[] = {"queue", "api", "launch_end", "tid", NULL};
    static const char *const memop[] = {"api", "api_sync", "api_async", "tid", NULL};
    static const char *const iteration[] = {"period", "gpu_time", "gpu_span", "kernels", "blocking_calls", NULL};
    const char *const *names = f->source == TG_SRC_KERNEL ? kernel
                             : f->source == TG_SRC_MEMCPY || f->source == TG_SRC_MEMSET ? memop
                             : f->source == TG_SRC_ITERATION ? iteration : NULL;
    if (f->source == TG_SRC_DEVICE) return !strcmp(f->name, "queue_p50");
    for (size_t i = 0; names && names[i]; i++)
        if (!strcmp(f->name, names[i])) return true;
    return false;
}

static bool rule_reads_launch(const tg_rule *r)
{
    if (r->source == TG_SRC_MEMCPY || r->source == TG_SRC_MEMSET || r->source == TG_SRC_API) return true;
    return verdict_reads(r, launch_field) != NULL;
}

/* The iteration fields that come from the GPU work launched inside:
** without any recorded, they would read as host time or as zero. */
static bool iteration_gpu_field(const tg_field_def *f)
{
    static const char *const names[] = {"period", "gpu_time", "gpu_span", "kernels"};
    if (f->source != TG_SRC_ITERATION) return false;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(f->name, names[i])) return true;
    return false;
}

static bool period_field(const tg_field_def *f)
{
    return f->source == TG_SRC_ITERATION && !strcmp(f->name, "period");
}

static bool rule_reads_iteration_gpu(const tg_rule *r)
{
    return r->source == TG_SRC_ITERATION && verdict_reads(r, iteration_gpu_field) != NULL;
}

/* The op tables the verdict reads, through its source or its fields. */
static void op_visit(void *ctx, const tg_field_def *f)
{
    *(unsigned *)ctx |= tg_field_op_tables(f);
}

static unsigned rule_op_tables(const tg_rule *r)
{
    unsigned tables = tg_source_op_tables(r->source);
    verdict_fields(r, op_visit, &tables);
    return tables;
}

/* ------------------------------------------------------------- saying it */

static bool missing(const tg_eval_opts *opts, tg_rule_result *res, const char *message)
{
    res->missing_data = true;
    res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
    res->message = message;
    return true;
}

/* How the trace lacks table id's rows: "table X is empty", "the capture
** has no table X", or, for a format whose events are one list, "the trace
** holds no Kineto kernel events". */
static const char *lacks(const tg_trace *t, tg_table_id id, tg_arena *a)
{
    const tg_trace_format_def *fmt = &tg_trace_formats[t->format];
    if (fmt->cite_list) return tg_arena_printf(a, "the trace holds no %s %s", fmt->table_noun, tg_trace_table_label(t, id));
    if (t->has_table[id]) return tg_arena_printf(a, "%s %s is empty", fmt->table_noun, tg_trace_table_label(t, id));
    return tg_arena_printf(a, "the capture has no %s %s", fmt->table_noun, tg_trace_table_label(t, id));
}

static size_t op_rows(const tg_trace *t, int table)
{
    return table == TG_TABLE_KERNEL ? t->n_kernels : table == TG_TABLE_MEMCPY ? t->n_memcpys : t->n_memsets;
}

/* --------------------------------------------------- before the scan */

/* A table the rule's source needs is absent. */
static bool table_absent(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                         tg_arena *arena)
{
    unsigned need = tg_source_required_tables(r->source);
    for (int t = 0; t < TG_TABLE_COUNT; t++) {
        if (!(need & (1u << t)) || m->trace->has_table[t]) continue;
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s needs %s (%s %s), which this capture does not contain; "
                                       "record them with '%s'",
                                       r->info.id, tg_table_what[t], tg_trace_formats[m->trace->format].table_noun,
                                       tg_trace_table_label(m->trace, (tg_table_id)t),
                                       tg_trace_table_option(m->trace, (tg_table_id)t)));
    }
    return false;
}

/* The API table there but empty while GPU work is recorded: the calls that
** launched it were not captured, and every field the launch join derives
** is null. */
static bool calls_lost(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                       tg_arena *arena)
{
    const tg_trace *t = m->trace;
    size_t ops = t->n_kernels + t->n_memcpys + t->n_memsets;
    if (!t->has_table[TG_TABLE_RUNTIME] || tg_trace_api_rows(t) != 0 || ops == 0 || !rule_reads_launch(r))
        return false;
    return missing(opts, res,
                   tg_arena_printf(arena,
                                   "rule %s reads the calls that launched GPU work, but %s while the capture holds "
                                   "%zu kernels, %zu copies and %zu memsets: the CUDA API calls were not recorded; "
                                   "record them with '%s'",
                                   r->info.id, lacks(t, TG_TABLE_RUNTIME, arena), t->n_kernels, t->n_memcpys,
                                   t->n_memsets, tg_trace_table_option(t, TG_TABLE_RUNTIME)));
}

/* An op table the rule reads has no rows while the API table holds calls
** that launch such ops (TG_OP_CALL_PREFIXES): the ops were not recorded.
** A trace without memsets and without memset calls is a program that set
** no memory, and passes. */
static bool ops_lost(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                     tg_arena *arena)
{
    const tg_trace *t = m->trace;
    static const int tables[] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET};
    unsigned reads = rule_op_tables(r);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        int id = tables[i];
        if (!(reads & (1u << id)) || op_rows(t, id) > 0 || m->op_calls[id] == 0) continue;
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s reads %s, but %s while %s %s holds %lld call%s that launch%s them: "
                                       "they were not recorded; record them with '%s'",
                                       r->info.id, tg_table_what[id], lacks(t, (tg_table_id)id, arena),
                                       tg_trace_formats[t->format].table_noun,
                                       tg_trace_table_label(t, TG_TABLE_RUNTIME), (long long)m->op_calls[id],
                                       m->op_calls[id] == 1 ? "" : "s", m->op_calls[id] == 1 ? "es" : "",
                                       tg_trace_table_option(t, (tg_table_id)id)));
    }
    return false;
}

/* A field the verdict reads that this trace cannot fill. */
typedef struct unfilled {
    const tg_model *m;
    const tg_field_def *field;
    const char *why;            /* the sentence after "rule R reads SOURCE.FIELD, " */
    tg_arena *arena;
} unfilled;

static void unfilled_visit(void *ctx, const tg_field_def *f)
{
    unfilled *c = ctx;
    if (c->why) return;
    const tg_trace *t = c->m->trace;
    tg_table_id records;
    const char *never = tg_field_never_filled(f, t->format, &records);
    if (never) {
        c->field = f;
        c->why = tg_arena_printf(c->arena, "which %s never records (%s); record the run with '%s'",
                                 tg_trace_format_what[t->format], never, tg_table_option[records]);
        return;
    }
    int stacks = tg_field_stack_table(f);
    if (stacks < 0) return;
    tg_table_id id = (tg_table_id)stacks;
    const char *cannot = tg_trace_never_records(t, id);
    int which = id == TG_TABLE_OSRT_CALLCHAINS ? TG_STACKS_OSRT : TG_STACKS_CUDA;
    /* frames are read only when a rule reads a call site (check.c) */
    bool empty = t->has_table[id] && (t->host_loaded & TG_HOST_STACKS) && t->n_frames[which] == 0;
    if (!cannot && t->has_table[id] && !empty) return;
    c->field = f;
    c->why = tg_arena_printf(c->arena, "which needs %s, but %s; record them with '%s'", tg_table_what[id],
                             cannot ? cannot : lacks(t, id, c->arena), tg_trace_table_option(t, id));
}

static bool fields_unfilled(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                            tg_arena *arena)
{
    unfilled c = {.m = m, .arena = arena};
    verdict_fields(r, unfilled_visit, &c);
    if (!c.why) return false;
    return missing(opts, res,
                   tg_arena_printf(arena, "rule %s reads %s.%s, %s", r->info.id,
                                   tg_source_defs[c.field->source].name, c.field->name, c.why));
}

/* OSRT_API there but empty: nsys writes the table without -t osrt, and
** any traced program makes OS runtime calls (its own threads poll). */
static bool osrt_empty(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                       tg_arena *arena)
{
    const tg_trace *t = m->trace;
    if (r->source != TG_SRC_OSRT || !t->has_table[TG_TABLE_OSRT] || !(t->host_loaded & TG_HOST_OSRT) ||
        t->n_osrts > 0)
        return false;
    return missing(opts, res,
                   tg_arena_printf(arena, "rule %s needs %s, but %s: the capture did not record them; record "
                                   "them with '%s'", r->info.id, tg_table_what[TG_TABLE_OSRT],
                                   lacks(t, TG_TABLE_OSRT, arena), tg_trace_table_option(t, TG_TABLE_OSRT)));
}

/* A rule reading the GPU side of iterations (period, gpu_time, ...) on a
** capture whose iterations launched no GPU work it recorded: missing
** data, never host time in its place (model_iter.c). */
static bool gpu_work_absent(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                            tg_arena *arena)
{
    if (!m->n_iterations || !rule_reads_iteration_gpu(r)) return false;
    const tg_trace *t = m->trace;
    if (t->n_kernels + t->n_memcpys + t->n_memsets == 0)
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s reads the GPU work of each iteration (its completion, its time), "
                                       "but this capture holds no %s, copies or memsets beside its %zu iterations; "
                                       "record them with '%s'",
                                       r->info.id, tg_table_what[TG_TABLE_KERNEL], m->n_iterations,
                                       tg_trace_table_option(t, TG_TABLE_KERNEL)));
    for (size_t i = 0; i < m->n_iterations; i++)
        if (m->iterations[i].gpu_end != TG_NULL_I64) return false;
    return missing(opts, res,
                   tg_arena_printf(arena,
                                   "rule %s reads the GPU work of each iteration, but none of the %zu iterations "
                                   "launched any of the capture's %zu kernels, %zu copies and %zu memsets (no "
                                   "launching call of theirs starts inside an iteration of its process)",
                                   r->info.id, m->n_iterations, t->n_kernels, t->n_memcpys, t->n_memsets));
}

/* Tables present but every one empty (or every row unusable): a pass
** would say nothing about the program. */
static bool no_events(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                      tg_arena *arena)
{
    const tg_trace *t = m->trace;
    unsigned need = tg_source_required_tables(r->source);
    if (!need || t->n_kernels + t->n_memcpys + t->n_memsets + tg_trace_api_rows(t) + t->n_nvtx + t->n_syncs +
                         t->n_overheads != 0 || tg_model_source(m, r->source).n != 0)
        return false;
    int first = __builtin_ctz(need);
    return missing(opts, res,
                   tg_arena_printf(arena,
                                   "rule %s has nothing to check: this capture holds no events at all "
                                   "(table %s and every other activity table are empty); record them with '%s'",
                                   r->info.id, tg_trace_table_label(t, (tg_table_id)first),
                                   tg_trace_table_option(t, (tg_table_id)first)));
}

/* ------------------------------------------------------ lost data */

/* Does the verdict read GPU ops or the calls that launch them? */
static bool rule_reads_gpu(const tg_rule *r)
{
    switch (r->source) {
    case TG_SRC_KERNEL: case TG_SRC_MEMCPY: case TG_SRC_MEMSET: case TG_SRC_API: case TG_SRC_DEVICE: case TG_SRC_GAP:
        return true;
    default:
        return rule_op_tables(r) != 0 || rule_reads_launch(r) || rule_reads_iteration_gpu(r);
    }
}

/* Data recorded, then lost: an error whatever --missing-data says, since
** recording it again with the same options would not help and a skip
** would let a damaged capture pass (docs/rules.md, "Lost data"). */
static bool lost(tg_rule_result *res, const char *message)
{
    res->missing_data = true;
    res->verdict = TG_V_ERROR;
    res->error_status = TG_ETRACE;
    res->message = message;
    return true;
}

/* The rule reads GPU ops or launch calls, and the capture lost them
** (tg_coverage_lost). */
static bool data_lost(const tg_rule *r, const tg_model *m, tg_rule_result *res, tg_arena *arena)
{
    char what[512];
    if (!rule_reads_gpu(r) || !tg_coverage_lost(&m->coverage, what, sizeof what)) return false;
    return lost(res, tg_arena_printf(arena,
        "rule %s reads GPU work and the calls that launched it, but %s, the data recorded and then lost "
        "(dropped activity buffers, or a profiler that stopped recording), so this is an error, not a skip",
        r->info.id, what));
}

bool tg_missing_before(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                       tg_arena *arena)
{
    /* lost data before iterations without GPU work, which it explains:
    ** never a skip */
    return table_absent(r, m, opts, res, arena) || calls_lost(r, m, opts, res, arena) ||
           no_events(r, m, opts, res, arena) || data_lost(r, m, res, arena) ||
           gpu_work_absent(r, m, opts, res, arena) || ops_lost(r, m, opts, res, arena) ||
           fields_unfilled(r, m, opts, res, arena) || osrt_empty(r, m, opts, res, arena);
}

/* ---------------------------------------------------- after the scan */

void tg_missing_watch(tg_rule_state *st)
{
    st->watch_gpu = rule_reads_iteration_gpu(st->rule);
    st->watch_period = st->watch_gpu && verdict_reads(st->rule, period_field) != NULL;
}

void tg_missing_row(tg_rule_state *st, const char *row)
{
    const tg_iteration *it = (const tg_iteration *)(const void *)row;
    if (it->gpu_end == TG_NULL_I64) st->no_gpu++;
    if (it->period != TG_NULL_I64) st->periods++;
}

bool tg_missing_after(tg_rule_state *st, const tg_eval_opts *opts, tg_arena *arena)
{
    tg_rule_result *res = st->out;
    const char *id = st->rule->info.id;
    long long n = (long long)st->count;
    /* without a baseline a regression rule judges nothing: it is skipped */
    if (!st->watch_gpu || n == 0 || (st->rule->info.regression && !opts->has_baseline)) return false;
    if (st->no_gpu * 2 >= st->count)
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s reads the GPU work of each iteration, but %lld of the %lld "
                                       "iterations that pass its where launched no kernel, copy or memset the "
                                       "capture recorded: too few to judge (GPU activity lost, or ranges that "
                                       "run no GPU work picked as iterations: see 'tracegate info')",
                                       id, (long long)st->no_gpu, n));
    if (st->watch_period && st->periods * 2 < st->count)
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s reads iteration periods, but only %lld of the %lld iterations that "
                                       "pass its where have one (a period is the GPU completion of an iteration "
                                       "after that of the one before it, in the same phase; %lld of them launched "
                                       "no recorded GPU work): too few to judge; capture more iterations",
                                       id, (long long)st->periods, n, (long long)st->no_gpu));
    return false;
}
