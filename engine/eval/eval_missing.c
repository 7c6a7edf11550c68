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
**   - the capture holds no events at all;
**   - the window a rule on device utilization or starvation judges is too
**     small (fewer than TG_JUDGE_MIN_OPS GPU ops, or shorter than
**     TG_JUDGE_MIN_WINDOW_NS): too little to judge, not a verdict on one
**     kernel's 1.7 us.
**
** Untimed GPU work (docs/rules.md, "Untimed GPU work"): copies or memsets
** whose launch calls have no GPU record, beside kernels that were timed.
** A rule that reads exactly that activity (sync-memset for memsets, the
** copy rules for copies) with none of it timed is missing data naming it;
** a rule that reads it only through the GPU's busy time (utilization,
** gaps, iteration GPU time) is evaluated on what was timed, and its result
** carries the sentence `untimed`: what was not timed and how much at most
** it could change the numbers.
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

#include "../common/units.h"

#include <math.h>
#include <stdlib.h>
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
    res->untimed = NULL;   /* no verdict to qualify */
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
        /* an op table of a capture that traced CUDA: info's account, never
        ** "record them with -t cuda" (tg_coverage_ops_absent) */
        char why[512];
        const tg_trace *tr = m->trace;
        int64_t calls = t == TG_TABLE_RUNTIME ? (int64_t)(tr->n_kernels + tr->n_memcpys + tr->n_memsets) : m->op_calls[t];
        if ((t == TG_TABLE_KERNEL || t == TG_TABLE_MEMCPY || t == TG_TABLE_MEMSET || t == TG_TABLE_RUNTIME) &&
            tg_coverage_ops_absent(tr, t, calls, why, sizeof why))
            return missing(opts, res, tg_arena_printf(arena, "rule %s needs %s, but %s", r->info.id,
                                                      tg_table_what[t], why));
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
    /* the GPU work is there, so CUDA was traced: info's account */
    char why[512];
    if (tg_coverage_ops_absent(t, TG_TABLE_RUNTIME, (int64_t)ops, why, sizeof why))
        return missing(opts, res, tg_arena_printf(arena, "rule %s reads the calls that launched GPU work, but %s",
                                                  r->info.id, why));
    return missing(opts, res,
                   tg_arena_printf(arena,
                                   "rule %s reads the calls that launched GPU work, but %s while the capture holds "
                                   "%zu kernels, %zu copies and %zu memsets: the CUDA API calls were not recorded; "
                                   "record them with '%s'",
                                   r->info.id, lacks(t, TG_TABLE_RUNTIME, arena), t->n_kernels, t->n_memcpys,
                                   t->n_memsets, tg_trace_table_option(t, TG_TABLE_RUNTIME)));
}

/* Fields that read copies exactly, not only as part of the GPU's busy
** time: what the copy rules judge. */
static bool copy_field(const tg_field_def *f)
{
    if (f->source == TG_SRC_MEMCPY) return true;
    if (f->source == TG_SRC_DEVICE) return !strcmp(f->name, "copy_time_steady") || !strcmp(f->name, "copy_frac_steady");
    return f->source == TG_SRC_TRACE && !strcmp(f->name, "memcpys");
}

static bool memset_field(const tg_field_def *f)
{
    return f->source == TG_SRC_MEMSET || (f->source == TG_SRC_TRACE && !strcmp(f->name, "memsets"));
}

/* Does the verdict read op table `table` itself (its rows, or a number
** only it gives), rather than only the busy time all ops make up? Kernels
** always: they are the GPU work. */
static bool reads_exactly(const tg_rule *r, int table)
{
    if (table == TG_TABLE_KERNEL) return true;
    if (tg_source_op_tables(r->source) == 1u << table) return true;
    return verdict_reads(r, table == TG_TABLE_MEMCPY ? copy_field : memset_field) != NULL;
}

