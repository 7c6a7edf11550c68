/*
** tg_eval_model: runs a compiled rule set over a built model. Rules that
** read data the capture lacks are skipped (or errored) with a sentence
** naming what is missing and how to record it (eval_missing.c). The
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
    if (r->except) {
        if (r->where_kept && !tg_eval_row_test(st, row, r->where_kept)) return;
        if (tg_eval_row_test(st, row, r->except)) {
            st->set_aside++;
            tg_rv d = st->duration_expr.field ? tg_eval_row(st, row, &st->duration_expr) : (tg_rv){.t = TG_RV_NULL};
            if (d.t != TG_RV_NULL) st->set_aside_time = tg_add_sat(st->set_aside_time, (int64_t)tg_rv_num(d));
            return;
        }
    } else if (r->where && !tg_eval_row_test(st, row, r->where)) {
        return;
    }
    st->count++;
    if (st->watch_gpu) tg_missing_row(st, row);
    tg_acc_row(st, row);
    if (r->samples) {
        tg_rv v = tg_eval_row(st, row, r->samples);
        if (v.t != TG_RV_NULL && !TG_PUSH(st->samples, st->n_samples, st->cap_samples, tg_rv_num(v)))
            st->oom = true;
    }
    if (st->groups) tg_group_row(st, row, i);
    else tg_evidence_offer(st, row, i);
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
    size_t cap = 3 + r->n_value_aggs + r->n_trace_refs;
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
    /* what except set aside: the reproduce queries print the same two */
    if (r->except) {
        res->values[res->n_values++] = (tg_named_value){"set_aside", tg_int(st->set_aside, TG_UNIT_NONE)};
        if (st->duration_expr.field)
            res->values[res->n_values++] =
                (tg_named_value){"set_aside_duration_ns", tg_int(st->set_aside_time, TG_UNIT_NS)};
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
    res->untimed = NULL;
    res->message = tg_arena_printf(arena,
                                   "rule %s cannot be decided: its regular expression \"%.80s%s\" hit a limit of "
                                   "the matcher on a string of %zu bytes (docs/limits.md)",
                                   st->rule->info.id, pattern, strlen(pattern) > 80 ? "..." : "",
                                   st->regex_limit_len);
}

/* What except set aside, after the message: "; 2 start-up calls taking
** 240 ms, before the first kernel, are not counted". */
static const char *set_aside_sentence(const tg_rule_state *st, const char *message, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    char t[64] = "";
    if (st->duration_expr.field) {
        char buf[48];
        snprintf(t, sizeof t, " taking %s", tg_fmt_value(buf, sizeof buf, tg_int(st->set_aside_time, TG_UNIT_NS)));
    }
    return tg_arena_printf(arena, "%s; %lld %s%s%s%s%s %s not counted", message, (long long)st->set_aside,
                           st->set_aside == 1 ? r->except_one : r->except_many, t, r->except_note ? ", " : "",
                           r->except_note ? r->except_note : "", r->except_note ? "," : "",
                           st->set_aside == 1 ? "is" : "are");
}

static void finish_rule(tg_rule_state *st, const tg_eval_opts *opts, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    tg_rule_result *res = st->out;
    if (tg_missing_after(st, opts, arena)) {
        res->count = st->count;
        return;
    }
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
        res->untimed = NULL;   /* no verdict to qualify */
    } else {
        res->verdict = fail ? TG_V_FAIL : TG_V_PASS;
        /* A template over no rows reads as noise ("0 copies took n/a"). */
        if (!fail && st->count == 0)
            res->message = tg_arena_printf(arena, "no finding: no %s row matches", r->info.source);
    }
    /* Cite rows for failures, and for regression rules, whose verdict the
    ** baseline comparison decides after this. */
    if (st->set_aside && res->message) res->message = set_aside_sentence(st, res->message, arena);
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
        if (tg_missing_before(r, m, opts, res, arena)) continue;
        *st = (tg_rule_state){.rule = r, .out = res, .m = m, .baseline = st->baseline};
        if (r->except)
            st->duration_expr = (tg_expr){.op = TG_N_FIELD, .field = tg_field_find(r->source, "duration"), .slot = -1};
        tg_missing_watch(st);
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
