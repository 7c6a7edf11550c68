/*
** The bridge between baselines and a compiled rule set: params (min_change,
** alpha) and rule descriptions (source, samples field) reach the baseline
** code through a tg_baseline_rules lookup, so that the statistics and the
** file format can be used and tested without a rule set at hand.
*/
#include "baseline.h"

static double ruleset_param(const void *ctx, const char *rule, const char *param, double dflt)
{
    return tg_rules_param((const tg_ruleset *)ctx, rule, param, dflt);
}

static void ruleset_describe(const void *ctx, const char *rule, const char **source,
                             const char **samples)
{
    const tg_ruleset *rs = ctx;
    long i = tg_rules_find(rs, rule);
    const tg_rule_info *info = i >= 0 ? tg_rules_info(rs, (size_t)i) : NULL;
    *source = info ? info->source : NULL;
    *samples = info ? info->samples : NULL;
}

static tg_baseline_rules lookup_of(const tg_ruleset *rs)
{
    if (!rs) return (tg_baseline_rules){0};
    return (tg_baseline_rules){.ctx = rs, .param = ruleset_param, .describe = ruleset_describe};
}

tg_baseline *tg_baseline_record(const tg_run_result *run, const tg_ruleset *rs,
                                const char *tool_version, const char *date, tg_diag *diag)
{
    tg_baseline_rules rules = lookup_of(rs);
    return tg_baseline_record_with(run, &rules, tool_version, date, diag);
}

tg_status tg_baseline_apply(const tg_baseline *b, const tg_ruleset *rs, tg_run_result *run,
                            bool allow_mismatch, tg_diag *diag)
{
    tg_baseline_rules rules = lookup_of(rs);
    return tg_baseline_apply_with(b, &rules, run, allow_mismatch, diag);
}