/* Is op table id's whole activity untimed while kernels were, so that a
** rule on the GPU's busy time can still be judged on what was timed? */
static bool untimed_whole(const tg_trace *t, const tg_model *m, int id)
{
    return id != TG_TABLE_KERNEL && op_rows(t, id) == 0 && m->op_calls[id] > 0 && t->n_kernels > 0;
}

/* What to do about copies or memsets that are called but not timed while
** kernels are: no option records them better, so the advice is the truth
** of the trace (CUPTI and Kineto leave out memsets that did no work). */
static const char *untimed_advice(const tg_trace *t, int id, tg_arena *a)
{
    return tg_arena_printf(a,
        "the capture recorded CUDA activity (%zu kernels), so %s were traced and the profiler left these out%s; "
        "judge them on a capture that times them (Nsight Systems: 'nsys profile -t cuda'), or drop this rule "
        "for such captures",
        t->n_kernels, tg_table_what[id],
        id == TG_TABLE_MEMSET ? " (CUPTI and Kineto leave out memsets that did no work, of size 0)" : "");
}

/* An op table the rule reads has no rows (or is absent) while the API
** table holds calls that launch such ops (TG_OP_CALL_PREFIXES): CUDA was
** traced and the ops did not reach the export, said as `info` says it
** (tg_coverage_ops_absent).
** A trace without memsets and without memset calls is a program that set
** no memory, and passes. Copies or memsets untimed beside timed kernels
** fail only the rules that read them exactly (reads_exactly); the others
** are judged on what was timed (untimed_note). */
static bool ops_lost(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                     tg_arena *arena)
{
    const tg_trace *t = m->trace;
    static const int tables[] = {TG_TABLE_KERNEL, TG_TABLE_MEMCPY, TG_TABLE_MEMSET};
    unsigned reads = rule_op_tables(r);
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        int id = tables[i];
        if (!(reads & (1u << id)) || op_rows(t, id) > 0 || m->op_calls[id] == 0) continue;
        char how[768];
        if (tg_trace_range_profiled(t, (tg_table_id)id, how, sizeof how))
            return missing(opts, res,
                           tg_arena_printf(arena, "rule %s reads %s, but %s while %s %s holds %lld calls that launch "
                                           "them: %s", r->info.id, tg_table_what[id], lacks(t, (tg_table_id)id, arena),
                                           tg_trace_formats[t->format].table_noun,
                                           tg_trace_table_label(t, TG_TABLE_RUNTIME), (long long)m->op_calls[id], how));
        bool whole = untimed_whole(t, m, id);
        if (whole && !reads_exactly(r, id)) continue;
        if (whole)
            return missing(opts, res,
                           tg_arena_printf(arena,
                                           "rule %s reads %s, but %s while %s %s holds %lld call%s that launch%s "
                                           "them: they were not recorded; %s",
                                           r->info.id, tg_table_what[id], lacks(t, (tg_table_id)id, arena),
                                           tg_trace_formats[t->format].table_noun,
                                           tg_trace_table_label(t, TG_TABLE_RUNTIME), (long long)m->op_calls[id],
                                           m->op_calls[id] == 1 ? "" : "s", m->op_calls[id] == 1 ? "es" : "",
                                           untimed_advice(t, id, arena)));
        char why[512];
        tg_coverage_ops_absent(t, id, m->op_calls[id], why, sizeof why);   /* calls: CUDA was traced */
        return missing(opts, res, tg_arena_printf(arena, "rule %s reads %s, but %s", r->info.id,
                                                  tg_table_what[id], why));
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
    char why[512];
    if (t->n_kernels + t->n_memcpys + t->n_memsets == 0 &&
        tg_coverage_ops_absent(t, TG_TABLE_KERNEL, m->op_calls[TG_TABLE_KERNEL], why, sizeof why))
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s reads the GPU work of each iteration (its completion, its time), "
                                       "but none is recorded beside its %zu iterations: %s",
                                       r->info.id, m->n_iterations, why));
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
    res->untimed = NULL;
    return true;
}

