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
    tg_evidence_offer(st, row, i);
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
                                       "rule %s needs %s (table %s), which this capture does not contain; "
                                       "record them with '%s'",
                                       r->info.id, tg_table_what[t], tg_table_names[t], tg_table_option[t]);
        return true;
    }
    /* Tables present but every one empty (or every row unusable): a pass
    ** would say nothing about the program, so it counts as missing data. */
    const tg_trace *t = m->trace;
    if (need && t->n_kernels + t->n_memcpys + t->n_memsets + tg_trace_api_rows(t) + t->n_nvtx + t->n_syncs +
                        t->n_overheads == 0 && tg_model_source(m, r->source).n == 0) {
        int first = __builtin_ctz(need);
        res->missing_data = true;
        res->verdict = opts->missing == TG_MISSING_SKIP ? TG_V_SKIP : TG_V_ERROR;
        res->message = tg_arena_printf(arena,
                                       "rule %s has nothing to check: this capture holds no events at all "
                                       "(table %s and every other activity table are empty); record them with '%s'",
                                       r->info.id, tg_table_names[first], tg_table_option[first]);
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
    res->metric_value = NAN;
    res->regression = r->info.regression;
    res->baseline.p_value = NAN;
    res->baseline.band_lo = res->baseline.band_hi = NAN;
}

static void set_values(tg_rule_state *st, const tg_value *aggs, tg_arena *arena)
{
    const tg_rule *r = st->rule;
    tg_rule_result *res = st->out;
    size_t cap = 1 + r->n_aggs + r->n_trace_refs;
    res->values = tg_arena_alloc(arena, cap * sizeof *res->values);
    if (!res->values) return;
    res->values[res->n_values++] = (tg_named_value){"count", tg_int(st->count, TG_UNIT_NONE)};
    for (size_t i = 0; i < r->n_aggs; i++) {
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
    if (r->metric) res->metric_value = tg_value_num(tg_eval_agg(st, aggs, r->metric));
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
    tg_eval_slots_free(st);
    tg_acc_free(st);
    free(st->samples);
    free(st->heap);
}

static void fill_trace_info(const tg_model *m, tg_arena *arena, tg_trace_result *out)
{
    const tg_trace *t = m->trace;
    if (!out->file && t->path) out->file = tg_arena_strdup(arena, t->path);
    if (!out->nsys_version && t->nsys_version) out->nsys_version = tg_arena_strdup(arena, t->nsys_version);
    if (!out->schema_version && t->schema_version) out->schema_version = tg_arena_strdup(arena, t->schema_version);
}

tg_status tg_eval_model(const tg_ruleset *rs, const tg_model *m, const tg_eval_opts *opts, tg_arena *arena,
                        tg_trace_result *out, tg_diag *diag)
{
    static const tg_eval_opts defaults = {0};
    if (!opts) opts = &defaults;
    fill_trace_info(m, arena, out);
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
        if (check_missing(r, m, opts, res, arena)) continue;
        *st = (tg_rule_state){.rule = r, .out = res, .m = m, .baseline = st->baseline};
        if (!tg_eval_slots_init(st)) st->oom = true;
        tg_acc_init(st);
        tg_evidence_setup(st, default_limit);
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
