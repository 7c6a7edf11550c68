/*
** tg_eval_model: runs a compiled rule set over a built model. Rules whose
** source needs a table the capture lacks are skipped (or errored) with a
** sentence naming the table and the nsys option that records it. The
** others are grouped by source, and each source is scanned once: every
** row is offered to every rule on that source (where, aggregates, samples,
** evidence). Then each rule's aggregates are finished, fail_when decides
** the verdict, the message is rendered and the cited rows are built.
**
** The rule set is only read, so several threads may evaluate it at once;
** all scratch is per call and freed before returning, and everything in
** the result lives in the caller's arena.
*/
#include "eval_int.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void process_row(tg_rule_state *st, const char *row, size_t i)
{
    const tg_rule *r = st->rule;
    if (r->where && !tg_eval_row_test(st, row, r->where)) return;
    st->count++;
    tg_acc_row(st, row);
    if (r->samples) {
        tg_rv v = tg_eval_row(st, row, r->samples);
        if (v.t != TG_RV_NULL && !TG_PUSH(st->samples, st->n_samples, st->cap_samples, tg_rv_num(v)))
            st->oom = true;
    }
    if (st->groups) tg_group_row(st, row, i);
    else tg_evidence_offer(st, row, i);
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

static bool expr_reads_launch(const tg_expr *e)
{
    if (!e) return false;
    if ((e->op == TG_N_FIELD || e->op == TG_N_TRACE_REF || e->op == TG_N_DEVICE_REF) && e->field &&
        launch_field(e->field))
        return true;
    return expr_reads_launch(e->a) || expr_reads_launch(e->b);
}

/* Does the rule read what the launch join derives? */
static bool rule_reads_launch(const tg_rule *r)
{
    if (r->source == TG_SRC_MEMCPY || r->source == TG_SRC_MEMSET || r->source == TG_SRC_API) return true;
    if (expr_reads_launch(r->where) || expr_reads_launch(r->fail_when) || expr_reads_launch(r->metric) ||
        expr_reads_launch(r->samples))
        return true;
    for (size_t i = 0; i < r->n_aggs; i++)
        if (expr_reads_launch(r->aggs[i].arg) || (r->aggs[i].field && launch_field(r->aggs[i].field))) return true;
    return false;
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

static bool expr_reads_gpu(const tg_expr *e)
{
    if (!e) return false;
    if (e->op == TG_N_FIELD && e->field && iteration_gpu_field(e->field)) return true;
    return expr_reads_gpu(e->a) || expr_reads_gpu(e->b);
}

static bool rule_reads_iteration_gpu(const tg_rule *r)
{
    if (r->source != TG_SRC_ITERATION) return false;
    if (expr_reads_gpu(r->where) || expr_reads_gpu(r->fail_when) || expr_reads_gpu(r->metric) ||
        expr_reads_gpu(r->samples))
        return true;
    for (size_t i = 0; i < r->n_aggs; i++)
        if (expr_reads_gpu(r->aggs[i].arg)) return true;
    return false;
}

static void missing(const tg_eval_opts *opts, tg_rule_result *res)
{
    res->missing_data = true;
    res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
}

/* A rule reading the GPU side of iterations (period, gpu_time, ...) on a
** capture whose iterations launched no GPU work it recorded: missing
** data, never host time in its place (model_iter.c). True when so. */
static bool check_missing_gpu_work(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts,
                                   tg_rule_result *res, tg_arena *arena)
{
    if (!m->n_iterations || !rule_reads_iteration_gpu(r)) return false;
    const tg_trace *t = m->trace;
    if (t->n_kernels + t->n_memcpys + t->n_memsets == 0) {
        missing(opts, res);
        res->message = tg_arena_printf(arena,
                                       "rule %s reads the GPU work of each iteration (its completion, its time), "
                                       "but this capture holds no %s, copies or memsets beside its %zu iterations; "
                                       "record them with '%s'",
                                       r->info.id, tg_table_what[TG_TABLE_KERNEL], m->n_iterations,
                                       tg_trace_table_option(t, TG_TABLE_KERNEL));
        return true;
    }
    for (size_t i = 0; i < m->n_iterations; i++)
        if (m->iterations[i].gpu_end != TG_NULL_I64) return false;
    missing(opts, res);
    res->message = tg_arena_printf(arena,
                                   "rule %s reads the GPU work of each iteration, but none of the %zu iterations "
                                   "launched any of the capture's %zu kernels, %zu copies and %zu memsets (no "
                                   "launching call of theirs starts inside an iteration of its process)",
                                   r->info.id, m->n_iterations, t->n_kernels, t->n_memcpys, t->n_memsets);
    return true;
}

/* A missing table makes the rule a skip or an error; true when it does. */
static bool check_missing(const tg_rule *r, const tg_model *m, const tg_eval_opts *opts, tg_rule_result *res,
                          tg_arena *arena)
{
    unsigned need = tg_source_required_tables(r->source);
    for (int t = 0; t < TG_TABLE_COUNT; t++) {
        if (!(need & (1u << t)) || m->trace->has_table[t]) continue;
        res->missing_data = true;
        res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
        res->message = tg_arena_printf(arena,
                                       "rule %s needs %s (%s %s), which this capture does not contain; "
                                       "record them with '%s'",
                                       r->info.id, tg_table_what[t],
                                       tg_trace_formats[m->trace->format].table_noun,
                                       tg_trace_table_label(m->trace, (tg_table_id)t),
                                       tg_trace_table_option(m->trace, (tg_table_id)t));
        return true;
    }
    /* Tables present but every one empty (or every row unusable): a pass
    ** would say nothing about the program, so it counts as missing data. */
    const tg_trace *t = m->trace;
    /* The API table there but empty while GPU work is recorded: the calls
    ** that launched it were not captured, and every field the launch join
    ** derives is null. Missing data too, not a clean run. */
    size_t ops = t->n_kernels + t->n_memcpys + t->n_memsets;
    if (t->has_table[TG_TABLE_RUNTIME] && tg_trace_api_rows(t) == 0 && ops > 0 && rule_reads_launch(r)) {
        res->missing_data = true;
        res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
        res->message = tg_arena_printf(arena,
                                       "rule %s reads the calls that launched GPU work, but %s is empty while the "
                                       "capture holds %zu kernels, %zu copies and %zu memsets: the CUDA API calls "
                                       "were not recorded; record them with '%s'",
                                       r->info.id,
                                       t->table_name[TG_TABLE_RUNTIME] ? t->table_name[TG_TABLE_RUNTIME]
                                                                       : tg_table_names[TG_TABLE_RUNTIME],
                                       t->n_kernels, t->n_memcpys,
                                       t->n_memsets, tg_table_option[TG_TABLE_RUNTIME]);
        return true;
    }
    if (need && t->n_kernels + t->n_memcpys + t->n_memsets + tg_trace_api_rows(t) + t->n_nvtx + t->n_syncs +
                        t->n_overheads == 0 && tg_model_source(m, r->source).n == 0) {
        int first = __builtin_ctz(need);
        res->missing_data = true;
        res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
        res->message = tg_arena_printf(arena,
                                       "rule %s has nothing to check: this capture holds no events at all "
                                       "(table %s and every other activity table are empty); record them with '%s'",
                                       r->info.id, tg_trace_table_label(t, (tg_table_id)first),
                                       tg_trace_table_option(t, (tg_table_id)first));
        return true;
    }
    return false;
}

static void init_result(const tg_rule *r, tg_rule_result *res)
{
    res->rule = r->info.id;
    res->title = r->info.title;
    res->severity = r->info.severity;
    res->advice = r->info.advice;
    res->rule_file = r->info.file;
    res->rule_line = r->info.line;
    res->metric = r->info.metric;
    res->metric_unit = r->info.metric_unit;
    res->metric_value = NAN;
    res->regression = r->info.regression;
    res->baseline.p_value = NAN;
    res->baseline.band_lo = res->baseline.band_hi = NAN;
}

static void set_values(tg_rule_state *st, const tg_value *aggs, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    tg_rule_result *res = st->out;
    size_t cap = 1 + r->n_value_aggs + r->n_trace_refs;
    res->values = tg_arena_alloc(arena, cap * sizeof *res->values);
    if (!res->values) return;
    res->values[res->n_values++] = (tg_named_value){"count", tg_int(st->count, TG_UNIT_NONE)};
    for (size_t i = 0; i < r->n_value_aggs; i++) {
        if (r->aggs[i].kind == TG_AGG_COUNT && !r->aggs[i].arg) continue;
        res->values[res->n_values++] = (tg_named_value){r->aggs[i].value_name, aggs[i]};
    }
    tg_source_view tv = tg_model_source(st->m, TG_SRC_TRACE);
    for (size_t i = 0; i < r->n_trace_refs; i++) {
        tg_value v = tg_field_get(st->m, &tv, r->trace_refs[i], 0);
        if (v.type == TG_TY_STRING && v.u.s) v.u.s = tg_arena_strdup(arena, v.u.s);
        res->values[res->n_values++] =
            (tg_named_value){tg_arena_printf(arena, "trace_%s", r->trace_refs[i]->name), v};
    }
}

/* Why a rule's metric has no value, as a sentence. */
static const char *why_no_metric(const tg_rule_state *st, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    const tg_model *m = st->m;
    size_t rows = tg_model_source(m, r->source).n;
    if (r->source == TG_SRC_ITERATION && rows == 0) {
        size_t ranges = 0;
        for (size_t i = 0; i < m->trace->n_nvtx; i++) ranges += m->trace->nvtx[i].end != TG_NULL_I64;
        if (ranges == 0)
            return tg_arena_printf(arena, "the capture holds no NVTX ranges, so there are no iterations (record "
                                   "them with 'nsys profile -t nvtx' and NVTX ranges around each step)");
        return tg_arena_printf(arena, "no iteration: none of its %zu NVTX ranges matches the iteration pattern "
                               "%s (see 'tracegate info' for their names; --iteration-pattern RE)", ranges,
                               m->selection ? m->selection->pattern : TG_DEFAULT_ITERATION_PATTERN);
    }
    if (rows == 0) return tg_arena_printf(arena, "the %s source has no rows in this trace", r->info.source);
    if (st->count == 0) {
        if (r->source == TG_SRC_ITERATION)
            return tg_arena_printf(arena, "none of its %zu iterations is steady (the first 5 of more than 10 "
                                   "are warmup, partial ones never count)", rows);
        return tg_arena_printf(arena, "none of the %zu %s rows passes the rule's where", rows, r->info.source);
    }
    return tg_arena_printf(arena, "%s has no value over the %lld %s rows that pass the rule's where",
                           r->info.metric, (long long)st->count, r->info.source);
}

/* A `matches` the matcher could not decide on some string (a limit of
** docs/limits.md): the rule's answer would rest on a guess, so it is an
** error, never a pass. */
static void regex_limit_error(tg_rule_state *st, tg_arena *arena)
{
    const char *pattern = st->regex_limit->b && st->regex_limit->b->k.u.s ? st->regex_limit->b->k.u.s : "";
    tg_rule_result *res = st->out;
    res->verdict = TG_V_ERROR;
    res->n_evidence = 0;
    res->message = tg_arena_printf(arena,
                                   "rule %s cannot be decided: its regular expression \"%.80s%s\" hit a limit of "
                                   "the matcher on a string of %zu bytes (docs/limits.md)",
                                   st->rule->info.id, pattern, strlen(pattern) > 80 ? "..." : "",
                                   st->regex_limit_len);
}

static void finish_rule(tg_rule_state *st, const tg_eval_opts *opts, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    tg_rule_result *res = st->out;
    tg_value *aggs = tg_acc_finish(st, arena);
    if (!aggs) {
        st->oom = true;
        return;
    }
    res->count = st->count;
    set_values(st, aggs, arena);
    if (r->metric) {
        res->metric_value = tg_value_num(tg_eval_agg(st, aggs, r->metric));
        if (isnan(res->metric_value)) res->metric_missing = why_no_metric(st, arena);
    }
    if (st->n_samples) {
        res->samples = tg_arena_alloc(arena, st->n_samples * sizeof *res->samples);
        if (res->samples) {
            memcpy(res->samples, st->samples, st->n_samples * sizeof *res->samples);
            res->n_samples = st->n_samples;
        }
    }
    bool fail = r->fail_when && tg_value_truthy(tg_eval_agg(st, aggs, r->fail_when));
    res->message = tg_eval_render_message(st, aggs, arena);
    if (r->info.regression && !opts->has_baseline) {
        res->verdict = TG_V_SKIP;
        res->message = "no baseline given";
    } else {
        res->verdict = fail ? TG_V_FAIL : TG_V_PASS;
        /* A template over no rows reads as noise ("0 copies took n/a"). */
        if (!fail && st->count == 0)
            res->message = tg_arena_printf(arena, "no finding: no %s row matches", r->info.source);
    }
    /* Cite rows for failures, and for regression rules, whose verdict the
    ** baseline comparison decides after this. */
    if (fail || r->info.regression) tg_evidence_build(st, arena);
    if (st->regex_limit) regex_limit_error(st, arena);
    if (!res->message) st->oom = true;
}

static void free_state(tg_rule_state *st)
{
    tg_group_free(st);
    tg_eval_slots_free(st);
    tg_acc_free(st);
    free(st->samples);
    free(st->heap);
}

static bool fill_trace_info(const tg_ruleset *rs, const tg_model *m, tg_arena *arena, tg_trace_result *out)
{
    const tg_trace *t = m->trace;
    if (!out->file && t->path) out->file = tg_arena_strdup(arena, t->path);
    if (!out->nsys_version && t->nsys_version) out->nsys_version = tg_arena_strdup(arena, t->nsys_version);
    if (!out->schema_version && t->schema_version) out->schema_version = tg_arena_strdup(arena, t->schema_version);
    out->trace_format = tg_trace_format_names[t->format];
    char *markers = tg_iter_selection_markers(m->selection);
    if (!markers) return false;
    if (markers[0]) out->iteration_marker = tg_arena_strdup(arena, markers);
    free(markers);
    bool regression = false;
    for (size_t i = 0; i < rs->n; i++) regression |= rs->rules[i].info.enabled && rs->rules[i].info.regression;
    return !regression || (out->workload = tg_eval_workload(m, arena)) != NULL;
}

tg_status tg_eval_model(const tg_ruleset *rs, const tg_model *m, const tg_eval_opts *opts, tg_arena *arena,
                        tg_trace_result *out, tg_diag *diag)
{
    static const tg_eval_opts defaults = {0};
    if (!opts) opts = &defaults;
    if (!fill_trace_info(rs, m, arena, out)) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while evaluating rules");
        return TG_EINTERNAL;
    }
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++) n += rs->rules[i].info.enabled;
    out->results = tg_arena_alloc(arena, (n ? n : 1) * sizeof *out->results);
    tg_rule_state *states = calloc(n ? n : 1, sizeof *states);
    if (!out->results || !states) {
        free(states);
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while evaluating rules");
        return TG_EINTERNAL;
    }
    out->n_results = n;
    size_t default_limit = opts->evidence_limit ? opts->evidence_limit : 10;
    bool oom = false;
    for (size_t i = 0, k = 0; i < rs->n; i++) {
        const tg_rule *r = &rs->rules[i];
        if (!r->info.enabled) continue;
        tg_rule_result *res = &out->results[k];
        tg_rule_state *st = &states[k++];
        init_result(r, res);
        if (opts->baselines) {
            res->baseline = opts->baselines[i];
            st->baseline = &opts->baselines[i];
        }
        if (check_missing(r, m, opts, res, arena) || check_missing_gpu_work(r, m, opts, res, arena)) continue;
        *st = (tg_rule_state){.rule = r, .out = res, .m = m, .baseline = st->baseline};
        if (!tg_eval_slots_init(st)) st->oom = true;
        tg_acc_init(st);
        tg_evidence_setup(st, default_limit);
        if (!tg_group_setup(st)) st->oom = true;
        oom |= st->oom;
    }
    tg_rule_state **group = calloc(n ? n : 1, sizeof *group);
    oom |= group == NULL;
    for (int src = 0; !oom && src < TG_SRC_COUNT; src++) {
        size_t g = 0;
        for (size_t k = 0; k < n; k++)
            if (states[k].rule && states[k].rule->source == (tg_source_id)src) group[g++] = &states[k];
        if (!g) continue;
        tg_source_view view = tg_model_source(m, (tg_source_id)src);
        for (size_t i = 0; i < view.n; i++) {
            const char *row = view.base + i * view.def->stride;
            for (size_t k = 0; k < g; k++) process_row(group[k], row, i);
        }
        for (size_t k = 0; k < g; k++) {
            finish_rule(group[k], opts, arena);
            oom |= group[k]->oom;
        }
    }
    free(group);
    for (size_t k = 0; k < n; k++) free_state(&states[k]);
    free(states);
    if (oom) {
        tg_diag_error(diag, TG_EINTERNAL, "out of memory while evaluating rules");
        return TG_EINTERNAL;
    }
    return TG_OK;
}