/* The share of launches without a GPU record the rule tolerates: its
** param coverage_tolerance (declared, or added by --set: params.def),
** else TG_COV_TOLERANCE. */
static double coverage_tolerance(const tg_rule *r)
{
    for (size_t i = 0; i < r->n_params; i++) {
        if (strcmp(r->params[i].name, "coverage_tolerance")) continue;
        double v = tg_value_num(r->params[i].value);
        return isnan(v) ? TG_COV_TOLERANCE : v;
    }
    return TG_COV_TOLERANCE;
}

/* The rule reads GPU ops or launch calls, and the capture lost them
** (tg_coverage_lost: what, when, which iterations, why, and how to record
** them whole; info prints the same account). */
static bool data_lost(const tg_rule *r, const tg_model *m, tg_rule_result *res, tg_arena *arena)
{
    char what[2048];
    if (!rule_reads_gpu(r) || !tg_coverage_lost(&m->coverage, coverage_tolerance(r), what, sizeof what))
        return false;
    return lost(res, tg_arena_printf(arena,
        "rule %s reads GPU work and the calls that launched it, but %s; the data was recorded and then lost, "
        "so this is an error, not a skip", r->info.id, what));
}

/* ------------------------------------------------ too little to judge */

/* A device's utilization or starvation is judged over at least this many
** GPU ops (kernels, copies, memsets) and this long a window: below it,
** one kernel of 1.7 us would be "the steady window" (issue 32), and two
** ops make a first-to-last window whose busy fraction is theirs alone;
** 1 ms is a few hundred of the shortest kernels. The one place these
** numbers live (docs/rules.md, "Too little to judge"). */
#define TG_JUDGE_MIN_OPS 3
#define TG_JUDGE_MIN_WINDOW_NS 1000000

/* The device fields a verdict on utilization or starvation reads. */
static bool judge_field(const tg_field_def *f)
{
    return f->source == TG_SRC_DEVICE &&
           (!strcmp(f->name, "busy_frac") || !strcmp(f->name, "busy_frac_steady") || !strcmp(f->name, "queue_p50"));
}

/* The window device d's busy fraction is over: the steady window with
** iterations, its first to last op without. */
static void judged_window(const tg_model *m, const tg_device *d, int64_t *from, int64_t *to)
{
    *from = m->has_iterations ? m->steady_start : d->start;
    *to = m->has_iterations ? m->steady_end : d->end;
}

/* Index of device id in m->devices (sorted by id), or -1. */
static ptrdiff_t device_index(const tg_model *m, int32_t id)
{
    size_t lo = 0, hi = m->n_devices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->devices[mid].device == id) return (ptrdiff_t)mid;
        if (m->devices[mid].device < id) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* Count an op that starts inside its device's judged window. */
static void count_op(const tg_model *m, int64_t *n, int32_t device, int64_t start)
{
    ptrdiff_t d = device_index(m, device);
    if (d < 0 || start == TG_NULL_I64) return;
    int64_t from, to;
    judged_window(m, &m->devices[d], &from, &to);
    if (start >= from && start <= to) n[d]++;
}

/* The GPU ops (kernels, copies, memsets) starting inside each device's
** judged window, in one pass: n[i] for m->devices[i]. */
static void ops_in_windows(const tg_model *m, int64_t *n)
{
    const tg_trace *t = m->trace;
    for (size_t i = 0; i < t->n_kernels; i++) {
        /* loaded rows when the trace holds them (a model built by hand has no spans of its own) */
        const tg_kspan *k = t->kernels ? &t->kernels[i].span : tg_model_kernel(m, i);
        count_op(m, n, k->device, k->start);
    }
    for (size_t i = 0; i < t->n_memcpys; i++) count_op(m, n, t->memcpys[i].device, t->memcpys[i].start);
    for (size_t i = 0; i < t->n_memsets; i++) count_op(m, n, t->memsets[i].device, t->memsets[i].start);
}

