/*
** Row filters: which rows of a source some rule could count. A row that
** fails the `where` of every enabled rule on its source never reaches an
** aggregate, a sample or the evidence, so a table that streams by
** (engine/model, the `api` source) need not keep it. The test is the
** evaluator's own row test, run on the row with its DERIVED fields set,
** so the kept rows are exactly those tg_eval_model would count.
**
** A `where` that reads trace.* or a baseline statistic depends on values
** final only once every row is in; such a rule, or one with no `where`,
** makes every row count (tg_row_filter_new says so and returns NULL); so
** does one that reads device.FIELD, whose device rows the model builds
** after the rows stream by.
*/
#include "eval_int.h"

#include <stdlib.h>

struct tg_row_filter {
    tg_rule_state *states;
    size_t n;
};

/* True when e reads a value that is only final after the whole trace. */
static bool reads_late(const tg_expr *e)
{
    if (!e) return false;
    if (e->op == TG_N_TRACE_REF || e->op == TG_N_DEVICE_REF || e->op == TG_N_BASELINE || e->op == TG_N_AGGREGATE)
        return true;
    return reads_late(e->a) || reads_late(e->b);
}

bool tg_row_filter_keeps_all(const tg_ruleset *rs, tg_source_id src)
{
    for (size_t i = 0; i < rs->n; i++) {
        const tg_rule *r = &rs->rules[i];
        if (r->info.enabled && r->source == src && (!tg_rule_seen_where(r) || reads_late(tg_rule_seen_where(r)))) return true;
    }
    return false;
}

tg_row_filter *tg_row_filter_new(const tg_ruleset *rs, tg_source_id src, const tg_model *m, bool *all)
{
    *all = tg_row_filter_keeps_all(rs, src);
    if (*all) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++) n += rs->rules[i].info.enabled && rs->rules[i].source == src;
    tg_row_filter *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->states = calloc(n ? n : 1, sizeof *f->states);
    if (!f->states) {
        free(f);
        return NULL;
    }
    for (size_t i = 0; i < rs->n; i++) {
        const tg_rule *r = &rs->rules[i];
        if (!r->info.enabled || r->source != src) continue;
        tg_rule_state *st = &f->states[f->n++];
        *st = (tg_rule_state){.rule = r, .m = m};
        if (!tg_eval_slots_init(st)) {
            tg_row_filter_free(f);
            return NULL;
        }
    }
    return f;
}

/* A row whose test hit a limit of the regex matcher is kept: the rule's
** own evaluation meets the same limit on it and errors (eval.c), which it
** could not if the row were dropped here. */
bool tg_row_filter_pass(tg_row_filter *f, const char *row)
{
    for (size_t i = 0; i < f->n; i++) {
        tg_rule_state *st = &f->states[i];
        st->regex_limit = NULL;
        if (tg_eval_row_test(st, row, tg_rule_seen_where(st->rule)) || st->regex_limit) return true;
    }
    return false;
}

void tg_row_filter_free(tg_row_filter *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) tg_eval_slots_free(&f->states[i]);
    free(f->states);
    free(f);
}

bool tg_row_keep_api(void *ctx, const tg_model *m, const tg_api *row)
{
    tg_row_keeper *k = ctx;
    if (!k->made) {
        k->made = true;
        k->filter = tg_row_filter_new(k->rs, TG_SRC_API, m, &k->all);
        if (!k->filter) k->all = true;    /* out of memory: keeping every row is still right */
    }
    return k->all || tg_row_filter_pass(k->filter, (const char *)row);
}