/* ------------------------------------------------------------ vocabulary */

static const char *const interval_names[TG_INTERVAL_COUNT] = {
#define X(id, name, doc) name,
    TG_INTERVAL_LIST(X)
#undef X
};

const char *tg_interval_name(tg_interval i)
{
    return (unsigned)i < TG_INTERVAL_COUNT ? interval_names[i] : "?";
}

bool tg_interval_parse(const char *s, tg_interval *out)
{
    for (int i = 0; s && i < TG_INTERVAL_COUNT; i++)
        if (!strcmp(s, interval_names[i])) return *out = (tg_interval)i, true;
    return false;
}

static const char *const contrib_status_names[TG_CONTRIB_COUNT] = {
#define X(id, name) name,
    TG_CONTRIB_STATUS_LIST(X)
#undef X
};

const char *tg_contrib_status_name(tg_contrib_status s)
{
    return (unsigned)s < TG_CONTRIB_COUNT ? contrib_status_names[s] : "?";
}

bool tg_contrib_status_parse(const char *s, tg_contrib_status *out)
{
    for (int i = 0; s && i < TG_CONTRIB_COUNT; i++)
        if (!strcmp(s, contrib_status_names[i])) return *out = (tg_contrib_status)i, true;
    return false;
}

static const char *const suppression_status_names[TG_SUPPRESSION_STATUS_COUNT] = {
#define X(id, name) name,
    TG_SUPPRESSION_STATUS_LIST(X)
#undef X
};

const char *tg_suppression_status_name(tg_suppression_status s)
{
    return (unsigned)s < TG_SUPPRESSION_STATUS_COUNT ? suppression_status_names[s] : "?";
}

const char *tg_suppression_sentence(const tg_suppression_use *u, char *buf, size_t size)
{
    const char *rule = u->rule ? u->rule : "?";
    switch (u->status) {
    case TG_SUPPRESSION_UNUSED:
        snprintf(buf, size, "the suppression of %s matched no finding in this run; remove it if the finding is gone",
                 rule);
        break;
    case TG_SUPPRESSION_EXPIRED:
        snprintf(buf, size, "the suppression of %s expired on %s: its %zu finding%s count%s again; renew or "
                 "remove it", rule, u->expires ? u->expires : "?", u->matched, u->matched == 1 ? "" : "s",
                 u->matched == 1 ? "s" : "");
        break;
    case TG_SUPPRESSION_EXCEEDED:
        snprintf(buf, size, "the suppression of %s accepts at most %lld, and a finding counts more: that finding "
                 "is not suppressed", rule, (long long)u->max_count);
        break;
    default:
        if (size) buf[0] = 0;
        break;
    }
    return buf;
}