/* A device with GPU work whose judged window holds too little of it: no
** verdict on its utilization or starvation, but the missing-data class
** (a skip under --missing-data=skip, as for iterations without GPU work). */
static bool window_too_small(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                             tg_arena *arena)
{
    if (r->source != TG_SRC_DEVICE || !verdict_reads(r, judge_field) || m->n_devices == 0) return false;
    int64_t *ops_of = calloc(m->n_devices, sizeof *ops_of);
    if (!ops_of) return missing(opts, res, "out of memory while counting the GPU ops of each device: not judged");
    ops_in_windows(m, ops_of);
    for (size_t i = 0; i < m->n_devices; i++) {
        const tg_device *d = &m->devices[i];
        int64_t from, to;
        judged_window(m, d, &from, &to);
        if (d->start == TG_NULL_I64 || d->end == TG_NULL_I64 || from == TG_NULL_I64 || to == TG_NULL_I64) continue;
        int64_t ops = ops_of[i], span = to > from ? to - from : 0;
        if (ops >= TG_JUDGE_MIN_OPS && span >= TG_JUDGE_MIN_WINDOW_NS) continue;
        free(ops_of);
        return missing(opts, res,
                       tg_arena_printf(arena,
                                       "rule %s judges GPU %d over its %s, but that window is %.3f ms with %lld GPU "
                                       "ops in it: too little to judge (it needs at least %d ops over %.3f ms or "
                                       "more); capture %s",
                                       r->info.id, (int)d->device,
                                       m->has_iterations ? "steady window" : "first to last GPU op",
                                       (double)span / 1e6, (long long)ops, TG_JUDGE_MIN_OPS,
                                       (double)TG_JUDGE_MIN_WINDOW_NS / 1e6,
                                       m->has_iterations ? "more steady iterations" : "a longer stretch of the run"));
    }
    free(ops_of);
    return false;
}

/* ------------------------------------------------------ untimed GPU work */

/* Launch calls of op table id that have no GPU record: all of its calls
** when the table has no rows, else those the coverage counts. */
static int64_t untimed_calls(const tg_model *m, int id)
{
    if (op_rows(m->trace, id) == 0) return m->op_calls[id];
    int k = id == TG_TABLE_MEMCPY ? TG_COV_MEMCPY : TG_COV_MEMSET;
    return m->coverage.set ? m->coverage.act[k].launches_without_gpu : 0;
}

/* The most idle time untimed ops could fill on any device: an op starts
** after its launching call, so only the idle time of the judged window
** from the first untimed call on (the window's start when that is
** unknown or earlier). Sound whatever the ops' length and stream: a
** busy union can grow only where the device was idle. Sets *dev, *from,
** *window (the worst device's). */
static int64_t untimed_room(const tg_model *m, int32_t *dev, int64_t *from, int64_t *window)
{
    int64_t first = m->coverage.set ? m->coverage.unmatched_first : TG_NULL_I64, best = -1;
    for (size_t i = 0; i < m->n_devices; i++) {
        const tg_device *d = &m->devices[i];
        int64_t s, e;
        judged_window(m, d, &s, &e);
        if (s == TG_NULL_I64 || e == TG_NULL_I64 || e <= s) continue;
        int64_t f = first != TG_NULL_I64 && first > s ? first : s;
        if (f >= e) f = e;
        double busy = 0;
        /* one slice: the share of [f, e) the device was busy */
        if (e > f) {
            double *bins = calloc(m->n_devices, sizeof *bins);
            if (bins && tg_model_busy_bins(m, f, e, 1, bins)) busy = bins[i];
            else busy = 0;   /* unknown: all of it idle, the bound stays sound */
            free(bins);
        }
        int64_t idle = (int64_t)((double)(e - f) * (1.0 - busy) + 0.5);
        if (idle > best) {
            best = idle;
            *dev = d->device;
            *from = f;
            *window = e - s;
        }
    }
    return best;
}

