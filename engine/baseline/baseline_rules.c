/*
** The bridge between baselines and a compiled rule set: params (min_change,
** alpha) and rule descriptions (source, samples field) reach the baseline
** code through a tg_baseline_rules lookup, so that the statistics and the
** file format can be used and tested without a rule set at hand.
*/
#include "baseline.h"
#include "../common/stats.h"

#include <math.h>
#include <string.h>


tg_status tg_baseline_validate(const tg_baseline *b, const tg_ruleset *rs, tg_diag *diag)
{
    tg_status st = TG_OK;
    const char *bname = b->path ? b->path : "the baseline";
    for (size_t i = 0; i < tg_rules_count(rs); i++) {
        const tg_rule_info *r = tg_rules_info(rs, i);
        if (!r->enabled || !r->regression || !r->metric) continue;
        const tg_baseline_metric *m = tg_baseline_find(b, r->id);
        if (!m) {
            tg_diag_error(diag, TG_EUSAGE, "%s has no entry for regression rule %s (enabled); a check against it "
                          "could not judge that rule: record the baseline again with this rule set, or disable "
                          "the rule (enabled: false)", bname, r->id);
            st = TG_EUSAGE;
            continue;
        }
        tg_unit unit = r->metric_unit;
        const char *was = NULL, *now = NULL, *what = NULL;
        if (!tg_same_str(m->metric, r->metric)) {
            what = "metric", was = m->metric, now = r->metric;
        } else if (!tg_same_str(m->samples_field, r->samples)) {
            what = "samples field", was = m->samples_field ? m->samples_field : "none",
            now = r->samples ? r->samples : "none";
        } else if (m->unit != unit) {
            what = "unit", was = tg_unit_key(m->unit), now = tg_unit_key(unit);
        } else if ((m->direction > 0) != (r->regression > 0)) {
            what = "direction", was = tg_baseline_direction_name(m->direction),
            now = tg_baseline_direction_name(r->regression);
        }
        if (what) {
            tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, m->pos, NULL,
                        "entry '%s' was recorded for another definition of the rule: its %s is %s, the rule's "
                        "is %s, so the numbers are not comparable; record the baseline again",
                        m->rule, what, was, now);
            st = TG_EUSAGE;
            continue;
        }
        if (r->samples && m->n_samples == 0) {
            tg_diag_add(diag, TG_DIAG_ERROR, TG_EUSAGE, m->pos, NULL,
                        "entry '%s' holds no %s samples though the rule compares them; record the baseline again",
                        m->rule, r->samples);
            st = TG_EUSAGE;
        }
    }
    return st;
}

static double ruleset_param(const void *ctx, const char *rule, const char *param, double dflt)
{
    return tg_rules_param((const tg_ruleset *)ctx, rule, param, dflt);
}

static const char *ruleset_samples(const void *ctx, const char *rule)
{
    const tg_ruleset *rs = ctx;
    long i = tg_rules_find(rs, rule);
    return i >= 0 ? tg_rules_info(rs, (size_t)i)->samples : NULL;
}

static tg_baseline_rules lookup_of(const tg_ruleset *rs)
{
    if (!rs) return (tg_baseline_rules){0};
    return (tg_baseline_rules){.ctx = rs, .param = ruleset_param, .samples = ruleset_samples};
}

tg_baseline *tg_baseline_record(const tg_run_result *run, const tg_ruleset *rs,
                                const char *tool_version, const char *date, tg_diag *diag)
{
    return tg_baseline_record_keep(run, rs, tool_version, date, false, diag);
}

tg_baseline *tg_baseline_record_keep(const tg_run_result *run, const tg_ruleset *rs,
                                     const char *tool_version, const char *date, bool keep_outliers,
                                     tg_diag *diag)
{
    tg_baseline_rules rules = lookup_of(rs);
    return tg_baseline_record_opts(run, &rules, tool_version, date, keep_outliers, diag);
}

tg_status tg_baseline_apply(const tg_baseline *b, const tg_ruleset *rs, tg_run_result *run,
                            bool allow_mismatch, tg_diag *diag)
{
    tg_baseline_rules rules = lookup_of(rs);
    return tg_baseline_apply_with(b, &rules, run, allow_mismatch, diag);
}

tg_baseline_cmp *tg_baseline_rule_stats(const tg_baseline *b, const tg_ruleset *rs,
                                        tg_arena *arena)
{
    size_t n = tg_rules_count(rs);
    tg_baseline_cmp *out = tg_arena_alloc(arena, (n ? n : 1) * sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        tg_baseline_cmp *c = &out[i];
        *c = (tg_baseline_cmp){.value = NAN, .current = NAN, .change = NAN, .p_value = NAN,
                               .band_lo = NAN, .band_hi = NAN};
        const tg_rule_info *info = tg_rules_info(rs, i);
        const tg_baseline_metric *m = info && info->metric ? tg_baseline_find(b, info->id) : NULL;
        if (!m) continue;
        c->present = true;
        c->n_baseline = m->n_samples;
        /* the numbers a check compares with: kept outliers left out, the
        ** band only where it is measured (docs/regressions.md) */
        tg_spread sp;
        double noise = tg_rules_param(rs, info->id, "run_noise", TG_BASELINE_DEFAULT_RUN_NOISE);
        if (!tg_baseline_spread(b, m, noise, &sp)) return NULL;
        c->value = isnan(sp.value) ? m->median : sp.value;
        if (sp.measured) {
            c->band_lo = sp.lo;
            c->band_hi = sp.hi;
        }
    }
    return out;
}