/* The rule reads the GPU's busy time, and copies or memsets it reads
** that way were called but not (all) timed: the verdict stands on what
** was timed, and res->untimed says what was not and by how much at most
** the numbers could move (docs/rules.md, "Untimed GPU work"). */
static void untimed_note(const tg_rule *r, const tg_model *m, tg_rule_result *res, tg_arena *arena)
{
    const tg_trace *t = m->trace;
    unsigned reads = rule_op_tables(r);
    int64_t copies = reads & 1u << TG_TABLE_MEMCPY ? untimed_calls(m, TG_TABLE_MEMCPY) : 0;
    int64_t sets = reads & 1u << TG_TABLE_MEMSET ? untimed_calls(m, TG_TABLE_MEMSET) : 0;
    if (copies + sets == 0 || t->n_kernels == 0) return;
    int exact = copies && reads_exactly(r, TG_TABLE_MEMCPY) ? TG_TABLE_MEMCPY
              : sets && reads_exactly(r, TG_TABLE_MEMSET) ? TG_TABLE_MEMSET : -1;
    if (exact >= 0) {
        /* the rule judges those ops themselves: the untimed ones are not judged */
        res->untimed = tg_arena_printf(arena,
            "%lld %s launch calls have no GPU record%s: this verdict is over the %zu that were timed, and the "
            "others are not judged",
            (long long)(exact == TG_TABLE_MEMCPY ? copies : sets), exact == TG_TABLE_MEMCPY ? "copy" : "memset",
            exact == TG_TABLE_MEMSET ? " (CUPTI and Kineto leave out memsets that did no work, of size 0)" : "",
            op_rows(t, exact));
        return;
    }
    const char *what = copies && sets
        ? tg_arena_printf(arena, "%lld copy and %lld memset launch calls", (long long)copies, (long long)sets)
        : tg_arena_printf(arena, "%lld %s launch calls", (long long)(copies + sets), copies ? "copy" : "memset");
    int32_t dev = -1;
    int64_t from = TG_NULL_I64, window = 0;
    int64_t room = untimed_room(m, &dev, &from, &window);
    if (room < 0) {
        res->untimed = tg_arena_printf(arena, "%s have no GPU record: the numbers count only the GPU work that was "
                                       "timed, and no window bounds what the rest could add", what);
        return;
    }
    char idle[32], span[32];
    tg_fmt_value(idle, sizeof idle, (tg_value){.type = TG_TY_INT, .unit = TG_UNIT_NS, .u.i = room});
    tg_fmt_value(span, sizeof span, (tg_value){.type = TG_TY_INT, .unit = TG_UNIT_NS, .u.i = window});
    double points = window > 0 ? 100.0 * (double)room / (double)window : 0;
    bool after_first = m->coverage.set && m->coverage.unmatched_first == from;
    res->untimed = tg_arena_printf(arena,
        "%s have no GPU record%s: the numbers count only the GPU work that was timed; the untimed ops could fill "
        "at most the %s GPU %d was idle from %.3f s into the capture (%s) to the end of its judged window (%s "
        "long), so a busy fraction could be up to %.1f points higher, GPU time up to %s more and idle gaps up to "
        "%s shorter in all",
        what, sets ? " (CUPTI and Kineto leave out memsets that did no work, of size 0: counted here too)" : "",
        idle, (int)dev, t->first_ns != TG_NULL_I64 ? (double)(from - t->first_ns) / 1e9 : 0.0,
        after_first ? "where the first of them was launched" : "the judged window's start", span, points, idle,
        idle);
}

bool tg_missing_before(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                       tg_arena *arena)
{
    /* lost data first: it explains the tables and the iterations without
    ** GPU work that follow (and is never a skip) */
    return data_lost(r, m, res, arena) || table_absent(r, m, opts, res, arena) || calls_lost(r, m, opts, res, arena) ||
           no_events(r, m, opts, res, arena) ||
           gpu_work_absent(r, m, opts, res, arena) || ops_lost(r, m, opts, res, arena) ||
           fields_unfilled(r, m, opts, res, arena) || osrt_empty(r, m, opts, res, arena) ||
           window_too_small(r, m, opts, res, arena) || (untimed_note(r, m, res, arena), false);
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
